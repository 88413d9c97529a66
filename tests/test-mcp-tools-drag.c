/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-tools-drag.c: browser_act's drag as an agent meets it, on a real engine with a C
 * client playing the extension: the element and where it drops go to the browser as refs of one
 * capture, with a plan's allowance as a click has it; a drag without a target, a target without a
 * drag, a target from another snapshot and a drag in a batch are refused before anything is sent
 * (and a key that is no key, now that the schema no longer says so); a drop the page did not take
 * is said, and a drop the browser holds is said as a drag. */
#include "config.h"

#include "test-mcp-tools-harness.h"

#include "chp-protocol-error.h"

#include <string.h>

#define DONE \
  "{\"action\":\"drag\",\"done\":true,\"changes\":{\"urlChanged\":false," \
  "\"titleChanged\":false,\"added\":0,\"removed\":0,\"textChanged\":false,\"settled\":true%s}%s}"

static gboolean
plans_empty (gpointer data)
{
  return g_list_model_get_n_items (data) == 0;
}

/* The shop's tab, granted (a plan's allowance is for its site), and the agent's snapshot of its
 * page: document 1, capture cap1abcd. */
static ChpTestClient *
shop_ready (Env *env)
{
  ChpTestClient *client = browser_connect (env);
  g_autofree char *tabs = g_strdup_printf (TABS_ANSWER, g_get_real_time () / 1000 + 600000);
  g_autofree char *grants = g_strdup_printf (
    "{\"grants\":[{\"grantId\":\"g1\",\"label\":\"Buy a mug\",\"createdAt\":1,"
    "\"expiresAt\":%" G_GINT64_FORMAT ",\"scopes\":[\"browser.dom.read\",\"browser.dom.write\"],"
    "\"targets\":[{\"tabId\":7,\"frameId\":0,\"origin\":\"https://shop.example\","
    "\"url\":\"https://shop.example/cart\"}]}]}", g_get_real_time () / 1000 + 600000);
  g_autofree char *shop = shop_snapshot ();
  g_autoptr(JsonObject) request = NULL;
  g_auto(Call) call = { 0, };

  show_tabs_and_grant (env, client, tabs, grants);
  call_start (env->tools, env->context, "browser_snapshot", "{\"tab\":\"b1:7\"}", NULL, &call);
  request = browser_request (client, "browser.context");
  browser_answer (client, request, shop);
  call_wait (&call);
  g_assert_false (result_is_error (call.result));
  return client;
}

/* A drag goes as itself: its element and where it drops as refs of the same capture, nothing of
 * another action's; the result says both refs; a drop the page did not take is said. With an
 * approved plan, a drag carries its allowance (a card moved to another column may write) as a
 * click does, and a hover does not. */
static void
test_drag_sent (Env           *env,
                gconstpointer  data)
{
  g_autoptr(ChpTestClient) client = shop_ready (env);
  g_autoptr(ChpAgentSession) agent = chp_agent_session_new ("session-1", "test agent", 1);
  g_autoptr(JsonObject) request = NULL;
  GListModel *plans = G_LIST_MODEL (chp_engine_get_plans (env->engine));
  JsonObject *params;
  JsonObject *allow;
  JsonObject *structured;
  Call call = { 0, };

  chp_agent_session_list_add (chp_engine_get_agent_sessions (env->engine), agent);

  call_start (env->tools, env->context, "browser_act",
              "{\"tab\":\"b1:7\",\"ref\":\"1:e2\",\"action\":\"drag\",\"to\":\"1:e7\"}", NULL,
              &call);
  request = browser_request (client, "browser.node.action");
  params = json_object_get_object_member (request, "params");
  g_assert_cmpstr (json_object_get_string_member (params, "action"), ==, "drag");
  g_assert_cmpstr (json_object_get_string_member (params, "ref"), ==, "cap1abcd:e2");
  g_assert_cmpstr (json_object_get_string_member (params, "to"), ==, "cap1abcd:e7");
  for (guint i = 0; i < 5; i++)
    {
      static const char * const others[] = { "value", "key", "text", "captureId", "allow" };

      g_assert_false (json_object_has_member (params, others[i]));
    }
  {
    g_autofree char *answer = g_strdup_printf (DONE, ",\"dropped\":true", "");

    browser_answer (client, request, answer);
  }
  call_wait (&call);
  assert_result_fits (env->tools, "browser_act", call.result);
  g_test_message ("%s", result_text (call.result));
  g_assert_false (result_is_error (call.result));
  g_assert_true (g_str_has_prefix (result_text (call.result),
                                   "Dragged 1:e2 onto 1:e7 on tab b1:7. What changed: 0 element(s) "
                                   "added, 0 removed;"));
  g_assert_null (strstr (result_text (call.result), "did not take the drop"));
  structured = result_structured (call.result);
  g_assert_true (json_object_get_boolean_member (structured, "ok"));
  g_assert_cmpstr (json_object_get_string_member (structured, "action"), ==, "drag");
  g_assert_cmpstr (json_object_get_string_member (structured, "ref"), ==, "1:e2");
  g_clear_pointer (&request, json_object_unref);

  /* The page did not cancel a dragover there: the drag happened, the drop did not. */
  call_start (env->tools, env->context, "browser_act",
              "{\"tab\":\"b1:7\",\"ref\":\"1:e5\",\"action\":\"drag\",\"to\":\"1:e1\"}", NULL,
              &call);
  request = browser_request (client, "browser.node.action");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (request, "params"),
                                                  "to"), ==, "cap1abcd:e1");
  {
    g_autofree char *answer = g_strdup_printf (DONE, ",\"dropped\":false", "");

    browser_answer (client, request, answer);
  }
  call_wait (&call);
  g_test_message ("%s", result_text (call.result));
  g_assert_false (result_is_error (call.result));
  g_assert_true (g_str_has_prefix (result_text (call.result), "Dragged 1:e5 onto 1:e1 on tab b1:7."));
  g_assert_nonnull (strstr (result_text (call.result), " The page did not take the drop there."));
  g_assert_false (inside_wrapper (result_text (call.result), "did not take the drop"));
  g_clear_pointer (&request, json_object_unref);

  /* An approved plan: a hover does not carry it, a drag does, and the browser spends its step. */
  call_run (env->tools, env->context, "browser_plan",
            "{\"summary\":\"Sort the cart\",\"steps\":[{\"kind\":\"edit\",\"site\":\"shop.example\","
            "\"summary\":\"Move the mug to saved for later\"}]}", &call);
  g_assert_false (result_is_error (call.result));
  g_assert_true (chp_engine_decide_plan (env->engine, "plan-1", TRUE));

  call_start (env->tools, env->context, "browser_act",
              "{\"tab\":\"b1:7\",\"ref\":\"1:e2\",\"action\":\"hover\"}", NULL, &call);
  request = browser_request (client, "browser.node.action");
  g_assert_false (json_object_has_member (json_object_get_object_member (request, "params"),
                                          "allow"));
  browser_answer (client, request, "{\"action\":\"hover\",\"done\":true}");
  call_wait (&call);
  g_clear_pointer (&request, json_object_unref);

  call_start (env->tools, env->context, "browser_act",
              "{\"tab\":\"b1:7\",\"ref\":\"1:e3\",\"action\":\"drag\",\"to\":\"1:e8\"}", NULL,
              &call);
  request = browser_request (client, "browser.node.action");
  params = json_object_get_object_member (request, "params");
  g_assert_cmpstr (json_object_get_string_member (params, "to"), ==, "cap1abcd:e8");
  allow = json_object_get_object_member (params, "allow");
  g_assert_nonnull (allow);
  g_assert_cmpstr (json_object_get_string_member (allow, "planId"), ==, "plan-1");
  g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (allow, "sites"), 0),
                   ==, "shop.example");
  g_assert_cmpint (json_object_get_int_member (allow, "step"), ==, 1);
  {
    g_autofree char *answer = g_strdup_printf (DONE, ",\"dropped\":true,\"verified\":true,"
                                               "\"by\":\"list-item\"",
                                               ",\"plan\":{\"planId\":\"plan-1\","
                                               "\"site\":\"shop.example\"}");

    browser_answer (client, request, answer);
  }
  call_wait (&call);
  g_test_message ("%s", result_text (call.result));
  g_assert_false (result_is_error (call.result));
  g_assert_true (g_str_has_prefix (result_text (call.result), "Dragged 1:e3 onto 1:e8 on tab b1:7."));
  g_assert_nonnull (strstr (result_text (call.result), "Saved, as the page showed (a list got a "
                            "new item)."));
  g_assert_cmpint (json_object_get_int_member (result_structured (call.result), "planStep"), ==, 1);
  g_assert_true (chp_test_spin_until (plans_empty, plans, 1000));
  g_clear_pointer (&request, json_object_unref);
  call_clear (&call);
}

/* @tool's arguments @args refused before anything is sent, with @words in the message. */
static void
assert_refused (Env        *env,
                const char *tool,
                const char *args,
                const char *words)
{
  g_auto(Call) call = { 0, };

  call_run (env->tools, env->context, tool, args, &call);
  g_assert_null (call.result);
  g_assert_error (call.error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  if (strstr (call.error->message, words) == NULL)
    g_error ("refused with \"%s\", not \"%s\"", call.error->message, words);
}

/* A drag needs where it drops, and only a drag takes it; where it drops is a ref of the very
 * snapshot its element is from; a batch's step names one element, so a drag is no step. A key is
 * still checked (the schema no longer has its pattern). None of these reaches the browser: the
 * next request it sees is the act after them. */
static void
test_drag_refused (Env           *env,
                   gconstpointer  data)
{
  g_autoptr(ChpTestClient) client = shop_ready (env);
  g_autoptr(JsonObject) request = NULL;
  JsonObject *params;
  Call call = { 0, };

  assert_refused (env, "browser_act", "{\"tab\":\"b1:7\",\"ref\":\"1:e2\",\"action\":\"drag\"}",
                  "to is required when action is drag");
  assert_refused (env, "browser_act",
                  "{\"tab\":\"b1:7\",\"ref\":\"1:e2\",\"action\":\"click\",\"to\":\"1:e7\"}",
                  "to is for drag only");
  assert_refused (env, "browser_act",
                  "{\"tab\":\"b1:7\",\"action\":\"press\",\"key\":\"Enter\",\"to\":\"1:e7\"}",
                  "to is for drag only");
  assert_refused (env, "browser_act",
                  "{\"tab\":\"b1:7\",\"ref\":\"1:e2\",\"action\":\"drag\",\"to\":\"e7\"}",
                  "to must be a ref from browser_snapshot");
  assert_refused (env, "browser_act",
                  "{\"tab\":\"b1:7\",\"action\":\"drag\",\"to\":\"1:e7\"}",
                  "ref is required when action is drag");
  /* A pattern's `$` is the end of the string, as in the schema's own (ECMAScript) patterns: a
   * trailing newline is no ref and no key. */
  assert_refused (env, "browser_act",
                  "{\"tab\":\"b1:7\",\"ref\":\"1:e2\",\"action\":\"drag\",\"to\":\"1:e7\\n\"}",
                  "to must be a ref from browser_snapshot");
  assert_refused (env, "browser_act",
                  "{\"tab\":\"b1:7\",\"ref\":\"1:e2\\n\",\"action\":\"click\"}",
                  "ref does not have the right form");
  for (guint i = 0; i < 5; i++)
    {
      static const char * const keys[] = { "Control+", "a b", "Hyper+x", "Enter ", "Enter\n" };
      g_autofree char *key = g_strescape (keys[i], NULL);
      g_autofree char *args = g_strdup_printf ("{\"tab\":\"b1:7\",\"ref\":\"1:e3\","
                                               "\"action\":\"press\",\"key\":\"%s\"}", key);

      assert_refused (env, "browser_act", args,
                      "key must be a key such as Enter, Tab or Control+s");
    }
  /* A batch's act step: the schema's own list of actions, which has no drag, refuses it first
   * (check_batch_act would say "drag is not a batch step" after it); the click before it is not
   * sent either. */
  assert_refused (env, "browser_batch",
                  "{\"tab\":\"b1:7\",\"steps\":[{\"act\":{\"ref\":\"1:e2\","
                  "\"action\":\"click\"}},{\"act\":{\"ref\":\"1:e2\",\"action\":\"drag\"}}]}",
                  "action must be one of click, dblclick, focus, scroll, fill, hover, press, type");

  /* A new document, numbered 2: a target from document 1 is not one of its snapshot's. */
  call_start (env->tools, env->context, "browser_snapshot", "{\"tab\":\"b1:7\"}", NULL, &call);
  request = browser_request (client, "browser.context");
  {
    g_autofree char *shop = shop_snapshot ();
    g_autoptr(GString) navigated = g_string_new (shop);

    g_string_replace (navigated, "\"documentId\":\"DOC1\"", "\"documentId\":\"DOC9\"", 1);
    g_string_replace (navigated, "cap1abcd", "cap2abcd", 0);
    browser_answer (client, request, navigated->str);
  }
  call_wait (&call);
  g_assert_true (inside_wrapper (result_text (call.result), "[2:e2] link \"Help\""));
  g_clear_pointer (&request, json_object_unref);

  call_run (env->tools, env->context, "browser_act",
            "{\"tab\":\"b1:7\",\"ref\":\"2:e2\",\"action\":\"drag\",\"to\":\"1:e7\"}", &call);
  g_assert_true (result_is_error (call.result));
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "code"), ==,
                   "invalid_params");
  g_assert_nonnull (strstr (result_text (call.result),
                            "to must be a ref from the same snapshot as ref"));
  call_run (env->tools, env->context, "browser_act",
            "{\"tab\":\"b1:7\",\"ref\":\"2:e2\",\"action\":\"drag\",\"to\":\"12:e7\"}", &call);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "code"), ==,
                   "invalid_params");

  /* A drag within document 2 goes, as that document's capture: the first request the browser
   * has seen since the snapshot. The third drag of 2:e2 in a row, each onto another target: the
   * loop guard counts a drop elsewhere as another act. */
  call_start (env->tools, env->context, "browser_act",
              "{\"tab\":\"b1:7\",\"ref\":\"2:e2\",\"action\":\"drag\",\"to\":\"2:e7\"}", NULL,
              &call);
  request = browser_request (client, "browser.node.action");
  params = json_object_get_object_member (request, "params");
  g_assert_cmpstr (json_object_get_string_member (params, "ref"), ==, "cap2abcd:e2");
  g_assert_cmpstr (json_object_get_string_member (params, "to"), ==, "cap2abcd:e7");
  {
    g_autofree char *answer = g_strdup_printf (DONE, "", "");

    browser_answer (client, request, answer);
  }
  call_wait (&call);
  g_assert_true (g_str_has_prefix (result_text (call.result), "Dragged 2:e2 onto 2:e7 on tab b1:7."));
  g_clear_pointer (&request, json_object_unref);
  call_clear (&call);
}

/* A drop the browser holds (a card onto Trash: judged by where it drops) is said as a drag, with
 * an id to wait on; nothing was done; the page's words of it in their wrapper. */
static void
test_drag_held (Env           *env,
                gconstpointer  data)
{
  g_autoptr(ChpTestClient) client = shop_ready (env);
  g_autoptr(JsonObject) request = NULL;
  JsonObject *structured;
  Call call = { 0, };

  call_start (env->tools, env->context, "browser_act",
              "{\"tab\":\"b1:7\",\"ref\":\"1:e5\",\"action\":\"drag\",\"to\":\"1:e6\"}", NULL,
              &call);
  request = browser_request (client, "browser.node.action");
  browser_answer (client, request,
                  "{\"held\":true,\"hold\":{\"holdId\":\"D1\",\"state\":\"held\","
                  "\"kind\":\"delete\",\"reason\":\"drop\",\"word\":\"trash\","
                  "\"control\":\"Trash\",\"source\":\"Order 4411\","
                  "\"site\":\"https://shop.example\",\"fields\":[],\"signature\":\"9f2c\","
                  "\"tabId\":7,\"createdAt\":1}}");
  call_wait (&call);
  assert_result_fits (env->tools, "browser_act", call.result);
  g_test_message ("%s", result_text (call.result));
  g_assert_false (result_is_error (call.result));
  g_assert_true (g_str_has_prefix (result_text (call.result),
                                   "Held, not done: this drag of 1:e5 would delete something. "
                                   "Nothing was sent."));
  g_assert_nonnull (strstr (result_text (call.result), "Call browser_wait with id b1:k-D1"));
  g_assert_nonnull (strstr (result_text (call.result), "Do not drag it again."));
  g_assert_null (strstr (result_text (call.result), "click"));
  g_assert_true (inside_wrapper (result_text (call.result),
                                 "control: \"Order 4411\" onto \"Trash\""));
  structured = result_structured (call.result);
  g_assert_true (json_object_get_boolean_member (structured, "held"));
  g_assert_false (json_object_get_boolean_member (structured, "ok"));
  g_assert_cmpstr (json_object_get_string_member (structured, "holdId"), ==, "b1:k-D1");
  g_assert_cmpstr (json_object_get_string_member (structured, "ref"), ==, "1:e5");
  /* Both ends are the page's words, each in the page's wrapper. */
  g_assert_true (inside_wrapper (json_object_get_string_member (structured, "control"), "Trash"));
  g_assert_true (inside_wrapper (json_object_get_string_member (structured, "source"), "Order 4411"));
  g_clear_pointer (&request, json_object_unref);
  call_clear (&call);
}

void
test_mcp_tools_add_drag (void)
{
  g_test_add ("/chaperone/mcp-tools/drag/sent", Env, NULL, env_setup, test_drag_sent,
              env_teardown);
  g_test_add ("/chaperone/mcp-tools/drag/refused", Env, NULL, env_setup, test_drag_refused,
              env_teardown);
  g_test_add ("/chaperone/mcp-tools/drag/held", Env, NULL, env_setup, test_drag_held,
              env_teardown);
}
