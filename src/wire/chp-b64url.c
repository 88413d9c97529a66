/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-b64url.c: base64url (RFC 4648 §5, no padding), strict and fast. It lives in the wire layer,
 * under the crypto, because frames and chunked transfers carry it and the relays link only this
 * layer; its errors keep the crypto's domain (CHP_CRYPTO_ERROR_ENCODING), which callers already
 * match on. */
#include "config.h"

#include "chp-b64url.h"

#include <string.h>

G_DEFINE_QUARK (chp-crypto-error-quark, chp_crypto_error)

static const char b64url_alphabet[] =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* Each character's value plus one; 0 for anything outside the alphabet (NUL included). */
static const guint8 b64url_values[256] = {
  ['A'] = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
  25, 26,
  ['a'] = 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48,
  49, 50, 51, 52,
  ['0'] = 53, 54, 55, 56, 57, 58, 59, 60, 61, 62,
  ['-'] = 63,
  ['_'] = 64,
};

/* Both directions run over every byte of a chunked transfer (16 MiB each way, twice per
 * round trip), so they work a word at a time from tables built once:
 *  - encode_pairs[v] is the two characters of the 12-bit value v: three bytes are two lookups
 *    and two 16-bit stores instead of four of each;
 *  - decode_quad[k][c] is character c's 6 bits already shifted to place k of a quad, with bit
 *    24 + k set, and 0 outside the alphabet. The four lookups of a quad OR to its 24 bits, and
 *    their top byte is 0xf exactly when all four characters are in the alphabet: one test per
 *    quad instead of one per character. Errors, offsets and the padding and trailing-bit rules
 *    stay with the careful loop of chp_b64url_decode_to(). */
static char    encode_pairs[4096][2];
static guint32 decode_quad[4][256];

static void
b64url_tables_init (void)
{
  static gsize done = 0;

  if (!g_once_init_enter (&done))
    return;

  for (guint v = 0; v < 4096; v++)
    {
      encode_pairs[v][0] = b64url_alphabet[v >> 6];
      encode_pairs[v][1] = b64url_alphabet[v & 63];
    }
  for (guint k = 0; k < 4; k++)
    for (guint c = 0; c < 256; c++)
      decode_quad[k][c] = b64url_values[c] == 0
                          ? 0
                          : ((guint32) (b64url_values[c] - 1) << (18 - 6 * k)) | (1u << (24 + k));

  g_once_init_leave (&done, 1);
}

gsize
chp_b64url_encoded_len (gsize len)
{
  return len / 3 * 4 + (len % 3 ? len % 3 + 1 : 0);
}

/* Writes straight into a buffer of the final size: chp_b64url_encoded_len (@len) characters,
 * no NUL. Returns the end. */
char *
chp_b64url_encode_to (const guint8 *data,
                      gsize         len,
                      char         *out)
{
  const guint8 *end = data + len;
  char *p = out;

  b64url_tables_init ();

  /* Six bytes from one eight-byte load (so eight must be readable), eight characters out. */
  while (end - data >= 8)
    {
      guint64 w;
      guint32 x, y;

      memcpy (&w, data, sizeof w);
      w = GUINT64_FROM_BE (w);
      x = (guint32) (w >> 40);
      y = (guint32) (w >> 16) & 0xffffff;
      memcpy (p, encode_pairs[x >> 12], 2);
      memcpy (p + 2, encode_pairs[x & 0xfff], 2);
      memcpy (p + 4, encode_pairs[y >> 12], 2);
      memcpy (p + 6, encode_pairs[y & 0xfff], 2);
      data += 6;
      p += 8;
    }
  while (end - data >= 3)
    {
      guint32 v = ((guint32) data[0] << 16) | ((guint32) data[1] << 8) | data[2];

      memcpy (p, encode_pairs[v >> 12], 2);
      memcpy (p + 2, encode_pairs[v & 0xfff], 2);
      data += 3;
      p += 4;
    }
  if (end - data > 0)
    {
      gsize rest = end - data;
      guint32 v = ((guint32) data[0] << 16) | (rest == 2 ? (guint32) data[1] << 8 : 0);

      *p++ = b64url_alphabet[(v >> 18) & 63];
      *p++ = b64url_alphabet[(v >> 12) & 63];
      if (rest == 2)
        *p++ = b64url_alphabet[(v >> 6) & 63];
    }

  return p;
}

char *
chp_b64url_encode (const guint8 *data,
                   gsize         len)
{
  char *out;

  g_return_val_if_fail (data != NULL || len == 0, NULL);

  out = g_malloc (chp_b64url_encoded_len (len) + 1);
  *chp_b64url_encode_to (data, len, out) = '\0';

  return out;
}

static inline guint32
decode_quad_at (const guchar *t)
{
  return decode_quad[0][t[0]] | decode_quad[1][t[1]] | decode_quad[2][t[2]] |
         decode_quad[3][t[3]];
}

/* Strict: no padding, no whitespace, no standard-alphabet characters, and the
 * unused low bits of the last character must be zero, so that every byte string
 * has exactly one accepted spelling (signatures and ids are compared as text).
 * Decodes @text_len characters into exactly @out_len bytes at @out, or fails. */
gboolean
chp_b64url_decode_to (const char  *text,
                      gsize        text_len,
                      guint8      *out,
                      gsize        out_len,
                      GError     **error)
{
  const guchar *t = (const guchar *) text;
  gsize i = 0, n = 0;

  if (text_len % 4 == 1 || text_len / 4 * 3 + (text_len % 4 ? text_len % 4 - 1 : 0) != out_len)
    {
      g_set_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_ENCODING,
                   "Invalid base64url length %" G_GSIZE_FORMAT, text_len);
      return FALSE;
    }

  b64url_tables_init ();

  /* Two quads make six bytes, written with one eight-byte store: the two bytes past them are
   * overwritten by the next store or the loops below, so eight bytes of room must remain. A
   * character outside the alphabet stops the fast loops; the careful loop says where. */
  while (text_len - i >= 8 && out_len - n >= 8)
    {
      guint32 a = decode_quad_at (t + i), b = decode_quad_at (t + i + 4);
      guint64 w;

      if (((a & b) >> 24) != 0xf)
        break;
      w = GUINT64_TO_BE (((guint64) (a & 0xffffff) << 40) | ((guint64) (b & 0xffffff) << 16));
      memcpy (out + n, &w, sizeof w);
      i += 8;
      n += 6;
    }
  while (text_len - i >= 4)
    {
      guint32 v = decode_quad_at (t + i);

      if ((v >> 24) != 0xf)
        break;
      out[n] = v >> 16;
      out[n + 1] = (v >> 8) & 0xff;
      out[n + 2] = v & 0xff;
      i += 4;
      n += 3;
    }

  for (; i < text_len; i += 4)
    {
      gsize k = MIN (4, text_len - i);
      guint32 v = 0;

      for (gsize j = 0; j < k; j++)
        {
          guint8 d = b64url_values[t[i + j]];

          if (d-- == 0)
            {
              g_set_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_ENCODING,
                           "Invalid base64url character at offset %" G_GSIZE_FORMAT, i + j);
              return FALSE;
            }
          v = (v << 6) | d;
        }

      if (k == 4)
        {
          out[n++] = v >> 16;
          out[n++] = (v >> 8) & 0xff;
          out[n++] = v & 0xff;
        }
      else if (k == 3)
        {
          /* 18 bits: two bytes and 2 bits that must be zero. */
          if ((v & 0x3) != 0)
            goto non_canonical;
          out[n++] = v >> 10;
          out[n++] = (v >> 2) & 0xff;
        }
      else
        {
          /* 12 bits: one byte and 4 bits that must be zero. */
          if ((v & 0xf) != 0)
            goto non_canonical;
          out[n++] = v >> 4;
        }
    }

  g_assert (n == out_len);
  return TRUE;

non_canonical:
  g_set_error_literal (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_ENCODING,
                       "Non-canonical base64url (trailing bits set)");
  return FALSE;
}

GBytes *
chp_b64url_decode (const char  *text,
                   GError     **error)
{
  g_autofree guint8 *out = NULL;
  gsize len, out_len;

  g_return_val_if_fail (text != NULL, NULL);

  len = strlen (text);
  if (len % 4 == 1)
    {
      g_set_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_ENCODING,
                   "Invalid base64url length %" G_GSIZE_FORMAT, len);
      return NULL;
    }

  out_len = len / 4 * 3 + (len % 4 ? len % 4 - 1 : 0);
  out = g_malloc (out_len + 1);
  if (!chp_b64url_decode_to (text, len, out, out_len, error))
    return NULL;

  return g_bytes_new_take (g_steal_pointer (&out), out_len);
}

