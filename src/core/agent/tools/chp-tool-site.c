/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-site.c: what an agent's snapshots teach the site memory, and what it gives back.
 *
 * Teaches (when the person's "Learn how sites work" is on): a visit, one per document; the page's
 * named controls (buttons, tabs, menu items, fields) — the store keeps a label only once it was
 * seen on two visits and never one that carries the person's data (chp-store-sites-merge.c, the
 * allowlist); its page headings, the same way, and from them how to tell the page is ready; and
 * the path where sign-in shows, templated. Links are not taught: lists of records (mails,
 * contacts, rows) are links, and their names are the person's data; nor is a control or a
 * heading the browser saw inside a record list (inList: a list item, a data row, a feed's
 * article), whose "Call Alice Smith" comes back on every reload.
 * Gives back: the arrival card (chp-mcp-site-card.c) at an agent's first snapshot of a
 * remembered site in its session. All of it is the store's, on its thread; nothing here waits on
 * the network. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include "chp-mcp-site-card.h"
#include "chp-site-allowlist.h"
#include "chp-store-sites.h"

/* At most this many controls a page teaches at once: enough for a site's toolbar and forms. */
#define LEARN_MAX_CONTROLS 40
#define LEARN_MAX_LABEL    60
/* Page headings (level 1 or 2) a page teaches, in its order: the ready marker is among them. */
#define LEARN_MAX_HEADINGS 3

static const char * const LEARNED_ROLES[] = {
  "button", "tab", "menuitem", "checkbox", "radio", "switch", "combobox", "searchbox", "textbox",
  NULL,
};

static ChpEngine *
learning_engine (ToolCall *call)
{
  ChpEngine *engine = g_weak_ref_get (&call->self->engine);

  if (engine != NULL && !chp_engine_get_site_learning (engine))
    g_clear_object (&engine);
  return engine;
}

/* The site memory's writes that no agent waits for: a site nothing was learned of, or one the
 * person just forgot, is not remembered (NOT_FOUND), which is no failure; anything else (an
 * allowlist refusal names the field) is logged with @user_data, what was lost. */
static void
merged_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpSiteRecord) record = chp_store_merge_site_finish (CHP_STORE (source), result,
                                                                 &error);

  if (record == NULL && !g_error_matches (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND))
    g_message ("site memory: %s: %s", (const char *) user_data, error->message);
}

static void
written_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  if (!chp_store_write_finish (CHP_STORE (source), result, &error) &&
      !g_error_matches (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND))
    g_message ("site memory: %s: %s", (const char *) user_data, error->message);
}

/* ---- ready ---------------------------------------------------------------------------------
 * How to tell the site's page is ready: a page heading (level 1 or 2) this page shows that the
 * memory saw on an earlier visit too. Headings are taught as controls of role "heading", so the
 * two-visit rule holds them as it holds labels (a keyed hash until the second visit; never one
 * that carries the person's data), and a heading that is a record's title (today's newest mail)
 * does not come back on the next visit. The first such heading in the page's order is the
 * marker; one already kept stays while the page still shows it. */

typedef struct
{
  char      *origin;
  GPtrArray *headings;  /* char *: this page's, in its order */
} ReadyLearn;

static void
ready_learn_free (ReadyLearn *r)
{
  g_free (r->origin);
  g_ptr_array_unref (r->headings);
  g_free (r);
}

static gboolean
heading_known (const ChpSiteRecord *record,
               const char          *text)
{
  for (guint i = 0; i < record->controls->len; i++)
    {
      const ChpSiteControl *c = g_ptr_array_index (record->controls, i);

      if (c->label != NULL && g_str_equal (c->role, "heading") && g_str_equal (c->label, text))
        return TRUE;
    }
  return FALSE;
}

/* The heading the record already keeps as ready, or NULL. */
static char *
ready_heading (const ChpSiteRecord *record)
{
  g_autoptr(JsonNode) node = record->info->ready != NULL
                             ? json_from_string (record->info->ready, NULL) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return NULL;
  return g_strdup (json_object_get_string_member_with_default (json_node_get_object (node),
                                                               "heading", NULL));
}

static void
ready_merged_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  ReadyLearn *r = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpSiteRecord) record = chp_store_merge_site_finish (CHP_STORE (source), result,
                                                                 &error);
  g_autofree char *kept = NULL;
  const char *marker = NULL;

  if (record == NULL)
    {
      if (!g_error_matches (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND))
        g_message ("site memory: a page taught nothing: %s", error->message);
      ready_learn_free (r);
      return;
    }
  kept = ready_heading (record);
  for (guint i = 0; i < r->headings->len && marker == NULL; i++)
    {
      const char *h = g_ptr_array_index (r->headings, i);

      if (g_strcmp0 (h, kept) == 0)
        break;
      if (heading_known (record, h))
        marker = h;
    }
  if (marker != NULL)
    {
      g_autoptr(JsonObject) update = json_object_new ();
      JsonObject *ready = json_object_new ();

      json_object_set_string_member (update, "origin", r->origin);
      json_object_set_string_member (ready, "heading", marker);
      json_object_set_object_member (update, "ready", ready);
      chp_store_merge_site_async (CHP_STORE (source), update, NULL, g_get_real_time () / 1000,
                                  NULL, merged_cb, (gpointer) "a page taught nothing");
    }
  ready_learn_free (r);
}

/* Up to LEARN_MAX_HEADINGS of the page's headings of level 1 or 2, each as a control of role
 * "heading" in @controls and its text in @headings. */
static void
add_headings (JsonObject *answer,
              JsonArray  *controls,
              GPtrArray  *headings)
{
  JsonArray *list = chp_json_get_array (answer, "headings");

  for (guint i = 0; list != NULL && i < json_array_get_length (list) &&
                    headings->len < LEARN_MAX_HEADINGS; i++)
    {
      JsonNode *node = json_array_get_element (list, i);
      JsonObject *h = JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
      const char *text = h != NULL ? chp_mcp_json_string (h, "text", NULL) : NULL;
      JsonObject *c;

      if (text == NULL || chp_mcp_json_int (h, "level", 9) > 2 || *text == '\0' ||
          chp_mcp_json_bool (h, "inList") ||
          g_utf8_strlen (text, -1) > LEARN_MAX_LABEL || chp_site_allowlist_label_is_personal (text) ||
          g_ptr_array_find_with_equal_func (headings, text, g_str_equal, NULL))
        continue;
      g_ptr_array_add (headings, g_strdup (text));
      c = json_object_new ();
      json_object_set_string_member (c, "role", "heading");
      json_object_set_string_member (c, "label", text);
      json_object_set_null_member (c, "key");
      json_object_set_boolean_member (c, "inList", FALSE);
      json_array_add_object_element (controls, c);
    }
}

/* The page's named controls and page headings, as an update of its site (NULL when it names
 * none); @headings collects the headings' texts. */
static JsonObject *
controls_update (const char *origin,
                 JsonObject *answer,
                 GPtrArray  *headings)
{
  JsonArray *nodes = chp_json_get_array (answer, "nodes");
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  JsonObject *update;
  JsonArray *controls = json_array_new ();

  for (guint i = 0; nodes != NULL && i < json_array_get_length (nodes) &&
                    json_array_get_length (controls) < LEARN_MAX_CONTROLS; i++)
    {
      JsonNode *node = json_array_get_element (nodes, i);
      JsonObject *n, *c;
      const char *role, *name;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        continue;
      n = json_node_get_object (node);
      role = chp_mcp_json_string (n, "role", NULL);
      name = chp_mcp_json_string (n, "name", NULL);
      /* A record's control is never sent: the store would not keep it, and a list's rows would
       * crowd the page's own controls out of LEARN_MAX_CONTROLS. */
      if (role == NULL || name == NULL || !g_strv_contains (LEARNED_ROLES, role) ||
          chp_mcp_json_bool (n, "inList") ||
          *name == '\0' || g_utf8_strlen (name, -1) > LEARN_MAX_LABEL ||
          chp_site_allowlist_label_is_personal (name) || strchr (name, '[') != NULL)
        continue;
      if (!g_hash_table_add (seen, g_strconcat (role, "\n", name, NULL)))
        continue;
      c = json_object_new ();
      json_object_set_string_member (c, "role", role);
      json_object_set_string_member (c, "label", name);
      json_object_set_null_member (c, "key");
      json_object_set_boolean_member (c, "inList", FALSE);
      json_array_add_object_element (controls, c);
    }
  add_headings (answer, controls, headings);
  if (json_array_get_length (controls) == 0)
    {
      json_array_unref (controls);
      return NULL;
    }
  update = json_object_new ();
  json_object_set_string_member (update, "origin", origin);
  json_object_set_array_member (update, "controls", controls);
  return update;
}

/* The origin whose card the call holds, on its task: the page the grant last recorded, which the
 * browser's answer may no longer show. */
#define CARD_ORIGIN "chp-site-card-origin"

/* The card goes in front of the page only when the page is its site's: the tab may have gone
 * to another site between the grant's record and the browser's read. Then it is dropped, and
 * its site's card counts as not shown yet: its own site's next snapshot shows it. */
static void
drop_foreign_card (ToolCall   *call,
                   JsonObject *answer)
{
  const char *carded = g_object_get_data (G_OBJECT (call->task), CARD_ORIGIN);
  g_autofree char *origin = chp_mcp_format_origin (chp_mcp_json_string (answer, "url", NULL));
  g_autofree char *key = NULL;

  if (carded == NULL || g_strcmp0 (origin, carded) == 0)
    return;
  g_clear_pointer (&call->site_card, g_free);
  key = g_strconcat ("card:", carded, NULL);
  chp_mcp_context_forget (call->context, key);
}

/*
 * chp_tool_site_learn_page:
 * @answer: the browser's (redacted) snapshot of the tab's page
 *
 * A visit to the page's site, once per document, and its controls for the memory. A site the
 * memory does not know yet starts being remembered only through what it teaches (its controls or
 * its API), never by a visit alone. The arrival card the call holds stays only when it is the
 * page's own site's (drop_foreign_card()), whether learning is on or not.
 */
void
chp_tool_site_learn_page (ToolCall   *call,
                          JsonObject *answer,
                          gint64      frame)
{
  g_autoptr(ChpEngine) engine = learning_engine (call);
  g_autofree char *origin = NULL;
  g_autofree char *key = NULL;
  g_autoptr(JsonObject) update = NULL;
  g_autoptr(GPtrArray) headings = NULL;
  const char *document = chp_mcp_json_string (answer, "documentId", NULL);
  JsonObject *seen;

  drop_foreign_card (call, answer);
  if (engine == NULL || frame != 0 || document == NULL)
    return;
  /* Once per document and session: a page read ten times is one visit. */
  key = g_strconcat ("learned:", document, NULL);
  if (chp_tool_recall_object (call->context, key) != NULL)
    return;
  origin = chp_mcp_format_origin (chp_mcp_json_string (answer, "url", NULL));
  if (origin == NULL)
    return;
  seen = json_object_new ();
  chp_tool_remember_object (call->context, key, seen);
  json_object_unref (seen);

  headings = g_ptr_array_new_with_free_func (g_free);
  update = controls_update (origin, answer, headings);
  if (update != NULL)
    {
      ReadyLearn *r = g_new0 (ReadyLearn, 1);

      r->origin = g_strdup (origin);
      r->headings = g_steal_pointer (&headings);
      chp_store_merge_site_async (chp_engine_get_store (engine), update, document,
                                  g_get_real_time () / 1000, NULL, ready_merged_cb, r);
    }
  else
    chp_store_site_visit_async (chp_engine_get_store (engine), origin, document,
                                g_get_real_time () / 1000, NULL, written_cb,
                                (gpointer) "a visit was not counted");
}

/* Where sign-in shows, templated as learned API paths are (extension/lib/api-learn.js): each
 * segment that is not a word — a number, an id, a slug with digits, anything escaped — is
 * {id}. A page's path names the person (/in/jane-doe-4a5b) or holds a one-time code
 * (/invite/aB3dE5g) as often as the page; words and a version (/ap/signin, /wp-login.php,
 * /v2/login) say where sign-in is. */
static char *
signin_path (GUri *uri)
{
  g_auto(GStrv) segments = g_strsplit (g_uri_get_path (uri), "/", -1);
  g_autofree char *path = NULL;

  for (guint i = 1; segments[i] != NULL; i++)
    if (*segments[i] != '\0' &&
        !g_regex_match_simple ("^(?:[A-Za-z]+(?:[-_][A-Za-z]+)*(?:\\.[a-z]{1,5})?|v[0-9]{1,3})$",
                               segments[i], 0, 0))
      {
        g_free (segments[i]);
        segments[i] = g_strdup ("{id}");
      }
  path = g_strjoinv ("/", segments);
  return *path == '/' ? g_steal_pointer (&path) : g_strdup ("/");
}

/* The page the floor just refused because it asks for a password: its site learns where sign-in
 * shows (the path, templated; never the page), unless the site is one the floor keeps blind
 * anyway. */
void
chp_tool_site_learn_signin (ToolCall   *call,
                            JsonObject *answer,
                            gint64      frame)
{
  g_autoptr(ChpEngine) engine = learning_engine (call);
  const char *url = chp_mcp_json_string (answer, "url", NULL);
  g_autoptr(GUri) uri = url != NULL ? g_uri_parse (url, G_URI_FLAGS_NONE, NULL) : NULL;
  g_autofree char *origin = NULL;
  g_autofree char *path = NULL;
  g_autoptr(JsonObject) update = NULL;
  JsonObject *signin;
  JsonArray *signals;
  const char *reason = NULL;

  if (engine == NULL || frame != 0 || uri == NULL ||
      chp_tool_floor_level (chp_engine_get_floor (engine), url, FALSE, &reason) != CHP_FLOOR_OK)
    return;
  origin = chp_mcp_format_origin (url);
  if (origin == NULL)
    return;
  update = json_object_new ();
  json_object_set_string_member (update, "origin", origin);
  signin = json_object_new ();
  path = signin_path (uri);
  json_object_set_string_member (signin, "path", path);
  signals = json_array_new ();
  json_array_add_string_element (signals, "password");
  json_object_set_array_member (signin, "signals", signals);
  json_object_set_object_member (update, "signin", signin);
  chp_store_merge_site_async (chp_engine_get_store (engine), update, NULL,
                              g_get_real_time () / 1000, NULL, merged_cb,
                              (gpointer) "a page taught nothing");
}

/* ---- recipes ------------------------------------------------------------------------------ */

/* The site update that remembers a recipe: its steps as given and its params by name and type
 * (every param is a string), in the allowlist's form. */
static JsonObject *
recipe_update (const char *site,
               const char *name,
               JsonArray  *given,
               GPtrArray  *names)
{
  JsonObject *update = json_object_new ();
  JsonObject *recipe = json_object_new ();
  JsonArray *recipes = json_array_new ();
  JsonArray *params = json_array_new ();

  for (guint i = 0; i < names->len; i++)
    {
      JsonObject *p = json_object_new ();

      json_object_set_string_member (p, "name", g_ptr_array_index (names, i));
      json_object_set_string_member (p, "type", "string");
      json_array_add_object_element (params, p);
    }
  json_object_set_string_member (recipe, "name", name);
  json_object_set_array_member (recipe, "params", params);
  json_object_set_array_member (recipe, "steps", json_array_ref (given));
  json_array_add_object_element (recipes, recipe);
  json_object_set_string_member (update, "origin", site);
  json_object_set_array_member (update, "recipes", recipes);
  return update;
}

/*
 * chp_tool_site_remember_recipe:
 * @given: the recipe's steps as the agent gave them
 * @names: the {{placeholders}} they use
 * @text: the result's text, which says what became of it
 *
 * The recipe for later sessions too, in the site memory, when the person lets Chaperone learn
 * and the allowlist takes it (it refuses, naming the field, a step that keeps a literal value
 * the session check lets by: an API step's params); the session keeps it either way. */
void
chp_tool_site_remember_recipe (ToolCall   *call,
                               const char *site,
                               const char *name,
                               JsonArray  *given,
                               GPtrArray  *names,
                               GString    *text)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autoptr(JsonObject) update = recipe_update (site, name, given, names);
  g_autoptr(GError) refused = NULL;

  if (engine == NULL || !chp_engine_get_site_learning (engine))
    {
      g_string_append (text, " It lasts as long as this session: the person turned learning "
                       "how sites work off.");
      return;
    }
  if (!chp_site_allowlist_check (update, NULL, &refused))
    {
      g_string_append_printf (text, " It lasts as long as this session: the site memory keeps "
                              "only a recipe's structure (%s).", refused->message);
      return;
    }
  chp_store_merge_site_async (chp_engine_get_store (engine), update, NULL,
                              g_get_real_time () / 1000, NULL, merged_cb,
                              (gpointer) "a recipe was not kept");
  g_string_append (text, " Remembered for this site: later sessions can replay it too.");
}

/* A remembered recipe was replayed: its site's memory was used. */
void
chp_tool_site_recipe_used (ToolCall   *call,
                           const char *site,
                           const char *name)
{
  g_autoptr(ChpEngine) engine = learning_engine (call);

  if (engine != NULL)
    chp_store_site_recipe_used_async (chp_engine_get_store (engine), site, name,
                                      g_get_real_time () / 1000, NULL, written_cb,
                                      (gpointer) "a recipe's use was not counted");
}

/* ---- the arrival card ----------------------------------------------------------------------- */

typedef struct
{
  GTask         *task;   /* owned */
  ChpSiteThen    then;
  char          *origin;
} CardLoad;

static void
card_loaded_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  CardLoad *load = user_data;
  ToolCall *call = call_of (load->task);
  g_autoptr(ChpSiteRecord) record = chp_store_load_site_finish (CHP_STORE (source), result, NULL);

  if (record != NULL)
    call->site_card = chp_mcp_site_card (record, call->marker);
  g_object_set_data_full (G_OBJECT (load->task), CARD_ORIGIN, g_steal_pointer (&load->origin),
                          g_free);
  load->then (load->task);
  g_object_unref (load->task);
  g_free (load);
}

/*
 * chp_tool_site_load_card:
 * @then: what the snapshot does next, once the card is known
 *
 * The first snapshot of a remembered site in a session starts with its card: the store is read
 * first (a local read of a few rows, never the network), then @then runs. Every later snapshot
 * goes straight on: FALSE, and @then is not called.
 */
gboolean
chp_tool_site_load_card (GTask       *task,
                         ChpSiteThen  then)
{
  ToolCall *call = call_of (task);
  g_autoptr(ChpEngine) engine = learning_engine (call);
  g_autofree char *url = chp_tool_tab_url (call);
  g_autofree char *origin = chp_mcp_format_origin (url);
  g_autofree char *key = NULL;
  JsonObject *seen;
  CardLoad *load;

  if (engine == NULL || origin == NULL || chp_tool_int_argument (call->args, "frame", 0) != 0)
    return FALSE;
  key = g_strconcat ("card:", origin, NULL);
  if (chp_tool_recall_object (call->context, key) != NULL)
    return FALSE;
  seen = json_object_new ();
  chp_tool_remember_object (call->context, key, seen);
  json_object_unref (seen);
  load = g_new0 (CardLoad, 1);
  load->task = g_object_ref (task);
  load->then = then;
  load->origin = g_strdup (origin);
  chp_store_load_site_async (chp_engine_get_store (engine), origin, NULL, card_loaded_cb, load);
  return TRUE;
}
