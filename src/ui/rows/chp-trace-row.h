/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-row.h: one agent session in the Activity page's list: the agent, its browser and
 * sites, its steps, what it asked the person and what they approved, its errors, how it ended,
 * when and for how long. */
#pragma once

#include <gtk/gtk.h>

#include "chp-trace-item.h"

G_BEGIN_DECLS

#define CHP_TYPE_TRACE_ROW (chp_trace_row_get_type ())

G_DECLARE_FINAL_TYPE (ChpTraceRow, chp_trace_row, CHP, TRACE_ROW, GtkBox)

GtkWidget    *chp_trace_row_new      (void);
void          chp_trace_row_set_item (ChpTraceRow  *self,
                                      ChpTraceItem *item);
ChpTraceItem *chp_trace_row_get_item (ChpTraceRow  *self);

G_END_DECLS
