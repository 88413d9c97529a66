/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-bridge.h: the loopback WebSocket bridge to browser extensions (DESIGN §3–5). */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "chp-device-list.h"
#include "chp-identity.h"
#include "chp-pairing-manager.h"
#include "chp-store.h"
#include "chp-transport.h"

G_BEGIN_DECLS

#define CHP_BRIDGE_DEFAULT_PORT     64333
#define CHP_BRIDGE_PREAUTH_MAX      (16 * 1024)
#define CHP_BRIDGE_AUTH_TIMEOUT_MS  5000
#define CHP_BRIDGE_PROTOCOL         1

#define CHP_TYPE_BRIDGE (chp_bridge_get_type ())

G_DECLARE_FINAL_TYPE (ChpBridge, chp_bridge, CHP, BRIDGE, GObject)

/**
 * ChpBridgeMethodFunc:
 * @task: return a #JsonNode with g_task_return_pointer() or an error; its cancellable is
 *   cancelled when the browser cancels the request
 *
 * A method that browsers may call on the engine.
 */
typedef void (*ChpBridgeMethodFunc) (ChpBridge  *bridge,
                                     ChpDevice  *device,
                                     JsonNode   *params,
                                     GTask      *task,
                                     gpointer    user_data);

ChpBridge   *chp_bridge_new                    (ChpIdentity          *identity,
                                                ChpStore             *store,
                                                ChpDeviceList        *devices,
                                                ChpPairingManager    *pairing);
gboolean     chp_bridge_listen                 (ChpBridge            *self,
                                                guint                 port,
                                                GError              **error);
guint        chp_bridge_get_port               (ChpBridge            *self);
void         chp_bridge_set_floor_rules        (ChpBridge            *self,
                                                JsonNode             *rules);
const char  *chp_bridge_get_instance_id        (ChpBridge            *self);
void         chp_bridge_set_unauthenticated_limits (ChpBridge        *self,
                                                guint             max_connections,
                                                guint             header_timeout_ms);
void         chp_bridge_set_heartbeat_interval (ChpBridge            *self,
                                                guint                 interval_ms);
void         chp_bridge_set_revoked            (ChpBridge            *self,
                                                GPtrArray            *infos);
void         chp_bridge_add_method             (ChpBridge            *self,
                                                const char           *method,
                                                ChpBridgeMethodFunc   func,
                                                gpointer              user_data);

void         chp_bridge_call_async             (ChpBridge            *self,
                                                const char           *device_id,
                                                const char           *method,
                                                JsonNode             *params,
                                                guint                 timeout_ms,
                                                GCancellable         *cancellable,
                                                GAsyncReadyCallback   callback,
                                                gpointer              user_data);
JsonNode    *chp_bridge_call_finish            (ChpBridge            *self,
                                                GAsyncResult         *result,
                                                GError              **error);
gint64       chp_bridge_call_get_queue_us      (GAsyncResult         *result);

void         chp_bridge_revoke_device          (ChpBridge            *self,
                                                const char           *device_id);
void         chp_bridge_set_transport_lock     (ChpBridge            *self,
                                                ChpTransportLock      lock);
void         chp_bridge_set_default_grant_minutes (ChpBridge         *self,
                                                   guint              minutes);
void         chp_bridge_audit                  (ChpBridge            *self,
                                                const char           *category,
                                                const char           *method,
                                                const char           *outcome,
                                                const char           *device_id,
                                                gint64                duration_ms,
                                                const char           *error_code);

G_END_DECLS
