/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-context.h: what one agent session keeps between its tool calls. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define CHP_TYPE_MCP_CONTEXT (chp_mcp_context_get_type ())

G_DECLARE_FINAL_TYPE (ChpMcpContext, chp_mcp_context, CHP, MCP_CONTEXT, GObject)

/**
 * ChpMcpProgressFunc:
 * @progress: how far the call is (monotonic)
 * @total: the end, or a value <= 0 when unknown
 * @message: (nullable): a short phrase for the agent
 *
 * How a running tool call reports progress; the MCP session turns it into a
 * `notifications/progress` for the request's progress token, or drops it when the client gave
 * none or has gone.
 */
typedef void (*ChpMcpProgressFunc) (gpointer    user_data,
                                    double      progress,
                                    double      total,
                                    const char *message);

ChpMcpContext *chp_mcp_context_new             (const char    *session_id);
const char    *chp_mcp_context_get_session_id  (ChpMcpContext *self);
const char    *chp_mcp_context_get_client_name (ChpMcpContext *self);
void           chp_mcp_context_set_client_name (ChpMcpContext *self,
                                                const char    *client_name);
JsonNode      *chp_mcp_context_recall          (ChpMcpContext *self,
                                                const char    *key);
void           chp_mcp_context_remember        (ChpMcpContext *self,
                                                const char    *key,
                                                JsonNode      *value);
void           chp_mcp_context_forget          (ChpMcpContext *self,
                                                const char    *key);

G_END_DECLS
