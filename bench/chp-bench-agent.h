/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-bench-agent.h: the agent's tools under a 16 MiB browser answer (chp-bench-agent.c). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Medians over the repeats, in ms: the longest the main loop went without running a 1 ms timer
 * (its stall), and the time from the call to its result. NaN when not measured. */
typedef struct
{
  gsize  answer_bytes;
  guint  nodes;
  int    repeats;
  guint  failures;
  double engine_stall_ms, engine_total_ms;   /* the engine's call alone: the bridge's share */
  double main_stall_ms, main_total_ms;       /* browser_snapshot, formatted on the main thread */
  double worker_stall_ms, worker_total_ms;   /* browser_snapshot, formatted in a worker */
  /* A small browser_act (a fill the browser answers at once), median µs per call, with its
   * trace step recorded and without: what tracing adds to a tool call. */
  int    act_calls;
  double act_traced_us, act_untraced_us;
} ChpBenchAgent;

void chp_bench_agent_measure (int            repeats,
                              ChpBenchAgent *out);

G_END_DECLS
