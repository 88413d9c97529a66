/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-tray-harness.c: a desktop's tray host played over a private session bus: a stub
 * StatusNotifierWatcher, calls to the item and its menu, and the signals it heard. */
#include "config.h"

#include "test-tray-harness.h"

#include <gio/gio.h>

/* Waiting */

static void
round_trip_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      data)
{
  g_autoptr(GVariant) reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result,
                                                             NULL);

  *(gboolean *) data = TRUE;
}

/* Once this returns, whatever @connection asked the bus before it has been answered and the
 * answers handed to whoever asked: the bus answers a connection in order, and GDBus passes
 * replies on in order. (How a test knows the tray has heard whether a watcher exists.) */
void
bus_round_trip (GDBusConnection *connection)
{
  gboolean done = FALSE;

  g_dbus_connection_call (connection, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                          "org.freedesktop.DBus", "GetId", NULL, NULL, G_DBUS_CALL_FLAGS_NONE,
                          -1, NULL, round_trip_cb, &done);
  chp_test_until (done);
}

static GDBusConnection *
connect_to (GTestDBus *bus)
{
  g_autoptr(GError) error = NULL;
  GDBusConnection *connection;

  connection = g_dbus_connection_new_for_address_sync (
    g_test_dbus_get_bus_address (bus),
    G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
    NULL, NULL, &error);
  g_assert_no_error (error);

  return connection;
}

static void
close_connection (GDBusConnection *connection)
{
  g_autoptr(GError) error = NULL;

  g_dbus_connection_close_sync (connection, NULL, &error);
  g_assert_no_error (error);
  g_object_unref (connection);
}

/* A stub StatusNotifierWatcher, its own process as far as the bus knows */

static const char watcher_xml[] =
  "<node>"
  "  <interface name='org.kde.StatusNotifierWatcher'>"
  "    <method name='RegisterStatusNotifierItem'>"
  "      <arg name='service' type='s' direction='in'/>"
  "    </method>"
  "    <method name='RegisterStatusNotifierHost'>"
  "      <arg name='service' type='s' direction='in'/>"
  "    </method>"
  "    <property name='RegisteredStatusNotifierItems' type='as' access='read'/>"
  "    <property name='IsStatusNotifierHostRegistered' type='b' access='read'/>"
  "    <property name='ProtocolVersion' type='i' access='read'/>"
  "  </interface>"
  "</node>";

static void
watcher_method_call (GDBusConnection       *connection,
                     const char            *sender,
                     const char            *object_path,
                     const char            *interface_name,
                     const char            *method_name,
                     GVariant              *parameters,
                     GDBusMethodInvocation *invocation,
                     gpointer               user_data)
{
  StubWatcher *watcher = user_data;

  if (g_str_equal (method_name, "RegisterStatusNotifierItem"))
    {
      const char *service;

      g_variant_get (parameters, "(&s)", &service);
      g_ptr_array_add (watcher->senders, g_strdup (sender));
      g_ptr_array_add (watcher->services, g_strdup (service));
    }

  g_dbus_method_invocation_return_value (invocation, NULL);
}

static GVariant *
watcher_get_property (GDBusConnection  *connection,
                      const char       *sender,
                      const char       *object_path,
                      const char       *interface_name,
                      const char       *property_name,
                      GError          **error,
                      gpointer          user_data)
{
  StubWatcher *watcher = user_data;

  if (g_str_equal (property_name, "RegisteredStatusNotifierItems"))
    return g_variant_new_strv ((const char * const *) watcher->services->pdata,
                               watcher->services->len);
  if (g_str_equal (property_name, "IsStatusNotifierHostRegistered"))
    return g_variant_new_boolean (TRUE);
  return g_variant_new_int32 (0);
}

static const GDBusInterfaceVTable watcher_vtable = {
  .method_call = watcher_method_call,
  .get_property = watcher_get_property,
};

static void
watcher_acquired_cb (GDBusConnection *connection,
                     const char      *name,
                     gpointer         user_data)
{
  ((StubWatcher *) user_data)->owned = TRUE;
}

static void
watcher_lost_cb (GDBusConnection *connection,
                 const char      *name,
                 gpointer         user_data)
{
  g_error ("the stub watcher could not own %s", name);
}

StubWatcher *
watcher_start (GTestDBus *bus)
{
  StubWatcher *watcher = g_new0 (StubWatcher, 1);
  g_autoptr(GDBusNodeInfo) info = NULL;
  g_autoptr(GError) error = NULL;

  info = g_dbus_node_info_new_for_xml (watcher_xml, &error);
  g_assert_no_error (error);

  watcher->senders = g_ptr_array_new_with_free_func (g_free);
  watcher->services = g_ptr_array_new_with_free_func (g_free);
  watcher->connection = connect_to (bus);
  watcher->object_id = g_dbus_connection_register_object (watcher->connection,
                                                          "/StatusNotifierWatcher",
                                                          info->interfaces[0], &watcher_vtable,
                                                          watcher, NULL, &error);
  g_assert_no_error (error);
  watcher->owner_id = g_bus_own_name_on_connection (watcher->connection, WATCHER_NAME,
                                                    G_BUS_NAME_OWNER_FLAGS_NONE,
                                                    watcher_acquired_cb, watcher_lost_cb,
                                                    watcher, NULL);
  chp_test_until (watcher->owned);

  return watcher;
}

/* Like a desktop shell going away: the name goes with the connection. */
void
watcher_stop (StubWatcher *watcher)
{
  if (watcher == NULL)
    return;

  g_bus_unown_name (watcher->owner_id);
  g_dbus_connection_unregister_object (watcher->connection, watcher->object_id);
  close_connection (watcher->connection);
  g_ptr_array_unref (watcher->senders);
  g_ptr_array_unref (watcher->services);
  g_free (watcher);
}

/* Fixture: a bus, the tray on its own connection, a "host" connection that reads it */

/* One private bus for the whole run, started before any thread exists (GTestDBus sets the
 * environment); each test gets fresh connections on it, so nothing carries over. */
GTestDBus *test_bus;

static void
count_cb (gpointer counter)
{
  (*(guint *) counter)++;
}

/* Counts every signal ChpTray has, whatever its name, so a new one cannot slip past. */
gboolean
any_signal_hook (GSignalInvocationHint *hint,
                 guint                  n_param_values,
                 const GValue          *param_values,
                 gpointer               user_data)
{
  Fixture *f = user_data;

  if (g_value_get_object (&param_values[0]) == (gpointer) f->tray)
    f->n_any_signal++;

  return TRUE;
}

static void
registered_notify_cb (ChpTray    *tray,
                      GParamSpec *pspec,
                      Fixture    *f)
{
  f->n_registered_notifies++;
}

void
make_tray (Fixture *f)
{
  f->tray = chp_tray_new (f->tray_bus, APP, f->icon_dir);
  g_signal_connect_swapped (f->tray, "open", G_CALLBACK (count_cb), &f->n_open);
  g_signal_connect_swapped (f->tray, "show-needs-you", G_CALLBACK (count_cb), &f->n_needs_you);
  g_signal_connect_swapped (f->tray, "stop-all", G_CALLBACK (count_cb), &f->n_stop_all);
  g_signal_connect_swapped (f->tray, "quit", G_CALLBACK (count_cb), &f->n_quit);
  g_signal_connect (f->tray, "notify::registered", G_CALLBACK (registered_notify_cb), f);
}

void
fixture_set_up (Fixture       *f,
                gconstpointer  data)
{
  const char *vectors = g_getenv ("CHAPERONE_VECTORS_DIR");
  g_autofree char *tests_dir = NULL;
  g_autofree char *top = NULL;

  if (test_bus == NULL)
    {
      g_test_skip ("dbus-daemon is not installed: GTestDBus cannot start a private bus");
      return;
    }

  /* The icons as an uninstalled app passes them: the theme directory in the source tree. */
  g_assert_nonnull (vectors);
  tests_dir = g_path_get_dirname (vectors);
  top = g_path_get_dirname (tests_dir);
  f->icon_dir = g_build_filename (top, "data", "icons", NULL);

  f->bus = g_object_ref (test_bus);
  f->tray_bus = connect_to (f->bus);
  f->host_bus = connect_to (f->bus);
  f->host_signals = g_ptr_array_new_with_free_func (g_free);
}

void
fixture_tear_down (Fixture       *f,
                   gconstpointer  data)
{
  if (f->bus == NULL)
    return;

  if (f->tray != NULL)
    g_assert_finalize_object (f->tray);

  /* Let the bus traffic of unwatching and unexporting finish before the connections close. */
  bus_round_trip (f->tray_bus);

  watcher_stop (f->watcher);
  close_connection (f->host_bus);
  close_connection (f->tray_bus);
  g_object_unref (f->bus);
  g_ptr_array_unref (f->host_signals);
  g_free (f->icon_dir);
}

/* The host's side of the conversation */

static void
store_result_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  *(GAsyncResult **) user_data = g_object_ref (result);
}

/* Asynchronous underneath: the tray answers from this same main loop. */
GVariant *
host_call (Fixture             *f,
           const char          *path,
           const char          *iface,
           const char          *method,
           GVariant            *parameters,
           const GVariantType  *reply_type,
           GError             **error)
{
  GAsyncResult *result = NULL;
  GVariant *reply;

  g_dbus_connection_call (f->host_bus, g_dbus_connection_get_unique_name (f->tray_bus),
                          path, iface, method, parameters, reply_type,
                          G_DBUS_CALL_FLAGS_NONE, -1, NULL, store_result_cb, &result);
  chp_test_until (result != NULL);
  reply = g_dbus_connection_call_finish (f->host_bus, result, error);
  g_object_unref (result);

  return reply;
}

GVariant *
get_item_property (Fixture    *f,
                   const char *name)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = NULL;
  GVariant *value;

  reply = host_call (f, "/StatusNotifierItem", "org.freedesktop.DBus.Properties", "Get",
                     g_variant_new ("(ss)", ITEM_IFACE, name), G_VARIANT_TYPE ("(v)"), &error);
  g_assert_no_error (error);
  g_variant_get (reply, "(v)", &value);

  return value;
}

char *
get_item_string (Fixture    *f,
                 const char *name)
{
  g_autoptr(GVariant) value = get_item_property (f, name);

  return g_variant_dup_string (value, NULL);
}

char *
menu_path (Fixture *f)
{
  return get_item_string (f, "Menu");
}

static void
menu_entry_clear (gpointer data)
{
  g_free (((MenuEntry *) data)->label);
}

/* The top-level menu entries, as a host shows them */
GArray *
get_menu (Fixture *f,
          guint   *revision)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) root_props = NULL;
  g_autoptr(GVariantIter) children = NULL;
  g_autofree char *path = menu_path (f);
  const char *none[] = { NULL };
  const char *display = NULL;
  GVariant *child;
  GArray *entries;
  int root_id;

  reply = host_call (f, path, MENU_IFACE, "GetLayout",
                     g_variant_new ("(ii^as)", 0, -1, none),
                     G_VARIANT_TYPE ("(u(ia{sv}av))"), &error);
  g_assert_no_error (error);
  g_variant_get (reply, "(u(i@a{sv}av))", revision, &root_id, &root_props, &children);
  g_assert_cmpint (root_id, ==, 0);
  g_assert_true (g_variant_lookup (root_props, "children-display", "&s", &display));
  g_assert_cmpstr (display, ==, "submenu");

  entries = g_array_new (FALSE, TRUE, sizeof (MenuEntry));
  g_array_set_clear_func (entries, menu_entry_clear);
  while (g_variant_iter_next (children, "v", &child))
    {
      g_autoptr(GVariant) props = NULL;
      g_autoptr(GVariantIter) grandchildren = NULL;
      MenuEntry entry = { 0, NULL };
      const char *type = NULL;
      const char *label = NULL;

      g_variant_get (child, "(i@a{sv}av)", &entry.id, &props, &grandchildren);
      g_assert_cmpuint (g_variant_iter_n_children (grandchildren), ==, 0);
      if (g_variant_lookup (props, "type", "&s", &type) && g_str_equal (type, "separator"))
        entry.label = g_strdup ("---");
      else if (g_variant_lookup (props, "label", "&s", &label))
        entry.label = g_strdup (label);
      else
        g_error ("menu item %d has neither a label nor a separator type", entry.id);
      g_array_append_val (entries, entry);
      g_variant_unref (child);
    }

  return entries;
}

char *
menu_labels (GArray *entries)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) labels = NULL;

  for (guint i = 0; i < entries->len; i++)
    g_strv_builder_add (builder, g_array_index (entries, MenuEntry, i).label);
  labels = g_strv_builder_end (builder);

  return g_strjoinv ("|", labels);
}

int
menu_id (GArray     *entries,
         const char *label)
{
  for (guint i = 0; i < entries->len; i++)
    {
      if (g_str_equal (g_array_index (entries, MenuEntry, i).label, label))
        return g_array_index (entries, MenuEntry, i).id;
    }

  g_error ("no menu item labelled %s", label);
}

gboolean
send_event (Fixture    *f,
            int         id,
            const char *event_id)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autofree char *path = menu_path (f);

  reply = host_call (f, path, MENU_IFACE, "Event",
                     g_variant_new ("(isvu)", id, event_id, g_variant_new_int32 (0), 0u),
                     G_VARIANT_TYPE_UNIT, &error);
  if (reply == NULL)
    {
      g_assert_error (error, G_DBUS_ERROR, G_DBUS_ERROR_INVALID_ARGS);
      return FALSE;
    }

  return TRUE;
}

static void
host_signal_cb (GDBusConnection *connection,
                const char      *sender,
                const char      *path,
                const char      *iface,
                const char      *member,
                GVariant        *parameters,
                gpointer         user_data)
{
  Fixture *f = user_data;
  g_autofree char *args = g_variant_print (parameters, FALSE);

  g_ptr_array_add (f->host_signals, g_strdup_printf ("%s %s", member, args));
}

guint
subscribe_host (Fixture *f)
{
  return g_dbus_connection_signal_subscribe (f->host_bus,
                                             g_dbus_connection_get_unique_name (f->tray_bus),
                                             NULL, NULL, NULL, NULL, G_DBUS_SIGNAL_FLAGS_NONE,
                                             host_signal_cb, f, NULL);
}

gboolean
host_heard (Fixture    *f,
            const char *prefix)
{
  for (guint i = 0; i < f->host_signals->len; i++)
    {
      if (g_str_has_prefix (g_ptr_array_index (f->host_signals, i), prefix))
        return TRUE;
    }

  return FALSE;
}
