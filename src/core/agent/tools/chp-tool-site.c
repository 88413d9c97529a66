/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-site.c: what an agent's snapshots teach the site memory, and what it gives back.
 *
 * Teaches (when the person's "Learn how sites work" is on): a visit, one per document; the page's
 * named controls (buttons, tabs, menu items, fields) — the store keeps a label only once it was
 * seen on two visits and never one that carries the person's data (chp-store-sites-merge.c, the
 * allowlist); and the path where sign-in shows. Links are not taught: lists of records (mails,
 * contacts, rows) are links, and their names are the person's data.
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

static void
merged_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpSiteRecord) record = chp_store_merge_site_finish (CHP_STORE (source), result,
                                                                 &error);

  /* A forgotten site learns nothing until restored (NOT_FOUND); a refusal names the field. */
  if (record == NULL && !g_error_matches (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND))
    g_message ("site memory: a page taught nothing: %s", error->message);
}

static void
visited_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  /* A site nothing was learned of is simply not remembered (NOT_FOUND). */
  if (!chp_store_write_finish (CHP_STORE (source), result, &error) &&
      !g_error_matches (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND))
    g_message ("site memory: a visit was not counted: %s", error->message);
}

/* The page's named controls, as an update of its site (NULL when it names none). */
static JsonObject *
controls_update (const char *origin,
                 JsonObject *answer)
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
      if (role == NULL || name == NULL || !g_strv_contains (LEARNED_ROLES, role) ||
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

/*
 * chp_tool_site_learn_page:
 * @answer: the browser's (redacted) snapshot of the tab's page
 *
 * A visit to the page's site, once per document, and its controls for the memory. A site the
 * memory does not know yet starts being remembered only through what it teaches (its controls or
 * its API), never by a visit alone.
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
  const char *document = chp_mcp_json_string (answer, "documentId", NULL);
  JsonObject *seen;

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

  update = controls_update (origin, answer);
  if (update != NULL)
    chp_store_merge_site_async (chp_engine_get_store (engine), update, document,
                                g_get_real_time () / 1000, NULL, merged_cb, NULL);
  else
    chp_store_site_visit_async (chp_engine_get_store (engine), origin, document,
                                g_get_real_time () / 1000, NULL, visited_cb, NULL);
}

/* The page the floor just refused because it asks for a password: its site learns where sign-in
 * shows (the path, never the page), unless the site is one the floor keeps blind anyway. */
void
chp_tool_site_learn_signin (ToolCall   *call,
                            JsonObject *answer,
                            gint64      frame)
{
  g_autoptr(ChpEngine) engine = learning_engine (call);
  const char *url = chp_mcp_json_string (answer, "url", NULL);
  g_autoptr(GUri) uri = url != NULL ? g_uri_parse (url, G_URI_FLAGS_NONE, NULL) : NULL;
  g_autofree char *origin = NULL;
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
  json_object_set_string_member (signin, "path", g_uri_get_path (uri)[0] != '\0'
                                                 ? g_uri_get_path (uri) : "/");
  signals = json_array_new ();
  json_array_add_string_element (signals, "password");
  json_object_set_array_member (signin, "signals", signals);
  json_object_set_object_member (update, "signin", signin);
  chp_store_merge_site_async (chp_engine_get_store (engine), update, NULL,
                              g_get_real_time () / 1000, NULL, merged_cb, NULL);
}

/* ---- the arrival card ----------------------------------------------------------------------- */

typedef struct
{
  GTask         *task;   /* owned */
  ChpSiteThen    then;
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
  chp_store_load_site_async (chp_engine_get_store (engine), origin, NULL, card_loaded_cb, load);
  return TRUE;
}
