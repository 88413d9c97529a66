/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ui-bench.c: the Activity page over a log of 100,000 rows (in a temporary store): how long until
 * the first rows are painted, and how long frames take while the log is scrolled, measured with
 * the window's own frame clock. Figures, not assertions; needs a display (xvfb-run works). */
#include "config.h"

#include <adwaita.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "chp-activity-page.h"
#include "chp-ui-test.h"
#include "chp-window.h"

#define N_ROWS 100000

typedef struct
{
  ChpWindow *window;
  ChpActivityPage *page;
  GtkAdjustment *vadj;
  GMainLoop *loop;

  gint64 started_us;
  gint64 first_paint_us;

  /* Scrolling. */
  guint phase;            /* 0 wait for first paint, 1 smooth, 2 jumps, 3 done */
  guint frame;
  gint64 layout_started_us;
  gint64 last_tick_us;
  GArray *work_ms;        /* layout + paint per frame */
  GArray *interval_ms;    /* tick to tick */
  GRand *rand;
} Bench;

static void
spin_until_flag (gboolean *flag)
{
  while (!*flag)
    g_main_context_iteration (NULL, TRUE);
}

static void
started_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  if (!chp_engine_start_finish (CHP_ENGINE (source), result, &error))
    g_error ("engine: %s", error->message);
  *(gboolean *) user_data = TRUE;
}

static void
fill_log (const char *db_path)
{
  const char *categories[] = { "call", "call", "call", "connection", "pairing", "agent" };
  const char *methods[] = { "browser.snapshot", "browser.click", "browser.type", "browser.tabs",
                            "browser.context", "auth" };
  const char *outcomes[] = { "ok", "ok", "ok", "error", "refused", "accepted" };
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 now_ms = g_get_real_time () / 1000;

  if (sqlite3_open (db_path, &db) != SQLITE_OK)
    g_error ("open %s: %s", db_path, sqlite3_errmsg (db));
  sqlite3_busy_timeout (db, 5000);
  sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
  sqlite3_prepare_v2 (db, "INSERT INTO audit (at, category, method, outcome, device_id,"
                          " duration_ms, error_code) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                      -1, &stmt, NULL);
  for (int i = 0; i < N_ROWS; i++)
    {
      int k = i % 6;

      sqlite3_bind_int64 (stmt, 1, now_ms - (N_ROWS - i) * 1000);
      sqlite3_bind_text (stmt, 2, categories[k], -1, SQLITE_STATIC);
      sqlite3_bind_text (stmt, 3, methods[(i / 6) % 6], -1, SQLITE_STATIC);
      sqlite3_bind_text (stmt, 4, outcomes[(i / 36) % 6], -1, SQLITE_STATIC);
      sqlite3_bind_text (stmt, 5, "bench-device", -1, SQLITE_STATIC);
      sqlite3_bind_int64 (stmt, 6, i % 97);
      if (k == 3)
        sqlite3_bind_text (stmt, 7, "stale_node", -1, SQLITE_STATIC);
      else
        sqlite3_bind_null (stmt, 7);
      if (sqlite3_step (stmt) != SQLITE_DONE)
        g_error ("insert: %s", sqlite3_errmsg (db));
      sqlite3_reset (stmt);
    }
  sqlite3_finalize (stmt);
  if (sqlite3_exec (db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    g_error ("commit: %s", sqlite3_errmsg (db));
  sqlite3_close (db);
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static void
print_stats (const char *what,
             GArray     *values)
{
  double median, p95, max;

  if (values->len == 0)
    return;

  g_array_sort (values, compare_doubles);
  median = g_array_index (values, double, values->len / 2);
  p95 = g_array_index (values, double, MIN (values->len - 1, values->len * 95 / 100));
  max = g_array_index (values, double, values->len - 1);
  printf ("  %-34s median %6.2f ms   p95 %6.2f ms   max %6.2f ms   (%u frames)\n",
          what, median, p95, max, values->len);
}

static gboolean
first_row_painted (Bench *self)
{
  ChpAuditList *list = chp_activity_page_get_audit_list (self->page);
  g_autoptr(ChpAuditItem) item = NULL;

  if (list == NULL || g_list_model_get_n_items (G_LIST_MODEL (list)) == 0)
    return FALSE;
  item = g_list_model_get_item (G_LIST_MODEL (list), 0);
  return chp_audit_item_get_loaded (item);
}

static void
layout_cb (GdkFrameClock *clock,
           Bench         *self)
{
  self->layout_started_us = g_get_monotonic_time ();
}

static void
after_paint_cb (GdkFrameClock *clock,
                Bench         *self)
{
  gint64 now = g_get_monotonic_time ();

  if (self->phase == 0)
    {
      /* The first frame painted with the first page of rows read in. */
      if (first_row_painted (self))
        {
          self->first_paint_us = now;
          self->phase = 1;
          self->frame = 0;
        }
      return;
    }

  if (self->phase < 3 && self->frame > 0 && self->layout_started_us > 0)
    {
      double work = (now - self->layout_started_us) / 1000.0;

      g_array_append_val (self->work_ms, work);
    }
}

/* One scroll step per frame: smooth steps first, as a wheel or a touchpad gives them, then jumps
 * to anywhere in the log, as dragging the scrollbar does. */
static gboolean
tick_cb (GtkWidget     *widget,
         GdkFrameClock *clock,
         gpointer       user_data)
{
  Bench *self = user_data;
  gint64 now = gdk_frame_clock_get_frame_time (clock);
  double upper = gtk_adjustment_get_upper (self->vadj) - gtk_adjustment_get_page_size (self->vadj);

  if (self->phase == 0)
    return G_SOURCE_CONTINUE;

  if (self->last_tick_us > 0 && self->frame > 1)
    {
      double interval = (now - self->last_tick_us) / 1000.0;

      g_array_append_val (self->interval_ms, interval);
    }
  self->last_tick_us = now;
  self->frame++;

  if (self->phase == 1)
    {
      gtk_adjustment_set_value (self->vadj, gtk_adjustment_get_value (self->vadj) + 90);
      if (self->frame >= 600)
        {
          printf ("Smooth scrolling (90 px a frame, 600 frames):\n");
          print_stats ("layout + paint", self->work_ms);
          print_stats ("frame interval", self->interval_ms);
          g_array_set_size (self->work_ms, 0);
          g_array_set_size (self->interval_ms, 0);
          self->phase = 2;
          self->frame = 0;
          self->last_tick_us = 0;
        }
    }
  else if (self->phase == 2)
    {
      gtk_adjustment_set_value (self->vadj, g_rand_double_range (self->rand, 0, upper));
      if (self->frame >= 300)
        {
          printf ("Jumps anywhere in the log (300 frames):\n");
          print_stats ("layout + paint", self->work_ms);
          print_stats ("frame interval", self->interval_ms);
          self->phase = 3;
          g_main_loop_quit (self->loop);
          return G_SOURCE_REMOVE;
        }
    }

  return G_SOURCE_CONTINUE;
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *dir = NULL;
  g_autofree char *db_path = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpEngine) engine = NULL;
  g_autoptr(GtkApplication) app = NULL;
  Bench self = { 0 };
  gboolean started = FALSE;
  GdkFrameClock *clock;
  gint64 fill_us;

  if (!gtk_init_check ())
    {
      fprintf (stderr, "ui-bench: no display (run it under xvfb-run)\n");
      return 77;
    }
  adw_init ();

  dir = g_dir_make_tmp ("chp-ui-bench-XXXXXX", &error);
  g_assert_no_error (error);
  db_path = g_build_filename (dir, "chaperone.db", NULL);

  engine = chp_engine_new (dir);
  /* The user's real agent socket is not the benchmark's to take. */
  chp_engine_start_async (engine, 0, NULL, started_cb, &started);
  spin_until_flag (&started);

  fill_us = g_get_monotonic_time ();
  fill_log (db_path);
  printf ("Activity page over %d audit rows\n", N_ROWS);
  printf ("  filled the log in %.0f ms (not part of the figures)\n",
          (g_get_monotonic_time () - fill_us) / 1000.0);

  app = GTK_APPLICATION (adw_application_new ("io.github.chaperone.Chaperone.UiBench",
                                              G_APPLICATION_NON_UNIQUE));
  g_application_set_resource_base_path (G_APPLICATION (app), "/io/github/chaperone/Chaperone");
  g_application_register (G_APPLICATION (app), NULL, NULL);

  self.loop = g_main_loop_new (NULL, FALSE);
  self.work_ms = g_array_new (FALSE, FALSE, sizeof (double));
  self.interval_ms = g_array_new (FALSE, FALSE, sizeof (double));
  self.rand = g_rand_new_with_seed (42);

  self.started_us = g_get_monotonic_time ();
  self.window = chp_window_new (app);
  chp_window_set_engine (self.window, engine);
  chp_window_show_page (self.window, "activity");
  self.page = CHP_ACTIVITY_PAGE (chp_ui_test_find_type (GTK_WIDGET (self.window),
                                                        CHP_TYPE_ACTIVITY_PAGE));
  /* Activity opens on the agents' sessions; the log of every event is its other view. */
  chp_activity_page_show_view (self.page, "events");
  self.vadj = gtk_scrolled_window_get_vadjustment (chp_activity_page_get_scroller (self.page));

  gtk_window_set_default_size (GTK_WINDOW (self.window), 1200, 800);
  gtk_window_present (GTK_WINDOW (self.window));
  clock = gtk_widget_get_frame_clock (GTK_WIDGET (self.window));
  g_signal_connect (clock, "layout", G_CALLBACK (layout_cb), &self);
  g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), &self);
  gtk_widget_add_tick_callback (GTK_WIDGET (self.window), tick_cb, &self, NULL);

  g_main_loop_run (self.loop);

  printf ("  time to first paint of the rows: %.1f ms (window created to first frame with rows)\n",
          (self.first_paint_us - self.started_us) / 1000.0);

  g_signal_handlers_disconnect_by_data (clock, &self);
  gtk_window_destroy (GTK_WINDOW (self.window));
  g_clear_object (&engine);
  g_array_unref (self.work_ms);
  g_array_unref (self.interval_ms);
  g_rand_free (self.rand);
  g_main_loop_unref (self.loop);
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", dir);

    if (system (cmd) != 0)
      fprintf (stderr, "ui-bench: could not remove %s\n", dir);
  }

  return 0;
}
