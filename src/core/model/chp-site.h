/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-site.h: a remembered site as the person's Sites list shows it: how often it was visited,
 * when its memory was last used, how much of it is trusted, and whether it was forgotten (and
 * may still be restored). */
#pragma once

#include <glib-object.h>

#include "chp-site-types.h"

G_BEGIN_DECLS

#define CHP_TYPE_SITE (chp_site_get_type ())

G_DECLARE_FINAL_TYPE (ChpSite, chp_site, CHP, SITE, GObject)

ChpSite    *chp_site_new                (const ChpSiteInfo *info);
void        chp_site_update             (ChpSite           *self,
                                         const ChpSiteInfo *info);
const char *chp_site_get_origin         (ChpSite           *self);
gint        chp_site_get_visits         (ChpSite           *self);
gint64      chp_site_get_last_used      (ChpSite           *self);
double      chp_site_get_confidence     (ChpSite           *self);
guint       chp_site_get_n_endpoints    (ChpSite           *self);
guint       chp_site_get_n_quarantined  (ChpSite           *self);
guint       chp_site_get_n_recipes      (ChpSite           *self);
gboolean    chp_site_get_forgotten      (ChpSite           *self);
gint64      chp_site_get_forgotten_at   (ChpSite           *self);

G_END_DECLS
