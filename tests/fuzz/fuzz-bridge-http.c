/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz-bridge-http.c: libFuzzer target for the bridge's header phase: a raw client on the
 * bridge's loopback port that sends arbitrary bytes before (and instead of) a WebSocket upgrade.
 *
 * One ChpBridge listens on 127.0.0.1 (a free port) for the whole run, as the app's does, with its
 * own accept path: the byte budget, the cap on unauthenticated connections, the header timeout,
 * libsoup's HTTP parser, the Host/Origin/path gate, and behind it the /extension handshake and
 * the /pairing socket. Each input is one TCP connection: the bytes are sent, the client stops
 * writing (shutdown), reads whatever comes back until the bridge closes, and closes too.
 *
 * Input: the bytes of the connection. "@PORT@" is replaced by the bridge's port, so a seed can
 * carry the one Host header the gate accepts (`Host: 127.0.0.1:@PORT@`) and reach the handlers.
 *
 * Besides memory safety, leaks and undefined behaviour, it checks:
 *   - the bridge closes every connection once its client has stopped writing (libFuzzer's
 *     -timeout catches one it keeps);
 *   - a connection that ended leaves nothing behind in the bridge: no pending upgrade, no
 *     handshake, no pairing (each would count against the cap of unauthenticated connections
 *     and, soon, lock out the browser).
 * A broken invariant aborts, so libFuzzer saves the input as a crash. */
#include "config.h"

#include "fuzz-common.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "chp-bridge-private.h"

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

#define CHECK(cond, ...)                                                   \
  G_STMT_START {                                                           \
    if (G_UNLIKELY (!(cond)))                                              \
      {                                                                    \
        g_printerr ("fuzz-bridge-http: check failed: %s: ", #cond);        \
        g_printerr (__VA_ARGS__);                                          \
        g_printerr ("\n");                                                 \
        abort ();                                                          \
      }                                                                    \
  } G_STMT_END

static ChpBridge *bridge;
static GSocketAddress *bridge_address;
static char *port_text;

int
LLVMFuzzerInitialize (int    *argc,
                      char ***argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpIdentity) identity = NULL;
  g_autoptr(ChpDeviceList) devices = NULL;
  g_autoptr(ChpPairingManager) pairing = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);

  fuzz_init ();
  signal (SIGPIPE, SIG_IGN);

  identity = chp_identity_new_ephemeral ();
  devices = chp_device_list_new ();
  pairing = chp_pairing_manager_new (NULL);
  bridge = chp_bridge_new (identity, NULL, devices, pairing);
  CHECK (chp_bridge_listen (bridge, 0, &error), "listen: %s", error->message);
  bridge_address = g_inet_socket_address_new (loopback, chp_bridge_get_port (bridge));
  port_text = g_strdup_printf ("%u", chp_bridge_get_port (bridge));
  return 0;
}

static void
drain (void)
{
  while (g_main_context_iteration (NULL, FALSE))
    ;
}

static gboolean
wake_cb (GSocket      *socket,
         GIOCondition  condition,
         gpointer      user_data)
{
  return G_SOURCE_REMOVE;
}

/* Until the bridge closes the connection: send what is left, then read what comes back. */
static void
converse (GSocket    *client,
          const char *data,
          gsize       size)
{
  gsize sent = 0;
  gboolean shut = FALSE;

  for (;;)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GSource) wake = NULL;
      char buf[16384];
      gssize n;

      if (sent < size)
        {
          n = g_socket_send (client, data + sent, size - sent, NULL, &error);
          if (n > 0)
            sent += n;
          else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
            sent = size;  /* the bridge closed or reset the connection: nothing more to say */
          g_clear_error (&error);
        }
      if (sent == size && !shut)
        {
          /* The client has said everything: a half close, as a peer that stops writing. */
          g_socket_shutdown (client, FALSE, TRUE, NULL);
          shut = TRUE;
        }

      n = g_socket_receive (client, buf, sizeof buf, NULL, &error);
      if (n == 0 || (n < 0 && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)))
        return;
      if (n > 0)
        continue;

      /* Nothing to read yet: let the bridge run, and wait for it when it has nothing to do. */
      wake = g_socket_create_source (client, G_IO_IN | G_IO_HUP | G_IO_ERR |
                                     (sent < size ? G_IO_OUT : 0), NULL);
      g_source_set_callback (wake, G_SOURCE_FUNC (wake_cb), NULL, NULL);
      g_source_attach (wake, NULL);
      g_main_context_iteration (NULL, TRUE);
      g_source_destroy (wake);
      drain ();
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data,
                        size_t         size)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) client = NULL;
  g_autoptr(GString) input = g_string_new_len ((const char *) data, size);
  struct linger linger = { 1, 0 };

  g_string_replace (input, "@PORT@", port_text, 0);

  client = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP,
                         &error);
  CHECK (client != NULL, "socket: %s", error->message);
  /* A reset at the end, not TIME_WAIT: thousands of inputs a minute would run out of ports. */
  CHECK (setsockopt (g_socket_get_fd (client), SOL_SOCKET, SO_LINGER, &linger,
                     sizeof linger) == 0, "SO_LINGER");
  CHECK (g_socket_connect (client, bridge_address, NULL, &error), "connect: %s",
         error->message);
  g_socket_set_blocking (client, FALSE);

  converse (client, input->str, input->len);
  g_socket_close (client, NULL);
  drain ();

  /* Whatever the bytes were, the connection left nothing behind. */
  CHECK (g_hash_table_size (bridge->pending) == 0, "%u connections still waiting to upgrade",
         g_hash_table_size (bridge->pending));
  CHECK (bridge->handshakes->len == 0, "%u handshakes left", bridge->handshakes->len);
  CHECK (bridge->pairings == NULL || bridge->pairings->len == 0, "%u pairings left",
         bridge->pairings->len);
  return 0;
}
