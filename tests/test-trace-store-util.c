/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-trace-store-util.c: helpers of the trace store's tests (test-trace-store-util.h). */
#include "config.h"

#include "test-trace-store-util.h"

#include <glib/gstdio.h>
#include <string.h>

#include "chp-test-client.h"

/* The trace store's calls may wait behind a batch of writes on a loaded machine. */
#define TT_WAIT_MS 30000

char *
tt_make_tmp (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("chp-trace-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

/* The folder of tt_make_tmp() and the files in it. */
void
tt_remove_tmp (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;

  g_assert_nonnull (d);
  while ((name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      g_assert_cmpint (g_unlink (path), ==, 0);
    }
  g_assert_cmpint (g_rmdir (dir), ==, 0);
}

ChpStore *
tt_open_store (const char  *path,
               GError     **error)
{
  ChpStore *store = chp_store_new (path);
  GAsyncResult *result;
  g_auto(ChpTestResult) wait = { 0 };

  chp_store_open_async (store, NULL, chp_test_result_cb, &wait);
  result = chp_test_result_wait_within (&wait, TT_WAIT_MS);
  if (!chp_store_open_finish (store, result, error))
    g_clear_object (&store);

  return store;
}

void
tt_close_store (ChpStore **store)
{
  chp_store_close (*store);
  /* The jobs' last references come back through the main loop. */
  chp_test_spin_pending ();
  g_clear_object (store);
}

gboolean
tt_flush (ChpStore  *store,
          GError   **error)
{
  GAsyncResult *result;
  g_auto(ChpTestResult) wait = { 0 };

  chp_store_trace_flush_async (store, NULL, chp_test_result_cb, &wait);
  result = chp_test_result_wait_within (&wait, TT_WAIT_MS);
  return chp_store_trace_flush_finish (store, result, error);
}

GPtrArray *
tt_list (ChpStore            *store,
         const ChpTraceQuery *query,
         guint                offset,
         guint                limit)
{
  GAsyncResult *result;
  g_autoptr(GError) error = NULL;
  g_auto(ChpTestResult) wait = { 0 };
  GPtrArray *sessions;

  chp_store_list_traces_async (store, query, offset, limit, NULL, chp_test_result_cb, &wait);
  result = chp_test_result_wait_within (&wait, TT_WAIT_MS);
  sessions = chp_store_list_traces_finish (store, result, &error);
  g_assert_no_error (error);

  return sessions;
}

GPtrArray *
tt_search (ChpStore   *store,
           const char *search)
{
  ChpTraceQuery query = { .search = (char *) search };

  return tt_list (store, &query, 0, 100);
}

GPtrArray *
tt_steps (ChpStore    *store,
          const char  *session_id,
          guint        after_seq,
          guint        limit,
          GError     **error)
{
  GAsyncResult *result;
  g_auto(ChpTestResult) wait = { 0 };

  chp_store_load_trace_steps_async (store, session_id, after_seq, limit, NULL, chp_test_result_cb, &wait);
  result = chp_test_result_wait_within (&wait, TT_WAIT_MS);
  return chp_store_load_trace_steps_finish (store, result, error);
}

ChpTraceShot *
tt_shot (ChpStore    *store,
         const char  *session_id,
         guint        seq,
         GError     **error)
{
  GAsyncResult *result;
  g_auto(ChpTestResult) wait = { 0 };

  chp_store_load_trace_shot_async (store, session_id, seq, NULL, chp_test_result_cb, &wait);
  result = chp_test_result_wait_within (&wait, TT_WAIT_MS);
  return chp_store_load_trace_shot_finish (store, result, error);
}

gboolean
tt_forget (ChpStore    *store,
           const char  *session_id,
           GError     **error)
{
  GAsyncResult *result;
  g_auto(ChpTestResult) wait = { 0 };

  chp_store_forget_trace_async (store, session_id, NULL, chp_test_result_cb, &wait);
  result = chp_test_result_wait_within (&wait, TT_WAIT_MS);
  return chp_store_write_finish (store, result, error);
}

guint64
tt_size (ChpStore *store)
{
  GAsyncResult *result;
  g_autoptr(GError) error = NULL;
  g_auto(ChpTestResult) wait = { 0 };
  guint64 bytes = 0;

  chp_store_trace_size_async (store, NULL, chp_test_result_cb, &wait);
  result = chp_test_result_wait_within (&wait, TT_WAIT_MS);
  g_assert_true (chp_store_trace_size_finish (store, result, &bytes, &error));
  g_assert_no_error (error);

  return bytes;
}

/* Starts as a JPEG does; the rest is @fill. The store checks the start only. */
GBytes *
tt_fake_jpeg (gsize  size,
              guint8 fill)
{
  guint8 *data = g_malloc (size);

  memset (data, fill, size);
  data[0] = 0xff;
  data[1] = 0xd8;
  data[2] = 0xff;
  return g_bytes_new_take (data, size);
}

sqlite3 *
tt_open_file (const char *path)
{
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL), ==, SQLITE_OK);
  return db;
}

gint64
tt_file_int (sqlite3    *db,
             const char *sql)
{
  sqlite3_stmt *stmt = NULL;
  gint64 value;

  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);

  return value;
}

char *
tt_file_text (sqlite3    *db,
              const char *sql)
{
  sqlite3_stmt *stmt = NULL;
  char *value = NULL;

  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    g_error ("%s: %s", sql, sqlite3_errmsg (db));
  if (sqlite3_step (stmt) == SQLITE_ROW)
    value = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);

  return value;
}

/* SQLite's own check of the file, and FTS5's of its index against the steps it was built from
 * (rank 1: compares with the content table, so a row forgotten in one but not the other fails). */
void
tt_assert_file_ok (const char *path)
{
  sqlite3 *db = tt_open_file (path);
  g_autofree char *check = tt_file_text (db, "PRAGMA integrity_check");
  char *message = NULL;
  int rc;

  g_assert_cmpstr (check, ==, "ok");
  rc = sqlite3_exec (db, "INSERT INTO step_text (step_text, rank) VALUES ('integrity-check', 1)",
                     NULL, NULL, &message);
  if (rc != SQLITE_OK)
    g_error ("the full-text index does not match the steps: %s", message);
  sqlite3_close (db);
}
