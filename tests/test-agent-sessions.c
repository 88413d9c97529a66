/* test-agent-sessions.c: the model the Agents page shows: sessions come and go as list changes,
 * change in place as properties, and the person's Pause / Resume / Disconnect set the state
 * before anyone handles the request. */
#include "config.h"

#include "chp-agent-session-list.h"

typedef struct
{
  guint position, removed, added;
  guint calls;
} Changes;

static void
items_changed_cb (GListModel *model,
                  guint       position,
                  guint       removed,
                  guint       added,
                  Changes    *changes)
{
  changes->position = position;
  changes->removed = removed;
  changes->added = added;
  changes->calls++;
}

static void
test_list_add_remove_lookup (void)
{
  g_autoptr(ChpAgentSessionList) list = chp_agent_session_list_new ();
  g_autoptr(ChpAgentSession) a = chp_agent_session_new ("a", "Claude Desktop", 1000);
  g_autoptr(ChpAgentSession) b = chp_agent_session_new ("b", NULL, 2000);
  g_autoptr(ChpAgentSession) a2 = chp_agent_session_new ("a", "Claude Desktop", 3000);
  g_autoptr(ChpAgentSession) first = NULL;
  Changes changes = { 0 };

  g_signal_connect (list, "items-changed", G_CALLBACK (items_changed_cb), &changes);
  g_assert_true (g_list_model_get_item_type (G_LIST_MODEL (list)) == CHP_TYPE_AGENT_SESSION);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 0);

  chp_agent_session_list_add (list, a);
  chp_agent_session_list_add (list, b);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 2);
  g_assert_cmpuint (changes.calls, ==, 2);
  g_assert_cmpuint (changes.position, ==, 1);
  g_assert_cmpuint (changes.added, ==, 1);
  g_assert_true (chp_agent_session_list_lookup (list, "b") == b);
  g_assert_null (chp_agent_session_list_lookup (list, "c"));
  g_assert_null (g_list_model_get_item (G_LIST_MODEL (list), 2));

  /* The same id again replaces in place: one session per agent connection. */
  chp_agent_session_list_add (list, a2);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 2);
  g_assert_cmpuint (changes.position, ==, 0);
  g_assert_cmpuint (changes.removed, ==, 1);
  g_assert_cmpuint (changes.added, ==, 1);
  first = g_list_model_get_item (G_LIST_MODEL (list), 0);
  g_assert_true (first == a2);

  g_assert_true (chp_agent_session_list_remove (list, "a"));
  g_assert_false (chp_agent_session_list_remove (list, "a"));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 1);
  g_assert_cmpuint (changes.position, ==, 0);
  g_assert_cmpuint (changes.removed, ==, 1);
  g_assert_cmpuint (changes.added, ==, 0);
}

static void
count_notify_cb (GObject    *object,
                 GParamSpec *pspec,
                 guint      *count)
{
  (*count)++;
}

static void
test_session_properties (void)
{
  g_autoptr(ChpAgentSessionList) list = chp_agent_session_list_new ();
  g_autoptr(ChpAgentSession) session = chp_agent_session_new ("s1", "Cursor", 123456);
  guint calls_notified = 0, error_notified = 0, step_notified = 0;
  ChpAgentSessionState state;
  g_autofree char *step = NULL;

  g_assert_cmpstr (chp_agent_session_get_id (session), ==, "s1");
  g_assert_cmpstr (chp_agent_session_get_client_name (session), ==, "Cursor");
  g_assert_cmpint (chp_agent_session_get_since (session), ==, 123456);
  g_assert_cmpuint (chp_agent_session_get_calls (session), ==, 0);
  g_assert_null (chp_agent_session_get_current_step (session));
  g_assert_null (chp_agent_session_get_last_error (session));
  g_assert_cmpint (chp_agent_session_get_state (session), ==, CHP_AGENT_SESSION_RUNNING);

  g_signal_connect (session, "notify::calls", G_CALLBACK (count_notify_cb), &calls_notified);
  g_signal_connect (session, "notify::last-error", G_CALLBACK (count_notify_cb), &error_notified);
  g_signal_connect (session, "notify::current-step", G_CALLBACK (count_notify_cb), &step_notified);

  chp_agent_session_list_add (list, session);
  chp_agent_session_list_record_call (list, "s1", NULL);
  chp_agent_session_list_record_call (list, "s1", "stale_node");
  chp_agent_session_list_record_call (list, "s1", NULL);
  chp_agent_session_list_record_call (list, "nobody", "busy");
  g_assert_cmpuint (chp_agent_session_get_calls (session), ==, 3);
  g_assert_cmpuint (calls_notified, ==, 3);
  /* A call that worked does not wipe what last went wrong. */
  g_assert_cmpstr (chp_agent_session_get_last_error (session), ==, "stale_node");
  g_assert_cmpuint (error_notified, ==, 1);

  chp_agent_session_set_current_step (session, "Reading the order form");
  chp_agent_session_set_current_step (session, "Reading the order form");
  g_assert_cmpuint (step_notified, ==, 1);
  chp_agent_session_set_current_step (session, "");
  g_assert_null (chp_agent_session_get_current_step (session));
  g_assert_cmpuint (step_notified, ==, 2);

  g_object_set (session, "current-step", "Typing", NULL);
  g_object_get (session, "current-step", &step, "state", &state, NULL);
  g_assert_cmpstr (step, ==, "Typing");
  g_assert_cmpint (state, ==, CHP_AGENT_SESSION_RUNNING);

  g_assert_cmpuint (chp_agent_session_list_count_state (list, CHP_AGENT_SESSION_RUNNING), ==, 1);
  g_assert_cmpuint (chp_agent_session_list_count_state (list, CHP_AGENT_SESSION_PAUSED), ==, 0);
}

typedef struct
{
  GArray *requests;
  ChpAgentSessionState state_seen;
} Requests;

static void
requested_cb (ChpAgentSession      *session,
              ChpAgentSessionState  state,
              Requests             *requests)
{
  g_array_append_val (requests->requests, state);
  /* The handler (the agent server) finds the state already changed. */
  requests->state_seen = chp_agent_session_get_state (session);
}

static void
test_requests (void)
{
  g_autoptr(ChpAgentSession) session = chp_agent_session_new ("s1", "Agent", 1);
  Requests requests = { g_array_new (FALSE, FALSE, sizeof (ChpAgentSessionState)), 0 };

  g_signal_connect (session, "requested", G_CALLBACK (requested_cb), &requests);

  /* Resume while running: nothing to do, nothing asked. */
  chp_agent_session_request_resume (session);
  g_assert_cmpuint (requests.requests->len, ==, 0);

  chp_agent_session_request_pause (session);
  g_assert_cmpint (chp_agent_session_get_state (session), ==, CHP_AGENT_SESSION_PAUSED);
  g_assert_cmpuint (requests.requests->len, ==, 1);
  g_assert_cmpint (g_array_index (requests.requests, ChpAgentSessionState, 0), ==,
                   CHP_AGENT_SESSION_PAUSED);
  g_assert_cmpint (requests.state_seen, ==, CHP_AGENT_SESSION_PAUSED);

  /* Twice is once. */
  chp_agent_session_request_pause (session);
  g_assert_cmpuint (requests.requests->len, ==, 1);

  chp_agent_session_request_resume (session);
  g_assert_cmpint (chp_agent_session_get_state (session), ==, CHP_AGENT_SESSION_RUNNING);
  g_assert_cmpuint (requests.requests->len, ==, 2);

  chp_agent_session_request_disconnect (session);
  g_assert_cmpint (chp_agent_session_get_state (session), ==, CHP_AGENT_SESSION_DISCONNECTED);
  g_assert_cmpuint (requests.requests->len, ==, 3);
  g_assert_cmpint (requests.state_seen, ==, CHP_AGENT_SESSION_DISCONNECTED);

  /* A session that is over stays over. */
  chp_agent_session_request_resume (session);
  chp_agent_session_request_pause (session);
  chp_agent_session_request_disconnect (session);
  g_assert_cmpint (chp_agent_session_get_state (session), ==, CHP_AGENT_SESSION_DISCONNECTED);
  g_assert_cmpuint (requests.requests->len, ==, 3);

  g_array_unref (requests.requests);
}

static void
test_freed (void)
{
  ChpAgentSessionList *list = chp_agent_session_list_new ();
  ChpAgentSession *session = chp_agent_session_new ("s", "x", 0);

  chp_agent_session_list_add (list, session);
  g_assert_true (chp_agent_session_list_remove (list, "s"));
  g_assert_finalize_object (session);
  g_assert_finalize_object (list);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/agent-sessions/list", test_list_add_remove_lookup);
  g_test_add_func ("/chaperone/agent-sessions/properties", test_session_properties);
  g_test_add_func ("/chaperone/agent-sessions/requests", test_requests);
  g_test_add_func ("/chaperone/agent-sessions/freed", test_freed);

  return g_test_run ();
}
