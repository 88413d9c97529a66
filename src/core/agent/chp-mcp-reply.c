/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-reply.c: a request to the call's browser through the engine's one door,
 * and the browser's answer, redacted again before an agent can see any of it. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include "chp-redact.h"

/* Every answer from a browser passes here before an agent can see any of it: the extension
 * redacts already, and this is the second of the two checks the design asks for (DESIGN §8),
 * so one bug on either side does not hand a token to an agent. */
JsonNode *
chp_tool_agent_call_finish (ChpEngine     *engine,
                            GAsyncResult  *result,
                            GError       **error)
{
  g_autoptr(JsonNode) node = chp_engine_agent_call_finish (engine, result, error);
  guint count = 0;
  JsonNode *clean;

  if (node == NULL)
    return NULL;
  clean = chp_redact_json (node, &count);
  if (count > 0)
    g_debug ("agents: %u secret-looking values redacted from a browser's answer", count);
  return clean;
}

/* Sends @method to the call's browser; @callback gets the task back. */
void
chp_tool_browser_call (GTask               *task,
                       const char          *method,
                       JsonNode            *params,
                       guint                timeout_ms,
                       GAsyncReadyCallback  callback)
{
  ToolCall *call = call_of (task);
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autoptr(JsonNode) owned = params;

  if (engine == NULL)
    {
      chp_tool_return_error (task, "internal", "Chaperone is shutting down", NULL);
      return;
    }

  chp_engine_agent_call_async (engine, call->device_id, method, owned, timeout_ms,
                               g_task_get_cancellable (task), callback, g_object_ref (task));
}

/* Returns: (transfer full) (nullable): the browser's answer as an object, or %NULL once the
 * call has been answered with the error */
JsonObject *
chp_tool_browser_answer (GTask        *task,
                         GObject      *source,
                         GAsyncResult *result,
                         const char   *what)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_tool_agent_call_finish (CHP_ENGINE (source), result, &error);

  if (node == NULL)
    {
      chp_tool_return_gerror (task, error, what);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      chp_tool_return_error (task, "internal",
                             "The browser answered something that is not an object", NULL);
      return NULL;
    }

  return json_object_ref (json_node_get_object (node));
}

void
chp_tool_copy_typed (JsonObject *to,
                     JsonObject *from,
                     const char *member,
                     GType       type)
{
  JsonNode *value = json_object_get_member (from, member);

  if (value == NULL)
    return;
  if ((type == JSON_TYPE_OBJECT && JSON_NODE_HOLDS_OBJECT (value)) ||
      (type != JSON_TYPE_OBJECT && JSON_NODE_HOLDS_VALUE (value) &&
       json_node_get_value_type (value) == type))
    json_object_set_member (to, member, json_node_copy (value));
}

