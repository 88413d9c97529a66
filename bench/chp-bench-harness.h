/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-bench-harness.h: what the core benchmark stands on: engines started and paired in the
 * process, a client that answers as an extension does, and the bare libsoup pair the bridge is
 * compared with. */
#pragma once

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <glib/gstdio.h>
#include <libsoup/soup.h>
#include "chp-bench-agent.h"
#include "chp-chunk-assembler.h"
#include "chp-crypto.h"
#include "chp-engine.h"
#include "chp-frame.h"
#include "chp-test-client.h"

G_BEGIN_DECLS

/* The message of §7's limit: a request whose params hold this much text is just under 16 MiB
 * serialized, and so is the echo that comes back (the envelope adds about 100 bytes). */
#define BIG_MESSAGE_BYTES  (16 * 1024 * 1024)

#define BIG_ENVELOPE_SLACK 512

/* The bare pair sends the 16 MiB as one frame: both ends must accept it. Explicit, never 0. */
#define BARE_MAX_PAYLOAD   (32 * 1024 * 1024)

/* The pairing manager allows 20 attempts a day per engine: start a fresh one well before. */
#define PAIRINGS_PER_ENGINE 15

typedef struct
{
  char      *dir;
  ChpEngine *engine;
  guint      port;
  gboolean   started;
  GError    *error;
} Engine;

typedef struct
{
  ChpTestClient     *client;
  ChpChunkAssembler *assembler;
  gulong             handler;
} Answerer;

typedef struct
{
  SoupServer              *server;
  SoupSession             *session;
  SoupWebsocketConnection *server_ws;
  SoupWebsocketConnection *client_ws;
  guint                    port;
  gboolean                 opened;
  gboolean                 echoed;
  gsize                    echoed_bytes;
} Bare;

gint64 now_ns (void);

long vm_rss_kib (void);

double percentile (GArray *values,
                   double  p);

Engine *engine_start (void);

void engine_stop (Engine *e);

double pair_client (Engine        *e,
                    ChpTestClient *client);

Answerer *answerer_new (ChpTestClient *client);

void answerer_free (Answerer *answerer);

double store_barrier (Engine *e);

gint64 bridge_call (Engine        *e,
                    ChpTestClient *client,
                    JsonNode      *params,
                    guint          timeout_ms);

Bare *bare_new (void);

void bare_free (Bare *bare);

gint64 bare_echo (Bare       *bare,
                  const char *text,
                  guint       timeout_ms);

G_END_DECLS
