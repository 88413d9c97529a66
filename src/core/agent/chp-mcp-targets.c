/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-targets.c: what a tool call is about: the agent's names for browsers and tabs, the
 * documents it has snapshotted and the refs in them, and the app's own check of the URL floor
 * before anything is sent. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include <stdarg.h>
#include <string.h>

/* The key, in the object's data of a ChpMcpContext, of the counter that numbers the documents
 * an agent has seen: outside the context's bounded memory, so that it is never forgotten and
 * a number never names two documents. */
#define DOCUMENT_COUNTER_KEY "chp-mcp-tools-documents"

/* ---- browsers and tabs ------------------------------------------------------------------ */

/* Returns: the agent's name for a browser ("b1"), made on first sight and kept for the
 * engine's lifetime: tab ids an agent holds stay valid while the browser reconnects. */
const char *
chp_tool_alias_of (ChpMcpTools *self,
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
void
chp_tool_see_devices (ChpMcpTools *self,
                      ChpEngine   *engine)
{
  GListModel *devices = G_LIST_MODEL (chp_engine_get_devices (engine));

  for (guint i = 0; i < g_list_model_get_n_items (devices); i++)
    {
      g_autoptr(ChpDevice) device = g_list_model_get_item (devices, i);

      chp_tool_alias_of (self, chp_device_get_id (device));
    }
}

/* Splits "b1:1842" into its browser and tab. The schema's pattern has been checked already. */
gboolean
chp_tool_resolve_tab (GTask      *task,
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

      chp_tool_return_error (task, "no_grant", message, NULL);
      return FALSE;
    }

  call->device_id = g_strdup (device_id);
  call->alias = g_steal_pointer (&alias);
  call->tab_id = (gint64) tab_id;
  return TRUE;
}

char *
chp_tool_tab_name (ToolCall *call)
{
  return g_strdup_printf ("%s:%" G_GINT64_FORMAT, call->alias, call->tab_id);
}

JsonNode *
chp_tool_params_new (const char *first_member,
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

JsonNode *
chp_tool_int_node (gint64 value)
{
  return json_node_init_int (json_node_alloc (), value);
}

JsonNode *
chp_tool_string_node (const char *value)
{
  return json_node_init_string (json_node_alloc (), value);
}

/* Sends @method to the call's browser; @callback gets the task back. */
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

/* Returns: (transfer full) (nullable): the page of the call's tab, as its grant last recorded it */
char *
chp_tool_tab_url (ToolCall *call)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);

  return engine != NULL && call->device_id != NULL
         ? granted_url (engine, call->device_id, call->tab_id) : NULL;
}

/* The floor judges hosts and paths. A browser's answer has been redacted already, which may have
 * put a marker with spaces into a query (?session_id=[redacted …]): the query and fragment are
 * not what the floor looks at, so they go before it does. */
ChpFloorLevel
chp_tool_floor_level (ChpUrlFloor  *floor,
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
gboolean
chp_tool_floor_allows (GTask      *task,
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

  level = chp_tool_floor_level (chp_engine_get_floor (engine), url, password, &reason);
  if (level == CHP_FLOOR_BLIND)
    message = g_strdup_printf ("This page is off limits to agents (%s): Chaperone reads nothing "
                               "and does nothing on it. If the person is needed there, ask with "
                               "browser_handoff.", reason);
  else if (level == CHP_FLOOR_HANDS_ONLY && acting)
    message = g_strdup_printf ("This page is read-only for agents (%s): you may read it, but "
                               "only the person acts on it.", reason);
  else
    return TRUE;

  chp_tool_return_error (task, "refused_floor", message, NULL);
  return FALSE;
}

/* ---- documents and refs ----------------------------------------------------------------- */

char *
chp_tool_frame_key (ToolCall *call,
                    gint64    frame_id)
{
  return g_strdup_printf ("snapshot:%s:%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT,
                          call->device_id, call->tab_id, frame_id);
}

char *
chp_tool_document_key (gint64 document)
{
  return g_strdup_printf ("document:%" G_GINT64_FORMAT, document);
}

/* The documents the agent has seen: the next one is this plus one. */
gint64
chp_tool_document_count (ChpMcpContext *context)
{
  return GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (context), DOCUMENT_COUNTER_KEY));
}

gint64
chp_tool_next_document (ChpMcpContext *context)
{
  guint n = GPOINTER_TO_UINT (g_object_get_data (G_OBJECT (context), DOCUMENT_COUNTER_KEY)) + 1;

  g_object_set_data (G_OBJECT (context), DOCUMENT_COUNTER_KEY, GUINT_TO_POINTER (n));
  return n;
}

void
chp_tool_remember_object (ChpMcpContext *context,
                          const char    *key,
                          JsonObject    *object)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

  json_node_set_object (node, object);
  chp_mcp_context_remember (context, key, node);
}

JsonObject *
chp_tool_recall_object (ChpMcpContext *context,
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
gboolean
chp_tool_resolve_ref (GTask       *task,
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
  key = chp_tool_document_key (document);
  doc = chp_tool_recall_object (call->context, key);
  if (doc == NULL)
    {
      g_autofree char *message = g_strdup_printf ("The ref %s is not from a snapshot you still "
                                                  "hold", ref);

      chp_tool_return_error (task, "stale_node", message, NULL);
      return FALSE;
    }
  if (g_strcmp0 (chp_mcp_json_string (doc, "device", NULL), call->device_id) != 0 ||
      chp_mcp_json_int (doc, "tabId", -1) != call->tab_id)
    {
      g_autofree char *tab = chp_tool_tab_name (call);
      g_autofree char *message = g_strdup_printf ("The ref %s is from another tab than %s", ref,
                                                  tab);

      chp_tool_return_error (task, "stale_node", message, NULL);
      return FALSE;
    }

  call->document = json_object_ref (doc);
  call->ref = g_strdup (ref);
  *wire_ref = g_strdup_printf ("%s:%s", json_object_get_string_member (doc, "captureId"),
                               colon + 1);
  return TRUE;
}

const char *
chp_tool_document_origin (ToolCall *call)
{
  return chp_mcp_json_string (call->document, "origin", "this page");
}

gboolean
chp_tool_is_plain_id (const char *id)
{
  if (id == NULL || *id == '\0' || strlen (id) > 64)
    return FALSE;
  for (const char *p = id; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '-')
      return FALSE;
  return TRUE;
}

