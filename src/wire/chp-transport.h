/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-transport.h: how the app tells its two ways in apart. The native-messaging host adds this
 * header to its upgrade request; a browser's WebSocket cannot add a header of its own, so a
 * socket without it came straight from the browser. An administrator's Transport lock
 * (chp-managed-policy.c) is kept by it. It is not a guard against the person's own programs,
 * which can send any header, as they can do anything the person can. */
#pragma once

#define CHP_TRANSPORT_HEADER      "Chaperone-Transport"
#define CHP_TRANSPORT_NATIVE_HOST "native-host"

#include <glib.h>

G_BEGIN_DECLS

/* An administrator's lock on the way in (policy key Transport). */
typedef enum
{
  CHP_TRANSPORT_ANY,          /* no lock: the extension chooses (Automatic, in its Options) */
  CHP_TRANSPORT_WEBSOCKET,    /* only the browser's own WebSocket */
  CHP_TRANSPORT_NATIVE,       /* only through the native-messaging host */
} ChpTransportLock;

G_END_DECLS
