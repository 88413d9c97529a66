/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-item.h: one agent session of the trace store as a list item (ChpTraceList). It may be
 * a placeholder whose session is still being read; it fills in place (notify::loaded and the
 * session's own properties) when the page arrives, and again when the session grows or ends. */
#pragma once

#include <glib-object.h>

#include "chp-trace-types.h"

G_BEGIN_DECLS

#define CHP_TYPE_TRACE_ITEM (chp_trace_item_get_type ())

G_DECLARE_FINAL_TYPE (ChpTraceItem, chp_trace_item, CHP, TRACE_ITEM, GObject)

ChpTraceItem          *chp_trace_item_new            (void);
gboolean               chp_trace_item_get_loaded     (ChpTraceItem          *self);
const ChpTraceSession *chp_trace_item_get_session    (ChpTraceItem          *self);
void                   chp_trace_item_set_session    (ChpTraceItem          *self,
                                                      const ChpTraceSession *session);
const char            *chp_trace_item_get_id         (ChpTraceItem          *self);
const char            *chp_trace_item_get_agent      (ChpTraceItem          *self);
const char            *chp_trace_item_get_device     (ChpTraceItem          *self);
const char            *chp_trace_item_get_outcome    (ChpTraceItem          *self);
const char * const    *chp_trace_item_get_sites      (ChpTraceItem          *self);
guint                  chp_trace_item_get_n_steps    (ChpTraceItem          *self);
guint                  chp_trace_item_get_n_errors   (ChpTraceItem          *self);
guint                  chp_trace_item_get_n_asked    (ChpTraceItem          *self);
guint                  chp_trace_item_get_n_approved (ChpTraceItem          *self);
gint64                 chp_trace_item_get_started_at (ChpTraceItem          *self);
gint64                 chp_trace_item_get_ended_at   (ChpTraceItem          *self);
gint64                 chp_trace_item_get_duration   (ChpTraceItem          *self,
                                                      gint64                 now);

G_END_DECLS
