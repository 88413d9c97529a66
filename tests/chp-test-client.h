/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-test-client.h: a browser extension played in C, for GTest and the benchmarks. It signs
 * with its own P-256 key exactly as the extension does (P1363, JWK), over real WebSockets. */
#pragma once

#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

#include "chp-engine.h"
#include "chp-identity.h"

G_BEGIN_DECLS

#define CHP_TEST_ORIGIN "chrome-extension://abcdefghijklmnopabcdefghijklmnop"

typedef struct
{
  guint                    port;
  char                    *origin;
  char                    *installation_id;
  ChpIdentity             *key;          /* the extension's key */
  char                    *engine_x;     /* pinned after approval */
  char                    *engine_y;
  char                    *engine_id;
  char                    *device_id;
  char                    *session_id;
  char                    *code;
  SoupSession             *session;
  SoupWebsocketConnection *ws;
  GQueue                   inbox;        /* JsonNode*, oldest first */
  gboolean                 closed;
  gushort                  close_code;
  gboolean                 auto_answer;  /* answer requests with {"echo": params} */
  gpointer                 assembler;    /* ChpChunkAssembler for chunked frames */
  char                   **transcript;   /* T of the last pairing (DESIGN §3) */
} ChpTestClient;

ChpTestClient *chp_test_client_new        (guint           port,
                                           const char     *origin);
void           chp_test_client_free       (ChpTestClient  *client);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpTestClient, chp_test_client_free)

SoupWebsocketConnection *chp_test_ws_open (guint           port,
                                           const char     *path,
                                           const char     *origin,
                                           const char     *host,
                                           guint          *http_status,
                                           GError        **error);

guint          chp_test_http_upgrade_status (guint        port,
                                             const char  *path,
                                             const char  *origin,
                                             const char  *host);

gboolean       chp_test_client_open       (ChpTestClient  *client,
                                           const char     *path);
JsonObject    *chp_test_client_next       (ChpTestClient  *client,
                                           guint           timeout_ms);
JsonObject    *chp_test_client_next_type  (ChpTestClient  *client,
                                           const char     *type,
                                           guint           timeout_ms);
gboolean       chp_test_client_wait_closed (ChpTestClient *client,
                                            guint          timeout_ms);
void           chp_test_client_send       (ChpTestClient  *client,
                                           const char     *text);

/* The extension's messages as text, for callers that carry them another way (the native host). */
char          *chp_test_client_build_pair_request (ChpTestClient *client,
                                                   const char    *commitment);
char          *chp_test_client_build_pair_reveal  (ChpTestClient *client,
                                                   JsonObject    *pair_challenge,
                                                   const char    *nonce_c);
gboolean       chp_test_client_check_approval     (ChpTestClient *client,
                                                   JsonObject    *pair_approved);
char          *chp_test_client_build_auth         (ChpTestClient *client,
                                                   JsonObject    *challenge,
                                                   const char    *resume_session_id);

char          *chp_test_client_begin_pairing (ChpTestClient *client,
                                              const char    *nonce_c);
gboolean       chp_test_client_finish_pairing (ChpTestClient *client);
gboolean       chp_test_client_connect    (ChpTestClient  *client,
                                           const char     *resume_session_id);

/* One call from the engine to a browser, waited for by spinning the main loop. */
typedef struct
{
  gboolean  done;
  JsonNode *result;
  GError   *error;
} ChpTestCall;

void           chp_test_call_start        (ChpBridge      *bridge,
                                           const char     *device_id,
                                           const char     *method,
                                           JsonNode       *params,
                                           guint           timeout_ms,
                                           ChpTestCall    *call);
gboolean       chp_test_call_done         (gpointer        call);
void           chp_test_call_clear        (ChpTestCall    *call);

ChpEngine     *chp_test_engine_start      (const char     *tmp_template,
                                           char          **dir_out,
                                           guint          *port_out);

/* Waiting. A test waits for the event it needs — a message, a state, an object finalized —
 * never for a fixed time. CHP_TEST_WAIT_MS bounds a wait for something that should come at once:
 * generous (a loaded machine, the sanitizer build), and never a reason for a wait to end early. */
#define CHP_TEST_WAIT_MS 10000

gboolean       chp_test_spin_step         (gint64          deadline_us);
void           chp_test_spin_pending      (void);
gboolean       chp_test_spin_until        (gboolean      (*done) (gpointer),
                                           gpointer        data,
                                           guint           timeout_ms);

/* Spins the main loop until @cond holds; a test failure naming @cond after @timeout_ms. */
#define chp_test_until_within(cond, timeout_ms)                                                 \
  G_STMT_START {                                                                                \
    gint64 chp_deadline_us_ = g_get_monotonic_time () + (gint64) (timeout_ms) * 1000;           \
    while (!(cond))                                                                             \
      if (!chp_test_spin_step (chp_deadline_us_))                                               \
        {                                                                                       \
          if (!(cond))                                                                          \
            g_assertion_message_expr (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC,              \
                                      "within " #timeout_ms " ms: " #cond);                     \
          break;                                                                                \
        }                                                                                       \
  } G_STMT_END
#define chp_test_until(cond) chp_test_until_within (cond, CHP_TEST_WAIT_MS)

/* One asynchronous call's result, for a test that waits for it: start the call with
 * chp_test_result_cb and a ChpTestResult, then chp_test_result_wait() it. One ChpTestResult
 * serves calls made one after another: each wait hands over the newest result and keeps it
 * until the next wait, or until the ChpTestResult is cleared (g_auto does it). */
typedef struct
{
  GAsyncResult *ready;    /* the callback ran; nobody waited for it yet */
  GAsyncResult *taken;    /* what the last wait returned */
} ChpTestResult;

void           chp_test_result_cb         (GObject        *source,
                                           GAsyncResult   *result,
                                           gpointer        user_data);
GAsyncResult  *chp_test_result_wait_within (ChpTestResult *self,
                                            guint          timeout_ms);
#define chp_test_result_wait(self) chp_test_result_wait_within ((self), CHP_TEST_WAIT_MS)
void           chp_test_result_clear      (ChpTestResult  *self);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ChpTestResult, chp_test_result_clear)

void           chp_test_finalize_object   (gpointer        object);
void           chp_test_remove_tree       (const char     *dir);

G_END_DECLS
