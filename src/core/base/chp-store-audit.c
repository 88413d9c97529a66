/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-audit.c: the activity log: entries added (batched by the thread), read by page with
 * filters, counted, and cleared by the person. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-private.h"

#include <glib/gi18n.h>

gpointer
chp_store_add_audit_job (ChpStore  *self,
                         gpointer   data,
                         GError   **error)
{
  ChpAuditEntry *entry = data;
  sqlite3_stmt *stmt = chp_store_get_stmt (self, STMT_AUDIT_INSERT, error);

  if (stmt == NULL)
    return NULL;

  sqlite3_bind_int64 (stmt, 1, entry->at);
  chp_store_bind_text (stmt, 2, entry->category);
  chp_store_bind_text (stmt, 3, entry->method ? entry->method : "");
  chp_store_bind_text (stmt, 4, entry->outcome);
  chp_store_bind_text (stmt, 5, entry->device_id);
  sqlite3_bind_int64 (stmt, 6, entry->duration_ms);
  chp_store_bind_text (stmt, 7, entry->error_code);
  if (!chp_store_step_done (self, stmt, _("the activity log"), error))
    return NULL;

  if (!(stmt = chp_store_get_stmt (self, STMT_AUDIT_TRIM, error)))
    return NULL;
  sqlite3_bind_int64 (stmt, 1, g_atomic_int_get (&self->audit_limit));

  return chp_store_step_done (self, stmt, _("the activity log"), error)
         ? GINT_TO_POINTER (TRUE) : NULL;
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

  chp_store_push_job (self, JOB_WRITE, chp_store_add_audit_job, chp_audit_entry_copy (entry),
                      (GDestroyNotify) chp_audit_entry_free, NULL, chp_store_add_audit_async,
                      cancellable, callback, user_data);
  g_signal_emit (self, chp_store_signals[SIGNAL_AUDIT_CHANGED], 0, FALSE);
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
      entry->category = chp_store_column_dup (stmt, 2);
      entry->method = chp_store_column_dup (stmt, 3);
      entry->outcome = chp_store_column_dup (stmt, 4);
      entry->device_id = chp_store_column_dup (stmt, 5);
      entry->duration_ms = sqlite3_column_int64 (stmt, 6);
      entry->error_code = chp_store_column_dup (stmt, 7);
      g_ptr_array_add (entries, entry);
    }
  sqlite3_reset (stmt);

  if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "audit");
      return NULL;
    }

  return g_steal_pointer (&entries);
}

static gpointer
list_audit_job (ChpStore  *self,
                gpointer   data,
                GError   **error)
{
  sqlite3_stmt *stmt = chp_store_get_stmt (self, STMT_AUDIT_LIST, error);

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

  chp_store_push_job (self, JOB_READ, list_audit_job, GUINT_TO_POINTER (limit), NULL,
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

  chp_store_bind_text (stmt, 1, query->category);
  chp_store_bind_text (stmt, 2, query->outcome);
  chp_store_bind_text (stmt, 3, query->device_id);
  chp_store_bind_text (stmt, 4, read->search);
  sqlite3_bind_int64 (stmt, 5, MAX (query->after_id, 0));
  sqlite3_bind_int64 (stmt, 6, query->up_to_id > 0 ? query->up_to_id : G_MAXINT64);
}

static gpointer
query_audit_job (ChpStore  *self,
                 gpointer   data,
                 GError   **error)
{
  AuditRead *read = data;
  sqlite3_stmt *stmt = chp_store_get_stmt (self, STMT_AUDIT_QUERY, error);

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

  chp_store_push_job (self, JOB_READ, query_audit_job, audit_read_new (query, offset, limit),
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
  sqlite3_stmt *stmt = chp_store_get_stmt (self, STMT_AUDIT_COUNT, error);
  ChpAuditCount *count;
  int rc;

  if (stmt == NULL)
    return NULL;

  bind_audit_where (stmt, read);
  rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      sqlite3_reset (stmt);
      chp_store_set_sqlite_error (error, self->db, rc, "audit");
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

  chp_store_push_job (self, JOB_READ, count_audit_job, audit_read_new (query, 0, 0),
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
  sqlite3_stmt *stmt = chp_store_get_stmt (self, STMT_AUDIT_CLEAR, error);

  if (stmt == NULL)
    return NULL;

  return chp_store_step_done (self, stmt, _("the activity log"), error)
         ? GINT_TO_POINTER (TRUE) : NULL;
}

/* The person cleared the activity log. Finish with chp_store_write_finish(). */
void
chp_store_clear_audit_async (ChpStore            *self,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  chp_store_push_job (self, JOB_WRITE, clear_audit_job, NULL, NULL, NULL,
                      chp_store_clear_audit_async, cancellable, callback, user_data);
  g_signal_emit (self, chp_store_signals[SIGNAL_AUDIT_CHANGED], 0, TRUE);
}
