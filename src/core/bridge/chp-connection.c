/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-connection.c: frames in and out of one authenticated socket. It knows nothing of
 * devices or sessions: it parses, reassembles, answers pings and reports what came in (in the
 * order it came: chp-connection-inbox.c). */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-connection"

#include "chp-connection-private.h"

#include "chp-crypto.h"
#include "chp-memory.h"
#include "chp-protocol-error.h"

#include <string.h>

enum {
  PROP_0,
  PROP_RTT_MS,
  N_PROPS
};

enum {
  SIGNAL_REQUEST,
  SIGNAL_RESPONSE,
  SIGNAL_EVENT,
  SIGNAL_CANCEL,
  SIGNAL_CLOSED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (ChpConnection, chp_connection, G_TYPE_OBJECT)

gint64
chp_connection_now_ms (void)
{
  return g_get_real_time () / 1000;
}

static void
send_chunk_cb (const char *frame,
               gsize       len,
               gpointer    user_data)
{
  soup_websocket_connection_send_text (user_data, frame);
}

static gboolean expire_cb (gpointer user_data);

/* The expiry timer runs while a transfer is open or a large buffer is kept for reuse. */
void
chp_connection_ensure_expire_timer (ChpConnection *self)
{
  if (self->expire_source == 0 && !self->closed)
    self->expire_source = g_timeout_add_seconds (5, expire_cb, self);
}

static void
send_text_len (ChpConnection *self,
               const char    *text,
               gsize          len)
{
  if (self->closed ||
      soup_websocket_connection_get_state (self->ws) != SOUP_WEBSOCKET_STATE_OPEN)
    return;

  if (len > CHP_CHUNK_THRESHOLD)
    {
      g_autofree char *transfer_id = chp_random_b64url (12);

      if (len > CHP_CHUNK_MAX_MESSAGE)
        {
          g_warning ("Refusing to send a %" G_GSIZE_FORMAT "-byte message", len);
          return;
        }

      chp_chunk_split_foreach (text, len, transfer_id, send_chunk_cb, self->ws);
      return;
    }

  soup_websocket_connection_send_text (self->ws, text);
}

static void
send_text (ChpConnection *self,
           char          *text)
{
  send_text_len (self, text, strlen (text));
}

/* Sends what was written into @buffer (from chp_chunk_assembler_take_buffer()) and keeps the
 * buffer for the next large message, incoming or outgoing. */
static void
send_buffer (ChpConnection *self,
             GString       *buffer)
{
  send_text_len (self, buffer->str, buffer->len);
  chp_chunk_assembler_recycle (self->assembler, buffer, chp_connection_now_ms ());
  if (chp_chunk_assembler_get_spare_bytes (self->assembler) > 0)
    chp_connection_ensure_expire_timer (self);
}

void
chp_connection_send_frame_error (ChpConnection *self,
                                 const GError  *error,
                                 const char    *id,
                                 const char    *transfer_id)
{
  g_autofree char *text = chp_frame_build_error (chp_protocol_error_code_of (error),
                                                 error->message, id, transfer_id);

  g_debug ("Connection %s: %s", self->connection_id, error->message);
  send_text (self, text);
}

void
chp_connection_dispatch (ChpConnection  *self,
                         ChpFrame       *frame)
{
  switch (frame->type)
    {
    case CHP_FRAME_REQUEST:
      {
        g_autoptr(GError) error = NULL;

        if (g_hash_table_contains (self->incoming, frame->id))
          {
            g_autofree char *text = NULL;

            /* Answered here without touching the set: the first request is still running. */
            text = chp_frame_build_error_response (frame->id, "duplicate_id",
                                                   "This request id is already in flight");
            send_text (self, text);
            return;
          }

        if (g_hash_table_size (self->incoming) >= CHP_CONNECTION_MAX_IN_FLIGHT)
          {
            g_autofree char *text = NULL;

            g_set_error (&error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_BUSY,
                         "At most %d requests may be in flight", CHP_CONNECTION_MAX_IN_FLIGHT);
            text = chp_frame_build_error_response (frame->id, "busy", error->message);
            send_text (self, text);
            return;
          }

        g_hash_table_add (self->incoming, g_strdup (frame->id));
        g_signal_emit (self, signals[SIGNAL_REQUEST], 0, frame->id, frame->method, frame->params);
      }
      break;

    case CHP_FRAME_RESPONSE:
      {
        g_autoptr(GError) error = NULL;

        if (frame->error_code != NULL)
          {
            ChpProtocolError code;

            if (!chp_protocol_error_from_string (frame->error_code, &code))
              code = CHP_PROTOCOL_ERROR_INTERNAL;
            g_set_error_literal (&error, CHP_PROTOCOL_ERROR, code,
                                 frame->error_message ? frame->error_message : frame->error_code);
          }
        g_signal_emit (self, signals[SIGNAL_RESPONSE], 0, frame->id, frame->result, error);
      }
      break;

    case CHP_FRAME_EVENT:
      g_signal_emit (self, signals[SIGNAL_EVENT], 0, frame->event, frame->data, frame->sequence);
      break;

    case CHP_FRAME_CANCEL:
      if (g_hash_table_contains (self->incoming, frame->id))
        g_signal_emit (self, signals[SIGNAL_CANCEL], 0, frame->id);
      break;

    case CHP_FRAME_PING:
      {
        g_autofree char *text = chp_frame_build_pong (frame->sequence, frame->timestamp,
                                                      chp_connection_now_ms ());

        send_text (self, text);
      }
      break;

    case CHP_FRAME_PONG:
      self->missed_pongs = 0;
      if (frame->sequence == self->ping_sequence && self->ping_sent_us != 0)
        {
          self->rtt_ms = (g_get_monotonic_time () - self->ping_sent_us) / 1000.0;
          self->ping_sent_us = 0;
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RTT_MS]);
        }
      break;

    case CHP_FRAME_ERROR:
      g_debug ("Connection %s: the peer reported %s: %s", self->connection_id,
               frame->error_code, frame->error_message ? frame->error_message : "");
      break;

    case CHP_FRAME_CHUNK:
    case CHP_FRAME_HANDSHAKE:
    default:
      {
        g_autoptr(GError) error = NULL;

        g_set_error (&error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_UNSUPPORTED,
                     "A \"%s\" frame is not allowed here", frame->type_name);
        chp_connection_send_frame_error (self, error, NULL, NULL);
      }
      break;
    }
}

static gboolean
expire_cb (gpointer user_data)
{
  ChpConnection *self = user_data;
  gsize spare = chp_chunk_assembler_get_spare_bytes (self->assembler);

  if (chp_chunk_assembler_expire (self->assembler, chp_connection_now_ms ()) > 0)
    g_debug ("Connection %s: dropped an idle chunked transfer", self->connection_id);
  /* The large buffer kept for the next large message went: its pages go back to the system. */
  if (chp_chunk_assembler_get_spare_bytes (self->assembler) < spare)
    chp_memory_trim_after (spare, "a large message's spare buffer was released");

  if (chp_chunk_assembler_get_n_transfers (self->assembler) == 0 &&
      chp_chunk_assembler_get_spare_bytes (self->assembler) == 0)
    {
      self->expire_source = 0;
      return G_SOURCE_REMOVE;
    }

  return G_SOURCE_CONTINUE;
}

static void
message_cb (SoupWebsocketConnection *ws,
            gint                     type,
            GBytes                  *message,
            gpointer                 user_data)
{
  ChpConnection *self = user_data;

  /* A whole message arrived: the next one gets a fresh allowance. */
  if (self->limiter != NULL)
    chp_limited_input_stream_set_budget (self->limiter, CHP_CONNECTION_MESSAGE_BUDGET);

  /* Handled in the order it arrived, here or on a worker thread (chp-connection-inbox.c). */
  chp_connection_inbox_push (self, type, message);
}

static void
stop_timers (ChpConnection *self)
{
  g_clear_handle_id (&self->heartbeat_source, g_source_remove);
  g_clear_handle_id (&self->expire_source, g_source_remove);
}

static void
closed_cb (SoupWebsocketConnection *ws,
           gpointer                 user_data)
{
  ChpConnection *self = user_data;
  g_autoptr(GObject) guard G_GNUC_UNUSED = g_object_ref (G_OBJECT (self));

  if (self->closed)
    return;

  self->closed = TRUE;
  stop_timers (self);
  chp_connection_inbox_unpause (self);

  /* What arrived before the close is handled before anyone hears of it, as when each message
   * was handled as it arrived: the inbox says "closed" once it is empty. */
  if (chp_connection_inbox_is_empty (self))
    chp_connection_emit_closed (self);
  else
    self->close_pending = TRUE;
}

void
chp_connection_emit_closed (ChpConnection *self)
{
  g_signal_emit (self, signals[SIGNAL_CLOSED], 0,
                 (guint) soup_websocket_connection_get_close_code (self->ws),
                 soup_websocket_connection_get_close_data (self->ws));
}

static void
error_cb (SoupWebsocketConnection *ws,
          GError                  *error,
          gpointer                 user_data)
{
  ChpConnection *self = user_data;

  g_debug ("Connection %s: %s", self->connection_id, error->message);
}

static gboolean
heartbeat_cb (gpointer user_data)
{
  ChpConnection *self = user_data;

  if (self->missed_pongs >= CHP_CONNECTION_MISSED_PONGS)
    {
      g_message ("bridge: %s missed %u heartbeats; closing", self->device_id, self->missed_pongs);
      self->heartbeat_source = 0;
      chp_connection_close (self, CHP_CLOSE_HEARTBEAT, "heartbeat timeout");
      return G_SOURCE_REMOVE;
    }

  self->missed_pongs++;
  chp_connection_ping (self);

  return G_SOURCE_CONTINUE;
}

static void
chp_connection_dispose (GObject *object)
{
  ChpConnection *self = CHP_CONNECTION (object);

  stop_timers (self);
  chp_connection_inbox_unpause (self);
  if (self->ws != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->ws, self);
      if (soup_websocket_connection_get_state (self->ws) == SOUP_WEBSOCKET_STATE_OPEN)
        soup_websocket_connection_close (self->ws, SOUP_WEBSOCKET_CLOSE_GOING_AWAY, NULL);
    }
  g_clear_object (&self->ws);
  g_clear_object (&self->limiter);

  G_OBJECT_CLASS (chp_connection_parent_class)->dispose (object);
}

static void
chp_connection_finalize (GObject *object)
{
  ChpConnection *self = CHP_CONNECTION (object);

  chp_connection_inbox_clear (self);
  g_clear_pointer (&self->assembler, chp_chunk_assembler_free);
  g_clear_pointer (&self->incoming, g_hash_table_unref);
  g_clear_pointer (&self->connection_id, g_free);
  g_clear_pointer (&self->device_id, g_free);

  G_OBJECT_CLASS (chp_connection_parent_class)->finalize (object);
}

static void
chp_connection_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  ChpConnection *self = CHP_CONNECTION (object);

  switch (prop_id)
    {
    case PROP_RTT_MS:
      g_value_set_double (value, self->rtt_ms);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_connection_class_init (ChpConnectionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = chp_connection_dispose;
  object_class->finalize = chp_connection_finalize;
  object_class->get_property = chp_connection_get_property;

  properties[PROP_RTT_MS] =
    g_param_spec_double ("rtt-ms", NULL, NULL, -1, G_MAXDOUBLE, -1,
                         G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  signals[SIGNAL_REQUEST] =
    g_signal_new ("request", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 3, G_TYPE_STRING, G_TYPE_STRING, JSON_TYPE_NODE);
  signals[SIGNAL_RESPONSE] =
    g_signal_new ("response", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 3, G_TYPE_STRING, JSON_TYPE_NODE, G_TYPE_ERROR);
  signals[SIGNAL_EVENT] =
    g_signal_new ("event", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 3, G_TYPE_STRING, JSON_TYPE_NODE, G_TYPE_INT64);
  signals[SIGNAL_CANCEL] =
    g_signal_new ("cancel", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIGNAL_CLOSED] =
    g_signal_new ("closed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 2, G_TYPE_UINT, G_TYPE_STRING);
}

static void
chp_connection_init (ChpConnection *self)
{
  self->assembler = chp_chunk_assembler_new ();
  self->incoming = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->heartbeat_ms = CHP_CONNECTION_HEARTBEAT_MS;
  self->rtt_ms = -1;
}

/**
 * chp_connection_new:
 * @limiter: (nullable): the byte budget under this socket, moved on with each whole message
 */
ChpConnection *
chp_connection_new (SoupWebsocketConnection *ws,
                    const char              *connection_id,
                    const char              *device_id,
                    GInputStream            *limiter)
{
  ChpConnection *self;

  g_return_val_if_fail (SOUP_IS_WEBSOCKET_CONNECTION (ws), NULL);
  g_return_val_if_fail (limiter == NULL || CHP_IS_LIMITED_INPUT_STREAM (limiter), NULL);

  self = g_object_new (CHP_TYPE_CONNECTION, NULL);
  self->ws = g_object_ref (ws);
  if (limiter != NULL)
    {
      self->limiter = g_object_ref (CHP_LIMITED_INPUT_STREAM (limiter));
      chp_limited_input_stream_set_budget (self->limiter, CHP_CONNECTION_MESSAGE_BUDGET);
    }
  self->connection_id = g_strdup (connection_id);
  self->device_id = g_strdup (device_id);

  /* libsoup's default is 128 KiB; a chunk frame is ~350 KiB. Explicit, never 0. */
  soup_websocket_connection_set_max_incoming_payload_size (ws, CHP_CONNECTION_MAX_FRAME);
  /* Our own heartbeat measures round trips and counts misses; libsoup's would not. */
  soup_websocket_connection_set_keepalive_interval (ws, 0);

  g_signal_connect (ws, "message", G_CALLBACK (message_cb), self);
  g_signal_connect (ws, "closed", G_CALLBACK (closed_cb), self);
  g_signal_connect (ws, "error", G_CALLBACK (error_cb), self);

  chp_connection_set_heartbeat_interval (self, self->heartbeat_ms);

  return self;
}

void
chp_connection_set_heartbeat_interval (ChpConnection *self,
                                       guint          interval_ms)
{
  g_return_if_fail (CHP_IS_CONNECTION (self));

  self->heartbeat_ms = interval_ms;
  g_clear_handle_id (&self->heartbeat_source, g_source_remove);
  if (interval_ms > 0 && !self->closed)
    self->heartbeat_source = g_timeout_add (interval_ms, heartbeat_cb, self);
}

const char *
chp_connection_get_id (ChpConnection *self)
{
  g_return_val_if_fail (CHP_IS_CONNECTION (self), NULL);

  return self->connection_id;
}

const char *
chp_connection_get_device_id (ChpConnection *self)
{
  g_return_val_if_fail (CHP_IS_CONNECTION (self), NULL);

  return self->device_id;
}

gboolean
chp_connection_is_open (ChpConnection *self)
{
  g_return_val_if_fail (CHP_IS_CONNECTION (self), FALSE);

  return !self->closed && soup_websocket_connection_get_state (self->ws) == SOUP_WEBSOCKET_STATE_OPEN;
}

double
chp_connection_get_rtt_ms (ChpConnection *self)
{
  g_return_val_if_fail (CHP_IS_CONNECTION (self), -1);

  return self->rtt_ms;
}

void
chp_connection_send_request (ChpConnection *self,
                             const char    *id,
                             const char    *method,
                             JsonNode      *params,
                             gint64         timeout_ms)
{
  GString *buffer;

  g_return_if_fail (CHP_IS_CONNECTION (self));

  buffer = chp_chunk_assembler_take_buffer (self->assembler, 128);
  chp_frame_write_request (buffer, id, method, params, timeout_ms);
  send_buffer (self, buffer);
}

void
chp_connection_send_cancel (ChpConnection *self,
                            const char    *id)
{
  g_autofree char *text = NULL;

  g_return_if_fail (CHP_IS_CONNECTION (self));

  text = chp_frame_build_cancel (id);
  send_text (self, text);
}

void
chp_connection_respond (ChpConnection *self,
                        const char    *id,
                        JsonNode      *result)
{
  GString *buffer;

  g_return_if_fail (CHP_IS_CONNECTION (self));

  /* An answer to a request the peer cancelled, or to nothing at all, is dropped. */
  if (!g_hash_table_remove (self->incoming, id))
    return;

  buffer = chp_chunk_assembler_take_buffer (self->assembler, 128);
  chp_frame_write_response (buffer, id, result);
  send_buffer (self, buffer);
}

void
chp_connection_respond_error (ChpConnection *self,
                              const char    *id,
                              const GError  *error)
{
  g_autofree char *text = NULL;

  g_return_if_fail (CHP_IS_CONNECTION (self));
  g_return_if_fail (error != NULL);

  g_hash_table_remove (self->incoming, id);
  text = chp_frame_build_error_response (id, chp_protocol_error_code_of (error), error->message);
  send_text (self, text);
}

void
chp_connection_ping (ChpConnection *self)
{
  g_autofree char *text = NULL;

  g_return_if_fail (CHP_IS_CONNECTION (self));

  self->ping_sequence++;
  self->ping_sent_us = g_get_monotonic_time ();
  text = chp_frame_build_ping (self->ping_sequence, chp_connection_now_ms ());
  send_text (self, text);
}

void
chp_connection_close (ChpConnection *self,
                      gushort        code,
                      const char    *reason)
{
  g_return_if_fail (CHP_IS_CONNECTION (self));

  stop_timers (self);
  /* The peer's answer to the close must be read, whatever waits in the inbox. */
  chp_connection_inbox_unpause (self);
  if (soup_websocket_connection_get_state (self->ws) == SOUP_WEBSOCKET_STATE_OPEN)
    soup_websocket_connection_close (self->ws, code, reason);
}
