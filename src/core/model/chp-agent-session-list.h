/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-agent-session-list.h: the agents connected now (and those that just left), as a GListModel
 * of ChpAgentSession. The agent server (issue 5) feeds it; the Agents page shows it. It also
 * holds the agents' pauses: a pause is the agent's, so it holds its other sessions and the ones
 * it opens later, until the person resumes it. */
#pragma once

#include <gio/gio.h>

#include "chp-agent-session.h"
#include "chp-object-list.h"

G_BEGIN_DECLS

#define CHP_TYPE_AGENT_SESSION_LIST (chp_agent_session_list_get_type ())

G_DECLARE_FINAL_TYPE (ChpAgentSessionList, chp_agent_session_list, CHP, AGENT_SESSION_LIST,
                      ChpObjectList)

ChpAgentSessionList *chp_agent_session_list_new         (void);
void                 chp_agent_session_list_add         (ChpAgentSessionList *self,
                                                         ChpAgentSession     *session);
gboolean             chp_agent_session_list_remove      (ChpAgentSessionList *self,
                                                         const char          *id);
ChpAgentSession     *chp_agent_session_list_lookup      (ChpAgentSessionList *self,
                                                         const char          *id);
void                 chp_agent_session_list_record_call (ChpAgentSessionList *self,
                                                         const char          *id,
                                                         const char          *error_code);
guint                chp_agent_session_list_count_state (ChpAgentSessionList *self,
                                                         ChpAgentSessionState state);
GListModel          *chp_agent_session_list_get_attention (ChpAgentSessionList *self);
void                 chp_agent_session_list_disconnect_agent (ChpAgentSessionList *self,
                                                              ChpAgentSession     *session);

G_END_DECLS
