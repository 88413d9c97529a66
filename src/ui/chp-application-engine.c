/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-application-engine.c: ChpApplication's engine: started on the bridge port of the options or
 * the settings, bound to the settings it applies, joined by the agents' MCP endpoint and watched
 * for what the windows, the notifications and the tray show; stopped whole, so that the bridge
 * and the database close when the app says so rather than when the last widget lets go. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-app"

#include "chp-application-private.h"

#include "chp-needs-page.h"
#include "chp-store-traces.h"

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

/* The trace cap is the store's, not a property of the engine: applied when the store is there,
 * and again on every change the person makes in Preferences. */
static void
apply_trace_cap (ChpApplication *self)
{
  ChpStore *store = self->engine != NULL ? chp_engine_get_store (self->engine) : NULL;

  if (self->settings == NULL || store == NULL)
    return;

  chp_store_set_trace_cap (store,
                           (guint64) g_settings_get_uint (self->settings, "trace-cap-mb") *
                           1024 * 1024);
}

/* "Learn how sites work" is not a property of the engine either: applied as soon as the engine
 * is made, before it starts, so that nothing is learned against the person's choice, and again
 * on every change. */
static void
apply_site_learning (ChpApplication *self)
{
  if (self->settings == NULL || self->engine == NULL)
    return;

  chp_engine_set_site_learning (self->engine,
                                g_settings_get_boolean (self->settings, "site-learning"));
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
  chp_application_update_tray (self);
}

void
chp_application_stop_engine (ChpApplication *self)
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
        g_clear_signal_handler (&self->trace_cap_changed_id, self->settings);
      if (self->settings != NULL)
        g_clear_signal_handler (&self->site_learning_changed_id, self->settings);
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
    chp_application_withdraw_all (self);

  self->engine_state = ENGINE_STOPPED;
  chp_application_update_tray (self);
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
      chp_application_update_windows (self);
      return;
    }

  if (engine != self->engine)
    return;

  self->engine_state = ENGINE_RUNNING;
  g_clear_object (&self->start_cancellable);
  start_agent_endpoint (self);
  import_legacy_safety_settings (self);
  /* Connected before the key is read: GSettings tells changes only of keys read since. */
  if (self->settings != NULL)
    self->trace_cap_changed_id =
      g_signal_connect_object (self->settings, "changed::trace-cap-mb",
                               G_CALLBACK (apply_trace_cap), self, G_CONNECT_SWAPPED);
  apply_trace_cap (self);

  pairing = chp_engine_get_pairing (engine);
  self->pairing_changed_id =
    g_signal_connect_object (pairing, "items-changed",
                             G_CALLBACK (chp_application_pairing_items_changed_cb),
                             self, G_CONNECT_DEFAULT);
  self->handoff_arrived_id =
    g_signal_connect_object (engine, "handoff-arrived",
                             G_CALLBACK (chp_application_handoff_arrived_cb),
                             self, G_CONNECT_DEFAULT);
  self->handoffs_changed_id =
    g_signal_connect_object (chp_engine_get_handoffs (engine), "items-changed",
                             G_CALLBACK (chp_application_handoffs_changed_cb),
                             self, G_CONNECT_DEFAULT);
  self->hold_arrived_id =
    g_signal_connect_object (engine, "hold-arrived",
                             G_CALLBACK (chp_application_hold_arrived_cb),
                             self, G_CONNECT_DEFAULT);
  self->holds_changed_id =
    g_signal_connect_object (chp_engine_get_holds (engine), "items-changed",
                             G_CALLBACK (chp_application_holds_changed_cb),
                             self, G_CONNECT_DEFAULT);
  self->stopped_changed_id =
    g_signal_connect_object (engine, "notify::stopped",
                             G_CALLBACK (chp_application_update_tray), self,
                             G_CONNECT_SWAPPED);
  self->needs = chp_needs_page_new_model (engine);
  g_signal_connect_object (self->needs, "items-changed",
                           G_CALLBACK (chp_application_update_tray), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (chp_engine_get_agent_sessions (engine), "items-changed",
                           G_CALLBACK (agents_changed_cb), self, G_CONNECT_SWAPPED);
  chp_application_update_windows (self);
  chp_application_update_tray (self);

  /* Nothing can be waiting this early, but if something is, the person must see it. */
  chp_application_pairing_items_changed_cb (G_LIST_MODEL (pairing), 0, 0,
                                            g_list_model_get_n_items (G_LIST_MODEL (pairing)),
                                            self);
}

static guint
resolve_bridge_port (ChpApplication *self)
{
  guint16 port = CHP_BRIDGE_DEFAULT_PORT;

  /* The administrator's port wins over the command line and the person's setting. */
  if (chp_managed_policy_get_bridge_port (self->policy) != 0)
    return chp_managed_policy_get_bridge_port (self->policy);
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

  chp_application_stop_engine (self);
  g_clear_pointer (&self->start_error, g_free);

  port = resolve_bridge_port (self);
  self->engine = chp_engine_new (self->data_dir);
  chp_engine_set_managed_policy (self->engine, self->policy);
  bind_engine_settings (self);
  /* Connected before the key is read: GSettings tells changes only of keys read since. */
  if (self->settings != NULL)
    self->site_learning_changed_id =
      g_signal_connect_object (self->settings, "changed::site-learning",
                               G_CALLBACK (apply_site_learning), self, G_CONNECT_SWAPPED);
  apply_site_learning (self);
  self->start_cancellable = g_cancellable_new ();
  self->engine_state = ENGINE_STARTING;
  chp_application_update_windows (self);

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
