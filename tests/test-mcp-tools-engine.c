/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-tools-engine.c: the tools on a real engine with no browser paired: what the agent is
 * told and what is audited, browser_stop, and a cancelled call. */
#include "config.h"

#include "test-mcp-tools-harness.h"

#include <string.h>

static void
test_engine_no_browser (Env           *env,
                        gconstpointer  data)
{
  Call call = { 0, };
  g_autofree char *audit = NULL;

  call_run (env->tools, env->context, "browser_tabs", NULL, &call);
  g_assert_no_error (call.error);
  g_assert_false (result_is_error (call.result));
  g_assert_nonnull (strstr (result_text (call.result), "No browser is connected to Chaperone"));
  g_assert_nonnull (strstr (result_text (call.result), "pair"));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (
                      result_structured (call.result), "tabs")), ==, 0);

  /* A tab of a browser nobody has seen. */
  call_run (env->tools, env->context, "browser_snapshot", "{\"tab\":\"b9:1\"}", &call);
  g_assert_true (result_is_error (call.result));
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "code"), ==,
                   "no_grant");
  g_assert_true (g_str_has_prefix (result_text (call.result), "Error (no_grant): No tab b9:1"));

  call_run (env->tools, env->context, "browser_wait", "{\"id\":\"b9:h-abc\"}", &call);
  g_assert_true (result_is_error (call.result));

  audit = agent_audit (env);
  g_test_message ("%s", audit);
  g_assert_cmpstr (audit, ==,
                   "browser_tabs ok -\n"
                   "browser_snapshot refused no_grant\n"
                   "browser_wait refused invalid_params\n");
  call_clear (&call);
}

static void
test_engine_stopped (Env           *env,
                     gconstpointer  data)
{
  Call call = { 0, };
  g_autofree char *audit = NULL;

  call_run (env->tools, env->context, "browser_stop", "{\"reason\":\"the agent is confused\"}",
            &call);
  g_assert_false (result_is_error (call.result));
  g_assert_true (chp_engine_get_stopped (env->engine));
  g_assert_nonnull (strstr (result_text (call.result),
                            "until the person resumes in the Chaperone app"));

  call_run (env->tools, env->context, "browser_tabs", NULL, &call);
  g_assert_true (result_is_error (call.result));
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "code"), ==,
                   "stopped");
  g_assert_true (g_str_has_prefix (result_text (call.result), "Error (stopped): "));
  g_assert_nonnull (strstr (result_text (call.result), "only they can"));

  call_run (env->tools, env->context, "browser_snapshot", "{\"tab\":\"b1:1\"}", &call);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "code"), ==,
                   "stopped");

  /* Stop again is fine; only the person resumes. */
  call_run (env->tools, env->context, "browser_stop", NULL, &call);
  g_assert_false (result_is_error (call.result));
  chp_engine_resume_all (env->engine);
  call_run (env->tools, env->context, "browser_tabs", NULL, &call);
  g_assert_false (result_is_error (call.result));

  audit = agent_audit (env);
  g_assert_cmpstr (audit, ==,
                   "browser_stop ok -\n"
                   "browser_tabs refused stopped\n"
                   "browser_snapshot refused stopped\n"
                   "browser_stop ok -\n"
                   "browser_tabs ok -\n");
  /* The reason an agent gave is an argument: it is not in the audit. */
  g_assert_null (strstr (audit, "confused"));
  call_clear (&call);
}

static void
test_engine_cancelled (Env           *env,
                       gconstpointer  data)
{
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  Call call = { 0, };

  g_cancellable_cancel (cancellable);
  call_start (env->tools, env->context, "browser_tabs", NULL, cancellable, &call);
  call_wait (&call);
  g_assert_error (call.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  call_clear (&call);
}

void
test_mcp_tools_add_engine (void)
{
  g_test_add ("/chaperone/mcp-tools/engine/no-browser", Env, NULL, env_setup,
              test_engine_no_browser,
              env_teardown);
  g_test_add ("/chaperone/mcp-tools/engine/stopped", Env, NULL, env_setup, test_engine_stopped,
              env_teardown);
  g_test_add ("/chaperone/mcp-tools/engine/cancelled", Env, NULL, env_setup, test_engine_cancelled,
              env_teardown);
}
