/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-json-reader.c: the one strict JSON reader — the bridge's frames, the agents' lines and
 * the two relays' first messages all go through it. GLib and json-glib only, so the relays can
 * link it without the core. */
#include "config.h"

#include "chp-json-reader.h"

#include "chp-protocol-error.h"

#include <math.h>
#include <string.h>

/* A strict JSON reader (RFC 8259) that builds json-glib nodes. json-glib 1.6's parser is a
 * GScanner: it accepts several top-level values and `var x = …` (and leaks every value after
 * the first), C escapes such as "\1" and lone surrogates (stored as invalid UTF-8), leaks the
 * string it was building on a malformed surrogate pair, turns 1e400 into inf, echoes input into
 * its error messages, and costs 8 µs to set up for a 100-byte frame. This reads exactly one
 * value, refuses everything JSON.parse refuses, never echoes input, and copies long strings
 * with memcpy. It also checks that strings are UTF-8; nothing else in the grammar may be
 * anything but ASCII, and NUL is refused everywhere. */

typedef struct
{
  const char *start;
  const char *p;
  const char *end;
  guint       depth;
  guint       max_depth;
  const char *problem;   /* static text; never input */
  /* The text is the caller's to change: a string without escapes is ended in place (its
   * closing quote becomes a NUL, behind the reader) instead of being copied before json-glib
   * copies it again. For a 16 MiB message, that is one copy and 16 MiB of fresh pages less. */
  gboolean    in_place;
} Reader;

static JsonNode *read_value (Reader *r);

static gboolean
reader_fail (Reader     *r,
             const char *problem)
{
  if (r->problem == NULL)
    r->problem = problem;
  return FALSE;
}

static void
skip_space (Reader *r)
{
  while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
    r->p++;
}

static int
read_hex4 (Reader *r)
{
  int v = 0;

  if (r->end - r->p < 4)
    return -1;
  for (int i = 0; i < 4; i++)
    {
      int d = g_ascii_xdigit_value (r->p[i]);

      if (d < 0)
        return -1;
      v = (v << 4) | d;
    }
  r->p += 4;
  return v;
}

/* The bytes that end a clean run inside a string: the quote, the backslash, control characters
 * (refused) and the first byte of anything non-ASCII (checked). A table, because this loop runs
 * over every byte of a 16 MiB message several times. */
static const guint8 string_stop[256] = {
  [0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xff] = 1,
};

/* Eight bytes at a time over the long clean runs that make up big messages (a chunk's 342 KiB of
 * base64url, a page's text). Each test is exact for "is there such a byte in the word", which is
 * all that is asked; the byte loop then finds which one. */
#define BYTES_1   G_GUINT64_CONSTANT (0x0101010101010101)
#define BYTES_80  G_GUINT64_CONSTANT (0x8080808080808080)

static inline gboolean
word_has_byte (guint64 w,
               guint8  b)
{
  guint64 x = w ^ (BYTES_1 * b);

  return ((x - BYTES_1) & ~x & BYTES_80) != 0;
}

/* Sixteen bytes at a time first, with GCC's generic vectors (SSE2 on x86-64, NEON on arm64,
 * plain words elsewhere): the scans of chunk data and of a reassembled message read every byte
 * of a 16 MiB transfer twice each way, and words of eight left them a tenth of the round trip. */
typedef guint8 ChpByteVec __attribute__ ((vector_size (16)));
typedef gint8  ChpSByteVec __attribute__ ((vector_size (16)));

/* A quote, a backslash or a control character; with @or_non_ascii, any byte >= 0x80 too. */
static inline const char *
skip_clean_words (const char *p,
                  const char *end,
                  gboolean    or_non_ascii)
{
  while (end - p >= 16)
    {
      ChpByteVec v;
      ChpSByteVec hit;
      guint64 lanes[2];

      memcpy (&v, p, sizeof v);
      hit = (ChpSByteVec) ((v == '"') | (v == '\\'));
      /* As signed bytes, those >= 0x80 are negative: one compare for both ends. */
      hit |= (ChpSByteVec) (or_non_ascii ? ((ChpSByteVec) v < 0x20) : (v < 0x20));
      memcpy (lanes, &hit, sizeof lanes);
      if ((lanes[0] | lanes[1]) != 0)
        break;
      p += 16;
    }

  while (end - p >= 8)
    {
      guint64 w;

      memcpy (&w, p, sizeof w);
      if ((or_non_ascii && (w & BYTES_80) != 0) ||
          /* a byte below 0x20 (exact for any byte values: Bit Twiddling Hacks' hasless) */
          ((w - BYTES_1 * 0x20) & ~w & BYTES_80) != 0 ||
          word_has_byte (w, '"') || word_has_byte (w, '\\'))
        break;
      p += 8;
    }

  return p;
}

/* For the frame writer, which looks for the same bytes when it escapes a string. */
const char *
chp_json_skip_clean (const char *p,
                     const char *end,
                     gboolean    or_non_ascii)
{
  return skip_clean_words (p, end, or_non_ascii);
}

/* At the opening quote. Returns: (nullable): the UTF-8 string, either in place in the text or
 * a copy, which is also put in @copy for the caller to free. */
static const char *
read_string (Reader  *r,
             char   **copy)
{
  GString *out = NULL;
  const char *run;

  r->p++;
  run = r->p;
  for (;;)
    {
      const char *q = r->p;
      gunichar u;

      /* The common case: a long run with nothing to unescape. Non-ASCII stops the scan only
       * to be validated where it stands: this is the frame's only UTF-8 check, since outside
       * strings the grammar admits ASCII alone. */
      for (;;)
        {
          q = skip_clean_words (q, r->end, TRUE);
          while (q < r->end && !string_stop[(guchar) *q])
            q++;
          if (q == r->end || (guchar) *q < 0x80)
            break;
          if ((gint32) g_utf8_get_char_validated (q, r->end - q) < 0)
            {
              r->p = q;
              reader_fail (r, "a string that is not UTF-8");
              goto fail;
            }
          q = g_utf8_next_char (q);
        }
      r->p = q;
      if (q == r->end)
        goto fail_unterminated;
      if ((guchar) *q < 0x20)
        {
          reader_fail (r, "a control character in a string");
          goto fail;
        }
      if (*q == '"')
        break;

      /* A backslash. */
      if (out == NULL)
        out = g_string_sized_new ((q - run) + 16);
      g_string_append_len (out, run, q - run);
      if (++r->p == r->end)
        goto fail_unterminated;
      switch (*r->p++)
        {
        case '"': g_string_append_c (out, '"'); break;
        case '\\': g_string_append_c (out, '\\'); break;
        case '/': g_string_append_c (out, '/'); break;
        case 'b': g_string_append_c (out, '\b'); break;
        case 'f': g_string_append_c (out, '\f'); break;
        case 'n': g_string_append_c (out, '\n'); break;
        case 'r': g_string_append_c (out, '\r'); break;
        case 't': g_string_append_c (out, '\t'); break;
        case 'u':
          {
            int hi = read_hex4 (r);

            if (hi < 0)
              {
                reader_fail (r, "a malformed \\u escape");
                goto fail;
              }
            u = hi;
            if (hi >= 0xdc00 && hi <= 0xdfff)
              {
                reader_fail (r, "a lone surrogate in a string");
                goto fail;
              }
            if (hi >= 0xd800 && hi <= 0xdbff)
              {
                int lo = -1;

                if (r->end - r->p >= 2 && r->p[0] == '\\' && r->p[1] == 'u')
                  {
                    r->p += 2;
                    lo = read_hex4 (r);
                  }
                if (lo < 0xdc00 || lo > 0xdfff)
                  {
                    reader_fail (r, "a lone surrogate in a string");
                    goto fail;
                  }
                u = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
              }
            /* Strings are C strings here, as in json-glib: U+0000 cannot be carried. */
            if (u == 0)
              {
                reader_fail (r, "\\u0000 in a string");
                goto fail;
              }
            g_string_append_unichar (out, u);
          }
          break;
        default:
          reader_fail (r, "an invalid escape in a string");
          goto fail;
        }
      run = r->p;
    }

  /* At the closing quote. */
  {
    const char *s;

    *copy = NULL;
    if (out == NULL && r->in_place)
      {
        *(char *) r->p = '\0';
        s = run;
      }
    else if (out == NULL)
      s = *copy = g_strndup (run, r->p - run);
    else
      {
        g_string_append_len (out, run, r->p - run);
        s = *copy = g_string_free (g_steal_pointer (&out), FALSE);
      }
    r->p++;
    return s;
  }

fail_unterminated:
  reader_fail (r, "an unterminated string");
fail:
  if (out != NULL)
    g_string_free (out, TRUE);
  return NULL;
}

static JsonNode *
read_number (Reader *r)
{
  const char *s = r->p;
  gboolean integer = TRUE;
  char buf[64];
  JsonNode *node;

  if (r->p < r->end && *r->p == '-')
    r->p++;
  if (r->p < r->end && *r->p == '0')
    r->p++;
  else if (r->p < r->end && *r->p >= '1' && *r->p <= '9')
    while (r->p < r->end && g_ascii_isdigit (*r->p))
      r->p++;
  else
    {
      reader_fail (r, "a malformed number");
      return NULL;
    }
  if (r->p < r->end && *r->p == '.')
    {
      integer = FALSE;
      r->p++;
      if (r->p == r->end || !g_ascii_isdigit (*r->p))
        {
          reader_fail (r, "a malformed number");
          return NULL;
        }
      while (r->p < r->end && g_ascii_isdigit (*r->p))
        r->p++;
    }
  if (r->p < r->end && (*r->p == 'e' || *r->p == 'E'))
    {
      integer = FALSE;
      r->p++;
      if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
        r->p++;
      if (r->p == r->end || !g_ascii_isdigit (*r->p))
        {
          reader_fail (r, "a malformed number");
          return NULL;
        }
      while (r->p < r->end && g_ascii_isdigit (*r->p))
        r->p++;
    }

  if ((gsize) (r->p - s) >= sizeof buf)
    {
      reader_fail (r, "a number with too many digits");
      return NULL;
    }
  memcpy (buf, s, r->p - s);
  buf[r->p - s] = '\0';

  node = json_node_alloc ();
  if (integer)
    {
      char *end;
      gint64 v;

      errno = 0;
      v = g_ascii_strtoll (buf, &end, 10);
      if (errno == 0)
        return json_node_init_int (node, v);
      /* Beyond 64 bits: a double, as JavaScript reads it. */
    }

  {
    double d = g_ascii_strtod (buf, NULL);

    if (!isfinite (d))
      {
        json_node_free (node);
        reader_fail (r, "a number out of range");
        return NULL;
      }
    return json_node_init_double (node, d);
  }
}

static gboolean
read_literal (Reader     *r,
              const char *word)
{
  gsize n = strlen (word);

  if ((gsize) (r->end - r->p) < n || memcmp (r->p, word, n) != 0)
    return reader_fail (r, "an unexpected character");
  r->p += n;
  return TRUE;
}

static JsonNode *
read_object (Reader *r)
{
  g_autoptr(JsonObject) object = json_object_new ();

  r->p++;
  skip_space (r);
  if (r->p < r->end && *r->p == '}')
    {
      r->p++;
      return json_node_init_object (json_node_alloc (), object);
    }

  for (;;)
    {
      g_autofree char *name_copy = NULL;
      const char *name;
      JsonNode *value;

      skip_space (r);
      if (r->p == r->end || *r->p != '"')
        {
          reader_fail (r, "a member name must be a string");
          return NULL;
        }
      if ((name = read_string (r, &name_copy)) == NULL)
        return NULL;
      skip_space (r);
      if (r->p == r->end || *r->p != ':')
        {
          reader_fail (r, "a missing ':'");
          return NULL;
        }
      r->p++;
      if ((value = read_value (r)) == NULL)
        return NULL;
      /* A repeated name keeps the last value, as JSON.parse does. */
      json_object_set_member (object, name, value);
      skip_space (r);
      if (r->p < r->end && *r->p == ',')
        {
          r->p++;
          continue;
        }
      if (r->p < r->end && *r->p == '}')
        {
          r->p++;
          return json_node_init_object (json_node_alloc (), object);
        }
      reader_fail (r, "a missing ',' or '}'");
      return NULL;
    }
}

static JsonNode *
read_array (Reader *r)
{
  g_autoptr(JsonArray) array = json_array_new ();

  r->p++;
  skip_space (r);
  if (r->p < r->end && *r->p == ']')
    {
      r->p++;
      return json_node_init_array (json_node_alloc (), array);
    }

  for (;;)
    {
      JsonNode *value = read_value (r);

      if (value == NULL)
        return NULL;
      json_array_add_element (array, value);
      skip_space (r);
      if (r->p < r->end && *r->p == ',')
        {
          r->p++;
          continue;
        }
      if (r->p < r->end && *r->p == ']')
        {
          r->p++;
          return json_node_init_array (json_node_alloc (), array);
        }
      reader_fail (r, "a missing ',' or ']'");
      return NULL;
    }
}

static JsonNode *
read_value (Reader *r)
{
  JsonNode *node = NULL;

  skip_space (r);
  if (r->p == r->end)
    {
      reader_fail (r, "an unexpected end");
      return NULL;
    }

  switch (*r->p)
    {
    case '{':
    case '[':
      /* Bounded recursion: the depth the protocol allows, and no more. */
      if (++r->depth > r->max_depth)
        {
          reader_fail (r, "nesting deeper than 64 levels");
          return NULL;
        }
      node = *r->p == '{' ? read_object (r) : read_array (r);
      r->depth--;
      return node;

    case '"':
      {
        g_autofree char *copy = NULL;
        const char *s = read_string (r, &copy);

        /* json-glib 1.6 has no way to hand over a string: one memcpy. */
        return s != NULL ? json_node_init_string (json_node_alloc (), s) : NULL;
      }

    case 't':
      return read_literal (r, "true") ? json_node_init_boolean (json_node_alloc (), TRUE) : NULL;
    case 'f':
      return read_literal (r, "false") ? json_node_init_boolean (json_node_alloc (), FALSE) : NULL;
    case 'n':
      return read_literal (r, "null") ? json_node_init_null (json_node_alloc ()) : NULL;

    default:
      if (*r->p == '-' || g_ascii_isdigit (*r->p))
        return read_number (r);
      reader_fail (r, "an unexpected character");
      return NULL;
    }
}

/* Reads one value and nothing after it; @trailing names what came after, for the error. */
static JsonNode *
read_whole (Reader      *r,
            const char  *trailing,
            GError     **error)
{
  g_autoptr(JsonNode) root = read_value (r);

  if (root != NULL)
    {
      skip_space (r);
      if (r->p != r->end)
        {
          json_node_unref (g_steal_pointer (&root));
          reader_fail (r, trailing);
        }
    }

  if (root == NULL)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "Malformed JSON at byte %" G_GSIZE_FORMAT ": %s",
                   (gsize) (r->p - r->start), r->problem ? r->problem : "unknown error");
      return NULL;
    }

  return g_steal_pointer (&root);
}

/**
 * chp_json_read:
 * @text: (array length=len): UTF-8 JSON text, not necessarily nul-terminated
 *
 * Exactly one JSON value of any type, read by the strict reader above (RFC 8259, nesting at
 * most %CHP_JSON_MAX_DEPTH, paired surrogates, finite numbers, no NUL). The error never quotes
 * the input. For the agent endpoint's lines, which are JSON-RPC rather than frames.
 *
 * Returns: (transfer full) (nullable): the value, or %NULL with a %CHP_PROTOCOL_ERROR
 */
JsonNode *
chp_json_read (const char  *text,
               gsize        len,
               GError     **error)
{
  Reader r = { text, text, text + len, 0, CHP_JSON_MAX_DEPTH, NULL, FALSE };

  g_return_val_if_fail (text != NULL || len == 0, NULL);

  return read_whole (&r, "data after the value", error);
}

/**
 * chp_json_read_in_place:
 * @text: (array length=len): as for chp_json_read(), but the caller's to change
 *
 * chp_json_read() for a text the caller no longer needs as it is (a reassembled message):
 * strings without escapes are ended in place rather than copied twice.
 *
 * Returns: (transfer full) (nullable): the value, or %NULL with a %CHP_PROTOCOL_ERROR
 */
JsonNode *
chp_json_read_in_place (char        *text,
                        gsize        len,
                        GError     **error)
{
  Reader r = { text, text, text + len, 0, CHP_JSON_MAX_DEPTH, NULL, TRUE };

  g_return_val_if_fail (text != NULL || len == 0, NULL);

  return read_whole (&r, "data after the value", error);
}


/**
 * chp_json_read_shallow:
 * @max_depth: the deepest nesting allowed, at most %CHP_JSON_MAX_DEPTH
 *
 * chp_json_read() for a message whose shape is known to be flat (the native host's
 * `native_open`), so anything deeper is refused as malformed.
 *
 * Returns: (transfer full) (nullable): the value, or %NULL with a %CHP_PROTOCOL_ERROR
 */
JsonNode *
chp_json_read_shallow (const char  *text,
                       gsize        len,
                       guint        max_depth,
                       GError     **error)
{
  Reader r = { text, text, text + len, 0, MIN (max_depth, CHP_JSON_MAX_DEPTH), NULL, FALSE };

  g_return_val_if_fail (text != NULL || len == 0, NULL);

  return read_whole (&r, "data after the value", error);
}
