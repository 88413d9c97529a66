/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store.c: one database thread owns the SQLite connection; requests arrive on a GAsyncQueue,
 * each runs in its own transaction and its result returns to the caller's main context via GTask. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

/* "Chpr": tells our database from another program's SQLite file at the same path. */
#define CHP_STORE_APPLICATION_ID 0x43687072

typedef gpointer (*ChpStoreJobFunc) (ChpStore  *self,
                                     gpointer   data,
                                     GError   **error);

typedef enum
{
  JOB_READ,
  JOB_WRITE,
  JOB_OPEN,
  JOB_QUIT,
} JobKind;

typedef struct
{
  JobKind          kind;
  ChpStoreJobFunc  func;
  gpointer         data;
  GDestroyNotify   data_free;
  GDestroyNotify   result_free;
  GTask           *task;
} Job;

typedef enum
{
  STMT_DEVICE_UPSERT,
  STMT_DEVICE_LIST,
  STMT_DEVICE_REVOKE,
  STMT_DEVICE_RENAME,
  STMT_DEVICE_TOUCH,
  STMT_ATTEMPT_INSERT,
  STMT_ATTEMPT_LIST,
  STMT_ATTEMPT_TRIM,
  STMT_AUDIT_INSERT,
  STMT_AUDIT_TRIM,
  STMT_AUDIT_LIST,
  STMT_AUDIT_QUERY,
  STMT_AUDIT_COUNT,
  STMT_AUDIT_CLEAR,
  STMT_STATE_SET,
  STMT_STATE_DELETE,
  STMT_STATE_LIST,
  N_STMTS
} StmtId;

#define AUDIT_WHERE \
  " WHERE id > ?5 AND id <= ?6" \
  " AND (?1 IS NULL OR category = ?1) AND (?2 IS NULL OR outcome = ?2)" \
  " AND (?3 IS NULL OR device_id = ?3)" \
  " AND (?4 IS NULL OR instr (lower (method), ?4) > 0 OR instr (lower (category), ?4) > 0" \
  " OR instr (lower (coalesce (error_code, '')), ?4) > 0)"

static const char * const stmt_sql[N_STMTS] = {
  [STMT_DEVICE_UPSERT] =
    "INSERT INTO devices (device_id, installation_id, origin, name, browser, client, version,"
    " key_x, key_y, created_at, paired_at, last_seen, revoked_at)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
    " ON CONFLICT (device_id) DO UPDATE SET installation_id = ?2, origin = ?3, name = ?4,"
    " browser = ?5, client = ?6, version = ?7, key_x = ?8, key_y = ?9, paired_at = ?11,"
    " last_seen = ?12, revoked_at = ?13",
  [STMT_DEVICE_LIST] =
    "SELECT device_id, installation_id, origin, name, browser, client, version, key_x, key_y,"
    " created_at, paired_at, last_seen, revoked_at FROM devices ORDER BY created_at, device_id",
  [STMT_DEVICE_REVOKE] = "UPDATE devices SET revoked_at = ?2 WHERE device_id = ?1",
  [STMT_DEVICE_RENAME] = "UPDATE devices SET name = ?2 WHERE device_id = ?1",
  [STMT_DEVICE_TOUCH] = "UPDATE devices SET last_seen = ?2 WHERE device_id = ?1",
  [STMT_ATTEMPT_INSERT] =
    "INSERT INTO pairing_attempts (at, installation_id, origin, outcome) VALUES (?1, ?2, ?3, ?4)",
  [STMT_ATTEMPT_LIST] =
    "SELECT at, installation_id, origin, outcome FROM pairing_attempts WHERE at >= ?1 ORDER BY at",
  /* Rate limits look back one day; a week of history is plenty for a person to read. */
  [STMT_ATTEMPT_TRIM] = "DELETE FROM pairing_attempts WHERE at < ?1",
  [STMT_AUDIT_INSERT] =
    "INSERT INTO audit (at, category, method, outcome, device_id, duration_ms, error_code)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
  [STMT_AUDIT_TRIM] =
    /* Right after the insert: ids only grow and only the oldest rows go, so this keeps the
     * newest ?1 rows with one index seek instead of walking ?1 rows on every call. */
    "DELETE FROM audit WHERE id <= last_insert_rowid () - ?1",
  [STMT_AUDIT_LIST] =
    "SELECT id, at, category, method, outcome, device_id, duration_ms, error_code"
    " FROM audit ORDER BY id DESC LIMIT ?1",
  /* One statement for every combination of filters, so it is prepared once. The id bounds are
   * always bound (0 .. G_MAXINT64 when open) so that SQLite walks the rowid range directly. */
  [STMT_AUDIT_QUERY] =
    "SELECT id, at, category, method, outcome, device_id, duration_ms, error_code FROM audit"
    AUDIT_WHERE " ORDER BY id DESC LIMIT ?7 OFFSET ?8",
  [STMT_AUDIT_COUNT] =
    "SELECT count(*), (SELECT coalesce (max (id), 0) FROM audit) FROM audit" AUDIT_WHERE,
  [STMT_AUDIT_CLEAR] = "DELETE FROM audit",
  [STMT_STATE_SET] =
    "INSERT INTO state (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2",
  [STMT_STATE_DELETE] = "DELETE FROM state WHERE key = ?1",
  [STMT_STATE_LIST] = "SELECT key, value FROM state",
};

/* Each migration runs in its own transaction and moves user_version by one. */
static const char * const migrations[] = {
  /* 1: the foundation's tables. */
  "CREATE TABLE devices ("
  "  device_id TEXT PRIMARY KEY,"
  "  installation_id TEXT NOT NULL,"
  "  origin TEXT NOT NULL,"
  "  name TEXT NOT NULL,"
  "  browser TEXT NOT NULL DEFAULT '',"
  "  client TEXT NOT NULL DEFAULT '',"
  "  version TEXT NOT NULL DEFAULT '',"
  "  key_x TEXT NOT NULL,"
  "  key_y TEXT NOT NULL,"
  "  created_at INTEGER NOT NULL,"
  "  paired_at INTEGER NOT NULL,"
  "  last_seen INTEGER NOT NULL DEFAULT 0,"
  "  revoked_at INTEGER NOT NULL DEFAULT 0);"
  "CREATE INDEX devices_by_installation ON devices (installation_id, origin);"
  "CREATE TABLE pairing_attempts ("
  "  id INTEGER PRIMARY KEY,"
  "  at INTEGER NOT NULL,"
  "  installation_id TEXT NOT NULL,"
  "  origin TEXT NOT NULL,"
  "  outcome TEXT NOT NULL);"
  "CREATE INDEX pairing_attempts_by_time ON pairing_attempts (at);"
  "CREATE TABLE audit ("
  "  id INTEGER PRIMARY KEY,"
  "  at INTEGER NOT NULL,"
  "  category TEXT NOT NULL,"
  "  method TEXT NOT NULL DEFAULT '',"
  "  outcome TEXT NOT NULL,"
  "  device_id TEXT,"
  "  duration_ms INTEGER NOT NULL DEFAULT 0,"
  "  error_code TEXT);",
  /* 2: what the person decided that must outlive the app: Stop, the floor's entries, the
   * result cap. Here and not in GSettings, which any process of the user can rewrite. */
  "CREATE TABLE state ("
  "  key TEXT PRIMARY KEY,"
  "  value TEXT NOT NULL);",
};

struct _ChpStore
{
  GObject parent_instance;

  char *path;
  char *moved_aside_path;

  GThread *thread;
  GAsyncQueue *queue;
  gboolean closed;

  /* Owned by the database thread alone. */
  sqlite3 *db;
  sqlite3_stmt *stmts[N_STMTS];
  gint audit_limit; /* atomic */
};

enum {
  SIGNAL_AUDIT_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (ChpStore, chp_store, G_TYPE_OBJECT)
G_DEFINE_QUARK (chp-store-error-quark, chp_store_error)

static gboolean
unref_task_cb (gpointer data)
{
  g_object_unref (data);
  return G_SOURCE_REMOVE;
}

static void
job_free (Job *job)
{
  if (job->data_free != NULL)
    g_clear_pointer (&job->data, job->data_free);

  /* The task holds the store: its last reference must not go on this thread, or the store's
   * dispose would join the thread it runs on. Hand it back to the caller's context. */
  if (job->task != NULL)
    {
      GTask *task = g_steal_pointer (&job->task);
      g_autoptr(GSource) source = g_idle_source_new ();

      /* Not g_main_context_invoke(): it may run the function right here if it can
       * acquire the context. */
      g_source_set_callback (source, unref_task_cb, task, NULL);
      g_source_attach (source, g_task_get_context (task));
    }
  g_free (job);
}

static void
set_sqlite_error (GError     **error,
                  sqlite3     *db,
                  int          rc,
                  const char  *what)
{
  int primary = rc & 0xff;

  if (primary == SQLITE_FULL)
    g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_FULL,
                 _("The disk is full: %s was not saved. Free some space; nothing already "
                   "stored was lost."), what);
  else if (primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN || primary == SQLITE_PERM)
    g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_READ_ONLY,
                 _("Chaperone cannot write its database (%s): %s"), what,
                 db ? sqlite3_errmsg (db) : sqlite3_errstr (rc));
  else
    g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_FAILED,
                 "%s: %s", what, db ? sqlite3_errmsg (db) : sqlite3_errstr (rc));
}

static sqlite3_stmt *
get_stmt (ChpStore  *self,
          StmtId     id,
          GError   **error)
{
  int rc;

  if (self->stmts[id] != NULL)
    {
      sqlite3_reset (self->stmts[id]);
      sqlite3_clear_bindings (self->stmts[id]);
      return self->stmts[id];
    }

  rc = sqlite3_prepare_v3 (self->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
                           &self->stmts[id], NULL);
  if (rc != SQLITE_OK)
    {
      set_sqlite_error (error, self->db, rc, "prepare");
      return NULL;
    }

  return self->stmts[id];
}

static gboolean
exec_sql (sqlite3     *db,
          const char  *sql,
          GError     **error)
{
  int rc = sqlite3_exec (db, sql, NULL, NULL, NULL);

  if (rc != SQLITE_OK)
    {
      set_sqlite_error (error, db, rc, sql);
      return FALSE;
    }

  return TRUE;
}

static gboolean
step_done (ChpStore      *self,
           sqlite3_stmt  *stmt,
           const char    *what,
           GError       **error)
{
  int rc = sqlite3_step (stmt);

  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    {
      set_sqlite_error (error, self->db, rc, what);
      return FALSE;
    }

  return TRUE;
}

static gint64
pragma_int (sqlite3     *db,
            const char  *sql,
            int         *rc_out)
{
  sqlite3_stmt *stmt = NULL;
  gint64 value = -1;
  int rc;

  rc = sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL);
  if (rc == SQLITE_OK)
    {
      rc = sqlite3_step (stmt);
      if (rc == SQLITE_ROW)
        {
          value = sqlite3_column_int64 (stmt, 0);
          rc = SQLITE_OK;
        }
    }
  sqlite3_finalize (stmt);
  *rc_out = rc;

  return value;
}

typedef enum
{
  CHECK_OK,
  CHECK_BAD,      /* not SQLite, corrupt, or another program's database: move aside */
  CHECK_ERROR,    /* could not even look: report */
} CheckResult;

static CheckResult
check_database (sqlite3  *db,
                GError  **error)
{
  sqlite3_stmt *stmt = NULL;
  gint64 app_id, version, n_tables;
  gboolean ok = FALSE;
  int rc;

  app_id = pragma_int (db, "PRAGMA application_id", &rc);
  if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT)
    return CHECK_BAD;
  if (rc != SQLITE_OK)
    {
      set_sqlite_error (error, db, rc, "open");
      return CHECK_ERROR;
    }

  version = pragma_int (db, "PRAGMA user_version", &rc);
  n_tables = pragma_int (db, "SELECT count(*) FROM sqlite_schema", &rc);
  if (rc != SQLITE_OK)
    return CHECK_BAD;

  if (app_id != CHP_STORE_APPLICATION_ID && (version != 0 || n_tables != 0))
    {
      g_message ("The database is not Chaperone's (application_id %" G_GINT64_FORMAT ")", app_id);
      return CHECK_BAD;
    }

  if (version > (gint64) G_N_ELEMENTS (migrations))
    {
      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NEWER,
                   _("The database was written by a newer Chaperone (version %lld). Update "
                     "Chaperone to use it."), (long long) version);
      return CHECK_ERROR;
    }

  rc = sqlite3_prepare_v2 (db, "PRAGMA quick_check", -1, &stmt, NULL);
  if (rc == SQLITE_OK && sqlite3_step (stmt) == SQLITE_ROW)
    ok = g_strcmp0 ((const char *) sqlite3_column_text (stmt, 0), "ok") == 0;
  sqlite3_finalize (stmt);

  return ok ? CHECK_OK : CHECK_BAD;
}

static gboolean
move_aside (ChpStore  *self,
            GError   **error)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  g_autofree char *target = g_strdup_printf ("%s.corrupt-%s", self->path, stamp);
  const char * const suffixes[] = { "-wal", "-shm" };

  /* Two bad files within a second must not overwrite each other. */
  for (guint n = 1; g_file_test (target, G_FILE_TEST_EXISTS); n++)
    {
      g_free (target);
      target = g_strdup_printf ("%s.corrupt-%s.%u", self->path, stamp, n);
    }

  if (g_rename (self->path, target) != 0)
    {
      int saved = errno;

      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_OPEN,
                   _("The database %s is damaged and could not be moved aside: %s"),
                   self->path, g_strerror (saved));
      return FALSE;
    }

  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *from = g_strconcat (self->path, suffixes[i], NULL);
      g_autofree char *to = g_strconcat (target, suffixes[i], NULL);

      if (g_file_test (from, G_FILE_TEST_EXISTS))
        g_rename (from, to);
    }

  g_message ("The database was damaged or not Chaperone's; it was moved to %s", target);
  g_free (self->moved_aside_path);
  self->moved_aside_path = g_steal_pointer (&target);

  return TRUE;
}

static gboolean
migrate (ChpStore  *self,
         GError   **error)
{
  int rc;
  gint64 version = pragma_int (self->db, "PRAGMA user_version", &rc);

  if (rc != SQLITE_OK)
    {
      set_sqlite_error (error, self->db, rc, "user_version");
      return FALSE;
    }

  for (gint64 v = version; v < (gint64) G_N_ELEMENTS (migrations); v++)
    {
      g_autofree char *bump = g_strdup_printf ("PRAGMA user_version = %" G_GINT64_FORMAT "; "
                                               "PRAGMA application_id = %d;",
                                               v + 1, CHP_STORE_APPLICATION_ID);

      if (!exec_sql (self->db, "BEGIN IMMEDIATE", error))
        return FALSE;

      if (!exec_sql (self->db, migrations[v], error) ||
          !exec_sql (self->db, bump, error) ||
          !exec_sql (self->db, "COMMIT", error))
        {
          sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
          return FALSE;
        }

      g_debug ("Migrated the database to version %" G_GINT64_FORMAT, v + 1);
    }

  return TRUE;
}

/* The database holds pairings and the audit: 0600, like the key beside it. SQLite gives its
 * -wal and -shm files the mode of the database file, so creating that file 0600 before SQLite
 * does (rather than letting it use 0644 and the umask) settles all three. A file an older
 * version made 0644 is tightened, with its -wal and -shm. */
static gboolean
prepare_file_modes (ChpStore  *self,
                    GError   **error)
{
  const char * const suffixes[] = { "", "-wal", "-shm" };
  int fd = g_open (self->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);

  if (fd >= 0)
    {
      close (fd);
      return TRUE;
    }
  if (errno != EEXIST)
    {
      int saved = errno;

      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_READ_ONLY,
                   _("Chaperone cannot create its database %s: %s"),
                   self->path, g_strerror (saved));
      return FALSE;
    }

  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *path = g_strconcat (self->path, suffixes[i], NULL);
      GStatBuf st;

      if (g_lstat (path, &st) == 0 && S_ISREG (st.st_mode) && (st.st_mode & 0077) != 0 &&
          g_chmod (path, st.st_mode & 0700) != 0)
        g_message ("Could not make %s private: %s", path, g_strerror (errno));
    }

  return TRUE;
}

static gboolean
open_connection (ChpStore  *self,
                 GError   **error)
{
  int rc;

  if (!prepare_file_modes (self, error))
    return FALSE;

  rc = sqlite3_open_v2 (self->path, &self->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL);

  if (rc != SQLITE_OK)
    {
      set_sqlite_error (error, self->db, rc, self->path);
      g_clear_pointer (&self->db, sqlite3_close);
      return FALSE;
    }

  sqlite3_extended_result_codes (self->db, TRUE);
  sqlite3_busy_timeout (self->db, 5000);
  return TRUE;
}

static gpointer
open_job (ChpStore  *self,
          gpointer   data,
          GError   **error)
{
  g_autofree char *dir = g_path_get_dirname (self->path);
  CheckResult check;

  if (g_mkdir_with_parents (dir, 0700) != 0 || access (dir, W_OK) != 0)
    {
      int saved = errno;

      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_READ_ONLY,
                   _("Chaperone cannot write to its data folder %s (%s). Make it writable, "
                     "for example with “chmod u+w %s”, and start Chaperone again."),
                   dir, g_strerror (saved), dir);
      return NULL;
    }

  if (!open_connection (self, error))
    return NULL;

  check = check_database (self->db, error);
  if (check == CHECK_ERROR)
    {
      g_clear_pointer (&self->db, sqlite3_close);
      return NULL;
    }
  if (check == CHECK_BAD)
    {
      g_clear_pointer (&self->db, sqlite3_close);
      if (!move_aside (self, error) || !open_connection (self, error))
        return NULL;
    }

  /* FULL: everything stored now (pairings, attempts, audit) is what a person decided or
   * must be able to read back after a crash. Bulk trace data will ask for NORMAL. */
  if (!exec_sql (self->db, "PRAGMA journal_mode = WAL", error) ||
      !exec_sql (self->db, "PRAGMA synchronous = FULL", error) ||
      !exec_sql (self->db, "PRAGMA foreign_keys = ON", error) ||
      !migrate (self, error))
    {
      g_clear_pointer (&self->db, sqlite3_close);
      return NULL;
    }

  return GINT_TO_POINTER (TRUE);
}

static void
run_job (ChpStore *self,
         Job      *job)
{
  g_autoptr(GError) error = NULL;
  gpointer result = NULL;

  if (job->task != NULL && g_task_return_error_if_cancelled (job->task))
    return;

  if (job->kind == JOB_OPEN)
    {
      result = open_job (self, job->data, &error);
    }
  else if (self->db == NULL)
    {
      g_set_error_literal (&error, CHP_STORE_ERROR, CHP_STORE_ERROR_CLOSED,
                           _("The database is not open"));
    }
  else if (job->kind == JOB_WRITE)
    {
      if (exec_sql (self->db, "BEGIN IMMEDIATE", &error))
        {
          result = job->func (self, job->data, &error);
          if (result != NULL)
            {
              int rc = sqlite3_exec (self->db, "COMMIT", NULL, NULL, NULL);

              if (rc != SQLITE_OK)
                {
                  set_sqlite_error (&error, self->db, rc, "commit");
                  if (job->result_free != NULL)
                    g_clear_pointer (&result, job->result_free);
                  result = NULL;
                }
            }
          if (result == NULL)
            sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
        }
    }
  else
    {
      result = job->func (self, job->data, &error);
    }

  if (job->task == NULL)
    {
      /* Nobody asked for the outcome: still, a write that failed is worth a line in the log. */
      if (result == NULL)
        g_warning ("A background write failed: %s", error->message);
      else if (job->result_free != NULL)
        job->result_free (result);
    }
  else if (result != NULL)
    g_task_return_pointer (job->task, result, job->result_free);
  else
    g_task_return_error (job->task, g_steal_pointer (&error));
}

static gpointer add_audit_job (ChpStore *self, gpointer data, GError **error);

#define AUDIT_BATCH_MAX 256
/* How long an entry nobody waits for waits for more entries to share its transaction. */
#define AUDIT_GROUP_WAIT_US (5 * G_TIME_SPAN_MILLISECOND)

/* Audit entries arrive one per call, each durable: written one transaction apiece they cost a
 * sync each, and 10,000 quick calls kept the disk busy for seconds after. Entries already
 * queued together are written in one transaction; each caller still learns its own outcome.
 *
 * An agent's call writes two entries a fraction of a millisecond apart (the browser's answer,
 * then the tool's), and the next call follows at once: a sync per entry ran beside every call
 * and slowed it down (on a two-core VM, browser_tabs with and without the wait in alternating
 * 500 ms spans of one run: its median 0.05 to 0.3 ms lower with it). So an entry nobody waits
 * for (no callback: the audit) waits up to AUDIT_GROUP_WAIT_US for others to share its
 * transaction. Each is still synced, and before anything after it is read: any other job ends
 * the wait at once and runs after the commit. */
static Job *
run_audit_batch (ChpStore *self,
                 Job      *first)
{
  g_autoptr(GPtrArray) batch = g_ptr_array_new_with_free_func ((GDestroyNotify) job_free);
  g_autoptr(GError) error = NULL;
  gint64 deadline = g_get_monotonic_time () + AUDIT_GROUP_WAIT_US;
  gboolean awaited = first->task != NULL;
  Job *next = NULL;

  g_ptr_array_add (batch, first);
  while (batch->len < AUDIT_BATCH_MAX)
    {
      gint64 left = awaited ? 0 : deadline - g_get_monotonic_time ();

      next = left > 0 ? g_async_queue_timeout_pop (self->queue, left)
                      : g_async_queue_try_pop (self->queue);
      if (next == NULL || next->kind != JOB_WRITE || next->func != add_audit_job)
        break;
      awaited |= next->task != NULL;
      g_ptr_array_add (batch, g_steal_pointer (&next));
    }

  if (self->db == NULL)
    g_set_error_literal (&error, CHP_STORE_ERROR, CHP_STORE_ERROR_CLOSED,
                         _("The database is not open"));
  else if (exec_sql (self->db, "BEGIN IMMEDIATE", &error))
    {
      for (guint i = 0; i < batch->len && error == NULL; i++)
        {
          Job *job = g_ptr_array_index (batch, i);

          job->func (self, job->data, &error);
        }

      if (error == NULL)
        {
          int rc = sqlite3_exec (self->db, "COMMIT", NULL, NULL, NULL);

          if (rc != SQLITE_OK)
            set_sqlite_error (&error, self->db, rc, "commit");
        }
      if (error != NULL)
        sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
    }

  if (error != NULL)
    g_warning ("Could not write %u activity entries: %s", batch->len, error->message);

  for (guint i = 0; i < batch->len; i++)
    {
      Job *job = g_ptr_array_index (batch, i);

      if (job->task == NULL)
        continue;
      if (error != NULL)
        g_task_return_error (job->task, g_error_copy (error));
      else
        g_task_return_pointer (job->task, GINT_TO_POINTER (TRUE), NULL);
    }

  return next;
}

static gpointer
store_thread (gpointer data)
{
  ChpStore *self = data;
  Job *next = NULL;

  for (;;)
    {
      Job *job = next ? g_steal_pointer (&next) : g_async_queue_pop (self->queue);

      if (job->kind == JOB_QUIT)
        {
          job_free (job);
          break;
        }

      if (job->kind == JOB_WRITE && job->func == add_audit_job)
        {
          next = run_audit_batch (self, job);
          continue;
        }

      run_job (self, job);
      job_free (job);
    }

  for (guint i = 0; i < N_STMTS; i++)
    g_clear_pointer (&self->stmts[i], sqlite3_finalize);
  g_clear_pointer (&self->db, sqlite3_close);

  return NULL;
}

static void
push_job (ChpStore            *self,
          JobKind              kind,
          ChpStoreJobFunc      func,
          gpointer             data,
          GDestroyNotify       data_free,
          GDestroyNotify       result_free,
          gpointer             source_tag,
          GCancellable        *cancellable,
          GAsyncReadyCallback  callback,
          gpointer             user_data)
{
  Job *job = g_new0 (Job, 1);

  job->kind = kind;
  job->func = func;
  job->data = data;
  job->data_free = data_free;
  job->result_free = result_free;

  /* Fire and forget (an audit entry, a last-seen time): no task, so nothing comes back to the
   * main loop for it. A call per browser request must not cost two main-loop dispatches. */
  if (callback != NULL || cancellable != NULL)
    {
      job->task = g_task_new (self, cancellable, callback, user_data);
      g_task_set_source_tag (job->task, source_tag);
    }

  if (self->closed)
    {
      if (job->task != NULL)
        g_task_return_new_error (job->task, CHP_STORE_ERROR, CHP_STORE_ERROR_CLOSED,
                                 _("The database is closed"));
      job_free (job);
      return;
    }

  g_async_queue_push (self->queue, job);
}

static void
chp_store_dispose (GObject *object)
{
  chp_store_close (CHP_STORE (object));

  G_OBJECT_CLASS (chp_store_parent_class)->dispose (object);
}

static void
chp_store_finalize (GObject *object)
{
  ChpStore *self = CHP_STORE (object);

  g_clear_pointer (&self->queue, g_async_queue_unref);
  g_clear_pointer (&self->path, g_free);
  g_clear_pointer (&self->moved_aside_path, g_free);

  G_OBJECT_CLASS (chp_store_parent_class)->finalize (object);
}

static void
chp_store_class_init (ChpStoreClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = chp_store_dispose;
  object_class->finalize = chp_store_finalize;

  /**
   * ChpStore::audit-changed:
   * @cleared: %TRUE when the whole log was cleared, %FALSE when an entry was added
   *
   * Emitted in the thread that queued the change (the main thread), as soon as it is queued:
   * a read queued after it already sees it, since the database thread runs jobs in order.
   */
  signals[SIGNAL_AUDIT_CHANGED] =
    g_signal_new ("audit-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_BOOLEAN);
}

static void
chp_store_init (ChpStore *self)
{
  self->queue = g_async_queue_new ();
  self->audit_limit = CHP_STORE_DEFAULT_AUDIT_LIMIT;
}

ChpStore *
chp_store_new (const char *path)
{
  ChpStore *self;

  g_return_val_if_fail (path != NULL, NULL);

  self = g_object_new (CHP_TYPE_STORE, NULL);
  self->path = g_strdup (path);
  /* The thread holds no reference: dispose joins it before anything is freed. */
  self->thread = g_thread_new ("chaperone-db", store_thread, self);

  return self;
}

/* Waits for queued work to finish, then stops the thread. */
void
chp_store_close (ChpStore *self)
{
  Job *quit;

  g_return_if_fail (CHP_IS_STORE (self));

  if (self->closed)
    return;

  self->closed = TRUE;
  quit = g_new0 (Job, 1);
  quit->kind = JOB_QUIT;
  g_async_queue_push (self->queue, quit);
  g_clear_pointer (&self->thread, g_thread_join);
}

const char *
chp_store_get_path (ChpStore *self)
{
  g_return_val_if_fail (CHP_IS_STORE (self), NULL);

  return self->path;
}

/**
 * chp_store_get_moved_aside_path:
 *
 * Returns: (nullable): where a damaged or foreign database was moved at open, so the
 *   person can be told; %NULL when the file was fine.
 */
const char *
chp_store_get_moved_aside_path (ChpStore *self)
{
  g_return_val_if_fail (CHP_IS_STORE (self), NULL);

  return self->moved_aside_path;
}

void
chp_store_set_audit_limit (ChpStore *self,
                           guint     limit)
{
  g_return_if_fail (CHP_IS_STORE (self));

  g_atomic_int_set (&self->audit_limit, (gint) CLAMP (limit, 1, G_MAXINT));
}

void
chp_store_open_async (ChpStore            *self,
                      GCancellable        *cancellable,
                      GAsyncReadyCallback  callback,
                      gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  push_job (self, JOB_OPEN, NULL, NULL, NULL, NULL, chp_store_open_async,
            cancellable, callback, user_data);
}

gboolean
chp_store_open_finish (ChpStore      *self,
                       GAsyncResult  *result,
                       GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_pointer (G_TASK (result), error) != NULL;
}

gboolean
chp_store_write_finish (ChpStore      *self,
                        GAsyncResult  *result,
                        GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_pointer (G_TASK (result), error) != NULL;
}

/* Devices */

static void
bind_text (sqlite3_stmt *stmt,
           int           col,
           const char   *text)
{
  if (text != NULL)
    sqlite3_bind_text (stmt, col, text, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null (stmt, col);
}

static char *
column_dup (sqlite3_stmt *stmt,
            int           col)
{
  return g_strdup ((const char *) sqlite3_column_text (stmt, col));
}

static gpointer
save_device_job (ChpStore  *self,
                 gpointer   data,
                 GError   **error)
{
  ChpDeviceInfo *info = data;
  sqlite3_stmt *stmt = get_stmt (self, STMT_DEVICE_UPSERT, error);

  if (stmt == NULL)
    return NULL;

  bind_text (stmt, 1, info->device_id);
  bind_text (stmt, 2, info->installation_id);
  bind_text (stmt, 3, info->origin);
  bind_text (stmt, 4, info->name ? info->name : "");
  bind_text (stmt, 5, info->browser ? info->browser : "");
  bind_text (stmt, 6, info->client ? info->client : "");
  bind_text (stmt, 7, info->version ? info->version : "");
  bind_text (stmt, 8, info->key_x);
  bind_text (stmt, 9, info->key_y);
  sqlite3_bind_int64 (stmt, 10, info->created_at);
  sqlite3_bind_int64 (stmt, 11, info->paired_at);
  sqlite3_bind_int64 (stmt, 12, info->last_seen);
  sqlite3_bind_int64 (stmt, 13, info->revoked_at);

  return step_done (self, stmt, _("the paired browser"), error) ? GINT_TO_POINTER (TRUE) : NULL;
}

void
chp_store_save_device_async (ChpStore            *self,
                             const ChpDeviceInfo *info,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (info != NULL && info->device_id != NULL);

  push_job (self, JOB_WRITE, save_device_job, chp_device_info_copy (info),
            (GDestroyNotify) chp_device_info_free, NULL, chp_store_save_device_async,
            cancellable, callback, user_data);
}

static gpointer
load_devices_job (ChpStore  *self,
                  gpointer   data,
                  GError   **error)
{
  g_autoptr(GPtrArray) devices = g_ptr_array_new_with_free_func ((GDestroyNotify) chp_device_info_free);
  sqlite3_stmt *stmt = get_stmt (self, STMT_DEVICE_LIST, error);
  int rc;

  if (stmt == NULL)
    return NULL;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      ChpDeviceInfo *info = g_new0 (ChpDeviceInfo, 1);

      info->device_id = column_dup (stmt, 0);
      info->installation_id = column_dup (stmt, 1);
      info->origin = column_dup (stmt, 2);
      info->name = column_dup (stmt, 3);
      info->browser = column_dup (stmt, 4);
      info->client = column_dup (stmt, 5);
      info->version = column_dup (stmt, 6);
      info->key_x = column_dup (stmt, 7);
      info->key_y = column_dup (stmt, 8);
      info->created_at = sqlite3_column_int64 (stmt, 9);
      info->paired_at = sqlite3_column_int64 (stmt, 10);
      info->last_seen = sqlite3_column_int64 (stmt, 11);
      info->revoked_at = sqlite3_column_int64 (stmt, 12);
      g_ptr_array_add (devices, info);
    }
  sqlite3_reset (stmt);

  if (rc != SQLITE_DONE)
    {
      set_sqlite_error (error, self->db, rc, "devices");
      return NULL;
    }

  return g_steal_pointer (&devices);
}

void
chp_store_load_devices_async (ChpStore            *self,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  push_job (self, JOB_READ, load_devices_job, NULL, NULL, (GDestroyNotify) g_ptr_array_unref,
            chp_store_load_devices_async, cancellable, callback, user_data);
}

GPtrArray *
chp_store_load_devices_finish (ChpStore      *self,
                               GAsyncResult  *result,
                               GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

typedef struct
{
  StmtId  stmt;
  char   *device_id;
  char   *text;
  gint64  value;
} DeviceUpdate;

static void
device_update_free (DeviceUpdate *update)
{
  g_free (update->device_id);
  g_free (update->text);
  g_free (update);
}

static gpointer
device_update_job (ChpStore  *self,
                   gpointer   data,
                   GError   **error)
{
  DeviceUpdate *update = data;
  sqlite3_stmt *stmt = get_stmt (self, update->stmt, error);

  if (stmt == NULL)
    return NULL;

  bind_text (stmt, 1, update->device_id);
  if (update->text != NULL)
    bind_text (stmt, 2, update->text);
  else
    sqlite3_bind_int64 (stmt, 2, update->value);

  if (!step_done (self, stmt, _("the paired browser"), error))
    return NULL;

  if (sqlite3_changes (self->db) == 0 && update->stmt != STMT_DEVICE_TOUCH)
    {
      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                   _("No paired browser has the id %s"), update->device_id);
      return NULL;
    }

  return GINT_TO_POINTER (TRUE);
}

static void
push_device_update (ChpStore            *self,
                    StmtId               stmt,
                    const char          *device_id,
                    const char          *text,
                    gint64               value,
                    gpointer             source_tag,
                    GCancellable        *cancellable,
                    GAsyncReadyCallback  callback,
                    gpointer             user_data)
{
  DeviceUpdate *update = g_new0 (DeviceUpdate, 1);

  update->stmt = stmt;
  update->device_id = g_strdup (device_id);
  update->text = g_strdup (text);
  update->value = value;

  push_job (self, JOB_WRITE, device_update_job, update, (GDestroyNotify) device_update_free,
            NULL, source_tag, cancellable, callback, user_data);
}

void
chp_store_revoke_device_async (ChpStore            *self,
                               const char          *device_id,
                               gint64               revoked_at,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (device_id != NULL);

  push_device_update (self, STMT_DEVICE_REVOKE, device_id, NULL, revoked_at,
                      chp_store_revoke_device_async, cancellable, callback, user_data);
}

void
chp_store_rename_device_async (ChpStore            *self,
                               const char          *device_id,
                               const char          *name,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (device_id != NULL && name != NULL);

  push_device_update (self, STMT_DEVICE_RENAME, device_id, name, 0,
                      chp_store_rename_device_async, cancellable, callback, user_data);
}

void
chp_store_touch_device (ChpStore   *self,
                        const char *device_id,
                        gint64      last_seen)
{
  g_return_if_fail (CHP_IS_STORE (self));

  push_device_update (self, STMT_DEVICE_TOUCH, device_id, NULL, last_seen,
                      chp_store_touch_device, NULL, NULL, NULL);
}

/* Pairing attempts */

static ChpPairingAttempt *
pairing_attempt_copy (const ChpPairingAttempt *attempt)
{
  ChpPairingAttempt *copy = g_new0 (ChpPairingAttempt, 1);

  copy->at = attempt->at;
  copy->installation_id = g_strdup (attempt->installation_id);
  copy->origin = g_strdup (attempt->origin);
  copy->outcome = attempt->outcome;

  return copy;
}

static gpointer
add_attempt_job (ChpStore  *self,
                 gpointer   data,
                 GError   **error)
{
  ChpPairingAttempt *attempt = data;
  sqlite3_stmt *stmt = get_stmt (self, STMT_ATTEMPT_INSERT, error);

  if (stmt == NULL)
    return NULL;

  sqlite3_bind_int64 (stmt, 1, attempt->at);
  bind_text (stmt, 2, attempt->installation_id ? attempt->installation_id : "");
  bind_text (stmt, 3, attempt->origin ? attempt->origin : "");
  bind_text (stmt, 4, chp_pairing_outcome_to_string (attempt->outcome));
  if (!step_done (self, stmt, _("the pairing attempt"), error))
    return NULL;

  if (!(stmt = get_stmt (self, STMT_ATTEMPT_TRIM, error)))
    return NULL;
  sqlite3_bind_int64 (stmt, 1, attempt->at - 7 * G_TIME_SPAN_DAY / 1000);

  return step_done (self, stmt, _("the pairing attempt"), error) ? GINT_TO_POINTER (TRUE) : NULL;
}

void
chp_store_add_pairing_attempt_async (ChpStore                *self,
                                     const ChpPairingAttempt *attempt,
                                     GCancellable            *cancellable,
                                     GAsyncReadyCallback      callback,
                                     gpointer                 user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (attempt != NULL);

  push_job (self, JOB_WRITE, add_attempt_job, pairing_attempt_copy (attempt),
            (GDestroyNotify) chp_pairing_attempt_free, NULL,
            chp_store_add_pairing_attempt_async, cancellable, callback, user_data);
}

static gboolean
outcome_from_string (const char        *str,
                     ChpPairingOutcome *outcome)
{
  for (ChpPairingOutcome o = CHP_PAIRING_OUTCOME_APPROVED; o <= CHP_PAIRING_OUTCOME_ABANDONED; o++)
    {
      if (g_strcmp0 (str, chp_pairing_outcome_to_string (o)) == 0)
        {
          *outcome = o;
          return TRUE;
        }
    }

  return FALSE;
}

static gpointer
load_attempts_job (ChpStore  *self,
                   gpointer   data,
                   GError   **error)
{
  g_autoptr(GPtrArray) attempts =
    g_ptr_array_new_with_free_func ((GDestroyNotify) chp_pairing_attempt_free);
  gint64 *since = data;
  sqlite3_stmt *stmt = get_stmt (self, STMT_ATTEMPT_LIST, error);
  int rc;

  if (stmt == NULL)
    return NULL;

  sqlite3_bind_int64 (stmt, 1, *since);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      ChpPairingAttempt *attempt = g_new0 (ChpPairingAttempt, 1);

      attempt->at = sqlite3_column_int64 (stmt, 0);
      attempt->installation_id = column_dup (stmt, 1);
      attempt->origin = column_dup (stmt, 2);
      if (!outcome_from_string ((const char *) sqlite3_column_text (stmt, 3), &attempt->outcome))
        attempt->outcome = CHP_PAIRING_OUTCOME_FAILED;
      g_ptr_array_add (attempts, attempt);
    }
  sqlite3_reset (stmt);

  if (rc != SQLITE_DONE)
    {
      set_sqlite_error (error, self->db, rc, "pairing attempts");
      return NULL;
    }

  return g_steal_pointer (&attempts);
}

void
chp_store_load_pairing_attempts_async (ChpStore            *self,
                                       gint64               since,
                                       GCancellable        *cancellable,
                                       GAsyncReadyCallback  callback,
                                       gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  push_job (self, JOB_READ, load_attempts_job, g_memdup2 (&since, sizeof since), g_free,
            (GDestroyNotify) g_ptr_array_unref, chp_store_load_pairing_attempts_async,
            cancellable, callback, user_data);
}

GPtrArray *
chp_store_load_pairing_attempts_finish (ChpStore      *self,
                                        GAsyncResult  *result,
                                        GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* Audit */

static gpointer
add_audit_job (ChpStore  *self,
               gpointer   data,
               GError   **error)
{
  ChpAuditEntry *entry = data;
  sqlite3_stmt *stmt = get_stmt (self, STMT_AUDIT_INSERT, error);

  if (stmt == NULL)
    return NULL;

  sqlite3_bind_int64 (stmt, 1, entry->at);
  bind_text (stmt, 2, entry->category);
  bind_text (stmt, 3, entry->method ? entry->method : "");
  bind_text (stmt, 4, entry->outcome);
  bind_text (stmt, 5, entry->device_id);
  sqlite3_bind_int64 (stmt, 6, entry->duration_ms);
  bind_text (stmt, 7, entry->error_code);
  if (!step_done (self, stmt, _("the activity log"), error))
    return NULL;

  if (!(stmt = get_stmt (self, STMT_AUDIT_TRIM, error)))
    return NULL;
  sqlite3_bind_int64 (stmt, 1, g_atomic_int_get (&self->audit_limit));

  return step_done (self, stmt, _("the activity log"), error) ? GINT_TO_POINTER (TRUE) : NULL;
}

void
chp_store_add_audit_async (ChpStore            *self,
                           const ChpAuditEntry *entry,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (entry != NULL && entry->category != NULL && entry->outcome != NULL);

  push_job (self, JOB_WRITE, add_audit_job, chp_audit_entry_copy (entry),
            (GDestroyNotify) chp_audit_entry_free, NULL, chp_store_add_audit_async,
            cancellable, callback, user_data);
  g_signal_emit (self, signals[SIGNAL_AUDIT_CHANGED], 0, FALSE);
}

/* Steps a bound audit statement (columns id, at, category, method, outcome, device_id,
 * duration_ms, error_code) into ChpAuditEntry rows, and resets it. */
static GPtrArray *
read_audit_rows (ChpStore      *self,
                 sqlite3_stmt  *stmt,
                 GError       **error)
{
  g_autoptr(GPtrArray) entries = g_ptr_array_new_with_free_func ((GDestroyNotify) chp_audit_entry_free);
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      ChpAuditEntry *entry = g_new0 (ChpAuditEntry, 1);

      entry->id = sqlite3_column_int64 (stmt, 0);
      entry->at = sqlite3_column_int64 (stmt, 1);
      entry->category = column_dup (stmt, 2);
      entry->method = column_dup (stmt, 3);
      entry->outcome = column_dup (stmt, 4);
      entry->device_id = column_dup (stmt, 5);
      entry->duration_ms = sqlite3_column_int64 (stmt, 6);
      entry->error_code = column_dup (stmt, 7);
      g_ptr_array_add (entries, entry);
    }
  sqlite3_reset (stmt);

  if (rc != SQLITE_DONE)
    {
      set_sqlite_error (error, self->db, rc, "audit");
      return NULL;
    }

  return g_steal_pointer (&entries);
}

static gpointer
list_audit_job (ChpStore  *self,
                gpointer   data,
                GError   **error)
{
  sqlite3_stmt *stmt = get_stmt (self, STMT_AUDIT_LIST, error);

  if (stmt == NULL)
    return NULL;

  sqlite3_bind_int64 (stmt, 1, GPOINTER_TO_UINT (data));
  return read_audit_rows (self, stmt, error);
}

void
chp_store_list_audit_async (ChpStore            *self,
                            guint                limit,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  push_job (self, JOB_READ, list_audit_job, GUINT_TO_POINTER (limit), NULL,
            (GDestroyNotify) g_ptr_array_unref, chp_store_list_audit_async,
            cancellable, callback, user_data);
}

GPtrArray *
chp_store_list_audit_finish (ChpStore      *self,
                             GAsyncResult  *result,
                             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

typedef struct
{
  ChpAuditQuery *query;
  char          *search;  /* lowered once here, not per row */
  guint          offset;
  guint          limit;
} AuditRead;

static void
audit_read_free (AuditRead *read)
{
  chp_audit_query_free (read->query);
  g_free (read->search);
  g_free (read);
}

static AuditRead *
audit_read_new (const ChpAuditQuery *query,
                guint                offset,
                guint                limit)
{
  AuditRead *read = g_new0 (AuditRead, 1);

  read->query = query != NULL ? chp_audit_query_copy (query) : chp_audit_query_new ();
  if (read->query->search != NULL && *read->query->search != '\0')
    read->search = g_utf8_strdown (read->query->search, -1);
  read->offset = offset;
  read->limit = limit;

  return read;
}

static void
bind_audit_where (sqlite3_stmt    *stmt,
                  const AuditRead *read)
{
  const ChpAuditQuery *query = read->query;

  bind_text (stmt, 1, query->category);
  bind_text (stmt, 2, query->outcome);
  bind_text (stmt, 3, query->device_id);
  bind_text (stmt, 4, read->search);
  sqlite3_bind_int64 (stmt, 5, MAX (query->after_id, 0));
  sqlite3_bind_int64 (stmt, 6, query->up_to_id > 0 ? query->up_to_id : G_MAXINT64);
}

static gpointer
query_audit_job (ChpStore  *self,
                 gpointer   data,
                 GError   **error)
{
  AuditRead *read = data;
  sqlite3_stmt *stmt = get_stmt (self, STMT_AUDIT_QUERY, error);

  if (stmt == NULL)
    return NULL;

  bind_audit_where (stmt, read);
  sqlite3_bind_int64 (stmt, 7, read->limit);
  sqlite3_bind_int64 (stmt, 8, read->offset);
  return read_audit_rows (self, stmt, error);
}

/**
 * chp_store_query_audit_async:
 * @query: (nullable): the filters and bounds; %NULL for every row
 * @offset: how many matching rows to skip, newest first
 * @limit: how many rows at most
 *
 * One page of the activity log, newest first. Finish with chp_store_query_audit_finish().
 */
void
chp_store_query_audit_async (ChpStore            *self,
                             const ChpAuditQuery *query,
                             guint                offset,
                             guint                limit,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  push_job (self, JOB_READ, query_audit_job, audit_read_new (query, offset, limit),
            (GDestroyNotify) audit_read_free, (GDestroyNotify) g_ptr_array_unref,
            chp_store_query_audit_async, cancellable, callback, user_data);
}

/* Returns: (transfer full) (element-type ChpAuditEntry): the rows, newest first */
GPtrArray *
chp_store_query_audit_finish (ChpStore      *self,
                              GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static gpointer
count_audit_job (ChpStore  *self,
                 gpointer   data,
                 GError   **error)
{
  AuditRead *read = data;
  sqlite3_stmt *stmt = get_stmt (self, STMT_AUDIT_COUNT, error);
  ChpAuditCount *count;
  int rc;

  if (stmt == NULL)
    return NULL;

  bind_audit_where (stmt, read);
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      sqlite3_reset (stmt);
      set_sqlite_error (error, self->db, rc, "audit");
      return NULL;
    }

  count = g_new0 (ChpAuditCount, 1);
  count->count = sqlite3_column_int64 (stmt, 0);
  count->max_id = sqlite3_column_int64 (stmt, 1);
  sqlite3_reset (stmt);

  return count;
}

/* How many rows @query matches, with the log's greatest id at that moment: a query bounded
 * by that id (up_to_id) keeps matching exactly those rows while new ones arrive. */
void
chp_store_count_audit_async (ChpStore            *self,
                             const ChpAuditQuery *query,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  push_job (self, JOB_READ, count_audit_job, audit_read_new (query, 0, 0),
            (GDestroyNotify) audit_read_free, g_free,
            chp_store_count_audit_async, cancellable, callback, user_data);
}

gboolean
chp_store_count_audit_finish (ChpStore       *self,
                              GAsyncResult   *result,
                              ChpAuditCount  *count,
                              GError        **error)
{
  g_autofree ChpAuditCount *found = NULL;

  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  found = g_task_propagate_pointer (G_TASK (result), error);
  if (found == NULL)
    return FALSE;

  if (count != NULL)
    *count = *found;
  return TRUE;
}

static gpointer
clear_audit_job (ChpStore  *self,
                 gpointer   data,
                 GError   **error)
{
  sqlite3_stmt *stmt = get_stmt (self, STMT_AUDIT_CLEAR, error);

  if (stmt == NULL)
    return NULL;

  return step_done (self, stmt, _("the activity log"), error) ? GINT_TO_POINTER (TRUE) : NULL;
}

/* The person cleared the activity log. Finish with chp_store_write_finish(). */
void
chp_store_clear_audit_async (ChpStore            *self,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  push_job (self, JOB_WRITE, clear_audit_job, NULL, NULL, NULL, chp_store_clear_audit_async,
            cancellable, callback, user_data);
  g_signal_emit (self, signals[SIGNAL_AUDIT_CHANGED], 0, TRUE);
}

/* State: a few values the person set, each a JSON text under a fixed key */

typedef struct
{
  char *key;
  char *value;
} StateWrite;

static void
state_write_free (StateWrite *write)
{
  g_free (write->key);
  g_free (write->value);
  g_free (write);
}

static gpointer
set_state_job (ChpStore  *self,
               gpointer   data,
               GError   **error)
{
  StateWrite *write = data;
  sqlite3_stmt *stmt = get_stmt (self, write->value ? STMT_STATE_SET : STMT_STATE_DELETE, error);

  if (stmt == NULL)
    return NULL;

  bind_text (stmt, 1, write->key);
  if (write->value != NULL)
    bind_text (stmt, 2, write->value);

  return step_done (self, stmt, _("a setting"), error) ? GINT_TO_POINTER (TRUE) : NULL;
}

/**
 * chp_store_set_state_async:
 * @key: which value
 * @value: (nullable): its JSON text, or %NULL to forget it
 *
 * Written durably (synchronous=FULL) before the callback runs. Finish with
 * chp_store_write_finish().
 */
void
chp_store_set_state_async (ChpStore            *self,
                           const char          *key,
                           const char          *value,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  StateWrite *write;

  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (key != NULL);

  write = g_new0 (StateWrite, 1);
  write->key = g_strdup (key);
  write->value = g_strdup (value);
  push_job (self, JOB_WRITE, set_state_job, write, (GDestroyNotify) state_write_free, NULL,
            chp_store_set_state_async, cancellable, callback, user_data);
}

static gpointer
load_state_job (ChpStore  *self,
                gpointer   data,
                GError   **error)
{
  g_autoptr(GHashTable) state = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  sqlite3_stmt *stmt = get_stmt (self, STMT_STATE_LIST, error);
  int rc;

  if (stmt == NULL)
    return NULL;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_hash_table_replace (state, column_dup (stmt, 0), column_dup (stmt, 1));
  sqlite3_reset (stmt);

  if (rc != SQLITE_DONE)
    {
      set_sqlite_error (error, self->db, rc, "state");
      return NULL;
    }

  return g_steal_pointer (&state);
}

void
chp_store_load_state_async (ChpStore            *self,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  push_job (self, JOB_READ, load_state_job, NULL, NULL, (GDestroyNotify) g_hash_table_unref,
            chp_store_load_state_async, cancellable, callback, user_data);
}

/* Returns: (transfer full): key → JSON text, for every value that was set */
GHashTable *
chp_store_load_state_finish (ChpStore      *self,
                             GAsyncResult  *result,
                             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
