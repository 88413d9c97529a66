/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-report-private.h: shared by the parts of the trace report: gathering from the store,
 * masking and writing (chp-trace-report.c), the JSON document (-json.c) and the HTML timeline
 * (-html.c). The last two run in the report's worker thread, on data nothing else touches. */
#pragma once

#include <json-glib/json-glib.h>

#include "chp-trace-report.h"

G_BEGIN_DECLS

typedef struct
{
  ChpTraceStep *step;
  JsonNode     *args;           /* the step's args, parsed and masked; NULL when it had none */
  ChpTraceShot *shot;           /* NULL when the step has none, or it was left out */
  gboolean      shot_left_out;  /* it had one, and the report's bound (or a bad file) kept it out */
} ReportStep;

typedef struct
{
  ChpTraceSession *session;
  GPtrArray       *steps;         /* ReportStep, in order */
  guint            steps_left_out;
  guint            redacted;      /* texts the export's own redaction changed */
  gint64           longest_us;    /* the longest queue + run of its steps: the bars' scale */
} ReportSession;

/* Where the report goes: a buffer flushed to the stream as it fills. The first error stops every
 * later write and is kept for the end. */
typedef struct
{
  GOutputStream *stream;
  GCancellable  *cancellable;
  GString       *buffer;
  GError        *error;
} ReportSink;

void      chp_trace_report_sink_flush       (ReportSink          *sink);
void      chp_trace_report_sink_append      (ReportSink          *sink,
                                             const char          *text);
void      chp_trace_report_sink_printf      (ReportSink          *sink,
                                             const char          *format,
                                             ...) G_GNUC_PRINTF (2, 3);

/* Times as the report writes them, NULL for 0 (not yet). */
char     *chp_trace_report_iso_time         (gint64               at_us);

/* chp-trace-report-json.c */
typedef enum
{
  REPORT_SHOTS_BASE64,   /* FILE.json: the bytes */
  REPORT_SHOTS_IMG_ID,   /* inside the HTML: the id of the <img> that has them */
} ReportShots;

char     *chp_trace_report_shot_id          (guint                session_index,
                                             guint                seq);
void      chp_trace_report_write_json       (ReportSink          *sink,
                                             GPtrArray           *sessions,
                                             gint64               exported_at,
                                             ReportShots          shots,
                                             gboolean             for_script);

/* chp-trace-report-html.c */
void      chp_trace_report_write_html       (ReportSink          *sink,
                                             GPtrArray           *sessions,
                                             gint64               exported_at);

G_END_DECLS
