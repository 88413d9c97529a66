/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-tools.c: the agent's tools (DESIGN §7). One table: each tool a name, a schema its
 * arguments are checked against before anything happens, honest annotations, and a handler
 * that reaches a browser only through chp_engine_agent_call_async() — the engine's one door,
 * which refuses everything while the person has pressed Stop. Every failure a tool meets is a
 * result the agent can read (`isError`, the code of §5); only malformed arguments and
 * cancellation are errors of the call itself. Every call is audited, metadata only.
 * Here: the table, the dispatch of a call and its answer; the schemas, the argument checks and
 * the loop guard have files of their own, and each family of tools one in tools/. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include "chp-redact.h"

G_DEFINE_FINAL_TYPE (ChpMcpTools, chp_mcp_tools, G_TYPE_OBJECT)

static void
tool_call_free (gpointer data)
{
  ToolCall *call = data;

  g_assert (call->changed_handler == 0 && call->stopped_handler == 0);
  g_assert (call->timeout_source == 0 && call->tick_source == 0);

  if (call->progress_destroy != NULL)
    call->progress_destroy (call->progress_data);
  g_clear_object (&call->context);
  g_clear_pointer (&call->args, json_object_unref);
  g_clear_pointer (&call->targets, g_ptr_array_unref);
  g_clear_pointer (&call->document, json_object_unref);
  g_free (call->act_text);
  g_clear_pointer (&call->act_structured, json_object_unref);
  g_clear_pointer (&call->api_entry, json_object_unref);
  g_free (call->api_path);
  g_free (call->site_card);
  g_free (call->marker);
  g_free (call->device_id);
  g_free (call->alias);
  g_free (call->ref);
  g_free (call->wait_id);
  g_free (call->handoff_id);
  g_free (call->final_state);
  g_free (call->final_by);
  g_clear_pointer (&call->final_extra, json_object_unref);
  g_free (call);
}

static void
chp_mcp_tools_finalize (GObject *object)
{
  ChpMcpTools *self = CHP_MCP_TOOLS (object);

  g_weak_ref_clear (&self->engine);
  g_clear_pointer (&self->list, json_node_unref);
  g_clear_pointer (&self->inputs, g_ptr_array_unref);
  g_clear_pointer (&self->aliases, g_hash_table_unref);
  g_clear_pointer (&self->devices, g_hash_table_unref);
  /* Each answer waiting holds a reference on us. */
  g_assert (g_queue_is_empty (&self->replies));

  G_OBJECT_CLASS (chp_mcp_tools_parent_class)->finalize (object);
}

static void
chp_mcp_tools_class_init (ChpMcpToolsClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_mcp_tools_finalize;
}

/* The agent contract (DESIGN §7): names and argument shapes are stable; extend, never break. */
static const ToolSpec tools[] = {
  {
    .name = "browser_tabs",
    .title = "List granted tabs",
    .description =
      "Lists the tabs the person granted you in every connected browser: tab id, title, URL, "
      "grant label, scopes, expiry. Only the person grants tabs, in the extension's popup.",
    .read_only = TRUE,
    .destructive = FALSE,
    .idempotent = TRUE,
    .open_world = TRUE,
    .input = chp_tool_tabs_input,
    .output = chp_tool_tabs_output,
    .run = chp_tool_tabs,
  },
  {
    .name = "browser_snapshot",
    .title = "Read a tab",
    .description =
      "Reads a granted tab: one line per actionable element ([3:e12] button \"Send\" disabled), "
      "then headings and text. Long pages come in pages; query filters; diff gives what changed; "
      "until waits for a text. Refs last as long as their document.",
    .read_only = TRUE,
    .destructive = FALSE,
    .idempotent = TRUE,
    .open_world = TRUE,
    .input = chp_tool_snapshot_input,
    .output = chp_tool_snapshot_output,
    .run = chp_tool_snapshot,
  },
  {
    .name = "browser_inspect",
    .title = "Inspect an element",
    .description =
      "One element from a snapshot: role, name, safe attributes, visibility, state, bounds; never "
      "a field's value.",
    .read_only = TRUE,
    .destructive = FALSE,
    .idempotent = TRUE,
    .open_world = TRUE,
    .input = chp_tool_inspect_input,
    .output = chp_tool_inspect_output,
    .run = chp_tool_inspect,
  },
  {
    .name = "browser_act",
    .title = "Act on an element",
    .description =
      "Acts on an element from a snapshot as the person would and says what changed. Covered, "
      "hidden, disabled or stale elements are refused, never retargeted. A send, post, payment, "
      "delete, or a change no approved plan covers is held until the person approves it in the "
      "Chaperone app (browser_wait gives the outcome).",
    .read_only = FALSE,
    .destructive = TRUE,
    .idempotent = FALSE,
    .open_world = TRUE,
    .input = chp_tool_act_input,
    .output = chp_tool_act_output,
    .run = chp_tool_act,
  },
  {
    .name = "browser_navigate",
    .title = "Navigate a tab",
    .description =
      "Loads a URL in a granted tab, within the site it was granted for. Refs from the previous "
      "page stop working: take a new snapshot.",
    .read_only = FALSE,
    .destructive = FALSE,
    .idempotent = FALSE,
    .open_world = TRUE,
    .input = chp_tool_navigate_input,
    .output = chp_tool_navigate_output,
    .run = chp_tool_navigate,
  },
  {
    .name = "browser_network",
    .title = "List a tab's requests",
    .description =
      "The requests the tab's page made: method, status, path, query keys, size, time, "
      "credential kind; never values.",
    .read_only = TRUE,
    .destructive = FALSE,
    .idempotent = TRUE,
    .open_world = TRUE,
    .input = chp_tool_network_input,
    .output = chp_tool_network_output,
    .run = chp_tool_network,
  },
  {
    .name = "browser_api",
    .title = "Use the site's own API",
    .description =
      "The site's API as its page calls it, run in the page with its login. learn, list; route "
      "{hint}: the matching read or why not; call {entryId}. Writes are held like clicks.",
    .read_only = FALSE,
    .destructive = TRUE,
    .idempotent = FALSE,
    .open_world = TRUE,
    .input = chp_tool_api_input,
    .output = chp_tool_api_output,
    .run = chp_tool_api,
  },
  {
    .name = "browser_batch",
    .title = "Run steps in one call",
    .description =
      "Runs up to 50 steps in a tab in one call, halting at the first failure, hold or Stop (it "
      "says which). {{name}} in values comes from params. saveAs keeps a fully successful batch "
      "as a recipe of the site (values only as {{name}}, target not ref); recipe replays it.",
    .read_only = FALSE,
    .destructive = TRUE,
    .idempotent = FALSE,
    .open_world = TRUE,
    .input = chp_tool_batch_input,
    .output = chp_tool_batch_output,
    .run = chp_tool_batch,
  },
  {
    .name = "browser_handoff",
    .title = "Hand a step to the person",
    .description =
      "Asks the person to do a step only they should do (a QR code, an MFA code, a CAPTCHA, a "
      "device, a sign-in) in a granted tab. Returns an id at once; browser_wait tells when done.",
    .read_only = FALSE,
    .destructive = FALSE,
    .idempotent = FALSE,
    .open_world = TRUE,
    .input = chp_tool_handoff_input,
    .output = chp_tool_handoff_output,
    .run = chp_tool_handoff,
  },
  {
    .name = "browser_wait",
    .title = "Wait for the person",
    .description =
      "Waits until the person decided on a handoff, a held act or a plan (or timeoutMs passes) "
      "and returns its state. Call it again while it is still waiting or held.",
    .read_only = TRUE,
    .destructive = FALSE,
    .idempotent = TRUE,
    .open_world = FALSE,
    .input = chp_tool_wait_input,
    .output = chp_tool_wait_output,
    .run = chp_tool_wait,
  },
  {
    .name = "browser_plan",
    .title = "Ask for a plan",
    .description =
      "Asks the person to approve, once, a list of creates and edits on named sites. Until it ends "
      "(steps used, an hour, a Stop) those writes run without a card each. Returns an id for "
      "browser_wait.",
    .read_only = FALSE,
    .destructive = FALSE,
    .idempotent = FALSE,
    .open_world = FALSE,
    .input = chp_tool_plan_input,
    .output = chp_tool_plan_output,
    .run = chp_tool_plan,
  },
  {
    .name = "browser_history",
    .title = "Recall earlier sessions",
    .description =
      "Your own earlier sessions on a site from Chaperone's trace (tools, paths, elements, "
      "outcomes; never values).",
    .read_only = TRUE,
    .destructive = FALSE,
    .idempotent = TRUE,
    .open_world = FALSE,
    .input = chp_tool_history_input,
    .output = chp_tool_history_output,
    .run = chp_tool_history,
  },
  {
    .name = "browser_stop",
    .title = "Stop all agents",
    .description =
      "Stops every agent in every browser at once, as the person's Stop does. Only the person "
      "resumes, in the Chaperone app.",
    .read_only = FALSE,
    .destructive = FALSE,
    .idempotent = TRUE,
    .open_world = FALSE,
    .input = chp_tool_stop_input,
    .output = chp_tool_stop_output,
    .run = chp_tool_stop,
  },
};

static const ToolSpec *
spec_lookup (const char *name,
             guint      *index)
{
  for (guint i = 0; i < G_N_ELEMENTS (tools); i++)
    {
      if (g_strcmp0 (tools[i].name, name) == 0)
        {
          if (index != NULL)
            *index = i;
          return &tools[i];
        }
    }

  return NULL;
}

/* What an agent pays for tools/list is paid in every conversation: output schemas keep their
 * shape (clients validate structuredContent against it) but not their words, which the tool's
 * description and the text result already carry. */
static void
strip_descriptions (JsonNode *node)
{
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *object = json_node_get_object (node);
      g_autoptr(GList) members = NULL;

      json_object_remove_member (object, "description");
      members = json_object_get_values (object);
      for (GList *l = members; l != NULL; l = l->next)
        strip_descriptions (l->data);
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (array); i++)
        strip_descriptions (json_array_get_element (array, i));
    }
}

static JsonNode *
tool_definition (const ToolSpec *spec,
                 JsonObject     *input)
{
  JsonObject *tool = json_object_new ();
  JsonObject *annotations = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_string_member (tool, "name", spec->name);
  json_object_set_string_member (tool, "title", spec->title);
  json_object_set_string_member (tool, "description", spec->description);
  json_object_set_object_member (tool, "inputSchema", json_object_ref (input));
  json_object_set_object_member (tool, "outputSchema", spec->output ());
  strip_descriptions (json_object_get_member (tool, "outputSchema"));

  /* annotations.title would repeat the tool's own title, which clients prefer anyway. A hint
   * is written only where it differs from the default MCP gives it (readOnly false, destructive
   * true, idempotent false, openWorld true), and destructiveHint only for a tool that writes,
   * the only place it means anything: the same hints in fewer bytes of every conversation. */
  if (spec->read_only)
    json_object_set_boolean_member (annotations, "readOnlyHint", TRUE);
  if (!spec->read_only && !spec->destructive)
    json_object_set_boolean_member (annotations, "destructiveHint", FALSE);
  if (spec->idempotent)
    json_object_set_boolean_member (annotations, "idempotentHint", TRUE);
  if (!spec->open_world)
    json_object_set_boolean_member (annotations, "openWorldHint", FALSE);
  json_object_set_object_member (tool, "annotations", annotations);

  json_node_take_object (node, tool);
  return node;
}

static void
chp_mcp_tools_init (ChpMcpTools *self)
{
  JsonArray *list = json_array_new ();

  g_weak_ref_init (&self->engine, NULL);
  self->result_max_chars = CHP_MCP_RESULT_MAX_CHARS_DEFAULT;
  self->inputs = g_ptr_array_new_with_free_func ((GDestroyNotify) json_object_unref);
  self->aliases = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->devices = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_queue_init (&self->replies);
  self->reply_in_thread = TRUE;
  self->tracing = TRUE;

  for (guint i = 0; i < G_N_ELEMENTS (tools); i++)
    {
      JsonObject *input = tools[i].input ();

      g_ptr_array_add (self->inputs, input);
      json_array_add_element (list, tool_definition (&tools[i], input));
    }

  self->list = json_node_new (JSON_NODE_ARRAY);
  json_node_take_array (self->list, list);
  /* Shared by every session: nobody may change it. */
  json_node_seal (self->list);
}

/**
 * chp_mcp_tools_new:
 * @engine: the engine whose browsers the tools reach; it owns the tools, which keep only a weak
 *   reference to it
 */
ChpMcpTools *
chp_mcp_tools_new (ChpEngine *engine)
{
  ChpMcpTools *self = g_object_new (CHP_TYPE_MCP_TOOLS, NULL);

  g_weak_ref_set (&self->engine, engine);
  return self;
}

/* Returns: (transfer full): the MCP Tool objects, sealed: read them, do not change them */
JsonNode *
chp_mcp_tools_list (ChpMcpTools *self)
{
  g_return_val_if_fail (CHP_IS_MCP_TOOLS (self), NULL);

  return json_node_ref (self->list);
}

gboolean
chp_mcp_tools_has (ChpMcpTools *self,
                   const char  *name)
{
  g_return_val_if_fail (CHP_IS_MCP_TOOLS (self), FALSE);

  return spec_lookup (name, NULL) != NULL;
}

/**
 * chp_mcp_tools_set_result_max_chars:
 * @max_chars: characters of text a result may carry; 0 for the default. Values under
 *   %CHP_MCP_RESULT_MIN_CHARS are raised to it: a smaller page could not hold a whole line.
 */
void
chp_mcp_tools_set_result_max_chars (ChpMcpTools *self,
                                    guint        max_chars)
{
  g_return_if_fail (CHP_IS_MCP_TOOLS (self));

  if (max_chars == 0)
    max_chars = CHP_MCP_RESULT_MAX_CHARS_DEFAULT;
  self->result_max_chars = MAX (max_chars, CHP_MCP_RESULT_MIN_CHARS);
}

void
chp_mcp_tools_audit (ChpMcpTools *self,
                     const char  *name,
                     const char  *outcome,
                     const char  *device_id,
                     gint64       duration_ms,
                     const char  *error_code)
{
  g_autoptr(ChpEngine) engine = NULL;

  g_return_if_fail (CHP_IS_MCP_TOOLS (self));

  engine = g_weak_ref_get (&self->engine);
  if (engine != NULL)
    chp_engine_audit_agent (engine, name, outcome, device_id, duration_ms, error_code);
}

/* ---- finishing a call ------------------------------------------------------------------- */

static const char *
outcome_of (const char *code)
{
  static const char * const refusals[] = {
    "stopped", "paused", "no_grant", "grant_expired", "scope_denied", "target_denied",
    "origin_changed", "refused_floor", "policy_denied", "invalid_params", NULL,
  };

  if (code == NULL)
    return "ok";
  if (g_strv_contains (refusals, code))
    return "refused";
  return "error";
}

void
chp_tool_audit (ToolCall   *call,
                const char *outcome,
                const char *code)
{
  gint64 duration_ms = (g_get_monotonic_time () - call->started_us) / 1000;

  chp_mcp_tools_audit (call->self, call->spec->name, outcome, call->device_id, duration_ms, code);
}

/* Answers @task with @result (transfer full), or with cancellation when the caller cancelled:
 * a late result must not look like an answer to a call the client gave up. */
void
chp_tool_return (GTask      *task,
                 JsonNode   *result,
                 const char *code)
{
  ToolCall *call = call_of (task);
  GCancellable *cancellable = g_task_get_cancellable (task);

  g_assert (!call->finished);

  if (chp_tool_loop_guard_failed (call, code))
    {
      /* A failure that answers ok (a halted batch, a write a rule could not run) is noted on
       * the task instead (chp-mcp-loop-guard.c). */
      const char *failure = code != NULL ? code
                            : g_object_get_data (G_OBJECT (task), CHP_LOOP_FAILURE_KEY);
      g_autofree char *message =
        g_strdup_printf ("Paused by Chaperone: your last %d acts on tab %s failed (this one: %s). "
                         "The person must resume you in the Chaperone app; meanwhile every call "
                         "answers paused. When resumed, take a new snapshot and try another way, "
                         "or ask the person.", LOOP_FAILURES,
                         chp_mcp_json_string (call->args, "tab", ""),
                         failure != NULL ? failure : "failed");

      json_node_unref (result);
      result = chp_mcp_format_error ("paused", message, NULL, call->self->result_max_chars);
      code = "paused";
    }
  call->finished = TRUE;

  /* The guard's pause cancels this call with the agent's others: its answer says why. */
  if (call->guard_paused)
    g_task_set_check_cancellable (task, FALSE);
  else if (cancellable != NULL && g_cancellable_is_cancelled (cancellable))
    {
      json_node_unref (result);
      chp_tool_audit (call, "cancelled", "cancelled");
      chp_tool_trace (call, "cancelled", "cancelled", NULL);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "The call was cancelled");
      return;
    }

  chp_tool_audit (call, outcome_of (code), code);
  chp_tool_trace (call, outcome_of (code), code, result);
  g_task_return_pointer (task, result, (GDestroyNotify) json_node_unref);
}

void
chp_tool_return_ok (GTask      *task,
                    const char *text,
                    JsonObject *structured,
                    const char *how_to_get_more)
{
  ToolCall *call = call_of (task);
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, structured);
  chp_tool_return (task, chp_mcp_format_result (text, node, call->self->result_max_chars,
                                                how_to_get_more), NULL);
}

void
chp_tool_return_error (GTask      *task,
                       const char *code,
                       const char *message,
                       const char *browser_detail)
{
  ToolCall *call = call_of (task);

  chp_tool_return (task, chp_mcp_format_error (code, message, browser_detail,
                                               call->self->result_max_chars), code);
}

/* Our own words for the codes the app itself gives (and whatever it refused itself,
 * CHP_LOCAL_ERROR: an administrator's limit); for the others the browser said why, and what it
 * said may quote the page, so it goes in the untrusted wrapper. */
void
chp_tool_return_gerror (GTask        *task,
                        const GError *error,
                        const char   *what)
{
  const char *code = chp_protocol_error_code_of (error);
  g_autofree char *message = NULL;
  static const char * const ours[] = {
    "stopped", "device_offline", "not_paired", "revoked", "timeout", "cancelled", "too_large",
    "policy_denied", NULL,
  };
  gboolean own = g_strv_contains (ours, code) || error->domain == CHP_LOCAL_ERROR;
  g_autofree char *detail = NULL;

  message = g_strdup_printf ("%s failed: %s", what,
                             own ? error->message : "the browser refused (its reason follows)");
  /* The browser's reason may quote the page, secrets included. */
  if (!own)
    detail = chp_redact_text (error->message, NULL);
  chp_tool_return_error (task, code, message, detail);
}

void
chp_tool_progress (ToolCall   *call,
                   double      total,
                   const char *message)
{
  if (call->progress == NULL || call->finished)
    return;

  call->progress_done += 1;
  call->progress (call->progress_data, call->progress_done, total, message);
}

/* ---- the call --------------------------------------------------------------------------- */

/**
 * chp_mcp_tools_call_async:
 * @context: the agent session's memory (its snapshots, for refs and diffs)
 * @arguments: (nullable): the call's arguments
 * @progress: (nullable): reports progress while the call runs; never called after it finished
 * @progress_destroy: (nullable): frees @progress_data once the call is over
 * @cancellable: (nullable): cancelling it ends the call at once and cancels the browser's work
 *
 * Runs a tool. Finish with chp_mcp_tools_call_finish().
 */
void
chp_mcp_tools_call_async (ChpMcpTools         *self,
                          ChpMcpContext       *context,
                          const char          *name,
                          JsonObject          *arguments,
                          ChpMcpProgressFunc   progress_func,
                          gpointer             progress_data,
                          GDestroyNotify       progress_destroy,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpEngine) engine = NULL;
  ToolCall *call;
  const ToolSpec *spec;
  guint index = 0;

  g_return_if_fail (CHP_IS_MCP_TOOLS (self));
  g_return_if_fail (CHP_IS_MCP_CONTEXT (context));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, chp_mcp_tools_call_async);

  call = g_new0 (ToolCall, 1);
  call->task = task;
  call->self = self;
  call->context = g_object_ref (context);
  call->args = arguments != NULL ? json_object_ref (arguments) : json_object_new ();
  call->progress = progress_func;
  call->progress_data = progress_data;
  call->progress_destroy = progress_destroy;
  call->started_us = g_get_monotonic_time ();
  call->marker = chp_mcp_format_new_marker ();
  g_task_set_task_data (task, call, tool_call_free);

  spec = spec_lookup (name, &index);
  if (spec == NULL)
    {
      g_autofree char *shown = chp_mcp_format_line (name, 64);

      call->finished = TRUE;
      chp_mcp_tools_audit (self, shown, "refused", NULL, 0, "invalid_params");
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                               "There is no tool called \"%s\"", shown);
      return;
    }
  call->spec = spec;

  if (!chp_tool_check_arguments (spec, g_ptr_array_index (self->inputs, index), call->args,
                                 &error) ||
      !chp_tool_check_semantics (spec, call->args, &error))
    {
      call->finished = TRUE;
      chp_tool_audit (call, "refused", "invalid_params");
      chp_tool_trace (call, "refused", "invalid_params", NULL);
      g_prefix_error (&error, "Invalid arguments for %s: ", spec->name);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  if (g_task_return_error_if_cancelled (task))
    {
      call->finished = TRUE;
      chp_tool_audit (call, "cancelled", "cancelled");
      chp_tool_trace (call, "cancelled", "cancelled", NULL);
      return;
    }

  /* Stopped is the person's word: said at once, without asking any browser. The engine's door
   * refuses anyway; this only spares the agent a browser's round trip. */
  engine = g_weak_ref_get (&self->engine);
  if (engine != NULL && chp_engine_get_stopped (engine) && spec->run != chp_tool_stop)
    {
      chp_tool_return_error (task, "stopped", "The person stopped all agents", NULL);
      return;
    }

  if (!chp_tool_loop_guard_enter (call))
    return;

  spec->run (call);
}

/**
 * chp_mcp_tools_call_finish:
 *
 * Returns: (transfer full): the MCP CallToolResult — failures of the tool itself are results
 *   with `isError` — or %NULL with %CHP_PROTOCOL_ERROR_INVALID_PARAMS (the arguments do not fit
 *   the tool's input schema, or there is no such tool) or %G_IO_ERROR_CANCELLED
 */
JsonNode *
chp_mcp_tools_call_finish (ChpMcpTools   *self,
                           GAsyncResult  *result,
                           GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
