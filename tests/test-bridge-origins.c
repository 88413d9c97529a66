/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-bridge-origins.c: which Origin may open the bridge's two doors, for Firefox beside Chrome.
 * Firefox's extension origin is moz-extension://<UUID>, a UUID Firefox draws at random for each
 * profile's installation, so the gate cannot name the one extension it trusts as it can for
 * Chrome's fixed id: it takes the exact shape Firefox makes (lowercase, dashed, nothing after it)
 * and nothing else, and a device stays bound to the exact origin it paired from. */
#include "config.h"

#include "test-bridge-fixture.h"

#define FIREFOX_ORIGIN "moz-extension://1b4e28ba-2fa1-41d2-883f-0016d3cca427"
#define OTHER_FIREFOX  "moz-extension://0f8fad5b-d9cb-469f-a165-70867728950e"

/* What a web page, a file, another scheme or a near miss of Firefox's spelling can send as its
 * Origin: none may open either door. Browsers set Origin themselves, but a local process can send
 * anything, so the spelling is checked byte for byte (the signed texts use it as it is). */
static void
test_gate (Fixture       *f,
           gconstpointer  data)
{
  g_autofree char *host = g_strdup_printf ("127.0.0.1:%u", f->port);
  const char * const refused[] = {
    "null",
    "http://127.0.0.1",
    "https://example.com",
    "file://",
    "http://1b4e28ba-2fa1-41d2-883f-0016d3cca427",
    "https://moz-extension.example",
    "resource://gre",
    "chrome://browser",
    "about:blank",
    "safari-web-extension://1b4e28ba-2fa1-41d2-883f-0016d3cca427",
    "MOZ-EXTENSION://1b4e28ba-2fa1-41d2-883f-0016d3cca427",
    "moz-extension://1B4E28BA-2FA1-41D2-883F-0016D3CCA427",   /* Firefox writes it lowercase */
    "moz-extension://{1b4e28ba-2fa1-41d2-883f-0016d3cca427}", /* the pref's spelling, not the origin's */
    "moz-extension://1b4e28ba-2fa1-41d2-883f-0016d3cca427/",
    "moz-extension://1b4e28ba-2fa1-41d2-883f-0016d3cca427/popup/popup.html",
    "moz-extension://1b4e28ba-2fa1-41d2-883f-0016d3cca427:80",
    "moz-extension://x@1b4e28ba-2fa1-41d2-883f-0016d3cca427",
    "moz-extension://1b4e28ba-2fa1-41d2-883f-0016d3cca427 moz-extension://0f8fad5b-d9cb-469f-a165-70867728950e",
    "moz-extension://1b4e28ba2fa141d2883f0016d3cca427",
    "moz-extension://1b4e28ba-2fa1-41d2-883f-0016d3cca42",
    "moz-extension://1b4e28ba-2fa1-41d2-883f-0016d3cca4270",
    "moz-extension://1b4e28ba-2fa1-41d2-883f0-016d3cca427",
    "moz-extension://1b4e28bg-2fa1-41d2-883f-0016d3cca427",
    "moz-extension://1b4e28ba_2fa1_41d2_883f_0016d3cca427",
    "moz-extension://",
    "moz-extension:1b4e28ba-2fa1-41d2-883f-0016d3cca427",
    "moz-extension:///1b4e28ba-2fa1-41d2-883f-0016d3cca427",
  };
  const char * const taken[] = { FIREFOX_ORIGIN, OTHER_FIREFOX, CHP_TEST_ORIGIN };

  for (guint p = 0; p < 2; p++)
    {
      const char *path = p == 0 ? "/pairing" : "/extension";

      for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
        {
          guint status = chp_test_http_upgrade_status (f->port, path, refused[i], host);

          g_test_message ("%s origin=%s -> %u", path, refused[i], status);
          g_assert_cmpuint (status, ==, 403);
        }
      for (guint i = 0; i < G_N_ELEMENTS (taken); i++)
        g_assert_cmpuint (chp_test_http_upgrade_status (f->port, path, taken[i], host), ==, 101);
    }

  /* Nothing above reached a handler: no pairing window, no attempt counted against the lock. */
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (chp_engine_get_pairing (f->engine))), ==, 0);
}

/* A Firefox extension pairs, connects, and comes back after its socket closed; the device is
 * the origin it paired from, and the same keys from any other origin are refused. */
static void
test_firefox_pairs_and_stays_bound (Fixture       *f,
                                    gconstpointer  data)
{
  g_autoptr(ChpTestClient) client = chp_test_client_new (f->port, FIREFOX_ORIGIN);
  g_autoptr(ChpDevice) device = NULL;

  pair (f, client);
  device = chp_device_list_lookup (chp_engine_get_devices (f->engine), client->device_id);
  g_assert_nonnull (device);
  g_object_ref (device);
  g_assert_cmpstr (chp_device_get_origin (device), ==, FIREFOX_ORIGIN);

  g_assert_true (chp_test_client_connect (client, NULL));
  /* Reconnect: the socket closes (an event page suspended, the network changed) and the
   * extension authenticates again on a new one, with a new session. */
  soup_websocket_connection_close (client->ws, 1000, NULL);
  g_assert_true (chp_test_client_wait_closed (client, 3000));
  g_assert_true (chp_test_client_connect (client, NULL));

  /* The same installation, device id and key, from another Firefox profile's origin or from a
   * Chrome origin: 4401, however good the signature over that origin's text. */
  {
    const char * const elsewhere[] = { OTHER_FIREFOX, CHP_TEST_ORIGIN };

    for (guint i = 0; i < G_N_ELEMENTS (elsewhere); i++)
      {
        g_free (client->origin);
        client->origin = g_strdup (elsewhere[i]);
        g_assert_false (chp_test_client_connect (client, NULL));
        g_assert_true (chp_test_client_wait_closed (client, 3000));
        g_assert_cmpuint (client->close_code, ==, 4401);
      }
  }

  /* The device is not harmed by the attempts: from its own origin it is served again. */
  g_free (client->origin);
  client->origin = g_strdup (FIREFOX_ORIGIN);
  g_assert_true (chp_test_client_connect (client, NULL));
  g_assert_nonnull (chp_device_list_lookup (chp_engine_get_devices (f->engine), client->device_id));
}

/* A Chrome and a Firefox extension of the same person, each its own device; and a second
 * Firefox profile (another UUID) is a new device, not a key rotation of the first. */
static void
test_firefox_beside_chrome (Fixture       *f,
                            gconstpointer  data)
{
  g_autoptr(ChpTestClient) chrome = chp_test_client_new (f->port, NULL);
  g_autoptr(ChpTestClient) firefox = chp_test_client_new (f->port, FIREFOX_ORIGIN);
  g_autoptr(ChpTestClient) other = chp_test_client_new (f->port, OTHER_FIREFOX);

  pair (f, chrome);
  pair (f, firefox);
  pair (f, other);
  g_assert_cmpstr (chrome->device_id, !=, firefox->device_id);
  g_assert_cmpstr (firefox->device_id, !=, other->device_id);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (chp_engine_get_devices (f->engine))), ==, 3);

  g_assert_true (chp_test_client_connect (chrome, NULL));
  g_assert_true (chp_test_client_connect (firefox, NULL));
  g_assert_true (chp_test_client_connect (other, NULL));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/chaperone/bridge/origins/gate", test_gate);
  ADD ("/chaperone/bridge/origins/firefox-pairs-and-stays-bound", test_firefox_pairs_and_stays_bound);
  ADD ("/chaperone/bridge/origins/firefox-beside-chrome", test_firefox_beside_chrome);
#undef ADD

  return g_test_run ();
}
