/* SPDX-License-Identifier: GPL-3.0-or-later */
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
  ChpObjectList parent_instance;
};

G_DEFINE_FINAL_TYPE (ChpHandoffList, chp_handoff_list, CHP_TYPE_OBJECT_LIST)

static void
chp_handoff_list_class_init (ChpHandoffListClass *klass)
{
  CHP_OBJECT_LIST_CLASS (klass)->item_type = CHP_TYPE_HANDOFF;
}

static void
chp_handoff_list_init (ChpHandoffList *self)
{
}

ChpHandoffList *
chp_handoff_list_new (void)
{
  return g_object_new (CHP_TYPE_HANDOFF_LIST, NULL);
}

typedef struct
{
  const char *device_id;
  const char *handoff_id;
} HandoffKey;

static gboolean
is_handoff (gpointer      item,
            gconstpointer data)
{
  const HandoffKey *key = data;

  return g_strcmp0 (chp_handoff_get_device_id (item), key->device_id) == 0 &&
         g_strcmp0 (chp_handoff_get_id (item), key->handoff_id) == 0;
}

static gboolean
is_from_device (gpointer      item,
                gconstpointer device_id)
{
  return g_strcmp0 (chp_handoff_get_device_id (item), device_id) == 0;
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
  ChpObjectList *list;
  HandoffKey key;
  guint position;

  g_return_val_if_fail (CHP_IS_HANDOFF_LIST (self), NULL);

  handoff = chp_handoff_new_from_json (device_id, change, error);
  if (handoff == NULL)
    return NULL;

  list = CHP_OBJECT_LIST (self);
  key = (HandoffKey) { device_id, chp_handoff_get_id (handoff) };
  if (chp_object_list_find (list, is_handoff, &key, &position) != NULL)
    {
      g_autoptr(ChpHandoff) listed = g_object_ref (chp_object_list_get_item_at (list, position));

      chp_handoff_update (listed, handoff);
      if (!chp_handoff_is_waiting (listed))
        chp_object_list_remove_at (list, position);
      return g_steal_pointer (&listed);
    }

  if (!chp_handoff_is_waiting (handoff))
    return NULL;

  if (chp_object_list_get_len (list) >= MAX_WAITING)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_BUSY,
                   "more than %d handoffs waiting", MAX_WAITING);
      return NULL;
    }

  chp_object_list_append (list, handoff);
  return g_steal_pointer (&handoff);
}

void
chp_handoff_list_remove_device (ChpHandoffList *self,
                                const char     *device_id)
{
  g_return_if_fail (CHP_IS_HANDOFF_LIST (self));

  chp_object_list_remove_all (CHP_OBJECT_LIST (self), is_from_device, device_id);
}

/* Returns: (transfer none) (nullable) */
ChpHandoff *
chp_handoff_list_lookup (ChpHandoffList *self,
                         const char     *device_id,
                         const char     *handoff_id)
{
  HandoffKey key = { device_id, handoff_id };

  g_return_val_if_fail (CHP_IS_HANDOFF_LIST (self), NULL);

  return chp_object_list_find (CHP_OBJECT_LIST (self), is_handoff, &key, NULL);
}

JsonNode *
chp_handoff_list_to_json (ChpHandoffList *self)
{
  g_autoptr(JsonArray) array = json_array_new ();
  ChpObjectList *list;
  JsonNode *node;

  g_return_val_if_fail (CHP_IS_HANDOFF_LIST (self), NULL);

  list = CHP_OBJECT_LIST (self);
  for (guint i = 0; i < chp_object_list_get_len (list); i++)
    json_array_add_element (array, chp_handoff_to_json (chp_object_list_get_item_at (list, i)));

  node = json_node_new (JSON_NODE_ARRAY);
  json_node_set_array (node, array);
  return node;
}
