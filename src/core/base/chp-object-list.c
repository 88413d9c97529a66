/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-object-list.c: the GListModel half of every short list in the core, so that each list says
 * only what its items are and when they come and go. Every change goes through here and says
 * so at once with items-changed; a subclass that must change an item's state before it leaves
 * does that first, then removes it. */
#include "config.h"

#include "chp-object-list.h"

typedef struct
{
  GPtrArray *items;
} ChpObjectListPrivate;

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (ChpObjectList, chp_object_list, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (ChpObjectList)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static GPtrArray *
items_of (gpointer self)
{
  ChpObjectListPrivate *priv = chp_object_list_get_instance_private (self);

  return priv->items;
}

static GType
get_item_type (GListModel *model)
{
  return CHP_OBJECT_LIST_GET_CLASS (model)->item_type;
}

static guint
get_n_items (GListModel *model)
{
  return items_of (model)->len;
}

static gpointer
get_item (GListModel *model,
          guint       position)
{
  GPtrArray *items = items_of (model);

  return position < items->len ? g_object_ref (g_ptr_array_index (items, position)) : NULL;
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

static void
chp_object_list_finalize (GObject *object)
{
  ChpObjectListPrivate *priv = chp_object_list_get_instance_private (CHP_OBJECT_LIST (object));

  g_clear_pointer (&priv->items, g_ptr_array_unref);

  G_OBJECT_CLASS (chp_object_list_parent_class)->finalize (object);
}

static void
chp_object_list_class_init (ChpObjectListClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_object_list_finalize;

  klass->item_type = G_TYPE_OBJECT;
}

static void
chp_object_list_init (ChpObjectList *self)
{
  ChpObjectListPrivate *priv = chp_object_list_get_instance_private (self);

  priv->items = g_ptr_array_new_with_free_func (g_object_unref);
}

guint
chp_object_list_get_len (ChpObjectList *self)
{
  g_return_val_if_fail (CHP_IS_OBJECT_LIST (self), 0);

  return items_of (self)->len;
}

/* Returns: (transfer none) */
gpointer
chp_object_list_get_item_at (ChpObjectList *self,
                             guint          position)
{
  g_return_val_if_fail (CHP_IS_OBJECT_LIST (self), NULL);
  g_return_val_if_fail (position < items_of (self)->len, NULL);

  return g_ptr_array_index (items_of (self), position);
}

/**
 * chp_object_list_find:
 * @match: (nullable): %NULL finds @data itself, as g_ptr_array_find() does
 * @position: (out) (optional): where the first match stands
 *
 * Returns: (transfer none) (nullable): the first item that matched
 */
gpointer
chp_object_list_find (ChpObjectList      *self,
                      ChpObjectListMatch  match,
                      gconstpointer       data,
                      guint              *position)
{
  GPtrArray *items;

  g_return_val_if_fail (CHP_IS_OBJECT_LIST (self), NULL);

  items = items_of (self);
  for (guint i = 0; i < items->len; i++)
    {
      gpointer item = g_ptr_array_index (items, i);

      if (match != NULL ? match (item, data) : item == data)
        {
          if (position != NULL)
            *position = i;
          return item;
        }
    }

  return NULL;
}

/**
 * chp_object_list_splice:
 * @additions: (array length=n_additions) (element-type GObject) (nullable): each is referenced
 *
 * Replaces @n_removals items at @position with @additions, in one items-changed, as
 * g_list_store_splice() does.
 */
void
chp_object_list_splice (ChpObjectList *self,
                        guint          position,
                        guint          n_removals,
                        gpointer      *additions,
                        guint          n_additions)
{
  GType item_type;
  GPtrArray *items;

  g_return_if_fail (CHP_IS_OBJECT_LIST (self));
  g_return_if_fail (additions != NULL || n_additions == 0);

  items = items_of (self);
  g_return_if_fail (position <= items->len && n_removals <= items->len - position);

  item_type = CHP_OBJECT_LIST_GET_CLASS (self)->item_type;
  for (guint i = 0; i < n_additions; i++)
    g_return_if_fail (G_TYPE_CHECK_INSTANCE_TYPE (additions[i], item_type));

  if (n_removals > 0)
    g_ptr_array_remove_range (items, position, n_removals);
  for (guint i = 0; i < n_additions; i++)
    g_ptr_array_insert (items, position + i, g_object_ref (additions[i]));

  g_list_model_items_changed (G_LIST_MODEL (self), position, n_removals, n_additions);
}

/* Adds a reference to @item at the end. */
void
chp_object_list_append (ChpObjectList *self,
                        gpointer       item)
{
  g_return_if_fail (CHP_IS_OBJECT_LIST (self));

  chp_object_list_splice (self, items_of (self)->len, 0, &item, 1);
}

void
chp_object_list_remove_at (ChpObjectList *self,
                           guint          position)
{
  chp_object_list_splice (self, position, 1, NULL, 0);
}

/* Removes every item @match takes, last first, in one items-changed each: the items of one
 * device or session need not stand together. */
void
chp_object_list_remove_all (ChpObjectList      *self,
                            ChpObjectListMatch  match,
                            gconstpointer       data)
{
  GPtrArray *items;

  g_return_if_fail (CHP_IS_OBJECT_LIST (self));
  g_return_if_fail (match != NULL);

  items = items_of (self);
  for (guint i = items->len; i > 0; i--)
    if (match (g_ptr_array_index (items, i - 1), data))
      chp_object_list_remove_at (self, i - 1);
}
