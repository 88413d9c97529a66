/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-activity-page.h: the Activity page: agent sessions (searched, filtered, each opening its
 * timeline) and every event of the audit log, each read a page at a time as the person
 * scrolls. */
#pragma once

#include <adwaita.h>

#include "chp-audit-list.h"
#include "chp-engine.h"
#include "chp-sessions-view.h"
#include "chp-timeline-view.h"
#include "chp-trace-list.h"

G_BEGIN_DECLS

#define CHP_TYPE_ACTIVITY_PAGE (chp_activity_page_get_type ())

G_DECLARE_FINAL_TYPE (ChpActivityPage, chp_activity_page, CHP, ACTIVITY_PAGE, AdwBin)

void               chp_activity_page_set_engine     (ChpActivityPage *self,
                                                     ChpEngine       *engine);
ChpAuditList      *chp_activity_page_get_audit_list (ChpActivityPage *self);
GtkScrolledWindow *chp_activity_page_get_scroller   (ChpActivityPage *self);
void               chp_activity_page_show_view      (ChpActivityPage *self,
                                                     const char      *name);
ChpTraceList      *chp_activity_page_get_trace_list (ChpActivityPage *self);
ChpSessionsView   *chp_activity_page_get_sessions_view (ChpActivityPage *self);
ChpTimelineView   *chp_activity_page_get_timeline_view (ChpActivityPage *self);

G_END_DECLS
