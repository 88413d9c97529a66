/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-rule-row.h: one of the person's "Always allow" rules in the Rules list: what it covers, for
 * which agent, how often it was used, until when, and Revoke. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_RULE_ROW (chp_rule_row_get_type ())

G_DECLARE_FINAL_TYPE (ChpRuleRow, chp_rule_row, CHP, RULE_ROW, GtkListBoxRow)

GtkWidget       *chp_rule_row_new      (ChpApprovalRule *rule,
                                        ChpEngine       *engine);
ChpApprovalRule *chp_rule_row_get_rule (ChpRuleRow      *self);

G_END_DECLS
