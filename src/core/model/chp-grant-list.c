/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-grant-list.c: the extension is the source of truth for grants: it sends its whole list on
 * every change, and this mirror replaces that device's part wholesale. A grant whose time is up
 * leaves the mirror on its own, so an offline browser's expired grant never looks alive. */
#include "config.h"

#include "chp-grant-list.h"

#include "chp-protocol-error.h"

#define MAX_GRANTS_PER_DEVICE 64

/* The items are grouped by device, in arrival order. */
struct _ChpGrantList
{
  ChpObjectList parent_instance;

  guint expiry_source;
};

G_DEFINE_FINAL_TYPE (ChpGrantList, chp_grant_list, CHP_TYPE_OBJECT_LIST)

static void
chp_grant_list_dispose (GObject *object)
{
  ChpGrantList *self = CHP_GRANT_LIST (object);

  g_clear_handle_id (&self->expiry_source, g_source_remove);

  G_OBJECT_CLASS (chp_grant_list_parent_class)->dispose (object);
}

static void
chp_grant_list_class_init (ChpGrantListClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = chp_grant_list_dispose;
  CHP_OBJECT_LIST_CLASS (klass)->item_type = CHP_TYPE_GRANT;
}

static void
chp_grant_list_init (ChpGrantList *self)
{
}

ChpGrantList *
chp_grant_list_new (void)
{
  return g_object_new (CHP_TYPE_GRANT_LIST, NULL);
}

static gint64
now_ms (void)
{
  return g_get_real_time () / 1000;
}

static void schedule_expiry (ChpGrantList *self);

static gboolean
is_expired (gpointer      item,
            gconstpointer now)
{
  return chp_grant_get_expires_at (item) <= *(const gint64 *) now;
}

static gboolean
is_from_device (gpointer      item,
                gconstpointer device_id)
{
  return g_strcmp0 (chp_grant_get_device_id (item), device_id) == 0;
}

static gboolean
expiry_cb (gpointer user_data)
{
  ChpGrantList *self = user_data;
  gint64 now = now_ms ();

  self->expiry_source = 0;
  chp_object_list_remove_all (CHP_OBJECT_LIST (self), is_expired, &now);
  schedule_expiry (self);

  return G_SOURCE_REMOVE;
}

static void
schedule_expiry (ChpGrantList *self)
{
  ChpObjectList *list = CHP_OBJECT_LIST (self);
  gint64 soonest = G_MAXINT64;
  gint64 delay;

  g_clear_handle_id (&self->expiry_source, g_source_remove);

  for (guint i = 0; i < chp_object_list_get_len (list); i++)
    soonest = MIN (soonest, chp_grant_get_expires_at (chp_object_list_get_item_at (list, i)));

  if (soonest == G_MAXINT64)
    return;

  /* A second's slack: the extension expires the grant itself and usually says so first. */
  delay = CLAMP (soonest - now_ms () + 1000, 0, (gint64) G_MAXUINT / 2);
  self->expiry_source = g_timeout_add_full (G_PRIORITY_DEFAULT, (guint) delay, expiry_cb, self, NULL);
}

/**
 * chp_grant_list_set_device_grants:
 * @grants: the extension's whole list, as in `grant.changed` or `extension.grants`
 *
 * Replaces what the mirror holds for @device_id. All or nothing: one malformed grant leaves the
 * mirror as it was and says why.
 */
gboolean
chp_grant_list_set_device_grants (ChpGrantList  *self,
                                  const char    *device_id,
                                  JsonArray     *grants,
                                  GError       **error)
{
  g_autoptr(GPtrArray) parsed = g_ptr_array_new_with_free_func (g_object_unref);
  gint64 now = now_ms ();
  ChpObjectList *list;

  g_return_val_if_fail (CHP_IS_GRANT_LIST (self), FALSE);
  g_return_val_if_fail (device_id != NULL, FALSE);
  g_return_val_if_fail (grants != NULL, FALSE);

  if (json_array_get_length (grants) > MAX_GRANTS_PER_DEVICE)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                   "more than %d grants", MAX_GRANTS_PER_DEVICE);
      return FALSE;
    }

  for (guint i = 0; i < json_array_get_length (grants); i++)
    {
      JsonNode *node = json_array_get_element (grants, i);
      ChpGrant *grant;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        {
          g_set_error_literal (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                               "a grant is not an object");
          return FALSE;
        }
      grant = chp_grant_new_from_json (device_id, json_node_get_object (node), error);
      if (grant == NULL)
        return FALSE;
      if (chp_grant_get_expires_at (grant) <= now)
        g_object_unref (grant);
      else
        g_ptr_array_add (parsed, grant);
    }

  list = CHP_OBJECT_LIST (self);
  chp_object_list_remove_all (list, is_from_device, device_id);
  if (parsed->len > 0)
    chp_object_list_splice (list, chp_object_list_get_len (list), 0, parsed->pdata, parsed->len);

  schedule_expiry (self);
  return TRUE;
}

/* A revoked browser's grants are meaningless: it can no longer be reached. */
void
chp_grant_list_remove_device (ChpGrantList *self,
                              const char   *device_id)
{
  g_return_if_fail (CHP_IS_GRANT_LIST (self));

  chp_object_list_remove_all (CHP_OBJECT_LIST (self), is_from_device, device_id);
  schedule_expiry (self);
}

typedef struct
{
  const char *device_id;
  const char *grant_id;
} GrantKey;

static gboolean
is_grant (gpointer      item,
          gconstpointer data)
{
  const GrantKey *key = data;

  return g_strcmp0 (chp_grant_get_device_id (item), key->device_id) == 0 &&
         g_strcmp0 (chp_grant_get_id (item), key->grant_id) == 0;
}

/* Returns: (transfer none) (nullable) */
ChpGrant *
chp_grant_list_lookup (ChpGrantList *self,
                       const char   *device_id,
                       const char   *grant_id)
{
  GrantKey key = { device_id, grant_id };

  g_return_val_if_fail (CHP_IS_GRANT_LIST (self), NULL);

  return chp_object_list_find (CHP_OBJECT_LIST (self), is_grant, &key, NULL);
}

guint
chp_grant_list_count_for_device (ChpGrantList *self,
                                 const char   *device_id)
{
  ChpObjectList *list;
  guint count = 0;

  g_return_val_if_fail (CHP_IS_GRANT_LIST (self), 0);

  list = CHP_OBJECT_LIST (self);
  for (guint i = 0; i < chp_object_list_get_len (list); i++)
    if (is_from_device (chp_object_list_get_item_at (list, i), device_id))
      count++;

  return count;
}

JsonNode *
chp_grant_list_to_json (ChpGrantList *self)
{
  g_autoptr(JsonArray) array = json_array_new ();
  ChpObjectList *list;
  JsonNode *node;

  g_return_val_if_fail (CHP_IS_GRANT_LIST (self), NULL);

  list = CHP_OBJECT_LIST (self);
  for (guint i = 0; i < chp_object_list_get_len (list); i++)
    json_array_add_element (array, chp_grant_to_json (chp_object_list_get_item_at (list, i)));

  node = json_node_new (JSON_NODE_ARRAY);
  json_node_set_array (node, array);
  return node;
}
