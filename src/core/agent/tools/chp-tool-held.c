/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-held.c: what an agent is told of a write the browser held instead of doing (a
 * browser_act click or key press, a browser_api call, a browser_batch step): that the person
 * decides on its card, or — when the person's Always-allow rule approved it at once and no card
 * waits for anyone — how that approval ended, as browser_wait would tell it. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include <string.h>

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

/* The rule's site as the agent reads it outside the page's wrapper: an origin has nothing else,
 * and anything that is not plainly one is not repeated. */
static const char *
rule_site (JsonObject *ruled)
{
  const char *site = chp_mcp_json_string (ruled, "site", "");

  if (*site == '\0' || strlen (site) > 256)
    return "this site";
  for (const char *p = site; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && strchr (".-:/[]", *p) == NULL)
      return "this site";
  return site;
}

/**
 * chp_tool_rule_ran_ok:
 * @ruled: (nullable): how the person's rule's approval of a held write ended
 *   (chp_tool_reply_get_rule_run())
 *
 * Returns: whether the write ran, and the site did not answer it with an error
 */
gboolean
chp_tool_rule_ran_ok (JsonObject *ruled)
{
  JsonNode *changes = ruled != NULL ? json_object_get_member (ruled, "changes") : NULL;
  gint64 status = 0;

  if (g_strcmp0 (chp_mcp_json_string (ruled, "state", NULL), "done") != 0)
    return FALSE;
  if (changes != NULL && JSON_NODE_HOLDS_OBJECT (changes))
    status = chp_mcp_json_int (json_node_get_object (changes), "status", 0);
  return status == 0 || (status >= 200 && status < 300);
}

/* A write the rule approved that did not run as asked is a failed act for the loop guard
 * (chp-mcp-loop-guard.c): retried as it is, each try would run the person's rule again. */
static void
count_failure (GTask      *task,
               JsonObject *structured)
{
  const char *code = chp_mcp_json_string (structured, "code", NULL);

  g_object_set_data_full (G_OBJECT (task), CHP_LOOP_FAILURE_KEY,
                          g_strdup (code != NULL ? code
                                    : chp_mcp_json_string (structured, "state", "failed")),
                          g_free);
}

/* "Approved at once by the person's rule…: @what ran once" or "…, but @what did not run: why",
 * and the same in @structured, which no longer says held: nobody is asked. Returns: whether it
 * was done, and the site did not answer it with an error */
static gboolean
ruled_outcome (ToolCall   *call,
               JsonObject *ruled,
               const char *what,
               const char *id,
               JsonObject *structured,
               GString    *text)
{
  /* The browser's word for the end, said only when it is one browser_wait knows too. */
  static const char * const ends[] = { "done", "declined", "changed", "expired", "failed", NULL };
  const char *given = chp_mcp_json_string (ruled, "state", "");
  const char *state = g_strv_contains (ends, given) ? given : "ended";
  JsonNode *changes = json_object_get_member (ruled, "changes");
  JsonObject *rule = json_object_new ();
  g_autofree char *code = chp_mcp_format_line (chp_mcp_json_string (ruled, "error", "internal"),
                                               40);
  gint64 status = 0;

  if (changes != NULL && JSON_NODE_HOLDS_OBJECT (changes))
    status = chp_mcp_json_int (json_node_get_object (changes), "status", 0);

  json_object_set_string_member (rule, "site", chp_mcp_json_string (ruled, "site", ""));
  json_object_set_int_member (rule, "expiresAt", chp_mcp_json_int (ruled, "expiresAt", 0));
  json_object_set_object_member (structured, "rule", rule);
  json_object_set_string_member (structured, "approvedBy", "rule");
  json_object_set_boolean_member (structured, "held", FALSE);
  json_object_set_string_member (structured, "id", id);
  json_object_set_string_member (structured, "state", state);
  json_object_set_string_member (structured, "outcome", state);
  if (status != 0)
    json_object_set_int_member (structured, "status", status);
  if (json_object_has_member (ruled, "error"))
    json_object_set_string_member (structured, "code", code);
  /* What an approved act changed is the browser's report on the page. */
  if (changes != NULL && JSON_NODE_HOLDS_OBJECT (changes))
    {
      json_object_set_member (structured, "changes", json_node_copy (changes));
      chp_mcp_format_mark_member (structured, "changes", call->marker, NULL);
    }

  g_string_append_printf (text, "Approved at once by the person's Always-allow rule for changes "
                          "on %s", rule_site (ruled));
  if (g_str_equal (state, "done"))
    {
      g_string_append_printf (text, ": %s ran once, exactly as held", what);
      if (status != 0)
        g_string_append_printf (text, " (the site answered %" G_GINT64_FORMAT ")", status);
    }
  else if (g_str_equal (state, "changed"))
    g_string_append_printf (text, ", but %s did not run: the page changed after it was held",
                            what);
  else if (g_str_equal (state, "failed"))
    g_string_append_printf (text, ", but %s failed on the page (%s)", what, code);
  else if (g_str_equal (state, "expired"))
    g_string_append_printf (text, ", but %s did not run: its grant ended or the tab closed", what);
  else
    g_string_append_printf (text, ", but %s did not run (%s)", what, state);
  return chp_tool_rule_ran_ok (ruled);
}

/* The browser held the act (@action: "click", "dblclick", "press", "drag", or "api" for a call
 * to the site's API) instead of doing it. The agent learns the hold's id, and what the person
 * will see; or, when @ruled (chp_tool_reply_get_rule_run()), how the person's rule's approval of
 * it ended. The control and the site are the page's words. */
void
chp_tool_return_held (GTask      *task,
                      JsonObject *answer,
                      const char *action,
                      JsonObject *ruled)
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
  if (ruled != NULL)
    {
      g_autofree char *this = g_strdup_printf ("this %s", what);
      gboolean done = g_strcmp0 (chp_mcp_json_string (ruled, "state", NULL), "done") == 0;

      gboolean ok = ruled_outcome (call, ruled, this, id, structured, text);

      json_object_set_boolean_member (structured, "ok", ok);
      if (!ok)
        count_failure (task, structured);
      if (done)
        g_string_append_printf (text, ". %s Do not %s again.",
                                api ? "Its reply is not kept: read the data again to see it."
                                    : "Take a new browser_snapshot to see the page now.", verb);
      else
        g_string_append (text, ". Take a new snapshot; if it is still wanted, it will be held "
                               "again.");
      g_string_append_printf (text, " browser_wait with id %s gives the same outcome.\n", id);
    }
  else
    {
      chp_tool_progress (call, 0, "Held: waiting for the person…");
      g_string_append_printf (text, "Held, not done: this %s %s. Nothing was sent. The person "
                              "decides in the Chaperone app; if they approve, it runs once, "
                              "exactly as held, provided the page has not changed. Call "
                              "browser_wait with id %s for the outcome. Do not %s again.\n",
                              what, hold_words (chp_hold_get_kind (hold), FALSE), id, verb);
    }
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
 * shows and the id browser_wait takes, or how the person's rule's approval of it ended (@ruled).
 * Either way the steps after it did not run. FALSE when the browser's hold is malformed
 * (answered here, @structured let go). */
gboolean
chp_tool_batch_held (GTask      *task,
                     JsonObject *answer,
                     guint       n,
                     const char *what,
                     JsonObject *ruled,
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
  if (ruled != NULL)
    {
      gboolean last = n >= json_object_get_int_member_with_default (structured, "of", n);
      gboolean ok;

      g_string_append_printf (text, " Step %u (%s) was held: it %s. ", n, what,
                              hold_words (chp_hold_get_kind (hold), TRUE));
      ok = ruled_outcome (call, ruled, "it", id, structured, text);
      if (!ok)
        count_failure (task, structured);
      if (ok && last)
        g_string_append (text, ". It was the batch's last step: nothing is left to run; do not "
                               "run the batch again.");
      else if (ok)
        g_string_append (text, "; the steps after it did not run: run the rest.");
      else if (last)
        g_string_append (text, ". It was the batch's last step: take a new snapshot before "
                               "trying it again.");
      else
        g_string_append (text, "; the steps after it did not run either: take a new snapshot, "
                               "then run the rest.");
    }
  else
    {
      json_object_set_boolean_member (structured, "held", TRUE);
      json_object_set_string_member (structured, "id", id);
      g_string_append_printf (text, " Step %u (%s) was held for the person: it %s. Nothing of it "
                              "was sent, and the steps after it did not run. The person decides "
                              "in the Chaperone app; call browser_wait with id %s for the "
                              "outcome, then run the rest.", n, what,
                              hold_words (chp_hold_get_kind (hold), TRUE), id);
      chp_tool_progress (call, 0, "Held: waiting for the person…");
    }
  control = chp_hold_dup_act_text (hold);
  g_string_append_printf (page, "control: %s\nsite: %s", control,
                          chp_hold_get_site (hold));
  g_string_append_c (text, '\n');
  chp_mcp_format_add_untrusted (text, call->marker, chp_hold_get_site (hold), page->str);
  return TRUE;
}
