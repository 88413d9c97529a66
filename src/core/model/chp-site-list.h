/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-site-list.h: the remembered sites, most recently used first, forgotten ones included
 * while they can be restored, as a GListModel of ChpSite read from the store. */
#pragma once

#include <gio/gio.h>

#include "chp-object-list.h"
#include "chp-site.h"
#include "chp-store.h"

G_BEGIN_DECLS

#define CHP_TYPE_SITE_LIST (chp_site_list_get_type ())

G_DECLARE_FINAL_TYPE (ChpSiteList, chp_site_list, CHP, SITE_LIST, ChpObjectList)

ChpSiteList *chp_site_list_new     (ChpStore    *store);
void         chp_site_list_reload  (ChpSiteList *self);
ChpSite     *chp_site_list_lookup  (ChpSiteList *self,
                                    const char  *origin);

G_END_DECLS
