/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-report.c: a bundle of agent sessions for a bug report (chp-trace-report.h says what
 * it holds). The sessions, their steps and their screenshots are read through the store's own
 * calls, one after the other on the main context; masking and writing run in a worker, so the
 * app's window never waits for a file of many megabytes. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-report"

#include "chp-trace-report-private.h"

#include "chp-redact.h"

#include <glib/gi18n.h>
#include <string.h>

/* The store lists at most 1,000 sessions a call; a session asked for by id is found a page at a
 * time (the store has no lookup by id that gives a session's header). */
#define LIST_PAGE 1000

/* What is flushed to the file at once. */
#define SINK_CHUNK (64 * 1024)

typedef struct
{
  char      *session_id;
  guint      last_n;
  GFile     *out;
  gboolean   json_only;
  guint      list_offset;
  GPtrArray *sessions;      /* ReportSession, newest first */
  guint      current;       /* the session whose steps and screenshots are being read */
  gboolean   steps_read;    /* its steps are asked for */
  guint      next_shot;     /* in it, the step to look at next for a screenshot */
  gsize      shot_bytes;
  gint64     exported_at;
  guint      n_steps;
} ReportJob;

static void
report_step_free (ReportStep *step)
{
  g_clear_pointer (&step->step, chp_trace_step_free);
  g_clear_pointer (&step->args, json_node_unref);
  g_clear_pointer (&step->shot, chp_trace_shot_free);
  g_free (step);
}

static void
report_session_free (ReportSession *session)
{
  g_clear_pointer (&session->session, chp_trace_session_free);
  g_clear_pointer (&session->steps, g_ptr_array_unref);
  g_free (session);
}

static void
report_job_free (ReportJob *job)
{
  g_free (job->session_id);
  g_clear_object (&job->out);
  g_clear_pointer (&job->sessions, g_ptr_array_unref);
  g_free (job);
}

/* ---- the sink ------------------------------------------------------------------------------ */

void
chp_trace_report_sink_flush (ReportSink *sink)
{
  if (sink->error == NULL && sink->buffer->len > 0)
    g_output_stream_write_all (sink->stream, sink->buffer->str, sink->buffer->len, NULL,
                               sink->cancellable, &sink->error);
  g_string_truncate (sink->buffer, 0);
}

void
chp_trace_report_sink_append (ReportSink *sink,
                              const char *text)
{
  g_string_append (sink->buffer, text);
  if (sink->buffer->len >= SINK_CHUNK)
    chp_trace_report_sink_flush (sink);
}

void
chp_trace_report_sink_printf (ReportSink *sink,
                              const char *format,
                              ...)
{
  va_list args;

  va_start (args, format);
  g_string_append_vprintf (sink->buffer, format, args);
  va_end (args);
  if (sink->buffer->len >= SINK_CHUNK)
    chp_trace_report_sink_flush (sink);
}

char *
chp_trace_report_iso_time (gint64 at_us)
{
  g_autoptr(GDateTime) seconds = NULL;
  g_autoptr(GDateTime) at = NULL;

  if (at_us <= 0)
    return NULL;

  seconds = g_date_time_new_from_unix_utc (at_us / G_USEC_PER_SEC);
  if (seconds == NULL)
    return NULL;
  at = g_date_time_add (seconds, at_us % G_USEC_PER_SEC);

  return g_date_time_format_iso8601 (at);
}

/* ---- masking, in the worker ---------------------------------------------------------------- */

static void
mask_text (char  **text,
           guint  *redacted)
{
  g_autofree char *clean = NULL;
  guint count = 0;

  if (*text == NULL)
    return;

  clean = chp_redact_text (*text, &count);
  if (count > 0)
    (*redacted)++;
  g_free (*text);
  *text = g_steal_pointer (&clean);
}

/* Args are JSON text as the recorder wrote them: masked as JSON (chp_redact_json() knows member
 * names such as "password"); text that is not JSON is masked as text and kept as a string. */
static JsonNode *
mask_args (const char *args,
           guint      *redacted)
{
  g_autoptr(JsonParser) parser = json_parser_new_immutable ();
  JsonNode *clean;
  guint count = 0;

  if (args == NULL)
    return NULL;

  if (json_parser_load_from_data (parser, args, -1, NULL) && json_parser_get_root (parser))
    {
      clean = chp_redact_json (json_parser_get_root (parser), &count);
    }
  else
    {
      g_autofree char *text = chp_redact_text (args, &count);

      clean = json_node_new (JSON_NODE_VALUE);
      json_node_set_string (clean, text);
    }
  if (count > 0)
    (*redacted)++;

  return clean;
}

static void
mask_session (ReportSession *report)
{
  ChpTraceSession *session = report->session;

  mask_text (&session->agent, &report->redacted);
  mask_text (&session->device, &report->redacted);
  mask_text (&session->outcome, &report->redacted);
  for (guint i = 0; session->sites != NULL && session->sites[i] != NULL; i++)
    mask_text (&session->sites[i], &report->redacted);

  for (guint i = 0; i < report->steps->len; i++)
    {
      ReportStep *entry = g_ptr_array_index (report->steps, i);
      ChpTraceStep *step = entry->step;
      char **texts[] = {
        &step->tool, &step->outcome, &step->error_code, &step->rung, &step->host, &step->path,
        &step->role, &step->name, &step->decision, &step->stopped_by, &step->snippet,
      };

      for (guint t = 0; t < G_N_ELEMENTS (texts); t++)
        mask_text (texts[t], &report->redacted);
      entry->args = mask_args (step->args, &report->redacted);
      /* The unmasked text is not kept beside the masked one. */
      g_clear_pointer (&step->args, g_free);

      report->longest_us = MAX (report->longest_us,
                                MAX (step->queue_us, 0) + MAX (step->run_us, 0));
    }

  if (report->redacted > 0)
    g_debug ("report: session %s: texts masked again on export: %u", session->id,
             report->redacted);
}

/* ---- writing, in the worker ---------------------------------------------------------------- */

/* Beside @out under a name nobody has, so that @out is either the whole report or untouched. */
static GFile *
create_part (GFile              *out,
             GFileOutputStream **stream,
             GCancellable       *cancellable,
             GError            **error)
{
  g_autoptr(GFile) parent = g_file_get_parent (out);
  g_autofree char *base = g_file_get_basename (out);

  if (parent == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_FILENAME,
                   _("Cannot write the report to %s"), base);
      return NULL;
    }

  for (guint attempt = 0; ; attempt++)
    {
      g_autofree char *name = g_strdup_printf (".%s.%08x.part", base, g_random_int ());
      g_autoptr(GFile) part = g_file_get_child (parent, name);
      g_autoptr(GError) local_error = NULL;

      /* Private: the report is the person's until they choose to share it. */
      *stream = g_file_create (part, G_FILE_CREATE_PRIVATE, cancellable, &local_error);
      if (*stream != NULL)
        return g_steal_pointer (&part);
      if (attempt >= 4 || !g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_EXISTS))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
    }
}

static void
write_thread (GTask        *task,
              gpointer      source,
              gpointer      task_data,
              GCancellable *cancellable)
{
  ReportJob *job = task_data;
  g_autoptr(GFileOutputStream) stream = NULL;
  g_autoptr(GFile) part = NULL;
  g_autoptr(GError) error = NULL;
  ReportSink sink = { 0 };

  for (guint i = 0; i < job->sessions->len; i++)
    mask_session (g_ptr_array_index (job->sessions, i));

  part = create_part (job->out, &stream, cancellable, &error);
  if (part == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  sink.stream = G_OUTPUT_STREAM (stream);
  sink.cancellable = cancellable;
  sink.buffer = g_string_sized_new (SINK_CHUNK + 4096);
  if (job->json_only)
    chp_trace_report_write_json (&sink, job->sessions, job->exported_at, REPORT_SHOTS_BASE64,
                                 FALSE);
  else
    chp_trace_report_write_html (&sink, job->sessions, job->exported_at);
  chp_trace_report_sink_flush (&sink);
  g_string_free (sink.buffer, TRUE);
  error = sink.error;

  if (error == NULL)
    g_output_stream_close (G_OUTPUT_STREAM (stream), cancellable, &error);
  else
    g_output_stream_close (G_OUTPUT_STREAM (stream), NULL, NULL);
  if (error == NULL)
    g_file_move (part, job->out, G_FILE_COPY_OVERWRITE | G_FILE_COPY_NO_FALLBACK_FOR_MOVE,
                 cancellable, NULL, NULL, &error);

  if (error != NULL)
    {
      g_file_delete (part, NULL, NULL);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  g_task_return_boolean (task, TRUE);
}

/* ---- gathering, on the caller's main context ----------------------------------------------- */

static void load_next (GTask *task);
static void list_page (GTask *task);

static ReportSession *
report_session_new (ChpTraceSession *session)
{
  ReportSession *report = g_new0 (ReportSession, 1);

  report->session = session;
  report->steps = g_ptr_array_new_with_free_func ((GDestroyNotify) report_step_free);
  return report;
}

static void
listed_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ReportJob *job = g_task_get_task_data (task);
  g_autoptr(GPtrArray) page = NULL;
  GError *error = NULL;

  page = chp_store_list_traces_finish (CHP_STORE (source), result, &error);
  if (page == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  for (guint i = 0; i < page->len && job->sessions->len < job->last_n; i++)
    {
      ChpTraceSession *session = g_ptr_array_index (page, i);

      if (job->session_id == NULL || g_strcmp0 (session->id, job->session_id) == 0)
        g_ptr_array_add (job->sessions, report_session_new (chp_trace_session_copy (session)));
    }

  if (job->session_id != NULL && job->sessions->len == 0 && page->len == LIST_PAGE)
    {
      job->list_offset += LIST_PAGE;
      list_page (g_steal_pointer (&task));
      return;
    }

  if (job->sessions->len == 0)
    {
      if (job->session_id != NULL)
        g_task_return_new_error (task, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                                 _("There is no session “%s” in the traces."), job->session_id);
      else
        g_task_return_new_error (task, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                                 _("No agent session has been recorded yet."));
      return;
    }

  load_next (g_steal_pointer (&task));
}

static void
list_page (GTask *task)
{
  ReportJob *job = g_task_get_task_data (task);
  ChpStore *store = g_task_get_source_object (task);

  chp_store_list_traces_async (store, NULL, job->list_offset,
                               job->session_id != NULL ? LIST_PAGE : job->last_n,
                               g_task_get_cancellable (task), listed_cb, task);
}

static void
steps_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ReportJob *job = g_task_get_task_data (task);
  ReportSession *report = g_ptr_array_index (job->sessions, job->current);
  g_autoptr(GPtrArray) steps = NULL;
  g_autoptr(GError) error = NULL;
  guint kept;

  steps = chp_store_load_trace_steps_finish (CHP_STORE (source), result, &error);
  /* Forgotten since it was listed: it stays in the report, as a session without steps. */
  if (steps == NULL && !g_error_matches (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  /* Asked from a little before the newest CHP_TRACE_REPORT_MAX_STEPS (a step the store lost
   * still had its number): the newest of what came are kept. */
  if (steps != NULL && steps->len > CHP_TRACE_REPORT_MAX_STEPS)
    g_ptr_array_remove_range (steps, 0, steps->len - CHP_TRACE_REPORT_MAX_STEPS);
  if (steps != NULL)
    {
      gsize n = 0;
      g_autofree gpointer *taken = g_ptr_array_steal (steps, &n);

      for (gsize i = 0; i < n; i++)
        {
          ReportStep *entry = g_new0 (ReportStep, 1);

          entry->step = taken[i];
          g_ptr_array_add (report->steps, entry);
        }
    }

  kept = report->session->n_steps - MIN (report->session->n_trimmed, report->session->n_steps);
  report->steps_left_out = kept > report->steps->len ? kept - report->steps->len : 0;
  job->n_steps += report->steps->len;
  load_next (g_steal_pointer (&task));
}

static gboolean
is_jpeg (GBytes *bytes)
{
  gsize size = 0;
  const guint8 *data = bytes != NULL ? g_bytes_get_data (bytes, &size) : NULL;

  return size >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff;
}

static void
shot_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ReportJob *job = g_task_get_task_data (task);
  ReportSession *report = g_ptr_array_index (job->sessions, job->current);
  ReportStep *entry = g_ptr_array_index (report->steps, job->next_shot - 1);
  g_autoptr(ChpTraceShot) shot = NULL;
  g_autoptr(GError) error = NULL;

  shot = chp_store_load_trace_shot_finish (CHP_STORE (source), result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  /* A screenshot that cannot be read costs the report that picture, not the report. */
  if (shot == NULL)
    g_debug ("report: no screenshot for step %u of %s: %s", entry->step->seq,
             report->session->id, error->message);
  else if (!is_jpeg (shot->jpeg) ||
           job->shot_bytes + g_bytes_get_size (shot->jpeg) > CHP_TRACE_REPORT_MAX_SHOT_BYTES)
    entry->shot_left_out = TRUE;
  else
    {
      job->shot_bytes += g_bytes_get_size (shot->jpeg);
      entry->shot = g_steal_pointer (&shot);
    }

  load_next (g_steal_pointer (&task));
}

/* The next read: the current session's next screenshot, else the next session's steps, else the
 * writing. One read at a time: the store runs them in order anyway, and this keeps what is held
 * in memory to what the report needs. */
static void
load_next (GTask *task)
{
  ReportJob *job = g_task_get_task_data (task);
  ChpStore *store = g_task_get_source_object (task);
  GCancellable *cancellable = g_task_get_cancellable (task);

  while (job->current < job->sessions->len)
    {
      ReportSession *report = g_ptr_array_index (job->sessions, job->current);
      guint n_stored = report->session->n_steps;

      if (!job->steps_read)
        {
          /* The newest steps, where a session usually went wrong; all of them after that
           * number, trimmed once read (steps_cb). */
          job->steps_read = TRUE;
          job->next_shot = 0;
          chp_store_load_trace_steps_async (store, report->session->id,
                                            n_stored > CHP_TRACE_REPORT_MAX_STEPS
                                              ? n_stored - CHP_TRACE_REPORT_MAX_STEPS : 0,
                                            0, cancellable, steps_cb, task);
          return;
        }

      while (job->next_shot < report->steps->len)
        {
          ReportStep *entry = g_ptr_array_index (report->steps, job->next_shot++);

          if (!entry->step->has_shot)
            continue;
          if (job->shot_bytes >= CHP_TRACE_REPORT_MAX_SHOT_BYTES)
            {
              entry->shot_left_out = TRUE;
              continue;
            }
          chp_store_load_trace_shot_async (store, report->session->id, entry->step->seq,
                                           cancellable, shot_cb, task);
          return;
        }

      job->current++;
      job->steps_read = FALSE;
    }

  g_task_run_in_thread (task, write_thread);
  g_object_unref (task);
}

/**
 * chp_trace_report_is_json:
 * @out: where the report goes
 *
 * Returns: whether @out is written as JSON alone (its name ends in ".json", in any case), rather
 *   than as the HTML page with the JSON inside.
 */
gboolean
chp_trace_report_is_json (GFile *out)
{
  g_autofree char *base = NULL;
  gsize len;

  g_return_val_if_fail (G_IS_FILE (out), FALSE);

  base = g_file_get_basename (out);
  len = base != NULL ? strlen (base) : 0;
  return len >= 5 && g_ascii_strcasecmp (base + len - 5, ".json") == 0;
}

/**
 * chp_trace_report_write_async:
 * @store: an open store
 * @session_id: (nullable): the one session to export; %NULL for the newest @last_n
 * @last_n: how many of the newest sessions, 1 to %CHP_TRACE_REPORT_MAX_SESSIONS (ignored with
 *   a @session_id)
 * @out: the file to write, replaced whole once the report is complete; its name decides JSON or
 *   HTML (chp_trace_report_is_json()); created private (0600)
 *
 * Reads the sessions through @store, masks every text again and writes the bundle. Finish with
 * chp_trace_report_write_finish(): %CHP_STORE_ERROR_NOT_FOUND when there is no such session or
 * no session at all, a store or I/O error otherwise; @out is then left as it was.
 */
void
chp_trace_report_write_async (ChpStore            *store,
                              const char          *session_id,
                              guint                last_n,
                              GFile               *out,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  ReportJob *job;

  g_return_if_fail (CHP_IS_STORE (store));
  g_return_if_fail (G_IS_FILE (out));

  job = g_new0 (ReportJob, 1);
  job->session_id = g_strdup (session_id);
  job->last_n = CLAMP (last_n, 1, CHP_TRACE_REPORT_MAX_SESSIONS);
  job->out = g_object_ref (out);
  job->json_only = chp_trace_report_is_json (out);
  job->sessions = g_ptr_array_new_with_free_func ((GDestroyNotify) report_session_free);
  job->exported_at = g_get_real_time ();

  task = g_task_new (store, cancellable, callback, user_data);
  g_task_set_source_tag (task, chp_trace_report_write_async);
  g_task_set_task_data (task, job, (GDestroyNotify) report_job_free);

  list_page (g_steal_pointer (&task));
}

/**
 * chp_trace_report_write_finish:
 * @n_sessions: (out) (optional): how many sessions the report holds
 * @n_steps: (out) (optional): how many steps, all sessions together
 *
 * Returns: %TRUE once the whole report is in its file
 */
gboolean
chp_trace_report_write_finish (ChpStore      *store,
                               GAsyncResult  *result,
                               guint         *n_sessions,
                               guint         *n_steps,
                               GError       **error)
{
  ReportJob *job;

  g_return_val_if_fail (g_task_is_valid (result, store), FALSE);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == chp_trace_report_write_async,
                        FALSE);

  if (!g_task_propagate_boolean (G_TASK (result), error))
    return FALSE;

  job = g_task_get_task_data (G_TASK (result));
  if (n_sessions != NULL)
    *n_sessions = job->sessions->len;
  if (n_steps != NULL)
    *n_steps = job->n_steps;

  return TRUE;
}
