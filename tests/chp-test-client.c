/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-test-client.c: synchronous helpers over the main loop, so tests read top to bottom. */
#include "config.h"

#include <glib/gstdio.h>

#include "chp-test-client.h"

#include "chp-chunk-assembler.h"
#include "chp-crypto.h"
#include "chp-frame.h"

#include <string.h>

static gboolean
wake_cb (gpointer data)
{
  *(guint *) data = 0;
  return G_SOURCE_REMOVE;
}

/**
 * chp_test_spin_step:
 * @deadline_us: a g_get_monotonic_time() value
 *
 * One iteration of the default main context: it runs what is due, or blocks until something is —
 * but never past @deadline_us, and never more than 50 ms, so that a condition another thread or
 * process changes (a file descriptor closed, a child gone) is looked at again soon. The one way
 * the tests wait: chp_test_spin_until() and chp_test_until() are loops around it.
 *
 * Returns: %FALSE once @deadline_us has passed (then nothing was run)
 */
gboolean
chp_test_spin_step (gint64 deadline_us)
{
  gint64 left_us = deadline_us - g_get_monotonic_time ();
  guint id;

  if (left_us <= 0)
    return FALSE;

  id = g_timeout_add (CLAMP (left_us / 1000, 1, 50), wake_cb, &id);
  g_main_context_iteration (NULL, TRUE);
  if (id != 0)
    g_source_remove (id);

  return TRUE;
}

/* Runs what the main loop has ready now (idles, queued signals) and returns without waiting for
 * anything to come: for code that finishes on the loop and needs nothing from outside it. */
void
chp_test_spin_pending (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

/* Spins the main loop until done (data) or @timeout_ms have passed; returns done (data). */
gboolean
chp_test_spin_until (gboolean (*done) (gpointer),
                     gpointer  data,
                     guint     timeout_ms)
{
  gint64 deadline_us = g_get_monotonic_time () + (gint64) timeout_ms * 1000;

  while (!done (data))
    if (!chp_test_spin_step (deadline_us))
      return done (data);

  return TRUE;
}

void
chp_test_result_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  ChpTestResult *self = user_data;

  (void) source;
  g_clear_object (&self->ready);
  self->ready = g_object_ref (result);
}

static gboolean
result_ready (gpointer data)
{
  return ((ChpTestResult *) data)->ready != NULL;
}

/**
 * chp_test_result_wait_within:
 * @self: the #ChpTestResult the call was started with (chp_test_result_cb, @self)
 * @timeout_ms: how long the call may take before the test fails
 *
 * Spins the main loop until the call's callback ran.
 *
 * Returns: (transfer none): its result, kept in @self until the next wait or
 *   chp_test_result_clear()
 */
GAsyncResult *
chp_test_result_wait_within (ChpTestResult *self,
                             guint          timeout_ms)
{
  g_assert_true (chp_test_spin_until (result_ready, self, timeout_ms));
  g_clear_object (&self->taken);
  self->taken = g_steal_pointer (&self->ready);
  return self->taken;
}

void
chp_test_result_clear (ChpTestResult *self)
{
  g_clear_object (&self->ready);
  g_clear_object (&self->taken);
}

/* Removes @dir and everything under it (a test's own temporary folder), never following a
 * symbolic link out of it. */
void
chp_test_remove_tree (const char *dir)
{
  g_autoptr(GDir) listing = g_dir_open (dir, 0, NULL);
  const char *name;

  while (listing != NULL && (name = g_dir_read_name (listing)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
        chp_test_remove_tree (path);
      else
        g_unlink (path);
    }
  g_rmdir (dir);
}

/**
 * chp_test_finalize_object:
 * @object: (transfer full): a GObject the caller holds the last reference of
 *
 * Drops that reference and spins the main loop until @object is finalized: what it started
 * (a socket closing, a task returning) may hold it until the loop has run. Fails the test when
 * something still holds it after CHP_TEST_WAIT_MS.
 */
void
chp_test_finalize_object (gpointer object)
{
  gpointer alive = object;

  g_assert_true (G_IS_OBJECT (object));
  g_object_add_weak_pointer (object, &alive);
  g_object_unref (object);
  chp_test_until (alive == NULL);
}

static void
engine_started_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (chp_engine_start_finish (CHP_ENGINE (source), result, &error));
  g_assert_no_error (error);
  *(gboolean *) user_data = TRUE;
}

static gboolean
flag_set (gpointer data)
{
  return *(gboolean *) data;
}

/**
 * chp_test_engine_start:
 * @tmp_template: for g_dir_make_tmp(), e.g. "chp-bridge-XXXXXX"
 * @dir_out: (out): the data folder it made
 * @port_out: (out): the bridge's port on 127.0.0.1
 *
 * A real engine, as the app starts it, on a free port in a fresh temporary folder.
 */
ChpEngine *
chp_test_engine_start (const char  *tmp_template,
                       char       **dir_out,
                       guint       *port_out)
{
  g_autoptr(GError) error = NULL;
  ChpEngine *engine;
  gboolean started = FALSE;

  *dir_out = g_dir_make_tmp (tmp_template, &error);
  g_assert_no_error (error);
  engine = chp_engine_new (*dir_out);
  /* No agent endpoint: tests must not make, or fight over, the user's real agent socket. */
  chp_engine_start_async (engine, 0, NULL, engine_started_cb, &started);
  g_assert_true (chp_test_spin_until (flag_set, &started, 10000));
  *port_out = chp_bridge_get_port (chp_engine_get_bridge (engine));
  g_assert_cmpuint (*port_out, >, 0);

  return engine;
}

static void
test_call_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  ChpTestCall *call = user_data;

  call->result = chp_bridge_call_finish (CHP_BRIDGE (source), result, &call->error);
  call->done = TRUE;
}

/* @call must live until it is done: the engine writes the outcome into it. */
void
chp_test_call_start (ChpBridge   *bridge,
                     const char  *device_id,
                     const char  *method,
                     JsonNode    *params,
                     guint        timeout_ms,
                     ChpTestCall *call)
{
  chp_bridge_call_async (bridge, device_id, method, params, timeout_ms, NULL, test_call_cb, call);
}

gboolean
chp_test_call_done (gpointer call)
{
  return ((ChpTestCall *) call)->done;
}

void
chp_test_call_clear (ChpTestCall *call)
{
  g_clear_pointer (&call->result, json_node_unref);
  g_clear_error (&call->error);
  call->done = FALSE;
}

typedef struct
{
  SoupWebsocketConnection *ws;
  GError *error;
  gboolean done;
} OpenData;

static void
open_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  OpenData *data = user_data;

  data->ws = soup_session_websocket_connect_finish (SOUP_SESSION (source), result, &data->error);
  data->done = TRUE;
}

static gboolean
open_done (gpointer data)
{
  return ((OpenData *) data)->done;
}

SoupWebsocketConnection *
chp_test_ws_open (guint        port,
                  const char  *path,
                  const char  *origin,
                  const char  *host,
                  guint       *http_status,
                  GError     **error)
{
  g_autoptr(SoupSession) session = soup_session_new ();
  g_autofree char *uri = g_strdup_printf ("ws://127.0.0.1:%u%s", port, path);
  g_autoptr(SoupMessage) msg = soup_message_new ("GET", uri);
  OpenData data = { 0 };

  if (origin != NULL)
    soup_message_headers_replace (soup_message_get_request_headers (msg), "Origin", origin);
  if (host != NULL)
    soup_message_headers_replace (soup_message_get_request_headers (msg), "Host", host);

  soup_session_websocket_connect_async (session, msg, NULL, NULL, G_PRIORITY_DEFAULT, NULL,
                                        open_cb, &data);
  chp_test_spin_until (open_done, &data, 5000);

  if (http_status != NULL)
    *http_status = soup_message_get_status (msg);

  if (data.ws == NULL)
    {
      if (data.error != NULL)
        g_propagate_error (error, data.error);
      else
        g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "connect timed out");
      return NULL;
    }

  /* The engine may send up to its own frame limit; match it on this side. */
  soup_websocket_connection_set_max_incoming_payload_size (data.ws, 640 * 1024);
  soup_websocket_connection_set_keepalive_interval (data.ws, 0);
  return data.ws;
}

typedef struct
{
  char     buf[512];
  gssize   n;
  gboolean done;
} ReadData;

static void
read_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  ReadData *data = user_data;

  data->n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, NULL);
  data->done = TRUE;
}

static gboolean
read_done (gpointer data)
{
  return ((ReadData *) data)->done;
}

/* A hand-written upgrade request: libsoup's client always writes its own Host header, and
 * the gate must be tested against any Host a page or a rebinding attack could send. */
guint
chp_test_http_upgrade_status (guint       port,
                              const char *path,
                              const char *origin,
                              const char *host)
{
  g_autoptr(GSocketClient) socket_client = g_socket_client_new ();
  g_autoptr(GSocketConnection) connection = NULL;
  g_autoptr(GString) request = g_string_new (NULL);
  ReadData data = { 0 };
  guint status = 0;

  connection = g_socket_client_connect_to_host (socket_client, "127.0.0.1", port, NULL, NULL);
  g_assert_nonnull (connection);

  g_string_append_printf (request, "GET %s HTTP/1.1\r\n", path);
  if (host != NULL)
    g_string_append_printf (request, "Host: %s\r\n", host);
  if (origin != NULL)
    g_string_append_printf (request, "Origin: %s\r\n", origin);
  g_string_append (request, "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                            "Sec-WebSocket-Version: 13\r\n\r\n");
  g_assert_true (g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (connection)),
                                            request->str, request->len, NULL, NULL, NULL));

  g_input_stream_read_async (g_io_stream_get_input_stream (G_IO_STREAM (connection)), data.buf,
                             sizeof data.buf - 1, G_PRIORITY_DEFAULT, NULL, read_cb, &data);
  chp_test_spin_until (read_done, &data, 5000);
  if (data.n > 12 && g_str_has_prefix (data.buf, "HTTP/1.1 "))
    status = (guint) g_ascii_strtoull (data.buf + 9, NULL, 10);

  return status;
}

ChpTestClient *
chp_test_client_new (guint       port,
                     const char *origin)
{
  ChpTestClient *client = g_new0 (ChpTestClient, 1);

  client->port = port;
  client->origin = g_strdup (origin ? origin : CHP_TEST_ORIGIN);
  client->installation_id = chp_random_b64url (16);
  client->key = chp_identity_new_ephemeral ();
  g_queue_init (&client->inbox);

  return client;
}

static void
client_drop_ws (ChpTestClient *client)
{
  if (client->ws != NULL)
    {
      g_signal_handlers_disconnect_by_data (client->ws, client);
      if (soup_websocket_connection_get_state (client->ws) == SOUP_WEBSOCKET_STATE_OPEN)
        soup_websocket_connection_close (client->ws, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
    }
  g_clear_object (&client->ws);
  g_queue_clear_full (&client->inbox, (GDestroyNotify) json_node_unref);
}

void
chp_test_client_free (ChpTestClient *client)
{
  if (client == NULL)
    return;

  client_drop_ws (client);
  g_clear_pointer (&client->assembler, chp_chunk_assembler_free);
  g_clear_pointer (&client->transcript, g_strfreev);
  g_clear_object (&client->key);
  g_free (client->origin);
  g_free (client->installation_id);
  g_free (client->engine_x);
  g_free (client->engine_y);
  g_free (client->engine_id);
  g_free (client->device_id);
  g_free (client->session_id);
  g_free (client->code);
  g_free (client);
}

static void
answer_request (ChpTestClient *client,
                JsonObject    *o)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonNode) result = NULL;
  g_autofree char *text = NULL;
  JsonNode *params = json_object_get_member (o, "params");

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "echo");
  if (params != NULL)
    json_builder_add_value (b, json_node_copy (params));
  else
    json_builder_add_null_value (b);
  json_builder_end_object (b);
  result = json_builder_get_root (b);

  text = chp_frame_build_response (json_object_get_string_member (o, "id"), result);
  chp_test_client_send (client, text);
}

static void handle_text (ChpTestClient *client, SoupWebsocketConnection *ws, const char *data,
                         gsize len);

static void
message_cb (SoupWebsocketConnection *ws,
            gint                     type,
            GBytes                  *message,
            gpointer                 user_data)
{
  gsize len;
  const char *data = g_bytes_get_data (message, &len);

  handle_text (user_data, ws, data, len);
}

static void
handle_text (ChpTestClient           *client,
             SoupWebsocketConnection *ws,
             const char              *data,
             gsize                    len)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonObject *o;
  const char *type_name;

  if (!json_parser_load_from_data (parser, data, len, NULL))
    return;

  o = json_node_get_object (json_parser_get_root (parser));
  type_name = json_object_get_string_member_with_default (o, "type", "");

  if (g_str_equal (type_name, "chunk"))
    {
      g_autoptr(ChpFrame) frame = chp_frame_parse (data, len, NULL);
      g_autoptr(GBytes) whole = NULL;

      if (client->assembler == NULL)
        client->assembler = chp_chunk_assembler_new ();
      if (frame != NULL)
        whole = chp_chunk_assembler_add (client->assembler, frame, g_get_real_time () / 1000, NULL);
      if (whole != NULL)
        handle_text (client, ws, g_bytes_get_data (whole, NULL), g_bytes_get_size (whole));
      return;
    }

  /* Pings are the engine's business with any extension: answer them like the real one. */
  if (g_str_equal (type_name, "ping"))
    {
      g_autofree char *pong = chp_frame_build_pong (json_object_get_int_member (o, "sequence"),
                                                    json_object_get_int_member_with_default (o, "timestamp", 0),
                                                    g_get_real_time () / 1000);

      soup_websocket_connection_send_text (ws, pong);
      return;
    }

  /* The engine asks every connection what it is and which grants it holds, as the real
   * extension answers itself; this client holds none. */
  if (g_str_equal (type_name, "request") &&
      (g_strcmp0 (json_object_get_string_member_with_default (o, "method", ""), "extension.info") == 0 ||
       g_strcmp0 (json_object_get_string_member_with_default (o, "method", ""), "extension.grants") == 0))
    {
      gboolean info = g_strcmp0 (json_object_get_string_member (o, "method"), "extension.info") == 0;
      g_autofree char *text = NULL;
      g_autoptr(JsonNode) answer = json_from_string (info
                                                     ? "{\"client\":\"chaperone-test-client\","
                                                       "\"version\":\"1\",\"browser\":\"Test Browser 1\"}"
                                                     : "{\"grants\":[]}",
                                                     NULL);

      text = chp_frame_build_response (json_object_get_string_member (o, "id"), answer);
      chp_test_client_send (client, text);
      return;
    }

  if (client->auto_answer && g_str_equal (type_name, "request"))
    {
      answer_request (client, o);
      return;
    }

  g_queue_push_tail (&client->inbox, json_node_ref (json_parser_get_root (parser)));
}

static void
closed_cb (SoupWebsocketConnection *ws,
           gpointer                 user_data)
{
  ChpTestClient *client = user_data;

  client->closed = TRUE;
  client->close_code = soup_websocket_connection_get_close_code (ws);
}

gboolean
chp_test_client_open (ChpTestClient *client,
                      const char    *path)
{
  g_autoptr(GError) error = NULL;

  client_drop_ws (client);
  client->closed = FALSE;
  client->close_code = 0;
  client->ws = chp_test_ws_open (client->port, path, client->origin, NULL, NULL, &error);
  if (client->ws == NULL)
    {
      g_test_message ("open %s: %s", path, error->message);
      return FALSE;
    }

  g_signal_connect (client->ws, "message", G_CALLBACK (message_cb), client);
  g_signal_connect (client->ws, "closed", G_CALLBACK (closed_cb), client);

  return TRUE;
}

static gboolean
inbox_ready (gpointer data)
{
  ChpTestClient *client = data;

  return !g_queue_is_empty (&client->inbox) || client->closed;
}

/* Returns: (transfer none) (nullable): the next message; valid until the next call */
JsonObject *
chp_test_client_next (ChpTestClient *client,
                      guint          timeout_ms)
{
  static JsonNode *last;

  g_clear_pointer (&last, json_node_unref);
  chp_test_spin_until (inbox_ready, client, timeout_ms);
  last = g_queue_pop_head (&client->inbox);

  return last ? json_node_get_object (last) : NULL;
}

JsonObject *
chp_test_client_next_type (ChpTestClient *client,
                           const char    *type,
                           guint          timeout_ms)
{
  JsonObject *o = chp_test_client_next (client, timeout_ms);

  if (o == NULL)
    return NULL;

  if (g_strcmp0 (json_object_get_string_member_with_default (o, "type", ""), type) != 0)
    {
      g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), o);
      g_autofree char *text = chp_json_to_string (node);

      g_test_message ("expected %s, got %s", type, text);
      return NULL;
    }

  return o;
}

static gboolean
is_closed (gpointer data)
{
  return ((ChpTestClient *) data)->closed;
}

gboolean
chp_test_client_wait_closed (ChpTestClient *client,
                             guint          timeout_ms)
{
  return chp_test_spin_until (is_closed, client, timeout_ms);
}

/* Sends like the extension: a message over 512 KiB travels as 256 KiB chunks. */
void
chp_test_client_send (ChpTestClient *client,
                      const char    *text)
{
  gsize len = strlen (text);

  if (len > CHP_CHUNK_THRESHOLD)
    {
      g_autofree char *transfer_id = chp_random_b64url (12);
      g_autoptr(GPtrArray) frames = chp_chunk_split (text, len, transfer_id);

      for (guint i = 0; i < frames->len; i++)
        soup_websocket_connection_send_text (client->ws, g_ptr_array_index (frames, i));
      return;
    }

  soup_websocket_connection_send_text (client->ws, text);
}

static void
add_string (JsonBuilder *b,
            const char  *member,
            const char  *value)
{
  json_builder_set_member_name (b, member);
  json_builder_add_string_value (b, value);
}

static char *
finish_builder (JsonBuilder *b)
{
  g_autoptr(JsonNode) root = NULL;

  json_builder_end_object (b);
  root = json_builder_get_root (b);

  return chp_json_to_string (root);
}

char *
chp_test_client_build_pair_request (ChpTestClient *client,
                                    const char    *commitment)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonNode) jwk = chp_identity_dup_public_jwk (client->key);

  json_builder_begin_object (b);
  add_string (b, "type", "pair_request");
  json_builder_set_member_name (b, "protocol");
  json_builder_add_int_value (b, 1);
  add_string (b, "installationId", client->installation_id);
  add_string (b, "client", "chaperone-test-client");
  add_string (b, "version", "1");
  add_string (b, "browser", "Test Browser 1");
  json_builder_set_member_name (b, "publicKey");
  json_builder_add_value (b, json_node_copy (jwk));
  add_string (b, "commitment", commitment);

  return finish_builder (b);
}

/* Reads the engine's key and nonce from @pair_challenge, keeps the transcript and the code the
 * browser would show, and signs the reveal of @nonce_c. */
char *
chp_test_client_build_pair_reveal (ChpTestClient *client,
                                   JsonObject    *pair_challenge,
                                   const char    *nonce_c)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autofree char *reveal_text = NULL;
  g_autofree char *signature = NULL;
  JsonObject *engine_key = json_object_get_object_member (pair_challenge, "enginePublicKey");
  char **t;

  g_free (client->engine_x);
  client->engine_x = g_strdup (json_object_get_string_member (engine_key, "x"));
  g_free (client->engine_y);
  client->engine_y = g_strdup (json_object_get_string_member (engine_key, "y"));
  g_free (client->engine_id);
  client->engine_id = g_strdup (json_object_get_string_member (pair_challenge, "engineId"));

  g_clear_pointer (&client->transcript, g_strfreev);
  client->transcript = t = g_new0 (char *, 11);
  t[0] = g_strdup (json_object_get_string_member (pair_challenge, "requestId"));
  t[1] = g_strdup (client->origin);
  t[2] = g_strdup (client->installation_id);
  t[3] = g_strdup (chp_identity_get_x (client->key));
  t[4] = g_strdup (chp_identity_get_y (client->key));
  t[5] = g_strdup (client->engine_id);
  t[6] = g_strdup (client->engine_x);
  t[7] = g_strdup (client->engine_y);
  t[8] = g_strdup (nonce_c);
  t[9] = g_strdup (json_object_get_string_member (pair_challenge, "nonceE"));

  reveal_text = chp_pair_signed_text ("reveal", (const char * const *) t, NULL, NULL);
  signature = chp_identity_sign (client->key, reveal_text, NULL);
  g_free (client->code);
  client->code = chp_pair_code ((const char * const *) t, NULL);

  json_builder_begin_object (b);
  add_string (b, "type", "pair_reveal");
  add_string (b, "requestId", t[0]);
  add_string (b, "nonceC", nonce_c);
  add_string (b, "signature", signature);

  return finish_builder (b);
}

/* As the extension does before it pins the engine key: the approval must be signed by the
 * engine it saw in pair_challenge, over this transcript and the device id. */
gboolean
chp_test_client_check_approval (ChpTestClient *client,
                                JsonObject    *pair_approved)
{
  const char *device_id = json_object_get_string_member_with_default (pair_approved, "deviceId", NULL);
  g_autofree char *text = NULL;

  if (client->transcript == NULL || device_id == NULL)
    return FALSE;

  text = chp_pair_signed_text ("approved", (const char * const *) client->transcript, device_id,
                               NULL);
  if (text == NULL ||
      !chp_verify_p1363 (client->engine_x, client->engine_y, text,
                         json_object_get_string_member_with_default (pair_approved, "signature",
                                                                     NULL), NULL))
    return FALSE;

  g_free (client->device_id);
  client->device_id = g_strdup (device_id);

  return TRUE;
}

/* Checks the engine's signed challenge against the pinned key, then signs the auth. Returns
 * %NULL when the challenge is not from the engine this browser paired with. */
char *
chp_test_client_build_auth (ChpTestClient *client,
                            JsonObject    *challenge,
                            const char    *resume_session_id)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonArray) caps = json_array_new ();
  g_autofree char *challenge_text = NULL;
  g_autofree char *auth_text = NULL;
  g_autofree char *signature = NULL;

  challenge_text = chp_auth_challenge_text (json_object_get_string_member (challenge, "engineId"),
                                            json_object_get_string_member (challenge, "engineInstanceId"),
                                            json_object_get_string_member (challenge, "connectionId"),
                                            json_object_get_string_member (challenge, "challenge"),
                                            json_object_get_int_member (challenge, "timestamp"),
                                            NULL);
  if (!chp_verify_p1363 (client->engine_x, client->engine_y, challenge_text,
                         json_object_get_string_member (challenge, "signature"), NULL))
    {
      g_test_message ("this Chaperone is not the one we paired with");
      return NULL;
    }

  json_array_add_string_element (caps, "browser.tabs");
  json_array_add_string_element (caps, "browser.context");
  auth_text = chp_auth_client_text (client->origin,
                                    json_object_get_string_member (challenge, "engineId"),
                                    json_object_get_string_member (challenge, "engineInstanceId"),
                                    json_object_get_string_member (challenge, "connectionId"),
                                    json_object_get_string_member (challenge, "challenge"),
                                    client->installation_id, caps, NULL);
  signature = chp_identity_sign (client->key, auth_text, NULL);

  json_builder_begin_object (b);
  add_string (b, "type", "auth");
  add_string (b, "installationId", client->installation_id);
  add_string (b, "deviceId", client->device_id);
  add_string (b, "client", "chaperone-test-client");
  add_string (b, "version", "1");
  json_builder_set_member_name (b, "capabilities");
  json_builder_add_value (b, json_node_init_array (json_node_alloc (), caps));
  if (resume_session_id != NULL)
    add_string (b, "resumeSessionId", resume_session_id);
  add_string (b, "signature", signature);

  return finish_builder (b);
}

/**
 * chp_test_client_begin_pairing:
 * @nonce_c: (nullable): the nonce to reveal; %NULL reveals the one committed to. Another
 *   value plays a man in the middle who changes its mind after seeing the engine's nonce.
 *
 * Runs pair_request, pair_challenge, pair_reveal and waits for pair_pending.
 *
 * Returns: (transfer full) (nullable): the code the browser would show
 */
char *
chp_test_client_begin_pairing (ChpTestClient *client,
                               const char    *nonce_c)
{
  g_autofree char *committed = chp_random_b64url (32);
  g_autofree char *commitment = NULL;
  g_autofree char *request = NULL;
  g_autofree char *reveal = NULL;
  JsonObject *o;

  if (!chp_test_client_open (client, "/pairing"))
    return NULL;

  commitment = chp_pair_commitment (committed, chp_identity_get_x (client->key),
                                    chp_identity_get_y (client->key), NULL);
  request = chp_test_client_build_pair_request (client, commitment);
  chp_test_client_send (client, request);

  o = chp_test_client_next_type (client, "pair_challenge", 5000);
  if (o == NULL)
    return NULL;

  reveal = chp_test_client_build_pair_reveal (client, o, nonce_c ? nonce_c : committed);
  chp_test_client_send (client, reveal);

  o = chp_test_client_next (client, 5000);
  if (o == NULL || g_strcmp0 (json_object_get_string_member (o, "type"), "pair_pending") != 0)
    return NULL;

  return g_strdup (client->code);
}

/* Waits for pair_approved, checks the engine's signature and keeps the device id. */
gboolean
chp_test_client_finish_pairing (ChpTestClient *client)
{
  JsonObject *o = chp_test_client_next_type (client, "pair_approved", 10000);

  return o != NULL && chp_test_client_check_approval (client, o);
}

/* Opens /extension, verifies the signed challenge against the pinned engine key, sends auth. */
gboolean
chp_test_client_connect (ChpTestClient *client,
                         const char    *resume_session_id)
{
  g_autofree char *auth = NULL;
  JsonObject *o;

  if (!chp_test_client_open (client, "/extension"))
    return FALSE;

  o = chp_test_client_next_type (client, "challenge", 5000);
  if (o == NULL || (auth = chp_test_client_build_auth (client, o, resume_session_id)) == NULL)
    return FALSE;
  chp_test_client_send (client, auth);

  o = chp_test_client_next_type (client, "hello_ack", 5000);
  if (o == NULL)
    return FALSE;

  g_free (client->session_id);
  client->session_id = g_strdup (json_object_get_string_member (o, "sessionId"));

  return TRUE;
}
