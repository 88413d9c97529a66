/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-limited-io-stream.c: GSimpleIOStream would close the two streams but leave the socket
 * open, and a peer waiting for the TCP close after a WebSocket close would wait in vain. */
#include "config.h"

#include "chp-limited-io-stream.h"

#include "chp-limited-input-stream.h"

struct _ChpLimitedIOStream
{
  GIOStream parent_instance;

  GIOStream *base;
  GInputStream *input;
};

G_DEFINE_FINAL_TYPE (ChpLimitedIOStream, chp_limited_io_stream, G_TYPE_IO_STREAM)

static GInputStream *
get_input_stream (GIOStream *stream)
{
  return CHP_LIMITED_IO_STREAM (stream)->input;
}

static GOutputStream *
get_output_stream (GIOStream *stream)
{
  return g_io_stream_get_output_stream (CHP_LIMITED_IO_STREAM (stream)->base);
}

static gboolean
close_fn (GIOStream     *stream,
          GCancellable  *cancellable,
          GError       **error)
{
  return g_io_stream_close (CHP_LIMITED_IO_STREAM (stream)->base, cancellable, error);
}

static void
base_closed_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;

  if (g_io_stream_close_finish (G_IO_STREAM (source), result, &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
close_async (GIOStream           *stream,
             int                  io_priority,
             GCancellable        *cancellable,
             GAsyncReadyCallback  callback,
             gpointer             user_data)
{
  GTask *task = g_task_new (stream, cancellable, callback, user_data);

  g_io_stream_close_async (CHP_LIMITED_IO_STREAM (stream)->base, io_priority, cancellable,
                           base_closed_cb, task);
}

static gboolean
close_finish (GIOStream     *stream,
              GAsyncResult  *result,
              GError       **error)
{
  return g_task_propagate_boolean (G_TASK (result), error);
}

static void
chp_limited_io_stream_dispose (GObject *object)
{
  ChpLimitedIOStream *self = CHP_LIMITED_IO_STREAM (object);

  /* GIOStream's dispose closes the stream through close_fn: keep base until then. */
  G_OBJECT_CLASS (chp_limited_io_stream_parent_class)->dispose (object);

  g_clear_object (&self->input);
  g_clear_object (&self->base);
}

static void
chp_limited_io_stream_class_init (ChpLimitedIOStreamClass *klass)
{
  GIOStreamClass *stream_class = G_IO_STREAM_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = chp_limited_io_stream_dispose;
  stream_class->get_input_stream = get_input_stream;
  stream_class->get_output_stream = get_output_stream;
  stream_class->close_fn = close_fn;
  stream_class->close_async = close_async;
  stream_class->close_finish = close_finish;
}

static void
chp_limited_io_stream_init (ChpLimitedIOStream *self)
{
}

GIOStream *
chp_limited_io_stream_new (GIOStream *base,
                           guint64    budget)
{
  ChpLimitedIOStream *self;

  g_return_val_if_fail (G_IS_IO_STREAM (base), NULL);

  self = g_object_new (CHP_TYPE_LIMITED_IO_STREAM, NULL);
  self->base = g_object_ref (base);
  self->input = chp_limited_input_stream_new (g_io_stream_get_input_stream (base), budget);

  return G_IO_STREAM (self);
}

GInputStream *
chp_limited_io_stream_get_limiter (ChpLimitedIOStream *self)
{
  g_return_val_if_fail (CHP_IS_LIMITED_IO_STREAM (self), NULL);

  return self->input;
}
