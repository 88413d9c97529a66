/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz-pairing.c: libFuzzer target for the /pairing socket (chp-bridge-pairing.c): the messages a
 * browser, or any local process that passed the bridge's gate, sends before it is paired.
 *
 * The bridge's pairing handler runs as the bridge runs it, on a real SoupWebsocketConnection, over
 * a socketpair instead of TCP: chp_bridge_pairing_start() (chp-bridge-private.h) takes the server
 * end, as the bridge's /pairing handler does after the Host/Origin gate; the target plays the
 * browser on the client end. A fresh bridge, device list and pairing manager for every input.
 *
 * Input: steps, one per line (a '\r' before the '\n' is dropped):
 *   !request        a well-formed pair_request from the target's own key and committed nonce
 *   !reveal <n>     a pair_reveal for the last pair_challenge: n = 0 right, 1 another nonce (the
 *                   commitment does not match), 2 a signature over other text, 3 another
 *                   requestId
 *   !approve        the person presses Pair on every request the app shows; !approve 1 says
 *                   "replace the browser it updates"
 *   !reject         the person presses Cancel on them
 *   !binary <text>  <text> as a binary message
 *   !close          the browser closes its socket
 *   anything else   the line as one text message (a binary one when it is not UTF-8, which a
 *                   browser cannot send as text)
 * The fuzzer can thus reach every stage (a valid reveal needs a signature it could never forge)
 * and still mutate every message in between.
 *
 * Besides memory safety, leaks and undefined behaviour, it checks:
 *   - every message the bridge sends is one text frame the strict parser reads, of a pairing type;
 *   - the bridge sends at most one pair_challenge and one final message, and nothing after a final
 *     one;
 *   - pair_approved comes only after the target approved, and only then is a device listed;
 *     pair_pending only after a right reveal;
 *   - after the browser has gone and the bridge is freed, nothing is left running.
 * A broken invariant aborts, so libFuzzer saves the input as a crash. */
#include "config.h"

#include "fuzz-common.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <libsoup/soup.h>

#include "chp-bridge-private.h"
#include "chp-crypto.h"
#include "chp-frame.h"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond, ...)                                                   \
  G_STMT_START {                                                           \
    if (G_UNLIKELY (!(cond)))                                              \
      {                                                                    \
        g_printerr ("fuzz-pairing: check failed: %s: ", #cond);            \
        g_printerr (__VA_ARGS__);                                          \
        g_printerr ("\n");                                                 \
        abort ();                                                          \
      }                                                                    \
  } G_STMT_END

/* The development extension's origin (extension/manifest.json's key). */
#define ORIGIN "chrome-extension://immigohjinbkkjncmhkefbfainfbcigp"

static ChpIdentity *engine_key;
static ChpIdentity *browser_key;
static char *installation_id;
static char *nonce_c;
static char *other_nonce;
static char *commitment;

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  fuzz_init ();
  signal (SIGPIPE, SIG_IGN);

  /* Keys are slow to make and the handler never changes them: one pair for the whole run. */
  engine_key = chp_identity_new_ephemeral ();
  browser_key = chp_identity_new_ephemeral ();
  installation_id = chp_random_b64url (16);
  nonce_c = chp_random_b64url (32);
  other_nonce = chp_random_b64url (32);
  commitment = chp_pair_commitment (nonce_c, chp_identity_get_x (browser_key),
                                    chp_identity_get_y (browser_key), NULL);
  return 0;
}

typedef struct
{
  ChpBridge               *bridge;
  ChpDeviceList           *devices;
  ChpPairingManager       *manager;
  SoupWebsocketConnection *client;
  char                    *request_id;   /* from the last pair_challenge */
  char                    *nonce_e;
  guint                    challenges;
  guint                    finals;
  guint                    pendings;
  guint                    approvals;    /* the target pressed Pair on a shown request */
  guint                    approved;     /* pair_approved received */
  guint                    right_reveals;
  gboolean                 closed;
} Run;

static void
drain (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static void
message_cb (SoupWebsocketConnection *ws,
            gint                     type,
            GBytes                  *message,
            Run                     *run)
{
  gsize len;
  const char *data = g_bytes_get_data (message, &len);
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpFrame) frame = NULL;
  const char *name;

  CHECK (type == SOUP_WEBSOCKET_DATA_TEXT, "a binary message from the bridge");
  frame = chp_frame_parse (data, len, &error);
  CHECK (frame != NULL, "the bridge sent what its own parser refuses: %s: %.*s",
         error->message, (int) len, data);
  name = frame->type_name;
  CHECK (run->finals == 0, "%s after a final message", name);

  if (g_str_equal (name, "pair_challenge"))
    {
      CHECK (++run->challenges == 1, "a second pair_challenge");
      g_free (run->request_id);
      run->request_id = g_strdup (json_object_get_string_member (frame->object, "requestId"));
      g_free (run->nonce_e);
      run->nonce_e = g_strdup (json_object_get_string_member (frame->object, "nonceE"));
    }
  else if (g_str_equal (name, "pair_pending"))
    {
      run->pendings++;
      CHECK (run->pendings <= run->right_reveals, "pair_pending without a right reveal");
    }
  else if (g_str_equal (name, "pair_approved"))
    {
      run->finals++;
      run->approved++;
      CHECK (run->approvals > 0, "pair_approved without the person's approval");
    }
  else if (g_str_equal (name, "pair_rejected") || g_str_equal (name, "pair_error") ||
           g_str_equal (name, "pair_locked") || g_str_equal (name, "pair_expired"))
    run->finals++;
  else
    CHECK (FALSE, "a message of another type on /pairing: %s", name);
}

static void
closed_cb (SoupWebsocketConnection *ws,
           Run                     *run)
{
  run->closed = TRUE;
}

static void
send_text (Run        *run,
           const char *text,
           gsize       len,
           gboolean    binary)
{
  g_autoptr(GBytes) bytes = g_bytes_new (text, len);

  if (run->closed ||
      soup_websocket_connection_get_state (run->client) != SOUP_WEBSOCKET_STATE_OPEN)
    return;
  if (!binary && !g_utf8_validate_len (text, len, NULL))
    binary = TRUE;
  soup_websocket_connection_send_message (run->client,
                                          binary ? SOUP_WEBSOCKET_DATA_BINARY
                                                 : SOUP_WEBSOCKET_DATA_TEXT,
                                          bytes);
}

static void
send_builder (Run         *run,
              JsonBuilder *b)
{
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;

  json_builder_end_object (b);
  root = json_builder_get_root (b);
  text = chp_json_to_string (root);
  send_text (run, text, strlen (text), FALSE);
}

static void
add_string (JsonBuilder *b,
            const char  *member,
            const char  *value)
{
  json_builder_set_member_name (b, member);
  json_builder_add_string_value (b, value);
}

static void
step_request (Run *run)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonNode) jwk = chp_identity_dup_public_jwk (browser_key);

  json_builder_begin_object (b);
  add_string (b, "type", "pair_request");
  json_builder_set_member_name (b, "protocol");
  json_builder_add_int_value (b, CHP_BRIDGE_PROTOCOL);
  add_string (b, "installationId", installation_id);
  add_string (b, "client", "fuzz-pairing");
  add_string (b, "version", "1");
  add_string (b, "browser", "Fuzz Browser 1");
  json_builder_set_member_name (b, "publicKey");
  json_builder_add_value (b, json_node_copy (jwk));
  add_string (b, "commitment", commitment);
  send_builder (run, b);
}

static void
step_reveal (Run  *run,
             guint variant)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autofree char *text = NULL;
  g_autofree char *signature = NULL;
  const char *request_id = run->request_id != NULL ? run->request_id : "none";
  const char *nonce = variant == 1 ? other_nonce : nonce_c;
  const char *t[10] = {
    request_id, ORIGIN, installation_id, chp_identity_get_x (browser_key),
    chp_identity_get_y (browser_key), chp_identity_get_engine_id (engine_key),
    chp_identity_get_x (engine_key), chp_identity_get_y (engine_key), nonce,
    run->nonce_e != NULL ? run->nonce_e : "none",
  };

  text = chp_pair_signed_text (variant == 2 ? "approved" : "reveal", t, NULL, NULL);
  signature = text != NULL ? chp_identity_sign (browser_key, text, NULL) : g_strdup ("AA");
  if (variant == 0 && run->request_id != NULL && run->nonce_e != NULL)
    run->right_reveals++;

  json_builder_begin_object (b);
  add_string (b, "type", "pair_reveal");
  add_string (b, "requestId", variant == 3 ? "another-request" : request_id);
  add_string (b, "nonceC", nonce);
  add_string (b, "signature", signature);
  send_builder (run, b);
}

static void
step_decide (Run      *run,
             gboolean  approve,
             gboolean  replace)
{
  GListModel *shown = G_LIST_MODEL (run->manager);

  for (guint i = 0; i < g_list_model_get_n_items (shown); i++)
    {
      g_autoptr(ChpPairingRequest) request = g_list_model_get_item (shown, i);

      if (chp_pairing_request_get_state (request) != CHP_PAIRING_STATE_WAITING)
        continue;
      if (approve)
        {
          run->approvals++;
          chp_pairing_request_approve (request, replace);
        }
      else
        chp_pairing_request_reject (request);
      /* A decision ends the request: the model may have changed under the index. */
      break;
    }
}

static void
run_step (Run        *run,
          const char *line,
          gsize       len)
{
  g_autofree char *text = g_strndup (line, len);

  if (len > 0 && text[0] == '!')
    {
      if (g_str_equal (text, "!request"))
        return step_request (run);
      if (g_str_has_prefix (text, "!reveal"))
        return step_reveal (run, (guint) g_ascii_strtoull (text + 7, NULL, 10) % 4);
      if (g_str_has_prefix (text, "!approve"))
        return step_decide (run, TRUE, g_ascii_strtoull (text + 8, NULL, 10) != 0);
      if (g_str_equal (text, "!reject"))
        return step_decide (run, FALSE, FALSE);
      if (g_str_has_prefix (text, "!binary "))
        return send_text (run, line + 8, len - 8, TRUE);
      if (g_str_equal (text, "!close"))
        {
          if (soup_websocket_connection_get_state (run->client) == SOUP_WEBSOCKET_STATE_OPEN)
            soup_websocket_connection_close (run->client, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
          return;
        }
    }

  send_text (run, line, len, FALSE);
}

/* Drops the last reference to *@object: it must be finalized there and then. */
static void
finalize_object (GObject    **object,
                 const char  *what)
{
  GObject *weak = *object;

  g_object_add_weak_pointer (weak, (gpointer *) &weak);
  g_clear_object (object);
  CHECK (weak == NULL, "%s is still referenced", what);
}
#define finalize(object, what) finalize_object ((GObject **) (object), what)

static GIOStream *
socket_stream (int fd)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) socket = g_socket_new_from_fd (fd, &error);

  CHECK (socket != NULL, "socket: %s", error->message);
  return G_IO_STREAM (g_socket_connection_factory_create_connection (socket));
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GUri) uri = g_uri_parse ("ws://127.0.0.1:64333/pairing", G_URI_FLAGS_NONE, NULL);
  g_autoptr(GIOStream) server_stream = NULL;
  g_autoptr(GIOStream) client_stream = NULL;
  g_autoptr(SoupWebsocketConnection) server = NULL;
  const char *p = (const char *) data;
  const char *end = p + size;
  Run run = { 0, };
  int fds[2];

  CHECK (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0, "socketpair");
  server_stream = socket_stream (fds[0]);
  client_stream = socket_stream (fds[1]);
  server = soup_websocket_connection_new (server_stream, uri, SOUP_WEBSOCKET_CONNECTION_SERVER,
                                          ORIGIN, NULL, NULL);
  run.client = soup_websocket_connection_new (client_stream, uri,
                                              SOUP_WEBSOCKET_CONNECTION_CLIENT, ORIGIN, NULL,
                                              NULL);
  soup_websocket_connection_set_keepalive_interval (run.client, 0);
  g_signal_connect (run.client, "message", G_CALLBACK (message_cb), &run);
  g_signal_connect (run.client, "closed", G_CALLBACK (closed_cb), &run);

  run.devices = chp_device_list_new ();
  run.manager = chp_pairing_manager_new (NULL);
  run.bridge = chp_bridge_new (engine_key, NULL, run.devices, run.manager);
  chp_bridge_pairing_start (run.bridge, server, ORIGIN);

  while (p < end)
    {
      const char *nl = memchr (p, '\n', end - p);
      const char *stop = nl != NULL ? nl : end;
      gsize len = stop - p;

      if (len > 0 && p[len - 1] == '\r')
        len--;
      run_step (&run, p, len);
      drain ();
      p = nl != NULL ? nl + 1 : end;
    }

  /* The browser goes; the bridge closes its end when it sees that. */
  if (soup_websocket_connection_get_state (run.client) == SOUP_WEBSOCKET_STATE_OPEN)
    soup_websocket_connection_close (run.client, SOUP_WEBSOCKET_CLOSE_GOING_AWAY, NULL);
  while (!run.closed)
    g_main_context_iteration (NULL, TRUE);
  drain ();

  /* The device is listed before the browser is told, and never otherwise. */
  CHECK (g_list_model_get_n_items (G_LIST_MODEL (run.devices)) == run.approved,
         "%u devices listed, %u pair_approved sent",
         g_list_model_get_n_items (G_LIST_MODEL (run.devices)), run.approved);

  g_signal_handlers_disconnect_by_data (run.client, &run);
  g_clear_object (&run.client);
  drain ();
  /* Everything goes with the last reference: a pairing left behind would hold the socket. */
  finalize (&server, "the server's socket");
  finalize (&run.bridge, "the bridge");
  finalize (&run.manager, "the pairing manager");
  finalize (&run.devices, "the device list");
  drain ();
  CHECK (!g_main_context_pending (NULL), "something of the pairing is still running");

  g_free (run.request_id);
  g_free (run.nonce_e);
  return 0;
}
