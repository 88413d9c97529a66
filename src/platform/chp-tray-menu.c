/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tray-menu.c: the tray icon's menu, a com.canonical.dbusmenu object beside the
 * StatusNotifierItem (chp-tray.c): its items, their layout and properties, and its events.
 *
 * Everything exported here can be called by any process of the person's session, an agent with
 * a shell included (`gdbus call … com.canonical.dbusmenu.Event 4 clicked …`). So the menu only
 * ever offers what is safe for anyone to do: open the window, show Needs you, stop everything,
 * quit. It never resumes, approves or releases anything (docs/security.md, "Approvals only by a
 * person, through widget actions"). */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-tray"

#include "chp-tray-private.h"

#include <glib/gi18n.h>

#define MENU_IFACE "com.canonical.dbusmenu"

/* The part of the specification a host uses. */
static const char introspection_xml[] =
  "<node>"
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
        chp_tray_emit (self, sig);
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

static const GDBusInterfaceVTable menu_vtable = {
  .method_call = menu_method_call,
  .get_property = menu_get_property,
};

/* Exports the menu on the tray's connection.
 * Returns: the registration id, or 0 with @error set */
guint
chp_tray_menu_register (ChpTray  *self,
                        GError  **error)
{
  static GDBusNodeInfo *introspection_data;

  if (g_once_init_enter (&introspection_data))
    {
      g_autoptr(GError) local_error = NULL;
      GDBusNodeInfo *info = g_dbus_node_info_new_for_xml (introspection_xml, &local_error);

      g_assert_no_error (local_error);
      g_once_init_leave (&introspection_data, info);
    }

  return g_dbus_connection_register_object (self->bus, MENU_PATH,
                                            g_dbus_node_info_lookup_interface (introspection_data,
                                                                               MENU_IFACE),
                                            &menu_vtable, self, NULL, error);
}

/* The state went into or out of Stopped, which swaps "Stop all" for the stopped note. */
void
chp_tray_menu_update_layout (ChpTray *self)
{
  self->layout_revision++;
  chp_tray_emit_dbus_signal (self, MENU_PATH, MENU_IFACE, "LayoutUpdated",
                             g_variant_new ("(ui)", self->layout_revision, ITEM_ROOT));
}

/* The Needs you item's label carries the count. */
void
chp_tray_menu_update_needs_count (ChpTray *self)
{
  const char *names[] = { "label", NULL };
  GVariantBuilder updated;

  g_variant_builder_init (&updated, G_VARIANT_TYPE ("a(ia{sv})"));
  g_variant_builder_add (&updated, "(i@a{sv})", ITEM_NEEDS_YOU,
                         item_properties (self, ITEM_NEEDS_YOU, names));
  chp_tray_emit_dbus_signal (self, MENU_PATH, MENU_IFACE, "ItemsPropertiesUpdated",
                             g_variant_new ("(a(ia{sv})@a(ias))", &updated,
                                            g_variant_new_array (G_VARIANT_TYPE ("(ias)"),
                                                                 NULL, 0)));
}
