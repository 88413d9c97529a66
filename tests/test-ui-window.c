/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-ui-window.c: the main window under a real display (Xvfb in the test run): each page's
 * empty state, items appearing as the engine's models change, the badge, Stop all / Resume and
 * its shortcut, the view switcher at 360 px and 1200 px, and Clear (of Activity's every event)
 * asking first. The trace browser has its own test (test-ui-traces.c). */
#include "config.h"

#include <adwaita.h>

#include "chp-activity-page.h"
#include "chp-agent-row.h"
#include "chp-device-row.h"
#include "chp-display-memory.h"
#include "chp-test-client.h"
#include "chp-ui-test.h"
#include "chp-window.h"

/* One application for every test: a second one with the same id could not register. */
static GtkApplication *app;

typedef struct
{
  ChpEngine *engine;
  char *dir;
  guint port;
  ChpWindow *window;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->engine = chp_test_engine_start ("chp-ui-window-XXXXXX", &f->dir, &f->port);
  f->window = chp_window_new (app);
  chp_window_set_engine (f->window, f->engine);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_object_add_weak_pointer (G_OBJECT (f->window), (gpointer *) &f->window);
  gtk_window_destroy (GTK_WINDOW (f->window));
  /* Gone, not only hidden: nothing of it is left to act on the engine the next test starts. */
  chp_test_until (f->window == NULL);
  g_clear_object (&f->engine);
  g_free (f->dir);
}

/* The page's own stack: the one with a "list" page (a dropdown has a stack of its own). */
static GtkWidget *
find_page_stack (GtkWidget *widget)
{
  if (GTK_IS_STACK (widget) && gtk_stack_get_child_by_name (GTK_STACK (widget), "list") != NULL)
    return widget;

  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = find_page_stack (child);

      if (found != NULL)
        return found;
    }

  return NULL;
}

static GtkWidget *
page (Fixture *f,
      GType    type)
{
  GtkWidget *widget = chp_ui_test_find_type (GTK_WIDGET (f->window), type);

  g_assert_nonnull (widget);
  return widget;
}

/* Whether the page of that type shows the text anywhere (a title, a row, a button). */
static gboolean
page_shows (Fixture    *f,
            const char *type_name,
            const char *text)
{
  return chp_ui_test_shows_text (page (f, g_type_from_name (type_name)), text);
}

/* Every page is a stack of "empty" and "list". */
static const char *
page_state (Fixture *f,
            GType    type)
{
  GtkWidget *stack = find_page_stack (page (f, type));

  return gtk_stack_get_visible_child_name (GTK_STACK (stack));
}

static void
show_at (Fixture *f,
         int      width)
{
  chp_ui_test_show_at (GTK_WINDOW (f->window), width, 700);
  g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (f->window)), ==, width);
}

static void
test_sizes (Fixture       *f,
            gconstpointer  data)
{
  GtkWidget *bar = chp_ui_test_find_type (GTK_WIDGET (f->window), ADW_TYPE_VIEW_SWITCHER_BAR);

  /* Narrow: the switcher moves to a bar at the bottom, and nothing is wider than the window.
   * The bar follows the header's switcher title, whose squeezer picks its child as it is
   * allocated: waited for (an ASan run under load once read it a frame early). */
  show_at (f, 360);
  chp_ui_test_assert_fits (GTK_WIDGET (f->window), 360, "the window at 360 px");
  chp_test_until (adw_view_switcher_bar_get_reveal (ADW_VIEW_SWITCHER_BAR (bar)));

  /* Wide: the switcher is in the header. */
  show_at (f, 1200);
  chp_test_until (!adw_view_switcher_bar_get_reveal (ADW_VIEW_SWITCHER_BAR (bar)));
}

static void
test_empty_states (Fixture       *f,
                   gconstpointer  data)
{
  const struct { const char *name; const char *type_name; const char *says; } pages[] = {
    { "needs-you", "ChpNeedsPage", "Nothing needs you" },
    { "browsers", "ChpBrowsersPage", "Set up your browsers" },
    { "grants", "ChpGrantsPage", "No grants" },
    { "agents", "ChpAgentsPage", "No agents connected" },
    { "activity", "ChpActivityPage", "No agent sessions yet" },
  };

  show_at (f, 800);
  /* The first run: nothing paired, nothing waiting. The window opens on the setup guide. */
  g_assert_cmpstr (chp_window_get_visible_page (f->window), ==, "browsers");
  /* The log has rows from start-up? None: no browser connected yet. */
  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    {
      GType type = g_type_from_name (pages[i].type_name);

      chp_window_show_page (f->window, pages[i].name);
      g_assert_cmpstr (chp_window_get_visible_page (f->window), ==, pages[i].name);
      chp_test_until (g_strcmp0 (page_state (f, type), "empty") == 0);
      g_assert_true (chp_ui_test_shows_text (page (f, type), pages[i].says));
    }

  /* Nothing paired, the first run too: the Browsers page is the setup guide, every step of it. */
  {
    GtkWidget *browsers = page (f, g_type_from_name ("ChpBrowsersPage"));
    GtkWidget *empty = gtk_stack_get_visible_child (GTK_STACK (find_page_stack (browsers)));
    GtkWidget *guide = chp_ui_test_find_type (empty, g_type_from_name ("ChpSetupGuide"));

    chp_window_show_page (f->window, "browsers");
    g_assert_nonnull (guide);
    chp_test_until (gtk_widget_get_mapped (guide));
    g_assert_true (chp_ui_test_shows_text (guide, "1. Add the extension"));
    g_assert_true (chp_ui_test_shows_text (guide, "2. Let the extension reach Chaperone"));
    g_assert_true (chp_ui_test_shows_text (guide, "3. Pair"));
    g_assert_true (chp_ui_test_shows_text (guide, "4. Connect an agent"));
    g_assert_true (chp_ui_test_shows_text (guide, "claude mcp add chaperone -- chaperone-mcp"));
    g_assert_true (chp_ui_test_shows_text (guide, "Check Setup"));
  }
}

static void
add_device (Fixture    *f,
            const char *id,
            const char *name)
{
  ChpDeviceInfo info = {
    .device_id = (char *) id, .installation_id = "inst", .origin = CHP_TEST_ORIGIN,
    .name = (char *) name, .browser = "Chromium 156", .key_x = "x", .key_y = "y",
    .created_at = 1000, .paired_at = 1000,
  };

  chp_device_list_add_or_update (chp_engine_get_devices (f->engine), &info);
}

static JsonArray *
json_array (const char *text)
{
  g_autoptr(JsonNode) node = json_from_string (text, NULL);

  g_assert_nonnull (node);
  return json_array_ref (json_node_get_array (node));
}

static void
add_grant (Fixture    *f,
           const char *device_id,
           const char *label)
{
  g_autofree char *text = g_strdup_printf (
    "[{\"grantId\":\"g1\",\"taskId\":\"t1\",\"label\":\"%s\","
    "\"scopes\":[\"browser.tabs.read\",\"browser.dom.read\",\"browser.dom.write\"],"
    "\"targets\":[{\"tabId\":7,\"frameId\":0,\"documentId\":\"D1\","
    "\"origin\":\"https://example.org\",\"url\":\"https://example.org/a\","
    "\"title\":\"Menu\"}],\"createdAt\":1,\"expiresAt\":%" G_GINT64_FORMAT "}]",
    label, g_get_real_time () / 1000 + 3600 * 1000);
  g_autoptr(JsonArray) grants = json_array (text);
  g_autoptr(GError) error = NULL;

  g_assert_true (chp_grant_list_set_device_grants (chp_engine_get_grants (f->engine), device_id,
                                                   grants, &error));
  g_assert_no_error (error);
}

static void
add_handoff (Fixture    *f,
             const char *device_id)
{
  g_autofree char *text = g_strdup_printf (
    "{\"handoffId\":\"h1\",\"tabId\":7,\"url\":\"https://example.org/login\","
    "\"title\":\"Sign in\",\"origin\":\"https://example.org\",\"reason\":\"mfa\","
    "\"message\":\"Type the code from your phone\",\"state\":\"waiting\","
    "\"createdAt\":%" G_GINT64_FORMAT "}", g_get_real_time () / 1000 - 120 * 1000);
  g_autoptr(JsonNode) node = json_from_string (text, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpHandoff) handoff = NULL;

  handoff = chp_handoff_list_apply (chp_engine_get_handoffs (f->engine), device_id,
                                    json_node_get_object (node), &error);
  g_assert_no_error (error);
}

static ChpPairingRequest *
add_pairing (Fixture *f)
{
  ChpPairingManager *pairing = chp_engine_get_pairing (f->engine);
  ChpPairingRequest *request = chp_pairing_request_new ("r1", "inst-2",
                                                        "chrome-extension://bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                                                        "Chromium 157",
                                                        g_get_real_time () / 1000 + 100000);

  chp_pairing_request_set_code (request, "482913");
  chp_pairing_manager_track (pairing, request);
  chp_pairing_manager_show (pairing, request);
  return request;
}

static void
test_items_appear (Fixture       *f,
                   gconstpointer  data)
{
  g_autoptr(ChpPairingRequest) request = NULL;
  g_autoptr(ChpAgentSession) session = chp_agent_session_new ("a1", "Test Agent",
                                                              g_get_real_time () / 1000);
  AdwViewStack *stack = ADW_VIEW_STACK (chp_ui_test_find_type (GTK_WIDGET (f->window),
                                                               ADW_TYPE_VIEW_STACK));
  AdwViewStackPage *needs =
    adw_view_stack_get_page (stack, adw_view_stack_get_child_by_name (stack, "needs-you"));
  GtkWidget *row;

  show_at (f, 800);

  add_device (f, "d1", "Work Chromium");
  /* The window turns to what just happened: a browser paired, a grant made, something waits. */
  g_assert_cmpstr (chp_window_get_visible_page (f->window), ==, "browsers");
  g_assert_cmpstr (page_state (f, g_type_from_name ("ChpBrowsersPage")), ==, "list");
  g_assert_true (page_shows (f, "ChpBrowsersPage", "Work Chromium"));
  g_assert_true (page_shows (f, "ChpBrowsersPage", "No active grants"));
  /* The setup guide is gone with the first pairing: nothing of it stays in the window. */
  g_assert_null (chp_ui_test_find_type (GTK_WIDGET (f->window), g_type_from_name ("ChpSetupGuide")));

  add_grant (f, "d1", "Book a table");
  chp_test_until (g_strcmp0 (chp_window_get_visible_page (f->window), "grants") == 0);
  g_assert_cmpstr (page_state (f, g_type_from_name ("ChpGrantsPage")), ==, "list");
  g_assert_true (page_shows (f, "ChpGrantsPage", "Book a table"));
  /* Scopes in plain words, the group named after its browser, the count on the browser. */
  g_assert_true (page_shows (f, "ChpGrantsPage", "click and type"));
  g_assert_true (page_shows (f, "ChpGrantsPage", "Work Chromium"));
  g_assert_true (page_shows (f, "ChpBrowsersPage", "1 active grant"));

  /* Needs you: a card per item, and the badge counts them. */
  g_assert_cmpuint (adw_view_stack_page_get_badge_number (needs), ==, 0);
  g_assert_false (adw_view_stack_page_get_needs_attention (needs));
  add_handoff (f, "d1");
  chp_test_until (g_strcmp0 (chp_window_get_visible_page (f->window), "needs-you") == 0);
  request = add_pairing (f);
  chp_test_until (adw_view_stack_page_get_badge_number (needs) == 2);
  g_assert_cmpstr (page_state (f, g_type_from_name ("ChpNeedsPage")), ==, "list");
  g_assert_true (adw_view_stack_page_get_needs_attention (needs));
  g_assert_true (page_shows (f, "ChpNeedsPage", "482 913"));
  g_assert_true (page_shows (f, "ChpNeedsPage", "Chromium 157"));
  g_assert_true (page_shows (f, "ChpNeedsPage", "Enter a verification code"));
  g_assert_true (page_shows (f, "ChpNeedsPage", "Waiting for 2 minutes"));
  g_assert_true (page_shows (f, "ChpNeedsPage", "Tab: Sign in"));

  /* The request ends: its card goes, the badge follows. */
  chp_pairing_manager_finish (chp_engine_get_pairing (f->engine), request,
                              CHP_PAIRING_STATE_REJECTED, g_get_real_time () / 1000);
  chp_test_until (adw_view_stack_page_get_badge_number (needs) == 1);
  g_assert_false (page_shows (f, "ChpNeedsPage", "482 913"));

  /* Agents: Pause is the session's request, made through the row's widget action. */
  chp_agent_session_list_add (chp_engine_get_agent_sessions (f->engine), session);
  chp_test_until (g_strcmp0 (page_state (f, g_type_from_name ("ChpAgentsPage")), "list") == 0);
  g_assert_true (page_shows (f, "ChpAgentsPage", "Test Agent"));
  row = chp_ui_test_find_type (page (f, g_type_from_name ("ChpAgentsPage")), CHP_TYPE_AGENT_ROW);
  g_assert_nonnull (row);
  g_assert_true (gtk_widget_activate_action (row, "agent.pause", NULL));
  g_assert_cmpint (chp_agent_session_get_state (session), ==, CHP_AGENT_SESSION_PAUSED);
  g_assert_true (chp_ui_test_shows_text (row, "Paused"));
  g_assert_true (gtk_widget_activate_action (row, "agent.resume", NULL));
  g_assert_cmpint (chp_agent_session_get_state (session), ==, CHP_AGENT_SESSION_RUNNING);
  g_assert_true (gtk_widget_activate_action (row, "agent.disconnect", NULL));
  g_assert_cmpint (chp_agent_session_get_state (session), ==, CHP_AGENT_SESSION_DISCONNECTED);

  /* The browser is revoked: its card, its grants and its handoff go. */
  chp_device_list_remove (chp_engine_get_devices (f->engine), "d1");
  chp_test_until (g_strcmp0 (page_state (f, g_type_from_name ("ChpBrowsersPage")), "empty") == 0);
  /* Nothing paired again: the guide is back. */
  g_assert_nonnull (chp_ui_test_find_type (GTK_WIDGET (f->window), g_type_from_name ("ChpSetupGuide")));
  g_assert_cmpstr (page_state (f, g_type_from_name ("ChpGrantsPage")), ==, "empty");
  g_assert_cmpstr (page_state (f, g_type_from_name ("ChpNeedsPage")), ==, "empty");
}

static GtkButton *
stop_button (Fixture *f)
{
  GtkWidget *header = chp_ui_test_find_type (GTK_WIDGET (f->window), ADW_TYPE_HEADER_BAR);

  return GTK_BUTTON (chp_ui_test_find_type (header, GTK_TYPE_BUTTON));
}

static gboolean
activate_shortcut (GtkWidget  *widget,
                   const char *trigger_text)
{
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (widget);
  g_autoptr(GtkShortcutTrigger) wanted = gtk_shortcut_trigger_parse_string (trigger_text);

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr(GObject) controller = g_list_model_get_item (controllers, i);

      if (!GTK_IS_SHORTCUT_CONTROLLER (controller))
        continue;

      for (guint j = 0; j < g_list_model_get_n_items (G_LIST_MODEL (controller)); j++)
        {
          g_autoptr(GtkShortcut) shortcut = g_list_model_get_item (G_LIST_MODEL (controller), j);

          if (gtk_shortcut_trigger_equal (gtk_shortcut_get_trigger (shortcut), wanted))
            return gtk_shortcut_action_activate (gtk_shortcut_get_action (shortcut), 0, widget,
                                                 gtk_shortcut_get_arguments (shortcut));
        }
    }

  return FALSE;
}

static void
test_stop_all (Fixture       *f,
               gconstpointer  data)
{
  GtkButton *button;

  show_at (f, 800);
  button = stop_button (f);
  g_assert_cmpstr (gtk_button_get_label (button), ==, "_Stop All");
  g_assert_false (chp_engine_get_stopped (f->engine));

  /* The button: Stop all, then Resume All on the same button. */
  g_signal_emit_by_name (button, "clicked");
  g_assert_true (chp_engine_get_stopped (f->engine));
  g_assert_cmpstr (gtk_button_get_label (button), ==, "_Resume All");
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (f->window), "All agents are stopped"));

  g_signal_emit_by_name (button, "clicked");
  g_assert_false (chp_engine_get_stopped (f->engine));
  g_assert_cmpstr (gtk_button_get_label (button), ==, "_Stop All");

  /* Ctrl+Shift+E stops, and pressed again it does not resume. */
  g_assert_true (activate_shortcut (GTK_WIDGET (f->window), "<Control><Shift>e"));
  g_assert_true (chp_engine_get_stopped (f->engine));
  g_assert_true (activate_shortcut (GTK_WIDGET (f->window), "<Control><Shift>e"));
  g_assert_true (chp_engine_get_stopped (f->engine));

  /* Stopped elsewhere (the tray): the window follows. */
  chp_engine_resume_all (f->engine);
  chp_engine_stop_all (f->engine, "tray");
  g_assert_cmpstr (gtk_button_get_label (stop_button (f)), ==, "_Resume All");
}

static AdwMessageDialog *
find_dialog (void)
{
  GListModel *toplevels = gtk_window_get_toplevels ();

  for (guint i = 0; i < g_list_model_get_n_items (toplevels); i++)
    {
      g_autoptr(GObject) window = g_list_model_get_item (toplevels, i);

      if (ADW_IS_MESSAGE_DIALOG (window) && gtk_widget_get_visible (GTK_WIDGET (window)))
        return ADW_MESSAGE_DIALOG (window);
    }

  return NULL;
}

/* The activity log's own stack (the page's first is the sessions'). */
static const char *
events_state (ChpActivityPage *activity)
{
  GtkWidget *scroller = GTK_WIDGET (chp_activity_page_get_scroller (activity));

  return gtk_stack_get_visible_child_name (GTK_STACK (gtk_widget_get_parent (scroller)));
}

static gboolean
list_has_n (gpointer data)
{
  gpointer *args = data;

  return g_list_model_get_n_items (args[0]) == GPOINTER_TO_UINT (args[1]) &&
         !chp_audit_list_get_loading (args[0]);
}

static void
test_clear_asks (Fixture       *f,
                 gconstpointer  data)
{
  ChpActivityPage *activity = CHP_ACTIVITY_PAGE (page (f, CHP_TYPE_ACTIVITY_PAGE));
  ChpAuditList *list = chp_activity_page_get_audit_list (activity);
  ChpStore *store = chp_engine_get_store (f->engine);
  gpointer five[] = { list, GUINT_TO_POINTER (5) };
  gpointer six[] = { list, GUINT_TO_POINTER (6) };
  gpointer none[] = { list, GUINT_TO_POINTER (0) };
  AdwMessageDialog *dialog;

  show_at (f, 1200);
  chp_window_show_page (f->window, "activity");
  /* Every event, not the agent sessions: pairings and connections are no agent's. */
  chp_activity_page_show_view (activity, "events");
  chp_test_until (g_strcmp0 (events_state (activity), "empty") == 0);
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (activity), "No activity yet"));
  for (guint i = 0; i < 5; i++)
    {
      g_autoptr(ChpAuditEntry) entry = chp_audit_entry_new ("call", "browser.snapshot", "ok",
                                                            NULL, 3, NULL);

      chp_store_add_audit_async (store, entry, NULL, NULL, NULL);
    }
  g_assert_true (chp_test_spin_until (list_has_n, five, 5000));
  chp_test_until (g_strcmp0 (events_state (activity), "list") == 0);

  /* Clear asks first; Cancel keeps everything. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (activity), "activity.clear", NULL));
  dialog = find_dialog ();
  g_assert_nonnull (dialog);
  g_assert_cmpstr (adw_message_dialog_get_default_response (dialog), ==, "cancel");
  adw_message_dialog_response (dialog, "cancel");
  /* The store runs its requests in order: a sixth row seen after Cancel is proof that no clear
   * was asked before it (the list would then hold the new row alone). */
  {
    g_autoptr(ChpAuditEntry) entry = chp_audit_entry_new ("call", "browser.snapshot", "ok", NULL,
                                                          3, NULL);

    chp_store_add_audit_async (store, entry, NULL, NULL, NULL);
  }
  g_assert_true (chp_test_spin_until (list_has_n, six, 5000));

  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (activity), "activity.clear", NULL));
  dialog = find_dialog ();
  g_assert_nonnull (dialog);
  adw_message_dialog_response (dialog, "clear");
  g_assert_true (chp_test_spin_until (list_has_n, none, 5000));
  chp_test_until (g_strcmp0 (events_state (activity), "empty") == 0);
}

static void
test_rename (Fixture       *f,
             gconstpointer  data)
{
  AdwMessageDialog *dialog;
  GtkWidget *row;
  ChpDevice *device;

  show_at (f, 800);
  /* A device the store knows, so the rename has something to update. */
  {
    ChpDeviceInfo info = {
      .device_id = "d9", .installation_id = "inst", .origin = CHP_TEST_ORIGIN,
      .name = "Old Name", .browser = "Chromium", .key_x = "x", .key_y = "y",
      .created_at = 1, .paired_at = 1,
    };

    chp_store_save_device_async (chp_engine_get_store (f->engine), &info, NULL, NULL, NULL);
    chp_device_list_add_or_update (chp_engine_get_devices (f->engine), &info);
  }
  row = chp_ui_test_find_type (page (f, g_type_from_name ("ChpBrowsersPage")), CHP_TYPE_DEVICE_ROW);
  g_assert_nonnull (row);
  g_assert_true (gtk_widget_activate_action (row, "device.rename", NULL));
  dialog = find_dialog ();
  g_assert_nonnull (dialog);
  gtk_editable_set_text (GTK_EDITABLE (adw_message_dialog_get_extra_child (dialog)), "  New Name ");
  adw_message_dialog_response (dialog, "rename");
  device = chp_device_list_lookup (chp_engine_get_devices (f->engine), "d9");
  chp_test_until (g_strcmp0 (chp_device_get_name (device), "New Name") == 0);
  g_assert_true (chp_ui_test_shows_text (row, "New Name"));
}

/* With one of each item, nothing makes the window wider than 360 px. */
static void
test_narrow_with_items (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(ChpPairingRequest) request = NULL;
  g_autoptr(ChpAgentSession) session = chp_agent_session_new ("a1",
                                                              "A Rather Long Agent Client Name", 1);
  const char *pages[] = { "needs-you", "browsers", "grants", "agents", "activity" };

  add_device (f, "d1", "Work Chromium");
  add_grant (f, "d1", "Book a table");
  add_handoff (f, "d1");
  request = add_pairing (f);
  chp_agent_session_set_current_step (session, "Filling in the booking form");
  chp_agent_session_list_add (chp_engine_get_agent_sessions (f->engine), session);
  show_at (f, 360);

  for (guint i = 0; i < G_N_ELEMENTS (pages); i++)
    {
      chp_window_show_page (f->window, pages[i]);
      chp_ui_test_wait_frame (GTK_WIDGET (f->window));
      chp_ui_test_assert_fits (GTK_WIDGET (f->window), 360, pages[i]);
    }
}

/* How many System V shared memory segments the process maps: cairo's images for X (MIT-SHM). */
static guint
shared_images_mapped (void)
{
  g_autofree char *maps = NULL;
  guint n = 0;

  g_assert_true (g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL));
  for (const char *at = maps; (at = strstr (at, "SYSV")) != NULL; at++)
    n++;
  return n;
}

/* Closed to the tray, the app gives back what drawing its window kept (the X server's shared
 * images, Pango's fonts, GTK's icon lookups); the window opened again draws its pages as before. */
static void
test_tray_gives_drawing_memory_back (Fixture       *f,
                                     gconstpointer  data)
{
  GdkDisplay *display = gtk_widget_get_display (GTK_WIDGET (f->window));

  show_at (f, 800);
  chp_window_show_page (f->window, "activity");
  chp_ui_test_wait_frame (GTK_WIDGET (f->window));
  if (shared_images_mapped () == 0)
    {
      g_test_skip ("this display draws without shared images (not X11, or no MIT-SHM)");
      return;
    }

  g_object_add_weak_pointer (G_OBJECT (f->window), (gpointer *) &f->window);
  gtk_window_destroy (GTK_WINDOW (f->window));
  chp_test_until (f->window == NULL);
  chp_display_release_memory (display);
  g_assert_cmpuint (shared_images_mapped (), ==, 0);

  /* Opened again from the tray: it draws, with its text (fonts loaded again) and icons. */
  f->window = chp_window_new (app);
  chp_window_set_engine (f->window, f->engine);
  show_at (f, 800);
  for (guint i = 0; i < 2; i++)
    {
      chp_window_show_page (f->window, i == 0 ? "activity" : "browsers");
      chp_ui_test_wait_frame (GTK_WIDGET (f->window));
    }
  g_assert_cmpuint (shared_images_mapped (), >, 0);
  {
    GtkWidget *browsers = page (f, g_type_from_name ("ChpBrowsersPage"));
    PangoLayout *layout;
    int width = 0;

    g_assert_true (chp_ui_test_shows_text (browsers, "1. Add the extension"));
    /* Its text laid out with the fonts Pango loaded again: a line of it has a width. */
    layout = gtk_widget_create_pango_layout (browsers, "1. Add the extension");
    pango_layout_get_pixel_size (layout, &width, NULL);
    g_object_unref (layout);
    g_assert_cmpint (width, >, 50);
  }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  app = chp_ui_test_app_new ("io.github.chaperone.Chaperone.TestWindow",
                             "/chaperone/ui/window/skipped");
  if (app == NULL)
    return g_test_run ();

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/chaperone/ui/window/sizes", test_sizes);
  ADD ("/chaperone/ui/window/empty-states", test_empty_states);
  ADD ("/chaperone/ui/window/items-appear", test_items_appear);
  ADD ("/chaperone/ui/window/stop-all", test_stop_all);
  ADD ("/chaperone/ui/window/clear-asks", test_clear_asks);
  ADD ("/chaperone/ui/window/rename", test_rename);
  ADD ("/chaperone/ui/window/narrow-with-items", test_narrow_with_items);
  ADD ("/chaperone/ui/window/tray-gives-drawing-memory-back", test_tray_gives_drawing_memory_back);
#undef ADD

  return g_test_run ();
}
