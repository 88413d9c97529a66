/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-doctor.c: the setup checks behind `chaperone doctor` and Check Setup (docs/architecture.md,
 * "Doctor").
 *
 * Every check reads files and sockets, never a secret: the database is opened read-only to count
 * paired browsers, the key file is only stat()ed, a browser's profile only for the extension's
 * entry. A finding says what is wrong and the exact thing to do; `--fix` does what needs no
 * person: it registers the native host in each browser found and takes group and other access
 * off Chaperone's own files. It never installs an extension or pairs a browser: those are the
 * person's to do, in the browser. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-doctor"

#include "chp-doctor.h"

#include "chp-managed-policy.h"

#include <errno.h>
#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#define SERVICE_FILE APP_ID ".service"

void
chp_doctor_finding_free (ChpDoctorFinding *finding)
{
  if (finding == NULL)
    return;
  g_free (finding->id);
  g_free (finding->title);
  g_free (finding->fix);
  g_free (finding);
}

const char *
chp_doctor_level_to_string (ChpDoctorLevel level)
{
  switch (level)
    {
    case CHP_DOCTOR_OK: return "ok";
    case CHP_DOCTOR_NOTE: return "note";
    case CHP_DOCTOR_WARNING: return "warning";
    case CHP_DOCTOR_PROBLEM: default: return "problem";
    }
}

/* Takes @title and @fix. */
static void
add (GPtrArray      *out,
     const char     *id,
     ChpDoctorLevel  level,
     char           *title,
     char           *fix)
{
  ChpDoctorFinding *f = g_new0 (ChpDoctorFinding, 1);

  f->id = g_strdup (id);
  f->level = level;
  f->title = title;
  f->fix = fix;
  g_ptr_array_add (out, f);
}

/* The host program beside this one: installed, in the same bindir; in a build tree,
 * build/native-host/ beside build/src/ui/. */
char *
chp_doctor_default_native_host (void)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", NULL);
  g_autofree char *dir = exe != NULL ? g_path_get_dirname (exe) : NULL;
  const char *installed = BINDIR "/chaperone-native-host";

  if (dir != NULL)
    {
      g_autofree char *beside = g_build_filename (dir, "chaperone-native-host", NULL);
      g_autofree char *built = g_build_filename (dir, "..", "..", "native-host",
                                                 "chaperone-native-host", NULL);
      if (g_access (beside, X_OK) == 0)
        return g_steal_pointer (&beside);
      if (g_access (built, X_OK) == 0)
        return g_canonicalize_filename (built, NULL);
    }
  return g_strdup (installed);
}

/* Where `meson install` puts the unpacked extension; the Firefox add-on sits beside it. */
char *
chp_doctor_default_extension_dir (void)
{
  return g_build_filename (DATADIR, "chaperone", "extension", NULL);
}

void
chp_doctor_setup_init (ChpDoctorSetup *setup)
{
  *setup = (ChpDoctorSetup) { 0 };
  chp_browser_paths_init_default (&setup->browsers);
}

typedef struct
{
  char *data_dir;
  char *runtime_dir;
  char *native_host;
  char *extension_dir;
  const char *policy_path;
  const char *flatpak_info;
  GStrv service_dirs;
} Resolved;

static void
resolved_clear (Resolved *r)
{
  g_free (r->data_dir);
  g_free (r->runtime_dir);
  g_free (r->native_host);
  g_free (r->extension_dir);
  g_strfreev (r->service_dirs);
}

static void
resolve (const ChpDoctorSetup *s,
         Resolved             *r)
{
  r->data_dir = s->data_dir != NULL ? g_strdup (s->data_dir)
                : g_build_filename (g_get_user_data_dir (), "chaperone", NULL);
  r->runtime_dir = s->runtime_dir != NULL ? g_strdup (s->runtime_dir)
                   : g_build_filename (g_get_user_runtime_dir (), "chaperone", NULL);
  r->native_host = s->native_host != NULL ? g_strdup (s->native_host) : chp_doctor_default_native_host ();
  r->extension_dir = s->extension_dir != NULL ? g_strdup (s->extension_dir)
                     : chp_doctor_default_extension_dir ();
  r->policy_path = s->policy_path;
  r->flatpak_info = s->flatpak_info != NULL ? s->flatpak_info : "/.flatpak-info";
  if (s->service_dirs != NULL)
    r->service_dirs = g_strdupv ((char **) s->service_dirs);
  else
    {
      const char * const *sys = g_get_system_data_dirs ();
      GPtrArray *dirs = g_ptr_array_new ();
      g_ptr_array_add (dirs, g_build_filename (g_get_user_data_dir (), "dbus-1", "services", NULL));
      for (guint i = 0; sys[i] != NULL; i++)
        g_ptr_array_add (dirs, g_build_filename (sys[i], "dbus-1", "services", NULL));
      g_ptr_array_add (dirs, NULL);
      r->service_dirs = (GStrv) g_ptr_array_free (dirs, FALSE);
    }
}

/* ---- the app and its sockets ----------------------------------------------------------------- */

static gboolean
check_app (const Resolved *r,
           GPtrArray      *out)
{
  g_autofree char *path = g_build_filename (r->runtime_dir, "agent.sock", NULL);
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new (path);
  g_autoptr(GSocketConnection) conn = NULL;
  g_autoptr(GError) error = NULL;

  conn = g_socket_client_connect (client, G_SOCKET_CONNECTABLE (address), NULL, &error);
  if (conn != NULL)
    {
      add (out, "app", CHP_DOCTOR_OK, g_strdup (_("Chaperone is running")), NULL);
      return TRUE;
    }
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND))
    add (out, "app", CHP_DOCTOR_PROBLEM, g_strdup (_("Chaperone is not running")),
         g_strdup (_("Start Chaperone from your applications, or run “chaperone”. Agents start it "
                     "by themselves once it is installed.")));
  else
    add (out, "app", CHP_DOCTOR_PROBLEM,
         g_strdup_printf (_("Chaperone’s agent socket %s does not answer (%s)"), path, error->message),
         g_strdup (_("Quit Chaperone if it still shows, then start it again.")));
  return FALSE;
}

static void
check_bridge (const Resolved   *r,
              ChpManagedPolicy *policy,
              GPtrArray        *out)
{
  g_autofree char *path = g_build_filename (r->runtime_dir, "bridge-port", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GSocketClient) client = g_socket_client_new ();
  g_autoptr(GSocketConnection) conn = NULL;
  g_autoptr(GError) error = NULL;
  guint64 port;
  guint16 locked = chp_managed_policy_get_bridge_port (policy);

  if (!g_file_get_contents (path, &text, NULL, NULL) ||
      !g_ascii_string_to_unsigned (g_strstrip (text), 10, 1, 65535, &port, NULL))
    {
      add (out, "bridge", CHP_DOCTOR_PROBLEM,
           g_strdup (_("Chaperone is running but did not say which port its bridge listens on")),
           g_strdup (_("Quit Chaperone and start it again.")));
      return;
    }
  conn = g_socket_client_connect_to_host (client, "127.0.0.1", (guint16) port, NULL, &error);
  if (conn == NULL)
    add (out, "bridge", CHP_DOCTOR_PROBLEM,
         g_strdup_printf (_("Nothing answers on the bridge port 127.0.0.1:%u"), (guint) port),
         g_strdup (_("Quit Chaperone and start it again; if another program holds the port, choose "
                     "another in Preferences.")));
  else if (locked != 0 && locked != port)
    add (out, "bridge", CHP_DOCTOR_PROBLEM,
         g_strdup_printf (_("The bridge listens on %u, not on %u as your administrator set"),
                          (guint) port, locked),
         g_strdup (_("Quit Chaperone and start it again.")));
  else
    add (out, "bridge", CHP_DOCTOR_OK,
         g_strdup_printf (_("Browsers reach Chaperone at 127.0.0.1:%u"), (guint) port), NULL);
}

/* ---- Chaperone's own files ------------------------------------------------------------------- */

static const char * const private_files[] = {
  "engine-key.pem", "chaperone.db", "chaperone.db-wal", "chaperone.db-shm",
  "traces.db", "traces.db-wal", "traces.db-shm",
};

static void
check_data (const Resolved *r,
            GPtrArray      *out)
{
  GStatBuf st;
  g_autoptr(GString) open_to_others = g_string_new (NULL);

  if (g_stat (r->data_dir, &st) != 0)
    {
      add (out, "data", CHP_DOCTOR_NOTE,
           g_strdup_printf (_("Chaperone has not kept anything yet (%s does not exist)"), r->data_dir),
           NULL);
      return;
    }
  if ((st.st_mode & 077) != 0)
    g_string_append_printf (open_to_others, "%s%s", open_to_others->len ? ", " : "", r->data_dir);
  for (guint i = 0; i < G_N_ELEMENTS (private_files); i++)
    {
      g_autofree char *path = g_build_filename (r->data_dir, private_files[i], NULL);
      if (g_stat (path, &st) == 0 && (st.st_mode & 077) != 0)
        g_string_append_printf (open_to_others, "%s%s", open_to_others->len ? ", " : "", path);
    }
  if (open_to_others->len > 0)
    add (out, "data", CHP_DOCTOR_PROBLEM,
         g_strdup_printf (_("Other users on this computer may read %s"), open_to_others->str),
         g_strdup (_("Run “chaperone doctor --fix”: it makes Chaperone’s folder 0700 and its files "
                     "0600.")));
  else
    add (out, "data", CHP_DOCTOR_OK,
         g_strdup (_("Chaperone’s key and databases are private to you")), NULL);
}

static void
check_pairing (const Resolved *r,
               GPtrArray      *out)
{
  g_autofree char *path = g_build_filename (r->data_dir, "chaperone.db", NULL);
  g_autofree char *uri = NULL;
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  int paired = -1;

  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    paired = 0;
  else
    {
      /* Read-only, immutable=0: a running app keeps writing; WAL lets this reader see a
       * consistent instant without blocking it. */
      uri = g_strdup_printf ("file:%s?mode=ro", path);
      if (sqlite3_open_v2 (uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) == SQLITE_OK &&
          sqlite3_prepare_v2 (db, "SELECT count(*) FROM devices WHERE revoked_at = 0", -1,
                              &stmt, NULL) == SQLITE_OK &&
          sqlite3_step (stmt) == SQLITE_ROW)
        paired = sqlite3_column_int (stmt, 0);
      sqlite3_finalize (stmt);
      sqlite3_close (db);
    }

  if (paired < 0)
    add (out, "pairing", CHP_DOCTOR_PROBLEM,
         g_strdup_printf (_("Cannot read the paired browsers in %s"), path),
         g_strdup (_("Quit Chaperone and start it again; if this stays, the file is damaged.")));
  else if (paired == 0)
    add (out, "pairing", CHP_DOCTOR_WARNING, g_strdup (_("No browser is paired yet")),
         g_strdup (_("In the browser, open the Chaperone extension’s menu and choose Pair; compare "
                     "the six digits with the ones Chaperone shows, and press Pair in Chaperone.")));
  else
    add (out, "pairing", CHP_DOCTOR_OK,
         g_strdup_printf (g_dngettext (GETTEXT_PACKAGE, "%d browser is paired",
                                       "%d browsers are paired", paired), paired), NULL);
}

/* ---- each browser --------------------------------------------------------------------------- */

/**
 * chp_doctor_extension_path:
 * @extension_dir: the unpacked extension's folder
 *
 * Returns: (transfer full): what a person picks in @kind to add the extension: the folder for
 *   a Chromium-family browser, the add-on file beside it for Firefox
 */
char *
chp_doctor_extension_path (const ChpBrowserKind *kind,
                           const char           *extension_dir)
{
  g_autofree char *dir = NULL;

  g_return_val_if_fail (kind != NULL && extension_dir != NULL, NULL);

  if (kind->family != CHP_BROWSER_FAMILY_FIREFOX)
    return g_strdup (extension_dir);
  dir = g_path_get_dirname (extension_dir);
  return g_build_filename (dir, "chaperone-firefox.xpi", NULL);
}

/**
 * chp_doctor_extension_advice:
 * @extension_dir: the unpacked extension's folder
 *
 * Returns: (transfer full): how to add the extension to @kind, in one translated sentence (the
 *   doctor's fix and the app's setup guide say the same)
 */
char *
chp_doctor_extension_advice (const ChpBrowserKind *kind,
                             const char           *extension_dir)
{
  g_return_val_if_fail (kind != NULL && extension_dir != NULL, NULL);

  if (kind->family == CHP_BROWSER_FAMILY_FIREFOX)
    {
      g_autofree char *dir = g_path_get_dirname (extension_dir);
      return g_strdup_printf (_("In %s, open about:addons, choose “Install Add-on From File…” and "
                                "pick chaperone-firefox.xpi in %s."), _(kind->name), dir);
    }
  return g_strdup_printf (_("In %s, open chrome://extensions, turn on Developer mode, choose “Load "
                            "unpacked” and pick %s."), _(kind->name), extension_dir);
}

static void
check_browser (const ChpBrowserKind  *kind,
               const ChpBrowserPaths *paths,
               const Resolved        *r,
               GPtrArray             *out)
{
  g_autofree char *ext_id = g_strconcat ("extension:", kind->id, NULL);
  g_autofree char *host_id = g_strconcat ("native-host:", kind->id, NULL);
  const char *name = _(kind->name);
  const char *manage = kind->family == CHP_BROWSER_FAMILY_FIREFOX ? "about:addons" : "chrome://extensions";

  switch (chp_browser_extension_state (kind, paths))
    {
    case CHP_EXTENSION_PRESENT:
      add (out, ext_id, CHP_DOCTOR_OK, g_strdup_printf (_("%s has the Chaperone extension"), name), NULL);
      break;
    case CHP_EXTENSION_DISABLED:
      add (out, ext_id, CHP_DOCTOR_WARNING,
           g_strdup_printf (_("The Chaperone extension is turned off in %s"), name),
           g_strdup_printf (_("Turn it on in %s."), manage));
      break;
    case CHP_EXTENSION_ABSENT:
      add (out, ext_id, CHP_DOCTOR_WARNING,
           g_strdup_printf (_("%s does not have the Chaperone extension"), name),
           chp_doctor_extension_advice (kind, r->extension_dir));
      break;
    case CHP_EXTENSION_UNKNOWN:
    default:
      add (out, ext_id, CHP_DOCTOR_NOTE,
           g_strdup_printf (_("Cannot tell whether %s has the Chaperone extension (no profile "
                              "could be read)"), name),
           chp_doctor_extension_advice (kind, r->extension_dir));
      break;
    }

  switch (chp_browser_native_host_state (kind, paths, r->native_host))
    {
    case CHP_NATIVE_HOST_OK:
      add (out, host_id, CHP_DOCTOR_OK,
           g_strdup_printf (_("%s can start Chaperone’s native host"), name), NULL);
      break;
    case CHP_NATIVE_HOST_SANDBOXED:
      add (out, host_id, CHP_DOCTOR_NOTE,
           g_strdup_printf (_("%s runs in a sandbox: it reaches Chaperone over the loopback "
                              "bridge only, not through the native host"), name), NULL);
      break;
    case CHP_NATIVE_HOST_NOT_FOR_FIREFOX:
      add (out, host_id, CHP_DOCTOR_NOTE,
           g_strdup_printf (_("%s reaches Chaperone over the loopback bridge only: it does not "
                              "tell a native host which extension calls it"), name), NULL);
      break;
    case CHP_NATIVE_HOST_MISSING:
      add (out, host_id, CHP_DOCTOR_WARNING,
           g_strdup_printf (_("Chaperone’s native host is not registered for %s"), name),
           g_strdup (_("Run “chaperone doctor --fix”.")));
      break;
    default:
      {
        g_autofree char *manifest = chp_browser_dup_manifest_path (kind, paths);
        add (out, host_id, CHP_DOCTOR_PROBLEM,
             g_strdup_printf (_("%s’s registration of Chaperone’s native host is wrong or out of date "
                                "(%s)"), name, manifest),
             g_strdup (_("Run “chaperone doctor --fix”.")));
      }
      break;
    }
}

static void
check_browsers (const ChpDoctorSetup *s,
                const Resolved       *r,
                GPtrArray            *out)
{
  guint n;
  const ChpBrowserKind *kinds = chp_browsers_get_kinds (&n);
  guint found = 0;

  for (guint i = 0; i < n; i++)
    if (chp_browser_is_present (&kinds[i], &s->browsers))
      {
        found++;
        check_browser (&kinds[i], &s->browsers, r, out);
      }
  if (found == 0)
    add (out, "browsers", CHP_DOCTOR_PROBLEM,
         g_strdup (_("No browser Chaperone works with was found for this user")),
         g_strdup (_("Install Chromium or Firefox (“sudo apt install chromium firefox-esr”) and start "
                     "it once.")));
}

/* ---- D-Bus activation, Flatpak, policy ------------------------------------------------------- */

static void
check_dbus_service (const Resolved *r,
                    GPtrArray      *out)
{
  for (guint i = 0; r->service_dirs[i] != NULL; i++)
    {
      g_autofree char *path = g_build_filename (r->service_dirs[i], SERVICE_FILE, NULL);
      g_autoptr(GKeyFile) kf = g_key_file_new ();
      g_autofree char *exec = NULL;
      g_auto(GStrv) argv = NULL;

      if (!g_key_file_load_from_file (kf, path, G_KEY_FILE_NONE, NULL))
        continue;
      exec = g_key_file_get_string (kf, "D-BUS Service", "Exec", NULL);
      if (exec == NULL || !g_shell_parse_argv (exec, NULL, &argv, NULL) || g_access (argv[0], X_OK) != 0)
        {
          add (out, "dbus", CHP_DOCTOR_PROBLEM,
               g_strdup_printf (_("%s names a program that is not there"), path),
               g_strdup (_("Install Chaperone again (“meson install -C build”), or remove that file.")));
          return;
        }
      add (out, "dbus", CHP_DOCTOR_OK,
           g_strdup (_("Agents can start Chaperone when it is not running")), NULL);
      return;
    }
  add (out, "dbus", CHP_DOCTOR_WARNING,
       g_strdup (_("Agents cannot start Chaperone when it is not running (it is not installed for "
                   "D-Bus)")),
       g_strdup (_("Install it: “meson install -C build” (README.md, Install).")));
}

static void
check_flatpak (const Resolved *r,
               GPtrArray      *out)
{
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_auto(GStrv) shared = NULL;

  if (!g_key_file_load_from_file (kf, r->flatpak_info, G_KEY_FILE_NONE, NULL))
    return;   /* not in a sandbox */
  shared = g_key_file_get_string_list (kf, "Context", "shared", NULL, NULL);
  if (shared == NULL || !g_strv_contains ((const char * const *) shared, "network"))
    add (out, "flatpak", CHP_DOCTOR_PROBLEM,
         g_strdup (_("Chaperone’s Flatpak sandbox has no network: browsers cannot reach its bridge")),
         g_strdup ("flatpak override --user --share=network " APP_ID));
  else
    add (out, "flatpak", CHP_DOCTOR_OK,
         g_strdup (_("Chaperone runs in a Flatpak sandbox that lets browsers reach its bridge")), NULL);
}

static void
check_policy (ChpManagedPolicy *policy,
              GPtrArray        *out)
{
  g_auto(GStrv) locks = NULL;
  g_autofree char *joined = NULL;

  if (!chp_managed_policy_get_present (policy))
    return;
  if (chp_managed_policy_get_error (policy) != NULL)
    {
      add (out, "policy", CHP_DOCTOR_PROBLEM,
           g_strdup_printf (_("Your administrator’s policy %s cannot be used: %s. Until it is fixed, "
                              "agents may not call sites’ own APIs and nothing is learned about sites."),
                            chp_managed_policy_get_path (policy), chp_managed_policy_get_error (policy)),
           g_strdup (_("Ask your administrator to correct it (docs/security.md, Managed policy).")));
      return;
    }
  locks = chp_managed_policy_dup_locks (policy);
  joined = g_strjoinv ("; ", locks);
  add (out, "policy", CHP_DOCTOR_NOTE,
       g_strdup_printf (_("Your administrator set: %s"), *joined ? joined : _("nothing yet")), NULL);
}

/**
 * chp_doctor_run:
 *
 * Returns: (transfer full) (element-type ChpDoctorFinding): every finding, in the order a person
 *   would fix them: the app, its files, the browsers, the rest
 */
GPtrArray *
chp_doctor_run (const ChpDoctorSetup *setup)
{
  g_autoptr(GPtrArray) out = g_ptr_array_new_with_free_func ((GDestroyNotify) chp_doctor_finding_free);
  g_autoptr(ChpManagedPolicy) policy = chp_managed_policy_load (setup->policy_path);
  Resolved r = { 0 };

  resolve (setup, &r);
  if (check_app (&r, out))
    check_bridge (&r, policy, out);
  check_data (&r, out);
  check_pairing (&r, out);
  check_browsers (setup, &r, out);
  check_dbus_service (&r, out);
  check_flatpak (&r, out);
  check_policy (policy, out);
  resolved_clear (&r);
  return g_steal_pointer (&out);
}

/* ---- fixing ---------------------------------------------------------------------------------- */

static void
done_line (GPtrArray *done,
           char      *line)
{
  if (done != NULL)
    g_ptr_array_add (done, line);
  else
    g_free (line);
}

/**
 * chp_doctor_register_native_hosts:
 * @done: (element-type utf8) (nullable): a translated line is added for each browser registered
 *   or not
 *
 * Registers the native host in every system Chromium-family browser found whose registration is
 * missing or wrong; nothing else (Check Setup's Fix and the setup guide's Register).
 *
 * Returns: how many could not be registered
 */
guint
chp_doctor_register_native_hosts (const ChpDoctorSetup *setup,
                                  GPtrArray            *done)
{
  Resolved r = { 0 };
  guint n, failed = 0;
  const ChpBrowserKind *kinds = chp_browsers_get_kinds (&n);

  g_return_val_if_fail (setup != NULL, 0);

  resolve (setup, &r);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GError) error = NULL;
      const ChpBrowserKind *k = &kinds[i];

      ChpNativeHostState state;

      if (!chp_browser_is_present (k, &setup->browsers))
        continue;
      state = chp_browser_native_host_state (k, &setup->browsers, r.native_host);
      if (state == CHP_NATIVE_HOST_OK || state == CHP_NATIVE_HOST_SANDBOXED ||
          state == CHP_NATIVE_HOST_NOT_FOR_FIREFOX)
        continue;
      if (chp_browser_register_native_host (k, &setup->browsers, r.native_host, &error))
        done_line (done, g_strdup_printf (_("Registered the native host for %s"), _(k->name)));
      else
        {
          failed++;
          done_line (done, g_strdup_printf (_("Could not register the native host for %s: %s"),
                                            _(k->name), error->message));
        }
    }
  resolved_clear (&r);
  return failed;
}

/**
 * chp_doctor_fix:
 * @done: (element-type utf8) (nullable): a translated line is added for each thing done or failed
 *
 * Registers the native host in every system browser found and takes other users' access off
 * Chaperone's folder and files.
 *
 * Returns: how many things failed
 */
guint
chp_doctor_fix (const ChpDoctorSetup *setup,
                GPtrArray            *done)
{
  Resolved r = { 0 };
  guint failed;

  failed = chp_doctor_register_native_hosts (setup, done);
  resolve (setup, &r);
  if (g_file_test (r.data_dir, G_FILE_TEST_IS_DIR))
    {
      GStatBuf st;
      if (g_stat (r.data_dir, &st) == 0 && (st.st_mode & 077) != 0)
        {
          if (g_chmod (r.data_dir, 0700) == 0)
            done_line (done, g_strdup_printf (_("Made %s private"), r.data_dir));
          else
            failed++;
        }
      for (guint i = 0; i < G_N_ELEMENTS (private_files); i++)
        {
          g_autofree char *path = g_build_filename (r.data_dir, private_files[i], NULL);
          if (g_stat (path, &st) != 0 || (st.st_mode & 077) == 0)
            continue;
          if (g_chmod (path, 0600) == 0)
            done_line (done, g_strdup_printf (_("Made %s private"), path));
          else
            failed++;
        }
    }
  resolved_clear (&r);
  return failed;
}

/**
 * chp_doctor_remove_native_hosts:
 *
 * Removes our native-host manifest from every browser's folder (uninstalling).
 *
 * Returns: how many could not be removed
 */
guint
chp_doctor_remove_native_hosts (const ChpDoctorSetup *setup,
                                GPtrArray            *done)
{
  guint n, failed = 0;
  const ChpBrowserKind *kinds = chp_browsers_get_kinds (&n);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GError) error = NULL;
      gboolean removed = FALSE;

      if (!chp_browser_unregister_native_host (&kinds[i], &setup->browsers, &removed, &error))
        {
          failed++;
          done_line (done, g_strdup (error->message));
        }
      else if (removed)
        done_line (done, g_strdup_printf (_("Removed the native host from %s"), _(kinds[i].name)));
    }
  return failed;
}
