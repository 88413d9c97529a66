/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-agent-session.h: one connected agent (an MCP client) as the person sees it: who, since
 * when, how busy, what it is doing, and whether it may go on. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

typedef enum
{
  CHP_AGENT_SESSION_RUNNING,
  CHP_AGENT_SESSION_PAUSED,
  CHP_AGENT_SESSION_DISCONNECTED,
} ChpAgentSessionState;

#define CHP_TYPE_AGENT_SESSION_STATE (chp_agent_session_state_get_type ())
GType chp_agent_session_state_get_type (void);

#define CHP_TYPE_AGENT_SESSION (chp_agent_session_get_type ())

G_DECLARE_FINAL_TYPE (ChpAgentSession, chp_agent_session, CHP, AGENT_SESSION, GObject)

ChpAgentSession      *chp_agent_session_new                (const char           *id,
                                                            const char           *client_name,
                                                            gint64                since);
const char           *chp_agent_session_get_id             (ChpAgentSession      *self);
const char           *chp_agent_session_get_client_name    (ChpAgentSession      *self);
void                  chp_agent_session_set_client_name    (ChpAgentSession      *self,
                                                            const char           *client_name);
const char           *chp_agent_session_get_client_key     (ChpAgentSession      *self);
void                  chp_agent_session_set_client_key     (ChpAgentSession      *self,
                                                            const char           *name);
const char           *chp_agent_session_get_process_key    (ChpAgentSession      *self);
void                  chp_agent_session_set_process_key    (ChpAgentSession      *self,
                                                            const char           *process);
gint64                chp_agent_session_get_since          (ChpAgentSession      *self);
guint                 chp_agent_session_get_calls          (ChpAgentSession      *self);
void                  chp_agent_session_set_calls          (ChpAgentSession      *self,
                                                            guint                 calls);
void                  chp_agent_session_add_call           (ChpAgentSession      *self);
const char           *chp_agent_session_get_current_step   (ChpAgentSession      *self);
void                  chp_agent_session_set_current_step   (ChpAgentSession      *self,
                                                            const char           *step);
const char           *chp_agent_session_get_last_error     (ChpAgentSession      *self);
void                  chp_agent_session_set_last_error     (ChpAgentSession      *self,
                                                            const char           *error_code);
ChpAgentSessionState  chp_agent_session_get_state          (ChpAgentSession      *self);
void                  chp_agent_session_set_state          (ChpAgentSession      *self,
                                                            ChpAgentSessionState  state);

void                  chp_agent_session_request_pause      (ChpAgentSession      *self);
const char           *chp_agent_session_get_attention      (ChpAgentSession      *self);
void                  chp_agent_session_pause_for          (ChpAgentSession      *self,
                                                            const char           *why);
gboolean              chp_agent_session_get_inherited      (ChpAgentSession      *self);
void                  chp_agent_session_pause_with_agent   (ChpAgentSession      *self,
                                                            const char           *why);
void                  chp_agent_session_request_resume     (ChpAgentSession      *self);
void                  chp_agent_session_request_disconnect (ChpAgentSession      *self);

G_END_DECLS
