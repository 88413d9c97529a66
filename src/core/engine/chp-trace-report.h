/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-report.h: a masked bundle of agent sessions, read from the trace store, that a person
 * can attach to a bug report (`chaperone report`, the app's Export).
 *
 * The bundle is one file, by @out's name:
 *
 *  - FILE.json: the JSON document alone, each screenshot in it as base64.
 *  - anything else (FILE.html): one self-contained HTML page: a timeline a person reads without
 *    scripts, network or other files (every screenshot a data: URI), and the same JSON document
 *    in a <script type="application/json" id="chaperone-trace-report"> block, where a
 *    screenshot's "img" names the <img> element that holds it rather than repeating its bytes.
 *
 * The JSON document: {"format": "chaperone-trace-report", "version": 1, "generator",
 * "exported_at", "limits": {…}, "sessions": [ … ]}, sessions newest first; a session has the
 * fields of ChpTraceSession (device is the browser), "steps" in order with the fields of
 * ChpTraceStep (args as JSON, decision_kind a word, times ISO 8601 in UTC, durations in µs),
 * what the report's bounds left out, and how many texts the export's own redaction changed.
 *
 * The store holds masked data only (chp-store-traces.h); every text is still passed through the
 * redaction (chp-redact.h) on its way out, so a recorder's mistake is not attached to a bug
 * report. Screenshots cannot be redacted here: they are the store's, with its redaction boxes. */
#pragma once

#include <gio/gio.h>

#include "chp-store-traces.h"

G_BEGIN_DECLS

#define CHP_TRACE_REPORT_FORMAT  "chaperone-trace-report"
#define CHP_TRACE_REPORT_VERSION 1

/* Bounds, so that a bundle stays something a bug tracker takes. A session's newest steps are
 * kept (where it failed); the report says what was left out. */
#define CHP_TRACE_REPORT_MAX_SESSIONS   20
#define CHP_TRACE_REPORT_MAX_STEPS      10000
#define CHP_TRACE_REPORT_MAX_SHOT_BYTES ((gsize) 32 * 1024 * 1024)  /* JPEG bytes, all sessions */

gboolean chp_trace_report_is_json      (GFile               *out);

void     chp_trace_report_write_async  (ChpStore            *store,
                                        const char          *session_id,
                                        guint                last_n,
                                        GFile               *out,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data);
gboolean chp_trace_report_write_finish (ChpStore            *store,
                                        GAsyncResult        *result,
                                        guint               *n_sessions,
                                        guint               *n_steps,
                                        GError             **error);

G_END_DECLS
