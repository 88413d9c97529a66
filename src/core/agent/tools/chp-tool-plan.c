/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-plan.c: browser_plan: a list of creates and edits the person approves once, so that its
 * writes need no card each. */
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
