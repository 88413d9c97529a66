/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-held.c: what an agent is told of a write the browser held instead of doing (a
 * browser_act click or key press, a browser_api call, a browser_batch step): that the person
 * decides on its card. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

/* What the held write would do, in the agent's words (@brief: a batch's, shorter for a send). */
static const char *
hold_words (const char *kind,
            gboolean    brief)
{
  if (g_strcmp0 (kind, "outward") == 0)
    return brief ? "would send something from the person's account"
                 : "would send something from the person's account (a message, a post, a "
                   "payment, an order or a form to another site)";
  if (g_strcmp0 (kind, "delete") == 0)
    return "would delete something";
  return "would change data with the person's login, and no plan they approved covers it";
}

/* The browser held the act (@action: "click", "dblclick", "press", "drag", or "api" for a call
 * to the site's API) instead of doing it. Nothing was sent; the agent learns the hold's id, and
 * what the person will see. The control and the site are the page's words. */
void
chp_tool_return_held (GTask      *task,
                      JsonObject *answer,
                      const char *action)
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
  gboolean press = g_strcmp0 (action, "press") == 0;
  gboolean drag = g_strcmp0 (action, "drag") == 0;
  gboolean api = g_strcmp0 (action, "api") == 0;
  const char *verb = api ? "make the call" : press ? "press it" : drag ? "drag it" : "click it";
  g_autofree char *what = NULL;
  g_autofree char *control = NULL;

  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    hold = chp_hold_new_from_json (call->device_id, json_node_get_object (node), &error);
  if (hold == NULL || !chp_tool_is_plain_id (chp_hold_get_id (hold)))
    {
      chp_tool_return_error (task, "internal", "The browser held the act but its hold is malformed",
                             NULL);
      return;
    }

  tab = chp_tool_tab_name (call);
  id = g_strdup_printf ("%s:k-%s", call->alias, chp_hold_get_id (hold));

  shown = chp_hold_to_json (hold);
  structured = json_object_ref (json_node_get_object (shown));
  json_node_unref (shown);
  json_object_set_boolean_member (structured, "ok", FALSE);
  json_object_set_boolean_member (structured, "held", TRUE);
  json_object_set_string_member (structured, "holdId", id);
  json_object_set_string_member (structured, "id", id);
  json_object_set_string_member (structured, "tab", tab);
  if (call->ref != NULL)
    json_object_set_string_member (structured, "ref", call->ref);

  text = g_string_new (NULL);
  /* A held key press is approved as the click on the control it would have set off, and a held
   * double-click as one click: what it does is done once. */
  what = api ? g_strdup ("call to the site's API")
             : g_strdup_printf ("%s %s", press ? "key press on" : drag ? "drag of" : "click on",
                                call->ref);
    chp_tool_progress (call, 0, "Held: waiting for the person…");
    g_string_append_printf (text, "Held, not done: this %s %s. Nothing was sent. The person "
                            "decides in the Chaperone app; if they approve, it runs once, "
                            "exactly as held, provided the page has not changed. Call "
                            "browser_wait with id %s for the outcome. Do not %s again.\n",
                            what, hold_words (chp_hold_get_kind (hold), FALSE), id, verb);
  page = g_string_new (NULL);
  control = chp_hold_dup_act_text (hold);
  g_string_append_printf (page, "control: %s\nsite: %s", control,
                          chp_hold_get_site (hold));
  chp_mcp_format_add_untrusted (text, call->marker,
                                api ? chp_hold_get_site (hold) : chp_tool_document_origin (call),
                                page->str);
  chp_mcp_format_mark_member (structured, "control", call->marker, NULL);
  chp_mcp_format_mark_member (structured, "source", call->marker, NULL);
  chp_mcp_format_mark_member (structured, "site", call->marker, NULL);
  chp_mcp_format_mark_member (structured, "fields", call->marker, NULL);
  chp_tool_return_ok (task, text->str, structured, NULL);
}

/* A batch held at step @n (@what: the step in the agent's words): the hold the person's card
 * shows, and the id browser_wait takes. FALSE when the browser's hold is malformed (answered
 * here, @structured let go). */
gboolean
chp_tool_batch_held (GTask      *task,
                     JsonObject *answer,
                     guint       n,
                     const char *what,
                     JsonObject *structured,
                     GString    *text)
{
  ToolCall *call = call_of (task);
  JsonNode *node = json_object_get_member (answer, "hold");
  g_autoptr(ChpHold) hold = NULL;
  g_autofree char *id = NULL;
  g_autoptr(GString) page = g_string_new (NULL);
  g_autofree char *control = NULL;

  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node))
    hold = chp_hold_new_from_json (call->device_id, json_node_get_object (node), NULL);
  if (hold == NULL || !chp_tool_is_plain_id (chp_hold_get_id (hold)))
    {
      json_object_unref (structured);
      chp_tool_return_error (task, "internal", "The browser held a step but its hold is malformed",
                             NULL);
      return FALSE;
    }
  id = g_strdup_printf ("%s:k-%s", call->alias, chp_hold_get_id (hold));
    json_object_set_boolean_member (structured, "held", TRUE);
    json_object_set_string_member (structured, "id", id);
    g_string_append_printf (text, " Step %u (%s) was held for the person: it %s. Nothing of it "
                            "was sent, and the steps after it did not run. The person decides "
                            "in the Chaperone app; call browser_wait with id %s for the "
                            "outcome, then run the rest.", n, what,
                            hold_words (chp_hold_get_kind (hold), TRUE), id);
    chp_tool_progress (call, 0, "Held: waiting for the person…");
  control = chp_hold_dup_act_text (hold);
  g_string_append_printf (page, "control: %s\nsite: %s", control,
                          chp_hold_get_site (hold));
  g_string_append_c (text, '\n');
  chp_mcp_format_add_untrusted (text, call->marker, chp_hold_get_site (hold), page->str);
  return TRUE;
}
