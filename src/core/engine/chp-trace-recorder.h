/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-recorder.h: what every agent session did, step by step, on its way to the trace store
 * (chp-store-traces.h): one trace per agent session, begun at its first call and ended when the
 * agent leaves; a screenshot of the tab after an act that failed there. */
#pragma once

#include "chp-agent-session-list.h"
#include "chp-bridge.h"
#include "chp-device-list.h"
#include "chp-store-traces.h"

G_BEGIN_DECLS

#define CHP_TYPE_TRACE_RECORDER (chp_trace_recorder_get_type ())

G_DECLARE_FINAL_TYPE (ChpTraceRecorder, chp_trace_recorder, CHP, TRACE_RECORDER, GObject)

ChpTraceRecorder *chp_trace_recorder_new        (ChpStore            *store,
                                                 ChpBridge           *bridge,
                                                 ChpAgentSessionList *sessions,
                                                 ChpDeviceList       *devices);
guint             chp_trace_recorder_step       (ChpTraceRecorder    *self,
                                                 const char          *agent_session_id,
                                                 const char          *device_id,
                                                 ChpTraceStep        *step,
                                                 gint64               shot_tab);
void              chp_trace_recorder_end_all    (ChpTraceRecorder    *self,
                                                 const char          *outcome);
const char       *chp_trace_recorder_trace_of   (ChpTraceRecorder    *self,
                                                 const char          *agent_session_id);

G_END_DECLS
