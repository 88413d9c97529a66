/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-doctor.c: `chaperone doctor`'s checks and the administrator's policy file. Each thing a
 * setup needs is made right in a private home, then broken, and the doctor must name it (by its
 * finding's id and level) and say what to do; --fix must mend what it says it mends. */
#include "config.h"

#include "chp-doctor.h"
#include "chp-managed-policy.h"
#include "chp-test-client.h"

#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

typedef struct
{
  char          *root;
  char          *home;
  char          *config;
  char          *data;
  char          *runtime;
  char          *services;
  char          *host;      /* a native host program that exists */
  char          *policy;
  char          *flatpak_info;
  const char    *service_dirs[2];
  ChpDoctorSetup setup;
} Home;

static char *
path_in (Home       *h,
         const char *first,
         ...)
{
  va_list ap;
  g_autoptr(GPtrArray) parts = g_ptr_array_new ();
  const char *p;

  g_ptr_array_add (parts, h->root);
  g_ptr_array_add (parts, (gpointer) first);
  va_start (ap, first);
  while ((p = va_arg (ap, const char *)) != NULL)
    g_ptr_array_add (parts, (gpointer) p);
  va_end (ap);
  g_ptr_array_add (parts, NULL);
  return g_build_filenamev ((char **) parts->pdata);
}

static void
write_file (const char *path,
            const char *text,
            int         mode)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, mode, &error));
  g_assert_no_error (error);
}

static void
home_setup (Home         *h,
            gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  h->root = g_dir_make_tmp ("chaperone-doctor-XXXXXX", &error);
  g_assert_no_error (error);
  h->home = path_in (h, "home", NULL);
  h->config = path_in (h, "home", ".config", NULL);
  h->data = path_in (h, "data", NULL);
  h->runtime = path_in (h, "run", NULL);
  h->services = path_in (h, "services", NULL);
  h->host = path_in (h, "bin", "chaperone-native-host", NULL);
  h->policy = path_in (h, "etc", "policy.conf", NULL);
  h->flatpak_info = path_in (h, "flatpak-info", NULL);
  write_file (h->host, "#!/bin/sh\n", 0755);
  g_mkdir_with_parents (h->runtime, 0700);
  g_mkdir_with_parents (h->config, 0700);
  h->service_dirs[0] = h->services;
  h->service_dirs[1] = NULL;
  chp_doctor_setup_init (&h->setup);
  h->setup.data_dir = h->data;
  h->setup.runtime_dir = h->runtime;
  h->setup.native_host = h->host;
  h->setup.extension_dir = "/opt/chaperone/extension";
  h->setup.policy_path = h->policy;
  h->setup.flatpak_info = h->flatpak_info;
  h->setup.service_dirs = h->service_dirs;
  h->setup.browsers.home = h->home;
  h->setup.browsers.config = h->config;
}

static void
home_teardown (Home         *h,
               gconstpointer data)
{
  chp_test_remove_tree (h->root);
  g_free (h->root);
  g_free (h->home);
  g_free (h->config);
  g_free (h->data);
  g_free (h->runtime);
  g_free (h->services);
  g_free (h->host);
  g_free (h->policy);
  g_free (h->flatpak_info);
}

/* The finding with @id, which must be there. */
static const ChpDoctorFinding *
finding (GPtrArray  *findings,
         const char *id)
{
  for (guint i = 0; i < findings->len; i++)
    {
      const ChpDoctorFinding *f = g_ptr_array_index (findings, i);
      if (g_str_equal (f->id, id))
        return f;
    }
  g_error ("no finding %s", id);
  return NULL;
}

static gboolean
has_finding (GPtrArray  *findings,
             const char *id)
{
  for (guint i = 0; i < findings->len; i++)
    if (g_str_equal (((ChpDoctorFinding *) g_ptr_array_index (findings, i))->id, id))
      return TRUE;
  return FALSE;
}

static void
assert_level (Home           *h,
              const char     *id,
              ChpDoctorLevel  level,
              const char     *in_title_or_fix)
{
  g_autoptr(GPtrArray) findings = chp_doctor_run (&h->setup);
  const ChpDoctorFinding *f = finding (findings, id);

  if (f->level != level)
    g_error ("%s: %s (%s), expected %s", id, chp_doctor_level_to_string (f->level), f->title,
             chp_doctor_level_to_string (level));
  if (in_title_or_fix != NULL && strstr (f->title, in_title_or_fix) == NULL &&
      (f->fix == NULL || strstr (f->fix, in_title_or_fix) == NULL))
    g_error ("%s: “%s” / “%s” does not say %s", id, f->title, f->fix ? f->fix : "", in_title_or_fix);
  if (level >= CHP_DOCTOR_WARNING)
    g_assert_nonnull (f->fix);   /* every thing to fix says how */
}

/* ---- the app, its bridge and files ---------------------------------------------------------- */

static void
test_app_and_bridge (Home         *h,
                     gconstpointer data)
{
  g_autofree char *sock = g_build_filename (h->runtime, "agent.sock", NULL);
  g_autofree char *port_file = g_build_filename (h->runtime, "bridge-port", NULL);
  g_autoptr(GSocketListener) agents = g_socket_listener_new ();
  g_autoptr(GSocketListener) bridge = g_socket_listener_new ();
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new (sock);
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  guint16 port;

  assert_level (h, "app", CHP_DOCTOR_PROBLEM, "chaperone");
  {
    g_autoptr(GPtrArray) findings = chp_doctor_run (&h->setup);
    g_assert_false (has_finding (findings, "bridge"));   /* not asked of an app that is not there */
  }

  g_assert_true (g_socket_listener_add_address (agents, address, G_SOCKET_TYPE_STREAM,
                                                G_SOCKET_PROTOCOL_DEFAULT, NULL, NULL, &error));
  g_assert_no_error (error);
  assert_level (h, "app", CHP_DOCTOR_OK, NULL);
  assert_level (h, "bridge", CHP_DOCTOR_PROBLEM, NULL);     /* no port file */

  port = g_socket_listener_add_any_inet_port (bridge, NULL, &error);
  g_assert_no_error (error);
  text = g_strdup_printf ("%u\n", port);
  write_file (port_file, text, 0600);
  assert_level (h, "bridge", CHP_DOCTOR_OK, g_strstrip (text));
  g_socket_listener_close (bridge);
  assert_level (h, "bridge", CHP_DOCTOR_PROBLEM, "Nothing answers");

  /* A port the administrator locked that the bridge does not use. */
  {
    g_autoptr(GSocketListener) again = g_socket_listener_new ();
    port = g_socket_listener_add_any_inet_port (again, NULL, &error);
    g_assert_no_error (error);
    g_free (text);
    text = g_strdup_printf ("%u\n", port);
    write_file (port_file, text, 0600);
    write_file (h->policy, port == 64999 ? "[Chaperone]\nBridgePort=64998\n"
                                         : "[Chaperone]\nBridgePort=64999\n", 0644);
    assert_level (h, "bridge", CHP_DOCTOR_PROBLEM, "administrator");
  }
  g_socket_listener_close (agents);
}

static void
test_private_files (Home         *h,
                    gconstpointer data)
{
  g_autofree char *db = g_build_filename (h->data, "chaperone.db", NULL);
  g_autofree char *key = g_build_filename (h->data, "engine-key.pem", NULL);
  g_autoptr(GPtrArray) done = g_ptr_array_new_with_free_func (g_free);
  GStatBuf st;

  assert_level (h, "data", CHP_DOCTOR_NOTE, NULL);   /* nothing kept yet */
  write_file (key, "not a key", 0600);
  write_file (db, "", 0600);
  g_chmod (h->data, 0700);
  assert_level (h, "data", CHP_DOCTOR_OK, NULL);

  g_chmod (key, 0644);
  assert_level (h, "data", CHP_DOCTOR_PROBLEM, "engine-key.pem");
  g_chmod (key, 0600);
  g_chmod (h->data, 0755);
  assert_level (h, "data", CHP_DOCTOR_PROBLEM, h->data);
  g_chmod (db, 0640);

  g_assert_cmpuint (chp_doctor_fix (&h->setup, done), ==, 0);
  g_assert_cmpuint (done->len, >=, 2);
  g_assert_cmpint (g_stat (h->data, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0700);
  g_assert_cmpint (g_stat (db, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);
  assert_level (h, "data", CHP_DOCTOR_OK, NULL);
}

static void
test_pairing (Home         *h,
              gconstpointer data)
{
  g_autofree char *path = g_build_filename (h->data, "chaperone.db", NULL);
  sqlite3 *db = NULL;

  assert_level (h, "pairing", CHP_DOCTOR_WARNING, "Pair");
  g_mkdir_with_parents (h->data, 0700);
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "CREATE TABLE devices (device_id TEXT, revoked_at INTEGER);"
                                     "INSERT INTO devices VALUES ('a', 0), ('b', 5);",
                                 NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  assert_level (h, "pairing", CHP_DOCTOR_OK, "1 browser");

  write_file (path, "this is not a database, it is long enough to have a header......", 0600);
  assert_level (h, "pairing", CHP_DOCTOR_PROBLEM, NULL);
}

/* ---- browsers ------------------------------------------------------------------------------ */

static void
test_chromium (Home         *h,
               gconstpointer data)
{
  g_autofree char *prefs = g_build_filename (h->config, "chromium", "Default", "Preferences", NULL);
  g_autofree char *manifest = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GPtrArray) done = g_ptr_array_new_with_free_func (g_free);
  gboolean removed = FALSE;
  const ChpBrowserKind *chromium = chp_browsers_find ("chromium");

  assert_level (h, "browsers", CHP_DOCTOR_PROBLEM, "apt install");

  write_file (prefs, "{\"extensions\":{\"settings\":{\"zzzz\":{}}}}", 0600);
  assert_level (h, "extension:chromium", CHP_DOCTOR_WARNING, "Load unpacked");
  assert_level (h, "extension:chromium", CHP_DOCTOR_WARNING, "/opt/chaperone/extension");
  text = g_strdup_printf ("{\"extensions\":{\"settings\":{\"%s\":{\"disable_reasons\":[1]}}}}",
                          CHP_EXTENSION_ID_CHROMIUM);
  write_file (prefs, text, 0600);
  assert_level (h, "extension:chromium", CHP_DOCTOR_WARNING, "chrome://extensions");
  g_free (text);
  text = g_strdup_printf ("{\"extensions\":{\"settings\":{\"%s\":{\"disable_reasons\":[]}}}}",
                          CHP_EXTENSION_ID_CHROMIUM);
  write_file (prefs, text, 0600);
  assert_level (h, "extension:chromium", CHP_DOCTOR_OK, NULL);

  /* The native host: missing, then registered by --fix, naming our host and extension. */
  assert_level (h, "native-host:chromium", CHP_DOCTOR_WARNING, "--fix");
  g_assert_cmpuint (chp_doctor_fix (&h->setup, done), ==, 0);
  assert_level (h, "native-host:chromium", CHP_DOCTOR_OK, NULL);
  manifest = chp_browser_dup_manifest_path (chromium, &h->setup.browsers);
  g_free (text);
  g_assert_true (g_file_get_contents (manifest, &text, NULL, NULL));
  g_assert_nonnull (strstr (text, h->host));
  g_assert_nonnull (strstr (text, "chrome-extension://" CHP_EXTENSION_ID_CHROMIUM "/"));

  /* Out of date: another program, or a program that is gone. */
  write_file (manifest, "{\"name\":\"io.github.chaperone.native\",\"path\":\"/usr/bin/true\","
                        "\"allowed_origins\":[]}", 0644);
  assert_level (h, "native-host:chromium", CHP_DOCTOR_PROBLEM, manifest);
  write_file (manifest, "not json", 0644);
  assert_level (h, "native-host:chromium", CHP_DOCTOR_PROBLEM, "--fix");
  g_unlink (h->host);
  g_assert_cmpint (chp_browser_native_host_state (chromium, &h->setup.browsers, NULL), ==,
                   CHP_NATIVE_HOST_UNREADABLE);

  /* Uninstalling removes only our file. */
  write_file (h->host, "#!/bin/sh\n", 0755);
  g_assert_true (chp_browser_register_native_host (chromium, &h->setup.browsers, h->host, NULL));
  g_assert_true (chp_browser_unregister_native_host (chromium, &h->setup.browsers, &removed, NULL));
  g_assert_true (removed);
  g_assert_false (g_file_test (manifest, G_FILE_TEST_EXISTS));
}

static void
test_firefox_and_sandboxes (Home         *h,
                            gconstpointer data)
{
  g_autofree char *ini = path_in (h, "home", ".mozilla", "firefox", "profiles.ini", NULL);
  g_autofree char *ext = path_in (h, "home", ".mozilla", "firefox", "abc.default-esr",
                                  "extensions.json", NULL);
  g_autofree char *flatpak = path_in (h, "home", ".var", "app", "org.chromium.Chromium", "config",
                                      "chromium", "Default", "Preferences", NULL);
  g_autofree char *manifest = NULL;
  g_autoptr(GPtrArray) done = g_ptr_array_new_with_free_func (g_free);

  write_file (ini, "[Profile0]\nName=default-esr\nIsRelative=1\nPath=abc.default-esr\n", 0644);
  write_file (ext, "{\"addons\":[{\"id\":\"other@example\",\"active\":true}]}", 0644);
  assert_level (h, "extension:firefox", CHP_DOCTOR_WARNING, "about:addons");
  write_file (ext, "{\"addons\":[{\"id\":\"" CHP_EXTENSION_ID_FIREFOX "\",\"active\":false}]}", 0644);
  assert_level (h, "extension:firefox", CHP_DOCTOR_WARNING, "about:addons");
  write_file (ext, "{\"addons\":[{\"id\":\"" CHP_EXTENSION_ID_FIREFOX "\",\"active\":true}]}", 0644);
  assert_level (h, "extension:firefox", CHP_DOCTOR_OK, NULL);

  /* Firefox never says which origin calls a host, so the host refuses it: nothing registered. */
  assert_level (h, "native-host:firefox", CHP_DOCTOR_NOTE, "loopback bridge");
  g_assert_cmpuint (chp_doctor_fix (&h->setup, done), ==, 0);
  manifest = chp_browser_dup_manifest_path (chp_browsers_find ("firefox"), &h->setup.browsers);
  g_assert_false (g_file_test (manifest, G_FILE_TEST_EXISTS));
  g_assert_false (chp_browser_register_native_host (chp_browsers_find ("firefox"), &h->setup.browsers,
                                                    h->host, NULL));
  /* One left by an older Chaperone is removed on uninstall all the same. */
  write_file (manifest, "{}", 0644);

  /* A Flatpak browser cannot start a program of the host: nothing registered, a note says why. */
  write_file (flatpak, "{}", 0600);
  assert_level (h, "native-host:chromium-flatpak", CHP_DOCTOR_NOTE, "sandbox");
  g_ptr_array_set_size (done, 0);
  g_assert_cmpuint (chp_doctor_fix (&h->setup, done), ==, 0);
  {
    g_autofree char *sandboxed = chp_browser_dup_manifest_path (chp_browsers_find ("chromium-flatpak"),
                                                                &h->setup.browsers);
    g_assert_false (g_file_test (sandboxed, G_FILE_TEST_EXISTS));
  }

  g_ptr_array_set_size (done, 0);
  g_assert_cmpuint (chp_doctor_remove_native_hosts (&h->setup, done), ==, 0);
  g_assert_cmpuint (done->len, ==, 1);
  g_assert_false (g_file_test (manifest, G_FILE_TEST_EXISTS));
}

/* ---- D-Bus, Flatpak, policy ------------------------------------------------------------------ */

static void
test_dbus_and_flatpak (Home         *h,
                       gconstpointer data)
{
  g_autofree char *service = g_build_filename (h->services, APP_ID ".service", NULL);
  g_autofree char *text = g_strdup_printf ("[D-BUS Service]\nName=" APP_ID "\nExec=%s "
                                           "--gapplication-service\n", h->host);

  assert_level (h, "dbus", CHP_DOCTOR_WARNING, "meson install");
  write_file (service, "[D-BUS Service]\nName=" APP_ID "\nExec=/nonexistent/chaperone\n", 0644);
  assert_level (h, "dbus", CHP_DOCTOR_PROBLEM, service);
  write_file (service, text, 0644);
  assert_level (h, "dbus", CHP_DOCTOR_OK, NULL);

  {
    g_autoptr(GPtrArray) findings = chp_doctor_run (&h->setup);
    g_assert_false (has_finding (findings, "flatpak"));   /* not in a sandbox */
  }
  write_file (h->flatpak_info, "[Application]\nname=" APP_ID "\n[Context]\nshared=ipc;\n", 0644);
  assert_level (h, "flatpak", CHP_DOCTOR_PROBLEM, "--share=network");
  write_file (h->flatpak_info, "[Application]\nname=" APP_ID "\n[Context]\nshared=network;ipc;\n", 0644);
  assert_level (h, "flatpak", CHP_DOCTOR_OK, NULL);
}

static void
test_policy_findings (Home         *h,
                      gconstpointer data)
{
  {
    g_autoptr(GPtrArray) findings = chp_doctor_run (&h->setup);
    g_assert_false (has_finding (findings, "policy"));
  }
  write_file (h->policy, "[Chaperone]\nApiCall=false\n", 0644);   /* a typo */
  assert_level (h, "policy", CHP_DOCTOR_PROBLEM, "ApiCall");
  write_file (h->policy, "[Chaperone]\nApiCalls=false\nMaxGrantMinutes=30\n", 0644);
  assert_level (h, "policy", CHP_DOCTOR_NOTE, "30 minutes");
}

/* ---- the policy file itself ---------------------------------------------------------------- */

static ChpManagedPolicy *
load (Home       *h,
      const char *text)
{
  write_file (h->policy, text, 0644);
  return chp_managed_policy_load (h->policy);
}

static void
test_policy_file (Home         *h,
                  gconstpointer data)
{
  g_autoptr(ChpManagedPolicy) none = chp_managed_policy_load (h->policy);
  g_autoptr(ChpManagedPolicy) full = NULL;
  g_auto(GStrv) locks = NULL;
  static const char * const broken[] = {
    "not a key file",
    "[Other]\nApiCalls=false\n",
    "[Chaperone]\nBridgePort=80\n",
    "[Chaperone]\nBridgePort=70000\n",
    "[Chaperone]\nMaxGrantMinutes=0\n",
    "[Chaperone]\nMaxGrantMinutes=ten\n",
    "[Chaperone]\nSiteLearning=maybe\n",
    "[Chaperone]\nTransport=tcp\n",
  };

  /* No file: nothing locked, nothing wrong. */
  g_assert_false (chp_managed_policy_get_present (none));
  g_assert_null (chp_managed_policy_get_error (none));
  g_assert_true (chp_managed_policy_get_api_calls (none));
  g_assert_true (chp_managed_policy_get_site_learning (none));
  g_assert_cmpuint (chp_managed_policy_get_bridge_port (none), ==, 0);

  full = load (h, "# the lab's machines\n[Chaperone]\nBridgePort=64400\nMaxGrantMinutes=45\n"
                  "FloorBlind=bank.example; *.corp.example\nFloorHandsOnly=wiki.example\n"
                  "ApiCalls=false\nSiteLearning=false\nTransport=native\n");
  g_assert_null (chp_managed_policy_get_error (full));
  g_assert_cmpuint (chp_managed_policy_get_bridge_port (full), ==, 64400);
  g_assert_cmpuint (chp_managed_policy_get_max_grant_minutes (full), ==, 45);
  g_assert_cmpstr (chp_managed_policy_get_floor_blind (full)[1], ==, "*.corp.example");
  g_assert_cmpstr (chp_managed_policy_get_floor_hands_only (full)[0], ==, "wiki.example");
  g_assert_false (chp_managed_policy_get_api_calls (full));
  g_assert_false (chp_managed_policy_get_site_learning (full));
  g_assert_cmpint (chp_managed_policy_get_transport (full), ==, CHP_TRANSPORT_NATIVE);
  g_assert_cmpint (chp_managed_policy_get_transport (none), ==, CHP_TRANSPORT_ANY);
  locks = chp_managed_policy_dup_locks (full);
  g_assert_cmpuint (g_strv_length (locks), ==, 7);
  g_assert_true (g_strv_contains ((const char * const *) locks,
                                  "Browsers connect only through the native host"));
  {
    g_autoptr(ChpManagedPolicy) ws = load (h, "[Chaperone]\nTransport=websocket\n");

    g_assert_null (chp_managed_policy_get_error (ws));
    g_assert_cmpint (chp_managed_policy_get_transport (ws), ==, CHP_TRANSPORT_WEBSOCKET);
  }

  /* Anything it cannot read fails closed: API calls and learning off, and it says why. */
  for (guint i = 0; i < G_N_ELEMENTS (broken); i++)
    {
      g_autoptr(ChpManagedPolicy) p = NULL;

      p = load (h, broken[i]);
      g_assert_true (chp_managed_policy_get_present (p));
      g_assert_nonnull (chp_managed_policy_get_error (p));
      g_assert_false (chp_managed_policy_get_api_calls (p));
      g_assert_false (chp_managed_policy_get_site_learning (p));
      g_assert_cmpuint (chp_managed_policy_get_bridge_port (p), ==, 0);
      g_assert_cmpint (chp_managed_policy_get_transport (p), ==, CHP_TRANSPORT_ANY);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, fn) g_test_add ("/doctor/" path, Home, NULL, home_setup, fn, home_teardown)
  ADD ("app-and-bridge", test_app_and_bridge);
  ADD ("private-files", test_private_files);
  ADD ("pairing", test_pairing);
  ADD ("chromium", test_chromium);
  ADD ("firefox-and-sandboxes", test_firefox_and_sandboxes);
  ADD ("dbus-and-flatpak", test_dbus_and_flatpak);
  ADD ("policy-findings", test_policy_findings);
  ADD ("policy-file", test_policy_file);
#undef ADD

  return g_test_run ();
}
