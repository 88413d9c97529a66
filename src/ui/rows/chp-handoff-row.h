/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-handoff-row.h: one handoff waiting for the person, as a card in Needs you: what to do,
 * where, for whom, and the buttons. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_HANDOFF_ROW (chp_handoff_row_get_type ())

G_DECLARE_FINAL_TYPE (ChpHandoffRow, chp_handoff_row, CHP, HANDOFF_ROW, GtkListBoxRow)

GtkWidget *chp_handoff_row_new         (ChpHandoff *handoff,
                                        ChpEngine  *engine);
char      *chp_handoff_waited_in_words (gint64      since_ms);

G_END_DECLS
