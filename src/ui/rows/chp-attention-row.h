/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-attention-row.h: an agent Chaperone's loop guard paused, as a card in Needs you: why, and
 * Resume / Disconnect — one card per agent, whatever the number of its sessions. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_ATTENTION_ROW (chp_attention_row_get_type ())

G_DECLARE_FINAL_TYPE (ChpAttentionRow, chp_attention_row, CHP, ATTENTION_ROW, GtkListBoxRow)

GtkWidget       *chp_attention_row_new         (ChpAgentSession     *session,
                                                ChpAgentSessionList *sessions);
ChpAgentSession *chp_attention_row_get_session (ChpAttentionRow     *self);
const char      *chp_attention_row_why_text    (const char          *attention);

G_END_DECLS
