/* chp-hold-list.c: only held holds are listed. One that ends (done, declined, changed, expired,
 * failed) gets its new state first, so whoever holds it — a card, an agent's browser_wait — sees
 * how it ended, and then leaves the list. */
#include "config.h"

#include "chp-hold-list.h"

#include "chp-protocol-error.h"

/* Holds come from agent calls; a page cannot flood the person's queue past this. */
#define MAX_HELD 32
/* Holds that ended lately, so the same end said twice (the browser's event and its answer to the
 * person) is taken once. */
#define MAX_ENDED 64

struct _ChpHoldList
{
  GObject parent_instance;

  GPtrArray *items;
  GQueue ended;          /* "device\nhold" of holds that ended, oldest first */
};

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (ChpHoldList, chp_hold_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static GType
get_item_type (GListModel *model)
{
  return CHP_TYPE_HOLD;
}

static guint
get_n_items (GListModel *model)
{
  return CHP_HOLD_LIST (model)->items->len;
}

static gpointer
get_item (GListModel *model,
          guint       position)
{
  ChpHoldList *self = CHP_HOLD_LIST (model);

  return position < self->items->len ? g_object_ref (g_ptr_array_index (self->items, position))
                                     : NULL;
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

static void
chp_hold_list_finalize (GObject *object)
{
  g_clear_pointer (&CHP_HOLD_LIST (object)->items, g_ptr_array_unref);
  g_queue_clear_full (&CHP_HOLD_LIST (object)->ended, g_free);

  G_OBJECT_CLASS (chp_hold_list_parent_class)->finalize (object);
}

static void
chp_hold_list_class_init (ChpHoldListClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_hold_list_finalize;
}

static void
chp_hold_list_init (ChpHoldList *self)
{
  self->items = g_ptr_array_new_with_free_func (g_object_unref);
}

ChpHoldList *
chp_hold_list_new (void)
{
  return g_object_new (CHP_TYPE_HOLD_LIST, NULL);
}

static gint
position_of (ChpHoldList *self,
             const char  *device_id,
             const char  *hold_id)
{
  for (guint i = 0; i < self->items->len; i++)
    {
      ChpHold *hold = g_ptr_array_index (self->items, i);

      if (g_strcmp0 (chp_hold_get_device_id (hold), device_id) == 0 &&
          g_strcmp0 (chp_hold_get_id (hold), hold_id) == 0)
        return (gint) i;
    }

  return -1;
}

/* TRUE when the end of this hold was taken already; else remembers it. */
static gboolean
seen_end (ChpHoldList *self,
          ChpHold     *hold)
{
  g_autofree char *key = g_strdup_printf ("%s\n%s", chp_hold_get_device_id (hold),
                                          chp_hold_get_id (hold));

  if (g_queue_find_custom (&self->ended, key, (GCompareFunc) g_strcmp0) != NULL)
    return TRUE;
  g_queue_push_tail (&self->ended, g_steal_pointer (&key));
  if (g_queue_get_length (&self->ended) > MAX_ENDED)
    g_free (g_queue_pop_head (&self->ended));
  return FALSE;
}

/**
 * chp_hold_list_apply:
 * @change: a `hold.changed` event's data
 *
 * Returns: (transfer full) (nullable): the hold that arrived or changed, or %NULL when the change
 *   was malformed (@error set) or repeats an end already taken
 */
ChpHold *
chp_hold_list_apply (ChpHoldList  *self,
                     const char   *device_id,
                     JsonObject   *change,
                     GError      **error)
{
  g_autoptr(ChpHold) hold = NULL;
  gint position;

  g_return_val_if_fail (CHP_IS_HOLD_LIST (self), NULL);

  hold = chp_hold_new_from_json (device_id, change, error);
  if (hold == NULL)
    return NULL;

  position = position_of (self, device_id, chp_hold_get_id (hold));
  if (position >= 0)
    {
      g_autoptr(ChpHold) listed = g_object_ref (g_ptr_array_index (self->items, position));

      chp_hold_update (listed, hold);
      if (!chp_hold_is_held (listed))
        {
          seen_end (self, listed);
          g_ptr_array_remove_index (self->items, position);
          g_list_model_items_changed (G_LIST_MODEL (self), position, 1, 0);
        }
      return g_steal_pointer (&listed);
    }

  if (!chp_hold_is_held (hold))
    return seen_end (self, hold) ? NULL : g_steal_pointer (&hold);

  if (self->items->len >= MAX_HELD)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_BUSY,
                   "more than %d holds waiting", MAX_HELD);
      return NULL;
    }

  g_ptr_array_add (self->items, g_object_ref (hold));
  g_list_model_items_changed (G_LIST_MODEL (self), self->items->len - 1, 0, 1);
  return g_steal_pointer (&hold);
}

void
chp_hold_list_remove_device (ChpHoldList *self,
                             const char  *device_id)
{
  g_return_if_fail (CHP_IS_HOLD_LIST (self));

  for (guint i = self->items->len; i > 0; i--)
    if (g_strcmp0 (chp_hold_get_device_id (g_ptr_array_index (self->items, i - 1)), device_id) == 0)
      {
        g_ptr_array_remove_index (self->items, i - 1);
        g_list_model_items_changed (G_LIST_MODEL (self), i - 1, 1, 0);
      }
}

/* Returns: (transfer none) (nullable): a hold that is still held */
ChpHold *
chp_hold_list_lookup (ChpHoldList *self,
                      const char  *device_id,
                      const char  *hold_id)
{
  gint position;

  g_return_val_if_fail (CHP_IS_HOLD_LIST (self), NULL);

  position = position_of (self, device_id, hold_id);
  return position >= 0 ? g_ptr_array_index (self->items, position) : NULL;
}
