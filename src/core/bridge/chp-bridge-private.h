/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-bridge-private.h: shared by the parts of ChpBridge: chp-bridge.c (lifecycle, listener),
 * chp-bridge-doors.c, chp-bridge-sessions.c, chp-bridge-calls.c and chp-bridge-pairing.c. */
#pragma once

#include <libsoup/soup.h>

#include "chp-bridge.h"
#include "chp-connection.h"

G_BEGIN_DECLS

struct _ChpBridge
{
  GObject parent_instance;

  ChpIdentity *identity;
  ChpStore *store;
  ChpDeviceList *devices;
  ChpPairingManager *pairing;

  SoupServer *server;
  GSocketService *service;
  guint port;
  char *instance_id;
  guint heartbeat_ms;
  guint default_grant_minutes;  /* offered to the extension by engine.info */
  ChpTransportLock transport;   /* the administrator's lock on the way in */
  JsonNode *floor_rules;        /* the person's URL floor entries, likewise; NULL for none */

  GHashTable *revoked;        /* device ids whose keys must keep failing */
  GHashTable *sessions;       /* device id -> ChpSession */
  GHashTable *resume_timers;  /* device id -> source id, for sessions without a socket */
  GHashTable *connections;    /* ChpConnection -> ChpSession (weak) for live sockets */
  GHashTable *methods;        /* name -> MethodEntry */
  GPtrArray *handshakes;      /* unauthenticated /extension sockets */
  GPtrArray *pairings;        /* /pairing sockets */
  GHashTable *pending;        /* serial -> Pending: accepted, not yet upgraded */
  guint64 next_pending;
  guint max_unauthenticated;
  guint header_timeout_ms;
  gint64 last_refusal_log_us;
};

/* A local process could open connections and never finish them; each would hold a descriptor
 * forever. So a connection must complete its WebSocket upgrade within this time, and no more
 * than this many may be unauthenticated at once (before the upgrade, in the handshake, or on
 * /pairing): past the cap a new one is closed at once. */
#define CHP_BRIDGE_HEADER_TIMEOUT_MS        10000
#define CHP_BRIDGE_MAX_UNAUTHENTICATED      32

/* Bytes a socket may send before it authenticates (HTTP upgrade request and handshake frames
 * included); per message after, CHP_CONNECTION_MESSAGE_BUDGET. libsoup 3.2 bounds frames, not
 * fragmented messages. */
#define CHP_BRIDGE_PREAUTH_BUDGET  (96 * 1024)

enum {
  SIGNAL_DEVICE_CONNECTED,
  SIGNAL_DEVICE_DISCONNECTED,
  SIGNAL_DEVICE_EVENT,
  N_SIGNALS
};

extern guint chp_bridge_signals[N_SIGNALS];

typedef struct _ChpBridgePending   ChpBridgePending;    /* chp-bridge-doors.c */
typedef struct _ChpBridgeHandshake ChpBridgeHandshake;  /* chp-bridge-sessions.c */

gboolean chp_bridge_check_origin   (const char  *origin);
gboolean chp_bridge_check_transport (ChpBridge          *self,
                                     SoupMessageHeaders *headers);
gboolean chp_bridge_check_upgrade  (ChpBridge         *self,
                                    SoupServerMessage *msg,
                                    const char        *path,
                                    const char        *expected_path);
GInputStream *chp_bridge_get_limiter (SoupServerMessage *msg);
void     chp_bridge_pairing_start  (ChpBridge               *self,
                                    SoupWebsocketConnection *ws,
                                    const char              *origin);
void     chp_bridge_pairing_clear  (ChpBridge               *self);
gint64   chp_bridge_now_ms         (void);
void     chp_bridge_send_json      (SoupWebsocketConnection *ws,
                                    JsonBuilder             *builder);
JsonBuilder *chp_bridge_begin_message (const char           *type);

/* chp-bridge-doors.c: handlers that chp_bridge_listen() registers; the pending table's entries */
void     chp_bridge_early_handler_cb (SoupServer              *server,
                                      SoupServerMessage       *msg,
                                      const char              *path,
                                      GHashTable              *query,
                                      gpointer                 user_data);
void     chp_bridge_not_found_cb     (SoupServer              *server,
                                      SoupServerMessage       *msg,
                                      const char              *path,
                                      GHashTable              *query,
                                      gpointer                 user_data);
void     chp_bridge_pairing_cb       (SoupServer              *server,
                                      SoupServerMessage       *msg,
                                      const char              *path,
                                      SoupWebsocketConnection *ws,
                                      gpointer                 user_data);
gboolean chp_bridge_incoming_cb      (GSocketService          *service,
                                      GSocketConnection       *connection,
                                      GObject                 *source_object,
                                      gpointer                 user_data);
void     chp_bridge_pending_free     (ChpBridgePending        *pending);

/* chp-bridge-sessions.c: the /extension handler and the handshakes' entries */
void     chp_bridge_extension_cb     (SoupServer              *server,
                                      SoupServerMessage       *msg,
                                      const char              *path,
                                      SoupWebsocketConnection *ws,
                                      gpointer                 user_data);
void     chp_bridge_handshake_free   (ChpBridgeHandshake      *handshake);

/* chp-bridge-calls.c: a browser's request to the engine, and the engine's own method */
void     chp_bridge_connection_request_cb (ChpConnection     *connection,
                                           const char        *id,
                                           const char        *method,
                                           JsonNode          *params,
                                           gpointer           user_data);
void     chp_bridge_engine_info_method    (ChpBridge         *self,
                                           ChpDevice         *device,
                                           JsonNode          *params,
                                           GTask             *task,
                                           gpointer           user_data);

G_END_DECLS
