/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-session-alone.c: a ChpMcpSession by itself over a socket pair, with no server: it
 * answers, reports closed once, and is freed once let go. */
#include "config.h"

#include "test-mcp-session-harness.h"

#include "chp-mcp-session.h"

#include <string.h>
#include <sys/socket.h>

static GSocketConnection *
connection_for_fd (int fd)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) socket = g_socket_new_from_fd (fd, &error);

  g_assert_no_error (error);
  return g_socket_connection_factory_create_connection (socket);
}

static void
closed_cb (ChpMcpSession *session,
           gpointer       user_data)
{
  (*(guint *) user_data)++;
}

static gboolean
count_set (gpointer data)
{
  return *(guint *) data > 0;
}

/* Reads what @socket has without blocking into @buf (@got so far); TRUE once a whole line is in. */
static gboolean
answer_line (GSocket *socket,
             char    *buf,
             gsize    size,
             gsize   *got)
{
  gssize n = g_socket_receive_with_blocking (socket, buf + *got, size - 1 - *got, FALSE, NULL, NULL);

  if (n > 0)
    *got += n;
  return strchr (buf, '\n') != NULL;
}

/* A session over a socket pair: it reports closed once, and is freed once let go. */
static void
test_session_alone (void)
{
  g_autofree char *dir = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpEngine) engine = NULL;
  g_autoptr(ChpMcpTools) tools = NULL;
  g_autoptr(ChpAgentSession) agent = chp_agent_session_new ("solo", NULL, 0);
  g_autoptr(GSocketConnection) ours = NULL;
  g_autoptr(GSocketConnection) peer = NULL;
  ChpMcpSession *session;
  const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
  char answer[256] = { 0 };
  gsize got = 0;
  guint closed = 0;
  int fds[2];

  dir = g_dir_make_tmp ("chp-mcp-solo-XXXXXX", &error);
  g_assert_no_error (error);
  engine = chp_engine_new (dir);
  tools = chp_mcp_tools_new (engine);
  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM, 0, fds), ==, 0);
  ours = connection_for_fd (fds[0]);
  peer = connection_for_fd (fds[1]);

  session = chp_mcp_session_new (G_IO_STREAM (ours), tools, agent);
  g_assert_true (chp_mcp_session_get_agent (session) == agent);
  g_assert_cmpstr (chp_mcp_context_get_session_id (chp_mcp_session_get_context (session)), ==,
                   "solo");
  g_signal_connect (session, "closed", G_CALLBACK (closed_cb), &closed);
  chp_mcp_session_start (session);

  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (peer)), ping,
                             sizeof ping - 1, NULL, NULL, &error);
  g_assert_no_error (error);
  chp_test_until (answer_line (g_socket_connection_get_socket (peer), answer, sizeof answer, &got));
  g_assert_cmpstr (answer, ==, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n");

  /* The peer hangs up: closed, once; the agent is over. */
  g_io_stream_close (G_IO_STREAM (peer), NULL, NULL);
  g_assert_true (chp_test_spin_until (count_set, &closed, WAIT_MS));
  chp_mcp_session_close (session);
  g_assert_cmpuint (closed, ==, 1);
  g_assert_cmpint (chp_agent_session_get_state (agent), ==, CHP_AGENT_SESSION_DISCONNECTED);
  chp_test_finalize_object (session);

  g_clear_object (&tools);
  g_clear_object (&engine);
  rm_rf (dir);
}

void
test_mcp_session_add_alone (void)
{
  g_test_add_func ("/chaperone/mcp/session/alone", test_session_alone);
}
