/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-preferences-window.c: Preferences. Rows are bound to what the app reads, so the window
 * always shows what is in force: GSettings keys for comfort settings; the engine's
 * ChpSafetySettings (kept in the 0600 store) for the floor's lists and the result cap, which
 * decide how much agents see; and, for Start at Login, the autostart file itself
 * (chp-autostart), read when the window opens and written when the switch moves. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-preferences"

#include "chp-preferences-window.h"

#include "chp-autostart.h"
#include "chp-safety-settings.h"
#include "chp-url-floor.h"

#include <glib/gi18n.h>

struct _ChpPreferencesWindow
{
  AdwPreferencesWindow parent_instance;

  GtkSwitch *background_switch;
  GtkSwitch *autostart_switch;
  GtkSwitch *site_learning_switch;
  GtkSpinButton *port_spin;
  AdwActionRow *port_row;
  AdwActionRow *site_learning_row;
  AdwPreferencesGroup *policy_group;
  GtkLabel *policy_label;
  AdwComboRow *grant_row;
  GtkSpinButton *audit_spin;
  GtkSpinButton *trace_spin;
  GtkSpinButton *result_spin;
  AdwActionRow *data_row;
  AdwPreferencesGroup *blind_group;
  AdwEntryRow *blind_entry;
  AdwPreferencesGroup *hands_only_group;
  AdwEntryRow *hands_only_entry;

  GSettings *settings;
  ChpSafetySettings *safety;    /* NULL while no engine runs: those rows are then read-only */
  ChpManagedPolicy *policy;     /* the administrator's: what it locks is shown, not editable */
  GPtrArray *blind_rows;        /* AdwActionRow, one per entry of floor-blind */
  GPtrArray *hands_only_rows;   /* likewise for floor-hands-only */
  char *data_dir;
  gboolean syncing_autostart;
};

G_DEFINE_FINAL_TYPE (ChpPreferencesWindow, chp_preferences_window, ADW_TYPE_PREFERENCES_WINDOW)

enum {
  PROP_0,
  PROP_SETTINGS,
  PROP_SAFETY,
  PROP_POLICY,
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

/* ---- the person's URL floor entries ------------------------------------------------------ */

/* The two lists differ only by key, group, entry row and rows. */
typedef struct
{
  const char *key;
  AdwPreferencesGroup *group;
  AdwEntryRow *entry;
  GPtrArray *rows;
} FloorList;

static gboolean
floor_list (ChpPreferencesWindow *self,
            const char           *key,
            FloorList            *out)
{
  if (g_strcmp0 (key, CHP_STATE_FLOOR_BLIND) == 0)
    *out = (FloorList) { CHP_STATE_FLOOR_BLIND, self->blind_group, self->blind_entry,
                         self->blind_rows };
  else if (g_strcmp0 (key, CHP_STATE_FLOOR_HANDS_ONLY) == 0)
    *out = (FloorList) { CHP_STATE_FLOOR_HANDS_ONLY, self->hands_only_group,
                         self->hands_only_entry, self->hands_only_rows };
  else
    return FALSE;
  return TRUE;
}

static GtkWidget *
new_floor_row (const char *key,
               const char *pattern)
{
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *button = gtk_button_new_from_icon_name ("user-trash-symbolic");
  g_autofree char *name = NULL;

  /* Normalized host patterns hold no markup characters; plain text all the same. */
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), pattern);

  gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (button, "flat");
  gtk_widget_set_tooltip_text (button, _("Remove"));
  /* Translators: %s is a site pattern the person added, e.g. "Remove example.com" */
  name = g_strdup_printf (_("Remove %s"), pattern);
  gtk_accessible_update_property (GTK_ACCESSIBLE (button), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
  gtk_actionable_set_action_name (GTK_ACTIONABLE (button), "preferences.floor-remove");
  gtk_actionable_set_action_target_value (GTK_ACTIONABLE (button),
                                          g_variant_new ("(ss)", key, pattern));
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), button);

  return row;
}

/* The rows follow the model, whoever changed it. */
static void
rebuild_floor_rows (ChpPreferencesWindow *self,
                    const char           *key)
{
  FloorList list;
  const char * const *patterns;

  if (!floor_list (self, key, &list))
    return;

  for (guint i = 0; i < list.rows->len; i++)
    adw_preferences_group_remove (list.group, g_ptr_array_index (list.rows, i));
  g_ptr_array_set_size (list.rows, 0);

  if (self->safety == NULL)
    return;

  patterns = g_str_equal (list.key, CHP_STATE_FLOOR_BLIND)
               ? chp_safety_settings_get_floor_blind (self->safety)
               : chp_safety_settings_get_floor_hands_only (self->safety);
  for (guint i = 0; patterns[i] != NULL; i++)
    {
      GtkWidget *row = new_floor_row (key, patterns[i]);

      adw_preferences_group_add (list.group, row);
      g_ptr_array_add (list.rows, row);
    }
}

static void
floor_changed_cb (ChpSafetySettings    *safety,
                  GParamSpec           *pspec,
                  ChpPreferencesWindow *self)
{
  rebuild_floor_rows (self, g_param_spec_get_name (pspec));
}

static void
floor_entry_changed_cb (GtkEditable          *editable,
                        ChpPreferencesWindow *self)
{
  gtk_widget_remove_css_class (GTK_WIDGET (editable), "error");
}

/* What the person typed goes in only as the floor reads it (example.com, *.example.com, an IP
 * address, or a URL's host); anything else is refused and nothing is saved. */
static void
add_floor_entry (ChpPreferencesWindow *self,
                 const char           *key)
{
  FloorList list;
  g_autofree char *typed = NULL;
  g_autofree char *pattern = NULL;

  if (self->safety == NULL || !floor_list (self, key, &list))
    return;

  typed = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (list.entry))));
  if (*typed == '\0')
    return;

  pattern = chp_url_floor_normalize_pattern (typed);
  if (pattern == NULL)
    {
      gtk_widget_add_css_class (GTK_WIDGET (list.entry), "error");
      adw_preferences_window_add_toast (ADW_PREFERENCES_WINDOW (self),
                                        adw_toast_new (_("Not a site: type a host name such as "
                                                         "example.com")));
      return;
    }

  chp_safety_settings_add_floor_entry (self->safety, list.key, pattern);

  gtk_widget_remove_css_class (GTK_WIDGET (list.entry), "error");
  gtk_editable_set_text (GTK_EDITABLE (list.entry), "");
}

static void
blind_add_cb (ChpPreferencesWindow *self)
{
  add_floor_entry (self, CHP_STATE_FLOOR_BLIND);
}

static void
hands_only_add_cb (ChpPreferencesWindow *self)
{
  add_floor_entry (self, CHP_STATE_FLOOR_HANDS_ONLY);
}

static void
floor_remove_activated (GtkWidget  *widget,
                        const char *action_name,
                        GVariant   *parameter)
{
  ChpPreferencesWindow *self = CHP_PREFERENCES_WINDOW (widget);
  const char *key, *pattern;
  FloorList list;

  g_variant_get (parameter, "(&s&s)", &key, &pattern);
  if (self->safety == NULL || !floor_list (self, key, &list))
    return;

  chp_safety_settings_remove_floor_entry (self->safety, list.key, pattern);
}

/* What the administrator locked, in one group at the top: each lock a line, or why their file
 * could not be used. */
static void
show_policy (ChpPreferencesWindow *self)
{
  g_auto(GStrv) locks = NULL;
  g_autofree char *text = NULL;

  if (self->policy == NULL || !chp_managed_policy_get_present (self->policy))
    return;
  if (chp_managed_policy_get_error (self->policy) != NULL)
    text = g_strdup_printf (_("Your administrator’s policy (%s) cannot be used: %s. Until it is "
                              "fixed, agents may not call sites’ own APIs and nothing is learned "
                              "about sites."),
                            chp_managed_policy_get_path (self->policy),
                            chp_managed_policy_get_error (self->policy));
  else
    {
      locks = chp_managed_policy_dup_locks (self->policy);
      text = g_strjoinv ("\n", locks);
    }
  gtk_label_set_text (self->policy_label, text);
  gtk_widget_set_visible (GTK_WIDGET (self->policy_group), TRUE);
}

static void
chp_preferences_window_constructed (GObject *object)
{
  ChpPreferencesWindow *self = CHP_PREFERENCES_WINDOW (object);
  g_autofree char *display_dir = NULL;

  G_OBJECT_CLASS (chp_preferences_window_parent_class)->constructed (object);

  g_settings_bind (self->settings, "run-in-background",
                   self->background_switch, "active", G_SETTINGS_BIND_DEFAULT);
  if (self->policy != NULL && chp_managed_policy_get_bridge_port (self->policy) != 0)
    {
      gtk_spin_button_set_value (self->port_spin, chp_managed_policy_get_bridge_port (self->policy));
      gtk_widget_set_sensitive (GTK_WIDGET (self->port_row), FALSE);
      adw_action_row_set_subtitle (self->port_row, _("Set by your administrator"));
    }
  else
    g_settings_bind (self->settings, "bridge-port",
                     gtk_spin_button_get_adjustment (self->port_spin), "value",
                     G_SETTINGS_BIND_DEFAULT);
  g_settings_bind_with_mapping (self->settings, "default-grant-minutes",
                                self->grant_row, "selected", G_SETTINGS_BIND_DEFAULT,
                                grant_minutes_to_selected, selected_to_grant_minutes,
                                NULL, NULL);
  g_settings_bind (self->settings, "audit-max-rows",
                   gtk_spin_button_get_adjustment (self->audit_spin), "value",
                   G_SETTINGS_BIND_DEFAULT);
  g_settings_bind (self->settings, "trace-cap-mb",
                   gtk_spin_button_get_adjustment (self->trace_spin), "value",
                   G_SETTINGS_BIND_DEFAULT);
  /* The application applies it to the engine (chp-application-engine.c). */
  if (self->policy != NULL && !chp_managed_policy_get_site_learning (self->policy))
    {
      gtk_switch_set_active (self->site_learning_switch, FALSE);
      gtk_widget_set_sensitive (GTK_WIDGET (self->site_learning_row), FALSE);
      adw_action_row_set_subtitle (self->site_learning_row, _("Turned off by your administrator"));
    }
  else
    g_settings_bind (self->settings, "site-learning",
                     self->site_learning_switch, "active", G_SETTINGS_BIND_DEFAULT);
  show_policy (self);

  if (self->safety != NULL)
    {
      g_object_bind_property (self->safety, "result-max-chars",
                              gtk_spin_button_get_adjustment (self->result_spin), "value",
                              G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
      g_signal_connect_object (self->safety, "notify::floor-blind",
                               G_CALLBACK (floor_changed_cb), self, G_CONNECT_DEFAULT);
      g_signal_connect_object (self->safety, "notify::floor-hands-only",
                               G_CALLBACK (floor_changed_cb), self, G_CONNECT_DEFAULT);
    }
  else
    {
      gtk_widget_set_sensitive (GTK_WIDGET (self->result_spin), FALSE);
      gtk_widget_set_sensitive (GTK_WIDGET (self->blind_group), FALSE);
      gtk_widget_set_sensitive (GTK_WIDGET (self->hands_only_group), FALSE);
    }
  rebuild_floor_rows (self, CHP_STATE_FLOOR_BLIND);
  rebuild_floor_rows (self, CHP_STATE_FLOOR_HANDS_ONLY);

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

    case PROP_SAFETY:
      g_value_set_object (value, self->safety);
      break;

    case PROP_POLICY:
      g_value_set_object (value, self->policy);
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

    case PROP_SAFETY:
      self->safety = g_value_dup_object (value);
      break;

    case PROP_POLICY:
      self->policy = g_value_dup_object (value);
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

  if (self->settings != NULL)
    g_signal_handlers_disconnect_by_data (self->settings, self);
  g_clear_pointer (&self->blind_rows, g_ptr_array_unref);
  g_clear_pointer (&self->hands_only_rows, g_ptr_array_unref);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_PREFERENCES_WINDOW);
  g_clear_object (&self->settings);
  g_clear_object (&self->safety);
  g_clear_object (&self->policy);

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
  properties[PROP_SAFETY] =
    g_param_spec_object ("safety", NULL, NULL, CHP_TYPE_SAFETY_SETTINGS,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                         G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_POLICY] =
    g_param_spec_object ("policy", NULL, NULL, CHP_TYPE_MANAGED_POLICY,
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
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, site_learning_switch);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, site_learning_row);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, port_row);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, policy_group);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, policy_label);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, port_spin);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, grant_row);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, audit_spin);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, trace_spin);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, result_spin);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, data_row);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, blind_group);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, blind_entry);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, hands_only_group);
  gtk_widget_class_bind_template_child (widget_class, ChpPreferencesWindow, hands_only_entry);
  gtk_widget_class_bind_template_callback (widget_class, autostart_switch_active_cb);
  gtk_widget_class_bind_template_callback (widget_class, blind_add_cb);
  gtk_widget_class_bind_template_callback (widget_class, hands_only_add_cb);
  gtk_widget_class_bind_template_callback (widget_class, floor_entry_changed_cb);

  gtk_widget_class_install_action (widget_class, "preferences.open-data-folder", NULL,
                                   open_data_folder_activated);
  gtk_widget_class_install_action (widget_class, "preferences.floor-remove", "(ss)",
                                   floor_remove_activated);
}

static void
chp_preferences_window_init (ChpPreferencesWindow *self)
{
  self->blind_rows = g_ptr_array_new ();
  self->hands_only_rows = g_ptr_array_new ();
  gtk_widget_init_template (GTK_WIDGET (self));
}

/**
 * chp_preferences_window_new:
 * @parent: (nullable): the main window, when it is open
 * @settings: the app's settings (schema io.github.chaperone.Chaperone)
 * @safety: (nullable): the running engine's floor entries and result cap
 * @policy: (nullable): the administrator's locks
 * @data_dir: the folder that holds the engine key and the database
 */
ChpPreferencesWindow *
chp_preferences_window_new (GtkWindow         *parent,
                            GSettings         *settings,
                            ChpSafetySettings *safety,
                            ChpManagedPolicy  *policy,
                            const char        *data_dir)
{
  g_return_val_if_fail (parent == NULL || GTK_IS_WINDOW (parent), NULL);
  g_return_val_if_fail (G_IS_SETTINGS (settings), NULL);
  g_return_val_if_fail (safety == NULL || CHP_IS_SAFETY_SETTINGS (safety), NULL);
  g_return_val_if_fail (data_dir != NULL, NULL);

  return g_object_new (CHP_TYPE_PREFERENCES_WINDOW,
                       "transient-for", parent,
                       "settings", settings,
                       "safety", safety,
                       "policy", policy,
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
