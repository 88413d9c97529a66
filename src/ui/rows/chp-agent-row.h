/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-agent-row.h: one connected agent on the Agents page: who, since when, what it does now,
 * and Pause / Resume / Disconnect. */
#pragma once

#include <adwaita.h>

#include "chp-agent-session.h"
#include "chp-plan-list.h"

G_BEGIN_DECLS

#define CHP_TYPE_AGENT_ROW (chp_agent_row_get_type ())

G_DECLARE_FINAL_TYPE (ChpAgentRow, chp_agent_row, CHP, AGENT_ROW, GtkListBoxRow)

GtkWidget       *chp_agent_row_new         (ChpAgentSession *session,
                                            ChpPlanList     *plans);
ChpAgentSession *chp_agent_row_get_session (ChpAgentRow     *self);

G_END_DECLS
