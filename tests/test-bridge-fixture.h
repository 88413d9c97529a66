/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-bridge-fixture.h: a real engine on 127.0.0.1 in a temporary folder, and a browser paired
 * with it as a person would, shared by test-bridge.c and test-bridge-inbox.c. */
#pragma once

#include "chp-engine.h"
#include "chp-test-client.h"

G_BEGIN_DECLS

typedef struct
{
  char *dir;
  ChpEngine *engine;
  guint port;
} Fixture;

void               fixture_setup    (Fixture       *f,
                                     gconstpointer  data);
void               fixture_teardown (Fixture       *f,
                                     gconstpointer  data);
ChpPairingRequest *waiting_request  (Fixture       *f);
void               pair             (Fixture       *f,
                                     ChpTestClient *client);
JsonObject        *next_request     (ChpTestClient *client,
                                     guint          timeout_ms);
void               answer           (ChpTestClient *client,
                                     JsonObject    *request);

G_END_DECLS
