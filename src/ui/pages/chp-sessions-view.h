/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-sessions-view.h: the Activity page's agent sessions: a search over what the steps did
 * (tools, sites, elements, errors), filters by outcome and agent, and a list read a page at a
 * time; activating a session emits ChpSessionsView::session-activated. */
#pragma once

#include <adwaita.h>

#include "chp-trace-list.h"

G_BEGIN_DECLS

#define CHP_TYPE_SESSIONS_VIEW (chp_sessions_view_get_type ())

G_DECLARE_FINAL_TYPE (ChpSessionsView, chp_sessions_view, CHP, SESSIONS_VIEW, AdwBin)

void          chp_sessions_view_set_list       (ChpSessionsView *self,
                                                ChpTraceList    *list);
ChpTraceList *chp_sessions_view_get_list       (ChpSessionsView *self);
GtkListView  *chp_sessions_view_get_list_view  (ChpSessionsView *self);
gboolean      chp_sessions_view_activate       (ChpSessionsView *self,
                                                guint            position);

G_END_DECLS
