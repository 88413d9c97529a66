/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-api.c: browser_api: the site's own API, as its page uses it.
 *
 *   learn   the extension reduces the page's captured XHR/fetch calls to entries (method, path
 *           template, query keys, body shape, credential kind); they join the site's memory
 *           (chp-store-sites.h, through the allowlist) unless the person turned learning off,
 *           and the agent's session keeps them either way
 *   list    the site's entries, with their confidence; no browser needed
 *   route   the one read that matches a hint (chp-mcp-api.c), called: {route: "api", data} on a
 *           2xx, else {route: "ui", why} and the agent drives the page
 *   call    one entry with params (and a body for a write), run inside the page's frame with the
 *           page's own login (extension/lib/capabilities/api.js); a write is held or needs a plan
 *           exactly as the click that would make it
 *
 * Entries come only from what the page itself called; an agent never names a URL. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include "chp-mcp-api.h"
#include "chp-mcp-site-card.h"
#include "chp-store-sites.h"

#define API_LEARN_TIMEOUT_MS  10000
#define API_CALL_TIMEOUT_MS   20000
/* A body an agent writes: a form's worth, never a file. */
#define API_BODY_MAX_BYTES    65536

static const char * const API_METHODS[] = { "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", NULL };

static JsonNode *
parse_or_null (const char *json)
{
  g_autoptr(JsonParser) parser = NULL;

  if (json == NULL || *json == '\0')
    return NULL;
  parser = json_parser_new ();
  if (!json_parser_load_from_data (parser, json, -1, NULL) || json_parser_get_root (parser) == NULL)
    return NULL;
  return json_node_copy (json_parser_get_root (parser));
}

/* Where the agent's session keeps a site's entries (chp_tool_remember_object). */
#define SESSION_KEY_PREFIX "api:"

/* The site an entry belongs to: the origin of the tab's page. */
char *
chp_tool_api_site_origin (ToolCall *call)
{
  g_autofree char *url = chp_tool_tab_url (call);

  return chp_mcp_format_origin (url);
}

/* ---- entries: as the session knows them, as the store keeps them -------------------------- */

/* "bearer", "cookie", "none", "header:X-Csrf-Token" → {kind, header?} */
static JsonObject *
credential_object (const char *stored)
{
  JsonObject *o = json_object_new ();

  if (stored != NULL && g_str_has_prefix (stored, "header:"))
    {
      json_object_set_string_member (o, "kind", "header");
      json_object_set_string_member (o, "header", stored + strlen ("header:"));
    }
  else
    json_object_set_string_member (o, "kind", stored != NULL ? stored : "none");
  return o;
}

/* A learned call's credential as the memory keeps it: a header's name only with kind header.
 * Learn names Authorization for a bearer token too, where such a token always goes; the
 * allowlist refuses that name, and with it the whole update. */
static JsonObject *
learned_credential (JsonObject *learned)
{
  JsonNode *node = json_object_get_member (learned, "credential");
  JsonObject *c = node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node)
                                                                : NULL;
  const char *kind = chp_mcp_json_string (c, "kind", "none");
  g_autofree char *stored = g_str_equal (kind, "header")
                            ? g_strconcat ("header:", chp_mcp_json_string (c, "header", ""), NULL)
                            : g_strdup (kind);

  return credential_object (stored);
}

static JsonObject *
entry_from_endpoint (const ChpSiteEndpoint *e)
{
  JsonObject *o = json_object_new ();
  JsonNode *keys = parse_or_null (e->query_keys);
  JsonNode *body = parse_or_null (e->body_shape);

  json_object_set_string_member (o, "entryId", e->entry_id);
  json_object_set_string_member (o, "method", e->method);
  json_object_set_string_member (o, "origin", e->origin);
  json_object_set_string_member (o, "pathTemplate", e->path_template);
  if (keys != NULL && !JSON_NODE_HOLDS_ARRAY (keys))
    g_clear_pointer (&keys, json_node_unref);
  json_object_set_member (o, "queryKeys",
                          keys != NULL ? keys : chp_json_node_take_array (json_array_new ()));
  json_object_set_member (o, "body", body != NULL ? body : json_node_init_null (json_node_alloc ()));
  json_object_set_object_member (o, "credential", credential_object (e->credential));
  json_object_set_int_member (o, "sampleStatus", e->sample_status);
  json_object_set_double_member (o, "confidence", e->confidence);
  json_object_set_boolean_member (o, "quarantined", e->quarantined);
  return o;
}

/* What the extension learned, as an entry of this site (its id made here, from its shape). */
static JsonObject *
entry_from_learned (JsonObject *learned,
                    const char *site)
{
  JsonObject *o = json_object_new ();
  const char *method = chp_mcp_json_string (learned, "method", "GET");
  const char *template = chp_mcp_json_string (learned, "pathTemplate", "/");
  g_autofree char *id = chp_site_entry_id (site, method, template);
  JsonNode *node;

  json_object_set_string_member (o, "entryId", id);
  json_object_set_string_member (o, "method", method);
  json_object_set_string_member (o, "origin", site);
  json_object_set_string_member (o, "pathTemplate", template);
  node = json_object_get_member (learned, "queryKeys");
  json_object_set_member (o, "queryKeys", node != NULL && JSON_NODE_HOLDS_ARRAY (node)
                                          ? json_node_copy (node)
                                          : chp_json_node_take_array (json_array_new ()));
  json_object_set_member (o, "body", chp_mcp_api_body_copy (json_object_get_member (learned, "body")));
  json_object_set_object_member (o, "credential", learned_credential (learned));
  json_object_set_string_member (o, "frame", chp_mcp_json_string (learned, "frameUrl", site));
  json_object_set_int_member (o, "sampleStatus", chp_mcp_json_int (learned, "sampleStatus", 0));
  json_object_set_double_member (o, "confidence", 0.5);
  json_object_set_boolean_member (o, "quarantined", FALSE);
  return o;
}

/* The session's own entries for @site, kept whatever the learning setting. */
static JsonArray *
session_entries (ToolCall   *call,
                 const char *site)
{
  g_autofree char *key = g_strconcat (SESSION_KEY_PREFIX, site, NULL);
  JsonObject *kept = chp_tool_recall_object (call->context, key);

  return kept != NULL ? chp_json_get_array (kept, "entries") : NULL;
}

static void
session_remember (ToolCall   *call,
                  const char *site,
                  JsonArray  *entries)
{
  g_autofree char *key = g_strconcat (SESSION_KEY_PREFIX, site, NULL);
  JsonObject *kept = json_object_new ();

  json_object_set_array_member (kept, "entries", json_array_ref (entries));
  chp_tool_remember_object (call->context, key, kept);
  json_object_unref (kept);
}

/* The store's entries with the session's added (the store's confidence wins for one id). */
static JsonArray *
all_entries (ToolCall      *call,
             const char    *site,
             ChpSiteRecord *record)
{
  JsonArray *out = json_array_new ();
  g_autoptr(GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
  JsonArray *mine = session_entries (call, site);

  for (guint i = 0; record != NULL && i < record->endpoints->len; i++)
    {
      const ChpSiteEndpoint *e = g_ptr_array_index (record->endpoints, i);

      json_array_add_object_element (out, entry_from_endpoint (e));
      g_hash_table_add (seen, e->entry_id);
    }
  for (guint i = 0; mine != NULL && i < json_array_get_length (mine); i++)
    {
      JsonObject *e = json_array_get_object_element (mine, i);

      if (!g_hash_table_contains (seen, chp_mcp_json_string (e, "entryId", "")))
        json_array_add_object_element (out, json_object_ref (e));
    }
  return out;
}

static void
append_entry_line (GString    *out,
                   JsonObject *e)
{
  JsonArray *keys = chp_json_get_array (e, "queryKeys");
  JsonObject *credential = json_object_get_object_member (e, "credential");
  g_autofree char *template = chp_mcp_format_line (chp_mcp_json_string (e, "pathTemplate", "/"),
                                                   256);

  g_string_append_printf (out, "%s %s %s", chp_mcp_json_string (e, "entryId", ""),
                          chp_mcp_json_string (e, "method", "GET"), template);
  for (guint i = 0; keys != NULL && i < json_array_get_length (keys) && i < 16; i++)
    {
      g_autofree char *k = chp_mcp_format_line (json_array_get_string_element (keys, i), 40);

      g_string_append_printf (out, "%s%s", i == 0 ? " ?" : ",", k);
    }
  g_string_append_printf (out, " (%s", credential != NULL
                                       ? chp_mcp_json_string (credential, "kind", "none")
                                       : "none");
  if (chp_mcp_json_int (e, "sampleStatus", 0) > 0)
    g_string_append_printf (out, ", %" G_GINT64_FORMAT, chp_mcp_json_int (e, "sampleStatus", 0));
  g_string_append_printf (out, ", confidence %.2f",
                          json_object_has_member (e, "confidence")
                          ? json_object_get_double_member (e, "confidence") : 0.5);
  if (chp_json_get_bool (e, "quarantined", FALSE))
    g_string_append (out, ", quarantined: it stopped answering as learned");
  g_string_append (out, ")\n");
}

static void
return_entries (GTask      *task,
                const char *site,
                JsonArray  *entries,
                const char *note)
{
  ToolCall *call = call_of (task);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) lines = g_string_new (NULL);
  g_autofree char *tab = chp_tool_tab_name (call);
  JsonObject *structured = json_object_new ();
  guint n = entries != NULL ? json_array_get_length (entries) : 0;

  for (guint i = 0; i < n; i++)
    append_entry_line (lines, json_array_get_object_element (entries, i));
  g_string_append_printf (text, "%u API entr%s of %s (the calls its page made). Call a read with "
                          "browser_api route {hint} or call {entryId, params}; a write is held "
                          "for the person as the click that makes it would be.", n,
                          n == 1 ? "y" : "ies", site);
  if (note != NULL)
    g_string_append_printf (text, " %s", note);
  g_string_append_c (text, '\n');
  if (n > 0)
    chp_mcp_format_add_untrusted (text, call->marker, site, lines->str);
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_string_member (structured, "site", site);
  json_object_set_int_member (structured, "count", n);
  chp_tool_return_ok (task, text->str, structured, NULL);
}

/* ---- learn ----------------------------------------------------------------------------- */

static gboolean
has_entry (JsonArray  *entries,
           const char *method,
           const char *template)
{
  for (guint i = 0; i < json_array_get_length (entries); i++)
    {
      JsonObject *e = json_array_get_object_element (entries, i);

      if (g_strcmp0 (chp_mcp_json_string (e, "method", NULL), method) == 0 &&
          g_strcmp0 (chp_mcp_json_string (e, "pathTemplate", NULL), template) == 0)
        return TRUE;
    }
  return FALSE;
}

/* A resource the page writes by its own path (PUT /recipes/default/tiddlers/{tiddler}) is one
 * it can read at that path: a GET there is added, never seen (sample status 0), so that an agent
 * can read what the page saves. It is a read, judged by the floor and the grant as any other; if
 * the site does not answer it, two misses quarantine it. */
static void
infer_reads (JsonArray  *mine,
             const char *site)
{
  guint n = json_array_get_length (mine);

  for (guint i = 0; i < n; i++)
    {
      JsonObject *e = json_array_get_object_element (mine, i);
      const char *method = chp_mcp_json_string (e, "method", "GET");
      const char *template = chp_mcp_json_string (e, "pathTemplate", "/");
      g_auto(GStrv) slots = chp_mcp_api_template_slots (template);
      g_autoptr(JsonObject) learned = NULL;

      if ((g_strcmp0 (method, "PUT") != 0 && g_strcmp0 (method, "PATCH") != 0 &&
           g_strcmp0 (method, "DELETE") != 0) || slots[0] == NULL ||
          has_entry (mine, "GET", template))
        continue;
      /* No query keys, no body, sample status 0: entry_from_learned()'s defaults. */
      learned = json_object_new ();
      json_object_set_string_member (learned, "method", "GET");
      json_object_set_string_member (learned, "pathTemplate", template);
      json_object_set_object_member (learned, "credential", learned_credential (e));
      json_object_set_string_member (learned, "frameUrl", chp_mcp_json_string (e, "frame", site));
      json_array_add_object_element (mine, entry_from_learned (learned, site));
    }
}

/* A call waiting for the store: what was learned being merged, or the entries being read
 * (@then runs on them). */
typedef struct
{
  GTask       *task;     /* owned */
  char        *site;
  ChpApiThen   then;
} Loading;

static void
loading_free (Loading *l)
{
  g_object_unref (l->task);
  g_free (l->site);
  g_free (l);
}

/* The update the store takes (through the allowlist): the entries' shapes, never values. */
static JsonObject *
update_of (const char *site,
           JsonArray  *entries)
{
  static const char * const members[] = {
    "method", "pathTemplate", "queryKeys", "body", "credential", "frame", "sampleStatus", NULL,
  };
  JsonObject *update = json_object_new ();
  JsonArray *endpoints = json_array_new ();

  json_object_set_string_member (update, "origin", site);
  for (guint i = 0; i < json_array_get_length (entries); i++)
    {
      JsonObject *entry = json_array_get_object_element (entries, i);
      JsonObject *e = json_object_new ();

      for (guint m = 0; members[m] != NULL; m++)
        json_object_set_member (e, members[m],
                                json_node_copy (json_object_get_member (entry, members[m])));
      json_object_set_null_member (e, "response");
      json_array_add_object_element (endpoints, e);
    }
  json_object_set_array_member (update, "endpoints", endpoints);
  return update;
}

static void
merged_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Loading *l = user_data;
  ToolCall *call = call_of (l->task);
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpSiteRecord) record = chp_store_merge_site_finish (CHP_STORE (source), result,
                                                                 &error);
  g_autoptr(JsonArray) entries = NULL;
  g_autofree char *note = NULL;

  if (record == NULL)
    {
      /* Refused by the allowlist (or a full disk): the session still has them; the person's
       * memory of the site gains nothing, and the agent is told which field it was. */
      g_message ("site memory: nothing kept of %s: %s", l->site, error->message);
      note = g_strdup_printf ("Chaperone did not keep them for later visits: %s.", error->message);
    }
  entries = all_entries (call, l->site, record);
  return_entries (l->task, l->site, entries, note);
  loading_free (l);
}

static void
learned_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) answer = chp_tool_browser_answer (task, source, result, "Learning");
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autoptr(JsonArray) mine = NULL;
  g_autofree char *site = NULL;
  JsonArray *learned;
  Loading *l;

  if (answer == NULL)
    return;
  site = chp_tool_api_site_origin (call);
  learned = chp_json_get_array (answer, "entries");
  if (site == NULL || engine == NULL)
    {
      chp_tool_return_error (task, "stale_document", "The tab's page is gone; take a snapshot",
                             NULL);
      return;
    }

  /* The page's own site's calls; another site's API (a CDN, an analytics host) is not this
   * site's to remember, and its credentials are not the page's to lend. */
  mine = json_array_new ();
  for (guint i = 0; learned != NULL && i < json_array_get_length (learned); i++)
    {
      JsonNode *node = json_array_get_element (learned, i);

      /* OPTIONS (a preflight, a probe) and other methods are no call an agent makes. */
      if (JSON_NODE_HOLDS_OBJECT (node) &&
          g_strcmp0 (chp_mcp_json_string (json_node_get_object (node), "origin", site), site) == 0 &&
          g_strv_contains (API_METHODS, chp_mcp_json_string (json_node_get_object (node), "method",
                                                             "")))
        json_array_add_object_element (mine, entry_from_learned (json_node_get_object (node), site));
    }
  infer_reads (mine, site);
  session_remember (call, site, mine);

  if (json_array_get_length (mine) == 0 || !chp_engine_get_site_learning (engine))
    {
      g_autoptr(JsonArray) entries = all_entries (call, site, NULL);

      return_entries (task, site, entries,
                      chp_engine_get_site_learning (engine)
                      ? NULL : "Learning is off in Chaperone's preferences: they last as long as "
                               "this session.");
      return;
    }

  l = g_new0 (Loading, 1);
  l->task = g_steal_pointer (&task);
  l->site = g_steal_pointer (&site);
  {
    g_autoptr(JsonObject) update = update_of (l->site, mine);
    const char *document = chp_mcp_json_string (answer, "documentId", NULL);

    chp_store_merge_site_async (chp_engine_get_store (engine), update, document,
                                g_get_real_time () / 1000, NULL, merged_cb, l);
  }
}

/* ---- the entries a call works with ------------------------------------------------------ */

static void
loaded_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Loading *l = user_data;
  ToolCall *call = call_of (l->task);
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpSiteRecord) record = chp_store_load_site_finish (CHP_STORE (source), result,
                                                                &error);
  g_autoptr(JsonArray) entries = NULL;

  if (record == NULL && !g_error_matches (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND))
    g_message ("site memory: %s could not be read: %s", l->site, error->message);
  entries = all_entries (call, l->site, record);
  /* The rest of the record (its recipes) for whoever reads on: chp_tool_api_site_record(). */
  if (record != NULL)
    g_object_set_data_full (G_OBJECT (l->task), "chp-site-record", g_steal_pointer (&record),
                            (GDestroyNotify) chp_site_record_free);
  l->then (l->task, l->site, entries);
  loading_free (l);
}

/* The site's entries, from its memory (when learning is on) and this session, then @then
 * (browser_batch's api steps use them too). */
void
chp_tool_api_with_entries (GTask      *task,
                           ChpApiThen  then)
{
  ToolCall *call = call_of (task);
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autofree char *site = chp_tool_api_site_origin (call);
  Loading *l;

  if (engine == NULL || site == NULL)
    {
      chp_tool_return_error (task, "stale_document", "The tab's page is gone; take a snapshot",
                             NULL);
      return;
    }
  if (!chp_engine_get_site_learning (engine))
    {
      g_autoptr(JsonArray) entries = all_entries (call, site, NULL);

      then (task, site, entries);
      return;
    }
  l = g_new0 (Loading, 1);
  l->task = g_object_ref (task);
  l->site = g_steal_pointer (&site);
  l->then = then;
  chp_store_load_site_async (chp_engine_get_store (engine), l->site, NULL, loaded_cb, l);
}

/* The site's record as chp_tool_api_with_entries() read it, or NULL (nothing remembered, or
 * learning is off). */
ChpSiteRecord *
chp_tool_api_site_record (GTask *task)
{
  return g_object_get_data (G_OBJECT (task), "chp-site-record");
}

static void
list_entries (GTask      *task,
              const char *site,
              JsonArray  *entries)
{
  ChpSiteRecord *record = chp_tool_api_site_record (task);
  g_autoptr(GString) note = g_string_new (NULL);

  if (json_array_get_length (entries) == 0)
    g_string_append (note, "None yet: browser_api learn, once the page has loaded what you need.");
  /* Recipe names and param names have fixed forms ([a-z0-9-], [A-Za-z0-9_]): nothing of a page. */
  if (record != NULL && record->recipes != NULL && record->recipes->len > 0)
    {
      g_string_append (note, g_str_equal (note->str, "") ? "" : " ");
      g_string_append (note, "Recipes remembered for this site (browser_batch {tab, recipe, "
                       "params} replays one): ");
      chp_mcp_site_card_recipes (note, record, 32);
      g_string_append_c (note, '.');
    }
  return_entries (task, site, entries, note->len > 0 ? note->str : NULL);
}

/* ---- route and call ---------------------------------------------------------------------- */

static void
return_ui (GTask      *task,
           const char *why)
{
  ToolCall *call = call_of (task);
  g_autofree char *text = g_strdup_printf ("Route: ui. %s. Use the page (browser_snapshot, "
                                           "browser_act).", why);
  JsonObject *structured = json_object_new ();

  json_object_set_string_member (structured, "route", "ui");
  json_object_set_string_member (structured, "why", why);
  if (call->api_entry != NULL)
    json_object_set_string_member (structured, "entryId",
                                   chp_mcp_json_string (call->api_entry, "entryId", ""));
  chp_tool_return_ok (task, text, structured, NULL);
}

static gboolean
is_route (ToolCall *call)
{
  return g_strcmp0 (json_object_get_string_member (call->args, "action"), "route") == 0;
}

static void
result_recorded_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpSiteEndpoint) endpoint =
    chp_store_site_endpoint_result_finish (CHP_STORE (source), result, &error);

  /* An entry this session learned but the memory did not keep (refused, forgotten) has no
   * confidence to move: NOT_FOUND is no failure. */
  if (endpoint == NULL && !g_error_matches (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND))
    g_message ("site memory: a call's outcome was not kept: %s", error->message);
}

/* Whether a reply says nothing of the entry as learned. A 2xx says it works; no reply, a 404,
 * 405 or 410 (the path or its method is gone) or a 5xx is a miss. The rest are about the call:
 * a 401, 403 or 407 the person signed out or not allowed, a 429 the site asking to slow down,
 * a 400, 409 or 422 the agent's params. As misses, two of them quarantined a healthy entry. */
static gboolean
says_nothing (gint64 status)
{
  return status >= 300 && status < 500 && status != 404 && status != 405 && status != 410;
}

/* A success's reply as the allowlist takes it: a list ({array, item}, a top-level JSON array) as
 * its item's shape under "[]" (a shape's top holds members); no content type (a 204): none. */
static JsonObject *
response_of (JsonObject *answer)
{
  JsonNode *shape = json_object_get_member (answer, "shape");
  const char *type = chp_mcp_json_string (answer, "contentType", "");
  JsonObject *response;
  JsonObject *list;

  if (shape == NULL || !JSON_NODE_HOLDS_OBJECT (shape) || *type == '\0')
    return NULL;
  response = json_object_new ();
  json_object_set_string_member (response, "contentType", type);
  if (chp_mcp_json_int (json_node_get_object (shape), "array", -1) < 0)
    {
      json_object_set_member (response, "shape", chp_mcp_api_shape_copy (shape, 0));
      return response;
    }
  list = json_object_new ();
  json_object_set_member (list, "[]", chp_mcp_api_shape_copy (
                            json_object_get_member (json_node_get_object (shape), "item"), 1));
  json_object_set_object_member (response, "shape", list);
  return response;
}

/* Confidence up on a 2xx, down on a miss (quarantined after two in a row): says_nothing(). */
void
chp_tool_api_record (ToolCall   *call,
                     const char *entry_id,
                     gboolean    success,
                     gint        status,
                     JsonObject *answer)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autoptr(JsonObject) response = NULL;

  if (engine == NULL || !chp_engine_get_site_learning (engine) || entry_id == NULL ||
      says_nothing (status))
    return;
  if (success && answer != NULL)
    response = response_of (answer);
  chp_store_site_endpoint_result_async (chp_engine_get_store (engine),
                                        entry_id, success, status, response,
                                        g_get_real_time () / 1000,
                                        NULL, result_recorded_cb, NULL);
}

static void
results_recorded_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  if (!chp_store_write_finish (CHP_STORE (source), result, &error))
    g_message ("site memory: a batch's outcomes were not kept: %s", error->message);
}

/* browser_batch's API steps, each moving its entry's confidence as a single call's does, in
 * one write (@uses: ChpSiteUse, in step order; those that say nothing are dropped from it). */
void
chp_tool_api_record_uses (ToolCall *call,
                          GArray   *uses)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);

  for (guint i = uses->len; i > 0; i--)
    if (says_nothing (g_array_index (uses, ChpSiteUse, i - 1).status))
      g_array_remove_index (uses, i - 1);
  if (engine == NULL || !chp_engine_get_site_learning (engine) || uses->len == 0)
    return;
  chp_store_site_endpoint_results_async (chp_engine_get_store (engine),
                                         (const ChpSiteUse *) (gpointer) uses->data, uses->len,
                                         g_get_real_time () / 1000, NULL, results_recorded_cb,
                                         NULL);
}

static void
called_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_tool_reply_finish (result, &error);
  g_autoptr(GString) text = NULL;
  g_autofree char *data = NULL;
  JsonObject *answer;
  JsonObject *structured;
  JsonNode *json;
  gint64 status;
  gboolean ok;

  (void) source;
  /* A route that the browser refused (the floor, a page that went, a call it will not make)
   * says ui with the refusal; a Stop is never a reason to try the page instead. */
  if (node == NULL && is_route (call) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) &&
      g_strcmp0 (chp_protocol_error_code_of (error), "stopped") != 0)
    {
      g_autofree char *why = g_strdup_printf ("the call was refused: %s", error->message);

      return_ui (task, why);
      return;
    }
  if (node == NULL)
    {
      chp_tool_return_gerror (task, error, "The API call");
      return;
    }
  answer = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
  if (answer == NULL)
    {
      chp_tool_return_error (task, "internal", "The browser's answer to the call is malformed",
                             NULL);
      return;
    }
  if (chp_mcp_json_bool (answer, "held"))
    {
      chp_tool_return_held (task, answer, "api", chp_tool_reply_get_rule_run (result));
      return;
    }

  status = chp_mcp_json_int (answer, "status", 0);
  ok = status >= 200 && status < 300;
  chp_tool_api_record (call, chp_mcp_json_string (call->api_entry, "entryId", NULL), ok, status,
                       answer);
  if (!ok && is_route (call))
    {
      g_autofree char *why = g_strdup_printf ("GET %s answered %" G_GINT64_FORMAT,
                                              chp_mcp_json_string (call->api_entry,
                                                                   "pathTemplate", ""), status);

      return_ui (task, why);
      return;
    }

  structured = json_object_new ();
  if (is_route (call))
    json_object_set_string_member (structured, "route", "api");
  json_object_set_string_member (structured, "entryId",
                                 chp_mcp_json_string (call->api_entry, "entryId", ""));
  json_object_set_string_member (structured, "pathTemplate",
                                 chp_mcp_json_string (call->api_entry, "pathTemplate", ""));
  json_object_set_int_member (structured, "status", status);
  if (chp_mcp_json_bool (answer, "truncated"))
    json_object_set_boolean_member (structured, "truncated", TRUE);
  /* Said in few words: an agent reading ten entities reads this line ten times. The entry and
   * its template are in structuredContent. */
  text = g_string_new (NULL);
  {
    const char *type = chp_mcp_json_string (answer, "contentType", "no content type");

    g_string_append_printf (text, "%" G_GINT64_FORMAT " %s.", status,
                            g_str_has_suffix (type, "/json") || g_str_has_suffix (type, "+json")
                            ? "JSON" : type);
  }
  /* A write a plan covered spends its step, as the click would have. */
  chp_tool_plan_step_used (call, answer, structured, text);
  if (chp_mcp_json_bool (answer, "truncated"))
    g_string_append (text, " The browser read only its first MiB.");
  g_string_append_c (text, '\n');

  json = json_object_get_member (answer, "json");
  if (json != NULL)
    data = json_to_string (json, FALSE);
  else if (chp_mcp_json_string (answer, "text", NULL) != NULL)
    data = g_strdup (chp_mcp_json_string (answer, "text", NULL));
  if (data != NULL && *data != '\0')
    chp_mcp_format_add_untrusted (text, call->marker,
                                  chp_mcp_json_string (call->api_entry, "origin", "the site"),
                                  data);
  chp_tool_return_ok (task, text->str, structured,
                      "pass narrower params (a filter or an id) to get less");
}

static void
make_call (GTask      *task,
           const char *site,
           JsonObject *entry)
{
  ToolCall *call = call_of (task);
  g_autoptr(GError) error = NULL;
  JsonObject *params = NULL;
  JsonNode *node = json_object_get_member (call->args, "params");
  JsonNode *body = json_object_get_member (call->args, "body");
  JsonNode *wire;
  JsonObject *o;
  JsonNode *allow = NULL;
  g_autofree char *url = NULL;
  gboolean read;

  (void) site;
  call->api_entry = json_object_ref (entry);
  g_free (call->api_path);
  call->api_path = g_strdup (chp_mcp_json_string (entry, "pathTemplate", "/"));
  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    params = json_node_get_object (node);
  url = chp_mcp_api_build_url (entry, params, &error);
  if (url == NULL)
    {
      if (is_route (call))
        return_ui (task, error->message);
      else
        chp_tool_return_error (task, "invalid_params", error->message, NULL);
      return;
    }

  read = chp_mcp_api_is_read (entry);
  if (read && body != NULL)
    {
      chp_tool_return_error (task, "invalid_params", "A read (GET) takes no body", NULL);
      return;
    }
  /* A write is an act: the floor's hands-only pages take none. */
  if (!read && !chp_tool_floor_allows (task, NULL, TRUE, FALSE))
    return;

  wire = chp_tool_params_new ("tabId", chp_tool_int_node (call->tab_id),
                              "frameId", chp_tool_int_node (0),
                              "method", chp_tool_string_node (chp_mcp_json_string (entry, "method",
                                                                                   "GET")),
                              "url", chp_tool_string_node (url),
                              NULL);
  o = json_node_get_object (wire);
  json_object_set_object_member (o, "credential",
                                 json_object_ref (json_object_get_object_member (entry,
                                                                                 "credential")));
  if (body != NULL)
    json_object_set_member (o, "body", json_node_copy (body));
  /* A route only reads: a GET that deletes or sends (…/delete/5), which only the extension can
   * tell, is refused there rather than held, and the route says ui. */
  if (is_route (call))
    json_object_set_boolean_member (o, "readOnly", TRUE);
  else if (!read && (allow = chp_tool_plan_allowance (call)) != NULL)
    json_object_set_member (o, "allow", allow);
  chp_tool_browser_call (task, "browser.api.call", wire, API_CALL_TIMEOUT_MS, called_cb);
}

static void
route_entries (GTask      *task,
               const char *site,
               JsonArray  *entries)
{
  ToolCall *call = call_of (task);
  JsonNode *node = json_object_get_member (call->args, "params");
  g_autofree char *why = NULL;
  JsonObject *chosen;

  chosen = chp_mcp_api_route (entries, chp_mcp_json_string (call->args, "hint", ""),
                              node != NULL && JSON_NODE_HOLDS_OBJECT (node)
                              ? json_node_get_object (node) : NULL, &why);
  if (chosen == NULL)
    {
      if (json_array_get_length (entries) == 0)
        {
          g_free (why);
          why = g_strdup ("nothing is learned of this site yet (browser_api learn once the page "
                          "has loaded)");
        }
      return_ui (task, why);
      return;
    }
  make_call (task, site, chosen);
}

static void
call_entries (GTask      *task,
              const char *site,
              JsonArray  *entries)
{
  ToolCall *call = call_of (task);
  const char *id = chp_mcp_json_string (call->args, "entryId", "");

  for (guint i = 0; i < json_array_get_length (entries); i++)
    {
      JsonObject *e = json_array_get_object_element (entries, i);

      if (g_strcmp0 (chp_mcp_json_string (e, "entryId", NULL), id) == 0)
        {
          make_call (task, site, e);
          return;
        }
    }
  chp_tool_return_error (task, "invalid_params", "No learned entry of this site has that id: "
                         "browser_api list shows them (an agent calls only what the page itself "
                         "called)", NULL);
}

void
chp_tool_api (ToolCall *call)
{
  GTask *task = call->task;
  const char *action = json_object_get_string_member (call->args, "action");
  JsonNode *body = json_object_get_member (call->args, "body");

  if (!chp_tool_resolve_tab (task, json_object_get_string_member (call->args, "tab")))
    return;
  /* A blind page gives nothing, not even its memory; a write is judged again as an act. */
  if (!chp_tool_floor_allows (task, NULL, FALSE, FALSE))
    return;
  if (body != NULL)
    {
      g_autofree char *json = json_to_string (body, FALSE);

      if (strlen (json) > API_BODY_MAX_BYTES)
        {
          chp_tool_return_error (task, "invalid_params", "body is larger than 64 KiB", NULL);
          return;
        }
    }

  if (g_str_equal (action, "learn"))
    chp_tool_browser_call (task, "browser.api.learn",
                           chp_tool_params_new ("tabId", chp_tool_int_node (call->tab_id),
                                                "frameId", chp_tool_int_node (0), NULL),
                           API_LEARN_TIMEOUT_MS, learned_cb);
  else if (g_str_equal (action, "list"))
    chp_tool_api_with_entries (task, list_entries);
  else if (g_str_equal (action, "route"))
    chp_tool_api_with_entries (task, route_entries);
  else
    chp_tool_api_with_entries (task, call_entries);
}
