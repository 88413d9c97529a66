/* chp-device-row.c: shows a ChpDevice as it changes (online, round trip, a rotated key) and
 * revokes it once the person confirms. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-device-row"

#include "chp-device-row.h"

#include "chp-a11y.h"

#include <glib/gi18n.h>

struct _ChpDeviceRow
{
  AdwActionRow parent_instance;

  GtkWidget *status_dot;
  GtkLabel *status_label;
  GtkLabel *rtt_label;
  GtkWidget *revoke_button;
  GtkWidget *resume_button;

  ChpDevice *device;
  ChpBridge *bridge;
};

enum {
  PROP_0,
  PROP_DEVICE,
  PROP_BRIDGE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpDeviceRow, chp_device_row, ADW_TYPE_ACTION_ROW)

static void
update (ChpDeviceRow *self)
{
  const char *name = chp_device_get_name (self->device);
  const char *browser = chp_device_get_browser (self->device);
  gboolean online = chp_device_get_online (self->device);
  gboolean stopped;
  double rtt_ms = chp_device_get_rtt_ms (self->device);
  g_autoptr(GString) subtitle = g_string_new (NULL);
  g_autofree char *key = NULL;
  g_autofree char *revoke_name = NULL;
  g_autofree char *resume_name = NULL;
  g_autofree char *rtt = NULL;

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self), name != NULL ? name : "");

  /* The browser as it last described itself: the name starts out the same, so say it only
   * once it differs (after an update, or a rename). */
  if (browser != NULL && *browser != '\0' && g_strcmp0 (browser, name) != 0)
    g_string_append_printf (subtitle, "%s\n", browser);
  g_string_append (subtitle, chp_device_get_origin (self->device));
  /* Translators: before a key fingerprint ("1a2b 3c4d …"), which the person can compare with
   * the one the extension shows */
  key = g_strdup_printf (_("Key %s"), chp_device_get_fingerprint (self->device));
  g_string_append_printf (subtitle, "\n%s", key);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (self), subtitle->str);

  stopped = chp_device_get_stopped (self->device);
  if (online && stopped)
    gtk_label_set_text (self->status_label, _("Stopped"));
  else
    gtk_label_set_text (self->status_label, online ? _("Online") : _("Offline"));
  gtk_widget_set_visible (self->resume_button, stopped);
  if (online)
    gtk_widget_add_css_class (self->status_dot, "online");
  else
    gtk_widget_remove_css_class (self->status_dot, "online");

  /* A round trip means something only while the browser is connected and has answered a ping. */
  if (online && rtt_ms >= 0)
    /* Translators: a round-trip time in milliseconds, e.g. "0.4 ms" */
    rtt = g_strdup_printf (_("%.1f ms"), rtt_ms);
  gtk_label_set_text (self->rtt_label, rtt != NULL ? rtt : "—");
  gtk_accessible_update_property (GTK_ACCESSIBLE (self->rtt_label),
                                  GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  rtt != NULL ? rtt : _("No round trip measured"),
                                  -1);

  /* Every row has a Revoke button: its name must say which browser it revokes. The relation
   * to the button's own "Revoke" label must go: GTK 4.8 would append its text to this name,
   * and later versions would use it instead. */
  revoke_name = g_strdup_printf (_("Revoke %s"), name != NULL ? name : "");
  chp_a11y_set_name (self->revoke_button, revoke_name);
  gtk_widget_set_tooltip_text (self->revoke_button, revoke_name);
  resume_name = g_strdup_printf (_("Resume %s"), name != NULL ? name : "");
  chp_a11y_set_name (self->resume_button, resume_name);
}

static void
revoke_response_cb (AdwMessageDialog *dialog,
                    const char       *response,
                    ChpDeviceRow     *self)
{
  g_autoptr(ChpDeviceRow) guard = NULL;
  g_autoptr(AdwToast) toast = NULL;
  g_autofree char *escaped = NULL;
  const char *name;
  GtkWidget *overlay;

  if (g_strcmp0 (response, "revoke") != 0 || self->bridge == NULL)
    return;

  /* Revoking removes the device from the list, which destroys this row under our feet. */
  guard = g_object_ref (self);
  overlay = gtk_widget_get_ancestor (GTK_WIDGET (self), ADW_TYPE_TOAST_OVERLAY);

  /* Toast titles are markup; the name comes from the browser. */
  name = chp_device_get_name (self->device);
  escaped = g_markup_escape_text (name != NULL ? name : "", -1);
  toast = adw_toast_new_format (_("%s was revoked"), escaped);

  chp_bridge_revoke_device (self->bridge, chp_device_get_id (self->device));

  if (overlay != NULL)
    adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), g_steal_pointer (&toast));
}

static void
resumed_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GtkWidget) widget = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_bridge_call_finish (CHP_BRIDGE (source), result, &error);
  GtkWidget *overlay;

  /* On success the browser's stop.changed hides the button. */
  if (node != NULL)
    return;

  overlay = gtk_widget_get_ancestor (widget, ADW_TYPE_TOAST_OVERLAY);
  if (overlay != NULL)
    adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay),
                                 adw_toast_new (_("The browser did not answer; it is still stopped")));
  g_debug ("extension.resume: %s", error->message);
}

static void
resume_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  ChpDeviceRow *self = CHP_DEVICE_ROW (widget);
  g_autoptr(JsonObject) empty = json_object_new ();
  g_autoptr(JsonNode) params = json_node_init_object (json_node_alloc (), empty);

  if (self->bridge == NULL)
    return;

  chp_bridge_call_async (self->bridge, chp_device_get_id (self->device), "extension.resume",
                         params, 10000, NULL, resumed_cb, g_object_ref (widget));
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

ChpDevice *
chp_device_row_get_device (ChpDeviceRow *self)
{
  g_return_val_if_fail (CHP_IS_DEVICE_ROW (self), NULL);

  return self->device;
}

static void
chp_device_row_constructed (GObject *object)
{
  ChpDeviceRow *self = CHP_DEVICE_ROW (object);

  G_OBJECT_CLASS (chp_device_row_parent_class)->constructed (object);

  g_assert (CHP_IS_DEVICE (self->device));

  /* Any property may change (a re-pair rotates the key in place): refresh all, it is cheap. */
  g_signal_connect_object (self->device, "notify", G_CALLBACK (update), self, G_CONNECT_SWAPPED);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "device.revoke", self->bridge != NULL);
  update (self);
}

static void
chp_device_row_dispose (GObject *object)
{
  ChpDeviceRow *self = CHP_DEVICE_ROW (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_DEVICE_ROW);
  g_clear_object (&self->device);
  g_clear_object (&self->bridge);

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

    case PROP_BRIDGE:
      g_value_set_object (value, self->bridge);
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

    case PROP_BRIDGE:
      self->bridge = g_value_dup_object (value);
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
  /* Nullable: without a bridge (a UI test, say) the row shows the device but cannot revoke it. */
  properties[PROP_BRIDGE] = g_param_spec_object ("bridge", NULL, NULL, CHP_TYPE_BRIDGE, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-device-row.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpDeviceRow, status_dot);
  gtk_widget_class_bind_template_child (widget_class, ChpDeviceRow, status_label);
  gtk_widget_class_bind_template_child (widget_class, ChpDeviceRow, rtt_label);
  gtk_widget_class_bind_template_child (widget_class, ChpDeviceRow, revoke_button);
  gtk_widget_class_bind_template_child (widget_class, ChpDeviceRow, resume_button);

  /* A widget action: app.* and win.* actions are on the session bus, and an agent must never
   * be able to revoke (or press anything) through it. */
  gtk_widget_class_install_action (widget_class, "device.revoke", NULL, revoke_action);
  gtk_widget_class_install_action (widget_class, "device.resume", NULL, resume_action);
}

static void
chp_device_row_init (ChpDeviceRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

GtkWidget *
chp_device_row_new (ChpDevice *device,
                    ChpBridge *bridge)
{
  g_return_val_if_fail (CHP_IS_DEVICE (device), NULL);
  g_return_val_if_fail (bridge == NULL || CHP_IS_BRIDGE (bridge), NULL);

  return g_object_new (CHP_TYPE_DEVICE_ROW, "device", device, "bridge", bridge, NULL);
}
