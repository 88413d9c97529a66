/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-session.c: the agent endpoint over a real Unix socket, as an MCP client sees it:
 * JSON-RPC framing and errors, initialize, the folder and socket checks, and the person's
 * Pause / Resume / Disconnect reaching the agent. Independent of which tools exist. */
#include "config.h"

#include "chp-test-client.h"

#include "chp-engine.h"
#include "chp-frame.h"
#include "chp-mcp-server.h"
#include "chp-mcp-session.h"
#include "chp-mcp-tools.h"

#include <errno.h>
#include <gio/gunixsocketaddress.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define WAIT_MS 5000

typedef struct
{
  char                *dir;
  char                *folder;   /* dir/chaperone */
  char                *path;     /* dir/chaperone/agent.sock */
  ChpEngine           *engine;
  ChpMcpTools         *tools;
  ChpAgentSessionList *sessions;
  ChpMcpServer        *server;
} Fixture;

typedef struct
{
  GSocketConnection *connection;
  GDataInputStream  *input;
  GCancellable      *cancellable;
  GQueue             inbox;      /* JsonNode*, oldest first */
  JsonNode          *last;
  gboolean           eof;
  gboolean           reading;
  gboolean           writing;
} Client;

/* ---- Files ---------------------------------------------------------------------------- */

static void
rm_rf (const char *path)
{
  struct stat st;

  if (g_lstat (path, &st) != 0)
    return;

  if (S_ISDIR (st.st_mode))
    {
      g_autoptr(GDir) dir = NULL;
      const char *name;

      g_chmod (path, 0700);
      dir = g_dir_open (path, 0, NULL);
      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *child = g_build_filename (path, name, NULL);

          rm_rf (child);
        }
      g_rmdir (path);
    }
  else
    g_unlink (path);
}

static guint
mode_of (const char *path)
{
  struct stat st;

  g_assert_cmpint (g_lstat (path, &st), ==, 0);
  return st.st_mode & 07777;
}

/* ---- Fixture -------------------------------------------------------------------------- */

static void
fixture_setup_bare (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture->dir = g_dir_make_tmp ("chp-mcp-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->folder = g_build_filename (fixture->dir, "chaperone", NULL);
  fixture->path = g_build_filename (fixture->folder, "agent.sock", NULL);
  /* Tools need an engine to exist, not to run: no browser is reached here. */
  fixture->engine = chp_engine_new (fixture->dir);
  fixture->tools = chp_mcp_tools_new (fixture->engine);
  fixture->sessions = chp_agent_session_list_new ();
  fixture->server = chp_mcp_server_new (fixture->tools, fixture->sessions);
}

static void
fixture_setup (Fixture       *fixture,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture_setup_bare (fixture, data);
  g_assert_true (chp_mcp_server_listen (fixture->server, fixture->path, &error));
  g_assert_no_error (error);
}

static void
fixture_teardown (Fixture       *fixture,
                  gconstpointer  data)
{
  chp_mcp_server_close (fixture->server);
  /* Closing sessions finish their sockets on the main loop. */
  chp_test_finalize_object (g_steal_pointer (&fixture->server));
  chp_test_finalize_object (g_steal_pointer (&fixture->sessions));
  g_clear_object (&fixture->tools);
  g_clear_object (&fixture->engine);
  rm_rf (fixture->dir);
  g_free (fixture->path);
  g_free (fixture->folder);
  g_free (fixture->dir);
}

/* ---- Client --------------------------------------------------------------------------- */

static void read_next (Client *client);

static void
line_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  Client *client = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonParser) parser = NULL;
  g_autofree char *line = NULL;
  JsonObject *object;
  gsize len = 0;

  client->reading = FALSE;
  line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (source), result, &len,
                                                    &error);
  if (line == NULL)
    {
      client->eof = TRUE;
      return;
    }

  /* Every line the server writes is one JSON-RPC 2.0 object. */
  parser = json_parser_new ();
  g_assert_true (json_parser_load_from_data (parser, line, len, NULL));
  g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));
  object = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (json_object_get_string_member_with_default (object, "jsonrpc", NULL), ==,
                   "2.0");
  g_queue_push_tail (&client->inbox, json_parser_steal_root (parser));
  read_next (client);
}

static void
read_next (Client *client)
{
  client->reading = TRUE;
  g_data_input_stream_read_line_async (client->input, G_PRIORITY_DEFAULT, client->cancellable,
                                       line_cb, client);
}

static Client *
client_connect (const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketClient) socket_client = g_socket_client_new ();
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new (path);
  Client *client = g_new0 (Client, 1);

  client->connection = g_socket_client_connect (socket_client, G_SOCKET_CONNECTABLE (address),
                                                NULL, &error);
  g_assert_no_error (error);
  client->input = g_data_input_stream_new (
    g_io_stream_get_input_stream (G_IO_STREAM (client->connection)));
  g_data_input_stream_set_newline_type (client->input, G_DATA_STREAM_NEWLINE_TYPE_LF);
  client->cancellable = g_cancellable_new ();
  g_queue_init (&client->inbox);
  read_next (client);

  return client;
}

static gboolean
client_idle (gpointer data)
{
  Client *client = data;

  return !client->reading && !client->writing;
}

static void
client_free (Client *client)
{
  g_cancellable_cancel (client->cancellable);
  g_assert_true (chp_test_spin_until (client_idle, client, WAIT_MS));
  g_io_stream_close (G_IO_STREAM (client->connection), NULL, NULL);
  g_queue_clear_full (&client->inbox, (GDestroyNotify) json_node_unref);
  g_clear_pointer (&client->last, json_node_unref);
  g_clear_object (&client->input);
  g_clear_object (&client->connection);
  g_clear_object (&client->cancellable);
  g_free (client);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Client, client_free)

static void
write_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  Client *client = user_data;
  g_autoptr(GError) error = NULL;

  g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, &error);
  g_assert_no_error (error);
  client->writing = FALSE;
}

static gboolean
client_written (gpointer data)
{
  return !((Client *) data)->writing;
}

/* Asynchronous, because the server reads on this same main loop. */
static void
client_send_raw (Client     *client,
                 const void *data,
                 gsize       len)
{
  client->writing = TRUE;
  g_output_stream_write_all_async (g_io_stream_get_output_stream (G_IO_STREAM (client->connection)),
                                   data, len, G_PRIORITY_DEFAULT, NULL, write_cb, client);
  g_assert_true (chp_test_spin_until (client_written, client, WAIT_MS * 4));
}

/* For text with NULs in it. */
#define client_send_literal(client, text) client_send_raw ((client), (text), sizeof (text) - 1)

static void
client_send (Client     *client,
             const char *line)
{
  g_autofree char *text = g_strconcat (line, "\n", NULL);

  client_send_raw (client, text, strlen (text));
}

static gboolean
inbox_ready (gpointer data)
{
  Client *client = data;

  return !g_queue_is_empty (&client->inbox) || client->eof;
}

/* Returns: (transfer none) (nullable): the next message, valid until the next call */
static JsonObject *
client_next (Client *client)
{
  g_clear_pointer (&client->last, json_node_unref);
  chp_test_spin_until (inbox_ready, client, WAIT_MS);
  client->last = g_queue_pop_head (&client->inbox);

  return client->last != NULL ? json_node_get_object (client->last) : NULL;
}

static gboolean
client_sees_eof (Client *client)
{
  chp_test_spin_until (inbox_ready, client, WAIT_MS);
  return g_queue_is_empty (&client->inbox) && client->eof;
}

/* Returns: (transfer none): the response to a request with integer id @id */
static JsonObject *
client_request (Client     *client,
                gint64      id,
                const char *method,
                const char *params)
{
  g_autofree char *line = NULL;
  JsonObject *response;

  if (params != NULL)
    line = g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":%" G_GINT64_FORMAT ",\"method\":\"%s\","
                            "\"params\":%s}", id, method, params);
  else
    line = g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":%" G_GINT64_FORMAT ",\"method\":\"%s\"}",
                            id, method);
  client_send (client, line);

  response = client_next (client);
  g_assert_nonnull (response);
  g_assert_false (json_object_has_member (response, "method"));
  g_assert_cmpint (json_object_get_int_member (response, "id"), ==, id);
  return response;
}

static JsonObject *
result_of (JsonObject *response)
{
  JsonNode *result = json_object_get_member (response, "result");

  if (result == NULL)
    {
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), response);
      g_autofree char *text = chp_json_to_string (node);

      g_test_message ("expected a result, got %s", text);
    }
  g_assert_nonnull (result);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (result));
  return json_node_get_object (result);
}

/* @id: -1 for an error that must carry id null */
static const char *
assert_error (JsonObject *response,
              gint64      id,
              int         code)
{
  JsonObject *error;

  g_assert_nonnull (response);
  g_assert_false (json_object_has_member (response, "result"));
  error = json_object_get_object_member (response, "error");
  g_assert_nonnull (error);
  g_assert_cmpint (json_object_get_int_member (error, "code"), ==, code);
  if (id < 0)
    g_assert_true (json_object_get_null_member (response, "id"));
  else
    g_assert_cmpint (json_object_get_int_member (response, "id"), ==, id);
  return json_object_get_string_member (error, "message");
}

static void
assert_ping (Client *client,
             gint64  id)
{
  JsonObject *result = result_of (client_request (client, id, "ping", NULL));

  g_assert_cmpuint (json_object_get_size (result), ==, 0);
}

static JsonObject *
client_initialize (Client     *client,
                   const char *version,
                   const char *client_info)
{
  g_autofree char *params = g_strdup_printf ("{\"protocolVersion\":\"%s\",\"capabilities\":{},"
                                             "\"clientInfo\":%s}", version,
                                             client_info != NULL ? client_info
                                                                 : "{\"name\":\"test\"}");
  JsonObject *result = result_of (client_request (client, 1, "initialize", params));

  client_send (client, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  return result;
}

/* Returns: (transfer none): the one agent connected; the list keeps it */
static ChpAgentSession *
only_agent (Fixture *fixture)
{
  g_autoptr(ChpAgentSession) agent = NULL;

  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (fixture->sessions)), ==, 1);
  agent = g_list_model_get_item (G_LIST_MODEL (fixture->sessions), 0);
  return chp_agent_session_list_lookup (fixture->sessions, chp_agent_session_get_id (agent));
}

static gboolean
list_has_one (gpointer data)
{
  return g_list_model_get_n_items (G_LIST_MODEL (data)) == 1;
}

static gboolean
list_is_empty (gpointer data)
{
  return g_list_model_get_n_items (G_LIST_MODEL (data)) == 0;
}

/* ---- Protocol ------------------------------------------------------------------------- */

static void
test_initialize_negotiation (Fixture       *fixture,
                             gconstpointer  data)
{
  const struct { const char *asked, *answered; } cases[] = {
    { "2025-06-18", "2025-06-18" },
    { "2025-11-25", "2025-11-25" },
    { "1999-01-01", "2025-06-18" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(Client) client = client_connect (fixture->path);
      JsonObject *result = client_initialize (client, cases[i].asked, NULL);
      JsonObject *capabilities = json_object_get_object_member (result, "capabilities");
      JsonObject *info = json_object_get_object_member (result, "serverInfo");
      const char *text = json_object_get_string_member (result, "instructions");

      g_assert_cmpstr (json_object_get_string_member (result, "protocolVersion"), ==,
                       cases[i].answered);
      g_assert_false (json_object_get_boolean_member (
        json_object_get_object_member (capabilities, "tools"), "listChanged"));
      g_assert_true (json_object_has_member (capabilities, "logging"));
      g_assert_cmpstr (json_object_get_string_member (info, "name"), ==, "chaperone");
      g_assert_cmpstr (json_object_get_string_member (info, "title"), ==, "Chaperone");
      g_assert_cmpstr (json_object_get_string_member (info, "version"), ==, PACKAGE_VERSION);
      g_assert_nonnull (strstr (text, "untrusted"));
      g_assert_nonnull (strstr (text, "browser_wait"));

      /* Once per connection. */
      assert_error (client_request (client, 2, "initialize",
                                    "{\"protocolVersion\":\"2025-06-18\"}"), 2, -32600);
    }

  /* protocolVersion is required. */
  {
    g_autoptr(Client) client = client_connect (fixture->path);

    assert_error (client_request (client, 3, "initialize", "{}"), 3, -32602);
    assert_error (client_request (client, 4, "initialize", "[1]"), 4, -32602);
    client_initialize (client, "2025-06-18", NULL);
  }
}

static void
test_ping_and_tools_list (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  JsonObject *result;

  /* Ping is allowed before initialize. */
  assert_ping (client, 10);
  client_initialize (client, "2025-06-18", NULL);
  assert_ping (client, 11);

  result = result_of (client_request (client, 12, "tools/list", "{\"cursor\":\"x\"}"));
  g_assert_nonnull (json_object_get_array_member (result, "tools"));

  /* String ids come back as strings. */
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"ping\"}");
  g_assert_cmpstr (json_object_get_string_member (client_next (client), "id"), ==, "abc");
}

static void
test_notifications_unanswered (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);

  client_initialize (client, "2025-06-18", NULL);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\","
                       "\"params\":{\"x\":1}}");
  client_send (client, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                       "\"params\":{\"requestId\":99,\"reason\":\"gone\"}}");
  client_send (client, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                       "\"params\":{\"requestId\":\"nope\"}}");
  client_send (client, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}");
  /* A response to a request the server never made is ignored too. */
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":6,\"error\":{\"code\":1,\"message\":\"x\"}}");
  /* The next message is the ping's answer: nothing came for the rest. */
  assert_ping (client, 7);
}

static void
test_unknown_method (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);

  client_initialize (client, "2025-06-18", NULL);
  assert_error (client_request (client, 2, "resources/list", NULL), 2, -32601);
  assert_error (client_request (client, 3, "browser_tabs", "{}"), 3, -32601);
  assert_ping (client, 4);
}

static void
test_malformed (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  const char *bad[] = {
    "{\"jsonrpc\":",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} {\"jsonrpc\":\"2.0\"}",
    "var x = {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\\1ng\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\ud800\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,/* c */\"method\":\"ping\"}",
    "not json",
  };
  GString *deep = g_string_new ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":");

  client_initialize (client, "2025-06-18", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_test_message ("malformed %u", i);
      client_send (client, bad[i]);
      assert_error (client_next (client), -1, -32700);
    }

  /* Invalid UTF-8 (and a NUL) inside a string. */
  client_send_literal (client, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}\n");
  assert_error (client_next (client), -1, -32700);
  client_send_literal (client, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\0\"}\n");
  assert_error (client_next (client), -1, -32700);

  /* json-glib recurses: nesting is bounded before it parses. */
  for (guint i = 0; i < 5000; i++)
    g_string_append_c (deep, '[');
  for (guint i = 0; i < 5000; i++)
    g_string_append_c (deep, ']');
  g_string_append (deep, "}}");
  client_send (client, deep->str);
  g_string_free (deep, TRUE);
  assert_error (client_next (client), -1, -32700);

  /* Blank lines are nothing; a CRLF line is one message. */
  client_send (client, "");
  client_send (client, "   \t\r");
  client_send_literal (client, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\r\n");
  g_assert_cmpint (json_object_get_int_member (client_next (client), "id"), ==, 8);

  assert_ping (client, 9);
}

static void
test_invalid_requests (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);

  client_initialize (client, "2025-06-18", NULL);

  /* MCP removed batching. */
  client_send (client, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "42");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "\"ping\"");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "{\"id\":2,\"method\":\"ping\"}");
  assert_error (client_next (client), 2, -32600);
  client_send (client, "{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}");
  assert_error (client_next (client), 3, -32600);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":7}");
  assert_error (client_next (client), 4, -32600);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":5}");
  assert_error (client_next (client), 5, -32600);
  assert_error (client_request (client, 6, "tools/list", "\"x\""), 6, -32602);

  assert_ping (client, 7);
}

/* Members of another type than the protocol's are refused as missing ones are, with nothing
 * louder than that in the log: json-glib 1.6's *_with_default() getters log a critical for an
 * object or an array (fatal here, as in any G_DEBUG=fatal-criticals run). Found by
 * tests/fuzz/fuzz-mcp-session. */
static void
test_member_types (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  JsonObject *result;

  client_send (client, "{\"jsonrpc\":{\"v\":\"2.0\"},\"id\":1,\"method\":\"ping\"}");
  assert_error (client_next (client), 1, -32600);
  assert_error (client_request (client, 2, "initialize", "{\"protocolVersion\":[\"2025-06-18\"]}"),
                2, -32602);
  result = result_of (client_request (client, 3, "initialize",
                                      "{\"protocolVersion\":\"2025-06-18\",\"clientInfo\":"
                                      "{\"name\":{\"n\":1},\"version\":[1]}}"));
  g_assert_cmpstr (json_object_get_string_member (result, "protocolVersion"), ==, "2025-06-18");
  assert_error (client_request (client, 4, "logging/setLevel", "{\"level\":[\"debug\"]}"), 4,
                -32602);
  assert_ping (client, 5);
}

static char *
ping_with_padding (gint64 id,
                   gsize  line_len)
{
  g_autofree char *head = g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":%" G_GINT64_FORMAT ","
                                           "\"method\":\"ping\",\"params\":{\"pad\":\"", id);
  const char *tail = "\"}}";
  gsize pad = line_len - strlen (head) - strlen (tail);
  GString *line = g_string_sized_new (line_len + 1);

  g_string_append (line, head);
  for (gsize i = 0; i < pad; i++)
    g_string_append_c (line, 'x');
  g_string_append (line, tail);
  g_assert_cmpuint (line->len, ==, line_len);
  return g_string_free (line, FALSE);
}

static void
test_oversize_line (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  g_autofree char *largest = ping_with_padding (2, CHP_MCP_MAX_LINE_BYTES);
  g_autofree char *too_large = ping_with_padding (3, CHP_MCP_MAX_LINE_BYTES + 1);
  g_autofree char *huge = ping_with_padding (4, 3 * CHP_MCP_MAX_LINE_BYTES);
  JsonObject *response;
  const char *message;

  client_initialize (client, "2025-06-18", NULL);

  /* At the limit: answered. */
  client_send (client, largest);
  response = client_next (client);
  result_of (response);
  g_assert_cmpint (json_object_get_int_member (response, "id"), ==, 2);

  /* One byte over: refused once, skipped to its newline, and the session goes on. */
  client_send (client, too_large);
  message = assert_error (client_next (client), -1, -32600);
  g_assert_nonnull (strstr (message, "1048576"));
  assert_ping (client, 5);

  client_send (client, huge);
  assert_error (client_next (client), -1, -32600);
  assert_ping (client, 6);
}

static void
test_before_initialize (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  const char *message;

  message = assert_error (client_request (client, 1, "tools/list", NULL), 1, -32600);
  g_assert_nonnull (strstr (message, "not initialized"));
  assert_error (client_request (client, 2, "tools/call", "{\"name\":\"browser_tabs\"}"), 2,
                -32600);
  assert_error (client_request (client, 3, "logging/setLevel", "{\"level\":\"info\"}"), 3,
                -32600);
  assert_ping (client, 4);

  /* Lenient: tools work once initialize is answered, even without notifications/initialized. */
  result_of (client_request (client, 5, "initialize", "{\"protocolVersion\":\"2025-06-18\"}"));
  result_of (client_request (client, 6, "tools/list", NULL));
}

static void
test_tools_call_params (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  ChpAgentSession *agent;
  const char *message;

  client_initialize (client, "2025-06-18", NULL);
  agent = only_agent (fixture);

  assert_error (client_request (client, 2, "tools/call", NULL), 2, -32602);
  assert_error (client_request (client, 3, "tools/call", "{}"), 3, -32602);
  assert_error (client_request (client, 4, "tools/call", "{\"name\":5}"), 4, -32602);
  assert_error (client_request (client, 5, "tools/call",
                                "{\"name\":\"browser_tabs\",\"arguments\":\"x\"}"), 5, -32602);
  assert_error (client_request (client, 6, "tools/call",
                                "{\"name\":\"browser_tabs\",\"arguments\":[]}"), 6, -32602);
  g_assert_cmpstr (chp_agent_session_get_last_error (agent), ==, "invalid_params");

  message = assert_error (client_request (client, 7, "tools/call",
                                          "{\"name\":\"no_such_tool\",\"arguments\":{}}"),
                          7, -32602);
  g_assert_cmpstr (message, ==, "Unknown tool: no_such_tool");
  g_assert_cmpstr (chp_agent_session_get_last_error (agent), ==, "unknown_method");
  g_assert_cmpuint (chp_agent_session_get_calls (agent), ==, 6);

  /* An agent's junk is not echoed whole. */
  message = assert_error (client_request (client, 8, "tools/call", "{\"name\":\"a\\nb\"}"),
                          8, -32602);
  g_assert_null (strchr (message, '\n'));
  assert_ping (client, 9);
}

static gboolean
is_log (JsonObject *message,
        const char *level)
{
  JsonObject *params;

  if (g_strcmp0 (json_object_get_string_member_with_default (message, "method", NULL),
                 "notifications/message") != 0)
    return FALSE;
  params = json_object_get_object_member (message, "params");
  return g_strcmp0 (json_object_get_string_member (params, "level"), level) == 0 &&
         json_object_get_string_member (params, "data") != NULL;
}

static void
test_logging_level (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  ChpAgentSession *agent;

  client_initialize (client, "2025-06-18", NULL);
  agent = only_agent (fixture);

  assert_error (client_request (client, 2, "logging/setLevel", "{\"level\":\"loud\"}"), 2, -32602);
  assert_error (client_request (client, 3, "logging/setLevel", "{}"), 3, -32602);
  assert_error (client_request (client, 4, "logging/setLevel", "{\"level\":3}"), 4, -32602);

  /* Above warning: the pause is not told. */
  g_assert_cmpuint (json_object_get_size (result_of (
    client_request (client, 5, "logging/setLevel", "{\"level\":\"error\"}"))), ==, 0);
  chp_agent_session_request_pause (agent);
  assert_ping (client, 6);

  /* Warning and below: the resume is. */
  result_of (client_request (client, 7, "logging/setLevel", "{\"level\":\"debug\"}"));
  chp_agent_session_request_resume (agent);
  g_assert_true (is_log (client_next (client), "warning"));
  assert_ping (client, 8);
}

/* ---- The folder and the socket -------------------------------------------------------- */

static void
assert_listen_fails (Fixture    *fixture,
                     int         code,
                     const char *names)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (chp_mcp_server_listen (fixture->server, fixture->path, &error));
  g_assert_error (error, G_IO_ERROR, code);
  g_test_message ("refused: %s", error->message);
  g_assert_nonnull (strstr (error->message, names));
}

static void
test_folder_created (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *nested = g_build_filename (fixture->dir, "run", "user", NULL);
  g_autofree char *path = g_build_filename (nested, "chaperone", "agent.sock", NULL);
  g_autofree char *folder = g_path_get_dirname (path);
  struct stat st;

  /* As for the runtime folder's fallback: missing parents are made too. */
  g_assert_true (chp_mcp_server_listen (fixture->server, path, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (chp_mcp_server_get_path (fixture->server), ==, path);
  g_assert_cmpuint (mode_of (folder), ==, 0700);
  g_assert_cmpint (g_lstat (path, &st), ==, 0);
  g_assert_true (S_ISSOCK (st.st_mode));
  g_assert_cmpuint (st.st_mode & 0777, ==, 0600);

  chp_mcp_server_close (fixture->server);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  chp_mcp_server_close (fixture->server);
}

static void
test_socket_mode (Fixture       *fixture,
                  gconstpointer  data)
{
  struct stat st;

  g_assert_cmpuint (mode_of (fixture->folder), ==, 0700);
  g_assert_cmpint (g_lstat (fixture->path, &st), ==, 0);
  g_assert_true (S_ISSOCK (st.st_mode));
  g_assert_cmpuint (st.st_mode & 0777, ==, 0600);
  g_assert_cmpuint (st.st_uid, ==, getuid ());
}

static void
test_folder_loose_mode (Fixture       *fixture,
                        gconstpointer  data)
{
  g_assert_cmpint (g_mkdir (fixture->folder, 0700), ==, 0);
  g_assert_cmpint (g_chmod (fixture->folder, 0755), ==, 0);

  assert_listen_fails (fixture, G_IO_ERROR_PERMISSION_DENIED, fixture->folder);
  /* Refused, never repaired behind the person's back. */
  g_assert_cmpuint (mode_of (fixture->folder), ==, 0755);
  g_assert_false (g_file_test (fixture->path, G_FILE_TEST_EXISTS));

  g_assert_cmpint (g_chmod (fixture->folder, 0710), ==, 0);
  assert_listen_fails (fixture, G_IO_ERROR_PERMISSION_DENIED, fixture->folder);
}

static void
test_folder_symlink (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autofree char *real = g_build_filename (fixture->dir, "elsewhere", NULL);

  g_assert_cmpint (g_mkdir (real, 0700), ==, 0);
  g_assert_cmpint (symlink (real, fixture->folder), ==, 0);
  assert_listen_fails (fixture, G_IO_ERROR_NOT_DIRECTORY, fixture->folder);
  g_assert_cmpint (g_unlink (fixture->folder), ==, 0);

  /* A file where the folder should be. */
  g_assert_true (g_file_set_contents (fixture->folder, "", 0, NULL));
  assert_listen_fails (fixture, G_IO_ERROR_NOT_DIRECTORY, fixture->folder);
}

static void
test_socket_stale (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) old = NULL;
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new (fixture->path);

  /* A socket file nobody listens on: what a crashed Chaperone leaves. */
  g_assert_cmpint (g_mkdir (fixture->folder, 0700), ==, 0);
  old = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT,
                      &error);
  g_assert_no_error (error);
  g_assert_true (g_socket_bind (old, address, FALSE, &error));
  g_assert_no_error (error);
  g_socket_close (old, NULL);
  g_assert_true (g_file_test (fixture->path, G_FILE_TEST_EXISTS));

  g_assert_true (chp_mcp_server_listen (fixture->server, fixture->path, &error));
  g_assert_no_error (error);
  {
    g_autoptr(Client) client = client_connect (fixture->path);

    assert_ping (client, 1);
  }

  /* Something that is not a socket is not ours to remove. */
  chp_mcp_server_close (fixture->server);
  g_assert_true (g_file_set_contents (fixture->path, "keep", -1, NULL));
  g_clear_object (&fixture->server);
  fixture->server = chp_mcp_server_new (fixture->tools, fixture->sessions);
  assert_listen_fails (fixture, G_IO_ERROR_EXISTS, fixture->path);
  g_assert_true (g_file_test (fixture->path, G_FILE_TEST_IS_REGULAR));
}

static void
test_socket_in_use (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(ChpMcpServer) second = chp_mcp_server_new (fixture->tools, fixture->sessions);
  g_autoptr(GError) error = NULL;
  g_autoptr(Client) client = NULL;

  g_assert_false (chp_mcp_server_listen (second, fixture->path, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE);
  g_assert_nonnull (strstr (error->message, "another Chaperone is serving agents at"));
  g_assert_nonnull (strstr (error->message, fixture->path));
  /* The first one's probe connection came and went. */
  g_assert_true (chp_test_spin_until (list_is_empty, fixture->sessions, WAIT_MS));

  /* The first is untouched. */
  client = client_connect (fixture->path);
  assert_ping (client, 1);
  chp_mcp_server_close (second);
}

static void
test_socket_replaced_not_removed (Fixture       *fixture,
                                  gconstpointer  data)
{
  g_autoptr(ChpMcpServer) second = chp_mcp_server_new (fixture->tools, fixture->sessions);
  g_autoptr(GError) error = NULL;

  /* Someone removed our socket and a second instance now serves at the path: closing the
   * first must not take the second's socket with it. */
  g_assert_cmpint (g_unlink (fixture->path), ==, 0);
  g_assert_true (chp_mcp_server_listen (second, fixture->path, &error));
  g_assert_no_error (error);
  chp_mcp_server_close (fixture->server);
  g_assert_true (g_file_test (fixture->path, G_FILE_TEST_EXISTS));
  {
    g_autoptr(Client) client = client_connect (fixture->path);

    assert_ping (client, 1);
  }
  chp_mcp_server_close (second);
  g_assert_false (g_file_test (fixture->path, G_FILE_TEST_EXISTS));
  chp_test_finalize_object (g_steal_pointer (&second));
}

/* The child process: as another user, connect, send a ping, and say what came back. */
static int
other_user_child (const char *path)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
  char buf[256];
  ssize_t n;
  int fd;

  if (setgid (65534) != 0 || setuid (65534) != 0)
    return 10;
  fd = socket (AF_UNIX, SOCK_STREAM, 0);
  g_strlcpy (sun.sun_path, path, sizeof sun.sun_path);
  if (connect (fd, (struct sockaddr *) &sun, sizeof sun) != 0)
    return 11;
  if (write (fd, ping, sizeof ping - 1) < 0 && errno != EPIPE)
    return 12;
  alarm (10);
  n = read (fd, buf, sizeof buf);
  return n == 0 || (n < 0 && errno == ECONNRESET) ? 0 : 13;
}

static void
child_exited_cb (GPid     pid,
                 gint     status,
                 gpointer user_data)
{
  *(int *) user_data = WIFEXITED (status) ? WEXITSTATUS (status) : 100;
  g_spawn_close_pid (pid);
}

static gboolean
child_done (gpointer data)
{
  return *(int *) data >= 0;
}

static void
test_peer_other_user (Fixture       *fixture,
                      gconstpointer  data)
{
  int status = -1;
  pid_t pid;

  if (getuid () != 0)
    {
      g_test_skip ("connecting as another user needs root (to setuid a child)");
      return;
    }

  /* Open the door on purpose, so that only the SO_PEERCRED check stands in the way. */
  g_assert_cmpint (g_chmod (fixture->dir, 0755), ==, 0);
  g_assert_cmpint (g_chmod (fixture->folder, 0755), ==, 0);
  g_assert_cmpint (g_chmod (fixture->path, 0666), ==, 0);

  signal (SIGPIPE, SIG_IGN);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    _exit (other_user_child (fixture->path));

  g_child_watch_add (pid, child_exited_cb, &status);
  g_assert_true (chp_test_spin_until (child_done, &status, WAIT_MS * 2));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (fixture->sessions)), ==, 0);

  {
    g_autoptr(Client) client = client_connect (fixture->path);

    assert_ping (client, 1);
  }
}

/* ---- Sessions as the person sees them ------------------------------------------------- */

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

/* Returns: (nullable): the name of a tool the tools accept, or %NULL when there is none yet */
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

static gboolean
below_limit (gpointer data)
{
  return g_list_model_get_n_items (G_LIST_MODEL (data)) < 16;
}

static void
test_session_limit (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(GPtrArray) clients = g_ptr_array_new_with_free_func ((GDestroyNotify) client_free);
  Client *extra;

  for (guint i = 0; i < 16; i++)
    {
      Client *client = client_connect (fixture->path);

      g_ptr_array_add (clients, client);
      assert_ping (client, i);
    }

  /* The seventeenth is closed unanswered. */
  extra = client_connect (fixture->path);
  client_send (extra, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
  g_assert_true (client_sees_eof (extra));
  client_free (extra);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (fixture->sessions)), ==, 16);

  /* Room again once one leaves. */
  g_ptr_array_remove_index (clients, 0);
  g_assert_true (chp_test_spin_until (below_limit, fixture->sessions, WAIT_MS));
  extra = client_connect (fixture->path);
  assert_ping (extra, 1);
  client_free (extra);
}

static void
test_server_close (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketClient) socket_client = g_socket_client_new ();
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new (fixture->path);
  g_autoptr(GSocketConnection) refused = NULL;

  client_initialize (client, "2025-06-18", NULL);
  chp_mcp_server_close (fixture->server);

  g_assert_true (client_sees_eof (client));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (fixture->sessions)), ==, 0);
  g_assert_false (g_file_test (fixture->path, G_FILE_TEST_EXISTS));
  refused = g_socket_client_connect (socket_client, G_SOCKET_CONNECTABLE (address), NULL, &error);
  g_assert_null (refused);
  g_assert_nonnull (error);
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
      /* The first two reach no browser here and fail; the third is the guard's. */
      code = json_object_get_string_member (structured, "code");
      g_assert_cmpint (g_strcmp0 (code, "paused") == 0, ==, id == 5);
    }
  g_assert_cmpint (chp_agent_session_get_state (agent), ==, CHP_AGENT_SESSION_PAUSED);
  g_assert_cmpstr (chp_agent_session_get_attention (agent), ==, "repeated");

  /* It hangs up and opens a new session: paused, and told why. */
  g_clear_pointer (&looping, client_free);
  again = client_connect (path);
  client_initialize (again, "2025-06-18", "{\"name\":\"Looping Agent\"}");
  text = tabs_paused_text (again, 2);
  g_test_message ("a new session of the looping agent is told: %s", text);
  g_assert_nonnull (strstr (text, "three times in a row"));
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

/* ---- Sessions alone ------------------------------------------------------------------- */

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

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add ("/chaperone/mcp/" path, Fixture, NULL, fixture_setup, func, fixture_teardown)
#define ADD_BARE(path, func) \
  g_test_add ("/chaperone/mcp/" path, Fixture, NULL, fixture_setup_bare, func, fixture_teardown)

  ADD ("protocol/initialize", test_initialize_negotiation);
  ADD ("protocol/ping-tools-list", test_ping_and_tools_list);
  ADD ("protocol/notifications-unanswered", test_notifications_unanswered);
  ADD ("protocol/unknown-method", test_unknown_method);
  ADD ("protocol/malformed", test_malformed);
  ADD ("protocol/invalid-requests", test_invalid_requests);
  ADD ("protocol/member-types", test_member_types);
  ADD ("protocol/oversize-line", test_oversize_line);
  ADD ("protocol/before-initialize", test_before_initialize);
  ADD ("protocol/tools-call-params", test_tools_call_params);
  ADD ("protocol/logging-level", test_logging_level);
  ADD_BARE ("server/folder-created", test_folder_created);
  ADD ("server/socket-mode", test_socket_mode);
  ADD_BARE ("server/folder-loose-mode", test_folder_loose_mode);
  ADD_BARE ("server/folder-symlink", test_folder_symlink);
  ADD_BARE ("server/socket-stale", test_socket_stale);
  ADD ("server/socket-in-use", test_socket_in_use);
  ADD ("server/socket-replaced", test_socket_replaced_not_removed);
  ADD ("server/peer-other-user", test_peer_other_user);
  ADD ("server/session-limit", test_session_limit);
  ADD ("server/close", test_server_close);
  ADD ("agents/in-list", test_agent_in_list);
  ADD ("agents/pause-resume-told", test_pause_resume_told);
  ADD ("agents/pause-refuses-calls", test_pause_refuses_calls);
  ADD ("agents/disconnect", test_disconnect);
  ADD ("agents/disconnect-before-initialize", test_disconnect_before_initialize);
  ADD ("agents/pause-holds-for-name", test_pause_holds_for_name);
  ADD ("agents/pause-holds-for-process", test_pause_holds_for_process);
  ADD ("agents/pause-holds-for-loop-guard", test_pause_holds_for_loop_guard);
  g_test_add_func ("/chaperone/mcp/session/alone", test_session_alone);

  return g_test_run ();
}
