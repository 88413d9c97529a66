/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-schemas.c: what each tool takes and gives: the input schema an agent's arguments are
 * checked against (chp-mcp-args.c), and the output schema clients check structuredContent against.
 * Both go into tools/list, which every conversation pays for: they say what they must in few
 * words. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include <stdarg.h>

/* Argument bounds, as the input schemas state them. The extension's own bounds are the same or
 * looser: 65,536 characters for a value, 8,192 for a URL. A handoff message must also fit the
 * app's mirror of handoffs (1,024 bytes) and the extension's 500 UTF-16 units: 250 characters
 * fit both whatever they are. */
#define VALUE_MAX_CHARS      65536
#define TYPE_MAX_CHARS        2000
#define URL_MAX_CHARS         8192
#define MESSAGE_MAX_CHARS      250
#define QUERY_MAX_CHARS        200
#define REASON_MAX_CHARS       500

#define TAB_PATTERN  "^b[1-9][0-9]{0,8}:[0-9]{1,15}$"
#define REF_PATTERN  CHP_TOOL_REF_PATTERN
#define WAIT_PATTERN "^(b[1-9][0-9]{0,8}:[a-z]{1,8}-[A-Za-z0-9_-]{1,64}|plan-[1-9][0-9]{0,8})$"
#define PLAN_SUMMARY_CHARS     200

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

static const char * const actions[] = {
  "click", "dblclick", "focus", "scroll", "fill", "hover", "press", "type", "drag", NULL
};
/* A batch's act steps name one element each: a drag (two) is browser_act's alone. */
static const char * const batch_actions[] = {
  "click", "dblclick", "focus", "scroll", "fill", "hover", "press", "type", NULL
};
static const char * const reasons[] = { "qr", "mfa", "captcha", "device", "login", "other", NULL };

static JsonObject *
tab_prop (void)
{
  return prop_string ("From browser_tabs, e.g. b1:1842.", 0, 0, TAB_PATTERN);
}

static JsonObject *
ref_prop (void)
{
  return prop_string ("A ref from this tab's latest browser_snapshot, e.g. 3:e12.",
                      0, 0, REF_PATTERN);
}

JsonObject *
chp_tool_tabs_input (void)
{
  return schema_object (TRUE, NULL);
}

JsonObject *
chp_tool_tabs_output (void)
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

JsonObject *
chp_tool_snapshot_input (void)
{
  return schema_object (TRUE,
    "tab", tab_prop (), TRUE,
    "frame", prop_integer ("A frame id from the snapshot; 0 (default): the page.", 0), FALSE,
    "query", prop_string ("Only elements whose role or name contains this (any case).", 1,
                          QUERY_MAX_CHARS, NULL), FALSE,
    "until", prop_string ("Waits first (10 s at most) for this text to show on the page.", 1,
                          QUERY_MAX_CHARS, NULL), FALSE,
    "page", prop_integer ("From 1; a result says when there are more.", 1), FALSE,
    "diff", prop ("boolean", "Only what changed since your previous snapshot of it."), FALSE,
    NULL);
}

JsonObject *
chp_tool_snapshot_output (void)
{
  return output_schema (schema_object (FALSE,
    "tab", prop ("string", NULL), TRUE,
    "frame", prop ("integer", NULL), FALSE,
    "document", prop ("integer", "Your number for this document; refs start with it."), FALSE,
    "page", prop ("integer", NULL), FALSE,
    "pages", prop ("integer", NULL), FALSE,
    "nextPage", prop_nullable_integer ("The next page, or null on the last."), FALSE,
    "truncated", prop ("boolean", "This result is not the whole snapshot."), FALSE,
    "browserTruncated", prop ("boolean", "The browser's capture itself was bounded."), FALSE,
    "nodeCount", prop ("integer", "Actionable elements on the page."), FALSE,
    "listed", prop ("integer", "Elements listed over all pages (after the query)."), FALSE,
    "frames", prop_array (NULL, prop ("object", NULL)), FALSE,
    "auth", prop ("object", "Sign-in signals: password, one-time code, CAPTCHA, QR."), FALSE,
    "diff", prop ("object", "With diff: the refs added, changed and removed."), FALSE,
    "untilFound", prop ("boolean", "With until: whether the text showed in time."), FALSE,
    NULL));
}

JsonObject *
chp_tool_inspect_input (void)
{
  return schema_object (TRUE, "tab", tab_prop (), TRUE, "ref", ref_prop (), TRUE, NULL);
}

JsonObject *
chp_tool_inspect_output (void)
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

JsonObject *
chp_tool_act_input (void)
{
  return schema_object (TRUE,
    "tab", tab_prop (), TRUE,
    "ref", prop_string ("A ref from the latest browser_snapshot; press and type without one go "
                        "to the focused element.", 0, 0, REF_PATTERN), FALSE,
    "action", prop_enum ("fill takes value (text, option, true/false, YYYY-MM-DD); press takes "
                         "key; type takes text; drag takes to (a ref to drop on).", actions), TRUE,
    "value", prop_string (NULL, 0, VALUE_MAX_CHARS, NULL), FALSE,
    /* The key's and to's patterns are checked by chp_tool_check_semantics(): in the schema they
     * cost every agent's tools/list more than the drag they came with (its budget). */
    "key", prop_string ("E.g. Enter, Tab, Control+s. One that sends or saves is held.", 1,
                        64, NULL), FALSE,
    "text", prop_string (NULL, 1, TYPE_MAX_CHARS, NULL), FALSE,
    "to", prop ("string", NULL), FALSE,
    NULL);
}

JsonObject *
chp_tool_act_output (void)
{
  return output_schema (schema_object (FALSE,
    "ok", prop ("boolean", "The action ran."), FALSE,
    "tab", prop ("string", NULL), FALSE,
    "ref", prop ("string", NULL), FALSE,
    "action", prop ("string", NULL), FALSE,
    "changes", prop ("object", "What the act changed."), FALSE,
    "page", prop ("object", "The diff since your last snapshot."), FALSE,
    "held", prop ("boolean", "A person must release this act first."), FALSE,
    "holdId", prop ("string", NULL), FALSE,
    "waiting", prop ("boolean", NULL), FALSE,
    "id", prop ("string", "For browser_wait."), FALSE,
    NULL));
}

JsonObject *
chp_tool_navigate_input (void)
{
  return schema_object (TRUE,
    "tab", tab_prop (), TRUE,
    "url", prop_string ("An absolute http(s) URL on the site the tab was granted for.", 1,
                        URL_MAX_CHARS, NULL), TRUE,
    NULL);
}

JsonObject *
chp_tool_navigate_output (void)
{
  return output_schema (schema_object (FALSE,
    "tab", prop ("string", NULL), TRUE,
    "url", prop ("string", "Where the page committed (page content)."), FALSE,
    "documentId", prop ("string", NULL), FALSE,
    "loaded", prop ("boolean", "Whether it finished loading in time."), FALSE,
    NULL));
}

JsonObject *
chp_tool_handoff_input (void)
{
  return schema_object (TRUE,
    "tab", tab_prop (), TRUE,
    "reason", prop_enum ("What the person must do (the description above says each).",
                         reasons), TRUE,
    "message", prop_string ("Shown to the person as plain text: say what you need, briefly.", 1,
                            MESSAGE_MAX_CHARS, NULL), TRUE,
    NULL);
}

JsonObject *
chp_tool_handoff_output (void)
{
  return output_schema (schema_object (FALSE,
    "id", prop ("string", "For browser_wait."), TRUE,
    "state", prop ("string", "waiting"), TRUE,
    "tab", prop ("string", NULL), FALSE,
    "reason", prop ("string", NULL), FALSE,
    NULL));
}

JsonObject *
chp_tool_wait_input (void)
{
  return schema_object (TRUE,
    "id", prop_string ("An id from browser_handoff, a held browser_act, or browser_plan.", 0, 0,
                       WAIT_PATTERN), TRUE,
    "timeoutMs", prop ("integer", "Milliseconds: 20000 by default, 50000 at most (more is "
                       "cut)."), FALSE,
    NULL);
}

JsonObject *
chp_tool_wait_output (void)
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

JsonObject *
chp_tool_plan_input (void)
{
  JsonObject *steps = prop_array ("One step per item you will save (opening an editor uses "
                                  "none), at most 20; never deletes, messages or payments.",
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

JsonObject *
chp_tool_plan_output (void)
{
  return output_schema (schema_object (FALSE,
    "id", prop ("string", NULL), TRUE,
    "state", prop ("string", NULL), TRUE,
    "steps", prop ("integer", NULL), FALSE,
    NULL));
}

JsonObject *
chp_tool_stop_input (void)
{
  return schema_object (TRUE,
    "reason", prop_string ("Why you stop (optional; not stored).", 1, REASON_MAX_CHARS,
                           NULL), FALSE,
    NULL);
}

JsonObject *
chp_tool_stop_output (void)
{
  return output_schema (schema_object (FALSE,
    "stopped", prop ("boolean", NULL), TRUE,
    NULL));
}

JsonObject *
chp_tool_history_input (void)
{
  return schema_object (TRUE,
    "site", prop_string ("A host, e.g. shop.example.", 1, 253, NULL), TRUE,
    NULL);
}

JsonObject *
chp_tool_history_output (void)
{
  return output_schema (schema_object (FALSE,
    "sessions", prop ("integer", NULL), TRUE,
    NULL));
}

JsonObject *
chp_tool_network_input (void)
{
  JsonObject *limit = prop_integer (NULL, 1);

  json_object_set_int_member (limit, "maximum", 100);
  return schema_object (TRUE,
    "tab", tab_prop (), TRUE,
    "all", prop ("boolean", "Not only API calls."), FALSE,
    "path", prop_string ("Paths containing this.", 1, QUERY_MAX_CHARS, NULL), FALSE,
    "limit", limit, FALSE,
    NULL);
}

JsonObject *
chp_tool_network_output (void)
{
  return output_schema (schema_object (FALSE,
    "count", prop ("integer", NULL), TRUE,
    NULL));
}

JsonObject *
chp_tool_api_input (void)
{
  static const char * const api_actions[] = { "learn", "list", "route", "call", NULL };
  JsonObject *params = prop ("object", "Values of its {slots} and query keys.");
  JsonObject *body = prop ("object", NULL);

  json_object_set_int_member (params, "maxProperties", 32);
  json_object_set_object_member (params, "additionalProperties",
                                 prop_string (NULL, 0, 1024, NULL));
  json_object_set_boolean_member (body, "additionalProperties", TRUE);
  return schema_object (TRUE,
    "tab", tab_prop (), TRUE,
    "action", prop_enum (NULL, api_actions), TRUE,
    "hint", prop_string (NULL, 1, QUERY_MAX_CHARS, NULL), FALSE,
    "entryId", prop_string (NULL, 1, 32, "^e[0-9a-f]{12}$"), FALSE,
    "params", params, FALSE,
    "body", body, FALSE,
    NULL);
}

JsonObject *
chp_tool_api_output (void)
{
  return output_schema (schema_object (FALSE,
    "route", prop ("string", "api or ui"), FALSE,
    "why", prop ("string", NULL), FALSE,
    "status", prop ("integer", NULL), FALSE,
    "id", prop ("string", "For browser_wait."), FALSE,
    NULL));
}

/* browser_batch: few words, as every conversation pays for them. The steps' members are only
 * named here; their bounds, what each requires and each action's own argument are checked in
 * chp-mcp-args.c (check_batch), which refuses a member a step does not take all the same. */
static JsonObject *
names_only (const char *first_name,
            ...)
{
  JsonObject *o = prop ("object", NULL);
  JsonObject *properties = json_object_new ();
  const char *name = first_name;
  va_list args;

  va_start (args, first_name);
  while (name != NULL)
    {
      json_object_set_object_member (properties, name, va_arg (args, JsonObject *));
      name = va_arg (args, const char *);
    }
  va_end (args);
  json_object_set_object_member (o, "properties", properties);
  return o;
}

JsonObject *
chp_tool_batch_input (void)
{
  JsonObject *step = names_only (
    "act", names_only ("ref", prop ("string", NULL),
                       "target", names_only ("role", prop ("string", NULL),
                                             "name", prop ("string", NULL), NULL),
                       "action", prop_enum (NULL, batch_actions),
                       "value", prop ("string", NULL),
                       "key", prop ("string", NULL),
                       "text", prop ("string", NULL), NULL),
    "api", names_only ("entryId", prop ("string", NULL),
                       "params", prop ("object", NULL),
                       "body", prop ("object", NULL), NULL),
    "wait", names_only ("text", prop ("string", NULL),
                        "timeoutMs", prop ("integer", NULL), NULL),
    NULL);
  JsonObject *steps = prop_array ("Each one of act (browser_act's, target {role, name} or ref), "
                                  "api (browser_api call's) or wait {text, timeoutMs}.", step);

  return schema_object (TRUE,
    "tab", tab_prop (), TRUE,
    "steps", steps, FALSE,
    "params", prop ("object", "Strings for {{name}} in step values."), FALSE,
    "saveAs", prop_string (NULL, 0, 0, CHP_RECIPE_PATTERN), FALSE,
    "recipe", prop ("string", NULL), FALSE,
    NULL);
}

JsonObject *
chp_tool_batch_output (void)
{
  return output_schema (schema_object (FALSE,
    "done", prop ("integer", NULL), TRUE,
    "of", prop ("integer", NULL), TRUE,
    "halted", prop ("object", NULL), FALSE,
    "held", prop ("boolean", NULL), FALSE,
    "id", prop ("string", NULL), FALSE,
    NULL));
}
