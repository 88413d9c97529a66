/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store.c: one database thread owns the SQLite connection; requests arrive on a GAsyncQueue,
 * each runs in its own transaction and its result returns to the caller's main context via GTask. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-private.h"

#include <glib/gi18n.h>

typedef struct
{
  JobKind          kind;
  ChpStoreJobFunc  func;
  gpointer         data;
  GDestroyNotify   data_free;
  GDestroyNotify   result_free;
  GTask           *task;
} Job;

guint chp_store_signals[N_SIGNALS];

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
run_job (ChpStore *self,
         Job      *job)
{
  g_autoptr(GError) error = NULL;
  gpointer result = NULL;

  if (job->task != NULL && g_task_return_error_if_cancelled (job->task))
    return;

  if (job->kind == JOB_OPEN)
    {
      result = chp_store_open_job (self, job->data, &error);
    }
  else if (self->db == NULL)
    {
      g_set_error_literal (&error, CHP_STORE_ERROR, CHP_STORE_ERROR_CLOSED,
                           _("The database is not open"));
    }
  else if (job->kind == JOB_WRITE)
    {
      if (chp_store_exec_sql (self->db, "BEGIN IMMEDIATE", &error))
        {
          result = job->func (self, job->data, &error);
          if (result != NULL)
            {
              int rc = sqlite3_exec (self->db, "COMMIT", NULL, NULL, NULL);

              if (rc != SQLITE_OK)
                {
                  chp_store_set_sqlite_error (&error, self->db, rc, "commit");
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

/* Jobs in one batch's transaction. Trace steps come by the thousand when an agent is busy: a
 * batch of 1,024 ingested a third faster than one of 256, and holds the thread ~15 ms at most. */
#define AUDIT_BATCH_MAX 1024
/* How long an entry nobody waits for waits for more entries to share its transaction. */
#define AUDIT_GROUP_WAIT_US (5 * G_TIME_SPAN_MILLISECOND)

static gboolean
is_batched (Job *job)
{
  return job != NULL && job->kind == JOB_WRITE &&
         (job->func == chp_store_add_audit_job || chp_store_traces_is_batched (job->func));
}

/* Audit entries arrive one per call, each durable: written one transaction apiece they cost a
 * sync each, and 10,000 quick calls kept the disk busy for seconds after. Entries already
 * queued together are written in one transaction; each caller still learns its own outcome.
 * Trace writes (a step per tool call, chp-store-traces.c) join the same batches, in a
 * savepoint of their own: a tool call writes both, and one commit serves them.
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
      if (!is_batched (next))
        break;
      awaited |= next->task != NULL;
      g_ptr_array_add (batch, g_steal_pointer (&next));
    }

  if (self->db == NULL)
    g_set_error_literal (&error, CHP_STORE_ERROR, CHP_STORE_ERROR_CLOSED,
                         _("The database is not open"));
  else if (chp_store_exec_sql (self->db, "BEGIN IMMEDIATE", &error))
    {
      for (guint i = 0; i < batch->len && error == NULL; i++)
        {
          Job *job = g_ptr_array_index (batch, i);

          job->func (self, job->data, &error);
        }

      if (error == NULL)
        chp_store_traces_batch_end (self);

      if (error == NULL)
        {
          int rc = sqlite3_exec (self->db, "COMMIT", NULL, NULL, NULL);

          if (rc != SQLITE_OK)
            chp_store_set_sqlite_error (&error, self->db, rc, "commit");
        }
      if (error != NULL)
        sqlite3_exec (self->db, "ROLLBACK", NULL, NULL, NULL);
    }

  chp_store_traces_batch_done (self, error);
  if (error != NULL)
    g_warning ("Could not write %u activity or trace entries: %s", batch->len, error->message);

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

      if (is_batched (job))
        {
          next = run_audit_batch (self, job);
          continue;
        }

      run_job (self, job);
      job_free (job);
    }

  chp_store_traces_close (self);
  for (guint i = 0; i < N_STMTS; i++)
    g_clear_pointer (&self->stmts[i], sqlite3_finalize);
  g_clear_pointer (&self->db, sqlite3_close);

  return NULL;
}

void
chp_store_push_job (ChpStore            *self,
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
  g_clear_pointer (&self->traces, chp_store_traces_free);

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
  chp_store_signals[SIGNAL_AUDIT_CHANGED] =
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
  self->traces = chp_store_traces_new (path);
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

  chp_store_push_job (self, JOB_OPEN, NULL, NULL, NULL, NULL, chp_store_open_async,
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

static gpointer
release_memory_job (ChpStore  *self,
                    gpointer   data,
                    GError   **error)
{
  int before = 0, after = 0, high;

  (void) data;
  (void) error;

  sqlite3_db_status (self->db, SQLITE_DBSTATUS_CACHE_USED, &before, &high, FALSE);
  sqlite3_db_release_memory (self->db);
  sqlite3_db_status (self->db, SQLITE_DBSTATUS_CACHE_USED, &after, &high, FALSE);
  g_debug ("the database's cache went from %d to %d bytes", before, after);
  /* Not a result, only "done": a job's NULL means it failed. */
  return GINT_TO_POINTER (TRUE);
}

/**
 * chp_store_release_memory:
 *
 * Asks the database connection to give back the pages of its cache it is not using, on the
 * database thread, after the jobs before it. Nothing comes back. The app asks when its window
 * closes: a day in the tray should not keep the pages a long look at the activity log read (the
 * cache fills to about 2 MB). The next read fills it again as it needs.
 */
void
chp_store_release_memory (ChpStore *self)
{
  g_return_if_fail (CHP_IS_STORE (self));

  chp_store_push_job (self, JOB_READ, release_memory_job, NULL, NULL, NULL,
                      chp_store_release_memory, NULL, NULL, NULL);
}

gboolean
chp_store_write_finish (ChpStore      *self,
                        GAsyncResult  *result,
                        GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_pointer (G_TASK (result), error) != NULL;
}
