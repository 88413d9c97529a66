/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz-frame.c: libFuzzer target for chp_frame_parse(), the first code that touches every byte a
 * browser (or any local process that got past the Origin gate) sends.
 *
 * Input: the bytes of one WebSocket text frame, exactly as message_cb() hands them to the parser.
 *
 * Besides memory safety (ASan) and undefined behaviour (UBSan, halt_on_error=1), it checks what
 * the rest of the engine relies on:
 *   - a frame that parses can be rebuilt with the chp_frame_build_*() builders, and the rebuilt
 *     text parses again to the same fields (the engine re-serializes what peers send: results
 *     go on to agents, params come back in echoes);
 *   - the whole parsed tree re-serializes (chp_json_to_string) to JSON that parses to an equal
 *     tree;
 *   - a frame that does not parse gets the `error` frame the connection would send back, and
 *     that frame is valid UTF-8 JSON that parses (libsoup refuses to send invalid UTF-8).
 * A broken invariant aborts, so libFuzzer saves the input as a crash. */
#include "config.h"

#include "fuzz-common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chp-crypto.h"
#include "chp-frame.h"
#include "chp-protocol-error.h"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static const char b64url_chars[] =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* abort() rather than g_assert(): the message names the invariant, and libFuzzer turns the
 * SIGABRT into a saved reproducer with a stack. */
#define CHECK(cond, ...)                                                   \
  G_STMT_START {                                                           \
    if (G_UNLIKELY (!(cond)))                                              \
      {                                                                    \
        g_printerr ("fuzz-frame: check failed: %s: ", #cond);              \
        g_printerr (__VA_ARGS__);                                          \
        g_printerr ("\n");                                                 \
        abort ();                                                          \
      }                                                                    \
  } G_STMT_END

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init ();
  return 0;
}

static ChpFrame *
reparse (const char *text,
         const char *what)
{
  g_autoptr(GError) error = NULL;
  ChpFrame *frame;

  CHECK (text != NULL, "%s built nothing", what);
  CHECK (g_utf8_validate (text, -1, NULL), "%s built invalid UTF-8", what);
  frame = chp_frame_parse (text, strlen (text), &error);
  CHECK (frame != NULL, "%s built a frame that does not parse: %s\n  text: %.2000s", what,
         error->message, text);

  return frame;
}

static gboolean
nodes_equal (JsonNode *a,
             JsonNode *b)
{
  if (a == NULL || b == NULL)
    return a == b;

  return json_node_equal (a, b);
}

static void
check_request (const ChpFrame *frame)
{
  g_autofree char *text = chp_frame_build_request (frame->id, frame->method, frame->params,
                                                   frame->timeout_ms);
  g_autoptr(ChpFrame) again = reparse (text, "chp_frame_build_request");

  CHECK (again->type == CHP_FRAME_REQUEST, "type %d", again->type);
  CHECK (g_str_equal (again->id, frame->id), "id");
  CHECK (g_str_equal (again->method, frame->method), "method");
  CHECK (again->timeout_ms == frame->timeout_ms, "timeoutMs %" G_GINT64_FORMAT, again->timeout_ms);
  /* The builder writes {} for absent params: that is what the other side must see. */
  if (frame->params != NULL)
    CHECK (nodes_equal (again->params, frame->params), "params changed: %.2000s", text);
  else
    CHECK (again->params != NULL && JSON_NODE_HOLDS_OBJECT (again->params) &&
           json_object_get_size (json_node_get_object (again->params)) == 0, "params not {}");
}

static void
check_response (const ChpFrame *frame)
{
  g_autofree char *text = NULL;
  g_autoptr(ChpFrame) again = NULL;

  if (frame->error_code != NULL)
    {
      ChpProtocolError code;

      /* An unknown code maps to `internal` in the connection; the lookup must not misbehave. */
      (void) chp_protocol_error_from_string (frame->error_code, &code);

      text = chp_frame_build_error_response (frame->id, frame->error_code, frame->error_message);
      again = reparse (text, "chp_frame_build_error_response");
      CHECK (again->type == CHP_FRAME_RESPONSE, "type %d", again->type);
      CHECK (g_str_equal (again->id, frame->id), "id");
      CHECK (again->error_code != NULL && g_str_equal (again->error_code, frame->error_code),
             "error.code");
      CHECK (again->result == NULL, "an error response grew a result");
      CHECK (g_strcmp0 (again->error_message,
                        frame->error_message ? frame->error_message : frame->error_code) == 0,
             "error.message");
      return;
    }

  text = chp_frame_build_response (frame->id, frame->result);
  again = reparse (text, "chp_frame_build_response");
  CHECK (again->type == CHP_FRAME_RESPONSE, "type %d", again->type);
  CHECK (g_str_equal (again->id, frame->id), "id");
  CHECK (again->error_code == NULL, "a result response grew an error");
  CHECK (nodes_equal (again->result, frame->result), "result changed: %.2000s", text);
}

static void
check_event (const ChpFrame *frame)
{
  g_autofree char *text = chp_frame_build_event (frame->event, frame->data, frame->sequence,
                                                 frame->timestamp);
  g_autoptr(ChpFrame) again = reparse (text, "chp_frame_build_event");

  CHECK (again->type == CHP_FRAME_EVENT, "type %d", again->type);
  CHECK (g_str_equal (again->event, frame->event), "event");
  CHECK (again->sequence == frame->sequence, "sequence");
  CHECK (again->timestamp == frame->timestamp, "timestamp");
  /* Absent data is written as null. */
  if (frame->data != NULL)
    CHECK (nodes_equal (again->data, frame->data), "data changed: %.2000s", text);
  else
    CHECK (again->data != NULL && JSON_NODE_HOLDS_NULL (again->data), "data not null");
}

static void
check_ping_pong (const ChpFrame *frame)
{
  g_autofree char *text = NULL;
  g_autoptr(ChpFrame) again = NULL;

  if (frame->type == CHP_FRAME_PING)
    text = chp_frame_build_ping (frame->sequence, frame->timestamp);
  else
    text = chp_frame_build_pong (frame->sequence, frame->timestamp, frame->reply_timestamp);

  again = reparse (text, "chp_frame_build_ping/pong");
  CHECK (again->type == frame->type, "type %d", again->type);
  CHECK (again->sequence == frame->sequence, "sequence");
  CHECK (again->timestamp == frame->timestamp, "timestamp");
  if (frame->type == CHP_FRAME_PONG)
    CHECK (again->reply_timestamp == frame->reply_timestamp, "replyTimestamp");
}

static void
check_error (const ChpFrame *frame)
{
  g_autofree char *text = chp_frame_build_error (frame->error_code, frame->error_message,
                                                 frame->id, frame->transfer_id);
  g_autoptr(ChpFrame) again = reparse (text, "chp_frame_build_error");

  CHECK (again->type == CHP_FRAME_ERROR, "type %d", again->type);
  CHECK (g_str_equal (again->error_code, frame->error_code), "code");
  CHECK (g_strcmp0 (again->id, frame->id) == 0, "id");
  CHECK (g_strcmp0 (again->transfer_id, frame->transfer_id) == 0, "transferId");
}

static void
check_chunk (const ChpFrame *frame)
{
  g_autoptr(GBytes) slice = chp_b64url_decode (frame->chunk_data, NULL);
  g_autofree char *encoded = NULL;
  g_autofree char *text = NULL;
  g_autoptr(ChpFrame) again = NULL;
  gsize len;
  const guint8 *bytes;

  /* The assembler refuses such a chunk; nothing to rebuild. */
  if (slice == NULL)
    return;

  /* Strict decoding promises one spelling per byte string: encode(decode(s)) == s. */
  bytes = g_bytes_get_data (slice, &len);
  encoded = chp_b64url_encode (bytes, len);
  CHECK (g_str_equal (encoded, frame->chunk_data), "base64url is not canonical: %.200s",
         frame->chunk_data);

  /* chp_frame_build_chunk() writes the id unescaped and documents base64url ids only (the
   * engine's own are random base64url); a peer's id may hold any printable ASCII. */
  if (strspn (frame->transfer_id, b64url_chars) != strlen (frame->transfer_id))
    return;

  text = chp_frame_build_chunk (frame->transfer_id, frame->index, frame->total,
                                frame->original_bytes, bytes, len);
  again = reparse (text, "chp_frame_build_chunk");
  CHECK (again->type == CHP_FRAME_CHUNK, "type %d", again->type);
  CHECK (g_str_equal (again->transfer_id, frame->transfer_id), "transferId");
  CHECK (again->index == frame->index && again->total == frame->total &&
         again->original_bytes == frame->original_bytes, "index/total/originalBytes");
  CHECK (g_str_equal (again->chunk_data, frame->chunk_data), "data");
}

/* The engine forwards parsed trees (results to agents, params back to browsers): the whole tree
 * has to survive a trip through json-glib's generator. */
static void
check_tree (const ChpFrame *frame)
{
  g_autofree char *text = chp_json_to_string (frame->root);
  g_autoptr(ChpFrame) again = reparse (text, "chp_json_to_string");

  CHECK (json_node_equal (again->root, frame->root), "tree changed: %.2000s", text);
}

/* What message_cb() sends back for a frame it could not parse. */
static void
check_refusal (const GError *error)
{
  const char *code = chp_protocol_error_code_of (error);
  g_autofree char *text = NULL;
  g_autoptr(ChpFrame) again = NULL;
  ChpProtocolError parsed_code;

  CHECK (error->domain == CHP_PROTOCOL_ERROR, "error domain %s",
         g_quark_to_string (error->domain));
  CHECK (chp_protocol_error_from_string (code, &parsed_code) && (gint) parsed_code == error->code,
         "error code %s does not map back", code);

  text = chp_frame_build_error (code, error->message, NULL, NULL);
  again = reparse (text, "chp_frame_build_error (refusal)");
  CHECK (again->type == CHP_FRAME_ERROR, "type %d", again->type);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpFrame) frame = NULL;

  frame = chp_frame_parse ((const char *) data, size, &error);
  if (frame == NULL)
    {
      CHECK (error != NULL, "NULL without an error");
      check_refusal (error);
      return 0;
    }

  CHECK (error == NULL, "a frame and an error");
  CHECK (frame->root != NULL && frame->object != NULL && frame->type_name != NULL, "empty frame");

  switch (frame->type)
    {
    case CHP_FRAME_REQUEST:
      CHECK (chp_frame_is_valid_id (frame->id), "request id");
      check_request (frame);
      break;
    case CHP_FRAME_RESPONSE:
      CHECK (chp_frame_is_valid_id (frame->id), "response id");
      check_response (frame);
      break;
    case CHP_FRAME_EVENT:
      check_event (frame);
      break;
    case CHP_FRAME_CANCEL:
      {
        g_autofree char *text = chp_frame_build_cancel (frame->id);
        g_autoptr(ChpFrame) again = reparse (text, "chp_frame_build_cancel");

        CHECK (g_str_equal (again->id, frame->id), "id");
      }
      break;
    case CHP_FRAME_PING:
    case CHP_FRAME_PONG:
      check_ping_pong (frame);
      break;
    case CHP_FRAME_CHUNK:
      CHECK (chp_frame_is_valid_id (frame->transfer_id), "transferId");
      check_chunk (frame);
      break;
    case CHP_FRAME_ERROR:
      check_error (frame);
      break;
    case CHP_FRAME_HANDSHAKE:
      break;
    default:
      CHECK (FALSE, "unknown frame type %d", frame->type);
    }

  check_tree (frame);

  return 0;
}
