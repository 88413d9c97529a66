/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-reply.c: a request to the call's browser through the engine's one door, and the browser's
 * answer on its way to the tool: redacted again before an agent can see any of it and, when the
 * tool asks, formatted, both in a worker thread, so that an answer of 16 MiB never stalls the
 * window. The answers reach their tools on the main thread, one at a time, in the order they came,
 * as when all of it ran there. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include "chp-memory.h"
#include "chp-redact.h"

/* One answer on its way: the reply task's data. The main thread fills it, hands it to the
 * worker whole and touches it again only once the worker has returned. */
typedef struct
{
  ToolCall            *call;       /* for @format's prepare: the tool's task keeps it alive */
  const ReplyFormat   *format;     /* (nullable) */
  JsonNode            *answer;     /* the browser's, then the redacted one */
  JsonNode            *ruled;      /* (nullable): the engine's word on a rule's approval, redacted */
  GError              *error;
  gpointer             data;       /* @format's, from prepare to the tool */
  GAsyncReadyCallback  callback;
  gpointer             user_data;
  gint64               asked_us;   /* when the engine was asked */
} Reply;

/* Everything a reply holds is let go on the main thread, after its tool has read it: the tool's
 * results share json-glib values with the answer, and those are counted without atomics. */
static void
reply_clear (Reply *reply)
{
  g_clear_pointer (&reply->answer, json_node_unref);
  g_clear_pointer (&reply->ruled, json_node_unref);
  g_clear_error (&reply->error);
  if (reply->data != NULL)
    reply->format->free (g_steal_pointer (&reply->data));
}

/* Every answer from a browser passes here before an agent can see any of it: the extension
 * redacts already, and this is the second of the two checks the design asks for (DESIGN §8),
 * so one bug on either side does not hand a token to an agent. chp_redact_json() reads the
 * answer and builds a new tree, and its only shared state is built once under g_once(): it is
 * safe off the main thread. So is the formatting, which reads what prepare gave it and the
 * answer, and nothing of the app's. */
static void
reply_work (Reply *reply)
{
  guint count = 0;
  JsonNode *clean;

  if (reply->answer == NULL)
    return;
  clean = chp_redact_json (reply->answer, &count);
  if (count > 0)
    g_debug ("agents: %u secret-looking values redacted from a browser's answer", count);
  /* The browser's own tree is ours alone since the engine handed it over: it goes here. */
  json_node_unref (reply->answer);
  reply->answer = clean;
  /* A rule's outcome carries what the approved act changed, which the browser reported. */
  if (reply->ruled != NULL)
    {
      JsonNode *ruled = chp_redact_json (reply->ruled, &count);

      json_node_unref (reply->ruled);
      reply->ruled = ruled;
    }

  if (reply->data != NULL)
    reply->format->format (reply->data, clean);
}

static void
reply_thread (GTask        *task,
              gpointer      source,
              gpointer      task_data,
              GCancellable *cancellable)
{
  reply_work (task_data);
  g_task_return_boolean (task, TRUE);
}

/* The next answer's turn: only one at a time, so that each tool reads and changes the agent's
 * memory (its snapshots, its documents) in the order the answers came, and prepare sees what
 * the answers before it left there. */
static void
reply_next (ChpMcpTools *self)
{
  g_autoptr(GTask) task = g_queue_pop_head (&self->replies);
  Reply *reply;

  if (task == NULL)
    return;

  self->reply_busy = TRUE;
  reply = g_task_get_task_data (task);
  if (reply->answer != NULL && reply->format != NULL)
    reply->data = reply->format->prepare (reply->call);

  /* An error has nothing to redact or format. */
  if (reply->answer == NULL || !self->reply_in_thread)
    {
      reply_work (reply);
      g_task_return_boolean (task, TRUE);
      return;
    }
  g_task_run_in_thread (task, reply_thread);
}

static void
release_thread (GTask        *task,
                gpointer      source,
                gpointer      task_data,
                GCancellable *cancellable)
{
  json_node_unref (task_data);
  /* A snapshot's tree (up to 16 MiB of JSON): what it held goes back to the system once the
   * agent's burst of calls is over (chp-memory.c). */
  chp_memory_trim_soon ("a snapshot's answer was released");
  g_task_return_boolean (task, TRUE);
}

/* Lets @answer go in a worker: a tree of 16 MiB takes a while to free. Only for an answer that
 * nothing else shares a value with (ReplyFormat.unshared). */
static void
release_in_thread (JsonNode *answer)
{
  g_autoptr(GTask) task = g_task_new (NULL, NULL, NULL, NULL);

  g_task_set_task_data (task, answer, NULL);
  g_task_run_in_thread (task, release_thread);
}

static void
reply_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  ChpMcpTools *self = CHP_MCP_TOOLS (source);
  Reply *reply = g_task_get_task_data (G_TASK (result));

  reply->callback (source, result, reply->user_data);
  if (reply->answer != NULL && reply->format != NULL && reply->format->unshared &&
      self->reply_in_thread)
    release_in_thread (g_steal_pointer (&reply->answer));
  reply_clear (reply);
  self->reply_busy = FALSE;
  reply_next (self);
}

/* @call's request, asked of the engine at @asked_us, waited @queue_us before it went to the
 * browser: the wait is the call's queue time, counted once where it overlaps another's. */
static void
note_queue (ToolCall *call,
            gint64    asked_us,
            gint64    queue_us)
{
  gint64 from = MAX (asked_us, call->queue_until_us);
  gint64 until = asked_us + MAX (queue_us, 0);

  if (until > from)
    call->queue_us += until - from;
  call->queue_until_us = MAX (call->queue_until_us, until);
}

static void
engine_answered_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  GTask *task = user_data;
  ChpMcpTools *self = g_task_get_source_object (task);
  Reply *reply = g_task_get_task_data (task);
  JsonObject *ruled;

  reply->answer = chp_engine_agent_call_finish (CHP_ENGINE (source), result, &reply->error);
  ruled = chp_engine_agent_call_get_rule_run (result);
  /* A copy of its own: the engine's task, which holds it, goes away on the main thread while the
   * worker reads this. */
  if (ruled != NULL && reply->answer != NULL)
    {
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), ruled);

      reply->ruled = chp_tool_json_copy_deep (node);
    }
  if (reply->call != NULL)
    note_queue (reply->call, reply->asked_us, chp_engine_agent_call_get_queue_us (result));
  g_queue_push_tail (&self->replies, task);
  if (!self->reply_busy)
    reply_next (self);
}

/**
 * chp_tool_agent_call:
 * @params: (transfer none)
 * @cancellable: (nullable): the tool call's: cancels the browser's work
 * @format: (nullable): how the tool formats the answer, off the main thread
 * @call: (nullable): for @format's prepare, and the step's queue time in its trace
 *
 * Sends @method to @device_id through chp_engine_agent_call_async(). @callback gets the tools
 * as its source and a result for chp_tool_reply_finish() and chp_tool_reply_get_data(), on
 * the main thread, after every answer that came before this one.
 */
void
chp_tool_agent_call (ChpMcpTools         *self,
                     ChpEngine           *engine,
                     const char          *device_id,
                     const char          *method,
                     JsonNode            *params,
                     guint                timeout_ms,
                     GCancellable        *cancellable,
                     const ReplyFormat   *format,
                     ToolCall            *call,
                     GAsyncReadyCallback  callback,
                     gpointer             user_data)
{
  /* No cancellable of its own: a cancelled call is answered by its tool, as it always was. */
  GTask *task = g_task_new (self, NULL, reply_done_cb, NULL);
  Reply *reply = g_new0 (Reply, 1);

  g_assert (format == NULL || call != NULL);

  reply->call = call;
  reply->format = format;
  reply->callback = callback;
  reply->user_data = user_data;
  reply->asked_us = g_get_monotonic_time ();
  g_task_set_source_tag (task, chp_tool_agent_call);
  g_task_set_task_data (task, reply, g_free);
  /* On behalf of the call's agent session: a hold it makes is that agent's (a person's rule
   * names the agent). */
  chp_engine_agent_call_as_async (engine,
                                  call != NULL ? chp_mcp_context_get_session_id (call->context)
                                               : NULL,
                                  device_id, method, params, timeout_ms, cancellable,
                                  engine_answered_cb, task);
}

/* Returns: (transfer full) (nullable): the browser's answer, redacted, or %NULL with its error */
JsonNode *
chp_tool_reply_finish (GAsyncResult  *result,
                       GError       **error)
{
  Reply *reply;

  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == chp_tool_agent_call, NULL);

  reply = g_task_get_task_data (G_TASK (result));
  if (reply->answer == NULL)
    {
      g_propagate_error (error, g_error_copy (reply->error));
      return NULL;
    }
  return json_node_ref (reply->answer);
}

/* Returns: (transfer full): a copy of @node that shares nothing with it. json_node_copy() shares
 * the objects, arrays and values under it, and json-glib counts their references without
 * atomics: what a tool keeps of an answer that is let go in a worker must not share them. */
JsonNode *
chp_tool_json_copy_deep (JsonNode *node)
{
  JsonNode *copy;

  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_OBJECT:
      {
        JsonObject *from = json_node_get_object (node);
        JsonObject *to = json_object_new ();
        g_autoptr(GList) names = json_object_get_members (from);

        for (GList *l = names; l != NULL; l = l->next)
          json_object_set_member (to, l->data,
                                  chp_tool_json_copy_deep (json_object_get_member (from,
                                                                                   l->data)));
        copy = json_node_new (JSON_NODE_OBJECT);
        json_node_take_object (copy, to);
        return copy;
      }

    case JSON_NODE_ARRAY:
      {
        JsonArray *from = json_node_get_array (node);
        JsonArray *to = json_array_sized_new (json_array_get_length (from));

        for (guint i = 0; i < json_array_get_length (from); i++)
          json_array_add_element (to, chp_tool_json_copy_deep (json_array_get_element (from,
                                                                                       i)));
        copy = json_node_new (JSON_NODE_ARRAY);
        json_node_take_array (copy, to);
        return copy;
      }

    case JSON_NODE_VALUE:
      copy = json_node_new (JSON_NODE_VALUE);
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_STRING:
          json_node_set_string (copy, json_node_get_string (node));
          break;
        case G_TYPE_INT64:
          json_node_set_int (copy, json_node_get_int (node));
          break;
        case G_TYPE_DOUBLE:
          json_node_set_double (copy, json_node_get_double (node));
          break;
        case G_TYPE_BOOLEAN:
          json_node_set_boolean (copy, json_node_get_boolean (node));
          break;
        default:
          g_assert_not_reached ();
        }
      return copy;

    case JSON_NODE_NULL:
    default:
      return json_node_new (JSON_NODE_NULL);
    }
}

/* Returns: (transfer none) (nullable): what the tool's format made of the answer; %NULL when
 * the browser answered an error */
gpointer
chp_tool_reply_get_data (GAsyncResult *result)
{
  Reply *reply = g_task_get_task_data (G_TASK (result));

  return reply->data;
}

/**
 * chp_tool_reply_get_rule_run:
 *
 * When the browser held the act and the person's "Always allow" rule approved that hold at once,
 * how the approval ended (chp_engine_agent_call_get_rule_run()), redacted: the engine's word,
 * which nothing in the browser's answer can stand in for.
 *
 * Returns: (transfer none) (nullable): that, or %NULL when nothing but the person decides
 */
JsonObject *
chp_tool_reply_get_rule_run (GAsyncResult *result)
{
  Reply *reply = g_task_get_task_data (G_TASK (result));

  return reply->ruled != NULL && JSON_NODE_HOLDS_OBJECT (reply->ruled)
         ? json_node_get_object (reply->ruled) : NULL;
}

/**
 * chp_mcp_tools_set_reply_in_thread:
 * @in_thread: %FALSE to redact and format on the main thread, as before the worker: what
 *   the benchmark compares the worker with
 */
void
chp_mcp_tools_set_reply_in_thread (ChpMcpTools *self,
                                   gboolean     in_thread)
{
  g_return_if_fail (CHP_IS_MCP_TOOLS (self));

  self->reply_in_thread = in_thread;
}

/* Sends @method to the call's browser; @callback gets the task back. */
void
chp_tool_browser_call (GTask               *task,
                       const char          *method,
                       JsonNode            *params,
                       guint                timeout_ms,
                       GAsyncReadyCallback  callback)
{
  chp_tool_browser_call_format (task, method, params, timeout_ms, NULL, callback);
}

/* The same, with @format run on the answer off the main thread (chp_tool_reply_get_data()). */
void
chp_tool_browser_call_format (GTask               *task,
                              const char          *method,
                              JsonNode            *params,
                              guint                timeout_ms,
                              const ReplyFormat   *format,
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

  chp_tool_agent_call (call->self, engine, call->device_id, method, owned, timeout_ms,
                       g_task_get_cancellable (task), format, call, callback,
                       g_object_ref (task));
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
  g_autoptr(JsonNode) node = chp_tool_reply_finish (result, &error);

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
