/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-application.c: one instance per session; it owns the engine, starts it once the options and
 * settings are known, opens a pairing window for every browser that waits for a person, tells the
 * person about everything that needs them, and keeps running without a window when asked to. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-app"

#include "chp-application.h"

#include "chp-agent-endpoint.h"

#include "chp-hold-row.h"
#include "chp-needs-page.h"
#include "chp-pairing-window.h"
#include "chp-preferences-window.h"
#include "chp-tray.h"
#include "chp-window.h"

#include <glib-unix.h>
#include <glib/gi18n.h>
#include <signal.h>
#include <stdlib.h>

typedef enum
{
  ENGINE_STOPPED,
  ENGINE_STARTING,
  ENGINE_RUNNING,
  ENGINE_FAILED,
} EngineState;

struct _ChpApplication
{
  AdwApplication parent_instance;

  GSettings *settings;      /* NULL when the schema is not installed */
  char *data_dir;           /* NULL: the engine's default */
  int bridge_port;          /* -1: take it from the settings */

  ChpEngine *engine;
  ChpAgentEndpoint *agents;  /* the MCP endpoint composed on the running engine */
  GCancellable *start_cancellable;
  EngineState engine_state;
  char *start_error;
  gulong pairing_changed_id;

  gulong handoff_arrived_id;
  gulong handoffs_changed_id;
  gulong hold_arrived_id;
  gulong holds_changed_id;
  gulong stopped_changed_id;

  /* Everything that waits for the person, as the Needs you page lists it: the tray counts it
   * even when no window is open. */
  GListModel *needs;

  /* The StatusNotifierItem; NULL without a session bus. */
  ChpTray *tray;
  gboolean said_where_tray_is;

  /* Notification ids ("pairing:<request id>", "handoff:<device id>/<handoff id>",
   * "hold:<device id>/<hold id>") that are on screen, so each is withdrawn when its item ends. */
  GHashTable *notified;

  gboolean start_hidden;    /* --background: the first activation shows no window */
  gboolean background_hold; /* holding the app because it runs with no main window */
  gboolean agents_hold;     /* holding the app while agents are connected */
  guint service_grace_id;   /* started by D-Bus activation: time for the agent to connect */

  guint sigterm_id;
  guint sigint_id;
};

G_DEFINE_FINAL_TYPE (ChpApplication, chp_application, ADW_TYPE_APPLICATION)

static const GOptionEntry option_entries[] = {
  /* A string, not G_OPTION_ARG_INT: GApplication leaves an int option of 0 out of the options
   * dict, and 0 ("any free port") is exactly what tests pass. */
  { "bridge-port", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_STRING, NULL,
    N_("Wait for browsers on this loopback port instead of the one in the settings "
       "(0: any free port)"),
    N_("PORT") },
  { "data-dir", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_FILENAME, NULL,
    N_("Keep the engine key and the database in DIR (for tests)"),
    N_("DIR") },
  { "background", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_NONE, NULL,
    N_("Start without a window and keep the bridge open (for starting at login)"), NULL },
  { "version", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_NONE, NULL,
    N_("Print the version and exit"), NULL },
  { NULL }
};

static ChpWindow *
find_main_window (ChpApplication *self)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (self)); l != NULL; l = l->next)
    {
      if (CHP_IS_WINDOW (l->data))
        return l->data;
    }

  return NULL;
}

static void
apply_engine_state (ChpApplication *self,
                    ChpWindow      *window)
{
  switch (self->engine_state)
    {
    case ENGINE_RUNNING:
      chp_window_set_engine (window, self->engine);
      break;

    case ENGINE_FAILED:
      chp_window_show_error (window, self->start_error);
      break;

    case ENGINE_STOPPED:
    case ENGINE_STARTING:
    default:
      chp_window_set_engine (window, NULL);
      break;
    }
}

static void
update_windows (ChpApplication *self)
{
  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (self)); l != NULL; l = l->next)
    {
      if (CHP_IS_WINDOW (l->data))
        apply_engine_state (self, l->data);
    }
}

static gboolean
run_in_background (ChpApplication *self)
{
  /* The schema's default when the schema is missing: closing the window must never take the
   * bridge away by surprise. */
  return self->settings == NULL || g_settings_get_boolean (self->settings, "run-in-background");
}

/* With no main window GTK would end the app with its last window; the hold keeps the engine
 * (and the browsers' bridge) running until the person opens the window again or quits. */
static void
enter_background (ChpApplication *self)
{
  if (self->background_hold)
    return;

  g_debug ("running in the background");
  self->background_hold = TRUE;
  g_application_hold (G_APPLICATION (self));
}

static void
leave_background (ChpApplication *self)
{
  if (!self->background_hold)
    return;

  /* The main window now keeps the app alive, as any GtkApplication window does. */
  self->background_hold = FALSE;
  g_application_release (G_APPLICATION (self));
}

static gboolean
main_window_close_request_cb (GtkWindow      *window,
                              ChpApplication *self)
{
  if (run_in_background (self))
    {
      /* Destroyed, not hidden: a window nobody sees should not keep its models bound and its
       * timers ticking. Activating the app builds a fresh one. */
      enter_background (self);
      return GDK_EVENT_PROPAGATE;
    }

  /* "Run in background" is off: closing the main window is quitting, even with a pairing or
   * an About window still open, so the bridge never outlives the window by accident. */
  g_application_quit (G_APPLICATION (self));

  return GDK_EVENT_PROPAGATE;
}

static ChpWindow *
ensure_main_window (ChpApplication *self)
{
  ChpWindow *window = find_main_window (self);

  if (window == NULL)
    {
      window = chp_window_new (GTK_APPLICATION (self));
      g_signal_connect_object (window, "close-request",
                               G_CALLBACK (main_window_close_request_cb), self,
                               G_CONNECT_DEFAULT);
      apply_engine_state (self, window);
    }

  return window;
}

static ChpWindow *
present_main_window (ChpApplication *self)
{
  ChpWindow *window = ensure_main_window (self);

  gtk_window_present (GTK_WINDOW (window));
  leave_background (self);

  return window;
}

static void
send_needs_you_notification (ChpApplication *self,
                             const char     *id,
                             const char     *title,
                             const char     *body)
{
  g_autoptr(GNotification) notification = g_notification_new (title);
  g_autoptr(GIcon) icon = g_themed_icon_new (APP_ID);

  g_notification_set_body (notification, body);
  g_notification_set_icon (notification, icon);
  g_notification_set_priority (notification, G_NOTIFICATION_PRIORITY_HIGH);

  /* Only "show me": notification buttons are D-Bus-reachable actions, and Pair or Done must
   * be pressed by a person in the app's own window (docs/security.md). */
  g_notification_set_default_action_and_target (notification, "app.show-needs-you", "s", id);

  g_application_send_notification (G_APPLICATION (self), id, notification);
  g_hash_table_add (self->notified, g_strdup (id));
}

/* The notification id of an item of one of the watched lists. */
typedef char *(*NotificationIdFunc) (gpointer item);

/* Withdraws every notification of @prefix whose item is no longer in @model (@id_of names each
 * item's notification). */
static void
withdraw_ended (ChpApplication     *self,
                const char         *prefix,
                GListModel         *model,
                NotificationIdFunc  id_of)
{
  g_autoptr(GHashTable) current = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  guint n = g_list_model_get_n_items (model);
  GHashTableIter iter;
  const char *id;

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GObject) item = g_list_model_get_item (model, i);

      g_hash_table_add (current, id_of (item));
    }

  g_hash_table_iter_init (&iter, self->notified);
  while (g_hash_table_iter_next (&iter, (gpointer *) &id, NULL))
    {
      if (g_str_has_prefix (id, prefix) && !g_hash_table_contains (current, id))
        {
          g_application_withdraw_notification (G_APPLICATION (self), id);
          g_hash_table_iter_remove (&iter);
        }
    }
}

static void
withdraw_all (ChpApplication *self)
{
  GHashTableIter iter;
  const char *id;

  g_hash_table_iter_init (&iter, self->notified);
  while (g_hash_table_iter_next (&iter, (gpointer *) &id, NULL))
    g_application_withdraw_notification (G_APPLICATION (self), id);
  g_hash_table_remove_all (self->notified);
}

static char *
pairing_notification_id (ChpPairingRequest *request)
{
  return g_strconcat ("pairing:", chp_pairing_request_get_id (request), NULL);
}

static char *
handoff_notification_id (ChpHandoff *handoff)
{
  return g_strconcat ("handoff:", chp_handoff_get_device_id (handoff), "/",
                      chp_handoff_get_id (handoff), NULL);
}

static void
notify_pairing (ChpApplication    *self,
                ChpPairingRequest *request)
{
  g_autofree char *id = pairing_notification_id (request);
  g_autofree char *body = NULL;
  const char *browser = chp_pairing_request_get_browser (request);

  if (g_hash_table_contains (self->notified, id))
    return;

  /* No code in the notification: the comparison belongs in the pairing window, beside the
   * browser's name and origin. */
  if (browser != NULL && *browser != '\0')
    /* Translators: %s is a browser's name, as the browser gives it, e.g. "Chromium 120" */
    body = g_strdup_printf (_("%s asks to pair with Chaperone. Compare the codes before you "
                              "press Pair."), browser);
  else
    body = g_strdup (_("A browser asks to pair with Chaperone. Compare the codes before you "
                       "press Pair."));

  send_needs_you_notification (self, id, _("A browser asks to pair"), body);
}

/* The same closed set as the Needs you row: the words are ours, never the page's or the
 * agent's, so a notification cannot be made to look like a system prompt. */
static const char *
handoff_title (ChpHandoff *handoff)
{
  const char *reason = chp_handoff_get_reason (handoff);

  if (g_strcmp0 (reason, "qr") == 0)
    return _("Scan a QR code");
  if (g_strcmp0 (reason, "mfa") == 0)
    return _("Enter a verification code");
  if (g_strcmp0 (reason, "captcha") == 0)
    return _("Solve a CAPTCHA");
  if (g_strcmp0 (reason, "device") == 0)
    return _("Confirm on your device");
  if (g_strcmp0 (reason, "login") == 0)
    return _("Sign in");
  return _("Do a step in the browser");
}

static void
handoff_arrived_cb (ChpEngine      *engine,
                    ChpHandoff     *handoff,
                    ChpApplication *self)
{
  g_autofree char *id = handoff_notification_id (handoff);
  g_autofree char *body = NULL;
  const char *origin = chp_handoff_get_origin (handoff);

  if (g_hash_table_contains (self->notified, id))
    return;

  if (origin != NULL && *origin != '\0')
    /* Translators: %s is a site's origin, e.g. "https://example.com" */
    body = g_strdup_printf (_("An agent is waiting for you on %s."), origin);
  else
    body = g_strdup (_("An agent is waiting for you in the browser."));

  send_needs_you_notification (self, id, handoff_title (handoff), body);
}

static void
handoffs_changed_cb (GListModel     *model,
                     guint           position,
                     guint           removed,
                     guint           added,
                     ChpApplication *self)
{
  if (removed > 0)
    withdraw_ended (self, "handoff:", model, (NotificationIdFunc) handoff_notification_id);
}

static char *
hold_notification_id (ChpHold *hold)
{
  return g_strconcat ("hold:", chp_hold_get_device_id (hold), "/", chp_hold_get_id (hold), NULL);
}

/* Words by kind, ours alone: the control's label and the values stay in the window, where the
 * person decides; a notification only says that something waits and where. */
static void
hold_arrived_cb (ChpEngine      *engine,
                 ChpHold        *hold,
                 ChpApplication *self)
{
  g_autofree char *id = hold_notification_id (hold);
  g_autofree char *host = NULL;
  g_autofree char *body = NULL;
  const char *kind = chp_hold_get_kind (hold);
  const char *title;

  if (g_hash_table_contains (self->notified, id))
    return;

  if (g_strcmp0 (kind, "delete") == 0)
    title = _("An agent’s delete is waiting for you");
  else if (g_strcmp0 (kind, "write") == 0)
    title = _("An agent’s change is waiting for you");
  else
    title = _("An agent’s send is waiting for you");

  host = chp_hold_site_for_title (chp_hold_get_site (hold));
  /* Translators: %s is a site's host name, e.g. "shop.example" */
  body = g_strdup_printf (_("Nothing happens on %s until you approve it in Chaperone."), host);

  send_needs_you_notification (self, id, title, body);
}

static void
holds_changed_cb (GListModel     *model,
                  guint           position,
                  guint           removed,
                  guint           added,
                  ChpApplication *self)
{
  if (removed > 0)
    withdraw_ended (self, "hold:", model, (NotificationIdFunc) hold_notification_id);
}

static void
present_pairing (ChpApplication    *self,
                 ChpPairingRequest *request)
{
  ChpPairingWindow *window;
  ChpWindow *main_window;

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (self)); l != NULL; l = l->next)
    {
      if (CHP_IS_PAIRING_WINDOW (l->data) &&
          chp_pairing_window_get_request (l->data) == request)
        {
          gtk_window_present (l->data);
          return;
        }
    }

  window = chp_pairing_window_new (GTK_APPLICATION (self), request);

  /* Kept above the main window when there is one, but not modal: two browsers may pair at once,
   * and the person may want to look at the list of paired browsers first. */
  main_window = find_main_window (self);
  if (main_window != NULL)
    gtk_window_set_transient_for (GTK_WINDOW (window), GTK_WINDOW (main_window));

  gtk_window_present (GTK_WINDOW (window));
}

static void
pairing_items_changed_cb (GListModel     *model,
                          guint           position,
                          guint           removed,
                          guint           added,
                          ChpApplication *self)
{
  /* A finished request leaves the list, but its window stays to tell the person what happened
   * and then closes itself; only its notification goes at once. */
  if (removed > 0)
    withdraw_ended (self, "pairing:", model, (NotificationIdFunc) pairing_notification_id);

  for (guint i = position; i < position + added; i++)
    {
      g_autoptr(ChpPairingRequest) request = g_list_model_get_item (model, i);

      if (request != NULL)
        {
          present_pairing (self, request);
          notify_pairing (self, request);
        }
    }
}

/* Versions before the store kept them took the floor entries and the result cap from GSettings,
 * where any process of the user can rewrite them. The store has them now; what the person set
 * then is carried over once, on the first start that finds none in the store, and the keys are
 * reset so that nothing reads them again. */
static void
import_legacy_safety_settings (ChpApplication *self)
{
  ChpSafetySettings *safety = chp_engine_get_safety_settings (self->engine);
  static const char * const keys[] = { "floor-blind", "floor-hands-only", "agent-result-max-chars" };
  g_auto(GStrv) blind = NULL;
  g_auto(GStrv) hands_only = NULL;

  if (self->settings == NULL || chp_safety_settings_get_stored (safety))
    return;

  blind = g_settings_get_strv (self->settings, "floor-blind");
  hands_only = g_settings_get_strv (self->settings, "floor-hands-only");
  chp_safety_settings_set_floor (safety, (const char * const *) blind,
                                 (const char * const *) hands_only);
  chp_safety_settings_set_result_max_chars (safety,
                                            g_settings_get_uint (self->settings,
                                                                 "agent-result-max-chars"));
  for (gsize i = 0; i < G_N_ELEMENTS (keys); i++)
    g_settings_reset (self->settings, keys[i]);
}

/* The engine learns the settings it applies through properties, when it has them: bound here,
 * they follow every change the person makes in Preferences while the engine runs. */
static void
bind_engine_settings (ChpApplication *self)
{
  static const char *keys[] = { "default-grant-minutes", "audit-max-rows" };

  if (self->settings == NULL)
    return;

  for (gsize i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      if (g_object_class_find_property (G_OBJECT_GET_CLASS (self->engine), keys[i]) != NULL)
        g_settings_bind (self->settings, keys[i], self->engine, keys[i], G_SETTINGS_BIND_GET);
      else
        g_debug ("the engine does not take %s yet", keys[i]);
    }
}

/* The tray shows the most urgent state: stopped, then someone waiting, else idle. */
static void
update_tray (ChpApplication *self)
{
  ChpTrayState state = CHP_TRAY_STATE_IDLE;
  guint needs = 0;

  if (self->tray == NULL)
    return;

  if (self->engine != NULL && self->engine_state == ENGINE_RUNNING)
    {
      ChpAgentSessionList *agents = chp_engine_get_agent_sessions (self->engine);

      needs = self->needs != NULL ? g_list_model_get_n_items (self->needs) : 0;
      if (chp_engine_get_stopped (self->engine))
        state = CHP_TRAY_STATE_STOPPED;
      else if (needs > 0)
        state = CHP_TRAY_STATE_NEEDS_YOU;
      else if (chp_agent_session_list_count_state (agents, CHP_AGENT_SESSION_RUNNING) > 0)
        state = CHP_TRAY_STATE_WORKING;
    }

  chp_tray_set_needs_count (self->tray, needs);
  chp_tray_set_state (self->tray, state);
}

/* An agent at work keeps the app running even with "Run in background" off and the window
 * closed: quitting under it would fail its calls half-way. */
static void
agents_changed_cb (ChpApplication *self)
{
  gboolean any = self->engine != NULL &&
                 g_list_model_get_n_items (G_LIST_MODEL (chp_engine_get_agent_sessions (self->engine))) > 0;

  if (any && !self->agents_hold)
    {
      self->agents_hold = TRUE;
      g_application_hold (G_APPLICATION (self));
    }
  else if (!any && self->agents_hold)
    {
      self->agents_hold = FALSE;
      g_application_release (G_APPLICATION (self));
    }
  update_tray (self);
}

static gboolean
service_grace_done_cb (gpointer user_data)
{
  ChpApplication *self = user_data;

  self->service_grace_id = 0;
  g_application_release (G_APPLICATION (self));
  return G_SOURCE_REMOVE;
}

static void
stop_engine (ChpApplication *self)
{
  g_cancellable_cancel (self->start_cancellable);
  g_clear_object (&self->start_cancellable);

  if (self->engine != NULL)
    {
      if (self->pairing_changed_id != 0)
        g_clear_signal_handler (&self->pairing_changed_id, chp_engine_get_pairing (self->engine));
      if (self->handoffs_changed_id != 0)
        g_clear_signal_handler (&self->handoffs_changed_id,
                                chp_engine_get_handoffs (self->engine));
      if (self->holds_changed_id != 0)
        g_clear_signal_handler (&self->holds_changed_id, chp_engine_get_holds (self->engine));
      g_clear_signal_handler (&self->handoff_arrived_id, self->engine);
      g_clear_signal_handler (&self->hold_arrived_id, self->engine);
      g_clear_signal_handler (&self->stopped_changed_id, self->engine);
      if (self->settings != NULL)
        {
          g_settings_unbind (self->engine, "default-grant-minutes");
          g_settings_unbind (self->engine, "audit-max-rows");
        }

      g_clear_object (&self->needs);

      /* Agents first: their sessions hold calls that hold the bridge. */
      if (self->agents != NULL)
        chp_agent_endpoint_close (self->agents);
      g_clear_object (&self->agents);

      /* Windows and rows may still hold references, but the bridge and the database must close
       * now, not whenever the last widget goes. The engine's dispose may run twice. */
      g_object_run_dispose (G_OBJECT (self->engine));
      g_clear_object (&self->engine);
      agents_changed_cb (self);
    }

  /* Nothing of a stopped engine can still need the person. */
  if (self->notified != NULL)
    withdraw_all (self);

  self->engine_state = ENGINE_STOPPED;
  update_tray (self);
}

/* The browsers matter more than the agents: an endpoint that cannot be made (someone else's
 * runtime folder, a loose mode) is said in the log and leaves the bridge running. */
static void
start_agent_endpoint (ChpApplication *self)
{
  g_autoptr(GError) error = NULL;

  self->agents = chp_agent_endpoint_new (self->engine);
  if (!chp_agent_endpoint_listen (self->agents, NULL, &error))
    g_message ("agents: no endpoint: %s", error->message);
}

static void
engine_started_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(ChpApplication) self = user_data;
  ChpEngine *engine = CHP_ENGINE (source);
  g_autoptr(GError) error = NULL;
  ChpPairingManager *pairing;

  if (!chp_engine_start_finish (engine, result, &error))
    {
      /* Cancelled: the app is shutting down or started another engine. */
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || engine != self->engine)
        return;

      /* A message, not a warning: the app keeps running and shows this, and a warning would
       * abort the tests that check exactly that (G_DEBUG=fatal-warnings). */
      g_message ("engine: could not start: %s", error->message);
      self->engine_state = ENGINE_FAILED;
      g_free (self->start_error);
      self->start_error = g_strdup (error->message);
      g_clear_object (&self->start_cancellable);
      update_windows (self);
      return;
    }

  if (engine != self->engine)
    return;

  self->engine_state = ENGINE_RUNNING;
  g_clear_object (&self->start_cancellable);
  start_agent_endpoint (self);
  import_legacy_safety_settings (self);

  pairing = chp_engine_get_pairing (engine);
  self->pairing_changed_id = g_signal_connect_object (pairing, "items-changed",
                                                      G_CALLBACK (pairing_items_changed_cb),
                                                      self, G_CONNECT_DEFAULT);
  self->handoff_arrived_id = g_signal_connect_object (engine, "handoff-arrived",
                                                      G_CALLBACK (handoff_arrived_cb),
                                                      self, G_CONNECT_DEFAULT);
  self->handoffs_changed_id = g_signal_connect_object (chp_engine_get_handoffs (engine),
                                                       "items-changed",
                                                       G_CALLBACK (handoffs_changed_cb),
                                                       self, G_CONNECT_DEFAULT);
  self->hold_arrived_id = g_signal_connect_object (engine, "hold-arrived",
                                                   G_CALLBACK (hold_arrived_cb),
                                                   self, G_CONNECT_DEFAULT);
  self->holds_changed_id = g_signal_connect_object (chp_engine_get_holds (engine),
                                                    "items-changed",
                                                    G_CALLBACK (holds_changed_cb),
                                                    self, G_CONNECT_DEFAULT);
  self->stopped_changed_id = g_signal_connect_object (engine, "notify::stopped",
                                                      G_CALLBACK (update_tray), self,
                                                      G_CONNECT_SWAPPED);
  self->needs = chp_needs_page_new_model (engine);
  g_signal_connect_object (self->needs, "items-changed", G_CALLBACK (update_tray), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (chp_engine_get_agent_sessions (engine), "items-changed",
                           G_CALLBACK (agents_changed_cb), self, G_CONNECT_SWAPPED);
  update_windows (self);
  update_tray (self);

  /* Nothing can be waiting this early, but if something is, the person must see it. */
  pairing_items_changed_cb (G_LIST_MODEL (pairing), 0, 0,
                            g_list_model_get_n_items (G_LIST_MODEL (pairing)), self);
}

static guint
resolve_bridge_port (ChpApplication *self)
{
  guint16 port = CHP_BRIDGE_DEFAULT_PORT;

  if (self->bridge_port >= 0)
    return self->bridge_port;

  if (self->settings == NULL)
    {
      g_message ("settings: schema %s is not installed; using port %u", APP_ID, port);
      return port;
    }

  g_settings_get (self->settings, "bridge-port", "q", &port);

  return port;
}

/**
 * chp_application_start_engine:
 *
 * Starts the engine, or starts it again after it failed (the person fixed a file mode and
 * pressed Try Again). Does nothing while an engine is starting or running.
 */
void
chp_application_start_engine (ChpApplication *self)
{
  guint port;

  g_return_if_fail (CHP_IS_APPLICATION (self));

  if (self->engine_state == ENGINE_STARTING || self->engine_state == ENGINE_RUNNING)
    return;

  stop_engine (self);
  g_clear_pointer (&self->start_error, g_free);

  port = resolve_bridge_port (self);
  self->engine = chp_engine_new (self->data_dir);
  bind_engine_settings (self);
  self->start_cancellable = g_cancellable_new ();
  self->engine_state = ENGINE_STARTING;
  update_windows (self);

  chp_engine_start_async (self->engine, port, self->start_cancellable,
                          engine_started_cb, g_object_ref (self));
}

/* Returns: (transfer none) (nullable): the engine once it is running */
ChpEngine *
chp_application_get_engine (ChpApplication *self)
{
  g_return_val_if_fail (CHP_IS_APPLICATION (self), NULL);

  return self->engine_state == ENGINE_RUNNING ? self->engine : NULL;
}

/**
 * chp_application_show_main_window:
 * @page_name: (nullable): a page of the main window ("needs-you", "browsers", "grants",
 *   "agents", "activity"), or %NULL for the page it shows already
 *
 * Opens the main window (building it again if it was closed to the background) and brings it
 * to the front: what the tray's Open and Needs you, and a notification, do.
 */
void
chp_application_show_main_window (ChpApplication *self,
                                  const char     *page_name)
{
  ChpWindow *window;

  g_return_if_fail (CHP_IS_APPLICATION (self));

  window = present_main_window (self);
  if (page_name != NULL)
    chp_window_show_page (window, page_name);
}

/* A session logout or a test harness stops the app with SIGTERM: quit through the main loop,
 * so shutdown closes the bridge and the database as it does for Ctrl+Q. */
static gboolean
quit_signal_cb (gpointer user_data)
{
  g_application_quit (G_APPLICATION (user_data));

  return G_SOURCE_CONTINUE;
}

static void
quit_activated (GSimpleAction *action,
                GVariant      *parameter,
                gpointer       user_data)
{
  g_application_quit (G_APPLICATION (user_data));
}

static void
about_activated (GSimpleAction *action,
                 GVariant      *parameter,
                 gpointer       user_data)
{
  ChpApplication *self = CHP_APPLICATION (user_data);
  const char *developers[] = { _("Chaperone developers"), NULL };
  const char *translators = _("translator-credits");
  GtkWidget *about;

  about = g_object_new (ADW_TYPE_ABOUT_WINDOW,
                        "transient-for", gtk_application_get_active_window (GTK_APPLICATION (self)),
                        "application-icon", APP_ID,
                        "application-name", "Chaperone",
                        "developer-name", _("Chaperone developers"),
                        "developers", developers,
                        "version", PACKAGE_VERSION,
                        "comments", _("Let an AI agent use your browser while you stay in charge."),
                        "website", "https://github.com/chaperone/chaperone",
                        "issue-url", "https://github.com/chaperone/chaperone/issues",
                        "copyright", _("© 2026 Chaperone developers"),
                        "license-type", GTK_LICENSE_GPL_3_0,
                        NULL);

  /* An untranslated catalogue returns the msgid itself, which is not a credit. */
  if (g_strcmp0 (translators, "translator-credits") != 0)
    adw_about_window_set_translator_credits (ADW_ABOUT_WINDOW (about), translators);

  gtk_window_present (GTK_WINDOW (about));
}

static void
preferences_activated (GSimpleAction *action,
                       GVariant      *parameter,
                       gpointer       user_data)
{
  ChpApplication *self = CHP_APPLICATION (user_data);
  g_autofree char *default_data_dir = NULL;
  const char *data_dir;
  ChpPreferencesWindow *preferences;

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (self)); l != NULL; l = l->next)
    {
      if (CHP_IS_PREFERENCES_WINDOW (l->data))
        {
          gtk_window_present (l->data);
          return;
        }
    }

  if (self->engine != NULL)
    data_dir = chp_engine_get_data_dir (self->engine);
  else if (self->data_dir != NULL)
    data_dir = self->data_dir;
  else
    data_dir = default_data_dir = chp_engine_default_data_dir ();

  /* The floor and the result cap are the running engine's (its store); without one, Preferences
   * shows them but cannot change them. */
  preferences = chp_preferences_window_new (GTK_WINDOW (find_main_window (self)),
                                            self->settings,
                                            self->engine_state == ENGINE_RUNNING
                                              ? chp_engine_get_safety_settings (self->engine)
                                              : NULL,
                                            data_dir);
  gtk_window_set_application (GTK_WINDOW (preferences), GTK_APPLICATION (self));
  gtk_window_present (GTK_WINDOW (preferences));
}

/* The target is the notification's id. The window only opens on the Needs you page, where the
 * item itself waits: anyone on the session bus may call this, and all it can do is show. */
static void
show_needs_you_activated (GSimpleAction *action,
                          GVariant      *parameter,
                          gpointer       user_data)
{
  ChpApplication *self = CHP_APPLICATION (user_data);

  g_debug ("showing Needs you for %s", g_variant_get_string (parameter, NULL));
  chp_application_show_main_window (self, "needs-you");
}

/* Only harmless actions live here: app.* actions are exported on the session bus
 * (org.gtk.Actions), so anything that pairs, approves or revokes is a widget action instead. */
static void
start_engine_activated (GSimpleAction *action,
                        GVariant      *parameter,
                        gpointer       user_data)
{
  chp_application_start_engine (user_data);
}

static const GActionEntry app_entries[] = {
  { "quit", quit_activated, NULL, NULL, NULL },
  { "about", about_activated, NULL, NULL, NULL },
  { "preferences", preferences_activated, NULL, NULL, NULL },
  { "show-needs-you", show_needs_you_activated, "s", NULL, NULL },
  /* The window's Try Again. Safe for any program of the user to trigger (it is exported): it
   * only starts an engine that is not running, which launching the app does anyway. */
  { "start-engine", start_engine_activated, NULL, NULL, NULL },
};

static int
chp_application_handle_local_options (GApplication *application,
                                      GVariantDict *options)
{
  ChpApplication *self = CHP_APPLICATION (application);
  g_autofree char *data_dir = NULL;
  g_autofree char *port_text = NULL;

  if (g_variant_dict_contains (options, "version"))
    {
      g_print ("chaperone %s\n", PACKAGE_VERSION);
      return EXIT_SUCCESS;
    }

  if (g_variant_dict_lookup (options, "bridge-port", "s", &port_text))
    {
      guint64 port;

      if (!g_ascii_string_to_unsigned (port_text, 10, 0, G_MAXUINT16, &port, NULL))
        {
          g_autofree char *message = NULL;

          message = g_strdup_printf (_("The bridge port must be a number from 0 to 65535, "
                                       "not “%s”."),
                                     port_text);
          g_printerr ("%s\n", message);
          return EXIT_FAILURE;
        }
      self->bridge_port = (int) port;
    }

  /* Made absolute here, in the process whose working directory the person meant. */
  if (g_variant_dict_lookup (options, "data-dir", "^ay", &data_dir))
    {
      g_free (self->data_dir);
      self->data_dir = g_canonicalize_filename (data_dir, NULL);
    }

  if (g_variant_dict_contains (options, "background"))
    {
      g_autoptr(GError) error = NULL;

      /* Registered now to learn whether Chaperone already runs: a login start must not pop
       * the window of an instance the person already has. */
      if (!g_application_register (application, NULL, &error))
        {
          g_printerr ("%s\n", error->message);
          return EXIT_FAILURE;
        }

      if (g_application_get_is_remote (application))
        return EXIT_SUCCESS;

      self->start_hidden = TRUE;
    }

  return G_APPLICATION_CLASS (chp_application_parent_class)->handle_local_options (application,
                                                                                   options);
}

static void
tray_registered_cb (ChpTray        *tray,
                    GParamSpec     *pspec,
                    ChpApplication *self)
{
  /* Said once: without a tray the window and notifications are how to reach Chaperone. */
  if (!chp_tray_is_registered (tray) && !self->said_where_tray_is)
    {
      self->said_where_tray_is = TRUE;
      g_message ("tray: no status notifier host; Chaperone stays reachable from its window, "
                 "its notifications and the launcher");
    }
}

static gboolean
tray_check_registered_cb (gpointer user_data)
{
  ChpApplication *self = user_data;

  if (self->tray != NULL)
    tray_registered_cb (self->tray, NULL, self);
  return G_SOURCE_REMOVE;
}

static void
tray_open_cb (ChpTray        *tray,
              ChpApplication *self)
{
  chp_application_show_main_window (self, NULL);
}

static void
tray_show_needs_you_cb (ChpTray        *tray,
                        ChpApplication *self)
{
  chp_application_show_main_window (self, "needs-you");
}

/* Stop only ever makes things safer, so the tray (on the session bus) may ask for it; resuming
 * is the person's, in the window. */
static void
tray_stop_all_cb (ChpTray        *tray,
                  ChpApplication *self)
{
  if (self->engine != NULL && self->engine_state == ENGINE_RUNNING)
    chp_engine_stop_all (self->engine, "tray");
}

static void
tray_quit_cb (ChpTray        *tray,
              ChpApplication *self)
{
  g_application_quit (G_APPLICATION (self));
}

static void
chp_application_startup (GApplication *application)
{
  ChpApplication *self = CHP_APPLICATION (application);
  static const char *quit_accels[] = { "<Control>q", NULL };
  static const char *preferences_accels[] = { "<Control>comma", NULL };
  static const char *close_accels[] = { "<Control>w", NULL };
  GSettingsSchemaSource *source;
  g_autoptr(GSettingsSchema) schema = NULL;

  G_APPLICATION_CLASS (chp_application_parent_class)->startup (application);

  g_action_map_add_action_entries (G_ACTION_MAP (self), app_entries, G_N_ELEMENTS (app_entries),
                                   self);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "app.quit", quit_accels);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "app.preferences",
                                         preferences_accels);
  /* GtkWindow's own action: for the main window it goes through close-request, so Ctrl+W
   * keeps the app in the background exactly as the window's close button does. */
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "window.close", close_accels);
  gtk_window_set_default_icon_name (APP_ID);

  self->sigterm_id = g_unix_signal_add (SIGTERM, quit_signal_cb, self);
  self->sigint_id = g_unix_signal_add (SIGINT, quit_signal_cb, self);

  /* g_settings_new() aborts on a missing schema; an uninstalled run without
   * GSETTINGS_SCHEMA_DIR should start with the default port instead. */
  source = g_settings_schema_source_get_default ();
  if (source != NULL)
    schema = g_settings_schema_source_lookup (source, APP_ID, TRUE);
  if (schema != NULL)
    self->settings = g_settings_new_full (schema, NULL, NULL);

  /* Nothing to bind Preferences to without the schema. */
  g_simple_action_set_enabled (G_SIMPLE_ACTION (g_action_map_lookup_action (G_ACTION_MAP (self),
                                                                            "preferences")),
                               self->settings != NULL);

  /* Started by D-Bus activation (DBusActivatable launchers, chaperone-mcp): GApplication keeps
   * a service alive only briefly unless something holds it; the engine is what was asked for,
   * so it stays until an Activate brings the window or the person quits. */
  if ((g_application_get_flags (application) & G_APPLICATION_IS_SERVICE) != 0)
    {
      if (run_in_background (self))
        enter_background (self);
      else
        {
          /* chaperone-mcp activated us for an agent: hold long enough for it to connect;
           * its session then holds the app for as long as it stays. */
          g_application_hold (application);
          self->service_grace_id = g_timeout_add_seconds (60, service_grace_done_cb, self);
        }
    }

  self->tray = chp_tray_new (g_application_get_dbus_connection (application), APP_ID, NULL);
  g_signal_connect_object (self->tray, "open", G_CALLBACK (tray_open_cb), self, G_CONNECT_DEFAULT);
  g_signal_connect_object (self->tray, "show-needs-you", G_CALLBACK (tray_show_needs_you_cb),
                           self, G_CONNECT_DEFAULT);
  g_signal_connect_object (self->tray, "stop-all", G_CALLBACK (tray_stop_all_cb), self,
                           G_CONNECT_DEFAULT);
  g_signal_connect_object (self->tray, "quit", G_CALLBACK (tray_quit_cb), self, G_CONNECT_DEFAULT);
  g_signal_connect_object (self->tray, "notify::registered", G_CALLBACK (tray_registered_cb),
                           self, G_CONNECT_DEFAULT);
  /* A watcher answers asynchronously; give it a moment before saying there is none. */
  g_timeout_add_seconds_full (G_PRIORITY_DEFAULT, 3, tray_check_registered_cb,
                              g_object_ref (self), g_object_unref);

  chp_application_start_engine (self);
}

static void
chp_application_activate (GApplication *application)
{
  ChpApplication *self = CHP_APPLICATION (application);

  /* Only the start itself is hidden: launching Chaperone again, from the launcher, the
   * command line or D-Bus, brings the window. */
  if (self->start_hidden)
    {
      self->start_hidden = FALSE;
      enter_background (self);
      return;
    }

  present_main_window (self);
}

static void
chp_application_shutdown (GApplication *application)
{
  ChpApplication *self = CHP_APPLICATION (application);

  /* Closes the bridge and the database before GTK goes away. */
  stop_engine (self);
  g_clear_object (&self->tray);
  if (self->background_hold)
    {
      /* Quit ends the main loop whatever the use count; just keep the count honest. */
      self->background_hold = FALSE;
      g_application_release (application);
    }
  if (self->service_grace_id != 0)
    {
      g_clear_handle_id (&self->service_grace_id, g_source_remove);
      g_application_release (application);
    }
  g_clear_handle_id (&self->sigterm_id, g_source_remove);
  g_clear_handle_id (&self->sigint_id, g_source_remove);

  G_APPLICATION_CLASS (chp_application_parent_class)->shutdown (application);
}

static void
chp_application_dispose (GObject *object)
{
  ChpApplication *self = CHP_APPLICATION (object);

  stop_engine (self);
  g_clear_object (&self->settings);
  g_clear_pointer (&self->notified, g_hash_table_unref);

  G_OBJECT_CLASS (chp_application_parent_class)->dispose (object);
}

static void
chp_application_finalize (GObject *object)
{
  ChpApplication *self = CHP_APPLICATION (object);

  g_clear_pointer (&self->data_dir, g_free);
  g_clear_pointer (&self->start_error, g_free);

  G_OBJECT_CLASS (chp_application_parent_class)->finalize (object);
}

static void
chp_application_class_init (ChpApplicationClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GApplicationClass *app_class = G_APPLICATION_CLASS (klass);

  object_class->dispose = chp_application_dispose;
  object_class->finalize = chp_application_finalize;

  app_class->handle_local_options = chp_application_handle_local_options;
  app_class->startup = chp_application_startup;
  app_class->activate = chp_application_activate;
  app_class->shutdown = chp_application_shutdown;
}

static void
chp_application_init (ChpApplication *self)
{
  self->bridge_port = -1;
  self->notified = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  g_application_add_main_option_entries (G_APPLICATION (self), option_entries);
}

ChpApplication *
chp_application_new (void)
{
  return g_object_new (CHP_TYPE_APPLICATION,
                       "application-id", APP_ID,
                       "flags", G_APPLICATION_DEFAULT_FLAGS,
                       NULL);
}
