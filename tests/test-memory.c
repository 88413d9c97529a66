/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-memory.c: after a large payload the heap is trimmed once the main loop has been idle for a
 * moment, once for a whole burst, whichever thread handled the payloads; small payloads never
 * ask for it. */
#include "config.h"

#include "chp-memory.h"

static gboolean
deadline_cb (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs the main context until the trim count passes @count, or @timeout_ms passes. */
static gboolean
wait_trims_above (guint count,
                  guint timeout_ms)
{
  gboolean expired = FALSE;
  guint deadline = g_timeout_add (timeout_ms, deadline_cb, &expired);

  while (chp_memory_get_trims () <= count && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (!expired)
    g_source_remove (deadline);
  return chp_memory_get_trims () > count;
}

static void
test_memory_small_payloads_do_not_trim (void)
{
  guint before = chp_memory_get_trims ();

  chp_memory_trim_after (CHP_MEMORY_TRIM_THRESHOLD - 1, "a small message");
  /* Longer than the trim's idle delay (1.5 s): nothing was asked, nothing runs. */
  g_assert_false (wait_trims_above (before, 2500));
}

static gpointer
large_payloads_thread (gpointer data)
{
  for (guint i = 0; i < 10; i++)
    chp_memory_trim_after (16 * 1024 * 1024, "a large message was parsed");
  return NULL;
}

static void
test_memory_a_burst_trims_once (void)
{
  guint before = chp_memory_get_trims ();
  GThread *worker = g_thread_new ("payloads", large_payloads_thread, NULL);

  g_thread_join (worker);
  g_assert_true (wait_trims_above (before, 10000));
  g_assert_cmpuint (chp_memory_get_trims (), ==, before + 1);
  /* And no second one for the same burst. */
  g_assert_false (wait_trims_above (before + 1, 2500));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/memory/small-payloads-do-not-trim", test_memory_small_payloads_do_not_trim);
  g_test_add_func ("/memory/a-burst-trims-once", test_memory_a_burst_trims_once);
  return g_test_run ();
}
