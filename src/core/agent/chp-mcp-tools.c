/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-tools.c: the agent's tools (DESIGN §7). One table: each tool a name, a schema its
 * arguments are checked against before anything happens, honest annotations, and a handler
 * that reaches a browser only through chp_engine_agent_call_async() — the engine's one door,
 * which refuses everything while the person has pressed Stop. Every failure a tool meets is a
 * result the agent can read (`isError`, the code of §5); only malformed arguments and
 * cancellation are errors of the call itself. Every call is audited, metadata only. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools.h"

#include "chp-engine.h"
#include "chp-json-util.h"
#include "chp-mcp-format.h"
#include "chp-protocol-error.h"
#include "chp-redact.h"

#include <stdarg.h>
#include <string.h>

/* How long each browser request may take. A snapshot of a 10,000-element page takes well under a
 * second; navigation waits up to 15 s for the page to commit in the extension. All of them stay
 * under the MCP clients' usual 60 s request timeout. */
#define TABS_TIMEOUT_MS      10000
#define CONTEXT_TIMEOUT_MS   20000
#define NODE_TIMEOUT_MS      20000
/* After an act that changed the page, its result shows what changed (a diff against the agent's
 * previous snapshot) within this many characters; browser_snapshot with diff gives the rest. */
#define ACT_DIFF_MAX_CHARS    4000
/* ...and when it does not show them, what to do instead. */
#define ACT_SNAPSHOT_HINT \
  " To see the page now, browser_snapshot with diff true lists only what changed."
#define NAVIGATE_TIMEOUT_MS  25000
#define HANDOFF_TIMEOUT_MS   10000
#define STATUS_TIMEOUT_MS     5000

/* browser_wait: by default 20 s, never more than 50 s, so that no call outlives a client's
 * 60 s timeout; progress every 5 s keeps clients that reset their timer on progress informed. */
#define WAIT_DEFAULT_MS      20000
#define WAIT_MAX_MS          50000
#define WAIT_PROGRESS_S          5

/* Argument bounds, as the input schemas state them. The extension's own bounds are the same or
 * looser: 65,536 characters for a value, 8,192 for a URL. A handoff message must also fit the
 * app's mirror of handoffs (1,024 bytes) and the extension's 500 UTF-16 units: 250 characters
 * fit both whatever they are. */
#define VALUE_MAX_CHARS      65536
#define URL_MAX_CHARS         8192
#define MESSAGE_MAX_CHARS      250
#define QUERY_MAX_CHARS        200
#define REASON_MAX_CHARS       500

#define TAB_PATTERN  "^b[1-9][0-9]{0,8}:[0-9]{1,15}$"
#define REF_PATTERN  "^[1-9][0-9]{0,8}:[A-Za-z0-9_-]{1,32}$"
#define WAIT_PATTERN "^(b[1-9][0-9]{0,8}:[a-z]{1,8}-[A-Za-z0-9_-]{1,64}|plan-[1-9][0-9]{0,8})$"
#define PLAN_SUMMARY_CHARS     200

/* The loop guard (DESIGN §8): the same act on the same target this many times in a row, or this
 * many failures in a row on one tab, pause the agent until the person resumes it. */
#define LOOP_REPEATS           3
#define LOOP_FAILURES          3
#define LOOP_KEY               "loop-guard"

/* The key, in the object's data of a ChpMcpContext, of the counter that numbers the documents
 * an agent has seen: outside the context's bounded memory, so that it is never forgotten and
 * a number never names two documents. */
#define DOCUMENT_COUNTER_KEY "chp-mcp-tools-documents"

struct _ChpMcpTools
{
  GObject parent_instance;

  GWeakRef engine;          /* the engine owns us: no reference back */
  guint result_max_chars;
  JsonNode *list;           /* sealed array of Tool objects */
  GPtrArray *inputs;        /* JsonObject per tool: the input schema arguments are checked with */
  GHashTable *aliases;      /* device id → "bN" */
  GHashTable *devices;      /* "bN" → device id */
  guint next_alias;
};

G_DEFINE_FINAL_TYPE (ChpMcpTools, chp_mcp_tools, G_TYPE_OBJECT)

typedef struct _ToolCall ToolCall;
typedef void (*ToolHandler) (ToolCall *call);

typedef struct
{
  const char  *name;
  const char  *title;
  const char  *description;
  gboolean     read_only;
  gboolean     destructive;
  gboolean     idempotent;
  gboolean     open_world;
  JsonObject *(*input) (void);
  JsonObject *(*output) (void);
  ToolHandler  handler;
} ToolSpec;

/* One tool call on its way: the task's data. */
struct _ToolCall
{
  GTask              *task;          /* not a reference: the task owns this */
  ChpMcpTools        *self;
  const ToolSpec     *spec;
  ChpMcpContext      *context;
  JsonObject         *args;
  ChpMcpProgressFunc  progress;
  gpointer            progress_data;
  GDestroyNotify      progress_destroy;
  double              progress_done;
  gint64              started_us;
  char               *marker;        /* the result's (chp_mcp_format_new_marker()) */
  char               *device_id;     /* for the audit */
  char               *alias;
  gint64              tab_id;

  /* browser_tabs */
  GPtrArray          *targets;
  guint               pending;

  /* browser_snapshot, browser_inspect, browser_act: the agent's ref and the document it names */
  char               *ref;
  JsonObject         *document;

  /* browser_act, while the page is read again for its diff: the act's own result so far */
  char               *act_text;
  JsonObject         *act_structured;

  /* browser_wait */
  char               *wait_id;
  const struct _WaitKind *wait_kind;
  char               *handoff_id;     /* or the hold's id, or the plan's */
  JsonObject         *final_extra;    /* a hold's changes or error, a plan's progress */
  char               *final_state;
  char               *final_by;
  guint               timeout_ms;
  gulong              changed_handler;
  gulong              stopped_handler;
  gulong              cancel_handler;
  guint               timeout_source;
  guint               tick_source;
  gboolean            status_known;
  gboolean            finished;
};

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

static ToolCall *
call_of (GTask *task)
{
  return g_task_get_task_data (task);
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

  G_OBJECT_CLASS (chp_mcp_tools_parent_class)->finalize (object);
}

static void
chp_mcp_tools_class_init (ChpMcpToolsClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_mcp_tools_finalize;
}

/* ---- schemas ---------------------------------------------------------------------------- */

static JsonObject *
prop (const char *type,
      const char *description)
{
  JsonObject *o = json_object_new ();

  json_object_set_string_member (o, "type", type);
  if (description != NULL)
    json_object_set_string_member (o, "description", description);
  return o;
}

static JsonObject *
prop_string (const char *description,
             guint       min_length,
             guint       max_length,
             const char *pattern)
{
  JsonObject *o = prop ("string", description);

  if (min_length > 0)
    json_object_set_int_member (o, "minLength", min_length);
  if (max_length > 0)
    json_object_set_int_member (o, "maxLength", max_length);
  if (pattern != NULL)
    json_object_set_string_member (o, "pattern", pattern);
  return o;
}

static JsonObject *
prop_enum (const char         *description,
           const char * const *values)
{
  JsonObject *o = prop ("string", description);
  JsonArray *array = json_array_new ();

  for (guint i = 0; values[i] != NULL; i++)
    json_array_add_string_element (array, values[i]);
  json_object_set_array_member (o, "enum", array);
  return o;
}

static JsonObject *
prop_integer (const char *description,
              gint64      minimum)
{
  JsonObject *o = prop ("integer", description);

  if (minimum != G_MININT64)
    json_object_set_int_member (o, "minimum", minimum);
  return o;
}

static JsonObject *
prop_array (const char *description,
            JsonObject *items)
{
  JsonObject *o = prop ("array", description);

  json_object_set_object_member (o, "items", items);
  return o;
}

static JsonObject *
prop_nullable_integer (const char *description)
{
  JsonObject *o = json_object_new ();
  JsonArray *types = json_array_new ();

  json_array_add_string_element (types, "integer");
  json_array_add_string_element (types, "null");
  json_object_set_array_member (o, "type", types);
  json_object_set_string_member (o, "description", description);
  return o;
}

/*
 * schema_object:
 * @closed: no properties but those listed (every input schema)
 * @...: triples (name, JsonObject *property (transfer full), gboolean required), then %NULL
 */
static JsonObject *
schema_object (gboolean    closed,
               const char *first_name,
               ...)
{
  JsonObject *schema = prop ("object", NULL);
  JsonObject *properties = json_object_new ();
  JsonArray *required = json_array_new ();
  const char *name = first_name;
  va_list args;

  va_start (args, first_name);
  while (name != NULL)
    {
      JsonObject *property = va_arg (args, JsonObject *);
      gboolean is_required = va_arg (args, gboolean);

      json_object_set_object_member (properties, name, property);
      if (is_required)
        json_array_add_string_element (required, name);
      name = va_arg (args, const char *);
    }
  va_end (args);

  json_object_set_object_member (schema, "properties", properties);
  if (json_array_get_length (required) > 0)
    json_object_set_array_member (schema, "required", required);
  else
    json_array_unref (required);
  if (closed)
    json_object_set_boolean_member (schema, "additionalProperties", FALSE);
  return schema;
}

/* An output schema requires nothing and closes no object, so the error form, `{code, message,
 * detail?}`, is valid under each: MCP clients validate structuredContent against it even when
 * isError is set. The error members are not listed: every agent pays for tools/list in each
 * conversation, and the error form is the same for every tool (its codes: docs/agents.md). */
static JsonObject *
output_schema (JsonObject *schema)
{
  json_object_remove_member (schema, "required");
  json_object_remove_member (schema, "additionalProperties");
  return schema;
}

static const char * const actions[] = { "click", "focus", "scroll", "fill", NULL };
static const char * const reasons[] = { "qr", "mfa", "captcha", "device", "login", "other", NULL };

static JsonObject *
tab_prop (void)
{
  return prop_string ("A tab from browser_tabs, e.g. \"b1:1842\".", 0, 0, TAB_PATTERN);
}

static JsonObject *
ref_prop (void)
{
  return prop_string ("An element's ref from this tab's latest browser_snapshot, e.g. \"3:e12\".",
                      0, 0, REF_PATTERN);
}

static JsonObject *
tabs_input (void)
{
  return schema_object (TRUE, NULL);
}

static JsonObject *
tabs_output (void)
{
  JsonObject *tab = schema_object (FALSE,
    "tab", prop ("string", "Names the tab in other tools."), TRUE,
    "browser", prop ("string", "The browser, e.g. \"b1\"."), TRUE,
    "browserName", prop ("string", "The browser's name in Chaperone."), FALSE,
    "title", prop ("string", "Page content."), FALSE,
    "url", prop ("string", "Page content."), FALSE,
    "origin", prop ("string", "The site the person granted."), FALSE,
    "active", prop ("boolean", NULL), FALSE,
    "label", prop ("string", "The task label the person gave the grant."), FALSE,
    "scopes", prop_array ("What the grant allows.", prop ("string", NULL)), FALSE,
    "expiresAt", prop ("integer", "When the grant ends, ms since 1970."), FALSE,
    "state", prop ("string", "origin_changed when the tab left the granted site."), FALSE,
    NULL);

  /* browsers ({browser, name, online}) and errors ({browser, code, message}) are said in the
   * result's text as well; their shapes are left open here to keep tools/list short. */
  return output_schema (schema_object (FALSE,
    "tabs", prop_array ("One entry per granted tab.", tab), TRUE,
    "browsers", prop_array ("The paired browsers.", prop ("object", NULL)), FALSE,
    "errors", prop_array ("Browsers that did not answer.", prop ("object", NULL)), FALSE,
    NULL));
}

static JsonObject *
snapshot_input (void)
{
  return schema_object (TRUE,
    "tab", tab_prop (), TRUE,
    "frame", prop_integer ("A child frame's id from the snapshot's frame list; 0 (the default) is "
                           "the tab's page.", 0), FALSE,
    "query", prop_string ("Lists only the elements whose role or name contains this text "
                          "(case-insensitive).", 1, QUERY_MAX_CHARS, NULL), FALSE,
    "page", prop_integer ("Which page of the snapshot, from 1 (the default); a result says when "
                          "there are more.", 1), FALSE,
    "diff", prop ("boolean", "Only what changed since your previous snapshot of this tab and frame "
                  "(a full snapshot when there is none or the page changed document)."), FALSE,
    NULL);
}

static JsonObject *
snapshot_output (void)
{
  return output_schema (schema_object (FALSE,
    "tab", prop ("string", NULL), TRUE,
    "frame", prop ("integer", NULL), FALSE,
    "document", prop ("integer", "Your number for this document; refs start with it."), FALSE,
    "url", prop ("string", "Page content."), FALSE,
    "title", prop ("string", "Page content."), FALSE,
    "documentId", prop ("string", NULL), FALSE,
    "captureId", prop ("string", NULL), FALSE,
    "page", prop ("integer", NULL), FALSE,
    "pages", prop ("integer", NULL), FALSE,
    "nextPage", prop_nullable_integer ("The next page, or null on the last."), FALSE,
    "truncated", prop ("boolean", "This result is not the whole snapshot."), FALSE,
    "browserTruncated", prop ("boolean", "The browser's capture itself was bounded."), FALSE,
    "nodeCount", prop ("integer", "Actionable elements on the page."), FALSE,
    "listed", prop ("integer", "Elements listed over all pages (after the query)."), FALSE,
    "nodes", prop_array ("This page's elements: ref, role, name, state… (page content).",
                         prop ("object", NULL)), FALSE,
    "headings", prop_array (NULL, prop ("object", NULL)), FALSE,
    "frames", prop_array (NULL, prop ("object", NULL)), FALSE,
    "auth", prop ("object", "Sign-in signals: password, one-time code, CAPTCHA, QR."), FALSE,
    "diff", prop ("object", "With diff: the refs added, changed and removed."), FALSE,
    NULL));
}

static JsonObject *
inspect_input (void)
{
  return schema_object (TRUE, "tab", tab_prop (), TRUE, "ref", ref_prop (), TRUE, NULL);
}

static JsonObject *
inspect_output (void)
{
  return output_schema (schema_object (FALSE,
    "tab", prop ("string", NULL), TRUE,
    "ref", prop ("string", NULL), TRUE,
    "tag", prop ("string", NULL), FALSE,
    "role", prop ("string", NULL), FALSE,
    "name", prop ("string", "Page content."), FALSE,
    "attributes", prop ("object", "Safe attributes (page content); never a value."), FALSE,
    "visible", prop ("boolean", NULL), FALSE,
    "inViewport", prop ("boolean", NULL), FALSE,
    "inModal", prop ("boolean", NULL), FALSE,
    "state", prop ("object", NULL), FALSE,
    "bounds", prop ("object", NULL), FALSE,
    "credential", prop ("boolean", "A secret field: its value is never read."), FALSE,
    NULL));
}

static JsonObject *
act_input (void)
{
  return schema_object (TRUE,
    "tab", tab_prop (), TRUE,
    "ref", ref_prop (), TRUE,
    "action", prop_enum ("click, focus, scroll into view, or fill a field with value.",
                         actions), TRUE,
    "value", prop_string ("For fill only (required there): the text to put in the field.", 0,
                          VALUE_MAX_CHARS, NULL), FALSE,
    NULL);
}

static JsonObject *
act_output (void)
{
  return output_schema (schema_object (FALSE,
    "ok", prop ("boolean", "The action ran."), FALSE,
    "tab", prop ("string", NULL), FALSE,
    "ref", prop ("string", NULL), FALSE,
    "action", prop ("string", NULL), FALSE,
    "changes", prop ("object", "What changed on the page: urlChanged, titleChanged, added, "
                     "removed, textChanged."), FALSE,
    "page", prop ("object", "When the page changed: the diff against your previous snapshot, "
                  "as browser_snapshot gives it."), FALSE,
    "held", prop ("boolean", "A person must release this act first."), FALSE,
    "holdId", prop ("string", NULL), FALSE,
    "waiting", prop ("boolean", NULL), FALSE,
    "id", prop ("string", "For browser_wait."), FALSE,
    NULL));
}

static JsonObject *
navigate_input (void)
{
  return schema_object (TRUE,
    "tab", tab_prop (), TRUE,
    "url", prop_string ("An absolute http(s) URL on the site the tab was granted for.", 1,
                        URL_MAX_CHARS, NULL), TRUE,
    NULL);
}

static JsonObject *
navigate_output (void)
{
  return output_schema (schema_object (FALSE,
    "tab", prop ("string", NULL), TRUE,
    "url", prop ("string", "Where the page committed (page content)."), FALSE,
    "documentId", prop ("string", NULL), FALSE,
    NULL));
}

static JsonObject *
handoff_input (void)
{
  return schema_object (TRUE,
    "tab", tab_prop (), TRUE,
    "reason", prop_enum ("What the person must do (the description above says each).",
                         reasons), TRUE,
    "message", prop_string ("Shown to the person as plain text: say what you need, briefly.", 1,
                            MESSAGE_MAX_CHARS, NULL), TRUE,
    NULL);
}

static JsonObject *
handoff_output (void)
{
  return output_schema (schema_object (FALSE,
    "id", prop ("string", "For browser_wait."), TRUE,
    "state", prop ("string", "waiting"), TRUE,
    "tab", prop ("string", NULL), FALSE,
    "reason", prop ("string", NULL), FALSE,
    NULL));
}

static JsonObject *
wait_input (void)
{
  return schema_object (TRUE,
    "id", prop_string ("An id from browser_handoff, a held browser_act, or browser_plan.", 0, 0,
                       WAIT_PATTERN), TRUE,
    "timeoutMs", prop ("integer", "Milliseconds: 20000 by default, 50000 at most (more is "
                       "cut)."), FALSE,
    NULL);
}

static JsonObject *
wait_output (void)
{
  return output_schema (schema_object (FALSE,
    "id", prop ("string", NULL), TRUE,
    "state", prop ("string", NULL), TRUE,
    "outcome", prop ("string", NULL), FALSE,
    "changes", prop ("object", NULL), FALSE,
    "step", prop ("integer", NULL), FALSE,
    "of", prop ("integer", NULL), FALSE,
    "by", prop ("string", "Who ended it: page (the person on the page), app, agent, grant."), FALSE,
    NULL));
}

static const char * const step_kinds[] = { "create", "edit", NULL };

static JsonObject *
plan_input (void)
{
  JsonObject *steps = prop_array ("What you will create or edit, one step per write (a save, a "
                                  "create): at most 20. Deletes, messages and payments are never "
                                  "part of a plan; each of those waits for the person.",
                                  schema_object (TRUE,
                                    "kind", prop_enum (NULL, step_kinds), TRUE,
                                    "site", prop_string ("The host, e.g. docs.example.com.", 1,
                                                         253, NULL), TRUE,
                                    "summary", prop_string ("What this step does, in plain "
                                                            "words.", 1, PLAN_SUMMARY_CHARS,
                                                            NULL), TRUE,
                                    NULL));

  json_object_set_int_member (steps, "minItems", 1);
  json_object_set_int_member (steps, "maxItems", CHP_PLAN_MAX_STEPS);
  return schema_object (TRUE,
    "summary", prop_string ("The plan in one sentence, for the person.", 1, PLAN_SUMMARY_CHARS,
                            NULL), TRUE,
    "steps", steps, TRUE,
    NULL);
}

static JsonObject *
plan_output (void)
{
  return output_schema (schema_object (FALSE,
    "id", prop ("string", NULL), TRUE,
    "state", prop ("string", NULL), TRUE,
    "steps", prop ("integer", NULL), FALSE,
    NULL));
}

static JsonObject *
stop_input (void)
{
  return schema_object (TRUE,
    "reason", prop_string ("Why you stop (optional; not stored).", 1, REASON_MAX_CHARS,
                           NULL), FALSE,
    NULL);
}

static JsonObject *
stop_output (void)
{
  return output_schema (schema_object (FALSE,
    "stopped", prop ("boolean", NULL), TRUE,
    NULL));
}

static void tool_tabs (ToolCall *call);
static void tool_snapshot (ToolCall *call);
static void tool_inspect (ToolCall *call);
static void tool_act (ToolCall *call);
static void tool_navigate (ToolCall *call);
static void tool_handoff (ToolCall *call);
static void tool_wait (ToolCall *call);
static void tool_plan (ToolCall *call);
static void tool_stop (ToolCall *call);

/* The agent contract (DESIGN §7): names and argument shapes are stable; extend, never break. */
static const ToolSpec tools[] = {
  {
    "browser_tabs", "List granted tabs",
    "Lists the browser tabs the person granted you, in every connected browser: for each, its "
    "tab id (use it in the other tools), title, URL, the grant's label, scopes and expiry. Only "
    "the person can grant a tab, in the Chaperone extension's popup.",
    TRUE, FALSE, TRUE, TRUE, tabs_input, tabs_output, tool_tabs,
  },
  {
    "browser_snapshot", "Read a tab",
    "Reads a granted tab: one line per actionable element, like [3:e12] button \"Send\" disabled, "
    "then headings and the page text. Long pages come in pages (page) and can be filtered by role "
    "or name (query); diff returns only what changed since your previous snapshot. Refs are valid "
    "for the document they came from.",
    TRUE, FALSE, TRUE, TRUE, snapshot_input, snapshot_output, tool_snapshot,
  },
  {
    "browser_inspect", "Inspect an element",
    "Describes one element from a snapshot: role, name, safe attributes, visibility, state and "
    "bounds. Never a field's value.",
    TRUE, FALSE, TRUE, TRUE, inspect_input, inspect_output, tool_inspect,
  },
  {
    "browser_act", "Act on an element",
    "Clicks, focuses, scrolls to or fills an element from a snapshot, as the person would, and "
    "says what changed on the page. Covered, hidden, disabled or stale elements are refused, "
    "never retargeted. A click that would send, post, pay or delete, or change data no approved "
    "plan covers, is held: nothing happens until the person approves it in the Chaperone app "
    "(browser_wait gives the outcome).",
    FALSE, TRUE, FALSE, TRUE, act_input, act_output, tool_act,
  },
  {
    "browser_navigate", "Navigate a tab",
    "Loads a URL in a granted tab, within the site it was granted for. Refs from the previous "
    "page stop working: take a new snapshot.",
    FALSE, FALSE, FALSE, TRUE, navigate_input, navigate_output, tool_navigate,
  },
  {
    "browser_handoff", "Hand a step to the person",
    "Asks the person to do a step only they should do (scan a QR code, enter an MFA code, solve "
    "a CAPTCHA, confirm on a device, sign in) in a granted tab. Returns at once with an id; "
    "browser_wait tells when they are done.",
    FALSE, FALSE, FALSE, TRUE, handoff_input, handoff_output, tool_handoff,
  },
  {
    "browser_wait", "Wait for the person",
    "Waits until the person has decided on a handoff, a held act or a plan (or timeoutMs "
    "passes, 20 s by default, 50 s at most) and returns its state. Call it again while the "
    "state is still waiting (or held).",
    TRUE, FALSE, TRUE, FALSE, wait_input, wait_output, tool_wait,
  },
  {
    "browser_plan", "Ask for a plan",
    "Asks the person to approve, once, a list of creates and edits on named sites. Until it "
    "ends (steps used, an hour, or a Stop) those writes run without a card each. Returns at "
    "once with an id for browser_wait.",
    FALSE, FALSE, FALSE, FALSE, plan_input, plan_output, tool_plan,
  },
  {
    "browser_stop", "Stop all agents",
    "Stops every agent's work in every browser at once, the same Stop the person has. Only the "
    "person can resume, in the Chaperone app.",
    FALSE, FALSE, TRUE, FALSE, stop_input, stop_output, tool_stop,
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

/* ---- arguments -------------------------------------------------------------------------- */

static gboolean
invalid (GError    **error,
         const char *format,
         ...) G_GNUC_PRINTF (2, 3);

static gboolean
invalid (GError    **error,
         const char *format,
         ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  g_set_error_literal (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS, message);
  return FALSE;
}

static gboolean
node_is_integer (JsonNode *node,
                 gint64   *out)
{
  GType type;

  if (!JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  type = json_node_get_value_type (node);
  if (type == G_TYPE_INT64)
    {
      *out = json_node_get_int (node);
      return TRUE;
    }
  /* JSON has numbers, not integers: 2.0 is the integer 2 (as JSON Schema says). */
  if (type == G_TYPE_DOUBLE)
    {
      double d = json_node_get_double (node);

      if (d == (double) (gint64) d && d > -9007199254740992.0 && d < 9007199254740992.0)
        {
          *out = (gint64) d;
          return TRUE;
        }
    }
  return FALSE;
}

/* Checks one argument against its property schema: what the schema states, nothing less. */
static gboolean check_members (const char  *where,
                               JsonObject  *schema,
                               JsonObject  *args,
                               GError     **error);

static gboolean
check_value (const char  *name,
             JsonObject  *schema,
             JsonNode    *value,
             GError     **error)
{
  const char *type = chp_mcp_json_string (schema, "type", NULL);

  if (g_strcmp0 (type, "string") == 0)
    {
      const char *s;
      glong length;
      JsonArray *values;

      if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_STRING)
        return invalid (error, "%s must be a string", name);
      s = json_node_get_string (value);
      length = g_utf8_strlen (s, -1);
      if (json_object_has_member (schema, "minLength") &&
          length < json_object_get_int_member (schema, "minLength"))
        return invalid (error, "%s must have at least %" G_GINT64_FORMAT " character(s)", name,
                        json_object_get_int_member (schema, "minLength"));
      if (json_object_has_member (schema, "maxLength") &&
          length > json_object_get_int_member (schema, "maxLength"))
        return invalid (error, "%s must have at most %" G_GINT64_FORMAT " characters", name,
                        json_object_get_int_member (schema, "maxLength"));
      if (json_object_has_member (schema, "pattern") &&
          !g_regex_match_simple (json_object_get_string_member (schema, "pattern"), s, 0, 0))
        return invalid (error, "%s does not have the right form (%s)", name,
                        json_object_get_string_member (schema, "pattern"));
      if ((values = chp_json_get_array (schema, "enum")) != NULL)
        {
          g_autoptr(GString) allowed = g_string_new (NULL);

          for (guint i = 0; i < json_array_get_length (values); i++)
            {
              if (g_strcmp0 (json_array_get_string_element (values, i), s) == 0)
                return TRUE;
              g_string_append_printf (allowed, "%s%s", i > 0 ? ", " : "",
                                      json_array_get_string_element (values, i));
            }
          return invalid (error, "%s must be one of %s", name, allowed->str);
        }
      return TRUE;
    }

  if (g_strcmp0 (type, "integer") == 0)
    {
      gint64 n;

      if (!node_is_integer (value, &n))
        return invalid (error, "%s must be an integer", name);
      if (json_object_has_member (schema, "minimum") &&
          n < json_object_get_int_member (schema, "minimum"))
        return invalid (error, "%s must be at least %" G_GINT64_FORMAT, name,
                        json_object_get_int_member (schema, "minimum"));
      return TRUE;
    }

  if (g_strcmp0 (type, "boolean") == 0)
    {
      if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_BOOLEAN)
        return invalid (error, "%s must be true or false", name);
      return TRUE;
    }

  if (g_strcmp0 (type, "array") == 0)
    {
      JsonArray *array;
      guint length;

      if (!JSON_NODE_HOLDS_ARRAY (value))
        return invalid (error, "%s must be a list", name);
      array = json_node_get_array (value);
      length = json_array_get_length (array);
      if (json_object_has_member (schema, "minItems") &&
          length < json_object_get_int_member (schema, "minItems"))
        return invalid (error, "%s must have at least %" G_GINT64_FORMAT " item(s)", name,
                        json_object_get_int_member (schema, "minItems"));
      if (json_object_has_member (schema, "maxItems") &&
          length > json_object_get_int_member (schema, "maxItems"))
        return invalid (error, "%s must have at most %" G_GINT64_FORMAT " items", name,
                        json_object_get_int_member (schema, "maxItems"));
      for (guint i = 0; i < length; i++)
        {
          g_autofree char *item = g_strdup_printf ("%s[%u]", name, i);

          if (!check_value (item, json_object_get_object_member (schema, "items"),
                            json_array_get_element (array, i), error))
            return FALSE;
        }
      return TRUE;
    }

  if (g_strcmp0 (type, "object") == 0)
    {
      if (!JSON_NODE_HOLDS_OBJECT (value))
        return invalid (error, "%s must be an object", name);
      return check_members (name, schema, json_node_get_object (value), error);
    }

  g_assert_not_reached ();
  return FALSE;
}

/* @where: the tool, or the argument whose members these are */
static gboolean
check_members (const char  *where,
               JsonObject  *schema,
               JsonObject  *args,
               GError     **error)
{
  JsonObject *properties = json_object_get_object_member (schema, "properties");
  JsonArray *required = chp_json_get_array (schema, "required");
  g_autoptr(GList) names = json_object_get_members (args);

  for (GList *l = names; l != NULL; l = l->next)
    {
      JsonObject *property;

      if (!json_object_has_member (properties, l->data))
        {
          g_autofree char *shown = chp_mcp_format_line (l->data, 40);

          return invalid (error, "%s takes no argument \"%s\"", where, shown);
        }
      property = json_object_get_object_member (properties, l->data);
      if (!check_value (l->data, property, json_object_get_member (args, l->data), error))
        return FALSE;
    }

  for (guint i = 0; required != NULL && i < json_array_get_length (required); i++)
    if (!json_object_has_member (args, json_array_get_string_element (required, i)))
      return invalid (error, "%s is required", json_array_get_string_element (required, i));

  return TRUE;
}

static gboolean
check_arguments (const ToolSpec  *spec,
                 JsonObject      *schema,
                 JsonObject      *args,
                 GError         **error)
{
  return check_members (spec->name, schema, args, error);
}

typedef struct _WaitKind WaitKind;
static const WaitKind *wait_kind_of (const char *id);

/* What the schema cannot say: checks that need two arguments, or a parser. */
static gboolean
check_semantics (const ToolSpec  *spec,
                 JsonObject      *args,
                 GError         **error)
{
  if (g_str_equal (spec->name, "browser_act"))
    {
      gboolean fill = g_strcmp0 (json_object_get_string_member (args, "action"), "fill") == 0;

      if (fill && !json_object_has_member (args, "value"))
        return invalid (error, "value is required when action is fill");
      if (!fill && json_object_has_member (args, "value"))
        return invalid (error, "value is for fill only");
    }
  else if (g_str_equal (spec->name, "browser_navigate"))
    {
      const char *url = json_object_get_string_member (args, "url");
      g_autoptr(GUri) uri = g_uri_parse (url, G_URI_FLAGS_NONE, NULL);

      if (uri == NULL || g_uri_get_host (uri) == NULL || *g_uri_get_host (uri) == '\0' ||
          (g_strcmp0 (g_uri_get_scheme (uri), "http") != 0 &&
           g_strcmp0 (g_uri_get_scheme (uri), "https") != 0))
        return invalid (error, "url must be an absolute http or https URL");
    }
  else if (g_str_equal (spec->name, "browser_wait"))
    {
      const char *id = json_object_get_string_member (args, "id");

      if (!g_str_has_prefix (id, "plan-") && wait_kind_of (id) == NULL)
        return invalid (error, "id must come from browser_handoff, a held browser_act or "
                        "browser_plan");
    }

  return TRUE;
}

static gint64
int_argument (JsonObject *args,
              const char *name,
              gint64      fallback)
{
  JsonNode *node = json_object_get_member (args, name);
  gint64 value;

  return node != NULL && node_is_integer (node, &value) ? value : fallback;
}

/* ---- finishing a call ------------------------------------------------------------------- */

static const char *
outcome_of (const char *code)
{
  static const char * const refusals[] = {
    "stopped", "paused", "no_grant", "grant_expired", "scope_denied", "target_denied",
    "origin_changed", "refused_floor", "invalid_params", NULL,
  };

  if (code == NULL)
    return "ok";
  if (g_strv_contains (refusals, code))
    return "refused";
  return "error";
}

static void
call_audit (ToolCall   *call,
            const char *outcome,
            const char *code)
{
  gint64 duration_ms = (g_get_monotonic_time () - call->started_us) / 1000;

  chp_mcp_tools_audit (call->self, call->spec->name, outcome, call->device_id, duration_ms, code);
}

/* ---- the loop guard --------------------------------------------------------------------- */

/* Acts only: reading the same page twice harms nobody, doing the same thing twice may. */
static gboolean
is_guarded (ToolCall *call)
{
  return g_str_equal (call->spec->name, "browser_act") ||
         g_str_equal (call->spec->name, "browser_navigate");
}

static JsonObject *
loop_memory (ToolCall *call)
{
  JsonNode *node = chp_mcp_context_recall (call->context, LOOP_KEY);

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    {
      g_autoptr(JsonNode) fresh = json_node_new (JSON_NODE_OBJECT);

      json_node_take_object (fresh, json_object_new ());
      chp_mcp_context_remember (call->context, LOOP_KEY, fresh);
      node = chp_mcp_context_recall (call->context, LOOP_KEY);
    }
  return json_node_get_object (node);
}

/* Pauses the agent's session as the person's Pause would, and asks the person about it. */
static void
loop_pause (ToolCall   *call,
            const char *why)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  ChpAgentSession *agent;

  /* What tripped the guard is forgotten: after the person's Resume the agent starts afresh. */
  chp_mcp_context_forget (call->context, LOOP_KEY);
  if (engine == NULL)
    return;
  agent = chp_agent_session_list_lookup (chp_engine_get_agent_sessions (engine),
                                         chp_mcp_context_get_session_id (call->context));
  if (agent != NULL)
    chp_agent_session_pause_for (agent, why);
}

static void call_return_error (GTask      *task,
                               const char *code,
                               const char *message,
                               const char *browser_detail);

/* Before an act: the same act on the same target LOOP_REPEATS times in a row is not sent. */
static gboolean
loop_guard_enter (ToolCall *call)
{
  JsonObject *memory;
  const char *value;
  g_autofree char *key = NULL;
  gint64 repeats;

  if (!is_guarded (call))
    return TRUE;

  value = chp_mcp_json_string (call->args, "value", "");
  /* The value is hashed, not kept: an agent's fill may be a secret. */
  key = g_strdup_printf ("%s|%s|%s|%s|%s|%u", call->spec->name,
                         chp_mcp_json_string (call->args, "tab", ""),
                         chp_mcp_json_string (call->args, "ref", ""),
                         chp_mcp_json_string (call->args, "url", ""),
                         chp_mcp_json_string (call->args, "action", ""), g_str_hash (value));
  memory = loop_memory (call);
  repeats = g_strcmp0 (chp_mcp_json_string (memory, "key", NULL), key) == 0
            ? chp_mcp_json_int (memory, "repeats", 0) + 1 : 1;
  json_object_set_string_member (memory, "key", key);
  json_object_set_int_member (memory, "repeats", repeats);
  if (repeats < LOOP_REPEATS)
    return TRUE;

  loop_pause (call, "repeated");
  call_return_error (call->task, "paused",
                     "Paused by Chaperone: this is the third time in a row you asked for exactly "
                     "this act on this target. It was not done. The person must resume you in "
                     "the Chaperone app; meanwhile every call answers paused. When resumed, try "
                     "another way or ask the person.", NULL);
  return FALSE;
}

/* After an act: LOOP_FAILURES failures in a row on one tab pause the agent. Returns TRUE when
 * this failure did, and the answer must say so instead. */
static gboolean
loop_guard_failed (ToolCall   *call,
                   const char *code)
{
  static const char * const not_failures[] = { "paused", "stopped", "cancelled", NULL };
  const char *tab = chp_mcp_json_string (call->args, "tab", "");
  JsonObject *memory;
  gint64 failures;

  if (!is_guarded (call) || g_strv_contains (not_failures, code != NULL ? code : ""))
    return FALSE;

  memory = loop_memory (call);
  if (code == NULL)
    {
      json_object_set_int_member (memory, "failures", 0);
      return FALSE;
    }
  failures = g_strcmp0 (chp_mcp_json_string (memory, "failedTab", NULL), tab) == 0
             ? chp_mcp_json_int (memory, "failures", 0) + 1 : 1;
  json_object_set_string_member (memory, "failedTab", tab);
  json_object_set_int_member (memory, "failures", failures);
  if (failures < LOOP_FAILURES)
    return FALSE;

  loop_pause (call, "failing");
  return TRUE;
}

/* Answers @task with @result (transfer full), or with cancellation when the caller cancelled:
 * a late result must not look like an answer to a call the client gave up. */
static void
call_return (GTask      *task,
             JsonNode   *result,
             const char *code)
{
  ToolCall *call = call_of (task);
  GCancellable *cancellable = g_task_get_cancellable (task);

  g_assert (!call->finished);

  if (loop_guard_failed (call, code))
    {
      g_autofree char *message =
        g_strdup_printf ("Paused by Chaperone: your last %d acts on tab %s failed (this one: %s). "
                         "The person must resume you in the Chaperone app; meanwhile every call "
                         "answers paused. When resumed, take a new snapshot and try another way, "
                         "or ask the person.", LOOP_FAILURES,
                         chp_mcp_json_string (call->args, "tab", ""), code);

      json_node_unref (result);
      result = chp_mcp_format_error ("paused", message, NULL, call->self->result_max_chars);
      code = "paused";
    }
  call->finished = TRUE;

  if (cancellable != NULL && g_cancellable_is_cancelled (cancellable))
    {
      json_node_unref (result);
      call_audit (call, "cancelled", "cancelled");
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "The call was cancelled");
      return;
    }

  call_audit (call, outcome_of (code), code);
  g_task_return_pointer (task, result, (GDestroyNotify) json_node_unref);
}

static void
call_return_ok (GTask      *task,
                const char *text,
                JsonObject *structured,
                const char *how_to_get_more)
{
  ToolCall *call = call_of (task);
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, structured);
  call_return (task, chp_mcp_format_result (text, node, call->self->result_max_chars,
                                            how_to_get_more), NULL);
}

static void
call_return_error (GTask      *task,
                   const char *code,
                   const char *message,
                   const char *browser_detail)
{
  ToolCall *call = call_of (task);

  call_return (task, chp_mcp_format_error (code, message, browser_detail,
                                           call->self->result_max_chars), code);
}

/* Our own words for the codes the app itself gives; for the others the browser said why, and
 * what it said may quote the page, so it goes in the untrusted wrapper. */
static void
call_return_gerror (GTask        *task,
                    const GError *error,
                    const char   *what)
{
  const char *code = chp_protocol_error_code_of (error);
  g_autofree char *message = NULL;
  static const char * const ours[] = {
    "stopped", "device_offline", "not_paired", "revoked", "timeout", "cancelled", "too_large",
    NULL,
  };
  gboolean own = g_strv_contains (ours, code);
  g_autofree char *detail = NULL;

  message = g_strdup_printf ("%s failed: %s", what,
                             own ? error->message : "the browser refused (its reason follows)");
  /* The browser's reason may quote the page, secrets included. */
  if (!own)
    detail = chp_redact_text (error->message, NULL);
  call_return_error (task, code, message, detail);
}

/* Every answer from a browser passes here before an agent can see any of it: the extension
 * redacts already, and this is the second of the two checks the design asks for (DESIGN §8),
 * so one bug on either side does not hand a token to an agent. */
static JsonNode *
agent_call_finish (ChpEngine     *engine,
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

static void
progress (ToolCall   *call,
          double      total,
          const char *message)
{
  if (call->progress == NULL || call->finished)
    return;

  call->progress_done += 1;
  call->progress (call->progress_data, call->progress_done, total, message);
}

/* ---- browsers and tabs ------------------------------------------------------------------ */

/* Returns: the agent's name for a browser ("b1"), made on first sight and kept for the
 * engine's lifetime: tab ids an agent holds stay valid while the browser reconnects. */
static const char *
alias_of (ChpMcpTools *self,
          const char  *device_id)
{
  const char *alias = g_hash_table_lookup (self->aliases, device_id);

  if (alias == NULL)
    {
      char *made = g_strdup_printf ("b%u", ++self->next_alias);

      g_hash_table_insert (self->aliases, g_strdup (device_id), made);
      g_hash_table_insert (self->devices, g_strdup (made), g_strdup (device_id));
      alias = made;
    }

  return alias;
}

/* Makes sure every paired browser has its alias, in the order the app lists them. */
static void
see_devices (ChpMcpTools *self,
             ChpEngine   *engine)
{
  GListModel *devices = G_LIST_MODEL (chp_engine_get_devices (engine));

  for (guint i = 0; i < g_list_model_get_n_items (devices); i++)
    {
      g_autoptr(ChpDevice) device = g_list_model_get_item (devices, i);

      alias_of (self, chp_device_get_id (device));
    }
}

/* Splits "b1:1842" into its browser and tab. The schema's pattern has been checked already. */
static gboolean
resolve_tab (GTask      *task,
             const char *tab)
{
  ToolCall *call = call_of (task);
  const char *colon = strchr (tab, ':');
  g_autofree char *alias = g_strndup (tab, colon - tab);
  const char *device_id = g_hash_table_lookup (call->self->devices, alias);
  guint64 tab_id = 0;

  g_ascii_string_to_unsigned (colon + 1, 10, 0, G_MAXINT64, &tab_id, NULL);
  if (device_id == NULL)
    {
      g_autofree char *message = g_strdup_printf ("No tab %s: no browser is known as %s. Tab ids "
                                                  "come from browser_tabs.", tab, alias);

      call_return_error (task, "no_grant", message, NULL);
      return FALSE;
    }

  call->device_id = g_strdup (device_id);
  call->alias = g_steal_pointer (&alias);
  call->tab_id = (gint64) tab_id;
  return TRUE;
}

static char *
tab_name (ToolCall *call)
{
  return g_strdup_printf ("%s:%" G_GINT64_FORMAT, call->alias, call->tab_id);
}

static JsonNode *
params_new (const char *first_member,
            ...)
{
  JsonObject *object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);
  const char *member = first_member;
  va_list args;

  va_start (args, first_member);
  while (member != NULL)
    {
      json_object_set_member (object, member, va_arg (args, JsonNode *));
      member = va_arg (args, const char *);
    }
  va_end (args);

  json_node_take_object (node, object);
  return node;
}

static JsonNode *
int_node (gint64 value)
{
  return json_node_init_int (json_node_alloc (), value);
}

static JsonNode *
string_node (const char *value)
{
  return json_node_init_string (json_node_alloc (), value);
}

/* Sends @method to the call's browser; @callback gets the task back. */
static void
browser_call (GTask               *task,
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
      call_return_error (task, "internal", "Chaperone is shutting down", NULL);
      return;
    }

  chp_engine_agent_call_async (engine, call->device_id, method, owned, timeout_ms,
                               g_task_get_cancellable (task), callback, g_object_ref (task));
}

/* Returns: (transfer full) (nullable): the browser's answer as an object, or %NULL once the
 * call has been answered with the error */
static JsonObject *
browser_answer (GTask        *task,
                GObject      *source,
                GAsyncResult *result,
                const char   *what)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = agent_call_finish (CHP_ENGINE (source), result, &error);

  if (node == NULL)
    {
      call_return_gerror (task, error, what);
      return NULL;
    }
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      call_return_error (task, "internal", "The browser answered something that is not an object",
                         NULL);
      return NULL;
    }

  return json_object_ref (json_node_get_object (node));
}

/* ---- the URL floor ------------------------------------------------------------------------ */

/* Returns: (transfer full) (nullable): the URL the tab's grant last recorded for its page */
static char *
granted_url (ChpEngine  *engine,
             const char *device_id,
             gint64      tab_id)
{
  GListModel *grants = G_LIST_MODEL (chp_engine_get_grants (engine));

  for (guint i = 0; i < g_list_model_get_n_items (grants); i++)
    {
      g_autoptr(ChpGrant) grant = g_list_model_get_item (grants, i);

      if (g_strcmp0 (chp_grant_get_device_id (grant), device_id) != 0)
        continue;
      for (guint t = 0; t < chp_grant_get_n_targets (grant); t++)
        {
          const ChpGrantTarget *target = chp_grant_get_target (grant, t);

          if (target->tab_id == tab_id && target->frame_id == 0)
            return g_strdup (target->url);
        }
    }
  return NULL;
}

/* The floor judges hosts and paths. A browser's answer has been redacted already, which may have
 * put a marker with spaces into a query (?session_id=[redacted …]): the query and fragment are
 * not what the floor looks at, so they go before it does. */
static ChpFloorLevel
floor_level (ChpUrlFloor  *floor,
             const char   *url,
             gboolean      password,
             const char  **reason)
{
  g_autofree char *base = g_strndup (url, strcspn (url, "?#"));

  return chp_url_floor_check_page (floor, base, password, reason);
}

/* The app's own check of the floor, before anything is sent (the extension checks again on the
 * page itself): a blind page answers refused_floor to everything, a hands-only page to acts.
 * @url: (nullable): the page; NULL for the tab's page as its grant knows it */
static gboolean
floor_allows (GTask      *task,
              const char *url,
              gboolean    acting,
              gboolean    password)
{
  ToolCall *call = call_of (task);
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autofree char *known = NULL;
  g_autofree char *message = NULL;
  const char *reason = NULL;
  ChpFloorLevel level;

  if (engine == NULL)
    return TRUE;
  if (url == NULL)
    url = known = granted_url (engine, call->device_id, call->tab_id);
  if (url == NULL || *url == '\0')
    return TRUE;   /* not a granted tab: the browser answers no_grant */

  level = floor_level (chp_engine_get_floor (engine), url, password, &reason);
  if (level == CHP_FLOOR_BLIND)
    message = g_strdup_printf ("This page is off limits to agents (%s): Chaperone reads nothing "
                               "and does nothing on it. If the person is needed there, ask with "
                               "browser_handoff.", reason);
  else if (level == CHP_FLOOR_HANDS_ONLY && acting)
    message = g_strdup_printf ("This page is read-only for agents (%s): you may read it, but "
                               "only the person acts on it.", reason);
  else
    return TRUE;

  call_return_error (task, "refused_floor", message, NULL);
  return FALSE;
}

/* ---- browser_tabs ----------------------------------------------------------------------- */

typedef struct
{
  GTask    *task;
  char     *device_id;
  char     *alias;
  char     *name;
  JsonNode *answer;
  GError   *error;
} TabsTarget;

static void
tabs_target_free (gpointer data)
{
  TabsTarget *target = data;

  g_free (target->device_id);
  g_free (target->alias);
  g_free (target->name);
  g_clear_pointer (&target->answer, json_node_unref);
  g_clear_error (&target->error);
  g_free (target);
}

static char *
scope_list (JsonArray *scopes)
{
  g_autoptr(GString) out = g_string_new (NULL);

  for (guint i = 0; scopes != NULL && i < json_array_get_length (scopes); i++)
    {
      JsonNode *s = json_array_get_element (scopes, i);
      const char *scope;
      g_autofree char *clean = NULL;

      if (!JSON_NODE_HOLDS_VALUE (s) || json_node_get_value_type (s) != G_TYPE_STRING)
        continue;
      scope = json_node_get_string (s);
      clean = chp_mcp_format_line (g_str_has_prefix (scope, "browser.") ? scope + 8 : scope, 60);
      g_string_append_printf (out, "%s%s", out->len > 0 ? ", " : "", clean);
    }

  return g_strdup (out->len > 0 ? out->str : "none");
}

static char *
expires_in (gint64 expires_at)
{
  gint64 left = expires_at - g_get_real_time () / 1000;

  if (left <= 0)
    return g_strdup ("expired");
  if (left < 60 * 1000)
    return g_strdup ("expires in less than a minute");
  if (left < 2 * 3600 * 1000)
    return g_strdup_printf ("expires in %" G_GINT64_FORMAT " min", left / 60000);
  return g_strdup_printf ("expires in %" G_GINT64_FORMAT " h", left / 3600000);
}

/* One granted tab: a line in our words, then its title and URL in the wrapper. */
static void
add_tab (TabsTarget  *target,
         ChpUrlFloor *floor,
         JsonObject  *tab,
         const char  *marker,
         JsonArray   *tabs,
         GString     *text)
{
  ChpFloorLevel level;
  JsonObject *entry;
  gint64 tab_id;
  g_autofree char *name = NULL;
  g_autofree char *label = NULL;
  g_autofree char *scopes = NULL;
  g_autofree char *origin = NULL;
  g_autofree char *title = NULL;
  g_autofree char *url = NULL;
  g_autofree char *page = NULL;
  g_autofree char *expiry = NULL;
  JsonNode *id = json_object_get_member (tab, "tabId");
  JsonArray *scope_array = chp_json_get_array (tab, "scopes");
  gint64 expires_at = chp_mcp_json_int (tab, "expiresAt", 0);
  const char *state = chp_mcp_json_string (tab, "state", NULL);

  if (id == NULL || !node_is_integer (id, &tab_id) || tab_id < 0)
    return;

  name = g_strdup_printf ("%s:%" G_GINT64_FORMAT, target->alias, tab_id);
  label = chp_mcp_format_line (chp_mcp_json_string (tab, "label", ""), 120);
  scopes = scope_list (scope_array);
  origin = chp_mcp_format_line (chp_mcp_json_string (tab, "origin", ""), 200);
  level = floor != NULL ? floor_level (floor, chp_mcp_json_string (tab, "url", ""), FALSE, NULL)
                        : CHP_FLOOR_OK;
  /* A blind page shows nothing of itself, not even its title: only the site it is on. */
  title = level == CHP_FLOOR_BLIND ? g_strdup ("")
                                   : chp_mcp_format_line (chp_mcp_json_string (tab, "title", ""), 300);
  url = level == CHP_FLOOR_BLIND ? g_strdup (origin)
                                 : chp_mcp_format_line (chp_mcp_json_string (tab, "url", ""), 500);
  expiry = expires_at > 0 ? expires_in (expires_at) : g_strdup ("no expiry given");

  g_string_append_printf (text, "\n%s in %s (\"%s\") · grant \"%s\" · %s · %s%s%s\n", name,
                          target->alias, target->name, label, scopes, expiry,
                          chp_mcp_json_bool (tab, "active")
                          ? " · active" : "",
                          g_strcmp0 (state, "origin_changed") == 0
                          ? " · the tab left the granted site (calls answer origin_changed)" : "");
  if (level == CHP_FLOOR_BLIND)
    g_string_append (text, "(off limits to agents: this page answers refused_floor)\n");
  else if (level == CHP_FLOOR_HANDS_ONLY)
    g_string_append (text, "(read-only for agents: acts answer refused_floor)\n");
  page = g_strdup_printf ("title: %s\nurl: %s", title, url);
  chp_mcp_format_add_untrusted (text, marker, *origin != '\0' ? origin : "this tab", page);

  entry = json_object_new ();
  json_object_set_string_member (entry, "tab", name);
  json_object_set_string_member (entry, "browser", target->alias);
  json_object_set_string_member (entry, "browserName", target->name);
  json_object_set_string_member (entry, "title", title);
  json_object_set_string_member (entry, "url", url);
  chp_mcp_format_mark_member (entry, "title", marker, NULL);
  chp_mcp_format_mark_member (entry, "url", marker, NULL);
  json_object_set_string_member (entry, "origin", origin);
  json_object_set_boolean_member (entry, "active",
                                  chp_mcp_json_bool (tab, "active"));
  json_object_set_string_member (entry, "label", label);
  if (level != CHP_FLOOR_OK)
    json_object_set_string_member (entry, "floor", chp_floor_level_to_string (level));
  if (scope_array != NULL)
    {
      JsonArray *copy = json_array_new ();

      for (guint i = 0; i < json_array_get_length (scope_array); i++)
        {
          JsonNode *s = json_array_get_element (scope_array, i);

          if (JSON_NODE_HOLDS_VALUE (s) && json_node_get_value_type (s) == G_TYPE_STRING)
            json_array_add_string_element (copy, json_node_get_string (s));
        }
      json_object_set_array_member (entry, "scopes", copy);
    }
  if (expires_at > 0)
    json_object_set_int_member (entry, "expiresAt", expires_at);
  if (state != NULL)
    {
      g_autofree char *clean = chp_mcp_format_line (state, 40);

      json_object_set_string_member (entry, "state", clean);
    }
  json_array_add_object_element (tabs, entry);
}

static void
tabs_finish (GTask *task)
{
  ToolCall *call = call_of (task);
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  ChpUrlFloor *floor = engine != NULL ? chp_engine_get_floor (engine) : NULL;
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) errors_text = g_string_new (NULL);
  JsonObject *structured = json_object_new ();
  JsonArray *tabs = json_array_new ();
  JsonArray *errors = json_array_new ();
  guint stopped = 0;

  for (guint i = 0; i < call->targets->len; i++)
    {
      TabsTarget *target = g_ptr_array_index (call->targets, i);
      JsonArray *list;

      if (target->error != NULL)
        {
          const char *code = chp_protocol_error_code_of (target->error);
          g_autofree char *line = chp_mcp_format_line (target->error->message, 300);
          /* The browser's words, which may quote a page. */
          g_autofree char *message = chp_mcp_format_mark (call->marker, line);
          JsonObject *e = json_object_new ();

          stopped += g_str_equal (code, "stopped");
          json_object_set_string_member (e, "browser", target->alias);
          json_object_set_string_member (e, "name", target->name);
          json_object_set_string_member (e, "code", code);
          json_object_set_string_member (e, "message", message);
          json_array_add_object_element (errors, e);
          g_string_append_printf (errors_text, "\n%s (%s) did not list its tabs: %s.",
                                  target->alias,
                                  target->name, code);
          continue;
        }

      list = target->answer != NULL && JSON_NODE_HOLDS_OBJECT (target->answer)
             ? chp_json_get_array (json_node_get_object (target->answer), "tabs") : NULL;
      for (guint k = 0; list != NULL && k < json_array_get_length (list); k++)
        {
          JsonNode *tab = json_array_get_element (list, k);

          if (JSON_NODE_HOLDS_OBJECT (tab))
            add_tab (target, floor, json_node_get_object (tab), call->marker, tabs, text);
        }
    }

  /* The person stopped everything while we asked: that is the answer, not a list. */
  if (stopped > 0 && stopped == call->targets->len)
    {
      json_array_unref (tabs);
      json_array_unref (errors);
      json_object_unref (structured);
      call_return_error (task, "stopped", "The person stopped all agents", NULL);
      return;
    }

  if (json_array_get_length (tabs) == 0)
    g_string_prepend (text, "No tab is granted to you. Ask the person to grant the tabs you need: "
                      "in the Chaperone extension's popup they pick tabs, what you may do and for "
                      "how long.");
  else
    {
      JsonObject *first = json_array_get_object_element (tabs, 0);
      g_autofree char *head = g_strdup_printf ("%u granted tab%s. Use the tab ids (like %s) in the "
                                               "other tools.",
                                               json_array_get_length (tabs),
                                               json_array_get_length (tabs) == 1 ? "" : "s",
                                               json_object_get_string_member (first, "tab"));

      g_string_prepend (text, head);
    }
  g_string_append (text, errors_text->str);

  json_object_set_array_member (structured, "tabs", tabs);
  json_object_set_array_member (structured, "errors", errors);
  json_object_set_member (structured, "browsers",
                          json_node_copy (g_object_get_data (G_OBJECT (task), "browsers")));
  call_return_ok (task, text->str, structured, NULL);
}

static void
tabs_answered_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  TabsTarget *target = user_data;
  g_autoptr(GTask) task = target->task;
  ToolCall *call = call_of (task);

  target->task = NULL;
  target->answer = agent_call_finish (CHP_ENGINE (source), result, &target->error);
  if (--call->pending == 0)
    tabs_finish (task);
}

static void
tool_tabs (ToolCall *call)
{
  GTask *task = call->task;
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autoptr(GString) paired = g_string_new (NULL);
  g_autoptr(JsonArray) browsers = json_array_new ();
  g_autoptr(JsonNode) browsers_node = json_node_new (JSON_NODE_ARRAY);
  GListModel *devices;

  if (engine == NULL)
    {
      call_return_error (task, "internal", "Chaperone is shutting down", NULL);
      return;
    }

  see_devices (call->self, engine);
  devices = G_LIST_MODEL (chp_engine_get_devices (engine));
  call->targets = g_ptr_array_new_with_free_func (tabs_target_free);
  for (guint i = 0; i < g_list_model_get_n_items (devices); i++)
    {
      g_autoptr(ChpDevice) device = g_list_model_get_item (devices, i);
      const char *alias = alias_of (call->self, chp_device_get_id (device));
      g_autofree char *name = chp_mcp_format_line (chp_device_get_name (device), 64);
      JsonObject *b = json_object_new ();

      json_object_set_string_member (b, "browser", alias);
      json_object_set_string_member (b, "name", name);
      json_object_set_boolean_member (b, "online", chp_device_get_online (device));
      json_array_add_object_element (browsers, b);
      g_string_append_printf (paired, "%s%s (\"%s\", %s)", paired->len > 0 ? ", " : "", alias,
                              name, chp_device_get_online (device) ? "connected" : "not connected");

      if (chp_device_get_online (device))
        {
          TabsTarget *target = g_new0 (TabsTarget, 1);

          target->device_id = g_strdup (chp_device_get_id (device));
          target->alias = g_strdup (alias);
          target->name = g_steal_pointer (&name);
          g_ptr_array_add (call->targets, target);
        }
    }
  json_node_set_array (browsers_node, browsers);
  g_object_set_data_full (G_OBJECT (task), "browsers", g_steal_pointer (&browsers_node),
                          (GDestroyNotify) json_node_unref);

  if (call->targets->len == 0)
    {
      JsonObject *structured = json_object_new ();
      g_autofree char *text = NULL;

      if (paired->len == 0)
        text = g_strdup ("No browser is connected to Chaperone: none is paired yet. Ask the person "
                         "to install the Chaperone extension in their browser and pair it: they "
                         "press Pair in the extension's popup, check that the six digits match the "
                         "ones the Chaperone app shows, and press Pair in the app. Then they grant "
                         "you tabs from the popup.");
      else
        text = g_strdup_printf ("No browser is connected to Chaperone now. Paired: %s. Ask the "
                                "person to open that browser (the Chaperone extension connects by "
                                "itself), or to pair another one from the extension's popup.",
                                paired->str);
      json_object_set_array_member (structured, "tabs", json_array_new ());
      json_object_set_array_member (structured, "errors", json_array_new ());
      json_object_set_member (structured, "browsers",
                              json_node_copy (g_object_get_data (G_OBJECT (task), "browsers")));
      call_return_ok (task, text, structured, NULL);
      return;
    }

  /* Every browser at once: a slow one does not hold up the others' tabs. */
  call->pending = call->targets->len;
  for (guint i = 0; i < call->targets->len; i++)
    {
      TabsTarget *target = g_ptr_array_index (call->targets, i);
      g_autoptr(JsonNode) params = params_new (NULL);

      target->task = g_object_ref (task);
      chp_engine_agent_call_async (engine, target->device_id, "browser.tabs", params,
                                   TABS_TIMEOUT_MS, g_task_get_cancellable (task),
                                   tabs_answered_cb, target);
    }
}

/* ---- documents and refs ----------------------------------------------------------------- */

static char *
frame_key (ToolCall *call,
           gint64    frame_id)
{
  return g_strdup_printf ("snapshot:%s:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT,
                          call->device_id, call->tab_id, frame_id);
}

static char *
document_key (gint64 document)
{
  return g_strdup_printf ("document:%" G_GINT64_FORMAT, document);
}

static gint64
next_document (ChpMcpContext *context)
{
  guint n = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (context), DOCUMENT_COUNTER_KEY)) + 1;

  g_object_set_data (G_OBJECT (context), DOCUMENT_COUNTER_KEY, GUINT_TO_POINTER (n));
  return n;
}

static void
remember_object (ChpMcpContext *context,
                 const char    *key,
                 JsonObject    *object)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

  json_node_set_object (node, object);
  chp_mcp_context_remember (context, key, node);
}

static JsonObject *
recall_object (ChpMcpContext *context,
               const char    *key)
{
  JsonNode *node = chp_mcp_context_recall (context, key);

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

/*
 * An agent's ref ("3:e12") names a document this agent has snapshotted (3) and an element in
 * it (e12); it is sent as the ref of the latest capture of that document. Refs are stable
 * across captures of one document and never given to another element, so a ref keeps working
 * while its element lives, and answers stale_node after, never another element.
 */
static gboolean
resolve_ref (GTask       *task,
             const char  *ref,
             char       **wire_ref)
{
  ToolCall *call = call_of (task);
  const char *colon = strchr (ref, ':');
  g_autofree char *number = g_strndup (ref, colon - ref);
  guint64 document = 0;
  g_autofree char *key = NULL;
  JsonObject *doc;

  g_ascii_string_to_unsigned (number, 10, 0, G_MAXUINT32, &document, NULL);
  key = document_key (document);
  doc = recall_object (call->context, key);
  if (doc == NULL)
    {
      g_autofree char *message = g_strdup_printf ("The ref %s is not from a snapshot you still "
                                                  "hold", ref);

      call_return_error (task, "stale_node", message, NULL);
      return FALSE;
    }
  if (g_strcmp0 (chp_mcp_json_string (doc, "device", NULL), call->device_id) != 0 ||
      chp_mcp_json_int (doc, "tabId", -1) != call->tab_id)
    {
      g_autofree char *tab = tab_name (call);
      g_autofree char *message = g_strdup_printf ("The ref %s is from another tab than %s", ref,
                                                  tab);

      call_return_error (task, "stale_node", message, NULL);
      return FALSE;
    }

  call->document = json_object_ref (doc);
  call->ref = g_strdup (ref);
  *wire_ref = g_strdup_printf ("%s:%s", json_object_get_string_member (doc, "captureId"),
                               colon + 1);
  return TRUE;
}

static const char *
document_origin (ToolCall *call)
{
  return chp_mcp_json_string (call->document, "origin", "this page");
}

/* ---- browser_snapshot --------------------------------------------------------------------- */

/* Formats the browser's capture of @frame for the agent — only what changed since the agent's
 * previous snapshot of that frame when @diff — and remembers it as the agent's latest snapshot
 * there, even for a page that does not exist: it is what the agent's next refs and its next diff
 * are about. @answer has passed the capture and floor checks. */
static ChpMcpSnapshot *
remember_snapshot (ToolCall   *call,
                   JsonObject *answer,
                   gint64      frame,
                   gboolean    diff,
                   guint       page,
                   const char *query,
                   guint       max_chars,
                   gint64     *out_document)
{
  ChpMcpSnapshot *snapshot;
  g_autofree char *key = frame_key (call, frame);
  g_autofree char *tab = tab_name (call);
  g_autofree char *subject = NULL;
  g_autofree char *prefix = NULL;
  g_autofree char *doc_key = NULL;
  g_autofree char *origin = NULL;
  ChpMcpSnapshotOptions options = { 0, };
  JsonObject *previous = recall_object (call->context, key);
  JsonObject *base = NULL;
  JsonObject *memory;
  JsonObject *doc;
  const char *document_id = chp_mcp_json_string (answer, "documentId", "");
  const char *capture_id = chp_mcp_json_string (answer, "captureId", "");
  gboolean same_document;
  gint64 document;

  same_document = previous != NULL &&
                  g_strcmp0 (chp_mcp_json_string (previous, "documentId", NULL),
                             document_id) == 0;
  document = same_document ? json_object_get_int_member (previous, "document")
                           : next_document (call->context);

  if (diff && same_document)
    {
      /* Later pages of a diff compare with the base its first page used. */
      if (page > 1 && json_object_has_member (previous, "base"))
        base = json_object_get_object_member (previous, "base");
      else
        base = json_object_get_object_member (previous, "current");
    }
  else if (diff)
    options.note = previous != NULL
                   ? "The tab shows a new document since your previous snapshot, so this is a full "
                     "snapshot; refs of the old document no longer work."
                   : "You have no earlier snapshot of this tab and frame, so this is a full "
                     "snapshot.";

  subject = frame != 0 ? g_strdup_printf ("tab %s, frame %" G_GINT64_FORMAT, tab, frame)
                       : g_strdup_printf ("tab %s", tab);
  prefix = g_strdup_printf ("%" G_GINT64_FORMAT ":", document);
  options.subject = subject;
  options.ref_prefix = prefix;
  options.query = query;
  options.page = page;
  options.max_chars = max_chars;
  options.base = base;
  options.marker = call->marker;
  snapshot = chp_mcp_format_snapshot (answer, &options);

  memory = json_object_new ();
  json_object_set_int_member (memory, "document", document);
  json_object_set_string_member (memory, "documentId", document_id);
  json_object_set_string_member (memory, "captureId", capture_id);
  json_object_set_object_member (memory, "current", json_object_ref (snapshot->memory));
  if (base != NULL)
    json_object_set_object_member (memory, "base", json_object_ref (base));
  remember_object (call->context, key, memory);
  json_object_unref (memory);

  origin = chp_mcp_format_origin (chp_mcp_json_string (answer, "url", NULL));
  doc = json_object_new ();
  json_object_set_string_member (doc, "device", call->device_id);
  json_object_set_int_member (doc, "tabId", call->tab_id);
  json_object_set_int_member (doc, "frameId", frame);
  json_object_set_string_member (doc, "documentId", document_id);
  json_object_set_string_member (doc, "captureId", capture_id);
  json_object_set_string_member (doc, "origin", origin != NULL ? origin : "this page");
  doc_key = document_key (document);
  remember_object (call->context, doc_key, doc);
  json_object_unref (doc);

  *out_document = document;
  return snapshot;
}

/* The browser's capture found a visible password field (which makes any page blind). */
static gboolean
capture_has_password (JsonObject *answer)
{
  JsonNode *auth = json_object_get_member (answer, "auth");

  return auth != NULL && JSON_NODE_HOLDS_OBJECT (auth) &&
         chp_mcp_json_bool (json_node_get_object (auth), "passwordField");
}

static void
snapshot_answered_cb (GObject      *source,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) answer = browser_answer (task, source, result, "Reading the tab");
  g_autoptr(ChpMcpSnapshot) snapshot = NULL;
  g_autofree char *tab = NULL;
  JsonObject *structured;
  const char *capture_id;
  gint64 frame = int_argument (call->args, "frame", 0);
  gint64 document;

  if (answer == NULL)
    return;

  capture_id = chp_mcp_json_string (answer, "captureId", NULL);
  if (capture_id == NULL || *capture_id == '\0')
    {
      call_return_error (task, "internal", "The browser's snapshot has no capture id", NULL);
      return;
    }

  /* Again on what the browser read: the tab may have moved to a blind page since its grant
   * said where it was, and a sign-in form makes any page blind. Nothing of it is kept. */
  if (!floor_allows (task, chp_mcp_json_string (answer, "url", ""), FALSE,
                     capture_has_password (answer)))
    return;

  snapshot = remember_snapshot (call, answer, frame, chp_mcp_json_bool (call->args, "diff"),
                                int_argument (call->args, "page", 1),
                                chp_mcp_json_string (call->args, "query", NULL),
                                call->self->result_max_chars, &document);
  if (snapshot->out_of_range)
    {
      call_return_error (task, "invalid_params", snapshot->text, NULL);
      return;
    }

  tab = tab_name (call);
  structured = json_object_ref (json_node_get_object (snapshot->structured));
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_int_member (structured, "frame", frame);
  json_object_set_int_member (structured, "document", document);
  call_return_ok (task, snapshot->text, structured, "Ask for the next page, or a query.");
}

static void
tool_snapshot (ToolCall *call)
{
  GTask *task = call->task;

  if (!resolve_tab (task, json_object_get_string_member (call->args, "tab")) ||
      !floor_allows (task, NULL, FALSE, FALSE))
    return;

  /* The extension's own diff is against the page's previous capture, whoever made it; the diff
   * an agent asks for is against its own previous snapshot, which only the app knows. */
  browser_call (task, "browser.context",
                params_new ("tabId", int_node (call->tab_id),
                            "frameId", int_node (int_argument (call->args, "frame", 0)),
                            NULL),
                CONTEXT_TIMEOUT_MS, snapshot_answered_cb);
}

/* ---- browser_inspect ---------------------------------------------------------------------- */

static void
copy_typed (JsonObject *to,
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

static void
inspected_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) answer = browser_answer (task, source, result, "Inspecting the element");
  g_autoptr(GString) text = NULL;
  g_autoptr(GString) page = NULL;
  g_autofree char *tab = NULL;
  g_autofree char *line = NULL;
  JsonObject *structured;
  JsonObject *attributes;
  JsonObject *bounds;
  static const char * const strings[] = { "tag", "role", "name" };
  static const char * const booleans[] = { "visible", "inViewport", "inModal", "credential" };

  if (answer == NULL)
    return;

  tab = tab_name (call);
  structured = json_object_new ();
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_string_member (structured, "ref", call->ref);
  for (guint i = 0; i < G_N_ELEMENTS (strings); i++)
    copy_typed (structured, answer, strings[i], G_TYPE_STRING);
  for (guint i = 0; i < G_N_ELEMENTS (booleans); i++)
    copy_typed (structured, answer, booleans[i], G_TYPE_BOOLEAN);
  copy_typed (structured, answer, "attributes", JSON_TYPE_OBJECT);
  copy_typed (structured, answer, "state", JSON_TYPE_OBJECT);
  copy_typed (structured, answer, "bounds", JSON_TYPE_OBJECT);

  /* The same line a snapshot shows, then the rest, all of it the page's words. */
  page = g_string_new (NULL);
  line = chp_mcp_format_node_line (answer, NULL, json_object_get_string_member (call->document,
                                                                                "origin"));
  g_string_append_printf (page, "%s (%s)\n", line,
                          chp_mcp_json_string (structured, "tag", "element"));
  if (json_object_has_member (structured, "attributes"))
    {
      g_autoptr(GList) names = NULL;

      attributes = json_object_get_object_member (structured, "attributes");
      names = json_object_get_members (attributes);
      for (GList *l = names; l != NULL; l = l->next)
        {
          JsonNode *value = json_object_get_member (attributes, l->data);
          g_autofree char *name = chp_mcp_format_line (l->data, 60);
          g_autofree char *shown = NULL;

          if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_STRING)
            continue;
          shown = chp_mcp_format_line (json_node_get_string (value), 300);
          g_string_append_printf (page, "%s=%s\n", name, shown);
        }
    }
  g_string_append_printf (page, "%s, %s the viewport%s%s\n",
                          chp_mcp_json_bool (structured, "visible")
                          ? "visible" : "not visible",
                          chp_mcp_json_bool (structured, "inViewport")
                          ? "in" : "outside",
                          chp_mcp_json_bool (structured, "inModal")
                          ? ", in an open dialog" : "",
                          chp_mcp_json_bool (structured, "credential")
                          ? ", a credential field (its value is never read)" : "");
  if (json_object_has_member (structured, "bounds"))
    {
      bounds = json_object_get_object_member (structured, "bounds");
      g_string_append_printf (page, "bounds: x %" G_GINT64_FORMAT ", y %" G_GINT64_FORMAT
                              ", %" G_GINT64_FORMAT "×%" G_GINT64_FORMAT "\n",
                              chp_mcp_json_int (bounds, "x", 0),
                              chp_mcp_json_int (bounds, "y", 0),
                              chp_mcp_json_int (bounds, "width", 0),
                              chp_mcp_json_int (bounds, "height", 0));
    }

  text = g_string_new (NULL);
  g_string_append_printf (text, "Element %s on tab %s:\n", call->ref, tab);
  chp_mcp_format_add_untrusted (text, call->marker, document_origin (call), page->str);

  /* The page's words in structuredContent, marked as in the text: the tag (a custom element's
   * is any word), the name, the attributes, the state; the role only when it is not one. */
  {
    static const char * const role[] = { "role", NULL };

    chp_mcp_format_mark_member (structured, "tag", call->marker, NULL);
    chp_mcp_format_mark_member (structured, "role", call->marker, role);
    chp_mcp_format_mark_member (structured, "name", call->marker, NULL);
    chp_mcp_format_mark_member (structured, "attributes", call->marker, NULL);
    chp_mcp_format_mark_member (structured, "state", call->marker, NULL);
  }
  call_return_ok (task, text->str, structured, NULL);
}

static void
tool_inspect (ToolCall *call)
{
  GTask *task = call->task;
  g_autofree char *wire_ref = NULL;

  if (!resolve_tab (task, json_object_get_string_member (call->args, "tab")) ||
      !floor_allows (task, NULL, FALSE, FALSE) ||
      !resolve_ref (task, json_object_get_string_member (call->args, "ref"), &wire_ref))
    return;

  browser_call (task, "browser.node.inspect", params_new ("ref", string_node (wire_ref), NULL),
                NODE_TIMEOUT_MS, inspected_cb);
}

/* ---- browser_act ------------------------------------------------------------------------ */

static gboolean
is_plain_id (const char *id)
{
  if (id == NULL || *id == '\0' || strlen (id) > 64)
    return FALSE;
  for (const char *p = id; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '-')
      return FALSE;
  return TRUE;
}

static const char *
hold_words (const char *kind)
{
  if (g_strcmp0 (kind, "outward") == 0)
    return "would send something from the person's account (a message, a post, a payment, an "
           "order or a form to another site)";
  if (g_strcmp0 (kind, "delete") == 0)
    return "would delete something";
  return "would change data with the person's login, and no plan they approved covers it";
}

/* The browser held the click instead of doing it. Nothing was sent; the agent learns the hold's
 * id, and what the person will see. The control and the site are the page's words. */
static void
act_held (GTask      *task,
          JsonObject *answer)
{
  ToolCall *call = call_of (task);
  JsonNode *node = json_object_get_member (answer, "hold");
  g_autoptr(ChpHold) hold = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) text = NULL;
  g_autoptr(GString) page = NULL;
  g_autofree char *tab = NULL;
  g_autofree char *id = NULL;
  JsonObject *structured;
  JsonNode *shown;

  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    hold = chp_hold_new_from_json (call->device_id, json_node_get_object (node), &error);
  if (hold == NULL || !is_plain_id (chp_hold_get_id (hold)))
    {
      call_return_error (task, "internal", "The browser held the act but its hold is malformed",
                         NULL);
      return;
    }

  tab = tab_name (call);
  id = g_strdup_printf ("%s:k-%s", call->alias, chp_hold_get_id (hold));
  progress (call, 0, "Held: waiting for the person…");

  shown = chp_hold_to_json (hold);
  structured = json_object_ref (json_node_get_object (shown));
  json_node_unref (shown);
  json_object_set_boolean_member (structured, "ok", FALSE);
  json_object_set_boolean_member (structured, "held", TRUE);
  json_object_set_string_member (structured, "holdId", id);
  json_object_set_string_member (structured, "id", id);
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_string_member (structured, "ref", call->ref);

  text = g_string_new (NULL);
  g_string_append_printf (text, "Held, not done: this click on %s %s. Nothing was sent. The person "
                          "decides in the Chaperone app; if they approve, it runs once, exactly "
                          "as held, provided the page has not changed. Call browser_wait with id "
                          "%s for the outcome. Do not click it again.\n", call->ref,
                          hold_words (chp_hold_get_kind (hold)), id);
  page = g_string_new (NULL);
  g_string_append_printf (page, "control: %s\nsite: %s", chp_hold_get_control (hold),
                          chp_hold_get_site (hold));
  chp_mcp_format_add_untrusted (text, call->marker, document_origin (call), page->str);
  chp_mcp_format_mark_member (structured, "control", call->marker, NULL);
  chp_mcp_format_mark_member (structured, "site", call->marker, NULL);
  chp_mcp_format_mark_member (structured, "fields", call->marker, NULL);
  call_return_ok (task, text->str, structured, NULL);
}

/* The browser used the plan's allowance for this write: one step of it is spent. */
static void
plan_step_used (ToolCall   *call,
                JsonObject *answer,
                JsonObject *structured,
                GString    *text)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  JsonNode *node = json_object_get_member (answer, "plan");
  JsonObject *used;
  ChpPlan *plan;
  g_autoptr(ChpPlan) held = NULL;
  gint step;

  if (engine == NULL || node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return;
  used = json_node_get_object (node);
  plan = chp_plan_list_lookup (chp_engine_get_plans (engine),
                               chp_mcp_json_string (used, "planId", ""));
  if (plan == NULL)
    return;

  held = g_object_ref (plan);
  step = chp_plan_list_use_step (chp_engine_get_plans (engine), chp_plan_get_id (plan),
                                 chp_mcp_json_string (used, "site", ""));
  if (step == 0)
    return;

  json_object_set_int_member (structured, "planStep", step);
  g_string_append_printf (text, " This was step %d of %u of your approved plan %s.", step,
                          chp_plan_get_n_steps (held), chp_plan_get_id (held));
  {
    g_autofree char *current = g_strdup_printf ("Plan step %d of %u", step,
                                                chp_plan_get_n_steps (held));
    ChpAgentSession *agent = chp_agent_session_list_lookup (chp_engine_get_agent_sessions (engine),
                                                            chp_mcp_context_get_session_id (call->context));

    if (agent != NULL)
      chp_agent_session_set_current_step (agent, current);
  }
}

/* Whether an act's result should show the page's diff: the page changed (elements or text),
 * did not start leaving, and the agent has a snapshot of this very document to compare with.
 * Never after a fill: a page that echoes what is typed (a preview, a strength meter quoting it)
 * would say the value back, and a fill's result never does. */
static gboolean
act_diff_wanted (ToolCall   *call,
                 const char *action,
                 JsonObject *changes)
{
  g_autofree char *key = NULL;
  JsonObject *previous;

  if (changes == NULL || call->document == NULL || chp_mcp_json_bool (changes, "navigating") ||
      g_strcmp0 (action, "fill") == 0)
    return FALSE;
  if (chp_mcp_json_int (changes, "added", 0) == 0 &&
      chp_mcp_json_int (changes, "removed", 0) == 0 &&
      !chp_mcp_json_bool (changes, "textChanged"))
    return FALSE;

  key = frame_key (call, chp_mcp_json_int (call->document, "frameId", 0));
  previous = recall_object (call->context, key);
  return previous != NULL &&
         g_strcmp0 (chp_mcp_json_string (previous, "documentId", NULL),
                    chp_mcp_json_string (call->document, "documentId", "")) == 0;
}

/* The page read again after an act. The act is done whatever happens here: a page that cannot
 * be read now (gone, blind, the agent paused) leaves the act's result as it was, with the hint. */
static void
act_diff_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = agent_call_finish (CHP_ENGINE (source), result, &error);
  g_autoptr(GString) text = g_string_new (call->act_text);
  g_autoptr(ChpMcpSnapshot) snapshot = NULL;
  JsonObject *structured = g_steal_pointer (&call->act_structured);
  JsonObject *answer = node != NULL && JSON_NODE_HOLDS_OBJECT (node)
                       ? json_node_get_object (node) : NULL;
  const char *capture_id = answer != NULL ? chp_mcp_json_string (answer, "captureId", "") : "";
  const char *url = answer != NULL ? chp_mcp_json_string (answer, "url", "") : "";
  gint64 frame = chp_mcp_json_int (call->document, "frameId", 0);
  gint64 document;

  /* The floor again on what the browser read: the act may have brought up a sign-in form,
   * which makes any page blind (whatever its URL). */
  if (answer == NULL || *capture_id == '\0' || engine == NULL || capture_has_password (answer) ||
      (*url != '\0' && floor_level (chp_engine_get_floor (engine), url, FALSE, NULL) ==
                       CHP_FLOOR_BLIND))
    {
      g_string_append (text, ACT_SNAPSHOT_HINT);
      call_return_ok (task, text->str, structured, NULL);
      return;
    }

  snapshot = remember_snapshot (call, answer, frame, TRUE, 1, NULL, ACT_DIFF_MAX_CHARS, &document);
  g_string_append (text, "\n\n");
  g_string_append (text, snapshot->text);
  json_object_set_object_member (structured, "page",
                                 json_object_ref (json_node_get_object (snapshot->structured)));
  call_return_ok (task, text->str, structured, NULL);
}

static void
acted_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) answer = browser_answer (task, source, result, "The action");
  g_autoptr(GString) text = NULL;
  g_autofree char *tab = NULL;
  const char *action = json_object_get_string_member (call->args, "action");
  JsonObject *structured;
  JsonObject *changes = NULL;
  static const struct
  {
    const char *action;
    const char *done;
  } words[] = {
    { "click", "Clicked" }, { "focus", "Focused" }, { "scroll", "Scrolled to" }, { "fill",
                                                                                  "Filled" },
  };
  const char *done = "Acted on";

  if (answer == NULL)
    return;

  if (chp_mcp_json_bool (answer, "held"))
    {
      act_held (task, answer);
      return;
    }

  for (guint i = 0; i < G_N_ELEMENTS (words); i++)
    if (g_str_equal (words[i].action, action))
      done = words[i].done;

  tab = tab_name (call);
  structured = json_object_new ();
  json_object_set_boolean_member (structured, "ok",
                                  !json_object_has_member (answer, "done") ||
                                  chp_mcp_json_bool (answer, "done"));
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_string_member (structured, "ref", call->ref);
  json_object_set_string_member (structured, "action", action);
  copy_typed (structured, answer, "changes", JSON_TYPE_OBJECT);
  /* Counts and yes/no today; a string the browser adds there would be the page's. */
  chp_mcp_format_mark_member (structured, "changes", call->marker, NULL);

  /* What changed, in numbers and yes/no, with the value an agent filled never said back; the
   * page's own words come after, from the diff (act_diff_wanted), in their wrapper. */
  text = g_string_new (NULL);
  g_string_append_printf (text, "%s %s on tab %s.", done, call->ref, tab);
  if (json_object_has_member (structured, "changes"))
    {
      changes = json_object_get_object_member (structured, "changes");
      g_string_append_printf (text, " What changed: %" G_GINT64_FORMAT " element(s) added, %"
                              G_GINT64_FORMAT " removed; the URL %s; the title %s; the text %s.",
                              chp_mcp_json_int (changes, "added", 0),
                              chp_mcp_json_int (changes, "removed", 0),
                              chp_mcp_json_bool (changes, "urlChanged")
                              ? "changed" : "did not change",
                              chp_mcp_json_bool (changes, "titleChanged")
                              ? "changed" : "did not change",
                              chp_mcp_json_bool (changes, "textChanged")
                              ? "changed" : "did not change");
    }
  plan_step_used (call, answer, structured, text);

  /* The page changed in place: read it again, and the result shows what changed. */
  if (act_diff_wanted (call, action, changes))
    {
      gint64 frame = chp_mcp_json_int (call->document, "frameId", 0);

      call->act_text = g_strdup (text->str);
      call->act_structured = structured;
      browser_call (task, "browser.context",
                    params_new ("tabId", int_node (call->tab_id), "frameId", int_node (frame),
                                NULL),
                    CONTEXT_TIMEOUT_MS, act_diff_cb);
      return;
    }

  g_string_append (text, ACT_SNAPSHOT_HINT);
  call_return_ok (task, text->str, structured, NULL);
}

/* What a plan the person approved lets this agent's next write do: its sites with steps left,
 * and the step it would be. The extension uses it only for a write it judged from the page
 * (never a send, a payment or a delete) on one of those sites. */
static JsonNode *
plan_allowance (ToolCall *call)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_auto(GStrv) sites = NULL;
  ChpPlan *plan;
  JsonObject *allow;
  JsonArray *array;
  JsonNode *node;

  if (engine == NULL)
    return NULL;
  plan = chp_plan_list_covering (chp_engine_get_plans (engine),
                                 chp_mcp_context_get_session_id (call->context));
  if (plan == NULL)
    return NULL;

  sites = chp_plan_sites_left (plan);
  array = json_array_new ();
  for (guint i = 0; sites[i] != NULL; i++)
    json_array_add_string_element (array, sites[i]);
  allow = json_object_new ();
  json_object_set_string_member (allow, "planId", chp_plan_get_id (plan));
  json_object_set_array_member (allow, "sites", array);
  json_object_set_int_member (allow, "step", chp_plan_get_n_used (plan) + 1);
  json_object_set_int_member (allow, "of", chp_plan_get_n_steps (plan));
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (node, allow);
  return node;
}

static void
tool_act (ToolCall *call)
{
  GTask *task = call->task;
  g_autofree char *wire_ref = NULL;
  const char *action = json_object_get_string_member (call->args, "action");
  JsonNode *params;
  JsonNode *allow;

  if (!resolve_tab (task, json_object_get_string_member (call->args, "tab")) ||
      !floor_allows (task, NULL, TRUE, FALSE) ||
      !resolve_ref (task, json_object_get_string_member (call->args, "ref"), &wire_ref))
    return;

  if (g_str_equal (action, "fill"))
    params = params_new ("ref", string_node (wire_ref),
                         "action", string_node ("setValue"),
                         "value", string_node (json_object_get_string_member (call->args, "value")),
                         NULL);
  else
    params = params_new ("ref", string_node (wire_ref), "action", string_node (action), NULL);

  allow = g_str_equal (action, "click") ? plan_allowance (call) : NULL;
  if (allow != NULL)
    json_object_set_member (json_node_get_object (params), "allow", allow);

  browser_call (task, "browser.node.action", params, NODE_TIMEOUT_MS, acted_cb);
}

/* ---- browser_navigate ------------------------------------------------------------------- */

static void
navigated_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) answer = browser_answer (task, source, result, "Navigating");
  g_autoptr(GString) text = NULL;
  g_autofree char *tab = NULL;
  g_autofree char *url = NULL;
  g_autofree char *origin = NULL;
  g_autofree char *shown = NULL;
  JsonObject *structured;

  if (answer == NULL)
    return;

  tab = tab_name (call);
  url = chp_mcp_format_line (chp_mcp_json_string (answer, "url", ""), 2000);
  origin = chp_mcp_format_origin (url);
  structured = json_object_new ();
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_string_member (structured, "url", url);
  chp_mcp_format_mark_member (structured, "url", call->marker, NULL);
  copy_typed (structured, answer, "documentId", G_TYPE_STRING);

  text = g_string_new (NULL);
  g_string_append_printf (text, "Navigated tab %s. Refs from the previous page no longer work: "
                          "take a new browser_snapshot.\n", tab);
  shown = g_strdup_printf ("url: %s", url);
  chp_mcp_format_add_untrusted (text, call->marker, origin != NULL ? origin : "the tab", shown);
  call_return_ok (task, text->str, structured, NULL);
}

static void
tool_navigate (ToolCall *call)
{
  GTask *task = call->task;

  /* Away from a blind page is still a step on it; to a blind page is refused before the
   * browser loads it, so not even its title reaches a result. */
  if (!resolve_tab (task, json_object_get_string_member (call->args, "tab")) ||
      !floor_allows (task, NULL, FALSE, FALSE) ||
      !floor_allows (task, json_object_get_string_member (call->args, "url"), FALSE, FALSE))
    return;

  browser_call (task, "browser.navigate",
                params_new ("tabId", int_node (call->tab_id),
                            "url", string_node (json_object_get_string_member (call->args, "url")),
                            NULL),
                NAVIGATE_TIMEOUT_MS, navigated_cb);
}

/* ---- browser_handoff -------------------------------------------------------------------- */

static const char *
handoff_words (const char *reason)
{
  static const struct
  {
    const char *reason;
    const char *words;
  } phrases[] = {
    { "qr", "scan the QR code" }, { "mfa", "enter the verification code" },
    { "captcha", "solve the CAPTCHA" }, { "device", "confirm on their other device" },
    { "login", "sign in" }, { "other", "do a step only they can do" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (phrases); i++)
    if (g_strcmp0 (phrases[i].reason, reason) == 0)
      return phrases[i].words;
  return "do a step";
}


static void
handoff_requested_cb (GObject      *source,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) answer = browser_answer (task, source, result, "The handoff");
  g_autofree char *tab = NULL;
  g_autofree char *id = NULL;
  g_autofree char *text = NULL;
  const char *reason = json_object_get_string_member (call->args, "reason");
  const char *handoff_id;
  JsonObject *structured;

  if (answer == NULL)
    return;

  handoff_id = chp_mcp_json_string (answer, "handoffId", NULL);
  if (!is_plain_id (handoff_id))
    {
      call_return_error (task, "internal", "The browser's handoff has no usable id", NULL);
      return;
    }

  tab = tab_name (call);
  id = g_strdup_printf ("%s:h-%s", call->alias, handoff_id);
  progress (call, 0, "Waiting for the person…");

  structured = json_object_new ();
  json_object_set_string_member (structured, "id", id);
  json_object_set_string_member (structured, "state", "waiting");
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_string_member (structured, "reason", reason);
  text = g_strdup_printf ("Asked the person to %s on tab %s; the tab is in front of them with your "
                          "message. The handoff %s is waiting. Call browser_wait with this id to "
                          "learn when they are done (each call waits up to %d s).",
                          handoff_words (reason), tab, id, WAIT_MAX_MS / 1000);
  call_return_ok (task, text, structured, NULL);
}

static void
tool_handoff (ToolCall *call)
{
  GTask *task = call->task;

  if (!resolve_tab (task, json_object_get_string_member (call->args, "tab")))
    return;

  browser_call (task, "browser.handoff.request",
                params_new ("tabId", int_node (call->tab_id),
                            "reason", string_node (json_object_get_string_member (call->args,
                                                                                  "reason")),
                            "message", string_node (json_object_get_string_member (call->args,
                                                                                   "message")),
                            NULL),
                HANDOFF_TIMEOUT_MS, handoff_requested_cb);
}

/* ---- browser_wait ----------------------------------------------------------------------- */

/* The kinds of id browser_wait knows. A handoff ("bN:h-…") and a hold ("bN:k-…") live in a
 * browser: the engine mirrors their changes, and the browser is asked once for the state they
 * are in now. A plan ("plan-N") lives in the app alone. */
struct _WaitKind
{
  const char         *kind;
  const char         *pending;        /* the state that means "not decided yet" */
  const char * const *states;
  const char         *signal;         /* the engine's change signal */
  const char         *status_method;  /* the browser's state of one */
  const char         *id_member;
  GCallback           changed_cb;
};

static void
wait_disconnect (GTask *task)
{
  ToolCall *call = call_of (task);
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  GCancellable *cancellable = g_task_get_cancellable (task);

  /* A dead engine took its handlers (and its plan list's) with it. */
  if (engine != NULL && call->changed_handler != 0)
    {
      if (call->wait_kind != NULL)
        g_signal_handler_disconnect (engine, call->changed_handler);
      else
        g_signal_handler_disconnect (chp_engine_get_plans (engine), call->changed_handler);
    }
  if (engine != NULL)
    g_clear_signal_handler (&call->stopped_handler, engine);
  call->changed_handler = 0;
  call->stopped_handler = 0;
  g_clear_handle_id (&call->timeout_source, g_source_remove);
  g_clear_handle_id (&call->tick_source, g_source_remove);
  if (call->cancel_handler != 0)
    g_cancellable_disconnect (cancellable, call->cancel_handler);
  call->cancel_handler = 0;
}

/* Our words for how a wait ended; @who is the extension's "by" for a handoff. */
static char *
wait_text (ToolCall   *call,
           const char *state,
           const char *who)
{
  const char *kind = call->wait_kind != NULL ? call->wait_kind->kind : "plan";
  const char *id = call->wait_id;

  if (call->wait_kind != NULL ? g_str_equal (state, call->wait_kind->pending)
                              : g_str_equal (state, "waiting"))
    return g_strdup_printf ("The person has not decided on %s yet. Call browser_wait again with "
                            "the same id to keep waiting.", id);

  if (g_str_equal (kind, "h"))
    {
      if (g_str_equal (state, "done"))
        return g_strdup_printf ("The person finished %s (done). The page may have changed: take "
                                "a new browser_snapshot before you go on.", id);
      if (g_str_equal (state, "cancelled"))
        return g_strdup_printf ("%s was cancelled%s. Do not go on with this part of the task; ask "
                                "the person how to continue.", id,
                                g_strcmp0 (who, "agent") == 0 ? " by an agent"
                                : g_strcmp0 (who, "grant") == 0 ? ": its grant ended"
                                : " by the person");
      return g_strdup_printf ("%s ended: %s (its grant ended or the tab closed).", id, state);
    }

  if (g_str_equal (kind, "k"))
    {
      if (g_str_equal (state, "done"))
        return g_strdup_printf ("The person approved %s and it ran once. Take a new "
                                "browser_snapshot to see the page now.", id);
      if (g_str_equal (state, "declined"))
        return g_strdup_printf ("The person declined %s: it did not run. Do not try it another "
                                "way; ask the person how to continue.", id);
      if (g_str_equal (state, "changed"))
        return g_strdup_printf ("%s did not run: the page changed after it was held, so what the "
                                "person would approve is not what is there now. Take a new "
                                "snapshot; if the act is still wanted, it will be held again.", id);
      if (g_str_equal (state, "failed"))
        return g_strdup_printf ("The person approved %s, but it failed on the page. Take a new "
                                "snapshot.", id);
      return g_strdup_printf ("%s ended unanswered (its grant ended or the tab closed): it did not "
                              "run.", id);
    }

  if (g_str_equal (state, "approved"))
    return g_strdup_printf ("The person approved %s. Its creates and edits on its sites now run "
                            "without a card each, one step per write, for an hour at most.", id);
  if (g_str_equal (state, "declined"))
    return g_strdup_printf ("The person declined %s. Each write will wait for their approval; ask "
                            "them how to continue.", id);
  return g_strdup_printf ("%s has ended (%s): writes wait for the person again.", id,
                          who != NULL ? who : "ended");
}

static void
wait_answer (GTask      *task,
             const char *state,
             const char *by)
{
  /* The sources wait_disconnect() removes may hold the last references to the task. */
  g_autoptr(GTask) hold G_GNUC_UNUSED = g_object_ref (task);
  ToolCall *call = call_of (task);
  JsonObject *structured;
  g_autofree char *text = NULL;
  g_autofree char *who = by != NULL ? chp_mcp_format_line (by, 40) : NULL;
  gboolean pending;

  if (call->finished)
    return;
  wait_disconnect (task);
  pending = call->wait_kind != NULL ? g_str_equal (state, call->wait_kind->pending)
                                    : g_str_equal (state, "waiting");
  structured = json_object_new ();

  json_object_set_string_member (structured, "id", call->wait_id);
  json_object_set_string_member (structured, "state", state);
  if (!pending)
    json_object_set_string_member (structured, "outcome", state);
  if (who != NULL && *who != '\0')
    json_object_set_string_member (structured, "by", who);
  if (!pending && call->final_extra != NULL)
    {
      static const char * const plain[] = { "code", NULL };
      g_autoptr(GList) members = json_object_get_members (call->final_extra);

      /* A hold's changes are the browser's report on the page; a code is a code. */
      for (GList *l = members; l != NULL; l = l->next)
        {
          json_object_set_member (structured, l->data,
                                  json_node_copy (json_object_get_member (call->final_extra,
                                                                          l->data)));
          chp_mcp_format_mark_member (structured, l->data, call->marker, plain);
        }
    }

  text = wait_text (call, state, who);
  call_return_ok (task, text, structured, NULL);
}

static void
wait_refuse (GTask        *task,
             const GError *error)
{
  g_autoptr(GTask) hold G_GNUC_UNUSED = g_object_ref (task);
  ToolCall *call = call_of (task);

  if (call->finished)
    return;
  wait_disconnect (task);
  call_return_gerror (task, error, "Waiting");
}

static const char *
known_state (const WaitKind *kind,
             const char     *state)
{
  for (guint i = 0; kind->states[i] != NULL; i++)
    if (g_strcmp0 (kind->states[i], state) == 0)
      return kind->states[i];
  return NULL;
}

/* A change of the thing waited for: answered now, or kept for the status question's answer
 * when that is still out. */
static void
wait_changed (GTask      *task,
              const char *state,
              const char *by,
              JsonObject *extra)
{
  ToolCall *call = call_of (task);

  g_clear_pointer (&call->final_extra, json_object_unref);
  if (extra != NULL)
    call->final_extra = json_object_ref (extra);

  if (!call->status_known)
    {
      g_free (call->final_state);
      g_free (call->final_by);
      call->final_state = g_strdup (state);
      call->final_by = g_strdup (by);
      return;
    }

  wait_answer (task, state, by);
}

static void
handoff_changed_cb (ChpEngine  *engine,
                    ChpHandoff *handoff,
                    gpointer    user_data)
{
  GTask *task = user_data;
  ToolCall *call = call_of (task);
  const char *state = known_state (call->wait_kind, chp_handoff_get_state (handoff));

  if (g_strcmp0 (chp_handoff_get_device_id (handoff), call->device_id) != 0 ||
      g_strcmp0 (chp_handoff_get_id (handoff), call->handoff_id) != 0 ||
      state == NULL || g_str_equal (state, call->wait_kind->pending))
    return;

  wait_changed (task, state, chp_handoff_get_by (handoff), NULL);
}

/* What an agent learns of a hold's end besides its state: what the approved act changed. */
static JsonObject *
hold_extra (JsonNode   *changes,
            const char *error)
{
  JsonObject *extra = json_object_new ();

  if (changes != NULL && JSON_NODE_HOLDS_OBJECT (changes))
    json_object_set_member (extra, "changes", json_node_copy (changes));
  if (error != NULL && *error != '\0')
    {
      g_autofree char *code = chp_mcp_format_line (error, 40);

      json_object_set_string_member (extra, "code", code);
    }
  return extra;
}

static void
hold_changed_cb (ChpEngine *engine,
                 ChpHold   *hold,
                 gpointer   user_data)
{
  GTask *task = user_data;
  ToolCall *call = call_of (task);
  const char *state = known_state (call->wait_kind, chp_hold_get_state (hold));
  g_autoptr(JsonObject) extra = NULL;

  if (g_strcmp0 (chp_hold_get_device_id (hold), call->device_id) != 0 ||
      g_strcmp0 (chp_hold_get_id (hold), call->handoff_id) != 0 ||
      state == NULL || g_str_equal (state, call->wait_kind->pending))
    return;

  extra = hold_extra (chp_hold_get_changes (hold), chp_hold_get_error (hold));
  wait_changed (task, state, NULL, extra);
}

static void
engine_stopped_cb (GObject    *engine,
                   GParamSpec *pspec,
                   gpointer    user_data)
{
  GTask *task = user_data;
  g_autoptr(GError) error = NULL;

  if (!chp_engine_get_stopped (CHP_ENGINE (engine)))
    return;
  error = g_error_new_literal (CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_STOPPED,
                               "The person stopped all agents");
  wait_refuse (task, error);
}

static gboolean
wait_timeout_cb (gpointer user_data)
{
  GTask *task = user_data;
  ToolCall *call = call_of (task);

  call->timeout_source = 0;
  wait_answer (task, call->wait_kind != NULL ? call->wait_kind->pending : "waiting", NULL);
  return G_SOURCE_REMOVE;
}

static gboolean
wait_tick_cb (gpointer user_data)
{
  GTask *task = user_data;
  ToolCall *call = call_of (task);
  gint64 waited_s = (g_get_monotonic_time () - call->started_us) / G_USEC_PER_SEC;
  g_autofree char *message = g_strdup_printf ("Waiting for the person… (%" G_GINT64_FORMAT " s)",
                                              waited_s);

  progress (call, call->timeout_ms / 1000.0 / WAIT_PROGRESS_S + 1, message);
  return G_SOURCE_CONTINUE;
}

static gboolean
wait_cancelled_idle_cb (gpointer user_data)
{
  g_autoptr(GTask) task = g_object_ref (user_data);
  ToolCall *call = call_of (task);

  if (!call->finished)
    {
      wait_disconnect (task);
      call->finished = TRUE;
      call_audit (call, "cancelled", "cancelled");
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "The call was cancelled");
    }
  return G_SOURCE_REMOVE;
}

static void
wait_cancelled_cb (GCancellable *cancellable,
                   gpointer      user_data)
{
  /* Not from inside the cancellable's handler: disconnecting there would deadlock. */
  g_idle_add_full (G_PRIORITY_DEFAULT, wait_cancelled_idle_cb, g_object_ref (user_data),
                   g_object_unref);
}

/* Nothing decided yet: wait for the change, the timeout or a cancel, with progress meanwhile. */
static void
wait_pending (GTask *task)
{
  ToolCall *call = call_of (task);
  gint64 elapsed_ms = (g_get_monotonic_time () - call->started_us) / 1000;

  if (elapsed_ms >= call->timeout_ms)
    {
      wait_answer (task, call->wait_kind != NULL ? call->wait_kind->pending : "waiting", NULL);
      return;
    }

  progress (call, call->timeout_ms / 1000.0 / WAIT_PROGRESS_S + 1, "Waiting for the person…");
  call->timeout_source = g_timeout_add_full (G_PRIORITY_DEFAULT, call->timeout_ms - elapsed_ms,
                                             wait_timeout_cb, g_object_ref (task), g_object_unref);
  call->tick_source = g_timeout_add_seconds_full (G_PRIORITY_DEFAULT, WAIT_PROGRESS_S,
                                                  wait_tick_cb, g_object_ref (task),
                                                  g_object_unref);
}

static void
wait_status_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = agent_call_finish (CHP_ENGINE (source), result, &error);
  JsonObject *status = NULL;
  const char *state = NULL;

  if (call->finished)
    return;
  if (node == NULL)
    {
      wait_refuse (task, error);
      return;
    }
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      status = json_node_get_object (node);
      state = known_state (call->wait_kind, chp_mcp_json_string (status, "state", NULL));
    }
  if (state == NULL)
    {
      g_autoptr(GError) bad = g_error_new_literal (CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INTERNAL,
                                                   "The browser's status has no state");

      wait_refuse (task, bad);
      return;
    }

  call->status_known = TRUE;
  if (!g_str_equal (state, call->wait_kind->pending))
    {
      if (g_str_equal (call->wait_kind->kind, "k"))
        {
          g_clear_pointer (&call->final_extra, json_object_unref);
          call->final_extra = hold_extra (json_object_get_member (status, "changes"),
                                          chp_mcp_json_string (status, "error", NULL));
        }
      wait_answer (task, state, chp_mcp_json_string (status, "by", NULL));
      return;
    }
  if (call->final_state != NULL)
    {
      wait_answer (task, call->final_state, call->final_by);
      return;
    }

  wait_pending (task);
}

static void
wait_listen (GTask     *task,
             ChpEngine *engine)
{
  ToolCall *call = call_of (task);
  GCancellable *cancellable = g_task_get_cancellable (task);

  call->stopped_handler = g_signal_connect (engine, "notify::stopped",
                                            G_CALLBACK (engine_stopped_cb), task);
  if (cancellable != NULL)
    call->cancel_handler = g_cancellable_connect (cancellable, G_CALLBACK (wait_cancelled_cb),
                                                  task, NULL);
}

/* A handoff or a hold: listen first, then ask, so a change between the question and its answer
 * is not missed. The handlers hold no reference: wait_disconnect() removes them before the task
 * can go. */
static void
wait_browser (ToolCall   *call,
              ChpEngine  *engine,
              const char *raw_id)
{
  GTask *task = call->task;
  const WaitKind *kind = call->wait_kind;

  if (!is_plain_id (raw_id))
    {
      g_autofree char *message = g_strdup_printf ("Nothing is known as %s", call->wait_id);

      call_return_error (task, "invalid_params", message, NULL);
      return;
    }
  call->handoff_id = g_strdup (raw_id);

  call->changed_handler = g_signal_connect (engine, kind->signal, kind->changed_cb, task);
  wait_listen (task, engine);
  chp_engine_agent_call_async (engine, call->device_id, kind->status_method,
                               params_new (kind->id_member, string_node (call->handoff_id), NULL),
                               STATUS_TIMEOUT_MS, g_task_get_cancellable (task), wait_status_cb,
                               g_object_ref (task));
}

static const char * const handoff_states[] = { "waiting", "done", "cancelled", "expired", NULL };
static const char * const hold_states[] = { "held", "done", "declined", "changed", "expired",
                                            "failed", NULL };

static const WaitKind wait_kinds[] = {
  { "h", "waiting", handoff_states, "handoff-changed", "browser.handoff.status", "handoffId",
    G_CALLBACK (handoff_changed_cb) },
  { "k", "held", hold_states, "hold-changed", "browser.hold.status", "holdId",
    G_CALLBACK (hold_changed_cb) },
};

/* @id has the schema's form: "bN:" kind "-" raw id. */
static const WaitKind *
wait_kind_of (const char *id)
{
  const char *colon = strchr (id, ':');
  const char *dash = colon != NULL ? strchr (colon, '-') : NULL;

  for (guint i = 0; dash != NULL && i < G_N_ELEMENTS (wait_kinds); i++)
    if (strlen (wait_kinds[i].kind) == (gsize) (dash - colon - 1) &&
        strncmp (wait_kinds[i].kind, colon + 1, dash - colon - 1) == 0)
      return &wait_kinds[i];
  return NULL;
}

static JsonObject *
plan_extra (ChpPlan *plan)
{
  JsonObject *extra = json_object_new ();

  json_object_set_int_member (extra, "step", chp_plan_get_n_used (plan));
  json_object_set_int_member (extra, "of", chp_plan_get_n_steps (plan));
  return extra;
}

static void
plan_changed_cb (ChpPlanList *plans,
                 ChpPlan     *plan,
                 gpointer     user_data)
{
  GTask *task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) extra = NULL;

  if (g_strcmp0 (chp_plan_get_id (plan), call->wait_id) != 0 ||
      g_strcmp0 (chp_plan_get_state (plan), "waiting") == 0)
    return;

  extra = plan_extra (plan);
  wait_changed (task, chp_plan_get_state (plan), chp_plan_get_end_reason (plan), extra);
}

/* A plan is the app's own: its state is known at once. */
static void
wait_plan (ToolCall  *call,
           ChpEngine *engine)
{
  GTask *task = call->task;
  ChpPlan *plan = chp_plan_list_find (chp_engine_get_plans (engine), call->wait_id);

  if (plan == NULL ||
      g_strcmp0 (chp_plan_get_session_id (plan),
                 chp_mcp_context_get_session_id (call->context)) != 0)
    {
      g_autofree char *message = g_strdup_printf ("You have no plan %s", call->wait_id);

      call_return_error (task, "invalid_params", message, NULL);
      return;
    }

  call->status_known = TRUE;
  call->final_extra = plan_extra (plan);
  if (g_strcmp0 (chp_plan_get_state (plan), "waiting") != 0)
    {
      wait_answer (task, chp_plan_get_state (plan), chp_plan_get_end_reason (plan));
      return;
    }

  call->changed_handler = g_signal_connect (chp_engine_get_plans (engine), "plan-changed",
                                            G_CALLBACK (plan_changed_cb), task);
  wait_listen (task, engine);
  wait_pending (task);
}

static void
tool_wait (ToolCall *call)
{
  GTask *task = call->task;
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  const char *id = json_object_get_string_member (call->args, "id");
  const char *colon = strchr (id, ':');
  g_autofree char *alias = NULL;
  const char *device_id;
  gint64 timeout = int_argument (call->args, "timeoutMs", WAIT_DEFAULT_MS);

  if (engine == NULL)
    {
      call_return_error (task, "internal", "Chaperone is shutting down", NULL);
      return;
    }
  call->wait_id = g_strdup (id);
  call->timeout_ms = CLAMP (timeout, 0, WAIT_MAX_MS);

  if (colon == NULL)
    {
      wait_plan (call, engine);
      return;
    }

  alias = g_strndup (id, colon - id);
  device_id = g_hash_table_lookup (call->self->devices, alias);
  if (device_id == NULL)
    {
      g_autofree char *message = g_strdup_printf ("Nothing is known as %s: no browser is known as "
                                                  "%s", id, alias);

      call_return_error (task, "invalid_params", message, NULL);
      return;
    }

  call->device_id = g_strdup (device_id);
  call->alias = g_steal_pointer (&alias);
  call->wait_kind = wait_kind_of (id);
  wait_browser (call, engine, strchr (colon, '-') + 1);
}

/* ---- browser_plan ----------------------------------------------------------------------- */

static void
tool_plan (ToolCall *call)
{
  GTask *task = call->task;
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpPlan) plan = NULL;
  g_autofree char *text = NULL;
  JsonObject *structured;

  if (engine == NULL)
    {
      call_return_error (task, "internal", "Chaperone is shutting down", NULL);
      return;
    }

  plan = chp_engine_post_plan (engine, chp_mcp_context_get_session_id (call->context),
                               chp_mcp_context_get_client_name (call->context), call->args,
                               &error);
  if (plan == NULL)
    {
      call_return_gerror (task, error, "The plan");
      return;
    }

  progress (call, 0, "Waiting for the person to read the plan…");
  structured = json_object_new ();
  json_object_set_string_member (structured, "id", chp_plan_get_id (plan));
  json_object_set_string_member (structured, "state", "waiting");
  json_object_set_int_member (structured, "steps", chp_plan_get_n_steps (plan));
  text = g_strdup_printf ("Plan %s (%u step(s)) is waiting for the person in the Chaperone app. "
                          "Call browser_wait with id %s for their answer. Until they approve, "
                          "each write waits for them on its own.", chp_plan_get_id (plan),
                          chp_plan_get_n_steps (plan), chp_plan_get_id (plan));
  call_return_ok (task, text, structured, NULL);
}

/* ---- browser_stop ------------------------------------------------------------------------ */

static void
tool_stop (ToolCall *call)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  JsonObject *structured;

  if (engine == NULL)
    {
      call_return_error (call->task, "internal", "Chaperone is shutting down", NULL);
      return;
    }

  chp_engine_stop_all (engine, "agent");
  structured = json_object_new ();
  json_object_set_boolean_member (structured, "stopped", TRUE);
  call_return_ok (call->task,
                  "Stopped. Chaperone now refuses every agent's calls in every browser until the "
                  "person resumes in the Chaperone app; no agent can resume. Tell the person why "
                  "you stopped.",
                  structured, NULL);
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

  if (!check_arguments (spec, g_ptr_array_index (self->inputs, index), call->args, &error) ||
      !check_semantics (spec, call->args, &error))
    {
      call->finished = TRUE;
      call_audit (call, "refused", "invalid_params");
      g_prefix_error (&error, "Invalid arguments for %s: ", spec->name);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  if (g_task_return_error_if_cancelled (task))
    {
      call->finished = TRUE;
      call_audit (call, "cancelled", "cancelled");
      return;
    }

  /* Stopped is the person's word: said at once, without asking any browser. The engine's door
   * refuses anyway; this only spares the agent a browser's round trip. */
  engine = g_weak_ref_get (&self->engine);
  if (engine != NULL && chp_engine_get_stopped (engine) && spec->handler != tool_stop)
    {
      call_return_error (task, "stopped", "The person stopped all agents", NULL);
      return;
    }

  if (!loop_guard_enter (call))
    return;

  spec->handler (call);
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
