/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-attempts.c: pairing attempts, kept a week for the pairing manager's rate limits. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-private.h"

#include <glib/gi18n.h>

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
  sqlite3_stmt *stmt = chp_store_get_stmt (self, STMT_ATTEMPT_INSERT, error);

  if (stmt == NULL)
    return NULL;

  sqlite3_bind_int64 (stmt, 1, attempt->at);
  chp_store_bind_text (stmt, 2, attempt->installation_id ? attempt->installation_id : "");
  chp_store_bind_text (stmt, 3, attempt->origin ? attempt->origin : "");
  chp_store_bind_text (stmt, 4, chp_pairing_outcome_to_string (attempt->outcome));
  if (!chp_store_step_done (self, stmt, _("the pairing attempt"), error))
    return NULL;

  if (!(stmt = chp_store_get_stmt (self, STMT_ATTEMPT_TRIM, error)))
    return NULL;
  sqlite3_bind_int64 (stmt, 1, attempt->at - 7 * G_TIME_SPAN_DAY / 1000);

  return chp_store_step_done (self, stmt, _("the pairing attempt"), error)
         ? GINT_TO_POINTER (TRUE) : NULL;
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

  chp_store_push_job (self, JOB_WRITE, add_attempt_job, pairing_attempt_copy (attempt),
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
  sqlite3_stmt *stmt = chp_store_get_stmt (self, STMT_ATTEMPT_LIST, error);
  int rc;

  if (stmt == NULL)
    return NULL;

  sqlite3_bind_int64 (stmt, 1, *since);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      ChpPairingAttempt *attempt = g_new0 (ChpPairingAttempt, 1);

      attempt->at = sqlite3_column_int64 (stmt, 0);
      attempt->installation_id = chp_store_column_dup (stmt, 1);
      attempt->origin = chp_store_column_dup (stmt, 2);
      if (!outcome_from_string ((const char *) sqlite3_column_text (stmt, 3), &attempt->outcome))
        attempt->outcome = CHP_PAIRING_OUTCOME_FAILED;
      g_ptr_array_add (attempts, attempt);
    }
  sqlite3_reset (stmt);

  if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "pairing attempts");
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

  chp_store_push_job (self, JOB_READ, load_attempts_job, g_memdup2 (&since, sizeof since), g_free,
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
