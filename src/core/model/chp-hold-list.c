/* SPDX-License-Identifier: GPL-3.0-or-later */
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
  ChpObjectList parent_instance;

  GQueue ended;          /* "device\nhold" of holds that ended, oldest first */
};

G_DEFINE_FINAL_TYPE (ChpHoldList, chp_hold_list, CHP_TYPE_OBJECT_LIST)

static void
chp_hold_list_finalize (GObject *object)
{
  g_queue_clear_full (&CHP_HOLD_LIST (object)->ended, g_free);

  G_OBJECT_CLASS (chp_hold_list_parent_class)->finalize (object);
}

static void
chp_hold_list_class_init (ChpHoldListClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_hold_list_finalize;
  CHP_OBJECT_LIST_CLASS (klass)->item_type = CHP_TYPE_HOLD;
}

static void
chp_hold_list_init (ChpHoldList *self)
{
}

ChpHoldList *
chp_hold_list_new (void)
{
  return g_object_new (CHP_TYPE_HOLD_LIST, NULL);
}

typedef struct
{
  const char *device_id;
  const char *hold_id;
} HoldKey;

static gboolean
is_hold (gpointer      item,
         gconstpointer data)
{
  const HoldKey *key = data;

  return g_strcmp0 (chp_hold_get_device_id (item), key->device_id) == 0 &&
         g_strcmp0 (chp_hold_get_id (item), key->hold_id) == 0;
}

static gboolean
is_from_device (gpointer      item,
                gconstpointer device_id)
{
  return g_strcmp0 (chp_hold_get_device_id (item), device_id) == 0;
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
  ChpObjectList *list;
  HoldKey key;
  guint position;

  g_return_val_if_fail (CHP_IS_HOLD_LIST (self), NULL);

  hold = chp_hold_new_from_json (device_id, change, error);
  if (hold == NULL)
    return NULL;

  list = CHP_OBJECT_LIST (self);
  key = (HoldKey) { device_id, chp_hold_get_id (hold) };
  if (chp_object_list_find (list, is_hold, &key, &position) != NULL)
    {
      g_autoptr(ChpHold) listed = g_object_ref (chp_object_list_get_item_at (list, position));

      chp_hold_update (listed, hold);
      if (!chp_hold_is_held (listed))
        {
          seen_end (self, listed);
          chp_object_list_remove_at (list, position);
        }
      return g_steal_pointer (&listed);
    }

  if (!chp_hold_is_held (hold))
    return seen_end (self, hold) ? NULL : g_steal_pointer (&hold);

  if (chp_object_list_get_len (list) >= MAX_HELD)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_BUSY,
                   "more than %d holds waiting", MAX_HELD);
      return NULL;
    }

  chp_object_list_append (list, hold);
  return g_steal_pointer (&hold);
}

void
chp_hold_list_remove_device (ChpHoldList *self,
                             const char  *device_id)
{
  g_return_if_fail (CHP_IS_HOLD_LIST (self));

  chp_object_list_remove_all (CHP_OBJECT_LIST (self), is_from_device, device_id);
}

/* Returns: (transfer none) (nullable): a hold that is still held */
ChpHold *
chp_hold_list_lookup (ChpHoldList *self,
                      const char  *device_id,
                      const char  *hold_id)
{
  HoldKey key = { device_id, hold_id };

  g_return_val_if_fail (CHP_IS_HOLD_LIST (self), NULL);

  return chp_object_list_find (CHP_OBJECT_LIST (self), is_hold, &key, NULL);
}
