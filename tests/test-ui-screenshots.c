/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-ui-screenshots.c: renders every page of the main window, light and dark, 360 px and
 * 1200 px wide, to PNG files in $CHAPERONE_SCREENSHOT_DIR, with the models holding one of each
 * kind of item; Activity three times: the agent sessions, a session's timeline (a held step, an
 * error with its screenshot shown) and every event. A render that is blank (one colour) or
 * shows the wrong page fails. */
#include "config.h"

#include <adwaita.h>
#include <gdk-pixbuf/gdk-pixbuf.h>

#include "chp-activity-page.h"
#include "chp-step-row.h"
#include "chp-test-client.h"
#include "chp-ui-test.h"
#include "chp-window.h"

static GtkApplication *app;

static const char * const page_names[] = { "needs-you", "browsers", "grants", "agents", "activity" };

static void
populate (ChpEngine *engine)
{
  ChpDeviceInfo info = {
    .device_id = "d1", .installation_id = "inst", .origin = CHP_TEST_ORIGIN,
    .name = "Work Chromium", .browser = "Chromium 156", .key_x = "x", .key_y = "y",
    .created_at = 1000, .paired_at = 1000,
    .last_seen = g_get_real_time () / 1000 - 5 * 60 * 1000,
  };
  g_autofree char *grants_text = g_strdup_printf (
    "[{\"grantId\":\"g1\",\"taskId\":\"t1\",\"label\":\"Book a table for Friday\","
    "\"scopes\":[\"browser.tabs.read\",\"browser.dom.read\",\"browser.dom.write\","
    "\"browser.human.takeover\"],"
    "\"targets\":[{\"tabId\":7,\"frameId\":0,\"documentId\":\"D1\","
    "\"origin\":\"https://bistro.example\",\"url\":\"https://bistro.example/book\","
    "\"title\":\"Reservations — Bistro\"}],\"createdAt\":1,\"expiresAt\":%" G_GINT64_FORMAT "}]",
    g_get_real_time () / 1000 + 47 * 60 * 1000);
  g_autofree char *handoff_text = g_strdup_printf (
    "{\"handoffId\":\"h1\",\"tabId\":7,\"url\":\"https://bistro.example/login\","
    "\"title\":\"Sign in — Bistro\",\"origin\":\"https://bistro.example\",\"reason\":\"mfa\","
    "\"message\":\"Please type the code the site sent to your phone\",\"state\":\"waiting\","
    "\"createdAt\":%" G_GINT64_FORMAT "}", g_get_real_time () / 1000 - 3 * 60 * 1000);
  g_autoptr(JsonNode) grants = json_from_string (grants_text, NULL);
  g_autoptr(JsonNode) handoff_node = json_from_string (handoff_text, NULL);
  g_autoptr(ChpHandoff) handoff = NULL;
  g_autoptr(ChpPairingRequest) request = NULL;
  g_autoptr(ChpAgentSession) session = NULL;
  g_autoptr(ChpAgentSession) looping = NULL;
  g_autofree char *hold_text = g_strdup_printf (
    "{\"holdId\":\"k1\",\"state\":\"held\",\"kind\":\"outward\",\"reason\":\"label\","
    "\"word\":\"send\",\"control\":\"Confirm booking\",\"site\":\"https://bistro.example\","
    "\"fields\":[{\"name\":\"Name\",\"value\":\"Ada Lovelace\"},"
    "{\"name\":\"Guests\",\"value\":\"4\"},"
    "{\"name\":\"Card security code\",\"secret\":true,\"length\":3}],"
    "\"signature\":\"9f2c\",\"tabId\":7,\"createdAt\":%" G_GINT64_FORMAT "}",
    g_get_real_time () / 1000 - 60 * 1000);
  g_autoptr(JsonNode) hold_node = json_from_string (hold_text, NULL);
  g_autoptr(ChpHold) hold = NULL;
  g_autoptr(JsonNode) plan_args = json_from_string (
    "{\"summary\":\"Save Friday's booking in the calendar\",\"steps\":["
    "{\"kind\":\"create\",\"site\":\"calendar.example\",\"summary\":\"Add the event\"},"
    "{\"kind\":\"edit\",\"site\":\"calendar.example\",\"summary\":\"Invite Grace\"}]}", NULL);
  g_autoptr(ChpPlan) waiting_plan = NULL;
  g_autoptr(ChpPlan) running_plan = NULL;
  ChpStore *store = chp_engine_get_store (engine);
  const char *methods[] = { "browser.snapshot", "browser.click", "browser.type", "browser.tabs" };

  chp_device_list_add_or_update (chp_engine_get_devices (engine), &info);
  g_assert_true (chp_grant_list_set_device_grants (chp_engine_get_grants (engine), "d1",
                                                   json_node_get_array (grants), NULL));
  handoff = chp_handoff_list_apply (chp_engine_get_handoffs (engine), "d1",
                                    json_node_get_object (handoff_node), NULL);

  request = chp_pairing_request_new ("r1", "inst-2", "chrome-extension://bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                                     "Chromium 157 (Home)", g_get_real_time () / 1000 + 95 * 1000);
  chp_pairing_request_set_code (request, "482913");
  chp_pairing_manager_track (chp_engine_get_pairing (engine), request);
  chp_pairing_manager_show (chp_engine_get_pairing (engine), request);

  session = chp_agent_session_new ("a1", "Claude Desktop", g_get_real_time () / 1000 - 600000);
  chp_agent_session_set_calls (session, 42);
  chp_agent_session_set_current_step (session, "Filling in the booking form");
  chp_agent_session_set_last_error (session, "stale_node");
  chp_agent_session_list_add (chp_engine_get_agent_sessions (engine), session);

  /* A held send, a plan that waits, an approved plan one step in, and an agent the loop guard
   * paused: every kind of card. */
  hold = chp_hold_list_apply (chp_engine_get_holds (engine), "d1",
                              json_node_get_object (hold_node), NULL);
  g_assert_nonnull (hold);
  waiting_plan = chp_engine_post_plan (engine, "a2", "Cursor", json_node_get_object (plan_args),
                                       NULL);
  g_assert_nonnull (waiting_plan);
  running_plan = chp_engine_post_plan (engine, "a1", "Claude Desktop",
                                       json_node_get_object (plan_args), NULL);
  g_assert_nonnull (running_plan);
  g_assert_true (chp_engine_decide_plan (engine, chp_plan_get_id (running_plan), TRUE));
  chp_plan_list_use_step (chp_engine_get_plans (engine), chp_plan_get_id (running_plan),
                          "calendar.example");
  looping = chp_agent_session_new ("a2", "Cursor", g_get_real_time () / 1000 - 120000);
  chp_agent_session_set_calls (looping, 9);
  chp_agent_session_list_add (chp_engine_get_agent_sessions (engine), looping);
  chp_agent_session_pause_for (looping, "repeated");

  for (guint i = 0; i < 60; i++)
    {
      g_autoptr(ChpAuditEntry) entry = NULL;

      if (i % 7 == 3)
        entry = chp_audit_entry_new ("call", methods[i % 4], "error", "d1", 4 + i % 9, "stale_node");
      else if (i % 11 == 0)
        entry = chp_audit_entry_new ("connection", "auth", "accepted", "d1", 0, NULL);
      else
        entry = chp_audit_entry_new ("call", methods[i % 4], "ok", "d1", 2 + i % 13, NULL);
      chp_store_add_audit_async (store, entry, NULL, NULL, NULL);
    }
}

/* A page as a downscaled screenshot would show it: a header, a form, a button. */
static GBytes *
page_jpeg (int width,
           int height)
{
  g_autoptr(GdkPixbuf) pixbuf = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, width, height);
  guchar *pixels = gdk_pixbuf_get_pixels (pixbuf);
  int stride = gdk_pixbuf_get_rowstride (pixbuf);
  char *buffer = NULL;
  gsize size = 0;

  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        guchar *p = pixels + y * stride + x * 3;
        gboolean header = y < height / 6;
        gboolean field = x > width / 8 && x < width * 5 / 8 &&
                         ((y > height / 3 && y < height / 3 + 18) ||
                          (y > height / 2 && y < height / 2 + 18));
        gboolean button = x > width / 8 && x < width / 3 && y > height * 2 / 3 &&
                          y < height * 2 / 3 + 24;

        p[0] = header ? 52 : button ? 53 : field ? 235 : 250;
        p[1] = header ? 101 : button ? 132 : field ? 235 : 250;
        p[2] = header ? 164 : button ? 228 : field ? 235 : 250;
      }
  g_assert_true (gdk_pixbuf_save_to_buffer (pixbuf, &buffer, &size, "jpeg", NULL, "quality", "85",
                                            NULL));
  return g_bytes_new_take (buffer, size);
}

static void
trace_step (ChpStore         *store,
            ChpTraceHandle   *trace,
            const char       *tool,
            const char       *host,
            const char       *path,
            const char       *role,
            const char       *name,
            gint64            run_ms,
            const char       *error_code,
            ChpTraceDecision  decision_kind,
            const char       *decision)
{
  ChpTraceStep step = {
    .tool = (char *) tool, .host = (char *) host, .path = (char *) path, .role = (char *) role,
    .name = (char *) name, .queue_us = 1500, .run_us = run_ms * 1000, .page_us = run_ms * 400,
    .outcome = error_code != NULL ? "error" : "ok", .error_code = (char *) error_code,
    .rung = "page", .decision_kind = decision_kind, .decision = (char *) decision,
    .decision_wait_us = 8 * G_USEC_PER_SEC,
    .snippet = error_code != NULL ? "Reservations — Table for 4, Friday 19:30" : NULL,
  };

  chp_store_trace_add_step (store, trace, &step);
}

/* Three agent sessions: one that failed after a held act the person approved, with a
 * screenshot of where it failed; one that completed; one still running. Returns the first's id. */
static char *
populate_traces (ChpEngine *engine)
{
  ChpStore *store = chp_engine_get_store (engine);
  g_autoptr(ChpTraceHandle) failed = chp_store_trace_begin (store, "Claude Desktop",
                                                            "Work Chromium");
  g_autoptr(ChpTraceHandle) done = chp_store_trace_begin (store, "Cursor", "Work Chromium");
  g_autoptr(ChpTraceHandle) running = chp_store_trace_begin (store, "Claude Desktop",
                                                             "Work Chromium");
  g_autoptr(GBytes) jpeg = page_jpeg (480, 300);
  char *id = g_strdup (chp_trace_handle_get_id (failed));

  trace_step (store, failed, "browser_navigate", "bistro.example", "/book", NULL, NULL, 620,
              NULL, CHP_TRACE_DECISION_NONE, NULL);
  trace_step (store, failed, "browser_act", "bistro.example", "/book", "button",
              "Confirm booking", 240, NULL, CHP_TRACE_DECISION_HOLD, "approved");
  trace_step (store, failed, "browser_act", "bistro.example", "/book/confirm", "link",
              "Add to calendar", 180, "stale_node", CHP_TRACE_DECISION_NONE, NULL);
  chp_store_trace_add_shot (store, failed, 3, jpeg, 480, 300);
  trace_step (store, failed, "browser_snapshot", "bistro.example", "/book/confirm", NULL, NULL,
              95, NULL, CHP_TRACE_DECISION_NONE, NULL);
  chp_store_trace_end (store, failed, "failed");

  trace_step (store, done, "browser_tabs", NULL, NULL, NULL, NULL, 12, NULL,
              CHP_TRACE_DECISION_NONE, NULL);
  trace_step (store, done, "browser_act", "calendar.example", "/new", "button", "Save", 310,
              NULL, CHP_TRACE_DECISION_PLAN, "approved");
  chp_store_trace_end (store, done, "completed");

  trace_step (store, running, "browser_snapshot", "news.example", "/today", NULL, NULL, 140,
              NULL, CHP_TRACE_DECISION_NONE, NULL);

  g_signal_emit_by_name (engine, "trace-changed", id);
  return id;
}

/* The leaflet has finished sliding to its page. */
static void
wait_slide (ChpActivityPage *activity)
{
  AdwLeaflet *leaflet = ADW_LEAFLET (chp_ui_test_find_type (GTK_WIDGET (activity),
                                                            ADW_TYPE_LEAFLET));

  chp_test_until (!adw_leaflet_get_child_transition_running (leaflet));
}

/* The failed session's timeline, its screenshot shown. */
static void
open_timeline (ChpActivityPage *activity,
               const char      *id)
{
  ChpTimelineView *timeline = chp_activity_page_get_timeline_view (activity);
  GListModel *sessions = G_LIST_MODEL (chp_activity_page_get_trace_list (activity));
  ChpTraceStepList *steps;
  g_autoptr(ChpTraceStepItem) error_step = NULL;

  for (guint i = 0; i < g_list_model_get_n_items (sessions); i++)
    {
      g_autoptr(ChpTraceItem) item = g_list_model_get_item (sessions, i);

      if (g_strcmp0 (chp_trace_item_get_id (item), id) == 0)
        g_assert_true (chp_sessions_view_activate (chp_activity_page_get_sessions_view (activity),
                                                   i));
    }
  steps = chp_timeline_view_get_steps (timeline);
  g_assert_nonnull (steps);
  chp_test_until (g_list_model_get_n_items (G_LIST_MODEL (steps)) == 4);
  error_step = g_list_model_get_item (G_LIST_MODEL (steps), 2);
  chp_step_row_toggle_shot (steps, error_step);
  chp_test_until (g_object_get_data (G_OBJECT (error_step), "chp-step-texture") != NULL);
  wait_slide (activity);
}

/* Distinct colours among a sample of pixels: a blank or failed render has one or two. */
static guint
count_colours (GdkTexture *texture)
{
  int width = gdk_texture_get_width (texture);
  int height = gdk_texture_get_height (texture);
  gsize stride = (gsize) width * 4;
  g_autofree guchar *pixels = g_malloc (stride * height);
  g_autoptr(GHashTable) colours = g_hash_table_new (NULL, NULL);

  gdk_texture_download (texture, pixels, stride);
  for (int y = 0; y < height; y += 3)
    for (int x = 0; x < width; x += 3)
      {
        guint32 pixel;

        memcpy (&pixel, pixels + y * stride + x * 4, 4);
        g_hash_table_add (colours, GUINT_TO_POINTER (pixel));
      }

  return g_hash_table_size (colours);
}

/* What @paintable draws at that size now, or %NULL; @previous (a %NULL from the last try) is
 * dropped. */
static GskRenderNode *
node_of (GdkPaintable  *paintable,
         int            width,
         int            height,
         GskRenderNode *previous)
{
  g_autoptr(GtkSnapshot) snapshot = gtk_snapshot_new ();

  g_clear_pointer (&previous, gsk_render_node_unref);
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  return gtk_snapshot_to_node (snapshot);
}

static void
shoot (ChpWindow  *window,
       const char *dir,
       const char *name)
{
  g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new (GTK_WIDGET (window));
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree char *path = g_build_filename (dir, name, NULL);
  int width;
  int height;
  guint colours;

  /* A frame laid out after the page was shown, then what the window drew: its paintable has
   * contents once the window has drawn since the paintable was made. */
  chp_ui_test_wait_frame (GTK_WIDGET (window));
  width = gtk_widget_get_width (GTK_WIDGET (window));
  height = gtk_widget_get_height (GTK_WIDGET (window));
  chp_test_until ((node = node_of (paintable, width, height, node)) != NULL);
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (window)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  g_assert_nonnull (texture);
  g_assert_true (gdk_texture_save_to_png (texture, path));

  colours = count_colours (texture);
  g_test_message ("%s: %d×%d, %u colours", path, width, height, colours);
  g_assert_cmpuint (colours, >, 20);
}

static void
test_every_page (void)
{
  const char *dir = g_getenv ("CHAPERONE_SCREENSHOT_DIR");
  g_autofree char *engine_dir = NULL;
  g_autoptr(ChpEngine) engine = NULL;
  ChpWindow *window;
  AdwStyleManager *style = adw_style_manager_get_default ();
  const int widths[] = { 360, 1200 };
  g_autofree char *failed_id = NULL;
  ChpActivityPage *activity;
  guint port;

  if (dir == NULL)
    {
      g_test_skip ("CHAPERONE_SCREENSHOT_DIR is not set (tests/meson.build sets it)");
      return;
    }
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);

  engine = chp_test_engine_start ("chp-ui-shots-XXXXXX", &engine_dir, &port);
  populate (engine);
  failed_id = populate_traces (engine);
  window = chp_window_new (app);
  chp_window_set_engine (window, engine);
  gtk_window_set_default_size (GTK_WINDOW (window), 800, 720);
  gtk_window_present (GTK_WINDOW (window));
  /* The Activity page shows all 60 rows populate() wrote, not a part of them, and the three
   * sessions. */
  activity = CHP_ACTIVITY_PAGE (chp_ui_test_find_type (GTK_WIDGET (window),
                                                       CHP_TYPE_ACTIVITY_PAGE));
  {
    ChpAuditList *list = chp_activity_page_get_audit_list (activity);
    ChpTraceList *traces = chp_activity_page_get_trace_list (activity);

    chp_test_until (g_list_model_get_n_items (G_LIST_MODEL (list)) >= 60 &&
                    !chp_audit_list_get_loading (list));
    chp_test_until (g_list_model_get_n_items (G_LIST_MODEL (traces)) == 3 &&
                    !chp_trace_list_get_loading (traces));
  }

  for (guint scheme = 0; scheme < 2; scheme++)
    {
      adw_style_manager_set_color_scheme (style, scheme == 0 ? ADW_COLOR_SCHEME_FORCE_LIGHT
                                                             : ADW_COLOR_SCHEME_FORCE_DARK);
      for (guint w = 0; w < G_N_ELEMENTS (widths); w++)
        {
          chp_ui_test_show_at (GTK_WINDOW (window), widths[w], 720);
          g_assert_cmpint (gtk_widget_get_width (GTK_WIDGET (window)), ==, widths[w]);

          for (guint p = 0; p < G_N_ELEMENTS (page_names); p++)
            {
              g_autofree char *name = g_strdup_printf ("window-%s-%s-%d.png", page_names[p],
                                                       scheme == 0 ? "light" : "dark", widths[w]);

              chp_window_show_page (window, page_names[p]);
              /* The page asked for, not the start-up error page or the spinner. */
              g_assert_true (chp_window_get_engine (window) == engine);
              g_assert_cmpstr (chp_window_get_visible_page (window), ==, page_names[p]);
              shoot (window, dir, name);
            }

          /* Activity's other faces: a session's timeline, and every event. */
          {
            const char *scheme_name = scheme == 0 ? "light" : "dark";
            g_autofree char *timeline = g_strdup_printf ("window-activity-timeline-%s-%d.png",
                                                         scheme_name, widths[w]);
            g_autofree char *events = g_strdup_printf ("window-activity-events-%s-%d.png",
                                                       scheme_name, widths[w]);

            chp_window_show_page (window, "activity");
            open_timeline (activity, failed_id);
            shoot (window, dir, timeline);
            g_assert_true (gtk_widget_activate_action (GTK_WIDGET (activity), "activity.back",
                                                       NULL));
            wait_slide (activity);
            chp_activity_page_show_view (activity, "events");
            {
              GtkStack *modes = GTK_STACK (gtk_widget_get_parent (GTK_WIDGET (chp_activity_page_get_sessions_view (activity))));

              g_assert_cmpstr (gtk_stack_get_visible_child_name (modes), ==, "events");
              chp_test_until (!gtk_stack_get_transition_running (modes));
            }
            shoot (window, dir, events);
            chp_activity_page_show_view (activity, "sessions");
          }
        }
    }

  /* Every page drawn, light and dark, at both widths, and no SVG among them: the window keeps
   * librsvg out of the app's memory. */
  chp_ui_test_assert_no_svg_drawn ();

  adw_style_manager_set_color_scheme (style, ADW_COLOR_SCHEME_DEFAULT);
  g_object_add_weak_pointer (G_OBJECT (window), (gpointer *) &window);
  gtk_window_destroy (GTK_WINDOW (window));
  chp_test_until (window == NULL);
}

static GLogWriterOutput
debug_writer (GLogLevelFlags   log_level,
              const GLogField *fields,
              gsize            n_fields,
              gpointer         user_data)
{
  for (gsize i = 0; i < n_fields; i++)
    if (g_strcmp0 (fields[i].key, "MESSAGE") == 0 && strstr (fields[i].value, "attempt to allocate"))
      {
        gpointer address = NULL;
        const char *at = strstr (fields[i].value, "0x");

        if (at != NULL && sscanf (at, "%p", &address) == 1)
          for (GtkWidget *w = address; w != NULL; w = gtk_widget_get_parent (w))
            g_printerr ("  %s %s\n", G_OBJECT_TYPE_NAME (w),
                        GTK_IS_LABEL (w) ? gtk_label_get_text (GTK_LABEL (w)) : "");
      }
  return g_log_writer_default (log_level, fields, n_fields, user_data);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  if (g_getenv ("CHP_DEBUG_ALLOC") != NULL)
    g_log_set_writer_func (debug_writer, NULL, NULL);

  app = chp_ui_test_app_new ("io.github.chaperone.Chaperone.TestShots",
                             "/chaperone/ui/screenshots/skipped");
  if (app == NULL)
    return g_test_run ();

  g_test_add_func ("/chaperone/ui/screenshots/every-page", test_every_page);

  return g_test_run ();
}
