/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-ui-traces.c: the trace browser in the main window, on a real store in a temporary folder:
 * sessions recorded through the store's API (an error step with a screenshot, a held step the
 * person approved, an open session) appear in Activity with their counts; the search and the
 * filters narrow them; a session opens its timeline (steps, decision marker, error, timing bars,
 * the screenshot on Enter) and back, at 360 px too; Export writes the report; Forget asks, and
 * the store no longer lists the session. Then the list itself: a burst of changes makes one
 * refresh more, not one each, and 10,000 sessions are read a page at a time. */
#include "config.h"

#include <adwaita.h>
#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <string.h>

#include "chp-activity-page.h"
#include "chp-step-row.h"
#include "chp-test-client.h"
#include "chp-timing-bar.h"
#include "chp-trace-row.h"
#include "chp-ui-test.h"
#include "chp-window.h"

static GtkApplication *app;

typedef struct
{
  ChpEngine *engine;
  char *dir;
  guint port;
  ChpWindow *window;
  ChpActivityPage *page;
  char *failed_id;    /* Claude Desktop: navigate, an error with a screenshot, a held act */
  char *done_id;      /* Cursor: one snapshot */
  char *open_id;      /* Claude Desktop, still running */
  ChpTraceHandle *open;
} Fixture;

/* A small real JPEG: what the recorder keeps of a failing page. */
static GBytes *
make_jpeg (int width,
           int height)
{
  g_autoptr(GdkPixbuf) pixbuf = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, width, height);
  guchar *pixels = gdk_pixbuf_get_pixels (pixbuf);
  int stride = gdk_pixbuf_get_rowstride (pixbuf);
  g_autoptr(GError) error = NULL;
  char *buffer = NULL;
  gsize size = 0;

  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        guchar *p = pixels + y * stride + x * 3;

        p[0] = (guchar) (x * 255 / width);
        p[1] = (guchar) (y * 255 / height);
        p[2] = (guchar) ((x / 16 + y / 16) % 2 ? 200 : 60);
      }
  g_assert_true (gdk_pixbuf_save_to_buffer (pixbuf, &buffer, &size, "jpeg", &error,
                                            "quality", "80", NULL));
  g_assert_no_error (error);
  return g_bytes_new_take (buffer, size);
}

static guint
add_step (ChpStore       *store,
          ChpTraceHandle *trace,
          const char     *tool,
          const char     *host,
          const char     *path,
          const char     *role,
          const char     *name,
          gint64          queue_ms,
          gint64          run_ms,
          gint64          page_ms)
{
  ChpTraceStep step = {
    .tool = (char *) tool, .host = (char *) host, .path = (char *) path,
    .role = (char *) role, .name = (char *) name, .queue_us = queue_ms * 1000,
    .run_us = run_ms * 1000, .page_us = page_ms * 1000, .outcome = "ok", .rung = "page",
  };

  return chp_store_trace_add_step (store, trace, &step);
}

/* The engine says a trace changed, as its recorder does. */
static void
tell (Fixture    *f,
      const char *session_id)
{
  g_assert_cmpuint (g_signal_lookup ("trace-changed", CHP_TYPE_ENGINE), !=, 0);
  g_signal_emit_by_name (f->engine, "trace-changed", session_id);
}

static void
record_sessions (Fixture *f)
{
  ChpStore *store = chp_engine_get_store (f->engine);
  g_autoptr(ChpTraceHandle) failed = chp_store_trace_begin (store, "Claude Desktop",
                                                            "Work Chromium");
  g_autoptr(ChpTraceHandle) done = NULL;
  g_autoptr(GBytes) jpeg = make_jpeg (320, 200);
  ChpTraceStep error_step = {
    .tool = "browser_act", .host = "bank.example", .path = "/transfer?amount=5",
    .role = "button", .name = "Send money", .queue_us = 3000, .run_us = 120000,
    .page_us = 80000, .outcome = "error", .error_code = "stale_node", .rung = "page",
    .snippet = "Transfer — Review the amount",
  };
  ChpTraceStep held_step = {
    .tool = "browser_act", .host = "shop.example", .path = "/checkout", .role = "button",
    .name = "Pay", .queue_us = 2000, .run_us = 40000, .page_us = 12000, .outcome = "ok",
    .rung = "page", .decision_kind = CHP_TRACE_DECISION_HOLD, .decision = "approved",
    .decision_wait_us = 12 * G_USEC_PER_SEC,
  };
  guint seq;

  f->failed_id = g_strdup (chp_trace_handle_get_id (failed));
  add_step (store, failed, "browser_navigate", "bank.example", "/login", NULL, NULL, 1, 30, 10);
  seq = chp_store_trace_add_step (store, failed, &error_step);
  g_assert_cmpuint (seq, ==, 2);
  chp_store_trace_add_shot (store, failed, seq, jpeg, 320, 200);
  chp_store_trace_add_step (store, failed, &held_step);
  chp_store_trace_end (store, failed, "failed");
  tell (f, f->failed_id);

  done = chp_store_trace_begin (store, "Cursor", "Home Chromium");
  f->done_id = g_strdup (chp_trace_handle_get_id (done));
  add_step (store, done, "browser_snapshot", "news.example", "/today", NULL, NULL, 0, 15, 5);
  chp_store_trace_end (store, done, "completed");
  tell (f, f->done_id);

  f->open = chp_store_trace_begin (store, "Claude Desktop", "Work Chromium");
  f->open_id = g_strdup (chp_trace_handle_get_id (f->open));
  add_step (store, f->open, "browser_tabs", NULL, NULL, NULL, NULL, 0, 2, 0);
  tell (f, f->open_id);
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->engine = chp_test_engine_start ("chp-ui-traces-XXXXXX", &f->dir, &f->port);
  f->window = chp_window_new (app);
  chp_window_set_engine (f->window, f->engine);
  f->page = CHP_ACTIVITY_PAGE (chp_ui_test_find_type (GTK_WIDGET (f->window),
                                                      CHP_TYPE_ACTIVITY_PAGE));
  g_assert_nonnull (f->page);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_object_add_weak_pointer (G_OBJECT (f->window), (gpointer *) &f->window);
  gtk_window_destroy (GTK_WINDOW (f->window));
  chp_test_until (f->window == NULL);
  g_clear_pointer (&f->open, chp_trace_handle_unref);
  g_clear_object (&f->engine);
  g_free (f->failed_id);
  g_free (f->done_id);
  g_free (f->open_id);
  g_free (f->dir);
}

static ChpTraceList *
trace_list (Fixture *f)
{
  return chp_activity_page_get_trace_list (f->page);
}

/* The list read and settled with @n sessions. */
static gboolean
settled_at (ChpTraceList *list,
            guint         n)
{
  return !chp_trace_list_get_loading (list) && g_list_model_get_n_items (G_LIST_MODEL (list)) == n;
}

static ChpTraceItem *
item_of (Fixture    *f,
         const char *id,
         guint      *position)
{
  GListModel *model = G_LIST_MODEL (trace_list (f));

  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    {
      g_autoptr(ChpTraceItem) item = g_list_model_get_item (model, i);

      if (g_strcmp0 (chp_trace_item_get_id (item), id) == 0)
        {
          if (position != NULL)
            *position = i;
          return item;  /* the list holds it */
        }
    }

  return NULL;
}

/* The visible text of the sessions view's rows: what a person reads there. */
static char *
rows_text (Fixture *f)
{
  GtkWidget *view = GTK_WIDGET (chp_activity_page_get_sessions_view (f->page));
  g_autoptr(GPtrArray) rows = g_ptr_array_new ();
  GString *text = g_string_new (NULL);

  chp_ui_test_wait_frame (GTK_WIDGET (f->window));
  chp_ui_test_find_all (view, CHP_TYPE_TRACE_ROW, rows);
  for (guint i = 0; i < rows->len; i++)
    if (gtk_widget_get_mapped (g_ptr_array_index (rows, i)))
      {
        g_autofree char *one = chp_ui_test_all_text (g_ptr_array_index (rows, i));

        g_string_append_printf (text, "%s---\n", one);
      }

  return g_string_free (text, FALSE);
}

static const char *
sessions_state (Fixture *f)
{
  GtkWidget *view = GTK_WIDGET (chp_activity_page_get_sessions_view (f->page));
  GtkWidget *scroller = gtk_widget_get_ancestor (GTK_WIDGET (chp_sessions_view_get_list_view (CHP_SESSIONS_VIEW (view))),
                                                 GTK_TYPE_SCROLLED_WINDOW);

  return gtk_stack_get_visible_child_name (GTK_STACK (gtk_widget_get_parent (scroller)));
}

static void
search (Fixture    *f,
        const char *words)
{
  GtkWidget *entry = chp_ui_test_find_type (GTK_WIDGET (chp_activity_page_get_sessions_view (f->page)),
                                            GTK_TYPE_SEARCH_ENTRY);

  gtk_editable_set_text (GTK_EDITABLE (entry), words);
  /* The entry tells its search after a short delay: the query says when it has. */
  chp_test_until (g_strcmp0 (chp_trace_list_get_query (trace_list (f))->search,
                             *words != '\0' ? words : NULL) == 0);
}

static GtkDropDown *
dropdown (Fixture *f,
          guint    index)
{
  g_autoptr(GPtrArray) all = g_ptr_array_new ();

  chp_ui_test_find_all (GTK_WIDGET (chp_activity_page_get_sessions_view (f->page)),
                        GTK_TYPE_DROP_DOWN, all);
  g_assert_cmpuint (all->len, ==, 2);
  return g_ptr_array_index (all, index);
}

static guint
dropdown_index (GtkDropDown *dropdown,
                const char  *words)
{
  GListModel *model = gtk_drop_down_get_model (dropdown);

  for (guint i = 0; i < g_list_model_get_n_items (model); i++)
    if (g_strcmp0 (gtk_string_list_get_string (GTK_STRING_LIST (model), i), words) == 0)
      return i;

  g_assert_not_reached ();
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

static ChpStepRow *
step_row (Fixture *f,
          guint    seq)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new ();

  chp_ui_test_find_all (GTK_WIDGET (chp_activity_page_get_timeline_view (f->page)),
                        CHP_TYPE_STEP_ROW, rows);
  for (guint i = 0; i < rows->len; i++)
    {
      ChpStepRow *row = g_ptr_array_index (rows, i);
      ChpTraceStepItem *item = chp_step_row_get_item (row);

      if (item != NULL && chp_trace_step_item_get_step (item)->seq == seq &&
          gtk_widget_get_mapped (GTK_WIDGET (row)))
        return row;
    }

  return NULL;
}

typedef struct
{
  ChpStore  *store;
  GPtrArray *sessions;
  gboolean   done;
} Listing;

static void
listed_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Listing *listing = user_data;
  g_autoptr(GError) error = NULL;

  listing->sessions = chp_store_list_traces_finish (CHP_STORE (source), result, &error);
  g_assert_no_error (error);
  listing->done = TRUE;
}

/* Whether the store itself still lists the session. */
static gboolean
store_lists (ChpStore   *store,
             const char *id)
{
  Listing listing = { store, NULL, FALSE };
  gboolean found = FALSE;

  chp_store_list_traces_async (store, NULL, 0, 1000, NULL, listed_cb, &listing);
  chp_test_until (listing.done);
  for (guint i = 0; i < listing.sessions->len; i++)
    found |= g_strcmp0 (((ChpTraceSession *) g_ptr_array_index (listing.sessions, i))->id, id) == 0;
  g_ptr_array_unref (listing.sessions);

  return found;
}

static void
test_browse (Fixture       *f,
             gconstpointer  data)
{
  ChpTraceList *list;
  AdwLeaflet *leaflet;
  ChpTimelineView *timeline;
  ChpTraceStepList *steps;
  g_autofree char *text = NULL;
  GtkDropDown *outcome, *agent;
  guint position = 0;

  chp_ui_test_show_at (GTK_WINDOW (f->window), 1000, 760);
  chp_window_show_page (f->window, "activity");
  list = trace_list (f);
  g_assert_nonnull (list);
  leaflet = ADW_LEAFLET (chp_ui_test_find_type (GTK_WIDGET (f->page), ADW_TYPE_LEAFLET));
  timeline = chp_activity_page_get_timeline_view (f->page);

  /* Nothing recorded yet: the sessions' own empty state. */
  chp_test_until (settled_at (list, 0) && g_strcmp0 (sessions_state (f), "empty") == 0);
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (chp_activity_page_get_sessions_view (f->page)),
                                         "No agent sessions yet"));

  /* Three sessions recorded through the store, the engine telling each change: the list reads
   * them, newest first, with their counts. */
  record_sessions (f);
  chp_test_until (settled_at (list, 3));
  chp_test_until (g_strcmp0 (sessions_state (f), "list") == 0);
  g_assert_nonnull (item_of (f, f->open_id, &position));
  g_assert_cmpuint (position, ==, 0);
  g_assert_nonnull (item_of (f, f->failed_id, &position));
  g_assert_cmpuint (position, ==, 2);
  g_assert_cmpuint (chp_trace_item_get_n_steps (item_of (f, f->failed_id, NULL)), ==, 3);
  g_assert_cmpuint (chp_trace_item_get_n_errors (item_of (f, f->failed_id, NULL)), ==, 1);

  text = rows_text (f);
  g_test_message ("rows:\n%s", text);
  g_assert_nonnull (strstr (text, "Claude Desktop"));
  g_assert_nonnull (strstr (text, "Cursor"));
  g_assert_nonnull (strstr (text, "3 steps · 1 asked you, 1 approved"));
  g_assert_nonnull (strstr (text, "1 error"));
  g_assert_nonnull (strstr (text, "Work Chromium · bank.example, shop.example"));
  g_assert_nonnull (strstr (text, "Failed"));
  g_assert_nonnull (strstr (text, "Completed"));
  g_assert_nonnull (strstr (text, "Running"));
  g_assert_nonnull (strstr (text, "Today at"));
  g_clear_pointer (&text, g_free);

  /* The search is over what the steps did: an error code, a host, a tool. */
  search (f, "stale");
  chp_test_until (settled_at (list, 1));
  g_assert_nonnull (item_of (f, f->failed_id, NULL));
  search (f, "news");
  chp_test_until (settled_at (list, 1));
  g_assert_nonnull (item_of (f, f->done_id, NULL));
  search (f, "nothing-like-this");
  chp_test_until (settled_at (list, 0) && g_strcmp0 (sessions_state (f), "empty") == 0);
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (chp_activity_page_get_sessions_view (f->page)),
                                         "Nothing matches"));
  search (f, "");
  chp_test_until (settled_at (list, 3));

  /* The filters: how it ended, which agent. */
  outcome = dropdown (f, 0);
  agent = dropdown (f, 1);
  gtk_drop_down_set_selected (outcome, dropdown_index (outcome, "Completed"));
  chp_test_until (settled_at (list, 1));
  g_assert_nonnull (item_of (f, f->done_id, NULL));
  gtk_drop_down_set_selected (outcome, 0);
  chp_test_until (settled_at (list, 3));
  gtk_drop_down_set_selected (agent, dropdown_index (agent, "Claude Desktop"));
  chp_test_until (settled_at (list, 2));
  g_assert_null (item_of (f, f->done_id, NULL));
  gtk_drop_down_set_selected (agent, 0);
  chp_test_until (settled_at (list, 3));

  /* Enter on a session opens its timeline. */
  g_assert_nonnull (item_of (f, f->failed_id, &position));
  chp_ui_test_wait_frame (GTK_WIDGET (f->window));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (chp_sessions_view_get_list_view (chp_activity_page_get_sessions_view (f->page))),
                                             "list.activate-item", "u", position));
  g_assert_cmpstr (adw_leaflet_get_visible_child_name (leaflet), ==, "timeline");
  steps = chp_timeline_view_get_steps (timeline);
  g_assert_nonnull (steps);
  chp_test_until (!chp_trace_step_list_get_loading (steps) &&
                  g_list_model_get_n_items (G_LIST_MODEL (steps)) == 3);
  chp_test_until (step_row (f, 3) != NULL);

  text = chp_ui_test_all_text (GTK_WIDGET (timeline));
  g_test_message ("timeline:\n%s", text);
  g_assert_nonnull (strstr (text, "Claude Desktop"));
  g_assert_nonnull (strstr (text, "browser_navigate"));
  g_assert_nonnull (strstr (text, "bank.example/transfer\n"));  /* never the query */
  g_assert_null (strstr (text, "amount=5"));
  g_assert_nonnull (strstr (text, "button “Send money”"));
  g_assert_nonnull (strstr (text, "Error: stale_node"));
  g_assert_nonnull (strstr (text, "On the page: Transfer — Review the amount"));
  /* The held step's marker: what was asked, what the person decided, how long they took. */
  g_assert_nonnull (strstr (text, "Held for your approval: You approved after 12.0 s"));
  g_clear_pointer (&text, g_free);

  /* The error step stands out; the bars are scaled to the longest step and named in words. */
  {
    ChpStepRow *failed = step_row (f, 2);
    ChpStepRow *held = step_row (f, 3);
    ChpTimingBar *bar = CHP_TIMING_BAR (chp_ui_test_find_type (GTK_WIDGET (failed),
                                                               CHP_TYPE_TIMING_BAR));
    ChpTimingBar *held_bar = CHP_TIMING_BAR (chp_ui_test_find_type (GTK_WIDGET (held),
                                                                    CHP_TYPE_TIMING_BAR));
    double queue, run, page;

    g_assert_true (gtk_widget_has_css_class (GTK_WIDGET (failed), "error"));
    g_assert_false (gtk_widget_has_css_class (GTK_WIDGET (held), "error"));
    chp_timing_bar_get (bar, &queue, &run, &page);
    g_assert_cmpfloat_with_epsilon (queue + run, 1.0, 1e-9);
    g_assert_cmpfloat_with_epsilon (page, 80.0 / 123.0, 1e-9);
    chp_timing_bar_get (held_bar, &queue, &run, &page);
    g_assert_cmpfloat_with_epsilon (queue + run, 42.0 / 123.0, 1e-9);
    g_assert_cmpstr (gtk_widget_get_tooltip_text (GTK_WIDGET (held_bar)), ==,
                     "Queued 2 ms, ran 40 ms, page 12 ms");
    g_assert_cmpint (gtk_accessible_get_accessible_role (GTK_ACCESSIBLE (bar)), ==,
                     GTK_ACCESSIBLE_ROLE_IMG);

    /* The screenshot is read only when asked for: Enter on the row. */
    g_assert_null (chp_step_row_get_shot (failed));
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (chp_timeline_view_get_list_view (timeline)),
                                               "list.activate-item", "u", 1));
    chp_test_until (chp_step_row_get_shot (step_row (f, 2)) != NULL);
    g_assert_cmpint (gdk_paintable_get_intrinsic_width (chp_step_row_get_shot (step_row (f, 2))),
                     ==, 320);
    /* Only that one: the others have none, and none was read. */
    g_assert_null (chp_step_row_get_shot (step_row (f, 1)));

    /* Enter again hides it, and lets go of it. */
    g_assert_true (gtk_widget_activate_action (GTK_WIDGET (chp_timeline_view_get_list_view (timeline)),
                                               "list.activate-item", "u", 1));
    chp_test_until (chp_step_row_get_shot (step_row (f, 2)) == NULL);
    g_assert_null (chp_trace_step_item_get_shot (chp_step_row_get_item (step_row (f, 2))));
  }

  /* Narrow, the timeline still fits. */
  chp_ui_test_show_at (GTK_WINDOW (f->window), 360, 760);
  chp_ui_test_assert_fits (GTK_WIDGET (f->window), 360, "the timeline at 360 px");

  /* Export writes the masked report where the person chose. */
  {
    g_autofree char *path = g_build_filename (f->dir, "session.json", NULL);
    g_autoptr(GFile) file = g_file_new_for_path (path);
    g_autofree char *contents = NULL;

    chp_timeline_view_export_to (timeline, file);
    chp_test_until (g_file_test (path, G_FILE_TEST_EXISTS));
    g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
    g_assert_nonnull (strstr (contents, "stale_node"));
    g_assert_nonnull (strstr (contents, f->failed_id));
    g_assert_null (strstr (contents, f->done_id));
    g_unlink (path);
  }

  /* Forget asks first; Cancel keeps it. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (timeline), "timeline.forget", NULL));
  g_assert_nonnull (find_dialog ());
  g_assert_cmpstr (adw_message_dialog_get_default_response (find_dialog ()), ==, "cancel");
  adw_message_dialog_response (find_dialog (), "cancel");
  g_assert_true (store_lists (chp_engine_get_store (f->engine), f->failed_id));

  /* Forget: back to the list, without the session, in the store too. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (timeline), "timeline.forget", NULL));
  adw_message_dialog_response (find_dialog (), "forget");
  chp_test_until (g_strcmp0 (adw_leaflet_get_visible_child_name (leaflet), "overview") == 0);
  chp_test_until (settled_at (list, 2));
  g_assert_null (item_of (f, f->failed_id, NULL));
  g_assert_false (store_lists (chp_engine_get_store (f->engine), f->failed_id));
  g_assert_true (store_lists (chp_engine_get_store (f->engine), f->done_id));
}

/* What pressing Escape on @widget does through its shortcuts; whether something took it. */
static gboolean
press_escape (GtkWidget *widget)
{
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers (widget);
  g_autoptr(GtkShortcutTrigger) escape = gtk_shortcut_trigger_parse_string ("Escape");

  for (guint i = 0; i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr(GObject) controller = g_list_model_get_item (controllers, i);

      if (!GTK_IS_SHORTCUT_CONTROLLER (controller))
        continue;
      for (guint j = 0; j < g_list_model_get_n_items (G_LIST_MODEL (controller)); j++)
        {
          g_autoptr(GtkShortcut) shortcut = g_list_model_get_item (G_LIST_MODEL (controller), j);

          if (gtk_shortcut_trigger_equal (gtk_shortcut_get_trigger (shortcut), escape))
            return gtk_shortcut_action_activate (gtk_shortcut_get_action (shortcut), 0, widget,
                                                 gtk_shortcut_get_arguments (shortcut));
        }
    }

  return FALSE;
}

static void
count_cb (GObject    *object,
          GParamSpec *pspec,
          guint      *count)
{
  (*count)++;
}

/* An open session grows while its row and its timeline show: both follow, in place. */
static void
test_live (Fixture       *f,
           gconstpointer  data)
{
  ChpStore *store = chp_engine_get_store (f->engine);
  ChpTraceList *list;
  ChpTimelineView *timeline;
  ChpTraceStepList *steps;
  ChpTraceItem *item;
  guint position = 0;
  guint edges = 0;
  gulong edges_id;

  chp_ui_test_show_at (GTK_WINDOW (f->window), 360, 700);
  chp_window_show_page (f->window, "activity");
  list = trace_list (f);
  timeline = chp_activity_page_get_timeline_view (f->page);
  record_sessions (f);
  chp_test_until (settled_at (list, 3));
  chp_ui_test_wait_frame (GTK_WIDGET (f->window));
  chp_ui_test_assert_fits (GTK_WIDGET (f->window), 360, "the sessions at 360 px");

  item = item_of (f, f->open_id, &position);
  g_assert_true (chp_sessions_view_activate (chp_activity_page_get_sessions_view (f->page),
                                             position));
  steps = chp_timeline_view_get_steps (timeline);
  chp_test_until (!chp_trace_step_list_get_loading (steps) &&
                  g_list_model_get_n_items (G_LIST_MODEL (steps)) == 1);

  /* A burst: twenty steps, each told. One refresh at a time, and one more after it for all that
   * came meanwhile: the list is busy once (two edges of "loading"), not twenty times. */
  edges_id = g_signal_connect (list, "notify::loading", G_CALLBACK (count_cb), &edges);
  for (guint i = 0; i < 20; i++)
    {
      add_step (store, f->open, "browser_act", "docs.example", "/edit", "textbox", "Title",
                1, 20 + i, 5);
      tell (f, f->open_id);
    }
  chp_test_until (!chp_trace_list_get_loading (list) && chp_trace_item_get_n_steps (item) == 21);
  g_signal_handler_disconnect (list, edges_id);
  g_assert_cmpuint (edges, ==, 2);
  /* The same item, updated in place: the row shows it without being rebuilt. */
  g_assert_true (item_of (f, f->open_id, NULL) == item);
  chp_test_until (g_list_model_get_n_items (G_LIST_MODEL (steps)) == 21);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 3);

  /* A session begun meanwhile joins at the top. */
  {
    g_autoptr(ChpTraceHandle) more = chp_store_trace_begin (store, "Zed", "Work Chromium");

    tell (f, chp_trace_handle_get_id (more));
    chp_test_until (settled_at (list, 4));
    g_assert_cmpstr (chp_trace_item_get_agent (item_of (f, chp_trace_handle_get_id (more), &position)),
                     ==, "Zed");
    g_assert_cmpuint (position, ==, 0);
    /* And its agent becomes a choice of the filter. */
    g_assert_true (g_strv_contains (chp_trace_list_get_agents (list), "Zed"));
  }

  /* The session ends while the person looks at another page: nothing is read for a page off
   * screen; turning back to Activity reads it once, and its row says how. */
  chp_window_show_page (f->window, "browsers");
  chp_test_until (!gtk_widget_get_mapped (GTK_WIDGET (f->page)));
  edges = 0;
  edges_id = g_signal_connect (list, "notify::loading", G_CALLBACK (count_cb), &edges);
  chp_store_trace_end (store, f->open, "stopped");
  tell (f, f->open_id);
  g_assert_cmpuint (edges, ==, 0);
  g_assert_false (chp_trace_list_get_loading (list));
  chp_window_show_page (f->window, "activity");
  chp_test_until (g_strcmp0 (chp_trace_item_get_outcome (item), "stopped") == 0);
  g_signal_handler_disconnect (list, edges_id);
  g_assert_cmpuint (edges, ==, 2);

  /* Escape goes back to the list; the timeline lets go once the slide is over. */
  g_assert_true (press_escape (GTK_WIDGET (f->page)));
  chp_test_until (chp_timeline_view_get_steps (timeline) == NULL);
  g_assert_cmpstr (adw_leaflet_get_visible_child_name (ADW_LEAFLET (chp_ui_test_find_type (GTK_WIDGET (f->page), ADW_TYPE_LEAFLET))),
                   ==, "overview");
  /* At the list, Escape is not the page's. */
  g_assert_false (press_escape (GTK_WIDGET (f->page)));
}

/* 10,000 sessions: the first paint reads a page or two, not all of them; reading on as a view
 * would, the list reaches the last one, in order, holding a bounded number of items. */
static void
test_paging (Fixture       *f,
             gconstpointer  data)
{
  ChpStore *store = chp_engine_get_store (f->engine);
  ChpTraceList *list;
  GListModel *model;
  g_autofree char *first_id = NULL;
  g_autofree char *last_id = NULL;
  const guint n = 10000;
  guint known;

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *agent = g_strdup_printf ("agent %u", i % 7);
      g_autoptr(ChpTraceHandle) trace = chp_store_trace_begin (store, agent, "Chromium");

      if (i == 0)
        first_id = g_strdup (chp_trace_handle_get_id (trace));
      if (i == n - 1)
        last_id = g_strdup (chp_trace_handle_get_id (trace));
      add_step (store, trace, "browser_snapshot", "site.example", "/", NULL, NULL, 0, 5, 1);
      chp_store_trace_end (store, trace, "completed");
    }

  chp_ui_test_show_at (GTK_WINDOW (f->window), 800, 700);
  chp_window_show_page (f->window, "activity");
  list = trace_list (f);
  model = G_LIST_MODEL (list);
  chp_trace_list_reload (list);
  chp_test_until (!chp_trace_list_get_loading (list) && g_list_model_get_n_items (model) > 0);
  chp_ui_test_wait_frame (GTK_WIDGET (f->window));
  chp_ui_test_wait_frame (GTK_WIDGET (f->window));
  g_test_message ("after the first paint: %u positions", g_list_model_get_n_items (model));
  g_assert_cmpuint (g_list_model_get_n_items (model), <=, 10 * CHP_TRACE_LIST_PAGE_SIZE + 1);
  {
    g_autoptr(ChpTraceItem) top = g_list_model_get_item (model, 0);

    chp_test_until (chp_trace_item_get_loaded (top));
    g_assert_cmpstr (chp_trace_item_get_id (top), ==, last_id);
  }

  /* Read on as a view scrolling down would: ask for the last position, wait for more. */
  for (;;)
    {
      g_autoptr(ChpTraceItem) last = NULL;

      known = g_list_model_get_n_items (model);
      last = g_list_model_get_item (model, known - 1);
      chp_test_until (chp_trace_item_get_loaded (last) ||
                      g_list_model_get_n_items (model) != known);
      if (g_list_model_get_n_items (model) == known && chp_trace_item_get_loaded (last))
        break;
    }
  g_assert_cmpuint (g_list_model_get_n_items (model), ==, n);
  {
    g_autoptr(ChpTraceItem) bottom = g_list_model_get_item (model, n - 1);

    chp_test_until (chp_trace_item_get_loaded (bottom));
    g_assert_cmpstr (chp_trace_item_get_id (bottom), ==, first_id);
  }

  /* Back at the top, what was dropped on the way is read again. */
  {
    g_autoptr(ChpTraceItem) top = g_list_model_get_item (model, 0);

    chp_test_until (chp_trace_item_get_loaded (top));
    g_assert_cmpstr (chp_trace_item_get_id (top), ==, last_id);
  }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  app = chp_ui_test_app_new ("io.github.chaperone.Chaperone.TestTraces",
                             "/chaperone/ui/traces/skipped");
  if (app == NULL)
    return g_test_run ();

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/chaperone/ui/traces/browse", test_browse);
  ADD ("/chaperone/ui/traces/live", test_live);
  ADD ("/chaperone/ui/traces/paging", test_paging);
#undef ADD

  return g_test_run ();
}
