/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-browsers-page.h: the Browsers page: every paired browser, or how to pair one. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_BROWSERS_PAGE (chp_browsers_page_get_type ())

G_DECLARE_FINAL_TYPE (ChpBrowsersPage, chp_browsers_page, CHP, BROWSERS_PAGE, AdwBin)

void chp_browsers_page_set_engine (ChpBrowsersPage *self,
                                   ChpEngine       *engine);

G_END_DECLS
