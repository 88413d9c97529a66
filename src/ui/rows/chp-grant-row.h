/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-grant-row.h: one grant as a card: the task, its tabs, what an agent may do there (as
 * chips in plain words), until when. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_GRANT_ROW (chp_grant_row_get_type ())

G_DECLARE_FINAL_TYPE (ChpGrantRow, chp_grant_row, CHP, GRANT_ROW, GtkListBoxRow)

GtkWidget  *chp_grant_row_new          (ChpGrant   *grant,
                                        ChpEngine  *engine);
const char *chp_grant_scope_in_words   (const char *scope);

G_END_DECLS
