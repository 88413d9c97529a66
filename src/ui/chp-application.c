/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-application.c: one instance per session; it owns the engine, starts it once the options and
 * settings are known, opens a pairing window for every browser that waits for a person, tells the
 * person about everything that needs them, and keeps running without a window when asked to.
 * This part holds the options, the app actions, the windows and running in the background, and
 * the GApplication lifecycle; the engine, the notifications and the tray have files of their own
 * (chp-application-engine.c, chp-application-notify.c, chp-application-tray.c). */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-app"

#include "chp-application-private.h"

#include "chp-display-memory.h"
#include "chp-memory.h"
#include "chp-doctor-window.h"
#include "chp-preferences-window.h"

#include <glib-unix.h>
#include <glib/gi18n.h>
#include <signal.h>
#include <stdlib.h>

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

ChpWindow *
chp_application_find_main_window (ChpApplication *self)
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

void
chp_application_update_windows (ChpApplication *self)
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

/* Seconds after the window closed: its last frame long read by the X server, and before the
 * trim it asks for and the libraries' page-out (5 s, chp-memory.c), so that neither is undone. */
#define DISPLAY_RELEASE_DELAY_S 2

static gboolean
display_release_cb (gpointer data)
{
  ChpApplication *self = data;
  GdkDisplay *display = gdk_display_get_default ();

  self->display_release_id = 0;
  if (display != NULL && gtk_application_get_windows (GTK_APPLICATION (self)) == NULL)
    {
      chp_display_release_memory (display);
      chp_memory_trim_soon ("the display's drawing memory was released");
    }
  return G_SOURCE_REMOVE;
}

/* The last window went while the app runs in the tray (the main window closed, or a pairing
 * window left open then closed): what drawing them kept goes in a moment. Not for an app that
 * never drew (started in the background): there is nothing to give back, and looking would make
 * the display's drawing state for nothing. */
static void
chp_application_window_removed (GtkApplication *application,
                                GtkWindow      *window)
{
  ChpApplication *self = CHP_APPLICATION (application);

  GTK_APPLICATION_CLASS (chp_application_parent_class)->window_removed (application, window);

  if (!self->background_hold || gtk_application_get_windows (application) != NULL)
    return;
  g_clear_handle_id (&self->display_release_id, g_source_remove);
  self->display_release_id = g_timeout_add_seconds_full (G_PRIORITY_LOW, DISPLAY_RELEASE_DELAY_S,
                                                         display_release_cb, self, NULL);
  g_source_set_name_by_id (self->display_release_id, "[chaperone] display memory");
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
  /* Nothing draws in the tray: the libraries only a window uses give their pages back (and the
   * display's drawing memory, once the last window has gone: window_removed()). */
  chp_memory_page_out_soon ();
}

static void
leave_background (ChpApplication *self)
{
  if (!self->background_hold)
    return;

  /* The main window now keeps the app alive, as any GtkApplication window does. */
  chp_memory_page_out_cancel ();
  g_clear_handle_id (&self->display_release_id, g_source_remove);
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
      /* The window's widgets, textures and list rows are freed as it goes: give their pages
       * back to the system rather than keep them in the heap for a window that may not come. */
      if (self->engine_state == ENGINE_RUNNING)
        chp_store_release_memory (chp_engine_get_store (self->engine));
      chp_memory_trim_soon ("the window closed");
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
  ChpWindow *window = chp_application_find_main_window (self);

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

static gboolean
service_grace_done_cb (gpointer user_data)
{
  ChpApplication *self = user_data;

  self->service_grace_id = 0;
  g_application_release (G_APPLICATION (self));
  return G_SOURCE_REMOVE;
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
  preferences = chp_preferences_window_new (GTK_WINDOW (chp_application_find_main_window (self)),
                                            self->settings,
                                            self->engine_state == ENGINE_RUNNING
                                              ? chp_engine_get_safety_settings (self->engine)
                                              : NULL,
                                            self->policy,
                                            data_dir);
  gtk_window_set_application (GTK_WINDOW (preferences), GTK_APPLICATION (self));
  gtk_window_present (GTK_WINDOW (preferences));
}

/* Check Setup only shows what is found (it is exported on the bus, as every app.* action); its
 * Fix is the window's own widget action. */
static void
check_setup_activated (GSimpleAction *action,
                       GVariant      *parameter,
                       gpointer       user_data)
{
  ChpApplication *self = CHP_APPLICATION (user_data);
  g_autofree char *default_data_dir = NULL;
  const char *data_dir = self->engine != NULL ? chp_engine_get_data_dir (self->engine)
                         : self->data_dir != NULL ? self->data_dir
                         : (default_data_dir = chp_engine_default_data_dir ());
  ChpDoctorWindow *window;

  for (GList *l = gtk_application_get_windows (GTK_APPLICATION (self)); l != NULL; l = l->next)
    if (CHP_IS_DOCTOR_WINDOW (l->data))
      {
        gtk_window_present (l->data);
        return;
      }
  window = chp_doctor_window_new (GTK_WINDOW (chp_application_find_main_window (self)), data_dir);
  gtk_window_set_application (GTK_WINDOW (window), GTK_APPLICATION (self));
  gtk_window_present (GTK_WINDOW (window));
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
  { "check-setup", check_setup_activated, NULL, NULL, NULL },
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

  chp_application_start_tray (self);

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
  chp_application_stop_engine (self);
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

  chp_application_stop_engine (self);
  g_clear_handle_id (&self->display_release_id, g_source_remove);
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
  g_clear_object (&self->policy);

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
  GTK_APPLICATION_CLASS (klass)->window_removed = chp_application_window_removed;
}

static void
chp_application_init (ChpApplication *self)
{
  self->bridge_port = -1;
  /* Read once, at a fixed place no option or environment variable can move: what an
   * administrator locked must not be undone by how Chaperone is started. */
  self->policy = chp_managed_policy_load (NULL);
  if (chp_managed_policy_get_error (self->policy) != NULL)
    g_warning ("The administrator's policy %s cannot be used (%s): API calls and site learning "
               "are off until it is fixed", chp_managed_policy_get_path (self->policy),
               chp_managed_policy_get_error (self->policy));
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
