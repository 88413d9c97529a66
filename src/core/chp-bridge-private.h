/* chp-bridge-private.h: shared by the parts of ChpBridge (chp-bridge.c, chp-bridge-pairing.c). */
#pragma once

#include <libsoup/soup.h>

#include "chp-bridge.h"

G_BEGIN_DECLS

struct _ChpBridge
{
  GObject parent_instance;

  ChpIdentity *identity;
  ChpStore *store;
  ChpDeviceList *devices;
  ChpPairingManager *pairing;

  SoupServer *server;
  guint port;
  char *instance_id;
  guint heartbeat_ms;

  GHashTable *revoked;        /* device ids whose keys must keep failing */
  GHashTable *sessions;       /* device id -> ChpSession */
  GHashTable *resume_timers;  /* device id -> source id, for sessions without a socket */
  GHashTable *connections;    /* ChpConnection -> ChpSession (weak) for live sockets */
  GHashTable *methods;        /* name -> MethodEntry */
  GPtrArray *handshakes;      /* unauthenticated /extension sockets */
  GPtrArray *pairings;        /* /pairing sockets */
};

gboolean chp_bridge_check_origin   (const char  *origin);
void     chp_bridge_pairing_start  (ChpBridge               *self,
                                    SoupWebsocketConnection *ws,
                                    const char              *origin);
void     chp_bridge_pairing_clear  (ChpBridge               *self);
gint64   chp_bridge_now_ms         (void);
void     chp_bridge_send_json      (SoupWebsocketConnection *ws,
                                    JsonBuilder             *builder);
JsonBuilder *chp_bridge_begin_message (const char           *type);

G_END_DECLS
