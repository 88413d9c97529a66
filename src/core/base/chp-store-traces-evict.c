/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-traces-evict.c: the trace file's size: the cap held by evicting the oldest sessions
 * (whole ended ones; the oldest steps of an open one only when nothing else is left), a session
 * the person forgets, and the size as it stands. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-traces-private.h"

#include <glib/gi18n.h>

/* How long one eviction job may hold the database thread before it queues the rest. */
#define TRACE_EVICT_JOB_US (200 * G_TIME_SPAN_MILLISECOND)

/* Ended sessions considered at a time. */
#define TRACE_EVICT_PICK 64

/* An open session loses at least this many of its oldest steps at a time. */
#define TRACE_TRIM_MIN 64

static gboolean
run_range (ChpStore     *self,
           TraceStmtId   id,
           gint64        lo,
           gint64        hi,
           GError      **error)
{
  sqlite3_stmt *stmt = chp_store_traces_stmt (self, id, error);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, lo);
  sqlite3_bind_int64 (stmt, 2, hi);

  return chp_store_step_done (self, stmt, _("the trace"), error);
}

static gboolean
run_key (ChpStore     *self,
         TraceStmtId   id,
         gint64        key,
         GError      **error)
{
  sqlite3_stmt *stmt = chp_store_traces_stmt (self, id, error);

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, key);

  return chp_store_step_done (self, stmt, _("the trace"), error);
}

/* Deletes the steps with ids strictly between @lo and @hi, their index entries (before the
 * rows they are read from) and their screenshots. */
gboolean
chp_store_traces_delete_range (ChpStore  *self,
                               gint64     lo,
                               gint64     hi,
                               GError   **error)
{
  return run_range (self, TSTMT_DELETE_TEXT, lo, hi, error) &&
         run_range (self, TSTMT_DELETE_STEPS, lo, hi, error) &&
         run_range (self, TSTMT_DELETE_SHOTS, lo, hi, error);
}

static gboolean
delete_session (ChpStore  *self,
                gint64     key,
                GError   **error)
{
  return chp_store_traces_delete_range (self, TRACE_STEP_ID (key, 0),
                                        TRACE_STEP_ID (key + 1, 0), error) &&
         run_key (self, TSTMT_DELETE_SITES, key, error) &&
         run_key (self, TSTMT_DELETE_SESSION, key, error);
}

static gboolean
query_int64 (ChpStore      *self,
             sqlite3_stmt  *stmt,
             gint64        *value,
             double        *second,
             GError       **error)
{
  int rc = sqlite3_step (stmt);

  if (rc == SQLITE_ROW)
    {
      *value = sqlite3_column_int64 (stmt, 0);
      if (second != NULL)
        *second = sqlite3_column_double (stmt, 1);
      rc = SQLITE_DONE;
    }
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "trace");
      return FALSE;
    }

  return TRUE;
}

/* The file's size, and how much of it is in use (not on the free list). */
static gboolean
measure (ChpStore  *self,
         gint64    *file_bytes,
         gint64    *used_bytes,
         GError   **error)
{
  gint64 pages, free_pages = 0;
  int rc;

  /* FTS5 keeps the terms of this transaction in memory until a savepoint or the commit:
   * opening one writes them, so the pages counted are the pages that will be committed. */
  if (!chp_store_exec_sql (self->db, "SAVEPOINT trace_measure; RELEASE trace_measure", error))
    return FALSE;

  pages = chp_store_pragma_int (self->db, "PRAGMA trace.page_count", &rc);
  if (rc == SQLITE_OK)
    free_pages = chp_store_pragma_int (self->db, "PRAGMA trace.freelist_count", &rc);
  if (rc != SQLITE_OK)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "page_count");
      return FALSE;
    }

  *file_bytes = pages * self->traces->page_size;
  *used_bytes = (pages - free_pages) * self->traces->page_size;
  return TRUE;
}

/* The oldest open session loses its oldest steps: at least TRACE_TRIM_MIN, about @need bytes. */
static gboolean
trim_open (ChpStore  *self,
           gint64     need,
           gint64     avg,
           gboolean  *trimmed,
           GError   **error)
{
  sqlite3_stmt *stmt = chp_store_traces_stmt (self, TSTMT_OLDEST_OPEN, error);
  gint64 key = 0, stored = 0, drop, lo, hi, bound, shot_bytes = 0;
  guint deleted;

  *trimmed = FALSE;
  if (stmt == NULL)
    return FALSE;
  if (sqlite3_step (stmt) == SQLITE_ROW)
    {
      key = sqlite3_column_int64 (stmt, 0);
      stored = sqlite3_column_int64 (stmt, 1);
    }
  sqlite3_reset (stmt);
  if (stored <= 0)
    return TRUE;

  drop = avg > 0 ? need / avg + 1 : stored;
  drop = CLAMP (drop, MIN (TRACE_TRIM_MIN, stored), stored);
  lo = TRACE_STEP_ID (key, 0);
  hi = TRACE_STEP_ID (key + 1, 0);

  if (!(stmt = chp_store_traces_stmt (self, TSTMT_NTH_STEP, error)))
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, lo);
  sqlite3_bind_int64 (stmt, 2, hi);
  sqlite3_bind_int64 (stmt, 3, drop);
  bound = hi;
  if (!query_int64 (self, stmt, &bound, NULL, error))
    return FALSE;

  if (!(stmt = chp_store_traces_stmt (self, TSTMT_RANGE_SHOT_BYTES, error)))
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, lo);
  sqlite3_bind_int64 (stmt, 2, bound);
  if (!query_int64 (self, stmt, &shot_bytes, NULL, error) ||
      !run_range (self, TSTMT_DELETE_TEXT, lo, bound, error) ||
      !run_range (self, TSTMT_DELETE_STEPS, lo, bound, error))
    return FALSE;
  deleted = sqlite3_changes (self->db);
  if (!run_range (self, TSTMT_DELETE_SHOTS, lo, bound, error) ||
      !(stmt = chp_store_traces_stmt (self, TSTMT_TRIMMED, error)))
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, key);
  sqlite3_bind_int64 (stmt, 2, deleted);
  sqlite3_bind_int64 (stmt, 3, shot_bytes);
  if (!chp_store_step_done (self, stmt, _("the trace"), error))
    return FALSE;

  g_debug ("The trace cap trimmed %u steps of the open session %" G_GINT64_FORMAT, deleted, key);
  *trimmed = deleted > 0;
  return TRUE;
}

/* Evicts about @need bytes: the oldest ended sessions, each guessed at its steps times the
 * file's bytes per step plus its screenshots; an open session only when no ended one is left.
 * The caller measures again, so a guess only sets how many rounds it takes. */
static gboolean
evict_some (ChpStore  *self,
            gint64     used,
            gint64     need,
            gboolean  *evicted,
            GError   **error)
{
  sqlite3_stmt *stmt = chp_store_traces_stmt (self, TSTMT_TOTALS, error);
  g_autoptr(GArray) keys = g_array_new (FALSE, FALSE, sizeof (gint64));
  gint64 stored = 0, avg, guess = 0;
  double shots = 0;
  int rc;

  *evicted = FALSE;
  if (stmt == NULL || !query_int64 (self, stmt, &stored, &shots, error))
    return FALSE;
  avg = stored > 0 ? MAX (used - (gint64) shots, 0) / stored : 0;

  if (!(stmt = chp_store_traces_stmt (self, TSTMT_OLDEST_ENDED, error)))
    return FALSE;
  while (guess < need && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 key = sqlite3_column_int64 (stmt, 0);

      g_array_append_val (keys, key);
      guess += sqlite3_column_int64 (stmt, 1) * avg + sqlite3_column_int64 (stmt, 2);
    }
  sqlite3_reset (stmt);

  if (keys->len == 0)
    return trim_open (self, need, avg, evicted, error);

  for (guint i = 0; i < keys->len; i++)
    if (!delete_session (self, g_array_index (keys, gint64, i), error))
      return FALSE;

  g_debug ("The trace cap evicted %u sessions", keys->len);
  *evicted = TRUE;
  return TRUE;
}

/* Inside a transaction. When the file is past the cap, evicts until what is in use is 1%
 * under it, then gives the free pages back: the file ends within the cap, and the next
 * eviction comes after 1% more. */
gboolean
chp_store_traces_evict (ChpStore  *self,
                        gint64     budget_us,
                        GError   **error)
{
  gint64 deadline = g_get_monotonic_time () + budget_us;
  gint64 cap = (gint64) MIN (chp_store_traces_get_cap (self->traces), (guint64) G_MAXINT64);
  gint64 low = cap - cap / 100;
  g_autofree char *vacuum = NULL;
  gint64 file, used, excess;

  if (!measure (self, &file, &used, error))
    return FALSE;
  if (file <= cap)
    return TRUE;

  while (used > low)
    {
      gboolean evicted;

      if (g_get_monotonic_time () > deadline)
        {
          chp_store_traces_queue_evict (self);
          break;
        }
      if (!evict_some (self, used, used - low, &evicted, error))
        return FALSE;
      if (!evicted)
        break;
      if (!measure (self, &file, &used, error))
        return FALSE;
    }

  /* Some of the words no step has any more; then the file is cut back to just under the cap.
   * The free pages under that stay, for the next steps: what is in use may have dropped far
   * below (a merge of the index frees much at once), and the file need not shrink and grow
   * again. (incremental_vacuum of 0 pages would free them all.) */
  excess = (file - MAX (low, used)) / self->traces->page_size;
  if (!chp_store_traces_prune_words (self, error))
    return FALSE;
  if (excess <= 0)
    return TRUE;
  vacuum = g_strdup_printf ("PRAGMA trace.incremental_vacuum (%" G_GINT64_FORMAT ")", excess);
  return chp_store_exec_sql (self->db, vacuum, error);
}

static gpointer
evict_job (ChpStore  *self,
           gpointer   data,
           GError   **error)
{
  g_atomic_int_set (&self->traces->evict_queued, FALSE);

  /* Nothing to do on a file that is not there: not a failure worth a warning. */
  if (!g_atomic_int_get (&self->traces->attached))
    return GINT_TO_POINTER (TRUE);

  return chp_store_traces_evict (self, TRACE_EVICT_JOB_US, error) ? GINT_TO_POINTER (TRUE) : NULL;
}

/* Once at a time: a lower cap, or an eviction that ran out of its time in a batch. */
void
chp_store_traces_queue_evict (ChpStore *self)
{
  if (g_atomic_int_compare_and_exchange (&self->traces->evict_queued, FALSE, TRUE))
    chp_store_push_job (self, JOB_WRITE, evict_job, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}

static gpointer
forget_job (ChpStore  *self,
            gpointer   data,
            GError   **error)
{
  g_autoptr(GHashTable) words = NULL;
  sqlite3_stmt *stmt;
  gint64 key = 0;
  int rc;

  if (!chp_store_traces_ready (self, error) ||
      !(stmt = chp_store_traces_stmt (self, TSTMT_KEY_OF, error)))
    return NULL;

  chp_store_bind_text (stmt, 1, data);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    key = sqlite3_column_int64 (stmt, 0);
  sqlite3_reset (stmt);
  if (rc == SQLITE_DONE)
    {
      g_set_error_literal (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                           _("There is no such session in the traces"));
      return NULL;
    }
  if (rc != SQLITE_ROW)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "trace");
      chp_store_traces_note_error (self, rc);
      return NULL;
    }

  /* secure_delete overwrites what the rows held; the vacuum gives the pages back. */
  words = chp_store_traces_range_words (self, TRACE_STEP_ID (key, 0), TRACE_STEP_ID (key + 1, 0),
                                        error);
  if (words == NULL ||
      !delete_session (self, key, error) ||
      !chp_store_traces_drop_unused_words (self, words, error) ||
      !chp_store_exec_sql (self->db, "PRAGMA trace.incremental_vacuum", error))
    {
      chp_store_traces_note_error (self, sqlite3_extended_errcode (self->db));
      return NULL;
    }

  return GINT_TO_POINTER (TRUE);
}

/**
 * chp_store_forget_trace_async:
 * @session_id: the session's id (ChpTraceSession.id)
 *
 * The person's "Forget this session": its steps, their index entries, screenshots and sites
 * go, in one transaction. Steps still arriving for it (an open session) are not kept. Finish
 * with chp_store_write_finish(); %CHP_STORE_ERROR_NOT_FOUND when there is no such session.
 */
void
chp_store_forget_trace_async (ChpStore            *self,
                              const char          *session_id,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (session_id != NULL);

  chp_store_push_job (self, JOB_WRITE, forget_job, g_strdup (session_id), g_free, NULL,
                      chp_store_forget_trace_async, cancellable, callback, user_data);
}

static gpointer
size_job (ChpStore  *self,
          gpointer   data,
          GError   **error)
{
  guint64 *size;
  gint64 pages;
  int rc;

  if (!chp_store_traces_ready (self, error))
    return NULL;

  pages = chp_store_pragma_int (self->db, "PRAGMA trace.page_count", &rc);
  if (rc != SQLITE_OK)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "page_count");
      return NULL;
    }

  size = g_new (guint64, 1);
  *size = (guint64) (pages * self->traces->page_size);
  return size;
}

/* The trace file's size as the cap counts it (page count × page size, screenshots included;
 * not its write-ahead log, which checkpoints keep to a few megabytes). */
void
chp_store_trace_size_async (ChpStore            *self,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  chp_store_push_job (self, JOB_READ, size_job, NULL, NULL, g_free, chp_store_trace_size_async,
                      cancellable, callback, user_data);
}

gboolean
chp_store_trace_size_finish (ChpStore      *self,
                             GAsyncResult  *result,
                             guint64       *bytes,
                             GError       **error)
{
  g_autofree guint64 *size = NULL;

  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  size = g_task_propagate_pointer (G_TASK (result), error);
  if (size == NULL)
    return FALSE;
  if (bytes != NULL)
    *bytes = *size;
  return TRUE;
}
