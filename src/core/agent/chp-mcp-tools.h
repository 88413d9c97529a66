/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-tools.h: the agent's tools — one table, each tool a schema, honest annotations and a
 * handler that reaches a browser only through chp_engine_agent_call_async(). */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "chp-mcp-context.h"

G_BEGIN_DECLS

typedef struct _ChpEngine ChpEngine;

/* Results carry at most this many characters of text by default (DESIGN §7). */
#define CHP_MCP_RESULT_MAX_CHARS_DEFAULT 8000

#define CHP_TYPE_MCP_TOOLS (chp_mcp_tools_get_type ())

G_DECLARE_FINAL_TYPE (ChpMcpTools, chp_mcp_tools, CHP, MCP_TOOLS, GObject)

ChpMcpTools *chp_mcp_tools_new                 (ChpEngine           *engine);
JsonNode    *chp_mcp_tools_list                (ChpMcpTools         *self);
gboolean     chp_mcp_tools_has                 (ChpMcpTools         *self,
                                                const char          *name);
void         chp_mcp_tools_set_result_max_chars (ChpMcpTools        *self,
                                                guint                max_chars);
void         chp_mcp_tools_call_async          (ChpMcpTools         *self,
                                                ChpMcpContext       *context,
                                                const char          *name,
                                                JsonObject          *arguments,
                                                ChpMcpProgressFunc   progress,
                                                gpointer             progress_data,
                                                GDestroyNotify       progress_destroy,
                                                GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data);
void         chp_mcp_tools_audit               (ChpMcpTools         *self,
                                                const char          *name,
                                                const char          *outcome,
                                                const char          *device_id,
                                                gint64               duration_ms,
                                                const char          *error_code);
JsonNode    *chp_mcp_tools_call_finish         (ChpMcpTools         *self,
                                                GAsyncResult        *result,
                                                GError             **error);

G_END_DECLS
