/* chp-handoff-list.c: only waiting handoffs are listed; a handoff that ends (done, cancelled,
 * expired) gets its new state first, so whoever holds it sees how it ended, and then leaves. */
#include "config.h"

#include "chp-handoff-list.h"

#include "chp-protocol-error.h"

/* A page cannot flood the person's queue: handoffs come from agent calls, and a few at once is
 * already more than a person can do. */
#define MAX_WAITING 32

struct _ChpHandoffList
{
  GObject parent_instance;

  GPtrArray *items;
};

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (ChpHandoffList, chp_handoff_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static GType
get_item_type (GListModel *model)
{
  return CHP_TYPE_HANDOFF;
}

static guint
get_n_items (GListModel *model)
{
  return CHP_HANDOFF_LIST (model)->items->len;
}

static gpointer
get_item (GListModel *model,
          guint       position)
{
  ChpHandoffList *self = CHP_HANDOFF_LIST (model);

  if (position >= self->items->len)
    return NULL;

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
chp_handoff_list_finalize (GObject *object)
{
  g_clear_pointer (&CHP_HANDOFF_LIST (object)->items, g_ptr_array_unref);

  G_OBJECT_CLASS (chp_handoff_list_parent_class)->finalize (object);
}

static void
chp_handoff_list_class_init (ChpHandoffListClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_handoff_list_finalize;
}

static void
chp_handoff_list_init (ChpHandoffList *self)
{
  self->items = g_ptr_array_new_with_free_func (g_object_unref);
}

ChpHandoffList *
chp_handoff_list_new (void)
{
  return g_object_new (CHP_TYPE_HANDOFF_LIST, NULL);
}

static gboolean
find (ChpHandoffList *self,
      const char     *device_id,
      const char     *handoff_id,
      guint          *position)
{
  for (guint i = 0; i < self->items->len; i++)
    {
      ChpHandoff *handoff = g_ptr_array_index (self->items, i);

      if (g_strcmp0 (chp_handoff_get_device_id (handoff), device_id) == 0 &&
          g_strcmp0 (chp_handoff_get_id (handoff), handoff_id) == 0)
        {
          *position = i;
          return TRUE;
        }
    }

  return FALSE;
}

/**
 * chp_handoff_list_apply:
 * @change: a `handoff.changed` event's data
 *
 * Returns: (transfer full) (nullable): the handoff that arrived or changed, or %NULL when the
 *   change was malformed (@error set) or concerned nothing listed (an end the list never saw
 *   begin); a new waiting handoff is added, one that ended is removed after its state is set.
 */
ChpHandoff *
chp_handoff_list_apply (ChpHandoffList  *self,
                        const char      *device_id,
                        JsonObject      *change,
                        GError         **error)
{
  g_autoptr(ChpHandoff) handoff = NULL;
  guint position;

  g_return_val_if_fail (CHP_IS_HANDOFF_LIST (self), NULL);

  handoff = chp_handoff_new_from_json (device_id, change, error);
  if (handoff == NULL)
    return NULL;

  if (find (self, device_id, chp_handoff_get_id (handoff), &position))
    {
      g_autoptr(ChpHandoff) listed = g_object_ref (g_ptr_array_index (self->items, position));

      chp_handoff_update (listed, handoff);
      if (!chp_handoff_is_waiting (listed))
        {
          g_ptr_array_remove_index (self->items, position);
          g_list_model_items_changed (G_LIST_MODEL (self), position, 1, 0);
        }
      return g_steal_pointer (&listed);
    }

  if (!chp_handoff_is_waiting (handoff))
    return NULL;

  if (self->items->len >= MAX_WAITING)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_BUSY,
                   "more than %d handoffs waiting", MAX_WAITING);
      return NULL;
    }

  g_ptr_array_add (self->items, g_object_ref (handoff));
  g_list_model_items_changed (G_LIST_MODEL (self), self->items->len - 1, 0, 1);
  return g_steal_pointer (&handoff);
}

void
chp_handoff_list_remove_device (ChpHandoffList *self,
                                const char     *device_id)
{
  g_return_if_fail (CHP_IS_HANDOFF_LIST (self));

  for (guint i = self->items->len; i > 0; i--)
    if (g_strcmp0 (chp_handoff_get_device_id (g_ptr_array_index (self->items, i - 1)), device_id) == 0)
      {
        g_ptr_array_remove_index (self->items, i - 1);
        g_list_model_items_changed (G_LIST_MODEL (self), i - 1, 1, 0);
      }
}

/* Returns: (transfer none) (nullable) */
ChpHandoff *
chp_handoff_list_lookup (ChpHandoffList *self,
                         const char     *device_id,
                         const char     *handoff_id)
{
  guint position;

  g_return_val_if_fail (CHP_IS_HANDOFF_LIST (self), NULL);

  return find (self, device_id, handoff_id, &position)
    ? g_ptr_array_index (self->items, position) : NULL;
}

JsonNode *
chp_handoff_list_to_json (ChpHandoffList *self)
{
  g_autoptr(JsonArray) array = json_array_new ();
  JsonNode *node;

  g_return_val_if_fail (CHP_IS_HANDOFF_LIST (self), NULL);

  for (guint i = 0; i < self->items->len; i++)
    json_array_add_element (array, chp_handoff_to_json (g_ptr_array_index (self->items, i)));

  node = json_node_new (JSON_NODE_ARRAY);
  json_node_set_array (node, array);
  return node;
}
