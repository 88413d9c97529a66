/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-private.h: shared by the parts of ChpStore: the thread and its queue (chp-store.c),
 * the schema (chp-store-schema.c) and one file per kind of record. */
#pragma once

#include <sqlite3.h>

#include "chp-store.h"

G_BEGIN_DECLS

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
  STMT_RULE_INSERT,
  STMT_RULE_LIST,
  STMT_RULE_TRIM,
  STMT_RULE_USE,
  STMT_RULE_REVOKE,
  N_STMTS
} StmtId;

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

extern guint chp_store_signals[N_SIGNALS];

/* chp-store.c: the queue */
void          chp_store_push_job         (ChpStore            *self,
                                          JobKind              kind,
                                          ChpStoreJobFunc      func,
                                          gpointer             data,
                                          GDestroyNotify       data_free,
                                          GDestroyNotify       result_free,
                                          gpointer             source_tag,
                                          GCancellable        *cancellable,
                                          GAsyncReadyCallback  callback,
                                          gpointer             user_data);

/* chp-store-schema.c: opening, and what every job uses (on the database thread only) */
gpointer      chp_store_open_job         (ChpStore            *self,
                                          gpointer             data,
                                          GError             **error);
void          chp_store_set_sqlite_error (GError             **error,
                                          sqlite3             *db,
                                          int                  rc,
                                          const char          *what);
sqlite3_stmt *chp_store_get_stmt         (ChpStore            *self,
                                          StmtId               id,
                                          GError             **error);
gboolean      chp_store_exec_sql         (sqlite3             *db,
                                          const char          *sql,
                                          GError             **error);
gboolean      chp_store_step_done        (ChpStore            *self,
                                          sqlite3_stmt        *stmt,
                                          const char          *what,
                                          GError             **error);
void          chp_store_bind_text        (sqlite3_stmt        *stmt,
                                          int                  col,
                                          const char          *text);
char         *chp_store_column_dup       (sqlite3_stmt        *stmt,
                                          int                  col);

/* chp-store-audit.c: the one job the thread batches (run_audit_batch) */
gpointer      chp_store_add_audit_job    (ChpStore            *self,
                                          gpointer             data,
                                          GError             **error);

G_END_DECLS
