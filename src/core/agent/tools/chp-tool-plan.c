/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-plan.c: browser_plan: a list of creates and edits the person approves once, so that its
 * writes need no card each; and what every writing tool (browser_act, browser_api) shares of the
 * plan: the allowance an approved plan gives, and the step it spends. (A write held instead:
 * chp-tool-held.c.) */
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
