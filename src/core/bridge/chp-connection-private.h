/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-connection-private.h: shared by the parts of ChpConnection: the socket, the sending and the
 * dispatch (chp-connection.c), and the inbox that takes what arrives in order
 * (chp-connection-inbox.c). */
#pragma once

#include "chp-chunk-assembler.h"
#include "chp-connection.h"
#include "chp-frame.h"
#include "chp-limited-input-stream.h"

G_BEGIN_DECLS

struct _ChpConnection
{
  GObject parent_instance;

  SoupWebsocketConnection *ws;
  ChpLimitedInputStream *limiter;
  char *connection_id;
  char *device_id;

  ChpChunkAssembler *assembler;
  GHashTable *incoming;          /* ids of the peer's requests we have not answered */

  guint heartbeat_ms;
  guint heartbeat_source;
  guint expire_source;
  gint64 ping_sequence;
  gint64 ping_sent_us;
  guint missed_pongs;
  double rtt_ms;

  gboolean closed;

  /* The inbox (chp-connection-inbox.c) */
  GQueue inbox;                  /* messages not yet handled, oldest first */
  gsize inbox_bytes;             /* their sizes as they arrived */
  gboolean inbox_busy;           /* the oldest is being handled, here or on a worker */
  gboolean close_pending;        /* the socket closed: "closed" waits for the inbox to empty */
};

/* chp-connection.c */
gint64   chp_connection_now_ms              (void);
void     chp_connection_ensure_expire_timer (ChpConnection *self);
void     chp_connection_send_frame_error    (ChpConnection *self,
                                             const GError  *error,
                                             const char    *id,
                                             const char    *transfer_id);
void     chp_connection_dispatch            (ChpConnection *self,
                                             ChpFrame      *frame);
void     chp_connection_emit_closed         (ChpConnection *self);

/* chp-connection-inbox.c */
void     chp_connection_inbox_push          (ChpConnection *self,
                                             int            type,
                                             GBytes        *message);
gboolean chp_connection_inbox_is_empty      (ChpConnection *self);
void     chp_connection_inbox_unpause       (ChpConnection *self);
void     chp_connection_inbox_clear         (ChpConnection *self);

G_END_DECLS
