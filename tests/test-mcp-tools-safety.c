/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-tools-safety.c: safety as the agent meets it: the floor before anything is sent, a
 * page blind to agents, holds the person approves, plans, stop, and the loop guard. */
#include "config.h"

#include "test-mcp-tools-harness.h"

#include "chp-protocol-error.h"

#include <string.h>

#define HELD_HOLD \
  "{\"holdId\":\"K1\",\"state\":\"%s\",\"kind\":\"outward\",\"reason\":\"label\"," \
  "\"word\":\"send\",\"control\":\"Send\",\"site\":\"https://shop.example\"," \
  "\"fields\":[{\"name\":\"Email\",\"value\":\"ada@example.com\"}," \
  "{\"name\":\"Password\",\"secret\":true,\"length\":8}]," \
  "\"signature\":\"9f2c\",\"tabId\":7,\"createdAt\":1%s}"

static gboolean
flag_set (gpointer data)
{
  return *(gboolean *) data;
}

static gboolean
plans_empty (gpointer data)
{
  return g_list_model_get_n_items (data) == 0;
}

static void
person_done_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  /* Only that the person's call ended matters here, not its answer. */
  JsonNode *node = chp_engine_person_call_finish (CHP_ENGINE (source), result, NULL);

  if (node != NULL)
    json_node_unref (node);
  *(gboolean *) user_data = TRUE;
}

static void
test_browser_safety (Env           *env,
                     gconstpointer  data)
{
  g_autofree char *shop = shop_snapshot ();
  g_autoptr(ChpTestClient) client = browser_connect (env);
  g_autoptr(JsonObject) request = NULL;
  g_autofree char *answer = g_strdup_printf (TABS_ANSWER, g_get_real_time () / 1000 + 600000);
  g_autofree char *grants = NULL;
  g_autofree char *held = g_strdup_printf (HELD_HOLD, "held", "");
  g_autofree char *held_answer = g_strdup_printf ("{\"held\":true,\"hold\":%s}", held);
  g_autofree char *done = g_strdup_printf (HELD_HOLD, "done",
                                           ",\"changes\":{\"added\":1,\"urlChanged\":true}");
  g_autoptr(ChpAgentSession) agent = chp_agent_session_new ("session-1", "test agent", 1);
  ChpDevice *device = chp_device_list_lookup (chp_engine_get_devices (env->engine),
                                              client->device_id);
  GListModel *plans = G_LIST_MODEL (chp_engine_get_plans (env->engine));
  JsonObject *params;
  JsonObject *structured;
  JsonObject *allow;
  gboolean resolved = FALSE;
  Call call = { 0, };

  chp_agent_session_list_add (chp_engine_get_agent_sessions (env->engine), agent);

  call_start (env->tools, env->context, "browser_tabs", NULL, NULL, &call);
  request = browser_request (client, "browser.tabs");
  browser_answer (client, request, answer);
  call_wait (&call);
  g_clear_pointer (&request, json_object_unref);

  /* The floor, in the app, before anything is sent: tab 8 is on a bank. */
  grants = g_strdup_printf ("{\"grants\":[{\"grantId\":\"g1\",\"label\":\"Buy a mug\","
                            "\"createdAt\":1,\"expiresAt\":%" G_GINT64_FORMAT ","
                            "\"scopes\":[\"browser.dom.read\",\"browser.dom.write\"],"
                            "\"targets\":[{\"tabId\":7,\"frameId\":0,\"origin\":"
                            "\"https://shop.example\",\"url\":\"https://shop.example/cart\"},"
                            "{\"tabId\":8,\"frameId\":0,\"origin\":\"https://www.mybank.example\","
                            "\"url\":\"https://www.mybank.example/accounts\"}]}]}",
                            g_get_real_time () / 1000 + 600000);
  browser_event (client, "grant.changed", grants);
  g_assert_true (chp_test_spin_until (has_items, chp_engine_get_grants (env->engine), 5000));
  call_run (env->tools, env->context, "browser_snapshot", "{\"tab\":\"b1:8\"}", &call);
  g_assert_true (result_is_error (call.result));
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "code"), ==,
                   "refused_floor");
  g_assert_nonnull (strstr (result_text (call.result), "(bank)"));
  call_run (env->tools, env->context, "browser_navigate",
            "{\"tab\":\"b1:7\",\"url\":\"https://chrome.google.com/webstore\"}", &call);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "code"), ==,
                   "refused_floor");

  /* A snapshot that finds a sign-in form on the page: blind, nothing of it returned. */
  call_start (env->tools, env->context, "browser_snapshot", "{\"tab\":\"b1:7\"}", NULL, &call);
  request = browser_request (client, "browser.context");
  {
    g_autoptr(GString) login = g_string_new (shop);

    g_string_replace (login, "\"passwordField\":false", "\"passwordField\":true", 1);
    browser_answer (client, request, login->str);
  }
  call_wait (&call);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "code"), ==,
                   "refused_floor");
  g_assert_null (strstr (result_text (call.result), "Your cart"));
  g_clear_pointer (&request, json_object_unref);

  call_start (env->tools, env->context, "browser_snapshot", "{\"tab\":\"b1:7\"}", NULL, &call);
  request = browser_request (client, "browser.context");
  browser_answer (client, request, shop);
  call_wait (&call);
  g_assert_false (result_is_error (call.result));
  g_clear_pointer (&request, json_object_unref);

  /* A click the browser holds: not an error, an id to wait on, nothing of a secret. */
  call_start (env->tools, env->context, "browser_act",
              "{\"tab\":\"b1:7\",\"ref\":\"1:e1\",\"action\":\"click\"}", NULL, &call);
  request = browser_request (client, "browser.node.action");
  g_assert_false (json_object_has_member (json_object_get_object_member (request, "params"),
                                          "allow"));
  browser_event (client, "hold.changed", held);
  browser_answer (client, request, held_answer);
  call_wait (&call);
  assert_result_fits (env->tools, "browser_act", call.result);
  g_test_message ("%s", result_text (call.result));
  g_assert_false (result_is_error (call.result));
  structured = result_structured (call.result);
  g_assert_true (json_object_get_boolean_member (structured, "held"));
  g_assert_false (json_object_get_boolean_member (structured, "ok"));
  g_assert_cmpstr (json_object_get_string_member (structured, "holdId"), ==, "b1:k-K1");
  g_assert_nonnull (strstr (result_text (call.result), "Nothing was sent"));
  g_assert_true (inside_wrapper (result_text (call.result), "control: Send"));
  /* The control and the fields are the page's words in structuredContent too. */
  {
    g_autofree char *marker = marker_of (result_text (call.result));
    g_autofree char *control = marked (marker, "Send");
    g_autofree char *field = marked (marker, "Email");

    g_assert_cmpstr (json_object_get_string_member (structured, "control"), ==, control);
    g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (
                       json_object_get_array_member (structured, "fields"), 0), "name"), ==,
                     field);
    g_assert_cmpstr (json_object_get_string_member (structured, "untrusted"), ==, marker);
  }
  g_clear_pointer (&request, json_object_unref);

  /* The card's Approve: the person's call, named for the extension alone. */
  g_assert_true (chp_test_spin_until (has_items, chp_engine_get_holds (env->engine), 5000));
  {
    g_autoptr(ChpHold) hold = g_list_model_get_item (G_LIST_MODEL (chp_engine_get_holds (env->engine)), 0);
    const char *name, *value;
    gint64 length;

    g_assert_cmpstr (chp_hold_get_control (hold), ==, "Send");
    g_assert_cmpuint (chp_hold_get_n_fields (hold), ==, 2);
    g_assert_true (chp_hold_get_field (hold, 1, &name, &value, &length));
    g_assert_cmpstr (name, ==, "Password");
    g_assert_null (value);
    g_assert_cmpint (length, ==, 8);
  }
  /* The agent waits; the person approves; the browser's answer to the person ends the wait, with
   * what changed, even before its own hold.changed comes (which then changes nothing more). */
  call_start (env->tools, env->context, "browser_wait", "{\"id\":\"b1:k-K1\"}", NULL, &call);
  request = browser_request (client, "browser.hold.status");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (request, "params"),
                                                  "holdId"), ==, "K1");
  browser_answer (client, request, held);
  chp_test_until (call.progress->len >= 1);
  g_assert_false (call.done);
  g_clear_pointer (&request, json_object_unref);

  chp_engine_resolve_hold_async (env->engine, chp_device_get_id (device), "K1", "approve",
                                 person_done_cb, &resolved);
  request = browser_request (client, "extension.hold.resolve");
  params = json_object_get_object_member (request, "params");
  g_assert_cmpstr (json_object_get_string_member (params, "holdId"), ==, "K1");
  g_assert_cmpstr (json_object_get_string_member (params, "outcome"), ==, "approve");
  browser_answer (client, request, done);
  call_wait (&call);
  g_assert_true (chp_test_spin_until (flag_set, &resolved, 5000));
  assert_result_fits (env->tools, "browser_wait", call.result);
  structured = result_structured (call.result);
  g_assert_cmpstr (json_object_get_string_member (structured, "state"), ==, "done");
  g_assert_true (json_object_has_member (structured, "changes"));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (chp_engine_get_holds (env->engine))),
                    ==, 0);
  browser_event (client, "hold.changed", done);
  g_clear_pointer (&request, json_object_unref);
  /* An answer sent after that event is read after it: once the tabs are in, so is the event,
   * and it changed nothing. */
  call_start (env->tools, env->context, "browser_tabs", NULL, NULL, &call);
  request = browser_request (client, "browser.tabs");
  browser_answer (client, request, answer);
  call_wait (&call);
  g_clear_pointer (&request, json_object_unref);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (chp_engine_get_holds (env->engine))),
                    ==, 0);

  /* The trace says it once: the act was held, and the wait heard the person approve it; the
   * session asked the person once, and they approved once. */
  {
    g_autoptr(ChpTraceSession) session = NULL;
    g_autoptr(GPtrArray) steps = trace_read_newest (env->engine, &session);
    guint held_steps = 0, decided = 0;

    for (guint i = 0; i < steps->len; i++)
      {
        ChpTraceStep *step = g_ptr_array_index (steps, i);

        if (g_strcmp0 (step->outcome, "held") == 0)
          {
            held_steps++;
            g_assert_cmpint (step->decision_kind, ==, CHP_TRACE_DECISION_NONE);
          }
        if (step->decision_kind != CHP_TRACE_DECISION_NONE)
          {
            decided++;
            g_assert_cmpstr (step->tool, ==, "browser_wait");
            g_assert_cmpint (step->decision_kind, ==, CHP_TRACE_DECISION_HOLD);
            g_assert_cmpstr (step->decision, ==, "approved");
          }
      }
    g_assert_cmpuint (held_steps, ==, 1);
    g_assert_cmpuint (decided, ==, 1);
    g_assert_cmpuint (session->n_asked, ==, 1);
    g_assert_cmpuint (session->n_approved, ==, 1);
  }

  /* Plans: deletes cannot be planned; a good plan waits for the person. */
  call_run (env->tools, env->context, "browser_plan",
            "{\"summary\":\"Tidy up\",\"steps\":[{\"kind\":\"delete\",\"site\":\"shop.example\","
            "\"summary\":\"Delete the old cart\"}]}", &call);
  g_assert_error (call.error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  call_run (env->tools, env->context, "browser_plan",
            "{\"summary\":\"Order a mug\",\"steps\":[{\"kind\":\"edit\",\"site\":\"Shop.Example\","
            "\"summary\":\"Save the delivery address\"}]}", &call);
  g_assert_false (result_is_error (call.result));
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "id"), ==,
                   "plan-1");
  call_run (env->tools, env->context, "browser_wait", "{\"id\":\"plan-1\",\"timeoutMs\":100}",
            &call);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "state"), ==,
                   "waiting");
  call_start (env->tools, env->context, "browser_wait", "{\"id\":\"plan-1\"}", NULL, &call);
  chp_test_until (call.progress->len >= 1);
  g_assert_false (call.done);
  g_assert_true (chp_engine_decide_plan (env->engine, "plan-1", TRUE));
  call_wait (&call);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "state"), ==,
                   "approved");

  /* The approved plan travels with the agent's next click, and the browser spends a step. */
  call_start (env->tools, env->context, "browser_act",
              "{\"tab\":\"b1:7\",\"ref\":\"1:e1\",\"action\":\"click\"}", NULL, &call);
  request = browser_request (client, "browser.node.action");
  allow = json_object_get_object_member (json_object_get_object_member (request, "params"),
                                         "allow");
  g_assert_nonnull (allow);
  g_assert_cmpstr (json_object_get_string_member (allow, "planId"), ==, "plan-1");
  g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (allow, "sites"), 0),
                   ==, "shop.example");
  g_assert_cmpint (json_object_get_int_member (allow, "step"), ==, 1);
  g_assert_cmpint (json_object_get_int_member (allow, "of"), ==, 1);
  browser_answer (client, request, "{\"action\":\"click\",\"done\":true,\"changes\":{\"added\":0},"
                  "\"plan\":{\"planId\":\"plan-1\",\"site\":\"shop.example\"}}");
  call_wait (&call);
  g_assert_cmpint (json_object_get_int_member (result_structured (call.result), "planStep"), ==,
                   1);
  g_assert_true (chp_test_spin_until (plans_empty, plans, 1000));
  call_run (env->tools, env->context, "browser_wait", "{\"id\":\"plan-1\"}", &call);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "state"), ==,
                   "ended");
  g_clear_pointer (&request, json_object_unref);

  /* Stop ends every plan. */
  call_run (env->tools, env->context, "browser_plan",
            "{\"summary\":\"More\",\"steps\":[{\"kind\":\"create\",\"site\":\"shop.example\","
            "\"summary\":\"Add a note\"}]}", &call);
  g_assert_true (chp_engine_decide_plan (env->engine, "plan-2", TRUE));
  chp_engine_stop_all (env->engine, "app");
  g_assert_cmpuint (g_list_model_get_n_items (plans), ==, 0);
  g_assert_false (chp_engine_decide_plan (env->engine, "plan-2", TRUE));
  chp_engine_resume_all (env->engine);
  g_clear_pointer (&request, json_object_unref);
  request = browser_request (client, "extension.stop");
  g_clear_pointer (&request, json_object_unref);
  request = browser_request (client, "extension.resume");
  g_clear_pointer (&request, json_object_unref);

  /* The loop guard: the third identical click is not sent, and the agent is paused. The two
   * clicks before this (the held one and the planned one) were the same: this is the third. */
  call_run (env->tools, env->context, "browser_act",
            "{\"tab\":\"b1:7\",\"ref\":\"1:e1\",\"action\":\"click\"}", &call);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "code"), ==,
                   "paused");
  g_assert_cmpint (chp_agent_session_get_state (agent), ==, CHP_AGENT_SESSION_PAUSED);
  g_assert_cmpstr (chp_agent_session_get_attention (agent), ==, "repeated");
  chp_agent_session_request_resume (agent);
  g_assert_null (chp_agent_session_get_attention (agent));

  /* Three failures in a row on one tab pause it too; the third answer says so. */
  for (guint i = 0; i < 3; i++)
    {
      static const char *refs[] = { "1:e1", "1:e2", "1:e1" };
      g_autofree char *args = g_strdup_printf ("{\"tab\":\"b1:7\",\"ref\":\"%s\","
                                               "\"action\":\"focus\"}", refs[i]);

      call_start (env->tools, env->context, "browser_act", args, NULL, &call);
      request = browser_request (client, "browser.node.action");
      browser_refuse (client, request, "stale_node", "gone");
      call_wait (&call);
      g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "code"), ==,
                       i < 2 ? "stale_node" : "paused");
      g_clear_pointer (&request, json_object_unref);
    }
  g_assert_cmpstr (chp_agent_session_get_attention (agent), ==, "failing");
  call_clear (&call);
}

/* A plan's step is one item: a write that only opened an editor (the browser says `opens`)
 * spends none, the save after it spends one; a save the page did not show is said to be
 * unconfirmed. */
static void
test_browser_plan_item (Env           *env,
                        gconstpointer  data)
{
  g_autofree char *shop = shop_snapshot ();
  g_autoptr(ChpTestClient) client = browser_connect (env);
  g_autoptr(JsonObject) request = NULL;
  g_autofree char *answer = g_strdup_printf (TABS_ANSWER, g_get_real_time () / 1000 + 600000);
  g_autofree char *grants = NULL;
  g_autoptr(ChpAgentSession) agent = chp_agent_session_new ("session-1", "test agent", 1);
  GListModel *plans = G_LIST_MODEL (chp_engine_get_plans (env->engine));
  Call call = { 0, };

  chp_agent_session_list_add (chp_engine_get_agent_sessions (env->engine), agent);
  call_start (env->tools, env->context, "browser_tabs", NULL, NULL, &call);
  request = browser_request (client, "browser.tabs");
  browser_answer (client, request, answer);
  call_wait (&call);
  g_clear_pointer (&request, json_object_unref);
  grants = g_strdup_printf ("{\"grants\":[{\"grantId\":\"g1\",\"label\":\"Notes\","
                            "\"createdAt\":1,\"expiresAt\":%" G_GINT64_FORMAT ","
                            "\"scopes\":[\"browser.dom.read\",\"browser.dom.write\"],"
                            "\"targets\":[{\"tabId\":7,\"frameId\":0,\"origin\":"
                            "\"https://shop.example\",\"url\":\"https://shop.example/cart\"}]}]}",
                            g_get_real_time () / 1000 + 600000);
  browser_event (client, "grant.changed", grants);
  g_assert_true (chp_test_spin_until (has_items, chp_engine_get_grants (env->engine), 5000));
  call_start (env->tools, env->context, "browser_snapshot", "{\"tab\":\"b1:7\"}", NULL, &call);
  request = browser_request (client, "browser.context");
  browser_answer (client, request, shop);
  call_wait (&call);
  g_clear_pointer (&request, json_object_unref);

  call_run (env->tools, env->context, "browser_plan",
            "{\"summary\":\"Write a note\",\"steps\":[{\"kind\":\"create\","
            "\"site\":\"shop.example\",\"summary\":\"Create the note Shopping list\"}]}", &call);
  g_assert_true (chp_engine_decide_plan (env->engine, "plan-1", TRUE));

  /* "New note" opens an editor: covered, no step spent, the plan goes on. */
  call_start (env->tools, env->context, "browser_act",
              "{\"tab\":\"b1:7\",\"ref\":\"1:e1\",\"action\":\"click\"}", NULL, &call);
  request = browser_request (client, "browser.node.action");
  g_assert_true (json_object_has_member (json_object_get_object_member (request, "params"),
                                         "allow"));
  browser_answer (client, request, "{\"action\":\"click\",\"done\":true,\"changes\":{\"added\":0},"
                  "\"plan\":{\"planId\":\"plan-1\",\"site\":\"shop.example\",\"opens\":true}}");
  call_wait (&call);
  g_assert_false (json_object_has_member (result_structured (call.result), "planStep"));
  g_assert_nonnull (strstr (result_text (call.result), "no step used"));
  g_assert_cmpuint (g_list_model_get_n_items (plans), ==, 1);
  g_clear_pointer (&request, json_object_unref);

  /* The save spends the step (and the plan ends); the page showed nothing: said so. */
  call_start (env->tools, env->context, "browser_act",
              "{\"tab\":\"b1:7\",\"ref\":\"1:e2\",\"action\":\"click\"}", NULL, &call);
  request = browser_request (client, "browser.node.action");
  g_assert_true (json_object_has_member (json_object_get_object_member (request, "params"),
                                         "allow"));
  browser_answer (client, request, "{\"action\":\"click\",\"done\":true,\"changes\":{\"added\":0,"
                  "\"verified\":false},\"plan\":{\"planId\":\"plan-1\","
                  "\"site\":\"shop.example\"}}");
  call_wait (&call);
  g_assert_cmpint (json_object_get_int_member (result_structured (call.result), "planStep"), ==,
                   1);
  g_assert_nonnull (strstr (result_text (call.result), "Could not confirm that it was saved"));
  g_assert_true (chp_test_spin_until (plans_empty, plans, 1000));
  g_clear_pointer (&request, json_object_unref);
  call_clear (&call);
}

void
test_mcp_tools_add_safety (void)
{
  g_test_add ("/chaperone/mcp-tools/browser/plan-item", Env, NULL, env_setup,
              test_browser_plan_item, env_teardown);

  g_test_add ("/chaperone/mcp-tools/browser/safety", Env, NULL, env_setup, test_browser_safety,
              env_teardown);
}
