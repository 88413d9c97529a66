/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chaperone-bench.c: what the bridge costs over the bare transport it is built on, measured in
 * one process: round trips, a 16 MiB message, pairing wall time and the engine's memory; and
 * how long a 16 MiB snapshot stalls the main loop in the agent's tools (chp-bench-agent.c).
 * It prints figures and never asserts; bench/run-bench.sh runs it. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <glib/gstdio.h>
#include <libsoup/soup.h>

#include "chp-bench-agent.h"
#include "chp-chunk-assembler.h"
#include "chp-crypto.h"
#include "chp-engine.h"
#include "chp-frame.h"
#include "chp-test-client.h"

/* The message of §7's limit: a request whose params hold this much text is just under 16 MiB
 * serialized, and so is the echo that comes back (the envelope adds about 100 bytes). */
#define BIG_MESSAGE_BYTES  (16 * 1024 * 1024)
#define BIG_ENVELOPE_SLACK 512
/* The bare pair sends the 16 MiB as one frame: both ends must accept it. Explicit, never 0. */
#define BARE_MAX_PAYLOAD   (32 * 1024 * 1024)
/* The pairing manager allows 20 attempts a day per engine: start a fresh one well before. */
#define PAIRINGS_PER_ENGINE 15

static int n_rtt = 10000;
static int n_big = 5;
static int n_pairings = 20;
static int n_agent = 3;
static int n_warmup = 200;

static gint64
now_ns (void)
{
  struct timespec ts;

  /* g_get_monotonic_time() has microsecond steps; a loopback round trip is tens of them. */
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

static long
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
static double
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

typedef struct
{
  char      *dir;
  ChpEngine *engine;
  guint      port;
  gboolean   started;
  GError    *error;
} Engine;

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

static Engine *
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

static void
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
static double
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

typedef struct
{
  ChpTestClient     *client;
  ChpChunkAssembler *assembler;
  gulong             handler;
} Answerer;

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
static Answerer *
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

static void
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
static double
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
static gint64
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

typedef struct
{
  SoupServer              *server;
  SoupSession             *session;
  SoupWebsocketConnection *server_ws;
  SoupWebsocketConnection *client_ws;
  guint                    port;
  gboolean                 opened;
  gboolean                 echoed;
  gsize                    echoed_bytes;
} Bare;

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

static Bare *
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

static void
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
static gint64
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

/* The measurements */

typedef struct
{
  long   rss_before_kib;
  long   rss_after_kib;
  double start_ms;

  double rtt_median_us, rtt_p99_us;
  double bare_median_us, bare_p99_us;
  double rtt_block_ms, audit_drain_ms;
  guint  rtt_failures;

  gsize  big_bytes;
  double big_mibs, bare_big_mibs;
  double big_ms, bare_big_ms;
  guint  big_failures;

  double pair_median_ms, pair_p99_ms, pair_min_ms, pair_max_ms;
  guint  pairings, pair_failures;

  ChpBenchAgent agent;
} Results;

static void
measure_rss (Results *r)
{
  gint64 start;
  Engine *e;

  /* Before anything else has loaded the core's types, libraries and key: what the app pays. */
  r->rss_before_kib = vm_rss_kib ();
  start = now_ns ();
  e = engine_start ();
  r->start_ms = (now_ns () - start) / 1e6;
  r->rss_after_kib = vm_rss_kib ();
  engine_stop (e);
}

static ChpTestClient *
paired_connected_client (Engine *e)
{
  g_autoptr(ChpTestClient) client = chp_test_client_new (e->port, NULL);

  if (pair_client (e, client) < 0 || !chp_test_client_connect (client, NULL))
    g_error ("could not pair and connect the bench client");

  return g_steal_pointer (&client);
}

/* In blocks, alternating, so that drift on a shared machine hits both sides alike; the store
 * catches up between a Chaperone block and a bare block, so that its backlog is not timed as
 * libsoup's. */
#define RTT_BLOCK 500

static void
measure_rtt (Results *r)
{
  g_autoptr(GArray) chp = g_array_sized_new (FALSE, FALSE, sizeof (double), n_rtt);
  g_autoptr(GArray) bare_rtt = g_array_sized_new (FALSE, FALSE, sizeof (double), n_rtt);
  g_autoptr(JsonNode) params = json_from_string ("{\"tab\":7,\"text\":\"hello\"}", NULL);
  g_autofree char *frame = NULL;
  Engine *e = engine_start ();
  ChpTestClient *client = paired_connected_client (e);
  Answerer *answerer = answerer_new (client);
  Bare *bare = bare_new ();
  int done = -n_warmup;

  r->rtt_block_ms = r->audit_drain_ms = 0;

  /* The bare pair echoes exactly the frame the engine sends for this call. */
  frame = chp_frame_build_request ("e1", "bench.echo", params, 5000);

  while (done < n_rtt)
    {
      int block = done < 0 ? -done : MIN (RTT_BLOCK, n_rtt - done);
      gint64 block_start = now_ns ();

      for (int i = 0; i < block; i++)
        {
          gint64 a = bridge_call (e, client, params, 5000);
          double us = a / 1e3;

          if (a < 0)
            r->rtt_failures++;
          else if (done >= 0)
            g_array_append_val (chp, us);
        }
      if (done >= 0)
        r->rtt_block_ms += (now_ns () - block_start) / 1e6;

      /* Whatever the store still has to write for this block is part of its cost. */
      r->audit_drain_ms += done >= 0 ? store_barrier (e) : 0;
      if (done < 0)
        store_barrier (e);

      for (int i = 0; i < block; i++)
        {
          gint64 b = bare_echo (bare, frame, 5000);
          double us = b / 1e3;

          if (b < 0)
            r->rtt_failures++;
          else if (done >= 0)
            g_array_append_val (bare_rtt, us);
        }

      done += block;
    }

  r->rtt_median_us = percentile (chp, 50);
  r->rtt_p99_us = percentile (chp, 99);
  r->bare_median_us = percentile (bare_rtt, 50);
  r->bare_p99_us = percentile (bare_rtt, 99);

  bare_free (bare);
  answerer_free (answerer);
  chp_test_client_free (client);
  engine_stop (e);
}

static void
measure_big (Results *r)
{
  g_autoptr(GArray) chp = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) bare_big = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) params = NULL;
  g_autofree char *payload = NULL;
  g_autofree char *request = NULL;
  g_autofree char *bare_text = NULL;
  gsize text_len = BIG_MESSAGE_BYTES - BIG_ENVELOPE_SLACK;
  Engine *e;
  ChpTestClient *client;
  Answerer *answerer;
  Bare *bare;

  /* Plain ASCII, so neither side pays for escapes: what is measured is the chunking. */
  payload = g_malloc (text_len + 1);
  memset (payload, 'a', text_len);
  payload[text_len] = '\0';
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "data");
  json_builder_add_string_value (builder, payload);
  json_builder_end_object (builder);
  params = json_builder_get_root (builder);

  /* The bare pair echoes the same bytes, as one frame. */
  request = chp_frame_build_request ("e1", "bench.echo", params, 60000);
  r->big_bytes = strlen (request);
  bare_text = g_steal_pointer (&request);

  e = engine_start ();
  client = paired_connected_client (e);
  answerer = answerer_new (client);
  bare = bare_new ();

  for (int i = -1; i < n_big; i++)
    {
      gint64 a = bridge_call (e, client, params, 60000);
      gint64 b;

      store_barrier (e);
      b = bare_echo (bare, bare_text, 60000);

      if (i < 0)
        continue;
      if (a < 0 || b < 0)
        {
          r->big_failures++;
          continue;
        }
      {
        double a_ms = a / 1e6, b_ms = b / 1e6;

        g_array_append_val (chp, a_ms);
        g_array_append_val (bare_big, b_ms);
      }
    }

  r->big_ms = percentile (chp, 50);
  r->bare_big_ms = percentile (bare_big, 50);
  /* One message out and its echo back, counted once: the message's MiB per second of round trip. */
  r->big_mibs = r->big_bytes / (1024.0 * 1024.0) / (r->big_ms / 1e3);
  r->bare_big_mibs = r->big_bytes / (1024.0 * 1024.0) / (r->bare_big_ms / 1e3);

  bare_free (bare);
  answerer_free (answerer);
  chp_test_client_free (client);
  engine_stop (e);
}

static void
measure_pairing (Results *r)
{
  g_autoptr(GArray) times = g_array_new (FALSE, FALSE, sizeof (double));
  Engine *e = NULL;

  for (int i = 0; i < n_pairings; i++)
    {
      g_autoptr(ChpTestClient) client = NULL;
      double ms;

      if (i % PAIRINGS_PER_ENGINE == 0)
        {
          g_clear_pointer (&e, engine_stop);
          e = engine_start ();
        }

      /* A new installation each time; its key is made before the clock starts, as the
       * extension makes it before it opens /pairing. */
      client = chp_test_client_new (e->port, NULL);
      ms = pair_client (e, client);
      if (ms < 0)
        {
          r->pair_failures++;
          continue;
        }
      g_array_append_val (times, ms);
    }
  g_clear_pointer (&e, engine_stop);

  r->pairings = times->len;
  r->pair_median_ms = percentile (times, 50);
  r->pair_p99_ms = percentile (times, 99);
  r->pair_min_ms = times->len ? g_array_index (times, double, 0) : NAN;
  r->pair_max_ms = times->len ? g_array_index (times, double, times->len - 1) : NAN;
}

/* A JSON member for the summary line: null when the figure was not measured. */
static void
json_num (GString    *json,
          const char *name,
          double      value,
          int         decimals)
{
  g_string_append_printf (json, "\"%s\":", name);
  if (isfinite (value))
    g_string_append_printf (json, "%.*f,", decimals, value);
  else
    g_string_append (json, "null,");
}

static void
json_end_object (GString *json)
{
  if (json->str[json->len - 1] == ',')
    g_string_truncate (json, json->len - 1);
  g_string_append (json, "},");
}

static void
print_results (const Results *r)
{
  double rtt_ratio = r->rtt_median_us / r->bare_median_us;
  double rtt_p99_ratio = r->rtt_p99_us / r->bare_p99_us;
  double big_ratio = r->big_mibs / r->bare_big_mibs;
  g_autoptr(GString) json = g_string_new ("{");
  const char *rule = "----------------------------------------------";

  printf ("\nChaperone core benchmark (one process, 127.0.0.1, libsoup %u.%u.%u)\n\n",
          soup_get_major_version (), soup_get_minor_version (), soup_get_micro_version ());
  printf ("%-46s %14s %14s %9s %7s\n", "measure", "chaperone", "bare libsoup", "ratio", "target");
  printf ("%-46s %14.14s %14.14s %9.9s %7.7s\n", rule, rule, rule, rule, rule);

  if (n_rtt > 0)
    {
      g_autofree char *label = g_strdup_printf ("small round trip, median (n=%d)", n_rtt);

      printf ("%-46s %11.1f us %11.1f us %8.2fx %7s\n", label,
              r->rtt_median_us, r->bare_median_us, rtt_ratio, "<= 2x");
      printf ("%-46s %11.1f us %11.1f us %8.2fx\n", "small round trip, p99",
              r->rtt_p99_us, r->bare_p99_us, rtt_p99_ratio);
      printf ("%-46s %11.0f ms   (after %.0f ms of calls)\n",
              "store catching up on the calls' audit", r->audit_drain_ms, r->rtt_block_ms);
    }
  if (n_big > 0)
    {
      g_autofree char *label = g_strdup_printf ("%.1f MiB echo, median of %d",
                                                r->big_bytes / 1048576.0, n_big);

      printf ("%-46s %8.1f MiB/s %8.1f MiB/s %8.0f%% %7s\n", label,
              r->big_mibs, r->bare_big_mibs, big_ratio * 100, ">= 50%");
      printf ("%-46s %11.1f ms %11.1f ms\n", "  its round trip", r->big_ms, r->bare_big_ms);
    }
  if (n_pairings > 0)
    {
      g_autofree char *label = g_strdup_printf ("pairing to pair_approved, median (n=%u)",
                                                r->pairings);

      printf ("%-46s %11.1f ms\n", label, r->pair_median_ms);
      printf ("%-46s %11.1f ms   (min %.1f, max %.1f)\n", "pairing, p99", r->pair_p99_ms,
              r->pair_min_ms, r->pair_max_ms);
    }
  if (n_agent > 0)
    {
      const ChpBenchAgent *a = &r->agent;

      printf ("\n%.1f MiB snapshot (%u elements), median of %d: longest main-loop stall, and "
              "call to result\n", a->answer_bytes / 1048576.0, a->nodes, a->repeats);
      printf ("%-46s %11.1f ms %11.1f ms\n", "  the engine's call alone (bridge: parse)",
              a->engine_stall_ms, a->engine_total_ms);
      printf ("%-46s %11.1f ms %11.1f ms\n", "  browser_snapshot, formatted on main thread",
              a->main_stall_ms, a->main_total_ms);
      printf ("%-46s %11.1f ms %11.1f ms\n\n", "  browser_snapshot, formatted in a worker",
              a->worker_stall_ms, a->worker_total_ms);
    }
  printf ("%-46s %11.1f ms\n", "first engine start (makes the key)", r->start_ms);
  printf ("%-46s %8ld KiB   (%ld -> %ld KiB)\n", "VmRSS added by starting the engine (core)",
          r->rss_after_kib - r->rss_before_kib, r->rss_before_kib, r->rss_after_kib);
  if (r->rtt_failures || r->big_failures || r->pair_failures || r->agent.failures)
    printf ("\nfailures: %u round trips, %u big echoes, %u pairings, %u snapshots\n",
            r->rtt_failures, r->big_failures, r->pair_failures, r->agent.failures);

  /* One line for scripts, the last of the output. */
  g_string_append_printf (json, "\"rtt_us\":{\"n\":%d,", n_rtt);
  json_num (json, "chaperone_median", r->rtt_median_us, 2);
  json_num (json, "chaperone_p99", r->rtt_p99_us, 2);
  json_num (json, "bare_median", r->bare_median_us, 2);
  json_num (json, "bare_p99", r->bare_p99_us, 2);
  json_num (json, "ratio_median", rtt_ratio, 3);
  json_num (json, "ratio_p99", rtt_p99_ratio, 3);
  json_num (json, "audit_drain_ms", r->audit_drain_ms, 0);
  g_string_append_printf (json, "\"failures\":%u", r->rtt_failures);
  json_end_object (json);

  g_string_append_printf (json, "\"big\":{\"bytes\":%" G_GSIZE_FORMAT ",\"repeats\":%d,",
                          r->big_bytes, n_big);
  json_num (json, "chaperone_ms", r->big_ms, 1);
  json_num (json, "bare_ms", r->bare_big_ms, 1);
  json_num (json, "chaperone_mib_s", r->big_mibs, 1);
  json_num (json, "bare_mib_s", r->bare_big_mibs, 1);
  json_num (json, "ratio", big_ratio, 3);
  g_string_append_printf (json, "\"failures\":%u", r->big_failures);
  json_end_object (json);

  g_string_append_printf (json, "\"pairing_ms\":{\"n\":%u,", r->pairings);
  json_num (json, "median", r->pair_median_ms, 2);
  json_num (json, "p99", r->pair_p99_ms, 2);
  json_num (json, "min", r->pair_min_ms, 2);
  json_num (json, "max", r->pair_max_ms, 2);
  g_string_append_printf (json, "\"failures\":%u", r->pair_failures);
  json_end_object (json);

  g_string_append_printf (json, "\"agent_snapshot_ms\":{\"bytes\":%" G_GSIZE_FORMAT
                          ",\"repeats\":%d,", r->agent.answer_bytes, n_agent);
  json_num (json, "engine_stall", r->agent.engine_stall_ms, 1);
  json_num (json, "engine_total", r->agent.engine_total_ms, 1);
  json_num (json, "main_thread_stall", r->agent.main_stall_ms, 1);
  json_num (json, "main_thread_total", r->agent.main_total_ms, 1);
  json_num (json, "worker_stall", r->agent.worker_stall_ms, 1);
  json_num (json, "worker_total", r->agent.worker_total_ms, 1);
  g_string_append_printf (json, "\"failures\":%u", r->agent.failures);
  json_end_object (json);

  g_string_append (json, "\"engine\":{");
  json_num (json, "start_ms", r->start_ms, 1);
  g_string_append_printf (json, "\"rss_before_kib\":%ld,\"rss_after_kib\":%ld,"
                          "\"rss_delta_kib\":%ld", r->rss_before_kib, r->rss_after_kib,
                          r->rss_after_kib - r->rss_before_kib);
  json_end_object (json);
  g_string_truncate (json, json->len - 1);
  g_string_append (json, "}");

  printf ("\n%s\n", json->str);
}

static GLogWriterOutput
log_to_stderr (GLogLevelFlags   level,
               const GLogField *fields,
               gsize            n_fields,
               gpointer         user_data)
{
  g_autofree char *line = NULL;
  const char *domain = NULL;

  for (gsize i = 0; i < n_fields; i++)
    if (g_str_equal (fields[i].key, "GLIB_DOMAIN"))
      domain = fields[i].value;

  /* Same filter as GLib's (G_MESSAGES_DEBUG); g_log() itself aborts on fatal levels. */
  if (g_log_writer_default_would_drop (level, domain))
    return G_LOG_WRITER_HANDLED;

  line = g_log_writer_format_fields (level, fields, n_fields, FALSE);
  g_printerr ("%s\n", line);
  return G_LOG_WRITER_HANDLED;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GOptionContext) context = g_option_context_new ("- measure the Chaperone core");
  g_autoptr(GError) error = NULL;
  gboolean quick = FALSE;
  Results r = { 0 };
  const GOptionEntry entries[] = {
    { "round-trips", 'n', 0, G_OPTION_ARG_INT, &n_rtt, "Small round trips to time (10000)", "N" },
    { "big-repeats", 'b', 0, G_OPTION_ARG_INT, &n_big, "16 MiB echoes to time (5)", "N" },
    { "pairings", 'p', 0, G_OPTION_ARG_INT, &n_pairings, "Pairings to time (20)", "N" },
    { "agent-repeats", 'a', 0, G_OPTION_ARG_INT, &n_agent,
      "16 MiB snapshots through the agent's tools, each way (3)", "N" },
    { "quick", 'q', 0, G_OPTION_ARG_NONE, &quick, "A few of each, to check the bench runs", NULL },
    { NULL }
  };

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }
  if (quick)
    {
      n_rtt = 200;
      n_warmup = 20;
      n_big = 1;
      n_pairings = 3;
      n_agent = 1;
    }
  /* A figure not measured stays NaN and is printed as null. */
  r.rtt_median_us = r.rtt_p99_us = r.bare_median_us = r.bare_p99_us = NAN;
  r.rtt_block_ms = r.audit_drain_ms = NAN;
  r.big_ms = r.bare_big_ms = r.big_mibs = r.bare_big_mibs = NAN;
  r.pair_median_ms = r.pair_p99_ms = r.pair_min_ms = r.pair_max_ms = NAN;
  r.agent.engine_stall_ms = r.agent.engine_total_ms = NAN;
  r.agent.main_stall_ms = r.agent.main_total_ms = NAN;
  r.agent.worker_stall_ms = r.agent.worker_total_ms = NAN;

  /* 0 skips a measurement (handy under a profiler). */
  n_rtt = MAX (n_rtt, 0);
  n_big = MAX (n_big, 0);
  n_pairings = MAX (n_pairings, 0);
  n_agent = MAX (n_agent, 0);

  /* GLib's standard writer sends debug output to stdout; the table goes there alone. */
  g_log_set_writer_func (log_to_stderr, NULL, NULL);

  measure_rss (&r);
  if (n_rtt > 0)
    {
      g_printerr ("bench: %d small round trips...\n", n_rtt);
      measure_rtt (&r);
    }
  if (n_big > 0)
    {
      g_printerr ("bench: %d echoes of 16 MiB...\n", n_big);
      measure_big (&r);
    }
  if (n_pairings > 0)
    {
      g_printerr ("bench: %d pairings...\n", n_pairings);
      measure_pairing (&r);
    }

  if (n_agent > 0)
    {
      g_printerr ("bench: %d snapshots of 16 MiB through the agent's tools, each way...\n",
                  n_agent);
      chp_bench_agent_measure (n_agent, &r.agent);
    }

  print_results (&r);
  return 0;
}
