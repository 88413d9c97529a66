/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-connection.h: one authenticated WebSocket to a browser: framing, chunking,
 * ping/pong with round-trip time, and the ids of requests in flight either way. */
#pragma once

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

G_BEGIN_DECLS

/* Large enough for a 256 KiB chunk in base64url plus its envelope; never 0 (unbounded). */
#define CHP_CONNECTION_MAX_FRAME      (640 * 1024)
/* What may arrive between two whole messages: one frame, plus what one read can bring of the
 * next. Enforced under libsoup, which bounds frames but not fragmented messages. */
#define CHP_CONNECTION_MESSAGE_BUDGET (CHP_CONNECTION_MAX_FRAME + 64 * 1024)
#define CHP_CONNECTION_MAX_IN_FLIGHT  8
#define CHP_CONNECTION_HEARTBEAT_MS   15000
#define CHP_CONNECTION_MISSED_PONGS   3

#define CHP_CLOSE_PROTOCOL_ERROR  4400
#define CHP_CLOSE_UNAUTHENTICATED 4401
#define CHP_CLOSE_REVOKED         4403
#define CHP_CLOSE_HEARTBEAT       4408
#define CHP_CLOSE_REPLACED        4409

#define CHP_TYPE_CONNECTION (chp_connection_get_type ())

G_DECLARE_FINAL_TYPE (ChpConnection, chp_connection, CHP, CONNECTION, GObject)

ChpConnection *chp_connection_new              (SoupWebsocketConnection *ws,
                                                const char              *connection_id,
                                                const char              *device_id,
                                                GInputStream            *limiter);
const char    *chp_connection_get_id           (ChpConnection *self);
const char    *chp_connection_get_device_id    (ChpConnection *self);
gboolean       chp_connection_is_open          (ChpConnection *self);
double         chp_connection_get_rtt_ms       (ChpConnection *self);
void           chp_connection_set_heartbeat_interval (ChpConnection *self,
                                                      guint          interval_ms);

void           chp_connection_send_request     (ChpConnection *self,
                                                const char    *id,
                                                const char    *method,
                                                JsonNode      *params,
                                                gint64         timeout_ms);
void           chp_connection_send_cancel      (ChpConnection *self,
                                                const char    *id);
void           chp_connection_respond          (ChpConnection *self,
                                                const char    *id,
                                                JsonNode      *result);
void           chp_connection_respond_error    (ChpConnection *self,
                                                const char    *id,
                                                const GError  *error);
void           chp_connection_ping             (ChpConnection *self);
void           chp_connection_close            (ChpConnection *self,
                                                gushort        code,
                                                const char    *reason);

G_END_DECLS
