/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ui-trace-bench.c: the trace browser (Activity's sessions) over a trace store of 1,000,000 steps
 * (10,000 agent sessions of 100 steps, in a temporary store, written through the store's own API):
 * with the window up on another page, how long from turning to Activity to the first frame
 * painted with sessions, and from a search typed into the page's own search entry to the first
 * frame painted with its results, measured with the window's own frame clock (issue 16's
 * targets: ≤ 200 ms and ≤ 100 ms); and the store's own share of that search. A search is
 * measured pasted (the whole text at once, several times over) and typed (a key at every frame,
 * from the last key). The window's own first frame is printed apart: it is GTK's start, whatever
 * the page. It draws as the app does (src/main.c: cairo, no GL) unless the environment chose.
 * Figures, not assertions; needs a display (xvfb-run). */
#include "config.h"

#include <adwaita.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chp-activity-page.h"
#include "chp-store-traces.h"
#include "chp-trace-list.h"
#include "chp-trace-row.h"
#include "chp-ui-test.h"
#include "chp-window.h"

#define N_SESSIONS 10000
#define N_STEPS    100

/* Searches pasted in turn, each unlike the one before: a person looking for where agents failed. */
static const char * const pasted[] = {
  "stale_node bank", "stale_node shop", "compose wiki", "send mail", "invoice shop",
  "save draft", "notes bank", "browser_navigate wiki",
};
#define TYPED "stale_node shop"

typedef enum
{
  PHASE_WINDOW,             /* the window's first frame, on another page */
  PHASE_FIRST_PAINT,        /* turned to Activity: waiting for the sessions */
  PHASE_PASTED,             /* a search pasted: waiting for its results */
  PHASE_CLEARED,            /* the search emptied: waiting for every session again */
  PHASE_TYPING,             /* a key at every frame */
  PHASE_TYPED,              /* the last key typed: waiting for the results */
  PHASE_DONE,
} Phase;

typedef struct
{
  ChpWindow *window;
  ChpTraceList *list;
  GtkEditable *entry;
  GMainLoop *loop;
  ChpActivityPage *page;
  Phase phase;
  gint64 window_us;
  gint64 window_paint_us;
  gint64 started_us;
  gint64 first_paint_us;
  gint64 ready_us;          /* the list had its first session read, whatever the frames */
  const char *wanted;       /* the search whose results are awaited */
  guint n_pasted;
  guint typed_chars;
  /* The search being measured: from the text change to the first frame with its results. */
  gint64 typed_us;
  gint64 changed_us;        /* the entry said search-changed */
  gint64 search_ready_us;   /* the list had the results */
  gint64 frame_us;          /* the frame that painted them began */
  guint frames;             /* frames painted meanwhile */
  gint64 longest_frame_us;
  gint64 frame_started_us;
  double pasted_ms[G_N_ELEMENTS (pasted)];
  double typed_ms;
  GString *where;           /* how the time of each search went */
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
flushed_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  if (!chp_store_trace_flush_finish (CHP_STORE (source), result, &error))
    g_error ("flush: %s", error->message);
  *(gboolean *) user_data = TRUE;
}

typedef struct
{
  gboolean done;
  guint    n;
} Listed;

static void
listed_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Listed *listed = user_data;
  g_autoptr(GPtrArray) rows = chp_store_list_traces_finish (CHP_STORE (source), result, NULL);

  listed->n = rows != NULL ? rows->len : 0;
  listed->done = TRUE;
}

static void
flush (ChpStore *store)
{
  gboolean done = FALSE;

  chp_store_trace_flush_async (store, NULL, flushed_cb, &done);
  spin_until_flag (&done);
}

/* Sessions as agents leave them: a few sites, acts on named elements, now and then an error. */
static void
fill_traces (ChpStore *store)
{
  const char *tools[] = { "browser_snapshot", "browser_act", "browser_act", "browser_navigate" };
  const char *hosts[] = { "mail.example", "wiki.example", "shop.example", "bank-neighbour.example" };
  const char *names[] = { "Send", "Compose", "Search notes", "Save draft", "Open invoice" };

  for (int s = 0; s < N_SESSIONS; s++)
    {
      g_autoptr(ChpTraceHandle) trace = chp_store_trace_begin (store, s % 3 ? "claude-code"
                                                                            : "other-agent",
                                                               "Chromium");

      for (int i = 0; i < N_STEPS; i++)
        {
          g_autoptr(ChpTraceStep) step = chp_trace_step_new ();
          g_autofree char *path = g_strdup_printf ("/folder/%d/item", (s * 7 + i) % 500);

          step->tool = g_strdup (tools[i % 4]);
          step->args = g_strdup ("{\"tab\":\"b1:7\",\"action\":\"click\"}");
          step->run_us = 1000 + i * 37;
          step->outcome = g_strdup (i % 41 == 0 ? "error" : "ok");
          step->error_code = i % 41 == 0 ? g_strdup ("stale_node") : NULL;
          step->rung = g_strdup ("page");
          step->host = g_strdup (hosts[(s + i / 25) % 4]);
          step->path = g_steal_pointer (&path);
          step->role = g_strdup ("button");
          step->name = g_strdup (names[(s + i) % 5]);
          chp_store_trace_add_step (store, trace, step);
        }
      chp_store_trace_end (store, trace, s % 17 ? "completed" : "failed");
      /* The queue is the store's to drain: a million queued steps at once is no one's case. */
      if (s % 200 == 199)
        flush (store);
    }
  flush (store);
}

/* The list holds the first session read in for @search (NULL: every session); or, searched,
 * knows that nothing matches, which the page then says. */
static gboolean
first_loaded (Bench      *self,
              const char *search)
{
  g_autoptr(ChpTraceItem) item = NULL;

  if (chp_trace_list_get_loading (self->list) ||
      g_strcmp0 (chp_trace_list_get_query (self->list)->search, search) != 0)
    return FALSE;
  if (g_list_model_get_n_items (G_LIST_MODEL (self->list)) == 0)
    return search != NULL;
  item = g_list_model_get_item (G_LIST_MODEL (self->list), 0);
  return chp_trace_item_get_loaded (item);
}

static gboolean
awaiting_search (Bench *self)
{
  return self->phase == PHASE_PASTED || self->phase == PHASE_TYPED;
}

/* When the list has its rows, apart from when a frame shows them: the model's share. */
static void
list_changed_cb (Bench *self)
{
  if (self->phase == PHASE_FIRST_PAINT && self->ready_us == 0 && first_loaded (self, NULL))
    self->ready_us = g_get_monotonic_time ();
  if (awaiting_search (self) && self->search_ready_us == 0 && first_loaded (self, self->wanted))
    self->search_ready_us = g_get_monotonic_time ();
}

static void
search_changed_cb (Bench *self)
{
  if (awaiting_search (self) && self->changed_us == 0)
    self->changed_us = g_get_monotonic_time ();
}

/* What the person does: text in the search entry, as a key press or a paste leaves it. */
static void
type_text (Bench      *self,
           const char *text)
{
  self->typed_us = g_get_monotonic_time ();
  self->changed_us = 0;
  self->search_ready_us = 0;
  self->frames = 0;
  self->longest_frame_us = 0;
  gtk_editable_set_text (self->entry, text);
}

/* The rows the list view holds: what a frame lays out and a search makes anew. */
static guint
count_rows (Bench *self)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new ();

  chp_ui_test_find_all (GTK_WIDGET (chp_activity_page_get_sessions_view (self->page)),
                        CHP_TYPE_TRACE_ROW, rows);
  return rows->len;
}

static double
search_done (Bench *self,
             gint64 now)
{
  double ms = (now - self->typed_us) / 1000.0;

  g_string_append_printf (self->where, "    \"%s\": %.1f ms: search-changed after %.1f, the list "
                          "had the results after %.1f, their frame began at %.1f and took %.1f; "
                          "%u frame%s before it (the longest %.1f ms); %u sessions listed, %u "
                          "rows made\n", self->wanted, ms,
                          (self->changed_us - self->typed_us) / 1000.0,
                          (self->search_ready_us - self->typed_us) / 1000.0,
                          (self->frame_us - self->typed_us) / 1000.0,
                          (now - self->frame_us) / 1000.0, self->frames,
                          self->frames == 1 ? "" : "s", self->longest_frame_us / 1000.0,
                          g_list_model_get_n_items (G_LIST_MODEL (self->list)), count_rows (self));
  return ms;
}

static void
before_paint_cb (GdkFrameClock *clock,
                 Bench         *self)
{
  self->frame_started_us = g_get_monotonic_time ();
}

static void
after_paint_cb (GdkFrameClock *clock,
                Bench         *self)
{
  gint64 now = g_get_monotonic_time ();
  gboolean shown;

  switch (self->phase)
    {
    case PHASE_WINDOW:
      /* The window is up, on another page: now the person turns to Activity. */
      self->window_paint_us = now;
      self->phase = PHASE_FIRST_PAINT;
      self->started_us = g_get_monotonic_time ();
      chp_window_show_page (self->window, "activity");
      chp_activity_page_show_view (self->page, "sessions");
      return;

    case PHASE_FIRST_PAINT:
      if (!first_loaded (self, NULL))
        return;
      self->first_paint_us = now;
      self->phase = PHASE_PASTED;
      self->wanted = pasted[0];
      type_text (self, self->wanted);
      return;

    case PHASE_PASTED:
    case PHASE_TYPED:
      shown = first_loaded (self, self->wanted);
      if (!shown)
        {
          self->frames++;
          self->longest_frame_us = MAX (self->longest_frame_us, now - self->frame_started_us);
          return;
        }
      self->frame_us = self->frame_started_us;
      if (self->phase == PHASE_TYPED)
        {
          self->typed_ms = search_done (self, now);
          self->phase = PHASE_DONE;
          g_main_loop_quit (self->loop);
          return;
        }
      self->pasted_ms[self->n_pasted++] = search_done (self, now);
      if (self->n_pasted < G_N_ELEMENTS (pasted))
        {
          self->wanted = pasted[self->n_pasted];
          type_text (self, self->wanted);
          return;
        }
      self->phase = PHASE_CLEARED;
      gtk_editable_set_text (self->entry, "");
      return;

    case PHASE_CLEARED:
      if (!first_loaded (self, NULL))
        return;
      self->phase = PHASE_TYPING;
      self->typed_chars = 0;
      G_GNUC_FALLTHROUGH;

    case PHASE_TYPING:
      {
        g_autofree char *text = g_strndup (TYPED, ++self->typed_chars);

        /* A key at every frame: faster than a person types, so the searches pile up. */
        if (self->typed_chars == strlen (TYPED))
          {
            self->phase = PHASE_TYPED;
            self->wanted = TYPED;
          }
        type_text (self, text);
        /* A key that changes nothing on screen would wait for a frame that never comes. */
        gdk_frame_clock_request_phase (clock, GDK_FRAME_CLOCK_PHASE_PAINT);
      }
      return;

    case PHASE_DONE:
    default:
      return;
    }
}

static int
compare_double (gconstpointer a,
                gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *dir = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpEngine) engine = NULL;
  g_autoptr(GtkApplication) app = NULL;
  Bench self = { 0 };
  gboolean started = FALSE;
  GdkFrameClock *clock;
  ChpActivityPage *page;
  gint64 fill_us;
  double sorted[G_N_ELEMENTS (pasted)];

  /* As the app draws (src/main.c), unless the environment chose: GTK's GL renderer on Mesa's
   * software GL would make every frame several times slower than the person's. */
  if (g_getenv ("GDK_DEBUG") == NULL && g_getenv ("GSK_RENDERER") == NULL)
    {
      g_setenv ("GDK_DEBUG", "gl-disable", TRUE);
      g_setenv ("GSK_RENDERER", "cairo", TRUE);
    }

  if (!gtk_init_check ())
    {
      fprintf (stderr, "ui-trace-bench: no display (run it under xvfb-run)\n");
      return 77;
    }
  adw_init ();

  dir = g_dir_make_tmp ("chp-ui-trace-bench-XXXXXX", &error);
  g_assert_no_error (error);
  engine = chp_engine_new (dir);
  chp_engine_start_async (engine, 0, NULL, started_cb, &started);
  spin_until_flag (&started);
  /* A million steps of about 200 bytes: above the default cap, which would evict them. */
  chp_store_set_trace_cap (chp_engine_get_store (engine), (guint64) 1024 * 1024 * 1024);

  fill_us = g_get_monotonic_time ();
  fill_traces (chp_engine_get_store (engine));
  printf ("Trace browser over %d sessions of %d steps (%d steps)\n", N_SESSIONS, N_STEPS,
          N_SESSIONS * N_STEPS);
  printf ("  recorded them in %.1f s (not part of the figures)\n",
          (g_get_monotonic_time () - fill_us) / 1e6);

  app = GTK_APPLICATION (adw_application_new ("io.github.chaperone.Chaperone.UiTraceBench",
                                              G_APPLICATION_NON_UNIQUE));
  g_application_set_resource_base_path (G_APPLICATION (app), "/io/github/chaperone/Chaperone");
  g_application_register (G_APPLICATION (app), NULL, NULL);

  /* The store's own share of the search below, as the list asks it (the newest page). */
  {
    g_autoptr(ChpTraceQuery) query = chp_trace_query_new ();
    Listed listed = { 0, };
    gint64 t;

    query->search = g_strdup ("stale_node bank");
    /* The list holds its listing still while sessions begin: up to now. */
    query->until = g_get_real_time ();
    t = g_get_monotonic_time ();
    chp_store_list_traces_async (chp_engine_get_store (engine), query, 0,
                                 CHP_TRACE_LIST_PAGE_SIZE, NULL, listed_cb, &listed);
    spin_until_flag (&listed.done);
    printf ("  the store's search \"stale_node bank\": %.1f ms (%u sessions)\n",
            (g_get_monotonic_time () - t) / 1000.0, listed.n);
    t = g_get_monotonic_time ();
    flush (chp_engine_get_store (engine));
    printf ("  the store's flush with nothing queued: %.1f ms\n",
            (g_get_monotonic_time () - t) / 1000.0);
  }

  self.loop = g_main_loop_new (NULL, FALSE);
  self.window_us = g_get_monotonic_time ();
  self.window = chp_window_new (app);
  chp_window_set_engine (self.window, engine);
  chp_window_show_page (self.window, "browsers");
  page = CHP_ACTIVITY_PAGE (chp_ui_test_find_type (GTK_WIDGET (self.window),
                                                   CHP_TYPE_ACTIVITY_PAGE));
  self.page = page;
  self.list = chp_activity_page_get_trace_list (page);
  if (self.list == NULL)
    g_error ("the Activity page has no trace list");
  g_signal_connect_swapped (self.list, "items-changed", G_CALLBACK (list_changed_cb), &self);
  g_signal_connect_swapped (self.list, "notify::loading", G_CALLBACK (list_changed_cb), &self);
  /* The sessions' own search entry: what the person types into. */
  self.entry = GTK_EDITABLE (chp_ui_test_find_type (
    GTK_WIDGET (chp_activity_page_get_sessions_view (page)), GTK_TYPE_SEARCH_ENTRY));
  if (self.entry == NULL)
    g_error ("the sessions have no search entry");
  g_signal_connect_data (self.entry, "search-changed", G_CALLBACK (search_changed_cb), &self,
                         NULL, G_CONNECT_SWAPPED | G_CONNECT_AFTER);
  self.where = g_string_new (NULL);

  gtk_window_set_default_size (GTK_WINDOW (self.window), 1200, 800);
  gtk_window_present (GTK_WINDOW (self.window));
  clock = gtk_widget_get_frame_clock (GTK_WIDGET (self.window));
  g_signal_connect (clock, "before-paint", G_CALLBACK (before_paint_cb), &self);
  g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), &self);
  /* Frames come when something changed, as in the app: a frame clock kept running would paint
   * all the while, and the list's callbacks would wait behind its frames. */

  g_main_loop_run (self.loop);

  printf ("  the window's own first frame (another page): %.1f ms (GTK's start, not the page's)\n",
          (self.window_paint_us - self.window_us) / 1000.0);
  printf ("  time to first paint of the sessions: %.1f ms (turning to Activity to the first frame "
          "with sessions; target ≤ 200)\n", (self.first_paint_us - self.started_us) / 1000.0);
  if (self.ready_us > 0)
    printf ("    of which the list had its first sessions read after %.1f ms\n",
            (self.ready_us - self.started_us) / 1000.0);
  else
    printf ("    (the list had read its first sessions before the page was shown)\n");
  memcpy (sorted, self.pasted_ms, sizeof sorted);
  qsort (sorted, G_N_ELEMENTS (sorted), sizeof sorted[0], compare_double);
  printf ("  a search pasted into the search entry, to the first frame with its results "
          "(target ≤ 100): median %.1f ms, the slowest %.1f ms, over %u searches\n",
          (sorted[G_N_ELEMENTS (sorted) / 2 - 1] + sorted[G_N_ELEMENTS (sorted) / 2]) / 2,
          sorted[G_N_ELEMENTS (sorted) - 1], (guint) G_N_ELEMENTS (sorted));
  printf ("  \"%s\" typed a key at every frame, from the last key to the first frame with its "
          "results (target ≤ 100): %.1f ms\n", TYPED, self.typed_ms);
  printf ("  where the time went, search by search:\n%s", self.where->str);

  g_signal_handlers_disconnect_by_data (clock, &self);
  g_signal_handlers_disconnect_by_data (self.list, &self);
  gtk_window_destroy (GTK_WINDOW (self.window));
  g_clear_object (&engine);
  g_main_loop_unref (self.loop);
  g_string_free (self.where, TRUE);
  {
    g_autofree char *cmd = g_strdup_printf ("rm -rf '%s'", dir);

    if (system (cmd) != 0)
      fprintf (stderr, "ui-trace-bench: could not remove %s\n", dir);
  }
  return 0;
}
