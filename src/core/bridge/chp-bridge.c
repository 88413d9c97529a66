/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-bridge.c: ChpBridge itself: its lifecycle, the SoupServer on 127.0.0.1 and its handlers,
 * the settings the engine gives it, and the helpers its parts share. The doors, the sessions and
 * the calls live in chp-bridge-doors.c, chp-bridge-sessions.c and chp-bridge-calls.c. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-bridge"

#include "chp-bridge-private.h"

#include "chp-connection.h"
#include "chp-crypto.h"
#include "chp-frame.h"

guint chp_bridge_signals[N_SIGNALS];

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

  chp_bridge_signals[SIGNAL_DEVICE_CONNECTED] =
    g_signal_new ("device-connected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 3, G_TYPE_STRING, G_TYPE_STRING, G_TYPE_BOOLEAN);
  chp_bridge_signals[SIGNAL_DEVICE_DISCONNECTED] =
    g_signal_new ("device-disconnected", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
  chp_bridge_signals[SIGNAL_DEVICE_EVENT] =
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
  self->handshakes = g_ptr_array_new_with_free_func ((GDestroyNotify) chp_bridge_handshake_free);
  self->pending = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL,
                                         (GDestroyNotify) chp_bridge_pending_free);
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

  chp_bridge_add_method (self, "engine.info", chp_bridge_engine_info_method, NULL);

  return self;
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
  soup_server_add_early_handler (self->server, NULL, chp_bridge_early_handler_cb, self, NULL);
  soup_server_add_early_handler (self->server, "/extension", chp_bridge_early_handler_cb, self,
                                 NULL);
  soup_server_add_early_handler (self->server, "/pairing", chp_bridge_early_handler_cb, self, NULL);
  soup_server_add_handler (self->server, NULL, chp_bridge_not_found_cb, self, NULL);
  soup_server_add_websocket_handler (self->server, "/extension", NULL, NULL,
                                     chp_bridge_extension_cb, self, NULL);
  soup_server_add_websocket_handler (self->server, "/pairing", NULL, NULL,
                                     chp_bridge_pairing_cb, self, NULL);

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
    g_signal_connect (self->service, "incoming", G_CALLBACK (chp_bridge_incoming_cb), self);
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

/**
 * chp_bridge_set_transport_lock:
 * @lock: the administrator's Transport (chp-managed-policy.c)
 *
 * From now on, a socket that came the other way is refused at the upgrade (403, audited): a
 * browser's own WebSocket under %CHP_TRANSPORT_NATIVE, the native host's under
 * %CHP_TRANSPORT_WEBSOCKET. The extension's Automatic choice takes a refused WebSocket as one
 * that could not connect, and goes through the host.
 */
void
chp_bridge_set_transport_lock (ChpBridge        *self,
                               ChpTransportLock  lock)
{
  g_return_if_fail (CHP_IS_BRIDGE (self));

  self->transport = lock;
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

