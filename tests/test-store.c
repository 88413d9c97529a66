/* test-store.c: a real SQLite file on disk: migrations, durability across reopen, the audit bound,
 * and what happens to files that are not ours (moved aside, never deleted). */
#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chp-store.h"
#include "chp-test-client.h"

typedef struct
{
  gboolean      done;
  GAsyncResult *result;
} Wait;

static void
wait_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  Wait *wait = user_data;

  wait->result = g_object_ref (result);
  wait->done = TRUE;
}

static gboolean
wait_done (gpointer data)
{
  return ((Wait *) data)->done;
}

static GAsyncResult *
wait_for (Wait *wait)
{
  g_assert_true (chp_test_spin_until (wait_done, wait, 10000));
  return wait->result;
}

static char *
make_tmp (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("chp-store-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

static ChpStore *
open_store (const char  *path,
            GError     **error)
{
  ChpStore *store = chp_store_new (path);
  Wait wait = { 0 };
  gboolean ok;

  chp_store_open_async (store, NULL, wait_cb, &wait);
  ok = chp_store_open_finish (store, wait_for (&wait), error);
  g_object_unref (wait.result);

  if (!ok)
    g_clear_object (&store);

  return store;
}

static void
save_device (ChpStore   *store,
             const char *id,
             const char *name)
{
  ChpDeviceInfo info = {
    .device_id = (char *) id, .installation_id = "inst", .origin = CHP_TEST_ORIGIN,
    .name = (char *) name, .browser = "Chromium 156", .key_x = "x", .key_y = "y",
    .created_at = 1000, .paired_at = 1000,
  };
  g_autoptr(GError) error = NULL;
  Wait wait = { 0 };

  chp_store_save_device_async (store, &info, NULL, wait_cb, &wait);
  g_assert_true (chp_store_write_finish (store, wait_for (&wait), &error));
  g_assert_no_error (error);
  g_object_unref (wait.result);
}

static GPtrArray *
load_devices (ChpStore *store)
{
  g_autoptr(GError) error = NULL;
  Wait wait = { 0 };
  GPtrArray *devices;

  chp_store_load_devices_async (store, NULL, wait_cb, &wait);
  devices = chp_store_load_devices_finish (store, wait_for (&wait), &error);
  g_assert_no_error (error);
  g_object_unref (wait.result);

  return devices;
}

static void
test_devices_survive_reopen (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) store = open_store (path, NULL);
  g_autoptr(GPtrArray) devices = NULL;
  g_autoptr(GError) error = NULL;
  Wait wait = { 0 };

  g_assert_nonnull (store);
  save_device (store, "d1", "Work browser");
  save_device (store, "d2", "Home browser");

  chp_store_revoke_device_async (store, "d2", 5000, NULL, wait_cb, &wait);
  g_assert_true (chp_store_write_finish (store, wait_for (&wait), &error));
  g_clear_object (&wait.result);

  /* Revoking what does not exist says so. */
  wait.done = FALSE;
  chp_store_revoke_device_async (store, "nope", 5000, NULL, wait_cb, &wait);
  g_assert_false (chp_store_write_finish (store, wait_for (&wait), &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  g_clear_object (&wait.result);

  chp_store_close (store);
  g_clear_object (&store);

  store = open_store (path, NULL);
  devices = load_devices (store);
  g_assert_cmpuint (devices->len, ==, 2);
  g_assert_cmpstr (((ChpDeviceInfo *) devices->pdata[0])->name, ==, "Work browser");
  g_assert_cmpint (((ChpDeviceInfo *) devices->pdata[0])->revoked_at, ==, 0);
  g_assert_cmpint (((ChpDeviceInfo *) devices->pdata[1])->revoked_at, ==, 5000);
}

static void
test_wal_and_version (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) store = open_store (path, NULL);
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;

  chp_store_close (store);
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "PRAGMA journal_mode", -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  g_assert_cmpstr ((const char *) sqlite3_column_text (stmt, 0), ==, "wal");
  sqlite3_finalize (stmt);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  g_assert_cmpint (sqlite3_column_int (stmt, 0), ==, 1);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
}

static void
test_audit_bounded (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) store = open_store (path, NULL);
  g_autoptr(GPtrArray) entries = NULL;
  g_autoptr(GError) error = NULL;
  Wait wait = { 0 };

  chp_store_set_audit_limit (store, 5);
  for (guint i = 0; i < 12; i++)
    {
      g_autofree char *method = g_strdup_printf ("m%u", i);
      g_autoptr(ChpAuditEntry) entry = chp_audit_entry_new ("call", method, "ok", "d1", i, NULL);

      chp_store_add_audit_async (store, entry, NULL, NULL, NULL);
    }

  chp_store_list_audit_async (store, 100, NULL, wait_cb, &wait);
  entries = chp_store_list_audit_finish (store, wait_for (&wait), &error);
  g_assert_no_error (error);
  g_clear_object (&wait.result);

  /* The newest five, newest first. */
  g_assert_cmpuint (entries->len, ==, 5);
  g_assert_cmpstr (((ChpAuditEntry *) entries->pdata[0])->method, ==, "m11");
  g_assert_cmpstr (((ChpAuditEntry *) entries->pdata[4])->method, ==, "m7");
}

static void
test_not_sqlite_moved_aside (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  const char *junk = "this is a text file, not a database, and it must not be lost\n";
  g_autoptr(ChpStore) store = NULL;
  g_autoptr(GPtrArray) devices = NULL;
  g_autofree char *moved = NULL;
  g_autofree char *contents = NULL;

  g_assert_true (g_file_set_contents (path, junk, -1, NULL));
  store = open_store (path, NULL);
  g_assert_nonnull (store);

  /* The person is told where it went, and it is all there. */
  moved = g_strdup (chp_store_get_moved_aside_path (store));
  g_assert_nonnull (moved);
  g_assert_true (g_str_has_prefix (moved, path));
  g_assert_nonnull (strstr (moved, ".corrupt-"));
  g_assert_true (g_file_get_contents (moved, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, junk);

  /* And a fresh database works. */
  save_device (store, "d1", "New");
  devices = load_devices (store);
  g_assert_cmpuint (devices->len, ==, 1);
}

static void
test_foreign_sqlite_moved_aside (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) store = NULL;
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "CREATE TABLE recipes (name TEXT); "
                                     "INSERT INTO recipes VALUES ('soup');", NULL, NULL, NULL),
                   ==, SQLITE_OK);
  sqlite3_close (db);

  store = open_store (path, NULL);
  g_assert_nonnull (store);
  g_assert_nonnull (chp_store_get_moved_aside_path (store));

  /* The other program's data is intact where we put it. */
  g_assert_cmpint (sqlite3_open (chp_store_get_moved_aside_path (store), &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "SELECT name FROM recipes", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
}

static void
test_corrupt_pages_moved_aside (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) store = open_store (path, NULL);
  g_autofree char *contents = NULL;
  gsize len;

  for (guint i = 0; i < 50; i++)
    {
      g_autofree char *id = g_strdup_printf ("device-%u", i);

      save_device (store, id, "A browser with a long enough name to fill some pages");
    }
  chp_store_close (store);
  g_clear_object (&store);

  /* Scribble over everything past the header: a disk that lost sectors. */
  g_assert_true (g_file_get_contents (path, &contents, &len, NULL));
  g_assert_cmpuint (len, >, 4096);
  memset (contents + 100, 0xA5, len - 100);
  g_assert_true (g_file_set_contents (path, contents, len, NULL));

  store = open_store (path, NULL);
  g_assert_nonnull (store);
  g_assert_nonnull (chp_store_get_moved_aside_path (store));
}

static void
test_read_only_folder (void)
{
  if (g_test_subprocess ())
    {
      g_autoptr(GError) error = NULL;
      const char *path = g_getenv ("CHP_RO_PATH");
      g_autoptr(ChpStore) store = NULL;

      /* root may write anywhere: become nobody to meet the folder as a person would. */
      if (getuid () == 0)
        g_assert_true (setgid (65534) == 0 && setuid (65534) == 0);

      store = open_store (path, &error);
      g_assert_null (store);
      g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_READ_ONLY);
      g_assert_nonnull (strstr (error->message, "chmod u+w"));
      return;
    }

  {
    g_autofree char *base = make_tmp ();
    g_autofree char *ro = g_build_filename (base, "ro", NULL);
    g_autofree char *path = g_build_filename (ro, "chaperone.db", NULL);

    g_assert_cmpint (g_chmod (base, 0755), ==, 0);
    g_assert_cmpint (g_mkdir (ro, 0555), ==, 0);
    g_setenv ("CHP_RO_PATH", path, TRUE);
    g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed ();
  }
}

static void
test_pairing_attempts (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) store = open_store (path, NULL);
  g_autoptr(GPtrArray) attempts = NULL;
  g_autoptr(GError) error = NULL;
  gint64 now = g_get_real_time () / 1000;
  Wait wait = { 0 };

  for (guint i = 0; i < 4; i++)
    {
      ChpPairingAttempt attempt = { now - (3 - i) * 1000, "inst", CHP_TEST_ORIGIN,
                                    i == 3 ? CHP_PAIRING_OUTCOME_APPROVED
                                           : CHP_PAIRING_OUTCOME_REJECTED };

      chp_store_add_pairing_attempt_async (store, &attempt, NULL, NULL, NULL);
    }

  chp_store_load_pairing_attempts_async (store, now - 2500, NULL, wait_cb, &wait);
  attempts = chp_store_load_pairing_attempts_finish (store, wait_for (&wait), &error);
  g_assert_no_error (error);
  g_clear_object (&wait.result);
  g_assert_cmpuint (attempts->len, ==, 3);
  g_assert_cmpint (((ChpPairingAttempt *) attempts->pdata[2])->outcome, ==,
                   CHP_PAIRING_OUTCOME_APPROVED);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/store/devices-survive-reopen", test_devices_survive_reopen);
  g_test_add_func ("/chaperone/store/wal-and-version", test_wal_and_version);
  g_test_add_func ("/chaperone/store/audit-bounded", test_audit_bounded);
  g_test_add_func ("/chaperone/store/not-sqlite-moved-aside", test_not_sqlite_moved_aside);
  g_test_add_func ("/chaperone/store/foreign-sqlite-moved-aside", test_foreign_sqlite_moved_aside);
  g_test_add_func ("/chaperone/store/corrupt-pages-moved-aside", test_corrupt_pages_moved_aside);
  g_test_add_func ("/chaperone/store/read-only-folder", test_read_only_folder);
  g_test_add_func ("/chaperone/store/pairing-attempts", test_pairing_attempts);

  return g_test_run ();
}
