/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-native-host-harness.h: the native host played as Chrome plays it (framed stdio), a
 * scripted stand-in bridge, and a real engine to reach. */
#pragma once

#include <gio/gio.h>
#include <libsoup/soup.h>

#include "chp-crypto.h"
#include "chp-engine.h"
#include "chp-frame.h"
#include "chp-test-client.h"

G_BEGIN_DECLS

#define TEST_ORIGIN_ARG  "chrome-extension://abcdefghijklmnopabcdefghijklmnop/"
#define TEST_ORIGIN      "chrome-extension://abcdefghijklmnopabcdefghijklmnop"
#define OTHER_ORIGIN_ARG "chrome-extension://bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb/"
#define OTHER_ORIGIN     "chrome-extension://bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define EVIL_FIELDS      ",\"origin\":\"https://evil.example\",\"headers\":{\"Origin\":\"https://evil.example\"}"
#define MAX_IN_BYTES     (16 * 1024 * 1024)
#define MAX_OUT_BYTES    (1024 * 1024)

/* "Quickly": a refusal must not wait for input that will never come. */
#define PROMPT_MS        2000

typedef struct
{
  GSubprocess   *proc;
  GOutputStream *in;
  GInputStream  *out;
  GByteArray    *buf;        /* stdout read so far and not yet taken as frames */
  guint8         chunk[64 * 1024];
  GCancellable  *cancellable;
  gboolean       reading;
  gboolean       out_eof;
  gboolean       waiting;
  gboolean       exited;
} Host;

typedef struct
{
  SoupServer              *server;
  guint                    port;
  guint                    refuse_status;  /* answer every upgrade with this, when set */
  GPtrArray               *greeting;       /* GBytes sent as soon as a socket opens */
  gboolean                 greet_binary;
  guint                    upgrades;
  char                    *origin;         /* headers of the last upgrade request */
  char                    *host_header;
  char                    *path;
  SoupWebsocketConnection *ws;
  GPtrArray               *received;       /* GBytes, in order */
  gboolean                 closed;
  gushort                  close_code;
} FakeBridge;

typedef struct
{
  FakeBridge *fb;
  guint       n;
} Received;

typedef struct
{
  char      *dir;
  ChpEngine *engine;
  guint      port;
} Fixture;

Host *host_spawn_env (const char         *origin_arg,
                      const char * const *env);

Host *host_spawn (const char *origin_arg,
                  guint       port);

void host_free (Host *host);

void frame_append (GByteArray *out,
                   const void *data,
                   gsize       len);

void host_write_raw (Host       *host,
                     const void *data,
                     gsize       len);

void host_send_len (Host       *host,
                    const char *data,
                    gsize       len);

void host_send (Host       *host,
                const char *text);

void host_close_stdin (Host *host);

GBytes *host_next_bytes (Host  *host,
                         guint  timeout_ms);

JsonNode *host_next (Host  *host,
                     guint  timeout_ms);

const char *str_of (JsonNode   *node,
                    const char *member);

gint64 int_of (JsonNode   *node,
               const char *member);

JsonNode *host_next_type (Host       *host,
                          const char *type,
                          guint       timeout_ms);

int host_wait_exit (Host  *host,
                    guint  timeout_ms);

void host_expect_opened (Host  *host,
                         guint  port);

void assert_stdout_drained (Host *host);

void add_more_tests (void);

char *native_open (const char *path,
                   guint       port,
                   const char *extra);

FakeBridge *fake_bridge_new (void);

void fake_bridge_free (FakeBridge *fb);

void fake_greet (FakeBridge *fb,
                 const char *data,
                 gsize       len);

gboolean fake_closed (gpointer data);

gboolean fake_has_socket (gpointer data);

gboolean fake_received_n (gpointer data);

void assert_bytes_eq (GBytes     *bytes,
                      const char *data,
                      gsize       len);

char *padded_message (gsize len);

void fixture_setup (Fixture       *f,
                    gconstpointer  data);

void fixture_teardown (Fixture       *f,
                       gconstpointer  data);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Host, host_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (FakeBridge, fake_bridge_free)

G_END_DECLS
