/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-store.c: a real SQLite file on disk: migrations, durability across reopen, the audit bound,
 * and what happens to files that are not ours (moved aside, never deleted). */
#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chp-audit-list.h"
#include "chp-store.h"
#include "chp-test-client.h"

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
  g_auto(ChpTestResult) wait = { 0 };
  gboolean ok;

  chp_store_open_async (store, NULL, chp_test_result_cb, &wait);
  ok = chp_store_open_finish (store, chp_test_result_wait (&wait), error);

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
  g_auto(ChpTestResult) wait = { 0 };

  chp_store_save_device_async (store, &info, NULL, chp_test_result_cb, &wait);
  g_assert_true (chp_store_write_finish (store, chp_test_result_wait (&wait), &error));
  g_assert_no_error (error);
}

static GPtrArray *
load_devices (ChpStore *store)
{
  g_autoptr(GError) error = NULL;
  g_auto(ChpTestResult) wait = { 0 };
  GPtrArray *devices;

  chp_store_load_devices_async (store, NULL, chp_test_result_cb, &wait);
  devices = chp_store_load_devices_finish (store, chp_test_result_wait (&wait), &error);
  g_assert_no_error (error);

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
  g_auto(ChpTestResult) wait = { 0 };

  g_assert_nonnull (store);
  save_device (store, "d1", "Work browser");
  save_device (store, "d2", "Home browser");

  chp_store_revoke_device_async (store, "d2", 5000, NULL, chp_test_result_cb, &wait);
  g_assert_true (chp_store_write_finish (store, chp_test_result_wait (&wait), &error));

  /* Revoking what does not exist says so. */
  chp_store_revoke_device_async (store, "nope", 5000, NULL, chp_test_result_cb, &wait);
  g_assert_false (chp_store_write_finish (store, chp_test_result_wait (&wait), &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);

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
  g_assert_cmpint (sqlite3_column_int (stmt, 0), ==, 5);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
}

static void
assert_mode (const char *path,
             guint       mode)
{
  GStatBuf st;

  g_assert_cmpint (g_stat (path, &st), ==, 0);
  if ((st.st_mode & 0777) != mode)
    g_error ("%s is %04o, not %04o", path, st.st_mode & 0777, mode);
}

/* The docs promise 0600 for everything in the data folder: the database and its -wal and -shm,
 * whatever the umask, and a file an older version left 0644 is tightened. */
static void
test_file_modes (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autofree char *wal = g_strconcat (path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (path, "-shm", NULL);
  g_autoptr(ChpStore) store = NULL;
  mode_t old_umask = umask (022);

  store = open_store (path, NULL);
  g_assert_nonnull (store);
  save_device (store, "d1", "Work browser");
  assert_mode (path, 0600);
  assert_mode (wal, 0600);
  assert_mode (shm, 0600);
  chp_store_close (store);
  g_clear_object (&store);

  /* As an older version left them. */
  g_assert_cmpint (g_chmod (path, 0644), ==, 0);
  if (g_file_test (wal, G_FILE_TEST_EXISTS))
    g_assert_cmpint (g_chmod (wal, 0644), ==, 0);
  store = open_store (path, NULL);
  g_assert_nonnull (store);
  save_device (store, "d2", "Home browser");
  assert_mode (path, 0600);
  assert_mode (wal, 0600);
  assert_mode (shm, 0600);

  umask (old_umask);
}

static GHashTable *
load_state (ChpStore *store)
{
  g_autoptr(GError) error = NULL;
  g_auto(ChpTestResult) wait = { 0 };
  GHashTable *state;

  chp_store_load_state_async (store, NULL, chp_test_result_cb, &wait);
  state = chp_store_load_state_finish (store, chp_test_result_wait (&wait), &error);
  g_assert_no_error (error);

  return state;
}

static void
set_state (ChpStore   *store,
           const char *key,
           const char *value)
{
  g_autoptr(GError) error = NULL;
  g_auto(ChpTestResult) wait = { 0 };

  chp_store_set_state_async (store, key, value, NULL, chp_test_result_cb, &wait);
  g_assert_true (chp_store_write_finish (store, chp_test_result_wait (&wait), &error));
  g_assert_no_error (error);
}

/* What the person decided (Stop, the floor's entries) is kept across a restart; forgetting a
 * value removes it. */
static void
test_state_survives_reopen (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) store = open_store (path, NULL);
  g_autoptr(GHashTable) state = NULL;

  state = load_state (store);
  g_assert_cmpuint (g_hash_table_size (state), ==, 0);
  g_clear_pointer (&state, g_hash_table_unref);

  set_state (store, "stopped", "true");
  set_state (store, "floor-blind", "[\"mail.example.com\"]");
  set_state (store, "floor-blind", "[\"mail.example.com\",\"*.corp.example\"]");
  set_state (store, "agent-result-max-chars", "2000");
  set_state (store, "agent-result-max-chars", NULL);
  chp_store_close (store);
  g_clear_object (&store);

  store = open_store (path, NULL);
  state = load_state (store);
  g_assert_cmpuint (g_hash_table_size (state), ==, 2);
  g_assert_cmpstr (g_hash_table_lookup (state, "stopped"), ==, "true");
  g_assert_cmpstr (g_hash_table_lookup (state, "floor-blind"), ==,
                   "[\"mail.example.com\",\"*.corp.example\"]");
}

static void
test_audit_bounded (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) store = open_store (path, NULL);
  g_autoptr(GPtrArray) entries = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(ChpTestResult) wait = { 0 };

  chp_store_set_audit_limit (store, 5);
  for (guint i = 0; i < 12; i++)
    {
      g_autofree char *method = g_strdup_printf ("m%u", i);
      g_autoptr(ChpAuditEntry) entry = chp_audit_entry_new ("call", method, "ok", "d1", i, NULL);

      chp_store_add_audit_async (store, entry, NULL, NULL, NULL);
    }

  chp_store_list_audit_async (store, 100, NULL, chp_test_result_cb, &wait);
  entries = chp_store_list_audit_finish (store, chp_test_result_wait (&wait), &error);
  g_assert_no_error (error);

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
  g_auto(ChpTestResult) wait = { 0 };

  for (guint i = 0; i < 4; i++)
    {
      ChpPairingAttempt attempt = { now - (3 - i) * 1000, "inst", CHP_TEST_ORIGIN,
                                    i == 3 ? CHP_PAIRING_OUTCOME_APPROVED
                                           : CHP_PAIRING_OUTCOME_REJECTED };

      chp_store_add_pairing_attempt_async (store, &attempt, NULL, NULL, NULL);
    }

  chp_store_load_pairing_attempts_async (store, now - 2500, NULL, chp_test_result_cb, &wait);
  attempts = chp_store_load_pairing_attempts_finish (store, chp_test_result_wait (&wait), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (attempts->len, ==, 3);
  g_assert_cmpint (((ChpPairingAttempt *) attempts->pdata[2])->outcome, ==,
                   CHP_PAIRING_OUTCOME_APPROVED);
}


static GPtrArray *
query_audit (ChpStore            *store,
             const ChpAuditQuery *query,
             guint                offset,
             guint                limit)
{
  g_autoptr(GError) error = NULL;
  g_auto(ChpTestResult) wait = { 0 };
  GPtrArray *entries;

  chp_store_query_audit_async (store, query, offset, limit, NULL, chp_test_result_cb, &wait);
  entries = chp_store_query_audit_finish (store, chp_test_result_wait (&wait), &error);
  g_assert_no_error (error);

  return entries;
}

static ChpAuditCount
count_audit (ChpStore            *store,
             const ChpAuditQuery *query)
{
  g_autoptr(GError) error = NULL;
  ChpAuditCount count = { -1, -1 };
  g_auto(ChpTestResult) wait = { 0 };

  chp_store_count_audit_async (store, query, NULL, chp_test_result_cb, &wait);
  g_assert_true (chp_store_count_audit_finish (store, chp_test_result_wait (&wait), &count, &error));
  g_assert_no_error (error);

  return count;
}

/* 300 rows: every third a refused auth from d2, the rest calls from d1, some failing. */
/* The app asks the store to give its cache back when its window closes: after a long read (a
 * person scrolling the activity log), the pages the read left in SQLite's cache are freed. */
static void
test_release_memory (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) store = open_store (path, NULL);
  g_autoptr(GPtrArray) entries = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *detail = g_strnfill (400, 'x');
  sqlite3_int64 filled, released;
  g_auto(ChpTestResult) wait = { 0 };

  for (guint i = 0; i < 4000; i++)
    {
      g_autofree char *method = g_strdup_printf ("m%u", i);
      g_autoptr(ChpAuditEntry) entry = chp_audit_entry_new ("call", method, "ok", "d1", i, detail);

      chp_store_add_audit_async (store, entry, NULL, NULL, NULL);
    }
  chp_store_list_audit_async (store, 4000, NULL, chp_test_result_cb, &wait);
  entries = chp_store_list_audit_finish (store, chp_test_result_wait (&wait), &error);
  g_assert_no_error (error);
  g_assert_cmpuint (entries->len, ==, 4000);
  filled = sqlite3_memory_used ();

  /* Fire and forget; the read after it runs after it on the database thread. */
  chp_store_release_memory (store);
  g_clear_pointer (&entries, g_ptr_array_unref);
  chp_store_list_audit_async (store, 1, NULL, chp_test_result_cb, &wait);
  entries = chp_store_list_audit_finish (store, chp_test_result_wait (&wait), &error);
  g_assert_no_error (error);
  released = sqlite3_memory_used ();
  g_test_message ("SQLite held %" G_GINT64_FORMAT " bytes after the long read, %" G_GINT64_FORMAT
                  " after the release", (gint64) filled, (gint64) released);
  /* 4,000 rows of 400-byte details fill about 2 MB of pages; most of the cache goes. */
  g_assert_cmpint (filled - released, >, 1024 * 1024);
  g_assert_cmpuint (entries->len, ==, 1);
}

static void
add_mixed_audit (ChpStore *store)
{
  for (guint i = 0; i < 300; i++)
    {
      g_autoptr(ChpAuditEntry) entry = NULL;

      if (i % 3 == 0)
        entry = chp_audit_entry_new ("connection", "auth", "refused", "d2", 0, "unauthorized");
      else if (i % 10 == 1)
        entry = chp_audit_entry_new ("call", "browser.click", "error", "d1", i, "stale_node");
      else
        entry = chp_audit_entry_new ("call", "browser.snapshot", "ok", "d1", i, NULL);
      chp_store_add_audit_async (store, entry, NULL, NULL, NULL);
    }
}

static void
test_audit_query_pages_and_filters (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) store = open_store (path, NULL);
  g_autoptr(ChpAuditQuery) query = chp_audit_query_new ();
  g_autoptr(GPtrArray) first = NULL;
  g_autoptr(GPtrArray) second = NULL;
  g_autoptr(GPtrArray) all = NULL;
  ChpAuditCount count;
  guint expected_errors = 0;

  for (guint i = 0; i < 300; i++)
    if (i % 3 != 0 && i % 10 == 1)
      expected_errors++;

  add_mixed_audit (store);

  count = count_audit (store, NULL);
  g_assert_cmpint (count.count, ==, 300);
  g_assert_cmpint (count.max_id, >=, 300);

  /* Pages follow each other, newest first, without gaps or repeats. */
  first = query_audit (store, NULL, 0, 100);
  second = query_audit (store, NULL, 100, 100);
  all = query_audit (store, NULL, 0, 1000);
  g_assert_cmpuint (first->len, ==, 100);
  g_assert_cmpuint (second->len, ==, 100);
  g_assert_cmpuint (all->len, ==, 300);
  g_assert_cmpint (((ChpAuditEntry *) first->pdata[0])->id, ==, count.max_id);
  g_assert_cmpint (((ChpAuditEntry *) first->pdata[99])->id, ==,
                   ((ChpAuditEntry *) second->pdata[0])->id + 1);
  for (guint i = 0; i < 200; i++)
    g_assert_cmpint (((ChpAuditEntry *) all->pdata[i])->id, ==,
                     ((ChpAuditEntry *) (i < 100 ? first : second)->pdata[i % 100])->id);
  g_clear_pointer (&first, g_ptr_array_unref);

  /* Each filter alone. */
  query->category = g_strdup ("connection");
  g_assert_cmpint (count_audit (store, query).count, ==, 100);
  first = query_audit (store, query, 0, 1000);
  g_assert_cmpuint (first->len, ==, 100);
  for (guint i = 0; i < first->len; i++)
    g_assert_cmpstr (((ChpAuditEntry *) first->pdata[i])->category, ==, "connection");
  g_clear_pointer (&first, g_ptr_array_unref);
  g_clear_pointer (&query->category, g_free);

  query->outcome = g_strdup ("error");
  g_assert_cmpint (count_audit (store, query).count, ==, expected_errors);
  g_clear_pointer (&query->outcome, g_free);

  query->device_id = g_strdup ("d2");
  g_assert_cmpint (count_audit (store, query).count, ==, 100);
  g_clear_pointer (&query->device_id, g_free);

  /* Search: the method, the error code or the category, any case. */
  query->search = g_strdup ("SNAPSHOT");
  g_assert_cmpint (count_audit (store, query).count, ==, 200 - expected_errors);
  g_free (query->search);
  query->search = g_strdup ("stale");
  g_assert_cmpint (count_audit (store, query).count, ==, expected_errors);
  g_free (query->search);
  query->search = g_strdup ("connect");
  g_assert_cmpint (count_audit (store, query).count, ==, 100);
  g_free (query->search);
  query->search = g_strdup ("%");
  g_assert_cmpint (count_audit (store, query).count, ==, 0);
  g_clear_pointer (&query->search, g_free);

  /* Filters together. */
  query->category = g_strdup ("call");
  query->outcome = g_strdup ("ok");
  query->device_id = g_strdup ("d1");
  query->search = g_strdup ("browser.");
  g_assert_cmpint (count_audit (store, query).count, ==, 200 - expected_errors);
  first = query_audit (store, query, 10, 5);
  g_assert_cmpuint (first->len, ==, 5);
  g_assert_cmpstr (((ChpAuditEntry *) first->pdata[0])->method, ==, "browser.snapshot");
  g_clear_pointer (&first, g_ptr_array_unref);

  /* Bounds: a listing pinned at an id does not move when rows are added. */
  chp_audit_query_free (g_steal_pointer (&query));
  query = chp_audit_query_new ();
  query->up_to_id = count.max_id;
  first = query_audit (store, query, 0, 1);
  for (guint i = 0; i < 5; i++)
    {
      g_autoptr(ChpAuditEntry) entry = chp_audit_entry_new ("call", "browser.tabs", "ok", "d1", 1, NULL);

      chp_store_add_audit_async (store, entry, NULL, NULL, NULL);
    }
  g_clear_pointer (&second, g_ptr_array_unref);
  second = query_audit (store, query, 0, 1);
  g_assert_cmpint (((ChpAuditEntry *) first->pdata[0])->id, ==, ((ChpAuditEntry *) second->pdata[0])->id);
  g_assert_cmpint (count_audit (store, query).count, ==, 300);
  query->up_to_id = 0;
  query->after_id = count.max_id;
  g_assert_cmpint (count_audit (store, query).count, ==, 5);
  g_assert_cmpint (count_audit (store, query).max_id, ==, count.max_id + 5);
}

static void
changed_cb (ChpStore *store,
            gboolean  cleared,
            GArray   *seen)
{
  g_array_append_val (seen, cleared);
}

static void
test_audit_clear (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) store = open_store (path, NULL);
  g_autoptr(GArray) seen = g_array_new (FALSE, FALSE, sizeof (gboolean));
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  g_auto(ChpTestResult) wait = { 0 };

  g_signal_connect (store, "audit-changed", G_CALLBACK (changed_cb), seen);
  add_mixed_audit (store);
  g_assert_cmpuint (seen->len, ==, 300);
  g_assert_false (g_array_index (seen, gboolean, 0));

  chp_store_clear_audit_async (store, NULL, chp_test_result_cb, &wait);
  g_assert_true (chp_store_write_finish (store, chp_test_result_wait (&wait), &error));
  g_assert_no_error (error);
  g_assert_cmpuint (seen->len, ==, 301);
  g_assert_true (g_array_index (seen, gboolean, 300));

  g_assert_cmpint (count_audit (store, NULL).count, ==, 0);
  entries = query_audit (store, NULL, 0, 100);
  g_assert_cmpuint (entries->len, ==, 0);

  /* Cleared for good: still empty after reopening. */
  g_clear_object (&store);
  store = open_store (path, NULL);
  g_assert_cmpint (count_audit (store, NULL).count, ==, 0);
}

static gboolean
list_settled (gpointer data)
{
  ChpAuditList *list = data;

  return !chp_audit_list_get_loading (list);
}

static gboolean
list_has (gpointer data)
{
  gpointer *args = data;

  return g_list_model_get_n_items (args[0]) == GPOINTER_TO_UINT (args[1]) &&
         !chp_audit_list_get_loading (args[0]);
}

static void
wait_list_n (ChpAuditList *list,
             guint         n)
{
  gpointer args[2] = { list, GUINT_TO_POINTER (n) };

  g_assert_true (chp_test_spin_until (list_has, args, 5000));
}

static gboolean
item_loaded (gpointer data)
{
  return chp_audit_item_get_loaded (data);
}

static const ChpAuditEntry *
entry_at (ChpAuditList *list,
          guint         position)
{
  g_autoptr(ChpAuditItem) item = g_list_model_get_item (G_LIST_MODEL (list), position);

  g_assert_nonnull (item);
  g_assert_true (chp_test_spin_until (item_loaded, item, 5000));
  /* The list keeps the page, so the entry outlives this reference. */
  return chp_audit_item_get_entry (item);
}

typedef struct
{
  guint position, removed, added;
} Change;

static void
list_changed_cb (GListModel *model,
                 guint       position,
                 guint       removed,
                 guint       added,
                 GArray     *changes)
{
  Change change = { position, removed, added };

  g_array_append_val (changes, change);
}

static void
test_audit_list_model (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) store = open_store (path, NULL);
  g_autoptr(ChpAuditList) list = NULL;
  g_autoptr(ChpAuditQuery) query = chp_audit_query_new ();
  g_autoptr(GArray) changes = g_array_new (FALSE, FALSE, sizeof (Change));
  gint64 newest, oldest;

  chp_store_set_audit_limit (store, 300);
  add_mixed_audit (store);

  list = chp_audit_list_new (store);
  g_assert_true (chp_test_spin_until (list_settled, list, 5000));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 300);
  g_assert_true (g_list_model_get_item_type (G_LIST_MODEL (list)) == CHP_TYPE_AUDIT_ITEM);

  /* Rows come a page at a time: an item is a placeholder until its page is read. */
  newest = entry_at (list, 0)->id;
  g_assert_cmpint (entry_at (list, 1)->id, ==, newest - 1);
  g_assert_cmpint (entry_at (list, 250)->id, ==, newest - 250);
  oldest = entry_at (list, 299)->id;
  g_assert_cmpint (oldest, ==, newest - 299);
  g_assert_null (g_list_model_get_item (G_LIST_MODEL (list), 300));

  /* New activity joins at the top, and the bound trims as many at the bottom: the rows in
   * between keep their places relative to each other. */
  g_signal_connect (list, "items-changed", G_CALLBACK (list_changed_cb), changes);
  for (guint i = 0; i < 4; i++)
    {
      g_autoptr(ChpAuditEntry) entry = chp_audit_entry_new ("call", "browser.type", "ok", "d1", 1, NULL);

      chp_store_add_audit_async (store, entry, NULL, NULL, NULL);
    }
  chp_test_until (changes->len >= 2);
  g_assert_cmpuint (changes->len, ==, 2);
  g_assert_cmpuint (g_array_index (changes, Change, 0).position, ==, 0);
  g_assert_cmpuint (g_array_index (changes, Change, 0).added, ==, 4);
  g_assert_cmpuint (g_array_index (changes, Change, 1).position, ==, 300);
  g_assert_cmpuint (g_array_index (changes, Change, 1).removed, ==, 4);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 300);
  g_assert_cmpstr (entry_at (list, 0)->method, ==, "browser.type");
  g_assert_cmpint (entry_at (list, 4)->id, ==, newest);

  /* A filter reads the matching rows afresh. */
  query->category = g_strdup ("connection");
  chp_audit_list_set_query (list, query);
  g_assert_true (chp_test_spin_until (list_settled, list, 5000));
  /* 100 refused auths, less the two among the four oldest rows trimmed above. */
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 98);
  g_assert_cmpstr (entry_at (list, 57)->category, ==, "connection");

  query->search = g_strdup ("nothing matches this");
  chp_audit_list_set_query (list, query);
  wait_list_n (list, 0);

  chp_audit_list_set_query (list, NULL);
  wait_list_n (list, 300);

  /* Clearing empties the list. */
  chp_store_clear_audit_async (store, NULL, NULL, NULL);
  wait_list_n (list, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/store/devices-survive-reopen", test_devices_survive_reopen);
  g_test_add_func ("/chaperone/store/wal-and-version", test_wal_and_version);
  g_test_add_func ("/chaperone/store/file-modes", test_file_modes);
  g_test_add_func ("/chaperone/store/state-survives-reopen", test_state_survives_reopen);
  g_test_add_func ("/chaperone/store/audit-bounded", test_audit_bounded);
  g_test_add_func ("/chaperone/store/release-memory", test_release_memory);
  g_test_add_func ("/chaperone/store/not-sqlite-moved-aside", test_not_sqlite_moved_aside);
  g_test_add_func ("/chaperone/store/foreign-sqlite-moved-aside", test_foreign_sqlite_moved_aside);
  g_test_add_func ("/chaperone/store/corrupt-pages-moved-aside", test_corrupt_pages_moved_aside);
  g_test_add_func ("/chaperone/store/read-only-folder", test_read_only_folder);
  g_test_add_func ("/chaperone/store/pairing-attempts", test_pairing_attempts);
  g_test_add_func ("/chaperone/store/audit/query-pages-filters", test_audit_query_pages_and_filters);
  g_test_add_func ("/chaperone/store/audit/clear", test_audit_clear);
  g_test_add_func ("/chaperone/store/audit/list-model", test_audit_list_model);

  return g_test_run ();
}
