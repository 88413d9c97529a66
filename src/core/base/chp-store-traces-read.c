/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-traces-read.c: reading traces: sessions newest first, filtered and searched; one
 * session's steps a page at a time; one step's screenshot. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-traces-private.h"

#include <glib/gi18n.h>
#include <string.h>

#define TRACE_LIST_MAX         1000
#define TRACE_SEARCH_MAX_WORDS 16

/* A search's last word, typed in part, is matched as the words it begins, up to this many;
 * past that (a letter or two), as a whole word. */
#define TRACE_EXPAND_MAX 128

typedef struct
{
  ChpTraceQuery *query;
  GPtrArray     *words;   /* the search's, lowered; NULL for none */
  guint          offset;
  guint          limit;
} TraceRead;

static void
trace_read_free (TraceRead *read)
{
  chp_trace_query_free (read->query);
  g_clear_pointer (&read->words, g_ptr_array_unref);
  g_free (read);
}

static void
add_search_word_cb (const char *word,
                    gsize       len,
                    gboolean    digits,
                    gpointer    data)
{
  GPtrArray *words = data;

  if (words->len < TRACE_SEARCH_MAX_WORDS)
    g_ptr_array_add (words, g_strndup (word, len));
}

/* The search as an FTS5 query: every word whole, ANDed, but the last, which may be typed in
 * part: the words it begins, ORed (chp-store-traces-words.c). Each is an exact term the index
 * reads lazily, newest first, so a search stops once it has its page. A last word the words do
 * not know (a number) is a prefix term after all, which is cheap when it is rare. */
static char *
build_match (ChpStore   *self,
             GPtrArray  *words,
             GError    **error)
{
  g_autoptr(GString) match = g_string_new (NULL);
  g_autoptr(GPtrArray) expanded = NULL;
  const char *last = g_ptr_array_index (words, words->len - 1);
  GError *local_error = NULL;

  for (guint i = 0; i + 1 < words->len; i++)
    g_string_append_printf (match, "\"%s\" AND ", (const char *) g_ptr_array_index (words, i));

  expanded = chp_store_traces_expand (self, last, TRACE_EXPAND_MAX, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, local_error);
      return NULL;
    }

  if (expanded == NULL)
    g_string_append_printf (match, "\"%s\"", last);
  else if (expanded->len == 0)
    g_string_append_printf (match, "\"%s\"*", last);
  else
    {
      g_string_append_c (match, '(');
      for (guint i = 0; i < expanded->len; i++)
        g_string_append_printf (match, "%s\"%s\"", i > 0 ? " OR " : "",
                                (const char *) g_ptr_array_index (expanded, i));
      g_string_append_c (match, ')');
    }

  return g_string_free (g_steal_pointer (&match), FALSE);
}

static void
bind_filters (sqlite3_stmt        *stmt,
              const ChpTraceQuery *query)
{
  chp_store_bind_text (stmt, 1, query->agent);
  chp_store_bind_text (stmt, 2, query->outcome);
  chp_store_bind_text (stmt, 3, query->site);
  sqlite3_bind_int64 (stmt, 4, query->since > 0 ? query->since : G_MININT64);
  sqlite3_bind_int64 (stmt, 5, query->until > 0 ? query->until : G_MAXINT64);
}

/* Columns SESSION_COLUMNS (chp-store-traces-schema.c). */
static ChpTraceSession *
read_session (sqlite3_stmt *stmt)
{
  ChpTraceSession *session = g_new0 (ChpTraceSession, 1);

  session->id = chp_store_column_dup (stmt, 1);
  session->agent = chp_store_column_dup (stmt, 2);
  session->device = chp_store_column_dup (stmt, 3);
  session->started_at = sqlite3_column_int64 (stmt, 4);
  session->ended_at = sqlite3_column_int64 (stmt, 5);
  session->last_at = sqlite3_column_int64 (stmt, 6);
  session->outcome = chp_store_column_dup (stmt, 7);
  session->n_steps = sqlite3_column_int (stmt, 8);
  session->n_errors = sqlite3_column_int (stmt, 9);
  session->n_asked = sqlite3_column_int (stmt, 10);
  session->n_approved = sqlite3_column_int (stmt, 11);
  session->n_trimmed = sqlite3_column_int (stmt, 12);

  return session;
}

static gboolean
read_sites (ChpStore         *self,
            ChpTraceSession  *session,
            gint64            key,
            GError          **error)
{
  sqlite3_stmt *stmt = chp_store_traces_stmt (self, TSTMT_SITES_OF, error);
  g_autoptr(GStrvBuilder) sites = g_strv_builder_new ();
  int rc;

  if (stmt == NULL)
    return FALSE;

  sqlite3_bind_int64 (stmt, 1, key);
  sqlite3_bind_int (stmt, 2, CHP_TRACE_LIST_SITES);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_strv_builder_add (sites, (const char *) sqlite3_column_text (stmt, 0));
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "trace");
      return FALSE;
    }

  session->sites = g_strv_builder_end (sites);
  return TRUE;
}

/* Appends what a bound session statement gives, and the keys alongside. */
static int
collect_sessions (sqlite3_stmt *stmt,
                  GPtrArray    *sessions,
                  GArray       *keys)
{
  int rc;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      gint64 key = sqlite3_column_int64 (stmt, 0);

      g_ptr_array_add (sessions, read_session (stmt));
      g_array_append_val (keys, key);
    }
  sqlite3_reset (stmt);

  return rc;
}

/* Walks the index's matches newest first (their rowids are step ids, and a step id holds its
 * session's key): each new session is checked against the filters until the page is full.
 * Only the matches of the sessions on or before the page are read. */
static int
search_sessions (ChpStore         *self,
                 const TraceRead  *read,
                 GPtrArray        *sessions,
                 GArray           *keys,
                 GError          **error)
{
  g_autofree char *match = build_match (self, read->words, error);
  sqlite3_stmt *search;
  sqlite3_stmt *one;
  gint64 last = -1;
  guint skipped = 0;
  int rc = SQLITE_DONE;

  if (match == NULL || !(search = chp_store_traces_stmt (self, TSTMT_SEARCH, error)))
    return SQLITE_ERROR;
  sqlite3_bind_text (search, 1, match, -1, SQLITE_STATIC);

  while (sessions->len < read->limit && (rc = sqlite3_step (search)) == SQLITE_ROW)
    {
      gint64 key = TRACE_KEY_OF (sqlite3_column_int64 (search, 0));

      if (key == last)
        continue;
      last = key;

      if (!(one = chp_store_traces_stmt (self, TSTMT_LIST_ONE, error)))
        break;
      bind_filters (one, read->query);
      sqlite3_bind_int64 (one, 6, key);
      rc = sqlite3_step (one);
      if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        {
          sqlite3_reset (one);
          break;
        }
      if (rc == SQLITE_ROW)
        {
          if (skipped < read->offset)
            skipped++;
          else
            {
              g_ptr_array_add (sessions, read_session (one));
              g_array_append_val (keys, key);
            }
        }
      sqlite3_reset (one);
    }
  if (sessions->len >= read->limit)
    rc = SQLITE_DONE;
  sqlite3_reset (search);

  return rc;
}

static gpointer
list_job (ChpStore  *self,
          gpointer   data,
          GError   **error)
{
  TraceRead *read = data;
  g_autoptr(GPtrArray) sessions =
    g_ptr_array_new_with_free_func ((GDestroyNotify) chp_trace_session_free);
  g_autoptr(GArray) keys = g_array_new (FALSE, FALSE, sizeof (gint64));
  sqlite3_stmt *stmt;
  int rc;

  if (!chp_store_traces_ready (self, error))
    return NULL;

  if (read->words != NULL)
    {
      rc = search_sessions (self, read, sessions, keys, error);
    }
  else
    {
      if (!(stmt = chp_store_traces_stmt (self, TSTMT_LIST, error)))
        return NULL;
      bind_filters (stmt, read->query);
      sqlite3_bind_int64 (stmt, 6, read->limit);
      sqlite3_bind_int64 (stmt, 7, read->offset);
      rc = collect_sessions (stmt, sessions, keys);
    }

  if (rc != SQLITE_DONE)
    {
      if (error == NULL || *error == NULL)
        chp_store_set_sqlite_error (error, self->db, rc, "trace");
      chp_store_traces_note_error (self, rc);
      return NULL;
    }

  for (guint i = 0; i < sessions->len; i++)
    if (!read_sites (self, g_ptr_array_index (sessions, i), g_array_index (keys, gint64, i), error))
      return NULL;

  return g_steal_pointer (&sessions);
}

/**
 * chp_store_list_traces_async:
 * @query: (nullable): the filters; %NULL for every session
 * @offset: how many matching sessions to skip, newest first
 * @limit: how many at most (1 to 1000)
 *
 * One page of sessions, newest first. Finish with chp_store_list_traces_finish().
 */
void
chp_store_list_traces_async (ChpStore            *self,
                             const ChpTraceQuery *query,
                             guint                offset,
                             guint                limit,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  TraceRead *read;

  g_return_if_fail (CHP_IS_STORE (self));

  read = g_new0 (TraceRead, 1);
  read->query = query != NULL ? chp_trace_query_copy (query) : chp_trace_query_new ();
  if (read->query->search != NULL && g_utf8_validate (read->query->search, -1, NULL))
    {
      read->words = g_ptr_array_new_with_free_func (g_free);
      chp_store_traces_each_word (read->query->search, add_search_word_cb, read->words);
      if (read->words->len == 0)
        g_clear_pointer (&read->words, g_ptr_array_unref);
    }
  read->offset = offset;
  read->limit = CLAMP (limit, 1, TRACE_LIST_MAX);
  chp_store_push_job (self, JOB_READ, list_job, read, (GDestroyNotify) trace_read_free,
                      (GDestroyNotify) g_ptr_array_unref, chp_store_list_traces_async,
                      cancellable, callback, user_data);
}

/* Returns: (transfer full) (element-type ChpTraceSession): the sessions, newest first */
GPtrArray *
chp_store_list_traces_finish (ChpStore      *self,
                              GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

typedef struct
{
  char  *session_id;
  guint  seq;     /* steps after this one; the screenshot's step */
  guint  limit;
} StepsRead;

static void
steps_read_free (StepsRead *read)
{
  g_free (read->session_id);
  g_free (read);
}

static gboolean
key_of (ChpStore    *self,
        const char  *session_id,
        gint64      *key,
        GError     **error)
{
  sqlite3_stmt *stmt = chp_store_traces_stmt (self, TSTMT_KEY_OF, error);
  int rc;

  if (stmt == NULL)
    return FALSE;

  chp_store_bind_text (stmt, 1, session_id);
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    *key = sqlite3_column_int64 (stmt, 0);
  sqlite3_reset (stmt);

  if (rc == SQLITE_DONE)
    g_set_error_literal (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                         _("There is no such session in the traces"));
  else if (rc != SQLITE_ROW)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "trace");
      chp_store_traces_note_error (self, rc);
    }

  return rc == SQLITE_ROW;
}

/* Columns of TSTMT_STEPS. */
static ChpTraceStep *
read_step (sqlite3_stmt *stmt)
{
  ChpTraceStep *step = chp_trace_step_new ();

  step->seq = TRACE_SEQ_OF (sqlite3_column_int64 (stmt, 0));
  step->at = sqlite3_column_int64 (stmt, 1);
  step->tool = chp_store_column_dup (stmt, 2);
  step->args = chp_store_column_dup (stmt, 3);
  step->queue_us = sqlite3_column_int64 (stmt, 4);
  step->run_us = sqlite3_column_int64 (stmt, 5);
  step->page_us = sqlite3_column_int64 (stmt, 6);
  step->outcome = chp_store_column_dup (stmt, 7);
  step->error_code = chp_store_column_dup (stmt, 8);
  step->rung = chp_store_column_dup (stmt, 9);
  step->host = chp_store_column_dup (stmt, 10);
  step->path = chp_store_column_dup (stmt, 11);
  step->role = chp_store_column_dup (stmt, 12);
  step->name = chp_store_column_dup (stmt, 13);
  step->decision_kind =
    chp_trace_decision_from_string ((const char *) sqlite3_column_text (stmt, 14));
  step->decision = chp_store_column_dup (stmt, 15);
  step->decision_wait_us = sqlite3_column_int64 (stmt, 16);
  step->stopped_by = chp_store_column_dup (stmt, 17);
  step->retry = sqlite3_column_int (stmt, 18);
  step->snippet = chp_store_column_dup (stmt, 19);
  step->has_shot = sqlite3_column_int (stmt, 20) != 0;

  return step;
}

static gpointer
load_steps_job (ChpStore  *self,
                gpointer   data,
                GError   **error)
{
  StepsRead *read = data;
  g_autoptr(GPtrArray) steps =
    g_ptr_array_new_with_free_func ((GDestroyNotify) chp_trace_step_free);
  sqlite3_stmt *stmt;
  gint64 key = 0;
  int rc;

  if (!chp_store_traces_ready (self, error) ||
      !key_of (self, read->session_id, &key, error) ||
      !(stmt = chp_store_traces_stmt (self, TSTMT_STEPS, error)))
    return NULL;

  sqlite3_bind_int64 (stmt, 1, TRACE_STEP_ID (key, read->seq));
  sqlite3_bind_int64 (stmt, 2, TRACE_STEP_ID (key + 1, 0));
  sqlite3_bind_int64 (stmt, 3, read->limit);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (steps, read_step (stmt));
  sqlite3_reset (stmt);

  if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "trace");
      chp_store_traces_note_error (self, rc);
      return NULL;
    }

  return g_steal_pointer (&steps);
}

/**
 * chp_store_load_trace_steps_async:
 * @session_id: the session's id
 * @after_seq: only steps after this one (0: from the first)
 * @limit: how many at most; 0 for all
 *
 * A session's steps in order, a page at a time. Finish with
 * chp_store_load_trace_steps_finish(); %CHP_STORE_ERROR_NOT_FOUND when there is no such session.
 */
void
chp_store_load_trace_steps_async (ChpStore            *self,
                                  const char          *session_id,
                                  guint                after_seq,
                                  guint                limit,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  StepsRead *read;

  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (session_id != NULL);

  read = g_new0 (StepsRead, 1);
  read->session_id = g_strdup (session_id);
  read->seq = MIN (after_seq, CHP_TRACE_MAX_STEPS);
  read->limit = limit > 0 ? limit : CHP_TRACE_MAX_STEPS;
  chp_store_push_job (self, JOB_READ, load_steps_job, read, (GDestroyNotify) steps_read_free,
                      (GDestroyNotify) g_ptr_array_unref, chp_store_load_trace_steps_async,
                      cancellable, callback, user_data);
}

/* Returns: (transfer full) (element-type ChpTraceStep): the steps, in order */
GPtrArray *
chp_store_load_trace_steps_finish (ChpStore      *self,
                                   GAsyncResult  *result,
                                   GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static gpointer
load_shot_job (ChpStore  *self,
               gpointer   data,
               GError   **error)
{
  StepsRead *read = data;
  ChpTraceShot *shot = NULL;
  sqlite3_stmt *stmt;
  gint64 key = 0;
  int rc;

  if (!chp_store_traces_ready (self, error) ||
      !key_of (self, read->session_id, &key, error) ||
      !(stmt = chp_store_traces_stmt (self, TSTMT_SHOT, error)))
    return NULL;

  sqlite3_bind_int64 (stmt, 1, TRACE_STEP_ID (key, read->seq));
  rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      shot = g_new0 (ChpTraceShot, 1);
      shot->width = sqlite3_column_int (stmt, 0);
      shot->height = sqlite3_column_int (stmt, 1);
      shot->jpeg = g_bytes_new (sqlite3_column_blob (stmt, 2), sqlite3_column_bytes (stmt, 2));
    }
  sqlite3_reset (stmt);

  if (rc == SQLITE_DONE)
    g_set_error_literal (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                         _("This step has no screenshot"));
  else if (rc != SQLITE_ROW)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "trace");
      chp_store_traces_note_error (self, rc);
    }

  return shot;
}

/* A step's screenshot. Finish with chp_store_load_trace_shot_finish(); NOT_FOUND when the step
 * has none. */
void
chp_store_load_trace_shot_async (ChpStore            *self,
                                 const char          *session_id,
                                 guint                seq,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  StepsRead *read;

  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (session_id != NULL);
  g_return_if_fail (seq > 0 && seq <= CHP_TRACE_MAX_STEPS);

  read = g_new0 (StepsRead, 1);
  read->session_id = g_strdup (session_id);
  read->seq = seq;
  chp_store_push_job (self, JOB_READ, load_shot_job, read, (GDestroyNotify) steps_read_free,
                      (GDestroyNotify) chp_trace_shot_free, chp_store_load_trace_shot_async,
                      cancellable, callback, user_data);
}

/* Returns: (transfer full): the screenshot */
ChpTraceShot *
chp_store_load_trace_shot_finish (ChpStore      *self,
                                  GAsyncResult  *result,
                                  GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}
