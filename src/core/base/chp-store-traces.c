/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-traces.c: recording traces: a session begun, its steps, screenshots and end, each
 * queued by the main thread at the cost of a copy and a push, and written by the database
 * thread in the store's batches (chp-store-traces-batch.c); the flush that says what is
 * written; the cap. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-traces-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "chp-crypto.h"

/* Steps queued and not yet written. Past this the disk is stuck or gone, and a step is dropped
 * (and a flush says so) rather than the app's memory growing without end: ~50 MB. */
#define TRACE_QUEUE_MAX 100000

ChpStoreTraces *
chp_store_traces_new (const char *store_path)
{
  ChpStoreTraces *traces = g_new0 (ChpStoreTraces, 1);
  g_autofree char *dir = g_path_get_dirname (store_path);

  traces->path = g_build_filename (dir, "traces.db", NULL);
  /* A store kept in a file of that very name keeps its traces beside it under another. */
  if (g_str_equal (traces->path, store_path))
    {
      g_free (traces->path);
      traces->path = g_strconcat (store_path, "-traces.db", NULL);
    }
  g_mutex_init (&traces->cap_lock);
  traces->cap = CHP_TRACE_DEFAULT_CAP;
  traces->deltas = g_hash_table_new_full (g_int64_hash, g_int64_equal, NULL,
                                          (GDestroyNotify) chp_store_traces_delta_free);
  traces->begun = g_ptr_array_new_with_free_func ((GDestroyNotify) chp_trace_handle_unref);
  traces->batch_words = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  traces->known_words = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  return traces;
}

void
chp_store_traces_free (ChpStoreTraces *traces)
{
  g_free (traces->path);
  g_mutex_clear (&traces->cap_lock);
  g_clear_error (&traces->batch_error);
  g_hash_table_unref (traces->deltas);
  g_ptr_array_unref (traces->begun);
  g_hash_table_unref (traces->batch_words);
  g_hash_table_unref (traces->known_words);
  g_free (traces->prune_after);
  g_free (traces);
}

/* The handle */

ChpTraceHandle *
chp_trace_handle_ref (ChpTraceHandle *trace)
{
  g_return_val_if_fail (trace != NULL, NULL);

  return g_atomic_rc_box_acquire (trace);
}

static void
trace_handle_clear (ChpTraceHandle *trace)
{
  g_free (trace->id);
}

void
chp_trace_handle_unref (ChpTraceHandle *trace)
{
  g_return_if_fail (trace != NULL);

  g_atomic_rc_box_release_full (trace, (GDestroyNotify) trace_handle_clear);
}

/* The session's id, as chp_store_list_traces_finish() will give it. */
const char *
chp_trace_handle_get_id (ChpTraceHandle *trace)
{
  g_return_val_if_fail (trace != NULL, NULL);

  return trace->id;
}

/* Bounds: what a page can make long is cut, not refused, so that the step is still kept. */

static gsize
utf8_cut (const char *text,
          gsize       len,
          gsize       max)
{
  if (len <= max)
    return len;

  /* Back to the start of the character the bound falls in. */
  len = max;
  while (len > 0 && ((guchar) text[len] & 0xc0) == 0x80)
    len--;

  return len;
}

static char *
bounded_len (const char *text,
             gsize       len,
             gsize       max)
{
  g_autofree char *valid = NULL;

  len = utf8_cut (text, len, max);
  if (g_utf8_validate_len (text, len, NULL))
    return g_strndup (text, len);

  /* Replacement characters may make it longer again. */
  valid = g_utf8_make_valid (text, len);
  return g_strndup (valid, utf8_cut (valid, strlen (valid), max));
}

static char *
bounded (const char *text,
         gsize       max)
{
  if (text == NULL)
    return NULL;

  return bounded_len (text, strnlen (text, max + 1), max);
}

static char *
bounded_path (const char *path)
{
  if (path == NULL)
    return NULL;

  /* Never a query or a fragment, even if the caller forgot to cut them. */
  return bounded_len (path, strcspn (path, "?#"), CHP_TRACE_MAX_PATH);
}

static char *
bounded_host (const char *host)
{
  g_autofree char *cut = bounded (host, CHP_TRACE_MAX_HOST);

  return cut != NULL ? g_utf8_strdown (cut, -1) : NULL;
}

static char *
bounded_args (const char *args)
{
  gsize len;

  if (args == NULL)
    return NULL;

  len = strnlen (args, CHP_TRACE_MAX_ARGS + 1);
  if (len > CHP_TRACE_MAX_ARGS)
    return g_strdup_printf ("{\"truncated\":%" G_GSIZE_FORMAT "}", strlen (args));

  return bounded_len (args, len, CHP_TRACE_MAX_ARGS);
}

/* Queueing */

static void
push_trace_job (ChpStore        *self,
                ChpStoreJobFunc  func,
                gpointer         data,
                GDestroyNotify   data_free)
{
  g_atomic_int_inc (&self->traces->pushed);
  chp_store_push_job (self, JOB_WRITE, func, data, data_free, NULL, NULL, NULL, NULL, NULL);
}

static void
session_job_free (SessionJob *job)
{
  g_clear_pointer (&job->trace, chp_trace_handle_unref);
  g_free (job->agent);
  g_free (job->device);
  g_free (job->outcome);
  g_free (job);
}

static void
step_job_free (StepJob *job)
{
  g_atomic_int_add (&job->traces->queued, -1);
  g_clear_pointer (&job->trace, chp_trace_handle_unref);
  g_clear_pointer (&job->step, chp_trace_step_free);
  g_free (job);
}

static void
shot_job_free (ShotJob *job)
{
  g_clear_pointer (&job->trace, chp_trace_handle_unref);
  g_clear_pointer (&job->jpeg, g_bytes_unref);
  g_free (job);
}

/* Recording, on the main thread */

/**
 * chp_store_trace_begin:
 * @agent: (nullable): the agent's client name
 * @device: (nullable): the browser's name
 *
 * Starts a session's trace. Only queues the session's row: the steps that follow are written
 * after it, in order.
 *
 * Returns: (transfer full): the session to add steps to; end it with chp_store_trace_end()
 */
ChpTraceHandle *
chp_store_trace_begin (ChpStore   *self,
                       const char *agent,
                       const char *device)
{
  ChpTraceHandle *trace;
  SessionJob *job;

  g_return_val_if_fail (CHP_IS_STORE (self), NULL);

  trace = g_atomic_rc_box_new0 (ChpTraceHandle);
  trace->store = self;
  trace->id = chp_random_b64url (12);
  trace->next_seq = 1;

  job = g_new0 (SessionJob, 1);
  job->trace = chp_trace_handle_ref (trace);
  job->agent = bounded (agent != NULL ? agent : "", CHP_TRACE_MAX_NAME);
  job->device = bounded (device != NULL ? device : "", CHP_TRACE_MAX_NAME);
  job->at = g_get_real_time ();
  push_trace_job (self, chp_store_traces_begin_job, job, (GDestroyNotify) session_job_free);

  return trace;
}

/**
 * chp_store_trace_add_step:
 * @step: the call, masked by the caller (chp-trace-types.h); its @seq is not read
 *
 * Queues a step: a copy, bounded, and a push; it is written with whatever else is queued.
 * Call it from the thread that flushes (the main thread).
 *
 * Returns: the step's number in its session (1, 2, …), for chp_store_trace_add_shot(); 0 when
 *   it was not recorded (the session is at CHP_TRACE_MAX_STEPS, or the queue is full)
 */
guint
chp_store_trace_add_step (ChpStore           *self,
                          ChpTraceHandle     *trace,
                          const ChpTraceStep *step)
{
  ChpStoreTraces *traces;
  ChpTraceStep *copy;
  StepJob *job;
  guint seq;

  g_return_val_if_fail (CHP_IS_STORE (self), 0);
  g_return_val_if_fail (trace != NULL && trace->store == self, 0);
  g_return_val_if_fail (step != NULL && step->tool != NULL, 0);

  traces = self->traces;
  if (trace->next_seq > CHP_TRACE_MAX_STEPS)
    return 0;
  if (g_atomic_int_get (&traces->queued) >= TRACE_QUEUE_MAX)
    {
      /* Counted as pushed and never written: the next flush reports it. */
      g_atomic_int_inc (&traces->pushed);
      return 0;
    }

  seq = trace->next_seq++;
  copy = g_new0 (ChpTraceStep, 1);
  copy->seq = seq;
  copy->at = step->at > 0 ? step->at : g_get_real_time ();
  copy->tool = bounded (step->tool, CHP_TRACE_MAX_WORD);
  copy->args = bounded_args (step->args);
  copy->queue_us = MAX (step->queue_us, 0);
  copy->run_us = MAX (step->run_us, 0);
  copy->page_us = MAX (step->page_us, 0);
  copy->outcome = bounded (step->outcome != NULL ? step->outcome : "ok", CHP_TRACE_MAX_WORD);
  copy->error_code = bounded (step->error_code, CHP_TRACE_MAX_WORD);
  copy->rung = bounded (step->rung, CHP_TRACE_MAX_WORD);
  copy->host = bounded_host (step->host);
  copy->path = bounded_path (step->path);
  copy->role = bounded (step->role, CHP_TRACE_MAX_NAME);
  copy->name = bounded (step->name, CHP_TRACE_MAX_NAME);
  copy->decision_kind = (guint) step->decision_kind <= CHP_TRACE_DECISION_STOP
                        ? step->decision_kind : CHP_TRACE_DECISION_NONE;
  copy->decision = bounded (step->decision, CHP_TRACE_MAX_WORD);
  copy->decision_wait_us = MAX (step->decision_wait_us, 0);
  copy->stopped_by = bounded (step->stopped_by, CHP_TRACE_MAX_WORD);
  copy->retry = step->retry;
  copy->snippet = bounded (step->snippet, CHP_TRACE_MAX_SNIPPET);

  job = g_new (StepJob, 1);
  job->trace = chp_trace_handle_ref (trace);
  job->step = copy;
  job->traces = traces;
  g_atomic_int_inc (&traces->queued);
  /* The database thread may have written and freed the copy by the time this returns. */
  push_trace_job (self, chp_store_traces_add_step_job, job, (GDestroyNotify) step_job_free);

  return seq;
}

/**
 * chp_store_trace_add_shot:
 * @seq: the step's number, from chp_store_trace_add_step()
 * @jpeg: a downscaled JPEG, at most CHP_TRACE_MAX_SHOT bytes, already masked
 *
 * Keeps a failing step's screenshot (a second one replaces the first). Counted in the cap.
 */
void
chp_store_trace_add_shot (ChpStore       *self,
                          ChpTraceHandle *trace,
                          guint           seq,
                          GBytes         *jpeg,
                          guint           width,
                          guint           height)
{
  static const guint8 jpeg_start[] = { 0xff, 0xd8, 0xff };
  ShotJob *job;
  gsize size = 0;
  const guint8 *bytes;

  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (trace != NULL && trace->store == self);
  g_return_if_fail (seq > 0 && seq < trace->next_seq);
  g_return_if_fail (jpeg != NULL);

  bytes = g_bytes_get_data (jpeg, &size);
  if (size < sizeof jpeg_start || size > CHP_TRACE_MAX_SHOT ||
      memcmp (bytes, jpeg_start, sizeof jpeg_start) != 0 ||
      width == 0 || height == 0 ||
      width > CHP_TRACE_MAX_SHOT_SIDE || height > CHP_TRACE_MAX_SHOT_SIDE)
    {
      g_debug ("A screenshot of %" G_GSIZE_FORMAT " bytes (%ux%u) was not kept: not a JPEG "
               "within bounds", size, width, height);
      return;
    }

  job = g_new0 (ShotJob, 1);
  job->trace = chp_trace_handle_ref (trace);
  job->seq = seq;
  job->jpeg = g_bytes_ref (jpeg);
  job->width = width;
  job->height = height;
  push_trace_job (self, chp_store_traces_add_shot_job, job, (GDestroyNotify) shot_job_free);
}

/**
 * chp_store_trace_end:
 * @outcome: how the session ended: "ok", "error", "stopped", "disconnected", …
 *
 * Ends the session's trace; the handle takes no steps after. A session the app never ended
 * (it died) is ended as "interrupted" when the store next opens.
 */
void
chp_store_trace_end (ChpStore       *self,
                     ChpTraceHandle *trace,
                     const char     *outcome)
{
  SessionJob *job;

  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (trace != NULL && trace->store == self);
  g_return_if_fail (outcome != NULL);

  job = g_new0 (SessionJob, 1);
  job->trace = chp_trace_handle_ref (trace);
  job->outcome = bounded (outcome, CHP_TRACE_MAX_WORD);
  job->at = g_get_real_time ();
  trace->next_seq = CHP_TRACE_MAX_STEPS + 1;
  push_trace_job (self, chp_store_traces_end_job, job, (GDestroyNotify) session_job_free);
}

/* The flush */

static gpointer
flush_job (ChpStore  *self,
           gpointer   data,
           GError   **error)
{
  ChpStoreTraces *traces = self->traces;
  guint lost;

  if (!chp_store_traces_ready (self, error))
    return NULL;

  /* Every trace job queued before this one has run, in order: those not settled were lost.
   * Each loss is told once, to the first flush after it, as fsync() tells a write error. */
  lost = (guint) GPOINTER_TO_INT (data) - (guint) traces->settled;
  if (lost > (guint) traces->reported_lost)
    {
      guint news = lost - (guint) traces->reported_lost;

      traces->reported_lost = (gint) lost;
      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_FAILED,
                   g_dngettext (GETTEXT_PACKAGE, "%u trace entry could not be written",
                                "%u trace entries could not be written", news), news);
      return NULL;
    }

  return GINT_TO_POINTER (TRUE);
}

/**
 * chp_store_trace_flush_async:
 *
 * Completes once everything recorded before it is committed: acknowledged. What is
 * acknowledged survives the app being killed (the trace file's WAL has it). Fails if something
 * recorded since the previous flush could not be written. Finish with
 * chp_store_trace_flush_finish().
 */
void
chp_store_trace_flush_async (ChpStore            *self,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  chp_store_push_job (self, JOB_READ, flush_job,
                      GINT_TO_POINTER (g_atomic_int_get (&self->traces->pushed)), NULL, NULL,
                      chp_store_trace_flush_async, cancellable, callback, user_data);
}

gboolean
chp_store_trace_flush_finish (ChpStore      *self,
                              GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_pointer (G_TASK (result), error) != NULL;
}

/* The cap */

guint64
chp_store_traces_get_cap (ChpStoreTraces *traces)
{
  guint64 cap;

  g_mutex_lock (&traces->cap_lock);
  cap = traces->cap;
  g_mutex_unlock (&traces->cap_lock);

  return cap;
}

/* Where the trace file is (traces.db beside the store's file), so it can be named. */
const char *
chp_store_get_trace_path (ChpStore *self)
{
  g_return_val_if_fail (CHP_IS_STORE (self), NULL);

  return self->traces->path;
}

/**
 * chp_store_set_trace_cap:
 * @bytes: the most the trace file may hold, screenshots included; at least CHP_TRACE_MIN_CAP
 *
 * Oldest sessions go first when the file grows past it; a lower cap evicts at once.
 */
void
chp_store_set_trace_cap (ChpStore *self,
                         guint64   bytes)
{
  g_return_if_fail (CHP_IS_STORE (self));

  g_mutex_lock (&self->traces->cap_lock);
  self->traces->cap = MAX (bytes, CHP_TRACE_MIN_CAP);
  g_mutex_unlock (&self->traces->cap_lock);

  if (g_atomic_int_get (&self->traces->attached))
    chp_store_traces_queue_evict (self);
}

guint64
chp_store_get_trace_cap (ChpStore *self)
{
  g_return_val_if_fail (CHP_IS_STORE (self), 0);

  return chp_store_traces_get_cap (self->traces);
}
