/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-engine-agent.c: what agents ask of the engine through the tools (src/core/agent): a call
 * to a browser, refused while stopped and answered `stopped` when Stop all comes first; a plan
 * posted for the person; a line in the audit. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-engine"

#include "chp-engine-private.h"

#include "chp-json-util.h"
#include "chp-protocol-error.h"

#define QUEUE_US_KEY "chp-engine-queue-us"


/**
 * chp_engine_post_plan:
 * @session_id: the agent session posting it
 * @args: browser_plan's arguments
 *
 * Returns: (transfer full) (nullable): the plan, waiting for the person, or %NULL with
 *   %CHP_PROTOCOL_ERROR_INVALID_PARAMS (bad plan) or %CHP_PROTOCOL_ERROR_BUSY (too many)
 */
ChpPlan *
chp_engine_post_plan (ChpEngine   *self,
                      const char  *session_id,
                      const char  *client_name,
                      JsonObject  *args,
                      GError     **error)
{
  g_autofree char *plan_id = NULL;
  g_autoptr(ChpPlan) plan = NULL;

  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  plan_id = chp_plan_list_next_id (self->plans);
  plan = chp_plan_new_from_args (plan_id, session_id, client_name, args, error);
  if (plan == NULL || !chp_plan_list_add (self->plans, plan, error))
    return NULL;
  if (self->bridge != NULL)
    chp_bridge_audit (self->bridge, "plan", "post", "waiting", NULL, 0, NULL);
  return g_steal_pointer (&plan);
}

void
chp_engine_agent_call_free (AgentCall *call)
{
  g_clear_object (&call->task);
  g_free (call->device_id);
  g_free (call->method);
  g_free (call->agent);
  g_free (call);
}

static void
agent_call_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  AgentCall *call = user_data;
  ChpEngine *self = g_task_get_source_object (call->task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_bridge_call_finish (CHP_BRIDGE (source), result, &error);
  gint64 queue_us = chp_bridge_call_get_queue_us (result);

  /* Kept on the task for the agent's trace (chp_engine_agent_call_get_queue_us()), whichever way
   * it is answered below. */
  g_object_set_data_full (G_OBJECT (call->task), QUEUE_US_KEY,
                          g_memdup2 (&queue_us, sizeof queue_us), g_free);

  /* A hold this act made waits for its answer, which says whose act it was; a rule of the
   * person's may then approve it, and the call is answered when that has run. */
  if (chp_engine_release_holds (self, call, node))
    return;

  g_ptr_array_remove_fast (self->agent_calls, call);
  if (!call->answered)
    {
      if (node == NULL)
        g_task_return_error (call->task, g_steal_pointer (&error));
      else
        g_task_return_pointer (call->task, g_steal_pointer (&node),
                               (GDestroyNotify) json_node_unref);
    }

  chp_engine_agent_call_free (call);
}

/**
 * chp_engine_agent_call_async:
 * @device_id: the browser
 * @method: a `browser.*` method
 * @params: (nullable): its parameters (not consumed)
 * @timeout_ms: 0 for the default
 *
 * The one way an agent's request reaches a browser. Refused at once, before anything is sent:
 * `stopped` while the person has stopped everything, `unknown_method` for anything but
 * `browser.*` — the person's own requests (`extension.*`, `grant.revoke`) are not an agent's
 * to make.
 */
void
chp_engine_agent_call_async (ChpEngine           *self,
                             const char          *device_id,
                             const char          *method,
                             JsonNode            *params,
                             guint                timeout_ms,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  chp_engine_agent_call_as_async (self, NULL, device_id, method, params, timeout_ms, cancellable,
                                  callback, user_data);
}

/**
 * chp_engine_agent_call_as_async:
 * @session_id: (nullable): the agent session making the call
 *
 * chp_engine_agent_call_async() on behalf of an agent session: a hold the call makes is then
 * known to be that agent's, which is what a person's "Always allow" rule names. The name is
 * looked up here, from the session list, never taken from the call's arguments.
 */
void
chp_engine_agent_call_as_async (ChpEngine           *self,
                                const char          *session_id,
                                const char          *device_id,
                                const char          *method,
                                JsonNode            *params,
                                guint                timeout_ms,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  ChpAgentSession *session;
  ChpDevice *device;
  AgentCall *call;

  g_return_if_fail (CHP_IS_ENGINE (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, chp_engine_agent_call_async);

  /* The stop check comes first: nothing is looked at, sent or awaited before it. */
  if (self->stopped)
    {
      if (self->bridge != NULL)
        chp_bridge_audit (self->bridge, "agent", method != NULL ? method : "", "refused",
                          device_id, 0, "stopped");
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_STOPPED,
                               "The person stopped all agents");
      return;
    }

  /* browser.screenshot is the app's own, for the person's trace browser: no agent gets a picture
   * of a page, whatever tool a bug might map to it. */
  if (method == NULL || !g_str_has_prefix (method, "browser.") || method[8] == '\0' ||
      g_str_equal (method, "browser.screenshot"))
    {
      if (self->bridge != NULL)
        chp_bridge_audit (self->bridge, "agent", method != NULL ? method : "", "refused",
                          device_id, 0, "unknown_method");
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_UNKNOWN_METHOD,
                               "Agents may call browser.* methods only");
      return;
    }

  if (self->bridge == NULL)
    {
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_DEVICE_OFFLINE,
                               "Chaperone is not running");
      return;
    }

  /* The bridge keeps a detached session's calls for its resume window, which suits a service
   * worker that restarts in a second; an agent is better told at once that the browser is
   * away (closed, or asleep until its next wake-up) than left waiting for its timeout. */
  device = device_id != NULL ? chp_device_list_lookup (self->devices, device_id) : NULL;
  if (device != NULL && !chp_device_get_online (device))
    {
      chp_bridge_audit (self->bridge, "agent", method, "refused", device_id, 0, "device_offline");
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_DEVICE_OFFLINE,
                               "This browser is not connected now; it reconnects by itself "
                               "when it comes back");
      return;
    }

  if (chp_engine_policy_refuses (self, device_id, method, params, &error))
    {
      chp_bridge_audit (self->bridge, "agent", method, "refused", device_id, 0,
                        chp_protocol_error_code_of (error));
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  call = g_new0 (AgentCall, 1);
  call->task = g_steal_pointer (&task);
  call->device_id = g_strdup (device_id);
  call->method = g_strdup (method);
  session = session_id != NULL
            ? chp_agent_session_list_lookup (self->agent_sessions, session_id) : NULL;
  if (session != NULL)
    call->agent = g_strdup (chp_agent_session_get_client_key (session));
  g_ptr_array_add (self->agent_calls, call);
  chp_bridge_call_async (self->bridge, device_id, method, params, timeout_ms, cancellable,
                         agent_call_cb, call);
}

/* Returns: (transfer full) (nullable): the browser's answer, or %NULL with its error */
JsonNode *
chp_engine_agent_call_finish (ChpEngine     *self,
                              GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * chp_engine_agent_call_get_queue_us:
 * @result: a finished chp_engine_agent_call_async()'s result
 *
 * The queue time of an agent's step (ChpTraceStep.queue_us): how long the request waited before
 * it went to the browser — behind the browser's other calls, or for the browser to resume.
 *
 * Returns: that time in µs; 0 when it went at once, or was refused or answered before it went
 */
gint64
chp_engine_agent_call_get_queue_us (GAsyncResult *result)
{
  const gint64 *queue_us;

  g_return_val_if_fail (G_IS_TASK (result), 0);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == chp_engine_agent_call_async, 0);

  queue_us = g_object_get_data (G_OBJECT (result), QUEUE_US_KEY);
  return queue_us != NULL ? *queue_us : 0;
}

/**
 * chp_engine_audit_agent:
 * @tool: the MCP tool (or JSON-RPC method) the agent called
 * @outcome: "ok", "error", "refused", "cancelled"…
 * @device_id: (nullable): the browser it concerned
 * @error_code: (nullable): the error code of §5 when it failed
 *
 * One audit row per agent call, metadata only: never arguments, never results.
 */
void
chp_engine_audit_agent (ChpEngine  *self,
                        const char *tool,
                        const char *outcome,
                        const char *device_id,
                        gint64      duration_ms,
                        const char *error_code)
{
  g_return_if_fail (CHP_IS_ENGINE (self));

  if (self->bridge != NULL)
    chp_bridge_audit (self->bridge, "agent", tool != NULL ? tool : "", outcome, device_id,
                      duration_ms, error_code);
}

