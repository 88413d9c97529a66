/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-list-refresh.c: ChpTraceList starting over (new filters, a forgotten session) and
 * following the engine's changes. A reset flushes the store's queue and reads the first page
 * behind the flush; what was shown stays until that page replaces it. A refresh flushes, inserts
 * the sessions begun since the snapshot at the top, and reads again the pages that hold a
 * changed session (or, under filters a change can move a session in or out of, those the view
 * shows): the items update in place, and a page that no longer lines up starts the list over.
 * One refresh at a time; what is told meanwhile makes one more after it. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-traces"

#include "chp-trace-list-private.h"

/* The most sessions a refresh inserts at the top; more, and the list is read afresh. */
#define FRESH_MAX 1000

static gint64
snapshot_now (ChpTraceList *self)
{
  gint64 now = g_get_real_time ();

  return self->query->until > 0 ? MIN (self->query->until, now) : now;
}

/* Filters that a session's later steps or its end can change: a refresh cannot tell from the
 * changed sessions alone where they now belong. */
static gboolean
query_is_mutable (const ChpTraceQuery *query)
{
  return query->search != NULL || query->outcome != NULL || query->site != NULL;
}

/* Reset: the filters changed, or the list is to be read whole again */

typedef struct
{
  ChpTraceList *self;       /* a reference */
  guint         generation;
  GHashTable   *dirty;      /* the ids this refresh is for */
  gboolean      all;
  gint64        until;      /* the snapshot it moves to */
} Step;

static Step *
step_new (ChpTraceList *self)
{
  Step *step = g_new0 (Step, 1);

  step->self = g_object_ref (self);
  step->generation = self->generation;
  return step;
}

static void
step_free (Step *step)
{
  g_object_unref (step->self);
  g_clear_pointer (&step->dirty, g_hash_table_unref);
  g_free (step);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Step, step_free)

static void
reset_flushed_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  if (!chp_store_trace_flush_finish (CHP_STORE (source), result, &error) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_message ("Traces: %s", error->message);
}

void
chp_trace_list_reset (ChpTraceList *self)
{
  self->generation++;
  self->refreshing = FALSE;
  self->refresh_again = FALSE;
  self->refresh_pending = 0;
  self->dirty_all = FALSE;
  g_hash_table_remove_all (self->dirty);
  /* What is on screen stays until the first page replaces it: no flash of an empty list. */
  self->resetting = TRUE;
  chp_trace_list_update_loading (self);

  /* The store runs its jobs in order, so a read pushed after the flush sees everything recorded
   * before it: both go at once, and the first page does not wait for the flush's answer to come
   * back through the main loop first (behind a frame being painted, a search's results came a
   * frame later). The flush is here to report entries that could not be written. */
  chp_store_trace_flush_async (self->store, self->cancellable, reset_flushed_cb, NULL);
  self->until = snapshot_now (self);
  self->inserted = 0;
  chp_trace_list_read_page (self, 0, TRUE, FALSE);
}

/* Refresh: sessions began, grew or ended */

static void
insert_fresh (ChpTraceList *self,
              GPtrArray    *fresh)
{
  guint old_len = self->slots->len;

  for (guint i = 0; i < fresh->len; i++)
    {
      const ChpTraceSession *session = g_ptr_array_index (fresh, i);
      ChpTraceItem *item = chp_trace_item_new ();

      chp_trace_item_set_session (item, session);
      g_ptr_array_insert (self->slots, i, item);
      chp_trace_list_note_agent (self, session->agent);
    }
  self->n_held += fresh->len;
  self->inserted += fresh->len;
  self->last_asked += fresh->len;

  g_list_model_items_changed (G_LIST_MODEL (self), 0, 0, fresh->len);
  if (self->slots->len != old_len)
    chp_trace_list_notify_count (self);
}

static void
add_page (GHashTable *pages,
          guint       position)
{
  g_hash_table_add (pages, GUINT_TO_POINTER (position - position % CHP_TRACE_LIST_PAGE_SIZE + 1));
}

static void
fresh_read_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(Step) step = user_data;
  ChpTraceList *self = step->self;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) fresh = chp_store_list_traces_finish (CHP_STORE (source), result, &error);
  g_autoptr(GHashTable) pages = NULL;
  g_autoptr(GList) starts = NULL;
  gboolean unseen = FALSE;

  if (step->generation != self->generation || self->store == NULL)
    return;
  if (fresh == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_message ("Could not read the new traces: %s", error->message);
      chp_trace_list_refresh_done (self);
      return;
    }
  if (fresh->len >= FRESH_MAX)
    {
      chp_trace_list_reset (self);
      return;
    }

  self->until = step->until;
  if (fresh->len > 0)
    insert_fresh (self, fresh);

  /* The pages holding a changed session are read again. */
  pages = g_hash_table_new (NULL, NULL);
  if (step->dirty != NULL)
    for (guint i = 0; i < fresh->len; i++)
      g_hash_table_remove (step->dirty,
                           ((ChpTraceSession *) g_ptr_array_index (fresh, i))->id);
  for (guint pos = fresh->len; pos < self->slots->len; pos++)
    {
      ChpTraceItem *item = g_ptr_array_index (self->slots, pos);

      if (item == NULL || !chp_trace_item_get_loaded (item))
        continue;
      if (step->all || g_hash_table_remove (step->dirty, chp_trace_item_get_id (item)))
        add_page (pages, pos);
    }
  unseen = step->all || g_hash_table_size (step->dirty) > 0;

  /* A session not held may have come to match the filters: what the person looks at is read
   * again, and starts over if it no longer lines up. */
  if (unseen && query_is_mutable (self->query) && self->slots->len > 0)
    {
      guint near = MIN (self->last_asked, self->slots->len - 1);

      add_page (pages, near);
      if (near >= CHP_TRACE_LIST_PAGE_SIZE)
        add_page (pages, near - CHP_TRACE_LIST_PAGE_SIZE);
      add_page (pages, 0);
    }

  starts = g_hash_table_get_keys (pages);
  for (GList *l = starts; l != NULL; l = l->next)
    {
      self->refresh_pending++;
      chp_trace_list_read_page (self, GPOINTER_TO_UINT (l->data) - 1, FALSE, TRUE);
    }
  if (self->refresh_pending == 0)
    chp_trace_list_refresh_done (self);
}

static void
refresh_flushed_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(Step) step = user_data;
  ChpTraceList *self = step->self;
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpTraceQuery) query = NULL;

  /* A lost entry is said once, to the first flush after it; the rest is still worth showing. */
  if (!chp_store_trace_flush_finish (CHP_STORE (source), result, &error) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_message ("Traces: %s", error->message);
  if (step->generation != self->generation || self->store == NULL)
    return;

  step->until = snapshot_now (self);
  query = chp_trace_query_copy (self->query);
  query->since = MAX (query->since, self->until + 1);
  query->until = step->until;
  chp_store_list_traces_async (self->store, query, 0, FRESH_MAX, self->cancellable,
                               fresh_read_cb, g_steal_pointer (&step));
}

void
chp_trace_list_start_refresh (ChpTraceList *self)
{
  Step *step = step_new (self);

  g_assert (!self->refreshing && !self->resetting);

  self->refreshing = TRUE;
  step->dirty = g_steal_pointer (&self->dirty);
  self->dirty = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  step->all = self->dirty_all;
  self->dirty_all = FALSE;
  chp_trace_list_update_loading (self);

  chp_store_trace_flush_async (self->store, self->cancellable, refresh_flushed_cb, step);
}

void
chp_trace_list_refresh_done (ChpTraceList *self)
{
  self->refreshing = FALSE;
  if (self->refresh_again && self->store != NULL)
    {
      self->refresh_again = FALSE;
      chp_trace_list_start_refresh (self);
    }
  chp_trace_list_update_loading (self);
}
