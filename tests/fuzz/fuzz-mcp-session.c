/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz-mcp-session.c: libFuzzer target for the agent endpoint's reader, ChpMcpSession, fed the
 * input exactly as an agent's bytes reach it: through a stream, split into lines by the session
 * itself, each line read by the strict JSON reader and dispatched as JSON-RPC 2.0.
 *
 * Input: the bytes an agent writes on agent.sock (one JSON-RPC message per line). They go through
 * a socketpair, as through the agent socket, minus ChpMcpServer's accept and uid check (which
 * happen before a session exists). The session has the real tools table but no engine, so
 * tools/call runs the argument checks of every tool and then answers as a shutting-down app
 * does. Once the session has answered everything, the agent stops writing (a half close) and
 * reads until the session closes the socket.
 *
 * Besides memory safety (ASan), leaks (LeakSanitizer, per input) and undefined behaviour
 * (UBSan, halt_on_error=1), it checks what an agent relies on:
 *   - everything the session writes is whole lines, each one JSON object in UTF-8 with
 *     "jsonrpc": "2.0" and either an id with exactly one of result and error (an error with an
 *     integer code and a string message) or a method (a notification of ours);
 *   - hanging up closes the session (::closed) and the socket, and nothing of it is left running:
 *     the session is finalized, and the main context has nothing more to do.
 * A broken invariant aborts, so libFuzzer saves the input as a crash. */
#include "config.h"

#include "fuzz-common.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "chp-agent-session.h"
#include "chp-json-reader.h"
#include "chp-mcp-session.h"
#include "chp-mcp-tools.h"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond, ...)                                                   \
  G_STMT_START {                                                           \
    if (G_UNLIKELY (!(cond)))                                              \
      {                                                                    \
        g_printerr ("fuzz-mcp-session: check failed: %s: ", #cond);        \
        g_printerr (__VA_ARGS__);                                          \
        g_printerr ("\n");                                                 \
        abort ();                                                          \
      }                                                                    \
  } G_STMT_END

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init ();
  /* A session closed early closes its end: a write fails with EPIPE instead. */
  signal (SIGPIPE, SIG_IGN);
  return 0;
}

/* Runs what is ready, without waiting: ends when nothing more is. */
static void
drain (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
closed_cb (ChpMcpSession *session,
           gpointer       user_data)
{
  *(gboolean *) user_data = TRUE;
}

static gboolean
is_string (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         json_node_get_value_type (node) == G_TYPE_STRING;
}

static void
check_line (const char *line,
            gsize       len)
{
  g_autoptr(JsonNode) root = chp_json_read (line, len, NULL);
  JsonObject *o;
  JsonNode *id;
  JsonNode *error;
  gboolean has_result;

  CHECK (root != NULL && JSON_NODE_HOLDS_OBJECT (root), "not one JSON object: %.*s", (int) len,
         line);
  o = json_node_get_object (root);
  CHECK (g_strcmp0 (json_object_get_string_member_with_default (o, "jsonrpc", NULL), "2.0") == 0,
         "no jsonrpc 2.0: %.*s", (int) len, line);

  if (json_object_has_member (o, "method"))
    {
      CHECK (is_string (json_object_get_member (o, "method")) &&
             !json_object_has_member (o, "id"), "a bad notification: %.*s", (int) len, line);
      return;
    }

  id = json_object_get_member (o, "id");
  error = json_object_get_member (o, "error");
  has_result = json_object_has_member (o, "result");
  CHECK (id != NULL && (JSON_NODE_HOLDS_NULL (id) || is_string (id) ||
                        (JSON_NODE_HOLDS_VALUE (id) &&
                         json_node_get_value_type (id) == G_TYPE_INT64)),
         "a response without a usable id: %.*s", (int) len, line);
  CHECK ((error != NULL) != has_result, "not exactly one of result and error: %.*s", (int) len,
         line);
  if (error != NULL)
    {
      JsonObject *e;
      JsonNode *code;

      CHECK (JSON_NODE_HOLDS_OBJECT (error), "error is not an object: %.*s", (int) len, line);
      e = json_node_get_object (error);
      code = json_object_get_member (e, "code");
      CHECK (code != NULL && JSON_NODE_HOLDS_VALUE (code) &&
             json_node_get_value_type (code) == G_TYPE_INT64 &&
             is_string (json_object_get_member (e, "message")),
             "a malformed error: %.*s", (int) len, line);
    }
  else
    {
      /* A null id answers only what could not be read: never a result. */
      CHECK (!JSON_NODE_HOLDS_NULL (id), "a result for a null id: %.*s", (int) len, line);
    }
}

static void
check_output (GByteArray *out)
{
  const char *data = (const char *) out->data;
  gsize size = out->len;
  const char *p = data;
  const char *end;

  if (size == 0)
    return;
  end = data + size;
  CHECK (data[size - 1] == '\n', "the output ends in the middle of a line");
  CHECK (g_utf8_validate_len (data, size, NULL), "the output is not UTF-8");
  while (p < end)
    {
      const char *nl = memchr (p, '\n', end - p);

      check_line (p, nl - p);
      p = nl + 1;
    }
}

static gboolean
wake_cb (GSocket      *socket,
         GIOCondition  condition,
         gpointer      user_data)
{
  return G_SOURCE_REMOVE;
}

/* Waits for the session, or for the agent's end of the socket to be ready for @condition. */
static void
wait_for (GSocket      *agent,
          GIOCondition  condition)
{
  g_autoptr(GSource) wake = g_socket_create_source (agent, condition | G_IO_HUP | G_IO_ERR,
                                                    NULL);

  g_source_set_callback (wake, G_SOURCE_FUNC (wake_cb), NULL, NULL);
  g_source_attach (wake, NULL);
  g_main_context_iteration (NULL, TRUE);
  g_source_destroy (wake);
}

/* Reads what the session wrote so far. Returns: FALSE at the end of the stream */
static gboolean
read_answers (GSocket    *agent,
              GByteArray *out)
{
  for (;;)
    {
      g_autoptr(GError) error = NULL;
      guint8 buf[16384];
      gssize n = g_socket_receive (agent, (char *) buf, sizeof buf, NULL, &error);

      if (n > 0)
        {
          g_byte_array_append (out, buf, n);
          continue;
        }
      if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        return TRUE;
      return FALSE;
    }
}

static void
finalized_cb (gpointer  data,
              GObject  *where)
{
  *(gboolean *) data = TRUE;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) session_end = NULL;
  g_autoptr(GSocket) agent = NULL;
  g_autoptr(GSocketConnection) connection = NULL;
  g_autoptr(GByteArray) out = g_byte_array_new ();
  g_autoptr(ChpMcpTools) tools = chp_mcp_tools_new (NULL);
  g_autoptr(ChpAgentSession) agent_session = chp_agent_session_new ("fuzz", "fuzz agent", 1);
  ChpMcpSession *session;
  gboolean closed = FALSE;
  gboolean finalized = FALSE;
  gboolean open = TRUE;
  gsize sent = 0;
  int fds[2];

  CHECK (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0, "socketpair: %s",
         g_strerror (errno));
  session_end = g_socket_new_from_fd (fds[0], &error);
  CHECK (session_end != NULL, "socket: %s", error->message);
  agent = g_socket_new_from_fd (fds[1], &error);
  CHECK (agent != NULL, "socket: %s", error->message);
  g_socket_set_blocking (agent, FALSE);
  connection = g_socket_connection_factory_create_connection (session_end);

  session = chp_mcp_session_new (G_IO_STREAM (connection), tools, agent_session);
  g_signal_connect (session, "closed", G_CALLBACK (closed_cb), &closed);
  g_object_weak_ref (G_OBJECT (session), finalized_cb, &finalized);
  chp_mcp_session_start (session);

  /* The agent writes as fast as the socket takes it, and reads the answers meanwhile. */
  while (sent < size && open && !closed)
    {
      gssize n = g_socket_send (agent, (const char *) data + sent, size - sent, NULL, &error);

      if (n > 0)
        sent += n;
      else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        break;  /* the session closed the socket: the agent cannot say more */
      g_clear_error (&error);
      drain ();
      open = read_answers (agent, out);
      if (n <= 0 && open && !closed)
        wait_for (agent, G_IO_IN | G_IO_OUT);
    }

  /* Until the session has answered all it will: nothing left to run, nothing left to read. */
  while (open && !closed)
    {
      drain ();
      if (!read_answers (agent, out))
        break;
      if (!g_main_context_pending (NULL))
        break;
    }
  drain ();
  open = read_answers (agent, out);

  /* The agent hangs up (it stops writing), and reads until the session closes its end. */
  g_socket_shutdown (agent, FALSE, TRUE, NULL);
  while (read_answers (agent, out))
    wait_for (agent, G_IO_IN);
  CHECK (closed, "the socket closed before the session did");

  /* FUZZ_SHOW=1 prints what the session answered, to read a reproducer. */
  if (g_getenv ("FUZZ_SHOW") != NULL)
    g_printerr ("%.*s", (int) out->len, (const char *) out->data);
  check_output (out);

  g_signal_handlers_disconnect_by_data (session, &closed);
  g_object_unref (session);
  while (!finalized)
    g_main_context_iteration (NULL, TRUE);
  drain ();
  CHECK (!g_main_context_pending (NULL), "something of the session is still running");

  return 0;
}
