/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-session-calls.c: tools/call: each call with its own cancellable and progress, answered
 * once (not at all when the client cancelled it), and answered paused when the person paused the
 * agent during it. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp"

#include "chp-mcp-session-private.h"

#include <string.h>

/* Calls a single agent may have running: the browser is one person's, not a server farm. */
#define MAX_CALLS_IN_FLIGHT 8
/* Names the agent gave, echoed back into errors and written to the audit. */
#define MAX_ECHO_CHARS 64

/* A tool-level refusal, in the shape the tools use for theirs. */
static JsonNode *
error_result_new (const char *code,
                  const char *message)
{
  JsonObject *result = json_object_new ();
  JsonObject *structured = json_object_new ();
  JsonArray *content = json_array_new ();
  JsonObject *text = json_object_new ();
  g_autofree char *line = g_strdup_printf ("%s: %s", code, message);
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_string_member (text, "type", "text");
  json_object_set_string_member (text, "text", line);
  json_array_add_object_element (content, text);
  json_object_set_string_member (structured, "code", code);
  json_object_set_string_member (structured, "message", message);
  json_object_set_array_member (result, "content", content);
  json_object_set_object_member (result, "structuredContent", structured);
  json_object_set_boolean_member (result, "isError", TRUE);
  json_node_take_object (node, result);
  return node;
}

static void
progress_clear (Progress *progress)
{
  g_clear_object (&progress->session);
  g_clear_pointer (&progress->token, json_node_unref);
}

static void
progress_release (gpointer data)
{
  g_rc_box_release_full (data, (GDestroyNotify) progress_clear);
}

static void
progress_cb (gpointer    user_data,
             double      progress,
             double      total,
             const char *message)
{
  Progress *p = user_data;
  JsonObject *params;

  if (p->session == NULL || p->session->closed)
    return;
  /* MCP asks that progress only ever grows. */
  if (p->reported && progress <= p->last)
    return;
  p->reported = TRUE;
  p->last = progress;

  params = json_object_new ();
  json_object_set_member (params, "progressToken", json_node_copy (p->token));
  json_object_set_double_member (params, "progress", progress);
  if (total > 0)
    json_object_set_double_member (params, "total", total);
  if (message != NULL)
    json_object_set_string_member (params, "message", message);
  chp_mcp_session_send_notification (p->session, "notifications/progress", params);
}

static void
call_free (Call *call)
{
  if (call->progress != NULL)
    {
      /* Answered: whatever the tool still reports goes nowhere. */
      g_clear_object (&call->progress->session);
      progress_release (call->progress);
    }
  g_clear_object (&call->cancellable);
  g_clear_object (&call->session);
  g_clear_pointer (&call->id, json_node_unref);
  g_free (call->key);
  g_free (call->tool);
  g_free (call);
}

static void
update_step (ChpMcpSession *self)
{
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, self->calls);
  if (g_hash_table_iter_next (&iter, NULL, &value))
    chp_agent_session_set_current_step (self->agent, ((Call *) value)->tool);
  else
    chp_agent_session_set_current_step (self->agent, NULL);
}

static const char *
result_error_code (JsonNode *result)
{
  JsonObject *object;
  JsonNode *structured;

  if (result == NULL || !JSON_NODE_HOLDS_OBJECT (result))
    return NULL;
  object = json_node_get_object (result);
  if (!chp_json_get_bool (object, "isError", FALSE))
    return NULL;

  structured = json_object_get_member (object, "structuredContent");
  if (structured != NULL && JSON_NODE_HOLDS_OBJECT (structured))
    {
      const char *code = chp_mcp_json_string (json_node_get_object (structured), "code", NULL);

      if (code != NULL)
        return code;
    }
  return "internal";
}

static void
call_done_cb (GObject      *source,
              GAsyncResult *res,
              gpointer      user_data)
{
  Call *call = user_data;
  ChpMcpSession *self = call->session;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) result = NULL;
  const char *code;

  result = chp_mcp_tools_call_finish (CHP_MCP_TOOLS (source), res, &error);
  g_hash_table_remove (self->calls, call->key);
  if (!self->closed)
    update_step (self);

  if (self->closed || self->draining)
    {
      g_debug ("%s: %s finished after the session ended", session_id (self), call->tool);
      goto out;
    }

  /* MCP: a request the client cancelled gets no response at all. */
  if (call->client_cancelled)
    {
      g_debug ("%s: %s cancelled by the client", session_id (self), call->tool);
      goto out;
    }

  code = result_error_code (result);
  if (call->paused &&
      (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) ||
       g_strcmp0 (code, "cancelled") == 0))
    {
      /* A call that had finished before the pause took hold keeps its real answer. */
      g_clear_pointer (&result, json_node_unref);
      g_clear_error (&error);
      result = error_result_new ("paused",
                                 "The person paused this agent in Chaperone during the call; "
                                 "it was stopped. Wait for them to resume it.");
      code = "paused";
    }

  if (result != NULL)
    {
      if (code != NULL)
        chp_agent_session_set_last_error (self->agent, code);
      chp_mcp_session_send_result (self, call->id, g_steal_pointer (&result));
    }
  else if (g_error_matches (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS))
    {
      chp_agent_session_set_last_error (self->agent, "invalid_params");
      chp_mcp_session_send_error (self, call->id, RPC_INVALID_PARAMS, error->message);
    }
  else
    {
      gboolean cancelled = g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);

      chp_agent_session_set_last_error (self->agent, cancelled ? "cancelled" : "internal");
      chp_mcp_session_send_error (self, call->id, RPC_INTERNAL_ERROR,
                                  error != NULL ? error->message : "The tool gave no result");
    }

out:
  call_free (call);
}

/* Agent-given names go into the audit and back into errors: printable ASCII, bounded. */
static char *
echo_name (const char *name)
{
  gsize len = strlen (name);

  if (len == 0 || len > MAX_ECHO_CHARS)
    return g_strdup ("(invalid)");
  for (gsize i = 0; i < len; i++)
    if (name[i] < 0x20 || name[i] > 0x7e)
      return g_strdup ("(invalid)");
  return g_strdup (name);
}

static void
refuse_call (ChpMcpSession *self,
             JsonNode      *id,
             const char    *name,
             const char    *code,
             const char    *message)
{
  chp_mcp_tools_audit (self->tools, name, "refused", NULL, 0, code);
  chp_agent_session_set_last_error (self->agent, code);
  chp_mcp_session_send_result (self, id, error_result_new (code, message));
}

static JsonNode *
progress_token (JsonObject *params)
{
  JsonNode *meta = json_object_get_member (params, "_meta");
  JsonNode *token;

  if (meta == NULL || !JSON_NODE_HOLDS_OBJECT (meta))
    return NULL;
  token = json_object_get_member (json_node_get_object (meta), "progressToken");
  if (token == NULL || !JSON_NODE_HOLDS_VALUE (token))
    return NULL;
  if (json_node_get_value_type (token) != G_TYPE_STRING &&
      json_node_get_value_type (token) != G_TYPE_INT64)
    return NULL;
  return token;
}

void
chp_mcp_session_handle_tools_call (ChpMcpSession *self,
                                   JsonNode      *id,
                                   const char    *key,
                                   JsonObject    *params)
{
  g_autoptr(JsonObject) empty = NULL;
  g_autofree char *safe_name = NULL;
  JsonNode *name_node;
  JsonNode *args_node;
  JsonObject *arguments;
  JsonNode *token;
  const char *name;
  Call *call;

  name_node = params != NULL ? json_object_get_member (params, "name") : NULL;
  if (name_node == NULL || !JSON_NODE_HOLDS_VALUE (name_node) ||
      json_node_get_value_type (name_node) != G_TYPE_STRING)
    {
      chp_agent_session_add_call (self->agent);
      chp_agent_session_set_last_error (self->agent, "invalid_params");
      chp_mcp_session_send_error (self, id, RPC_INVALID_PARAMS,
                                  "Invalid params: \"name\" must be a string");
      return;
    }
  name = json_node_get_string (name_node);

  args_node = json_object_get_member (params, "arguments");
  if (args_node != NULL && JSON_NODE_HOLDS_NULL (args_node))
    args_node = NULL;
  if (args_node != NULL && !JSON_NODE_HOLDS_OBJECT (args_node))
    {
      chp_agent_session_add_call (self->agent);
      chp_agent_session_set_last_error (self->agent, "invalid_params");
      chp_mcp_session_send_error (self, id, RPC_INVALID_PARAMS,
                                  "Invalid params: \"arguments\" must be an object");
      return;
    }
  if (args_node != NULL)
    arguments = json_node_get_object (args_node);
  else
    arguments = empty = json_object_new ();

  chp_agent_session_add_call (self->agent);
  safe_name = echo_name (name);

  if (!chp_mcp_tools_has (self->tools, name))
    {
      g_autofree char *message = g_strdup_printf ("Unknown tool: %s", safe_name);

      chp_mcp_tools_audit (self->tools, safe_name, "refused", NULL, 0, "unknown_method");
      chp_agent_session_set_last_error (self->agent, "unknown_method");
      chp_mcp_session_send_error (self, id, RPC_INVALID_PARAMS, message);
      return;
    }

  /* The state changes before the signal: a call after Pause is refused even if it arrived in
   * the same main-loop turn. */
  if (chp_agent_session_get_state (self->agent) == CHP_AGENT_SESSION_PAUSED)
    {
      g_autofree char *message = chp_mcp_session_paused_message (self->agent);

      refuse_call (self, id, name, "paused", message);
      return;
    }

  if (g_hash_table_size (self->calls) >= MAX_CALLS_IN_FLIGHT)
    {
      refuse_call (self, id, name, "busy",
                   "Too many calls in flight (at most 8); wait for one to finish.");
      return;
    }

  call = g_new0 (Call, 1);
  call->session = g_object_ref (self);
  call->id = json_node_copy (id);
  call->key = g_strdup (key);
  call->tool = g_strdup (name);
  call->cancellable = g_cancellable_new ();
  token = progress_token (params);
  if (token != NULL)
    {
      call->progress = g_rc_box_new0 (Progress);
      call->progress->session = g_object_ref (self);
      call->progress->token = json_node_copy (token);
    }
  g_hash_table_insert (self->calls, call->key, call);
  chp_agent_session_set_current_step (self->agent, call->tool);
  g_debug ("%s: tools/call %s (%u in flight)", session_id (self), call->tool,
           g_hash_table_size (self->calls));

  chp_mcp_tools_call_async (self->tools, self->context, name, arguments,
                            call->progress != NULL ? progress_cb : NULL,
                            call->progress != NULL ? g_rc_box_acquire (call->progress) : NULL,
                            call->progress != NULL ? progress_release : NULL,
                            call->cancellable, call_done_cb, call);
}

