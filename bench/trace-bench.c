/* SPDX-License-Identifier: GPL-3.0-or-later */
/* trace-bench.c: the trace store (chp-store-traces.h) on a real file: ingest in steps per
 * second, what adding a step costs the caller, and with a million steps (10,000 sessions) the
 * newest sessions' page, searches, a session's steps, forgetting one, and the cap held while
 * steps keep coming. It prints figures and never asserts; bench/run-bench.sh runs it. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "chp-store-traces.h"

static int n_steps = 1000000;
static int steps_per_session = 100;
static int n_cap_mib = 32;
static gboolean quick;
static char *keep_dir;

#define CHUNK 20000   /* steps queued between flushes while filling: bounds the queue's memory */
#define RUNS  15      /* of each read, for a median */

/* Waiting on the store from a plain main loop */

typedef struct
{
  gboolean      done;
  GAsyncResult *result;
} Wait;

static void
wait_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  Wait *wait = user_data;

  wait->result = g_object_ref (result);
  wait->done = TRUE;
}

static GAsyncResult *
wait_for (Wait *wait)
{
  while (!wait->done)
    g_main_context_iteration (NULL, TRUE);
  return g_steal_pointer (&wait->result);
}

/* CPU seconds the database thread (named "chaperone-db") has used: on a machine busy with other
 * work, the wall clock says what it got, this says what it needed. */
static double
db_thread_cpu_s (void)
{
  g_autoptr(GDir) tasks = g_dir_open ("/proc/self/task", 0, NULL);
  const char *tid;

  while (tasks != NULL && (tid = g_dir_read_name (tasks)) != NULL)
    {
      g_autofree char *comm_path = g_build_filename ("/proc/self/task", tid, "comm", NULL);
      g_autofree char *stat_path = g_build_filename ("/proc/self/task", tid, "stat", NULL);
      g_autofree char *comm = NULL;
      g_autofree char *stat = NULL;
      g_auto(GStrv) fields = NULL;
      const char *after;

      if (!g_file_get_contents (comm_path, &comm, NULL, NULL) ||
          !g_str_has_prefix (comm, "chaperone-db") ||
          !g_file_get_contents (stat_path, &stat, NULL, NULL) ||
          (after = strrchr (stat, ')')) == NULL)
        continue;
      /* After "pid (comm)": state is field 3; utime and stime are fields 14 and 15. */
      fields = g_strsplit (after + 2, " ", 0);
      if (g_strv_length (fields) > 12)
        return (g_ascii_strtod (fields[11], NULL) + g_ascii_strtod (fields[12], NULL)) /
               sysconf (_SC_CLK_TCK);
    }

  return 0;
}

static gint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

static int
cmp_double (gconstpointer a,
            gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static double
percentile (GArray *values,
            double  p)
{
  if (values->len == 0)
    return 0;
  g_array_sort (values, cmp_double);
  return g_array_index (values, double, MIN (values->len - 1, (guint) (values->len * p / 100)));
}

static ChpStore *
open_store (const char *dir,
            double     *ms)
{
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  ChpStore *store = chp_store_new (path);
  gint64 start = now_ns ();
  Wait wait = { 0 };

  chp_store_open_async (store, NULL, wait_cb, &wait);
  result = wait_for (&wait);
  if (!chp_store_open_finish (store, result, &error))
    g_error ("could not open the store: %s", error->message);
  if (ms != NULL)
    *ms = (now_ns () - start) / 1e6;

  return store;
}

static void
flush (ChpStore *store)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GError) error = NULL;
  Wait wait = { 0 };

  chp_store_trace_flush_async (store, NULL, wait_cb, &wait);
  result = wait_for (&wait);
  if (!chp_store_trace_flush_finish (store, result, &error))
    g_error ("a flush failed: %s", error->message);
}

static guint64
trace_size (ChpStore *store)
{
  g_autoptr(GAsyncResult) result = NULL;
  Wait wait = { 0 };
  guint64 bytes = 0;

  chp_store_trace_size_async (store, NULL, wait_cb, &wait);
  result = wait_for (&wait);
  chp_store_trace_size_finish (store, result, &bytes, NULL);
  return bytes;
}

/* Steps that look like an agent's: mostly snapshots and acts on a few hundred sites, an error
 * in twenty, a hold in a hundred, a screenshot on one failing step in fifty. */

static const char * const words[] = {
  "send", "money", "account", "transfer", "submit", "search", "login", "next", "save", "cancel",
  "open", "close", "edit", "delete", "view", "profile", "settings", "invoice", "order", "basket",
  "checkout", "payment", "address", "message", "reply", "forward", "archive", "calendar",
  "event", "task", "project", "issue", "comment", "review", "merge", "branch", "report",
  "export", "import", "upload", "download", "share", "invite", "member", "team", "billing",
  "plan", "upgrade", "support", "help",
};
static const char * const agents[] = { "claude-code", "cursor", "codex", "goose", "cline" };
static const char * const errors[] = {
  "stale_document", "timeout", "held", "not_found", "blind", "refused", "stopped",
};

static const char *
word (GRand *rand)
{
  return words[g_rand_int_range (rand, 0, G_N_ELEMENTS (words))];
}

static void
fill_step (GRand        *rand,
           guint         session,
           ChpTraceStep *step,
           char        **owned)
{
  guint pick = g_rand_int_range (rand, 0, 100);
  guint site = (session * 7 + g_rand_int_range (rand, 0, 3)) % 300;

  memset (step, 0, sizeof *step);
  step->tool = pick < 40 ? "browser_snapshot" : pick < 75 ? "browser_act" :
               pick < 85 ? "browser_navigate" : pick < 90 ? "browser_tabs" :
               pick < 95 ? "browser_inspect" : "browser_wait";
  /* A session works on one to three of 300 sites. */
  owned[0] = g_strdup_printf ("%s%u.example.com", words[site % G_N_ELEMENTS (words)], site);
  owned[1] = g_strdup_printf ("/%s/%s", word (rand), word (rand));
  owned[2] = g_strdup_printf ("%c%s %s", 'A' + g_rand_int_range (rand, 0, 26), word (rand),
                              word (rand));
  owned[3] = g_strdup_printf ("{\"ref\":\"e%u\",\"action\":\"%s\",\"text\":{\"length\":%u}}",
                              g_rand_int_range (rand, 1, 5000), pick < 60 ? "click" : "fill",
                              g_rand_int_range (rand, 0, 40));
  step->host = owned[0];
  step->path = owned[1];
  step->name = owned[2];
  step->args = owned[3];
  step->role = pick % 2 ? "button" : "textbox";
  step->rung = "page";
  step->queue_us = g_rand_int_range (rand, 0, 2000);
  step->run_us = g_rand_int_range (rand, 1000, 400000);
  step->page_us = step->run_us / 2;
  step->outcome = "ok";
  if (g_rand_int_range (rand, 0, 20) == 0)
    {
      step->outcome = "error";
      step->error_code = (char *) errors[g_rand_int_range (rand, 0, G_N_ELEMENTS (errors))];
      step->snippet = "Something went wrong. [redacted email len=17]";
    }
  if (g_rand_int_range (rand, 0, 100) == 0)
    {
      step->decision_kind = CHP_TRACE_DECISION_HOLD;
      step->decision = g_rand_boolean (rand) ? "approved" : "declined";
      step->decision_wait_us = g_rand_int_range (rand, 500000, 30000000);
    }
}

typedef struct
{
  double  ingest_steps_s;
  double  db_cpu_us_per_step;
  double  enqueue_median_us, enqueue_p99_us;
  double  paced_median_us, paced_p99_us;
  guint64 bytes;
} Fill;

/* Fills @dir with n_steps steps; times every add_step on the caller's side. */
static void
fill (const char *dir,
      Fill       *r)
{
  g_autoptr(ChpStore) store = open_store (dir, NULL);
  g_autoptr(GArray) costs = g_array_sized_new (FALSE, FALSE, sizeof (double), n_steps);
  g_autoptr(GArray) paced = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GRand) rand = g_rand_new_with_seed (16);
  g_autoptr(GBytes) jpeg = NULL;
  ChpTraceHandle *trace = NULL;
  guint8 *jpeg_data = g_malloc (15000);
  gint64 start;
  double cpu;
  int done = 0;

  memset (jpeg_data, 0x42, 15000);
  jpeg_data[0] = 0xff, jpeg_data[1] = 0xd8, jpeg_data[2] = 0xff;
  jpeg = g_bytes_new_take (jpeg_data, 15000);
  /* Nothing evicted while filling: the cap is measured on its own below. */
  chp_store_set_trace_cap (store, G_MAXUINT64);

  start = now_ns ();
  cpu = db_thread_cpu_s ();
  while (done < n_steps)
    {
      int chunk_end = MIN (done + CHUNK, n_steps);

      for (; done < chunk_end; done++)
        {
          char *owned[4];
          ChpTraceStep step;
          gint64 t0;
          guint seq;
          double us;

          if (done % steps_per_session == 0)
            {
              if (trace != NULL)
                {
                  chp_store_trace_end (store, trace, "ok");
                  chp_trace_handle_unref (trace);
                }
              trace = chp_store_trace_begin (store, agents[(done / steps_per_session) % 5],
                                             "Chromium");
            }
          fill_step (rand, done / steps_per_session, &step, owned);
          t0 = now_ns ();
          seq = chp_store_trace_add_step (store, trace, &step);
          us = (now_ns () - t0) / 1e3;
          g_array_append_val (costs, us);
          if (step.error_code != NULL && g_rand_int_range (rand, 0, 50) == 0)
            chp_store_trace_add_shot (store, trace, seq, jpeg, 640, 400);
          for (guint i = 0; i < G_N_ELEMENTS (owned); i++)
            g_free (owned[i]);
        }
      flush (store);
    }
  chp_store_trace_end (store, trace, "ok");
  g_clear_pointer (&trace, chp_trace_handle_unref);
  flush (store);
  r->ingest_steps_s = n_steps / ((now_ns () - start) / 1e9);
  r->db_cpu_us_per_step = (db_thread_cpu_s () - cpu) * 1e6 / n_steps;
  r->enqueue_median_us = percentile (costs, 50);
  r->enqueue_p99_us = percentile (costs, 99);

  /* As the engine calls it: one step per tool call, the database thread idle in between. */
  trace = chp_store_trace_begin (store, "paced", "Chromium");
  for (int i = 0; i < 2000; i++)
    {
      char *owned[4];
      ChpTraceStep step;
      gint64 t0;
      double us;

      fill_step (rand, 0, &step, owned);
      t0 = now_ns ();
      chp_store_trace_add_step (store, trace, &step);
      us = (now_ns () - t0) / 1e3;
      g_array_append_val (paced, us);
      for (guint j = 0; j < G_N_ELEMENTS (owned); j++)
        g_free (owned[j]);
      if (i % 10 == 9)
        flush (store);
    }
  chp_store_trace_end (store, trace, "ok");
  g_clear_pointer (&trace, chp_trace_handle_unref);
  flush (store);
  r->paced_median_us = percentile (paced, 50);
  r->paced_p99_us = percentile (paced, 99);
  r->bytes = trace_size (store);
  chp_store_close (store);
}

static double
time_list (ChpStore            *store,
           const ChpTraceQuery *query,
           guint                offset,
           guint                limit,
           guint               *found)
{
  g_autoptr(GArray) times = g_array_new (FALSE, FALSE, sizeof (double));

  for (int i = 0; i < RUNS; i++)
    {
      g_autoptr(GAsyncResult) result = NULL;
      g_autoptr(GPtrArray) sessions = NULL;
      g_autoptr(GError) error = NULL;
      gint64 start = now_ns ();
      Wait wait = { 0 };
      double ms;

      chp_store_list_traces_async (store, query, offset, limit, NULL, wait_cb, &wait);
      result = wait_for (&wait);
      sessions = chp_store_list_traces_finish (store, result, &error);
      if (sessions == NULL)
        g_error ("listing failed: %s", error->message);
      ms = (now_ns () - start) / 1e6;
      g_array_append_val (times, ms);
      *found = sessions->len;
    }

  return percentile (times, 50);
}

static char *
newest_session (ChpStore *store)
{
  g_autoptr(GAsyncResult) result = NULL;
  g_autoptr(GPtrArray) sessions = NULL;
  Wait wait = { 0 };

  chp_store_list_traces_async (store, NULL, 1, 1, NULL, wait_cb, &wait);
  result = wait_for (&wait);
  sessions = chp_store_list_traces_finish (store, result, NULL);
  return g_strdup (((ChpTraceSession *) g_ptr_array_index (sessions, 0))->id);
}

static void
reads (const char *dir)
{
  static const struct { const char *label; ChpTraceQuery query; } lists[] = {
    { "newest 50 sessions", { NULL } },
    { "newest 50 of one agent", { .agent = "codex" } },
    { "newest 50 on one site", { .site = "invite42.example.com" } },
  };
  static const char * const searches[] = {
    "stale_document", "invite42", "send money", "chec", "checkout payment timeout",
    "browser_wait", "nothingmatches",
  };
  g_autofree char *id = NULL;
  g_autoptr(ChpStore) store = NULL;
  double open_ms, worst_search = 0;
  guint found = 0;

  store = open_store (dir, &open_ms);
  printf ("  open (store and trace file):  %8.1f ms\n", open_ms);

  for (guint i = 0; i < G_N_ELEMENTS (lists); i++)
    {
      double ms = time_list (store, &lists[i].query, 0, 50, &found);

      printf ("  list %-26s %8.2f ms  (%u sessions)\n", lists[i].label, ms, found);
    }
  printf ("  list page at offset 5,000:    %8.2f ms\n", time_list (store, NULL, 5000, 50, &found));

  for (guint i = 0; i < G_N_ELEMENTS (searches); i++)
    {
      ChpTraceQuery query = { .search = (char *) searches[i] };
      double ms = time_list (store, &query, 0, 50, &found);

      worst_search = MAX (worst_search, ms);
      printf ("  search %-24s %8.2f ms  (%u sessions)\n", searches[i], ms, found);
    }
  printf ("  slowest search (median):      %8.2f ms   target <= 100 ms\n", worst_search);

  id = newest_session (store);
  {
    g_autoptr(GArray) times = g_array_new (FALSE, FALSE, sizeof (double));

    for (int i = 0; i < RUNS; i++)
      {
        g_autoptr(GAsyncResult) result = NULL;
        g_autoptr(GPtrArray) steps = NULL;
        gint64 start = now_ns ();
        Wait wait = { 0 };
        double ms;

        chp_store_load_trace_steps_async (store, id, 0, 0, NULL, wait_cb, &wait);
        result = wait_for (&wait);
        steps = chp_store_load_trace_steps_finish (store, result, NULL);
        ms = (now_ns () - start) / 1e6;
        g_array_append_val (times, ms);
        found = steps != NULL ? steps->len : 0;
      }
    printf ("  load one session's steps:     %8.2f ms  (%u steps)\n", percentile (times, 50),
            found);
  }
  {
    g_autoptr(GAsyncResult) result = NULL;
    gint64 start = now_ns ();
    Wait wait = { 0 };

    chp_store_forget_trace_async (store, id, NULL, wait_cb, &wait);
    result = wait_for (&wait);
    chp_store_write_finish (store, result, NULL);
    printf ("  forget one session:           %8.2f ms\n", (now_ns () - start) / 1e6);
  }
  chp_store_close (store);
}

/* A lower cap on the full file, then steps keep coming: the file's size after every flush. */
static void
cap (const char *dir)
{
  g_autoptr(ChpStore) store = open_store (dir, NULL);
  g_autoptr(GRand) rand = g_rand_new_with_seed (61);
  guint64 cap_bytes = (guint64) n_cap_mib * 1024 * 1024;
  guint64 size = trace_size (store), lowest = G_MAXUINT64, highest = 0;
  gint64 start = now_ns ();
  ChpTraceHandle *trace = NULL;
  int more = quick ? 50000 : 200000;

  printf ("  cap lowered from none to %d MiB on the %.1f MB file: ", n_cap_mib, size / 1e6);
  fflush (stdout);
  chp_store_set_trace_cap (store, cap_bytes);
  /* The eviction runs in jobs of 200 ms; each size read waits behind the one queued. */
  while ((size = trace_size (store)) > cap_bytes)
    ;
  printf ("evicted in %.2f s, the file then %.2f%% of the cap\n",
          (now_ns () - start) / 1e9, 100.0 * size / cap_bytes);

  for (int i = 0; i < more; i++)
    {
      char *owned[4];
      ChpTraceStep step;

      if (i % steps_per_session == 0)
        {
          if (trace != NULL)
            {
              chp_store_trace_end (store, trace, "ok");
              chp_trace_handle_unref (trace);
            }
          trace = chp_store_trace_begin (store, agents[i % 5], "Chromium");
        }
      fill_step (rand, i / steps_per_session, &step, owned);
      chp_store_trace_add_step (store, trace, &step);
      for (guint j = 0; j < G_N_ELEMENTS (owned); j++)
        g_free (owned[j]);
      if (i % 1000 == 999)
        {
          flush (store);
          size = trace_size (store);
          lowest = MIN (lowest, size);
          highest = MAX (highest, size);
        }
    }
  chp_store_trace_end (store, trace, "ok");
  g_clear_pointer (&trace, chp_trace_handle_unref);
  flush (store);
  printf ("  %d more steps under the cap: the file between %.2f%% and %.2f%% of it\n",
          more, 100.0 * lowest / cap_bytes, 100.0 * highest / cap_bytes);
  chp_store_close (store);
}

static void
remove_dir (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  while (d != NULL && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      g_unlink (path);
    }
  g_rmdir (dir);
}

int
main (int   argc,
      char *argv[])
{
  const GOptionEntry entries[] = {
    { "steps", 0, 0, G_OPTION_ARG_INT, &n_steps, "Steps to fill the trace file with", "N" },
    { "cap-mib", 0, 0, G_OPTION_ARG_INT, &n_cap_mib, "The cap to hold, in MiB", "N" },
    { "quick", 'q', 0, G_OPTION_ARG_NONE, &quick, "100,000 steps, a shorter cap run", NULL },
    { "keep", 0, 0, G_OPTION_ARG_FILENAME, &keep_dir, "Fill this folder and keep it", "DIR" },
    { NULL }
  };
  g_autoptr(GOptionContext) context = g_option_context_new ("— the trace store's figures");
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = NULL;
  Fill r = { 0 };

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }
  if (quick && n_steps == 1000000)
    n_steps = 100000;

  dir = keep_dir != NULL ? g_strdup (keep_dir) : g_dir_make_tmp ("chp-trace-bench-XXXXXX", NULL);
  g_mkdir_with_parents (dir, 0700);
  printf ("trace-bench: %d steps in sessions of %d, in %s\n", n_steps, steps_per_session, dir);

  fill (dir, &r);
  printf ("  ingest:                       %8.0f steps/s   target >= 50,000\n", r.ingest_steps_s);
  printf ("  database thread: %.1f us of CPU per step (%.0f steps/s on a core of its own)\n",
          r.db_cpu_us_per_step, 1e6 / r.db_cpu_us_per_step);
  printf ("  add_step, caller's cost while filling: median %.2f us, p99 %.2f us\n",
          r.enqueue_median_us, r.enqueue_p99_us);
  printf ("  add_step, one per call (store idle):    median %.2f us, p99 %.2f us"
          "   target <= 50 us\n",
          r.paced_median_us, r.paced_p99_us);
  printf ("  trace file: %.1f MB, %.0f bytes per step (screenshots included)\n",
          r.bytes / 1e6, (double) r.bytes / n_steps);

  reads (dir);
  cap (dir);

  if (keep_dir == NULL)
    remove_dir (dir);
  return 0;
}
