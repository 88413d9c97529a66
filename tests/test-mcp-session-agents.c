/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-session-agents.c: sessions as the person sees them: an agent in the list, Pause and
 * Resume told to it and refusing its calls, Disconnect; and a pause that holds for the agent (its
 * name, its process, the loop guard), not for one connection. */
#include "config.h"

#include "test-mcp-session-harness.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void
weak_gone_cb (gpointer  data,
              GObject  *where)
{
  *(gboolean *) data = TRUE;
}

static gboolean
flag_set (gpointer data)
{
  return *(gboolean *) data;
}

static void
test_agent_in_list (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  g_autoptr(ChpAgentSession) agent = NULL;
  gboolean agent_gone = FALSE;

  g_assert_true (chp_test_spin_until (list_has_one, fixture->sessions, WAIT_MS));
  agent = g_object_ref (only_agent (fixture));
  g_assert_null (chp_agent_session_get_client_name (agent));
  g_assert_cmpint (chp_agent_session_get_state (agent), ==, CHP_AGENT_SESSION_RUNNING);
  g_assert_true (g_str_has_prefix (chp_agent_session_get_id (agent), "agent-"));

  client_initialize (client, "2025-06-18", "{\"name\":\"Test\\nAgent\",\"version\":\"1.2\"}");
  /* Its words, shown on one line. */
  g_assert_cmpstr (chp_agent_session_get_client_name (agent), ==, "Test Agent 1.2");

  /* A second agent is a second row with its own id. */
  {
    g_autoptr(Client) other = client_connect (fixture->path);
    g_autoptr(ChpAgentSession) second = NULL;

    assert_ping (other, 1);
    g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (fixture->sessions)), ==, 2);
    second = g_list_model_get_item (G_LIST_MODEL (fixture->sessions), 1);
    g_assert_cmpstr (chp_agent_session_get_id (second), !=, chp_agent_session_get_id (agent));
  }
  g_assert_true (chp_test_spin_until (list_has_one, fixture->sessions, WAIT_MS));

  g_clear_pointer (&client, client_free);
  g_assert_true (chp_test_spin_until (list_is_empty, fixture->sessions, WAIT_MS));
  g_assert_cmpint (chp_agent_session_get_state (agent), ==, CHP_AGENT_SESSION_DISCONNECTED);

  /* Nothing keeps the agent's session once it is gone. */
  g_object_weak_ref (G_OBJECT (agent), weak_gone_cb, &agent_gone);
  g_clear_object (&agent);
  g_assert_true (chp_test_spin_until (flag_set, &agent_gone, WAIT_MS));
}

static void
test_pause_resume_told (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  ChpAgentSession *agent;
  JsonObject *log;

  client_initialize (client, "2025-06-18", NULL);
  agent = only_agent (fixture);

  chp_agent_session_request_pause (agent);
  g_assert_cmpint (chp_agent_session_get_state (agent), ==, CHP_AGENT_SESSION_PAUSED);
  log = client_next (client);
  g_assert_true (is_log (log, "warning"));
  g_assert_nonnull (strstr (json_object_get_string_member (
    json_object_get_object_member (log, "params"), "data"), "paused"));
  /* Protocol requests still work while paused: only tools are held. */
  assert_ping (client, 2);
  result_of (client_request (client, 3, "tools/list", NULL));

  chp_agent_session_request_resume (agent);
  g_assert_cmpint (chp_agent_session_get_state (agent), ==, CHP_AGENT_SESSION_RUNNING);
  g_assert_true (is_log (client_next (client), "warning"));
  assert_ping (client, 4);
}

static void
test_pause_refuses_calls (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  /* Any real tool will do: the pause is answered before a tool runs. */
  const char *tool = "browser_tabs";
  g_autofree char *params = NULL;
  ChpAgentSession *agent;
  JsonObject *result;
  JsonObject *structured;

  g_assert_true (chp_mcp_tools_has (fixture->tools, tool));

  client_initialize (client, "2025-06-18", NULL);
  agent = only_agent (fixture);
  result_of (client_request (client, 2, "logging/setLevel", "{\"level\":\"error\"}"));
  chp_agent_session_request_pause (agent);

  params = g_strdup_printf ("{\"name\":\"%s\",\"arguments\":{}}", tool);
  result = result_of (client_request (client, 3, "tools/call", params));
  g_assert_true (json_object_get_boolean_member (result, "isError"));
  structured = json_object_get_object_member (result, "structuredContent");
  g_assert_cmpstr (json_object_get_string_member (structured, "code"), ==, "paused");
  g_assert_nonnull (json_object_get_array_member (result, "content"));
  g_assert_cmpstr (chp_agent_session_get_last_error (agent), ==, "paused");
  g_assert_cmpuint (chp_agent_session_get_calls (agent), ==, 1);
}

static void
test_disconnect (Fixture       *fixture,
                 gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  ChpAgentSession *agent;

  client_initialize (client, "2025-06-18", NULL);
  agent = only_agent (fixture);

  chp_agent_session_request_disconnect (agent);
  /* Told why, then hung up on. */
  g_assert_true (is_log (client_next (client), "warning"));
  g_assert_true (client_sees_eof (client));
  g_assert_true (chp_test_spin_until (list_is_empty, fixture->sessions, WAIT_MS));
}

static void
test_disconnect_before_initialize (Fixture       *fixture,
                                   gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);

  g_assert_true (chp_test_spin_until (list_has_one, fixture->sessions, WAIT_MS));
  chp_agent_session_request_disconnect (only_agent (fixture));
  g_assert_true (client_sees_eof (client));
  g_assert_true (chp_test_spin_until (list_is_empty, fixture->sessions, WAIT_MS));
}

/* ---- A pause holds for the agent, not for one connection ------------------------------ */

/* Returns: (transfer full) (nullable): the code of tools/call browser_tabs's answer, %NULL when it
 *   worked; notifications on the way (the pause told) are passed over */
static char *
tabs_code (Client *client,
           gint64  id)
{
  g_autofree char *line = g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":%" G_GINT64_FORMAT ","
                                           "\"method\":\"tools/call\",\"params\":"
                                           "{\"name\":\"browser_tabs\",\"arguments\":{}}}", id);
  JsonObject *response;
  JsonObject *result;

  client_send (client, line);
  while ((response = client_next (client)) != NULL && json_object_has_member (response, "method"))
    ;
  g_assert_nonnull (response);
  g_assert_cmpint (json_object_get_int_member (response, "id"), ==, id);
  result = result_of (response);
  if (!json_object_get_boolean_member_with_default (result, "isError", FALSE))
    return NULL;
  return g_strdup (json_object_get_string_member (
    json_object_get_object_member (result, "structuredContent"), "code"));
}

/* The text that came with a paused answer: what the agent is told. */
static char *
tabs_paused_text (Client *client,
                  gint64  id)
{
  g_autofree char *code = tabs_code (client, id);
  JsonObject *result;

  g_assert_cmpstr (code, ==, "paused");
  result = json_object_get_object_member (json_node_get_object (client->last), "result");
  return g_strdup (json_object_get_string_member (
    json_object_get_object_member (result, "structuredContent"), "message"));
}

/* Returns: (transfer none): the first session @list has (the list keeps it) */
static ChpAgentSession *
first_agent (ChpAgentSessionList *list)
{
  g_autoptr(ChpAgentSession) agent = g_list_model_get_item (G_LIST_MODEL (list), 0);

  g_assert_nonnull (agent);
  return chp_agent_session_list_lookup (list, chp_agent_session_get_id (agent));
}

/* Returns: (transfer none): the listed session whose client calls itself @label */
static ChpAgentSession *
agent_named (Fixture    *fixture,
             const char *label)
{
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (fixture->sessions)); i++)
    {
      g_autoptr(ChpAgentSession) agent = NULL;

      agent = g_list_model_get_item (G_LIST_MODEL (fixture->sessions), i);

      if (g_strcmp0 (chp_agent_session_get_client_name (agent), label) == 0)
        return chp_agent_session_list_lookup (fixture->sessions, chp_agent_session_get_id (agent));
    }
  g_assert_not_reached ();
}

/* The child: its own relay, so to speak, whose parent (this test) is another agent process than
 * the one behind the test's own connections (the test's parent). Initializes as the client
 * @lines name, calls browser_tabs, and says by its status whether the answer was paused (0),
 * anything else (1), or what failed (10+). Only system calls: the parent has threads. */
static int
child_calls (const char *path,
             const char *lines)
{
  static char in[64 * 1024];
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  size_t got = 0;
  int fd;

  fd = socket (AF_UNIX, SOCK_STREAM, 0);
  g_strlcpy (sun.sun_path, path, sizeof sun.sun_path);
  if (fd < 0 || connect (fd, (struct sockaddr *) &sun, sizeof sun) != 0)
    return 10;
  if (write (fd, lines, strlen (lines)) != (ssize_t) strlen (lines))
    return 11;
  alarm (10);
  for (;;)
    {
      ssize_t n = read (fd, in + got, sizeof in - 1 - got);
      char *answer;
      char *end;

      if (n <= 0)
        return 12;
      got += n;
      in[got] = '\0';
      answer = strstr (in, "\"id\":2,");
      end = answer != NULL ? strchr (answer, '\n') : NULL;
      if (end != NULL)
        {
          *end = '\0';
          return strstr (answer, "\"code\":\"paused\"") != NULL ? 0 : 1;
        }
      if (got == sizeof in - 1)
        return 13;
    }
}

/* Returns: 0 when a new session of client @name, from another agent process, was answered
 *   paused; 1 when it was answered otherwise */
static int
call_from_child (Fixture    *fixture,
                 const char *name)
{
  g_autofree char *lines = NULL;
  int status = -1;
  pid_t pid;

  lines = g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                           "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                           "\"clientInfo\":{\"name\":\"%s\",\"version\":\"9.9\"}}}\n"
                           "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                           "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                           "{\"name\":\"browser_tabs\",\"arguments\":{}}}\n", name);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    _exit (child_calls (fixture->path, lines));

  g_child_watch_add (pid, child_exited_cb, &status);
  g_assert_true (chp_test_spin_until (child_done, &status, WAIT_MS * 2));
  return status;
}

/* The agent hangs up and comes back under the name it had: another process (another relay, even
 * another agent process), another version, the name in other letters — still paused, until the
 * person resumes it. */
static void
test_pause_holds_for_name (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  ChpAgentSession *agent;

  client_initialize (client, "2025-06-18", "{\"name\":\"Same Agent\",\"version\":\"1.0\"}");
  agent = only_agent (fixture);
  chp_agent_session_request_pause (agent);
  g_clear_pointer (&client, client_free);
  g_assert_true (chp_test_spin_until (list_is_empty, fixture->sessions, WAIT_MS));

  /* Another agent (another process, another name) is not held; it is asked first, because a
   * session that joins a pause brings its own process into it. */
  g_assert_cmpint (call_from_child (fixture, "Other Agent"), ==, 1);
  g_assert_cmpint (call_from_child (fixture, "same agent"), ==, 0);
  g_assert_cmpint (call_from_child (fixture, "Same Agent"), ==, 0);

  /* The person resumes the session that came back: the agent goes on, whatever its session. */
  client = client_connect (fixture->path);
  client_initialize (client, "2025-06-18", "{\"name\":\"Same Agent\",\"version\":\"1.1\"}");
  g_assert_true (chp_test_spin_until (list_has_one, fixture->sessions, WAIT_MS));
  agent = agent_named (fixture, "Same Agent 1.1");
  g_assert_cmpint (chp_agent_session_get_state (agent), ==, CHP_AGENT_SESSION_PAUSED);
  chp_agent_session_request_resume (agent);
  g_assert_cmpint (call_from_child (fixture, "Same Agent"), ==, 1);
}

/* The agent comes back under another name, from the same agent process (a relay's parent: here
 * the test's own parent): paused; the person's Resume on either session lets both go. */
static void
test_pause_holds_for_process (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autoptr(Client) first = client_connect (fixture->path);
  g_autoptr(Client) second = NULL;
  g_autoptr(Client) third = NULL;
  g_autofree char *code = NULL;
  ChpAgentSession *paused;
  ChpAgentSession *renamed;

  client_initialize (first, "2025-06-18", "{\"name\":\"First Name\"}");
  paused = only_agent (fixture);
  chp_agent_session_request_pause (paused);
  code = tabs_code (first, 2);
  g_assert_cmpstr (code, ==, "paused");
  g_clear_pointer (&code, g_free);

  second = client_connect (fixture->path);
  client_initialize (second, "2025-06-18", "{\"name\":\"Second Name\"}");
  code = tabs_code (second, 2);
  g_assert_cmpstr (code, ==, "paused");
  g_clear_pointer (&code, g_free);
  renamed = agent_named (fixture, "Second Name");
  g_assert_cmpint (chp_agent_session_get_state (renamed), ==, CHP_AGENT_SESSION_PAUSED);

  /* One Resume, on the newer session: the whole agent goes on. */
  chp_agent_session_request_resume (renamed);
  g_assert_cmpint (chp_agent_session_get_state (paused), ==, CHP_AGENT_SESSION_RUNNING);
  code = tabs_code (first, 3);
  g_assert_cmpstr (code, !=, "paused");
  g_clear_pointer (&code, g_free);
  code = tabs_code (second, 3);
  g_assert_cmpstr (code, !=, "paused");
  g_clear_pointer (&code, g_free);

  /* And stays resumed for a session after that. */
  third = client_connect (fixture->path);
  client_initialize (third, "2025-06-18", "{\"name\":\"First Name\"}");
  code = tabs_code (third, 2);
  g_assert_cmpstr (code, !=, "paused");
}

/* The loop guard's pause holds for the agent too, with its reason: the guard (in the tools)
 * pauses sessions of the engine's list, so this endpoint serves that list. */
static void
test_pause_holds_for_loop_guard (Fixture       *fixture,
                                 gconstpointer  data)
{
  ChpAgentSessionList *sessions = chp_engine_get_agent_sessions (fixture->engine);
  ChpMcpServer *server = chp_mcp_server_new (fixture->tools, sessions);
  g_autofree char *path = g_build_filename (fixture->folder, "guard.sock", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(Client) looping = NULL;
  g_autoptr(Client) again = NULL;
  g_autofree char *text = NULL;
  ChpAgentSession *agent;
  JsonObject *result;

  g_assert_true (chp_mcp_server_listen (server, path, &error));
  g_assert_no_error (error);
  looping = client_connect (path);
  client_initialize (looping, "2025-06-18", "{\"name\":\"Looping Agent\"}");
  result_of (client_request (looping, 2, "logging/setLevel", "{\"level\":\"error\"}"));
  agent = first_agent (sessions);

  /* The same act three times in a row: the third is not sent, and the agent is paused. */
  for (gint64 id = 3; id <= 5; id++)
    {
      JsonObject *structured;
      const char *code;

      result = result_of (client_request (looping, id, "tools/call",
                                          "{\"name\":\"browser_act\",\"arguments\":"
                                          "{\"tab\":\"b1:7\",\"ref\":\"1:e1\","
                                          "\"action\":\"click\"}}"));
      structured = json_object_get_object_member (result, "structuredContent");
      /* The first two reach no browser here and fail; the third is the guard's, and says so in
       * its own words: the pause it makes cancels the call, and is no pause of the person's. */
      code = json_object_get_string_member (structured, "code");
      g_assert_cmpint (g_strcmp0 (code, "paused") == 0, ==, id == 5);
      if (id == 5)
        {
          JsonArray *content = json_object_get_array_member (result, "content");
          JsonObject *first = json_array_get_object_element (content, 0);
          const char *said = json_object_get_string_member (first, "text");
          g_autofree char *shown = g_strescape (said, NULL);

          g_test_message ("the third act is answered: %s", shown);
          g_assert_nonnull (strstr (said, "Paused by Chaperone: you asked for exactly this act on "
                                          "this target 3 times in a row"));
          g_assert_null (strstr (said, "The person paused"));
        }
    }
  g_assert_cmpint (chp_agent_session_get_state (agent), ==, CHP_AGENT_SESSION_PAUSED);
  g_assert_cmpstr (chp_agent_session_get_attention (agent), ==, "repeated");

  /* It hangs up and opens a new session: paused, and told why. */
  g_clear_pointer (&looping, client_free);
  again = client_connect (path);
  client_initialize (again, "2025-06-18", "{\"name\":\"Looping Agent\"}");
  text = tabs_paused_text (again, 2);
  g_test_message ("a new session of the looping agent is told: %s", text);
  g_assert_nonnull (strstr (text, "the same act on the same target too many times in a row"));
  g_assert_true (chp_test_spin_until (list_has_one, sessions, WAIT_MS));
  agent = first_agent (sessions);
  g_assert_cmpstr (chp_agent_session_get_attention (agent), ==, "repeated");

  chp_agent_session_request_resume (agent);
  g_clear_pointer (&text, g_free);
  text = tabs_code (again, 3);
  g_assert_cmpstr (text, !=, "paused");

  g_clear_pointer (&again, client_free);
  chp_mcp_server_close (server);
  chp_test_finalize_object (server);
}

void
test_mcp_session_add_agents (void)
{
  ADD ("agents/in-list", test_agent_in_list);
  ADD ("agents/pause-resume-told", test_pause_resume_told);
  ADD ("agents/pause-refuses-calls", test_pause_refuses_calls);
  ADD ("agents/disconnect", test_disconnect);
  ADD ("agents/disconnect-before-initialize", test_disconnect_before_initialize);
  ADD ("agents/pause-holds-for-name", test_pause_holds_for_name);
  ADD ("agents/pause-holds-for-process", test_pause_holds_for_process);
  ADD ("agents/pause-holds-for-loop-guard", test_pause_holds_for_loop_guard);
}
