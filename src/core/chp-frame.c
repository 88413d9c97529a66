/* chp-frame.c: parse a frame strictly (types, sizes, nesting) so that nothing past it has to guess. */
#include "config.h"

#include "chp-frame.h"

#include "chp-crypto.h"
#include "chp-protocol-error.h"

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

/* A linear scan that refuses deep nesting before json-glib's recursive parser sees it. */
static gboolean
depth_ok (const char *text,
          gsize       len)
{
  gboolean in_string = FALSE;
  guint depth = 0;

  for (gsize i = 0; i < len; i++)
    {
      char c = text[i];

      if (in_string)
        {
          if (c == '\\')
            i++;
          else if (c == '"')
            in_string = FALSE;
          continue;
        }

      if (c == '"')
        in_string = TRUE;
      else if (c == '{' || c == '[')
        {
          if (++depth > CHP_FRAME_MAX_DEPTH)
            return FALSE;
        }
      else if ((c == '}' || c == ']') && depth > 0)
        depth--;
    }

  return TRUE;
}

static gboolean
bad (GError     **error,
     const char  *message)
{
  g_set_error_literal (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS, message);
  return FALSE;
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
           json_node_get_double (node) == (double) (gint64) json_node_get_double (node))
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
  g_autoptr(JsonParser) parser = NULL;
  g_autoptr(ChpFrame) frame = NULL;
  g_autoptr(GError) local_error = NULL;
  JsonNode *root;

  g_return_val_if_fail (text != NULL || len == 0, NULL);

  if (len == 0)
    {
      bad (error, "Empty frame");
      return NULL;
    }

  if (!depth_ok (text, len))
    {
      bad (error, "The frame nests too deeply");
      return NULL;
    }

  if (!g_utf8_validate_len (text, len, NULL))
    {
      bad (error, "The frame is not UTF-8");
      return NULL;
    }

  parser = json_parser_new_immutable ();
  if (!json_parser_load_from_data (parser, text, (gssize) len, &local_error))
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "Malformed JSON: %s", local_error->message);
      return NULL;
    }

  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      bad (error, "A frame must be a JSON object");
      return NULL;
    }

  frame = g_new0 (ChpFrame, 1);
  frame->root = json_node_ref (root);
  frame->object = json_node_get_object (root);

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

  g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_UNSUPPORTED,
               "Unknown frame type \"%.64s\"", frame->type_name);
  return NULL;
}

char *
chp_json_to_string (JsonNode *node)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();

  json_generator_set_root (generator, node);
  return json_generator_to_data (generator, NULL);
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
  JsonBuilder *builder = json_builder_new_immutable ();

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

char *
chp_frame_build_request (const char *id,
                         const char *method,
                         JsonNode   *params,
                         gint64      timeout_ms)
{
  g_autoptr(JsonBuilder) builder = begin ("request");

  add_string (builder, "id", id);
  add_string (builder, "method", method);
  if (params != NULL)
    add_node (builder, "params", params);
  else
    {
      json_builder_set_member_name (builder, "params");
      json_builder_begin_object (builder);
      json_builder_end_object (builder);
    }
  if (timeout_ms > 0)
    add_int (builder, "timeoutMs", timeout_ms);

  return finish (builder);
}

char *
chp_frame_build_response (const char *id,
                          JsonNode   *result)
{
  g_autoptr(JsonBuilder) builder = begin ("response");

  add_string (builder, "id", id);
  add_node (builder, "result", result);

  return finish (builder);
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

char *
chp_frame_build_chunk (const char   *transfer_id,
                       gint64        index,
                       gint64        total,
                       gint64        original_bytes,
                       const guint8 *slice,
                       gsize         slice_len)
{
  g_autofree char *data = chp_b64url_encode (slice, slice_len);

  /* Built by hand: this runs for every 256 KiB of a 16 MiB message and the data
   * member is already JSON-safe base64url. */
  return g_strdup_printf ("{\"type\":\"chunk\",\"transferId\":\"%s\",\"index\":%" G_GINT64_FORMAT
                          ",\"total\":%" G_GINT64_FORMAT ",\"originalBytes\":%" G_GINT64_FORMAT
                          ",\"data\":\"%s\"}",
                          transfer_id, index, total, original_bytes, data);
}
