/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-step-list.h: one session's steps as a GListModel of ChpTraceStepItem, in order, read
 * a page at a time as a list view nears the end of what is read; it grows as an open session
 * does. Screenshots are read only for the steps someone asks for. */
#pragma once

#include <gio/gio.h>

#include "chp-store-traces.h"
#include "chp-trace-step-item.h"

G_BEGIN_DECLS

#define CHP_TRACE_STEP_LIST_PAGE_SIZE 200

#define CHP_TYPE_TRACE_STEP_LIST (chp_trace_step_list_get_type ())

G_DECLARE_FINAL_TYPE (ChpTraceStepList, chp_trace_step_list, CHP, TRACE_STEP_LIST, GObject)

ChpTraceStepList *chp_trace_step_list_new            (ChpStore         *store,
                                                      const char       *session_id);
const char       *chp_trace_step_list_get_session_id (ChpTraceStepList *self);
gboolean          chp_trace_step_list_get_loading    (ChpTraceStepList *self);
gboolean          chp_trace_step_list_get_gone       (ChpTraceStepList *self);
gint64            chp_trace_step_list_get_longest_us (ChpTraceStepList *self);
void              chp_trace_step_list_invalidate     (ChpTraceStepList *self);
void              chp_trace_step_list_load_shot      (ChpTraceStepList *self,
                                                      ChpTraceStepItem *item);

G_END_DECLS
