/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-network.c: browser_network: the requests a granted tab's page made, as the extension
 * captured them for its document (extension/lib/capabilities/network.js): method, status, path,
 * query keys, type, size, time and the kind of credential that signed it; never a value. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#define NETWORK_TIMEOUT_MS     10000
#define NETWORK_DEFAULT_LIMIT     30

static JsonObject *
object_member (JsonObject *object,
               const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

/* "cookie", "bearer", "x-csrf-token": how the request was signed, by kind and header name. */
static void
append_credential (GString    *line,
                   JsonObject *entry)
{
  JsonObject *credential = object_member (entry, "credential");
  JsonArray *headers;

  if (credential == NULL)
    return;
  if (chp_mcp_json_bool (credential, "cookie"))
    g_string_append (line, " cookie");
  if (chp_mcp_json_bool (credential, "bearer"))
    g_string_append (line, " bearer");
  headers = chp_json_get_array (credential, "headers");
  for (guint i = 0; headers != NULL && i < json_array_get_length (headers) && i < 4; i++)
    {
      g_autofree char *name = chp_mcp_format_line (json_array_get_string_element (headers, i), 40);

      g_string_append_printf (line, " %s", name);
    }
}

/* One request, one line: GET 200 /api/contacts ?page,q xhr json 2.1 kB 34 ms cookie */
static void
append_entry (GString    *out,
              JsonObject *entry,
              const char *page_origin)
{
  const char *origin = chp_mcp_json_string (entry, "origin", "");
  JsonArray *keys = chp_json_get_array (entry, "queryKeys");
  JsonObject *body = object_member (entry, "body");
  gint64 status = chp_mcp_json_int (entry, "status", 0);
  gint64 size = chp_mcp_json_int (entry, "size", -1);
  g_autofree char *method = chp_mcp_format_line (chp_mcp_json_string (entry, "method", "GET"), 8);
  g_autofree char *path = chp_mcp_format_line (chp_mcp_json_string (entry, "path", "/"), 200);
  g_autofree char *type = chp_mcp_format_line (chp_mcp_json_string (entry, "type", ""), 20);
  g_autofree char *content = chp_mcp_format_line (chp_mcp_json_string (entry, "contentType", ""),
                                                  60);

  g_string_append_printf (out, "%s ", method);
  if (status > 0)
    g_string_append_printf (out, "%" G_GINT64_FORMAT " ", status);
  else
    {
      g_autofree char *error = chp_mcp_format_line (chp_mcp_json_string (entry, "error",
                                                                         "pending"), 40);

      g_string_append_printf (out, "(%s) ", error);
    }
  /* Another site's request names its origin; the page's own are paths. */
  if (g_strcmp0 (origin, page_origin) != 0)
    {
      g_autofree char *shown = chp_mcp_format_line (origin, 100);

      g_string_append (out, shown);
    }
  g_string_append (out, path);
  for (guint i = 0; keys != NULL && i < json_array_get_length (keys) && i < 16; i++)
    {
      g_autofree char *key = chp_mcp_format_line (json_array_get_string_element (keys, i), 40);

      g_string_append_printf (out, "%s%s", i == 0 ? " ?" : ",", key);
    }
  if (body != NULL && g_strcmp0 (chp_mcp_json_string (body, "kind", "none"), "none") != 0)
    {
      g_autofree char *kind = chp_mcp_format_line (chp_mcp_json_string (body, "kind", ""), 12);

      g_string_append_printf (out, " body:%s", kind);
    }
  if (*type != '\0')
    g_string_append_printf (out, " %s", type);
  if (*content != '\0')
    g_string_append_printf (out, " %s", content);
  if (size >= 0)
    g_string_append_printf (out, " %" G_GINT64_FORMAT " B", size);
  if (json_object_has_member (entry, "ms"))
    g_string_append_printf (out, " %" G_GINT64_FORMAT " ms", chp_mcp_json_int (entry, "ms", 0));
  append_credential (out, entry);
  g_string_append_c (out, '\n');
}

static void
listed_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) answer = chp_tool_browser_answer (task, source, result, "The request list");
  g_autoptr(GString) text = NULL;
  g_autoptr(GString) lines = NULL;
  g_autofree char *tab = NULL;
  g_autofree char *origin = NULL;
  JsonObject *structured;
  JsonArray *entries;
  guint n;
  gint64 dropped;

  if (answer == NULL)
    return;

  tab = chp_tool_tab_name (call);
  origin = chp_mcp_format_line (chp_mcp_json_string (answer, "origin", ""), 200);
  entries = chp_json_get_array (answer, "entries");
  n = entries != NULL ? json_array_get_length (entries) : 0;
  dropped = chp_mcp_json_int (answer, "dropped", 0);

  lines = g_string_new (NULL);
  for (guint i = 0; i < n; i++)
    {
      JsonNode *node = json_array_get_element (entries, i);

      if (JSON_NODE_HOLDS_OBJECT (node))
        append_entry (lines, json_node_get_object (node), origin);
    }

  text = g_string_new (NULL);
  g_string_append_printf (text, "%u request(s) of the page in tab %s, oldest first", n, tab);
  if (dropped > 0)
    g_string_append_printf (text, " (%" G_GINT64_FORMAT " older ones no longer kept)", dropped);
  g_string_append (text, ". Names, sizes and kinds only, never values. browser_api learn turns "
                         "the page's own API calls into entries you can call.\n");
  if (n > 0)
    chp_mcp_format_add_untrusted (text, call->marker, *origin != '\0' ? origin : "the tab",
                                  lines->str);

  structured = json_object_new ();
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_int_member (structured, "count", n);
  json_object_set_int_member (structured, "dropped", dropped);
  chp_tool_return_ok (task, text->str, structured, NULL);
}

void
chp_tool_network (ToolCall *call)
{
  GTask *task = call->task;
  JsonNode *params;
  JsonObject *filter;
  const char *path = chp_mcp_json_string (call->args, "path", NULL);

  if (!chp_tool_resolve_tab (task, json_object_get_string_member (call->args, "tab")) ||
      !chp_tool_floor_allows (task, NULL, FALSE, FALSE))
    return;

  filter = json_object_new ();
  json_object_set_string_member (filter, "type",
                                 chp_mcp_json_bool (call->args, "all") ? "all"
                                                                                       : "api");
  if (path != NULL)
    json_object_set_string_member (filter, "text", path);
  params = chp_tool_params_new ("tabId", chp_tool_int_node (call->tab_id),
                                "frameId", chp_tool_int_node (0),
                                "limit", chp_tool_int_node (
                                  chp_tool_int_argument (call->args, "limit",
                                                         NETWORK_DEFAULT_LIMIT)),
                                NULL);
  json_object_set_object_member (json_node_get_object (params), "filter", filter);
  chp_tool_browser_call (task, "browser.network.list", params, NETWORK_TIMEOUT_MS, listed_cb);
}
