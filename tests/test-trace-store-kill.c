/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-trace-store-kill.c: nothing acknowledged is lost when the app is killed. A child (this
 * binary run with --child) records steps without pause and prints each step number a flush
 * acknowledged; the parent kills it with SIGKILL after a few acknowledgements, at whatever
 * point the writes are, then opens the store itself: every acknowledged step is there and the
 * files pass SQLite's integrity check. 200 times over one pair of files. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gunixinputstream.h>

#include "chp-store-traces.h"
#include "chp-test-client.h"
#include "test-trace-store-util.h"

#define CYCLES 200

/* A child records at most this many steps (then waits to be killed): well under the cap, so
 * the cap never trims the child's own session, whose acknowledged steps the parent checks. A
 * parent kills long before, after at most five acknowledgements of at most 39 steps each. */
#define CHILD_MAX_STEPS 600

/* The child */

typedef struct
{
  ChpStore       *store;
  ChpTraceHandle *trace;
  GRand          *rand;
  GBytes         *jpeg;
} Child;

typedef struct
{
  Child *child;
  guint  seq;   /* the last step the flush covers */
} Ack;

static void child_round (Child *child);

static void
child_flushed_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autofree Ack *ack = user_data;
  g_autoptr(GError) error = NULL;

  if (!chp_store_trace_flush_finish (ack->child->store, result, &error))
    g_error ("child: a flush failed: %s", error->message);

  /* Acknowledged: now, and only now, the parent may count on it. */
  printf ("ack %u\n", ack->seq);
  fflush (stdout);
  if (ack->seq < CHILD_MAX_STEPS)
    child_round (ack->child);
}

/* A few steps (a screenshot now and then) and a flush that covers them. Two rounds are always
 * in flight, so the kill finds steps queued, being written or being committed. */
static void
child_round (Child *child)
{
  guint n = g_rand_int_range (child->rand, 1, 40);
  Ack *ack = g_new0 (Ack, 1);

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *name = g_strdup_printf ("Button %u", g_rand_int (child->rand));
      ChpTraceStep step = {
        .tool = "browser_act", .args = "{\"ref\":\"e4\",\"action\":\"click\"}",
        .host = "kill.example", .path = "/page", .role = "button", .name = name,
        .run_us = g_rand_int_range (child->rand, 100, 100000), .outcome = "ok",
      };

      ack->seq = chp_store_trace_add_step (child->store, child->trace, &step);
      g_assert_cmpuint (ack->seq, >, 0);
      if (g_rand_int_range (child->rand, 0, 25) == 0)
        chp_store_trace_add_shot (child->store, child->trace, ack->seq, child->jpeg, 64, 48);
    }

  ack->child = child;
  chp_store_trace_flush_async (child->store, NULL, child_flushed_cb, ack);
}

static int
child_main (const char *dir,
            guint32     seed)
{
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GError) error = NULL;
  Child child = { 0 };

  child.store = tt_open_store (path, &error);
  if (child.store == NULL)
    g_error ("child: could not open the store: %s", error->message);
  /* The smallest cap: the files fill it in a few dozen cycles, and from then on the kill
   * also lands in evictions and vacuums (of the earlier, interrupted sessions). */
  chp_store_set_trace_cap (child.store, CHP_TRACE_MIN_CAP);
  child.rand = g_rand_new_with_seed (seed);
  child.jpeg = tt_fake_jpeg (3000 + g_rand_int_range (child.rand, 0, 20000), 0x77);
  child.trace = chp_store_trace_begin (child.store, "kill-test", "Chromium");
  printf ("session %s\n", chp_trace_handle_get_id (child.trace));
  fflush (stdout);

  child_round (&child);
  child_round (&child);
  /* Until killed. */
  g_main_loop_run (loop);

  return 1;
}

/* The parent */

static char *
read_line (GDataInputStream *in,
           const char       *prefix)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *line = g_data_input_stream_read_line (in, NULL, NULL, &error);

  g_assert_no_error (error);
  if (line == NULL)
    g_error ("the child ended before it said \"%s\"", prefix);
  if (!g_str_has_prefix (line, prefix))
    g_error ("the child said \"%s\", not \"%s…\"", line, prefix);

  return g_strdup (line + strlen (prefix));
}

/* Checks every acknowledged step of @session_id, 1 to @acked, is in the store. */
static void
check_acknowledged (const char *dir,
                    const char *session_id,
                    guint       acked,
                    guint       cycle)
{
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autofree char *trace_path = g_build_filename (dir, "traces.db", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpStore) store = tt_open_store (path, &error);
  g_autoptr(GPtrArray) steps = NULL;

  g_assert_no_error (error);
  steps = tt_steps (store, session_id, 0, acked, &error);
  if (steps == NULL)
    g_error ("cycle %u: the killed child's session is gone: %s", cycle, error->message);
  if (steps->len < acked)
    g_error ("cycle %u: %u steps were acknowledged, %u are stored", cycle, acked, steps->len);
  for (guint i = 0; i < acked; i++)
    g_assert_cmpuint (((ChpTraceStep *) g_ptr_array_index (steps, i))->seq, ==, i + 1);
  tt_close_store (&store);

  tt_assert_file_ok (trace_path);
  {
    sqlite3 *db = tt_open_file (path);
    g_autofree char *check = tt_file_text (db, "PRAGMA integrity_check");

    g_assert_cmpstr (check, ==, "ok");
    sqlite3_close (db);
  }
}

static void
test_kill_loop (void)
{
  g_autofree char *dir = tt_make_tmp ();
  g_autofree char *self_exe = g_file_read_link ("/proc/self/exe", NULL);
  gint64 start = g_get_monotonic_time ();
  guint total_acked = 0;

  g_assert_nonnull (self_exe);

  for (guint cycle = 0; cycle < CYCLES; cycle++)
    {
      g_autofree char *seed = g_strdup_printf ("%u", g_test_rand_int ());
      const char *argv[] = { self_exe, "--child", dir, seed, NULL };
      g_autoptr(GError) error = NULL;
      g_autoptr(GInputStream) raw = NULL;
      g_autoptr(GDataInputStream) in = NULL;
      g_autofree char *session_id = NULL;
      guint want = g_test_rand_int_range (1, 6);
      guint acked = 0;
      int out_fd = -1, status = 0;
      GPid pid;

      g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv, NULL,
                                               G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
                                               NULL, &out_fd, NULL, &error));
      g_assert_no_error (error);
      raw = g_unix_input_stream_new (out_fd, TRUE);
      in = g_data_input_stream_new (raw);

      /* Wait on what the child says, never on time. */
      session_id = read_line (in, "session ");
      for (guint i = 0; i < want; i++)
        {
          g_autofree char *seq = read_line (in, "ack ");

          acked = MAX (acked, (guint) g_ascii_strtoull (seq, NULL, 10));
        }

      g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
      g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
      g_assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
      g_spawn_close_pid (pid);

      check_acknowledged (dir, session_id, acked, cycle);
      total_acked += acked;
    }

  g_test_message ("%u kill -9 cycles, %u acknowledged steps, all kept, in %.1f s", CYCLES,
                  total_acked, (g_get_monotonic_time () - start) / 1e6);

  /* The cap was reached and held: the kills landed in evictions too. */
  {
    g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
    g_autoptr(ChpStore) store = tt_open_store (path, NULL);
    g_autoptr(GPtrArray) sessions = tt_list (store, NULL, 0, 1000);
    guint64 size = tt_size (store);

    g_test_message ("%u sessions of %u kept, the file %" G_GUINT64_FORMAT " bytes", sessions->len,
                    CYCLES, size);
    g_assert_cmpuint (sessions->len, <, CYCLES / 2);
    g_assert_cmpuint (size, <=, CHP_TRACE_MIN_CAP + CHP_TRACE_MIN_CAP / 100);
    tt_close_store (&store);
  }
  tt_remove_tmp (dir);
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 4 && g_str_equal (argv[1], "--child"))
    return child_main (argv[2], (guint32) g_ascii_strtoull (argv[3], NULL, 10));

  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/trace-store/kill-9", test_kill_loop);

  return g_test_run ();
}
