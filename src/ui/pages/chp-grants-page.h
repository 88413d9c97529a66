/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-grants-page.h: the Grants page: every live grant, grouped by browser. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_GRANTS_PAGE (chp_grants_page_get_type ())

G_DECLARE_FINAL_TYPE (ChpGrantsPage, chp_grants_page, CHP, GRANTS_PAGE, AdwBin)

void chp_grants_page_set_engine (ChpGrantsPage *self,
                                 ChpEngine     *engine);

G_END_DECLS
