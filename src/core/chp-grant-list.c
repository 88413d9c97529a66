/* chp-grant-list.c: the extension is the source of truth for grants: it sends its whole list on
 * every change, and this mirror replaces that device's part wholesale. A grant whose time is up
 * leaves the mirror on its own, so an offline browser's expired grant never looks alive. */
#include "config.h"

#include "chp-grant-list.h"

#include "chp-protocol-error.h"

#define MAX_GRANTS_PER_DEVICE 64

struct _ChpGrantList
{
  GObject parent_instance;

  GPtrArray *grants;      /* ChpGrant, grouped by device in arrival order */
  guint expiry_source;
};

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (ChpGrantList, chp_grant_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static GType
get_item_type (GListModel *model)
{
  return CHP_TYPE_GRANT;
}

static guint
get_n_items (GListModel *model)
{
  return CHP_GRANT_LIST (model)->grants->len;
}

static gpointer
get_item (GListModel *model,
          guint       position)
{
  ChpGrantList *self = CHP_GRANT_LIST (model);

  if (position >= self->grants->len)
    return NULL;

  return g_object_ref (g_ptr_array_index (self->grants, position));
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

static void
chp_grant_list_dispose (GObject *object)
{
  ChpGrantList *self = CHP_GRANT_LIST (object);

  g_clear_handle_id (&self->expiry_source, g_source_remove);

  G_OBJECT_CLASS (chp_grant_list_parent_class)->dispose (object);
}

static void
chp_grant_list_finalize (GObject *object)
{
  g_clear_pointer (&CHP_GRANT_LIST (object)->grants, g_ptr_array_unref);

  G_OBJECT_CLASS (chp_grant_list_parent_class)->finalize (object);
}

static void
chp_grant_list_class_init (ChpGrantListClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = chp_grant_list_dispose;
  object_class->finalize = chp_grant_list_finalize;
}

static void
chp_grant_list_init (ChpGrantList *self)
{
  self->grants = g_ptr_array_new_with_free_func (g_object_unref);
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

/* Removes items matching @device_id (all of them when @expired_only is FALSE, else only those
 * whose time is up), one items-changed per run of removed items. */
static void
remove_where (ChpGrantList *self,
              const char   *device_id,
              gboolean      expired_only)
{
  gint64 now = now_ms ();

  for (guint i = self->grants->len; i > 0; i--)
    {
      ChpGrant *grant = g_ptr_array_index (self->grants, i - 1);
      gboolean match = expired_only
        ? chp_grant_get_expires_at (grant) <= now
        : g_strcmp0 (chp_grant_get_device_id (grant), device_id) == 0;

      if (match)
        {
          g_ptr_array_remove_index (self->grants, i - 1);
          g_list_model_items_changed (G_LIST_MODEL (self), i - 1, 1, 0);
        }
    }
}

static gboolean
expiry_cb (gpointer user_data)
{
  ChpGrantList *self = user_data;

  self->expiry_source = 0;
  remove_where (self, NULL, TRUE);
  schedule_expiry (self);

  return G_SOURCE_REMOVE;
}

static void
schedule_expiry (ChpGrantList *self)
{
  gint64 soonest = G_MAXINT64;
  gint64 delay;

  g_clear_handle_id (&self->expiry_source, g_source_remove);

  for (guint i = 0; i < self->grants->len; i++)
    soonest = MIN (soonest, chp_grant_get_expires_at (g_ptr_array_index (self->grants, i)));

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
  guint position;

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

  remove_where (self, device_id, FALSE);

  position = self->grants->len;
  for (guint i = 0; i < parsed->len; i++)
    g_ptr_array_add (self->grants, g_object_ref (g_ptr_array_index (parsed, i)));
  if (parsed->len > 0)
    g_list_model_items_changed (G_LIST_MODEL (self), position, 0, parsed->len);

  schedule_expiry (self);
  return TRUE;
}

/* A revoked browser's grants are meaningless: it can no longer be reached. */
void
chp_grant_list_remove_device (ChpGrantList *self,
                              const char   *device_id)
{
  g_return_if_fail (CHP_IS_GRANT_LIST (self));

  remove_where (self, device_id, FALSE);
  schedule_expiry (self);
}

/* Returns: (transfer none) (nullable) */
ChpGrant *
chp_grant_list_lookup (ChpGrantList *self,
                       const char   *device_id,
                       const char   *grant_id)
{
  g_return_val_if_fail (CHP_IS_GRANT_LIST (self), NULL);

  for (guint i = 0; i < self->grants->len; i++)
    {
      ChpGrant *grant = g_ptr_array_index (self->grants, i);

      if (g_strcmp0 (chp_grant_get_device_id (grant), device_id) == 0 &&
          g_strcmp0 (chp_grant_get_id (grant), grant_id) == 0)
        return grant;
    }

  return NULL;
}

guint
chp_grant_list_count_for_device (ChpGrantList *self,
                                 const char   *device_id)
{
  guint count = 0;

  g_return_val_if_fail (CHP_IS_GRANT_LIST (self), 0);

  for (guint i = 0; i < self->grants->len; i++)
    if (g_strcmp0 (chp_grant_get_device_id (g_ptr_array_index (self->grants, i)), device_id) == 0)
      count++;

  return count;
}

JsonNode *
chp_grant_list_to_json (ChpGrantList *self)
{
  g_autoptr(JsonArray) array = json_array_new ();
  JsonNode *node;

  g_return_val_if_fail (CHP_IS_GRANT_LIST (self), NULL);

  for (guint i = 0; i < self->grants->len; i++)
    json_array_add_element (array, chp_grant_to_json (g_ptr_array_index (self->grants, i)));

  node = json_node_new (JSON_NODE_ARRAY);
  json_node_set_array (node, array);
  return node;
}
