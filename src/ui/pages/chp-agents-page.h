/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-agents-page.h: the Agents page: the agents connected now, with Pause, Resume and
 * Disconnect. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_AGENTS_PAGE (chp_agents_page_get_type ())

G_DECLARE_FINAL_TYPE (ChpAgentsPage, chp_agents_page, CHP, AGENTS_PAGE, AdwBin)

void chp_agents_page_set_engine (ChpAgentsPage *self,
                                 ChpEngine     *engine);

G_END_DECLS
