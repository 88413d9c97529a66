/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-hold-row.h: one act a browser held (a send, a delete, a change made with the person's
 * login), as a card in Needs you: what, where, with which values, and Approve / Decline. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_HOLD_ROW (chp_hold_row_get_type ())

G_DECLARE_FINAL_TYPE (ChpHoldRow, chp_hold_row, CHP, HOLD_ROW, GtkListBoxRow)

GtkWidget *chp_hold_row_new       (ChpHold    *hold,
                                   ChpEngine  *engine);
char      *chp_hold_site_for_title (const char *site);
ChpHold   *chp_hold_row_get_hold  (ChpHoldRow *self);
guint      chp_hold_row_duration_seconds (guint   choice);

G_END_DECLS
