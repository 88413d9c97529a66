/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-tools-trace.c: every tool call is a step of its agent session's trace, in the real
 * store's trace file: masked (a typed value by its length, a URL without its query), with where it
 * happened, on what element, how it ended, a screenshot after a failing act, and retries; the
 * file's bytes never hold what the agent typed or a query. */
#include "config.h"

#include "test-mcp-tools-harness.h"

#include "chp-mcp-tools-private.h"
#include "chp-store-traces.h"

#include <string.h>

#define TYPED_SECRET "hunter2-SECRET-value"
/* A JPEG's first bytes and enough after them for the app to take it as one. */
#define TINY_JPEG_B64 "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8U"

typedef struct
{
  gboolean   done;
  GPtrArray *rows;
} Read;

static gboolean
read_done (gpointer data)
{
  return ((Read *) data)->done;
}

static void
flushed_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_assert_true (chp_store_trace_flush_finish (CHP_STORE (source), result, NULL));
  ((Read *) user_data)->done = TRUE;
}

static void
listed_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  Read *read = user_data;

  read->rows = chp_store_list_traces_finish (CHP_STORE (source), result, NULL);
  read->done = TRUE;
}

static void
steps_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  Read *read = user_data;

  read->rows = chp_store_load_trace_steps_finish (CHP_STORE (source), result, NULL);
  read->done = TRUE;
}

static void
flush (ChpStore *store)
{
  Read read = { 0, };

  chp_store_trace_flush_async (store, NULL, flushed_cb, &read);
  g_assert_true (chp_test_spin_until (read_done, &read, 5000));
}

static void
count_changed_cb (ChpEngine  *engine,
                  const char *trace_id,
                  gpointer    user_data)
{
  (*(guint *) user_data)++;
}

typedef struct
{
  guint *count;
  guint  at_least;
} Counted;

static gboolean
counted (gpointer data)
{
  Counted *c = data;

  return *c->count >= c->at_least;
}

/* The newest trace's session and its steps, once what was queued is written. */
GPtrArray *
trace_read_newest (ChpEngine        *engine,
                   ChpTraceSession **session)
{
  ChpStore *store = chp_engine_get_store (engine);
  Read sessions = { 0, };
  Read steps = { 0, };

  flush (store);
  chp_store_list_traces_async (store, NULL, 0, 1, NULL, listed_cb, &sessions);
  g_assert_true (chp_test_spin_until (read_done, &sessions, 5000));
  g_assert_nonnull (sessions.rows);
  g_assert_cmpuint (sessions.rows->len, ==, 1);
  *session = chp_trace_session_copy (g_ptr_array_index (sessions.rows, 0));
  g_ptr_array_unref (sessions.rows);
  chp_store_load_trace_steps_async (store, (*session)->id, 0, 1000, NULL, steps_cb, &steps);
  g_assert_true (chp_test_spin_until (read_done, &steps, 5000));
  g_assert_nonnull (steps.rows);
  return steps.rows;
}

/* Whether any of the store's trace files holds @needle. */
static gboolean
trace_files_hold (ChpStore   *store,
                  const char *needle)
{
  const char *suffixes[] = { "", "-wal", "-journal" };

  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *path = g_strconcat (chp_store_get_trace_path (store), suffixes[i], NULL);
      g_autofree char *bytes = NULL;
      gsize len = 0;

      if (!g_file_get_contents (path, &bytes, &len, NULL))
        continue;
      /* Binary pages hold NUL bytes: compared byte by byte, not as a string. */
      for (gsize at = 0; at + strlen (needle) <= len; at++)
        if (memcmp (bytes + at, needle, strlen (needle)) == 0)
          return TRUE;
    }
  return FALSE;
}

static void
test_trace_steps (Env           *env,
                  gconstpointer  data)
{
  g_autofree char *shop = shop_snapshot ();
  g_autoptr(ChpTestClient) client = browser_connect (env);
  g_autoptr(JsonObject) request = NULL;
  g_autofree char *tabs = g_strdup_printf (TABS_ANSWER,
                                           g_get_real_time () / 1000 + 14 * 60000 + 30000);
  g_autofree char *grants = NULL;
  ChpStore *store = chp_engine_get_store (env->engine);
  Read sessions = { 0, };
  Read steps = { 0, };
  ChpTraceSession *session;
  ChpTraceStep *step;
  guint changes = 0;
  Counted shot_stored = { &changes, 0 };
  Call call = { 0, };

  g_signal_connect (env->engine, "trace-changed", G_CALLBACK (count_changed_cb), &changes);
  /* The agent, as the MCP server lists it once it said its name. */
  {
    g_autoptr(ChpAgentSession) agent = chp_agent_session_new ("session-1", NULL,
                                                              g_get_real_time () / 1000);

    chp_agent_session_set_client_name (agent, "claude-code");
    chp_agent_session_list_add (chp_engine_get_agent_sessions (env->engine), agent);
  }

  call_start (env->tools, env->context, "browser_tabs", NULL, NULL, &call);
  request = browser_request (client, "browser.tabs");
  browser_answer (client, request, tabs);
  call_wait (&call);
  g_clear_pointer (&request, json_object_unref);
  grants = g_strdup_printf ("{\"grants\":[{\"grantId\":\"g1\",\"label\":\"Buy a mug\","
                            "\"createdAt\":1,\"expiresAt\":%" G_GINT64_FORMAT ","
                            "\"scopes\":[\"browser.dom.read\",\"browser.dom.write\"],"
                            "\"targets\":[{\"tabId\":7,\"frameId\":0,\"origin\":"
                            "\"https://shop.example\",\"url\":"
                            "\"https://shop.example/cart?session=TOPSECRETQ#top\"}]}]}",
                            g_get_real_time () / 1000 + 600000);
  browser_event (client, "grant.changed", grants);
  g_assert_true (chp_test_spin_until (has_items, chp_engine_get_grants (env->engine), 5000));

  call_start (env->tools, env->context, "browser_snapshot", "{\"tab\":\"b1:7\"}", NULL, &call);
  request = browser_request (client, "browser.context");
  browser_answer (client, request, shop);
  call_wait (&call);
  g_clear_pointer (&request, json_object_unref);

  /* A fill, twice the same: the second is a retry. */
  for (guint i = 0; i < 2; i++)
    {
      call_start (env->tools, env->context, "browser_act",
                  "{\"tab\":\"b1:7\",\"ref\":\"1:e3\",\"action\":\"fill\","
                  "\"value\":\"" TYPED_SECRET "\"}", NULL, &call);
      request = browser_request (client, "browser.node.action");
      browser_answer (client, request, "{\"action\":\"setValue\",\"done\":true,\"changes\":"
                      "{\"added\":0,\"removed\":0,\"textChanged\":false,\"settled\":true,"
                      "\"settleMs\":7}}");
      call_wait (&call);
      g_assert_false (result_is_error (call.result));
      g_clear_pointer (&request, json_object_unref);
    }

  /* A click the page refused: the app asks for a screenshot of the tab, for the trace. */
  call_start (env->tools, env->context, "browser_act",
              "{\"tab\":\"b1:7\",\"ref\":\"1:e1\",\"action\":\"click\"}", NULL, &call);
  request = browser_request (client, "browser.node.action");
  browser_refuse (client, request, "target_denied", "the node is covered by div.modal");
  call_wait (&call);
  g_assert_true (result_is_error (call.result));
  g_clear_pointer (&request, json_object_unref);
  request = browser_request (client, "browser.screenshot");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (request, "params"),
                                               "tabId"), ==, 7);
  shot_stored.at_least = changes + 1;
  browser_answer (client, request, "{\"jpeg\":\"" TINY_JPEG_B64 "\",\"width\":10,\"height\":8,"
                  "\"masked\":1}");
  g_assert_true (chp_test_spin_until (counted, &shot_stored, 5000));
  g_clear_pointer (&request, json_object_unref);

  /* A navigation: the URL is kept without its query. */
  call_start (env->tools, env->context, "browser_navigate",
              "{\"tab\":\"b1:7\",\"url\":\"https://shop.example/search?q=SECRETQUERY#x\"}",
              NULL, &call);
  request = browser_request (client, "browser.navigate");
  browser_answer (client, request, "{\"tabId\":7,\"url\":\"https://shop.example/search\","
                  "\"documentId\":\"DOC3\",\"loaded\":true}");
  call_wait (&call);
  g_clear_pointer (&request, json_object_unref);

  flush (store);
  chp_store_list_traces_async (store, NULL, 0, 10, NULL, listed_cb, &sessions);
  g_assert_true (chp_test_spin_until (read_done, &sessions, 5000));
  g_assert_nonnull (sessions.rows);
  g_assert_cmpuint (sessions.rows->len, ==, 1);
  session = g_ptr_array_index (sessions.rows, 0);
  g_assert_cmpuint (session->n_steps, ==, 6);
  /* Its first call (browser_tabs) asked every browser: the one online is the session's. */
  g_assert_nonnull (session->device);
  g_assert_cmpstr (session->device, !=, "");
  g_assert_cmpuint (session->n_errors, ==, 1);
  g_assert_true (session->sites != NULL && g_strv_contains ((const char * const *) session->sites,
                                                            "shop.example"));

  chp_store_load_trace_steps_async (store, session->id, 0, 100, NULL, steps_cb, &steps);
  g_assert_true (chp_test_spin_until (read_done, &steps, 5000));
  g_assert_nonnull (steps.rows);
  g_assert_cmpuint (steps.rows->len, ==, 6);

  step = g_ptr_array_index (steps.rows, 2);
  g_assert_cmpstr (step->tool, ==, "browser_act");
  g_assert_cmpstr (step->args, ==, "{\"tab\":\"b1:7\",\"ref\":\"1:e3\",\"action\":\"fill\","
                   "\"value\":{\"length\":20}}");
  g_assert_cmpstr (step->host, ==, "shop.example");
  g_assert_cmpstr (step->path, ==, "/cart");
  g_assert_cmpstr (step->role, ==, "textbox");
  g_assert_cmpstr (step->name, ==, "Email");
  g_assert_cmpstr (step->rung, ==, "page");
  g_assert_cmpint (step->page_us, ==, 7000);
  g_assert_cmpuint (step->retry, ==, 0);
  g_assert_cmpuint (((ChpTraceStep *) g_ptr_array_index (steps.rows, 3))->retry, ==, 1);

  step = g_ptr_array_index (steps.rows, 4);
  g_assert_cmpstr (step->error_code, ==, "target_denied");
  g_assert_cmpstr (step->outcome, ==, "refused");
  g_assert_cmpstr (step->role, ==, "button");
  g_assert_cmpstr (step->name, ==, "Send");
  g_assert_nonnull (step->snippet);
  g_assert_nonnull (strstr (step->snippet, "covered"));
  g_assert_true (step->has_shot);

  step = g_ptr_array_index (steps.rows, 5);
  g_assert_cmpstr (step->tool, ==, "browser_navigate");
  g_assert_cmpstr (step->args, ==, "{\"tab\":\"b1:7\",\"url\":\"https://shop.example/search\"}");
  g_assert_cmpstr (step->path, ==, "/search");

  /* The agent leaves: its trace ends, with how it went. */
  g_assert_cmpstr (session->agent, ==, "claude-code");
  g_assert_cmpint (session->ended_at, ==, 0);
  chp_agent_session_list_remove (chp_engine_get_agent_sessions (env->engine), "session-1");
  flush (store);
  g_ptr_array_unref (sessions.rows);
  sessions = (Read) { 0, };
  chp_store_list_traces_async (store, NULL, 0, 10, NULL, listed_cb, &sessions);
  g_assert_true (chp_test_spin_until (read_done, &sessions, 5000));
  session = g_ptr_array_index (sessions.rows, 0);
  g_assert_cmpint (session->ended_at, >, 0);
  g_assert_cmpstr (session->outcome, ==, "completed");

  /* The same agent, back later: browser_history gives it its earlier session on the site, the
   * page's words inside the wrapper, and never what it typed. Another agent sees none of it. */
  {
    g_autoptr(ChpMcpContext) later = chp_mcp_context_new ("session-3");
    g_autoptr(ChpMcpContext) stranger = chp_mcp_context_new ("session-4");
    g_autoptr(ChpAgentSession) again = chp_agent_session_new ("session-3", "claude-code", 0);
    g_autoptr(ChpAgentSession) other = chp_agent_session_new ("session-4", "other-agent", 0);
    const char *text;

    chp_agent_session_list_add (chp_engine_get_agent_sessions (env->engine), again);
    chp_agent_session_list_add (chp_engine_get_agent_sessions (env->engine), other);
    call_run (env->tools, later, "browser_history", "{\"site\":\"Shop.Example\"}", &call);
    assert_result_fits (env->tools, "browser_history", call.result);
    g_assert_false (result_is_error (call.result));
    text = result_text (call.result);
    g_test_message ("%s", text);
    g_assert_cmpint (json_object_get_int_member (result_structured (call.result), "sessions"), ==,
                     1);
    g_assert_true (inside_wrapper (text, "3. browser_act fill textbox \"Email\" on /cart: ok"));
    g_assert_true (inside_wrapper (text, "4. browser_act fill textbox \"Email\" on /cart: ok, "
                                  "try 2"));
    g_assert_true (inside_wrapper (text, "browser_act click button \"Send\" on /cart: refused "
                                  "(target_denied)"));
    g_assert_true (inside_wrapper (text, "6. browser_navigate on /search: ok"));
    g_assert_nonnull (strstr (text, "completed"));
    g_assert_null (strstr (text, TYPED_SECRET));
    g_assert_null (strstr (text, "SECRETQUERY"));

    call_run (env->tools, stranger, "browser_history", "{\"site\":\"shop.example\"}", &call);
    g_assert_false (result_is_error (call.result));
    g_assert_cmpint (json_object_get_int_member (result_structured (call.result), "sessions"), ==,
                     0);
    g_assert_nonnull (strstr (result_text (call.result), "no earlier sessions"));

    call_run (env->tools, later, "browser_history", "{\"site\":\"shop example/\"}", &call);
    g_assert_true (result_is_error (call.result));
  }

  /* What the agent typed and the queries are nowhere in the file's bytes. */
  g_assert_false (trace_files_hold (store, TYPED_SECRET));
  g_assert_false (trace_files_hold (store, "SECRETQUERY"));
  g_assert_false (trace_files_hold (store, "TOPSECRETQ"));
  g_assert_true (trace_files_hold (store, "shop.example"));

  g_signal_handlers_disconnect_by_data (env->engine, &changes);
  g_ptr_array_unref (sessions.rows);
  g_ptr_array_unref (steps.rows);
  call_clear (&call);
}

/* The masking alone: typed text by its length, one key character as typed text, a key name as
 * it is, URLs without query or fragment, nested arguments too. */
static void
test_trace_mask (void)
{
  g_autoptr(JsonObject) args = parse_object (
    "{\"tab\":\"b1:7\",\"key\":\"Enter\",\"text\":\"héllo\",\"until\":\"Invoice 42\","
    "\"url\":\"https://a.example/p?token=abc#f\",\"diff\":true,\"page\":2,"
    "\"steps\":[{\"kind\":\"write\",\"site\":\"a.example\",\"summary\":\"Pay Bob\"}]}");
  g_autoptr(JsonObject) one = parse_object ("{\"tab\":\"b1:7\",\"action\":\"press\",\"key\":\"x\"}");
  g_autofree char *masked = chp_tool_trace_mask_args (args);
  g_autofree char *masked_one = chp_tool_trace_mask_args (one);

  g_assert_cmpstr (masked, ==,
                   "{\"tab\":\"b1:7\",\"key\":\"Enter\",\"text\":{\"length\":5},"
                   "\"until\":{\"length\":10},\"url\":\"https://a.example/p\",\"diff\":true,"
                   "\"page\":2,\"steps\":[{\"kind\":\"write\",\"site\":\"a.example\","
                   "\"summary\":{\"length\":7}}]}");
  g_assert_cmpstr (masked_one, ==, "{\"tab\":\"b1:7\",\"action\":\"press\",\"key\":{\"length\":1}}");
}

/* Queue time: a browser takes eight requests at once (CHP_CONNECTION_MAX_IN_FLIGHT), so a ninth
 * call waits until one of them is answered. Its step says it waited (queue_us > 0) and the eight
 * sent at once say they did not (0); each step's run is its own, apart from the wait. */
static void
test_trace_queue (Env           *env,
                  gconstpointer  data)
{
  g_autoptr(ChpTestClient) client = browser_connect (env);
  g_autofree char *tabs = g_strdup_printf (TABS_ANSWER,
                                           g_get_real_time () / 1000 + 14 * 60000 + 30000);
  g_autoptr(GPtrArray) requests = g_ptr_array_new_with_free_func ((GDestroyNotify)
                                                                  json_object_unref);
  g_autoptr(GPtrArray) steps = NULL;
  g_autoptr(ChpTraceSession) session = NULL;
  g_autoptr(ChpAgentSession) agent = chp_agent_session_new ("session-1", NULL,
                                                            g_get_real_time () / 1000);
  Call calls[9] = { { 0, }, };
  Call first = { 0, };

  chp_agent_session_set_client_name (agent, "queue-agent");
  chp_agent_session_list_add (chp_engine_get_agent_sessions (env->engine), agent);

  /* The app asks a browser that connects what it is and what it holds: one call's round trip
   * later those answers are in (the browser answers in order), and the eight places are free.
   * This first call may have waited behind them: its queue time is not looked at. */
  call_start (env->tools, env->context, "browser_tabs", NULL, NULL, &first);
  {
    g_autoptr(JsonObject) request = browser_request (client, "browser.tabs");

    browser_answer (client, request, tabs);
  }
  call_wait (&first);

  for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
    call_start (env->tools, env->context, "browser_tabs", NULL, NULL, &calls[i]);
  /* Eight are on their way to the browser; the ninth waits for a free place. */
  for (guint i = 0; i < 8; i++)
    g_ptr_array_add (requests, browser_request (client, "browser.tabs"));
  browser_answer (client, g_ptr_array_index (requests, 0), tabs);
  call_wait (&calls[0]);
  /* Now that one is answered, the ninth goes. */
  g_ptr_array_add (requests, browser_request (client, "browser.tabs"));
  for (guint i = 1; i < requests->len; i++)
    {
      browser_answer (client, g_ptr_array_index (requests, i), tabs);
      call_wait (&calls[i]);
    }

  /* The steps in the order the calls ended: the first call, the eight sent at once, then the
   * one that waited. */
  steps = trace_read_newest (env->engine, &session);
  g_assert_cmpstr (session->agent, ==, "queue-agent");
  g_assert_cmpuint (steps->len, ==, 1 + G_N_ELEMENTS (calls));
  for (guint i = 0; i < steps->len; i++)
    {
      ChpTraceStep *step = g_ptr_array_index (steps, i);

      g_assert_cmpstr (step->tool, ==, "browser_tabs");
      g_assert_cmpstr (step->outcome, ==, "ok");
      g_assert_cmpint (step->run_us, >=, 0);
      if (i == 0)
        continue;
      if (i + 1 < steps->len)
        g_assert_cmpint (step->queue_us, ==, 0);
      else
        g_assert_cmpint (step->queue_us, >, 0);
    }

  call_clear (&first);
  for (guint i = 0; i < G_N_ELEMENTS (calls); i++)
    call_clear (&calls[i]);
}

void
test_mcp_tools_add_trace (void)
{
  g_test_add_func ("/mcp-tools/trace/mask", test_trace_mask);
  g_test_add ("/mcp-tools/trace/steps", Env, NULL, env_setup, test_trace_steps, env_teardown);
  g_test_add ("/mcp-tools/trace/queue", Env, NULL, env_setup, test_trace_queue, env_teardown);
}
