/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-frame.h: one protocol frame, parsed and checked (DESIGN §5), and the builders for each kind. */
#pragma once

#include "chp-json-reader.h"

#include <glib.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Deeper JSON than this is refused before parsing: json-glib's parser recurses. */
#define CHP_FRAME_MAX_DEPTH CHP_JSON_MAX_DEPTH

typedef enum
{
  CHP_FRAME_REQUEST,
  CHP_FRAME_RESPONSE,
  CHP_FRAME_EVENT,
  CHP_FRAME_CANCEL,
  CHP_FRAME_PING,
  CHP_FRAME_PONG,
  CHP_FRAME_CHUNK,
  CHP_FRAME_ERROR,
  /* The handshake's own messages (pair_*, challenge, auth, hello_ack): checked by their reader. */
  CHP_FRAME_HANDSHAKE,
} ChpFrameType;

typedef struct
{
  ChpFrameType  type;
  JsonNode     *root;
  JsonObject   *object;      /* borrowed from root */
  const char   *type_name;

  /* request, response, cancel, error */
  const char   *id;
  /* request */
  const char   *method;
  JsonNode     *params;      /* borrowed; may be NULL */
  gint64        timeout_ms;  /* 0 when absent */
  /* response */
  JsonNode     *result;      /* borrowed; NULL on error */
  const char   *error_code;  /* NULL on success */
  const char   *error_message;
  JsonNode     *error_data;
  /* event */
  const char   *event;
  JsonNode     *data;
  /* event, ping, pong */
  gint64        sequence;
  gint64        timestamp;
  gint64        reply_timestamp;
  /* chunk, error */
  const char   *transfer_id;
  gint64        index;
  gint64        total;
  gint64        original_bytes;
  const char   *chunk_data;
} ChpFrame;

ChpFrame   *chp_frame_parse              (const char   *text,
                                          gsize         len,
                                          GError      **error);
ChpFrame   *chp_frame_parse_in_place     (char         *text,
                                          gsize         len,
                                          GError      **error);
void        chp_frame_free               (ChpFrame     *frame);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpFrame, chp_frame_free)

gboolean    chp_frame_is_valid_id        (const char   *id);

char       *chp_frame_build_request      (const char   *id,
                                          const char   *method,
                                          JsonNode     *params,
                                          gint64        timeout_ms);
char       *chp_frame_build_response     (const char   *id,
                                          JsonNode     *result);
void        chp_frame_write_request      (GString      *out,
                                          const char   *id,
                                          const char   *method,
                                          JsonNode     *params,
                                          gint64        timeout_ms);
void        chp_frame_write_response     (GString      *out,
                                          const char   *id,
                                          JsonNode     *result);
char       *chp_frame_build_error_response (const char  *id,
                                            const char  *code,
                                            const char  *message);
char       *chp_frame_build_event        (const char   *event,
                                          JsonNode     *data,
                                          gint64        sequence,
                                          gint64        timestamp);
char       *chp_frame_build_cancel       (const char   *id);
char       *chp_frame_build_ping         (gint64        sequence,
                                          gint64        timestamp);
char       *chp_frame_build_pong         (gint64        sequence,
                                          gint64        timestamp,
                                          gint64        reply_timestamp);
char       *chp_frame_build_error        (const char   *code,
                                          const char   *message,
                                          const char   *id,
                                          const char   *transfer_id);
char       *chp_frame_build_chunk        (const char   *transfer_id,
                                          gint64        index,
                                          gint64        total,
                                          gint64        original_bytes,
                                          const guint8 *slice,
                                          gsize         slice_len);
gsize       chp_frame_chunk_len_max      (const char   *transfer_id,
                                          gsize         slice_len);
gsize       chp_frame_write_chunk        (char         *out,
                                          const char   *transfer_id,
                                          gint64        index,
                                          gint64        total,
                                          gint64        original_bytes,
                                          const guint8 *slice,
                                          gsize         slice_len);

char       *chp_json_to_string           (JsonNode     *node);

G_END_DECLS
