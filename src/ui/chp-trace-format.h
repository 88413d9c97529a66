/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-format.h: the trace browser's words: durations, times, outcomes, the person's
 * decisions and a step's timing, as a person reads them (translated). */
#pragma once

#include <glib.h>

#include "chp-trace-types.h"

G_BEGIN_DECLS

char       *chp_trace_format_duration        (gint64               us);
char       *chp_trace_format_when            (gint64               us,
                                              gint64               now_us);
char       *chp_trace_format_time_of_day     (gint64               us);
const char *chp_trace_format_session_outcome (const char          *outcome);
const char *chp_trace_format_step_outcome    (const char          *outcome);
char       *chp_trace_format_sites           (const char * const  *sites,
                                              guint                max);
char       *chp_trace_format_counts          (guint                n_steps,
                                              guint                n_asked,
                                              guint                n_approved);
char       *chp_trace_format_errors          (guint                n_errors);
char       *chp_trace_format_decision        (const ChpTraceStep  *step);
char       *chp_trace_format_timing          (const ChpTraceStep  *step);
char       *chp_trace_format_where           (const ChpTraceStep  *step);
char       *chp_trace_format_element         (const ChpTraceStep  *step);

G_END_DECLS
