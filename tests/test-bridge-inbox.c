/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-bridge-inbox.c: a connection's inbox — large messages from a browser parsed on a worker,
 * still in order with everything else, with the same errors, and the socket paused while the
 * worker is behind. */
#include "config.h"

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "chp-chunk-assembler.h"
#include "chp-frame.h"
#include "chp-limited-input-stream.h"
#include "chp-protocol-error.h"

#include "test-bridge-fixture.h"

/* Large messages: parsed on a worker, in order with everything else */

typedef struct
{
  GPtrArray *order;   /* the calls' tags, as their answers arrived */
  JsonNode  *results[2];
  GError    *errors[2];
} Ordered;

static void
ordered_call_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  Ordered *ordered = g_object_get_data (G_OBJECT (source), "chp-test-ordered");
  guint tag = GPOINTER_TO_UINT (user_data);

  ordered->results[tag] = chp_bridge_call_finish (CHP_BRIDGE (source), result,
                                                  &ordered->errors[tag]);
  g_ptr_array_add (ordered->order, g_strdup (tag == 0 ? "big" : "small"));
}

/* A browser's text of a few MiB: characters of one to four bytes, escapes, nesting. */
static JsonNode *
big_result (gsize bytes)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(GString) text = g_string_new (NULL);
  guint i = 0;

  while (text->len < bytes / 2)
    g_string_append (text, "abc é 😀 \"quoted\" \\ tab\t ");

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "text");
  json_builder_add_string_value (b, text->str);
  json_builder_set_member_name (b, "nodes");
  json_builder_begin_array (b);
  for (gsize len = text->len; len < bytes; len += 40, i++)
    {
      g_autofree char *ref = g_strdup_printf ("e%u", i);

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "ref");
      json_builder_add_string_value (b, ref);
      json_builder_set_member_name (b, "role");
      json_builder_add_string_value (b, "link");
      json_builder_set_member_name (b, "depth");
      json_builder_add_int_value (b, i % 20);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);

  return json_builder_get_root (b);
}

static gboolean
two_answered (gpointer data)
{
  return ((Ordered *) data)->order->len == 2;
}

typedef struct
{
  gint64 last_us;
  gint64 longest_us;
} Stall;

/* Every millisecond, if the loop lets it: the longest gap past that is the longest stall. */
static gboolean
stall_tick_cb (gpointer data)
{
  Stall *stall = data;
  gint64 now = g_get_monotonic_time ();

  if (stall->last_us != 0)
    stall->longest_us = MAX (stall->longest_us, now - stall->last_us - 1000);
  stall->last_us = now;

  return G_SOURCE_CONTINUE;
}

/* A multi-MiB answer (chunked, reassembled and parsed on a worker) followed at once by a small
 * one (which alone would be handled where it arrives): both arrive whole, the big one first. */
static void
test_large_then_small (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(ChpTestClient) client = chp_test_client_new (f->port, NULL);
  ChpBridge *bridge = chp_engine_get_bridge (f->engine);
  g_autoptr(JsonNode) big = big_result (3 * 1024 * 1024);
  g_autoptr(JsonNode) small = json_from_string ("{\"tabs\":[1,2,3]}", NULL);
  g_autofree char *big_text = NULL;
  g_autofree char *small_text = NULL;
  g_autofree char *big_id = NULL;
  g_autofree char *small_id = NULL;
  Ordered ordered = { g_ptr_array_new_with_free_func (g_free) };
  Stall stall = { 0 };
  guint ticker;
  gint64 parse_us;
  JsonObject *o;

  pair (f, client);
  g_assert_true (chp_test_client_connect (client, NULL));
  g_object_set_data (G_OBJECT (bridge), "chp-test-ordered", &ordered);

  chp_bridge_call_async (bridge, client->device_id, "browser.context", NULL, 30000, NULL,
                         ordered_call_cb, GUINT_TO_POINTER (0));
  chp_bridge_call_async (bridge, client->device_id, "browser.tabs", NULL, 30000, NULL,
                         ordered_call_cb, GUINT_TO_POINTER (1));
  o = chp_test_client_next_type (client, "request", CHP_TEST_WAIT_MS);
  g_assert_nonnull (o);
  big_id = g_strdup (json_object_get_string_member (o, "id"));
  o = chp_test_client_next_type (client, "request", CHP_TEST_WAIT_MS);
  g_assert_nonnull (o);
  small_id = g_strdup (json_object_get_string_member (o, "id"));

  big_text = chp_frame_build_response (big_id, big);
  small_text = chp_frame_build_response (small_id, small);
  g_assert_cmpuint (strlen (big_text), >, 3 * 1024 * 1024);
  chp_test_client_send (client, big_text);
  chp_test_client_send (client, small_text);

  ticker = g_timeout_add_full (G_PRIORITY_HIGH, 1, stall_tick_cb, &stall, NULL);
  chp_test_until (two_answered (&ordered));
  g_source_remove (ticker);
  g_assert_cmpstr (ordered.order->pdata[0], ==, "big");
  g_assert_cmpstr (ordered.order->pdata[1], ==, "small");
  g_assert_no_error (ordered.errors[0]);
  g_assert_no_error (ordered.errors[1]);
  g_assert_true (json_node_equal (ordered.results[0], big));
  g_assert_true (json_node_equal (ordered.results[1], small));

  /* For whoever times it (--verbose): the loop's longest stall while the answer arrived, and
   * what parsing it took here, as the engine once did on the main loop. */
  parse_us = g_get_monotonic_time ();
  {
    g_autoptr(ChpFrame) frame = chp_frame_parse (big_text, strlen (big_text), NULL);

    g_assert_nonnull (frame);
  }
  parse_us = g_get_monotonic_time () - parse_us;
  g_test_message ("%" G_GSIZE_FORMAT " bytes: longest main-loop stall %.1f ms; "
                  "parsing them on the main loop %.1f ms",
                  strlen (big_text), stall.longest_us / 1000.0, parse_us / 1000.0);

  g_object_set_data (G_OBJECT (bridge), "chp-test-ordered", NULL);
  g_ptr_array_unref (ordered.order);
  for (guint i = 0; i < 2; i++)
    g_clear_pointer (&ordered.results[i], json_node_unref);
}

/* Sends @text (as chunks of @split_id if that is not %NULL), then a request, and returns the
 * answer to @text: an error frame about @transfer_id, which must come before the request's
 * response. */
static char *
error_then_response (ChpTestClient *client,
                     const char    *text,
                     const char    *split_id,
                     const char    *transfer_id)
{
  static guint n;
  g_autofree char *id = g_strdup_printf ("after-%u", ++n);
  g_autofree char *request = g_strdup_printf ("{\"type\":\"request\",\"id\":\"%s\","
                                              "\"method\":\"engine.info\"}", id);
  JsonObject *o;
  char *answer;

  if (split_id != NULL)
    {
      g_autoptr(GPtrArray) frames = chp_chunk_split (text, strlen (text), split_id);

      for (guint i = 0; i < frames->len; i++)
        soup_websocket_connection_send_text (client->ws, frames->pdata[i]);
    }
  else
    {
      soup_websocket_connection_send_text (client->ws, text);
    }
  soup_websocket_connection_send_text (client->ws, request);

  o = chp_test_client_next_type (client, "error", CHP_TEST_WAIT_MS);
  g_assert_nonnull (o);
  g_assert_cmpstr (json_object_get_string_member_with_default (o, "transferId", NULL), ==,
                   transfer_id);
  answer = g_strdup_printf ("%s: %s", json_object_get_string_member (o, "code"),
                            json_object_get_string_member (o, "message"));

  o = chp_test_client_next_type (client, "response", CHP_TEST_WAIT_MS);
  g_assert_nonnull (o);
  g_assert_cmpstr (json_object_get_string_member (o, "id"), ==, id);

  return answer;
}

/* Replaces the first character of chunk data in @frame with one base64url has not. */
static char *
spoil_chunk (const char *frame)
{
  char *spoiled = g_strdup (frame);
  char *data = strstr (spoiled, "\"data\":\"");

  g_assert_nonnull (data);
  data[strlen ("\"data\":\"")] = '*';
  return spoiled;
}

/* A malformed message gets the same error frame whether it was handled where it arrived or on a
 * worker, and before anything sent after it is answered. */
static void
test_malformed_large (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(ChpTestClient) client = chp_test_client_new (f->port, NULL);
  g_autofree char *small = NULL;
  g_autofree char *large = NULL;
  g_autofree char *chunked = NULL;
  g_autofree char *large_text = NULL;
  g_autofree char *chunked_text = NULL;
  g_autofree char *message = NULL;
  g_autoptr(GPtrArray) frames = NULL;
  g_autofree char *spoiled = NULL;
  g_autofree char *answer = NULL;

  pair (f, client);
  g_assert_true (chp_test_client_connect (client, NULL));

  /* Not JSON: a few bytes, 200 KiB in one frame, 600 KiB in chunks. The padding comes after the
   * fault, so the parser stops at the same place in each. */
  large_text = g_strdup_printf ("{not json%*s", 200 * 1024, "");
  chunked_text = g_strdup_printf ("{not json%*s", 600 * 1024, "");
  small = error_then_response (client, "{not json", NULL, NULL);
  large = error_then_response (client, large_text, NULL, NULL);
  chunked = error_then_response (client, chunked_text, "bad-json", "bad-json");
  g_assert_true (g_str_has_prefix (small, "invalid_params: "));
  g_assert_cmpstr (large, ==, small);
  g_assert_cmpstr (chunked, ==, small);

  /* A chunk that is not base64url, decoded on a worker, and a small one decoded here. */
  message = g_strdup_printf ("{\"type\":\"event\",\"event\":\"x\",\"sequence\":1,\"timestamp\":0,"
                             "\"data\":{\"pad\":\"%0*d\"}}", 600 * 1024, 0);
  frames = chp_chunk_split (message, strlen (message), "spoiled");
  spoiled = spoil_chunk (frames->pdata[0]);
  g_assert_cmpuint (strlen (spoiled), >, 64 * 1024);
  answer = error_then_response (client, spoiled, NULL, "spoiled");
  g_assert_cmpstr (answer, ==,
                   "invalid_params: Chunk 0 of transfer spoiled has the wrong size or encoding");
  g_clear_pointer (&answer, g_free);
  answer = error_then_response (client,
                                "{\"type\":\"chunk\",\"transferId\":\"tiny\",\"index\":0,"
                                "\"total\":1,\"originalBytes\":3,\"data\":\"A*AA\"}",
                                NULL, "tiny");
  g_assert_cmpstr (answer, ==,
                   "invalid_params: Chunk 0 of transfer tiny has the wrong size or encoding");

  /* Over 16 MiB, refused from the first chunk as before. */
  g_clear_pointer (&answer, g_free);
  answer = error_then_response (client,
                                "{\"type\":\"chunk\",\"transferId\":\"huge\",\"index\":0,"
                                "\"total\":65,\"originalBytes\":16777217,\"data\":\"AA\"}",
                                NULL, "huge");
  g_assert_true (g_str_has_prefix (answer, "too_large: "));
}

typedef struct
{
  GPtrArray *names;
  GArray    *sizes;
} Events;

static void
record_event_cb (ChpBridge  *bridge,
                 const char *device_id,
                 const char *name,
                 JsonNode   *data,
                 gint64      sequence,
                 Events     *events)
{
  const char *pad = json_object_get_string_member (json_node_get_object (data), "pad");
  gsize size = strlen (pad);

  g_ptr_array_add (events->names, g_strdup_printf ("%s#%" G_GINT64_FORMAT, name, sequence));
  g_array_append_val (events->sizes, size);
}

/* A browser that sends faster than the worker parses is read no further until the inbox has
 * room again (the socket is paused, not buffered without end); nothing is lost or reordered, and
 * the connection goes on serving. */
static void
test_many_large_in_order (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(ChpTestClient) client = chp_test_client_new (f->port, NULL);
  ChpBridge *bridge = chp_engine_get_bridge (f->engine);
  Events events = { g_ptr_array_new_with_free_func (g_free), g_array_new (FALSE, FALSE,
                                                                         sizeof (gsize)) };
  const guint n = 12;
  gulong handler;

  pair (f, client);
  g_assert_true (chp_test_client_connect (client, NULL));
  handler = g_signal_connect (bridge, "device-event", G_CALLBACK (record_event_cb), &events);

  /* Twelve of 300 KiB (one frame each, 3.5 MiB in all), then a small one. */
  for (guint i = 1; i <= n + 1; i++)
    {
      gsize size = i <= n ? 300 * 1024 + i : 3;
      g_autofree char *event = g_strdup_printf ("{\"type\":\"event\",\"event\":\"%s\","
                                                "\"sequence\":%u,\"timestamp\":0,"
                                                "\"data\":{\"pad\":\"%0*d\"}}",
                                                i <= n ? "x.large" : "x.small", i, (int) size, 0);

      chp_test_client_send (client, event);
    }

  chp_test_until (events.names->len == n + 1);
  for (guint i = 1; i <= n + 1; i++)
    {
      g_autofree char *expected = g_strdup_printf ("%s#%u", i <= n ? "x.large" : "x.small", i);

      g_assert_cmpstr (events.names->pdata[i - 1], ==, expected);
      g_assert_cmpuint (g_array_index (events.sizes, gsize, i - 1), ==,
                        i <= n ? 300 * 1024 + i : 3);
    }

  chp_test_client_send (client,
                        "{\"type\":\"request\",\"id\":\"still\",\"method\":\"engine.info\"}");
  g_assert_nonnull (chp_test_client_next_type (client, "response", CHP_TEST_WAIT_MS));

  g_signal_handler_disconnect (bridge, handler);
  g_ptr_array_unref (events.names);
  g_array_unref (events.sizes);
}

static void
count_cb (GObject  *stream,
          gpointer  user_data)
{
  (*(guint *) user_data)++;
}

static gboolean
count_source_cb (GObject  *stream,
                 gpointer  user_data)
{
  count_cb (stream, user_data);
  return G_SOURCE_CONTINUE;
}

/* How the inbox holds a browser back: a paused limiter reads nothing without blocking and its
 * source does not fire (nor spin) while bytes wait, in the socket or read ahead; resumed, the
 * source fires and every byte is there, in order. */
static void
test_limiter_pause (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketConnection) ours = NULL;
  g_autoptr(GSocketConnection) peer = NULL;
  g_autoptr(GInputStream) limiter = NULL;
  g_autoptr(GSource) source = NULL;
  GPollableInputStream *pollable;
  char buffer[16] = { 0 };
  guint fired = 0;
  int fds[2];

  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM, 0, fds), ==, 0);
  {
    g_autoptr(GSocket) a = g_socket_new_from_fd (fds[0], &error);
    g_autoptr(GSocket) b = g_socket_new_from_fd (fds[1], &error);

    g_assert_no_error (error);
    ours = g_socket_connection_factory_create_connection (a);
    peer = g_socket_connection_factory_create_connection (b);
  }
  limiter = chp_limited_input_stream_new (g_io_stream_get_input_stream (G_IO_STREAM (ours)),
                                          1024);
  pollable = G_POLLABLE_INPUT_STREAM (limiter);

  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (peer)), "abcdef", 6,
                             NULL, NULL, &error);
  g_assert_no_error (error);

  /* One byte read: the rest now waits in the read-ahead buffer. */
  g_assert_cmpint (g_pollable_input_stream_read_nonblocking (pollable, buffer, 1, NULL, &error),
                   ==, 1);
  g_assert_no_error (error);

  chp_limited_input_stream_set_paused (CHP_LIMITED_INPUT_STREAM (limiter), TRUE);
  g_assert_false (g_pollable_input_stream_is_readable (pollable));
  g_assert_cmpint (g_pollable_input_stream_read_nonblocking (pollable, buffer + 1, 5, NULL,
                                                             &error), ==, -1);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK);
  g_clear_error (&error);

  /* More in the socket too; a source made while paused and one attached before stay quiet. */
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (peer)), "ghij", 4,
                             NULL, NULL, &error);
  g_assert_no_error (error);
  source = g_pollable_input_stream_create_source (pollable, NULL);
  g_source_set_callback (source, G_SOURCE_FUNC (count_source_cb), &fired, NULL);
  g_source_attach (source, NULL);
  for (guint i = 0; i < 20; i++)
    g_main_context_iteration (NULL, FALSE);
  g_assert_cmpuint (fired, ==, 0);

  chp_limited_input_stream_set_paused (CHP_LIMITED_INPUT_STREAM (limiter), FALSE);
  chp_test_until (fired > 0);
  g_assert_true (g_pollable_input_stream_is_readable (pollable));
  {
    gsize got = 1;

    while (got < 10)
      {
        gssize n = g_pollable_input_stream_read_nonblocking (pollable, buffer + got, 10 - got,
                                                             NULL, &error);

        if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
          {
            g_clear_error (&error);
            chp_test_until (g_pollable_input_stream_is_readable (pollable));
            continue;
          }
        g_assert_no_error (error);
        g_assert_cmpint (n, >, 0);
        got += n;
      }
  }
  g_assert_cmpstr (buffer, ==, "abcdefghij");

  g_source_destroy (source);
  g_io_stream_close (G_IO_STREAM (peer), NULL, NULL);
  g_io_stream_close (G_IO_STREAM (ours), NULL, NULL);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/chaperone/bridge/inbox/large-then-small", test_large_then_small);
  ADD ("/chaperone/bridge/inbox/malformed-large", test_malformed_large);
  ADD ("/chaperone/bridge/inbox/many-large-in-order", test_many_large_in_order);
  g_test_add_func ("/chaperone/bridge/inbox/limiter-pause", test_limiter_pause);
#undef ADD

  return g_test_run ();
}
