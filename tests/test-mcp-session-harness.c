/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-session-harness.c: what the agent endpoint tests share: a served temporary folder, an
 * MCP client on the socket that reads every line as JSON-RPC, the checks on its answers, and
 * waiting for a child process. */
#include "config.h"

#include "test-mcp-session-harness.h"

#include "chp-frame.h"

#include <gio/gunixsocketaddress.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ---- Files ---------------------------------------------------------------------------- */

void
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

guint
mode_of (const char *path)
{
  struct stat st;

  g_assert_cmpint (g_lstat (path, &st), ==, 0);
  return st.st_mode & 07777;
}

/* ---- Fixture -------------------------------------------------------------------------- */

void
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

void
fixture_setup (Fixture       *fixture,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture_setup_bare (fixture, data);
  g_assert_true (chp_mcp_server_listen (fixture->server, fixture->path, &error));
  g_assert_no_error (error);
}

void
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

Client *
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

void
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
void
client_send_raw (Client     *client,
                 const void *data,
                 gsize       len)
{
  client->writing = TRUE;
  g_output_stream_write_all_async (g_io_stream_get_output_stream (G_IO_STREAM (client->connection)),
                                   data, len, G_PRIORITY_DEFAULT, NULL, write_cb, client);
  g_assert_true (chp_test_spin_until (client_written, client, WAIT_MS * 4));
}

void
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
JsonObject *
client_next (Client *client)
{
  g_clear_pointer (&client->last, json_node_unref);
  chp_test_spin_until (inbox_ready, client, WAIT_MS);
  client->last = g_queue_pop_head (&client->inbox);

  return client->last != NULL ? json_node_get_object (client->last) : NULL;
}

gboolean
client_sees_eof (Client *client)
{
  chp_test_spin_until (inbox_ready, client, WAIT_MS);
  return g_queue_is_empty (&client->inbox) && client->eof;
}

/* Returns: (transfer none): the response to a request with integer id @id */
JsonObject *
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

JsonObject *
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
const char *
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

void
assert_ping (Client *client,
             gint64  id)
{
  JsonObject *result = result_of (client_request (client, id, "ping", NULL));

  g_assert_cmpuint (json_object_get_size (result), ==, 0);
}

JsonObject *
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
ChpAgentSession *
only_agent (Fixture *fixture)
{
  g_autoptr(ChpAgentSession) agent = NULL;

  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (fixture->sessions)), ==, 1);
  agent = g_list_model_get_item (G_LIST_MODEL (fixture->sessions), 0);
  return chp_agent_session_list_lookup (fixture->sessions, chp_agent_session_get_id (agent));
}

gboolean
list_has_one (gpointer data)
{
  return g_list_model_get_n_items (G_LIST_MODEL (data)) == 1;
}

gboolean
list_is_empty (gpointer data)
{
  return g_list_model_get_n_items (G_LIST_MODEL (data)) == 0;
}

gboolean
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

/* ---- Child processes ------------------------------------------------------------------ */

void
child_exited_cb (GPid     pid,
                 gint     status,
                 gpointer user_data)
{
  *(int *) user_data = WIFEXITED (status) ? WEXITSTATUS (status) : 100;
  g_spawn_close_pid (pid);
}

gboolean
child_done (gpointer data)
{
  return *(int *) data >= 0;
}
