/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-navigate.c: browser_navigate: a URL loaded in a granted tab, within the site it was
 * granted for. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

static void
navigated_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) answer = chp_tool_browser_answer (task, source, result, "Navigating");
  g_autoptr(GString) text = NULL;
  g_autofree char *tab = NULL;
  g_autofree char *url = NULL;
  g_autofree char *origin = NULL;
  g_autofree char *shown = NULL;
  JsonObject *structured;
  gboolean loaded;

  if (answer == NULL)
    return;

  tab = chp_tool_tab_name (call);
  url = chp_mcp_format_line (chp_mcp_json_string (answer, "url", ""), 2000);
  origin = chp_mcp_format_origin (url);
  structured = json_object_new ();
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_string_member (structured, "url", url);
  chp_mcp_format_mark_member (structured, "url", call->marker, NULL);
  chp_tool_copy_typed (structured, answer, "documentId", G_TYPE_STRING);
  /* The extension waits for the new document's load (8 s at most) before it answers. */
  loaded = !json_object_has_member (answer, "loaded") || chp_mcp_json_bool (answer, "loaded");
  json_object_set_boolean_member (structured, "loaded", loaded);

  text = g_string_new (NULL);
  g_string_append_printf (text, "Navigated tab %s. Refs from the previous page no longer work: "
                          "take a new browser_snapshot.\n", tab);
  if (!loaded)
    g_string_append (text, "The page had not finished loading when this answered: a snapshot "
                           "shows it as it is now (browser_snapshot with until waits for a text).\n");
  shown = g_strdup_printf ("url: %s", url);
  chp_mcp_format_add_untrusted (text, call->marker, origin != NULL ? origin : "the tab", shown);
  chp_tool_return_ok (task, text->str, structured, NULL);
}

void
chp_tool_navigate (ToolCall *call)
{
  GTask *task = call->task;

  /* Away from a blind page is still a step on it; to a blind page is refused before the
   * browser loads it, so not even its title reaches a result. */
  if (!chp_tool_resolve_tab (task, json_object_get_string_member (call->args, "tab")) ||
      !chp_tool_floor_allows (task, NULL, FALSE, FALSE) ||
      !chp_tool_floor_allows (task, json_object_get_string_member (call->args, "url"), FALSE,
                              FALSE))
    return;

  chp_tool_browser_call (task, "browser.navigate",
                         chp_tool_params_new ("tabId", chp_tool_int_node (call->tab_id),
                                              "url", chp_tool_string_node (
                                                json_object_get_string_member (call->args, "url")),
                                              NULL),
                         NAVIGATE_TIMEOUT_MS, navigated_cb);
}
