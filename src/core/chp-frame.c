/* chp-frame.c: parse a frame strictly (types, sizes, nesting) so that nothing past it has to guess. */
#include "config.h"

#include "chp-frame.h"

#include "chp-crypto.h"
#include "chp-protocol-error.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define MAX_ID_LEN 128
#define MAX_NAME_LEN 256

static const struct
{
  const char   *name;
  ChpFrameType  type;
} frame_types[] = {
  { "request", CHP_FRAME_REQUEST },
  { "response", CHP_FRAME_RESPONSE },
  { "event", CHP_FRAME_EVENT },
  { "cancel", CHP_FRAME_CANCEL },
  { "ping", CHP_FRAME_PING },
  { "pong", CHP_FRAME_PONG },
  { "chunk", CHP_FRAME_CHUNK },
  { "error", CHP_FRAME_ERROR },
  { "pair_request", CHP_FRAME_HANDSHAKE },
  { "pair_reveal", CHP_FRAME_HANDSHAKE },
  { "pair_challenge", CHP_FRAME_HANDSHAKE },
  { "pair_pending", CHP_FRAME_HANDSHAKE },
  { "pair_approved", CHP_FRAME_HANDSHAKE },
  { "pair_rejected", CHP_FRAME_HANDSHAKE },
  { "pair_expired", CHP_FRAME_HANDSHAKE },
  { "pair_error", CHP_FRAME_HANDSHAKE },
  { "pair_locked", CHP_FRAME_HANDSHAKE },
  { "challenge", CHP_FRAME_HANDSHAKE },
  { "auth", CHP_FRAME_HANDSHAKE },
  { "hello_ack", CHP_FRAME_HANDSHAKE },
};

void
chp_frame_free (ChpFrame *frame)
{
  if (frame == NULL)
    return;

  g_clear_pointer (&frame->root, json_node_unref);
  g_free (frame);
}

gboolean
chp_frame_is_valid_id (const char *id)
{
  gsize len;

  if (id == NULL)
    return FALSE;

  len = strlen (id);
  if (len == 0 || len > MAX_ID_LEN)
    return FALSE;

  /* Ids are echoed into logs and the UI: printable ASCII only. */
  for (gsize i = 0; i < len; i++)
    if (id[i] < 0x21 || id[i] > 0x7e)
      return FALSE;

  return TRUE;
}

static gboolean
bad (GError     **error,
     const char  *message)
{
  g_set_error_literal (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS, message);
  return FALSE;
}

/* A strict JSON reader (RFC 8259) that builds json-glib nodes. json-glib 1.6's parser is a
 * GScanner: it accepts several top-level values and `var x = …` (and leaks every value after
 * the first), C escapes such as "\1" and lone surrogates (stored as invalid UTF-8), leaks the
 * string it was building on a malformed surrogate pair, turns 1e400 into inf, echoes input into
 * its error messages, and costs 8 µs to set up for a 100-byte frame. This reads exactly one
 * object, refuses everything JSON.parse refuses, never echoes input, and copies long strings
 * with memcpy. It also checks that strings are UTF-8; nothing else in the grammar may be
 * anything but ASCII, and NUL is refused everywhere. */

typedef struct
{
  const char *start;
  const char *p;
  const char *end;
  guint       depth;
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
      if (++r->depth > CHP_FRAME_MAX_DEPTH)
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
 * most %CHP_FRAME_MAX_DEPTH, paired surrogates, finite numbers, no NUL). The error never quotes
 * the input. For the agent endpoint's lines, which are JSON-RPC rather than frames.
 *
 * Returns: (transfer full) (nullable): the value, or %NULL with a %CHP_PROTOCOL_ERROR
 */
JsonNode *
chp_json_read (const char  *text,
               gsize        len,
               GError     **error)
{
  Reader r = { text, text, text + len, 0, NULL, FALSE };

  g_return_val_if_fail (text != NULL || len == 0, NULL);

  return read_whole (&r, "data after the value", error);
}

/* Returns: (transfer full) (nullable): the one top-level object of @text */
static JsonNode *
read_frame_json (const char  *text,
                 gsize        len,
                 gboolean     in_place,
                 GError     **error)
{
  Reader r = { text, text, text + len, 0, NULL, in_place };

  skip_space (&r);
  if (r.p == r.end || *r.p != '{')
    {
      bad (error, "A frame must be a JSON object");
      return NULL;
    }

  return read_whole (&r, "data after the object", error);
}

static gboolean
get_string (JsonObject  *object,
            const char  *member,
            gboolean     required,
            gsize        max_len,
            const char **out,
            GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);

  *out = NULL;
  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    {
      if (required)
        {
          g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                       "Missing \"%s\"", member);
          return FALSE;
        }
      return TRUE;
    }

  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "\"%s\" must be a string", member);
      return FALSE;
    }

  *out = json_node_get_string (node);
  if (max_len > 0 && strlen (*out) > max_len)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "\"%s\" is too long", member);
      return FALSE;
    }

  return TRUE;
}

/* Compared as doubles first: casting an out-of-range double to an integer is undefined. */
static gboolean
double_is_int64 (double d)
{
  return d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == floor (d);
}

static gboolean
get_int (JsonObject  *object,
         const char  *member,
         gboolean     required,
         gint64       min,
         gint64       max,
         gint64      *out,
         GError     **error)
{
  JsonNode *node = json_object_get_member (object, member);

  *out = 0;
  if (node == NULL)
    {
      if (required)
        {
          g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                       "Missing \"%s\"", member);
          return FALSE;
        }
      return TRUE;
    }

  /* JavaScript numbers arrive as doubles when they carry a fraction or an exponent. */
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_INT64)
    *out = json_node_get_int (node);
  else if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_DOUBLE &&
           double_is_int64 (json_node_get_double (node)))
    *out = (gint64) json_node_get_double (node);
  else
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "\"%s\" must be an integer", member);
      return FALSE;
    }

  if (*out < min || *out > max)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "\"%s\" is out of range", member);
      return FALSE;
    }

  return TRUE;
}

static gboolean
get_id (JsonObject  *object,
        const char **out,
        GError     **error)
{
  if (!get_string (object, "id", TRUE, 0, out, error))
    return FALSE;

  if (!chp_frame_is_valid_id (*out))
    return bad (error, "\"id\" must be 1–128 printable ASCII characters");

  return TRUE;
}

static gboolean
read_fields (ChpFrame  *frame,
             GError   **error)
{
  JsonObject *o = frame->object;

  switch (frame->type)
    {
    case CHP_FRAME_REQUEST:
      if (!get_id (o, &frame->id, error) ||
          !get_string (o, "method", TRUE, MAX_NAME_LEN, &frame->method, error) ||
          !get_int (o, "timeoutMs", FALSE, 0, 24 * 3600 * 1000, &frame->timeout_ms, error))
        return FALSE;
      if (frame->method[0] == '\0')
        return bad (error, "\"method\" is empty");
      frame->params = json_object_get_member (o, "params");
      if (frame->params != NULL && !JSON_NODE_HOLDS_OBJECT (frame->params) &&
          !JSON_NODE_HOLDS_NULL (frame->params))
        return bad (error, "\"params\" must be an object");
      return TRUE;

    case CHP_FRAME_RESPONSE:
      if (!get_id (o, &frame->id, error))
        return FALSE;
      if (json_object_has_member (o, "error"))
        {
          JsonNode *err = json_object_get_member (o, "error");
          JsonObject *eo;

          if (!JSON_NODE_HOLDS_OBJECT (err))
            return bad (error, "\"error\" must be an object");
          eo = json_node_get_object (err);
          if (!get_string (eo, "code", TRUE, MAX_NAME_LEN, &frame->error_code, error) ||
              !get_string (eo, "message", FALSE, 0, &frame->error_message, error))
            return FALSE;
          frame->error_data = json_object_get_member (eo, "data");
          if (json_object_has_member (o, "result"))
            return bad (error, "A response carries either \"result\" or \"error\"");
          return TRUE;
        }
      frame->result = json_object_get_member (o, "result");
      if (frame->result == NULL)
        return bad (error, "A response needs \"result\" or \"error\"");
      return TRUE;

    case CHP_FRAME_EVENT:
      if (!get_string (o, "event", TRUE, MAX_NAME_LEN, &frame->event, error) ||
          !get_int (o, "sequence", TRUE, 0, G_MAXINT64, &frame->sequence, error) ||
          !get_int (o, "timestamp", FALSE, 0, G_MAXINT64, &frame->timestamp, error))
        return FALSE;
      frame->data = json_object_get_member (o, "data");
      return TRUE;

    case CHP_FRAME_CANCEL:
      return get_id (o, &frame->id, error);

    case CHP_FRAME_PING:
    case CHP_FRAME_PONG:
      if (!get_int (o, "sequence", TRUE, 0, G_MAXINT64, &frame->sequence, error) ||
          !get_int (o, "timestamp", FALSE, 0, G_MAXINT64, &frame->timestamp, error) ||
          !get_int (o, "replyTimestamp", FALSE, 0, G_MAXINT64, &frame->reply_timestamp, error))
        return FALSE;
      return TRUE;

    case CHP_FRAME_CHUNK:
      if (!get_string (o, "transferId", TRUE, 0, &frame->transfer_id, error) ||
          !get_int (o, "index", TRUE, 0, G_MAXINT32, &frame->index, error) ||
          !get_int (o, "total", TRUE, 1, G_MAXINT32, &frame->total, error) ||
          !get_int (o, "originalBytes", TRUE, 1, G_MAXINT64, &frame->original_bytes, error) ||
          !get_string (o, "data", TRUE, 0, &frame->chunk_data, error))
        return FALSE;
      if (!chp_frame_is_valid_id (frame->transfer_id))
        return bad (error, "\"transferId\" must be 1–128 printable ASCII characters");
      return TRUE;

    case CHP_FRAME_ERROR:
      if (!get_string (o, "code", TRUE, MAX_NAME_LEN, &frame->error_code, error) ||
          !get_string (o, "message", FALSE, 0, &frame->error_message, error) ||
          !get_string (o, "id", FALSE, MAX_ID_LEN, &frame->id, error) ||
          !get_string (o, "transferId", FALSE, MAX_ID_LEN, &frame->transfer_id, error))
        return FALSE;
      return TRUE;

    case CHP_FRAME_HANDSHAKE:
      return TRUE;

    default:
      g_assert_not_reached ();
    }
}

static ChpFrame *
parse (const char  *text,
       gsize        len,
       gboolean     in_place,
       GError     **error)
{
  g_autoptr(ChpFrame) frame = NULL;
  g_autoptr(JsonNode) root = NULL;

  if (len == 0)
    {
      bad (error, "Empty frame");
      return NULL;
    }

  root = read_frame_json (text, len, in_place, error);
  if (root == NULL)
    return NULL;

  frame = g_new0 (ChpFrame, 1);
  frame->root = g_steal_pointer (&root);
  frame->object = json_node_get_object (frame->root);

  if (!get_string (frame->object, "type", TRUE, MAX_NAME_LEN, &frame->type_name, error))
    return NULL;

  for (guint i = 0; i < G_N_ELEMENTS (frame_types); i++)
    {
      if (g_str_equal (frame_types[i].name, frame->type_name))
        {
          frame->type = frame_types[i].type;
          if (!read_fields (frame, error))
            return NULL;
          return g_steal_pointer (&frame);
        }
    }

  {
    /* At most 64 bytes, cut on a character boundary: the message goes back to the peer as
     * JSON text, and libsoup refuses to send text that is not UTF-8. */
    g_autofree char *name = g_strndup (frame->type_name, 64);
    const char *end;

    g_utf8_validate (name, -1, &end);
    name[end - name] = '\0';

    g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_UNSUPPORTED,
                 "Unknown frame type \"%s\"", name);
  }
  return NULL;
}

/**
 * chp_frame_parse:
 * @text: the frame's bytes (not necessarily nul-terminated)
 *
 * Errors are %CHP_PROTOCOL_ERROR: `invalid_params` for anything malformed,
 * `unsupported` for a well-formed frame of a type nobody knows.
 *
 * Returns: (transfer full) (nullable): the frame
 */
ChpFrame *
chp_frame_parse (const char  *text,
                 gsize        len,
                 GError     **error)
{
  g_return_val_if_fail (text != NULL || len == 0, NULL);

  return parse (text, len, FALSE, error);
}

/**
 * chp_frame_parse_in_place:
 * @text: the frame's bytes (not necessarily nul-terminated), which this may change
 *
 * chp_frame_parse() for a text the caller owns and no longer needs as it is, such as a
 * reassembled message: strings are ended in place rather than copied before json-glib copies
 * them. The frame holds copies of its own; @text may be freed once this returns.
 *
 * Returns: (transfer full) (nullable): the frame
 */
ChpFrame *
chp_frame_parse_in_place (char        *text,
                          gsize        len,
                          GError     **error)
{
  g_return_val_if_fail (text != NULL || len == 0, NULL);

  return parse (text, len, TRUE, error);
}

/* What a string must escape when written: the quote, the backslash and control characters. */
static const guint8 string_escape[256] = {
  [0x00 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1,
};

static void
write_string (GString    *out,
              const char *str)
{
  const char *end = str + strlen (str);
  const char *run = str;
  const char *p = str;

  g_string_append_c (out, '"');
  for (;;)
    {
      guchar c;

      p = skip_clean_words (p, end, FALSE);
      while (p < end && !string_escape[(guchar) *p])
        p++;
      if (p == end)
        break;

      /* Copy the clean run in one go: long strings are mostly clean. */
      c = (guchar) *p;
      g_string_append_len (out, run, p - run);
      run = ++p;
      switch (c)
        {
        case '"': g_string_append (out, "\\\""); break;
        case '\\': g_string_append (out, "\\\\"); break;
        case '\n': g_string_append (out, "\\n"); break;
        case '\r': g_string_append (out, "\\r"); break;
        case '\t': g_string_append (out, "\\t"); break;
        case '\b': g_string_append (out, "\\b"); break;
        case '\f': g_string_append (out, "\\f"); break;
        default: g_string_append_printf (out, "\\u%04x", c); break;
        }
    }
  g_string_append_len (out, run, end - run);
  g_string_append_c (out, '"');
}

static void
write_node (GString  *out,
            JsonNode *node)
{
  switch (JSON_NODE_TYPE (node))
    {
    case JSON_NODE_OBJECT:
      {
        JsonObject *object = json_node_get_object (node);
        /* In insertion order, so "type" comes first, as people reading logs expect. */
        g_autoptr(GList) names = json_object_get_members (object);

        g_string_append_c (out, '{');
        for (GList *l = names; l != NULL; l = l->next)
          {
            if (l != names)
              g_string_append_c (out, ',');
            write_string (out, l->data);
            g_string_append_c (out, ':');
            write_node (out, json_object_get_member (object, l->data));
          }
        g_string_append_c (out, '}');
      }
      break;

    case JSON_NODE_ARRAY:
      {
        JsonArray *array = json_node_get_array (node);
        guint n = json_array_get_length (array);

        g_string_append_c (out, '[');
        for (guint i = 0; i < n; i++)
          {
            if (i > 0)
              g_string_append_c (out, ',');
            write_node (out, json_array_get_element (array, i));
          }
        g_string_append_c (out, ']');
      }
      break;

    case JSON_NODE_VALUE:
      switch (json_node_get_value_type (node))
        {
        case G_TYPE_INT64:
          g_string_append_printf (out, "%" G_GINT64_FORMAT, json_node_get_int (node));
          break;
        case G_TYPE_DOUBLE:
          {
            char buf[G_ASCII_DTOSTR_BUF_SIZE];
            double d = json_node_get_double (node);

            /* JSON has no inf or NaN; "1e+21" is already a valid number (json-glib 1.6
             * writes "1e+21.0" and "inf.0"). */
            if (isfinite (d))
              g_string_append (out, g_ascii_dtostr (buf, sizeof buf, d));
            else
              g_string_append (out, "null");
          }
          break;
        case G_TYPE_BOOLEAN:
          g_string_append (out, json_node_get_boolean (node) ? "true" : "false");
          break;
        case G_TYPE_STRING:
          write_string (out, json_node_get_string (node));
          break;
        default:
          g_string_append (out, "null");
          break;
        }
      break;

    case JSON_NODE_NULL:
    default:
      g_string_append (out, "null");
      break;
    }
}

char *
chp_json_to_string (JsonNode *node)
{
  GString *out = g_string_sized_new (256);

  write_node (out, node);
  return g_string_free (out, FALSE);
}

static char *
finish (JsonBuilder *builder)
{
  g_autoptr(JsonNode) root = NULL;

  json_builder_end_object (builder);
  root = json_builder_get_root (builder);

  return chp_json_to_string (root);
}

static JsonBuilder *
begin (const char *type)
{
  JsonBuilder *builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, type);

  return builder;
}

static void
add_string (JsonBuilder *builder,
            const char  *member,
            const char  *value)
{
  json_builder_set_member_name (builder, member);
  json_builder_add_string_value (builder, value);
}

static void
add_int (JsonBuilder *builder,
         const char  *member,
         gint64       value)
{
  json_builder_set_member_name (builder, member);
  json_builder_add_int_value (builder, value);
}

static void
add_node (JsonBuilder *builder,
          const char  *member,
          JsonNode    *node)
{
  json_builder_set_member_name (builder, member);
  if (node != NULL)
    json_builder_add_value (builder, json_node_copy (node));
  else
    json_builder_add_null_value (builder);
}

/* The two frames of every call are written straight to text: JsonBuilder costs microseconds.
 * The write_ forms append to a buffer the caller may keep for the next message: a 16 MiB
 * message written into fresh memory cost 4096 page faults on top of the writing. */
void
chp_frame_write_request (GString    *out,
                         const char *id,
                         const char *method,
                         JsonNode   *params,
                         gint64      timeout_ms)
{
  g_string_append (out, "{\"type\":\"request\",\"id\":");
  write_string (out, id);
  g_string_append (out, ",\"method\":");
  write_string (out, method);
  g_string_append (out, ",\"params\":");
  if (params != NULL)
    write_node (out, params);
  else
    g_string_append (out, "{}");
  if (timeout_ms > 0)
    g_string_append_printf (out, ",\"timeoutMs\":%" G_GINT64_FORMAT, timeout_ms);
  g_string_append_c (out, '}');
}

char *
chp_frame_build_request (const char *id,
                         const char *method,
                         JsonNode   *params,
                         gint64      timeout_ms)
{
  GString *out = g_string_sized_new (128);

  chp_frame_write_request (out, id, method, params, timeout_ms);
  return g_string_free (out, FALSE);
}

void
chp_frame_write_response (GString    *out,
                          const char *id,
                          JsonNode   *result)
{
  g_string_append (out, "{\"type\":\"response\",\"id\":");
  write_string (out, id);
  g_string_append (out, ",\"result\":");
  if (result != NULL)
    write_node (out, result);
  else
    g_string_append (out, "null");
  g_string_append_c (out, '}');
}

char *
chp_frame_build_response (const char *id,
                          JsonNode   *result)
{
  GString *out = g_string_sized_new (128);

  chp_frame_write_response (out, id, result);
  return g_string_free (out, FALSE);
}

char *
chp_frame_build_error_response (const char *id,
                                const char *code,
                                const char *message)
{
  g_autoptr(JsonBuilder) builder = begin ("response");

  add_string (builder, "id", id);
  json_builder_set_member_name (builder, "error");
  json_builder_begin_object (builder);
  add_string (builder, "code", code);
  add_string (builder, "message", message ? message : code);
  json_builder_end_object (builder);

  return finish (builder);
}

char *
chp_frame_build_event (const char *event,
                       JsonNode   *data,
                       gint64      sequence,
                       gint64      timestamp)
{
  g_autoptr(JsonBuilder) builder = begin ("event");

  add_string (builder, "event", event);
  add_node (builder, "data", data);
  add_int (builder, "sequence", sequence);
  add_int (builder, "timestamp", timestamp);

  return finish (builder);
}

char *
chp_frame_build_cancel (const char *id)
{
  g_autoptr(JsonBuilder) builder = begin ("cancel");

  add_string (builder, "id", id);

  return finish (builder);
}

char *
chp_frame_build_ping (gint64 sequence,
                      gint64 timestamp)
{
  g_autoptr(JsonBuilder) builder = begin ("ping");

  add_int (builder, "sequence", sequence);
  add_int (builder, "timestamp", timestamp);

  return finish (builder);
}

char *
chp_frame_build_pong (gint64 sequence,
                      gint64 timestamp,
                      gint64 reply_timestamp)
{
  g_autoptr(JsonBuilder) builder = begin ("pong");

  add_int (builder, "sequence", sequence);
  add_int (builder, "timestamp", timestamp);
  add_int (builder, "replyTimestamp", reply_timestamp);

  return finish (builder);
}

char *
chp_frame_build_error (const char *code,
                       const char *message,
                       const char *id,
                       const char *transfer_id)
{
  g_autoptr(JsonBuilder) builder = begin ("error");

  add_string (builder, "code", code);
  add_string (builder, "message", message ? message : code);
  if (id != NULL)
    add_string (builder, "id", id);
  if (transfer_id != NULL)
    add_string (builder, "transferId", transfer_id);

  return finish (builder);
}

/* The head's fixed text is 75 bytes and each of its three numbers at most 20 digits. */
#define CHUNK_HEAD_MAX 160

/**
 * chp_frame_chunk_len_max:
 *
 * Returns: room enough for chp_frame_write_chunk() and a NUL
 */
gsize
chp_frame_chunk_len_max (const char *transfer_id,
                         gsize       slice_len)
{
  return CHUNK_HEAD_MAX + strlen (transfer_id) + chp_b64url_encoded_len (slice_len) +
         sizeof "\"}";
}

/**
 * chp_frame_write_chunk:
 * @transfer_id: base64url (it is written into JSON unescaped)
 * @out: room for chp_frame_chunk_len_max() bytes
 *
 * Writes one chunk frame, NUL-terminated, into a buffer the caller may reuse for the next one:
 * a 16 MiB message is 64 of them, and fresh memory for each cost more in page faults than the
 * encoding itself.
 *
 * Returns: the frame's length, without the NUL
 */
gsize
chp_frame_write_chunk (char         *out,
                       const char   *transfer_id,
                       gint64        index,
                       gint64        total,
                       gint64        original_bytes,
                       const guint8 *slice,
                       gsize         slice_len)
{
  gsize head_len;
  char *end;

  /* Built by hand: the data member is base64url, JSON-safe as it is, encoded straight into
   * the frame. */
  head_len = g_snprintf (out, CHUNK_HEAD_MAX + strlen (transfer_id),
                         "{\"type\":\"chunk\",\"transferId\":\"%s\",\"index\":%" G_GINT64_FORMAT
                         ",\"total\":%" G_GINT64_FORMAT ",\"originalBytes\":%" G_GINT64_FORMAT
                         ",\"data\":\"", transfer_id, index, total, original_bytes);
  end = chp_b64url_encode_to (slice, slice_len, out + head_len);
  memcpy (end, "\"}", sizeof "\"}");

  return end + 2 - out;
}

char *
chp_frame_build_chunk (const char   *transfer_id,
                       gint64        index,
                       gint64        total,
                       gint64        original_bytes,
                       const guint8 *slice,
                       gsize         slice_len)
{
  char *frame = g_malloc (chp_frame_chunk_len_max (transfer_id, slice_len));

  chp_frame_write_chunk (frame, transfer_id, index, total, original_bytes, slice, slice_len);
  return frame;
}
