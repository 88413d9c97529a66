/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-step-row.h: one step of a session's timeline: its number and time, the tool, the page's
 * host and path, the element's role and name, how it ended, a timing bar, what the person was
 * asked and decided, and its screenshot when the person asks for it. */
#pragma once

#include <gtk/gtk.h>

#include "chp-trace-step-list.h"

G_BEGIN_DECLS

#define CHP_TYPE_STEP_ROW (chp_step_row_get_type ())

G_DECLARE_FINAL_TYPE (ChpStepRow, chp_step_row, CHP, STEP_ROW, GtkBox)

GtkWidget        *chp_step_row_new         (void);
void              chp_step_row_bind        (ChpStepRow       *self,
                                            ChpTraceStepList *list,
                                            ChpTraceStepItem *item);
ChpTraceStepItem *chp_step_row_get_item    (ChpStepRow       *self);
GdkPaintable     *chp_step_row_get_shot    (ChpStepRow       *self);
void              chp_step_row_toggle_shot (ChpTraceStepList *list,
                                            ChpTraceStepItem *item);

G_END_DECLS
