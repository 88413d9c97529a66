/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-rules.c: the person's "Always allow" rules as the store keeps them: saved when the
 * person makes one on a card, loaded at start (live ones only), counted each time one is used,
 * revoked. Written durably: a rule is an approval (DESIGN §9). Only the engine's person path
 * calls the writers (docs/security.md). */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-private.h"

#include <glib/gi18n.h>

/* Ended rules are kept this long, then trimmed when the rules are next loaded. */
#define RULE_KEEP_MS ((gint64) 30 * 24 * 3600 * 1000)

ChpRuleInfo *
chp_rule_info_copy (const ChpRuleInfo *info)
{
  ChpRuleInfo *copy;

  g_return_val_if_fail (info != NULL, NULL);

  copy = g_memdup2 (info, sizeof *info);
  copy->rule_id = g_strdup (info->rule_id);
  copy->agent = g_strdup (info->agent);
  copy->site = g_strdup (info->site);
  copy->kind = g_strdup (info->kind);
  return copy;
}

void
chp_rule_info_free (ChpRuleInfo *info)
{
  if (info == NULL)
    return;

  g_free (info->rule_id);
  g_free (info->agent);
  g_free (info->site);
  g_free (info->kind);
  g_free (info);
}

static gpointer
save_rule_job (ChpStore  *self,
               gpointer   data,
               GError   **error)
{
  ChpRuleInfo *info = data;
  sqlite3_stmt *stmt = chp_store_get_stmt (self, STMT_RULE_INSERT, error);

  if (stmt == NULL)
    return NULL;

  chp_store_bind_text (stmt, 1, info->rule_id);
  chp_store_bind_text (stmt, 2, info->agent);
  chp_store_bind_text (stmt, 3, info->site);
  chp_store_bind_text (stmt, 4, info->kind);
  sqlite3_bind_int64 (stmt, 5, info->created_at);
  sqlite3_bind_int64 (stmt, 6, info->expires_at);

  return chp_store_step_done (self, stmt, _("the rule"), error) ? GINT_TO_POINTER (TRUE) : NULL;
}

/**
 * chp_store_save_rule_async:
 * @info: a new rule; its use count, last use and revocation are not read
 *
 * Stored durably before the callback runs; a kind other than "write", an empty agent or site,
 * or an expiry not after its creation is refused by the table itself. Finish with
 * chp_store_write_finish().
 */
void
chp_store_save_rule_async (ChpStore            *self,
                           const ChpRuleInfo   *info,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (info != NULL && info->rule_id != NULL && info->agent != NULL &&
                    info->site != NULL && info->kind != NULL);

  chp_store_push_job (self, JOB_WRITE, save_rule_job, chp_rule_info_copy (info),
                      (GDestroyNotify) chp_rule_info_free, NULL, chp_store_save_rule_async,
                      cancellable, callback, user_data);
}

static gpointer
load_rules_job (ChpStore  *self,
                gpointer   data,
                GError   **error)
{
  gint64 now = *(gint64 *) data;
  g_autoptr(GPtrArray) rules = g_ptr_array_new_with_free_func ((GDestroyNotify) chp_rule_info_free);
  sqlite3_stmt *stmt = chp_store_get_stmt (self, STMT_RULE_TRIM, error);
  int rc;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, now - RULE_KEEP_MS);
  if (!chp_store_step_done (self, stmt, _("the rules"), error))
    return NULL;

  stmt = chp_store_get_stmt (self, STMT_RULE_LIST, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, now);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      ChpRuleInfo *info = g_new0 (ChpRuleInfo, 1);

      info->rule_id = chp_store_column_dup (stmt, 0);
      info->agent = chp_store_column_dup (stmt, 1);
      info->site = chp_store_column_dup (stmt, 2);
      info->kind = chp_store_column_dup (stmt, 3);
      info->created_at = sqlite3_column_int64 (stmt, 4);
      info->expires_at = sqlite3_column_int64 (stmt, 5);
      info->use_count = sqlite3_column_int64 (stmt, 6);
      info->last_used = sqlite3_column_int64 (stmt, 7);
      info->revoked_at = sqlite3_column_int64 (stmt, 8);
      g_ptr_array_add (rules, info);
    }
  sqlite3_reset (stmt);

  if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "rules");
      return NULL;
    }

  return g_steal_pointer (&rules);
}

/**
 * chp_store_load_rules_async:
 * @now: ms since the epoch: rules that expired by then are not loaded
 *
 * The rules that still stand (neither revoked nor expired), oldest first. Rules that ended
 * more than 30 days before @now are deleted first. Finish with chp_store_load_rules_finish().
 */
void
chp_store_load_rules_async (ChpStore            *self,
                            gint64               now,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  /* A trim is a write: the job runs as one. */
  chp_store_push_job (self, JOB_WRITE, load_rules_job, g_memdup2 (&now, sizeof now), g_free,
                      (GDestroyNotify) g_ptr_array_unref, chp_store_load_rules_async,
                      cancellable, callback, user_data);
}

/* Returns: (transfer full) (element-type ChpRuleInfo): the rules, or %NULL with @error */
GPtrArray *
chp_store_load_rules_finish (ChpStore      *self,
                             GAsyncResult  *result,
                             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

typedef struct
{
  StmtId  stmt;
  char   *rule_id;
  gint64  at;
} RuleUpdate;

static void
rule_update_free (RuleUpdate *update)
{
  g_free (update->rule_id);
  g_free (update);
}

static gpointer
rule_update_job (ChpStore  *self,
                 gpointer   data,
                 GError   **error)
{
  RuleUpdate *update = data;
  sqlite3_stmt *stmt = chp_store_get_stmt (self, update->stmt, error);

  if (stmt == NULL)
    return NULL;

  chp_store_bind_text (stmt, 1, update->rule_id);
  sqlite3_bind_int64 (stmt, 2, update->at);
  if (!chp_store_step_done (self, stmt, _("the rule"), error))
    return NULL;

  /* A revoked rule is neither used nor revoked again. */
  if (sqlite3_changes (self->db) == 0)
    {
      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                   _("No standing rule has the id %s"), update->rule_id);
      return NULL;
    }

  return GINT_TO_POINTER (TRUE);
}

static void
push_rule_update (ChpStore            *self,
                  StmtId               stmt,
                  const char          *rule_id,
                  gint64               at,
                  gpointer             source_tag,
                  GCancellable        *cancellable,
                  GAsyncReadyCallback  callback,
                  gpointer             user_data)
{
  RuleUpdate *update = g_new0 (RuleUpdate, 1);

  update->stmt = stmt;
  update->rule_id = g_strdup (rule_id);
  update->at = at;
  chp_store_push_job (self, JOB_WRITE, rule_update_job, update,
                      (GDestroyNotify) rule_update_free, NULL, source_tag, cancellable,
                      callback, user_data);
}

/* One more use of a standing rule, at @at. Finish with chp_store_write_finish(). */
void
chp_store_use_rule_async (ChpStore            *self,
                          const char          *rule_id,
                          gint64               at,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (rule_id != NULL);

  push_rule_update (self, STMT_RULE_USE, rule_id, at, chp_store_use_rule_async, cancellable,
                    callback, user_data);
}

/* The person revoked a rule at @at. Finish with chp_store_write_finish(). */
void
chp_store_revoke_rule_async (ChpStore            *self,
                             const char          *rule_id,
                             gint64               at,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (rule_id != NULL);

  push_rule_update (self, STMT_RULE_REVOKE, rule_id, at, chp_store_revoke_rule_async,
                    cancellable, callback, user_data);
}
