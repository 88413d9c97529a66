/* chp-limited-input-stream.c: counts what the socket delivers and turns the byte past the budget
 * into G_IO_ERROR_MESSAGE_TOO_LARGE, which libsoup treats as a dead connection. The owner moves
 * the budget on (after the handshake, after each whole message), so a peer can make us hold at
 * most one budget's worth of bytes at a time. */
#include "config.h"

#include "chp-limited-input-stream.h"

struct _ChpLimitedInputStream
{
  GFilterInputStream parent_instance;

  guint64 budget;
  guint64 consumed;
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

static GInputStream *
base_stream (ChpLimitedInputStream *self)
{
  return g_filter_input_stream_get_base_stream (G_FILTER_INPUT_STREAM (self));
}

static gssize
chp_limited_input_stream_read (GInputStream  *stream,
                               void          *buffer,
                               gsize          count,
                               GCancellable  *cancellable,
                               GError       **error)
{
  ChpLimitedInputStream *self = CHP_LIMITED_INPUT_STREAM (stream);
  gssize n = g_input_stream_read (base_stream (self), buffer, count, cancellable, error);

  return account (self, n, error) ? n : -1;
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
  GInputStream *base = base_stream (CHP_LIMITED_INPUT_STREAM (stream));

  return g_pollable_input_stream_is_readable (G_POLLABLE_INPUT_STREAM (base));
}

static GSource *
chp_limited_input_stream_create_source (GPollableInputStream *stream,
                                        GCancellable         *cancellable)
{
  GInputStream *base = base_stream (CHP_LIMITED_INPUT_STREAM (stream));
  g_autoptr(GSource) base_source =
    g_pollable_input_stream_create_source (G_POLLABLE_INPUT_STREAM (base), NULL);

  /* The callback must see this stream, not the socket's. */
  return g_pollable_source_new_full (stream, base_source, cancellable);
}

static gssize
chp_limited_input_stream_read_nonblocking (GPollableInputStream  *stream,
                                           void                  *buffer,
                                           gsize                  count,
                                           GError               **error)
{
  ChpLimitedInputStream *self = CHP_LIMITED_INPUT_STREAM (stream);
  gssize n = g_pollable_input_stream_read_nonblocking (G_POLLABLE_INPUT_STREAM (base_stream (self)),
                                                       buffer, count, NULL, error);

  return account (self, n, error) ? n : -1;
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
chp_limited_input_stream_class_init (ChpLimitedInputStreamClass *klass)
{
  G_INPUT_STREAM_CLASS (klass)->read_fn = chp_limited_input_stream_read;
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
