/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-limited-stream.c: the byte budget under libsoup counts what the reader is handed, not
 * what the stream read ahead, and the read-ahead never stalls or spins a pollable reader. */
#include "config.h"

#include <string.h>
#include <sys/socket.h>

#include "chp-limited-input-stream.h"
#include "chp-limited-io-stream.h"

typedef struct
{
  GSocketConnection *ours;   /* read through the limiter */
  GSocketConnection *peer;   /* writes */
  GInputStream      *limiter;
} Pair;

static GSocketConnection *
connection_for_fd (int fd)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) socket = g_socket_new_from_fd (fd, &error);

  g_assert_no_error (error);
  return g_socket_connection_factory_create_connection (socket);
}

static void
pair_setup (Pair          *pair,
            gconstpointer  data)
{
  int fds[2];

  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM, 0, fds), ==, 0);
  pair->ours = connection_for_fd (fds[0]);
  pair->peer = connection_for_fd (fds[1]);
  pair->limiter = chp_limited_input_stream_new (
    g_io_stream_get_input_stream (G_IO_STREAM (pair->ours)), GPOINTER_TO_UINT (data));
}

static void
pair_teardown (Pair          *pair,
               gconstpointer  data)
{
  g_assert_finalize_object (pair->limiter);
  g_io_stream_close (G_IO_STREAM (pair->peer), NULL, NULL);
  g_io_stream_close (G_IO_STREAM (pair->ours), NULL, NULL);
  g_assert_finalize_object (pair->peer);
  g_assert_finalize_object (pair->ours);
}

static void
peer_write (Pair  *pair,
            gsize  len)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *data = g_malloc (len);
  gsize written = 0;

  for (gsize i = 0; i < len; i++)
    data[i] = 'a' + i % 26;
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (pair->peer)), data, len,
                             &written, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (written, ==, len);
}

static gsize
socket_pending (Pair *pair)
{
  gssize n = g_socket_get_available_bytes (g_socket_connection_get_socket (pair->ours));

  g_assert_cmpint (n, >=, 0);
  return (gsize) n;
}

/* As libsoup reads: 1 KiB, without blocking. */
static gssize
read_kib (Pair    *pair,
          GError **error)
{
  char buffer[1024];

  return g_pollable_input_stream_read_nonblocking (G_POLLABLE_INPUT_STREAM (pair->limiter),
                                                   buffer, sizeof buffer, NULL, error);
}

static void
test_budget_counts_handed_bytes (Pair          *pair,
                                 gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  peer_write (pair, 10 * 1024);

  /* The first small read takes everything off the socket... */
  g_assert_cmpint (read_kib (pair, &error), ==, 1024);
  g_assert_no_error (error);
  g_assert_cmpuint (socket_pending (pair), ==, 0);

  /* ...yet only what was handed out counts: four of the 4 KiB budget's reads pass. */
  for (int i = 1; i < 4; i++)
    {
      g_assert_cmpint (read_kib (pair, &error), ==, 1024);
      g_assert_no_error (error);
    }
  g_assert_cmpint (read_kib (pair, &error), ==, -1);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE);
}

static void
test_buffered_bytes_belong_to_next_budget (Pair          *pair,
                                           gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  char buffer[4096];

  peer_write (pair, 6 * 1024);

  /* Exactly the budget passes. */
  for (int i = 0; i < 4; i++)
    g_assert_cmpint (read_kib (pair, &error), ==, 1024);
  g_assert_no_error (error);

  /* A whole message arrived: what is still buffered counts against the next allowance, and the
   * next allowance only. */
  chp_limited_input_stream_set_budget (CHP_LIMITED_INPUT_STREAM (pair->limiter), 1024);
  g_assert_cmpint (read_kib (pair, &error), ==, 1024);
  g_assert_no_error (error);
  g_assert_cmpint (g_pollable_input_stream_read_nonblocking (
                     G_POLLABLE_INPUT_STREAM (pair->limiter), buffer, 1, NULL, &error), ==, -1);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE);
  g_clear_error (&error);

  /* Skipping is reading: it counts too, and skips the buffered bytes, not the socket's. */
  chp_limited_input_stream_set_budget (CHP_LIMITED_INPUT_STREAM (pair->limiter), 1024);
  peer_write (pair, 2048);
  g_assert_cmpint (g_input_stream_skip (pair->limiter, 4096, NULL, &error), ==, 1023);
  g_assert_no_error (error);
  g_assert_cmpint (g_input_stream_skip (pair->limiter, 1, NULL, &error), ==, 1);
  g_assert_no_error (error);
  g_assert_cmpint (g_input_stream_skip (pair->limiter, 1, NULL, &error), ==, -1);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE);
}

static void
test_bytes_in_order (Pair          *pair,
                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  /* Below a socket pair's buffer: the peer writes it all before anything is read. */
  const gsize len = 120000;
  g_autofree char *in = g_malloc (len + 1);
  gsize total = 0;

  peer_write (pair, len);
  g_io_stream_close (G_IO_STREAM (pair->peer), NULL, NULL);

  /* Small, odd-sized and bigger-than-the-buffer reads, blocking, all the way to EOF. */
  for (guint i = 0;; i++)
    {
      gsize want = (i % 3 == 0) ? 1000 : (i % 3 == 1) ? 7 : 100 * 1024;
      gssize n = g_input_stream_read (pair->limiter, in + total,
                                      MIN (want, len - total + 1), NULL, &error);

      g_assert_no_error (error);
      if (n == 0)
        break;
      total += n;
    }
  g_assert_cmpuint (total, ==, len);
  for (gsize i = 0; i < total; i++)
    if (in[i] != (char) ('a' + i % 26))
      g_assert_cmpuint (i, ==, G_MAXSIZE);

  /* EOF stays EOF, nonblocking too. */
  g_assert_cmpint (read_kib (pair, &error), ==, 0);
  g_assert_no_error (error);
}

typedef struct
{
  Pair  *pair;
  guint  fired;
  gsize  got;
  gboolean eof;
} Reader;

/* Reads once, as little as libsoup does, and stays attached as libsoup's source may. */
static gboolean
reader_cb (GObject  *stream,
           gpointer  user_data)
{
  Reader *reader = user_data;
  g_autoptr(GError) error = NULL;
  gssize n;

  g_assert_true (stream == G_OBJECT (reader->pair->limiter));
  reader->fired++;
  n = read_kib (reader->pair, &error);
  if (n > 0)
    reader->got += n;
  else if (n == 0)
    reader->eof = TRUE;
  else
    g_assert_error (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK);

  return reader->eof ? G_SOURCE_REMOVE : G_SOURCE_CONTINUE;
}

static void
drain_context (GMainContext *context)
{
  /* Bounded: a source that spins would show as a reader that fired more than it read. */
  for (int i = 0; i < 100 && g_main_context_iteration (context, FALSE); i++)
    ;
}

static void
test_source_fires_while_buffered (Pair          *pair,
                                  gconstpointer  data)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GSource) source = NULL;
  g_autoptr(GError) error = NULL;
  Reader reader = { pair, 0, 0, FALSE };

  /* The source is made while the buffer holds bytes and the socket holds none. */
  peer_write (pair, 4096);
  g_assert_cmpint (read_kib (pair, &error), ==, 1024);
  g_assert_cmpuint (socket_pending (pair), ==, 0);
  g_assert_true (g_pollable_input_stream_is_readable (G_POLLABLE_INPUT_STREAM (pair->limiter)));

  source = g_pollable_input_stream_create_source (G_POLLABLE_INPUT_STREAM (pair->limiter), NULL);
  g_source_set_callback (source, (GSourceFunc) (void (*) (void)) reader_cb, &reader, NULL);
  g_source_attach (source, context);

  /* It fires for each of the three buffered KiB, then goes quiet: no spinning once drained. */
  drain_context (context);
  g_assert_cmpuint (reader.got, ==, 3072);
  g_assert_cmpuint (reader.fired, ==, 3);
  g_assert_false (g_pollable_input_stream_is_readable (G_POLLABLE_INPUT_STREAM (pair->limiter)));

  /* The socket wakes it again; one read takes it all, and the rest comes from the buffer. */
  peer_write (pair, 2048);
  drain_context (context);
  g_assert_cmpuint (reader.got, ==, 5120);
  g_assert_cmpuint (reader.fired, ==, 5);

  /* EOF wakes it too. */
  g_io_stream_close (G_IO_STREAM (pair->peer), NULL, NULL);
  drain_context (context);
  g_assert_true (reader.eof);
  g_assert_cmpuint (reader.fired, ==, 6);

  g_source_destroy (source);
}

static void
test_source_as_a_child (Pair          *pair,
                        gconstpointer  data)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GSource) child = NULL;
  g_autoptr(GSource) parent = NULL;
  g_autoptr(GError) error = NULL;
  Reader reader = { pair, 0, 0, FALSE };

  /* As libsoup's filter stream wraps it: a dummy callback (a closure) on the child. */
  peer_write (pair, 2048);
  g_assert_cmpint (read_kib (pair, &error), ==, 1024);
  child = g_pollable_input_stream_create_source (G_POLLABLE_INPUT_STREAM (pair->limiter), NULL);
  parent = g_pollable_source_new (G_OBJECT (pair->limiter));
  g_source_set_dummy_callback (child);
  g_source_add_child_source (parent, child);
  g_source_set_callback (parent, (GSourceFunc) (void (*) (void)) reader_cb, &reader, NULL);
  g_source_attach (parent, context);

  drain_context (context);
  g_assert_cmpuint (reader.got, ==, 1024);
  g_assert_cmpuint (reader.fired, ==, 1);

  g_source_destroy (parent);
}

static void
test_cancel_and_close (Pair          *pair,
                       gconstpointer  data)
{
  g_autoptr(GMainContext) context = g_main_context_new ();
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GSource) source = NULL;
  g_autoptr(GError) error = NULL;
  Reader reader = { pair, 0, 0, FALSE };
  char buffer[16];

  /* Nothing to read: the source sleeps until cancelled. */
  source = g_pollable_input_stream_create_source (G_POLLABLE_INPUT_STREAM (pair->limiter),
                                                  cancellable);
  g_source_set_callback (source, (GSourceFunc) (void (*) (void)) reader_cb, &reader, NULL);
  g_source_attach (source, context);
  g_assert_false (g_main_context_iteration (context, FALSE));
  g_assert_cmpuint (reader.fired, ==, 0);
  g_cancellable_cancel (cancellable);
  g_assert_true (g_main_context_iteration (context, FALSE));
  g_assert_cmpuint (reader.fired, ==, 1);
  g_source_destroy (source);

  g_assert_cmpint (g_input_stream_read (pair->limiter, buffer, sizeof buffer, cancellable,
                                        &error), ==, -1);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);

  /* Bytes left in the buffer at close are dropped with it; reads then fail. */
  peer_write (pair, 100);
  g_assert_cmpint (g_input_stream_read (pair->limiter, buffer, 10, NULL, &error), ==, 10);
  g_assert_true (g_input_stream_close (pair->limiter, NULL, &error));
  g_assert_no_error (error);
  g_assert_false (g_pollable_input_stream_is_readable (G_POLLABLE_INPUT_STREAM (pair->limiter)));
  g_assert_cmpint (read_kib (pair, &error), ==, -1);
  g_assert_nonnull (error);
}

/* The io stream closes the socket itself, so that a peer waiting for the TCP close sees it. */
static void
test_io_stream_closes_socket (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GIOStream) stream = NULL;
  GSocketConnection *ours, *peer;
  char buffer[16];
  int fds[2];

  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM, 0, fds), ==, 0);
  ours = connection_for_fd (fds[0]);
  peer = connection_for_fd (fds[1]);
  stream = chp_limited_io_stream_new (G_IO_STREAM (ours), 1024);
  g_object_unref (ours);

  g_assert_true (CHP_IS_LIMITED_INPUT_STREAM (g_io_stream_get_input_stream (stream)));
  g_assert_true (g_io_stream_close (stream, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_input_stream_read (g_io_stream_get_input_stream (G_IO_STREAM (peer)),
                                        buffer, sizeof buffer, NULL, &error), ==, 0);
  g_assert_no_error (error);

  g_assert_finalize_object (g_steal_pointer (&stream));
  g_io_stream_close (G_IO_STREAM (peer), NULL, NULL);
  g_assert_finalize_object (peer);
}

/* With the request's head checked (the bridge's sockets): a line libsoup would mishandle fails
 * the read that would hand it over, and the bytes are never handed out; after a head that
 * passed, nothing more is looked at. */
static void
test_request_head_refused (Pair          *pair,
                           gconstpointer  data)
{
  const char *bad = "POST /pairing HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length:-5\r\n\r\nhello";
  g_autoptr(GError) error = NULL;
  char buffer[1024];
  gssize n;

  chp_limited_input_stream_check_request_head (CHP_LIMITED_INPUT_STREAM (pair->limiter));
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (pair->peer)), bad,
                             strlen (bad), NULL, NULL, &error);
  g_assert_no_error (error);
  n = g_input_stream_read (pair->limiter, buffer, sizeof buffer, NULL, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_cmpint (n, ==, -1);
}

static void
test_request_head_passed (Pair          *pair,
                          gconstpointer  data)
{
  const char *good = "GET /extension HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nContent-Length: -5\r\n\r\n";
  g_autoptr(GError) error = NULL;
  char buffer[1024];
  gsize got = 0;

  chp_limited_input_stream_check_request_head (CHP_LIMITED_INPUT_STREAM (pair->limiter));
  g_output_stream_write_all (g_io_stream_get_output_stream (G_IO_STREAM (pair->peer)), good,
                             strlen (good), NULL, NULL, &error);
  g_assert_no_error (error);
  /* In small reads, as libsoup's: all of it, the bytes after the head unchecked. */
  while (got < strlen (good))
    {
      gssize n = g_input_stream_read (pair->limiter, buffer + got, 7, NULL, &error);

      g_assert_no_error (error);
      g_assert_cmpint (n, >, 0);
      got += (gsize) n;
    }
  g_assert_cmpmem (buffer, got, good, strlen (good));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, budget, func) \
  g_test_add ("/chaperone/limited-stream/" path, Pair, GUINT_TO_POINTER (budget), pair_setup, \
              func, pair_teardown)

  ADD ("budget-counts-handed-bytes", 4096, test_budget_counts_handed_bytes);
  ADD ("buffered-bytes-belong-to-next-budget", 4096, test_buffered_bytes_belong_to_next_budget);
  ADD ("bytes-in-order", 1024 * 1024, test_bytes_in_order);
  ADD ("source-fires-while-buffered", 1024 * 1024, test_source_fires_while_buffered);
  ADD ("source-as-a-child", 1024 * 1024, test_source_as_a_child);
  ADD ("cancel-and-close", 1024 * 1024, test_cancel_and_close);
  ADD ("request-head-refused", 4096, test_request_head_refused);
  ADD ("request-head-passed", 4096, test_request_head_passed);
  g_test_add_func ("/chaperone/limited-stream/io-stream-closes-socket",
                   test_io_stream_closes_socket);

  return g_test_run ();
}
