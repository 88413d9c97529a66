/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-device-row.c: shows a ChpDevice as it changes (online, round trip, a rotated key, a new
 * name, its grants) and lets the person rename it, resume it or revoke it once they confirm. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-device-row"

#include "chp-device-row.h"

#include "chp-a11y.h"
#include "chp-toast.h"

#include <glib/gi18n.h>

struct _ChpDeviceRow
{
  GtkListBoxRow parent_instance;

  GtkLabel *name_label;
  GtkWidget *status_dot;
  GtkLabel *status_label;
  GtkLabel *details_label;
  GtkLabel *rtt_label;
  GtkWidget *rename_button;
  GtkWidget *revoke_button;
  GtkWidget *resume_button;

  ChpDevice *device;
  ChpEngine *engine;
  guint tick_id;
};

enum {
  PROP_0,
  PROP_DEVICE,
  PROP_ENGINE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpDeviceRow, chp_device_row, GTK_TYPE_LIST_BOX_ROW)

static char *
last_seen_in_words (gint64 last_seen_ms)
{
  gint64 ago_s = (g_get_real_time () / 1000 - last_seen_ms) / 1000;
  g_autoptr(GDateTime) when = NULL;
  g_autofree char *date = NULL;

  if (last_seen_ms <= 0)
    return g_strdup (_("Not seen since it paired"));
  if (ago_s < 60)
    return g_strdup (_("Last seen less than a minute ago"));
  if (ago_s < 3600)
    return g_strdup_printf (ngettext ("Last seen %d minute ago", "Last seen %d minutes ago",
                                      (int) (ago_s / 60)),
                            (int) (ago_s / 60));
  if (ago_s < 24 * 3600)
    return g_strdup_printf (ngettext ("Last seen %d hour ago", "Last seen %d hours ago",
                                      (int) (ago_s / 3600)),
                            (int) (ago_s / 3600));

  when = g_date_time_new_from_unix_local (last_seen_ms / 1000);
  date = g_date_time_format (when, "%x");
  /* Translators: %s is a date in the locale's format */
  return g_strdup_printf (_("Last seen on %s"), date);
}

static void
update (ChpDeviceRow *self)
{
  const char *name = chp_device_get_name (self->device);
  const char *browser = chp_device_get_browser (self->device);
  gboolean online = chp_device_get_online (self->device);
  gboolean stopped = chp_device_get_stopped (self->device);
  double rtt_ms = chp_device_get_rtt_ms (self->device);
  guint n_grants = 0;
  g_autoptr(GString) details = g_string_new (NULL);
  g_autoptr(GString) line = g_string_new (NULL);
  g_autofree char *key = NULL;
  g_autofree char *seen = NULL;
  g_autofree char *revoke_name = NULL;
  g_autofree char *resume_name = NULL;
  g_autofree char *rename_name = NULL;

  if (name == NULL)
    name = "";
  gtk_label_set_text (self->name_label, name);

  /* The browser as it last described itself: the name starts out the same, so say it only
   * once it differs (after an update, or a rename). */
  if (browser != NULL && *browser != '\0' && g_strcmp0 (browser, name) != 0)
    g_string_append_printf (details, "%s\n", browser);
  g_string_append (details, chp_device_get_origin (self->device));
  /* Translators: before a key fingerprint ("1a2b 3c4d …"), which the person can compare with
   * the one the extension shows */
  key = g_strdup_printf (_("Key %s"), chp_device_get_fingerprint (self->device));
  g_string_append_printf (details, "\n%s", key);
  gtk_label_set_text (self->details_label, details->str);

  if (online && stopped)
    gtk_label_set_text (self->status_label, _("Stopped"));
  else
    gtk_label_set_text (self->status_label, online ? _("Online") : _("Offline"));
  /* Shown or not by opacity, never by visibility: GTK 4.8's AT-SPI code crashes the app when a
   * screen reader (or the tests) walks the tree just as a never-shown widget appears (its
   * accessible has no D-Bus path yet). A hidden Resume is also insensitive and not a target. */
  gtk_widget_set_opacity (self->resume_button, stopped ? 1.0 : 0.0);
  gtk_widget_set_sensitive (self->resume_button, stopped);
  gtk_widget_set_can_target (self->resume_button, stopped);
  if (online)
    gtk_widget_add_css_class (self->status_dot, "online");
  else
    gtk_widget_remove_css_class (self->status_dot, "online");
  if (stopped)
    gtk_widget_add_css_class (self->status_dot, "stopped");
  else
    gtk_widget_remove_css_class (self->status_dot, "stopped");

  /* A round trip means something only while the browser is connected and has answered a ping. */
  if (online && rtt_ms >= 0)
    /* Translators: a round-trip time in milliseconds, e.g. "Round trip 0.4 ms" */
    g_string_append_printf (line, _("Round trip %.1f ms"), rtt_ms);
  else if (!online)
    g_string_append (line, (seen = last_seen_in_words (chp_device_get_info (self->device)->last_seen)));
  if (self->engine != NULL)
    n_grants = chp_grant_list_count_for_device (chp_engine_get_grants (self->engine),
                                                chp_device_get_id (self->device));
  if (line->len > 0)
    g_string_append (line, " · ");
  if (n_grants == 0)
    g_string_append (line, _("No active grants"));
  else
    g_string_append_printf (line, ngettext ("%u active grant", "%u active grants", n_grants),
                            n_grants);
  gtk_label_set_text (self->rtt_label, line->str);

  /* Every card has these buttons: their names must say which browser they act on. The
   * relation to the button's own label must go: GTK 4.8 would append its text to this name,
   * and later versions would use it instead. */
  revoke_name = g_strdup_printf (_("Revoke %s"), name);
  chp_a11y_set_name (self->revoke_button, revoke_name);
  gtk_widget_set_tooltip_text (self->revoke_button, revoke_name);
  resume_name = g_strdup_printf (_("Resume %s"), name);
  chp_a11y_set_name (self->resume_button, resume_name);
  rename_name = g_strdup_printf (_("Rename %s"), name);
  chp_a11y_set_name (self->rename_button, rename_name);
}

static gboolean
tick_cb (gpointer user_data)
{
  update (CHP_DEVICE_ROW (user_data));
  return G_SOURCE_CONTINUE;
}


static void
revoke_response_cb (AdwMessageDialog *dialog,
                    const char       *response,
                    ChpDeviceRow     *self)
{
  g_autoptr(ChpDeviceRow) guard = NULL;
  g_autoptr(AdwToast) revoked = NULL;
  g_autofree char *escaped = NULL;
  const char *name;
  GtkWidget *overlay;

  if (g_strcmp0 (response, "revoke") != 0 || self->engine == NULL ||
      chp_engine_get_bridge (self->engine) == NULL)
    return;

  /* Revoking removes the device from the list, which destroys this row under our feet. */
  guard = g_object_ref (self);
  overlay = gtk_widget_get_ancestor (GTK_WIDGET (self), ADW_TYPE_TOAST_OVERLAY);

  /* Toast titles are markup; the name comes from the browser. */
  name = chp_device_get_name (self->device);
  escaped = g_markup_escape_text (name != NULL ? name : "", -1);
  revoked = adw_toast_new_format (_("%s was revoked"), escaped);

  chp_bridge_revoke_device (chp_engine_get_bridge (self->engine), chp_device_get_id (self->device));

  if (overlay != NULL)
    adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), g_steal_pointer (&revoked));
}

static void
revoke_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  ChpDeviceRow *self = CHP_DEVICE_ROW (widget);
  GtkRoot *root = gtk_widget_get_root (widget);
  AdwMessageDialog *dialog;

  dialog = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root)
                                                                           : NULL,
                                                       NULL, NULL));
  adw_message_dialog_format_heading (dialog, _("Revoke %s?"), chp_device_get_name (self->device));
  adw_message_dialog_set_body (dialog,
                               _("This browser is disconnected at once and can no longer reach "
                                 "Chaperone. To use it again, pair it again."));
  adw_message_dialog_add_responses (dialog,
                                    "cancel", _("_Cancel"),
                                    "revoke", _("_Revoke"),
                                    NULL);
  adw_message_dialog_set_response_appearance (dialog, "revoke", ADW_RESPONSE_DESTRUCTIVE);
  /* Enter and Escape both keep the browser: revoking takes a deliberate click. */
  adw_message_dialog_set_default_response (dialog, "cancel");
  adw_message_dialog_set_close_response (dialog, "cancel");

  g_signal_connect_object (dialog, "response", G_CALLBACK (revoke_response_cb), self,
                           G_CONNECT_DEFAULT);
  chp_a11y_name_buttons (GTK_WIDGET (dialog));
  gtk_window_present (GTK_WINDOW (dialog));
}

static void
resumed_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GtkWidget) widget = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_engine_person_call_finish (CHP_ENGINE (source), result, &error);

  /* On success the browser's stop.changed hides the button. */
  if (node != NULL)
    return;

  chp_toast_show (widget, _("The browser did not answer; it is still stopped"));
  g_debug ("extension.resume: %s", error->message);
}

static void
resume_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  ChpDeviceRow *self = CHP_DEVICE_ROW (widget);

  if (self->engine == NULL)
    return;

  chp_engine_resume_device_async (self->engine, chp_device_get_id (self->device),
                                  resumed_cb, g_object_ref (widget));
}

static void
renamed_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GtkWidget) widget = user_data;
  g_autoptr(GError) error = NULL;

  if (!chp_engine_rename_device_finish (CHP_ENGINE (source), result, &error))
    {
      chp_toast_show (widget, _("The browser was not renamed"));
      g_message ("rename: %s", error->message);
    }
}

static void
rename_entry_changed_cb (GtkEditable      *entry,
                         AdwMessageDialog *dialog)
{
  g_autofree char *text = g_strstrip (g_strdup (gtk_editable_get_text (entry)));

  adw_message_dialog_set_response_enabled (dialog, "rename", *text != '\0');
}

static void
rename_response_cb (AdwMessageDialog *dialog,
                    const char       *response,
                    ChpDeviceRow     *self)
{
  GtkEditable *entry = GTK_EDITABLE (adw_message_dialog_get_extra_child (dialog));

  if (g_strcmp0 (response, "rename") != 0 || self->engine == NULL)
    return;

  chp_engine_rename_device_async (self->engine, chp_device_get_id (self->device),
                                  gtk_editable_get_text (entry), renamed_cb, g_object_ref (self));
}

static void
rename_activate_cb (GtkEntry         *entry,
                    AdwMessageDialog *dialog)
{
  if (adw_message_dialog_get_response_enabled (dialog, "rename"))
    adw_message_dialog_response (dialog, "rename");
}

static void
rename_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  ChpDeviceRow *self = CHP_DEVICE_ROW (widget);
  GtkRoot *root = gtk_widget_get_root (widget);
  AdwMessageDialog *dialog;
  GtkWidget *entry;

  dialog = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root)
                                                                           : NULL,
                                                       _("Rename Browser"), NULL));
  adw_message_dialog_set_body (dialog, _("The name is shown only in Chaperone, to tell your "
                                         "browsers apart."));
  entry = gtk_entry_new ();
  gtk_editable_set_text (GTK_EDITABLE (entry), chp_device_get_name (self->device));
  gtk_entry_set_max_length (GTK_ENTRY (entry), 64);
  gtk_accessible_update_property (GTK_ACCESSIBLE (entry), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Name"), -1);
  adw_message_dialog_set_extra_child (dialog, entry);
  adw_message_dialog_add_responses (dialog,
                                    "cancel", _("_Cancel"),
                                    "rename", _("_Rename"),
                                    NULL);
  adw_message_dialog_set_response_appearance (dialog, "rename", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response (dialog, "rename");
  adw_message_dialog_set_close_response (dialog, "cancel");

  g_signal_connect_object (entry, "changed", G_CALLBACK (rename_entry_changed_cb), dialog,
                           G_CONNECT_DEFAULT);
  g_signal_connect_object (entry, "activate", G_CALLBACK (rename_activate_cb), dialog,
                           G_CONNECT_DEFAULT);
  g_signal_connect_object (dialog, "response", G_CALLBACK (rename_response_cb), self,
                           G_CONNECT_DEFAULT);
  chp_a11y_name_buttons (GTK_WIDGET (dialog));
  gtk_window_present (GTK_WINDOW (dialog));
  gtk_widget_grab_focus (entry);
}

ChpDevice *
chp_device_row_get_device (ChpDeviceRow *self)
{
  g_return_val_if_fail (CHP_IS_DEVICE_ROW (self), NULL);

  return self->device;
}

static void
grants_changed_cb (GListModel   *grants,
                   guint         position,
                   guint         removed,
                   guint         added,
                   ChpDeviceRow *self)
{
  update (self);
}

static void
chp_device_row_constructed (GObject *object)
{
  ChpDeviceRow *self = CHP_DEVICE_ROW (object);
  gboolean can_act = self->engine != NULL;

  G_OBJECT_CLASS (chp_device_row_parent_class)->constructed (object);

  g_assert (CHP_IS_DEVICE (self->device));

  /* Any property may change (a re-pair rotates the key in place): refresh all, it is cheap. */
  g_signal_connect_object (self->device, "notify", G_CALLBACK (update), self, G_CONNECT_SWAPPED);
  if (self->engine != NULL)
    g_signal_connect_object (chp_engine_get_grants (self->engine), "items-changed",
                             G_CALLBACK (grants_changed_cb), self, G_CONNECT_DEFAULT);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "device.revoke", can_act);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "device.resume", can_act);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "device.rename", can_act);
  update (self);
  /* "Last seen N minutes ago" keeps counting. */
  self->tick_id = g_timeout_add_seconds (30, tick_cb, self);
}

static void
chp_device_row_dispose (GObject *object)
{
  ChpDeviceRow *self = CHP_DEVICE_ROW (object);

  g_clear_handle_id (&self->tick_id, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_DEVICE_ROW);
  g_clear_object (&self->device);
  g_clear_object (&self->engine);

  G_OBJECT_CLASS (chp_device_row_parent_class)->dispose (object);
}

static void
chp_device_row_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  ChpDeviceRow *self = CHP_DEVICE_ROW (object);

  switch (prop_id)
    {
    case PROP_DEVICE:
      g_value_set_object (value, self->device);
      break;

    case PROP_ENGINE:
      g_value_set_object (value, self->engine);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_device_row_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  ChpDeviceRow *self = CHP_DEVICE_ROW (object);

  switch (prop_id)
    {
    case PROP_DEVICE:
      self->device = g_value_dup_object (value);
      break;

    case PROP_ENGINE:
      self->engine = g_value_dup_object (value);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_device_row_class_init (ChpDeviceRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                            G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->constructed = chp_device_row_constructed;
  object_class->dispose = chp_device_row_dispose;
  object_class->get_property = chp_device_row_get_property;
  object_class->set_property = chp_device_row_set_property;

  properties[PROP_DEVICE] = g_param_spec_object ("device", NULL, NULL, CHP_TYPE_DEVICE, flags);
  /* Nullable: without an engine (a UI test, say) the row shows the device but cannot act. */
  properties[PROP_ENGINE] = g_param_spec_object ("engine", NULL, NULL, CHP_TYPE_ENGINE, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-device-row.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpDeviceRow, name_label);
  gtk_widget_class_bind_template_child (widget_class, ChpDeviceRow, status_dot);
  gtk_widget_class_bind_template_child (widget_class, ChpDeviceRow, status_label);
  gtk_widget_class_bind_template_child (widget_class, ChpDeviceRow, details_label);
  gtk_widget_class_bind_template_child (widget_class, ChpDeviceRow, rtt_label);
  gtk_widget_class_bind_template_child (widget_class, ChpDeviceRow, rename_button);
  gtk_widget_class_bind_template_child (widget_class, ChpDeviceRow, revoke_button);
  gtk_widget_class_bind_template_child (widget_class, ChpDeviceRow, resume_button);

  /* Widget actions: app.* and win.* actions are on the session bus, and an agent must never
   * be able to revoke, resume (or press anything) through it. */
  gtk_widget_class_install_action (widget_class, "device.revoke", NULL, revoke_action);
  gtk_widget_class_install_action (widget_class, "device.resume", NULL, resume_action);
  gtk_widget_class_install_action (widget_class, "device.rename", NULL, rename_action);
}

static void
chp_device_row_init (ChpDeviceRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  /* The buttons wrap in a flow box when the window is narrow; its slots are not stops of
   * their own on the way to the buttons. */
  for (GtkWidget *child = gtk_widget_get_first_child (gtk_widget_get_parent (gtk_widget_get_parent (self->revoke_button)));
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    gtk_widget_set_focusable (child, FALSE);
}

/* @engine: (nullable): the running engine, which revokes, resumes and renames */
GtkWidget *
chp_device_row_new (ChpDevice *device,
                    ChpEngine *engine)
{
  g_return_val_if_fail (CHP_IS_DEVICE (device), NULL);
  g_return_val_if_fail (engine == NULL || CHP_IS_ENGINE (engine), NULL);

  return g_object_new (CHP_TYPE_DEVICE_ROW, "device", device, "engine", engine, NULL);
}
