/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz-chunk.c: libFuzzer target for ChpChunkAssembler, the code that holds up to 16 MiB per
 * connection on behalf of a peer that may lie about every number in a chunk.
 *
 * Input format: the input split on '\n'; each line is one step (a '\r' before '\n' is dropped):
 *
 *   +<ms>                          advance the clock by <ms> (decimal, at most 10^9), then
 *                                  chp_chunk_assembler_expire()
 *   !<id> <index> <total> <bytes> [<delta>]
 *                                  a chunk made with chp_frame_build_chunk(): slice <index> of a
 *                                  canonical <bytes>-byte message (a valid `event` frame padded
 *                                  to that length), its length changed by <delta> (-9…9). This
 *                                  is how an input reaches the 256 KiB slices of a multi-chunk
 *                                  transfer without carrying 342 KiB of base64 per chunk.
 *   anything else                  one frame text, parsed with chp_frame_parse(); a chunk frame
 *                                  goes to the assembler, anything else is skipped
 *
 * Each chunk is also run through a shadow model of the rules in docs/protocol.md §7 (order,
 * totals, sizes, at most 8 open transfers, at most 16 MiB pending, 30 s idle timeout). The
 * assembler and the model must agree on every outcome (error / more to come / complete), on the
 * number of open transfers, on the pending bytes and on the bytes of a completed message. At
 * the end, an expiry 30 s later must leave nothing behind. */
#include "config.h"

#include "fuzz-common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chp-chunk-assembler.h"
#include "chp-crypto.h"
#include "chp-frame.h"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Each synthesized chunk costs the assembler a 256 KiB base64url decode, milliseconds under
 * ASan: bound the work one input can ask for, still allowing a whole 16 MiB transfer (64). */
#define MAX_SYNTH_CHUNKS 80
/* The first few synthesized chunks of an input go through the builder and the parser. */
#define PARSED_SYNTH_CHUNKS 2
#define START_MS         G_GINT64_CONSTANT (1700000000000)

#define CHECK(cond, ...)                                                   \
  G_STMT_START {                                                           \
    if (G_UNLIKELY (!(cond)))                                              \
      {                                                                    \
        g_printerr ("fuzz-chunk: check failed: %s: ", #cond);              \
        g_printerr (__VA_ARGS__);                                          \
        g_printerr ("\n");                                                 \
        abort ();                                                          \
      }                                                                    \
  } G_STMT_END

static const char b64url_chars[] =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* The canonical message: {"type":"event",…,"data":"aaaa…"} padded to the asked length. */
static const char canon_head[] =
  "{\"type\":\"event\",\"event\":\"fuzz\",\"sequence\":1,\"data\":\"";
static const char canon_tail[] = "\"}";

static char
canon_byte (gint64 bytes,
            gint64 offset)
{
  gint64 head = sizeof canon_head - 1;
  gint64 tail = sizeof canon_tail - 1;

  if (offset >= bytes)
    return 'x';  /* past the end: a delta asked for more than the message has */
  if (bytes < head + tail)
    return canon_head[offset % head];
  if (offset < head)
    return canon_head[offset];
  if (offset >= bytes - tail)
    return canon_tail[offset - (bytes - tail)];
  return 'a';
}

/* The model's view of one open transfer. */
typedef struct
{
  gint64      total;
  gint64      original_bytes;
  gint64      next_index;
  gint64      last_activity_ms;
  GByteArray *bytes;
} Model;

static void
model_free (Model *m)
{
  g_byte_array_unref (m->bytes);
  g_free (m);
}

typedef struct
{
  ChpChunkAssembler *assembler;
  GHashTable        *model;      /* transfer id -> Model */
  gint64             pending;    /* the model's sum of original_bytes of open transfers */
  gint64             now_ms;
  guint              n_synth;
} State;

static void
model_drop (State      *s,
            const char *transfer_id)
{
  Model *m = g_hash_table_lookup (s->model, transfer_id);

  s->pending -= m->original_bytes;
  g_hash_table_remove (s->model, transfer_id);
}

static void
check_counts (State *s)
{
  CHECK (chp_chunk_assembler_get_n_transfers (s->assembler) == g_hash_table_size (s->model),
         "open transfers: assembler %u, model %u",
         chp_chunk_assembler_get_n_transfers (s->assembler), g_hash_table_size (s->model));
  CHECK ((gint64) chp_chunk_assembler_get_pending_bytes (s->assembler) == s->pending,
         "pending bytes: assembler %" G_GSIZE_FORMAT ", model %" G_GINT64_FORMAT,
         chp_chunk_assembler_get_pending_bytes (s->assembler), s->pending);
  CHECK (g_hash_table_size (s->model) <= CHP_CHUNK_MAX_TRANSFERS, "more than 8 transfers open");
  CHECK (s->pending >= 0 && s->pending <= CHP_CHUNK_MAX_MESSAGE, "pending out of budget");
}

/* Returns: (transfer full) (nullable): what the model expects the assembler to return whole;
 * sets *ok to FALSE when the model expects an error. */
static GBytes *
model_add (State          *s,
           const ChpFrame *chunk,
           GBytes         *known_slice,
           gboolean       *ok)
{
  g_autoptr(GBytes) slice = NULL;
  Model *m = g_hash_table_lookup (s->model, chunk->transfer_id);
  gsize expected_len;

  *ok = FALSE;

  if (m == NULL)
    {
      /* The size check first: a peer's originalBytes may be near G_MAXINT64. */
      if (chunk->original_bytes > CHP_CHUNK_MAX_MESSAGE || chunk->index != 0 ||
          chunk->total != (chunk->original_bytes + CHP_CHUNK_SIZE - 1) / CHP_CHUNK_SIZE ||
          g_hash_table_size (s->model) >= CHP_CHUNK_MAX_TRANSFERS ||
          s->pending + chunk->original_bytes > CHP_CHUNK_MAX_MESSAGE)
        return NULL;

      m = g_new0 (Model, 1);
      m->total = chunk->total;
      m->original_bytes = chunk->original_bytes;
      m->bytes = g_byte_array_new ();
      g_hash_table_insert (s->model, g_strdup (chunk->transfer_id), m);
      s->pending += m->original_bytes;
    }
  else if (chunk->total != m->total || chunk->original_bytes != m->original_bytes ||
           chunk->index != m->next_index)
    {
      model_drop (s, chunk->transfer_id);
      return NULL;
    }

  /* §7: every slice is 262,144 bytes except the last, which holds the rest. */
  expected_len = chunk->index < m->total - 1
                 ? CHP_CHUNK_SIZE
                 : (gsize) (m->original_bytes - (m->total - 1) * CHP_CHUNK_SIZE);
  /* A synthesized chunk's bytes are known; decoding them again would double the cost. */
  slice = known_slice ? g_bytes_ref (known_slice) : chp_b64url_decode (chunk->chunk_data, NULL);
  if (slice == NULL || g_bytes_get_size (slice) != expected_len)
    {
      model_drop (s, chunk->transfer_id);
      return NULL;
    }

  g_byte_array_append (m->bytes, g_bytes_get_data (slice, NULL), g_bytes_get_size (slice));
  m->next_index++;
  m->last_activity_ms = s->now_ms;
  *ok = TRUE;

  if (m->next_index == m->total)
    {
      GBytes *whole = g_bytes_new (m->bytes->data, m->bytes->len);

      model_drop (s, chunk->transfer_id);
      return whole;
    }

  return NULL;
}

static void
add_chunk (State          *s,
           const ChpFrame *chunk,
           GBytes         *known_slice)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) whole = NULL;
  g_autoptr(GBytes) expected = NULL;
  gboolean model_ok;

  expected = model_add (s, chunk, known_slice, &model_ok);
  whole = chp_chunk_assembler_add (s->assembler, chunk, s->now_ms, &error);

  CHECK ((error == NULL) == model_ok, "transfer %s chunk %" G_GINT64_FORMAT ": assembler %s, "
         "model %s", chunk->transfer_id, chunk->index,
         error ? error->message : "accepted", model_ok ? "accepts" : "refuses");
  CHECK (error == NULL || whole == NULL, "a whole message and an error");
  CHECK ((whole == NULL) == (expected == NULL), "transfer %s: assembler %s, model %s",
         chunk->transfer_id, whole ? "complete" : "incomplete",
         expected ? "complete" : "incomplete");
  check_counts (s);

  if (whole != NULL)
    {
      g_autoptr(ChpFrame) inner = NULL;
      gsize len;
      const char *data = g_bytes_get_data (whole, &len);

      CHECK ((gint64) len == chunk->original_bytes, "whole is %" G_GSIZE_FORMAT " bytes, not %"
             G_GINT64_FORMAT, len, chunk->original_bytes);
      CHECK (g_bytes_equal (whole, expected), "the reassembled bytes differ from the slices");

      /* What handle_chunk() does next with a complete message. */
      inner = chp_frame_parse (data, len, NULL);
      (void) inner;
    }
}

static gboolean
parse_i64 (const char  *text,
           gint64       min,
           gint64       max,
           gint64      *out,
           const char **end)
{
  char *e = NULL;
  gint64 v = g_ascii_strtoll (text, &e, 10);

  if (e == text)
    return FALSE;
  *out = CLAMP (v, min, max);
  if (end != NULL)
    *end = e;
  return TRUE;
}

/* Encoding a 256 KiB slice costs more than everything else a step does, and mutated inputs
 * ask for the same slices again and again: keep the last few, across inputs. */
static GHashTable *slice_cache; /* "bytes:index:delta" -> Slice */

typedef struct
{
  GBytes *bytes;
  char   *b64;
} Slice;

static void
slice_free (Slice *slice)
{
  g_bytes_unref (slice->bytes);
  g_free (slice->b64);
  g_free (slice);
}

static const Slice *
get_slice (gint64 bytes,
           gint64 index,
           gint64 delta)
{
  g_autofree char *key = g_strdup_printf ("%" G_GINT64_FORMAT ":%" G_GINT64_FORMAT ":%"
                                          G_GINT64_FORMAT, bytes, index, delta);
  Slice *slice = g_hash_table_lookup (slice_cache, key);
  gint64 offset = index * (gint64) CHP_CHUNK_SIZE;
  gint64 len;
  guint8 *data;

  if (slice != NULL)
    return slice;

  if (g_hash_table_size (slice_cache) >= 256)
    g_hash_table_remove_all (slice_cache);

  len = offset < bytes ? MIN (CHP_CHUNK_SIZE, bytes - offset) : 0;
  len = MAX (len + delta, 0);
  data = g_malloc (MAX (len, 1));
  for (gint64 i = 0; i < len; i++)
    data[i] = (guint8) canon_byte (bytes, offset + i);

  slice = g_new0 (Slice, 1);
  slice->bytes = g_bytes_new_take (data, (gsize) len);
  slice->b64 = chp_b64url_encode (data, (gsize) len);
  g_hash_table_insert (slice_cache, g_steal_pointer (&key), slice);

  return slice;
}

/* "!<id> <index> <total> <bytes> [<delta>]" */
static void
synth_chunk (State      *s,
             const char *line)
{
  g_auto(GStrv) parts = g_strsplit (line + 1, " ", 6);
  g_autoptr(ChpFrame) frame = NULL;
  gint64 index, total, bytes, delta = 0;
  const Slice *slice;
  guint n = g_strv_length (parts);

  if (n < 4 || s->n_synth >= MAX_SYNTH_CHUNKS)
    return;

  /* chp_frame_build_chunk() is documented for base64url ids only. */
  if (parts[0][0] == '\0' || strlen (parts[0]) > 128 ||
      strspn (parts[0], b64url_chars) != strlen (parts[0]))
    return;

  /* Ranges the parser accepts, so every built frame must parse. */
  if (!parse_i64 (parts[1], 0, G_MAXINT32, &index, NULL) ||
      !parse_i64 (parts[2], 1, G_MAXINT32, &total, NULL) ||
      !parse_i64 (parts[3], 1, 2 * CHP_CHUNK_MAX_MESSAGE, &bytes, NULL))
    return;
  if (n >= 5)
    parse_i64 (parts[4], -9, 9, &delta, NULL);

  s->n_synth++;
  slice = get_slice (bytes, index, delta);

  if (s->n_synth <= PARSED_SYNTH_CHUNKS)
    {
      gsize len;
      const guint8 *data = g_bytes_get_data (slice->bytes, &len);
      g_autofree char *text = chp_frame_build_chunk (parts[0], index, total, bytes, data, len);
      g_autoptr(GError) error = NULL;

      /* The builder and the parser must agree: what the engine sends, a peer reads back. */
      frame = chp_frame_parse (text, strlen (text), &error);
      CHECK (frame != NULL, "chp_frame_build_chunk built a frame that does not parse: %s",
             error->message);
      CHECK (frame->type == CHP_FRAME_CHUNK && frame->index == index && frame->total == total &&
             frame->original_bytes == bytes && g_str_equal (frame->transfer_id, parts[0]) &&
             g_str_equal (frame->chunk_data, slice->b64),
             "the built chunk parsed to other values");
    }
  else
    {
      /* The parsed form of what the builder would write, without the 342 KiB round trip. */
      frame = g_new0 (ChpFrame, 1);
      frame->type = CHP_FRAME_CHUNK;
      frame->type_name = "chunk";
      frame->transfer_id = parts[0];
      frame->index = index;
      frame->total = total;
      frame->original_bytes = bytes;
      frame->chunk_data = slice->b64;
    }

  add_chunk (s, frame, slice->bytes);
}

static void
expire (State *s)
{
  GHashTableIter iter;
  Model *m;
  guint expected = 0;
  guint dropped;

  g_hash_table_iter_init (&iter, s->model);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &m))
    {
      if (s->now_ms - m->last_activity_ms >= CHP_CHUNK_TIMEOUT_MS)
        {
          s->pending -= m->original_bytes;
          g_hash_table_iter_remove (&iter);
          expected++;
        }
    }

  dropped = chp_chunk_assembler_expire (s->assembler, s->now_ms);
  CHECK (dropped == expected, "expire dropped %u, model %u", dropped, expected);
  check_counts (s);
}

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init ();
  slice_cache = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                       (GDestroyNotify) slice_free);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  State s = { 0 };
  gsize start = 0;

  s.assembler = chp_chunk_assembler_new ();
  s.model = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, (GDestroyNotify) model_free);
  s.now_ms = START_MS;

  while (start <= size)
    {
      const char *line = (const char *) data + start;
      const char *nl = memchr (line, '\n', size - start);
      gsize len = nl ? (gsize) (nl - line) : size - start;
      g_autofree char *copy = NULL;

      start += len + 1;
      if (len > 0 && line[len - 1] == '\r')
        len--;
      if (len == 0)
        continue;

      /* Steps are read as C strings; the frame parser gets the exact bytes. */
      if (line[0] == '+')
        {
          gint64 ms;

          copy = g_strndup (line, len);
          if (parse_i64 (copy + 1, 0, 1000000000, &ms, NULL))
            {
              s.now_ms += ms;
              expire (&s);
            }
        }
      else if (line[0] == '!')
        {
          copy = g_strndup (line, len);
          synth_chunk (&s, copy);
        }
      else
        {
          g_autoptr(ChpFrame) frame = chp_frame_parse (line, len, NULL);

          if (frame != NULL && frame->type == CHP_FRAME_CHUNK)
            add_chunk (&s, frame, NULL);
        }
    }

  /* Whatever a peer left half-sent is gone 30 s later, budget and all. */
  s.now_ms += CHP_CHUNK_TIMEOUT_MS;
  expire (&s);
  CHECK (chp_chunk_assembler_get_n_transfers (s.assembler) == 0, "transfers left after expiry");
  CHECK (chp_chunk_assembler_get_pending_bytes (s.assembler) == 0, "bytes left after expiry");

  chp_chunk_assembler_free (s.assembler);
  g_hash_table_unref (s.model);

  return 0;
}
