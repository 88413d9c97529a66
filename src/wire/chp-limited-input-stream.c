/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-limited-input-stream.c: counts what the socket delivers and turns the byte past the budget
 * into G_IO_ERROR_MESSAGE_TOO_LARGE, which libsoup treats as a dead connection. The owner moves
 * the budget on (after the handshake, after each whole message), so a peer can make us hold at
 * most one budget's worth of bytes at a time (plus one read-ahead buffer).
 *
 * libsoup reads a WebSocket 1 KiB at a time, one recv() each; the stream reads up to
 * READ_AHEAD_SIZE from the socket at once and serves those small reads from memory. What counts
 * against the budget is what is handed to the reader, never what was read ahead: a byte sitting
 * in the buffer when the owner moves the budget on belongs to the next allowance, as it would
 * had it still been in the kernel's buffer.
 *
 * The owner may also pause the stream while it is behind with what it was already handed: then a
 * reader that does not block is told to wait, and the stream's sources stop watching the socket,
 * so libsoup stops reading and TCP holds the peer back, as it did when the owner handled each
 * message before libsoup read the next. */
#include "config.h"

#include "chp-limited-input-stream.h"

#include <string.h>

#include "chp-request-head.h"

/* Enough for libsoup's 1 KiB reads to cost one syscall per 64 of them; small enough to keep per
 * connection. A read at least this large bypasses the buffer. */
#define READ_AHEAD_SIZE (64 * 1024)

struct _ChpLimitedInputStream
{
  GFilterInputStream parent_instance;

  guint64 budget;
  guint64 consumed;

  /* Read ahead from the base stream and not yet handed out: buffer[start, end). Allocated on
   * the first read that needs it. */
  guint8 *buffer;
  gsize   start;
  gsize   end;

  gboolean paused;
  GSList  *sources;   /* the ReadAheadSources alive, to stop and wake when paused and resumed */

  /* With chp_limited_input_stream_check_request_head(): the request's head, checked as it is
   * handed out, until its end. */
  ChpRequestHead *head;
};

static void pollable_iface_init (GPollableInputStreamInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (ChpLimitedInputStream, chp_limited_input_stream,
                               G_TYPE_FILTER_INPUT_STREAM,
                               G_IMPLEMENT_INTERFACE (G_TYPE_POLLABLE_INPUT_STREAM,
                                                      pollable_iface_init))

static gboolean
account (ChpLimitedInputStream  *self,
         gssize                  n,
         GError                **error)
{
  if (n <= 0)
    return TRUE;

  self->consumed += (guint64) n;
  if (self->consumed > self->budget)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                   "The peer sent %" G_GUINT64_FORMAT " bytes where %" G_GUINT64_FORMAT
                   " were allowed", self->consumed, self->budget);
      return FALSE;
    }

  return TRUE;
}

/* The @n bytes at @data are about to be handed out: while the request's head is being read, its
 * lines are checked first, and a refused one is never handed to libsoup. */
static gboolean
check_head (ChpLimitedInputStream  *self,
            const void             *data,
            gssize                  n,
            GError                **error)
{
  if (self->head == NULL || n <= 0)
    return TRUE;
  if (!chp_request_head_feed (self->head, data, (gsize) n, error))
    return FALSE;
  if (chp_request_head_is_done (self->head))
    g_clear_pointer (&self->head, chp_request_head_free);
  return TRUE;
}

static GInputStream *
base_stream (ChpLimitedInputStream *self)
{
  return g_filter_input_stream_get_base_stream (G_FILTER_INPUT_STREAM (self));
}

static gsize
buffered (ChpLimitedInputStream *self)
{
  return self->end - self->start;
}

/* Hands out up to @count buffered bytes. */
static gsize
take (ChpLimitedInputStream *self,
      void                  *out,
      gsize                  count)
{
  gsize n = MIN (count, buffered (self));

  if (out != NULL)
    memcpy (out, self->buffer + self->start, n);
  self->start += n;
  if (self->start == self->end)
    self->start = self->end = 0;

  return n;
}

/* One read of the base stream into the empty buffer: blocking or not, it returns what the
 * socket has (at least one byte when blocking), never waits for the buffer to fill. */
static gssize
fill (ChpLimitedInputStream  *self,
      gboolean                blocking,
      GCancellable           *cancellable,
      GError                **error)
{
  GInputStream *base = base_stream (self);
  gssize n;

  g_assert (buffered (self) == 0);

  /* close() freed the buffer; the base would refuse too, but say so without reallocating. */
  if (g_input_stream_is_closed (G_INPUT_STREAM (self)))
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CLOSED, "Stream is already closed");
      return -1;
    }

  if (self->buffer == NULL)
    self->buffer = g_malloc (READ_AHEAD_SIZE);

  if (blocking)
    n = g_input_stream_read (base, self->buffer, READ_AHEAD_SIZE, cancellable, error);
  else
    n = g_pollable_input_stream_read_nonblocking (G_POLLABLE_INPUT_STREAM (base), self->buffer,
                                                  READ_AHEAD_SIZE, cancellable, error);
  if (n > 0)
    {
      self->start = 0;
      self->end = (gsize) n;
    }

  return n;
}

/* The one read path: from the buffer if it holds anything, else straight into @out for a big
 * read, else through the buffer. Returns what the base returned for EOF (0) and errors. */
static gssize
read_internal (ChpLimitedInputStream  *self,
               void                   *out,
               gsize                   count,
               gboolean                blocking,
               GCancellable           *cancellable,
               GError                **error)
{
  gssize n;

  if (count == 0)
    return 0;

  /* As if nothing had arrived: what did waits in the buffer or the socket for the resume. */
  if (self->paused && !blocking)
    {
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK,
                           "The reader is paused");
      return -1;
    }

  if (buffered (self) == 0)
    {
      if (count >= READ_AHEAD_SIZE && out != NULL)
        {
          GInputStream *base = base_stream (self);

          if (blocking)
            n = g_input_stream_read (base, out, count, cancellable, error);
          else
            n = g_pollable_input_stream_read_nonblocking (G_POLLABLE_INPUT_STREAM (base), out,
                                                          count, cancellable, error);
          return account (self, n, error) && check_head (self, out, n, error) ? n : -1;
        }

      n = fill (self, blocking, cancellable, error);
      if (n <= 0)
        return n;
    }

  if (!check_head (self, self->buffer + self->start, (gssize) MIN (count, buffered (self)), error))
    return -1;
  n = (gssize) take (self, out, count);
  return account (self, n, error) ? n : -1;
}

static gssize
chp_limited_input_stream_read (GInputStream  *stream,
                               void          *buffer,
                               gsize          count,
                               GCancellable  *cancellable,
                               GError       **error)
{
  return read_internal (CHP_LIMITED_INPUT_STREAM (stream), buffer, count, TRUE, cancellable,
                        error);
}

/* GFilterInputStream would skip on the base stream, past both the buffer and the budget. */
static gssize
chp_limited_input_stream_skip (GInputStream  *stream,
                               gsize          count,
                               GCancellable  *cancellable,
                               GError       **error)
{
  return read_internal (CHP_LIMITED_INPUT_STREAM (stream), NULL, count, TRUE, cancellable,
                        error);
}

static gboolean
chp_limited_input_stream_close (GInputStream  *stream,
                                GCancellable  *cancellable,
                                GError       **error)
{
  ChpLimitedInputStream *self = CHP_LIMITED_INPUT_STREAM (stream);

  g_clear_pointer (&self->buffer, g_free);
  self->start = self->end = 0;

  return G_INPUT_STREAM_CLASS (chp_limited_input_stream_parent_class)->close_fn (stream,
                                                                                 cancellable,
                                                                                 error);
}

static gboolean
chp_limited_input_stream_can_poll (GPollableInputStream *stream)
{
  GInputStream *base = base_stream (CHP_LIMITED_INPUT_STREAM (stream));

  return G_IS_POLLABLE_INPUT_STREAM (base) &&
         g_pollable_input_stream_can_poll (G_POLLABLE_INPUT_STREAM (base));
}

static gboolean
chp_limited_input_stream_is_readable (GPollableInputStream *stream)
{
  ChpLimitedInputStream *self = CHP_LIMITED_INPUT_STREAM (stream);

  return !self->paused &&
         (buffered (self) > 0 ||
          g_pollable_input_stream_is_readable (G_POLLABLE_INPUT_STREAM (base_stream (self))));
}

/* The stream's source: ready while the buffer holds bytes, else when the socket's source (a
 * child) is. A one-shot timeout child, as GConverterInputStream uses, would not do: libsoup may
 * keep its source attached, and a source made while the buffer held bytes would then fire on
 * every iteration after it drained, and one made while it was empty would sleep on a socket
 * with nothing more to say while the buffer still held a frame. While the stream is paused the
 * source has no socket child and is never ready; the resume gives it one back and wakes it. */
typedef struct
{
  GSource                source;
  ChpLimitedInputStream *stream;
  GSource               *socket_source;  /* the child watching the socket; NULL while paused */
} ReadAheadSource;

static gboolean
read_ahead_source_ready (GSource *source)
{
  ChpLimitedInputStream *stream = ((ReadAheadSource *) source)->stream;

  return !stream->paused && buffered (stream) > 0;
}

static gboolean
read_ahead_source_prepare (GSource *source,
                           int     *timeout)
{
  *timeout = -1;
  return read_ahead_source_ready (source);
}

static gboolean
read_ahead_source_check (GSource *source)
{
  return read_ahead_source_ready (source);
}

static gboolean
read_ahead_source_dispatch (GSource     *source,
                            GSourceFunc  callback,
                            gpointer     user_data)
{
  /* g_source_set_callback() stores a GSourceFunc; a pollable source's is a GPollableSourceFunc
   * (GLib's own pollable sources do the same). void (*) (void) tells the compiler we know. */
  GPollableSourceFunc func = (GPollableSourceFunc) (void (*) (void)) callback;

  /* The wake-up of a resume (chp_limited_input_stream_set_paused()) is for one dispatch. */
  g_source_set_ready_time (source, -1);

  if (func == NULL)
    {
      g_warning ("ChpLimitedInputStream source dispatched without a callback; "
                 "call g_source_set_callback()");
      return G_SOURCE_REMOVE;
    }

  return func (G_OBJECT (((ReadAheadSource *) source)->stream), user_data);
}

static void
read_ahead_source_finalize (GSource *source)
{
  ReadAheadSource *self = (ReadAheadSource *) source;

  self->stream->sources = g_slist_remove (self->stream->sources, self);
  g_clear_object (&self->stream);
}

/* For g_source_set_closure() and g_source_set_dummy_callback(), which a stream wrapping this
 * one calls on this source when it makes it a child of its own (libsoup's filter stream does). */
static gboolean
read_ahead_source_closure_callback (GObject  *stream,
                                    gpointer  data)
{
  GClosure *closure = data;
  GValue param = G_VALUE_INIT;
  GValue result = G_VALUE_INIT;
  gboolean ret;

  g_value_init (&result, G_TYPE_BOOLEAN);
  g_value_init (&param, G_TYPE_OBJECT);
  g_value_set_object (&param, stream);
  g_closure_invoke (closure, &result, 1, &param, NULL);
  ret = g_value_get_boolean (&result);
  g_value_unset (&result);
  g_value_unset (&param);

  return ret;
}

static GSourceFuncs read_ahead_source_funcs = {
  read_ahead_source_prepare,
  read_ahead_source_check,
  read_ahead_source_dispatch,
  read_ahead_source_finalize,
  (GSourceFunc) (void (*) (void)) read_ahead_source_closure_callback,
  NULL,
};

static gboolean
dummy_cb (gpointer user_data)
{
  return G_SOURCE_CONTINUE;
}

/* Children only wake the parent, whose callback sees this stream, not the socket's. */
static void
watch_socket (ReadAheadSource *source)
{
  g_autoptr(GSource) base_source =
    g_pollable_input_stream_create_source (G_POLLABLE_INPUT_STREAM (base_stream (source->stream)),
                                           NULL);

  g_source_set_callback (base_source, dummy_cb, NULL, NULL);
  g_source_add_child_source ((GSource *) source, base_source);
  source->socket_source = base_source;
}

static GSource *
chp_limited_input_stream_create_source (GPollableInputStream *stream,
                                        GCancellable         *cancellable)
{
  ChpLimitedInputStream *self = CHP_LIMITED_INPUT_STREAM (stream);
  GSource *source = g_source_new (&read_ahead_source_funcs, sizeof (ReadAheadSource));

  g_source_set_static_name (source, "ChpLimitedInputStream");
  ((ReadAheadSource *) source)->stream = g_object_ref (self);
  self->sources = g_slist_prepend (self->sources, source);

  if (!self->paused)
    watch_socket ((ReadAheadSource *) source);
  if (cancellable != NULL)
    {
      g_autoptr(GSource) cancellable_source = g_cancellable_source_new (cancellable);

      g_source_set_callback (cancellable_source, dummy_cb, NULL, NULL);
      g_source_add_child_source (source, cancellable_source);
    }

  return source;
}

static gssize
chp_limited_input_stream_read_nonblocking (GPollableInputStream  *stream,
                                           void                  *buffer,
                                           gsize                  count,
                                           GError               **error)
{
  return read_internal (CHP_LIMITED_INPUT_STREAM (stream), buffer, count, FALSE, NULL, error);
}

static void
pollable_iface_init (GPollableInputStreamInterface *iface)
{
  iface->can_poll = chp_limited_input_stream_can_poll;
  iface->is_readable = chp_limited_input_stream_is_readable;
  iface->create_source = chp_limited_input_stream_create_source;
  iface->read_nonblocking = chp_limited_input_stream_read_nonblocking;
}

static void
chp_limited_input_stream_finalize (GObject *object)
{
  ChpLimitedInputStream *self = CHP_LIMITED_INPUT_STREAM (object);

  g_free (self->buffer);
  g_clear_pointer (&self->head, chp_request_head_free);

  G_OBJECT_CLASS (chp_limited_input_stream_parent_class)->finalize (object);
}

static void
chp_limited_input_stream_class_init (ChpLimitedInputStreamClass *klass)
{
  GInputStreamClass *stream_class = G_INPUT_STREAM_CLASS (klass);

  G_OBJECT_CLASS (klass)->finalize = chp_limited_input_stream_finalize;
  stream_class->read_fn = chp_limited_input_stream_read;
  stream_class->skip = chp_limited_input_stream_skip;
  stream_class->close_fn = chp_limited_input_stream_close;
}

static void
chp_limited_input_stream_init (ChpLimitedInputStream *self)
{
}

GInputStream *
chp_limited_input_stream_new (GInputStream *base,
                              guint64       budget)
{
  ChpLimitedInputStream *self;

  g_return_val_if_fail (G_IS_INPUT_STREAM (base), NULL);

  self = g_object_new (CHP_TYPE_LIMITED_INPUT_STREAM, "base-stream", base, NULL);
  self->budget = budget;

  return G_INPUT_STREAM (self);
}

/* Starts a new allowance of @budget bytes from now. */
void
chp_limited_input_stream_set_budget (ChpLimitedInputStream *self,
                                     guint64                budget)
{
  g_return_if_fail (CHP_IS_LIMITED_INPUT_STREAM (self));

  self->budget = budget;
  self->consumed = 0;
}

/**
 * chp_limited_input_stream_set_paused:
 * @paused: %TRUE to stop reading, %FALSE to go on
 *
 * While paused, a read that does not block fails with %G_IO_ERROR_WOULD_BLOCK and no source of
 * this stream fires, so a pollable reader (libsoup) waits without spinning; bytes keep arriving
 * only into the socket's buffer, until TCP makes the peer wait. Resuming wakes every source, and
 * the reader finds what came meanwhile. Blocking reads are not paused. Owner's thread only.
 */
void
chp_limited_input_stream_set_paused (ChpLimitedInputStream *self,
                                     gboolean               paused)
{
  g_return_if_fail (CHP_IS_LIMITED_INPUT_STREAM (self));

  if (self->paused == !!paused)
    return;
  self->paused = !!paused;

  for (GSList *l = self->sources; l != NULL; l = l->next)
    {
      ReadAheadSource *source = l->data;

      if (g_source_is_destroyed ((GSource *) source))
        continue;

      if (paused)
        {
          if (source->socket_source != NULL)
            g_source_remove_child_source ((GSource *) source,
                                          g_steal_pointer (&source->socket_source));
        }
      else
        {
          if (source->socket_source == NULL)
            watch_socket (source);
          g_source_set_ready_time ((GSource *) source, 0);
        }
    }
}

gboolean
chp_limited_input_stream_get_paused (ChpLimitedInputStream *self)
{
  g_return_val_if_fail (CHP_IS_LIMITED_INPUT_STREAM (self), FALSE);

  return self->paused;
}

/**
 * chp_limited_input_stream_check_request_head:
 * @self: a stream nothing has been read from yet
 *
 * Checks the HTTP request's head as it is read (chp-request-head.c): a line libsoup would
 * mishandle fails the read with G_IO_ERROR_INVALID_DATA before libsoup has it, and libsoup drops
 * the connection. The bytes after the head are not looked at: the first request is the only one
 * on a bridge connection (the bridge hands libsoup each connection and never has it listen, and
 * libsoup keeps a connection for another request only for a server that listens; an upgrade
 * turns it into a WebSocket).
 */
void
chp_limited_input_stream_check_request_head (ChpLimitedInputStream *self)
{
  g_return_if_fail (CHP_IS_LIMITED_INPUT_STREAM (self));
  g_return_if_fail (self->consumed == 0 && self->head == NULL);

  self->head = chp_request_head_new ();
}
