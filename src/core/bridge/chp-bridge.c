/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-bridge.c: the SoupServer on 127.0.0.1, the Host/Origin gate, the signed-challenge
 * handshake on /extension, the logical sessions and the engine's method table. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-bridge"

#include "chp-bridge-private.h"

#include "chp-connection.h"
#include "chp-crypto.h"
#include "chp-frame.h"
#include "chp-json-util.h"
#include "chp-limited-input-stream.h"
#include "chp-limited-io-stream.h"
#include "chp-protocol-error.h"
#include "chp-session.h"

#include <glib/gi18n.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

typedef struct
{
  ChpBridgeMethodFunc func;
  gpointer            user_data;
} MethodEntry;

/* An /extension socket between its upgrade and its auth. */
typedef struct
{
  ChpBridge               *bridge;
  SoupWebsocketConnection *ws;
  GInputStream            *limiter;
  char                    *origin;
  char                    *connection_id;
  char                    *challenge;
  gint64                   timestamp;
  guint                    timeout_source;
} Handshake;

/* A connection between its accept and its WebSocket upgrade. It holds no reference: the stream
 * is libsoup's, and its weak reference removes the entry when libsoup lets it go. */
typedef struct
{
  ChpBridge *bridge;
  guint64    serial;
  GIOStream *stream;
  guint      timeout_source;
} Pending;

/* A request from a browser that an engine method is answering. */
typedef struct
{
  ChpConnection *connection;
  char          *id;
  GCancellable  *cancellable;
  gulong         cancel_id;
} Incoming;

enum {
  SIGNAL_DEVICE_CONNECTED,
  SIGNAL_DEVICE_DISCONNECTED,
  SIGNAL_DEVICE_EVENT,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (ChpBridge, chp_bridge, G_TYPE_OBJECT)

gint64
chp_bridge_now_ms (void)
{
  return g_get_real_time () / 1000;
}

JsonBuilder *
chp_bridge_begin_message (const char *type)
{
  JsonBuilder *builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, type);

  return builder;
}

/* Ends the object that chp_bridge_begin_message() began and sends it. */
void
chp_bridge_send_json (SoupWebsocketConnection *ws,
                      JsonBuilder             *builder)
{
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;

  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  text = chp_json_to_string (root);

  if (soup_websocket_connection_get_state (ws) == SOUP_WEBSOCKET_STATE_OPEN)
    soup_websocket_connection_send_text (ws, text);
}

void
chp_bridge_audit (ChpBridge  *self,
                  const char *category,
                  const char *method,
                  const char *outcome,
                  const char *device_id,
                  gint64      duration_ms,
                  const char *error_code)
{
  g_autoptr(ChpAuditEntry) entry = NULL;

  g_return_if_fail (CHP_IS_BRIDGE (self));

  if (self->store == NULL)
    return;

  entry = chp_audit_entry_new (category, method, outcome, device_id, duration_ms, error_code);
  chp_store_add_audit_async (self->store, entry, NULL, NULL, NULL);
}

/* Host/Origin gate, before any upgrade */

static gboolean
all_in (const char *s,
        gsize       len,
        const char *set)
{
  return strlen (s) == len && strspn (s, set) == len;
}

gboolean
chp_bridge_check_origin (const char *origin)
{
  if (origin == NULL)
    return FALSE;

  if (g_str_has_prefix (origin, "chrome-extension://"))
    return all_in (origin + strlen ("chrome-extension://"), 32, "abcdefghijklmnop");

  if (g_str_has_prefix (origin, "moz-extension://"))
    {
      const char *uuid = origin + strlen ("moz-extension://");
      static const guint groups[] = { 8, 4, 4, 4, 12 };

      for (guint i = 0; i < G_N_ELEMENTS (groups); i++)
        {
          if (strspn (uuid, "0123456789abcdef") != groups[i])
            return FALSE;
          uuid += groups[i];
          if (i + 1 < G_N_ELEMENTS (groups) && *uuid++ != '-')
            return FALSE;
        }
      return *uuid == '\0';
    }

  return FALSE;
}

static gboolean
check_host (ChpBridge  *self,
            const char *host)
{
  g_autofree char *ip = g_strdup_printf ("127.0.0.1:%u", self->port);
  g_autofree char *name = g_strdup_printf ("localhost:%u", self->port);

  /* Exact match: a DNS-rebound page arrives with its own hostname here. */
  return host != NULL && (g_str_equal (host, ip) || g_str_equal (host, name));
}

/* The two doors, and nothing under them: libsoup hands "/pairing/x", "/pairing/" and
 * "/extension/" to the handler of the longest registered prefix, so a check that compared only
 * the exact paths let a web page's WebSocket through to the handlers. */
static gboolean
is_door (const char *path)
{
  return g_strcmp0 (path, "/extension") == 0 || g_strcmp0 (path, "/pairing") == 0;
}

static void
early_handler_cb (SoupServer        *server,
                  SoupServerMessage *msg,
                  const char        *path,
                  GHashTable        *query,
                  gpointer           user_data)
{
  ChpBridge *self = user_data;
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  const char *host = soup_message_headers_get_one (headers, "Host");
  const char *origin = soup_message_headers_get_one (headers, "Origin");

  if (!check_host (self, host))
    {
      g_debug ("Refused a request with Host %s", host ? host : "(none)");
      soup_server_message_set_status (msg, SOUP_STATUS_FORBIDDEN, NULL);
      return;
    }

  if (!is_door (path))
    {
      g_debug ("Refused a request for another path");
      soup_server_message_set_status (msg, SOUP_STATUS_NOT_FOUND, NULL);
      return;
    }

  if (!chp_bridge_check_origin (origin))
    {
      g_debug ("Refused %s from a non-extension origin", path);
      soup_server_message_set_status (msg, SOUP_STATUS_FORBIDDEN, NULL);
      chp_bridge_audit (self, "connection", path, "refused", NULL, 0, "unauthorized");
    }
}

static void pending_free   (Pending   *pending);
static void pending_remove (ChpBridge *self,
                            guint64    serial);

/**
 * chp_bridge_check_upgrade:
 * @path: the path libsoup gave the handler
 * @expected_path: the handler's own path
 *
 * The handlers check again what the early handler checked, so that no routing of libsoup's can
 * bring a socket to them that the gate did not see: the exact path, the Host, an extension
 * Origin. The connection is no longer in its header phase either way.
 *
 * Returns: whether the socket may go on
 */
gboolean
chp_bridge_check_upgrade (ChpBridge         *self,
                          SoupServerMessage *msg,
                          const char        *path,
                          const char        *expected_path)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  GSocketAddress *remote = soup_server_message_get_remote_address (msg);

  if (remote != NULL)
    pending_remove (self, GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (remote),
                                                                 "chp-pending")));

  if (g_strcmp0 (path, expected_path) == 0 &&
      check_host (self, soup_message_headers_get_one (headers, "Host")) &&
      chp_bridge_check_origin (soup_message_headers_get_one (headers, "Origin")))
    return TRUE;

  g_debug ("Refused a socket on a path or from an origin the gate should have stopped");
  chp_bridge_audit (self, "connection", expected_path, "refused", NULL, 0, "unauthorized");
  return FALSE;
}

static void
not_found_cb (SoupServer        *server,
              SoupServerMessage *msg,
              const char        *path,
              GHashTable        *query,
              gpointer           user_data)
{
  /* A plain GET to a WebSocket path, or anything else: nothing to see. */
  if (soup_server_message_get_status (msg) == 0 || soup_server_message_get_status (msg) == SOUP_STATUS_OK)
    soup_server_message_set_status (msg, SOUP_STATUS_NOT_FOUND, NULL);
}

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
  g_signal_emit (self, signals[SIGNAL_DEVICE_DISCONNECTED], 0, device_id);
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

  g_signal_emit (self, signals[SIGNAL_DEVICE_EVENT], 0,
                 chp_connection_get_device_id (connection), name, data, sequence);
}

/* Engine methods that browsers call */

static void
incoming_free (Incoming *incoming)
{
  if (incoming->cancel_id != 0)
    g_signal_handler_disconnect (incoming->connection, incoming->cancel_id);
  g_clear_object (&incoming->connection);
  g_clear_object (&incoming->cancellable);
  g_free (incoming->id);
  g_free (incoming);
}

static void
incoming_cancel_cb (ChpConnection *connection,
                    const char    *id,
                    gpointer       user_data)
{
  Incoming *incoming = user_data;

  if (g_str_equal (id, incoming->id))
    g_cancellable_cancel (incoming->cancellable);
}

static void
method_done_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  Incoming *incoming = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = g_task_propagate_pointer (G_TASK (result), &error);

  if (node != NULL)
    chp_connection_respond (incoming->connection, incoming->id, node);
  else
    chp_connection_respond_error (incoming->connection, incoming->id, error);

  incoming_free (incoming);
}

static void
connection_request_cb (ChpConnection *connection,
                       const char    *id,
                       const char    *method,
                       JsonNode      *params,
                       gpointer       user_data)
{
  ChpBridge *self = user_data;
  MethodEntry *entry = g_hash_table_lookup (self->methods, method);
  ChpDevice *device = chp_device_list_lookup (self->devices,
                                              chp_connection_get_device_id (connection));
  g_autoptr(GTask) task = NULL;
  Incoming *incoming;

  if (entry == NULL || device == NULL)
    {
      g_autoptr(GError) error = NULL;

      g_set_error (&error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_UNKNOWN_METHOD,
                   "The engine has no method \"%s\"", method);
      chp_connection_respond_error (connection, id, error);
      return;
    }

  incoming = g_new0 (Incoming, 1);
  incoming->connection = g_object_ref (connection);
  incoming->id = g_strdup (id);
  incoming->cancellable = g_cancellable_new ();
  incoming->cancel_id = g_signal_connect (connection, "cancel",
                                          G_CALLBACK (incoming_cancel_cb), incoming);

  task = g_task_new (self, incoming->cancellable, method_done_cb, incoming);
  g_task_set_check_cancellable (task, TRUE);
  entry->func (self, device, params, task, entry->user_data);
}

static void
engine_info_method (ChpBridge *self,
                    ChpDevice *device,
                    JsonNode  *params,
                    GTask     *task,
                    gpointer   user_data)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "engineId");
  json_builder_add_string_value (builder, chp_identity_get_engine_id (self->identity));
  json_builder_set_member_name (builder, "engineInstanceId");
  json_builder_add_string_value (builder, self->instance_id);
  json_builder_set_member_name (builder, "version");
  json_builder_add_string_value (builder, PACKAGE_VERSION);
  json_builder_set_member_name (builder, "deviceId");
  json_builder_add_string_value (builder, chp_device_get_id (device));
  json_builder_set_member_name (builder, "deviceName");
  json_builder_add_string_value (builder, chp_device_get_name (device));
  json_builder_set_member_name (builder, "defaultGrantMinutes");
  json_builder_add_int_value (builder, self->default_grant_minutes);
  if (self->floor_rules != NULL)
    {
      json_builder_set_member_name (builder, "floor");
      json_builder_add_value (builder, json_node_copy (self->floor_rules));
    }
  json_builder_end_object (builder);

  g_task_return_pointer (task, json_builder_get_root (builder), (GDestroyNotify) json_node_unref);
}

/* The /extension handshake */

static void
handshake_free (Handshake *handshake)
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
  g_signal_connect (connection, "request", G_CALLBACK (connection_request_cb), self);
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
  g_signal_emit (self, signals[SIGNAL_DEVICE_CONNECTED], 0, device_id,
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

static void
extension_cb (SoupServer              *server,
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

static void
pairing_cb (SoupServer              *server,
            SoupServerMessage       *msg,
            const char              *path,
            SoupWebsocketConnection *ws,
            gpointer                 user_data)
{
  ChpBridge *self = user_data;
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);

  if (!chp_bridge_check_upgrade (self, msg, path, "/pairing"))
    {
      soup_websocket_connection_close (ws, CHP_CLOSE_UNAUTHENTICATED, "unauthorized");
      return;
    }

  chp_bridge_pairing_start (self, ws, soup_message_headers_get_one (headers, "Origin"));
}

/* GObject */

static void
chp_bridge_dispose (GObject *object)
{
  ChpBridge *self = CHP_BRIDGE (object);
  GHashTableIter iter;
  gpointer value;

  /* Forget every socket first: closing them below must not call back into a half-gone bridge. */
  if (self->connections != NULL)
    {
      g_hash_table_iter_init (&iter, self->connections);
      while (g_hash_table_iter_next (&iter, &value, NULL))
        g_signal_handlers_disconnect_by_data (value, self);
      g_hash_table_remove_all (self->connections);
    }

  if (self->resume_timers != NULL)
    {
      g_hash_table_iter_init (&iter, self->resume_timers);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        g_source_remove (GPOINTER_TO_UINT (value));
      g_hash_table_remove_all (self->resume_timers);
    }

  chp_bridge_pairing_clear (self);
  if (self->pending != NULL)
    g_hash_table_remove_all (self->pending);
  if (self->handshakes != NULL)
    g_ptr_array_set_size (self->handshakes, 0);
  if (self->sessions != NULL)
    g_hash_table_remove_all (self->sessions);

  if (self->service != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->service, self);
      g_socket_service_stop (self->service);
      g_socket_listener_close (G_SOCKET_LISTENER (self->service));
    }
  g_clear_object (&self->service);
  if (self->server != NULL)
    soup_server_disconnect (self->server);
  g_clear_object (&self->server);

  g_clear_object (&self->identity);
  g_clear_object (&self->store);
  g_clear_object (&self->devices);
  g_clear_object (&self->pairing);

  G_OBJECT_CLASS (chp_bridge_parent_class)->dispose (object);
}

static void
chp_bridge_finalize (GObject *object)
{
  ChpBridge *self = CHP_BRIDGE (object);

  g_clear_pointer (&self->revoked, g_hash_table_unref);
  g_clear_pointer (&self->sessions, g_hash_table_unref);
  g_clear_pointer (&self->resume_timers, g_hash_table_unref);
  g_clear_pointer (&self->connections, g_hash_table_unref);
  g_clear_pointer (&self->methods, g_hash_table_unref);
  g_clear_pointer (&self->handshakes, g_ptr_array_unref);
  g_clear_pointer (&self->pairings, g_ptr_array_unref);
  g_clear_pointer (&self->pending, g_hash_table_unref);
  g_clear_pointer (&self->instance_id, g_free);
  g_clear_pointer (&self->floor_rules, json_node_unref);

  G_OBJECT_CLASS (chp_bridge_parent_class)->finalize (object);
}

static void
chp_bridge_class_init (ChpBridgeClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = chp_bridge_dispose;
  object_class->finalize = chp_bridge_finalize;

  signals[SIGNAL_DEVICE_CONNECTED] =
    g_signal_new ("device-connected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 3, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_BOOLEAN);
  signals[SIGNAL_DEVICE_DISCONNECTED] =
    g_signal_new ("device-disconnected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  signals[SIGNAL_DEVICE_EVENT] =
    g_signal_new ("device-event", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 4, G_TYPE_STRING, G_TYPE_STRING, JSON_TYPE_NODE,
                  G_TYPE_INT64);
}

static void
chp_bridge_init (ChpBridge *self)
{
  self->instance_id = chp_random_b64url (16);
  self->heartbeat_ms = CHP_CONNECTION_HEARTBEAT_MS;
  self->default_grant_minutes = 15;
  self->revoked = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->resume_timers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->connections = g_hash_table_new_full (NULL, NULL, g_object_unref, NULL);
  self->methods = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  self->handshakes = g_ptr_array_new_with_free_func ((GDestroyNotify) handshake_free);
  self->pending = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL,
                                         (GDestroyNotify) pending_free);
  self->max_unauthenticated = CHP_BRIDGE_MAX_UNAUTHENTICATED;
  self->header_timeout_ms = CHP_BRIDGE_HEADER_TIMEOUT_MS;
}

ChpBridge *
chp_bridge_new (ChpIdentity       *identity,
                ChpStore          *store,
                ChpDeviceList     *devices,
                ChpPairingManager *pairing)
{
  ChpBridge *self;

  g_return_val_if_fail (CHP_IS_IDENTITY (identity), NULL);
  g_return_val_if_fail (CHP_IS_DEVICE_LIST (devices), NULL);
  g_return_val_if_fail (CHP_IS_PAIRING_MANAGER (pairing), NULL);

  self = g_object_new (CHP_TYPE_BRIDGE, NULL);
  self->identity = g_object_ref (identity);
  self->store = store ? g_object_ref (store) : NULL;
  self->devices = g_object_ref (devices);
  self->pairing = g_object_ref (pairing);

  chp_bridge_add_method (self, "engine.info", engine_info_method, NULL);

  return self;
}

/* The limiter travels on the remote address that libsoup hands back with each message. */
GInputStream *
chp_bridge_get_limiter (SoupServerMessage *msg)
{
  GSocketAddress *remote = soup_server_message_get_remote_address (msg);

  return remote ? g_object_get_data (G_OBJECT (remote), "chp-limiter") : NULL;
}

/* Pending connections */

static void pending_stream_gone_cb (gpointer  data,
                                    GObject  *stream);

static void
pending_free (Pending *pending)
{
  if (pending->stream != NULL)
    g_object_weak_unref (G_OBJECT (pending->stream), pending_stream_gone_cb, pending);
  g_clear_handle_id (&pending->timeout_source, g_source_remove);
  g_free (pending);
}

static void
pending_remove (ChpBridge *self,
                guint64    serial)
{
  if (serial != 0 && self->pending != NULL)
    g_hash_table_remove (self->pending, &serial);
}

static void
pending_stream_gone_cb (gpointer  data,
                        GObject  *stream)
{
  Pending *pending = data;

  /* libsoup dropped the connection (the peer closed it, or a 4xx ended it): nothing to close. */
  pending->stream = NULL;
  pending_remove (pending->bridge, pending->serial);
}

static gboolean
pending_timeout_cb (gpointer user_data)
{
  Pending *pending = user_data;
  g_autoptr(GIOStream) stream = g_object_ref (pending->stream);

  pending->timeout_source = 0;
  g_debug ("Closed a connection that did not upgrade within %u ms",
           pending->bridge->header_timeout_ms);
  pending_remove (pending->bridge, pending->serial);
  /* libsoup's read fails and it drops the connection, and with it the descriptor. */
  g_io_stream_close (stream, NULL, NULL);

  return G_SOURCE_REMOVE;
}

static guint
count_unauthenticated (ChpBridge *self)
{
  return g_hash_table_size (self->pending) + self->handshakes->len +
         (self->pairings != NULL ? self->pairings->len : 0);
}

static gboolean
incoming_cb (GSocketService    *service,
             GSocketConnection *connection,
             GObject           *source_object,
             gpointer           user_data)
{
  ChpBridge *self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketAddress) local = g_socket_connection_get_local_address (connection, NULL);
  g_autoptr(GSocketAddress) remote = g_socket_connection_get_remote_address (connection, NULL);
  g_autoptr(GIOStream) stream = NULL;

  if (local == NULL || remote == NULL)
    return TRUE;

  if (count_unauthenticated (self) >= self->max_unauthenticated)
    {
      gint64 now = g_get_monotonic_time ();

      /* Once in a while, not once per connection: a flood must not flood the log too. */
      if (now - self->last_refusal_log_us > 10 * G_USEC_PER_SEC)
        {
          g_message ("bridge: %u connections have not authenticated; refusing more",
                     self->max_unauthenticated);
          self->last_refusal_log_us = now;
        }
      g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
      return TRUE;
    }

  /* Every frame is written whole. With Nagle on, a small frame sent while the previous one is
   * unacknowledged waits for the browser's delayed ACK (40 ms on Linux): pair_approved after
   * pair_pending, a second request while the first is still running in the page. */
  if (!g_socket_set_option (g_socket_connection_get_socket (connection), IPPROTO_TCP, TCP_NODELAY,
                            TRUE, &error))
    {
      g_debug ("TCP_NODELAY: %s", error->message);
      g_clear_error (&error);
    }

  stream = chp_limited_io_stream_new (G_IO_STREAM (connection), CHP_BRIDGE_PREAUTH_BUDGET);
  g_object_set_data_full (G_OBJECT (remote), "chp-limiter",
                          g_object_ref (chp_limited_io_stream_get_limiter (CHP_LIMITED_IO_STREAM (stream))),
                          g_object_unref);

  {
    Pending *pending = g_new0 (Pending, 1);

    pending->bridge = self;
    pending->serial = ++self->next_pending;
    pending->stream = stream;
    g_object_weak_ref (G_OBJECT (stream), pending_stream_gone_cb, pending);
    pending->timeout_source = g_timeout_add (self->header_timeout_ms, pending_timeout_cb, pending);
    g_hash_table_insert (self->pending, &pending->serial, pending);
    g_object_set_data (G_OBJECT (remote), "chp-pending", GSIZE_TO_POINTER (pending->serial));
  }

  if (!soup_server_accept_iostream (self->server, stream, local, remote, &error))
    g_debug ("Could not accept a connection: %s", error->message);

  return TRUE;
}

/**
 * chp_bridge_set_unauthenticated_limits:
 * @max_connections: how many connections may be unauthenticated at once
 * @header_timeout_ms: how long a connection may take to upgrade
 *
 * For tests; the defaults are %CHP_BRIDGE_MAX_UNAUTHENTICATED and %CHP_BRIDGE_HEADER_TIMEOUT_MS.
 * The time counts from now for connections already waiting.
 */
void
chp_bridge_set_unauthenticated_limits (ChpBridge *self,
                                       guint      max_connections,
                                       guint      header_timeout_ms)
{
  GHashTableIter iter;
  gpointer value;

  g_return_if_fail (CHP_IS_BRIDGE (self));
  g_return_if_fail (max_connections > 0 && header_timeout_ms > 0);

  self->max_unauthenticated = max_connections;
  self->header_timeout_ms = header_timeout_ms;

  g_hash_table_iter_init (&iter, self->pending);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Pending *pending = value;

      g_clear_handle_id (&pending->timeout_source, g_source_remove);
      pending->timeout_source = g_timeout_add (header_timeout_ms, pending_timeout_cb, pending);
    }
}

gboolean
chp_bridge_listen (ChpBridge  *self,
                   guint       port,
                   GError    **error)
{
  g_return_val_if_fail (CHP_IS_BRIDGE (self), FALSE);
  g_return_val_if_fail (self->server == NULL, FALSE);
  g_return_val_if_fail (port <= 65535, FALSE);

  self->server = soup_server_new ("server-header", NULL, NULL);
  /* Loopback gains nothing from compression, and inflating would let a small frame
   * become a big message before the frame limit sees it. */
  soup_server_remove_websocket_extension (self->server, SOUP_TYPE_WEBSOCKET_EXTENSION_DEFLATE);

  /* libsoup keeps one handler entry per path and uses only the most specific one, so the
   * gate is registered on each path as well as on the default. */
  soup_server_add_early_handler (self->server, NULL, early_handler_cb, self, NULL);
  soup_server_add_early_handler (self->server, "/extension", early_handler_cb, self, NULL);
  soup_server_add_early_handler (self->server, "/pairing", early_handler_cb, self, NULL);
  soup_server_add_handler (self->server, NULL, not_found_cb, self, NULL);
  soup_server_add_websocket_handler (self->server, "/extension", NULL, NULL,
                                     extension_cb, self, NULL);
  soup_server_add_websocket_handler (self->server, "/pairing", NULL, NULL,
                                     pairing_cb, self, NULL);

  /* 127.0.0.1 only: never the wildcard address, never IPv6's ::. We accept connections
   * ourselves so that each one reaches libsoup through a byte budget. */
  {
    g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
    g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, port);
    g_autoptr(GSocketAddress) effective = NULL;

    self->service = g_socket_service_new ();
    if (!g_socket_listener_add_address (G_SOCKET_LISTENER (self->service), address,
                                        G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, NULL,
                                        &effective, error))
      {
        g_clear_object (&self->service);
        g_clear_object (&self->server);
        return FALSE;
      }

    self->port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (effective));
    g_signal_connect (self->service, "incoming", G_CALLBACK (incoming_cb), self);
    g_socket_service_start (self->service);
  }

  g_message ("bridge: listening on 127.0.0.1:%u", self->port);

  return TRUE;
}

/* @rules: (nullable): the person's URL floor entries, given to each browser in engine.info */
void
chp_bridge_set_floor_rules (ChpBridge *self,
                            JsonNode  *rules)
{
  g_return_if_fail (CHP_IS_BRIDGE (self));

  g_clear_pointer (&self->floor_rules, json_node_unref);
  if (rules != NULL)
    self->floor_rules = json_node_copy (rules);
}

guint
chp_bridge_get_port (ChpBridge *self)
{
  g_return_val_if_fail (CHP_IS_BRIDGE (self), 0);

  return self->port;
}

const char *
chp_bridge_get_instance_id (ChpBridge *self)
{
  g_return_val_if_fail (CHP_IS_BRIDGE (self), NULL);

  return self->instance_id;
}

/* What the person chose in Preferences; the extension offers it first when it asks for a
 * grant (engine.info). */
void
chp_bridge_set_default_grant_minutes (ChpBridge *self,
                                      guint      minutes)
{
  g_return_if_fail (CHP_IS_BRIDGE (self));

  self->default_grant_minutes = CLAMP (minutes, 1, 1440);
}

void
chp_bridge_set_heartbeat_interval (ChpBridge *self,
                                   guint      interval_ms)
{
  GHashTableIter iter;
  gpointer connection;

  g_return_if_fail (CHP_IS_BRIDGE (self));

  self->heartbeat_ms = interval_ms;
  g_hash_table_iter_init (&iter, self->connections);
  while (g_hash_table_iter_next (&iter, &connection, NULL))
    chp_connection_set_heartbeat_interval (connection, interval_ms);
}

/* Revoked devices stay in the store; their ids keep being refused with 4403. */
void
chp_bridge_set_revoked (ChpBridge *self,
                        GPtrArray *infos)
{
  g_return_if_fail (CHP_IS_BRIDGE (self));

  for (guint i = 0; infos != NULL && i < infos->len; i++)
    {
      const ChpDeviceInfo *info = g_ptr_array_index (infos, i);

      if (info->revoked_at != 0)
        g_hash_table_add (self->revoked, g_strdup (info->device_id));
    }
}

void
chp_bridge_add_method (ChpBridge           *self,
                       const char          *method,
                       ChpBridgeMethodFunc  func,
                       gpointer             user_data)
{
  MethodEntry *entry;

  g_return_if_fail (CHP_IS_BRIDGE (self));
  g_return_if_fail (method != NULL && func != NULL);

  entry = g_new0 (MethodEntry, 1);
  entry->func = func;
  entry->user_data = user_data;
  g_hash_table_replace (self->methods, g_strdup (method), entry);
}

/* Calls to browsers */

typedef struct
{
  char   *device_id;
  char   *method;
  gint64  started_us;
} CallData;

static void
call_data_free (CallData *data)
{
  g_free (data->device_id);
  g_free (data->method);
  g_free (data);
}

static void
call_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ChpBridge *self = g_task_get_source_object (task);
  CallData *data = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  JsonNode *node = chp_session_call_finish (CHP_SESSION (source), result, &error);
  gint64 duration_ms = (g_get_monotonic_time () - data->started_us) / 1000;

  chp_bridge_audit (self, "call", data->method, node ? "ok" : "error", data->device_id,
                    duration_ms, chp_protocol_error_code_of (error));

  if (node != NULL)
    g_task_return_pointer (task, node, (GDestroyNotify) json_node_unref);
  else
    g_task_return_error (task, g_steal_pointer (&error));
}

/**
 * chp_bridge_call_async:
 * @device_id: the one browser to ask; there is no fallback to another
 *
 * Sends a request to a browser. Errors are %CHP_PROTOCOL_ERROR: `not_paired`, `revoked`,
 * `device_offline`, `timeout`, `cancelled`, or whatever the browser answered.
 */
void
chp_bridge_call_async (ChpBridge           *self,
                       const char          *device_id,
                       const char          *method,
                       JsonNode            *params,
                       guint                timeout_ms,
                       GCancellable        *cancellable,
                       GAsyncReadyCallback  callback,
                       gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  CallData *data;
  ChpSession *session;

  g_return_if_fail (CHP_IS_BRIDGE (self));
  g_return_if_fail (device_id != NULL && method != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, chp_bridge_call_async);
  data = g_new0 (CallData, 1);
  data->device_id = g_strdup (device_id);
  data->method = g_strdup (method);
  data->started_us = g_get_monotonic_time ();
  g_task_set_task_data (task, data, (GDestroyNotify) call_data_free);

  if (g_hash_table_contains (self->revoked, device_id))
    {
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_REVOKED,
                               "This browser was revoked");
      return;
    }

  if (chp_device_list_lookup (self->devices, device_id) == NULL)
    {
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_NOT_PAIRED,
                               "No paired browser has this id");
      return;
    }

  /* Only a session that may still resume is worth waiting for. */
  session = g_hash_table_lookup (self->sessions, device_id);
  if (session == NULL)
    {
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_DEVICE_OFFLINE,
                               "This browser is not connected");
      return;
    }

  chp_session_call_async (session, method, params, timeout_ms, cancellable, call_done_cb,
                          g_steal_pointer (&task));
}

JsonNode *
chp_bridge_call_finish (ChpBridge     *self,
                        GAsyncResult  *result,
                        GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
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
  g_signal_emit (self, signals[SIGNAL_DEVICE_DISCONNECTED], 0, id);
}
