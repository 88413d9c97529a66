/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-schema.c: the schema and its migrations, the prepared statements' SQL, opening the
 * file (modes, checks, moving a bad one aside), and the helpers every job uses on the database
 * thread. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-private.h"
#include "chp-store-sites-private.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* "Chpr": tells our database from another program's SQLite file at the same path. */
#define CHP_STORE_APPLICATION_ID 0x43687072

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
  [STMT_RULE_INSERT] =
    "INSERT INTO rules (rule_id, agent, site, kind, created_at, expires_at)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
  [STMT_RULE_LIST] =
    "SELECT rule_id, agent, site, kind, created_at, expires_at, use_count, last_used, revoked_at"
    " FROM rules WHERE revoked_at = 0 AND expires_at > ?1 ORDER BY created_at, rule_id",
  /* A rule that ended a month ago has nothing left to show; Activity keeps its story. */
  [STMT_RULE_TRIM] =
    "DELETE FROM rules WHERE (revoked_at > 0 AND revoked_at < ?1) OR expires_at < ?1",
  [STMT_RULE_USE] =
    "UPDATE rules SET use_count = use_count + 1, last_used = ?2"
    " WHERE rule_id = ?1 AND revoked_at = 0",
  [STMT_RULE_REVOKE] = "UPDATE rules SET revoked_at = ?2 WHERE rule_id = ?1 AND revoked_at = 0",
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
  /* 3: the person's "Always allow" rules (chp-store-rules.c). Only a write is ever covered:
   * the CHECK refuses any other kind even from a bug above it (docs/security.md). */
  "CREATE TABLE rules ("
  "  rule_id TEXT PRIMARY KEY,"
  "  agent TEXT NOT NULL CHECK (length (agent) BETWEEN 1 AND 128),"
  "  site TEXT NOT NULL CHECK (length (site) BETWEEN 1 AND 512),"
  "  kind TEXT NOT NULL CHECK (kind = 'write'),"
  "  created_at INTEGER NOT NULL,"
  "  expires_at INTEGER NOT NULL CHECK (expires_at > created_at),"
  "  use_count INTEGER NOT NULL DEFAULT 0,"
  "  last_used INTEGER NOT NULL DEFAULT 0,"
  "  revoked_at INTEGER NOT NULL DEFAULT 0);",
  /* 4: site memory (chp-store-sites*.c): how sites work, never a value typed or read on them.
   * The CHECKs hold the rules even against a bug above them: a control's label (and key)
   * only from its second visit, credentials only by kind. Endpoints and controls go with their
   * site. site_salt keys the hashes of labels not yet kept, so that the file alone does not
   * tell which common labels were seen once: one random value per database, never exported. */
  "CREATE TABLE sites ("
  "  origin TEXT PRIMARY KEY CHECK (length (origin) BETWEEN 1 AND 200),"
  "  created_at INTEGER NOT NULL,"
  "  last_visit INTEGER NOT NULL DEFAULT 0,"
  "  last_visit_id TEXT,"
  "  last_used INTEGER NOT NULL DEFAULT 0,"
  "  visits INTEGER NOT NULL DEFAULT 0,"
  "  ready TEXT,"
  "  signin TEXT,"
  "  forgotten_at INTEGER NOT NULL DEFAULT 0);"
  "CREATE INDEX sites_by_use ON sites (last_used);"
  "CREATE TABLE site_endpoints ("
  "  entry_id TEXT PRIMARY KEY,"
  "  origin TEXT NOT NULL REFERENCES sites (origin) ON DELETE CASCADE,"
  "  method TEXT NOT NULL"
  "    CHECK (method IN ('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE')),"
  "  path_template TEXT NOT NULL CHECK (substr (path_template, 1, 1) = '/'),"
  "  query_keys TEXT NOT NULL DEFAULT '[]',"
  "  body_shape TEXT,"
  "  response_shape TEXT,"
  "  credential TEXT NOT NULL CHECK (credential IN ('cookie', 'bearer', 'none')"
  "    OR (credential LIKE 'header:_%' AND length (credential) <= 71)),"
  "  frame TEXT NOT NULL DEFAULT '',"
  "  sample_status INTEGER NOT NULL DEFAULT 0,"
  "  confidence REAL NOT NULL DEFAULT 0.5 CHECK (confidence BETWEEN 0 AND 1),"
  "  successes INTEGER NOT NULL DEFAULT 0,"
  "  misses INTEGER NOT NULL DEFAULT 0,"
  "  quarantined INTEGER NOT NULL DEFAULT 0,"
  "  learned_at INTEGER NOT NULL,"
  "  last_used INTEGER NOT NULL DEFAULT 0);"
  "CREATE INDEX site_endpoints_by_origin ON site_endpoints (origin);"
  "CREATE TABLE site_controls ("
  "  origin TEXT NOT NULL REFERENCES sites (origin) ON DELETE CASCADE,"
  "  role TEXT NOT NULL,"
  "  label TEXT CHECK (label IS NULL OR visits >= 2),"
  "  label_hash TEXT NOT NULL,"
  "  key TEXT CHECK (key IS NULL OR label IS NOT NULL),"
  "  visits INTEGER NOT NULL DEFAULT 0,"
  "  last_visit_id TEXT,"
  "  first_seen INTEGER NOT NULL,"
  "  last_seen INTEGER NOT NULL,"
  "  PRIMARY KEY (origin, role, label_hash));"
  "CREATE TABLE site_salt ("
  "  id INTEGER PRIMARY KEY CHECK (id = 1),"
  "  salt BLOB NOT NULL);"
  "INSERT INTO site_salt (id, salt) VALUES (1, randomblob (32));",
  /* 5: recipes remembered per site (chp-store-sites-merge.c): a batch that fully succeeded, its
   * steps with {{placeholders}} and its params by name and type, never a typed value (the
   * allowlist checks each before it gets here). They go with their site, Forget included. */
  "CREATE TABLE site_recipes ("
  "  origin TEXT NOT NULL REFERENCES sites (origin) ON DELETE CASCADE,"
  "  name TEXT NOT NULL CHECK (length (name) BETWEEN 1 AND 32),"
  "  params TEXT NOT NULL DEFAULT '[]',"
  "  steps TEXT NOT NULL,"
  "  n_steps INTEGER NOT NULL CHECK (n_steps BETWEEN 1 AND 50),"
  "  saved_at INTEGER NOT NULL,"
  "  last_used INTEGER NOT NULL DEFAULT 0,"
  "  PRIMARY KEY (origin, name));",
};

void
chp_store_set_sqlite_error (GError     **error,
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

sqlite3_stmt *
chp_store_get_stmt (ChpStore  *self,
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
      chp_store_set_sqlite_error (error, self->db, rc, "prepare");
      return NULL;
    }

  return self->stmts[id];
}

gboolean
chp_store_exec_sql (sqlite3     *db,
                    const char  *sql,
                    GError     **error)
{
  int rc = sqlite3_exec (db, sql, NULL, NULL, NULL);

  if (rc != SQLITE_OK)
    {
      chp_store_set_sqlite_error (error, db, rc, sql);
      return FALSE;
    }

  return TRUE;
}

gboolean
chp_store_step_done (ChpStore      *self,
                     sqlite3_stmt  *stmt,
                     const char    *what,
                     GError       **error)
{
  int rc = sqlite3_step (stmt);

  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, what);
      return FALSE;
    }

  return TRUE;
}

gint64
chp_store_pragma_int (sqlite3     *db,
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

  app_id = chp_store_pragma_int (db, "PRAGMA application_id", &rc);
  if ((rc & 0xff) == SQLITE_NOTADB || (rc & 0xff) == SQLITE_CORRUPT)
    return CHECK_BAD;
  if (rc != SQLITE_OK)
    {
      chp_store_set_sqlite_error (error, db, rc, "open");
      return CHECK_ERROR;
    }

  version = chp_store_pragma_int (db, "PRAGMA user_version", &rc);
  n_tables = chp_store_pragma_int (db, "SELECT count(*) FROM sqlite_schema", &rc);
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

/* Renames a bad database file (with its -wal and -shm) to <path>.corrupt-<timestamp>: a person
 * may want it back, so it is never deleted. */
gboolean
chp_store_move_file_aside (const char  *path,
                           char       **moved_to,
                           GError     **error)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_local ();
  g_autofree char *stamp = g_date_time_format (now, "%Y%m%d-%H%M%S");
  g_autofree char *target = g_strdup_printf ("%s.corrupt-%s", path, stamp);
  const char * const suffixes[] = { "-wal", "-shm" };

  /* Two bad files within a second must not overwrite each other. */
  for (guint n = 1; g_file_test (target, G_FILE_TEST_EXISTS); n++)
    {
      g_free (target);
      target = g_strdup_printf ("%s.corrupt-%s.%u", path, stamp, n);
    }

  if (g_rename (path, target) != 0)
    {
      int saved = errno;

      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_OPEN,
                   _("The database %s is damaged and could not be moved aside: %s"),
                   path, g_strerror (saved));
      return FALSE;
    }

  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *from = g_strconcat (path, suffixes[i], NULL);
      g_autofree char *to = g_strconcat (target, suffixes[i], NULL);

      if (g_file_test (from, G_FILE_TEST_EXISTS))
        g_rename (from, to);
    }

  g_message ("The database was damaged or not Chaperone's; it was moved to %s", target);
  if (moved_to != NULL)
    *moved_to = g_steal_pointer (&target);

  return TRUE;
}

static gboolean
move_aside (ChpStore  *self,
            GError   **error)
{
  g_autofree char *target = NULL;

  if (!chp_store_move_file_aside (self->path, &target, error))
    return FALSE;

  g_free (self->moved_aside_path);
  self->moved_aside_path = g_steal_pointer (&target);

  return TRUE;
}

static gboolean
migrate (ChpStore  *self,
         GError   **error)
{
  int rc;
  gint64 version = chp_store_pragma_int (self->db, "PRAGMA user_version", &rc);

  if (rc != SQLITE_OK)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "user_version");
      return FALSE;
    }

  for (gint64 v = version; v < (gint64) G_N_ELEMENTS (migrations); v++)
    {
      g_autofree char *bump = g_strdup_printf ("PRAGMA user_version = %" G_GINT64_FORMAT "; "
                                               "PRAGMA application_id = %d;",
                                               v + 1, CHP_STORE_APPLICATION_ID);

      if (!chp_store_exec_sql (self->db, "BEGIN IMMEDIATE", error))
        return FALSE;

      if (!chp_store_exec_sql (self->db, migrations[v], error) ||
          !chp_store_exec_sql (self->db, bump, error) ||
          !chp_store_exec_sql (self->db, "COMMIT", error))
        {
          sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
          return FALSE;
        }

      g_debug ("Migrated the database to version %" G_GINT64_FORMAT, v + 1);
    }

  return TRUE;
}

/* The database holds pairings and the audit (the trace file, what agents did): 0600, like the
 * key beside it. SQLite gives its -wal and -shm files the mode of the database file, so creating
 * that file 0600 before SQLite does (rather than letting it use 0644 and the umask) settles all
 * three. A file an older version made 0644 is tightened, with its -wal and -shm. */
gboolean
chp_store_prepare_file (const char  *path,
                        GError     **error)
{
  const char * const suffixes[] = { "", "-wal", "-shm" };
  int fd = g_open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);

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
                   path, g_strerror (saved));
      return FALSE;
    }

  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    {
      g_autofree char *file = g_strconcat (path, suffixes[i], NULL);
      GStatBuf st;

      if (g_lstat (file, &st) == 0 && S_ISREG (st.st_mode) && (st.st_mode & 0077) != 0 &&
          g_chmod (file, st.st_mode & 0700) != 0)
        g_message ("Could not make %s private: %s", file, g_strerror (errno));
    }

  return TRUE;
}

static gboolean
open_connection (ChpStore  *self,
                 GError   **error)
{
  int rc;

  if (!chp_store_prepare_file (self->path, error))
    return FALSE;

  rc = sqlite3_open_v2 (self->path, &self->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL);

  if (rc != SQLITE_OK)
    {
      chp_store_set_sqlite_error (error, self->db, rc, self->path);
      g_clear_pointer (&self->db, sqlite3_close);
      return FALSE;
    }

  sqlite3_extended_result_codes (self->db, TRUE);
  sqlite3_busy_timeout (self->db, 5000);
  return TRUE;
}

gpointer
chp_store_open_job (ChpStore  *self,
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
  if (!chp_store_exec_sql (self->db, "PRAGMA journal_mode = WAL", error) ||
      !chp_store_exec_sql (self->db, "PRAGMA synchronous = FULL", error) ||
      !chp_store_exec_sql (self->db, "PRAGMA foreign_keys = ON", error) ||
      !migrate (self, error))
    {
      g_clear_pointer (&self->db, sqlite3_close);
      return NULL;
    }

  /* What the person forgot a day ago or more goes for good before anything reads it. */
  chp_store_sites_purge_at_open (self);

  /* Traces are what agents did, not what the person decided: a trace file that cannot be
   * opened is logged and leaves the rest of the store working. */
  chp_store_traces_attach (self);

  return GINT_TO_POINTER (TRUE);
}

void
chp_store_bind_text (sqlite3_stmt *stmt,
                     int           col,
                     const char   *text)
{
  if (text != NULL)
    sqlite3_bind_text (stmt, col, text, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null (stmt, col);
}

char *
chp_store_column_dup (sqlite3_stmt *stmt,
                      int           col)
{
  return g_strdup ((const char *) sqlite3_column_text (stmt, col));
}
