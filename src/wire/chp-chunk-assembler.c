/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-chunk-assembler.c: every chunk is checked against its transfer (order, size, total,
 * budget) so a broken or hostile sender costs at most 16 MiB and 30 s, never a crash. */
#include "config.h"

#include "chp-chunk-assembler.h"

#include "chp-b64url.h"
#include "chp-protocol-error.h"

#include <string.h>

typedef struct
{
  char       *transfer_id;
  GString    *bytes;
  gint64      total;
  gint64      next_index;
  gint64      original_bytes;
  gint64      last_activity_ms;
} Transfer;

struct _ChpChunkAssembler
{
  GHashTable *transfers;    /* transfer id -> Transfer */
  gsize       pending_bytes; /* sum of original_bytes of open transfers */

  /* One large buffer kept between messages (see chp_chunk_assembler_recycle()): a fresh 16 MiB
   * block costs 4096 page faults each time it is filled, more than decoding into it. */
  GString    *spare;
  gint64      spare_since_ms;
};

static void
transfer_free (Transfer *transfer)
{
  g_free (transfer->transfer_id);
  if (transfer->bytes != NULL)
    g_string_free (transfer->bytes, TRUE);
  g_free (transfer);
}

ChpChunkAssembler *
chp_chunk_assembler_new (void)
{
  ChpChunkAssembler *self = g_new0 (ChpChunkAssembler, 1);

  self->transfers = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                           (GDestroyNotify) transfer_free);

  return self;
}

void
chp_chunk_assembler_free (ChpChunkAssembler *self)
{
  if (self == NULL)
    return;

  g_hash_table_unref (self->transfers);
  if (self->spare != NULL)
    g_string_free (self->spare, TRUE);
  g_free (self);
}

/**
 * chp_chunk_assembler_take_buffer:
 * @size: the bytes the caller expects to write
 *
 * The kept buffer if it is large enough, else a new one sized for @size; empty either way.
 * Hand it back with chp_chunk_assembler_recycle() (or free it).
 *
 * Returns: (transfer full): an empty string
 */
GString *
chp_chunk_assembler_take_buffer (ChpChunkAssembler *self,
                                 gsize              size)
{
  GString *buffer;

  g_return_val_if_fail (self != NULL, NULL);

  if (self->spare == NULL || self->spare->allocated_len <= size)
    return g_string_sized_new (size);

  buffer = g_steal_pointer (&self->spare);
  g_string_truncate (buffer, 0);
  return buffer;
}

/**
 * chp_chunk_assembler_recycle:
 * @buffer: (transfer full): a buffer from chp_chunk_assembler_take_buffer() or
 *   chp_chunk_assembler_add_string(), whose contents are no longer needed
 *
 * Keeps @buffer for the next large message if it is worth keeping (larger than
 * %CHP_CHUNK_THRESHOLD and than the buffer already kept), else frees it. At most one buffer is
 * kept, and chp_chunk_assembler_expire() drops it after %CHP_CHUNK_TIMEOUT_MS without use, so a
 * connection does not stay 16 MiB larger after one big message.
 */
void
chp_chunk_assembler_recycle (ChpChunkAssembler *self,
                             GString           *buffer,
                             gint64             now_ms)
{
  g_return_if_fail (self != NULL);

  if (buffer == NULL)
    return;

  if (buffer->allocated_len <= CHP_CHUNK_THRESHOLD ||
      (self->spare != NULL && self->spare->allocated_len >= buffer->allocated_len))
    {
      g_string_free (buffer, TRUE);
      return;
    }

  if (self->spare != NULL)
    g_string_free (self->spare, TRUE);
  self->spare = buffer;
  /* Idle means no large message: the kept buffer lent out for a ping does not renew it. A
   * buffer this large with little in it can only be the kept one, whose time is already set. */
  if (buffer->len > CHP_CHUNK_THRESHOLD)
    self->spare_since_ms = now_ms;
}

/* Returns: the size of the buffer kept between messages, 0 if none. */
gsize
chp_chunk_assembler_get_spare_bytes (ChpChunkAssembler *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->spare != NULL ? self->spare->allocated_len : 0;
}

static void
drop (ChpChunkAssembler *self,
      Transfer          *transfer)
{
  self->pending_bytes -= transfer->original_bytes;
  g_hash_table_remove (self->transfers, transfer->transfer_id);
}

static gsize
slice_len_for (gint64 original_bytes,
               gint64 total,
               gint64 index)
{
  if (index < total - 1)
    return CHP_CHUNK_SIZE;

  return original_bytes - (total - 1) * (gint64) CHP_CHUNK_SIZE;
}

/* Appends @chunk's slice to @bytes: @slice if the caller decoded it already (%NULL when it did
 * not decode), else decoded here. */
static gboolean
append_slice (GString        *bytes,
              const ChpFrame *chunk,
              gboolean        predecoded,
              GBytes         *slice,
              gsize           expected)
{
  gsize old_len = bytes->len;

  if (predecoded)
    {
      if (slice == NULL || g_bytes_get_size (slice) != expected)
        return FALSE;

      g_string_append_len (bytes, g_bytes_get_data (slice, NULL), expected);
      return TRUE;
    }

  /* Decoded straight into the message's buffer: a 16 MiB transfer is copied once, not twice. */
  g_string_set_size (bytes, old_len + expected);
  return chp_b64url_decode_to (chunk->chunk_data, strlen (chunk->chunk_data),
                               (guint8 *) bytes->str + old_len, expected, NULL);
}

static GString *
add (ChpChunkAssembler  *self,
     const ChpFrame     *chunk,
     gboolean            predecoded,
     GBytes             *slice,
     gint64              now_ms,
     GError            **error)
{
  Transfer *transfer;
  gint64 expected_total;
  gsize expected;

  transfer = g_hash_table_lookup (self->transfers, chunk->transfer_id);

  if (transfer == NULL)
    {
      if (chunk->original_bytes > CHP_CHUNK_MAX_MESSAGE)
        {
          g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_TOO_LARGE,
                       "A message may be at most %d bytes", CHP_CHUNK_MAX_MESSAGE);
          return NULL;
        }

      if (chunk->index != 0)
        {
          g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                       "Transfer %s starts at chunk %" G_GINT64_FORMAT ", not 0",
                       chunk->transfer_id, chunk->index);
          return NULL;
        }

      expected_total = (chunk->original_bytes + CHP_CHUNK_SIZE - 1) / CHP_CHUNK_SIZE;
      if (chunk->total != expected_total)
        {
          g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                       "Transfer %s: %" G_GINT64_FORMAT " bytes make %" G_GINT64_FORMAT
                       " chunks, not %" G_GINT64_FORMAT,
                       chunk->transfer_id, chunk->original_bytes, expected_total, chunk->total);
          return NULL;
        }

      if (g_hash_table_size (self->transfers) >= CHP_CHUNK_MAX_TRANSFERS)
        {
          g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_BUSY,
                       "At most %d chunked transfers may be open at once",
                       CHP_CHUNK_MAX_TRANSFERS);
          return NULL;
        }

      if (self->pending_bytes + chunk->original_bytes > CHP_CHUNK_MAX_MESSAGE)
        {
          g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_TOO_LARGE,
                       "At most %d bytes may be in flight in chunks per connection",
                       CHP_CHUNK_MAX_MESSAGE);
          return NULL;
        }

      transfer = g_new0 (Transfer, 1);
      transfer->transfer_id = g_strdup (chunk->transfer_id);
      transfer->total = chunk->total;
      transfer->original_bytes = chunk->original_bytes;
      /* Reserved whole, so the slices are never moved as the message grows (growing by
       * doubling copied a 16 MiB message once more and churned the heap). A lie about the size
       * still costs little up front: a fresh block's pages are only touched as slices arrive,
       * a kept one's are already paid for, and the budget above caps what all open transfers
       * may reserve. */
      transfer->bytes = chp_chunk_assembler_take_buffer (self, transfer->original_bytes);
      g_hash_table_insert (self->transfers, transfer->transfer_id, transfer);
      self->pending_bytes += transfer->original_bytes;
    }
  else if (chunk->total != transfer->total || chunk->original_bytes != transfer->original_bytes)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "Transfer %s changed its total or size midway", chunk->transfer_id);
      drop (self, transfer);
      return NULL;
    }
  else if (chunk->index != transfer->next_index)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "Transfer %s expected chunk %" G_GINT64_FORMAT " but got %" G_GINT64_FORMAT
                   " (%s)", chunk->transfer_id, transfer->next_index, chunk->index,
                   chunk->index < transfer->next_index ? "duplicate" : "gap");
      drop (self, transfer);
      return NULL;
    }

  expected = slice_len_for (transfer->original_bytes, transfer->total, chunk->index);
  if (!append_slice (transfer->bytes, chunk, predecoded, slice, expected))
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "Chunk %" G_GINT64_FORMAT " of transfer %s has the wrong size or encoding",
                   chunk->index, chunk->transfer_id);
      drop (self, transfer);
      return NULL;
    }

  transfer->next_index++;
  transfer->last_activity_ms = now_ms;

  if (transfer->next_index == transfer->total)
    {
      GString *whole;

      g_assert ((gint64) transfer->bytes->len == transfer->original_bytes);
      whole = g_steal_pointer (&transfer->bytes);
      drop (self, transfer);
      return whole;
    }

  return NULL;
}

/**
 * chp_chunk_assembler_add_string:
 *
 * chp_chunk_assembler_add() for a caller that hands the buffer back: the whole message is a
 * string the caller may change (chp_frame_parse_in_place()) and then give to
 * chp_chunk_assembler_recycle(), so that the next large message reuses its pages.
 *
 * Returns: (transfer full) (nullable): the whole message once its last chunk arrives;
 *   %NULL without an error while more are expected. On error the transfer is dropped.
 */
GString *
chp_chunk_assembler_add_string (ChpChunkAssembler  *self,
                                const ChpFrame     *chunk,
                                gint64              now_ms,
                                GError            **error)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (chunk != NULL && chunk->type == CHP_FRAME_CHUNK, NULL);

  return add (self, chunk, FALSE, NULL, now_ms, error);
}

/**
 * chp_chunk_decode:
 * @chunk: a chunk frame
 *
 * Decodes @chunk's slice by itself, to the size its own index, total and originalBytes call
 * for. It reads nothing but @chunk, so a worker thread may run it (base64url is most of what a
 * chunk costs); chp_chunk_assembler_add_decoded() then checks the chunk against its transfer
 * exactly as chp_chunk_assembler_add_string() does. A chunk whose fields disagree with its
 * transfer fails there, before its slice counts, so the slice's size here is only a bound.
 *
 * Returns: (transfer full) (nullable): the slice, or %NULL when the data is not base64url of
 *   that size
 */
GBytes *
chp_chunk_decode (const ChpFrame *chunk)
{
  gsize expected;
  guint8 *slice;

  g_return_val_if_fail (chunk != NULL && chunk->type == CHP_FRAME_CHUNK, NULL);

  /* Fields that disagree can make this wrap around; nothing over a slice is ever allocated. */
  expected = slice_len_for (chunk->original_bytes, chunk->total, chunk->index);
  if (expected > CHP_CHUNK_SIZE)
    return NULL;

  slice = g_malloc (MAX (expected, 1));
  if (!chp_b64url_decode_to (chunk->chunk_data, strlen (chunk->chunk_data), slice, expected, NULL))
    {
      g_free (slice);
      return NULL;
    }

  return g_bytes_new_take (slice, expected);
}

/**
 * chp_chunk_assembler_add_decoded:
 * @slice: (nullable): chp_chunk_decode() of @chunk
 *
 * chp_chunk_assembler_add_string() for a chunk whose slice was decoded already: the same checks
 * in the same order, the same errors (a %NULL @slice is the one for data of the wrong size or
 * encoding), and the slice copied into the message's buffer.
 *
 * Returns: (transfer full) (nullable): as chp_chunk_assembler_add_string()
 */
GString *
chp_chunk_assembler_add_decoded (ChpChunkAssembler  *self,
                                 const ChpFrame     *chunk,
                                 GBytes             *slice,
                                 gint64              now_ms,
                                 GError            **error)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (chunk != NULL && chunk->type == CHP_FRAME_CHUNK, NULL);

  return add (self, chunk, TRUE, slice, now_ms, error);
}

/**
 * chp_chunk_assembler_add:
 *
 * Returns: (transfer full) (nullable): the whole message once its last chunk arrives;
 *   %NULL without an error while more are expected. On error the transfer is dropped.
 */
GBytes *
chp_chunk_assembler_add (ChpChunkAssembler  *self,
                         const ChpFrame     *chunk,
                         gint64              now_ms,
                         GError            **error)
{
  GString *whole = chp_chunk_assembler_add_string (self, chunk, now_ms, error);

  return whole != NULL ? g_string_free_to_bytes (whole) : NULL;
}

/* Returns how many idle transfers were dropped. */
guint
chp_chunk_assembler_expire (ChpChunkAssembler *self,
                            gint64             now_ms)
{
  GHashTableIter iter;
  Transfer *transfer;
  guint dropped = 0;

  g_return_val_if_fail (self != NULL, 0);

  g_hash_table_iter_init (&iter, self->transfers);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &transfer))
    {
      if (now_ms - transfer->last_activity_ms >= CHP_CHUNK_TIMEOUT_MS)
        {
          self->pending_bytes -= transfer->original_bytes;
          g_hash_table_iter_remove (&iter);
          dropped++;
        }
    }

  if (self->spare != NULL && now_ms - self->spare_since_ms >= CHP_CHUNK_TIMEOUT_MS)
    {
      g_string_free (self->spare, TRUE);
      self->spare = NULL;
    }

  return dropped;
}

guint
chp_chunk_assembler_get_n_transfers (ChpChunkAssembler *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return g_hash_table_size (self->transfers);
}

gsize
chp_chunk_assembler_get_pending_bytes (ChpChunkAssembler *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->pending_bytes;
}

/* Transfer ids are written into JSON unescaped. */
static gboolean
is_b64url (const char *text)
{
  return strspn (text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
         strlen (text);
}

/**
 * chp_chunk_split_foreach:
 * @transfer_id: base64url (it is written into JSON unescaped)
 * @func: (scope call): called with each chunk frame in order
 *
 * Every frame is written into one buffer, reused for the next: a 16 MiB message is 64 frames of
 * 342 KiB, and fresh memory for each cost more in page faults than encoding them. @func must
 * copy what it keeps (libsoup's send_text() does).
 */
void
chp_chunk_split_foreach (const char   *message,
                         gsize         len,
                         const char   *transfer_id,
                         ChpChunkFunc  func,
                         gpointer      user_data)
{
  g_autofree char *frame = NULL;
  gint64 total = (len + CHP_CHUNK_SIZE - 1) / CHP_CHUNK_SIZE;

  g_return_if_fail (len > 0 && len <= CHP_CHUNK_MAX_MESSAGE);
  g_return_if_fail (is_b64url (transfer_id));

  frame = g_malloc (chp_frame_chunk_len_max (transfer_id, MIN (CHP_CHUNK_SIZE, len)));
  for (gint64 i = 0; i < total; i++)
    {
      gsize offset = i * (gsize) CHP_CHUNK_SIZE;
      gsize frame_len = chp_frame_write_chunk (frame, transfer_id, i, total, len,
                                               (const guint8 *) message + offset,
                                               MIN (CHP_CHUNK_SIZE, len - offset));

      func (frame, frame_len, user_data);
    }
}

static void
collect_frame_cb (const char *frame,
                  gsize       len,
                  gpointer    user_data)
{
  g_ptr_array_add (user_data, g_strndup (frame, len));
}

/**
 * chp_chunk_split:
 * @transfer_id: base64url (it is written into JSON unescaped)
 *
 * Returns: (transfer full) (element-type utf8): the chunk frames, in order
 */
GPtrArray *
chp_chunk_split (const char *message,
                 gsize       len,
                 const char *transfer_id)
{
  GPtrArray *frames = g_ptr_array_new_with_free_func (g_free);

  g_return_val_if_fail (len > 0 && len <= CHP_CHUNK_MAX_MESSAGE, frames);
  g_return_val_if_fail (is_b64url (transfer_id), frames);

  chp_chunk_split_foreach (message, len, transfer_id, collect_frame_cb, frames);
  return frames;
}
