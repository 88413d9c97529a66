/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-tray.c: the tray icon as a desktop's tray host sees it, over a private session bus with a
 * stub StatusNotifierWatcher: registration (also when the watcher comes late or restarts), the
 * item's properties per state, the menu, clicks — and that no click anywhere resumes. */
#include "config.h"

#include <gio/gio.h>

#include "test-tray-harness.h"

static void
test_registers (Fixture       *f,
                gconstpointer  data)
{
  if (f->bus == NULL)
    return;

  f->watcher = watcher_start (f->bus);
  make_tray (f);
  g_assert_false (chp_tray_is_registered (f->tray));

  chp_test_until (chp_tray_is_registered (f->tray));
  g_assert_cmpuint (f->n_registered_notifies, ==, 1);

  /* Registered by object path from the tray's own connection: the watcher pairs the two. */
  g_assert_cmpuint (f->watcher->services->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (f->watcher->services, 0), ==, "/StatusNotifierItem");
  g_assert_cmpstr (g_ptr_array_index (f->watcher->senders, 0), ==,
                   g_dbus_connection_get_unique_name (f->tray_bus));
}

static void
test_watcher_later (Fixture       *f,
                    gconstpointer  data)
{
  StubWatcher *first;

  if (f->bus == NULL)
    return;

  make_tray (f);
  bus_round_trip (f->tray_bus);
  g_assert_false (chp_tray_is_registered (f->tray));

  /* A tray extension switched on after the app started */
  first = f->watcher = watcher_start (f->bus);
  chp_test_until (chp_tray_is_registered (f->tray));
  g_assert_cmpuint (first->services->len, ==, 1);

  /* The shell restarts: the icon is gone, then registers with the new watcher. */
  watcher_stop (first);
  f->watcher = NULL;
  chp_test_until (!chp_tray_is_registered (f->tray));

  f->watcher = watcher_start (f->bus);
  chp_test_until (chp_tray_is_registered (f->tray));
  g_assert_cmpuint (f->watcher->services->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (f->watcher->services, 0), ==, "/StatusNotifierItem");
  g_assert_cmpuint (f->n_registered_notifies, ==, 3);
}

static void
test_no_watcher (Fixture       *f,
                 gconstpointer  data)
{
  g_autofree char *id = NULL;
  g_autoptr(ChpTray) busless = NULL;

  if (f->bus == NULL)
    return;

  make_tray (f);
  bus_round_trip (f->tray_bus);
  g_assert_false (chp_tray_is_registered (f->tray));
  g_assert_cmpuint (f->n_registered_notifies, ==, 0);

  /* The item is still served, so a watcher that comes later finds it whole. */
  chp_tray_set_state (f->tray, CHP_TRAY_STATE_NEEDS_YOU);
  chp_tray_set_needs_count (f->tray, 2);
  id = get_item_string (f, "Id");
  g_assert_cmpstr (id, ==, APP);

  /* No session bus at all: a tray that never shows, and says so. */
  busless = chp_tray_new (NULL, APP, NULL);
  chp_tray_set_state (busless, CHP_TRAY_STATE_STOPPED);
  g_assert_false (chp_tray_is_registered (busless));
  g_assert_finalize_object (g_steal_pointer (&busless));
}

static void
test_properties (Fixture       *f,
                 gconstpointer  data)
{
  static const struct {
    ChpTrayState state;
    const char *icon;
    const char *status;
  } expected[] = {
    { CHP_TRAY_STATE_IDLE, APP "-symbolic", "Active" },
    { CHP_TRAY_STATE_WORKING, APP "-working-symbolic", "Active" },
    { CHP_TRAY_STATE_NEEDS_YOU, APP "-needs-you-symbolic", "NeedsAttention" },
    { CHP_TRAY_STATE_STOPPED, APP "-stopped-symbolic", "Active" },
  };
  g_autoptr(GHashTable) descriptions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                               NULL);
  g_autoptr(GVariant) is_menu = NULL;
  g_autoptr(GVariant) menu = NULL;
  g_autofree char *id = NULL;
  g_autofree char *title = NULL;
  g_autofree char *category = NULL;
  g_autofree char *theme_path = NULL;
  guint subscription;

  if (f->bus == NULL)
    return;

  f->watcher = watcher_start (f->bus);
  make_tray (f);
  chp_test_until (chp_tray_is_registered (f->tray));
  subscription = subscribe_host (f);
  chp_tray_set_needs_count (f->tray, 2);

  id = get_item_string (f, "Id");
  title = get_item_string (f, "Title");
  category = get_item_string (f, "Category");
  theme_path = get_item_string (f, "IconThemePath");
  menu = get_item_property (f, "Menu");
  is_menu = get_item_property (f, "ItemIsMenu");
  g_assert_cmpstr (id, ==, APP);
  g_assert_cmpstr (title, ==, "Chaperone");
  g_assert_cmpstr (category, ==, "ApplicationStatus");
  g_assert_cmpstr (theme_path, ==, f->icon_dir);
  g_assert_true (g_variant_is_of_type (menu, G_VARIANT_TYPE_OBJECT_PATH));
  g_assert_cmpstr (g_variant_get_string (menu, NULL), ==, "/MenuBar");
  /* A left click opens the window rather than the menu. */
  g_assert_false (g_variant_get_boolean (is_menu));

  /* Start from a state that is not the first one checked, so every step is a change. */
  chp_tray_set_state (f->tray, CHP_TRAY_STATE_STOPPED);

  for (guint i = 0; i < G_N_ELEMENTS (expected); i++)
    {
      g_autofree char *status = NULL;
      g_autofree char *icon = NULL;
      g_autofree char *icon_file = NULL;
      g_autofree char *new_status = NULL;
      g_autoptr(GVariant) tooltip = NULL;
      g_autoptr(GVariant) pixmaps = NULL;
      const char *tip_icon, *tip_title, *tip_text;

      g_ptr_array_set_size (f->host_signals, 0);
      chp_tray_set_state (f->tray, expected[i].state);

      /* The host hears about it, and reads back what the person will see. */
      new_status = g_strdup_printf ("NewStatus ('%s',)", expected[i].status);
      chp_test_until (host_heard (f, new_status) && host_heard (f, "NewIcon") &&
                host_heard (f, "NewToolTip"));

      status = get_item_string (f, "Status");
      icon = get_item_string (f, "IconName");
      tooltip = get_item_property (f, "ToolTip");
      g_assert_cmpstr (status, ==, expected[i].status);
      g_assert_cmpstr (icon, ==, expected[i].icon);

      g_assert_true (g_variant_is_of_type (tooltip, G_VARIANT_TYPE ("(sa(iiay)ss)")));
      g_variant_get (tooltip, "(&s@a(iiay)&s&s)", &tip_icon, &pixmaps, &tip_title, &tip_text);
      g_assert_cmpstr (tip_icon, ==, expected[i].icon);
      g_assert_cmpstr (tip_title, ==, "Chaperone");
      g_assert_cmpstr (tip_text, !=, "");
      /* Each state reads differently. */
      g_assert_true (g_hash_table_add (descriptions, g_strdup (tip_text)));

      /* The icon exists in the theme directory the host is told about. */
      icon_file = g_strdup_printf ("%s/hicolor/symbolic/apps/%s.svg", theme_path, icon);
      g_assert_true (g_file_test (icon_file, G_FILE_TEST_IS_REGULAR));
    }

  {
    g_autofree char *tip_text = NULL;
    g_autoptr(GVariant) tooltip = NULL;

    chp_tray_set_state (f->tray, CHP_TRAY_STATE_NEEDS_YOU);
    tooltip = get_item_property (f, "ToolTip");
    g_variant_get_child (tooltip, 3, "s", &tip_text);
    g_assert_cmpstr (tip_text, ==, "2 requests are waiting for you");
  }

  g_dbus_connection_signal_unsubscribe (f->host_bus, subscription);
}

static void
test_menu_layout (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(GArray) menu = NULL;
  g_autoptr(GArray) stopped_menu = NULL;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GVariant) version = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *labels = NULL;
  g_autofree char *stopped_labels = NULL;
  g_autofree char *path = NULL;
  g_autofree char *updated = NULL;
  const char *label_only[] = { "label", NULL };
  const char *label;
  guint revision, stopped_revision;
  guint subscription;
  int needs_id;

  if (f->bus == NULL)
    return;

  f->watcher = watcher_start (f->bus);
  make_tray (f);
  chp_test_until (chp_tray_is_registered (f->tray));
  subscription = subscribe_host (f);
  path = menu_path (f);

  version = host_call (f, path, "org.freedesktop.DBus.Properties", "Get",
                       g_variant_new ("(ss)", MENU_IFACE, "Version"), G_VARIANT_TYPE ("(v)"),
                       &error);
  g_assert_no_error (error);
  {
    g_autoptr(GVariant) value = g_variant_get_child_value (version, 0);
    g_autoptr(GVariant) number = g_variant_get_variant (value);

    g_assert_cmpuint (g_variant_get_uint32 (number), >=, 3);
  }

  chp_tray_set_needs_count (f->tray, 3);
  menu = get_menu (f, &revision);
  labels = menu_labels (menu);
  g_assert_cmpstr (labels, ==, "Open|Needs you (3)|---|Stop all|---|Quit");

  /* A new request: the host is told the label changed, and reads the new one. */
  needs_id = menu_id (menu, "Needs you (3)");
  chp_tray_set_needs_count (f->tray, 4);
  updated = g_strdup_printf ("ItemsPropertiesUpdated ([(%d, {'label': <'Needs you (4)'>})]",
                             needs_id);
  chp_test_until (host_heard (f, updated));
  reply = host_call (f, path, MENU_IFACE, "GetGroupProperties",
                     g_variant_new ("(@ai^as)",
                                    g_variant_new_fixed_array (G_VARIANT_TYPE_INT32, &needs_id, 1,
                                                               sizeof (gint32)),
                                    label_only),
                     G_VARIANT_TYPE ("(a(ia{sv}))"), &error);
  g_assert_no_error (error);
  {
    g_autoptr(GVariant) items = g_variant_get_child_value (reply, 0);
    g_autoptr(GVariant) item = NULL;
    g_autoptr(GVariant) props = NULL;

    g_assert_cmpuint (g_variant_n_children (items), ==, 1);
    item = g_variant_get_child_value (items, 0);
    props = g_variant_get_child_value (item, 1);
    g_assert_true (g_variant_lookup (props, "label", "&s", &label));
    g_assert_cmpstr (label, ==, "Needs you (4)");
  }
  g_clear_pointer (&reply, g_variant_unref);

  /* AboutToShow: the layout is always current. */
  reply = host_call (f, path, MENU_IFACE, "AboutToShow", g_variant_new ("(i)", 0),
                     G_VARIANT_TYPE ("(b)"), &error);
  g_assert_no_error (error);
  g_clear_pointer (&reply, g_variant_unref);

  /* Stopping changes the layout, and the host is told to fetch it again. */
  chp_tray_set_state (f->tray, CHP_TRAY_STATE_STOPPED);
  chp_test_until (host_heard (f, "LayoutUpdated"));
  stopped_menu = get_menu (f, &stopped_revision);
  stopped_labels = menu_labels (stopped_menu);
  g_assert_cmpuint (stopped_revision, >, revision);
  g_assert_cmpstr (stopped_labels, ==,
                   "Open|Needs you (4)|---|Stopped — resume in Chaperone…|---|Quit");

  g_dbus_connection_signal_unsubscribe (f->host_bus, subscription);
}

static void
assert_counts (Fixture *f,
               guint    open,
               guint    needs_you,
               guint    stop_all,
               guint    quit)
{
  g_assert_cmpuint (f->n_open, ==, open);
  g_assert_cmpuint (f->n_needs_you, ==, needs_you);
  g_assert_cmpuint (f->n_stop_all, ==, stop_all);
  g_assert_cmpuint (f->n_quit, ==, quit);
  g_assert_cmpuint (f->n_any_signal, ==, open + needs_you + stop_all + quit);
}

typedef struct
{
  guint signal_id;
  gulong hook_id;
} Hook;

static GArray *
add_any_signal_hooks (Fixture *f)
{
  GArray *hooks = g_array_new (FALSE, FALSE, sizeof (Hook));
  g_autofree guint *ids = NULL;
  guint n_ids;

  ids = g_signal_list_ids (CHP_TYPE_TRAY, &n_ids);
  for (guint i = 0; i < n_ids; i++)
    {
      Hook hook = { ids[i], g_signal_add_emission_hook (ids[i], 0, any_signal_hook, f, NULL) };

      g_array_append_val (hooks, hook);
    }

  return hooks;
}

static void
remove_any_signal_hooks (GArray *hooks)
{
  for (guint i = 0; i < hooks->len; i++)
    g_signal_remove_emission_hook (g_array_index (hooks, Hook, i).signal_id,
                                   g_array_index (hooks, Hook, i).hook_id);
  g_array_unref (hooks);
}

static void
test_menu_events (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(GArray) menu = NULL;
  GArray *hooks;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  GVariantBuilder events;
  guint revision;
  int open_id, needs_id, stop_id, quit_id;

  if (f->bus == NULL)
    return;

  f->watcher = watcher_start (f->bus);
  make_tray (f);
  chp_test_until (chp_tray_is_registered (f->tray));
  hooks = add_any_signal_hooks (f);
  chp_tray_set_state (f->tray, CHP_TRAY_STATE_WORKING);
  chp_tray_set_needs_count (f->tray, 1);
  path = menu_path (f);

  menu = get_menu (f, &revision);
  open_id = menu_id (menu, "Open");
  needs_id = menu_id (menu, "Needs you (1)");
  stop_id = menu_id (menu, "Stop all");
  quit_id = menu_id (menu, "Quit");

  g_assert_true (send_event (f, open_id, "clicked"));
  assert_counts (f, 1, 0, 0, 0);
  g_assert_true (send_event (f, needs_id, "clicked"));
  assert_counts (f, 1, 1, 0, 0);
  g_assert_true (send_event (f, stop_id, "clicked"));
  assert_counts (f, 1, 1, 1, 0);
  g_assert_true (send_event (f, quit_id, "clicked"));
  assert_counts (f, 1, 1, 1, 1);

  /* Hovering is not clicking. */
  g_assert_true (send_event (f, stop_id, "hovered"));
  g_assert_true (send_event (f, stop_id, "opened"));
  assert_counts (f, 1, 1, 1, 1);

  /* Some hosts batch their events. */
  g_variant_builder_init (&events, G_VARIANT_TYPE ("a(isvu)"));
  g_variant_builder_add (&events, "(isvu)", needs_id, "clicked", g_variant_new_int32 (0), 0u);
  g_variant_builder_add (&events, "(isvu)", 999, "clicked", g_variant_new_int32 (0), 0u);
  reply = host_call (f, path, MENU_IFACE, "EventGroup", g_variant_new ("(a(isvu))", &events),
                     G_VARIANT_TYPE ("(ai)"), &error);
  g_assert_no_error (error);
  {
    g_autoptr(GVariant) errors = g_variant_get_child_value (reply, 0);
    gsize n;
    const gint32 *ids = g_variant_get_fixed_array (errors, &n, sizeof (gint32));

    g_assert_cmpuint (n, ==, 1);
    g_assert_cmpint (ids[0], ==, 999);
  }
  assert_counts (f, 1, 2, 1, 1);
  g_clear_pointer (&reply, g_variant_unref);

  /* A click on the icon itself opens the window. */
  reply = host_call (f, "/StatusNotifierItem", ITEM_IFACE, "Activate", g_variant_new ("(ii)", 0, 0),
                     G_VARIANT_TYPE_UNIT, &error);
  g_assert_no_error (error);
  assert_counts (f, 2, 2, 1, 1);

  remove_any_signal_hooks (hooks);
}

/* The tray's menu is callable by any process of the session, an agent with a shell included, so
 * it must not be able to undo the person's Stop. */
static void
test_stopped_never_resumes (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(GArray) menu = NULL;
  g_autoptr(GArray) running_menu = NULL;
  GArray *hooks;
  g_autofree guint *signal_ids = NULL;
  g_autoptr(GStrvBuilder) names_builder = g_strv_builder_new ();
  g_auto(GStrv) names = NULL;
  g_autofree char *joined = NULL;
  const char *event_names[] = { "clicked", "hovered", "opened", "closed", "resume" };
  guint revision, n_signals;
  int stop_id, stopped_id;

  if (f->bus == NULL)
    return;

  /* What the tray can ask of the app at all: nothing that resumes. */
  signal_ids = g_signal_list_ids (CHP_TYPE_TRAY, &n_signals);
  for (guint i = 0; i < n_signals; i++)
    g_strv_builder_add (names_builder, g_signal_name (signal_ids[i]));
  names = g_strv_builder_end (names_builder);
  joined = g_strjoinv (" ", names);
  g_assert_cmpstr (joined, ==, "open show-needs-you stop-all quit");

  f->watcher = watcher_start (f->bus);
  make_tray (f);
  chp_test_until (chp_tray_is_registered (f->tray));
  hooks = add_any_signal_hooks (f);

  running_menu = get_menu (f, &revision);
  stop_id = menu_id (running_menu, "Stop all");

  chp_tray_set_state (f->tray, CHP_TRAY_STATE_STOPPED);
  menu = get_menu (f, &revision);
  for (guint i = 0; i < menu->len; i++)
    {
      g_autofree char *lower = g_utf8_strdown (g_array_index (menu, MenuEntry, i).label, -1);

      g_assert_false (g_str_has_prefix (lower, "resume"));
      g_assert_cmpstr (lower, !=, "stop all");
    }

  /* The stopped entry opens the window, where Resume is a widget action. */
  stopped_id = menu_id (menu, "Stopped — resume in Chaperone…");
  g_assert_true (send_event (f, stopped_id, "clicked"));
  assert_counts (f, 1, 0, 0, 0);

  /* A stale "Stop all" from before is refused, not turned into something else. */
  g_assert_false (send_event (f, stop_id, "clicked"));
  assert_counts (f, 1, 0, 0, 0);

  /* Whatever anyone sends, the tray only ever opens, shows, stops or quits. */
  for (int id = -2; id < 40; id++)
    {
      for (guint e = 0; e < G_N_ELEMENTS (event_names); e++)
        send_event (f, id, event_names[e]);
    }
  g_assert_cmpuint (f->n_any_signal, ==, f->n_open + f->n_needs_you + f->n_stop_all + f->n_quit);
  g_assert_cmpuint (f->n_stop_all, ==, 0);
  g_assert_cmpint (chp_tray_get_state (f->tray), ==, CHP_TRAY_STATE_STOPPED);

  remove_any_signal_hooks (hooks);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *daemon = NULL;
  int status;

  g_test_init (&argc, &argv, NULL);

  daemon = g_find_program_in_path ("dbus-daemon");
  if (daemon != NULL)
    {
      test_bus = g_test_dbus_new (G_TEST_DBUS_NONE);
      g_test_dbus_up (test_bus);
    }

#define ADD(path, func) \
  g_test_add (path, Fixture, NULL, fixture_set_up, func, fixture_tear_down)

  ADD ("/chaperone/tray/registers", test_registers);
  ADD ("/chaperone/tray/watcher-appears-later", test_watcher_later);
  ADD ("/chaperone/tray/no-watcher", test_no_watcher);
  ADD ("/chaperone/tray/properties", test_properties);
  ADD ("/chaperone/tray/menu/layout", test_menu_layout);
  ADD ("/chaperone/tray/menu/events", test_menu_events);
  ADD ("/chaperone/tray/menu/stopped-never-resumes", test_stopped_never_resumes);

#undef ADD

  status = g_test_run ();

  if (test_bus != NULL)
    {
      g_test_dbus_down (test_bus);
      g_clear_object (&test_bus);
    }

  return status;
}
