/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-agent-endpoint.h: what the application and the test engine compose on top of a running
 * engine so agents can reach it — the tools, the MCP server on the agent socket, and the
 * bridge-port file beside that socket. The engine itself knows nothing of MCP. */
#pragma once

#include <gio/gio.h>

#include "chp-engine.h"
#include "chp-mcp-server.h"

G_BEGIN_DECLS

/* Beside the agent socket: the bridge's port, in decimal and a newline (mode 0600), for tools
 * and tests. */
#define CHP_AGENT_ENDPOINT_PORT_FILE "bridge-port"

#define CHP_TYPE_AGENT_ENDPOINT (chp_agent_endpoint_get_type ())

G_DECLARE_FINAL_TYPE (ChpAgentEndpoint, chp_agent_endpoint, CHP, AGENT_ENDPOINT, GObject)

ChpAgentEndpoint *chp_agent_endpoint_new      (ChpEngine         *engine);
gboolean          chp_agent_endpoint_listen   (ChpAgentEndpoint  *self,
                                               const char        *socket_path,
                                               GError           **error);
const char       *chp_agent_endpoint_get_path (ChpAgentEndpoint  *self);
ChpMcpTools      *chp_agent_endpoint_get_tools (ChpAgentEndpoint *self);
void              chp_agent_endpoint_close    (ChpAgentEndpoint  *self);

G_END_DECLS
