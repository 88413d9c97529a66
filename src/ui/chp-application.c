/* chp-application.c: one instance per session; it owns the engine, starts it once the options and
 * settings are known, and opens a pairing window for every browser that waits for a person. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-app"

#include "chp-application.h"

#include "chp-pairing-window.h"
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
  GCancellable *start_cancellable;
  EngineState engine_state;
  char *start_error;
  gulong pairing_changed_id;

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
  /* Only additions matter here: a finished request leaves the list, but its window stays to
   * tell the person what happened and then closes itself. */
  for (guint i = position; i < position + added; i++)
    {
      g_autoptr(ChpPairingRequest) request = g_list_model_get_item (model, i);

      if (request != NULL)
        present_pairing (self, request);
    }
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

      /* Windows and rows may still hold references, but the bridge and the database must close
       * now, not whenever the last widget goes. The engine's dispose may run twice. */
      g_object_run_dispose (G_OBJECT (self->engine));
      g_clear_object (&self->engine);
    }

  self->engine_state = ENGINE_STOPPED;
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

  pairing = chp_engine_get_pairing (engine);
  self->pairing_changed_id = g_signal_connect_object (pairing, "items-changed",
                                                      G_CALLBACK (pairing_items_changed_cb),
                                                      self, G_CONNECT_DEFAULT);
  update_windows (self);

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
                        "license-type", GTK_LICENSE_GPL_3_0,
                        NULL);

  /* An untranslated catalogue returns the msgid itself, which is not a credit. */
  if (g_strcmp0 (translators, "translator-credits") != 0)
    adw_about_window_set_translator_credits (ADW_ABOUT_WINDOW (about), translators);

  gtk_window_present (GTK_WINDOW (about));
}

/* Only harmless actions live here: app.* actions are exported on the session bus
 * (org.gtk.Actions), so anything that pairs, approves or revokes is a widget action instead. */
static const GActionEntry app_entries[] = {
  { "quit", quit_activated, NULL, NULL, NULL },
  { "about", about_activated, NULL, NULL, NULL },
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

  return G_APPLICATION_CLASS (chp_application_parent_class)->handle_local_options (application,
                                                                                   options);
}

static void
chp_application_startup (GApplication *application)
{
  ChpApplication *self = CHP_APPLICATION (application);
  static const char *quit_accels[] = { "<Control>q", NULL };
  GSettingsSchemaSource *source;
  g_autoptr(GSettingsSchema) schema = NULL;

  G_APPLICATION_CLASS (chp_application_parent_class)->startup (application);

  g_action_map_add_action_entries (G_ACTION_MAP (self), app_entries, G_N_ELEMENTS (app_entries),
                                   self);
  gtk_application_set_accels_for_action (GTK_APPLICATION (self), "app.quit", quit_accels);
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

  chp_application_start_engine (self);
}

static void
chp_application_activate (GApplication *application)
{
  ChpApplication *self = CHP_APPLICATION (application);
  ChpWindow *window = find_main_window (self);

  if (window == NULL)
    {
      window = chp_window_new (GTK_APPLICATION (self));
      apply_engine_state (self, window);
    }

  gtk_window_present (GTK_WINDOW (window));
}

static void
chp_application_shutdown (GApplication *application)
{
  ChpApplication *self = CHP_APPLICATION (application);

  /* Closes the bridge and the database before GTK goes away. */
  stop_engine (self);
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
