/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-traces-schema.c: the trace file: attached to the store's connection as "trace",
 * checked, moved aside when it is damaged or not ours, migrated, and its prepared statements. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-traces-private.h"

#include <glib/gi18n.h>

/* "Chpt": the trace file, told from the store's ("Chpr") and from anyone else's. */
#define TRACE_APPLICATION_ID 0x43687074

/* A trace file's write-ahead log is cut back to this after a checkpoint. */
#define TRACE_WAL_LIMIT (4 * 1024 * 1024)

#define SESSION_COLUMNS \
  "key, id, agent, device, started_at, ended_at, last_at, outcome, n_steps, n_errors," \
  " n_asked, n_approved, n_trimmed"

/* One filter for every combination, so it is prepared once; ?6 and on are the caller's. */
#define SESSION_WHERE \
  " (?1 IS NULL OR agent = ?1) AND (?2 IS NULL OR outcome = ?2)" \
  " AND (?3 IS NULL OR key IN (SELECT key FROM trace.sites WHERE host = ?3))" \
  " AND started_at >= ?4 AND started_at <= ?5"

/* Ranges of step ids are open at both ends: (key << 20, (key + 1) << 20) is one session. */
static const char * const trace_sql[N_TSTMTS] = {
  [TSTMT_SESSION_INSERT] =
    "INSERT INTO trace.sessions (id, agent, device, started_at) VALUES (?1, ?2, ?3, ?4)",
  [TSTMT_SESSION_END] =
    "UPDATE trace.sessions SET ended_at = max (?2, started_at, last_at), outcome = ?3"
    " WHERE key = ?1 AND ended_at = 0",
  [TSTMT_SESSION_EXISTS] = "SELECT 1 FROM trace.sessions WHERE key = ?1",
  [TSTMT_SESSION_ADD] =
    "UPDATE trace.sessions SET n_steps = n_steps + ?2, n_errors = n_errors + ?3,"
    " n_asked = n_asked + ?4, n_approved = n_approved + ?5, last_at = max (last_at, ?6),"
    " shot_bytes = shot_bytes + ?7 WHERE key = ?1",
  [TSTMT_SITE_INSERT] = "INSERT OR IGNORE INTO trace.sites (key, host) VALUES (?1, ?2)",
  [TSTMT_STEP_INSERT] =
    "INSERT INTO trace.steps (id, at, tool, args, queue_us, run_us, page_us, outcome,"
    " error_code, rung, host, path, role, name, decision_kind, decision, decision_wait_us,"
    " stopped_by, retry)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,"
    " ?18, ?19)",
  /* External content: the index holds only terms; a step's text is read from its row. */
  [TSTMT_TEXT_INSERT] =
    "INSERT INTO trace.step_text (rowid, tool, host, path, name, error_code)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
  [TSTMT_SNIPPET_UPSERT] =
    "INSERT INTO trace.shots (step, snippet) VALUES (?1, ?2)"
    " ON CONFLICT (step) DO UPDATE SET snippet = excluded.snippet",
  [TSTMT_SHOT_UPSERT] =
    "INSERT INTO trace.shots (step, width, height, jpeg_bytes, jpeg)"
    " SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM trace.steps WHERE id = ?1)"
    " ON CONFLICT (step) DO UPDATE SET width = excluded.width, height = excluded.height,"
    " jpeg_bytes = excluded.jpeg_bytes, jpeg = excluded.jpeg",
  [TSTMT_LIST] =
    "SELECT " SESSION_COLUMNS " FROM trace.sessions WHERE" SESSION_WHERE
    " ORDER BY key DESC LIMIT ?6 OFFSET ?7",
  [TSTMT_LIST_ONE] =
    "SELECT " SESSION_COLUMNS " FROM trace.sessions WHERE key = ?6 AND" SESSION_WHERE,
  /* Newest first: the step ids order the sessions as their keys do. */
  [TSTMT_SEARCH] =
    "SELECT rowid FROM trace.step_text WHERE step_text MATCH ?1 ORDER BY rowid DESC",
  [TSTMT_SITES_OF] =
    "SELECT host FROM trace.sites WHERE key = ?1 ORDER BY host LIMIT ?2",
  [TSTMT_KEY_OF] = "SELECT key FROM trace.sessions WHERE id = ?1",
  [TSTMT_STEPS] =
    "SELECT s.id, s.at, s.tool, s.args, s.queue_us, s.run_us, s.page_us, s.outcome,"
    " s.error_code, s.rung, s.host, s.path, s.role, s.name, s.decision_kind, s.decision,"
    " s.decision_wait_us, s.stopped_by, s.retry, x.snippet, coalesce (x.jpeg_bytes, 0) > 0"
    " FROM trace.steps s LEFT JOIN trace.shots x ON x.step = s.id"
    " WHERE s.id > ?1 AND s.id < ?2 ORDER BY s.id LIMIT ?3",
  [TSTMT_SHOT] = "SELECT width, height, jpeg FROM trace.shots WHERE step = ?1 AND jpeg_bytes > 0",
  [TSTMT_TOTALS] =
    "SELECT total (n_steps - n_trimmed), total (shot_bytes) FROM trace.sessions",
  [TSTMT_OLDEST_ENDED] =
    "SELECT key, n_steps - n_trimmed, shot_bytes FROM trace.sessions WHERE ended_at > 0"
    " ORDER BY key LIMIT 64",
  [TSTMT_OLDEST_OPEN] =
    "SELECT key, n_steps - n_trimmed, shot_bytes FROM trace.sessions WHERE ended_at = 0"
    " ORDER BY key LIMIT 1",
  [TSTMT_NTH_STEP] =
    "SELECT id FROM trace.steps WHERE id > ?1 AND id < ?2 ORDER BY id LIMIT 1 OFFSET ?3",
  [TSTMT_RANGE_SHOT_BYTES] =
    "SELECT total (jpeg_bytes) FROM trace.shots WHERE step > ?1 AND step < ?2",
  /* An external-content index forgets a row only when told its terms: from the row itself,
   * before the row goes. */
  [TSTMT_DELETE_TEXT] =
    "INSERT INTO trace.step_text (step_text, rowid, tool, host, path, name, error_code)"
    " SELECT 'delete', id, tool, host, path, name, error_code FROM trace.steps"
    " WHERE id > ?1 AND id < ?2",
  [TSTMT_DELETE_STEPS] = "DELETE FROM trace.steps WHERE id > ?1 AND id < ?2",
  [TSTMT_DELETE_SHOTS] = "DELETE FROM trace.shots WHERE step > ?1 AND step < ?2",
  [TSTMT_DELETE_SITES] = "DELETE FROM trace.sites WHERE key = ?1",
  [TSTMT_DELETE_SESSION] = "DELETE FROM trace.sessions WHERE key = ?1",
  [TSTMT_TRIMMED] =
    "UPDATE trace.sessions SET n_trimmed = n_trimmed + ?2,"
    " shot_bytes = max (shot_bytes - ?3, 0) WHERE key = ?1",
  [TSTMT_WORD_INSERT] = "INSERT OR IGNORE INTO trace.words (word) VALUES (?1)",
  [TSTMT_WORD_DELETE] = "DELETE FROM trace.words WHERE word = ?1",
  [TSTMT_WORDS_AFTER] = "SELECT word FROM trace.words WHERE word > ?1 ORDER BY word LIMIT ?2",
  [TSTMT_WORDS_EXPAND] =
    "SELECT word FROM trace.words WHERE word >= ?1 AND word < ?2 ORDER BY word LIMIT ?3",
  [TSTMT_RANGE_TEXT] =
    "SELECT tool, host, path, name, error_code FROM trace.steps WHERE id > ?1 AND id < ?2",
};

/* Each runs in its own transaction and moves trace.user_version by one. */
static const char * const trace_migrations[] = {
  /* 1: sessions, steps, their screenshots and snippets, the sites each visited, and the
   * full-text index over the words a person searches for, never over values. */
  "CREATE TABLE trace.sessions ("
  "  key INTEGER PRIMARY KEY AUTOINCREMENT,"  /* never reused: a handle's key stays its own */
  "  id TEXT NOT NULL UNIQUE,"
  "  agent TEXT NOT NULL,"
  "  device TEXT NOT NULL,"
  "  started_at INTEGER NOT NULL,"
  "  ended_at INTEGER NOT NULL DEFAULT 0,"
  "  last_at INTEGER NOT NULL DEFAULT 0,"
  "  outcome TEXT,"
  "  n_steps INTEGER NOT NULL DEFAULT 0,"
  "  n_errors INTEGER NOT NULL DEFAULT 0,"
  "  n_asked INTEGER NOT NULL DEFAULT 0,"
  "  n_approved INTEGER NOT NULL DEFAULT 0,"
  "  n_trimmed INTEGER NOT NULL DEFAULT 0,"
  "  shot_bytes INTEGER NOT NULL DEFAULT 0);"
  "CREATE TABLE trace.steps ("
  "  id INTEGER PRIMARY KEY,"
  "  at INTEGER NOT NULL,"
  "  tool TEXT NOT NULL,"
  "  args TEXT,"
  "  queue_us INTEGER NOT NULL DEFAULT 0,"
  "  run_us INTEGER NOT NULL DEFAULT 0,"
  "  page_us INTEGER NOT NULL DEFAULT 0,"
  "  outcome TEXT NOT NULL,"
  "  error_code TEXT,"
  "  rung TEXT,"
  "  host TEXT,"
  "  path TEXT,"
  "  role TEXT,"
  "  name TEXT,"
  "  decision_kind TEXT,"
  "  decision TEXT,"
  "  decision_wait_us INTEGER NOT NULL DEFAULT 0,"
  "  stopped_by TEXT,"
  "  retry INTEGER NOT NULL DEFAULT 0);"
  /* The JPEG last: reading a row's small columns never touches its overflow pages. */
  "CREATE TABLE trace.shots ("
  "  step INTEGER PRIMARY KEY,"
  "  snippet TEXT,"
  "  width INTEGER NOT NULL DEFAULT 0,"
  "  height INTEGER NOT NULL DEFAULT 0,"
  "  jpeg_bytes INTEGER NOT NULL DEFAULT 0,"
  "  jpeg BLOB);"
  "CREATE TABLE trace.sites ("
  "  key INTEGER NOT NULL,"
  "  host TEXT NOT NULL,"
  "  PRIMARY KEY (key, host)) WITHOUT ROWID;"
  "CREATE INDEX trace.sites_by_host ON sites (host, key);"
  /* detail=none: rowids only, no positions (a third of the size of detail=full); searches are
   * words ANDed within a step, which need no positions. columnsize=0: no ranking. */
  "CREATE VIRTUAL TABLE trace.step_text USING fts5 (tool, host, path, name, error_code,"
  "  content = 'steps', content_rowid = 'id', detail = none, columnsize = 0);"
  /* Segments merged two at a time, not four: a deleted step's entries stay in the index until a
   * merge reaches the oldest segment, and under the cap's constant eviction that kept the index
   * at up to five times its live size; by twos, at most one and a half, at the same speed. */
  "INSERT INTO trace.step_text (step_text, rank) VALUES ('automerge', 2);"
  /* The index's words, not numbers: a search's last word, typed in part, becomes the words
   * it begins (chp-store-traces-words.c). */
  "CREATE TABLE trace.words (word TEXT PRIMARY KEY) WITHOUT ROWID;",
};

sqlite3_stmt *
chp_store_traces_stmt (ChpStore     *self,
                       TraceStmtId   id,
                       GError      **error)
{
  ChpStoreTraces *traces = self->traces;
  int rc;

  if (traces->stmts[id] != NULL)
    {
      sqlite3_reset (traces->stmts[id]);
      sqlite3_clear_bindings (traces->stmts[id]);
      return traces->stmts[id];
    }

  rc = sqlite3_prepare_v3 (self->db, trace_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
                           &traces->stmts[id], NULL);
  if (rc != SQLITE_OK)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "prepare");
      return NULL;
    }

  return traces->stmts[id];
}

static void
finalize_stmts (ChpStoreTraces *traces)
{
  for (guint i = 0; i < N_TSTMTS; i++)
    g_clear_pointer (&traces->stmts[i], sqlite3_finalize);
}

void
chp_store_traces_close (ChpStore *self)
{
  finalize_stmts (self->traces);
}

static gboolean
is_damage (int rc)
{
  return (rc & 0xff) == SQLITE_CORRUPT || (rc & 0xff) == SQLITE_NOTADB;
}

/* What SQLite just said about the trace file: if it is damaged, it is moved aside as soon as
 * no transaction is open (chp_store_traces_ready()), rather than failing every write after. */
void
chp_store_traces_note_error (ChpStore *self,
                             int       rc)
{
  if (is_damage (rc))
    self->traces->damaged = TRUE;
}

static void
detach (ChpStore *self)
{
  g_atomic_int_set (&self->traces->attached, FALSE);
  finalize_stmts (self->traces);
  g_hash_table_remove_all (self->traces->known_words);
  g_clear_pointer (&self->traces->prune_after, g_free);
  sqlite3_exec (self->db, "DETACH DATABASE trace", NULL, NULL, NULL);
}

static gboolean
attach_file (ChpStore  *self,
             int       *rc_out,
             GError   **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc;

  *rc_out = SQLITE_OK;
  if (!chp_store_prepare_file (self->traces->path, error))
    return FALSE;

  /* Bound, not quoted into the SQL: the path is the person's. */
  rc = sqlite3_prepare_v2 (self->db, "ATTACH DATABASE ?1 AS trace", -1, &stmt, NULL);
  if (rc == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, self->traces->path, -1, SQLITE_STATIC);
      rc = sqlite3_step (stmt);
      rc = rc == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode (self->db);
    }
  sqlite3_finalize (stmt);

  if (rc != SQLITE_OK)
    {
      *rc_out = rc;
      chp_store_set_sqlite_error (error, self->db, rc, self->traces->path);
      return FALSE;
    }

  return TRUE;
}

typedef enum
{
  TRACE_FILE_OK,
  TRACE_FILE_BAD,    /* damaged or another program's: move aside */
  TRACE_FILE_NEWER,  /* a newer Chaperone's: leave it, and run without traces */
} TraceFileCheck;

/* The header only, not a quick_check: the file may be 100 MB, and reading all of it would
 * hold up every start. A damaged page is found when SQLite reads it (note_error). */
static TraceFileCheck
check_file (ChpStore *self,
            gint64   *version,
            gint64   *n_tables)
{
  gint64 app_id;
  int rc;

  app_id = chp_store_pragma_int (self->db, "PRAGMA trace.application_id", &rc);
  if (rc != SQLITE_OK)
    return TRACE_FILE_BAD;
  *version = chp_store_pragma_int (self->db, "PRAGMA trace.user_version", &rc);
  if (rc != SQLITE_OK)
    return TRACE_FILE_BAD;
  *n_tables = chp_store_pragma_int (self->db, "SELECT count(*) FROM trace.sqlite_schema", &rc);
  if (rc != SQLITE_OK)
    return TRACE_FILE_BAD;

  if (app_id != TRACE_APPLICATION_ID && (*version != 0 || *n_tables != 0))
    return TRACE_FILE_BAD;
  if (*version > (gint64) G_N_ELEMENTS (trace_migrations))
    return TRACE_FILE_NEWER;

  return TRACE_FILE_OK;
}

static gboolean
migrate (ChpStore  *self,
         gint64     version,
         GError   **error)
{
  for (gint64 v = version; v < (gint64) G_N_ELEMENTS (trace_migrations); v++)
    {
      g_autofree char *bump = g_strdup_printf ("PRAGMA trace.user_version = %" G_GINT64_FORMAT
                                               "; PRAGMA trace.application_id = %d;",
                                               v + 1, TRACE_APPLICATION_ID);

      if (!chp_store_exec_sql (self->db, "BEGIN IMMEDIATE", error))
        return FALSE;

      if (!chp_store_exec_sql (self->db, trace_migrations[v], error) ||
          !chp_store_exec_sql (self->db, bump, error) ||
          !chp_store_exec_sql (self->db, "COMMIT", error))
        {
          sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
          return FALSE;
        }

      g_debug ("Migrated the trace file to version %" G_GINT64_FORMAT, v + 1);
    }

  return TRUE;
}

static gboolean
attach_checked (ChpStore  *self,
                gboolean   may_move_aside,
                GError   **error)
{
  ChpStoreTraces *traces = self->traces;
  g_autofree char *wal_limit = NULL;
  TraceFileCheck check = TRACE_FILE_BAD;
  gint64 version = 0, n_tables = 0;
  int rc;

  if (attach_file (self, &rc, error))
    check = check_file (self, &version, &n_tables);
  else if (!is_damage (rc))
    return FALSE;
  else
    g_clear_error (error);

  if (check == TRACE_FILE_NEWER)
    {
      detach (self);
      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NEWER,
                   _("The trace file was written by a newer Chaperone (version %lld)."),
                   (long long) version);
      return FALSE;
    }
  if (check == TRACE_FILE_BAD)
    {
      if (rc == SQLITE_OK)
        detach (self);
      if (!may_move_aside || !chp_store_move_file_aside (traces->path, NULL, error))
        {
          if (error != NULL && *error == NULL)
            g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_OPEN,
                         _("The trace file %s is damaged."), traces->path);
          return FALSE;
        }
      return attach_checked (self, FALSE, error);
    }

  /* Incremental: eviction's free pages can be given back to the file system, so the file's
   * size is what the cap says. Settable only before the first table. */
  if (version == 0 && n_tables == 0 &&
      !chp_store_exec_sql (self->db, "PRAGMA trace.auto_vacuum = INCREMENTAL", error))
    goto failed;

  /* NORMAL: a commit reaches the WAL before anything is acknowledged, which survives the
   * process being killed; only a power cut can take the last commits, never the file. */
  wal_limit = g_strdup_printf ("PRAGMA trace.journal_size_limit = %d", TRACE_WAL_LIMIT);
  if (!chp_store_exec_sql (self->db, "PRAGMA trace.journal_mode = WAL", error) ||
      !chp_store_exec_sql (self->db, "PRAGMA trace.synchronous = NORMAL", error) ||
      !chp_store_exec_sql (self->db, "PRAGMA trace.secure_delete = ON", error) ||
      !chp_store_exec_sql (self->db, wal_limit, error) ||
      !migrate (self, version, error))
    goto failed;

  /* A session still open was the last run's, which ended without saying so. */
  if (!chp_store_exec_sql (self->db,
                           "UPDATE trace.sessions SET outcome = 'interrupted',"
                           " ended_at = max (started_at, last_at) WHERE ended_at = 0",
                           error))
    goto failed;

  traces->page_size = chp_store_pragma_int (self->db, "PRAGMA trace.page_size", &rc);
  if (rc != SQLITE_OK || traces->page_size <= 0)
    traces->page_size = 4096;
  traces->damaged = FALSE;
  g_atomic_int_set (&traces->attached, TRUE);

  return TRUE;

failed:
  /* A damaged page met on the way (the interrupted sessions' update reads the sessions): as
   * a damaged header. */
  if (may_move_aside && is_damage (sqlite3_extended_errcode (self->db)))
    {
      detach (self);
      g_clear_error (error);
      if (!chp_store_move_file_aside (traces->path, NULL, error))
        return FALSE;
      return attach_checked (self, FALSE, error);
    }
  detach (self);
  return FALSE;
}

void
chp_store_traces_attach (ChpStore *self)
{
  g_autoptr(GError) error = NULL;

  if (!attach_checked (self, TRUE, &error))
    {
      if (g_error_matches (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NEWER))
        g_message ("Traces are off: %s", error->message);
      else
        g_warning ("Traces are off: %s", error->message);
    }
}

/* Outside any transaction: DETACH needs that. */
void
chp_store_traces_recover (ChpStore *self)
{
  g_autoptr(GError) error = NULL;

  g_assert (sqlite3_get_autocommit (self->db));

  g_message ("The trace file %s is damaged; it is moved aside and started afresh",
             self->traces->path);
  detach (self);
  if (!chp_store_move_file_aside (self->traces->path, NULL, &error) ||
      !attach_checked (self, FALSE, &error))
    g_warning ("Traces are off: %s", error->message);
  self->traces->damaged = FALSE;
}

/* Whether trace jobs can run; moves a damaged file aside first when no transaction is open. */
gboolean
chp_store_traces_ready (ChpStore  *self,
                        GError   **error)
{
  if (self->traces->damaged && sqlite3_get_autocommit (self->db))
    chp_store_traces_recover (self);

  if (!g_atomic_int_get (&self->traces->attached))
    {
      g_set_error_literal (error, CHP_STORE_ERROR, CHP_STORE_ERROR_CLOSED,
                           _("The trace file is not open"));
      return FALSE;
    }

  return TRUE;
}
