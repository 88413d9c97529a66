/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-tools-handoff.c: browser_handoff and browser_wait against a browser played by the C
 * client: the person takes over a tab, and a wait answers on a timeout, a cancel, Done, a handoff
 * already over and a stop. */
#include "config.h"

#include "test-mcp-tools-harness.h"

static void
test_browser_handoff (Env           *env,
                      gconstpointer  data)
{
  g_autoptr(ChpTestClient) client = browser_connect (env);
  g_autoptr(JsonObject) request = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autofree char *answer = g_strdup_printf (TABS_ANSWER, g_get_real_time () / 1000 + 600000);
  g_autofree char *audit = NULL;
  JsonObject *params;
  Call call = { 0, };
  gint64 started;

  call_start (env->tools, env->context, "browser_tabs", NULL, NULL, &call);
  request = browser_request (client, "browser.tabs");
  browser_answer (client, request, answer);
  call_wait (&call);
  g_clear_pointer (&request, json_object_unref);

  /* The handoff answers at once, with an id naming the browser, and one progress. */
  call_start (env->tools, env->context, "browser_handoff",
              "{\"tab\":\"b1:7\",\"reason\":\"mfa\",\"message\":\"Please enter the code from your "
              "phone.\"}",
              NULL, &call);
  request = browser_request (client, "browser.handoff.request");
  params = json_object_get_object_member (request, "params");
  g_assert_cmpint (json_object_get_int_member (params, "tabId"), ==, 7);
  g_assert_cmpstr (json_object_get_string_member (params, "reason"), ==, "mfa");
  browser_answer (client, request, "{\"handoffId\":\"H1-x_y\",\"state\":\"waiting\"}");
  browser_event (client, "handoff.changed",
                 "{\"handoffId\":\"H1-x_y\",\"tabId\":7,\"url\":\"https://shop.example/cart\","
                 "\"title\":\"Cart\","
                 "\"origin\":\"https://shop.example\",\"reason\":\"mfa\",\"message\":\"Please "
                 "enter the code\","
                 "\"state\":\"waiting\",\"createdAt\":1,\"updatedAt\":1}");
  call_wait (&call);
  assert_result_fits (env->tools, "browser_handoff", call.result);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "id"), ==,
                   "b1:h-H1-x_y");
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "state"), ==,
                   "waiting");
  g_assert_cmpuint (call.progress->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (call.progress, 0), ==, "Waiting for the person…");
  g_clear_pointer (&request, json_object_unref);

  /* A short wait times out as an answer, not an error. */
  started = g_get_monotonic_time ();
  call_start (env->tools, env->context, "browser_wait",
              "{\"id\":\"b1:h-H1-x_y\",\"timeoutMs\":300}", NULL, &call);
  request = browser_request (client, "browser.handoff.status");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (request, "params"),
                                                  "handoffId"),
                   ==, "H1-x_y");
  browser_answer (client, request, "{\"handoffId\":\"H1-x_y\",\"state\":\"waiting\"}");
  call_wait (&call);
  assert_result_fits (env->tools, "browser_wait", call.result);
  g_assert_false (result_is_error (call.result));
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "state"), ==,
                   "waiting");
  g_assert_cmpint (g_get_monotonic_time () - started, >=, 300 * 1000);
  g_clear_pointer (&request, json_object_unref);

  /* Cancellation ends a wait at once. */
  call_start (env->tools, env->context, "browser_wait",
              "{\"id\":\"b1:h-H1-x_y\",\"timeoutMs\":40000}",
              cancellable, &call);
  request = browser_request (client, "browser.handoff.status");
  browser_answer (client, request, "{\"handoffId\":\"H1-x_y\",\"state\":\"waiting\"}");
  /* Its progress says the status was read and the wait began; it has not answered. */
  chp_test_until (call.progress->len >= 1);
  g_assert_false (call.done);
  g_cancellable_cancel (cancellable);
  /* call_wait gives up long before the wait's own 40 s: an answer is the cancel's. */
  call_wait (&call);
  g_assert_error (call.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_pointer (&request, json_object_unref);

  /* The person presses Done on the page while the agent waits: the wait answers at once. */
  call_start (env->tools, env->context, "browser_wait", "{\"id\":\"b1:h-H1-x_y\"}", NULL, &call);
  request = browser_request (client, "browser.handoff.status");
  browser_answer (client, request, "{\"handoffId\":\"H1-x_y\",\"state\":\"waiting\"}");
  chp_test_until (call.progress->len >= 1);
  g_assert_false (call.done);
  browser_event (client, "handoff.changed",
                 "{\"handoffId\":\"H1-x_y\",\"tabId\":7,\"url\":\"https://shop.example/cart\","
                 "\"title\":\"Cart\","
                 "\"origin\":\"https://shop.example\",\"reason\":\"mfa\",\"message\":\"Please "
                 "enter the code\","
                 "\"state\":\"done\",\"by\":\"page\",\"createdAt\":1,\"updatedAt\":2}");
  call_wait (&call);
  assert_result_fits (env->tools, "browser_wait", call.result);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "state"), ==,
                   "done");
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "outcome"), ==,
                   "done");
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "by"), ==,
                   "page");
  g_clear_pointer (&request, json_object_unref);

  /* Already over: the status says so and the wait answers without waiting. */
  call_start (env->tools, env->context, "browser_wait", "{\"id\":\"b1:h-H1-x_y\"}", NULL, &call);
  request = browser_request (client, "browser.handoff.status");
  browser_answer (client, request,
                  "{\"handoffId\":\"H1-x_y\",\"state\":\"done\",\"outcome\":\"done\","
                  "\"by\":\"page\"}");
  call_wait (&call);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "state"), ==,
                   "done");
  g_clear_pointer (&request, json_object_unref);

  /* The person stops everything while an agent waits: the wait says stopped. */
  call_start (env->tools, env->context, "browser_wait", "{\"id\":\"b1:h-H1-x_y\"}", NULL, &call);
  request = browser_request (client, "browser.handoff.status");
  browser_answer (client, request, "{\"handoffId\":\"H1-x_y\",\"state\":\"waiting\"}");
  chp_test_until (call.progress->len >= 1);
  g_assert_false (call.done);
  chp_engine_stop_all (env->engine, "app");
  call_wait (&call);
  g_assert_true (result_is_error (call.result));
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "code"), ==,
                   "stopped");
  g_clear_pointer (&request, json_object_unref);

  audit = agent_audit (env);
  g_test_message ("%s", audit);
  g_assert_cmpstr (audit, ==,
                   "browser_tabs ok -\n"
                   "browser_handoff ok -\n"
                   "browser_wait ok -\n"
                   "browser_wait cancelled cancelled\n"
                   "browser_wait ok -\n"
                   "browser_wait ok -\n"
                   "browser_wait refused stopped\n");
  call_clear (&call);
}

void
test_mcp_tools_add_handoff (void)
{
  g_test_add ("/chaperone/mcp-tools/browser/handoff-wait", Env, NULL, env_setup,
              test_browser_handoff,
              env_teardown);
}
