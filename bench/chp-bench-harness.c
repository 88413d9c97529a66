/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-bench-harness.c: what the core benchmark stands on: engines started and paired in the
 * process, a client that answers as an extension does, and the bare libsoup pair the bridge is
 * compared with. */
#include "config.h"

#include "chp-bench-harness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <glib/gstdio.h>
#include <libsoup/soup.h>

gint64
now_ns (void)
{
  struct timespec ts;

  /* g_get_monotonic_time() has microsecond steps; a loopback round trip is tens of them. */
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

long
vm_rss_kib (void)
{
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents ("/proc/self/status", &status, NULL, NULL))
    return -1;
  line = strstr (status, "\nVmRSS:");
  return line ? strtol (line + strlen ("\nVmRSS:"), NULL, 10) : -1;
}

static int
cmp_double (gconstpointer a,
            gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

/* Nearest-rank percentile of @values (sorted in place). */
double
percentile (GArray *values,
            double  p)
{
  guint rank;

  if (values->len == 0)
    return NAN;

  g_array_sort (values, cmp_double);
  rank = (guint) ceil (p / 100.0 * values->len);
  rank = CLAMP (rank, 1, values->len);
  return g_array_index (values, double, rank - 1);
}

static void
rm_rf (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);

      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        rm_rf (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

/* The engine, as test-bridge.c starts it: port 0 in a fresh data directory. */

static void
engine_started_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  Engine *e = user_data;

  chp_engine_start_finish (CHP_ENGINE (source), result, &e->error);
  e->started = TRUE;
}

static gboolean
engine_is_started (gpointer data)
{
  return ((Engine *) data)->started;
}

Engine *
engine_start (void)
{
  g_autoptr(GError) error = NULL;
  Engine *e = g_new0 (Engine, 1);

  e->dir = g_dir_make_tmp ("chp-bench-XXXXXX", &error);
  if (e->dir == NULL)
    g_error ("temporary directory: %s", error->message);

  e->engine = chp_engine_new (e->dir);
  /* The user's real agent socket is not the benchmark's to take. */
  chp_engine_start_async (e->engine, 0, NULL, engine_started_cb, e);
  if (!chp_test_spin_until (engine_is_started, e, 30000) || e->error != NULL)
    g_error ("the engine did not start: %s", e->error ? e->error->message : "timeout");

  e->port = chp_bridge_get_port (chp_engine_get_bridge (e->engine));
  return e;
}

void
engine_stop (Engine *e)
{
  /* Let the sockets' close handshakes and the store thread's last replies run. */
  chp_test_finalize_object (g_steal_pointer (&e->engine));
  rm_rf (e->dir);
  g_free (e->dir);
  g_clear_error (&e->error);
  g_free (e);
}

/* Pairing, approved by program as soon as the request is shown. The approval is deferred to an
 * idle: the pairing window learns of the request before pair_pending is sent, and the client
 * expects pair_pending first. */

static gboolean
approve_idle_cb (gpointer user_data)
{
  g_autoptr(ChpPairingRequest) request = user_data;

  if (chp_pairing_request_get_state (request) == CHP_PAIRING_STATE_WAITING)
    chp_pairing_request_approve (request, FALSE);

  return G_SOURCE_REMOVE;
}

static void
pairing_items_changed_cb (GListModel *model,
                          guint       position,
                          guint       removed,
                          guint       added,
                          gpointer    user_data)
{
  for (guint i = 0; i < added; i++)
    g_idle_add_full (G_PRIORITY_HIGH, approve_idle_cb,
                     g_list_model_get_item (model, position + i), NULL);
}

/* Returns: the wall time from opening /pairing to pair_approved, in ms; negative on failure. */
double
pair_client (Engine        *e,
             ChpTestClient *client)
{
  GListModel *model = G_LIST_MODEL (chp_engine_get_pairing (e->engine));
  g_autofree char *code = NULL;
  gulong handler;
  gint64 start;
  gboolean ok;

  handler = g_signal_connect (model, "items-changed", G_CALLBACK (pairing_items_changed_cb),
                              NULL);
  start = now_ns ();
  code = chp_test_client_begin_pairing (client, NULL);
  ok = code != NULL && chp_test_client_finish_pairing (client);
  g_signal_handler_disconnect (model, handler);

  return ok ? (now_ns () - start) / 1e6 : -1;
}

/* The answering side. chp-test-client.c parses every frame twice (a JsonParser to read the type,
 * then chp_frame_parse() for chunks) because it serves GTest, not speed. The extension parses a
 * frame once (JSON.parse); so does this handler, with the core's own frame and chunk code, so
 * that what is measured is the protocol's cost on both ends, not the test helper's. */

static void answer_frame (Answerer *answerer, ChpFrame *frame_in);

static void
answer_chunk_cb (const char *frame,
                 gsize       len,
                 gpointer    user_data)
{
  soup_websocket_connection_send_text (user_data, frame);
}

static void
answer_send_len (Answerer   *answerer,
                 const char *text,
                 gsize       len)
{
  SoupWebsocketConnection *ws = answerer->client->ws;

  if (len > CHP_CHUNK_THRESHOLD)
    {
      g_autofree char *transfer_id = chp_random_b64url (12);

      /* As the engine sends, so that both ends cost the same. */
      chp_chunk_split_foreach (text, len, transfer_id, answer_chunk_cb, ws);
      return;
    }

  soup_websocket_connection_send_text (ws, text);
}

static void
answer_send (Answerer   *answerer,
             const char *text)
{
  answer_send_len (answerer, text, strlen (text));
}

/* Takes @frame_in. */
static void
answer_frame (Answerer *answerer,
              ChpFrame *frame_in)
{
  g_autoptr(ChpFrame) frame = frame_in;

  if (frame == NULL)
    return;

  switch (frame->type)
    {
    case CHP_FRAME_CHUNK:
      {
        gint64 now = g_get_real_time () / 1000;
        GString *whole = chp_chunk_assembler_add_string (answerer->assembler, frame, now, NULL);

        if (whole != NULL)
          {
            /* As the engine reads a reassembled message (JSON.parse in the extension), and
             * keeps the buffer for the next one as ChpConnection does. */
            ChpFrame *inner = chp_frame_parse_in_place (whole->str, whole->len, NULL);

            chp_chunk_assembler_recycle (answerer->assembler, whole, now);
            answer_frame (answerer, inner);
          }
      }
      break;

    case CHP_FRAME_REQUEST:
      {
        /* The same answer as the test client's auto-answer: {"echo": params}. */
        g_autoptr(JsonObject) echo = json_object_new ();
        g_autoptr(JsonNode) result = json_node_new (JSON_NODE_OBJECT);
        GString *text = chp_chunk_assembler_take_buffer (answerer->assembler, 128);

        /* A reference, not a copy: the extension's side would not copy 16 MiB to echo it. */
        json_object_set_member (echo, "echo", frame->params ? json_node_ref (frame->params)
                                                            : json_node_new (JSON_NODE_NULL));
        json_node_set_object (result, echo);
        /* Written as ChpConnection writes a response: into the buffer kept between
         * messages. */
        chp_frame_write_response (text, frame->id, result);
        answer_send_len (answerer, text->str, text->len);
        chp_chunk_assembler_recycle (answerer->assembler, text, g_get_real_time () / 1000);
      }
      break;

    case CHP_FRAME_PING:
      {
        g_autofree char *pong = chp_frame_build_pong (frame->sequence, frame->timestamp,
                                                      g_get_real_time () / 1000);

        answer_send (answerer, pong);
      }
      break;

    default:
      break;
    }
}

static void
answer_text (Answerer   *answerer,
             const char *data,
             gsize       len)
{
  answer_frame (answerer, chp_frame_parse (data, len, NULL));
}

static void
answer_message_cb (SoupWebsocketConnection *ws,
                   gint                     type,
                   GBytes                  *message,
                   gpointer                 user_data)
{
  gsize len;
  const char *data = g_bytes_get_data (message, &len);

  answer_text (user_data, data, len);
}

/* Takes the connected client's socket over from the test client's own handlers. */
Answerer *
answerer_new (ChpTestClient *client)
{
  Answerer *answerer = g_new0 (Answerer, 1);

  answerer->client = client;
  answerer->assembler = chp_chunk_assembler_new ();
  g_signal_handlers_disconnect_by_data (client->ws, client);
  answerer->handler = g_signal_connect (client->ws, "message", G_CALLBACK (answer_message_cb),
                                        answerer);
  return answerer;
}

void
answerer_free (Answerer *answerer)
{
  g_clear_signal_handler (&answerer->handler, answerer->client->ws);
  chp_chunk_assembler_free (answerer->assembler);
  g_free (answerer);
}

/* The store writes an audit entry per call on its own thread, in order: a read queued behind
 * them returns once they are all on disk. Used so that one side's backlog is not timed as the
 * other side's cost. */

static void
store_barrier_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  GPtrArray *entries = chp_store_list_audit_finish (CHP_STORE (source), result, NULL);

  /* Only the moment matters, not the entries. */
  g_clear_pointer (&entries, g_ptr_array_unref);
  *(gboolean *) user_data = TRUE;
}

static gboolean
flag_is_set (gpointer data)
{
  return *(gboolean *) data;
}

/* Returns: how long the store took to catch up, in ms. */
double
store_barrier (Engine *e)
{
  gboolean done = FALSE;
  gint64 start = now_ns ();

  chp_store_list_audit_async (chp_engine_get_store (e->engine), 1, NULL, store_barrier_cb, &done);
  chp_test_spin_until (flag_is_set, &done, 120000);
  return (now_ns () - start) / 1e6;
}

/* Calls through the bridge. */

/* Returns: the round trip in ns, or -1 (and says why) if the call failed. */
gint64
bridge_call (Engine        *e,
             ChpTestClient *client,
             JsonNode      *params,
             guint          timeout_ms)
{
  ChpTestCall call = { 0 };
  gint64 start = now_ns ();
  gint64 elapsed;

  chp_test_call_start (chp_engine_get_bridge (e->engine), client->device_id, "bench.echo",
                       params, timeout_ms, &call);
  chp_test_spin_until (chp_test_call_done, &call, timeout_ms + 1000);
  elapsed = now_ns () - start;

  if (!call.done || call.error != NULL)
    {
      g_printerr ("bench: call failed: %s\n", call.error ? call.error->message : "no answer");
      elapsed = -1;
    }
  chp_test_call_clear (&call);

  return elapsed;
}

/* The bare pair: a SoupServer that echoes every message and a SoupSession client, both on
 * 127.0.0.1 in this process — the same transport and main loop the bridge uses, nothing else. */

static void
bare_server_message_cb (SoupWebsocketConnection *ws,
                        gint                     type,
                        GBytes                  *message,
                        gpointer                 user_data)
{
  soup_websocket_connection_send_message (ws, type, message);
}

static void
bare_websocket_cb (SoupServer              *server,
                   SoupServerMessage       *msg,
                   const char              *path,
                   SoupWebsocketConnection *connection,
                   gpointer                 user_data)
{
  Bare *bare = user_data;

  bare->server_ws = g_object_ref (connection);
  soup_websocket_connection_set_max_incoming_payload_size (connection, BARE_MAX_PAYLOAD);
  soup_websocket_connection_set_keepalive_interval (connection, 0);
  g_signal_connect (connection, "message", G_CALLBACK (bare_server_message_cb), bare);
}

static void
bare_client_message_cb (SoupWebsocketConnection *ws,
                        gint                     type,
                        GBytes                  *message,
                        gpointer                 user_data)
{
  Bare *bare = user_data;

  bare->echoed_bytes = g_bytes_get_size (message);
  bare->echoed = TRUE;
}

static void
bare_connected_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  Bare *bare = user_data;
  g_autoptr(GError) error = NULL;

  bare->client_ws = soup_session_websocket_connect_finish (SOUP_SESSION (source), result, &error);
  if (bare->client_ws == NULL)
    g_error ("bare client: %s", error->message);
  bare->opened = TRUE;
}

static gboolean
bare_is_open (gpointer data)
{
  Bare *bare = data;

  return bare->opened && bare->server_ws != NULL;
}

static gboolean
bare_is_echoed (gpointer data)
{
  return ((Bare *) data)->echoed;
}

Bare *
bare_new (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(SoupMessage) msg = NULL;
  g_autofree char *uri = NULL;
  GSList *uris;
  Bare *bare = g_new0 (Bare, 1);

  bare->server = soup_server_new (NULL, NULL);
  soup_server_add_websocket_handler (bare->server, "/echo", NULL, NULL, bare_websocket_cb, bare,
                                     NULL);
  if (!soup_server_listen_local (bare->server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error))
    g_error ("bare server: %s", error->message);
  uris = soup_server_get_uris (bare->server);
  bare->port = g_uri_get_port (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  bare->session = soup_session_new ();
  uri = g_strdup_printf ("ws://127.0.0.1:%u/echo", bare->port);
  msg = soup_message_new ("GET", uri);
  soup_session_websocket_connect_async (bare->session, msg, NULL, NULL, G_PRIORITY_DEFAULT, NULL,
                                        bare_connected_cb, bare);
  if (!chp_test_spin_until (bare_is_open, bare, 5000))
    g_error ("bare pair did not connect");

  soup_websocket_connection_set_max_incoming_payload_size (bare->client_ws, BARE_MAX_PAYLOAD);
  soup_websocket_connection_set_keepalive_interval (bare->client_ws, 0);
  g_signal_connect (bare->client_ws, "message", G_CALLBACK (bare_client_message_cb), bare);

  return bare;
}

static gboolean
ws_closed (gpointer ws)
{
  return soup_websocket_connection_get_state (ws) == SOUP_WEBSOCKET_STATE_CLOSED;
}

void
bare_free (Bare *bare)
{
  g_signal_handlers_disconnect_by_data (bare->client_ws, bare);
  g_signal_handlers_disconnect_by_data (bare->server_ws, bare);
  soup_websocket_connection_close (bare->client_ws, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
  chp_test_spin_until (ws_closed, bare->client_ws, 5000);
  g_clear_object (&bare->client_ws);
  g_clear_object (&bare->server_ws);
  g_clear_object (&bare->session);
  soup_server_disconnect (bare->server);
  g_clear_object (&bare->server);
  g_free (bare);
}

/* Returns: the echo round trip of @text in ns, or -1. */
gint64
bare_echo (Bare       *bare,
           const char *text,
           guint       timeout_ms)
{
  gint64 start = now_ns ();

  bare->echoed = FALSE;
  soup_websocket_connection_send_text (bare->client_ws, text);
  if (!chp_test_spin_until (bare_is_echoed, bare, timeout_ms) ||
      bare->echoed_bytes != strlen (text))
    {
      g_printerr ("bench: bare echo failed\n");
      return -1;
    }

  return now_ns () - start;
}
