/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-plan.c: browser_plan: a list of creates and edits the person approves once, so that its
 * writes need no card each; and what every writing tool (browser_act, browser_api) shares of the
 * person's approvals: the allowance an approved plan gives, the step it spends, and the answer
 * when the browser held a write for the person instead of doing it. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

void
chp_tool_plan (ToolCall *call)
{
  GTask *task = call->task;
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpPlan) plan = NULL;
  g_autofree char *text = NULL;
  JsonObject *structured;

  if (engine == NULL)
    {
      chp_tool_return_error (task, "internal", "Chaperone is shutting down", NULL);
      return;
    }

  plan = chp_engine_post_plan (engine, chp_mcp_context_get_session_id (call->context),
                               chp_mcp_context_get_client_name (call->context), call->args,
                               &error);
  if (plan == NULL)
    {
      chp_tool_return_gerror (task, error, "The plan");
      return;
    }

  chp_tool_progress (call, 0, "Waiting for the person to read the plan…");
  structured = json_object_new ();
  json_object_set_string_member (structured, "id", chp_plan_get_id (plan));
  json_object_set_string_member (structured, "state", "waiting");
  json_object_set_int_member (structured, "steps", chp_plan_get_n_steps (plan));
  text = g_strdup_printf ("Plan %s (%u step(s)) is waiting for the person in the Chaperone app. "
                          "Call browser_wait with id %s for their answer. Until they approve, "
                          "each write waits for them on its own.", chp_plan_get_id (plan),
                          chp_plan_get_n_steps (plan), chp_plan_get_id (plan));
  chp_tool_return_ok (task, text, structured, NULL);
}

/* ---- what the writing tools share ------------------------------------------------------- */

static const char *
hold_words (const char *kind)
{
  if (g_strcmp0 (kind, "outward") == 0)
    return "would send something from the person's account (a message, a post, a payment, an "
           "order or a form to another site)";
  if (g_strcmp0 (kind, "delete") == 0)
    return "would delete something";
  return "would change data with the person's login, and no plan they approved covers it";
}

/* The browser held the act (@action: "click", "dblclick", "press", or "api" for a call to the
 * site's API) instead of doing it. Nothing was sent; the agent learns the hold's id, and what the
 * person will see. The control and the site are the page's words. */
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
  chp_tool_progress (call, 0, "Held: waiting for the person…");

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
  g_string_append_printf (text, "Held, not done: this %s %s. Nothing was sent. The person "
                          "decides in the Chaperone app; if they approve, it runs once, exactly "
                          "as held, provided the page has not changed. Call browser_wait with id "
                          "%s for the outcome. Do not %s again.\n",
                          what, hold_words (chp_hold_get_kind (hold)), id,
                          api ? "make the call" : press ? "press it" : drag ? "drag it"
                                                                          : "click it");
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

/* The browser used the plan's allowance for this write: one step of it is spent. */
void
chp_tool_plan_step_used (ToolCall   *call,
                         JsonObject *answer,
                         JsonObject *structured,
                         GString    *text)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  JsonNode *node = json_object_get_member (answer, "plan");
  JsonObject *used;
  ChpPlan *plan;
  g_autoptr(ChpPlan) held = NULL;
  gint step;

  if (engine == NULL || node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return;
  used = json_node_get_object (node);
  plan = chp_plan_list_lookup (chp_engine_get_plans (engine),
                               chp_mcp_json_string (used, "planId", ""));
  if (plan == NULL)
    return;

  held = g_object_ref (plan);
  /* A write that only opened an editor ("New tiddler", "Edit") spends no step: the save after it
   * does, so one item created or edited is one step of the plan the person read. */
  if (chp_mcp_json_bool (used, "opens"))
    {
      g_string_append_printf (text, " Covered by your approved plan %s (it opened an editor: no "
                              "step used).", chp_plan_get_id (held));
      return;
    }
  step = chp_plan_list_use_step (chp_engine_get_plans (engine), chp_plan_get_id (plan),
                                 chp_mcp_json_string (used, "site", ""));
  if (step == 0)
    return;

  json_object_set_int_member (structured, "planStep", step);
  g_string_append_printf (text, " This was step %d of %u of your approved plan %s.", step,
                          chp_plan_get_n_steps (held), chp_plan_get_id (held));
  {
    g_autofree char *current = g_strdup_printf ("Plan step %d of %u", step,
                                                chp_plan_get_n_steps (held));
    ChpAgentSession *agent =
      chp_agent_session_list_lookup (chp_engine_get_agent_sessions (engine),
                                     chp_mcp_context_get_session_id (call->context));

    if (agent != NULL)
      chp_agent_session_set_current_step (agent, current);
  }
}

/* Whether a browser_act action may set off a write, so that a plan's allowance goes with it: a
 * click, a double-click, a key press (Enter in a form whose button saves), or a drag (a card
 * moved to another column). */
gboolean
chp_tool_act_may_write (const char *action)
{
  return g_strcmp0 (action, "click") == 0 || g_strcmp0 (action, "dblclick") == 0 ||
         g_strcmp0 (action, "press") == 0 || g_strcmp0 (action, "drag") == 0;
}

/* What a plan the person approved lets this agent's next write do: its sites with steps left,
 * and the step it would be. The extension uses it only for a write it judged from the page
 * (never a send, a payment or a delete) on one of those sites. */
JsonNode *
chp_tool_plan_allowance (ToolCall *call)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_auto(GStrv) sites = NULL;
  ChpPlan *plan;
  JsonObject *allow;
  JsonArray *array;
  JsonNode *node;

  if (engine == NULL)
    return NULL;
  plan = chp_plan_list_covering (chp_engine_get_plans (engine),
                                 chp_mcp_context_get_session_id (call->context));
  if (plan == NULL)
    return NULL;

  sites = chp_plan_sites_left (plan);
  array = json_array_new ();
  for (guint i = 0; sites[i] != NULL; i++)
    json_array_add_string_element (array, sites[i]);
  allow = json_object_new ();
  json_object_set_string_member (allow, "planId", chp_plan_get_id (plan));
  json_object_set_array_member (allow, "sites", array);
  json_object_set_int_member (allow, "step", chp_plan_get_n_used (plan) + 1);
  json_object_set_int_member (allow, "of", chp_plan_get_n_steps (plan));
  node = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (node, allow);
  return node;
}
