/* chp-preferences-window.c: Preferences. Every row but one is a GSettings key bound to its widget,
 * so what the window shows is always what the app reads; Start at Login is the autostart file
 * itself (chp-autostart), read when the window opens and written when the switch moves. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-preferences"

#include "chp-preferences-window.h"

#include "chp-autostart.h"

#include <glib/gi18n.h>

struct _ChpPreferencesWindow
{
  AdwPreferencesWindow parent_instance;

  GtkSwitch *background_switch;
  GtkSwitch *autostart_switch;
  GtkSpinButton *port_spin;
  AdwComboRow *grant_row;
  GtkSpinButton *audit_spin;
  GtkSpinButton *result_spin;
  AdwActionRow *data_row;

  GSettings *settings;
  char *data_dir;
  gboolean syncing_autostart;
};

G_DEFINE_FINAL_TYPE (ChpPreferencesWindow, chp_preferences_window, ADW_TYPE_PREFERENCES_WINDOW)

enum {
  PROP_0,
  PROP_SETTINGS,
  PROP_DATA_DIR,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* The choices of the Default Grant Duration row, in its order; the key itself takes any number
 * of minutes in its range, so the extension's own choices are not limited by this list. */
static const guint grant_minutes[] = { 5, 15, 60, 480 };

static gboolean
grant_minutes_to_selected (GValue   *value,
                           GVariant *variant,
                           gpointer  user_data)
{
  guint minutes = g_variant_get_uint32 (variant);
  guint best = 0;

  /* A value set outside this window (gsettings set …) shows as the nearest choice; it is only
   * rewritten if the person picks one. */
  for (guint i = 1; i < G_N_ELEMENTS (grant_minutes); i++)
    {
      gint64 distance = ABS ((gint64) grant_minutes[i] - minutes);
      gint64 best_distance = ABS ((gint64) grant_minutes[best] - minutes);

      if (distance < best_distance)
        best = i;
    }

  g_value_set_uint (value, best);

  return TRUE;
}

static GVariant *
selected_to_grant_minutes (const GValue       *value,
                           const GVariantType *expected_type,
                           gpointer            user_data)
{
  guint selected = g_value_get_uint (value);

  /* GTK_INVALID_LIST_POSITION while the model is being replaced: nothing to store. */
  if (selected >= G_N_ELEMENTS (grant_minutes))
    return NULL;

  return g_variant_new_uint32 (grant_minutes[selected]);
}

static void
sync_autostart (ChpPreferencesWindow *self)
{
  self->syncing_autostart = TRUE;
  gtk_switch_set_active (self->autostart_switch, chp_autostart_is_enabled ());
  self->syncing_autostart = FALSE;
}

static void
autostart_switch_active_cb (ChpPreferencesWindow *self)
{
  gboolean active = gtk_switch_get_active (self->autostart_switch);
  g_autoptr(GError) error = NULL;

  if (self->syncing_autostart)
    return;

  if (!chp_autostart_set_enabled (active, &error))
    {
      g_autofree char *message = NULL;

      g_message ("autostart: %s", error->message);
      message = g_strdup_printf (active ? _("Could not set Chaperone to start at login: %s")
                                        : _("Could not stop Chaperone from starting at login: %s"),
                                 error->message);
      adw_preferences_window_add_toast (ADW_PREFERENCES_WINDOW (self), adw_toast_new (message));
    }

  /* Whatever happened, the switch shows what is on disk now. */
  sync_autostart (self);
}

static void
open_data_folder_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(ChpPreferencesWindow) self = user_data;
  g_autoptr(GError) error = NULL;

  if (!g_app_info_launch_default_for_uri_finish (result, &error))
    {
      g_autofree char *message = NULL;

      g_message ("could not open %s: %s", self->data_dir, error->message);
      message = g_strdup_printf (_("Could not open the data folder: %s"), error->message);
      adw_preferences_window_add_toast (ADW_PREFERENCES_WINDOW (self), adw_toast_new (message));
    }
}

/* GtkFileLauncher is GTK 4.10; this is what it does underneath, with the window's display so
 * the file manager starts on the right screen and the failure is ours to show. */
static void
open_data_folder_activated (GtkWidget  *widget,
                            const char *action_name,
                            GVariant   *parameter)
{
  ChpPreferencesWindow *self = CHP_PREFERENCES_WINDOW (widget);
  g_autoptr(GFile) folder = g_file_new_for_path (self->data_dir);
  g_autofree char *uri = g_file_get_uri (folder);
  g_autoptr(GdkAppLaunchContext) context = NULL;

  context = gdk_display_get_app_launch_context (gtk_widget_get_display (widget));
  g_app_info_launch_default_for_uri_async (uri, G_APP_LAUNCH_CONTEXT (context), NULL,
                                           open_data_folder_cb, g_object_ref (self));
}

static void
chp_preferences_window_constructed (GObject *object)
{
  ChpPreferencesWindow *self = CHP_PREFERENCES_WINDOW (object);
  g_autofree char *display_dir = NULL;

  G_OBJECT_CLASS (chp_preferences_window_parent_class)->constructed (object);

  g_settings_bind (self->settings, "run-in-background",
                   self->background_switch, "active", G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "bridge-port",
                   gtk_spin_button_get_adjustment (self->port_spin), "value",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind_with_mapping (self->settings, "default-grant-minutes",
                                self->grant_row, "selected", G_SETTINGS_BIND_DEFAULT,
                                grant_minutes_to_selected, selected_to_grant_minutes,
                                NULL, NULL);
  g_settings_bind (self->settings, "agent-result-max-chars",
                   gtk_spin_button_get_adjustment (self->result_spin), "value",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "audit-max-rows",
                   gtk_spin_button_get_adjustment (self->audit_spin), "value",
                   G_SETTINGS_BIND_DEFAULT);

  /* A folder the person may want to back up or inspect: shown as they would type it. */
  display_dir = g_filename_display_name (self->data_dir);
  adw_action_row_set_subtitle (self->data_row, display_dir);

  sync_autostart (self);
}

static void
chp_preferences_window_get_property (GObject    *object,
                                     guint       prop_id,
                                     GValue     *value,
                                     GParamSpec *pspec)
{
  ChpPreferencesWindow *self = CHP_PREFERENCES_WINDOW (object);

  switch (prop_id)
    {
    case PROP_SETTINGS:
      g_value_set_object (value, self->settings);
      break;

    case PROP_DATA_DIR:
      g_value_set_string (value, self->data_dir);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_preferences_window_set_property (GObject      *object,
                                     guint         prop_id,
                                     const GValue *value,
                                     GParamSpec   *pspec)
{
  ChpPreferencesWindow *self = CHP_PREFERENCES_WINDOW (object);

  switch (prop_id)
    {
    case PROP_SETTINGS:
      self->settings = g_value_dup_object (value);
      break;

    case PROP_DATA_DIR:
      self->data_dir = g_value_dup_string (value);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_preferences_window_dispose (GObject *object)
{
  ChpPreferencesWindow *self = CHP_PREFERENCES_WINDOW (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_PREFERENCES_WINDOW);
  g_clear_object (&self->settings);

  G_OBJECT_CLASS (chp_preferences_window_parent_class)->dispose (object);
}

static void
chp_preferences_window_finalize (GObject *object)
{
  ChpPreferencesWindow *self = CHP_PREFERENCES_WINDOW (object);

  g_clear_pointer (&self->data_dir, g_free);

  G_OBJECT_CLASS (chp_preferences_window_parent_class)->finalize (object);
}

static void
chp_preferences_window_class_init (ChpPreferencesWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->constructed = chp_preferences_window_constructed;
  object_class->get_property = chp_preferences_window_get_property;
  object_class->set_property = chp_preferences_window_set_property;
  object_class->dispose = chp_preferences_window_dispose;
  object_class->finalize = chp_preferences_window_finalize;

  properties[PROP_SETTINGS] =
    g_param_spec_object ("settings", NULL, NULL, G_TYPE_SETTINGS,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                         G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_DATA_DIR] =
    g_param_spec_string ("data-dir", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                         G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/"
                                               "chp-preferences-window.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, background_switch);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, autostart_switch);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, port_spin);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, grant_row);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, audit_spin);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, result_spin);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, data_row);
  gtk_widget_class_bind_template_callback (widget_class, autostart_switch_active_cb);

  gtk_widget_class_install_action (widget_class, "preferences.open-data-folder", NULL,
                                   open_data_folder_activated);
}

static void
chp_preferences_window_init (ChpPreferencesWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/**
 * chp_preferences_window_new:
 * @parent: (nullable): the main window, when it is open
 * @settings: the app's settings (schema io.github.chaperone.Chaperone)
 * @data_dir: the folder that holds the engine key and the database
 */
ChpPreferencesWindow *
chp_preferences_window_new (GtkWindow  *parent,
                            GSettings  *settings,
                            const char *data_dir)
{
  g_return_val_if_fail (parent == NULL || GTK_IS_WINDOW (parent), NULL);
  g_return_val_if_fail (G_IS_SETTINGS (settings), NULL);
  g_return_val_if_fail (data_dir != NULL, NULL);

  return g_object_new (CHP_TYPE_PREFERENCES_WINDOW,
                       "transient-for", parent,
                       "settings", settings,
                       "data-dir", data_dir,
                       NULL);
}

GSettings *
chp_preferences_window_get_settings (ChpPreferencesWindow *self)
{
  g_return_val_if_fail (CHP_IS_PREFERENCES_WINDOW (self), NULL);

  return self->settings;
}

const char *
chp_preferences_window_get_data_dir (ChpPreferencesWindow *self)
{
  g_return_val_if_fail (CHP_IS_PREFERENCES_WINDOW (self), NULL);

  return self->data_dir;
}
