/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chaperone-bench.c: what the bridge costs over the bare transport it is built on, measured in
 * one process: round trips, a 16 MiB message, pairing wall time and the engine's memory; and
 * how long a 16 MiB snapshot stalls the main loop in the agent's tools (chp-bench-agent.c).
 * It prints figures and never asserts; bench/run-bench.sh runs it. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib/gstdio.h>
#include <libsoup/soup.h>

#include "chp-bench-harness.h"

static int n_rtt = 10000;
static int n_big = 5;
static int n_pairings = 20;
static int n_agent = 3;
static int n_warmup = 200;

/* The measurements */

typedef struct
{
  long   rss_before_kib;
  long   rss_after_kib;
  double start_ms;

  double rtt_median_us, rtt_p99_us;
  double bare_median_us, bare_p99_us;
  double rtt_block_ms, audit_drain_ms;
  guint  rtt_failures;

  gsize  big_bytes;
  double big_mibs, bare_big_mibs;
  double big_ms, bare_big_ms;
  guint  big_failures;

  double pair_median_ms, pair_p99_ms, pair_min_ms, pair_max_ms;
  guint  pairings, pair_failures;

  ChpBenchAgent agent;
} Results;

static void
measure_rss (Results *r)
{
  gint64 start;
  Engine *e;

  /* Before anything else has loaded the core's types, libraries and key: what the app pays. */
  r->rss_before_kib = vm_rss_kib ();
  start = now_ns ();
  e = engine_start ();
  r->start_ms = (now_ns () - start) / 1e6;
  r->rss_after_kib = vm_rss_kib ();
  engine_stop (e);
}

static ChpTestClient *
paired_connected_client (Engine *e)
{
  g_autoptr(ChpTestClient) client = chp_test_client_new (e->port, NULL);

  if (pair_client (e, client) < 0 || !chp_test_client_connect (client, NULL))
    g_error ("could not pair and connect the bench client");

  return g_steal_pointer (&client);
}

/* In blocks, alternating, so that drift on a shared machine hits both sides alike; the store
 * catches up between a Chaperone block and a bare block, so that its backlog is not timed as
 * libsoup's. */
#define RTT_BLOCK 500

static void
measure_rtt (Results *r)
{
  g_autoptr(GArray) chp = g_array_sized_new (FALSE, FALSE, sizeof (double), n_rtt);
  g_autoptr(GArray) bare_rtt = g_array_sized_new (FALSE, FALSE, sizeof (double), n_rtt);
  g_autoptr(JsonNode) params = json_from_string ("{\"tab\":7,\"text\":\"hello\"}", NULL);
  g_autofree char *frame = NULL;
  Engine *e = engine_start ();
  ChpTestClient *client = paired_connected_client (e);
  Answerer *answerer = answerer_new (client);
  Bare *bare = bare_new ();
  int done = -n_warmup;

  r->rtt_block_ms = r->audit_drain_ms = 0;

  /* The bare pair echoes exactly the frame the engine sends for this call. */
  frame = chp_frame_build_request ("e1", "bench.echo", params, 5000);

  while (done < n_rtt)
    {
      int block = done < 0 ? -done : MIN (RTT_BLOCK, n_rtt - done);
      gint64 block_start = now_ns ();

      for (int i = 0; i < block; i++)
        {
          gint64 a = bridge_call (e, client, params, 5000);
          double us = a / 1e3;

          if (a < 0)
            r->rtt_failures++;
          else if (done >= 0)
            g_array_append_val (chp, us);
        }
      if (done >= 0)
        r->rtt_block_ms += (now_ns () - block_start) / 1e6;

      /* Whatever the store still has to write for this block is part of its cost. */
      r->audit_drain_ms += done >= 0 ? store_barrier (e) : 0;
      if (done < 0)
        store_barrier (e);

      for (int i = 0; i < block; i++)
        {
          gint64 b = bare_echo (bare, frame, 5000);
          double us = b / 1e3;

          if (b < 0)
            r->rtt_failures++;
          else if (done >= 0)
            g_array_append_val (bare_rtt, us);
        }

      done += block;
    }

  r->rtt_median_us = percentile (chp, 50);
  r->rtt_p99_us = percentile (chp, 99);
  r->bare_median_us = percentile (bare_rtt, 50);
  r->bare_p99_us = percentile (bare_rtt, 99);

  bare_free (bare);
  answerer_free (answerer);
  chp_test_client_free (client);
  engine_stop (e);
}

static void
measure_big (Results *r)
{
  g_autoptr(GArray) chp = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) bare_big = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) params = NULL;
  g_autofree char *payload = NULL;
  g_autofree char *request = NULL;
  g_autofree char *bare_text = NULL;
  gsize text_len = BIG_MESSAGE_BYTES - BIG_ENVELOPE_SLACK;
  Engine *e;
  ChpTestClient *client;
  Answerer *answerer;
  Bare *bare;

  /* Plain ASCII, so neither side pays for escapes: what is measured is the chunking. */
  payload = g_malloc (text_len + 1);
  memset (payload, 'a', text_len);
  payload[text_len] = '\0';
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "data");
  json_builder_add_string_value (builder, payload);
  json_builder_end_object (builder);
  params = json_builder_get_root (builder);

  /* The bare pair echoes the same bytes, as one frame. */
  request = chp_frame_build_request ("e1", "bench.echo", params, 60000);
  r->big_bytes = strlen (request);
  bare_text = g_steal_pointer (&request);

  e = engine_start ();
  client = paired_connected_client (e);
  answerer = answerer_new (client);
  bare = bare_new ();

  for (int i = -1; i < n_big; i++)
    {
      gint64 a = bridge_call (e, client, params, 60000);
      gint64 b;

      store_barrier (e);
      b = bare_echo (bare, bare_text, 60000);

      if (i < 0)
        continue;
      if (a < 0 || b < 0)
        {
          r->big_failures++;
          continue;
        }
      {
        double a_ms = a / 1e6, b_ms = b / 1e6;

        g_array_append_val (chp, a_ms);
        g_array_append_val (bare_big, b_ms);
      }
    }

  r->big_ms = percentile (chp, 50);
  r->bare_big_ms = percentile (bare_big, 50);
  /* One message out and its echo back, counted once: the message's MiB per second of round trip. */
  r->big_mibs = r->big_bytes / (1024.0 * 1024.0) / (r->big_ms / 1e3);
  r->bare_big_mibs = r->big_bytes / (1024.0 * 1024.0) / (r->bare_big_ms / 1e3);

  bare_free (bare);
  answerer_free (answerer);
  chp_test_client_free (client);
  engine_stop (e);
}

static void
measure_pairing (Results *r)
{
  g_autoptr(GArray) times = g_array_new (FALSE, FALSE, sizeof (double));
  Engine *e = NULL;

  for (int i = 0; i < n_pairings; i++)
    {
      g_autoptr(ChpTestClient) client = NULL;
      double ms;

      if (i % PAIRINGS_PER_ENGINE == 0)
        {
          g_clear_pointer (&e, engine_stop);
          e = engine_start ();
        }

      /* A new installation each time; its key is made before the clock starts, as the
       * extension makes it before it opens /pairing. */
      client = chp_test_client_new (e->port, NULL);
      ms = pair_client (e, client);
      if (ms < 0)
        {
          r->pair_failures++;
          continue;
        }
      g_array_append_val (times, ms);
    }
  g_clear_pointer (&e, engine_stop);

  r->pairings = times->len;
  r->pair_median_ms = percentile (times, 50);
  r->pair_p99_ms = percentile (times, 99);
  r->pair_min_ms = times->len ? g_array_index (times, double, 0) : NAN;
  r->pair_max_ms = times->len ? g_array_index (times, double, times->len - 1) : NAN;
}

/* A JSON member for the summary line: null when the figure was not measured. */
static void
json_num (GString    *json,
          const char *name,
          double      value,
          int         decimals)
{
  g_string_append_printf (json, "\"%s\":", name);
  if (isfinite (value))
    g_string_append_printf (json, "%.*f,", decimals, value);
  else
    g_string_append (json, "null,");
}

static void
json_end_object (GString *json)
{
  if (json->str[json->len - 1] == ',')
    g_string_truncate (json, json->len - 1);
  g_string_append (json, "},");
}

static void
print_results (const Results *r)
{
  double rtt_ratio = r->rtt_median_us / r->bare_median_us;
  double rtt_p99_ratio = r->rtt_p99_us / r->bare_p99_us;
  double big_ratio = r->big_mibs / r->bare_big_mibs;
  g_autoptr(GString) json = g_string_new ("{");
  const char *rule = "----------------------------------------------";

  printf ("\nChaperone core benchmark (one process, 127.0.0.1, libsoup %u.%u.%u)\n\n",
          soup_get_major_version (), soup_get_minor_version (), soup_get_micro_version ());
  printf ("%-46s %14s %14s %9s %7s\n", "measure", "chaperone", "bare libsoup", "ratio", "target");
  printf ("%-46s %14.14s %14.14s %9.9s %7.7s\n", rule, rule, rule, rule, rule);

  if (n_rtt > 0)
    {
      g_autofree char *label = g_strdup_printf ("small round trip, median (n=%d)", n_rtt);

      printf ("%-46s %11.1f us %11.1f us %8.2fx %7s\n", label,
              r->rtt_median_us, r->bare_median_us, rtt_ratio, "<= 2x");
      printf ("%-46s %11.1f us %11.1f us %8.2fx\n", "small round trip, p99",
              r->rtt_p99_us, r->bare_p99_us, rtt_p99_ratio);
      printf ("%-46s %11.0f ms   (after %.0f ms of calls)\n",
              "store catching up on the calls' audit", r->audit_drain_ms, r->rtt_block_ms);
    }
  if (n_big > 0)
    {
      g_autofree char *label = g_strdup_printf ("%.1f MiB echo, median of %d",
                                                r->big_bytes / 1048576.0, n_big);

      printf ("%-46s %8.1f MiB/s %8.1f MiB/s %8.0f%% %7s\n", label,
              r->big_mibs, r->bare_big_mibs, big_ratio * 100, ">= 50%");
      printf ("%-46s %11.1f ms %11.1f ms\n", "  its round trip", r->big_ms, r->bare_big_ms);
    }
  if (n_pairings > 0)
    {
      g_autofree char *label = g_strdup_printf ("pairing to pair_approved, median (n=%u)",
                                                r->pairings);

      printf ("%-46s %11.1f ms\n", label, r->pair_median_ms);
      printf ("%-46s %11.1f ms   (min %.1f, max %.1f)\n", "pairing, p99", r->pair_p99_ms,
              r->pair_min_ms, r->pair_max_ms);
    }
  if (n_agent > 0)
    {
      const ChpBenchAgent *a = &r->agent;

      printf ("\n%.1f MiB snapshot (%u elements), median of %d: longest main-loop stall, and "
              "call to result\n", a->answer_bytes / 1048576.0, a->nodes, a->repeats);
      printf ("%-46s %11.1f ms %11.1f ms\n", "  the engine's call alone (bridge: parse)",
              a->engine_stall_ms, a->engine_total_ms);
      printf ("%-46s %11.1f ms %11.1f ms\n", "  browser_snapshot, formatted on main thread",
              a->main_stall_ms, a->main_total_ms);
      printf ("%-46s %11.1f ms %11.1f ms\n", "  browser_snapshot, formatted in a worker",
              a->worker_stall_ms, a->worker_total_ms);
      printf ("browser_act (fill), median of %d each: %.1f µs traced, %.1f µs not; tracing "
              "adds %.1f µs (target ≤ 50)\n\n", a->act_calls, a->act_traced_us,
              a->act_untraced_us, a->act_traced_us - a->act_untraced_us);
    }
  printf ("%-46s %11.1f ms\n", "first engine start (makes the key)", r->start_ms);
  printf ("%-46s %8ld KiB   (%ld -> %ld KiB)\n", "VmRSS added by starting the engine (core)",
          r->rss_after_kib - r->rss_before_kib, r->rss_before_kib, r->rss_after_kib);
  if (r->rtt_failures || r->big_failures || r->pair_failures || r->agent.failures)
    printf ("\nfailures: %u round trips, %u big echoes, %u pairings, %u snapshots\n",
            r->rtt_failures, r->big_failures, r->pair_failures, r->agent.failures);

  /* One line for scripts, the last of the output. */
  g_string_append_printf (json, "\"rtt_us\":{\"n\":%d,", n_rtt);
  json_num (json, "chaperone_median", r->rtt_median_us, 2);
  json_num (json, "chaperone_p99", r->rtt_p99_us, 2);
  json_num (json, "bare_median", r->bare_median_us, 2);
  json_num (json, "bare_p99", r->bare_p99_us, 2);
  json_num (json, "ratio_median", rtt_ratio, 3);
  json_num (json, "ratio_p99", rtt_p99_ratio, 3);
  json_num (json, "audit_drain_ms", r->audit_drain_ms, 0);
  g_string_append_printf (json, "\"failures\":%u", r->rtt_failures);
  json_end_object (json);

  g_string_append_printf (json, "\"big\":{\"bytes\":%" G_GSIZE_FORMAT ",\"repeats\":%d,",
                          r->big_bytes, n_big);
  json_num (json, "chaperone_ms", r->big_ms, 1);
  json_num (json, "bare_ms", r->bare_big_ms, 1);
  json_num (json, "chaperone_mib_s", r->big_mibs, 1);
  json_num (json, "bare_mib_s", r->bare_big_mibs, 1);
  json_num (json, "ratio", big_ratio, 3);
  g_string_append_printf (json, "\"failures\":%u", r->big_failures);
  json_end_object (json);

  g_string_append_printf (json, "\"pairing_ms\":{\"n\":%u,", r->pairings);
  json_num (json, "median", r->pair_median_ms, 2);
  json_num (json, "p99", r->pair_p99_ms, 2);
  json_num (json, "min", r->pair_min_ms, 2);
  json_num (json, "max", r->pair_max_ms, 2);
  g_string_append_printf (json, "\"failures\":%u", r->pair_failures);
  json_end_object (json);

  g_string_append_printf (json, "\"agent_snapshot_ms\":{\"bytes\":%" G_GSIZE_FORMAT
                          ",\"repeats\":%d,", r->agent.answer_bytes, n_agent);
  json_num (json, "engine_stall", r->agent.engine_stall_ms, 1);
  json_num (json, "engine_total", r->agent.engine_total_ms, 1);
  json_num (json, "main_thread_stall", r->agent.main_stall_ms, 1);
  json_num (json, "main_thread_total", r->agent.main_total_ms, 1);
  json_num (json, "worker_stall", r->agent.worker_stall_ms, 1);
  json_num (json, "worker_total", r->agent.worker_total_ms, 1);
  json_num (json, "act_traced_us", r->agent.act_traced_us, 1);
  json_num (json, "act_untraced_us", r->agent.act_untraced_us, 1);
  g_string_append_printf (json, "\"failures\":%u", r->agent.failures);
  json_end_object (json);

  g_string_append (json, "\"engine\":{");
  json_num (json, "start_ms", r->start_ms, 1);
  g_string_append_printf (json, "\"rss_before_kib\":%ld,\"rss_after_kib\":%ld,"
                          "\"rss_delta_kib\":%ld", r->rss_before_kib, r->rss_after_kib,
                          r->rss_after_kib - r->rss_before_kib);
  json_end_object (json);
  g_string_truncate (json, json->len - 1);
  g_string_append (json, "}");

  printf ("\n%s\n", json->str);
}

static GLogWriterOutput
log_to_stderr (GLogLevelFlags   level,
               const GLogField *fields,
               gsize            n_fields,
               gpointer         user_data)
{
  g_autofree char *line = NULL;
  const char *domain = NULL;

  for (gsize i = 0; i < n_fields; i++)
    if (g_str_equal (fields[i].key, "GLIB_DOMAIN"))
      domain = fields[i].value;

  /* Same filter as GLib's (G_MESSAGES_DEBUG); g_log() itself aborts on fatal levels. */
  if (g_log_writer_default_would_drop (level, domain))
    return G_LOG_WRITER_HANDLED;

  line = g_log_writer_format_fields (level, fields, n_fields, FALSE);
  g_printerr ("%s\n", line);
  return G_LOG_WRITER_HANDLED;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GOptionContext) context = g_option_context_new ("- measure the Chaperone core");
  g_autoptr(GError) error = NULL;
  gboolean quick = FALSE;
  Results r = { 0 };
  const GOptionEntry entries[] = {
    { "round-trips", 'n', 0, G_OPTION_ARG_INT, &n_rtt, "Small round trips to time (10000)", "N" },
    { "big-repeats", 'b', 0, G_OPTION_ARG_INT, &n_big, "16 MiB echoes to time (5)", "N" },
    { "pairings", 'p', 0, G_OPTION_ARG_INT, &n_pairings, "Pairings to time (20)", "N" },
    { "agent-repeats", 'a', 0, G_OPTION_ARG_INT, &n_agent,
      "16 MiB snapshots through the agent's tools, each way (3)", "N" },
    { "quick", 'q', 0, G_OPTION_ARG_NONE, &quick, "A few of each, to check the bench runs", NULL },
    { NULL }
  };

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }
  if (quick)
    {
      n_rtt = 200;
      n_warmup = 20;
      n_big = 1;
      n_pairings = 3;
      n_agent = 1;
    }
  /* A figure not measured stays NaN and is printed as null. */
  r.rtt_median_us = r.rtt_p99_us = r.bare_median_us = r.bare_p99_us = NAN;
  r.rtt_block_ms = r.audit_drain_ms = NAN;
  r.big_ms = r.bare_big_ms = r.big_mibs = r.bare_big_mibs = NAN;
  r.pair_median_ms = r.pair_p99_ms = r.pair_min_ms = r.pair_max_ms = NAN;
  r.agent.engine_stall_ms = r.agent.engine_total_ms = NAN;
  r.agent.main_stall_ms = r.agent.main_total_ms = NAN;
  r.agent.worker_stall_ms = r.agent.worker_total_ms = NAN;
  r.agent.act_traced_us = r.agent.act_untraced_us = NAN;

  /* 0 skips a measurement (handy under a profiler). */
  n_rtt = MAX (n_rtt, 0);
  n_big = MAX (n_big, 0);
  n_pairings = MAX (n_pairings, 0);
  n_agent = MAX (n_agent, 0);

  /* GLib's standard writer sends debug output to stdout; the table goes there alone. */
  g_log_set_writer_func (log_to_stderr, NULL, NULL);

  measure_rss (&r);
  if (n_rtt > 0)
    {
      g_printerr ("bench: %d small round trips...\n", n_rtt);
      measure_rtt (&r);
    }
  if (n_big > 0)
    {
      g_printerr ("bench: %d echoes of 16 MiB...\n", n_big);
      measure_big (&r);
    }
  if (n_pairings > 0)
    {
      g_printerr ("bench: %d pairings...\n", n_pairings);
      measure_pairing (&r);
    }

  if (n_agent > 0)
    {
      g_printerr ("bench: %d snapshots of 16 MiB through the agent's tools, each way...\n",
                  n_agent);
      chp_bench_agent_measure (n_agent, &r.agent);
    }

  print_results (&r);
  return 0;
}
