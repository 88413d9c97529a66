/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-batch.c: browser_batch: a list of steps — acts on the page, calls of the site's learned
 * API, waits for a text — sent to the browser as one request (browser.batch), which runs them in
 * its worker with no round trip to the app between them and halts at the first step that fails,
 * is held for the person, or meets a Stop; and recipes, a batch that fully succeeded kept in the
 * agent's session with its {{placeholders}} (never the values they were filled with) and, through
 * the allowlist, in the site memory for later sessions, replayed with new params through the
 * same gates as the steps given one by one.
 *
 * Everything the app decides is decided here for every step before anything is sent: the
 * placeholders are filled (a missing one refuses the whole batch), refs are resolved, each API
 * step becomes the concrete call browser_api would make (a learned entry, its URL built by
 * chp_mcp_api_build_url), the floor judges the tab (acts and API writes as acts), and an approved
 * plan lends its allowance with how many steps each of its sites has left. The engine's door
 * refuses the request while the person has stopped everything; the extension checks each step
 * again as it would a single one (extension/lib/capabilities/batch.js). */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include "chp-mcp-api.h"
#include "chp-mcp-session.h"
#include "chp-mcp-site-card.h"
#include "chp-store-sites.h"

#include <string.h>

/* The request's time: a base, and per step what one usually needs (an act settles within 3 s, a
 * read of the site's API answers in well under a second, a wait as long as it says), within
 * the MCP clients' usual 60 s. The extension is told to start no step after its deadline, so
 * that a long batch answers with what it did rather than running out of time unheard. */
#define BATCH_BASE_MS        8000
#define BATCH_STEP_MS        4000
#define BATCH_WAIT_MS        5000
#define BATCH_MAX_MS        55000
#define BATCH_DEADLINE_SLACK 3000
/* A reply an API step gave, as the result shows it: enough to read an item or a short list. */
#define BATCH_DATA_CHARS     2000
#define BATCH_WHAT_CHARS       60
/* What the filled steps' strings may hold in all: no more than one request the agent could have
 * sent with the values typed in, well under what the bridge carries to the browser. */
#define BATCH_FILLED_MAX_BYTES CHP_MCP_MAX_LINE_BYTES

typedef struct
{
  JsonArray *given;    /* the steps as the agent gave them, or as its recipe kept them */
  JsonArray *filled;   /* with params filled in */
  JsonArray *wire;     /* as the browser gets them */
  GPtrArray *what;     /* char *: each step in a few of the agent's own words */
  char      *site;     /* the tab's origin: whose learned API, whose recipes */
  const char *recipe;  /* a name from the arguments */
  gboolean   writes;   /* a step may write (a click, a key press, an API write) */
  gboolean   remembered; /* the recipe came from the site memory, not this session */
} Batch;

static void
batch_free (gpointer data)
{
  Batch *b = data;

  g_clear_pointer (&b->given, json_array_unref);
  g_clear_pointer (&b->filled, json_array_unref);
  g_clear_pointer (&b->wire, json_array_unref);
  g_clear_pointer (&b->what, g_ptr_array_unref);
  g_free (b->site);
  g_free (b);
}

static Batch *
batch_of (GTask *task)
{
  return g_object_get_data (G_OBJECT (task), "chp-batch");
}

/* ---- placeholders ------------------------------------------------------------------------ */

static gboolean
is_param_name (const char *s,
               gsize       n)
{
  if (n == 0 || n > 32 || !(g_ascii_isalpha (s[0]) || s[0] == '_'))
    return FALSE;
  for (gsize i = 1; i < n; i++)
    if (!g_ascii_isalnum (s[i]) && s[i] != '_')
      return FALSE;
  return TRUE;
}

typedef struct
{
  JsonObject *params;    /* (nullable) */
  GPtrArray  *names;     /* (nullable): collects the names instead, and nothing is filled */
  char       *missing;   /* the first name params lacks */
  const char *too_long;  /* the first member a filled value would make too long */
  glong       limit;     /* ...and the characters it may have */
  gsize       bytes;     /* what the filled strings hold so far */
} Fill;

/* The characters a member (of @parent: an act, a wait, a target, params) may have once filled:
 * what chp-mcp-args.c allows it unfilled, so params make no value longer than one typed. */
static glong
fill_limit (const char *parent,
            const char *member)
{
  if (g_strcmp0 (parent, "act") == 0)
    return g_strcmp0 (member, "text") == 0 ? 2000 : g_strcmp0 (member, "key") == 0 ? 64 : 65536;
  if (g_strcmp0 (parent, "wait") == 0)
    return 200;
  if (g_strcmp0 (parent, "target") == 0)
    return g_strcmp0 (member, "role") == 0 ? 64 : 200;
  if (g_strcmp0 (parent, "params") == 0)
    return 1024;
  return 65536;
}

/* @text with each {{name}} replaced by params' name, or %NULL (see Fill). Braces that make no
 * name stay. Counted before built: a small request full of {{a}} must not allocate much. */
static char *
fill_text (const char *text,
           const char *member,
           glong       limit,
           Fill       *f)
{
  g_autoptr(GString) out = NULL;  /* built on the second pass only, when the count fits */
  glong chars = 0;
  gsize bytes = 0;

  for (int pass = 0; pass < 2; pass++)
    {
      const char *p = text;

      for (;;)
        {
          const char *open = strstr (p, "{{");
          const char *close = open != NULL ? strstr (open + 2, "}}") : NULL;
          g_autofree char *name = NULL;
          const char *value;

          if (close == NULL)
            {
              if (out != NULL)
                g_string_append (out, p);
              chars += g_utf8_strlen (p, -1);
              bytes += strlen (p);
              break;
            }
          if (!is_param_name (open + 2, close - open - 2))
            {
              if (out != NULL)
                g_string_append_len (out, p, open + 2 - p);
              chars += g_utf8_strlen (p, open + 2 - p);
              bytes += open + 2 - p;
              p = open + 2;
              continue;
            }
          name = g_strndup (open + 2, close - open - 2);
          if (f->names != NULL)
            {
              if (!g_ptr_array_find_with_equal_func (f->names, name, g_str_equal, NULL))
                g_ptr_array_add (f->names, g_steal_pointer (&name));
              if (out != NULL)
                g_string_append_len (out, p, close + 2 - p);
              p = close + 2;
              continue;
            }
          value = f->params != NULL ? chp_mcp_json_string (f->params, name, NULL) : NULL;
          if (value == NULL)
            {
              f->missing = g_steal_pointer (&name);
              return NULL;
            }
          if (out != NULL)
            {
              g_string_append_len (out, p, open - p);
              g_string_append (out, value);
            }
          chars += g_utf8_strlen (p, open - p) + g_utf8_strlen (value, -1);
          bytes += (open - p) + strlen (value);
          p = close + 2;
        }
      if (out != NULL)
        break;
      if (f->names == NULL && chars > limit)
        {
          f->too_long = member != NULL ? member : "a value";
          f->limit = limit;
          return NULL;
        }
      f->bytes += f->names == NULL ? bytes : 0;
      if (f->bytes > BATCH_FILLED_MAX_BYTES)
        return NULL;
      out = g_string_sized_new (bytes);
    }
  return g_string_free (g_steal_pointer (&out), FALSE);
}

/* A copy of @node with its strings filled; the members that name our things (an action, an
 * entry, a ref) are never filled. %NULL with f->missing, f->too_long, or f->bytes over the
 * bound. @parent: the member holding @node's object; a body's strings count as the body's. */
static JsonNode *
fill_node (JsonNode   *node,
           const char *parent,
           const char *member,
           Fill       *f)
{
  static const char * const fixed[] = { "action", "entryId", "ref", NULL };

  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING &&
      (member == NULL || !g_strv_contains (fixed, member)))
    {
      g_autofree char *s = fill_text (json_node_get_string (node), member,
                                      fill_limit (parent, member), f);

      return s != NULL ? json_node_init_string (json_node_alloc (), s) : NULL;
    }
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      JsonObject *in = json_node_get_object (node);
      g_autoptr(JsonObject) out = json_object_new ();
      g_autoptr(GList) members = json_object_get_members (in);
      const char *inner = g_strcmp0 (parent, "body") == 0 ? parent : member;

      for (GList *l = members; l != NULL; l = l->next)
        {
          JsonNode *v = fill_node (json_object_get_member (in, l->data), inner, l->data, f);

          if (v == NULL)
            return NULL;
          json_object_set_member (out, l->data, v);
        }
      return json_node_init_object (json_node_alloc (), out);
    }
  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *in = json_node_get_array (node);
      g_autoptr(JsonArray) out = json_array_new ();

      for (guint i = 0; i < json_array_get_length (in); i++)
        {
          JsonNode *v = fill_node (json_array_get_element (in, i), parent, member, f);

          if (v == NULL)
            return NULL;
          json_array_add_element (out, v);
        }
      return json_node_init_array (json_node_alloc (), out);
    }
  return json_node_copy (node);
}

/* ---- each step, as the app sends it ------------------------------------------------------ */

static JsonObject *
step_member (JsonObject *step,
             const char *kind)
{
  JsonNode *node = json_object_get_member (step, kind);

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

/* The step in the agent's words: `fill "Title"`, `click 3:e12`, `press Enter`, `wait for "…"`,
 * `GET /api/notes/{id}` (once its entry is known). Never a value. */
static char *
step_what (JsonObject *step)
{
  JsonObject *act = step_member (step, "act");
  JsonObject *wait = step_member (step, "wait");
  JsonObject *target;
  g_autofree char *shown = NULL;

  if (wait != NULL)
    {
      shown = chp_mcp_format_line (chp_mcp_json_string (wait, "text", ""), BATCH_WHAT_CHARS);
      return g_strdup_printf ("wait for \"%s\"", shown);
    }
  if (act == NULL)
    return g_strdup_printf ("api %s", chp_mcp_json_string (step_member (step, "api"), "entryId",
                                                           ""));
  target = step_member (act, "target");
  if (target != NULL)
    shown = chp_mcp_format_line (chp_mcp_json_string (target, "name", ""), BATCH_WHAT_CHARS);
  if (g_str_equal (chp_mcp_json_string (act, "action", ""), "press"))
    return g_strdup_printf ("press %s%s%s%s", chp_mcp_json_string (act, "key", ""),
                            shown != NULL ? " on \"" : "", shown != NULL ? shown : "",
                            shown != NULL ? "\"" : "");
  if (shown != NULL)
    return g_strdup_printf ("%s \"%s\"", chp_mcp_json_string (act, "action", ""), shown);
  return g_strdup_printf ("%s %s", chp_mcp_json_string (act, "action", ""),
                          chp_mcp_json_string (act, "ref", "the focused element"));
}

/* An act as browser.node.action takes it, with a wire ref or the element's role and name. */
static JsonObject *
wire_act (GTask      *task,
          JsonObject *act)
{
  ToolCall *call = call_of (task);
  JsonObject *o = json_object_new ();
  const char *action = json_object_get_string_member (act, "action");
  const char *ref = chp_mcp_json_string (act, "ref", NULL);
  static const char * const arguments[] = { "value", "key", "text" };

  if (ref != NULL)
    {
      g_autofree char *wire_ref = NULL;

      /* Each ref in its turn: the call remembers the last one only for the trace's sake. */
      g_clear_pointer (&call->document, json_object_unref);
      g_clear_pointer (&call->ref, g_free);
      if (!chp_tool_resolve_ref (task, ref, &wire_ref))
        {
          json_object_unref (o);
          return NULL;
        }
      json_object_set_string_member (o, "ref", wire_ref);
    }
  else if (step_member (act, "target") != NULL)
    json_object_set_object_member (o, "target",
                                   json_object_ref (step_member (act, "target")));
  json_object_set_string_member (o, "action", g_str_equal (action, "fill") ? "setValue" : action);
  for (guint i = 0; i < G_N_ELEMENTS (arguments); i++)
    if (chp_mcp_json_string (act, arguments[i], NULL) != NULL)
      json_object_set_string_member (o, arguments[i],
                                     json_object_get_string_member (act, arguments[i]));
  return o;
}

/* An API step as browser.api.call takes it: the learned entry's method and the URL it makes
 * with the step's params, exactly as browser_api call makes them. */
static JsonObject *
wire_api (GTask      *task,
          JsonObject *api,
          JsonArray  *entries,
          guint       n,
          char      **what)
{
  Batch *b = batch_of (task);
  g_autoptr(GError) error = NULL;
  const char *id = json_object_get_string_member (api, "entryId");
  JsonObject *entry = NULL;
  JsonNode *body = json_object_get_member (api, "body");
  g_autofree char *url = NULL;
  g_autofree char *message = NULL;
  JsonObject *o;

  for (guint i = 0; entries != NULL && i < json_array_get_length (entries); i++)
    if (g_strcmp0 (chp_mcp_json_string (json_array_get_object_element (entries, i), "entryId",
                                        NULL), id) == 0)
      entry = json_array_get_object_element (entries, i);
  if (entry == NULL)
    message = g_strdup_printf ("Step %u: no learned entry of this site has the id %s: "
                               "browser_api list shows them", n, id);
  else if ((url = chp_mcp_api_build_url (entry, step_member (api, "params"), &error)) == NULL)
    message = g_strdup_printf ("Step %u: %s", n, error->message);
  else if (chp_mcp_api_is_read (entry) && body != NULL)
    message = g_strdup_printf ("Step %u: a read (GET) takes no body", n);
  if (message != NULL)
    {
      chp_tool_return_error (task, "invalid_params", message, NULL);
      return NULL;
    }

  if (!chp_mcp_api_is_read (entry))
    b->writes = TRUE;
  *what = g_strdup_printf ("%s %s", chp_mcp_json_string (entry, "method", "GET"),
                           chp_mcp_json_string (entry, "pathTemplate", "/"));
  o = json_object_new ();
  json_object_set_string_member (o, "method", chp_mcp_json_string (entry, "method", "GET"));
  json_object_set_string_member (o, "url", url);
  json_object_set_object_member (o, "credential",
                                 json_object_ref (json_object_get_object_member (entry,
                                                                                 "credential")));
  if (body != NULL)
    json_object_set_member (o, "body", json_node_copy (body));
  return o;
}

/* The plan's allowance, with how many unused steps each of its sites has: a batch may make
 * several writes, and the extension lends the plan to no more of them than the person approved
 * (the app then spends a step for each that used it). */
static JsonNode *
batch_allowance (ToolCall *call)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  JsonNode *allow = chp_tool_plan_allowance (call);
  JsonObject *left;
  ChpPlan *plan;
  const char *site;
  gboolean used;

  if (allow == NULL || engine == NULL)
    return allow;
  plan = chp_plan_list_covering (chp_engine_get_plans (engine),
                                 chp_mcp_context_get_session_id (call->context));
  left = json_object_new ();
  for (guint i = 0; plan != NULL && chp_plan_get_step (plan, i, NULL, &site, NULL, &used); i++)
    if (!used)
      json_object_set_int_member (left, site, chp_mcp_json_int (left, site, 0) + 1);
  json_object_set_object_member (json_node_get_object (allow), "left", left);
  return allow;
}

static guint
batch_timeout_ms (JsonArray *wire)
{
  guint ms = BATCH_BASE_MS;

  for (guint i = 0; i < json_array_get_length (wire); i++)
    {
      JsonObject *wait = step_member (json_array_get_object_element (wire, i), "wait");

      ms += wait != NULL ? (guint) chp_mcp_json_int (wait, "timeoutMs", BATCH_WAIT_MS) + 1000
                         : BATCH_STEP_MS;
      if (ms >= BATCH_MAX_MS)
        return BATCH_MAX_MS;
    }
  return ms;
}

static void batch_answered_cb (GObject      *source,
                               GAsyncResult *result,
                               gpointer      user_data);

/* Every step made concrete (@entries: the site's learned API, when a step calls it), then the
 * one request. */
static void
batch_send (GTask      *task,
            const char *site,
            JsonArray  *entries)
{
  ToolCall *call = call_of (task);
  Batch *b = batch_of (task);
  JsonNode *params;
  JsonObject *o;
  guint timeout;

  (void) site;
  b->wire = json_array_new ();
  for (guint i = 0; i < json_array_get_length (b->filled); i++)
    {
      JsonObject *step = json_array_get_object_element (b->filled, i);
      JsonObject *wire = json_object_new ();
      JsonObject *part = NULL;
      char *what = NULL;

      json_array_add_object_element (b->wire, wire);
      if (step_member (step, "act") != NULL)
        {
          const char *action = chp_mcp_json_string (step_member (step, "act"), "action", "");

          part = wire_act (task, step_member (step, "act"));
          if (part == NULL)
            return;
          if (chp_tool_act_may_write (action))
            b->writes = TRUE;
          json_object_set_object_member (wire, "act", part);
        }
      else if (step_member (step, "api") != NULL)
        {
          part = wire_api (task, step_member (step, "api"), entries, i + 1, &what);
          if (part == NULL)
            return;
          json_object_set_object_member (wire, "api", part);
          g_free (g_ptr_array_index (b->what, i));
          g_ptr_array_index (b->what, i) = what;
        }
      else
        {
          part = json_object_ref (step_member (step, "wait"));
          json_object_set_object_member (wire, "wait", part);
        }
    }
  g_clear_pointer (&call->document, json_object_unref);
  g_clear_pointer (&call->ref, g_free);

  /* An API write is an act for the floor: a hands-only page takes none. */
  if (b->writes && !chp_tool_floor_allows (task, NULL, TRUE, FALSE))
    return;

  timeout = batch_timeout_ms (b->wire);
  params = chp_tool_params_new ("tabId", chp_tool_int_node (call->tab_id),
                                "frameId", chp_tool_int_node (0),
                                "deadlineMs", chp_tool_int_node (timeout - BATCH_DEADLINE_SLACK),
                                NULL);
  o = json_node_get_object (params);
  json_object_set_array_member (o, "steps", json_array_ref (b->wire));
  if (b->writes)
    {
      JsonNode *allow = batch_allowance (call);

      if (allow != NULL)
        json_object_set_member (o, "allow", allow);
    }
  chp_tool_progress (call, json_array_get_length (b->wire), "Running the steps in the page…");
  chp_tool_browser_call (task, "browser.batch", params, timeout, batch_answered_cb);
}

static char *
recipe_key (const char *site,
            const char *name)
{
  return g_strdup_printf ("recipe:%s:%s", site, name);
}

/* Keeps the steps as given — their {{placeholders}}, never the values that filled them. */
static void
save_recipe (ToolCall   *call,
             Batch      *b,
             const char *name,
             GString    *text)
{
  g_autofree char *key = recipe_key (b->site, name);
  g_autoptr(JsonObject) kept = json_object_new ();
  g_autoptr(JsonNode) steps = json_node_init_array (json_node_alloc (), b->given);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  Fill f = { .names = names };

  /* The names the steps use, for the agent's replay (filling nothing). */
  json_node_unref (fill_node (steps, NULL, NULL, &f));
  json_object_set_member (kept, "steps", json_node_copy (steps));
  chp_tool_remember_object (call->context, key, kept);
  g_string_append_printf (text, " Saved as recipe \"%s\" for %s: replay it with browser_batch "
                          "{tab, recipe: \"%s\"", name, b->site, name);
  for (guint i = 0; i < names->len; i++)
    g_string_append_printf (text, "%s%s: …", i == 0 ? ", params: {" : ", ",
                            (char *) g_ptr_array_index (names, i));
  g_string_append (text, names->len > 0 ? "}}." : "}.");
  chp_tool_site_remember_recipe (call, b->site, name, b->given, names, text);
}

/* One line per step that ran; an API step's reply goes in @data, in the page's wrapper. */
static void
step_line (ToolCall   *call,
           Batch      *b,
           guint       n,
           JsonObject *r,
           JsonObject *structured,
           GString    *lines,
           GString    *data)
{
  JsonObject *error = step_member (r, "error");
  const char *what = g_ptr_array_index (b->what, n - 1);

  g_string_append_printf (lines, "%u. %s: ", n, what);
  if (chp_mcp_json_bool (r, "held") && chp_mcp_json_bool (r, "ranByRule"))
    g_string_append (lines, "held, then run by the person's Always-allow rule");
  else if (chp_mcp_json_bool (r, "held"))
    g_string_append (lines, "held");
  else if (error != NULL)
    g_string_append_printf (lines, "%s", chp_mcp_json_string (error, "code", "internal"));
  else if (json_object_has_member (r, "status"))
    g_string_append_printf (lines, "%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT " bytes",
                            chp_mcp_json_int (r, "status", 0), chp_mcp_json_int (r, "size", 0));
  else
    g_string_append (lines, "ok");
  g_string_append_printf (lines, " (%" G_GINT64_FORMAT " ms)", chp_mcp_json_int (r, "ms", 0));
  /* A write a plan covered spends its step, as the single call would have. */
  if (json_object_has_member (r, "plan"))
    chp_tool_plan_step_used (call, r, structured, lines);
  g_string_append_c (lines, '\n');

  if (chp_mcp_json_string (r, "data", NULL) != NULL)
    {
      const char *s = json_object_get_string_member (r, "data");
      glong length = g_utf8_validate (s, -1, NULL) ? g_utf8_strlen (s, -1) : 0;
      g_autofree char *cut = g_utf8_substring (s, 0, MIN (length, BATCH_DATA_CHARS));

      g_string_append_printf (data, "step %u: %s%s\n", n, cut,
                              length > BATCH_DATA_CHARS || chp_mcp_json_bool (r, "cut")
                              ? " …(cut)" : "");
    }
}

static void
batch_answered_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  Batch *b = batch_of (task);
  g_autoptr(JsonObject) answer = chp_tool_browser_answer (task, source, result, "The batch");
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) lines = g_string_new (NULL);
  g_autoptr(GString) data = g_string_new (NULL);
  JsonObject *structured;
  JsonObject *halted;
  JsonArray *results;
  JsonArray *shown;
  g_autoptr(GArray) uses = g_array_new (FALSE, FALSE, sizeof (ChpSiteUse));
  guint of = json_array_get_length (b->wire);
  guint ran;
  gint64 done;
  gboolean ran_by_rule;

  if (answer == NULL)
    return;
  results = chp_json_get_array (answer, "steps");
  ran = results != NULL ? MIN (json_array_get_length (results), of) : 0;
  done = CLAMP (chp_mcp_json_int (answer, "done", 0), 0, (gint64) ran);
  halted = step_member (answer, "halted");
  /* A held step the person's rule ran at once is done too: the count, its line and its `ok` say
   * so, as the words after them do (chp_tool_batch_held). */
  ran_by_rule = halted != NULL && chp_mcp_json_bool (answer, "held") &&
                chp_tool_rule_ran_ok (chp_tool_reply_get_rule_run (result));

  structured = json_object_new ();
  json_object_set_int_member (structured, "done", done);
  json_object_set_int_member (structured, "of", of);
  if (b->recipe != NULL)
    json_object_set_string_member (structured, "recipe", b->recipe);
  shown = json_array_new ();
  for (guint i = 0; i < ran; i++)
    {
      JsonNode *node = json_array_get_element (results, i);
      JsonObject *r = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
      JsonObject *s = json_object_new ();

      if (r == NULL)
        continue;
      if (ran_by_rule && chp_mcp_json_bool (r, "held"))
        {
          json_object_set_boolean_member (r, "ok", TRUE);
          json_object_set_boolean_member (r, "ranByRule", TRUE);
        }
      json_object_set_boolean_member (s, "ok", chp_mcp_json_bool (r, "ok"));
      json_object_set_int_member (s, "ms", chp_mcp_json_int (r, "ms", 0));
      if (step_member (r, "error") != NULL)
        json_object_set_string_member (s, "code", chp_mcp_json_string (step_member (r, "error"),
                                                                       "code", "internal"));
      if (json_object_has_member (r, "status"))
        {
          gint64 status = chp_mcp_json_int (r, "status", 0);
          JsonObject *api = step_member (json_array_get_object_element (b->filled, i), "api");

          json_object_set_int_member (s, "status", status);
          /* An API step's answer moves its entry's confidence as a single call's does (all of
           * the batch's in one write, below). */
          if (api != NULL && chp_mcp_json_string (api, "entryId", NULL) != NULL)
            {
              ChpSiteUse use = { chp_mcp_json_string (api, "entryId", NULL),
                                 status >= 200 && status < 300, (gint) status };

              g_array_append_val (uses, use);
            }
        }
      json_array_add_object_element (shown, s);
      step_line (call, b, i + 1, r, structured, lines, data);
    }
  json_object_set_array_member (structured, "steps", shown);
  chp_tool_api_record_uses (call, uses);

  if (ran_by_rule && done < of)
    json_object_set_int_member (structured, "done", ++done);

  if (done == of && halted == NULL)
    g_string_append_printf (text, "Ran all %u steps in %" G_GINT64_FORMAT " ms, in the page, "
                            "with no round trip between them.", of,
                            chp_mcp_json_int (answer, "ms", 0));
  else
    g_string_append_printf (text, "Ran %" G_GINT64_FORMAT " of %u steps in %" G_GINT64_FORMAT
                            " ms.", done, of, chp_mcp_json_int (answer, "ms", 0));

  if (halted != NULL && chp_mcp_json_bool (answer, "held"))
    {
      guint n = CLAMP (chp_mcp_json_int (halted, "step", ran), 1, of);

      if (!chp_tool_batch_held (task, answer, n, g_ptr_array_index (b->what, n - 1),
                                chp_tool_reply_get_rule_run (result), structured, text))
        return;
    }
  else if (halted != NULL)
    {
      guint n = CLAMP (chp_mcp_json_int (halted, "step", ran), 1, of);
      const char *code = chp_mcp_json_string (halted, "code", "internal");
      JsonObject *h = json_object_new ();
      g_autofree char *shown_code = chp_mcp_format_line (code, 32);

      json_object_set_int_member (h, "step", n);
      json_object_set_string_member (h, "code", shown_code);
      json_object_set_object_member (structured, "halted", h);
      /* A halted batch is a failed act for the loop guard (chp-mcp-loop-guard.c). */
      g_object_set_data_full (G_OBJECT (task), CHP_LOOP_FAILURE_KEY, g_strdup (shown_code), g_free);
      if (g_str_equal (code, "stopped"))
        g_string_append_printf (text, " The person stopped all agents at step %u (%s): the rest "
                                "did not run.", n, (char *) g_ptr_array_index (b->what, n - 1));
      else
        g_string_append_printf (text, " Halted at step %u (%s): %s; the steps after it did not "
                                "run. Fix it (a new snapshot, another target) and run the rest.",
                                n, (char *) g_ptr_array_index (b->what, n - 1), shown_code);
      /* The browser's reason may quote the page. */
      if (chp_mcp_json_string (halted, "message", NULL) != NULL)
        {
          g_string_append_c (text, '\n');
          chp_mcp_format_add_untrusted (text, call->marker, b->site,
                                        json_object_get_string_member (halted, "message"));
        }
    }
  else if (json_object_has_member (call->args, "saveAs"))
    save_recipe (call, b, json_object_get_string_member (call->args, "saveAs"), text);
  else if (b->remembered)
    chp_tool_site_recipe_used (call, b->site, b->recipe);

  g_string_append_c (text, '\n');
  g_string_append (text, lines->str);
  if (data->len > 0)
    chp_mcp_format_add_untrusted (text, call->marker, b->site, data->str);
  chp_tool_return_ok (task, text->str, structured,
                      "fewer steps, or narrower params for the API steps");
}

/* ---- the call ---------------------------------------------------------------------------- */

/* @steps (the agent's, or a recipe's) filled and made concrete, then sent. @entries: the site's
 * learned API when already read (a remembered recipe's replay read it with the recipe). */
static void
batch_run (GTask     *task,
           JsonArray *steps,
           JsonArray *entries)
{
  ToolCall *call = call_of (task);
  Batch *b = batch_of (task);
  JsonNode *params_node = json_object_get_member (call->args, "params");
  JsonObject *params = params_node != NULL && JSON_NODE_HOLDS_OBJECT (params_node)
                       ? json_node_get_object (params_node) : NULL;
  gboolean acts = FALSE;
  gboolean api = FALSE;
  Fill f_all = { .params = params };

  b->given = json_array_ref (steps);

  /* Every placeholder is filled before anything is sent: a batch never half-runs for a name,
   * nor for a value params made too big. */
  b->filled = json_array_new ();
  b->what = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < json_array_get_length (steps); i++)
    {
      JsonNode *filled = fill_node (json_array_get_element (steps, i), NULL, NULL, &f_all);
      JsonObject *step;

      if (filled == NULL)
        {
          g_autofree char *message = NULL;

          if (f_all.missing != NULL)
            message = g_strdup_printf ("Step %u uses {{%s}}, which params does not give: "
                                       "nothing ran", i + 1, f_all.missing);
          else if (f_all.too_long != NULL)
            message = g_strdup_printf ("Step %u: filled with params, %s would be longer than "
                                       "%ld characters: nothing ran", i + 1, f_all.too_long,
                                       f_all.limit);
          else
            message = g_strdup_printf ("Step %u: filled with params, the steps would hold more "
                                       "than %d bytes: nothing ran; use fewer or shorter params",
                                       i + 1, BATCH_FILLED_MAX_BYTES);
          g_free (f_all.missing);
          chp_tool_return_error (task, "invalid_params", message, NULL);
          return;
        }
      json_array_add_element (b->filled, filled);
      step = json_node_get_object (filled);
      acts = acts || step_member (step, "act") != NULL;
      api = api || step_member (step, "api") != NULL;
      g_ptr_array_add (b->what, step_what (json_node_get_object (json_array_get_element (steps,
                                                                                         i))));
    }

  if (acts && !chp_tool_floor_allows (task, NULL, TRUE, FALSE))
    return;
  if (api && entries == NULL)
    chp_tool_api_with_entries (task, batch_send);
  else
    batch_send (task, b->site, entries);
}

static void
no_recipe (GTask         *task,
           ChpSiteRecord *record)
{
  Batch *b = batch_of (task);
  g_autoptr(GString) message = g_string_new (NULL);

  g_string_append_printf (message, "There is no recipe \"%s\" for %s in this session or the "
                          "site memory: run the steps with saveAs first", b->recipe, b->site);
  if (record != NULL && record->recipes != NULL && record->recipes->len > 0)
    {
      g_string_append (message, ". Remembered for this site: ");
      chp_mcp_site_card_recipes (message, record, 32);
    }
  chp_tool_return_error (task, "invalid_params", message->str, NULL);
}

/* A recipe this session did not save: the site memory's, read with the site's learned API. */
static void
batch_from_memory (GTask      *task,
                   const char *site,
                   JsonArray  *entries)
{
  Batch *b = batch_of (task);
  ChpSiteRecord *record = chp_tool_api_site_record (task);
  g_autoptr(JsonNode) steps = NULL;

  (void) site;
  for (guint i = 0; record != NULL && record->recipes != NULL && i < record->recipes->len; i++)
    {
      const ChpSiteRecipe *r = g_ptr_array_index (record->recipes, i);

      if (g_str_equal (r->name, b->recipe))
        steps = json_from_string (r->steps, NULL);
    }
  if (steps == NULL || !JSON_NODE_HOLDS_ARRAY (steps) ||
      json_array_get_length (json_node_get_array (steps)) == 0)
    {
      no_recipe (task, record);
      return;
    }
  b->remembered = TRUE;
  batch_run (task, json_node_get_array (steps), entries);
}

void
chp_tool_batch (ToolCall *call)
{
  GTask *task = call->task;
  Batch *b;
  JsonArray *steps = chp_json_get_array (call->args, "steps");

  if (!chp_tool_resolve_tab (task, json_object_get_string_member (call->args, "tab")) ||
      !chp_tool_floor_allows (task, NULL, FALSE, FALSE))
    return;

  b = g_new0 (Batch, 1);
  g_object_set_data_full (G_OBJECT (task), "chp-batch", b, batch_free);
  b->site = chp_tool_api_site_origin (call);
  if (b->site == NULL)
    {
      chp_tool_return_error (task, "stale_document", "The tab's page is gone; take a snapshot",
                             NULL);
      return;
    }

  if (steps == NULL)
    {
      g_autofree char *key = NULL;
      JsonObject *kept;

      b->recipe = json_object_get_string_member (call->args, "recipe");
      key = recipe_key (b->site, b->recipe);
      kept = chp_tool_recall_object (call->context, key);
      steps = kept != NULL ? chp_json_get_array (kept, "steps") : NULL;
      /* Not this session's: a recipe an earlier session left in the site memory, read with
       * the site's entries its API steps need (nothing when learning is off). */
      if (steps == NULL)
        {
          chp_tool_api_with_entries (task, batch_from_memory);
          return;
        }
    }
  batch_run (task, steps, NULL);
}
