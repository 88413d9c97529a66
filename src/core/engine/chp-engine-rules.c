/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-engine-rules.c: the person's "Always allow" rules (docs/security.md).
 *
 * A rule names an agent, and a hold does not: the browser reports a hold (hold.changed) before
 * it answers the act that made it, and only that answer, to a call the engine made for one agent
 * session, says whose act it was. So a held hold that arrives while an act is on its way to that
 * browser is parked until the act's answer comes: then the engine knows the agent, and either a
 * standing rule approves the hold — through chp_engine_resolve_hold_async(), the person's own
 * Approve — with no card, or the card shows as it always did.
 *
 * Who may change a rule: the person, through the hold card's "Always allow" and the Rules list's
 * Revoke (widget actions in src/ui/). Nothing here reads a rule from a browser's event or an
 * agent's arguments: a hold only ever matches one. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-engine"

#include "chp-engine-private.h"

#include "chp-json-util.h"
#include "chp-protocol-error.h"

/* A browser cannot make the engine keep more than this many holds aside. */
#define MAX_PARKED 32
/* Holds whose agent is known; more than the holds that can wait (32) and some that ended. */
#define MAX_HOLD_AGENTS 256
/* On an agent call's task: how a rule's approval of the hold it made ended. */
#define RULE_RUN_KEY "chp-engine-rule-run"

typedef struct
{
  char       *device_id;
  char       *hold_id;
  JsonObject *object;
} ParkedHold;

static void
parked_hold_free (ParkedHold *parked)
{
  g_free (parked->device_id);
  g_free (parked->hold_id);
  json_object_unref (parked->object);
  g_free (parked);
}

static void
rule_expired_cb (ChpApprovalRuleList *rules,
                 ChpApprovalRule     *rule,
                 gpointer             user_data)
{
  ChpEngine *self = user_data;

  if (self->bridge != NULL)
    chp_bridge_audit (self->bridge, "rule", "expire", "expired", NULL, 0, NULL);
}

void
chp_engine_rules_init (ChpEngine *self)
{
  self->rules = chp_approval_rule_list_new ();
  g_signal_connect (self->rules, "expired", G_CALLBACK (rule_expired_cb), self);
  self->parked = g_ptr_array_new_with_free_func ((GDestroyNotify) parked_hold_free);
  self->hold_agents = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
}

void
chp_engine_rules_dispose (ChpEngine *self)
{
  /* The Rules list may keep the model a while longer: it must not call back into us. */
  if (self->rules != NULL)
    g_signal_handlers_disconnect_by_data (self->rules, self);
  g_clear_object (&self->rules);
  g_clear_pointer (&self->parked, g_ptr_array_unref);
  g_clear_pointer (&self->hold_agents, g_hash_table_unref);
}

static JsonObject *
object_member (JsonObject *object,
               const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static gint64
now_ms (void)
{
  return g_get_real_time () / 1000;
}

static char *
hold_key (const char *device_id,
          const char *hold_id)
{
  return g_strdup_printf ("%s\n%s", device_id, hold_id);
}

/* The requests that may come back held: an act on the page, a call to the site's API (a write
 * the extension judged the same way), and a batch of them (held at the step that would write). */
static gboolean
may_hold (const char *method)
{
  return g_strcmp0 (method, "browser.node.action") == 0 ||
         g_strcmp0 (method, "browser.api.call") == 0 ||
         g_strcmp0 (method, "browser.batch") == 0;
}

static gboolean
act_in_flight (ChpEngine  *self,
               const char *device_id,
               AgentCall  *except)
{
  for (guint i = 0; i < self->agent_calls->len; i++)
    {
      AgentCall *call = g_ptr_array_index (self->agent_calls, i);

      if (call != except && g_strcmp0 (call->device_id, device_id) == 0 &&
          may_hold (call->method))
        return TRUE;
    }

  return FALSE;
}

static ParkedHold *
find_parked (ChpEngine  *self,
             const char *device_id,
             const char *hold_id,
             guint      *index)
{
  for (guint i = 0; i < self->parked->len; i++)
    {
      ParkedHold *parked = g_ptr_array_index (self->parked, i);

      if (g_str_equal (parked->device_id, device_id) && g_str_equal (parked->hold_id, hold_id))
        {
          if (index != NULL)
            *index = i;
          return parked;
        }
    }

  return NULL;
}

/* Called for every hold a browser reports, before it is applied. TRUE when it was set aside
 * until the act on its way to that browser answers. A hold that ends while parked is no longer
 * parked and is applied as it ends (browser_wait learns the end). */
gboolean
chp_engine_park_hold (ChpEngine  *self,
                      const char *device_id,
                      JsonObject *object)
{
  const char *hold_id = chp_json_get_string (object, "holdId");
  const char *state = chp_json_get_string (object, "state");
  guint index;

  if (hold_id == NULL || device_id == NULL)
    return FALSE;

  if (g_strcmp0 (state, "held") != 0)
    {
      if (find_parked (self, device_id, hold_id, &index) != NULL)
        g_ptr_array_remove_index (self->parked, index);
      return FALSE;
    }

  if (find_parked (self, device_id, hold_id, NULL) != NULL)
    return TRUE;
  if (chp_hold_list_lookup (self->holds, device_id, hold_id) != NULL ||
      self->parked->len >= MAX_PARKED || !act_in_flight (self, device_id, NULL))
    return FALSE;

  {
    ParkedHold *parked = g_new0 (ParkedHold, 1);

    parked->device_id = g_strdup (device_id);
    parked->hold_id = g_strdup (hold_id);
    parked->object = json_object_ref (object);
    g_ptr_array_add (self->parked, parked);
  }
  return TRUE;
}

static void
remember_hold_agent (ChpEngine  *self,
                     const char *device_id,
                     const char *hold_id,
                     const char *agent)
{
  if (!chp_approval_rule_agent_allowed (agent))
    return;
  /* Holds that ended are forgotten as they end; a browser that went away leaves its own, and
   * those are let go all at once rather than one by one. */
  if (g_hash_table_size (self->hold_agents) >= MAX_HOLD_AGENTS)
    g_hash_table_remove_all (self->hold_agents);
  g_hash_table_replace (self->hold_agents, hold_key (device_id, hold_id), g_strdup (agent));
}

void
chp_engine_forget_hold_agent (ChpEngine *self,
                              ChpHold   *hold)
{
  g_autofree char *key = hold_key (chp_hold_get_device_id (hold), chp_hold_get_id (hold));

  g_hash_table_remove (self->hold_agents, key);
}

/**
 * chp_engine_get_hold_agent:
 *
 * Returns: (nullable): the name of the agent whose act @hold holds, when the engine knows it
 */
const char *
chp_engine_get_hold_agent (ChpEngine *self,
                           ChpHold   *hold)
{
  g_autofree char *key = NULL;

  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);
  g_return_val_if_fail (CHP_IS_HOLD (hold), NULL);

  key = hold_key (chp_hold_get_device_id (hold), chp_hold_get_id (hold));
  return g_hash_table_lookup (self->hold_agents, key);
}

typedef struct
{
  ChpEngine       *self;
  AgentCall       *call;      /* (nullable): the act the hold came from, answered after this */
  JsonNode        *answer;    /* its answer as the browser gave it, `held`; set with @call */
  ChpApprovalRule *rule;      /* the rule that approved it */
  char            *device_id;
  JsonObject      *object;    /* the hold as the browser reported it, held */
} RuleRun;

static void
rule_run_free (RuleRun *run)
{
  g_clear_pointer (&run->answer, json_node_unref);
  g_clear_object (&run->rule);
  g_free (run->device_id);
  json_object_unref (run->object);
  g_object_unref (run->self);
  g_free (run);
}

/* A rule's approval that was not done (no answer in time, the browser gone, the person's Stop):
 * the hold is still held in the browser, so it becomes a card like any other and the person
 * decides. It is not matched again: a listed hold is never a rule's (chp_engine_apply_by_rule()).
 * One whose end came meanwhile (its end forgot its agent) or whose browser was removed is left
 * alone. */
static void
hold_to_card (ChpEngine  *self,
              const char *device_id,
              JsonObject *object)
{
  g_autoptr(ChpHold) hold = chp_hold_new_from_json (device_id, object, NULL);

  if (hold == NULL || chp_engine_get_hold_agent (self, hold) == NULL ||
      chp_device_list_lookup (self->devices, device_id) == NULL)
    return;
  chp_engine_mirror_hold (self, device_id, object);
}

/* What the agent's act answers when a rule ran it. A click answers as if it had never been held:
 * done, with what it changed. A call to the site's API or a batch answers as the browser held
 * it, exactly as when the person approves its card: their tools read a status, a body or steps
 * that only the browser's own answer has; how the hold ended is the engine's note beside it
 * (note_rule_run()), and browser_wait tells the same. So does any act whose approval was not
 * done. */
static JsonNode *
agent_answer (RuleRun    *run,
              JsonObject *ended,
              gboolean    done)
{
  if (done && g_strcmp0 (run->call->method, "browser.node.action") == 0)
    {
      g_autoptr(JsonObject) object = json_object_new ();
      JsonNode *reply = json_node_new (JSON_NODE_OBJECT);
      JsonObject *changes = object_member (ended, "changes");

      json_object_set_boolean_member (object, "done", TRUE);
      if (changes != NULL)
        json_object_set_object_member (object, "changes", json_object_ref (changes));
      json_node_set_object (reply, object);
      return reply;
    }

  return g_steal_pointer (&run->answer);
}

/* The agent's tool must not say that the person decides when no card waits: it learns from the
 * engine, on the call's task, that the rule approved its hold and how that ended — the browser's
 * answer, which it still gets as it was, is no witness to that. */
static void
note_rule_run (RuleRun    *run,
               JsonObject *ended,
               const char *state)
{
  JsonObject *ran = json_object_new ();
  JsonObject *changes = object_member (ended, "changes");
  const char *error = chp_json_get_string (ended, "error");

  json_object_set_string_member (ran, "site", chp_approval_rule_get_site (run->rule));
  json_object_set_int_member (ran, "expiresAt", chp_approval_rule_get_expires_at (run->rule));
  json_object_set_string_member (ran, "state", state);
  if (changes != NULL)
    json_object_set_object_member (ran, "changes", json_object_ref (changes));
  if (error != NULL)
    json_object_set_string_member (ran, "error", error);
  g_object_set_data_full (G_OBJECT (run->call->task), RULE_RUN_KEY, ran,
                          (GDestroyNotify) json_object_unref);
}

/**
 * chp_engine_agent_call_get_rule_run:
 * @result: a finished chp_engine_agent_call_async()'s result
 *
 * When the call's act was held and the person's "Always allow" rule approved the hold at once
 * (no card), how that ended: the rule's `site` and `expiresAt`, the hold's `state` (`done`,
 * `changed`, `failed`, `expired`…), and the browser's `changes` and `error` code. The call's
 * answer itself stays the browser's, `held`.
 *
 * Returns: (transfer none) (nullable): that, or %NULL when no rule's approval ended the hold
 *   (none matched, or it was not carried out and the hold is a card for the person)
 */
JsonObject *
chp_engine_agent_call_get_rule_run (GAsyncResult *result)
{
  g_return_val_if_fail (G_IS_TASK (result), NULL);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == chp_engine_agent_call_async,
                        NULL);

  return g_object_get_data (G_OBJECT (result), RULE_RUN_KEY);
}

/* The rule's approval ran. Only an act that was done counts as the rule's use (in the list, the
 * store and Activity); one that ended otherwise (changed, expired, failed) was mirrored and
 * audited as it ended, and one that was not done at all becomes a card. */
static void
rule_resolved_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  RuleRun *run = user_data;
  ChpEngine *self = run->self;
  AgentCall *call = run->call;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_engine_person_call_finish (self, result, &error);
  JsonObject *ended = node != NULL && JSON_NODE_HOLDS_OBJECT (node)
                      ? json_node_get_object (node) : NULL;
  const char *state = ended != NULL ? chp_json_get_string (ended, "state") : NULL;
  gboolean done = g_strcmp0 (state, "done") == 0;

  if (done)
    {
      gint64 now = now_ms ();

      chp_approval_rule_record_use (run->rule, now);
      if (self->store != NULL)
        chp_store_use_rule_async (self->store, chp_approval_rule_get_id (run->rule), now, NULL,
                                  NULL, NULL);
      if (self->bridge != NULL)
        chp_bridge_audit (self->bridge, "rule", "use", "approved", run->device_id, 0, NULL);
      g_message ("a rule approved hold %s on %s", chp_json_get_string (run->object, "holdId"),
                 run->device_id);
    }
  else if (state == NULL || g_str_equal (state, "held"))
    {
      g_message ("a rule's approval was not done: %s",
                 error != NULL ? error->message : "the hold is still held");
      hold_to_card (self, run->device_id, run->object);
    }

  if (call != NULL)
    {
      g_ptr_array_remove_fast (self->agent_calls, call);
      if (!call->answered)
        {
          if (state != NULL && !g_str_equal (state, "held"))
            note_rule_run (run, ended, state);
          g_task_return_pointer (call->task, agent_answer (run, ended, done),
                                 (GDestroyNotify) json_node_unref);
        }
      chp_engine_agent_call_free (call);
    }

  rule_run_free (run);
}

/* A held hold about to be applied: when its agent is known and a standing rule covers it, the
 * rule approves it through the person's Approve path and it never becomes a card. TRUE then;
 * @call (when given) is answered once the approval has run, and the use is counted only if the
 * act was done (rule_resolved_cb()). Never while the person has stopped everything, and never
 * for an act Stop all already answered. */
gboolean
chp_engine_apply_by_rule (ChpEngine  *self,
                          const char *device_id,
                          JsonObject *object,
                          AgentCall  *call,
                          JsonNode   *answer)
{
  g_autoptr(ChpHold) hold = NULL;
  ChpApprovalRule *rule;
  const char *agent;
  RuleRun *run;

  if (self->stopped || (call != NULL && call->answered) ||
      g_strcmp0 (chp_json_get_string (object, "state"), "held") != 0 ||
      g_strcmp0 (chp_json_get_string (object, "kind"), "write") != 0)
    return FALSE;

  hold = chp_hold_new_from_json (device_id, object, NULL);
  if (hold == NULL || chp_hold_list_lookup (self->holds, device_id, chp_hold_get_id (hold)) != NULL)
    return FALSE;
  agent = chp_engine_get_hold_agent (self, hold);
  rule = agent != NULL ? chp_approval_rule_list_find_match (self->rules, agent,
                                                            chp_hold_get_site (hold),
                                                            chp_hold_get_kind (hold), now_ms ())
                       : NULL;
  if (rule == NULL)
    return FALSE;

  run = g_new0 (RuleRun, 1);
  run->self = g_object_ref (self);
  run->call = call;
  run->answer = answer != NULL ? json_node_ref (answer) : NULL;
  run->rule = g_object_ref (rule);
  run->device_id = g_strdup (device_id);
  run->object = json_object_ref (object);
  chp_engine_resolve_hold_async (self, device_id, chp_hold_get_id (hold), "approve",
                                 rule_resolved_cb, run);
  return TRUE;
}

/* An act answered (@answer, %NULL when it failed): its held hold, parked meanwhile, is now known
 * to be its agent's. Every parked hold of that browser goes on its way once no act is left on
 * the way there. TRUE when a rule took @call over (rule_resolved_cb() answers it). */
gboolean
chp_engine_release_holds (ChpEngine *self,
                          AgentCall *call,
                          JsonNode  *answer)
{
  JsonObject *o = answer != NULL && JSON_NODE_HOLDS_OBJECT (answer)
                  ? json_node_get_object (answer) : NULL;
  JsonObject *held = o != NULL && chp_json_get_bool (o, "held", FALSE)
                     ? object_member (o, "hold") : NULL;
  const char *held_id = held != NULL ? chp_json_get_string (held, "holdId") : NULL;
  gboolean busy;
  gboolean taken = FALSE;

  if (!may_hold (call->method))
    return FALSE;

  if (held_id != NULL && call->agent != NULL)
    remember_hold_agent (self, call->device_id, held_id, call->agent);

  busy = act_in_flight (self, call->device_id, call);
  for (guint i = 0; i < self->parked->len;)
    {
      ParkedHold *parked = g_ptr_array_index (self->parked, i);
      gboolean mine = g_strcmp0 (parked->hold_id, held_id) == 0;
      g_autoptr(JsonObject) object = NULL;
      g_autofree char *device_id = NULL;

      if (!g_str_equal (parked->device_id, call->device_id) || (!mine && busy))
        {
          i++;
          continue;
        }

      object = json_object_ref (parked->object);
      device_id = g_strdup (parked->device_id);
      g_ptr_array_remove_index (self->parked, i);
      if (mine && !taken && chp_engine_apply_by_rule (self, device_id, object, call, answer))
        taken = TRUE;
      else
        chp_engine_apply_hold_now (self, device_id, object);
      /* Applying may have changed the array: look again from the start. */
      i = 0;
    }

  return taken;
}

/* Whether the person may make a rule from @hold's card: a write, still held, on a site that is an
 * origin, from an agent whose name the engine knows. */
gboolean
chp_engine_can_allow_always (ChpEngine *self,
                             ChpHold   *hold)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), FALSE);
  g_return_val_if_fail (CHP_IS_HOLD (hold), FALSE);

  return chp_hold_is_held (hold) &&
         chp_hold_list_lookup (self->holds, chp_hold_get_device_id (hold),
                               chp_hold_get_id (hold)) == hold &&
         chp_approval_rule_kind_allowed (chp_hold_get_kind (hold)) &&
         chp_approval_rule_site_allowed (chp_hold_get_site (hold)) &&
         chp_approval_rule_agent_allowed (chp_engine_get_hold_agent (self, hold));
}

static void
allow_resolved_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  JsonNode *node = chp_engine_person_call_finish (CHP_ENGINE (source), result, &error);

  if (node == NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, node, (GDestroyNotify) json_node_unref);
}

static void
rule_revoked_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ChpEngine *self = g_task_get_source_object (task);
  ChpApprovalRule *rule = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;

  /* No standing rule of that id in the store is as good: nothing would bring it back. */
  if (!chp_store_write_finish (CHP_STORE (source), result, &error) &&
      !g_error_matches (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND))
    {
      g_message ("rule not revoked in the store: %s", error->message);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  if (self->rules != NULL)
    chp_approval_rule_list_remove (self->rules, chp_approval_rule_get_id (rule));
  if (self->bridge != NULL)
    chp_bridge_audit (self->bridge, "rule", "revoke", "revoked", NULL, 0,
                      g_object_get_data (G_OBJECT (task), "why"));
  g_task_return_boolean (task, TRUE);
}

/* @rule stops matching now; once the store has it revoked it leaves the list and Activity says
 * so, and not before: a revoke the disk refused would come back at the next start, and the
 * person is told instead (chp_engine_revoke_rule_finish()'s error). @why is the audit's code. */
static void
revoke_rule (ChpEngine           *self,
             ChpApprovalRule     *rule,
             const char          *why,
             GAsyncReadyCallback  callback,
             gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, NULL, callback, user_data);

  g_task_set_source_tag (task, chp_engine_revoke_rule_async);
  g_task_set_task_data (task, g_object_ref (rule), g_object_unref);
  g_object_set_data (G_OBJECT (task), "why", (gpointer) why);
  chp_approval_rule_set_revoked (rule);

  if (self->store == NULL)
    {
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_DEVICE_OFFLINE,
                               "Chaperone is not running");
      return;
    }
  chp_store_revoke_rule_async (self->store, chp_approval_rule_get_id (rule), now_ms (), NULL,
                               rule_revoked_cb, g_steal_pointer (&task));
}

static void
rule_saved_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ChpEngine *self = g_task_get_source_object (task);
  ChpRuleInfo *info = g_task_get_task_data (task);
  ChpHold *hold = g_object_get_data (G_OBJECT (task), "hold");
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpApprovalRule) rule = NULL;

  /* Stored first, listed and used second: no rule works that a restart would lose. */
  if (!chp_store_write_finish (CHP_STORE (source), result, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  /* At the cap the oldest rule makes room, revoked in the store too: else the next start would
   * bring it back and leave this newest one out. */
  rule = chp_approval_rule_new (info);
  while (!chp_approval_rule_list_add (self->rules, rule))
    {
      g_autoptr(ChpApprovalRule) oldest = g_list_model_get_item (G_LIST_MODEL (self->rules), 0);

      chp_approval_rule_list_remove (self->rules, chp_approval_rule_get_id (oldest));
      revoke_rule (self, oldest, "too_many_rules", NULL, NULL);
    }
  if (self->bridge != NULL)
    chp_bridge_audit (self->bridge, "rule", "create", "created", chp_hold_get_device_id (hold),
                      0, NULL);

  /* And the hold the person chose it on is approved, as Approve would. */
  chp_engine_resolve_hold_async (self, chp_hold_get_device_id (hold), chp_hold_get_id (hold),
                                 "approve", allow_resolved_cb, g_steal_pointer (&task));
}

/**
 * chp_engine_allow_always_async:
 * @hold: a held write on the person's screen (chp_engine_can_allow_always())
 * @seconds: how long the rule stands, at most %CHP_APPROVAL_RULE_MAX_SECONDS
 *
 * The person chose "Always allow" on @hold's card (a widget action; nothing else calls this): a
 * rule for this kind of act, on this site, for this agent, until @seconds from now — stored
 * durably, listed and audited — and @hold approved. Finish with chp_engine_person_call_finish().
 */
void
chp_engine_allow_always_async (ChpEngine           *self,
                               ChpHold             *hold,
                               guint                seconds,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  ChpRuleInfo *info;
  gint64 now = now_ms ();

  g_return_if_fail (CHP_IS_ENGINE (self));
  g_return_if_fail (CHP_IS_HOLD (hold));

  task = g_task_new (self, NULL, callback, user_data);
  g_task_set_source_tag (task, chp_engine_allow_always_async);

  if (!chp_engine_can_allow_always (self, hold) || seconds < 60 ||
      seconds > CHP_APPROVAL_RULE_MAX_SECONDS)
    {
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                               "Only a held change of data, by a known agent, on a web site, "
                               "can be always allowed, for up to 30 days");
      return;
    }
  if (self->store == NULL)
    {
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_DEVICE_OFFLINE,
                               "Chaperone is not running");
      return;
    }

  info = g_new0 (ChpRuleInfo, 1);
  info->rule_id = g_uuid_string_random ();
  info->agent = g_strdup (chp_engine_get_hold_agent (self, hold));
  info->site = g_ascii_strdown (chp_hold_get_site (hold), -1);
  info->kind = g_strdup (chp_hold_get_kind (hold));
  info->created_at = now;
  info->expires_at = now + (gint64) seconds * 1000;
  g_task_set_task_data (task, info, (GDestroyNotify) chp_rule_info_free);
  g_object_set_data_full (G_OBJECT (task), "hold", g_object_ref (hold), g_object_unref);
  chp_store_save_rule_async (self->store, info, NULL, rule_saved_cb, g_steal_pointer (&task));
}

/**
 * chp_engine_revoke_rule_async:
 *
 * The person pressed Revoke in the Rules list (a widget action): the rule stops matching at once,
 * is marked revoked in the store, then leaves the list and is audited. When the store fails the
 * rule stays listed, matching nothing, and the error says so: pressing Revoke again retries.
 * Finish with chp_engine_revoke_rule_finish().
 */
void
chp_engine_revoke_rule_async (ChpEngine           *self,
                              const char          *rule_id,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  ChpApprovalRule *rule;

  g_return_if_fail (CHP_IS_ENGINE (self));
  g_return_if_fail (rule_id != NULL);

  rule = chp_approval_rule_list_lookup (self->rules, rule_id);
  if (rule == NULL)
    {
      g_task_report_new_error (self, callback, user_data, chp_engine_revoke_rule_async,
                               G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                               "No standing rule has the id %s", rule_id);
      return;
    }

  revoke_rule (self, rule, NULL, callback, user_data);
}

gboolean
chp_engine_revoke_rule_finish (ChpEngine     *self,
                               GAsyncResult  *result,
                               GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

/* Returns: (transfer none): the person's standing rules, which the Rules list shows */
ChpApprovalRuleList *
chp_engine_get_rules (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->rules;
}
