/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-audit-list.c: the listing is pinned to a snapshot: position N is the N-th matching row,
 * newest first, among rows with an id up to top_id. Ids only grow and the log only loses its
 * oldest rows, so pages read later at an offset still land on the rows they were meant for
 * while new activity comes in. New rows join at the top in one items-changed, and rows the
 * bound trimmed leave at the bottom, so a person scrolled down the log is not thrown back up.
 *
 * Pages are read on demand (get_item hands out a placeholder that fills in place when its
 * page arrives) and only the last CHP_AUDIT_LIST_MAX_PAGES pages are kept. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-audit"

#include "chp-audit-list.h"

/* New activity arrives in bursts (a call is two entries, an agent makes many calls): wait for
 * the burst instead of counting after every row. */
#define REFRESH_DELAY_MS 250

struct _ChpAuditList
{
  GObject parent_instance;

  ChpStore *store;
  ChpAuditQuery *query;    /* the filters; the bounds are not used here */
  GCancellable *cancellable;

  gint64 top_id;           /* the snapshot: rows with a greater id are not listed yet */
  guint n_items;
  guint generation;        /* moves on every reset: older counts are dropped */

  GHashTable *pages;       /* page number -> GPtrArray of ChpAuditItem */
  GQueue lru;              /* page numbers + 1, most recently used last */

  guint refresh_id;
  gboolean refreshing;     /* a refresh or reset is being counted */
  gboolean refresh_again;  /* more activity came during it */
  gboolean loading;
};

enum {
  PROP_0,
  PROP_STORE,
  PROP_LOADING,
  PROP_COUNT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (ChpAuditList, chp_audit_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static void refresh (ChpAuditList *self);

static void
set_loading (ChpAuditList *self,
             gboolean      loading)
{
  if (self->loading == loading)
    return;

  self->loading = loading;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADING]);
}

static void
drop_pages (ChpAuditList *self)
{
  g_hash_table_remove_all (self->pages);
  g_queue_clear (&self->lru);
}

static ChpAuditQuery *
snapshot_query (ChpAuditList *self,
                gint64        after_id,
                gint64        up_to_id)
{
  ChpAuditQuery *query = chp_audit_query_copy (self->query);

  query->after_id = after_id;
  query->up_to_id = up_to_id;
  return query;
}

static void
page_loaded_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GPtrArray) items = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) entries = chp_store_query_audit_finish (CHP_STORE (source), result,
                                                               &error);

  if (entries == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_debug ("Could not read the activity log: %s", error->message);
      return;
    }

  /* The items stand for exactly these rows (the query was pinned to the snapshot), so they
   * are filled even when the list has moved on since: a view may still show them. */
  for (guint i = 0; i < entries->len && i < items->len; i++)
    chp_audit_item_set_entry (g_ptr_array_index (items, i), g_ptr_array_index (entries, i));
}

static GPtrArray *
load_page (ChpAuditList *self,
           guint         page)
{
  g_autoptr(ChpAuditQuery) query = snapshot_query (self, 0, self->top_id);
  guint first = page * CHP_AUDIT_LIST_PAGE_SIZE;
  guint size = MIN (CHP_AUDIT_LIST_PAGE_SIZE, self->n_items - first);
  GPtrArray *items = g_ptr_array_new_full (size, g_object_unref);

  for (guint i = 0; i < size; i++)
    g_ptr_array_add (items, chp_audit_item_new ());

  g_hash_table_insert (self->pages, GUINT_TO_POINTER (page), items);
  g_queue_push_tail (&self->lru, GUINT_TO_POINTER (page + 1));
  while (g_queue_get_length (&self->lru) > CHP_AUDIT_LIST_MAX_PAGES)
    {
      guint old = GPOINTER_TO_UINT (g_queue_pop_head (&self->lru)) - 1;

      g_hash_table_remove (self->pages, GUINT_TO_POINTER (old));
    }

  chp_store_query_audit_async (self->store, query, first, size, self->cancellable,
                               page_loaded_cb, g_ptr_array_ref (items));
  return items;
}

static GType
get_item_type (GListModel *model)
{
  return CHP_TYPE_AUDIT_ITEM;
}

static guint
get_n_items (GListModel *model)
{
  return CHP_AUDIT_LIST (model)->n_items;
}

static gpointer
get_item (GListModel *model,
          guint       position)
{
  ChpAuditList *self = CHP_AUDIT_LIST (model);
  guint page = position / CHP_AUDIT_LIST_PAGE_SIZE;
  GPtrArray *items;

  if (position >= self->n_items)
    return NULL;

  items = g_hash_table_lookup (self->pages, GUINT_TO_POINTER (page));
  if (items == NULL)
    {
      items = load_page (self, page);
    }
  else
    {
      /* Most recently used last; the queue holds at most MAX_PAGES entries. */
      g_queue_remove (&self->lru, GUINT_TO_POINTER (page + 1));
      g_queue_push_tail (&self->lru, GUINT_TO_POINTER (page + 1));
    }

  if (position % CHP_AUDIT_LIST_PAGE_SIZE >= items->len)
    return NULL;

  return g_object_ref (g_ptr_array_index (items, position % CHP_AUDIT_LIST_PAGE_SIZE));
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

static void
set_n_items (ChpAuditList *self,
             guint         n_items)
{
  if (self->n_items == n_items)
    return;

  self->n_items = n_items;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COUNT]);
}

typedef struct
{
  ChpAuditList *self;      /* a reference */
  guint         generation;
  gint64        added;     /* step two of a refresh: rows newer than the old snapshot */
  gint64        max_id;
} Counting;

static Counting *
counting_new (ChpAuditList *self)
{
  Counting *counting = g_new0 (Counting, 1);

  counting->self = g_object_ref (self);
  counting->generation = self->generation;
  return counting;
}

static void
counting_free (Counting *counting)
{
  g_object_unref (counting->self);
  g_free (counting);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Counting, counting_free)

static void
counting_done (ChpAuditList *self)
{
  self->refreshing = FALSE;
  set_loading (self, FALSE);

  /* Disposed while counting: nothing more to read. */
  if (self->store == NULL)
    return;

  if (self->refresh_again)
    {
      self->refresh_again = FALSE;
      refresh (self);
    }
}

static void
reset_counted_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(Counting) counting = user_data;
  ChpAuditList *self = counting->self;
  g_autoptr(GError) error = NULL;
  ChpAuditCount count;

  if (!chp_store_count_audit_finish (CHP_STORE (source), result, &count, &error))
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_message ("Could not count the activity log: %s", error->message);
      if (counting->generation == self->generation)
        counting_done (self);
      return;
    }

  if (counting->generation != self->generation)
    return;

  g_assert (self->n_items == 0);
  self->top_id = count.max_id;
  set_n_items (self, (guint) MIN (count.count, G_MAXUINT));
  if (self->n_items > 0)
    g_list_model_items_changed (G_LIST_MODEL (self), 0, 0, self->n_items);
  counting_done (self);
}

/* Starts over: the filters changed, or the log was cleared. */
static void
reset (ChpAuditList *self)
{
  guint removed = self->n_items;

  self->generation++;
  g_clear_handle_id (&self->refresh_id, g_source_remove);
  self->refresh_again = FALSE;
  self->refreshing = TRUE;
  drop_pages (self);
  self->top_id = 0;
  set_n_items (self, 0);
  if (removed > 0)
    g_list_model_items_changed (G_LIST_MODEL (self), 0, removed, 0);

  set_loading (self, TRUE);
  chp_store_count_audit_async (self->store, self->query, self->cancellable, reset_counted_cb,
                               counting_new (self));
}

static void
refresh_total_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(Counting) counting = user_data;
  ChpAuditList *self = counting->self;
  g_autoptr(GError) error = NULL;
  ChpAuditCount count;
  gint64 grown, removed;

  if (!chp_store_count_audit_finish (CHP_STORE (source), result, &count, &error))
    {
      if (counting->generation == self->generation)
        counting_done (self);
      return;
    }
  if (counting->generation != self->generation)
    return;

  grown = (gint64) self->n_items + counting->added;
  removed = grown - count.count;
  if (removed < 0 || count.count > G_MAXUINT)
    {
      /* Not what adding at the top and trimming at the bottom can produce: read it afresh. */
      reset (self);
      return;
    }

  /* Positions moved: cached pages no longer line up with them. */
  drop_pages (self);
  self->top_id = counting->max_id;
  set_n_items (self, (guint) count.count);
  if (counting->added > 0)
    g_list_model_items_changed (G_LIST_MODEL (self), 0, 0, (guint) counting->added);
  if (removed > 0)
    g_list_model_items_changed (G_LIST_MODEL (self), (guint) count.count, (guint) removed, 0);
  counting_done (self);
}

static void
refresh_added_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(Counting) counting = user_data;
  ChpAuditList *self = counting->self;
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpAuditQuery) query = NULL;
  ChpAuditCount count;

  if (!chp_store_count_audit_finish (CHP_STORE (source), result, &count, &error))
    {
      if (counting->generation == self->generation)
        counting_done (self);
      return;
    }
  if (counting->generation != self->generation)
    return;

  /* Then everything up to the same id: both counts describe one snapshot. */
  counting->added = count.count;
  counting->max_id = count.max_id;
  query = snapshot_query (self, 0, MAX (count.max_id, 1));
  chp_store_count_audit_async (self->store, query, self->cancellable, refresh_total_cb,
                               g_steal_pointer (&counting));
}

static void
refresh (ChpAuditList *self)
{
  g_autoptr(ChpAuditQuery) query = NULL;

  if (self->refreshing)
    {
      self->refresh_again = TRUE;
      return;
    }

  self->refreshing = TRUE;
  query = snapshot_query (self, self->top_id, 0);
  chp_store_count_audit_async (self->store, query, self->cancellable, refresh_added_cb,
                               counting_new (self));
}

static gboolean
refresh_cb (gpointer user_data)
{
  ChpAuditList *self = user_data;

  self->refresh_id = 0;
  refresh (self);

  return G_SOURCE_REMOVE;
}

static void
audit_changed_cb (ChpStore     *store,
                  gboolean      cleared,
                  ChpAuditList *self)
{
  if (cleared)
    {
      reset (self);
      return;
    }

  if (self->refresh_id == 0)
    self->refresh_id = g_timeout_add (REFRESH_DELAY_MS, refresh_cb, self);
}

static void
chp_audit_list_constructed (GObject *object)
{
  ChpAuditList *self = CHP_AUDIT_LIST (object);

  G_OBJECT_CLASS (chp_audit_list_parent_class)->constructed (object);

  g_assert (CHP_IS_STORE (self->store));
  g_signal_connect_object (self->store, "audit-changed", G_CALLBACK (audit_changed_cb), self,
                           G_CONNECT_DEFAULT);
  reset (self);
}

static void
chp_audit_list_dispose (GObject *object)
{
  ChpAuditList *self = CHP_AUDIT_LIST (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_handle_id (&self->refresh_id, g_source_remove);
  drop_pages (self);
  g_clear_object (&self->store);

  G_OBJECT_CLASS (chp_audit_list_parent_class)->dispose (object);
}

static void
chp_audit_list_finalize (GObject *object)
{
  ChpAuditList *self = CHP_AUDIT_LIST (object);

  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->pages, g_hash_table_unref);
  g_clear_pointer (&self->query, chp_audit_query_free);

  G_OBJECT_CLASS (chp_audit_list_parent_class)->finalize (object);
}

static void
chp_audit_list_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  ChpAuditList *self = CHP_AUDIT_LIST (object);

  switch (prop_id)
    {
    case PROP_STORE:
      g_value_set_object (value, self->store);
      break;

    case PROP_LOADING:
      g_value_set_boolean (value, self->loading);
      break;

    case PROP_COUNT:
      g_value_set_uint (value, self->n_items);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_audit_list_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  ChpAuditList *self = CHP_AUDIT_LIST (object);

  switch (prop_id)
    {
    case PROP_STORE:
      self->store = g_value_dup_object (value);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_audit_list_class_init (ChpAuditListClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->constructed = chp_audit_list_constructed;
  object_class->dispose = chp_audit_list_dispose;
  object_class->finalize = chp_audit_list_finalize;
  object_class->get_property = chp_audit_list_get_property;
  object_class->set_property = chp_audit_list_set_property;

  properties[PROP_STORE] =
    g_param_spec_object ("store", NULL, NULL, CHP_TYPE_STORE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /* TRUE while the rows matching new filters are being counted: not yet "nothing found". */
  properties[PROP_LOADING] = g_param_spec_boolean ("loading", NULL, NULL, FALSE, ro);
  /* The number of items, for bindings (GListModel has no such property in GLib 2.74). */
  properties[PROP_COUNT] = g_param_spec_uint ("count", NULL, NULL, 0, G_MAXUINT, 0, ro);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
chp_audit_list_init (ChpAuditList *self)
{
  self->query = chp_audit_query_new ();
  self->cancellable = g_cancellable_new ();
  self->pages = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) g_ptr_array_unref);
  g_queue_init (&self->lru);
}

ChpAuditList *
chp_audit_list_new (ChpStore *store)
{
  g_return_val_if_fail (CHP_IS_STORE (store), NULL);

  return g_object_new (CHP_TYPE_AUDIT_LIST, "store", store, NULL);
}

ChpStore *
chp_audit_list_get_store (ChpAuditList *self)
{
  g_return_val_if_fail (CHP_IS_AUDIT_LIST (self), NULL);

  return self->store;
}

const ChpAuditQuery *
chp_audit_list_get_query (ChpAuditList *self)
{
  g_return_val_if_fail (CHP_IS_AUDIT_LIST (self), NULL);

  return self->query;
}

/* @query: (nullable): the filters (its id bounds are ignored); %NULL for every row */
void
chp_audit_list_set_query (ChpAuditList        *self,
                          const ChpAuditQuery *query)
{
  g_autoptr(ChpAuditQuery) copy = NULL;

  g_return_if_fail (CHP_IS_AUDIT_LIST (self));

  copy = query != NULL ? chp_audit_query_copy (query) : chp_audit_query_new ();
  copy->after_id = 0;
  copy->up_to_id = 0;
  /* An empty search is no search. */
  if (copy->search != NULL && *copy->search == '\0')
    g_clear_pointer (&copy->search, g_free);

  if (chp_audit_query_equal (copy, self->query))
    return;

  chp_audit_query_free (self->query);
  self->query = g_steal_pointer (&copy);
  reset (self);
}

gboolean
chp_audit_list_get_loading (ChpAuditList *self)
{
  g_return_val_if_fail (CHP_IS_AUDIT_LIST (self), FALSE);

  return self->loading;
}

/* Reads the whole listing again (say, after the window was hidden for a long while). */
void
chp_audit_list_reload (ChpAuditList *self)
{
  g_return_if_fail (CHP_IS_AUDIT_LIST (self));

  reset (self);
}
