/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tray.c: the tray icon — an org.kde.StatusNotifierItem with a com.canonical.dbusmenu menu,
 * exported with GDBus and registered with whichever StatusNotifierWatcher the desktop runs.
 *
 * Everything exported here can be called by any process of the person's session, an agent with
 * a shell included (`gdbus call … com.canonical.dbusmenu.Event 4 clicked …`). So the menu only
 * ever offers what is safe for anyone to do: open the window, show Needs you, stop everything,
 * quit. It never resumes, approves or releases anything (docs/security.md, "Approvals only by a
 * person, through widget actions"). */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-tray"

#include "chp-tray.h"

#include <glib/gi18n.h>

#define WATCHER_NAME "org.kde.StatusNotifierWatcher"
#define WATCHER_PATH "/StatusNotifierWatcher"
#define WATCHER_IFACE "org.kde.StatusNotifierWatcher"
#define ITEM_PATH "/StatusNotifierItem"
#define ITEM_IFACE "org.kde.StatusNotifierItem"
#define MENU_PATH "/MenuBar"
#define MENU_IFACE "com.canonical.dbusmenu"

/* The parts of both specifications a host uses. */
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
  "  <interface name='com.canonical.dbusmenu'>"
  "    <property name='Version' type='u' access='read'/>"
  "    <property name='TextDirection' type='s' access='read'/>"
  "    <property name='Status' type='s' access='read'/>"
  "    <property name='IconThemePath' type='as' access='read'/>"
  "    <method name='GetLayout'>"
  "      <arg name='parentId' type='i' direction='in'/>"
  "      <arg name='recursionDepth' type='i' direction='in'/>"
  "      <arg name='propertyNames' type='as' direction='in'/>"
  "      <arg name='revision' type='u' direction='out'/>"
  "      <arg name='layout' type='(ia{sv}av)' direction='out'/>"
  "    </method>"
  "    <method name='GetGroupProperties'>"
  "      <arg name='ids' type='ai' direction='in'/>"
  "      <arg name='propertyNames' type='as' direction='in'/>"
  "      <arg name='properties' type='a(ia{sv})' direction='out'/>"
  "    </method>"
  "    <method name='GetProperty'>"
  "      <arg name='id' type='i' direction='in'/>"
  "      <arg name='name' type='s' direction='in'/>"
  "      <arg name='value' type='v' direction='out'/>"
  "    </method>"
  "    <method name='Event'>"
  "      <arg name='id' type='i' direction='in'/>"
  "      <arg name='eventId' type='s' direction='in'/>"
  "      <arg name='data' type='v' direction='in'/>"
  "      <arg name='timestamp' type='u' direction='in'/>"
  "    </method>"
  "    <method name='EventGroup'>"
  "      <arg name='events' type='a(isvu)' direction='in'/>"
  "      <arg name='idErrors' type='ai' direction='out'/>"
  "    </method>"
  "    <method name='AboutToShow'>"
  "      <arg name='id' type='i' direction='in'/>"
  "      <arg name='needUpdate' type='b' direction='out'/>"
  "    </method>"
  "    <method name='AboutToShowGroup'>"
  "      <arg name='ids' type='ai' direction='in'/>"
  "      <arg name='updatesNeeded' type='ai' direction='out'/>"
  "      <arg name='idErrors' type='ai' direction='out'/>"
  "    </method>"
  "    <signal name='ItemsPropertiesUpdated'>"
  "      <arg name='updatedProps' type='a(ia{sv})'/>"
  "      <arg name='removedProps' type='a(ias)'/>"
  "    </signal>"
  "    <signal name='LayoutUpdated'>"
  "      <arg name='revision' type='u'/>"
  "      <arg name='parent' type='i'/>"
  "    </signal>"
  "    <signal name='ItemActivationRequested'>"
  "      <arg name='id' type='i'/>"
  "      <arg name='timestamp' type='u'/>"
  "    </signal>"
  "  </interface>"
  "</node>";

/* Menu item ids are fixed for the life of the tray: a host may keep a menu open across a state
 * change, and a click on an old entry must still mean what the person saw. That is also why
 * "Stop all" and the stopped note are two items rather than one relabelled item. */
typedef enum
{
  ITEM_ROOT = 0,
  ITEM_OPEN,
  ITEM_NEEDS_YOU,
  ITEM_SEPARATOR_1,
  ITEM_STOP_ALL,
  ITEM_STOPPED,
  ITEM_SEPARATOR_2,
  ITEM_QUIT,
  N_ITEMS
} ItemId;

struct _ChpTray
{
  GObject parent_instance;

  GDBusConnection *bus;   /* NULL: no session bus; the tray then never shows */
  char *app_id;
  char *icon_theme_path;  /* NULL: the icons are installed in the theme */

  ChpTrayState state;
  guint needs_count;

  guint item_registration_id;
  guint menu_registration_id;
  guint watch_id;
  GCancellable *register_cancellable;
  gboolean registered;
  guint32 layout_revision;
};

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

/* Deliberately no "resume": see the top of this file. */
enum {
  SIGNAL_OPEN,
  SIGNAL_SHOW_NEEDS_YOU,
  SIGNAL_STOP_ALL,
  SIGNAL_QUIT,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static GDBusNodeInfo *introspection_data;

/* Items and what they do */

static gboolean
item_is_shown (ChpTray *self,
               int      id)
{
  switch (id)
    {
    case ITEM_ROOT:
    case ITEM_OPEN:
    case ITEM_NEEDS_YOU:
    case ITEM_SEPARATOR_1:
    case ITEM_SEPARATOR_2:
    case ITEM_QUIT:
      return TRUE;

    case ITEM_STOP_ALL:
      return self->state != CHP_TRAY_STATE_STOPPED;

    case ITEM_STOPPED:
      return self->state == CHP_TRAY_STATE_STOPPED;

    default:
      return FALSE;
    }
}

/* Returns: the signal a click on @id emits, or -1 for an item that does nothing */
static int
item_signal (int id)
{
  switch (id)
    {
    case ITEM_OPEN:
      return SIGNAL_OPEN;

    case ITEM_NEEDS_YOU:
      return SIGNAL_SHOW_NEEDS_YOU;

    case ITEM_STOP_ALL:
      return SIGNAL_STOP_ALL;

    /* The issue asked for "Stop all or Resume" here. Resume is left out on purpose: this menu's
     * Event method is open to every process of the session, so a Resume entry would let an agent
     * undo the person's Stop with one gdbus call. The entry says where to resume and opens the
     * window, where Resume is a widget action only a person can reach. */
    case ITEM_STOPPED:
      return SIGNAL_OPEN;

    case ITEM_QUIT:
      return SIGNAL_QUIT;

    default:
      return -1;
    }
}

static char *
item_label (ChpTray *self,
            int      id)
{
  switch (id)
    {
    case ITEM_OPEN:
      return g_strdup (_("Open"));

    case ITEM_NEEDS_YOU:
      /* Translators: a tray menu item that opens the Needs you page; %u is how many requests
       * wait there. */
      return g_strdup_printf (_("Needs you (%u)"), self->needs_count);

    case ITEM_STOP_ALL:
      return g_strdup (_("Stop all"));

    case ITEM_STOPPED:
      /* Translators: the tray menu item shown instead of "Stop all" once everything is stopped.
       * It only opens the window: resuming is done there, never from the tray. */
      return g_strdup (_("Stopped — resume in Chaperone…"));

    case ITEM_QUIT:
      return g_strdup (_("Quit"));

    default:
      return NULL;
    }
}

static gboolean
wants (const char * const *names,
       const char         *name)
{
  /* An empty list asks for every property. */
  return names == NULL || names[0] == NULL || g_strv_contains (names, name);
}

static GVariant *
item_properties (ChpTray            *self,
                 int                 id,
                 const char * const *names)
{
  GVariantBuilder builder;
  g_autofree char *label = item_label (self, id);

  g_variant_builder_init (&builder, G_VARIANT_TYPE_VARDICT);

  if (id == ITEM_ROOT)
    {
      if (wants (names, "children-display"))
        g_variant_builder_add (&builder, "{sv}", "children-display",
                               g_variant_new_string ("submenu"));
    }
  else if (id == ITEM_SEPARATOR_1 || id == ITEM_SEPARATOR_2)
    {
      if (wants (names, "type"))
        g_variant_builder_add (&builder, "{sv}", "type", g_variant_new_string ("separator"));
    }
  else
    {
      if (label != NULL && wants (names, "label"))
        g_variant_builder_add (&builder, "{sv}", "label", g_variant_new_string (label));
      if (wants (names, "enabled"))
        g_variant_builder_add (&builder, "{sv}", "enabled", g_variant_new_boolean (TRUE));
      if (wants (names, "visible"))
        g_variant_builder_add (&builder, "{sv}", "visible", g_variant_new_boolean (TRUE));
    }

  return g_variant_builder_end (&builder);
}

static GVariant *
item_layout (ChpTray            *self,
             int                 id,
             int                 depth,
             const char * const *names)
{
  GVariantBuilder children;

  g_variant_builder_init (&children, G_VARIANT_TYPE ("av"));

  /* Only the root has children; a depth of -1 means "all of them". */
  if (id == ITEM_ROOT && depth != 0)
    {
      for (int child = ITEM_ROOT + 1; child < N_ITEMS; child++)
        {
          if (item_is_shown (self, child))
            g_variant_builder_add (&children, "v",
                                   item_layout (self, child, depth > 0 ? depth - 1 : -1, names));
        }
    }

  return g_variant_new ("(i@a{sv}av)", id, item_properties (self, id, names), &children);
}

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

static void
emit_dbus_signal (ChpTray    *self,
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

static void
emit_clicks (ChpTray *self,
             GArray  *clicked)
{
  g_autoptr(ChpTray) hold G_GNUC_UNUSED = g_object_ref (self);

  /* After the reply went out: a handler may quit the app. */
  for (guint i = 0; i < clicked->len; i++)
    {
      int sig = item_signal (g_array_index (clicked, int, i));

      if (sig >= 0)
        g_signal_emit (self, signals[sig], 0);
    }
}

static gboolean
handle_event (ChpTray    *self,
              int         id,
              const char *event_id,
              GArray     *clicked)
{
  /* An item that is not in the menu now does nothing, even if a host still shows it. */
  if (id == ITEM_ROOT || !item_is_shown (self, id))
    return FALSE;

  if (g_str_equal (event_id, "clicked"))
    g_array_append_val (clicked, id);

  return TRUE;
}

static void
menu_method_call (GDBusConnection       *connection,
                  const char            *sender,
                  const char            *object_path,
                  const char            *interface_name,
                  const char            *method_name,
                  GVariant              *parameters,
                  GDBusMethodInvocation *invocation,
                  gpointer               user_data)
{
  ChpTray *self = CHP_TRAY (user_data);

  if (g_str_equal (method_name, "GetLayout"))
    {
      int parent, depth;
      g_autofree const char **names = NULL;

      g_variant_get (parameters, "(ii^a&s)", &parent, &depth, &names);
      if (!item_is_shown (self, parent))
        {
          g_dbus_method_invocation_return_error (invocation, G_DBUS_ERROR,
                                                 G_DBUS_ERROR_INVALID_ARGS,
                                                 "No menu item %d", parent);
          return;
        }

      g_dbus_method_invocation_return_value (invocation,
                                             g_variant_new ("(u@(ia{sv}av))",
                                                            self->layout_revision,
                                                            item_layout (self, parent, depth,
                                                                         names)));
    }
  else if (g_str_equal (method_name, "GetGroupProperties"))
    {
      g_autoptr(GVariant) ids = NULL;
      g_autofree const char **names = NULL;
      GVariantBuilder builder;
      gsize n_ids;
      const gint32 *id_list;

      g_variant_get (parameters, "(@ai^a&s)", &ids, &names);
      id_list = g_variant_get_fixed_array (ids, &n_ids, sizeof (gint32));

      g_variant_builder_init (&builder, G_VARIANT_TYPE ("a(ia{sv})"));
      for (int id = ITEM_ROOT; id < N_ITEMS; id++)
        {
          gboolean asked = n_ids == 0;

          for (gsize i = 0; i < n_ids && !asked; i++)
            asked = id_list[i] == id;

          if (asked && item_is_shown (self, id))
            g_variant_builder_add (&builder, "(i@a{sv})", id, item_properties (self, id, names));
        }

      g_dbus_method_invocation_return_value (invocation, g_variant_new ("(a(ia{sv}))", &builder));
    }
  else if (g_str_equal (method_name, "GetProperty"))
    {
      int id;
      const char *name;
      const char *names[2] = { NULL, NULL };
      g_autoptr(GVariant) props = NULL;
      g_autoptr(GVariant) value = NULL;

      g_variant_get (parameters, "(i&s)", &id, &name);
      names[0] = name;
      if (item_is_shown (self, id))
        {
          props = g_variant_ref_sink (item_properties (self, id, names));
          value = g_variant_lookup_value (props, name, NULL);
        }

      if (value == NULL)
        g_dbus_method_invocation_return_error (invocation, G_DBUS_ERROR,
                                               G_DBUS_ERROR_INVALID_ARGS,
                                               "No property %s on menu item %d", name, id);
      else
        g_dbus_method_invocation_return_value (invocation, g_variant_new ("(v)", value));
    }
  else if (g_str_equal (method_name, "Event"))
    {
      int id;
      const char *event_id;
      g_autoptr(GArray) clicked = g_array_new (FALSE, FALSE, sizeof (int));

      g_variant_get (parameters, "(i&svu)", &id, &event_id, NULL, NULL);
      if (!handle_event (self, id, event_id, clicked))
        {
          g_dbus_method_invocation_return_error (invocation, G_DBUS_ERROR,
                                                 G_DBUS_ERROR_INVALID_ARGS,
                                                 "No menu item %d", id);
          return;
        }

      g_dbus_method_invocation_return_value (invocation, NULL);
      emit_clicks (self, clicked);
    }
  else if (g_str_equal (method_name, "EventGroup"))
    {
      g_autoptr(GVariantIter) iter = NULL;
      g_autoptr(GArray) clicked = g_array_new (FALSE, FALSE, sizeof (int));
      GVariantBuilder errors;
      int id;
      const char *event_id;

      g_variant_builder_init (&errors, G_VARIANT_TYPE ("ai"));
      g_variant_get (parameters, "(a(isvu))", &iter);
      while (g_variant_iter_loop (iter, "(i&svu)", &id, &event_id, NULL, NULL))
        {
          if (!handle_event (self, id, event_id, clicked))
            g_variant_builder_add (&errors, "i", id);
        }

      g_dbus_method_invocation_return_value (invocation, g_variant_new ("(ai)", &errors));
      emit_clicks (self, clicked);
    }
  else if (g_str_equal (method_name, "AboutToShow"))
    {
      /* The layout is always current: LayoutUpdated goes out as soon as it changes. */
      g_dbus_method_invocation_return_value (invocation, g_variant_new ("(b)", FALSE));
    }
  else if (g_str_equal (method_name, "AboutToShowGroup"))
    {
      g_autoptr(GVariantIter) iter = NULL;
      GVariantBuilder errors;
      int id;

      g_variant_builder_init (&errors, G_VARIANT_TYPE ("ai"));
      g_variant_get (parameters, "(ai)", &iter);
      while (g_variant_iter_next (iter, "i", &id))
        {
          if (!item_is_shown (self, id))
            g_variant_builder_add (&errors, "i", id);
        }

      g_dbus_method_invocation_return_value (invocation,
                                             g_variant_new ("(@aiai)",
                                                            g_variant_new_array (G_VARIANT_TYPE_INT32,
                                                                                 NULL, 0),
                                                            &errors));
    }
  else
    {
      g_dbus_method_invocation_return_error (invocation, G_DBUS_ERROR,
                                             G_DBUS_ERROR_UNKNOWN_METHOD,
                                             "No method %s", method_name);
    }
}

static GVariant *
menu_get_property (GDBusConnection  *connection,
                   const char       *sender,
                   const char       *object_path,
                   const char       *interface_name,
                   const char       *property_name,
                   GError          **error,
                   gpointer          user_data)
{
  ChpTray *self = CHP_TRAY (user_data);

  if (g_str_equal (property_name, "Version"))
    return g_variant_new_uint32 (3);
  if (g_str_equal (property_name, "TextDirection"))
    return g_variant_new_string ("ltr");
  if (g_str_equal (property_name, "Status"))
    return g_variant_new_string ("normal");
  if (g_str_equal (property_name, "IconThemePath"))
    {
      const char *paths[] = { self->icon_theme_path, NULL };

      return g_variant_new_strv (paths, self->icon_theme_path != NULL ? 1 : 0);
    }

  g_set_error (error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_PROPERTY,
               "No property %s", property_name);
  return NULL;
}

static const GDBusInterfaceVTable item_vtable = {
  .method_call = item_method_call,
  .get_property = item_get_property,
};

static const GDBusInterfaceVTable menu_vtable = {
  .method_call = menu_method_call,
  .get_property = menu_get_property,
};

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
    self->menu_registration_id =
      g_dbus_connection_register_object (self->bus, MENU_PATH,
                                         g_dbus_node_info_lookup_interface (introspection_data,
                                                                            MENU_IFACE),
                                         &menu_vtable, self, NULL, &error);

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
      emit_dbus_signal (self, ITEM_PATH, ITEM_IFACE, "NewIcon", NULL);
      emit_dbus_signal (self, ITEM_PATH, ITEM_IFACE, "NewStatus",
                        g_variant_new ("(s)", status_for (state)));
      emit_dbus_signal (self, ITEM_PATH, ITEM_IFACE, "NewToolTip", NULL);
      if (menu_changed)
        {
          self->layout_revision++;
          emit_dbus_signal (self, MENU_PATH, MENU_IFACE, "LayoutUpdated",
                            g_variant_new ("(ui)", self->layout_revision, ITEM_ROOT));
        }
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
      const char *names[] = { "label", NULL };
      GVariantBuilder updated;

      g_variant_builder_init (&updated, G_VARIANT_TYPE ("a(ia{sv})"));
      g_variant_builder_add (&updated, "(i@a{sv})", ITEM_NEEDS_YOU,
                             item_properties (self, ITEM_NEEDS_YOU, names));
      emit_dbus_signal (self, MENU_PATH, MENU_IFACE, "ItemsPropertiesUpdated",
                        g_variant_new ("(a(ia{sv})@a(ias))", &updated,
                                       g_variant_new_array (G_VARIANT_TYPE ("(ias)"), NULL, 0)));
      emit_dbus_signal (self, ITEM_PATH, ITEM_IFACE, "NewToolTip", NULL);
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
