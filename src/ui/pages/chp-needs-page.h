/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-needs-page.h: the Needs you page: one card for everything that waits for the person. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_NEEDS_PAGE (chp_needs_page_get_type ())

G_DECLARE_FINAL_TYPE (ChpNeedsPage, chp_needs_page, CHP, NEEDS_PAGE, AdwBin)

void        chp_needs_page_set_engine (ChpNeedsPage *self,
                                       ChpEngine    *engine);
guint       chp_needs_page_get_count  (ChpNeedsPage *self);
GListModel *chp_needs_page_new_model  (ChpEngine    *engine);

G_END_DECLS
