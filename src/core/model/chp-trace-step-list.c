/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-step-list.c: steps only ever join a session at its end (a step's number is its
 * place), so the list is what has been read, in order: a view that asks for one of the last
 * rows read makes it read the next page, and a session that grew is read from its last step
 * on. The longest step read so far scales the timing bars. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-traces"

#include "chp-trace-step-list.h"

struct _ChpTraceStepList
{
  GObject parent_instance;

  ChpStore *store;
  char *session_id;
  GCancellable *cancellable;

  GPtrArray *items;         /* ChpTraceStepItem, in order */
  gboolean more;            /* the last read was a full page: more may follow */
  gboolean reading;
  gboolean read_again;      /* the session grew while a page was read */
  gboolean loading;         /* the first page is being read */
  gboolean gone;            /* the store has no such session (forgotten, evicted) */
  gint64 longest_us;
};

enum {
  PROP_0,
  PROP_LOADING,
  PROP_GONE,
  PROP_LONGEST_US,
  PROP_COUNT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (ChpTraceStepList, chp_trace_step_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static void read_next (ChpTraceStepList *self);

static void
set_boolean (ChpTraceStepList *self,
             gboolean         *field,
             gboolean          value,
             guint             prop)
{
  if (*field == value)
    return;

  *field = value;
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop]);
}

static guint
last_seq (ChpTraceStepList *self)
{
  ChpTraceStepItem *last;

  if (self->items->len == 0)
    return 0;
  last = g_ptr_array_index (self->items, self->items->len - 1);
  return chp_trace_step_item_get_step (last)->seq;
}

static void
steps_read_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(ChpTraceStepList) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) steps = chp_store_load_trace_steps_finish (CHP_STORE (source), result,
                                                                  &error);
  guint old_len = self->items->len;
  gint64 longest = self->longest_us;

  self->reading = FALSE;
  if (self->store == NULL)
    return;

  if (steps == NULL)
    {
      if (g_error_matches (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND))
        set_boolean (self, &self->gone, TRUE, PROP_GONE);
      else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_message ("Could not read a session's steps: %s", error->message);
      self->more = FALSE;
      set_boolean (self, &self->loading, FALSE, PROP_LOADING);
      return;
    }

  for (guint i = 0; i < steps->len; i++)
    {
      ChpTraceStepItem *item = chp_trace_step_item_new (g_ptr_array_index (steps, i));

      longest = MAX (longest, chp_trace_step_item_get_total_us (item));
      g_ptr_array_add (self->items, item);
    }
  self->more = steps->len == CHP_TRACE_STEP_LIST_PAGE_SIZE;

  if (longest != self->longest_us)
    {
      self->longest_us = longest;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LONGEST_US]);
    }
  if (self->items->len > old_len)
    {
      g_list_model_items_changed (G_LIST_MODEL (self), old_len, 0, self->items->len - old_len);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COUNT]);
    }
  set_boolean (self, &self->loading, FALSE, PROP_LOADING);

  if (self->read_again)
    {
      self->read_again = FALSE;
      read_next (self);
    }
}

static void
read_next (ChpTraceStepList *self)
{
  if (self->reading)
    {
      self->read_again = TRUE;
      return;
    }

  self->reading = TRUE;
  chp_store_load_trace_steps_async (self->store, self->session_id, last_seq (self),
                                    CHP_TRACE_STEP_LIST_PAGE_SIZE, self->cancellable,
                                    steps_read_cb, g_object_ref (self));
}

static void
flushed_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(ChpTraceStepList) self = user_data;
  g_autoptr(GError) error = NULL;

  if (!chp_store_trace_flush_finish (CHP_STORE (source), result, &error) &&
      !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_message ("Traces: %s", error->message);

  self->reading = FALSE;
  if (self->store != NULL)
    {
      self->read_again = FALSE;
      read_next (self);
    }
}

/* What the engine queued is written first: then a read sees it. */
static void
flush_then_read (ChpTraceStepList *self)
{
  if (self->reading)
    {
      self->read_again = TRUE;
      return;
    }

  self->reading = TRUE;
  chp_store_trace_flush_async (self->store, self->cancellable, flushed_cb, g_object_ref (self));
}

static GType
get_item_type (GListModel *model)
{
  return CHP_TYPE_TRACE_STEP_ITEM;
}

static guint
get_n_items (GListModel *model)
{
  return CHP_TRACE_STEP_LIST (model)->items->len;
}

static gpointer
get_item (GListModel *model,
          guint       position)
{
  ChpTraceStepList *self = CHP_TRACE_STEP_LIST (model);

  if (position >= self->items->len)
    return NULL;

  /* Near the end of what is read: the next page, before the view gets there. */
  if (self->more && !self->reading && self->store != NULL &&
      position + CHP_TRACE_STEP_LIST_PAGE_SIZE / 2 >= self->items->len)
    read_next (self);

  return g_object_ref (g_ptr_array_index (self->items, position));
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

static void
chp_trace_step_list_dispose (GObject *object)
{
  ChpTraceStepList *self = CHP_TRACE_STEP_LIST (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_object (&self->store);

  G_OBJECT_CLASS (chp_trace_step_list_parent_class)->dispose (object);
}

static void
chp_trace_step_list_finalize (GObject *object)
{
  ChpTraceStepList *self = CHP_TRACE_STEP_LIST (object);

  g_clear_object (&self->cancellable);
  g_clear_pointer (&self->items, g_ptr_array_unref);
  g_clear_pointer (&self->session_id, g_free);

  G_OBJECT_CLASS (chp_trace_step_list_parent_class)->finalize (object);
}

static void
chp_trace_step_list_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  ChpTraceStepList *self = CHP_TRACE_STEP_LIST (object);

  switch (prop_id)
    {
    case PROP_LOADING:
      g_value_set_boolean (value, self->loading);
      break;

    case PROP_GONE:
      g_value_set_boolean (value, self->gone);
      break;

    case PROP_LONGEST_US:
      g_value_set_int64 (value, self->longest_us);
      break;

    case PROP_COUNT:
      g_value_set_uint (value, self->items->len);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_trace_step_list_class_init (ChpTraceStepListClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = chp_trace_step_list_dispose;
  object_class->finalize = chp_trace_step_list_finalize;
  object_class->get_property = chp_trace_step_list_get_property;

  /* TRUE until the first page is read. */
  properties[PROP_LOADING] = g_param_spec_boolean ("loading", NULL, NULL, TRUE, ro);
  /* The store has no such session: it was forgotten, or the cap evicted it. */
  properties[PROP_GONE] = g_param_spec_boolean ("gone", NULL, NULL, FALSE, ro);
  /* The longest step read so far (queue and call), in µs: what a full timing bar stands for. */
  properties[PROP_LONGEST_US] = g_param_spec_int64 ("longest-us", NULL, NULL, 0, G_MAXINT64, 0,
                                                    ro);
  properties[PROP_COUNT] = g_param_spec_uint ("count", NULL, NULL, 0, G_MAXUINT, 0, ro);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
chp_trace_step_list_init (ChpTraceStepList *self)
{
  self->cancellable = g_cancellable_new ();
  self->items = g_ptr_array_new_with_free_func (g_object_unref);
  self->loading = TRUE;
}

ChpTraceStepList *
chp_trace_step_list_new (ChpStore   *store,
                         const char *session_id)
{
  ChpTraceStepList *self;

  g_return_val_if_fail (CHP_IS_STORE (store), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);

  self = g_object_new (CHP_TYPE_TRACE_STEP_LIST, NULL);
  self->store = g_object_ref (store);
  self->session_id = g_strdup (session_id);
  flush_then_read (self);
  return self;
}

const char *
chp_trace_step_list_get_session_id (ChpTraceStepList *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_STEP_LIST (self), NULL);

  return self->session_id;
}

gboolean
chp_trace_step_list_get_loading (ChpTraceStepList *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_STEP_LIST (self), FALSE);

  return self->loading;
}

gboolean
chp_trace_step_list_get_gone (ChpTraceStepList *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_STEP_LIST (self), FALSE);

  return self->gone;
}

gint64
chp_trace_step_list_get_longest_us (ChpTraceStepList *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_STEP_LIST (self), 0);

  return self->longest_us;
}

/* The session grew (the engine's ChpEngine::trace-changed for it): its new steps are read. */
void
chp_trace_step_list_invalidate (ChpTraceStepList *self)
{
  g_return_if_fail (CHP_IS_TRACE_STEP_LIST (self));

  if (self->store == NULL || self->gone)
    return;

  /* Still paging: the pages to come hold the new steps. */
  if (self->more && !self->reading)
    return;

  flush_then_read (self);
}

typedef struct
{
  ChpTraceStepList *self;   /* a reference */
  ChpTraceStepItem *item;   /* a reference */
} ShotRead;

static void
shot_read_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  ShotRead *read = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpTraceShot) shot = chp_store_load_trace_shot_finish (CHP_STORE (source), result,
                                                                   &error);

  /* Hidden again meanwhile: nothing to show. */
  if (chp_trace_step_item_get_shot_state (read->item) == CHP_TRACE_SHOT_LOADING)
    {
      if (shot == NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        g_message ("Could not read a step's screenshot: %s", error->message);
      if (shot != NULL)
        chp_trace_step_item_set_shot (read->item, CHP_TRACE_SHOT_LOADED, shot);
      else
        chp_trace_step_item_set_shot (read->item, CHP_TRACE_SHOT_FAILED, NULL);
    }

  g_object_unref (read->self);
  g_object_unref (read->item);
  g_free (read);
}

/* Reads @item's screenshot; the item says when it is there (notify::shot-state). */
void
chp_trace_step_list_load_shot (ChpTraceStepList *self,
                               ChpTraceStepItem *item)
{
  const ChpTraceStep *step;
  ShotRead *read;

  g_return_if_fail (CHP_IS_TRACE_STEP_LIST (self));
  g_return_if_fail (CHP_IS_TRACE_STEP_ITEM (item));

  step = chp_trace_step_item_get_step (item);
  if (self->store == NULL || !step->has_shot ||
      chp_trace_step_item_get_shot_state (item) == CHP_TRACE_SHOT_LOADING ||
      chp_trace_step_item_get_shot_state (item) == CHP_TRACE_SHOT_LOADED)
    return;

  chp_trace_step_item_set_shot (item, CHP_TRACE_SHOT_LOADING, NULL);
  read = g_new0 (ShotRead, 1);
  read->self = g_object_ref (self);
  read->item = g_object_ref (item);
  chp_store_load_trace_shot_async (self->store, self->session_id, step->seq, self->cancellable,
                                   shot_read_cb, read);
}
