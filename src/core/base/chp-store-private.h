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

/* The trace file's part of the store (chp-store-traces-private.h). */
typedef struct _ChpStoreTraces ChpStoreTraces;

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

  ChpStoreTraces *traces;
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
gint64        chp_store_pragma_int       (sqlite3             *db,
                                          const char          *sql,
                                          int                 *rc_out);
gboolean      chp_store_prepare_file     (const char          *path,
                                          GError             **error);
gboolean      chp_store_move_file_aside  (const char          *path,
                                          char               **moved_to,
                                          GError             **error);

/* chp-store-audit.c: a job the thread batches (run_audit_batch) */
gpointer      chp_store_add_audit_job    (ChpStore            *self,
                                          gpointer             data,
                                          GError             **error);

/* chp-store-traces*.c: the trace file, attached to this connection as "trace". All but _new and
 * _free run on the database thread. Trace writes are batched with the audit's: each batch runs
 * them in a savepoint of its own, so a failing trace file never costs an audit entry. */
ChpStoreTraces *chp_store_traces_new        (const char          *store_path);
void            chp_store_traces_free       (ChpStoreTraces      *traces);
void            chp_store_traces_attach     (ChpStore            *self);
void            chp_store_traces_close      (ChpStore            *self);
gboolean        chp_store_traces_is_batched (ChpStoreJobFunc      func);
void            chp_store_traces_batch_end  (ChpStore            *self);
void            chp_store_traces_batch_done (ChpStore            *self,
                                             const GError        *error);

G_END_DECLS
