/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-handoff.c: browser_handoff and browser_wait: a step handed to the person, and the wait
 * for their decision on a handoff, a held act or a plan. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include <string.h>

/* browser_wait: by default 20 s, never more than 50 s, so that no call outlives a client's
 * 60 s timeout; progress every 5 s keeps clients that reset their timer on progress informed. */
#define WAIT_DEFAULT_MS      20000
#define WAIT_MAX_MS          50000
#define WAIT_PROGRESS_S          5

/* ---- browser_handoff -------------------------------------------------------------------- */

static const char *
handoff_words (const char *reason)
{
  static const struct
  {
    const char *reason;
    const char *words;
  } phrases[] = {
    { "qr", "scan the QR code" }, { "mfa", "enter the verification code" },
    { "captcha", "solve the CAPTCHA" }, { "device", "confirm on their other device" },
    { "login", "sign in" }, { "other", "do a step only they can do" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (phrases); i++)
    if (g_strcmp0 (phrases[i].reason, reason) == 0)
      return phrases[i].words;
  return "do a step";
}

static void
handoff_requested_cb (GObject      *source,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) answer = chp_tool_browser_answer (task, source, result, "The handoff");
  g_autofree char *tab = NULL;
  g_autofree char *id = NULL;
  g_autofree char *text = NULL;
  const char *reason = json_object_get_string_member (call->args, "reason");
  const char *handoff_id;
  JsonObject *structured;

  if (answer == NULL)
    return;

  handoff_id = chp_mcp_json_string (answer, "handoffId", NULL);
  if (!chp_tool_is_plain_id (handoff_id))
    {
      chp_tool_return_error (task, "internal", "The browser's handoff has no usable id", NULL);
      return;
    }

  tab = chp_tool_tab_name (call);
  id = g_strdup_printf ("%s:h-%s", call->alias, handoff_id);
  chp_tool_progress (call, 0, "Waiting for the person…");

  structured = json_object_new ();
  json_object_set_string_member (structured, "id", id);
  json_object_set_string_member (structured, "state", "waiting");
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_string_member (structured, "reason", reason);
  text = g_strdup_printf ("Asked the person to %s on tab %s; the tab is in front of them with your "
                          "message. The handoff %s is waiting. Call browser_wait with this id to "
                          "learn when they are done (each call waits up to %d s).",
                          handoff_words (reason), tab, id, WAIT_MAX_MS / 1000);
  chp_tool_return_ok (task, text, structured, NULL);
}

void
chp_tool_handoff (ToolCall *call)
{
  GTask *task = call->task;

  if (!chp_tool_resolve_tab (task, json_object_get_string_member (call->args, "tab")))
    return;

  chp_tool_browser_call (task, "browser.handoff.request",
                         chp_tool_params_new ("tabId", chp_tool_int_node (call->tab_id),
                                              "reason", chp_tool_string_node (
                                                json_object_get_string_member (call->args,
                                                                               "reason")),
                                              "message", chp_tool_string_node (
                                                json_object_get_string_member (call->args,
                                                                               "message")),
                                              NULL),
                         HANDOFF_TIMEOUT_MS, handoff_requested_cb);
}

/* ---- browser_wait ----------------------------------------------------------------------- */

/* The kinds of id browser_wait knows. A handoff ("bN:h-…") and a hold ("bN:k-…") live in a
 * browser: the engine mirrors their changes, and the browser is asked once for the state they
 * are in now. A plan ("plan-N") lives in the app alone. */
struct _WaitKind
{
  const char         *kind;
  const char         *pending;        /* the state that means "not decided yet" */
  const char * const *states;
  const char         *signal;         /* the engine's change signal */
  const char         *status_method;  /* the browser's state of one */
  const char         *id_member;
  GCallback           changed_cb;
};

static void
wait_disconnect (GTask *task)
{
  ToolCall *call = call_of (task);
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  GCancellable *cancellable = g_task_get_cancellable (task);

  /* A dead engine took its handlers (and its plan list's) with it. */
  if (engine != NULL && call->changed_handler != 0)
    {
      if (call->wait_kind != NULL)
        g_signal_handler_disconnect (engine, call->changed_handler);
      else
        g_signal_handler_disconnect (chp_engine_get_plans (engine), call->changed_handler);
    }
  if (engine != NULL)
    g_clear_signal_handler (&call->stopped_handler, engine);
  call->changed_handler = 0;
  call->stopped_handler = 0;
  g_clear_handle_id (&call->timeout_source, g_source_remove);
  g_clear_handle_id (&call->tick_source, g_source_remove);
  if (call->cancel_handler != 0)
    g_cancellable_disconnect (cancellable, call->cancel_handler);
  call->cancel_handler = 0;
}

/* Our words for how a wait ended; @who is the extension's "by" for a handoff. */
static char *
wait_text (ToolCall   *call,
           const char *state,
           const char *who)
{
  const char *kind = call->wait_kind != NULL ? call->wait_kind->kind : "plan";
  const char *id = call->wait_id;

  if (call->wait_kind != NULL ? g_str_equal (state, call->wait_kind->pending)
                              : g_str_equal (state, "waiting"))
    return g_strdup_printf ("The person has not decided on %s yet. Call browser_wait again with "
                            "the same id to keep waiting.", id);

  if (g_str_equal (kind, "h"))
    {
      if (g_str_equal (state, "done"))
        return g_strdup_printf ("The person finished %s (done). The page may have changed: take "
                                "a new browser_snapshot before you go on.", id);
      if (g_str_equal (state, "cancelled"))
        return g_strdup_printf ("%s was cancelled%s. Do not go on with this part of the task; ask "
                                "the person how to continue.", id,
                                g_strcmp0 (who, "agent") == 0 ? " by an agent"
                                : g_strcmp0 (who, "grant") == 0 ? ": its grant ended"
                                : " by the person");
      return g_strdup_printf ("%s ended: %s (its grant ended or the tab closed).", id, state);
    }

  if (g_str_equal (kind, "k"))
    {
      if (g_str_equal (state, "done"))
        return g_strdup_printf ("%s was approved (by the person, or by their Always-allow "
                                "rule) and ran once. Take a new browser_snapshot to see the page "
                                "now.", id);
      if (g_str_equal (state, "declined"))
        return g_strdup_printf ("The person declined %s: it did not run. Do not try it another "
                                "way; ask the person how to continue.", id);
      if (g_str_equal (state, "changed"))
        return g_strdup_printf ("%s did not run: the page changed after it was held, so what the "
                                "person would approve is not what is there now. Take a new "
                                "snapshot; if the act is still wanted, it will be held again.", id);
      if (g_str_equal (state, "failed"))
        return g_strdup_printf ("%s was approved, but it failed on the page. Take a new "
                                "snapshot.", id);
      return g_strdup_printf ("%s ended unanswered (its grant ended or the tab closed): it did not "
                              "run.", id);
    }

  if (g_str_equal (state, "approved"))
    return g_strdup_printf ("The person approved %s. Its creates and edits on its sites now run "
                            "without a card each, one step per item saved (opening an editor "
                            "uses none), for an hour at most.", id);
  if (g_str_equal (state, "declined"))
    return g_strdup_printf ("The person declined %s. Each write will wait for their approval; ask "
                            "them how to continue.", id);
  return g_strdup_printf ("%s has ended (%s): writes wait for the person again.", id,
                          who != NULL ? who : "ended");
}

static void
wait_answer (GTask      *task,
             const char *state,
             const char *by)
{
  /* The sources wait_disconnect() removes may hold the last references to the task. */
  g_autoptr(GTask) hold G_GNUC_UNUSED = g_object_ref (task);
  ToolCall *call = call_of (task);
  JsonObject *structured;
  g_autofree char *text = NULL;
  g_autofree char *who = by != NULL ? chp_mcp_format_line (by, 40) : NULL;
  gboolean pending;

  if (call->finished)
    return;
  wait_disconnect (task);
  pending = call->wait_kind != NULL ? g_str_equal (state, call->wait_kind->pending)
                                    : g_str_equal (state, "waiting");
  structured = json_object_new ();

  json_object_set_string_member (structured, "id", call->wait_id);
  json_object_set_string_member (structured, "state", state);
  if (!pending)
    json_object_set_string_member (structured, "outcome", state);
  if (who != NULL && *who != '\0')
    json_object_set_string_member (structured, "by", who);
  if (!pending && call->final_extra != NULL)
    {
      static const char * const plain[] = { "code", NULL };
      g_autoptr(GList) members = json_object_get_members (call->final_extra);

      /* A hold's changes are the browser's report on the page; a code is a code. */
      for (GList *l = members; l != NULL; l = l->next)
        {
          json_object_set_member (structured, l->data,
                                  json_node_copy (json_object_get_member (call->final_extra,
                                                                          l->data)));
          chp_mcp_format_mark_member (structured, l->data, call->marker, plain);
        }
    }

  text = wait_text (call, state, who);
  chp_tool_return_ok (task, text, structured, NULL);
}

static void
wait_refuse (GTask        *task,
             const GError *error)
{
  g_autoptr(GTask) hold G_GNUC_UNUSED = g_object_ref (task);
  ToolCall *call = call_of (task);

  if (call->finished)
    return;
  wait_disconnect (task);
  chp_tool_return_gerror (task, error, "Waiting");
}

static const char *
known_state (const WaitKind *kind,
             const char     *state)
{
  for (guint i = 0; kind->states[i] != NULL; i++)
    if (g_strcmp0 (kind->states[i], state) == 0)
      return kind->states[i];
  return NULL;
}

/* A change of the thing waited for: answered now, or kept for the status question's answer
 * when that is still out. */
static void
wait_changed (GTask      *task,
              const char *state,
              const char *by,
              JsonObject *extra)
{
  ToolCall *call = call_of (task);

  g_clear_pointer (&call->final_extra, json_object_unref);
  if (extra != NULL)
    call->final_extra = json_object_ref (extra);

  if (!call->status_known)
    {
      g_free (call->final_state);
      g_free (call->final_by);
      call->final_state = g_strdup (state);
      call->final_by = g_strdup (by);
      return;
    }

  wait_answer (task, state, by);
}

static void
handoff_changed_cb (ChpEngine  *engine,
                    ChpHandoff *handoff,
                    gpointer    user_data)
{
  GTask *task = user_data;
  ToolCall *call = call_of (task);
  const char *state = known_state (call->wait_kind, chp_handoff_get_state (handoff));

  if (g_strcmp0 (chp_handoff_get_device_id (handoff), call->device_id) != 0 ||
      g_strcmp0 (chp_handoff_get_id (handoff), call->handoff_id) != 0 ||
      state == NULL || g_str_equal (state, call->wait_kind->pending))
    return;

  wait_changed (task, state, chp_handoff_get_by (handoff), NULL);
}

/* What an agent learns of a hold's end besides its state: what the approved act changed. */
static JsonObject *
hold_extra (JsonNode   *changes,
            const char *error)
{
  JsonObject *extra = json_object_new ();

  if (changes != NULL && JSON_NODE_HOLDS_OBJECT (changes))
    json_object_set_member (extra, "changes", json_node_copy (changes));
  if (error != NULL && *error != '\0')
    {
      g_autofree char *code = chp_mcp_format_line (error, 40);

      json_object_set_string_member (extra, "code", code);
    }
  return extra;
}

static void
hold_changed_cb (ChpEngine *engine,
                 ChpHold   *hold,
                 gpointer   user_data)
{
  GTask *task = user_data;
  ToolCall *call = call_of (task);
  const char *state = known_state (call->wait_kind, chp_hold_get_state (hold));
  g_autoptr(JsonObject) extra = NULL;

  if (g_strcmp0 (chp_hold_get_device_id (hold), call->device_id) != 0 ||
      g_strcmp0 (chp_hold_get_id (hold), call->handoff_id) != 0 ||
      state == NULL || g_str_equal (state, call->wait_kind->pending))
    return;

  extra = hold_extra (chp_hold_get_changes (hold), chp_hold_get_error (hold));
  wait_changed (task, state, NULL, extra);
}

static void
engine_stopped_cb (GObject    *engine,
                   GParamSpec *pspec,
                   gpointer    user_data)
{
  GTask *task = user_data;
  g_autoptr(GError) error = NULL;

  if (!chp_engine_get_stopped (CHP_ENGINE (engine)))
    return;
  error = g_error_new_literal (CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_STOPPED,
                               "The person stopped all agents");
  wait_refuse (task, error);
}

static gboolean
wait_timeout_cb (gpointer user_data)
{
  GTask *task = user_data;
  ToolCall *call = call_of (task);

  call->timeout_source = 0;
  wait_answer (task, call->wait_kind != NULL ? call->wait_kind->pending : "waiting", NULL);
  return G_SOURCE_REMOVE;
}

static gboolean
wait_tick_cb (gpointer user_data)
{
  GTask *task = user_data;
  ToolCall *call = call_of (task);
  gint64 waited_s = (g_get_monotonic_time () - call->started_us) / G_USEC_PER_SEC;
  g_autofree char *message = g_strdup_printf ("Waiting for the person… (%" G_GINT64_FORMAT " s)",
                                              waited_s);

  chp_tool_progress (call, call->timeout_ms / 1000.0 / WAIT_PROGRESS_S + 1, message);
  return G_SOURCE_CONTINUE;
}

static gboolean
wait_cancelled_idle_cb (gpointer user_data)
{
  g_autoptr(GTask) task = g_object_ref (user_data);
  ToolCall *call = call_of (task);

  if (!call->finished)
    {
      wait_disconnect (task);
      call->finished = TRUE;
      chp_tool_audit (call, "cancelled", "cancelled");
      chp_tool_trace (call, "cancelled", "cancelled", NULL);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "The call was cancelled");
    }
  return G_SOURCE_REMOVE;
}

static void
wait_cancelled_cb (GCancellable *cancellable,
                   gpointer      user_data)
{
  /* Not from inside the cancellable's handler: disconnecting there would deadlock. */
  g_idle_add_full (G_PRIORITY_DEFAULT, wait_cancelled_idle_cb, g_object_ref (user_data),
                   g_object_unref);
}

/* Nothing decided yet: wait for the change, the timeout or a cancel, with progress meanwhile. */
static void
wait_pending (GTask *task)
{
  ToolCall *call = call_of (task);
  gint64 elapsed_ms = (g_get_monotonic_time () - call->started_us) / 1000;

  if (elapsed_ms >= call->timeout_ms)
    {
      wait_answer (task, call->wait_kind != NULL ? call->wait_kind->pending : "waiting", NULL);
      return;
    }

  chp_tool_progress (call, call->timeout_ms / 1000.0 / WAIT_PROGRESS_S + 1,
                     "Waiting for the person…");
  call->timeout_source = g_timeout_add_full (G_PRIORITY_DEFAULT, call->timeout_ms - elapsed_ms,
                                             wait_timeout_cb, g_object_ref (task), g_object_unref);
  call->tick_source = g_timeout_add_seconds_full (G_PRIORITY_DEFAULT, WAIT_PROGRESS_S,
                                                  wait_tick_cb, g_object_ref (task),
                                                  g_object_unref);
}

static void
wait_status_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_tool_reply_finish (result, &error);
  JsonObject *status = NULL;
  const char *state = NULL;

  if (call->finished)
    return;
  if (node == NULL)
    {
      wait_refuse (task, error);
      return;
    }
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      status = json_node_get_object (node);
      state = known_state (call->wait_kind, chp_mcp_json_string (status, "state", NULL));
    }
  if (state == NULL)
    {
      g_autoptr(GError) bad = g_error_new_literal (CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INTERNAL,
                                                   "The browser's status has no state");

      wait_refuse (task, bad);
      return;
    }

  call->status_known = TRUE;
  if (!g_str_equal (state, call->wait_kind->pending))
    {
      if (g_str_equal (call->wait_kind->kind, "k"))
        {
          g_clear_pointer (&call->final_extra, json_object_unref);
          call->final_extra = hold_extra (json_object_get_member (status, "changes"),
                                          chp_mcp_json_string (status, "error", NULL));
        }
      wait_answer (task, state, chp_mcp_json_string (status, "by", NULL));
      return;
    }
  if (call->final_state != NULL)
    {
      wait_answer (task, call->final_state, call->final_by);
      return;
    }

  wait_pending (task);
}

static void
wait_listen (GTask     *task,
             ChpEngine *engine)
{
  ToolCall *call = call_of (task);
  GCancellable *cancellable = g_task_get_cancellable (task);

  call->stopped_handler = g_signal_connect (engine, "notify::stopped",
                                            G_CALLBACK (engine_stopped_cb), task);
  if (cancellable != NULL)
    call->cancel_handler = g_cancellable_connect (cancellable, G_CALLBACK (wait_cancelled_cb),
                                                  task, NULL);
}

/* A handoff or a hold: listen first, then ask, so a change between the question and its answer
 * is not missed. The handlers hold no reference: wait_disconnect() removes them before the task
 * can go. */
static void
wait_browser (ToolCall   *call,
              ChpEngine  *engine,
              const char *raw_id)
{
  GTask *task = call->task;
  const WaitKind *kind = call->wait_kind;
  g_autoptr(JsonNode) params = NULL;

  if (!chp_tool_is_plain_id (raw_id))
    {
      g_autofree char *message = g_strdup_printf ("Nothing is known as %s", call->wait_id);

      chp_tool_return_error (task, "invalid_params", message, NULL);
      return;
    }
  call->handoff_id = g_strdup (raw_id);
  params = chp_tool_params_new (kind->id_member, chp_tool_string_node (call->handoff_id), NULL);

  call->changed_handler = g_signal_connect (engine, kind->signal, kind->changed_cb, task);
  wait_listen (task, engine);
  chp_tool_agent_call (call->self, engine, call->device_id, kind->status_method, params,
                       STATUS_TIMEOUT_MS, g_task_get_cancellable (task), NULL, NULL,
                       wait_status_cb, g_object_ref (task));
}

static const char * const handoff_states[] = { "waiting", "done", "cancelled", "expired", NULL };
static const char * const hold_states[] = { "held", "done", "declined", "changed", "expired",
                                            "failed", NULL };

static const WaitKind wait_kinds[] = {
  { "h", "waiting", handoff_states, "handoff-changed", "browser.handoff.status", "handoffId",
    G_CALLBACK (handoff_changed_cb) },
  { "k", "held", hold_states, "hold-changed", "browser.hold.status", "holdId",
    G_CALLBACK (hold_changed_cb) },
};

/* @id has the schema's form: "bN:" kind "-" raw id. */
const WaitKind *
chp_tool_wait_kind_of (const char *id)
{
  const char *colon = strchr (id, ':');
  const char *dash = colon != NULL ? strchr (colon, '-') : NULL;

  for (guint i = 0; dash != NULL && i < G_N_ELEMENTS (wait_kinds); i++)
    if (strlen (wait_kinds[i].kind) == (gsize) (dash - colon - 1) &&
        strncmp (wait_kinds[i].kind, colon + 1, dash - colon - 1) == 0)
      return &wait_kinds[i];
  return NULL;
}

static JsonObject *
plan_extra (ChpPlan *plan)
{
  JsonObject *extra = json_object_new ();

  json_object_set_int_member (extra, "step", chp_plan_get_n_used (plan));
  json_object_set_int_member (extra, "of", chp_plan_get_n_steps (plan));
  return extra;
}

static void
plan_changed_cb (ChpPlanList *plans,
                 ChpPlan     *plan,
                 gpointer     user_data)
{
  GTask *task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) extra = NULL;

  if (g_strcmp0 (chp_plan_get_id (plan), call->wait_id) != 0 ||
      g_strcmp0 (chp_plan_get_state (plan), "waiting") == 0)
    return;

  extra = plan_extra (plan);
  wait_changed (task, chp_plan_get_state (plan), chp_plan_get_end_reason (plan), extra);
}

/* A plan is the app's own: its state is known at once. */
static void
wait_plan (ToolCall  *call,
           ChpEngine *engine)
{
  GTask *task = call->task;
  ChpPlan *plan = chp_plan_list_find (chp_engine_get_plans (engine), call->wait_id);

  if (plan == NULL ||
      g_strcmp0 (chp_plan_get_session_id (plan),
                 chp_mcp_context_get_session_id (call->context)) != 0)
    {
      g_autofree char *message = g_strdup_printf ("You have no plan %s", call->wait_id);

      chp_tool_return_error (task, "invalid_params", message, NULL);
      return;
    }

  call->status_known = TRUE;
  call->final_extra = plan_extra (plan);
  if (g_strcmp0 (chp_plan_get_state (plan), "waiting") != 0)
    {
      wait_answer (task, chp_plan_get_state (plan), chp_plan_get_end_reason (plan));
      return;
    }

  call->changed_handler = g_signal_connect (chp_engine_get_plans (engine), "plan-changed",
                                            G_CALLBACK (plan_changed_cb), task);
  wait_listen (task, engine);
  wait_pending (task);
}

void
chp_tool_wait (ToolCall *call)
{
  GTask *task = call->task;
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  const char *id = json_object_get_string_member (call->args, "id");
  const char *colon = strchr (id, ':');
  g_autofree char *alias = NULL;
  const char *device_id;
  gint64 timeout = chp_tool_int_argument (call->args, "timeoutMs", WAIT_DEFAULT_MS);

  if (engine == NULL)
    {
      chp_tool_return_error (task, "internal", "Chaperone is shutting down", NULL);
      return;
    }
  call->wait_id = g_strdup (id);
  call->timeout_ms = CLAMP (timeout, 0, WAIT_MAX_MS);

  if (colon == NULL)
    {
      wait_plan (call, engine);
      return;
    }

  alias = g_strndup (id, colon - id);
  device_id = g_hash_table_lookup (call->self->devices, alias);
  if (device_id == NULL)
    {
      g_autofree char *message = g_strdup_printf ("Nothing is known as %s: no browser is known as "
                                                  "%s", id, alias);

      chp_tool_return_error (task, "invalid_params", message, NULL);
      return;
    }

  call->device_id = g_strdup (device_id);
  call->alias = g_steal_pointer (&alias);
  call->wait_kind = chp_tool_wait_kind_of (id);
  wait_browser (call, engine, strchr (colon, '-') + 1);
}
