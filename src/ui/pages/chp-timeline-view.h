/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-timeline-view.h: one agent session opened from the Activity page: its summary, then each
 * step in order with its timing bar, what the person was asked and decided, errors and
 * screenshots; Export… and Forget this session. The back button is the page's activity.back. */
#pragma once

#include <adwaita.h>

#include "chp-trace-item.h"
#include "chp-trace-step-list.h"

G_BEGIN_DECLS

#define CHP_TYPE_TIMELINE_VIEW (chp_timeline_view_get_type ())

G_DECLARE_FINAL_TYPE (ChpTimelineView, chp_timeline_view, CHP, TIMELINE_VIEW, AdwBin)

void              chp_timeline_view_set_session (ChpTimelineView *self,
                                                 ChpStore        *store,
                                                 ChpTraceItem    *item);
ChpTraceItem     *chp_timeline_view_get_session (ChpTimelineView *self);
ChpTraceStepList *chp_timeline_view_get_steps   (ChpTimelineView *self);
GtkListView      *chp_timeline_view_get_list_view (ChpTimelineView *self);
void              chp_timeline_view_invalidate  (ChpTimelineView *self,
                                                 const char      *session_id);
void              chp_timeline_view_focus       (ChpTimelineView *self);
void              chp_timeline_view_export_to   (ChpTimelineView *self,
                                                 GFile           *file);

G_END_DECLS
