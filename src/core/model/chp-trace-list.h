/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-list.h: the trace store's agent sessions as a GListModel of ChpTraceItem, newest
 * first, filtered and searched (ChpTraceQuery), read a page at a time as a list view asks for
 * rows: a first paint reads one page, not every session. */
#pragma once

#include <gio/gio.h>

#include "chp-store-traces.h"
#include "chp-trace-item.h"

G_BEGIN_DECLS

/* About two screens of sessions: a new search's first frame lays out this many rows, each made
 * and measured anew (bench/ui-trace-bench.c: 50 cost a frame of 100-200 ms under load). */
#define CHP_TRACE_LIST_PAGE_SIZE 20
/* Items kept read; farther from where the view looks, they are dropped and read again. */
#define CHP_TRACE_LIST_MAX_HELD  2000

#define CHP_TYPE_TRACE_LIST (chp_trace_list_get_type ())

G_DECLARE_FINAL_TYPE (ChpTraceList, chp_trace_list, CHP, TRACE_LIST, GObject)

ChpTraceList        *chp_trace_list_new         (ChpStore            *store);
ChpStore            *chp_trace_list_get_store   (ChpTraceList        *self);
const ChpTraceQuery *chp_trace_list_get_query   (ChpTraceList        *self);
void                 chp_trace_list_set_query   (ChpTraceList        *self,
                                                 const ChpTraceQuery *query);
gboolean             chp_trace_list_get_loading (ChpTraceList        *self);
const char * const  *chp_trace_list_get_agents  (ChpTraceList        *self);
void                 chp_trace_list_invalidate  (ChpTraceList        *self,
                                                 const char          *session_id);
void                 chp_trace_list_reload      (ChpTraceList        *self);

G_END_DECLS
