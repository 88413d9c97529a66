/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-connection-inbox.c: what a socket receives is handled in the order it arrived, and the
 * heavy part of a large message (parsing its JSON, decoding a chunk's base64url) runs on a worker
 * thread, so that a browser's 16 MiB answer never holds up the main loop. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-connection"

#include "chp-connection-private.h"

#include "chp-memory.h"

#include "chp-protocol-error.h"

/* A message smaller than this is parsed where it arrives, on the main thread, when nothing waits
 * before it; a larger one goes to a worker. Parsing snapshot-like JSON on a two-core VM (-O2, CPU
 * time): 0.07 ms for 4 KiB, 0.25 ms for 16 KiB, 1 ms for 64 KiB, 6 ms for 256 KiB, 1.1 s for
 * 16 MiB; the trip to a worker and back adds 0.02 ms to a message on an idle machine and about
 * 0.25 ms on a loaded one. Under 16 KiB (pongs, events, most answers) the trip would add to the
 * message's latency about what the parse costs the loop; above it the parse costs the loop more
 * with each doubling, up to a stall of a second. A chunk frame is about 340 KiB, so a chunked
 * message goes to the worker slice by slice, then whole. */
#define INLINE_MAX (16 * 1024)

/* While more than this waits to be handled (counted as it arrived), the socket is not read:
 * libsoup would otherwise go on reading into the inbox as fast as the peer sends while a worker
 * parses. One message's budget, as the limiter allows between two whole messages; past it TCP
 * makes the peer wait, as it did when each message was handled before the next was read. */
#define INBOX_MAX CHP_CONNECTION_MESSAGE_BUDGET

/* One message, from its arrival until it is dispatched (main thread only). */
typedef struct
{
  int       type;         /* SoupWebsocketDataType */
  GBytes   *message;      /* as it arrived */
  GString  *whole;        /* the chunked message it completed, parsed next */
  char     *transfer_id;  /* that message's, for its errors */
} Inbound;

/* What a worker is given and hands back: plain data only. The worker never sees the connection,
 * its assembler or anything else of the main thread's: the message's bytes do not change, and
 * the whole message's buffer belongs to the work until the main thread takes it back. */
typedef struct
{
  GBytes   *message;  /* in: a frame to parse, and if it is a chunk, its slice to decode */
  GString  *whole;    /* in: a reassembled message to parse in place; handed back */
  ChpFrame *frame;    /* out */
  GBytes   *slice;    /* out: a chunk's data, decoded; NULL when it did not decode */
  GError   *error;    /* out: why there is no frame */
} Work;

static void pump (ChpConnection *self);

static void
inbound_free (gpointer data)
{
  Inbound *in = data;

  g_clear_pointer (&in->message, g_bytes_unref);
  if (in->whole != NULL)
    g_string_free (in->whole, TRUE);
  g_free (in->transfer_id);
  g_free (in);
}

static void
work_free (gpointer data)
{
  Work *work = data;

  g_clear_pointer (&work->message, g_bytes_unref);
  if (work->whole != NULL)
    g_string_free (work->whole, TRUE);
  g_clear_pointer (&work->frame, chp_frame_free);
  g_clear_pointer (&work->slice, g_bytes_unref);
  g_clear_error (&work->error);
  g_free (work);
}

/* Stops reading the socket while too much waits, and reads on once it has gone down. */
static void
update_pause (ChpConnection *self)
{
  gboolean pause;

  if (self->limiter == NULL)
    return;

  pause = self->inbox_bytes > INBOX_MAX && !self->closed && self->ws != NULL &&
          soup_websocket_connection_get_state (self->ws) == SOUP_WEBSOCKET_STATE_OPEN;
  if (pause != chp_limited_input_stream_get_paused (self->limiter))
    g_debug ("Connection %s: %s reading, %" G_GSIZE_FORMAT " bytes waiting", self->connection_id,
             pause ? "paused" : "resumed", self->inbox_bytes);
  chp_limited_input_stream_set_paused (self->limiter, pause);
}

/* The oldest message is done with. */
static void
pop (ChpConnection *self)
{
  Inbound *in = g_queue_pop_head (&self->inbox);

  self->inbox_bytes -= g_bytes_get_size (in->message);
  inbound_free (in);
  self->inbox_busy = FALSE;
  update_pause (self);
}

/* A chunk, parsed: into its transfer. Returns the whole message once its last chunk is in. */
static GString *
add_chunk (ChpConnection *self,
           ChpFrame      *chunk,
           gboolean       decoded,
           GBytes        *slice)
{
  g_autoptr(GError) error = NULL;
  GString *whole;

  if (decoded)
    whole = chp_chunk_assembler_add_decoded (self->assembler, chunk, slice,
                                             chp_connection_now_ms (), &error);
  else
    whole = chp_chunk_assembler_add_string (self->assembler, chunk, chp_connection_now_ms (),
                                            &error);
  if (error != NULL)
    {
      chp_connection_send_frame_error (self, error, NULL, chunk->transfer_id);
      return NULL;
    }

  if (whole == NULL)
    chp_connection_ensure_expire_timer (self);

  return whole;
}

/* A message's frame, parsed (or %NULL, and @error): dispatched, or if it is a chunk, added to
 * its transfer. Returns %TRUE when that completed a whole message, now in @in->whole. */
static gboolean
take_frame (ChpConnection *self,
            Inbound       *in,
            ChpFrame      *frame,
            gboolean       decoded,
            GBytes        *slice,
            const GError  *error)
{
  if (frame == NULL)
    {
      chp_connection_send_frame_error (self, error, NULL, NULL);
      return FALSE;
    }

  if (frame->type != CHP_FRAME_CHUNK)
    {
      chp_connection_dispatch (self, frame);
      return FALSE;
    }

  in->whole = add_chunk (self, frame, decoded, slice);
  if (in->whole == NULL)
    return FALSE;

  in->transfer_id = g_strdup (frame->transfer_id);
  return TRUE;
}

/* A whole message, parsed (or %NULL, and @error). @whole is the assembler's buffer: nothing else
 * holds it, so the parser may end its strings in place. The frame keeps copies of its own, so
 * the buffer goes back for the next large message before anything is dispatched (a handler may
 * answer at once, and reuse it). */
static void
take_whole (ChpConnection *self,
            GString       *whole,
            const char    *transfer_id,
            ChpFrame      *inner,
            const GError  *error)
{
  /* What parsing it left free in the worker's arena goes back once the burst is over. */
  chp_memory_trim_after (whole->len, "a large message was parsed");
  chp_chunk_assembler_recycle (self->assembler, whole, chp_connection_now_ms ());
  if (chp_chunk_assembler_get_spare_bytes (self->assembler) > 0)
    chp_connection_ensure_expire_timer (self);
  if (inner == NULL)
    {
      chp_connection_send_frame_error (self, error, NULL, transfer_id);
      return;
    }

  if (inner->type == CHP_FRAME_CHUNK || inner->type == CHP_FRAME_HANDSHAKE)
    {
      g_autoptr(GError) nested = NULL;

      g_set_error_literal (&nested, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                           "A chunked transfer must carry a request, response or event");
      chp_connection_send_frame_error (self, nested, NULL, transfer_id);
      return;
    }

  chp_connection_dispatch (self, inner);
}

/* Worker thread: only what the Work holds. */
static void
work_thread_cb (GTask        *task,
                gpointer      source_object,
                gpointer      task_data,
                GCancellable *cancellable)
{
  Work *work = task_data;

  if (work->message != NULL)
    {
      gsize len;
      const char *data = g_bytes_get_data (work->message, &len);

      work->frame = chp_frame_parse (data, len, &work->error);
      if (work->frame != NULL && work->frame->type == CHP_FRAME_CHUNK)
        work->slice = chp_chunk_decode (work->frame);
    }
  else
    {
      work->frame = chp_frame_parse_in_place (work->whole->str, work->whole->len, &work->error);
    }

  g_task_return_boolean (task, TRUE);
}

static void
work_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  GWeakRef *ref = user_data;
  g_autoptr(ChpConnection) self = g_weak_ref_get (ref);
  Work *work = g_task_get_task_data (G_TASK (result));
  Inbound *in;

  g_weak_ref_clear (ref);
  g_free (ref);

  /* Finalized or disposed: nobody waits for this message any more. */
  if (self == NULL || self->ws == NULL)
    return;

  in = g_queue_peek_head (&self->inbox);
  g_assert (in != NULL && self->inbox_busy);

  if (work->whole != NULL)
    {
      g_autoptr(ChpFrame) inner = g_steal_pointer (&work->frame);

      take_whole (self, g_steal_pointer (&work->whole), in->transfer_id, inner, work->error);
    }
  else
    {
      g_autoptr(ChpFrame) frame = g_steal_pointer (&work->frame);

      /* The chunk completed its message, which goes before anything behind it. */
      if (take_frame (self, in, frame, TRUE, work->slice, work->error))
        {
          self->inbox_busy = FALSE;
          pump (self);
          return;
        }
    }

  pop (self);
  pump (self);
}

/* Hands the rest of @in to a worker; work_done_cb() goes on from there. */
static void
work_start (ChpConnection *self,
            Inbound       *in)
{
  g_autoptr(GTask) task = NULL;
  Work *work = g_new0 (Work, 1);
  GWeakRef *ref = g_new0 (GWeakRef, 1);

  if (in->whole != NULL)
    work->whole = g_steal_pointer (&in->whole);
  else
    work->message = g_bytes_ref (in->message);

  /* No source object and a weak reference: the task may be freed on the worker, where the last
   * reference to a GObject of the main thread must never go. */
  g_weak_ref_init (ref, self);
  task = g_task_new (NULL, NULL, work_done_cb, ref);
  g_task_set_source_tag (task, work_start);
  g_task_set_task_data (task, work, work_free);
  g_task_run_in_thread (task, work_thread_cb);
}

/* Handles what it can of @in here. Returns %FALSE when a worker took the rest. */
static gboolean
handle (ChpConnection *self,
        Inbound       *in)
{
  g_autoptr(GError) error = NULL;

  if (in->whole == NULL)
    {
      g_autoptr(ChpFrame) frame = NULL;
      const char *data;
      gsize len;

      if (in->type != SOUP_WEBSOCKET_DATA_TEXT)
        {
          g_set_error_literal (&error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                               "Frames are JSON text, not binary");
          chp_connection_send_frame_error (self, error, NULL, NULL);
          return TRUE;
        }

      data = g_bytes_get_data (in->message, &len);
      if (len >= INLINE_MAX)
        {
          work_start (self, in);
          return FALSE;
        }

      frame = chp_frame_parse (data, len, &error);
      if (!take_frame (self, in, frame, FALSE, NULL, error))
        return TRUE;
    }

  if (in->whole->len >= INLINE_MAX)
    {
      work_start (self, in);
      return FALSE;
    }

  {
    g_autoptr(ChpFrame) inner = chp_frame_parse_in_place (in->whole->str, in->whole->len, &error);

    take_whole (self, g_steal_pointer (&in->whole), in->transfer_id, inner, error);
  }

  return TRUE;
}

/* Handles the inbox from its oldest message on, until one needs a worker or none is left; then,
 * if the socket closed meanwhile, says so. */
static void
pump (ChpConnection *self)
{
  /* A handler may drop the last reference to the connection. */
  g_autoptr(ChpConnection) guard G_GNUC_UNUSED = g_object_ref (self);

  /* Disposed (no socket), or already handling one: a handler that ran the main loop brought
   * us here again, and the message it is handling goes first. */
  while (self->ws != NULL && !self->inbox_busy && !g_queue_is_empty (&self->inbox))
    {
      Inbound *in = g_queue_peek_head (&self->inbox);

      self->inbox_busy = TRUE;
      if (!handle (self, in))
        return;

      pop (self);
    }

  if (self->ws != NULL && self->close_pending && g_queue_is_empty (&self->inbox))
    {
      self->close_pending = FALSE;
      chp_connection_emit_closed (self);
    }
}

/* A whole WebSocket message arrived. */
void
chp_connection_inbox_push (ChpConnection *self,
                           int            type,
                           GBytes        *message)
{
  Inbound *in = g_new0 (Inbound, 1);

  in->type = type;
  in->message = g_bytes_ref (message);
  g_queue_push_tail (&self->inbox, in);
  self->inbox_bytes += g_bytes_get_size (message);
  update_pause (self);

  pump (self);
}

gboolean
chp_connection_inbox_is_empty (ChpConnection *self)
{
  return g_queue_is_empty (&self->inbox);
}

/* Closing: the peer's close must be read whatever waits. */
void
chp_connection_inbox_unpause (ChpConnection *self)
{
  if (self->limiter != NULL)
    chp_limited_input_stream_set_paused (self->limiter, FALSE);
}

/* Finalizing: what still waits is dropped; a worker's result finds nobody. */
void
chp_connection_inbox_clear (ChpConnection *self)
{
  g_queue_clear_full (&self->inbox, inbound_free);
  self->inbox_bytes = 0;
}
