/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-session.h: one agent's MCP connection — JSON-RPC 2.0, one message per line. */
#pragma once

#include <gio/gio.h>

#include "chp-agent-session.h"
#include "chp-mcp-tools.h"

G_BEGIN_DECLS

/* A line longer than this is refused (JSON-RPC error) and skipped; the session goes on. */
#define CHP_MCP_MAX_LINE_BYTES (1024 * 1024)

#define CHP_TYPE_MCP_SESSION (chp_mcp_session_get_type ())

G_DECLARE_FINAL_TYPE (ChpMcpSession, chp_mcp_session, CHP, MCP_SESSION, GObject)

ChpMcpSession   *chp_mcp_session_new               (GIOStream       *stream,
                                                    ChpMcpTools     *tools,
                                                    ChpAgentSession *agent);
void             chp_mcp_session_start             (ChpMcpSession   *self);
void             chp_mcp_session_close             (ChpMcpSession   *self);
ChpAgentSession *chp_mcp_session_get_agent         (ChpMcpSession   *self);
ChpMcpContext   *chp_mcp_session_get_context       (ChpMcpSession   *self);

G_END_DECLS
