/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-frame.c: parse a frame strictly (types, sizes, nesting) so that nothing past it has to guess. */
#include "config.h"

#include "chp-frame.h"
#include "chp-json-reader.h"

#include "chp-b64url.h"
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

/* Returns: (transfer full) (nullable): the one top-level object of @text */
static JsonNode *
read_frame_json (const char  *text,
                 gsize        len,
                 gboolean     in_place,
                 GError     **error)
{
  gsize i = 0;

  while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
    i++;
  if (i == len || text[i] != '{')
    {
      bad (error, "A frame must be a JSON object");
      return NULL;
    }

  return in_place ? chp_json_read_in_place ((char *) text, len, error)
                  : chp_json_read (text, len, error);
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

      p = chp_json_skip_clean (p, end, FALSE);
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
