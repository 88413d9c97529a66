/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-trace.c: every tool call as a step of its agent session's trace (chp-trace-recorder.h),
 * masked before it leaves here: what the agent typed is its length only, a URL keeps its host and
 * path (never a query or a fragment), and only the arguments that name things of ours (tabs,
 * refs, actions, ids) are kept as they are. The step says where (the tab's host and path), on
 * what (the element's role and name, from the agent's own snapshot), how long (waiting to be sent
 * to the browser, then running), how it ended, and what the person decided when it waited for
 * them. An act that failed on a page asks for a screenshot of the tab for the person's trace
 * browser. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include "chp-redact.h"

#include <string.h>

/* Deep enough for browser_batch's steps (steps[i].act.target.name, steps[i].api.body.x). */
#define MASK_MAX_DEPTH  6
#define MASK_WORD_MAX   64
#define SNIPPET_CHARS   300

/* Arguments whose strings are ours or the schema's words, never the agent's free text (a
 * recipe's name has a schema's form too: a short lowercase word). */
static const char * const plain_members[] = {
  "tab", "ref", "to", "action", "kind", "id", "site", "frame", "browser", "entryId", "role",
  "saveAs", "recipe", NULL,
};

/* Failures worth a picture: the page was there and the act did not do what was asked. Not the
 * refusals of policy (the floor, grants, a stop), nor a page that is gone. */
static const char * const shot_codes[] = {
  "target_denied", "stale_node", "timeout", "changed", "internal", NULL,
};

static gboolean
is_plain_word (const char *s)
{
  gsize n = strlen (s);

  if (n == 0 || n > MASK_WORD_MAX)
    return FALSE;
  for (const char *p = s; *p != '\0'; p++)
    if (!g_ascii_isprint (*p))
      return FALSE;
  return TRUE;
}

/* A URL's scheme, host and path; %NULL when it is no URL. */
static char *
url_without_query (const char *url)
{
  g_autoptr(GUri) uri = g_uri_parse (url, G_URI_FLAGS_NONE, NULL);

  if (uri == NULL || g_uri_get_host (uri) == NULL)
    return NULL;
  return g_uri_join (G_URI_FLAGS_NONE, g_uri_get_scheme (uri), NULL, g_uri_get_host (uri),
                     g_uri_get_port (uri), g_uri_get_path (uri), NULL, NULL);
}

static JsonNode *
length_only (const char *s)
{
  JsonObject *o = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_int_member (o, "length", g_utf8_validate (s, -1, NULL)
                                           ? g_utf8_strlen (s, -1) : (glong) strlen (s));
  json_node_take_object (node, o);
  return node;
}

static JsonNode *
mask_node (const char *member,
           JsonNode   *node,
           guint       depth)
{
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    {
      const char *s = json_node_get_string (node);

      if (g_strcmp0 (member, "url") == 0)
        {
          g_autofree char *url = url_without_query (s);

          if (url != NULL)
            return json_node_init_string (json_node_alloc (), url);
        }
      /* A key by its name (Enter, Control+s) is no typed text; one character is. */
      if ((g_strcmp0 (member, "key") == 0 && strlen (s) > 1 && is_plain_word (s)) ||
          (member != NULL && g_strv_contains (plain_members, member) && is_plain_word (s)))
        return json_node_copy (node);
      return length_only (s);
    }
  if (JSON_NODE_HOLDS_OBJECT (node) && depth < MASK_MAX_DEPTH)
    {
      JsonObject *in = json_node_get_object (node);
      JsonObject *out = json_object_new ();
      JsonNode *copy = json_node_new (JSON_NODE_OBJECT);
      /* In the agent's order (an iterator's is the hash table's). */
      g_autoptr(GList) names = json_object_get_members (in);

      for (GList *l = names; l != NULL; l = l->next)
        if (is_plain_word (l->data))
          json_object_set_member (out, l->data,
                                  mask_node (l->data, json_object_get_member (in, l->data),
                                             depth + 1));
      json_node_take_object (copy, out);
      return copy;
    }
  if (JSON_NODE_HOLDS_ARRAY (node) && depth < MASK_MAX_DEPTH)
    {
      JsonArray *in = json_node_get_array (node);
      JsonArray *out = json_array_new ();
      JsonNode *copy = json_node_new (JSON_NODE_ARRAY);

      for (guint i = 0; i < json_array_get_length (in); i++)
        json_array_add_element (out, mask_node (member, json_array_get_element (in, i),
                                                depth + 1));
      json_node_take_array (copy, out);
      return copy;
    }
  if (JSON_NODE_HOLDS_VALUE (node) || JSON_NODE_HOLDS_NULL (node))
    return json_node_copy (node);
  return json_node_init_null (json_node_alloc ());
}

/**
 * chp_tool_trace_mask_args:
 * @args: (nullable): a call's arguments, as the agent sent them
 *
 * Returns: (transfer full): them as a trace keeps them, JSON text
 */
char *
chp_tool_trace_mask_args (JsonObject *args)
{
  g_autoptr(JsonNode) in = NULL;
  g_autoptr(JsonNode) masked = NULL;

  if (args == NULL)
    return g_strdup ("{}");
  in = json_node_new (JSON_NODE_OBJECT);
  json_node_set_object (in, args);
  masked = mask_node (NULL, in, 0);
  return json_to_string (masked, FALSE);
}

/* The element the call named, as the agent's snapshot listed it (`button "Send" disabled`): its
 * role and its name. */
static void
element_of (ToolCall  *call,
            char     **role,
            char     **name)
{
  g_autofree char *key = NULL;
  JsonObject *memory, *current, *lines;
  const char *colon, *line, *space, *q;
  g_autoptr(GString) out = NULL;

  if (call->document == NULL || call->ref == NULL || (colon = strchr (call->ref, ':')) == NULL)
    return;
  key = chp_tool_frame_key (call, chp_mcp_json_int (call->document, "frameId", 0));
  memory = chp_tool_recall_object (call->context, key);
  current = memory != NULL && json_object_has_member (memory, "current") &&
            JSON_NODE_HOLDS_OBJECT (json_object_get_member (memory, "current"))
            ? json_object_get_object_member (memory, "current") : NULL;
  lines = current != NULL && json_object_has_member (current, "lines") &&
          JSON_NODE_HOLDS_OBJECT (json_object_get_member (current, "lines"))
          ? json_object_get_object_member (current, "lines") : NULL;
  line = lines != NULL ? chp_mcp_json_string (lines, colon + 1, NULL) : NULL;
  if (line == NULL)
    return;

  space = strchr (line, ' ');
  *role = space != NULL ? g_strndup (line, space - line) : g_strdup (line);
  if (space == NULL || space[1] != '"')
    return;
  out = g_string_new (NULL);
  for (q = space + 2; *q != '\0' && *q != '"'; q++)
    {
      if (*q == '\\' && q[1] != '\0')
        q++;
      g_string_append_c (out, *q);
    }
  *name = g_string_free (g_steal_pointer (&out), FALSE);
}

/* The MCP result's structured content and first text, when it has them. */
static JsonObject *
structured_of (JsonNode *result)
{
  JsonObject *o = result != NULL && JSON_NODE_HOLDS_OBJECT (result)
                  ? json_node_get_object (result) : NULL;
  JsonNode *s = o != NULL ? json_object_get_member (o, "structuredContent") : NULL;

  return s != NULL && JSON_NODE_HOLDS_OBJECT (s) ? json_node_get_object (s) : NULL;
}

static const char *
text_of (JsonNode *result)
{
  JsonObject *o = result != NULL && JSON_NODE_HOLDS_OBJECT (result)
                  ? json_node_get_object (result) : NULL;
  JsonNode *content = o != NULL ? json_object_get_member (o, "content") : NULL;
  JsonArray *array = content != NULL && JSON_NODE_HOLDS_ARRAY (content)
                     ? json_node_get_array (content) : NULL;
  JsonNode *first = array != NULL && json_array_get_length (array) > 0
                    ? json_array_get_element (array, 0) : NULL;

  return first != NULL && JSON_NODE_HOLDS_OBJECT (first)
         ? chp_mcp_json_string (json_node_get_object (first), "text", NULL) : NULL;
}

/* What the person decided, said once per question: on the browser_wait step that heard the
 * answer (the held act, the plan or the hand-over that asked shows as held or waiting), in the
 * trace's words: a hold done, changed or failed after Approve was approved. A wait that is
 * still waiting decides nothing. */
static void
decision_of (ToolCall     *call,
             JsonObject   *structured,
             ChpTraceStep *step)
{
  static const struct { char kind; const char *state, *decision; } decided[] = {
    { 'k', "done", "approved" }, { 'k', "changed", "approved" }, { 'k', "failed", "approved" },
    { 'k', "declined", "declined" }, { 'k', "expired", "expired" },
    { 'h', "done", "done" }, { 'h', "cancelled", "cancelled" }, { 'h', "expired", "expired" },
    { 'p', "approved", "approved" }, { 'p', "declined", "declined" },
    { 'p', "expired", "expired" },
  };
  const char *state, *colon;
  char kind;

  if (structured != NULL && chp_mcp_json_bool (structured, "held"))
    {
      g_free (step->outcome);
      step->outcome = g_strdup ("held");
      return;
    }
  if (g_strcmp0 (call->spec->name, "browser_wait") != 0 || structured == NULL ||
      call->wait_id == NULL)
    return;
  state = chp_mcp_json_string (structured, "state", NULL);
  /* The id says its kind: "bN:" then h (a hand-over) or k (a hold), "-" and its own id; else
   * a plan's. */
  colon = strchr (call->wait_id, ':');
  kind = colon != NULL && colon[1] != '\0' && colon[2] == '-' ? colon[1] : 'p';
  for (guint i = 0; state != NULL && i < G_N_ELEMENTS (decided); i++)
    if (decided[i].kind == kind && g_str_equal (decided[i].state, state))
      {
        step->decision_kind = kind == 'h' ? CHP_TRACE_DECISION_HANDOFF
                              : kind == 'k' ? CHP_TRACE_DECISION_HOLD : CHP_TRACE_DECISION_PLAN;
        step->decision = g_strdup (decided[i].decision);
        step->decision_wait_us = g_get_monotonic_time () - call->started_us;
        return;
      }
}

/**
 * chp_tool_trace:
 * @result: (nullable): the call's MCP result, when it has one
 *
 * Records @call as a step of its agent session's trace.
 */
void
chp_tool_trace (ToolCall   *call,
                const char *outcome,
                const char *code,
                JsonNode   *result)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autoptr(ChpTraceStep) step = NULL;
  g_autofree char *url = NULL;
  ChpTraceRecorder *traces;
  JsonObject *structured = structured_of (result);
  JsonObject *changes;
  gboolean shot;

  traces = engine != NULL ? chp_engine_get_traces (engine) : NULL;
  if (traces == NULL || call->spec == NULL || !call->self->tracing)
    return;

  step = chp_trace_step_new ();
  step->tool = g_strdup (call->spec->name);
  step->args = chp_tool_trace_mask_args (call->args);
  /* The time its requests waited to go to the browser, and the rest: the call's own. */
  step->queue_us = call->queue_us;
  step->run_us = MAX (g_get_monotonic_time () - call->started_us - call->queue_us, 0);
  step->outcome = g_strdup (outcome);
  step->error_code = g_strdup (code);
  if (g_strcmp0 (code, "stopped") == 0)
    step->stopped_by = g_strdup ("person");

  if (call->tab_id > 0 && call->device_id != NULL)
    {
      g_autoptr(GUri) uri = NULL;

      /* A navigation is about where it went; anything else about the tab's page. */
      url = g_strcmp0 (call->spec->name, "browser_navigate") == 0 && call->args != NULL &&
            chp_mcp_json_string (call->args, "url", NULL) != NULL
            ? g_strdup (json_object_get_string_member (call->args, "url"))
            : chp_tool_tab_url (call);
      uri = url != NULL ? g_uri_parse (url, G_URI_FLAGS_NONE, NULL) : NULL;
      /* The site as the person's grant names it: the host, and its port when it has one
       * (two apps on one machine are two sites). */
      if (uri != NULL && g_uri_get_host (uri) != NULL)
        {
          step->host = g_uri_get_port (uri) > 0
                       ? g_strdup_printf ("%s:%d", g_uri_get_host (uri), g_uri_get_port (uri))
                       : g_strdup (g_uri_get_host (uri));
          step->path = g_strdup (g_uri_get_path (uri));
        }
      /* A call to the site's own API is on its rung, at the endpoint's template (never the
       * values the agent filled in). */
      if (call->api_path != NULL)
        {
          g_free (step->path);
          step->path = g_strdup (call->api_path);
          step->rung = g_strdup ("api");
        }
      else
        step->rung = g_strdup ("page");
    }
  element_of (call, &step->role, &step->name);
  changes = structured != NULL && json_object_has_member (structured, "changes") &&
            JSON_NODE_HOLDS_OBJECT (json_object_get_member (structured, "changes"))
            ? json_object_get_object_member (structured, "changes") : NULL;
  if (changes != NULL)
    step->page_us = chp_mcp_json_int (changes, "settleMs", 0) * G_TIME_SPAN_MILLISECOND;
  decision_of (call, structured, step);

  /* A failing step keeps a few words of why: ours, with the browser's detail redacted. */
  if (code != NULL && text_of (result) != NULL)
    {
      g_autofree char *redacted = chp_redact_text (text_of (result), NULL);

      step->snippet = g_utf8_substring (redacted, 0, MIN (g_utf8_strlen (redacted, -1),
                                                          SNIPPET_CHARS));
    }

  shot = code != NULL && g_strv_contains (shot_codes, code) && call->tab_id > 0 &&
         (g_strcmp0 (call->spec->name, "browser_act") == 0 ||
          g_strcmp0 (call->spec->name, "browser_navigate") == 0);
  chp_trace_recorder_step (traces, chp_mcp_context_get_session_id (call->context),
                           call->device_id, step, shot ? call->tab_id : -1);
}

/**
 * chp_mcp_tools_set_tracing:
 * @tracing: %FALSE to record no steps: what the benchmark compares a traced call with
 */
void
chp_mcp_tools_set_tracing (ChpMcpTools *self,
                           gboolean     tracing)
{
  g_return_if_fail (CHP_IS_MCP_TOOLS (self));

  self->tracing = tracing;
}
