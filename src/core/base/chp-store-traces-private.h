/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-traces-private.h: shared by the parts of the trace store: recording and batching
 * (chp-store-traces.c), eviction and forgetting (-evict.c), reading (-read.c) and the file, its
 * schema and statements (-schema.c). */
#pragma once

#include "chp-store-private.h"
#include "chp-store-traces.h"

G_BEGIN_DECLS

/* A step's row id is its session's key shifted left by 20 bits, plus its number: a session's
 * steps are one range of the table (read, evicted and forgotten as a range, and freeing whole
 * pages when they go), and the full-text index's rowids say which session matched without a
 * lookup. */
#define TRACE_SEQ_BITS 20
#define TRACE_STEP_ID(key, seq) (((gint64) (key) << TRACE_SEQ_BITS) | (gint64) (seq))
#define TRACE_KEY_OF(step_id)   ((gint64) (step_id) >> TRACE_SEQ_BITS)
#define TRACE_SEQ_OF(step_id)   ((guint) ((step_id) & ((1 << TRACE_SEQ_BITS) - 1)))

typedef enum
{
  TSTMT_SESSION_INSERT,
  TSTMT_SESSION_END,
  TSTMT_SESSION_EXISTS,
  TSTMT_SESSION_ADD,
  TSTMT_SITE_INSERT,
  TSTMT_STEP_INSERT,
  TSTMT_TEXT_INSERT,
  TSTMT_SNIPPET_UPSERT,
  TSTMT_SHOT_UPSERT,
  TSTMT_LIST,
  TSTMT_LIST_ONE,
  TSTMT_SEARCH,
  TSTMT_SITES_OF,
  TSTMT_KEY_OF,
  TSTMT_STEPS,
  TSTMT_SHOT,
  TSTMT_TOTALS,
  TSTMT_OLDEST_ENDED,
  TSTMT_OLDEST_OPEN,
  TSTMT_NTH_STEP,
  TSTMT_RANGE_SHOT_BYTES,
  TSTMT_DELETE_TEXT,
  TSTMT_DELETE_STEPS,
  TSTMT_DELETE_SHOTS,
  TSTMT_DELETE_SITES,
  TSTMT_DELETE_SESSION,
  TSTMT_TRIMMED,
  TSTMT_WORD_INSERT,
  TSTMT_WORD_DELETE,
  TSTMT_WORDS_AFTER,
  TSTMT_WORDS_EXPAND,
  TSTMT_RANGE_TEXT,
  N_TSTMTS
} TraceStmtId;

struct _ChpStoreTraces
{
  char    *path;

  GMutex   cap_lock;
  guint64  cap;

  /* Atomic: set on one thread, read on the other. */
  gint     attached;      /* the database thread has the file attached */
  gint     queued;        /* step jobs queued and not yet freed: the queue's bound */
  gint     evict_queued;  /* an eviction job is waiting */
  gint     pushed;        /* trace jobs ever queued (or dropped): what a flush covers */

  /* The database thread's. */
  sqlite3_stmt *stmts[N_TSTMTS];
  gint64        page_size;
  gint          settled;          /* trace jobs committed (or rightly skipped) */
  gint          reported_lost;    /* pushed - settled last told to a flush */
  gboolean      damaged;          /* SQLite said the file is corrupt: move it aside */
  /* The batch being written (run_audit_batch), in the savepoint "trace_batch". */
  gboolean      in_batch;
  gboolean      batch_failed;
  gint          batch_ok;
  GError       *batch_error;
  GHashTable   *deltas;           /* session key → TraceDelta */
  GPtrArray    *begun;            /* ChpTraceHandle whose key this batch gave */
  GHashTable   *batch_words;      /* words of this batch's steps not known to be stored */
  GHashTable   *known_words;      /* words known to be in trace.words */
  char         *prune_after;      /* where the next pruning of words starts */
};

struct _ChpTraceHandle
{
  ChpStore *store;     /* not a reference: only compared */
  char     *id;
  guint     next_seq;  /* the main thread's */
  gint64    key;       /* the database thread's: 0 before the session's row, -1 if lost */
};

/* The jobs that record: queued by chp-store-traces.c, run in batches by -batch.c. */
typedef struct
{
  ChpTraceHandle *trace;
  char           *agent;
  char           *device;
  char           *outcome;   /* the end's */
  gint64          at;
} SessionJob;

typedef struct
{
  ChpTraceHandle *trace;
  ChpTraceStep   *step;
  ChpStoreTraces *traces;
} StepJob;

typedef struct
{
  ChpTraceHandle *trace;
  guint           seq;
  GBytes         *jpeg;
  guint           width;
  guint           height;
} ShotJob;

typedef struct _TraceDelta TraceDelta;

/* chp-store-traces-batch.c */
gpointer      chp_store_traces_begin_job    (ChpStore     *self,
                                             gpointer      data,
                                             GError      **unused);
gpointer      chp_store_traces_add_step_job (ChpStore     *self,
                                             gpointer      data,
                                             GError      **unused);
gpointer      chp_store_traces_add_shot_job (ChpStore     *self,
                                             gpointer      data,
                                             GError      **unused);
gpointer      chp_store_traces_end_job      (ChpStore     *self,
                                             gpointer      data,
                                             GError      **unused);
void          chp_store_traces_delta_free   (TraceDelta   *delta);

/* chp-store-traces-schema.c */
sqlite3_stmt *chp_store_traces_stmt        (ChpStore      *self,
                                            TraceStmtId    id,
                                            GError       **error);
gboolean      chp_store_traces_ready       (ChpStore      *self,
                                            GError       **error);
void          chp_store_traces_note_error  (ChpStore      *self,
                                            int            rc);
void          chp_store_traces_recover     (ChpStore      *self);

/* chp-store-traces-words.c */
typedef void (*ChpTraceWordFunc) (const char *word,
                                  gsize       len,
                                  gboolean    digits,
                                  gpointer    data);
void          chp_store_traces_each_word         (const char          *text,
                                                  ChpTraceWordFunc     func,
                                                  gpointer             data);
void          chp_store_traces_note_words        (ChpStore            *self,
                                                  const ChpTraceStep  *step);
gboolean      chp_store_traces_write_words       (ChpStore            *self,
                                                  GError             **error);
void          chp_store_traces_words_done        (ChpStore            *self,
                                                  gboolean             committed);
gboolean      chp_store_traces_prune_words       (ChpStore            *self,
                                                  GError             **error);
GHashTable   *chp_store_traces_range_words       (ChpStore            *self,
                                                  gint64               lo,
                                                  gint64               hi,
                                                  GError             **error);
gboolean      chp_store_traces_drop_unused_words (ChpStore            *self,
                                                  GHashTable          *words,
                                                  GError             **error);
GPtrArray    *chp_store_traces_expand            (ChpStore            *self,
                                                  const char          *prefix,
                                                  guint                max,
                                                  GError             **error);

/* chp-store-traces-evict.c */
gboolean      chp_store_traces_delete_range (ChpStore     *self,
                                             gint64        lo,
                                             gint64        hi,
                                             GError      **error);
gboolean      chp_store_traces_evict        (ChpStore     *self,
                                             gint64        budget_us,
                                             GError      **error);
void          chp_store_traces_queue_evict  (ChpStore     *self);

/* chp-store-traces.c */
guint64       chp_store_traces_get_cap      (ChpStoreTraces *traces);

G_END_DECLS
