/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-agent-sessions.c: the model the Agents page shows: sessions come and go as list changes,
 * change in place as properties, and the person's Pause / Resume / Disconnect set the state
 * before anyone handles the request. A pause holds for the agent — every session with its name
 * or from its process, now or later — until the person resumes it; Needs you gets one session
 * per agent the loop guard paused. */
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

/* ---- A pause holds for the agent ----------------------------------------------------- */

/* A session as the agent server makes it: the name from initialize, the process from the socket. */
static ChpAgentSession *
agent_new (const char *id,
           const char *name,
           const char *process)
{
  ChpAgentSession *session = chp_agent_session_new (id, name, 0);

  chp_agent_session_set_client_key (session, name);
  chp_agent_session_set_process_key (session, process);
  return session;
}

static ChpAgentSession *
added (ChpAgentSessionList *list,
       const char          *id,
       const char          *name,
       const char          *process)
{
  ChpAgentSession *session = agent_new (id, name, process);

  chp_agent_session_list_add (list, session);
  g_object_unref (session);  /* the list keeps it */
  return session;
}

#define assert_state(session, expected) \
  g_assert_cmpint (chp_agent_session_get_state (session), ==, CHP_AGENT_SESSION_ ## expected)

static void
test_pause_by_name (void)
{
  g_autoptr(ChpAgentSessionList) list = chp_agent_session_list_new ();
  g_autoptr(ChpAgentSession) later = agent_new ("b", "claude-code", "20@2");
  ChpAgentSession *first = added (list, "a", "Claude-Code", "10@1");
  Requests requests = { g_array_new (FALSE, FALSE, sizeof (ChpAgentSessionState)), 0 };

  /* The name is the client's, not its label: one case, no version. */
  g_assert_cmpstr (chp_agent_session_get_client_key (first), ==, "claude-code");
  g_assert_cmpstr (chp_agent_session_get_process_key (first), ==, "10@1");

  chp_agent_session_request_pause (first);
  g_assert_false (chp_agent_session_get_inherited (first));
  g_assert_true (chp_agent_session_list_remove (list, "a"));

  /* The agent comes back from another process under the same name: paused before it does
   * anything, and the one serving it is told through "requested", as for the person's Pause. */
  g_signal_connect (later, "requested", G_CALLBACK (requested_cb), &requests);
  chp_agent_session_list_add (list, later);
  assert_state (later, PAUSED);
  g_assert_true (chp_agent_session_get_inherited (later));
  g_assert_null (chp_agent_session_get_attention (later));
  g_assert_cmpuint (requests.requests->len, ==, 1);
  g_assert_cmpint (requests.state_seen, ==, CHP_AGENT_SESSION_PAUSED);

  /* Other agents, and sessions nothing can recognise, go on. */
  assert_state (added (list, "c", "cursor", "30@3"), RUNNING);
  assert_state (added (list, "d", NULL, NULL), RUNNING);

  g_signal_handlers_disconnect_by_data (later, &requests);
  g_array_unref (requests.requests);
}

/* The same agent process under another name; and, through the session that joined, that name
 * from yet another process: an agent changing one of the two at a time stays held. */
static void
test_pause_by_process (void)
{
  g_autoptr(ChpAgentSessionList) list = chp_agent_session_list_new ();
  ChpAgentSession *first = added (list, "a", "one", "10@1");
  ChpAgentSession *renamed;
  ChpAgentSession *moved;

  chp_agent_session_request_pause (first);
  renamed = added (list, "b", "two", "10@1");
  assert_state (renamed, PAUSED);
  g_assert_true (chp_agent_session_get_inherited (renamed));
  moved = added (list, "c", "two", "99@9");
  assert_state (moved, PAUSED);

  /* The process is its pid and start time: the same pid started again is another process. */
  assert_state (added (list, "d", "three", "10@2"), RUNNING);
}

/* A name that arrives later (at initialize) still brings the session under its agent's pause. */
static void
test_pause_named_later (void)
{
  g_autoptr(ChpAgentSessionList) list = chp_agent_session_list_new ();
  ChpAgentSession *first = added (list, "a", "agent", NULL);
  ChpAgentSession *later = added (list, "b", NULL, "20@2");

  chp_agent_session_request_pause (first);
  assert_state (later, RUNNING);
  chp_agent_session_set_client_key (later, "Agent");
  assert_state (later, PAUSED);
}

/* Pausing one session pauses the agent's other live sessions too; one Resume, on any of them,
 * lets them all go, and the pause is over for the sessions after. */
static void
test_resume_lifts_agent (void)
{
  g_autoptr(ChpAgentSessionList) list = chp_agent_session_list_new ();
  ChpAgentSession *a = added (list, "a", "agent", "10@1");
  ChpAgentSession *b = added (list, "b", "agent", "20@2");
  ChpAgentSession *c = added (list, "c", "other", "20@2");
  ChpAgentSession *d = added (list, "d", "stranger", "40@4");

  chp_agent_session_request_pause (b);
  assert_state (a, PAUSED);
  assert_state (c, PAUSED);
  assert_state (d, RUNNING);
  g_assert_false (chp_agent_session_get_inherited (b));
  g_assert_true (chp_agent_session_get_inherited (a));
  g_assert_cmpuint (chp_agent_session_list_count_state (list, CHP_AGENT_SESSION_PAUSED), ==, 3);

  chp_agent_session_request_resume (c);
  g_assert_cmpuint (chp_agent_session_list_count_state (list, CHP_AGENT_SESSION_RUNNING), ==, 4);
  g_assert_false (chp_agent_session_get_inherited (a));
  assert_state (added (list, "e", "agent", "50@5"), RUNNING);
}

/* Two pauses one session joins (one by its name, one by its process) are one agent's from then
 * on: one Resume lifts both. */
static void
test_pauses_merge (void)
{
  g_autoptr(ChpAgentSessionList) list = chp_agent_session_list_new ();
  ChpAgentSession *a = added (list, "a", "x", "10@1");
  ChpAgentSession *b = added (list, "b", "y", "20@2");
  ChpAgentSession *both;

  chp_agent_session_request_pause (a);
  chp_agent_session_pause_for (b, "failing");
  both = added (list, "c", "x", "20@2");
  assert_state (both, PAUSED);

  chp_agent_session_request_resume (both);
  assert_state (a, RUNNING);
  assert_state (b, RUNNING);
  assert_state (added (list, "d", "y", "30@3"), RUNNING);
}

static void
count_changes_cb (GListModel *model,
                  guint       position,
                  guint       removed,
                  guint       added_n,
                  guint      *count)
{
  (*count)++;
}

/* The loop guard's pause holds for the agent with its reason; Needs you has one session for the
 * agent, however many it has, and the next one when that one leaves. */
static void
test_loop_guard_pause (void)
{
  g_autoptr(ChpAgentSessionList) list = chp_agent_session_list_new ();
  GListModel *attention = chp_agent_session_list_get_attention (list);
  ChpAgentSession *looping = added (list, "a", "agent", "10@1");
  ChpAgentSession *again;
  g_autoptr(ChpAgentSession) shown = NULL;
  Changes handover = { 0 };
  guint changes = 0;

  g_assert_true (g_list_model_get_item_type (attention) == CHP_TYPE_AGENT_SESSION);
  chp_agent_session_pause_for (looping, "repeated");
  g_assert_cmpuint (g_list_model_get_n_items (attention), ==, 1);

  again = added (list, "b", "agent", "20@2");
  assert_state (again, PAUSED);
  g_assert_cmpstr (chp_agent_session_get_attention (again), ==, "repeated");
  g_assert_true (chp_agent_session_get_inherited (again));
  g_assert_cmpuint (g_list_model_get_n_items (attention), ==, 1);

  /* The session that tripped the guard leaves: the card is the newer session's now, handed over
   * in one change (the count never dips, so nothing reads it as a new card). */
  g_signal_connect (attention, "items-changed", G_CALLBACK (items_changed_cb), &handover);
  g_assert_true (chp_agent_session_list_remove (list, "a"));
  g_assert_cmpuint (handover.calls, ==, 1);
  g_assert_cmpuint (handover.removed, ==, 1);
  g_assert_cmpuint (handover.added, ==, 1);
  g_signal_handlers_disconnect_by_data (attention, &handover);
  g_assert_cmpuint (g_list_model_get_n_items (attention), ==, 1);
  shown = g_list_model_get_item (attention, 0);
  g_assert_true (shown == again);

  /* A third session; then Resume on it: every session goes, the card goes at once, and no other
   * session of the agent stands in for it on the way. */
  assert_state (added (list, "c", "agent", "30@3"), PAUSED);
  g_assert_cmpuint (g_list_model_get_n_items (attention), ==, 1);
  g_signal_connect (attention, "items-changed", G_CALLBACK (count_changes_cb), &changes);
  chp_agent_session_request_resume (chp_agent_session_list_lookup (list, "c"));
  g_assert_cmpuint (g_list_model_get_n_items (attention), ==, 0);
  g_assert_cmpuint (changes, ==, 1);
  assert_state (again, RUNNING);
  g_assert_null (chp_agent_session_get_attention (again));
  g_signal_handlers_disconnect_by_data (attention, &changes);
}

/* Sessions nothing recognises (no name, no process) keep their own pause, one card each, as
 * before; the person's own Pause asks nothing of them. */
static void
test_unrecognised_sessions (void)
{
  g_autoptr(ChpAgentSessionList) list = chp_agent_session_list_new ();
  GListModel *attention = chp_agent_session_list_get_attention (list);
  ChpAgentSession *a = added (list, "a", NULL, NULL);
  ChpAgentSession *b = added (list, "b", NULL, NULL);
  ChpAgentSession *c = added (list, "c", NULL, NULL);

  chp_agent_session_pause_for (a, "repeated");
  chp_agent_session_pause_for (b, "failing");
  chp_agent_session_request_pause (c);
  g_assert_cmpuint (g_list_model_get_n_items (attention), ==, 2);
  chp_agent_session_request_resume (a);
  assert_state (b, PAUSED);
  g_assert_cmpuint (g_list_model_get_n_items (attention), ==, 1);
  assert_state (added (list, "d", NULL, NULL), RUNNING);
}

/* The card's Disconnect closes every session of the agent; the pause outlives them. */
static void
test_disconnect_agent (void)
{
  g_autoptr(ChpAgentSessionList) list = chp_agent_session_list_new ();
  ChpAgentSession *a = added (list, "a", "agent", "10@1");
  ChpAgentSession *b = added (list, "b", "renamed", "10@1");
  ChpAgentSession *other = added (list, "c", "other", "30@3");

  chp_agent_session_pause_for (a, "failing");
  assert_state (b, PAUSED);
  chp_agent_session_list_disconnect_agent (list, b);
  assert_state (a, DISCONNECTED);
  assert_state (b, DISCONNECTED);
  assert_state (other, RUNNING);
  g_assert_cmpuint (g_list_model_get_n_items (chp_agent_session_list_get_attention (list)), ==, 0);

  g_assert_true (chp_agent_session_list_remove (list, "a"));
  g_assert_true (chp_agent_session_list_remove (list, "b"));
  assert_state (added (list, "d", "agent", "40@4"), PAUSED);
  g_assert_cmpuint (g_list_model_get_n_items (chp_agent_session_list_get_attention (list)), ==, 1);
}

/* The list lets go of its sessions and stops hearing them. */
static void
test_pause_freed (void)
{
  ChpAgentSessionList *list = chp_agent_session_list_new ();
  g_autoptr(ChpAgentSession) kept = agent_new ("a", "agent", "10@1");
  ChpAgentSession *session = agent_new ("b", "agent", "20@2");

  chp_agent_session_list_add (list, kept);
  chp_agent_session_list_add (list, session);
  chp_agent_session_pause_for (kept, "repeated");
  assert_state (session, PAUSED);
  g_assert_finalize_object (list);
  g_assert_finalize_object (session);
  /* Nothing listens any more: the session alone changes alone. */
  chp_agent_session_request_resume (kept);
  assert_state (kept, RUNNING);
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
  g_test_add_func ("/chaperone/agent-sessions/pause/by-name", test_pause_by_name);
  g_test_add_func ("/chaperone/agent-sessions/pause/by-process", test_pause_by_process);
  g_test_add_func ("/chaperone/agent-sessions/pause/named-later", test_pause_named_later);
  g_test_add_func ("/chaperone/agent-sessions/pause/resume-lifts-agent", test_resume_lifts_agent);
  g_test_add_func ("/chaperone/agent-sessions/pause/merge", test_pauses_merge);
  g_test_add_func ("/chaperone/agent-sessions/pause/loop-guard", test_loop_guard_pause);
  g_test_add_func ("/chaperone/agent-sessions/pause/unrecognised", test_unrecognised_sessions);
  g_test_add_func ("/chaperone/agent-sessions/pause/disconnect-agent", test_disconnect_agent);
  g_test_add_func ("/chaperone/agent-sessions/pause/freed", test_pause_freed);

  return g_test_run ();
}
