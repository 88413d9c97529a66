/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-chunk.c: reassembly, and every way a sender can get chunking wrong. */
#include "config.h"

#include <string.h>

#include "chp-chunk-assembler.h"
#include "chp-protocol-error.h"

static char *
big_message (gsize len)
{
  char *text = g_malloc (len + 1);

  for (gsize i = 0; i < len; i++)
    text[i] = 'a' + (i * 7) % 26;
  text[len] = '\0';

  return text;
}

static ChpFrame *
parse (const char *text)
{
  g_autoptr(GError) error = NULL;
  ChpFrame *frame = chp_frame_parse (text, strlen (text), &error);

  g_assert_no_error (error);
  return frame;
}

static GBytes *
feed (ChpChunkAssembler *assembler,
      const char        *frame_text,
      GError           **error)
{
  g_autoptr(ChpFrame) frame = parse (frame_text);

  return chp_chunk_assembler_add (assembler, frame, 1000, error);
}

static void
test_roundtrip (void)
{
  const gsize sizes[] = { 1, 262144, 262145, 600000, 16 * 1024 * 1024 };

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      g_autofree char *message = big_message (sizes[s]);
      g_autoptr(GPtrArray) frames = chp_chunk_split (message, sizes[s], "t1");
      g_autoptr(ChpChunkAssembler) assembler = chp_chunk_assembler_new ();
      g_autoptr(GBytes) whole = NULL;

      g_assert_cmpuint (frames->len, ==, (sizes[s] + CHP_CHUNK_SIZE - 1) / CHP_CHUNK_SIZE);
      for (guint i = 0; i < frames->len; i++)
        {
          g_autoptr(GError) error = NULL;
          GBytes *out = feed (assembler, g_ptr_array_index (frames, i), &error);

          g_assert_no_error (error);
          /* Each frame stays far below the 640 KiB frame limit. */
          g_assert_cmpuint (strlen (g_ptr_array_index (frames, i)), <, 400 * 1024);
          if (i + 1 < frames->len)
            g_assert_null (out);
          else
            whole = out;
        }

      g_assert_nonnull (whole);
      g_assert_cmpuint (g_bytes_get_size (whole), ==, sizes[s]);
      g_assert_cmpmem (g_bytes_get_data (whole, NULL), sizes[s], message, sizes[s]);
      g_assert_cmpuint (chp_chunk_assembler_get_n_transfers (assembler), ==, 0);
      g_assert_cmpuint (chp_chunk_assembler_get_pending_bytes (assembler), ==, 0);
    }
}

static void
collect_cb (const char *frame,
            gsize       len,
            gpointer    user_data)
{
  g_assert_cmpuint (strlen (frame), ==, len);
  g_ptr_array_add (user_data, g_strdup (frame));
}

/* The streaming split writes every frame into one reused buffer: each frame it hands over is
 * complete and the same as the collected split's, and fits the size it reserved. */
static void
test_split_foreach (void)
{
  const gsize sizes[] = { 1, 2, 3, 262143, 262144, 262145, 600000, 16 * 1024 * 1024 };

  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      g_autofree char *message = big_message (sizes[s]);
      g_autoptr(GPtrArray) frames = chp_chunk_split (message, sizes[s], "f-1_x");
      g_autoptr(GPtrArray) streamed = g_ptr_array_new_with_free_func (g_free);

      chp_chunk_split_foreach (message, sizes[s], "f-1_x", collect_cb, streamed);
      g_assert_cmpuint (streamed->len, ==, frames->len);
      for (guint i = 0; i < frames->len; i++)
        {
          const char *frame = g_ptr_array_index (streamed, i);

          g_assert_cmpstr (frame, ==, g_ptr_array_index (frames, i));
          g_assert_cmpuint (strlen (frame), <,
                            chp_frame_chunk_len_max ("f-1_x", MIN (sizes[s], CHP_CHUNK_SIZE)));
        }
    }
}

static void
assert_error (ChpChunkAssembler *assembler,
              const char        *frame_text,
              int                code)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) out = feed (assembler, frame_text, &error);

  g_assert_null (out);
  g_assert_error (error, CHP_PROTOCOL_ERROR, code);
}

static void
test_gap_duplicate_total (void)
{
  g_autofree char *message = big_message (700000);
  g_autoptr(GPtrArray) frames = chp_chunk_split (message, 700000, "t2");
  g_autoptr(ChpChunkAssembler) assembler = chp_chunk_assembler_new ();

  g_assert_cmpuint (frames->len, ==, 3);

  /* A gap: 0 then 2. The transfer is dropped. */
  g_assert_null (feed (assembler, g_ptr_array_index (frames, 0), NULL));
  assert_error (assembler, g_ptr_array_index (frames, 2), CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  g_assert_cmpuint (chp_chunk_assembler_get_n_transfers (assembler), ==, 0);

  /* A duplicate: 0, 0. */
  g_assert_null (feed (assembler, g_ptr_array_index (frames, 0), NULL));
  assert_error (assembler, g_ptr_array_index (frames, 0), CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  g_assert_cmpuint (chp_chunk_assembler_get_n_transfers (assembler), ==, 0);

  /* A start that is not 0. */
  assert_error (assembler, g_ptr_array_index (frames, 1), CHP_PROTOCOL_ERROR_INVALID_PARAMS);

  /* A total that does not match the size. */
  assert_error (assembler,
                "{\"type\":\"chunk\",\"transferId\":\"t3\",\"index\":0,\"total\":5,"
                "\"originalBytes\":10,\"data\":\"AAAAAAAAAAAAAA\"}",
                CHP_PROTOCOL_ERROR_INVALID_PARAMS);

  /* A slice of the wrong length. */
  assert_error (assembler,
                "{\"type\":\"chunk\",\"transferId\":\"t4\",\"index\":0,\"total\":1,"
                "\"originalBytes\":10,\"data\":\"AAAA\"}",
                CHP_PROTOCOL_ERROR_INVALID_PARAMS);

  /* Over 16 MiB. */
  assert_error (assembler,
                "{\"type\":\"chunk\",\"transferId\":\"t5\",\"index\":0,\"total\":65,"
                "\"originalBytes\":16777217,\"data\":\"AA\"}",
                CHP_PROTOCOL_ERROR_TOO_LARGE);

  g_assert_cmpuint (chp_chunk_assembler_get_n_transfers (assembler), ==, 0);
}

static void
test_budget_and_expiry (void)
{
  g_autoptr(ChpChunkAssembler) assembler = chp_chunk_assembler_new ();
  g_autofree char *message = big_message (3 * 1024 * 1024);

  /* Eight open transfers of 3 MiB would be 24 MiB: the sixth breaks the 16 MiB budget. */
  for (guint i = 0; i < 5; i++)
    {
      g_autofree char *id = g_strdup_printf ("b%u", i);
      g_autoptr(GPtrArray) frames = chp_chunk_split (message, 3 * 1024 * 1024, id);
      g_autoptr(GError) error = NULL;

      g_assert_null (feed (assembler, g_ptr_array_index (frames, 0), &error));
      g_assert_no_error (error);
    }
  {
    g_autoptr(GPtrArray) frames = chp_chunk_split (message, 3 * 1024 * 1024, "b5");

    assert_error (assembler, g_ptr_array_index (frames, 0), CHP_PROTOCOL_ERROR_TOO_LARGE);
  }
  g_assert_cmpuint (chp_chunk_assembler_get_n_transfers (assembler), ==, 5);

  /* Idle for 30 s: all dropped, budget back. */
  g_assert_cmpuint (chp_chunk_assembler_expire (assembler, 1000 + CHP_CHUNK_TIMEOUT_MS), ==, 5);
  g_assert_cmpuint (chp_chunk_assembler_get_pending_bytes (assembler), ==, 0);

  /* More than eight transfers at once: busy. */
  for (guint i = 0; i < 8; i++)
    {
      g_autofree char *id = g_strdup_printf ("c%u", i);
      g_autoptr(GPtrArray) frames = chp_chunk_split (message, 600000, id);

      g_assert_null (feed (assembler, g_ptr_array_index (frames, 0), NULL));
    }
  {
    g_autoptr(GPtrArray) frames = chp_chunk_split (message, 600000, "c8");

    assert_error (assembler, g_ptr_array_index (frames, 0), CHP_PROTOCOL_ERROR_BUSY);
  }
}

/* A large message's buffer is kept for the next one, at most one per assembler, and dropped
 * after 30 s without a large message. */
static void
test_kept_buffer (void)
{
  g_autoptr(ChpChunkAssembler) assembler = chp_chunk_assembler_new ();
  gsize len = 3 * 1024 * 1024;
  g_autofree char *message = big_message (len);
  g_autoptr(GPtrArray) frames = chp_chunk_split (message, len, "k1");
  GString *whole = NULL;
  GString *small, *again;
  char *kept;

  /* Small buffers are not worth keeping. */
  small = chp_chunk_assembler_take_buffer (assembler, 128);
  g_string_append (small, "{}");
  chp_chunk_assembler_recycle (assembler, small, 1000);
  g_assert_cmpuint (chp_chunk_assembler_get_spare_bytes (assembler), ==, 0);

  for (guint i = 0; i < frames->len; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(ChpFrame) frame = parse (g_ptr_array_index (frames, i));

      whole = chp_chunk_assembler_add_string (assembler, frame, 1000, &error);
      g_assert_no_error (error);
      g_assert_true ((whole != NULL) == (i == frames->len - 1));
    }
  g_assert_nonnull (whole);
  g_assert_cmpmem (whole->str, whole->len, message, len);
  kept = whole->str;
  chp_chunk_assembler_recycle (assembler, whole, 1000);
  g_assert_cmpuint (chp_chunk_assembler_get_spare_bytes (assembler), >, len);

  /* Lent out for a small message and back: the same memory, and it does not count as use. */
  small = chp_chunk_assembler_take_buffer (assembler, 128);
  g_assert_true (small->str == kept);
  g_assert_cmpuint (small->len, ==, 0);
  g_assert_cmpuint (chp_chunk_assembler_get_spare_bytes (assembler), ==, 0);
  g_string_append (small, "{\"type\":\"ping\"}");
  chp_chunk_assembler_recycle (assembler, small, 20000);

  /* The next transfer reassembles into it. */
  for (guint i = 0; i < frames->len; i++)
    {
      g_autoptr(ChpFrame) frame = parse (g_ptr_array_index (frames, i));

      whole = chp_chunk_assembler_add_string (assembler, frame, 1000, NULL);
    }
  g_assert_nonnull (whole);
  g_assert_true (whole->str == kept);
  g_assert_cmpmem (whole->str, whole->len, message, len);
  chp_chunk_assembler_recycle (assembler, whole, 2000);

  /* Too small for the next message: a new buffer, and the kept one stays. */
  again = chp_chunk_assembler_take_buffer (assembler, 16 * 1024 * 1024);
  g_assert_true (again->str != kept);
  g_assert_cmpuint (chp_chunk_assembler_get_spare_bytes (assembler), >, len);
  g_string_free (again, TRUE);

  /* 30 s after the last large message, not after the ping. */
  chp_chunk_assembler_expire (assembler, 2000 + CHP_CHUNK_TIMEOUT_MS - 1);
  g_assert_cmpuint (chp_chunk_assembler_get_spare_bytes (assembler), >, len);
  chp_chunk_assembler_expire (assembler, 2000 + CHP_CHUNK_TIMEOUT_MS);
  g_assert_cmpuint (chp_chunk_assembler_get_spare_bytes (assembler), ==, 0);
}

/* What one frame did to an assembler, to compare two assemblers. */
static char *
outcome (ChpChunkAssembler *assembler,
         GString           *whole,
         const GError      *error)
{
  g_autofree char *digest = whole ? g_compute_checksum_for_data (G_CHECKSUM_SHA256,
                                                                 (const guint8 *) whole->str,
                                                                 whole->len)
                                  : NULL;

  return g_strdup_printf ("whole %s (%" G_GSIZE_FORMAT " bytes); error %s %d %s; "
                          "%u open, %" G_GSIZE_FORMAT " pending",
                          digest ? digest : "none", whole ? whole->len : 0,
                          error ? g_quark_to_string (error->domain) : "none",
                          error ? error->code : 0, error ? error->message : "",
                          chp_chunk_assembler_get_n_transfers (assembler),
                          chp_chunk_assembler_get_pending_bytes (assembler));
}

/* A chunk decoded by itself (on the bridge's worker thread) and then added is the same, to the
 * assembler and to the sender, as one decoded in place: the same whole message, the same errors
 * with the same messages in the same order of checks, the same transfers left open. */
static void
test_decoded_like_in_place (void)
{
  g_autofree char *message = big_message (700000);
  g_autoptr(GPtrArray) frames = chp_chunk_split (message, 700000, "d1");
  g_autoptr(ChpChunkAssembler) in_place = chp_chunk_assembler_new ();
  g_autoptr(ChpChunkAssembler) decoded = chp_chunk_assembler_new ();
  const char *script[] = {
    /* Whole, then a gap, a duplicate, a start that is not 0. */
    frames->pdata[0], frames->pdata[1], frames->pdata[2],
    frames->pdata[0], frames->pdata[2],
    frames->pdata[0], frames->pdata[0],
    frames->pdata[1],
    /* A total that does not match the size; a slice of the wrong length; not base64url. */
    "{\"type\":\"chunk\",\"transferId\":\"d3\",\"index\":0,\"total\":5,"
    "\"originalBytes\":10,\"data\":\"AAAAAAAAAAAAAA\"}",
    "{\"type\":\"chunk\",\"transferId\":\"d4\",\"index\":0,\"total\":1,"
    "\"originalBytes\":10,\"data\":\"AAAA\"}",
    "{\"type\":\"chunk\",\"transferId\":\"d5\",\"index\":0,\"total\":1,"
    "\"originalBytes\":3,\"data\":\"A*AA\"}",
    /* Over 16 MiB; a size no slice could have (its own fields disagree). */
    "{\"type\":\"chunk\",\"transferId\":\"d6\",\"index\":0,\"total\":65,"
    "\"originalBytes\":16777217,\"data\":\"AA\"}",
    "{\"type\":\"chunk\",\"transferId\":\"d7\",\"index\":0,\"total\":1,"
    "\"originalBytes\":16777216,\"data\":\"AA\"}",
    /* A transfer that changes its size midway. */
    frames->pdata[0],
    "{\"type\":\"chunk\",\"transferId\":\"d1\",\"index\":1,\"total\":3,"
    "\"originalBytes\":700001,\"data\":\"AA\"}",
    /* And a good one after all that. */
    frames->pdata[0], frames->pdata[1], frames->pdata[2],
  };

  for (guint i = 0; i < G_N_ELEMENTS (script); i++)
    {
      g_autoptr(ChpFrame) frame = parse (script[i]);
      g_autoptr(GBytes) slice = chp_chunk_decode (frame);
      g_autoptr(GError) error_a = NULL;
      g_autoptr(GError) error_b = NULL;
      GString *whole_a = chp_chunk_assembler_add_string (in_place, frame, 1000, &error_a);
      GString *whole_b = chp_chunk_assembler_add_decoded (decoded, frame, slice, 1000, &error_b);
      g_autofree char *a = outcome (in_place, whole_a, error_a);
      g_autofree char *b = outcome (decoded, whole_b, error_b);

      g_test_message ("step %u: %s", i, a);
      g_assert_cmpstr (a, ==, b);
      if (i == 2 || i == G_N_ELEMENTS (script) - 1)
        g_assert_cmpmem (whole_b->str, whole_b->len, message, 700000);
      if (whole_a != NULL)
        g_string_free (whole_a, TRUE);
      if (whole_b != NULL)
        g_string_free (whole_b, TRUE);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/chunk/roundtrip", test_roundtrip);
  g_test_add_func ("/chaperone/chunk/split-foreach", test_split_foreach);
  g_test_add_func ("/chaperone/chunk/gap-duplicate-total", test_gap_duplicate_total);
  g_test_add_func ("/chaperone/chunk/budget-expiry", test_budget_and_expiry);
  g_test_add_func ("/chaperone/chunk/kept-buffer", test_kept_buffer);
  g_test_add_func ("/chaperone/chunk/decoded-like-in-place", test_decoded_like_in_place);

  return g_test_run ();
}
