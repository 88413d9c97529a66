/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-activity-page.h: the Activity page: the audit log, filtered and searched, read a page at
 * a time as the person scrolls. */
#pragma once

#include <adwaita.h>

#include "chp-audit-list.h"
#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_ACTIVITY_PAGE (chp_activity_page_get_type ())

G_DECLARE_FINAL_TYPE (ChpActivityPage, chp_activity_page, CHP, ACTIVITY_PAGE, AdwBin)

void               chp_activity_page_set_engine     (ChpActivityPage *self,
                                                     ChpEngine       *engine);
ChpAuditList      *chp_activity_page_get_audit_list (ChpActivityPage *self);
GtkScrolledWindow *chp_activity_page_get_scroller   (ChpActivityPage *self);

G_END_DECLS
