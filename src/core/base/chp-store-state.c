/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-state.c: a few values the person set that must outlive the app, each a JSON text
 * under a fixed key. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-private.h"

#include <glib/gi18n.h>

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
  sqlite3_stmt *stmt = chp_store_get_stmt (self, write->value ? STMT_STATE_SET : STMT_STATE_DELETE,
                                           error);

  if (stmt == NULL)
    return NULL;

  chp_store_bind_text (stmt, 1, write->key);
  if (write->value != NULL)
    chp_store_bind_text (stmt, 2, write->value);

  return chp_store_step_done (self, stmt, _("a setting"), error) ? GINT_TO_POINTER (TRUE) : NULL;
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
  chp_store_push_job (self, JOB_WRITE, set_state_job, write, (GDestroyNotify) state_write_free,
                      NULL, chp_store_set_state_async, cancellable, callback, user_data);
}

static gpointer
load_state_job (ChpStore  *self,
                gpointer   data,
                GError   **error)
{
  g_autoptr(GHashTable) state = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  sqlite3_stmt *stmt = chp_store_get_stmt (self, STMT_STATE_LIST, error);
  int rc;

  if (stmt == NULL)
    return NULL;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_hash_table_replace (state, chp_store_column_dup (stmt, 0), chp_store_column_dup (stmt, 1));
  sqlite3_reset (stmt);

  if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "state");
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

  chp_store_push_job (self, JOB_READ, load_state_job, NULL, NULL,
                      (GDestroyNotify) g_hash_table_unref, chp_store_load_state_async,
                      cancellable, callback, user_data);
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
