/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-tools-rules-ran.c: what an agent is told when the person's "Always allow" rule
 * approved its held write at once: a call to the site's API, a batch's step and a click each say
 * the rule approved it and how that ended — never that the person decides, when no card waits —
 * and an approval that was not done is a card, not a use. */
#include "config.h"

#include "test-mcp-tools-rules.h"

#include "chp-site-types.h"

#include <string.h>

/* What browser.api.learn answers for the shop's page: the save its draft editor makes. */
#define LEARNED \
  "{\"origin\":\"" SHOP "\",\"documentId\":\"D1\",\"entries\":[" \
  "{\"method\":\"PUT\",\"origin\":\"" SHOP "\",\"pathTemplate\":\"/api/drafts/{draft}\"," \
  " \"queryKeys\":[],\"body\":{\"kind\":\"json\",\"keys\":{\"text\":\"string\"}}," \
  " \"credential\":{\"kind\":\"cookie\"},\"frameId\":0,\"frameUrl\":\"" SHOP "/cart\"," \
  " \"sampleStatus\":204,\"count\":1}]}"

static void
learn (World *w)
{
  g_autoptr(JsonObject) request = NULL;
  Call call = { 0, };

  call_start (w->env.tools, w->env.context, "browser_api",
              "{\"tab\":\"b1:7\",\"action\":\"learn\"}", NULL, &call);
  request = browser_request (w->client, "browser.api.learn");
  browser_answer (w->client, request, LEARNED);
  call_wait (&call);
  if (result_is_error (call.result))
    g_error ("learn: %s", result_text (call.result));
  call_clear (&call);
}

/* The browser holds the agent's write (@request, already asked) as @id, answering @answer_start
 * and the hold; the rule approves it, and the browser answers the approval with @ended. */
static void
held_then_ruled (World      *w,
                 JsonObject *request,
                 const char *id,
                 const char *answer_start,
                 const char *ended)
{
  g_autofree char *held = hold_json (id, "held", "write", SHOP, "");
  g_autofree char *answer = g_strconcat (answer_start, held, "}", NULL);
  g_autoptr(JsonObject) resolve = NULL;
  JsonObject *params;

  browser_event (w->client, "hold.changed", held);
  browser_answer (w->client, request, answer);
  resolve = browser_request (w->client, "extension.hold.resolve");
  params = json_object_get_object_member (resolve, "params");
  g_assert_cmpstr (json_object_get_string_member (params, "holdId"), ==, id);
  g_assert_cmpstr (json_object_get_string_member (params, "outcome"), ==, "approve");
  browser_answer (w->client, resolve, ended);
  browser_event (w->client, "hold.changed", ended);
}

/* The batch @args, held at its first step as @id and run by the rule; → the answer, in @call.
 * The browser halts there, as it does at any hold: @of steps, none done. */
static void
batch_ruled (World      *w,
             const char *id,
             const char *args,
             guint       of,
             Call       *call)
{
  g_autofree char *ran = hold_json (id, "done", "write", SHOP, ",\"changes\":{}");
  g_autofree char *halted = g_strdup_printf (
    "{\"done\":0,\"of\":%u,\"ms\":8,\"steps\":[{\"ok\":false,\"held\":true,\"ms\":8}],"
    "\"halted\":{\"step\":1,\"code\":\"held\",\"message\":\"Held for the person\"},"
    "\"held\":true,\"hold\":", of);
  g_autoptr(JsonObject) request = NULL;

  call_start (w->env.tools, w->env.context, "browser_batch", args, NULL, call);
  request = browser_request (w->client, "browser.batch");
  held_then_ruled (w, request, id, halted, ran);
  call_wait (call);
}

/* The answer says what happened: no card waits for anyone, so it never says the person decides,
 * and it says which rule approved it and how that ended (@state, as browser_wait would). */
static JsonObject *
assert_told_ruled (Call       *call,
                   const char *state,
                   const char *id)
{
  const char *text = result_text (call->result);
  JsonObject *structured = result_structured (call->result);

  g_test_message ("%s", text);
  g_assert_false (result_is_error (call->result));
  g_assert_null (strstr (text, "person decides"));
  g_assert_nonnull (strstr (text, "the person's Always-allow rule for changes on " SHOP));
  g_assert_false (json_object_get_boolean_member_with_default (structured, "held", TRUE));
  g_assert_cmpstr (json_object_get_string_member (structured, "approvedBy"), ==, "rule");
  g_assert_cmpstr (json_object_get_string_member (structured, "state"), ==, state);
  g_assert_cmpstr (json_object_get_string_member (structured, "id"), ==, id);
  return structured;
}

static void
test_call_batch_and_click (void)
{
  World w = { 0, };
  g_autoptr(ChpAgentSession) agent = NULL;
  g_autoptr(JsonObject) request = NULL;
  g_autofree char *put_id = chp_site_entry_id (SHOP, "PUT", "/api/drafts/{draft}");
  g_autofree char *args = NULL;
  g_autofree char *grants = NULL;
  ChpApprovalRule *rule;
  JsonObject *structured;
  const char *text;
  guint arrived;
  Call call = { 0, };

  world_start (&w);
  agent = add_agent (&w, "session-1", "test-agent");
  rule = make_rule (&w, "K1", SHOP);
  arrived = w.arrived;
  /* The site's API and a batch read the tab's page from its grant, as the browser mirrors it. */
  grants = g_strdup_printf ("{\"grants\":[{\"grantId\":\"g1\",\"label\":\"Buy a mug\","
                            "\"createdAt\":1,\"expiresAt\":%" G_GINT64_FORMAT ",\"scopes\":"
                            "[\"browser.dom.read\",\"browser.dom.write\",\"browser.api.call\"],"
                            "\"targets\":[{\"tabId\":7,\"frameId\":0,\"origin\":\"" SHOP "\","
                            "\"url\":\"" SHOP "/cart\"}]}]}",
                            g_get_real_time () / 1000 + 600000);
  browser_event (w.client, "grant.changed", grants);
  g_assert_true (chp_test_spin_until (has_items, chp_engine_get_grants (w.env.engine), 5000));

  /* browser_api call, held as a write and approved by the rule: it ran, and the site's status
   * is the answer. */
  learn (&w);
  args = g_strdup_printf ("{\"tab\":\"b1:7\",\"action\":\"call\",\"entryId\":\"%s\","
                          "\"params\":{\"draft\":\"d1\"},\"body\":{\"text\":\"Hello\"}}", put_id);
  call_start (w.env.tools, w.env.context, "browser_api", args, NULL, &call);
  request = browser_request (w.client, "browser.api.call");
  held_then_ruled (&w, request, "K2", "{\"held\":true,\"hold\":",
                   "{\"holdId\":\"K2\",\"state\":\"done\",\"kind\":\"write\",\"site\":\"" SHOP
                   "\",\"control\":\"PUT /api/drafts/d1\",\"fields\":[],\"tabId\":7,"
                   "\"createdAt\":1,\"changes\":{\"status\":204}}");
  g_clear_pointer (&request, json_object_unref);
  call_wait (&call);
  structured = assert_told_ruled (&call, "done", "b1:k-K2");
  g_assert_cmpint (json_object_get_int_member (structured, "status"), ==, 204);
  g_assert_nonnull (strstr (result_text (call.result), "ran once"));
  g_assert_cmpint (chp_approval_rule_get_use_count (rule), ==, 1);
  call_clear (&call);

  /* browser_batch with saveAs, held at its first step: the rule ran that step, the rest did not
   * run, and no recipe is kept from a batch whose second step never ran. */
  {
    batch_ruled (&w, "K3",
                 "{\"tab\":\"b1:7\",\"saveAs\":\"save-draft\",\"steps\":[{\"act\":{\"target\":"
                 "{\"role\":\"button\",\"name\":\"Save draft\"},\"action\":\"click\"}},"
                 "{\"wait\":{\"text\":\"Saved\",\"timeoutMs\":2000}}]}", 2, &call);
    structured = assert_told_ruled (&call, "done", "b1:k-K3");
    text = result_text (call.result);
    /* The step the rule ran counts as done, in the words, its line and the figures. */
    g_assert_true (g_str_has_prefix (text, "Ran 1 of 2 steps"));
    g_assert_cmpint (json_object_get_int_member (structured, "done"), ==, 1);
    g_assert_true (json_object_get_boolean_member (
      json_array_get_object_element (json_object_get_array_member (structured, "steps"), 0), "ok"));
    g_assert_nonnull (strstr (text, "held, then run by the person's Always-allow rule"));
    g_assert_nonnull (strstr (text, "Step 1 (click \"Save draft\")"));
    g_assert_nonnull (strstr (text, "the steps after it did not run: run the rest"));
    g_assert_null (strstr (text, "Saved as recipe"));
    g_assert_null (chp_mcp_context_recall (w.env.context, "recipe:" SHOP ":save-draft"));
    g_assert_cmpint (chp_approval_rule_get_use_count (rule), ==, 2);
    call_clear (&call);
  }

  /* The same batch's last step, held and run by the rule: nothing is left, and the agent is not
   * told to run anything again (it would repeat the write). */
  {
    batch_ruled (&w, "K5",
                 "{\"tab\":\"b1:7\",\"steps\":[{\"act\":{\"target\":"
                 "{\"role\":\"button\",\"name\":\"Save draft\"},\"action\":\"click\"}}]}",
                 1, &call);
    structured = assert_told_ruled (&call, "done", "b1:k-K5");
    text = result_text (call.result);
    g_assert_true (g_str_has_prefix (text, "Ran 1 of 1 steps"));
    g_assert_nonnull (strstr (text, "nothing is left to run"));
    g_assert_null (strstr (text, "run the rest"));
    g_assert_cmpint (chp_approval_rule_get_use_count (rule), ==, 3);
    call_clear (&call);
  }

  /* browser_wait says the same, as after the person's own Approve. */
  call_start (w.env.tools, w.env.context, "browser_wait", "{\"id\":\"b1:k-K3\",\"timeoutMs\":1000}",
              NULL, &call);
  {
    g_autofree char *ran = hold_json ("K3", "done", "write", SHOP, ",\"changes\":{}");

    request = browser_request (w.client, "browser.hold.status");
    browser_answer (w.client, request, ran);
    g_clear_pointer (&request, json_object_unref);
  }
  call_wait (&call);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "state"), ==,
                   "done");
  call_clear (&call);

  /* A click the rule approved that the page no longer had as held: it did not run, the agent is
   * told so, and it is no use of the rule. */
  {
    g_autofree char *changed = hold_json ("K4", "changed", "write", SHOP, "");

    act_held (&w, w.env.context, "K4", "write", SHOP, &call);
    request = browser_request (w.client, "extension.hold.resolve");
    browser_answer (w.client, request, changed);
    browser_event (w.client, "hold.changed", changed);
    g_clear_pointer (&request, json_object_unref);
    call_wait (&call);
    assert_told_ruled (&call, "changed", "b1:k-K4");
    g_assert_nonnull (strstr (result_text (call.result), "did not run"));
    g_assert_cmpint (chp_approval_rule_get_use_count (rule), ==, 3);
    call_clear (&call);
  }

  /* None of it was a card. */
  g_assert_cmpuint (w.arrived, ==, arrived);
  g_assert_cmpuint (n_holds (&w), ==, 0);
  world_stop (&w);
}

/* A rule's approval that the browser did not carry out (no answer in time, gone, a Stop) is not
 * a use of the rule, and the hold, still held in the browser, becomes a card the person decides
 * on: before, it was counted and audited, and nobody saw the hold. */
static void
test_not_done_is_a_card (void)
{
  World w = { 0, };
  g_autoptr(ChpAgentSession) agent = NULL;
  g_autoptr(JsonObject) request = NULL;
  g_autoptr(GPtrArray) stored = NULL;
  g_autofree char *audit = NULL;
  g_autofree char *done = hold_json ("K2", "done", "write", SHOP, "");
  ChpApprovalRule *rule;
  ChpHold *hold;
  gboolean finished = FALSE;
  guint arrived;
  Call call = { 0, };

  world_start (&w);
  agent = add_agent (&w, "session-1", "test-agent");
  rule = make_rule (&w, "K1", SHOP);
  arrived = w.arrived;

  act_held (&w, w.env.context, "K2", "write", SHOP, &call);
  request = browser_request (w.client, "extension.hold.resolve");
  browser_refuse (w.client, request, "timeout", "The browser did not answer in time");
  g_clear_pointer (&request, json_object_unref);
  call_wait (&call);
  g_assert_true (json_object_get_boolean_member (result_structured (call.result), "held"));
  /* Here the card does wait for the person, and the agent is told so. */
  g_assert_nonnull (strstr (result_text (call.result), "The person decides"));
  call_clear (&call);

  g_assert_cmpuint (w.arrived, ==, arrived + 1);
  hold = chp_hold_list_lookup (chp_engine_get_holds (w.env.engine), w.client->device_id, "K2");
  g_assert_nonnull (hold);
  g_assert_cmpint (chp_approval_rule_get_use_count (rule), ==, 0);
  stored = stored_rules (&w);
  g_assert_cmpint (((ChpRuleInfo *) g_ptr_array_index (stored, 0))->use_count, ==, 0);
  audit = rule_audit (&w);
  g_assert_cmpstr (audit, ==, "create created\n");

  /* The person approves the card; that is their approval, not the rule's. */
  chp_engine_resolve_hold_async (w.env.engine, w.client->device_id, "K2", "approve", done_cb,
                                 &finished);
  request = browser_request (w.client, "extension.hold.resolve");
  browser_answer (w.client, request, done);
  chp_test_until (finished);
  g_assert_cmpuint (n_holds (&w), ==, 0);
  g_assert_cmpint (chp_approval_rule_get_use_count (rule), ==, 0);
  world_stop (&w);
}

/* Writes the rule approved that did not run as held are failed acts for the loop guard, as any
 * failed act is: retried as they are, each would run the person's rule again. The third in a row
 * pauses the agent. */
static void
test_failed_runs_count (void)
{
  World w = { 0, };
  g_autoptr(ChpAgentSession) agent = NULL;
  const char *ids[] = { "K2", "K3", "K4" };

  world_start (&w);
  agent = add_agent (&w, "session-1", "test-agent");
  make_rule (&w, "K1", SHOP);

  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      g_autofree char *changed = hold_json (ids[i], "changed", "write", SHOP, "");
      g_autoptr(JsonObject) request = NULL;
      Call call = { 0, };

      act_held (&w, w.env.context, ids[i], "write", SHOP, &call);
      request = browser_request (w.client, "extension.hold.resolve");
      browser_answer (w.client, request, changed);
      browser_event (w.client, "hold.changed", changed);
      call_wait (&call);
      g_test_message ("%s", result_text (call.result));
      if (i + 1 < G_N_ELEMENTS (ids))
        {
          g_assert_false (result_is_error (call.result));
          g_assert_false (json_object_get_boolean_member (result_structured (call.result), "ok"));
        }
      else
        {
          g_assert_true (result_is_error (call.result));
          g_assert_nonnull (strstr (result_text (call.result), "Paused by Chaperone"));
          g_assert_nonnull (strstr (result_text (call.result), "(this one: changed)"));
        }
      call_clear (&call);
    }
  world_stop (&w);
}

void
test_mcp_tools_add_rules_ran (void)
{
  g_test_add_func ("/chaperone/mcp-tools/rules/call-batch-and-click", test_call_batch_and_click);
  g_test_add_func ("/chaperone/mcp-tools/rules/not-done-is-a-card", test_not_done_is_a_card);
  g_test_add_func ("/chaperone/mcp-tools/rules/failed-runs-count", test_failed_runs_count);
}
