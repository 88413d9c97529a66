/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-native-host.c: the built chaperone-native-host driven as Chrome drives it — framed JSON on
 * its stdin and stdout — against a real engine, and against a scripted WebSocket server for what
 * the engine never does on purpose (oversized frames, HTTP refusals, exact bytes, close codes). */
#include "config.h"

#include <signal.h>
#include <string.h>

#include <gio/gio.h>
#include <libsoup/soup.h>

#include "test-native-host-harness.h"

/* ---- through the host to the real engine ---------------------------------------------- */

static void
assert_signed_challenge (Fixture  *f,
                         JsonNode *challenge)
{
  ChpIdentity *identity = chp_engine_get_identity (f->engine);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_nonnull (challenge);
  g_assert_cmpstr (str_of (challenge, "type"), ==, "challenge");
  g_assert_cmpint (int_of (challenge, "protocol"), ==, 1);
  g_assert_cmpstr (str_of (challenge, "engineId"), ==, chp_identity_get_engine_id (identity));
  g_assert_cmpstr (str_of (challenge, "engineInstanceId"), ==,
                   chp_bridge_get_instance_id (chp_engine_get_bridge (f->engine)));
  g_assert_cmpuint (strlen (str_of (challenge, "connectionId")), ==, 22);
  g_assert_cmpuint (strlen (str_of (challenge, "challenge")), ==, 43);
  g_assert_cmpint (int_of (challenge, "timestamp"), >, 0);

  /* The relay passed the bytes untouched: the engine's signature still verifies. */
  text = chp_auth_challenge_text (str_of (challenge, "engineId"),
                                  str_of (challenge, "engineInstanceId"),
                                  str_of (challenge, "connectionId"),
                                  str_of (challenge, "challenge"),
                                  int_of (challenge, "timestamp"), &error);
  g_assert_no_error (error);
  g_assert_true (chp_verify_p1363 (chp_identity_get_x (identity), chp_identity_get_y (identity),
                                   text, str_of (challenge, "signature"), &error));
  g_assert_no_error (error);
}

static void
test_extension_challenge (Fixture       *f,
                          gconstpointer  data)
{
  g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, f->port);
  g_autofree char *open = native_open ("/extension", f->port, NULL);
  g_autoptr(JsonNode) challenge = NULL;
  g_autoptr(JsonNode) closed = NULL;

  host_send (host, open);
  host_expect_opened (host, f->port);
  challenge = host_next (host, 5000);
  assert_signed_challenge (f, challenge);

  /* Anything but auth first: the engine closes 4401 and the host reports it, then exits 0. */
  host_send (host, "{\"type\":\"ping\",\"sequence\":1,\"timestamp\":1}");
  closed = host_next (host, 5000);
  g_assert_nonnull (closed);
  g_assert_cmpstr (str_of (closed, "type"), ==, "native_closed");
  g_assert_cmpint (int_of (closed, "code"), ==, 4401);
  g_assert_nonnull (str_of (closed, "reason"));
  g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 0);
  assert_stdout_drained (host);
}

static ChpPairingRequest *
waiting_request (Fixture *f)
{
  GListModel *model = G_LIST_MODEL (chp_engine_get_pairing (f->engine));

  if (g_list_model_get_n_items (model) == 0)
    return NULL;

  return g_list_model_get_item (model, 0);
}

static gboolean
device_online (gpointer data)
{
  return chp_device_get_online (data);
}

static gboolean
device_offline (gpointer data)
{
  return !chp_device_get_online (data);
}

/* Pairs through the host, then connects through a second host, as the extension would with
 * connectNative. The host runs for a second extension id and native_open claims another origin
 * each time: the engine must see the argv origin in the pairing window, in the stored device
 * and in the signed auth text. */
static void
test_pair_and_connect (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(ChpTestClient) ext = chp_test_client_new (f->port, OTHER_ORIGIN);
  g_autoptr(Host) host = host_spawn (OTHER_ORIGIN_ARG, f->port);
  g_autofree char *open = native_open ("/pairing", f->port, EVIL_FIELDS);
  g_autofree char *nonce_c = chp_random_b64url (32);
  g_autofree char *commitment = NULL;
  g_autofree char *text = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(ChpPairingRequest) request = NULL;
  ChpDevice *device;

  /* Pairing: the extension speaks first, right after native_open. */
  host_send (host, open);
  commitment = chp_pair_commitment (nonce_c, chp_identity_get_x (ext->key),
                                    chp_identity_get_y (ext->key), NULL);
  text = chp_test_client_build_pair_request (ext, commitment);
  host_send (host, text);

  node = host_next_type (host, "pair_challenge", 5000);
  g_assert_nonnull (node);
  g_free (text);
  text = chp_test_client_build_pair_reveal (ext, json_node_get_object (node), nonce_c);
  g_clear_pointer (&node, json_node_unref);
  host_send (host, text);

  node = host_next_type (host, "pair_pending", 5000);
  g_assert_nonnull (node);
  g_clear_pointer (&node, json_node_unref);

  /* The window shows the argv origin, and the code the browser computed with it matches. */
  request = waiting_request (f);
  g_assert_nonnull (request);
  g_assert_cmpstr (chp_pairing_request_get_origin (request), ==, OTHER_ORIGIN);
  g_assert_cmpstr (chp_pairing_request_get_code (request), ==, ext->code);
  chp_pairing_request_approve (request, FALSE);

  /* Signed by the engine over the transcript with the argv origin in it. */
  node = host_next_type (host, "pair_approved", 10000);
  g_assert_nonnull (node);
  g_assert_true (chp_test_client_check_approval (ext, json_node_get_object (node)));
  g_clear_pointer (&node, json_node_unref);

  /* The engine ends a pairing socket with 1000; so does the host, with status 0. */
  node = host_next_type (host, "native_closed", 5000);
  g_assert_nonnull (node);
  g_assert_cmpint (int_of (node, "code"), ==, 1000);
  g_clear_pointer (&node, json_node_unref);
  g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 0);
  assert_stdout_drained (host);
  g_clear_pointer (&host, host_free);

  /* Connect through a fresh host, as a new connectNative port would. The auth is signed over
   * the argv origin: the engine accepting it shows that is the origin it saw. */
  host = host_spawn (OTHER_ORIGIN_ARG, f->port);
  g_free (open);
  open = native_open ("/extension", f->port, EVIL_FIELDS);
  host_send (host, open);
  node = host_next_type (host, "challenge", 5000);
  assert_signed_challenge (f, node);
  g_free (text);
  text = chp_test_client_build_auth (ext, json_node_get_object (node), NULL);
  g_assert_nonnull (text);
  g_clear_pointer (&node, json_node_unref);
  host_send (host, text);

  node = host_next_type (host, "hello_ack", 5000);
  g_assert_nonnull (node);
  g_assert_cmpstr (str_of (node, "deviceId"), ==, ext->device_id);
  g_clear_pointer (&node, json_node_unref);

  device = chp_device_list_lookup (chp_engine_get_devices (f->engine), ext->device_id);
  g_assert_nonnull (device);
  g_assert_cmpstr (chp_device_get_origin (device), ==, OTHER_ORIGIN);
  g_assert_true (chp_test_spin_until (device_online, device, 2000));

  /* A request through the relay and its answer. */
  host_send (host, "{\"type\":\"request\",\"id\":\"c1\",\"method\":\"engine.info\",\"params\":{},"
                   "\"timeoutMs\":5000}");
  node = host_next_type (host, "response", 5000);
  g_assert_nonnull (node);
  g_assert_cmpstr (str_of (node, "id"), ==, "c1");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (
                     json_node_get_object (node), "result"), "deviceId"), ==, ext->device_id);
  g_clear_pointer (&node, json_node_unref);

  /* The browser closes the port: the host closes the socket and exits 0; the device goes
   * offline. */
  host_close_stdin (host);
  g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 0);
  g_assert_true (chp_test_spin_until (device_offline, device, 2000));
}

static void
test_first_message_refused (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(FakeBridge) fb = fake_bridge_new ();
  /* %u is the scripted server's port, so a host that wrongly accepted one would reach it. */
  const char *bad[] = {
    "{\"type\":\"auth\",\"path\":\"/extension\",\"port\":%u}",
    "{\"path\":\"/extension\",\"port\":%u}",
    "{\"type\":\"native_open\",\"path\":\"/other\",\"port\":%u}",
    "{\"type\":\"native_open\",\"path\":\"/extension/\",\"port\":%u}",
    "{\"type\":\"native_open\",\"port\":%u}",
    "{\"type\":\"native_open\",\"path\":\"/extension\",\"port\":\"%u\"}",
    "{\"type\":\"native_open\",\"path\":\"/extension\",\"port\":0,\"p\":%u}",
    "{\"type\":\"native_open\",\"path\":\"/extension\",\"port\":%u.5}",
    "{\"type\":\"native_open\",\"path\":\"/extension\",\"port\":%u0000}",
    "{\"type\":\"native_open\",\"path\":\"/extension\",\"port\":-%u}",
    ("{\"type\":\"native_open\",\"path\":\"/extension\",\"port\":%u,"
     "\"x\":[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]}"),
    "[\"native_open\",\"/extension\",%u]",
    /* Members of another type: refused like any other, not a critical on the way. */
    "{\"type\":{\"native_open\":true},\"path\":\"/extension\",\"port\":%u}",
    "{\"type\":\"native_open\",\"path\":[\"/extension\"],\"port\":%u}",
    "native_open %u",
    "",
  };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, fb->port);
      g_autoptr(JsonNode) error = NULL;
      g_autofree char *text = NULL;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
      text = g_strdup_printf (bad[i], fb->port);
#pragma GCC diagnostic pop
      g_test_message ("first message: %s", text);
      host_send (host, text);
      error = host_next (host, 5000);
      g_assert_nonnull (error);
      g_assert_cmpstr (str_of (error, "type"), ==, "native_error");
      g_assert_cmpstr (str_of (error, "code"), ==, "invalid_params");
      g_assert_cmpuint (strlen (str_of (error, "message")), >, 0);
      g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 1);
      assert_stdout_drained (host);
    }

  /* None of them even reached the server. */
  g_assert_cmpuint (fb->upgrades, ==, 0);
}

/* A length prefix over 16 MiB ends the host at once, whatever follows and with stdin still
 * open: it does not wait to read (or allocate) the claimed bytes. */
static void
test_oversized_prefix (Fixture       *f,
                       gconstpointer  data)
{
  static const char trailer[] = "{\"type\":\"native_open\"";
  guint32 prefix = MAX_IN_BYTES + 1;
  g_autofree char *open = native_open ("/extension", f->port, NULL);
  g_autoptr(GByteArray) claim = g_byte_array_new ();

  /* One write, well under PIPE_BUF: the host may exit as soon as it has the prefix, and a
   * second write would race its exit (EPIPE). */
  g_byte_array_append (claim, (const guint8 *) &prefix, sizeof prefix);
  g_byte_array_append (claim, (const guint8 *) trailer, strlen (trailer));

  /* As the first message. */
  {
    g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, 0);
    gint64 start = g_get_monotonic_time ();

    host_write_raw (host, claim->data, claim->len);
    g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 1);
    g_assert_cmpint (g_get_monotonic_time () - start, <, PROMPT_MS * 1000);
    assert_stdout_drained (host);
  }

  /* In the middle of a relay: no further frame, the socket is not reported as closed. */
  {
    g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, f->port);
    g_autoptr(JsonNode) challenge = NULL;
    gint64 start;

    host_send (host, open);
    host_expect_opened (host, f->port);
    challenge = host_next (host, 5000);
    assert_signed_challenge (f, challenge);

    start = g_get_monotonic_time ();
    host_write_raw (host, claim->data, claim->len);
    g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 1);
    g_assert_cmpint (g_get_monotonic_time () - start, <, PROMPT_MS * 1000);
    assert_stdout_drained (host);
  }
}

/* Exactly 16 MiB is still a message: it reaches the bridge whole. */
static void
test_largest_message_relayed (Fixture       *f,
                              gconstpointer  data)
{
  g_autoptr(FakeBridge) fb = fake_bridge_new ();
  g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, fb->port);
  g_autofree char *open = native_open ("/extension", fb->port, NULL);
  g_autofree char *big = padded_message (MAX_IN_BYTES);
  Received one = { fb, 1 };

  host_send (host, open);
  g_assert_true (chp_test_spin_until (fake_has_socket, fb, 5000));
  host_send_len (host, big, MAX_IN_BYTES);
  g_assert_true (chp_test_spin_until (fake_received_n, &one, 10000));
  assert_bytes_eq (g_ptr_array_index (fb->received, 0), big, MAX_IN_BYTES);

  host_close_stdin (host);
  g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 0);
}

static void
test_origin_refused (Fixture       *f,
                     gconstpointer  data)
{
  const char *path = g_getenv ("CHAPERONE_NATIVE_HOST");
  const char *bad[] = {
    NULL,
    "",
    "https://evil.example/",
    "chrome-extension://",
    "chrome-extension://abcdefghijklmnopabcdefghijklmno/",
    "chrome-extension://abcdefghijklmnopabcdefghijklmnopa/",
    "chrome-extension://abcdefghijklmnopabcdefghijklmnoq/",
    "chrome-extension://ABCDEFGHIJKLMNOPABCDEFGHIJKLMNOP/",
    "chrome-extension://abcdefghijklmnopabcdefghijklmnop/x",
    "chrome-extension://abcdefghijklmnopabcdefghijklmnop//",
    "chrome-extension://abcdefghijklmnopabcdefghijklmnop/ ",
    "Chrome-Extension://abcdefghijklmnopabcdefghijklmnop/",
    "moz-extension://0f8c4f3e-9a0b-4c55-9d1e-2f4b7c6a8d90/",
    "/home/user/.mozilla/native-messaging-hosts/io.github.chaperone.native.json",
  };
  const char *good[] = { TEST_ORIGIN_ARG, TEST_ORIGIN, OTHER_ORIGIN_ARG };

  g_assert_nonnull (path);

  for (guint i = 0; i < G_N_ELEMENTS (bad) + G_N_ELEMENTS (good); i++)
    {
      gboolean refused = i < G_N_ELEMENTS (bad);
      const char *arg = refused ? bad[i] : good[i - G_N_ELEMENTS (bad)];
      g_autoptr(GSubprocess) proc = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *out = NULL;
      g_autofree char *err = NULL;

      g_test_message ("argv[1]: %s", arg ? arg : "(none)");
      proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                               G_SUBPROCESS_FLAGS_STDERR_PIPE, &error, path, arg, NULL);
      g_assert_no_error (error);
      /* stdin is closed at once: a host that accepted the origin would then exit 0. */
      g_assert_true (g_subprocess_communicate_utf8 (proc, NULL, NULL, &out, &err, &error));
      g_assert_no_error (error);
      g_assert_true (g_subprocess_get_if_exited (proc));
      g_assert_cmpstr (out, ==, "");

      if (refused)
        {
          g_assert_cmpint (g_subprocess_get_exit_status (proc), ==, 1);
          g_assert_nonnull (strstr (err, "caller origin"));
        }
      else
        {
          g_assert_cmpint (g_subprocess_get_exit_status (proc), ==, 0);
          g_assert_cmpstr (err, ==, "");
        }
    }
}

/* ---- through the host to a scripted server --------------------------------------------- */

/* The Origin the server sees is argv[1] without its slash, whatever native_open says. */
static void
test_origin_from_argv_only (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(FakeBridge) fb = fake_bridge_new ();
  g_autoptr(Host) host = host_spawn (OTHER_ORIGIN_ARG, fb->port);
  g_autofree char *open = native_open ("/pairing", fb->port, EVIL_FIELDS);
  g_autofree char *host_header = g_strdup_printf ("127.0.0.1:%u", fb->port);

  host_send (host, open);
  g_assert_true (chp_test_spin_until (fake_has_socket, fb, 5000));
  g_assert_cmpstr (fb->origin, ==, OTHER_ORIGIN);
  g_assert_cmpstr (fb->host_header, ==, host_header);
  g_assert_cmpstr (fb->path, ==, "/pairing");
  g_assert_cmpuint (fb->upgrades, ==, 1);
  host_expect_opened (host, fb->port);

  host_close_stdin (host);
  g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 0);
  /* The browser went away: the socket is closed as "going away". */
  g_assert_true (chp_test_spin_until (fake_closed, fb, PROMPT_MS));
  g_assert_cmpuint (fb->close_code, ==, SOUP_WEBSOCKET_CLOSE_GOING_AWAY);
  assert_stdout_drained (host);
}

/* Messages pass byte for byte both ways, in order, including what the browser sent before the
 * socket was open; the close code and reason reach the browser. */
static void
test_relay_exact (Fixture       *f,
                  gconstpointer  data)
{
  static const char *down[] = {
    "{ \"type\" : \"event\",\n \"text\": \"caf\xc3\xa9 \xe2\x9c\x93 \\u00e9\", \"n\": 1.50 }",
    "{\"type\":\"pong\",\"sequence\":7,\"timestamp\":1,\"replyTimestamp\":2,\"extra\":null}",
  };
  static const char *up[] = {
    "{\"type\":\"auth\" , \"z\":\"\xe2\x82\xac\",\"a\":[ 1,2 ]}",
    "{\"type\":\"ping\",\"sequence\":1,\"timestamp\":1}",
    "{\"type\":\"cancel\",\"id\":\"\\\"quoted\\\"\"}",
  };
  g_autoptr(FakeBridge) fb = fake_bridge_new ();
  g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, fb->port);
  g_autofree char *open = native_open ("/extension", fb->port, NULL);
  g_autoptr(GByteArray) burst = g_byte_array_new ();
  g_autoptr(JsonNode) closed = NULL;
  Received all = { fb, G_N_ELEMENTS (up) };

  for (guint i = 0; i < G_N_ELEMENTS (down); i++)
    fake_greet (fb, down[i], strlen (down[i]));

  /* One write: native_open and three messages that arrive before the socket is open. */
  frame_append (burst, open, strlen (open));
  for (guint i = 0; i < G_N_ELEMENTS (up); i++)
    frame_append (burst, up[i], strlen (up[i]));
  host_write_raw (host, burst->data, burst->len);
  host_expect_opened (host, fb->port);

  for (guint i = 0; i < G_N_ELEMENTS (down); i++)
    {
      g_autoptr(GBytes) got = host_next_bytes (host, 5000);

      assert_bytes_eq (got, down[i], strlen (down[i]));
    }

  g_assert_true (chp_test_spin_until (fake_received_n, &all, 5000));
  g_assert_cmpuint (fb->received->len, ==, G_N_ELEMENTS (up));
  for (guint i = 0; i < G_N_ELEMENTS (up); i++)
    assert_bytes_eq (g_ptr_array_index (fb->received, i), up[i], strlen (up[i]));
  g_assert_cmpstr (fb->origin, ==, TEST_ORIGIN);

  soup_websocket_connection_close (fb->ws, 4000, "bye \xe2\x9c\x93");
  closed = host_next (host, 5000);
  g_assert_nonnull (closed);
  g_assert_cmpstr (str_of (closed, "type"), ==, "native_closed");
  g_assert_cmpint (int_of (closed, "code"), ==, 4000);
  g_assert_cmpstr (str_of (closed, "reason"), ==, "bye \xe2\x9c\x93");
  g_assert_false (json_object_has_member (json_node_get_object (closed), "status"));
  g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 0);
  assert_stdout_drained (host);
}

/* The HTTP refusal at the upgrade (the bridge's Host/Origin gate answers 403). */
static void
test_upgrade_refused (Fixture       *f,
                      gconstpointer  data)
{
  g_autoptr(FakeBridge) fb = fake_bridge_new ();
  g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, fb->port);
  g_autofree char *open = native_open ("/extension", fb->port, NULL);
  g_autoptr(GByteArray) burst = g_byte_array_new ();
  g_autoptr(JsonNode) closed = NULL;

  fb->refuse_status = SOUP_STATUS_FORBIDDEN;
  /* A message right behind native_open, in the same write (the host may be gone before a second
   * one): it waits for the socket, and is discarded with the failed connection. */
  frame_append (burst, open, strlen (open));
  frame_append (burst, "{\"type\":\"auth\"}", 15);
  host_write_raw (host, burst->data, burst->len);

  closed = host_next (host, 5000);
  g_assert_nonnull (closed);
  g_assert_cmpstr (str_of (closed, "type"), ==, "native_closed");
  g_assert_cmpint (int_of (closed, "code"), ==, 0);
  g_assert_cmpint (int_of (closed, "status"), ==, 403);
  g_assert_cmpuint (fb->upgrades, ==, 1);
  g_assert_null (fb->ws);
  g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 0);
  assert_stdout_drained (host);
}

/* A loopback port that is bound but not listening: it refuses connections, and stays ours while
 * @sock lives. */
static guint
refusing_port (GSocket **sock)
{
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) any = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;
  g_autoptr(GError) error = NULL;

  *sock = g_socket_new (G_SOCKET_FAMILY_IPV4, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_TCP, &error);
  g_assert_no_error (error);
  g_assert_true (g_socket_bind (*sock, any, FALSE, &error));
  bound = g_socket_get_local_address (*sock, &error);
  g_assert_no_error (error);
  return g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
}

/* Nothing listens on the port (the app is not running): code 0, status 0. */
static void
test_nothing_listening (Fixture       *f,
                        gconstpointer  data)
{
  g_autoptr(GSocket) sock = NULL;
  g_autoptr(Host) host = NULL;
  g_autoptr(JsonNode) closed = NULL;
  g_autofree char *open = NULL;
  guint port = refusing_port (&sock);

  host = host_spawn (TEST_ORIGIN_ARG, port);
  open = native_open ("/pairing", port, NULL);
  host_send (host, open);
  closed = host_next (host, 5000);
  g_assert_nonnull (closed);
  g_assert_cmpstr (str_of (closed, "type"), ==, "native_closed");
  g_assert_cmpint (int_of (closed, "code"), ==, 0);
  g_assert_cmpint (int_of (closed, "status"), ==, 0);
  g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 0);
  assert_stdout_drained (host);
}

/* The host dials the bridge's port as the host knows it — its environment, else the app's
 * setting, else 64333 — and never a port a message names: the extension's word could point it
 * at any local service, with the extension's Origin. */
static void
test_port_from_host (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(FakeBridge) fb = fake_bridge_new ();
  g_autoptr(GSocket) sock = NULL;
  guint elsewhere = refusing_port (&sock);

  /* No port in native_open: the host's own. */
  {
    g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, fb->port);

    host_send (host, "{\"type\":\"native_open\",\"path\":\"/extension\"}");
    g_assert_true (chp_test_spin_until (fake_has_socket, fb, 5000));
    g_assert_cmpuint (fb->upgrades, ==, 1);
    host_close_stdin (host);
    g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 0);
  }

  /* A port the host was not set to, even one where a bridge answers: refused, not dialled. */
  {
    g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, elsewhere);
    g_autofree char *open = native_open ("/extension", fb->port, NULL);
    g_autoptr(JsonNode) error = NULL;

    host_send (host, open);
    error = host_next (host, 5000);
    g_assert_nonnull (error);
    g_assert_cmpstr (str_of (error, "type"), ==, "native_error");
    g_assert_cmpstr (str_of (error, "code"), ==, "invalid_params");
    g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 1);
    assert_stdout_drained (host);
    g_assert_cmpuint (fb->upgrades, ==, 1);
  }
}

/* Without an override in its environment, the host reads the app's own `bridge-port` setting:
 * a person who moved the bridge in Preferences has nothing else to change. */
static void
test_port_from_setting (Fixture       *f,
                        gconstpointer  data)
{
  const char *schema = g_getenv ("CHAPERONE_SCHEMA");
  const char *compiler = g_getenv ("CHAPERONE_COMPILE_SCHEMAS");
  g_autoptr(FakeBridge) fb = fake_bridge_new ();
  g_autofree char *schemas = g_build_filename (f->dir, "schemas", NULL);
  g_autofree char *config = g_build_filename (f->dir, "config", NULL);
  g_autofree char *keyfile_dir = g_build_filename (config, "glib-2.0", "settings", NULL);
  g_autofree char *keyfile = g_build_filename (keyfile_dir, "keyfile", NULL);
  g_autofree char *copy = NULL;
  g_autofree char *xml = NULL;
  g_autofree char *settings = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(Host) host = NULL;
  int status = -1;
  gsize len;

  g_assert_nonnull (schema);
  g_assert_nonnull (compiler);

  /* The app's real schema, compiled here, and its setting in a keyfile backend. */
  g_assert_cmpint (g_mkdir_with_parents (schemas, 0700), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (keyfile_dir, 0700), ==, 0);
  g_assert_true (g_file_get_contents (schema, &xml, &len, &error));
  copy = g_build_filename (schemas, "io.github.chaperone.Chaperone.gschema.xml", NULL);
  g_assert_true (g_file_set_contents (copy, xml, len, &error));
  {
    const char *argv[] = { compiler, "--strict", schemas, NULL };

    g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL,
                                 NULL, &status, &error));
    g_assert_no_error (error);
    g_assert_true (g_spawn_check_wait_status (status, NULL));
  }
  settings = g_strdup_printf ("[io/github/chaperone/Chaperone]\nbridge-port=%u\n", fb->port);
  g_assert_true (g_file_set_contents (keyfile, settings, -1, &error));
  g_assert_no_error (error);

  {
    const char *env[] = {
      "GSETTINGS_SCHEMA_DIR", schemas, "GSETTINGS_BACKEND", "keyfile", "XDG_CONFIG_HOME", config,
      NULL,
    };

    host = host_spawn_env (TEST_ORIGIN_ARG, env);
  }
  host_send (host, "{\"type\":\"native_open\",\"path\":\"/pairing\"}");
  g_assert_true (chp_test_spin_until (fake_has_socket, fb, 5000));
  g_assert_cmpstr (fb->path, ==, "/pairing");
  host_close_stdin (host);
  g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 0);
}

/* An override that is not a port ends the host with status 1 before it reads anything (a
 * browser that closes the port at once would otherwise see a clean 0). */
static void
test_port_env_refused (Fixture       *f,
                       gconstpointer  data)
{
  static const char *bad[] = { "0", "65536", "80x", "-1", " 80", "0x50", "99999999999" };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      const char *env[] = { "CHAPERONE_BRIDGE_PORT", bad[i], NULL };
      g_autoptr(Host) host = host_spawn_env (TEST_ORIGIN_ARG, env);

      g_test_message ("CHAPERONE_BRIDGE_PORT=\"%s\"", bad[i]);
      host_close_stdin (host);
      g_assert_cmpint (host_wait_exit (host, 10000), ==, 1);
      assert_stdout_drained (host);
    }
}

/* Chrome's 1 MiB limit: exactly 1 MiB is forwarded; anything more is reported, not forwarded —
 * both one byte over (the host's own check) and a frame over libsoup's limit (its check). */
static void
test_too_large_for_browser (Fixture       *f,
                            gconstpointer  data)
{
  const gsize too_big[] = { MAX_OUT_BYTES + 1, MAX_OUT_BYTES + 2, 4 * MAX_OUT_BYTES };
  g_autofree char *fits = padded_message (MAX_OUT_BYTES);

  for (guint i = 0; i < G_N_ELEMENTS (too_big); i++)
    {
      g_autoptr(FakeBridge) fb = fake_bridge_new ();
      g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, fb->port);
      g_autofree char *open = native_open ("/extension", fb->port, NULL);
      g_autofree char *over = padded_message (too_big[i]);
      g_autoptr(GBytes) got = NULL;
      g_autoptr(JsonNode) error = NULL;

      g_test_message ("a message of %" G_GSIZE_FORMAT " bytes", too_big[i]);
      fake_greet (fb, fits, MAX_OUT_BYTES);
      fake_greet (fb, over, too_big[i]);
      host_send (host, open);
      host_expect_opened (host, fb->port);

      got = host_next_bytes (host, 5000);
      assert_bytes_eq (got, fits, MAX_OUT_BYTES);

      error = host_next (host, 5000);
      g_assert_nonnull (error);
      g_assert_cmpstr (str_of (error, "type"), ==, "native_error");
      g_assert_cmpstr (str_of (error, "code"), ==, "too_large");
      g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 1);
      assert_stdout_drained (host);
      g_assert_true (chp_test_spin_until (fake_closed, fb, PROMPT_MS));
    }
}

/* Native messaging is JSON text: a binary WebSocket message is not passed on. */
static void
test_binary_from_bridge (Fixture       *f,
                         gconstpointer  data)
{
  g_autoptr(FakeBridge) fb = fake_bridge_new ();
  g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, fb->port);
  g_autofree char *open = native_open ("/extension", fb->port, NULL);
  g_autoptr(JsonNode) error = NULL;

  fb->greet_binary = TRUE;
  fake_greet (fb, "{\"type\":\"challenge\"}", 21);
  host_send (host, open);
  host_expect_opened (host, fb->port);

  error = host_next (host, 5000);
  g_assert_nonnull (error);
  g_assert_cmpstr (str_of (error, "type"), ==, "native_error");
  g_assert_cmpstr (str_of (error, "code"), ==, "unsupported");
  g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 1);
  assert_stdout_drained (host);
  g_assert_true (chp_test_spin_until (fake_closed, fb, PROMPT_MS));
  g_assert_cmpuint (fb->close_code, ==, SOUP_WEBSOCKET_CLOSE_UNSUPPORTED_DATA);
}

/* A text frame must be UTF-8 without NULs: other bytes are refused, not sent. */
static void
test_not_utf8 (Fixture       *f,
               gconstpointer  data)
{
  static const char bad_utf8[] = "{\"type\":\"auth\",\"x\":\"\xff\xfe\"}";
  static const char with_nul[] = "{\"type\":\"auth\"}\0{}";
  const struct { const char *data; gsize len; } cases[] = {
    { bad_utf8, sizeof bad_utf8 - 1 },
    { with_nul, sizeof with_nul - 1 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(FakeBridge) fb = fake_bridge_new ();
      g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, fb->port);
      g_autofree char *open = native_open ("/extension", fb->port, NULL);
      g_autoptr(JsonNode) error = NULL;

      host_send (host, open);
      g_assert_true (chp_test_spin_until (fake_has_socket, fb, 5000));
      host_expect_opened (host, fb->port);
      host_send_len (host, cases[i].data, cases[i].len);

      error = host_next (host, 5000);
      g_assert_nonnull (error);
      g_assert_cmpstr (str_of (error, "type"), ==, "native_error");
      g_assert_cmpstr (str_of (error, "code"), ==, "invalid_params");
      g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 1);
      assert_stdout_drained (host);
      g_assert_true (chp_test_spin_until (fake_closed, fb, PROMPT_MS));
      g_assert_cmpuint (fb->received->len, ==, 0);
    }
}

/* The browser closes the port: before native_open, after it, and in the middle of a frame. */
static void
test_stdin_eof (Fixture       *f,
                gconstpointer  data)
{
  /* Before anything was sent. */
  {
    g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, 0);

    host_close_stdin (host);
    g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 0);
    assert_stdout_drained (host);
  }

  /* With the engine's socket open: the engine sees the socket go. */
  {
    g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, f->port);
    g_autofree char *open = native_open ("/extension", f->port, NULL);
    g_autoptr(JsonNode) challenge = NULL;

    host_send (host, open);
    host_expect_opened (host, f->port);
    challenge = host_next (host, 5000);
    assert_signed_challenge (f, challenge);
    host_close_stdin (host);
    g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 0);
    assert_stdout_drained (host);
  }

  /* Cut in a length prefix, or in a message: a broken pipe, not a clean close. */
  {
    g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, 0);
    guint16 half = 40;

    host_write_raw (host, &half, sizeof half);
    host_close_stdin (host);
    g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 1);
    assert_stdout_drained (host);
  }
  {
    g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, 0);
    guint32 prefix = 40;

    host_write_raw (host, &prefix, sizeof prefix);
    host_write_raw (host, "{\"type\":", 8);
    host_close_stdin (host);
    g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 1);
    assert_stdout_drained (host);
  }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  /* A host that exits early must fail a write with EPIPE, not kill the test. */
  signal (SIGPIPE, SIG_IGN);

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/chaperone/native-host/extension-challenge", test_extension_challenge);
  ADD ("/chaperone/native-host/pair-and-connect", test_pair_and_connect);
  ADD ("/chaperone/native-host/first-message-refused", test_first_message_refused);
  ADD ("/chaperone/native-host/oversized-prefix", test_oversized_prefix);
  ADD ("/chaperone/native-host/largest-message-relayed", test_largest_message_relayed);
  ADD ("/chaperone/native-host/origin/refused", test_origin_refused);
  ADD ("/chaperone/native-host/origin/from-argv-only", test_origin_from_argv_only);
  ADD ("/chaperone/native-host/relay-exact", test_relay_exact);
  ADD ("/chaperone/native-host/upgrade-refused", test_upgrade_refused);
  ADD ("/chaperone/native-host/nothing-listening", test_nothing_listening);
  ADD ("/chaperone/native-host/too-large-for-browser", test_too_large_for_browser);
  ADD ("/chaperone/native-host/binary-from-bridge", test_binary_from_bridge);
  ADD ("/chaperone/native-host/not-utf8", test_not_utf8);
  ADD ("/chaperone/native-host/stdin-eof", test_stdin_eof);
  ADD ("/chaperone/native-host/port/from-host", test_port_from_host);
  ADD ("/chaperone/native-host/port/from-setting", test_port_from_setting);
  ADD ("/chaperone/native-host/port/env-refused", test_port_env_refused);
#undef ADD
  add_more_tests ();

  return g_test_run ();
}
