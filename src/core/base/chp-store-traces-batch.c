/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-traces-batch.c: trace writes on the database thread, inside the store's batches
 * (run_audit_batch in chp-store.c): a savepoint of their own, what each adds to its session
 * gathered and written once per batch, the cap applied before the commit, and which of them
 * were committed, for the flush. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-traces-private.h"

#include <glib/gi18n.h>

/* How long the cap may hold up one batch; the rest of the eviction is a job of its own. */
#define TRACE_EVICT_BATCH_US (50 * G_TIME_SPAN_MILLISECOND)

struct _TraceDelta
{
  gint64      key;
  gboolean    exists;
  guint       steps, errors, asked, approved;
  gint64      last_at;
  gint64      shot_bytes;
  GHashTable *hosts;
};

void
chp_store_traces_delta_free (TraceDelta *delta)
{
  g_clear_pointer (&delta->hosts, g_hash_table_unref);
  g_free (delta);
}

static void
batch_fail (ChpStore  *self,
            GError   **error)
{
  ChpStoreTraces *traces = self->traces;

  chp_store_traces_note_error (self, sqlite3_extended_errcode (self->db));
  traces->batch_failed = TRUE;
  if (traces->batch_error == NULL)
    traces->batch_error = g_steal_pointer (error);
  g_clear_error (error);
}

/* A trace job's end: its error fails the batch, else it counts as written. */
static void
batch_leave (ChpStore  *self,
             GError   **error)
{
  if (*error != NULL)
    batch_fail (self, error);
  else
    self->traces->batch_ok++;
}

/* Opens the batch's savepoint at its first trace job. FALSE: skip the job, which then counts
 * as lost for the next flush. */
static gboolean
batch_enter (ChpStore *self)
{
  ChpStoreTraces *traces = self->traces;
  g_autoptr(GError) error = NULL;

  if (traces->batch_failed || !g_atomic_int_get (&traces->attached))
    return FALSE;

  if (!traces->in_batch)
    {
      if (!chp_store_exec_sql (self->db, "SAVEPOINT trace_batch", &error))
        {
          batch_fail (self, &error);
          return FALSE;
        }
      traces->in_batch = TRUE;
    }

  return TRUE;
}

/* What this batch adds to a session, written once at its end. NULL: the session is gone
 * (forgotten, evicted) and its steps are not kept. */
static TraceDelta *
session_delta (ChpStore  *self,
               gint64     key,
               GError   **error)
{
  TraceDelta *delta = g_hash_table_lookup (self->traces->deltas, &key);
  sqlite3_stmt *stmt;
  int rc;

  if (delta == NULL)
    {
      if (!(stmt = chp_store_traces_stmt (self, TSTMT_SESSION_EXISTS, error)))
        return NULL;
      sqlite3_bind_int64 (stmt, 1, key);
      rc = sqlite3_step (stmt);
      sqlite3_reset (stmt);
      if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        {
          chp_store_set_sqlite_error (error, self->db, rc, "trace");
          return NULL;
        }

      delta = g_new0 (TraceDelta, 1);
      delta->key = key;
      delta->exists = rc == SQLITE_ROW;
      g_hash_table_insert (self->traces->deltas, &delta->key, delta);
    }

  return delta->exists ? delta : NULL;
}

static void
bind_static (sqlite3_stmt *stmt,
             int           col,
             const char   *text)
{
  if (text != NULL)
    sqlite3_bind_text (stmt, col, text, -1, SQLITE_STATIC);
  else
    sqlite3_bind_null (stmt, col);
}

gpointer
chp_store_traces_begin_job (ChpStore  *self,
                            gpointer   data,
                            GError   **unused)
{
  SessionJob *job = data;
  g_autoptr(GError) error = NULL;
  sqlite3_stmt *stmt;

  if (!batch_enter (self))
    return GINT_TO_POINTER (TRUE);

  if ((stmt = chp_store_traces_stmt (self, TSTMT_SESSION_INSERT, &error)))
    {
      bind_static (stmt, 1, job->trace->id);
      bind_static (stmt, 2, job->agent);
      bind_static (stmt, 3, job->device);
      sqlite3_bind_int64 (stmt, 4, job->at);
      if (chp_store_step_done (self, stmt, _("the trace"), &error))
        {
          job->trace->key = sqlite3_last_insert_rowid (self->db);
          g_ptr_array_add (self->traces->begun, chp_trace_handle_ref (job->trace));
          self->traces->batch_ok++;
        }
    }
  if (error != NULL)
    batch_fail (self, &error);

  return GINT_TO_POINTER (TRUE);
}

static gboolean
insert_step (ChpStore      *self,
             gint64         id,
             ChpTraceStep  *step,
             GError       **error)
{
  sqlite3_stmt *stmt = chp_store_traces_stmt (self, TSTMT_STEP_INSERT, error);

  if (stmt == NULL)
    return FALSE;

  sqlite3_bind_int64 (stmt, 1, id);
  sqlite3_bind_int64 (stmt, 2, step->at);
  bind_static (stmt, 3, step->tool);
  bind_static (stmt, 4, step->args);
  sqlite3_bind_int64 (stmt, 5, step->queue_us);
  sqlite3_bind_int64 (stmt, 6, step->run_us);
  sqlite3_bind_int64 (stmt, 7, step->page_us);
  bind_static (stmt, 8, step->outcome);
  bind_static (stmt, 9, step->error_code);
  bind_static (stmt, 10, step->rung);
  bind_static (stmt, 11, step->host);
  bind_static (stmt, 12, step->path);
  bind_static (stmt, 13, step->role);
  bind_static (stmt, 14, step->name);
  bind_static (stmt, 15, chp_trace_decision_to_string (step->decision_kind));
  bind_static (stmt, 16, step->decision);
  sqlite3_bind_int64 (stmt, 17, step->decision_wait_us);
  bind_static (stmt, 18, step->stopped_by);
  sqlite3_bind_int64 (stmt, 19, step->retry);
  if (!chp_store_step_done (self, stmt, _("the trace"), error))
    return FALSE;

  /* The words a person searches for; never the arguments, the snippet or the decision. */
  if (!(stmt = chp_store_traces_stmt (self, TSTMT_TEXT_INSERT, error)))
    return FALSE;
  sqlite3_bind_int64 (stmt, 1, id);
  bind_static (stmt, 2, step->tool);
  bind_static (stmt, 3, step->host);
  bind_static (stmt, 4, step->path);
  bind_static (stmt, 5, step->name);
  bind_static (stmt, 6, step->error_code);
  if (!chp_store_step_done (self, stmt, _("the trace"), error))
    return FALSE;

  if (step->snippet != NULL)
    {
      if (!(stmt = chp_store_traces_stmt (self, TSTMT_SNIPPET_UPSERT, error)))
        return FALSE;
      sqlite3_bind_int64 (stmt, 1, id);
      bind_static (stmt, 2, step->snippet);
      if (!chp_store_step_done (self, stmt, _("the trace"), error))
        return FALSE;
    }

  return TRUE;
}

gpointer
chp_store_traces_add_step_job (ChpStore  *self,
                               gpointer   data,
                               GError   **unused)
{
  StepJob *job = data;
  ChpTraceStep *step = job->step;
  g_autoptr(GError) error = NULL;
  TraceDelta *delta;

  /* A handle whose session row was lost with a failed batch: its steps are lost too. */
  if (job->trace->key <= 0 || !batch_enter (self))
    return GINT_TO_POINTER (TRUE);

  delta = session_delta (self, job->trace->key, &error);
  if (delta != NULL &&
      insert_step (self, TRACE_STEP_ID (job->trace->key, step->seq), step, &error))
    {
      delta->steps++;
      delta->errors += step->error_code != NULL;
      delta->asked += step->decision_kind == CHP_TRACE_DECISION_HOLD ||
                      step->decision_kind == CHP_TRACE_DECISION_PLAN ||
                      step->decision_kind == CHP_TRACE_DECISION_HANDOFF;
      delta->approved += g_strcmp0 (step->decision, "approved") == 0;
      delta->last_at = MAX (delta->last_at, step->at);
      chp_store_traces_note_words (self, step);
      if (step->host != NULL && *step->host != '\0')
        {
          if (delta->hosts == NULL)
            delta->hosts = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
          if (!g_hash_table_contains (delta->hosts, step->host))
            g_hash_table_add (delta->hosts, g_strdup (step->host));
        }
    }

  batch_leave (self, &error);

  return GINT_TO_POINTER (TRUE);
}

gpointer
chp_store_traces_add_shot_job (ChpStore  *self,
                               gpointer   data,
                               GError   **unused)
{
  ShotJob *job = data;
  g_autoptr(GError) error = NULL;
  sqlite3_stmt *stmt;
  gsize size;
  gconstpointer bytes = g_bytes_get_data (job->jpeg, &size);

  if (job->trace->key <= 0 || !batch_enter (self))
    return GINT_TO_POINTER (TRUE);

  if ((stmt = chp_store_traces_stmt (self, TSTMT_SHOT_UPSERT, &error)))
    {
      sqlite3_bind_int64 (stmt, 1, TRACE_STEP_ID (job->trace->key, job->seq));
      sqlite3_bind_int64 (stmt, 2, job->width);
      sqlite3_bind_int64 (stmt, 3, job->height);
      sqlite3_bind_int64 (stmt, 4, size);
      sqlite3_bind_blob64 (stmt, 5, bytes, size, SQLITE_STATIC);
      /* No row when the step is not there (evicted, forgotten): nothing to keep. */
      if (chp_store_step_done (self, stmt, _("the trace"), &error) &&
          sqlite3_changes (self->db) > 0)
        {
          TraceDelta *delta = session_delta (self, job->trace->key, &error);

          if (delta != NULL)
            delta->shot_bytes += size;
        }
    }

  batch_leave (self, &error);

  return GINT_TO_POINTER (TRUE);
}

gpointer
chp_store_traces_end_job (ChpStore  *self,
                          gpointer   data,
                          GError   **unused)
{
  SessionJob *job = data;
  g_autoptr(GError) error = NULL;
  sqlite3_stmt *stmt;

  if (job->trace->key <= 0 || !batch_enter (self))
    return GINT_TO_POINTER (TRUE);

  if ((stmt = chp_store_traces_stmt (self, TSTMT_SESSION_END, &error)))
    {
      sqlite3_bind_int64 (stmt, 1, job->trace->key);
      sqlite3_bind_int64 (stmt, 2, job->at);
      bind_static (stmt, 3, job->outcome);
      chp_store_step_done (self, stmt, _("the trace"), &error);
    }

  batch_leave (self, &error);

  return GINT_TO_POINTER (TRUE);
}

gboolean
chp_store_traces_is_batched (ChpStoreJobFunc func)
{
  return func == chp_store_traces_begin_job || func == chp_store_traces_add_step_job ||
         func == chp_store_traces_add_shot_job || func == chp_store_traces_end_job;
}

static gboolean
write_set (ChpStore     *self,
           TraceStmtId   id,
           gint64        key,
           GHashTable   *set,
           GError      **error)
{
  GHashTableIter iter;
  const char *text;

  if (set == NULL)
    return TRUE;

  g_hash_table_iter_init (&iter, set);
  while (g_hash_table_iter_next (&iter, (gpointer *) &text, NULL))
    {
      sqlite3_stmt *stmt = chp_store_traces_stmt (self, id, error);

      if (stmt == NULL)
        return FALSE;
      sqlite3_bind_int64 (stmt, 1, key);
      bind_static (stmt, 2, text);
      if (!chp_store_step_done (self, stmt, _("the trace"), error))
        return FALSE;
    }

  return TRUE;
}

static gboolean
write_deltas (ChpStore  *self,
              GError   **error)
{
  GHashTableIter iter;
  TraceDelta *delta;

  g_hash_table_iter_init (&iter, self->traces->deltas);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &delta))
    {
      sqlite3_stmt *stmt;

      if (!delta->exists)
        continue;

      if (!(stmt = chp_store_traces_stmt (self, TSTMT_SESSION_ADD, error)))
        return FALSE;
      sqlite3_bind_int64 (stmt, 1, delta->key);
      sqlite3_bind_int64 (stmt, 2, delta->steps);
      sqlite3_bind_int64 (stmt, 3, delta->errors);
      sqlite3_bind_int64 (stmt, 4, delta->asked);
      sqlite3_bind_int64 (stmt, 5, delta->approved);
      sqlite3_bind_int64 (stmt, 6, delta->last_at);
      sqlite3_bind_int64 (stmt, 7, delta->shot_bytes);
      if (!chp_store_step_done (self, stmt, _("the trace"), error))
        return FALSE;

      if (!write_set (self, TSTMT_SITE_INSERT, delta->key, delta->hosts, error))
        return FALSE;
    }

  return chp_store_traces_write_words (self, error);
}

/* Inside the batch's transaction, before its commit: the sessions' counts and sites, then the
 * cap, so that what is committed is always within it. */
void
chp_store_traces_batch_end (ChpStore *self)
{
  ChpStoreTraces *traces = self->traces;
  g_autoptr(GError) error = NULL;

  if (!traces->in_batch)
    return;

  if (!traces->batch_failed &&
      (!write_deltas (self, &error) ||
       !chp_store_traces_evict (self, TRACE_EVICT_BATCH_US, &error)))
    batch_fail (self, &error);

  if (traces->batch_failed)
    sqlite3_exec (self->db, "ROLLBACK TO trace_batch", NULL, NULL, NULL);
  sqlite3_exec (self->db, "RELEASE trace_batch", NULL, NULL, NULL);
  traces->in_batch = FALSE;
}

/* After the batch's commit or rollback (@error). */
void
chp_store_traces_batch_done (ChpStore     *self,
                             const GError *error)
{
  ChpStoreTraces *traces = self->traces;

  if (error == NULL && !traces->batch_failed)
    {
      traces->settled += traces->batch_ok;
    }
  else if (traces->batch_ok > 0 || traces->batch_failed)
    {
      /* Their rows are gone: a key given now could be given again. */
      for (guint i = 0; i < traces->begun->len; i++)
        ((ChpTraceHandle *) g_ptr_array_index (traces->begun, i))->key = -1;
      if (traces->batch_error != NULL)
        g_warning ("Could not write traces: %s", traces->batch_error->message);
    }

  chp_store_traces_words_done (self, error == NULL && !traces->batch_failed);
  traces->in_batch = FALSE;
  traces->batch_failed = FALSE;
  traces->batch_ok = 0;
  g_clear_error (&traces->batch_error);
  g_ptr_array_set_size (traces->begun, 0);
  g_hash_table_remove_all (traces->deltas);

  if (traces->damaged && self->db != NULL && sqlite3_get_autocommit (self->db))
    chp_store_traces_recover (self);
}
