/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-site-card.h: the arrival card: what the site memory knows of a site an agent comes back
 * to, said in a few lines at the top of its first snapshot there. */
#pragma once

#include "chp-site-types.h"

G_BEGIN_DECLS

/* At most this many characters of card, however much the memory holds. */
#define CHP_MCP_SITE_CARD_MAX_CHARS 700

char *chp_mcp_site_card         (const ChpSiteRecord *record,
                                 const char          *marker);
guint chp_mcp_site_card_recipes (GString             *out,
                                 const ChpSiteRecord *record,
                                 guint                max);
char *chp_mcp_site_card_ready   (const ChpSiteRecord *record);

G_END_DECLS
