/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-step-item.h: one step of a session's trace as a list item (ChpTraceStepList): the
 * step as stored, and its screenshot once someone asked for it. */
#pragma once

#include <glib-object.h>

#include "chp-trace-types.h"

G_BEGIN_DECLS

typedef enum
{
  CHP_TRACE_SHOT_NONE,     /* not asked for (or hidden again) */
  CHP_TRACE_SHOT_LOADING,
  CHP_TRACE_SHOT_LOADED,
  CHP_TRACE_SHOT_FAILED,   /* asked for, and the store had none or could not read it */
} ChpTraceShotState;

#define CHP_TYPE_TRACE_STEP_ITEM (chp_trace_step_item_get_type ())

G_DECLARE_FINAL_TYPE (ChpTraceStepItem, chp_trace_step_item, CHP, TRACE_STEP_ITEM, GObject)

ChpTraceStepItem   *chp_trace_step_item_new            (const ChpTraceStep *step);
const ChpTraceStep *chp_trace_step_item_get_step       (ChpTraceStepItem   *self);
gint64              chp_trace_step_item_get_total_us   (ChpTraceStepItem   *self);
ChpTraceShotState   chp_trace_step_item_get_shot_state (ChpTraceStepItem   *self);
const ChpTraceShot *chp_trace_step_item_get_shot       (ChpTraceStepItem   *self);
void                chp_trace_step_item_set_shot       (ChpTraceStepItem   *self,
                                                        ChpTraceShotState   state,
                                                        const ChpTraceShot *shot);

G_END_DECLS
