/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-traces.h: the trace store: what every agent session did, step by step, in its own
 * SQLite file beside the store's (traces.db, 0600), written by the store's database thread in
 * batches, searchable, and held under a cap by evicting the oldest sessions.
 *
 * The store keeps what it is given. The caller masks: no typed value, field content, query
 * string or secret ever reaches these functions. The store only bounds what it gets (each text
 * to its CHP_TRACE_MAX_* length, cut at a character, made valid UTF-8; a path cut at its query
 * or fragment) so a page cannot make a step large. */
#pragma once

#include "chp-store.h"
#include "chp-trace-types.h"

G_BEGIN_DECLS

#define CHP_TRACE_DEFAULT_CAP ((guint64) 100 * 1024 * 1024)
#define CHP_TRACE_MIN_CAP     ((guint64) 1024 * 1024)

/* Bounds, in bytes of UTF-8. Longer texts are cut; longer arguments are replaced by
 * {"truncated":<their length>}, which is still JSON. */
#define CHP_TRACE_MAX_NAME      256   /* agent, device, element name, role */
#define CHP_TRACE_MAX_WORD      64    /* tool, outcome, error code, rung, decision, stopped_by */
#define CHP_TRACE_MAX_HOST      253
#define CHP_TRACE_MAX_PATH      1024
#define CHP_TRACE_MAX_ARGS      4096
#define CHP_TRACE_MAX_SNIPPET   2048
#define CHP_TRACE_MAX_SHOT      (512 * 1024)  /* bytes of JPEG */
#define CHP_TRACE_MAX_SHOT_SIDE 4096          /* pixels */
/* A step's number lives in the low 20 bits of its row id (chp-store-traces-private.h). */
#define CHP_TRACE_MAX_STEPS     ((1u << 20) - 1)

/* One session being recorded, from chp_store_trace_begin() to chp_store_trace_end(). */
typedef struct _ChpTraceHandle ChpTraceHandle;

ChpTraceHandle *chp_trace_handle_ref                (ChpTraceHandle      *trace);
void            chp_trace_handle_unref              (ChpTraceHandle      *trace);
const char     *chp_trace_handle_get_id             (ChpTraceHandle      *trace);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpTraceHandle, chp_trace_handle_unref)

const char     *chp_store_get_trace_path            (ChpStore            *self);
void            chp_store_set_trace_cap             (ChpStore            *self,
                                                     guint64              bytes);
guint64         chp_store_get_trace_cap             (ChpStore            *self);

/* Recording, from the main thread (the thread that flushes). Each call only queues: the
 * writes share the store's batched transactions, and chp_store_trace_flush_async() completes
 * once everything queued before it is committed (acknowledged: it survives a kill -9). */
ChpTraceHandle *chp_store_trace_begin               (ChpStore            *self,
                                                     const char          *agent,
                                                     const char          *device);
guint           chp_store_trace_add_step            (ChpStore            *self,
                                                     ChpTraceHandle      *trace,
                                                     const ChpTraceStep  *step);
void            chp_store_trace_add_shot            (ChpStore            *self,
                                                     ChpTraceHandle      *trace,
                                                     guint                seq,
                                                     GBytes              *jpeg,
                                                     guint                width,
                                                     guint                height);
void            chp_store_trace_end                 (ChpStore            *self,
                                                     ChpTraceHandle      *trace,
                                                     const char          *outcome);

void            chp_store_trace_flush_async         (ChpStore            *self,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
gboolean        chp_store_trace_flush_finish        (ChpStore            *self,
                                                     GAsyncResult        *result,
                                                     GError             **error);

/* Reading, and what the person does. */
void            chp_store_list_traces_async         (ChpStore            *self,
                                                     const ChpTraceQuery *query,
                                                     guint                offset,
                                                     guint                limit,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
GPtrArray      *chp_store_list_traces_finish        (ChpStore            *self,
                                                     GAsyncResult        *result,
                                                     GError             **error);
void            chp_store_load_trace_steps_async    (ChpStore            *self,
                                                     const char          *session_id,
                                                     guint                after_seq,
                                                     guint                limit,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
GPtrArray      *chp_store_load_trace_steps_finish   (ChpStore            *self,
                                                     GAsyncResult        *result,
                                                     GError             **error);
void            chp_store_load_trace_shot_async     (ChpStore            *self,
                                                     const char          *session_id,
                                                     guint                seq,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
ChpTraceShot   *chp_store_load_trace_shot_finish    (ChpStore            *self,
                                                     GAsyncResult        *result,
                                                     GError             **error);
/* Finish with chp_store_write_finish(). */
void            chp_store_forget_trace_async        (ChpStore            *self,
                                                     const char          *session_id,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
void            chp_store_trace_size_async          (ChpStore            *self,
                                                     GCancellable        *cancellable,
                                                     GAsyncReadyCallback  callback,
                                                     gpointer             user_data);
gboolean        chp_store_trace_size_finish         (ChpStore            *self,
                                                     GAsyncResult        *result,
                                                     guint64             *bytes,
                                                     GError             **error);

G_END_DECLS
