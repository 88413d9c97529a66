/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-tools-rules.c: the person's "Always allow" rules as an agent meets them, on a real
 * engine with a C client playing the extension: a held write the person always-allows on its
 * card makes a rule and runs; the agent's next matching write is approved by the engine through
 * the person's Approve path with no card, counted, stored and audited; another agent, another
 * site, a send, an expired or revoked rule get a card as before; and nothing a browser says or an
 * agent calls makes a rule; a revoke not saved is not audited as one; at the cap the oldest rule
 * is revoked in the store too. What the agent is told of a rule's approval:
 * test-mcp-tools-rules-ran.c. */
#include "config.h"

#include "test-mcp-tools-rules.h"

#include "chp-protocol-error.h"

#include <sqlite3.h>
#include <string.h>

#define HOLD_JSON \
  "{\"holdId\":\"%s\",\"state\":\"%s\",\"kind\":\"%s\",\"reason\":\"label\"," \
  "\"word\":null,\"control\":\"Save draft\",\"site\":\"%s\",\"fields\":[]," \
  "\"signature\":\"9f2c\",\"tabId\":7,\"createdAt\":1%s}"

char *
hold_json (const char *id,
           const char *state,
           const char *kind,
           const char *site,
           const char *extra)
{
  return g_strdup_printf (HOLD_JSON, id, state, kind, site, extra);
}

static void
hold_arrived_cb (ChpEngine *engine,
                 ChpHold   *hold,
                 gpointer   user_data)
{
  ((World *) user_data)->arrived++;
}

guint
n_holds (World *w)
{
  return g_list_model_get_n_items (G_LIST_MODEL (chp_engine_get_holds (w->env.engine)));
}

static guint
n_rules (World *w)
{
  return g_list_model_get_n_items (G_LIST_MODEL (chp_engine_get_rules (w->env.engine)));
}

ChpAgentSession *
add_agent (World      *w,
           const char *session_id,
           const char *name)
{
  ChpAgentSession *agent = chp_agent_session_new (session_id, name, 1);

  chp_agent_session_set_client_key (agent, name);
  chp_agent_session_list_add (chp_engine_get_agent_sessions (w->env.engine), agent);
  return agent;
}

/* An agent's tabs and its snapshot of the granted one, as before any act of its own. */
static void
prime (World         *w,
       ChpMcpContext *context)
{
  g_autofree char *tabs = g_strdup_printf (TABS_ANSWER, g_get_real_time () / 1000 + 600000);
  g_autofree char *shop = shop_snapshot ();
  g_autoptr(JsonObject) request = NULL;
  Call call = { 0, };

  call_start (w->env.tools, context, "browser_tabs", NULL, NULL, &call);
  request = browser_request (w->client, "browser.tabs");
  browser_answer (w->client, request, tabs);
  call_wait (&call);
  g_clear_pointer (&request, json_object_unref);
  call_start (w->env.tools, context, "browser_snapshot", "{\"tab\":\"b1:7\"}", NULL, &call);
  request = browser_request (w->client, "browser.context");
  browser_answer (w->client, request, shop);
  call_wait (&call);
  g_assert_false (result_is_error (call.result));
  call_clear (&call);
}

/* A browser with a granted tab, which the first agent has read. */
void
world_start (World *w)
{
  env_setup (&w->env, NULL);
  w->client = browser_connect (&w->env);
  g_signal_connect (w->env.engine, "hold-arrived", G_CALLBACK (hold_arrived_cb), w);
  prime (w, w->env.context);
}

void
world_stop (World *w)
{
  g_clear_pointer (&w->client, chp_test_client_free);
  env_teardown (&w->env, NULL);
}

/* The agent of @context clicks; the browser holds the click as @kind on @site: its event first,
 * then its answer, as the extension sends them. @call is left to the caller to wait on. */
void
act_held (World         *w,
          ChpMcpContext *context,
          const char    *id,
          const char    *kind,
          const char    *site,
          Call          *call)
{
  g_autofree char *held = hold_json (id, "held", kind, site, "");
  g_autofree char *answer = g_strdup_printf ("{\"held\":true,\"hold\":%s}", held);
  g_autofree char *args = NULL;
  g_autoptr(JsonObject) request = NULL;

  /* Not the same click three times running: the loop guard would pause the agent. */
  args = g_strdup_printf ("{\"tab\":\"b1:7\",\"ref\":\"1:e%u\",\"action\":\"click\"}",
                          1 + w->clicks++ % 2);
  call_start (w->env.tools, context, "browser_act", args, NULL, call);
  request = browser_request (w->client, "browser.node.action");
  browser_event (w->client, "hold.changed", held);
  browser_answer (w->client, request, answer);
}

/* A held act that makes a card: the agent learns `held`, and the person sees it. */
ChpHold *
act_makes_card (World         *w,
                ChpMcpContext *context,
                const char    *id,
                const char    *kind,
                const char    *site)
{
  guint arrived = w->arrived;
  Call call = { 0, };

  act_held (w, context, id, kind, site, &call);
  call_wait (&call);
  g_assert_true (json_object_get_boolean_member (result_structured (call.result), "held"));
  call_clear (&call);
  g_assert_cmpuint (w->arrived, ==, arrived + 1);
  return chp_hold_list_lookup (chp_engine_get_holds (w->env.engine), w->client->device_id, id);
}

void
done_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(GError) error = NULL;
  JsonNode *node = chp_engine_person_call_finish (CHP_ENGINE (source), result, &error);

  g_assert_no_error (error);
  json_node_unref (node);
  *(gboolean *) user_data = TRUE;
}

static void
revoked_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (chp_engine_revoke_rule_finish (CHP_ENGINE (source), result, &error));
  g_assert_no_error (error);
  *(gboolean *) user_data = TRUE;
}

/* The audit's "rule" rows, oldest first, one "method outcome" a line. */
typedef struct
{
  gboolean   done;
  GPtrArray *rows;
} AuditRead;

static void
audit_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  AuditRead *read = user_data;

  read->rows = chp_store_list_audit_finish (CHP_STORE (source), result, NULL);
  read->done = TRUE;
}

char *
rule_audit (World *w)
{
  g_autoptr(GString) out = g_string_new (NULL);
  AuditRead read = { 0, };

  chp_store_list_audit_async (chp_engine_get_store (w->env.engine), 500, NULL, audit_cb, &read);
  chp_test_until (read.done);
  g_assert_nonnull (read.rows);
  for (guint i = read.rows->len; i > 0; i--)
    {
      ChpAuditEntry *entry = g_ptr_array_index (read.rows, i - 1);

      if (g_strcmp0 (entry->category, "rule") == 0)
        g_string_append_printf (out, "%s %s%s%s\n", entry->method, entry->outcome,
                                entry->error_code != NULL ? " " : "",
                                entry->error_code != NULL ? entry->error_code : "");
    }
  g_ptr_array_unref (read.rows);
  return g_string_free (g_steal_pointer (&out), FALSE);
}

typedef struct
{
  gboolean   done;
  GPtrArray *rules;
} RulesRead;

static void
rules_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  RulesRead *read = user_data;

  read->rules = chp_store_load_rules_finish (CHP_STORE (source), result, NULL);
  read->done = TRUE;
}

/* What a restart would load. */
GPtrArray *
stored_rules (World *w)
{
  RulesRead read = { 0, };

  chp_store_load_rules_async (chp_engine_get_store (w->env.engine), g_get_real_time () / 1000,
                              NULL, rules_cb, &read);
  chp_test_until (read.done);
  g_assert_nonnull (read.rules);
  return read.rules;
}

static void
test_always_allow (void)
{
  World w = { 0, };
  g_autoptr(ChpAgentSession) agent = NULL;
  g_autoptr(ChpAgentSession) other = NULL;
  g_autoptr(ChpMcpContext) other_context = chp_mcp_context_new ("session-2");
  g_autoptr(JsonObject) request = NULL;
  g_autoptr(GPtrArray) stored = NULL;
  g_autofree char *done = NULL;
  g_autofree char *audit = NULL;
  ChpApprovalRule *rule;
  ChpHold *hold;
  JsonObject *params;
  JsonObject *structured;
  gboolean finished = FALSE;
  Call call = { 0, };

  world_start (&w);
  agent = add_agent (&w, "session-1", "test-agent");
  other = add_agent (&w, "session-2", "other-agent");

  /* A held write: a card, which knows whose act it was and offers "Always allow". */
  hold = act_makes_card (&w, w.env.context, "K1", "write", SHOP);
  g_assert_nonnull (hold);
  g_assert_cmpstr (chp_engine_get_hold_agent (w.env.engine, hold), ==, "test-agent");
  g_assert_true (chp_engine_can_allow_always (w.env.engine, hold));

  /* The person's "Always allow, for 1 hour": the rule, then this hold approved as Approve does. */
  chp_engine_allow_always_async (w.env.engine, hold, 3600, done_cb, &finished);
  request = browser_request (w.client, "extension.hold.resolve");
  params = json_object_get_object_member (request, "params");
  g_assert_cmpstr (json_object_get_string_member (params, "holdId"), ==, "K1");
  g_assert_cmpstr (json_object_get_string_member (params, "outcome"), ==, "approve");
  done = hold_json ("K1", "done", "write", SHOP, "");
  browser_answer (w.client, request, done);
  chp_test_until (finished);
  g_clear_pointer (&request, json_object_unref);
  g_assert_cmpuint (n_holds (&w), ==, 0);
  g_assert_cmpuint (n_rules (&w), ==, 1);
  rule = g_list_model_get_item (G_LIST_MODEL (chp_engine_get_rules (w.env.engine)), 0);
  g_object_unref (rule);   /* the list keeps it */
  g_assert_cmpstr (chp_approval_rule_get_agent (rule), ==, "test-agent");
  g_assert_cmpstr (chp_approval_rule_get_site (rule), ==, SHOP);
  g_assert_cmpstr (chp_approval_rule_get_kind (rule), ==, "write");
  g_assert_cmpint (chp_approval_rule_get_use_count (rule), ==, 0);
  g_assert_cmpint (chp_approval_rule_get_expires_at (rule) - chp_approval_rule_get_created_at (rule),
                   ==, 3600 * 1000);

  /* The same agent's next write on that site: the engine approves it through the person's
   * path, no card comes, and the agent's act answers done with what changed. */
  {
    guint arrived = w.arrived;
    g_autofree char *ran = hold_json ("K2", "done", "write", SHOP,
                                      ",\"changes\":{\"added\":0,\"titleChanged\":true}");

    act_held (&w, w.env.context, "K2", "write", SHOP, &call);
    request = browser_request (w.client, "extension.hold.resolve");
    params = json_object_get_object_member (request, "params");
    g_assert_cmpstr (json_object_get_string_member (params, "holdId"), ==, "K2");
    g_assert_cmpstr (json_object_get_string_member (params, "outcome"), ==, "approve");
    g_assert_cmpuint (n_holds (&w), ==, 0);
    g_assert_false (call.done);
    browser_answer (w.client, request, ran);
    browser_event (w.client, "hold.changed", ran);
    call_wait (&call);
    g_clear_pointer (&request, json_object_unref);
    g_test_message ("%s", result_text (call.result));
    g_assert_false (result_is_error (call.result));
    structured = result_structured (call.result);
    g_assert_false (json_object_has_member (structured, "held"));
    g_assert_true (json_object_get_boolean_member (structured, "ok"));
    g_assert_true (json_object_has_member (structured, "changes"));
    g_assert_cmpuint (w.arrived, ==, arrived);
    g_assert_cmpuint (n_holds (&w), ==, 0);
    g_assert_cmpint (chp_approval_rule_get_use_count (rule), ==, 1);
    call_clear (&call);
  }

  /* Stored, with its use, for the next start. */
  stored = stored_rules (&w);
  g_assert_cmpuint (stored->len, ==, 1);
  g_assert_cmpint (((ChpRuleInfo *) g_ptr_array_index (stored, 0))->use_count, ==, 1);

  /* Another agent, a send, another site (even a subdomain): a card each, as ever. */
  prime (&w, other_context);
  hold = act_makes_card (&w, other_context, "K3", "write", SHOP);
  g_assert_nonnull (hold);
  g_assert_cmpstr (chp_engine_get_hold_agent (w.env.engine, hold), ==, "other-agent");
  hold = act_makes_card (&w, w.env.context, "K4", "outward", SHOP);
  g_assert_nonnull (hold);
  /* Never offered for a send. */
  g_assert_false (chp_engine_can_allow_always (w.env.engine, hold));
  g_assert_nonnull (act_makes_card (&w, w.env.context, "K5", "write", "https://evil.shop.example"));
  g_assert_nonnull (act_makes_card (&w, w.env.context, "K6", "delete", SHOP));
  g_assert_cmpint (chp_approval_rule_get_use_count (rule), ==, 1);

  /* Revoked in the list: the very next matching write is a card again, and once the store has
   * it the rule leaves the list. */
  finished = FALSE;
  chp_engine_revoke_rule_async (w.env.engine, chp_approval_rule_get_id (rule), revoked_cb,
                                &finished);
  g_assert_nonnull (act_makes_card (&w, w.env.context, "K7", "write", SHOP));
  chp_test_until (finished);
  g_assert_cmpuint (n_rules (&w), ==, 0);
  g_clear_pointer (&stored, g_ptr_array_unref);
  stored = stored_rules (&w);
  g_assert_cmpuint (stored->len, ==, 0);

  audit = rule_audit (&w);
  g_assert_cmpstr (audit, ==, "create created\nuse approved\nrevoke revoked\n");
  world_stop (&w);
}

/* A rule whose time is up never matches, even before the list's timer takes it away. */
static void
test_expired (void)
{
  World w = { 0, };
  g_autoptr(ChpAgentSession) agent = NULL;
  g_autoptr(ChpApprovalRule) rule = NULL;
  gint64 now = g_get_real_time () / 1000;
  ChpRuleInfo info = {
    .rule_id = "r-old", .agent = "test-agent", .site = SHOP, .kind = "write",
    .created_at = now - 7200 * 1000, .expires_at = now - 1,
  };

  world_start (&w);
  agent = add_agent (&w, "session-1", "test-agent");
  rule = chp_approval_rule_new (&info);
  g_assert_false (chp_approval_rule_matches (rule, "test-agent", SHOP, "write", now));
  chp_approval_rule_list_add (chp_engine_get_rules (w.env.engine), rule);
  g_assert_nonnull (act_makes_card (&w, w.env.context, "K1", "write", SHOP));
  g_assert_cmpint (chp_approval_rule_get_use_count (rule), ==, 0);
  chp_test_until (n_rules (&w) == 0);
  {
    g_autofree char *audit = rule_audit (&w);

    g_assert_cmpstr (audit, ==, "expire expired\n");
  }
  world_stop (&w);
}

/* Only the person makes a rule: a browser's events and answers that speak of rules, and every
 * tool an agent has, leave the rules as they were; and a browser cannot pass a hold off as an
 * agent's act to have a rule approve it. */
static void
refused_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_engine_agent_call_finish (CHP_ENGINE (source), result, &error);

  g_assert_null (node);
  g_assert_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_UNKNOWN_METHOD);
  *(gboolean *) user_data = TRUE;
}

static void
test_nothing_else_makes_one (void)
{
  World w = { 0, };
  g_autoptr(ChpAgentSession) agent = NULL;
  g_autoptr(JsonNode) tools = NULL;
  g_autoptr(JsonObject) request = NULL;
  g_autofree char *ruled = NULL;
  g_autofree char *answer = NULL;
  g_autofree char *done = NULL;
  JsonArray *list;
  ChpHold *hold;
  gboolean finished = FALSE;
  Call call = { 0, };

  world_start (&w);
  agent = add_agent (&w, "session-1", "test-agent");

  /* A hold.changed dressed as a rule, and an act's answer too: a card, no rule. */
  ruled = hold_json ("K1", "held", "write", SHOP,
                     ",\"rule\":{\"agent\":\"test-agent\",\"site\":\"" SHOP "\",\"kind\":\"write\","
                     "\"expiresAt\":99999999999999},\"alwaysAllow\":true,\"approvedBy\":\"rule\","
                     "\"agent\":\"test-agent\",\"duration\":2592000");
  answer = g_strdup_printf ("{\"held\":true,\"alwaysAllow\":true,\"rule\":{\"days\":30},"
                            "\"hold\":%s}", ruled);
  call_start (w.env.tools, w.env.context, "browser_act",
              "{\"tab\":\"b1:7\",\"ref\":\"1:e1\",\"action\":\"click\"}", NULL, &call);
  request = browser_request (w.client, "browser.node.action");
  browser_event (w.client, "hold.changed", ruled);
  browser_answer (w.client, request, answer);
  call_wait (&call);
  g_assert_true (json_object_get_boolean_member (result_structured (call.result), "held"));
  g_assert_nonnull (strstr (result_text (call.result), "The person decides"));
  g_assert_cmpuint (n_holds (&w), ==, 1);
  g_assert_cmpuint (n_rules (&w), ==, 0);
  g_clear_pointer (&request, json_object_unref);
  call_clear (&call);

  /* No tool of the agent's makes, widens or extends a rule: none is named for one. */
  tools = chp_mcp_tools_list (w.env.tools);
  list = json_node_get_array (tools);
  g_assert_cmpuint (json_array_get_length (list), >, 0);
  for (guint i = 0; i < json_array_get_length (list); i++)
    {
      const char *name = json_object_get_string_member (json_array_get_object_element (list, i),
                                                        "name");

      g_assert_null (strstr (name, "rule"));
      g_assert_null (strstr (name, "allow"));
      g_assert_null (strstr (name, "approve"));

      /* And none takes a rule along: arguments that speak of one are refused before anything
       * is sent anywhere. */
      call_run (w.env.tools, w.env.context, name,
                "{\"alwaysAllow\":true,\"rule\":{\"site\":\"" SHOP "\",\"kind\":\"write\","
                "\"days\":30}}", &call);
      g_assert_error (call.error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS);
      call_clear (&call);
    }
  g_assert_cmpuint (n_rules (&w), ==, 0);

  /* The person makes one; then a write the browser reports with no act of the agent's on its
   * way cannot be passed off as the agent's: a card. */
  hold = chp_hold_list_lookup (chp_engine_get_holds (w.env.engine), w.client->device_id, "K1");
  chp_engine_allow_always_async (w.env.engine, hold, 3600, done_cb, &finished);
  request = browser_request (w.client, "extension.hold.resolve");
  done = hold_json ("K1", "done", "write", SHOP, "");
  browser_answer (w.client, request, done);
  chp_test_until (finished);
  g_assert_cmpuint (n_rules (&w), ==, 1);
  {
    g_autofree char *lone = hold_json ("K2", "held", "write", SHOP, "");
    guint arrived = w.arrived;

    browser_event (w.client, "hold.changed", lone);
    chp_test_until (w.arrived == arrived + 1);
    g_assert_nonnull (chp_hold_list_lookup (chp_engine_get_holds (w.env.engine),
                                            w.client->device_id, "K2"));
  }
  /* An agent's call for a method of the person's is refused before it is sent. */
  {
    g_autoptr(JsonNode) params = json_from_string ("{\"site\":\"" SHOP "\",\"days\":30}", NULL);
    g_autoptr(ChpApprovalRule) rule = NULL;
    gboolean refused = FALSE;

    chp_engine_agent_call_as_async (w.env.engine, "session-1", w.client->device_id,
                                    "extension.rules.allow", params, 1000, NULL, refused_cb,
                                    &refused);
    chp_test_until (refused);
    g_assert_cmpuint (n_rules (&w), ==, 1);
    rule = g_list_model_get_item (G_LIST_MODEL (chp_engine_get_rules (w.env.engine)), 0);
    g_assert_cmpint (chp_approval_rule_get_use_count (rule), ==, 0);
    g_assert_cmpint (chp_approval_rule_get_expires_at (rule) - chp_approval_rule_get_created_at (rule),
                     ==, 3600 * 1000);
  }
  g_clear_pointer (&request, json_object_unref);
  world_stop (&w);
}

/* The person's "Always allow, for 1 hour" on the card of @id, a held write of the first agent's on
 * @site. Returns: (transfer none): the rule, as the list keeps it */
ChpApprovalRule *
make_rule (World      *w,
           const char *id,
           const char *site)
{
  g_autoptr(JsonObject) request = NULL;
  g_autofree char *done = hold_json (id, "done", "write", site, "");
  ChpApprovalRuleList *rules = chp_engine_get_rules (w->env.engine);
  ChpHold *hold = act_makes_card (w, w->env.context, id, "write", site);
  gboolean finished = FALSE;
  guint n = g_list_model_get_n_items (G_LIST_MODEL (rules));
  g_autoptr(ChpApprovalRule) rule = NULL;

  g_assert_true (chp_engine_can_allow_always (w->env.engine, hold));
  chp_engine_allow_always_async (w->env.engine, hold, 3600, done_cb, &finished);
  request = browser_request (w->client, "extension.hold.resolve");
  browser_answer (w->client, request, done);
  chp_test_until (finished);
  rule = g_list_model_get_item (G_LIST_MODEL (rules), MIN (n, CHP_APPROVAL_RULE_LIST_MAX - 1));
  g_assert_cmpstr (chp_approval_rule_get_site (rule), ==, site);
  return rule;
}

typedef struct
{
  gboolean  done;
  GError   *error;
} Answer;

/* Another connection to the engine's database makes a rule's revoke fail as a full disk would
 * (@refuse), or lets it through again; the engine's statement sees the change at its next step. */
static void
refuse_revokes (World    *w,
                gboolean  refuse)
{
  g_autofree char *path = g_build_filename (w->env.dir, "chaperone.db", NULL);
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  sqlite3_busy_timeout (db, CHP_TEST_WAIT_MS);
  g_assert_cmpint (sqlite3_exec (db, refuse ? "CREATE TRIGGER disk_full BEFORE UPDATE OF "
                                 "revoked_at ON rules BEGIN SELECT RAISE (ABORT, 'database or "
                                 "disk is full'); END"
                                            : "DROP TRIGGER disk_full",
                                 NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
}

static void
revoke_result_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  Answer *answer = user_data;

  if (!chp_engine_revoke_rule_finish (CHP_ENGINE (source), result, &answer->error))
    g_assert_nonnull (answer->error);
  answer->done = TRUE;
}

/* A revoke the store did not save: the rule matches nothing from then on, stays listed (a
 * restart would bring it back, and the person is told so), Activity does not say "revoked";
 * Revoke again, saved this time, takes it away. */
static void
test_revoke_not_saved (void)
{
  World w = { 0, };
  g_autoptr(ChpAgentSession) agent = NULL;
  g_autoptr(GPtrArray) stored = NULL;
  g_autofree char *audit = NULL;
  g_autofree char *id = NULL;
  ChpApprovalRule *rule;
  Answer a = { 0, };

  world_start (&w);
  agent = add_agent (&w, "session-1", "test-agent");
  rule = make_rule (&w, "K1", SHOP);
  id = g_strdup (chp_approval_rule_get_id (rule));

  refuse_revokes (&w, TRUE);
  chp_engine_revoke_rule_async (w.env.engine, id, revoke_result_cb, &a);
  chp_test_until (a.done);
  g_assert_error (a.error, CHP_STORE_ERROR, CHP_STORE_ERROR_FAILED);
  g_clear_error (&a.error);
  g_assert_cmpuint (n_rules (&w), ==, 1);
  g_assert_nonnull (act_makes_card (&w, w.env.context, "K2", "write", SHOP));
  stored = stored_rules (&w);
  g_assert_cmpuint (stored->len, ==, 1);
  audit = rule_audit (&w);
  g_assert_cmpstr (audit, ==, "create created\n");

  refuse_revokes (&w, FALSE);
  a = (Answer) { 0, };
  chp_engine_revoke_rule_async (w.env.engine, id, revoke_result_cb, &a);
  chp_test_until (a.done);
  g_assert_no_error (a.error);
  g_assert_cmpuint (n_rules (&w), ==, 0);
  g_clear_pointer (&stored, g_ptr_array_unref);
  stored = stored_rules (&w);
  g_assert_cmpuint (stored->len, ==, 0);
  g_clear_pointer (&audit, g_free);
  audit = rule_audit (&w);
  g_assert_cmpstr (audit, ==, "create created\nrevoke revoked\n");
  world_stop (&w);
}

/* At the cap of 200 rules a new one makes room by revoking the oldest in the store too (audited):
 * before, the oldest only left the list, came back at the next start and left the newest out. */
static void
test_cap (void)
{
  World w = { 0, };
  g_autoptr(ChpAgentSession) agent = NULL;
  g_autoptr(GPtrArray) stored = NULL;
  g_autofree char *audit = NULL;
  ChpApprovalRuleList *rules;
  ChpApprovalRule *newest;
  gint64 now = g_get_real_time () / 1000;

  world_start (&w);
  agent = add_agent (&w, "session-1", "test-agent");
  rules = chp_engine_get_rules (w.env.engine);
  make_rule (&w, "K1", SHOP);
  /* Made on earlier days (here only in memory), up to the cap. */
  for (guint i = 1; i < CHP_APPROVAL_RULE_LIST_MAX; i++)
    {
      g_autofree char *rule_id = g_strdup_printf ("r-%u", i);
      g_autofree char *site = g_strdup_printf ("https://s%u.example", i);
      ChpRuleInfo info = {
        .rule_id = rule_id, .agent = "test-agent", .site = site, .kind = "write",
        .created_at = now, .expires_at = now + 3600 * 1000,
      };
      g_autoptr(ChpApprovalRule) rule = chp_approval_rule_new (&info);

      g_assert_true (chp_approval_rule_list_add (rules, rule));
    }

  newest = make_rule (&w, "K2", "https://wiki.example");
  g_assert_cmpuint (n_rules (&w), ==, CHP_APPROVAL_RULE_LIST_MAX);
  g_assert_true (chp_approval_rule_list_find_match (rules, "test-agent", "https://wiki.example",
                                                    "write", now) == newest);
  /* The oldest (SHOP) is gone from the list and the store: a restart loads the newest. */
  g_assert_null (chp_approval_rule_list_find_match (rules, "test-agent", SHOP, "write", now));
  stored = stored_rules (&w);
  g_assert_cmpuint (stored->len, ==, 1);
  g_assert_cmpstr (((ChpRuleInfo *) g_ptr_array_index (stored, 0))->site, ==,
                   "https://wiki.example");
  audit = rule_audit (&w);
  g_assert_cmpstr (audit, ==, "create created\ncreate created\nrevoke revoked too_many_rules\n");
  world_stop (&w);
}

void
test_mcp_tools_add_rules (void)
{
  g_test_add_func ("/chaperone/mcp-tools/rules/always-allow", test_always_allow);
  g_test_add_func ("/chaperone/mcp-tools/rules/expired", test_expired);
  g_test_add_func ("/chaperone/mcp-tools/rules/nothing-else-makes-one", test_nothing_else_makes_one);
  test_mcp_tools_add_rules_ran ();
  g_test_add_func ("/chaperone/mcp-tools/rules/revoke-not-saved", test_revoke_not_saved);
  g_test_add_func ("/chaperone/mcp-tools/rules/cap", test_cap);
}
