/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-plan-row.h: an agent's plan of creates and edits, waiting for the person's one approval, as
 * a card in Needs you. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_PLAN_ROW (chp_plan_row_get_type ())

G_DECLARE_FINAL_TYPE (ChpPlanRow, chp_plan_row, CHP, PLAN_ROW, GtkListBoxRow)

GtkWidget *chp_plan_row_new      (ChpPlan    *plan,
                                  ChpEngine  *engine);
ChpPlan   *chp_plan_row_get_plan (ChpPlanRow *self);

G_END_DECLS
