/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-site-row.h: one remembered site in the Sites list: its origin, how much is known of it
 * and how far it is trusted, Forget (or Undo while a forgotten site can still come back), and,
 * expanded, the API entries learned from its own pages. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_SITE_ROW (chp_site_row_get_type ())

G_DECLARE_FINAL_TYPE (ChpSiteRow, chp_site_row, CHP, SITE_ROW, AdwExpanderRow)

GtkWidget *chp_site_row_new      (ChpSite    *site,
                                  ChpEngine  *engine);
ChpSite   *chp_site_row_get_site (ChpSiteRow *self);

G_END_DECLS
