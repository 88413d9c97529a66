/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-native-host-more.c: what the native host does for Firefox (a clear refusal: Firefox never
 * passes the origin the extension signs with), the manifest it is installed with, and an
 * administrator's Transport lock kept by the real engine. The relay itself is tested in
 * test-native-host.c. */
#include "config.h"

#include <string.h>

#include <gio/gio.h>

#include "test-native-host-harness.h"
#include "chp-test-client.h"

#define FIREFOX_MANIFEST_ARG "/home/someone/.mozilla/native-messaging-hosts/" \
                             "io.github.chaperone.native.json"

/* Runs the host as @argv says, stdin closed at once and the bridge port set to @port; returns
 * its exit status and, in @out, what it wrote to stdout. */
static int
run_host (const char * const *args,
          guint               port,
          GBytes            **out,
          char              **err)
{
  const char *path = g_getenv ("CHAPERONE_NATIVE_HOST");
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GBytes) err_bytes = NULL;
  g_autoptr(GBytes) nothing = g_bytes_new (NULL, 0);
  g_autoptr(GError) error = NULL;
  g_autofree char *port_text = g_strdup_printf ("%u", port);
  gsize len;

  g_assert_nonnull (path);
  g_ptr_array_add (argv, (char *) path);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (char *) args[i]);
  g_ptr_array_add (argv, NULL);

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                        G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_setenv (launcher, "G_MESSAGES_DEBUG", "all", TRUE);
  g_subprocess_launcher_setenv (launcher, "CHAPERONE_BRIDGE_PORT", port_text, TRUE);
  proc = g_subprocess_launcher_spawnv (launcher, (const char * const *) argv->pdata, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_communicate (proc, nothing, NULL, out, &err_bytes, &error));
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (proc));
  *err = g_strndup (g_bytes_get_data (err_bytes, &len), g_bytes_get_size (err_bytes));
  return g_subprocess_get_exit_status (proc);
}

/* Firefox starts a host with its manifest's path and the add-on's id, never the
 * moz-extension:// origin the add-on's WebSocket sends and signs. The host will not take an
 * origin from a message, so it refuses — in a native_error the extension can read and show —
 * and dials nothing. */
static void
test_firefox_refused (Fixture       *f,
                      gconstpointer  data)
{
  const char *ids[] = { "chaperone@chaperone.github.io", "{0f8c4f3e-9a0b-4c55-9d1e-2f4b7c6a8d90}" };
  g_autoptr(FakeBridge) fb = fake_bridge_new ();

  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      const char *args[] = { FIREFOX_MANIFEST_ARG, ids[i], NULL };
      g_autoptr(GBytes) out = NULL;
      g_autoptr(JsonParser) parser = json_parser_new ();
      g_autofree char *err = NULL;
      JsonObject *o;
      guint32 len;
      gsize size;
      const guint8 *bytes;

      g_test_message ("Firefox, add-on %s", ids[i]);
      g_assert_cmpint (run_host (args, fb->port, &out, &err), ==, 1);
      g_assert_nonnull (strstr (err, "Firefox"));

      /* Exactly one frame: native_error "unsupported", with the reason. */
      bytes = g_bytes_get_data (out, &size);
      g_assert_cmpuint (size, >, sizeof len);
      memcpy (&len, bytes, sizeof len);
      g_assert_cmpuint (size, ==, sizeof len + len);
      g_assert_true (json_parser_load_from_data (parser, (const char *) bytes + sizeof len, len,
                                                 NULL));
      o = json_node_get_object (json_parser_get_root (parser));
      g_assert_cmpstr (json_object_get_string_member (o, "type"), ==, "native_error");
      g_assert_cmpstr (json_object_get_string_member (o, "code"), ==, "unsupported");
      g_assert_nonnull (strstr (json_object_get_string_member (o, "message"), "origin"));
    }

  /* Nothing was dialled on the port the host was set to. */
  g_assert_cmpuint (fb->upgrades, ==, 0);
}

/* Only Firefox's exact calling shape gets the explanation; anything near it is refused as any
 * bad caller is, with nothing on stdout. */
static void
test_firefox_shape_only (Fixture       *f,
                         gconstpointer  data)
{
  const char *cases[][3] = {
    { "relative/io.github.chaperone.native.json", "chaperone@chaperone.github.io", NULL },
    { FIREFOX_MANIFEST_ARG, "", NULL },
    { FIREFOX_MANIFEST_ARG, "no at sign", NULL },
    { FIREFOX_MANIFEST_ARG, "plainname", NULL },
    { "/home/someone/manifest.txt", "chaperone@chaperone.github.io", NULL },
  };
  const char *too_many[] = { FIREFOX_MANIFEST_ARG, "chaperone@chaperone.github.io", "x", NULL };

  for (guint i = 0; i <= G_N_ELEMENTS (cases); i++)
    {
      const char * const *args = i < G_N_ELEMENTS (cases) ? cases[i] : too_many;
      g_autoptr(GBytes) out = NULL;
      g_autofree char *err = NULL;

      g_test_message ("argv: %s %s", args[0], args[1]);
      g_assert_cmpint (run_host (args, 1, &out, &err), ==, 1);
      g_assert_cmpuint (g_bytes_get_size (out), ==, 0);
      g_assert_nonnull (strstr (err, "caller origin"));
    }
}

/* The extension's id, from the development key in extension/manifest.json as Chrome derives
 * it: the first 32 hex digits of SHA-256 over the key's DER, each mapped 0-f to a-p. */
static char *
extension_id (void)
{
  const char *path = g_getenv ("CHAPERONE_EXTENSION_MANIFEST");
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree guint8 *der = NULL;
  guint8 digest[32];
  gsize len = 0;
  char *id;

  g_assert_nonnull (path);
  g_assert_true (json_parser_load_from_file (parser, path, &error));
  g_assert_no_error (error);
  der = g_base64_decode (json_object_get_string_member (json_node_get_object (
                           json_parser_get_root (parser)), "key"), &len);
  g_assert_cmpuint (len, >, 200);
  chp_sha256 (der, len, digest);

  id = g_malloc (33);
  for (guint i = 0; i < 16; i++)
    {
      id[2 * i] = 'a' + (digest[i] >> 4);
      id[2 * i + 1] = 'a' + (digest[i] & 0xf);
    }
  id[32] = '\0';
  return id;
}

/* The installed manifest is what Chrome requires: a valid name, an absolute path to this
 * program, type stdio, and origins of the form the host itself accepts. */
static void
test_manifest (Fixture       *f,
               gconstpointer  data)
{
  const char *path = g_getenv ("CHAPERONE_NATIVE_MANIFEST");
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GRegex) name_re = NULL;
  g_autoptr(GRegex) origin_re = NULL;
  JsonObject *o;
  JsonArray *origins;
  const char *exe;

  g_assert_nonnull (path);
  g_assert_true (json_parser_load_from_file (parser, path, &error));
  g_assert_no_error (error);
  o = json_node_get_object (json_parser_get_root (parser));

  name_re = g_regex_new ("^[a-z0-9_]+(\\.[a-z0-9_]+)*$", 0, 0, NULL);
  origin_re = g_regex_new ("^chrome-extension://[a-p]{32}/$", 0, 0, NULL);
  g_assert_true (g_regex_match (name_re, json_object_get_string_member (o, "name"), 0, NULL));
  g_assert_cmpstr (json_object_get_string_member (o, "name"), ==, "io.github.chaperone.native");
  g_assert_cmpuint (strlen (json_object_get_string_member (o, "description")), >, 0);
  g_assert_cmpstr (json_object_get_string_member (o, "type"), ==, "stdio");

  exe = json_object_get_string_member (o, "path");
  g_assert_true (g_path_is_absolute (exe));
  g_assert_true (g_str_has_suffix (exe, "/chaperone-native-host"));
  g_assert_null (strstr (exe, "@"));

  origins = json_object_get_array_member (o, "allowed_origins");
  g_assert_cmpuint (json_array_get_length (origins), >, 0);
  for (guint i = 0; i < json_array_get_length (origins); i++)
    g_assert_true (g_regex_match (origin_re, json_array_get_string_element (origins, i), 0,
                                  NULL));

  /* The one origin is the extension's own: Chrome starts the host for nothing else. */
  g_assert_cmpuint (json_array_get_length (origins), ==, 1);
  {
    g_autofree char *id = extension_id ();
    g_autofree char *origin = g_strdup_printf ("chrome-extension://%s/", id);

    g_assert_cmpstr (json_array_get_string_element (origins, 0), ==, origin);
  }
}

/* Transport=native: a browser's own WebSocket is refused at the upgrade, the host's socket is
 * served (the engine's signed challenge comes through it). Transport=websocket: the other way
 * round. The host says which way it is (chp-transport.h); a browser's WebSocket cannot. */
static void
test_transport_lock (Fixture       *f,
                     gconstpointer  data)
{
  ChpBridge *bridge = chp_engine_get_bridge (f->engine);
  g_autofree char *host_header = g_strdup_printf ("127.0.0.1:%u", f->port);
  g_autofree char *open = native_open ("/extension", f->port, NULL);

  chp_bridge_set_transport_lock (bridge, CHP_TRANSPORT_NATIVE);
  g_assert_cmpuint (chp_test_http_upgrade_status (f->port, "/extension", TEST_ORIGIN, host_header), ==, 403);
  g_assert_cmpuint (chp_test_http_upgrade_status (f->port, "/pairing", TEST_ORIGIN, host_header), ==, 403);
  {
    g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, f->port);
    g_autoptr(JsonNode) challenge = NULL;

    host_send (host, open);
    host_expect_opened (host, f->port);
    challenge = host_next (host, 5000);
    g_assert_nonnull (challenge);
    g_assert_cmpstr (str_of (challenge, "type"), ==, "challenge");
  }

  chp_bridge_set_transport_lock (bridge, CHP_TRANSPORT_WEBSOCKET);
  g_assert_cmpuint (chp_test_http_upgrade_status (f->port, "/extension", TEST_ORIGIN, host_header), ==, 101);
  {
    g_autoptr(Host) host = host_spawn (TEST_ORIGIN_ARG, f->port);
    g_autoptr(JsonNode) closed = NULL;

    host_send (host, open);
    closed = host_next (host, 5000);
    g_assert_nonnull (closed);
    g_assert_cmpstr (str_of (closed, "type"), ==, "native_closed");
    g_assert_cmpint (int_of (closed, "status"), ==, 403);
    g_assert_cmpint (host_wait_exit (host, PROMPT_MS), ==, 0);
  }

  chp_bridge_set_transport_lock (bridge, CHP_TRANSPORT_ANY);
  g_assert_cmpuint (chp_test_http_upgrade_status (f->port, "/extension", TEST_ORIGIN, host_header), ==, 101);
}

void
add_more_tests (void)
{
#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/chaperone/native-host/firefox/refused", test_firefox_refused);
  ADD ("/chaperone/native-host/firefox/shape-only", test_firefox_shape_only);
  ADD ("/chaperone/native-host/manifest", test_manifest);
  ADD ("/chaperone/native-host/transport-lock", test_transport_lock);
#undef ADD
}
