/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tray.c: the tray icon — an org.kde.StatusNotifierItem with a com.canonical.dbusmenu menu,
 * exported with GDBus and registered with whichever StatusNotifierWatcher the desktop runs. The
 * menu itself is in chp-tray-menu.c.
 *
 * Like the menu, everything exported here can be called by any process of the person's session
 * (see the top of chp-tray-menu.c), so the item's methods only ever open the window. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-tray"

#include "chp-tray-private.h"

#include <glib/gi18n.h>

#define WATCHER_NAME "org.kde.StatusNotifierWatcher"
#define WATCHER_PATH "/StatusNotifierWatcher"
#define WATCHER_IFACE "org.kde.StatusNotifierWatcher"
#define ITEM_PATH "/StatusNotifierItem"
#define ITEM_IFACE "org.kde.StatusNotifierItem"

/* The part of the specification a host uses; the menu's is in chp-tray-menu.c. */
static const char introspection_xml[] =
  "<node>"
  "  <interface name='org.kde.StatusNotifierItem'>"
  "    <property name='Category' type='s' access='read'/>"
  "    <property name='Id' type='s' access='read'/>"
  "    <property name='Title' type='s' access='read'/>"
  "    <property name='Status' type='s' access='read'/>"
  "    <property name='WindowId' type='i' access='read'/>"
  "    <property name='IconThemePath' type='s' access='read'/>"
  "    <property name='IconName' type='s' access='read'/>"
  "    <property name='IconPixmap' type='a(iiay)' access='read'/>"
  "    <property name='OverlayIconName' type='s' access='read'/>"
  "    <property name='OverlayIconPixmap' type='a(iiay)' access='read'/>"
  "    <property name='AttentionIconName' type='s' access='read'/>"
  "    <property name='AttentionIconPixmap' type='a(iiay)' access='read'/>"
  "    <property name='AttentionMovieName' type='s' access='read'/>"
  "    <property name='ToolTip' type='(sa(iiay)ss)' access='read'/>"
  "    <property name='ItemIsMenu' type='b' access='read'/>"
  "    <property name='Menu' type='o' access='read'/>"
  "    <method name='ContextMenu'><arg name='x' type='i' direction='in'/>"
  "      <arg name='y' type='i' direction='in'/></method>"
  "    <method name='Activate'><arg name='x' type='i' direction='in'/>"
  "      <arg name='y' type='i' direction='in'/></method>"
  "    <method name='SecondaryActivate'><arg name='x' type='i' direction='in'/>"
  "      <arg name='y' type='i' direction='in'/></method>"
  "    <method name='Scroll'><arg name='delta' type='i' direction='in'/>"
  "      <arg name='orientation' type='s' direction='in'/></method>"
  "    <signal name='NewTitle'/>"
  "    <signal name='NewIcon'/>"
  "    <signal name='NewAttentionIcon'/>"
  "    <signal name='NewOverlayIcon'/>"
  "    <signal name='NewToolTip'/>"
  "    <signal name='NewStatus'><arg name='status' type='s'/></signal>"
  "  </interface>"
  "</node>";

G_DEFINE_ENUM_TYPE (ChpTrayState, chp_tray_state,
                    G_DEFINE_ENUM_VALUE (CHP_TRAY_STATE_IDLE, "idle"),
                    G_DEFINE_ENUM_VALUE (CHP_TRAY_STATE_WORKING, "working"),
                    G_DEFINE_ENUM_VALUE (CHP_TRAY_STATE_NEEDS_YOU, "needs-you"),
                    G_DEFINE_ENUM_VALUE (CHP_TRAY_STATE_STOPPED, "stopped"))

G_DEFINE_FINAL_TYPE (ChpTray, chp_tray, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_CONNECTION,
  PROP_APP_ID,
  PROP_ICON_THEME_PATH,
  PROP_STATE,
  PROP_NEEDS_COUNT,
  PROP_REGISTERED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static guint signals[N_SIGNALS];

static GDBusNodeInfo *introspection_data;

/* Names and words for each state */

static const char *
state_icon_suffix (ChpTrayState state)
{
  switch (state)
    {
    case CHP_TRAY_STATE_WORKING:
      return "-working";
    case CHP_TRAY_STATE_NEEDS_YOU:
      return "-needs-you";
    case CHP_TRAY_STATE_STOPPED:
      return "-stopped";
    case CHP_TRAY_STATE_IDLE:
    default:
      return "";
    }
}

static char *
icon_name_for (ChpTray      *self,
               ChpTrayState  state)
{
  return g_strconcat (self->app_id, state_icon_suffix (state), "-symbolic", NULL);
}

static const char *
status_for (ChpTrayState state)
{
  /* Never Passive: a host may hide a passive item, and Stop must stay one click away. */
  return state == CHP_TRAY_STATE_NEEDS_YOU ? "NeedsAttention" : "Active";
}

static char *
tooltip_description (ChpTray *self)
{
  switch (self->state)
    {
    case CHP_TRAY_STATE_WORKING:
      return g_strdup (_("An agent is working in your browser"));

    case CHP_TRAY_STATE_NEEDS_YOU:
      if (self->needs_count == 0)
        return g_strdup (_("Something is waiting for you"));
      return g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                           "%u request is waiting for you",
                                           "%u requests are waiting for you",
                                           self->needs_count),
                              self->needs_count);

    case CHP_TRAY_STATE_STOPPED:
      return g_strdup (_("Stopped: agents are refused until you resume in Chaperone"));

    case CHP_TRAY_STATE_IDLE:
    default:
      return g_strdup (_("No agent is working"));
    }
}

/* D-Bus */

void
chp_tray_emit_dbus_signal (ChpTray    *self,
                           const char *path,
                           const char *interface,
                           const char *name,
                           GVariant   *parameters)
{
  g_autoptr(GError) error = NULL;

  /* Broadcast, as the specification has it: hosts match on our name and path, not on a
   * destination. */
  if (!g_dbus_connection_emit_signal (self->bus, NULL, path, interface, name, parameters, &error))
    g_debug ("could not emit %s: %s", name, error->message);
}

static GVariant *
item_get_property (GDBusConnection  *connection,
                   const char       *sender,
                   const char       *object_path,
                   const char       *interface_name,
                   const char       *property_name,
                   GError          **error,
                   gpointer          user_data)
{
  ChpTray *self = CHP_TRAY (user_data);

  if (g_str_equal (property_name, "Category"))
    return g_variant_new_string ("ApplicationStatus");
  if (g_str_equal (property_name, "Id"))
    return g_variant_new_string (self->app_id);
  if (g_str_equal (property_name, "Title"))
    return g_variant_new_string ("Chaperone");
  if (g_str_equal (property_name, "Status"))
    return g_variant_new_string (status_for (self->state));
  if (g_str_equal (property_name, "WindowId"))
    return g_variant_new_int32 (0);
  if (g_str_equal (property_name, "IconThemePath"))
    return g_variant_new_string (self->icon_theme_path != NULL ? self->icon_theme_path : "");
  if (g_str_equal (property_name, "IconName"))
    return g_variant_new_take_string (icon_name_for (self, self->state));
  if (g_str_equal (property_name, "AttentionIconName"))
    return g_variant_new_take_string (icon_name_for (self, CHP_TRAY_STATE_NEEDS_YOU));
  if (g_str_equal (property_name, "OverlayIconName") ||
      g_str_equal (property_name, "AttentionMovieName"))
    return g_variant_new_string ("");
  if (g_str_equal (property_name, "IconPixmap") ||
      g_str_equal (property_name, "OverlayIconPixmap") ||
      g_str_equal (property_name, "AttentionIconPixmap"))
    return g_variant_new_array (G_VARIANT_TYPE ("(iiay)"), NULL, 0);
  if (g_str_equal (property_name, "ToolTip"))
    {
      g_autofree char *icon_name = icon_name_for (self, self->state);
      g_autofree char *description = tooltip_description (self);

      return g_variant_new ("(s@a(iiay)ss)", icon_name,
                            g_variant_new_array (G_VARIANT_TYPE ("(iiay)"), NULL, 0),
                            "Chaperone", description);
    }
  /* FALSE: a left click activates (opens the window) and the menu is on the secondary click. */
  if (g_str_equal (property_name, "ItemIsMenu"))
    return g_variant_new_boolean (FALSE);
  if (g_str_equal (property_name, "Menu"))
    return g_variant_new_object_path (MENU_PATH);

  g_set_error (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_PROPERTY,
               "No property %s", property_name);
  return NULL;
}

static void
item_method_call (GDBusConnection       *connection,
                  const char            *sender,
                  const char            *object_path,
                  const char            *interface_name,
                  const char            *method_name,
                  GVariant              *parameters,
                  GDBusMethodInvocation *invocation,
                  gpointer               user_data)
{
  g_autoptr(ChpTray) self = g_object_ref (CHP_TRAY (user_data));

  g_dbus_method_invocation_return_value (invocation, NULL);

  /* Both clicks open the window; the host shows the menu itself for ContextMenu, and scrolling
   * means nothing here. */
  if (g_str_equal (method_name, "Activate") || g_str_equal (method_name, "SecondaryActivate"))
    g_signal_emit (self, signals[SIGNAL_OPEN], 0);
}

static const GDBusInterfaceVTable item_vtable = {
  .method_call = item_method_call,
  .get_property = item_get_property,
};

/* Emits ::open, ::show-needs-you, ::stop-all or ::quit (@sig is a SIGNAL_ value): what the menu's
 * items stand for. */
void
chp_tray_emit (ChpTray *self,
               int      sig)
{
  g_signal_emit (self, signals[sig], 0);
}

/* Registration with the watcher */

static void
set_registered (ChpTray  *self,
                gboolean  registered)
{
  if (self->registered == registered)
    return;

  self->registered = registered;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_REGISTERED]);
}

static void
register_item_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  ChpTray *self;

  reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);

  /* Cancelled: the watcher went away, or the tray did (then user_data is gone too). */
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  self = CHP_TRAY (user_data);
  if (reply == NULL)
    {
      /* A message, not a warning: a broken tray host is the desktop's, and the app works on. */
      g_message ("tray: the status notifier watcher refused the icon: %s", error->message);
      set_registered (self, FALSE);
      return;
    }

  g_debug ("registered with the status notifier watcher");
  set_registered (self, TRUE);
}

/* Called when a watcher first appears and again whenever its owner changes (a desktop shell
 * restarting, or a tray extension switched on after the app started). */
static void
watcher_appeared_cb (GDBusConnection *connection,
                     const char      *name,
                     const char      *name_owner,
                     gpointer         user_data)
{
  ChpTray *self = CHP_TRAY (user_data);

  g_cancellable_cancel (self->register_cancellable);
  g_clear_object (&self->register_cancellable);
  self->register_cancellable = g_cancellable_new ();

  /* The object path, not a bus name: the watcher pairs it with our unique name (as it does for
   * libappindicator's items), so no well-known name has to be owned. */
  g_dbus_connection_call (connection, name_owner, WATCHER_PATH, WATCHER_IFACE,
                          "RegisterStatusNotifierItem", g_variant_new ("(s)", ITEM_PATH),
                          G_VARIANT_TYPE_UNIT, G_DBUS_CALL_FLAGS_NO_AUTO_START, -1,
                          self->register_cancellable, register_item_cb, self);
}

static void
watcher_vanished_cb (GDBusConnection *connection,
                     const char      *name,
                     gpointer         user_data)
{
  ChpTray *self = CHP_TRAY (user_data);

  g_cancellable_cancel (self->register_cancellable);
  g_clear_object (&self->register_cancellable);
  set_registered (self, FALSE);
}

/* GObject */

static void
chp_tray_constructed (GObject *object)
{
  ChpTray *self = CHP_TRAY (object);
  g_autoptr(GError) error = NULL;

  G_OBJECT_CLASS (chp_tray_parent_class)->constructed (object);

  if (self->app_id == NULL)
    self->app_id = g_strdup (APP_ID);

  if (self->bus == NULL)
    return;

  self->item_registration_id =
    g_dbus_connection_register_object (self->bus, ITEM_PATH,
                                       g_dbus_node_info_lookup_interface (introspection_data,
                                                                          ITEM_IFACE),
                                       &item_vtable, self, NULL, &error);
  if (self->item_registration_id != 0)
    self->menu_registration_id = chp_tray_menu_register (self, &error);

  if (self->menu_registration_id == 0)
    {
      /* Another tray on this connection: the app goes on without an icon. */
      g_message ("tray: could not export the tray icon: %s", error->message);
      if (self->item_registration_id != 0)
        g_dbus_connection_unregister_object (self->bus, self->item_registration_id);
      self->item_registration_id = 0;
      return;
    }

  self->watch_id = g_bus_watch_name_on_connection (self->bus, WATCHER_NAME,
                                                   G_BUS_NAME_WATCHER_FLAGS_NONE,
                                                   watcher_appeared_cb, watcher_vanished_cb,
                                                   self, NULL);
}

static void
chp_tray_dispose (GObject *object)
{
  ChpTray *self = CHP_TRAY (object);

  g_cancellable_cancel (self->register_cancellable);
  g_clear_object (&self->register_cancellable);
  g_clear_handle_id (&self->watch_id, g_bus_unwatch_name);

  if (self->bus != NULL)
    {
      if (self->item_registration_id != 0)
        g_dbus_connection_unregister_object (self->bus, self->item_registration_id);
      if (self->menu_registration_id != 0)
        g_dbus_connection_unregister_object (self->bus, self->menu_registration_id);
    }
  self->item_registration_id = 0;
  self->menu_registration_id = 0;
  g_clear_object (&self->bus);

  G_OBJECT_CLASS (chp_tray_parent_class)->dispose (object);
}

static void
chp_tray_finalize (GObject *object)
{
  ChpTray *self = CHP_TRAY (object);

  g_free (self->app_id);
  g_free (self->icon_theme_path);

  G_OBJECT_CLASS (chp_tray_parent_class)->finalize (object);
}

static void
chp_tray_get_property (GObject    *object,
                       guint       prop_id,
                       GValue     *value,
                       GParamSpec *pspec)
{
  ChpTray *self = CHP_TRAY (object);

  switch (prop_id)
    {
    case PROP_CONNECTION:
      g_value_set_object (value, self->bus);
      break;

    case PROP_APP_ID:
      g_value_set_string (value, self->app_id);
      break;

    case PROP_ICON_THEME_PATH:
      g_value_set_string (value, self->icon_theme_path);
      break;

    case PROP_STATE:
      g_value_set_enum (value, self->state);
      break;

    case PROP_NEEDS_COUNT:
      g_value_set_uint (value, self->needs_count);
      break;

    case PROP_REGISTERED:
      g_value_set_boolean (value, self->registered);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_tray_set_property (GObject      *object,
                       guint         prop_id,
                       const GValue *value,
                       GParamSpec   *pspec)
{
  ChpTray *self = CHP_TRAY (object);

  switch (prop_id)
    {
    case PROP_CONNECTION:
      self->bus = g_value_dup_object (value);
      break;

    case PROP_APP_ID:
      self->app_id = g_value_dup_string (value);
      break;

    case PROP_ICON_THEME_PATH:
      self->icon_theme_path = g_value_dup_string (value);
      break;

    case PROP_STATE:
      chp_tray_set_state (self, g_value_get_enum (value));
      break;

    case PROP_NEEDS_COUNT:
      chp_tray_set_needs_count (self, g_value_get_uint (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_tray_class_init (ChpTrayClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  g_autoptr(GError) error = NULL;

  object_class->constructed = chp_tray_constructed;
  object_class->dispose = chp_tray_dispose;
  object_class->finalize = chp_tray_finalize;
  object_class->get_property = chp_tray_get_property;
  object_class->set_property = chp_tray_set_property;

  properties[PROP_CONNECTION] =
    g_param_spec_object ("connection", NULL, NULL, G_TYPE_DBUS_CONNECTION,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_APP_ID] =
    g_param_spec_string ("app-id", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_ICON_THEME_PATH] =
    g_param_spec_string ("icon-theme-path", NULL, NULL, NULL,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_STATE] =
    g_param_spec_enum ("state", NULL, NULL, CHP_TYPE_TRAY_STATE, CHP_TRAY_STATE_IDLE,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_NEEDS_COUNT] =
    g_param_spec_uint ("needs-count", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /**
   * ChpTray:registered:
   *
   * Whether a tray host shows the icon now. It turns TRUE when a StatusNotifierWatcher accepts
   * the item, also long after the tray was made, and FALSE when the watcher goes away.
   */
  properties[PROP_REGISTERED] =
    g_param_spec_boolean ("registered", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);

  g_object_class_install_properties (object_class, N_PROPS, properties);

  signals[SIGNAL_OPEN] =
    g_signal_new ("open", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_SHOW_NEEDS_YOU] =
    g_signal_new ("show-needs-you", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_STOP_ALL] =
    g_signal_new ("stop-all", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 0);
  signals[SIGNAL_QUIT] =
    g_signal_new ("quit", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 0);

  introspection_data = g_dbus_node_info_new_for_xml (introspection_xml, &error);
  g_assert_no_error (error);
}

static void
chp_tray_init (ChpTray *self)
{
  self->state = CHP_TRAY_STATE_IDLE;
  self->layout_revision = 1;
}

/**
 * chp_tray_new:
 * @bus: (nullable): the session bus; without one the tray exists but never shows
 * @app_id: the item's Id and the prefix of its icon names
 * @icon_theme_path: (nullable): a directory to look for the icons in when they are not installed
 *
 * Exports the icon and its menu and registers them with the desktop's tray as soon as there is
 * one. Never fails: without a tray host the app works as before, and #ChpTray:registered says
 * whether the icon is shown.
 */
ChpTray *
chp_tray_new (GDBusConnection *bus,
              const char      *app_id,
              const char      *icon_theme_path)
{
  g_return_val_if_fail (bus == NULL || G_IS_DBUS_CONNECTION (bus), NULL);
  g_return_val_if_fail (app_id != NULL, NULL);

  return g_object_new (CHP_TYPE_TRAY,
                       "connection", bus,
                       "app-id", app_id,
                       "icon-theme-path", icon_theme_path,
                       NULL);
}

void
chp_tray_set_state (ChpTray      *self,
                    ChpTrayState  state)
{
  gboolean menu_changed;

  g_return_if_fail (CHP_IS_TRAY (self));
  g_return_if_fail (state <= CHP_TRAY_STATE_STOPPED);

  if (self->state == state)
    return;

  menu_changed = (self->state == CHP_TRAY_STATE_STOPPED) != (state == CHP_TRAY_STATE_STOPPED);
  self->state = state;

  if (self->item_registration_id != 0)
    {
      chp_tray_emit_dbus_signal (self, ITEM_PATH, ITEM_IFACE, "NewIcon", NULL);
      chp_tray_emit_dbus_signal (self, ITEM_PATH, ITEM_IFACE, "NewStatus",
                                 g_variant_new ("(s)", status_for (state)));
      chp_tray_emit_dbus_signal (self, ITEM_PATH, ITEM_IFACE, "NewToolTip", NULL);
      if (menu_changed)
        chp_tray_menu_update_layout (self);
    }

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
}

ChpTrayState
chp_tray_get_state (ChpTray *self)
{
  g_return_val_if_fail (CHP_IS_TRAY (self), CHP_TRAY_STATE_IDLE);

  return self->state;
}

void
chp_tray_set_needs_count (ChpTray *self,
                          guint    count)
{
  g_return_if_fail (CHP_IS_TRAY (self));

  if (self->needs_count == count)
    return;

  self->needs_count = count;

  if (self->item_registration_id != 0)
    {
      chp_tray_menu_update_needs_count (self);
      chp_tray_emit_dbus_signal (self, ITEM_PATH, ITEM_IFACE, "NewToolTip", NULL);
    }

  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_NEEDS_COUNT]);
}

guint
chp_tray_get_needs_count (ChpTray *self)
{
  g_return_val_if_fail (CHP_IS_TRAY (self), 0);

  return self->needs_count;
}

gboolean
chp_tray_is_registered (ChpTray *self)
{
  g_return_val_if_fail (CHP_IS_TRAY (self), FALSE);

  return self->registered;
}
