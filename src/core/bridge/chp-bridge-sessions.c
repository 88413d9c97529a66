/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-bridge-sessions.c: the signed-challenge handshake on /extension, and the logical sessions its
 * sockets attach to: resume windows, a connection's end, revocation. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-bridge"

#include "chp-bridge-private.h"

#include "chp-connection.h"
#include "chp-crypto.h"
#include "chp-frame.h"
#include "chp-json-util.h"
#include "chp-protocol-error.h"
#include "chp-session.h"

/* An /extension socket between its upgrade and its auth. */
struct _ChpBridgeHandshake
{
  ChpBridge               *bridge;
  SoupWebsocketConnection *ws;
  GInputStream            *limiter;
  char                    *origin;
  char                    *connection_id;
  char                    *challenge;
  gint64                   timestamp;
  guint                    timeout_source;
};
typedef ChpBridgeHandshake Handshake;

/* Sessions */

static void
session_remove (ChpBridge  *self,
                const char *device_id)
{
  guint source = GPOINTER_TO_UINT (g_hash_table_lookup (self->resume_timers, device_id));

  if (source != 0)
    g_source_remove (source);
  g_hash_table_remove (self->resume_timers, device_id);
  g_hash_table_remove (self->sessions, device_id);
}

typedef struct
{
  ChpBridge *bridge;
  char      *device_id;
} ResumeWindow;

static void
resume_window_free (gpointer data)
{
  ResumeWindow *window = data;

  g_free (window->device_id);
  g_free (window);
}

static gboolean
resume_window_cb (gpointer user_data)
{
  ResumeWindow *window = user_data;
  ChpBridge *self = window->bridge;
  ChpSession *session = g_hash_table_lookup (self->sessions, window->device_id);

  g_hash_table_remove (self->resume_timers, window->device_id);
  if (session != NULL && chp_session_get_connection (session) == NULL)
    {
      g_autoptr(GError) error = g_error_new_literal (CHP_PROTOCOL_ERROR,
                                                     CHP_PROTOCOL_ERROR_DEVICE_OFFLINE,
                                                     "The browser did not come back");

      chp_session_fail_all (session, error);
      g_hash_table_remove (self->sessions, window->device_id);
    }

  return G_SOURCE_REMOVE;
}

static void
connection_closed_cb (ChpConnection *connection,
                      guint          code,
                      const char    *reason,
                      gpointer       user_data)
{
  ChpBridge *self = user_data;
  /* Failing the session's calls runs their callbacks, which may drop the last reference to
   * the bridge: keep it until this function is done. */
  g_autoptr(ChpBridge) self_guard G_GNUC_UNUSED = g_object_ref (self);
  g_autoptr(ChpConnection) guard G_GNUC_UNUSED = g_object_ref (connection);
  const char *device_id = chp_connection_get_device_id (connection);
  ChpSession *session = g_hash_table_lookup (self->connections, connection);
  ChpDevice *device;

  g_signal_handlers_disconnect_by_data (connection, self);
  g_hash_table_remove (self->connections, connection);

  /* A newer socket of the same device may already have taken over the session. */
  if (session == NULL || chp_session_get_connection (session) != connection)
    return;

  g_debug ("bridge: %s disconnected (%u)", device_id, code);
  chp_session_detach (session);

  /* The calls that just failed ran their callbacks; one of them may have shut us down. */
  if (self->devices == NULL)
    return;

  if ((device = chp_device_list_lookup (self->devices, device_id)) != NULL)
    {
      chp_device_set_online (device, FALSE);
      chp_device_set_rtt_ms (device, -1);
    }

  if (!g_hash_table_contains (self->revoked, device_id))
    {
      ResumeWindow *window = g_new0 (ResumeWindow, 1);
      guint source;

      window->bridge = self;
      window->device_id = g_strdup (device_id);
      source = g_timeout_add_full (G_PRIORITY_DEFAULT, CHP_SESSION_RESUME_WINDOW_MS,
                                   resume_window_cb, window, resume_window_free);
      g_hash_table_replace (self->resume_timers, g_strdup (device_id), GUINT_TO_POINTER (source));
    }

  chp_bridge_audit (self, "connection", "close", "disconnected", device_id, 0, NULL);
  g_signal_emit (self, chp_bridge_signals[SIGNAL_DEVICE_DISCONNECTED], 0, device_id);
}

static void
connection_rtt_cb (ChpConnection *connection,
                   GParamSpec    *pspec,
                   gpointer       user_data)
{
  ChpBridge *self = user_data;
  ChpDevice *device = chp_device_list_lookup (self->devices,
                                              chp_connection_get_device_id (connection));

  if (device != NULL)
    {
      chp_device_set_rtt_ms (device, chp_connection_get_rtt_ms (connection));
      chp_device_set_last_seen (device, chp_bridge_now_ms ());
    }
}

static void
connection_event_cb (ChpConnection *connection,
                     const char    *name,
                     JsonNode      *data,
                     gint64         sequence,
                     gpointer       user_data)
{
  ChpBridge *self = user_data;
  ChpSession *session = g_hash_table_lookup (self->connections, connection);

  if (session != NULL)
    chp_session_set_last_sequence (session, sequence);

  g_signal_emit (self, chp_bridge_signals[SIGNAL_DEVICE_EVENT], 0,
                 chp_connection_get_device_id (connection), name, data, sequence);
}

/* The /extension handshake */

void
chp_bridge_handshake_free (Handshake *handshake)
{
  g_clear_handle_id (&handshake->timeout_source, g_source_remove);
  if (handshake->ws != NULL)
    g_signal_handlers_disconnect_by_data (handshake->ws, handshake);
  g_clear_object (&handshake->ws);
  g_clear_object (&handshake->limiter);
  g_free (handshake->origin);
  g_free (handshake->connection_id);
  g_free (handshake->challenge);
  g_free (handshake);
}

static void
handshake_end (Handshake *handshake,
               gushort    close_code,
               const char *reason)
{
  ChpBridge *self = handshake->bridge;
  g_autoptr(SoupWebsocketConnection) ws = g_object_ref (handshake->ws);

  g_ptr_array_remove (self->handshakes, handshake);
  if (close_code != 0 && soup_websocket_connection_get_state (ws) == SOUP_WEBSOCKET_STATE_OPEN)
    soup_websocket_connection_close (ws, close_code, reason);
}

static gboolean
handshake_timeout_cb (gpointer user_data)
{
  Handshake *handshake = user_data;

  handshake->timeout_source = 0;
  g_debug ("Closing a socket that did not authenticate in time");
  chp_bridge_audit (handshake->bridge, "connection", "auth", "refused", NULL,
                    CHP_BRIDGE_AUTH_TIMEOUT_MS, "timeout");
  handshake_end (handshake, CHP_CLOSE_UNAUTHENTICATED, "authentication timed out");

  return G_SOURCE_REMOVE;
}

static void
send_hello_ack (ChpBridge     *self,
                ChpConnection *connection,
                SoupWebsocketConnection *ws,
                ChpSession    *session,
                gboolean       resumed)
{
  g_autoptr(JsonBuilder) b = chp_bridge_begin_message ("hello_ack");

  json_builder_set_member_name (b, "protocol");
  json_builder_add_int_value (b, CHP_BRIDGE_PROTOCOL);
  json_builder_set_member_name (b, "engineId");
  json_builder_add_string_value (b, chp_identity_get_engine_id (self->identity));
  json_builder_set_member_name (b, "engineInstanceId");
  json_builder_add_string_value (b, self->instance_id);
  json_builder_set_member_name (b, "connectionId");
  json_builder_add_string_value (b, chp_connection_get_id (connection));
  json_builder_set_member_name (b, "sessionId");
  json_builder_add_string_value (b, chp_session_get_id (session));
  json_builder_set_member_name (b, "deviceId");
  json_builder_add_string_value (b, chp_session_get_device_id (session));
  json_builder_set_member_name (b, "resumed");
  json_builder_add_boolean_value (b, resumed);
  json_builder_set_member_name (b, "lastSequence");
  json_builder_add_int_value (b, chp_session_get_last_sequence (session));
  json_builder_set_member_name (b, "limits");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "maxInFlight");
  json_builder_add_int_value (b, CHP_CONNECTION_MAX_IN_FLIGHT);
  json_builder_set_member_name (b, "chunkThreshold");
  json_builder_add_int_value (b, 512 * 1024);
  json_builder_set_member_name (b, "chunkSize");
  json_builder_add_int_value (b, 256 * 1024);
  json_builder_set_member_name (b, "maxMessageBytes");
  json_builder_add_int_value (b, 16 * 1024 * 1024);
  json_builder_set_member_name (b, "maxTransfers");
  json_builder_add_int_value (b, 8);
  json_builder_set_member_name (b, "transferTimeoutMs");
  json_builder_add_int_value (b, 30000);
  json_builder_set_member_name (b, "maxFrameBytes");
  json_builder_add_int_value (b, CHP_CONNECTION_MAX_FRAME);
  json_builder_set_member_name (b, "heartbeatMs");
  json_builder_add_int_value (b, self->heartbeat_ms);
  json_builder_end_object (b);

  chp_bridge_send_json (ws, b);
}

static void
handshake_accept (Handshake  *handshake,
                  ChpDevice  *device,
                  const char *resume_session_id)
{
  ChpBridge *self = handshake->bridge;
  const char *device_id = chp_device_get_id (device);
  g_autoptr(ChpConnection) connection = NULL;
  g_autoptr(SoupWebsocketConnection) ws = g_object_ref (handshake->ws);
  ChpSession *session = g_hash_table_lookup (self->sessions, device_id);
  ChpConnection *previous;
  gboolean resumed = FALSE;

  connection = chp_connection_new (ws, handshake->connection_id, device_id, handshake->limiter);
  handshake_end (handshake, 0, NULL);

  if (session != NULL && resume_session_id != NULL &&
      g_str_equal (resume_session_id, chp_session_get_id (session)))
    resumed = TRUE;

  if (session != NULL && (previous = chp_session_get_connection (session)) != NULL)
    {
      /* The same browser opened a second socket (a restarted worker whose old socket
       * has not timed out yet): the newest one wins. Closed before the last reference
       * goes, or its dispose would close it as 1001 instead. */
      g_autoptr(ChpConnection) guard = g_object_ref (previous);

      g_signal_handlers_disconnect_by_data (guard, self);
      g_hash_table_remove (self->connections, guard);
      chp_session_detach (session);
      chp_connection_close (guard, CHP_CLOSE_REPLACED, "replaced by a newer connection");
    }

  if (session != NULL && !resumed)
    {
      g_autoptr(GError) error = g_error_new_literal (CHP_PROTOCOL_ERROR,
                                                     CHP_PROTOCOL_ERROR_DEVICE_OFFLINE,
                                                     "The browser started a new session");

      chp_session_fail_all (session, error);
      session_remove (self, device_id);
      session = NULL;
    }

  if (session == NULL)
    {
      session = chp_session_new (device_id);
      g_hash_table_insert (self->sessions, g_strdup (device_id), session);
    }
  else
    {
      guint source = GPOINTER_TO_UINT (g_hash_table_lookup (self->resume_timers, device_id));

      if (source != 0)
        g_source_remove (source);
      g_hash_table_remove (self->resume_timers, device_id);
    }

  g_signal_connect (connection, "closed", G_CALLBACK (connection_closed_cb), self);
  g_signal_connect (connection, "notify::rtt-ms", G_CALLBACK (connection_rtt_cb), self);
  g_signal_connect (connection, "event", G_CALLBACK (connection_event_cb), self);
  g_signal_connect (connection, "request", G_CALLBACK (chp_bridge_connection_request_cb), self);
  chp_connection_set_heartbeat_interval (connection, self->heartbeat_ms);
  g_hash_table_insert (self->connections, g_object_ref (connection), session);

  /* hello_ack goes out before any queued call, so the browser knows its session first. */
  send_hello_ack (self, connection, ws, session, resumed);
  chp_session_attach (session, connection);

  chp_device_set_online (device, TRUE);
  chp_device_set_last_seen (device, chp_bridge_now_ms ());
  if (self->store != NULL)
    chp_store_touch_device (self->store, device_id, chp_bridge_now_ms ());

  g_debug ("bridge: %s connected (%s)", device_id, resumed ? "resumed" : "new session");
  chp_bridge_audit (self, "connection", "auth", resumed ? "resumed" : "accepted",
                    device_id, 0, NULL);
  g_signal_emit (self, chp_bridge_signals[SIGNAL_DEVICE_CONNECTED], 0, device_id,
                 chp_session_get_id (session), resumed);

  /* A first ping right away gives the person a round-trip figure without a 15 s wait. */
  chp_connection_ping (connection);
}

static void
handshake_refuse (Handshake  *handshake,
                  gushort     code,
                  const char *error_code,
                  const char *reason,
                  const char *device_id)
{
  g_debug ("Refused authentication: %s", reason);
  chp_bridge_audit (handshake->bridge, "connection", "auth", "refused", device_id, 0, error_code);
  handshake_end (handshake, code, reason);
}

static void
handshake_message_cb (SoupWebsocketConnection *ws,
                      gint                     type,
                      GBytes                  *message,
                      gpointer                 user_data)
{
  Handshake *handshake = user_data;
  ChpBridge *self = handshake->bridge;
  g_autoptr(ChpFrame) frame = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  const char *installation_id, *device_id, *signature, *resume;
  JsonNode *caps_node;
  ChpDevice *device;
  const ChpDeviceInfo *info;
  gsize len;
  const char *data = g_bytes_get_data (message, &len);

  frame = chp_frame_parse (data, len, &error);
  if (type != SOUP_WEBSOCKET_DATA_TEXT || frame == NULL || !g_str_equal (frame->type_name, "auth"))
    {
      handshake_refuse (handshake, CHP_CLOSE_UNAUTHENTICATED, "unauthorized",
                        "the first message must be auth", NULL);
      return;
    }

  installation_id = chp_json_get_string (frame->object, "installationId");
  device_id = chp_json_get_string (frame->object, "deviceId");
  signature = chp_json_get_string (frame->object, "signature");
  resume = chp_json_get_string (frame->object, "resumeSessionId");
  caps_node = json_object_get_member (frame->object, "capabilities");

  if (installation_id == NULL || device_id == NULL || signature == NULL ||
      caps_node == NULL || !JSON_NODE_HOLDS_ARRAY (caps_node) ||
      (text = chp_auth_client_text (handshake->origin,
                                    chp_identity_get_engine_id (self->identity),
                                    self->instance_id, handshake->connection_id,
                                    handshake->challenge, installation_id,
                                    json_node_get_array (caps_node), NULL)) == NULL)
    {
      handshake_refuse (handshake, CHP_CLOSE_UNAUTHENTICATED, "invalid_params",
                        "auth is missing fields", NULL);
      return;
    }

  if (g_hash_table_contains (self->revoked, device_id))
    {
      handshake_refuse (handshake, CHP_CLOSE_REVOKED, "revoked", "this browser was revoked",
                        device_id);
      return;
    }

  device = chp_device_list_lookup (self->devices, device_id);
  if (device == NULL)
    {
      handshake_refuse (handshake, CHP_CLOSE_UNAUTHENTICATED, "not_paired",
                        "this browser is not paired", NULL);
      return;
    }

  info = chp_device_get_info (device);
  if (!g_str_equal (info->origin, handshake->origin) ||
      !g_str_equal (info->installation_id, installation_id))
    {
      handshake_refuse (handshake, CHP_CLOSE_UNAUTHENTICATED, "unauthorized",
                        "the origin or installation does not match the pairing", device_id);
      return;
    }

  if (!chp_verify_p1363 (info->key_x, info->key_y, text, signature, NULL))
    {
      handshake_refuse (handshake, CHP_CLOSE_UNAUTHENTICATED, "unauthorized",
                        "the signature does not verify", device_id);
      return;
    }

  handshake_accept (handshake, device, resume);
}

static void
handshake_closed_cb (SoupWebsocketConnection *ws,
                     gpointer                 user_data)
{
  Handshake *handshake = user_data;

  g_ptr_array_remove (handshake->bridge->handshakes, handshake);
}

void
chp_bridge_extension_cb (SoupServer              *server,
                         SoupServerMessage       *msg,
                         const char              *path,
                         SoupWebsocketConnection *ws,
                         gpointer                 user_data)
{
  ChpBridge *self = user_data;
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  Handshake *handshake;
  g_autoptr(JsonBuilder) builder = NULL;
  g_autofree char *text = NULL;
  g_autofree char *signature = NULL;

  if (!chp_bridge_check_upgrade (self, msg, path, "/extension"))
    {
      soup_websocket_connection_close (ws, CHP_CLOSE_UNAUTHENTICATED, "unauthorized");
      return;
    }

  handshake = g_new0 (Handshake, 1);
  handshake->bridge = self;
  handshake->ws = g_object_ref (ws);
  handshake->limiter = chp_bridge_get_limiter (msg);
  if (handshake->limiter != NULL)
    g_object_ref (handshake->limiter);
  handshake->origin = g_strdup (soup_message_headers_get_one (headers, "Origin"));
  handshake->connection_id = chp_random_b64url (16);
  handshake->challenge = chp_random_b64url (32);
  handshake->timestamp = chp_bridge_now_ms ();
  g_ptr_array_add (self->handshakes, handshake);

  /* Until it authenticates, a socket may send 16 KiB at most: libsoup refuses a bigger
   * frame from its header, before reading or allocating the payload. */
  soup_websocket_connection_set_max_incoming_payload_size (ws, CHP_BRIDGE_PREAUTH_MAX);
  soup_websocket_connection_set_keepalive_interval (ws, 0);
  g_signal_connect (ws, "message", G_CALLBACK (handshake_message_cb), handshake);
  g_signal_connect (ws, "closed", G_CALLBACK (handshake_closed_cb), handshake);
  handshake->timeout_source = g_timeout_add (CHP_BRIDGE_AUTH_TIMEOUT_MS, handshake_timeout_cb,
                                             handshake);

  text = chp_auth_challenge_text (chp_identity_get_engine_id (self->identity), self->instance_id,
                                  handshake->connection_id, handshake->challenge,
                                  handshake->timestamp, NULL);
  signature = chp_identity_sign (self->identity, text, NULL);

  builder = chp_bridge_begin_message ("challenge");
  json_builder_set_member_name (builder, "protocol");
  json_builder_add_int_value (builder, CHP_BRIDGE_PROTOCOL);
  json_builder_set_member_name (builder, "engineId");
  json_builder_add_string_value (builder, chp_identity_get_engine_id (self->identity));
  json_builder_set_member_name (builder, "engineInstanceId");
  json_builder_add_string_value (builder, self->instance_id);
  json_builder_set_member_name (builder, "connectionId");
  json_builder_add_string_value (builder, handshake->connection_id);
  json_builder_set_member_name (builder, "challenge");
  json_builder_add_string_value (builder, handshake->challenge);
  json_builder_set_member_name (builder, "timestamp");
  json_builder_add_int_value (builder, handshake->timestamp);
  json_builder_set_member_name (builder, "signature");
  json_builder_add_string_value (builder, signature);
  chp_bridge_send_json (ws, builder);
}

/* Immediately: the socket closes with 4403 and every outstanding call fails `revoked`
 * before the store has even written the revocation. */
void
chp_bridge_revoke_device (ChpBridge  *self,
                          const char *device_id)
{
  g_autofree char *id = NULL;
  ChpSession *session;

  g_return_if_fail (CHP_IS_BRIDGE (self));
  g_return_if_fail (device_id != NULL);

  id = g_strdup (device_id);
  g_hash_table_add (self->revoked, g_strdup (id));

  session = g_hash_table_lookup (self->sessions, id);
  if (session != NULL)
    {
      g_autoptr(GError) error = g_error_new_literal (CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_REVOKED,
                                                     "This browser was revoked");
      ChpConnection *connection = chp_session_get_connection (session);

      chp_session_fail_all (session, error);
      if (connection != NULL)
        {
          g_autoptr(ChpConnection) guard = g_object_ref (connection);

          g_signal_handlers_disconnect_by_data (connection, self);
          g_hash_table_remove (self->connections, connection);
          chp_session_detach (session);
          chp_connection_close (guard, CHP_CLOSE_REVOKED, "revoked");
        }
      session_remove (self, id);
    }

  chp_device_list_remove (self->devices, id);
  if (self->store != NULL)
    chp_store_revoke_device_async (self->store, id, chp_bridge_now_ms (), NULL, NULL, NULL);

  g_message ("bridge: revoked %s", id);
  chp_bridge_audit (self, "device", "revoke", "revoked", id, 0, NULL);
  g_signal_emit (self, chp_bridge_signals[SIGNAL_DEVICE_DISCONNECTED], 0, id);
}
