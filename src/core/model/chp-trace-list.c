/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-list.c: the store gives sessions a page at a time, newest first, and says nothing of
 * how many match; so the list grows as it is read. It holds what it has read, and one more
 * position (a placeholder) while more may follow: a view that asks for that one asks for the next
 * page. Positions are pinned to a snapshot (ChpTraceQuery.until): sessions begun since are not
 * listed until a refresh inserts them at the top in one items-changed, so pages read meanwhile
 * still land where they were meant (shifted by what was inserted), and a person scrolled down
 * is not thrown back up.
 *
 * The engine says when a session began, grew or ended (chp_trace_list_invalidate()); how the
 * list follows is chp-trace-list-refresh.c. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-traces"

#include "chp-trace-list-private.h"

enum {
  PROP_0,
  PROP_STORE,
  PROP_LOADING,
  PROP_COUNT,
  PROP_AGENTS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (ChpTraceList, chp_trace_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

/* On an item: a read that will fill it is out. */
static GQuark pending_quark;


static void
item_unref0 (gpointer item)
{
  if (item != NULL)
    g_object_unref (item);
}

static gboolean
is_pending (ChpTraceItem *item)
{
  return g_object_get_qdata (G_OBJECT (item), pending_quark) != NULL;
}

static void
set_pending (ChpTraceItem *item,
             gboolean      pending)
{
  g_object_set_qdata (G_OBJECT (item), pending_quark, GINT_TO_POINTER (pending));
}

void
chp_trace_list_update_loading (ChpTraceList *self)
{
  gboolean loading = self->resetting || self->refreshing;

  if (self->loading == loading)
    return;

  self->loading = loading;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOADING]);
}

void
chp_trace_list_note_agent (ChpTraceList *self,
            const char   *agent)
{
  guint i;

  if (agent == NULL || *agent == '\0')
    return;

  for (i = 0; i < self->agents->len; i++)
    {
      int cmp = g_utf8_collate (agent, g_ptr_array_index (self->agents, i));

      if (cmp == 0)
        return;
      if (cmp < 0)
        break;
    }

  g_ptr_array_insert (self->agents, i, g_strdup (agent));
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_AGENTS]);
}

/* Reading pages */

typedef struct
{
  ChpTraceList *self;       /* a reference */
  guint         generation;
  guint         inserted;   /* self->inserted when asked: what was inserted since shifts it */
  guint         offset;
  guint         limit;
  gboolean      first;      /* a reset's first page: it replaces the listing */
  gboolean      again;      /* a refresh reads it again: the ids must line up */
} PageRead;

static void
page_read_free (PageRead *read)
{
  g_object_unref (read->self);
  g_free (read);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (PageRead, page_read_free)

static void page_read_cb (GObject      *source,
                          GAsyncResult *result,
                          gpointer      user_data);

void
chp_trace_list_read_page (ChpTraceList *self,
           guint         offset,
           gboolean      first,
           gboolean      again)
{
  g_autoptr(ChpTraceQuery) query = chp_trace_query_copy (self->query);
  PageRead *read = g_new0 (PageRead, 1);

  read->self = g_object_ref (self);
  read->generation = self->generation;
  read->inserted = self->inserted;
  read->offset = offset;
  read->limit = CHP_TRACE_LIST_PAGE_SIZE;
  read->first = first;
  read->again = again;

  query->until = self->until;
  chp_store_list_traces_async (self->store, query, offset, read->limit, self->cancellable,
                               page_read_cb, read);
}

/* The page holding @position: placeholders where nothing is held, then its read. */
static void
request_page (ChpTraceList *self,
              guint         position)
{
  guint start = position - position % CHP_TRACE_LIST_PAGE_SIZE;
  guint end = MIN (start + CHP_TRACE_LIST_PAGE_SIZE, self->slots->len);

  for (guint pos = start; pos < end; pos++)
    {
      ChpTraceItem *item = g_ptr_array_index (self->slots, pos);

      if (item == NULL)
        {
          item = chp_trace_item_new ();
          self->slots->pdata[pos] = item;
          self->n_held++;
        }
      if (!chp_trace_item_get_loaded (item))
        set_pending (item, TRUE);
    }

  chp_trace_list_read_page (self, start, FALSE, FALSE);
}

void
chp_trace_list_notify_count (ChpTraceList *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COUNT]);
}

static void
remove_tail (ChpTraceList *self,
             guint         end)
{
  for (guint pos = end; pos < self->slots->len; pos++)
    if (g_ptr_array_index (self->slots, pos) != NULL)
      self->n_held--;
  g_ptr_array_set_size (self->slots, end);
}

static void
set_count (ChpTraceList *self,
           guint         old_len)
{
  guint len = self->slots->len;

  if (len > old_len)
    g_list_model_items_changed (G_LIST_MODEL (self), old_len, 0, len - old_len);
  else if (len < old_len)
    g_list_model_items_changed (G_LIST_MODEL (self), len, old_len - len, 0);
  if (len != old_len)
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COUNT]);
}

/* Puts a page's sessions where they now belong. Returns FALSE, having changed nothing, when a
 * page read again does not line up with what is held. */
static gboolean
fill (ChpTraceList   *self,
      const PageRead *read,
      GPtrArray      *sessions,
      gboolean        emit)
{
  guint start = read->offset + (self->inserted - read->inserted);
  guint old_len = self->slots->len;
  guint k = sessions->len;

  if (read->again)
    for (guint i = 0; i < k && start + i < old_len; i++)
      {
        ChpTraceItem *item = g_ptr_array_index (self->slots, start + i);
        const ChpTraceSession *session = g_ptr_array_index (sessions, i);

        if (item != NULL && chp_trace_item_get_loaded (item) &&
            g_strcmp0 (chp_trace_item_get_id (item), session->id) != 0)
          return FALSE;
      }

  for (guint i = 0; i < k; i++)
    {
      const ChpTraceSession *session = g_ptr_array_index (sessions, i);
      guint pos = start + i;

      if (pos < self->slots->len)
        {
          ChpTraceItem *item = g_ptr_array_index (self->slots, pos);

          /* Dropped meanwhile: read again when a view asks. */
          if (item == NULL)
            continue;
          set_pending (item, FALSE);
          chp_trace_item_set_session (item, session);
        }
      else
        {
          ChpTraceItem *item = chp_trace_item_new ();

          chp_trace_item_set_session (item, session);
          g_ptr_array_add (self->slots, item);
          self->n_held++;
        }
      chp_trace_list_note_agent (self, session->agent);
    }

  if (k < read->limit)
    {
      /* The listing ends here: what was held past it is gone (forgotten, evicted). */
      if (start + k < self->slots->len)
        remove_tail (self, start + k);
      self->more = FALSE;
    }
  else if (start + k >= self->slots->len)
    {
      g_ptr_array_add (self->slots, chp_trace_item_new ());
      self->n_held++;
      self->more = TRUE;
    }

  if (emit)
    set_count (self, old_len);
  return TRUE;
}

/* Keeps at most CHP_TRACE_LIST_MAX_HELD items, dropping those farthest from where the view
 * looks. A view keeps its own reference to what it shows; asked again, a dropped position is
 * read again. */
static void
drop_far (ChpTraceList *self)
{
  gint64 lo = 0, hi = (gint64) self->slots->len - 1;
  gint64 near = self->last_asked;

  while (self->n_held > CHP_TRACE_LIST_MAX_HELD && lo <= hi)
    {
      gint64 pos = near - lo >= hi - near ? lo++ : hi--;
      ChpTraceItem *item;

      if (ABS (pos - near) < 2 * CHP_TRACE_LIST_PAGE_SIZE)
        break;
      item = g_ptr_array_index (self->slots, pos);
      if (item == NULL || is_pending (item))
        continue;
      self->slots->pdata[pos] = NULL;
      g_object_unref (item);
      self->n_held--;
    }
}

static void
page_read_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(PageRead) read = user_data;
  ChpTraceList *self = read->self;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sessions = chp_store_list_traces_finish (CHP_STORE (source), result,
                                                                &error);

  if (read->generation != self->generation || self->store == NULL)
    return;

  if (sessions == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_message ("Could not read the traces: %s", error->message);
      /* What waited for this page may be asked for again. */
      for (guint i = 0; i < read->limit; i++)
        {
          guint pos = read->offset + (self->inserted - read->inserted) + i;
          ChpTraceItem *item = pos < self->slots->len ? g_ptr_array_index (self->slots, pos)
                                                      : NULL;

          if (item != NULL)
            set_pending (item, FALSE);
        }
    }
  else if (read->first)
    {
      guint old_len = self->slots->len;

      /* The old listing stayed on screen while this was read: now it is replaced at once. */
      g_ptr_array_set_size (self->slots, 0);
      self->n_held = 0;
      self->more = FALSE;
      fill (self, read, sessions, FALSE);
      if (old_len > 0 || self->slots->len > 0)
        {
          g_list_model_items_changed (G_LIST_MODEL (self), 0, old_len, self->slots->len);
          g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COUNT]);
        }
    }
  else if (!fill (self, read, sessions, TRUE))
    {
      g_debug ("The sessions moved under a refresh: reading them afresh");
      chp_trace_list_reset (self);
      return;
    }

  if (read->first)
    {
      self->resetting = FALSE;
      if (self->refresh_again)
        {
          self->refresh_again = FALSE;
          chp_trace_list_start_refresh (self);
        }
    }
  else if (read->again)
    {
      g_assert (self->refresh_pending > 0);
      if (--self->refresh_pending == 0)
        chp_trace_list_refresh_done (self);
    }

  drop_far (self);
  chp_trace_list_update_loading (self);
}

/* GListModel */

static GType
get_item_type (GListModel *model)
{
  return CHP_TYPE_TRACE_ITEM;
}

static guint
get_n_items (GListModel *model)
{
  return CHP_TRACE_LIST (model)->slots->len;
}

static gpointer
get_item (GListModel *model,
          guint       position)
{
  ChpTraceList *self = CHP_TRACE_LIST (model);
  ChpTraceItem *item;

  if (position >= self->slots->len)
    return NULL;

  self->last_asked = position;
  item = g_ptr_array_index (self->slots, position);
  /* While a reset reads, the old listing is shown as it is: its positions mean nothing now. */
  if (!self->resetting && self->store != NULL &&
      (item == NULL || (!chp_trace_item_get_loaded (item) && !is_pending (item))))
    {
      request_page (self, position);
      item = g_ptr_array_index (self->slots, position);
    }
  if (item == NULL)
    {
      item = chp_trace_item_new ();
      self->slots->pdata[position] = item;
      self->n_held++;
    }

  return g_object_ref (item);
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

/* GObject */

static void
chp_trace_list_constructed (GObject *object)
{
  ChpTraceList *self = CHP_TRACE_LIST (object);

  G_OBJECT_CLASS (chp_trace_list_parent_class)->constructed (object);

  g_assert (CHP_IS_STORE (self->store));
  chp_trace_list_reset (self);
}

static void
chp_trace_list_dispose (GObject *object)
{
  ChpTraceList *self = CHP_TRACE_LIST (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->store);

  G_OBJECT_CLASS (chp_trace_list_parent_class)->dispose (object);
}

static void
chp_trace_list_finalize (GObject *object)
{
  ChpTraceList *self = CHP_TRACE_LIST (object);

  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->slots, g_ptr_array_unref);
  g_clear_pointer (&self->dirty, g_hash_table_unref);
  g_clear_pointer (&self->agents, g_ptr_array_unref);
  g_clear_pointer (&self->query, chp_trace_query_free);

  G_OBJECT_CLASS (chp_trace_list_parent_class)->finalize (object);
}

static void
chp_trace_list_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  ChpTraceList *self = CHP_TRACE_LIST (object);

  switch (prop_id)
    {
    case PROP_STORE:
      g_value_set_object (value, self->store);
      break;

    case PROP_LOADING:
      g_value_set_boolean (value, self->loading);
      break;

    case PROP_COUNT:
      g_value_set_uint (value, self->slots->len);
      break;

    case PROP_AGENTS:
      g_value_set_boxed (value, self->agents->pdata);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_trace_list_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  ChpTraceList *self = CHP_TRACE_LIST (object);

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
chp_trace_list_class_init (ChpTraceListClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->constructed = chp_trace_list_constructed;
  object_class->dispose = chp_trace_list_dispose;
  object_class->finalize = chp_trace_list_finalize;
  object_class->get_property = chp_trace_list_get_property;
  object_class->set_property = chp_trace_list_set_property;

  properties[PROP_STORE] =
    g_param_spec_object ("store", NULL, NULL, CHP_TYPE_STORE,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /* TRUE while a new listing's first page is read, or a refresh runs: not yet "nothing". */
  properties[PROP_LOADING] = g_param_spec_boolean ("loading", NULL, NULL, FALSE, ro);
  /* The number of items, for bindings (GListModel has no such property in GLib 2.74). */
  properties[PROP_COUNT] = g_param_spec_uint ("count", NULL, NULL, 0, G_MAXUINT, 0, ro);
  /* The agents of the sessions read so far, sorted: the choices of an agent filter. */
  properties[PROP_AGENTS] = g_param_spec_boxed ("agents", NULL, NULL, G_TYPE_STRV, ro);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  pending_quark = g_quark_from_static_string ("chp-trace-list-pending");
}

static void
chp_trace_list_init (ChpTraceList *self)
{
  self->query = chp_trace_query_new ();
  self->cancellable = g_cancellable_new ();
  self->slots = g_ptr_array_new_with_free_func (item_unref0);
  self->dirty = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->agents = g_ptr_array_new_null_terminated (0, g_free, TRUE);
}

ChpTraceList *
chp_trace_list_new (ChpStore *store)
{
  g_return_val_if_fail (CHP_IS_STORE (store), NULL);

  return g_object_new (CHP_TYPE_TRACE_LIST, "store", store, NULL);
}

ChpStore *
chp_trace_list_get_store (ChpTraceList *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_LIST (self), NULL);

  return self->store;
}

const ChpTraceQuery *
chp_trace_list_get_query (ChpTraceList *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_LIST (self), NULL);

  return self->query;
}

static void
empty_is_none (char **text)
{
  if (*text != NULL && **text == '\0')
    g_clear_pointer (text, g_free);
}

static gboolean
query_equal (const ChpTraceQuery *a,
             const ChpTraceQuery *b)
{
  return g_strcmp0 (a->search, b->search) == 0 && g_strcmp0 (a->agent, b->agent) == 0 &&
         g_strcmp0 (a->outcome, b->outcome) == 0 && g_strcmp0 (a->site, b->site) == 0 &&
         a->since == b->since && a->until == b->until;
}

/* @query: (nullable): the filters; %NULL for every session */
void
chp_trace_list_set_query (ChpTraceList        *self,
                          const ChpTraceQuery *query)
{
  g_autoptr(ChpTraceQuery) copy = NULL;

  g_return_if_fail (CHP_IS_TRACE_LIST (self));

  copy = query != NULL ? chp_trace_query_copy (query) : chp_trace_query_new ();
  /* An empty word is no filter. */
  empty_is_none (&copy->search);
  empty_is_none (&copy->agent);
  empty_is_none (&copy->outcome);
  empty_is_none (&copy->site);
  if (copy->search != NULL)
    {
      g_strstrip (copy->search);
      empty_is_none (&copy->search);
    }

  if (query_equal (copy, self->query))
    return;

  chp_trace_query_free (self->query);
  self->query = g_steal_pointer (&copy);
  if (self->store != NULL)
    chp_trace_list_reset (self);
}

gboolean
chp_trace_list_get_loading (ChpTraceList *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_LIST (self), FALSE);

  return self->loading;
}

/* Returns: (transfer none): the agents of the sessions read so far, sorted */
const char * const *
chp_trace_list_get_agents (ChpTraceList *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_LIST (self), NULL);

  return (const char * const *) self->agents->pdata;
}

/**
 * chp_trace_list_invalidate:
 * @session_id: (nullable): the session that began, grew or ended; %NULL for any
 *
 * Says that the traces changed (the engine's ChpEngine::trace-changed). The list flushes the
 * store's queue and reads what changed; calls that come while it does make one more refresh
 * after it.
 */
void
chp_trace_list_invalidate (ChpTraceList *self,
                           const char   *session_id)
{
  g_return_if_fail (CHP_IS_TRACE_LIST (self));

  if (self->store == NULL)
    return;

  if (session_id != NULL)
    g_hash_table_add (self->dirty, g_strdup (session_id));
  else
    self->dirty_all = TRUE;

  if (self->refreshing || self->resetting)
    {
      self->refresh_again = TRUE;
      return;
    }

  chp_trace_list_start_refresh (self);
}

/* Reads the whole listing again (a session was forgotten, say). */
void
chp_trace_list_reload (ChpTraceList *self)
{
  g_return_if_fail (CHP_IS_TRACE_LIST (self));

  if (self->store != NULL)
    chp_trace_list_reset (self);
}
