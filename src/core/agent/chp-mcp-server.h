/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-server.h: the agent endpoint — a Unix socket only this user can reach, one MCP
 * session per connection. */
#pragma once

#include <gio/gio.h>

#include "chp-agent-session-list.h"
#include "chp-mcp-tools.h"

G_BEGIN_DECLS

#define CHP_TYPE_MCP_SERVER (chp_mcp_server_get_type ())

G_DECLARE_FINAL_TYPE (ChpMcpServer, chp_mcp_server, CHP, MCP_SERVER, GObject)

char         *chp_mcp_server_default_path (void);
ChpMcpServer *chp_mcp_server_new          (ChpMcpTools          *tools,
                                           ChpAgentSessionList  *sessions);
gboolean      chp_mcp_server_listen       (ChpMcpServer         *self,
                                           const char           *socket_path,
                                           GError              **error);
const char   *chp_mcp_server_get_path     (ChpMcpServer         *self);
void          chp_mcp_server_close        (ChpMcpServer         *self);

G_END_DECLS
