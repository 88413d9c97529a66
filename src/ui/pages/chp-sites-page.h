/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-sites-page.h: the Sites page: what Chaperone remembers of how each site works (site
 * memory), with Forget and its Undo, and Export. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_SITES_PAGE (chp_sites_page_get_type ())

G_DECLARE_FINAL_TYPE (ChpSitesPage, chp_sites_page, CHP, SITES_PAGE, AdwBin)

void chp_sites_page_set_engine (ChpSitesPage *self,
                                ChpEngine    *engine);
void chp_sites_page_export_to  (ChpSitesPage *self,
                                GFile        *file);

G_END_DECLS
