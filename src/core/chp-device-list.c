/* chp-device-list.c: a small ordered list (a person pairs a handful of browsers) with lookups by id. */
#include "config.h"

#include "chp-device-list.h"

struct _ChpDeviceList
{
  GObject parent_instance;

  GPtrArray *devices;
};

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (ChpDeviceList, chp_device_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static GType
get_item_type (GListModel *model)
{
  return CHP_TYPE_DEVICE;
}

static guint
get_n_items (GListModel *model)
{
  return CHP_DEVICE_LIST (model)->devices->len;
}

static gpointer
get_item (GListModel *model,
          guint       position)
{
  ChpDeviceList *self = CHP_DEVICE_LIST (model);

  if (position >= self->devices->len)
    return NULL;

  return g_object_ref (g_ptr_array_index (self->devices, position));
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

static void
chp_device_list_finalize (GObject *object)
{
  g_clear_pointer (&CHP_DEVICE_LIST (object)->devices, g_ptr_array_unref);

  G_OBJECT_CLASS (chp_device_list_parent_class)->finalize (object);
}

static void
chp_device_list_class_init (ChpDeviceListClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_device_list_finalize;
}

static void
chp_device_list_init (ChpDeviceList *self)
{
  self->devices = g_ptr_array_new_with_free_func (g_object_unref);
}

ChpDeviceList *
chp_device_list_new (void)
{
  return g_object_new (CHP_TYPE_DEVICE_LIST, NULL);
}

/* Revoked devices are kept in the store (their keys must keep failing) but not listed. */
void
chp_device_list_set_all (ChpDeviceList *self,
                         GPtrArray     *infos)
{
  guint removed;

  g_return_if_fail (CHP_IS_DEVICE_LIST (self));

  removed = self->devices->len;
  g_ptr_array_set_size (self->devices, 0);
  for (guint i = 0; infos != NULL && i < infos->len; i++)
    {
      const ChpDeviceInfo *info = g_ptr_array_index (infos, i);

      if (info->revoked_at == 0)
        g_ptr_array_add (self->devices, chp_device_new (info));
    }

  g_list_model_items_changed (G_LIST_MODEL (self), 0, removed, self->devices->len);
}

static gboolean
find_index (ChpDeviceList *self,
            const char    *device_id,
            guint         *index)
{
  for (guint i = 0; i < self->devices->len; i++)
    {
      if (g_strcmp0 (chp_device_get_id (g_ptr_array_index (self->devices, i)), device_id) == 0)
        {
          *index = i;
          return TRUE;
        }
    }

  return FALSE;
}

/* Returns: (transfer none): the listed device */
ChpDevice *
chp_device_list_add_or_update (ChpDeviceList       *self,
                               const ChpDeviceInfo *info)
{
  ChpDevice *device;
  guint index;

  g_return_val_if_fail (CHP_IS_DEVICE_LIST (self), NULL);
  g_return_val_if_fail (info != NULL && info->revoked_at == 0, NULL);

  if (find_index (self, info->device_id, &index))
    {
      device = g_ptr_array_index (self->devices, index);
      chp_device_update_info (device, info);
      return device;
    }

  device = chp_device_new (info);
  g_ptr_array_add (self->devices, device);
  g_list_model_items_changed (G_LIST_MODEL (self), self->devices->len - 1, 0, 1);

  return device;
}

void
chp_device_list_remove (ChpDeviceList *self,
                        const char    *device_id)
{
  guint index;

  g_return_if_fail (CHP_IS_DEVICE_LIST (self));

  if (find_index (self, device_id, &index))
    {
      g_ptr_array_remove_index (self->devices, index);
      g_list_model_items_changed (G_LIST_MODEL (self), index, 1, 0);
    }
}

/* Returns: (transfer none) (nullable) */
ChpDevice *
chp_device_list_lookup (ChpDeviceList *self,
                        const char    *device_id)
{
  guint index;

  g_return_val_if_fail (CHP_IS_DEVICE_LIST (self), NULL);

  if (device_id != NULL && find_index (self, device_id, &index))
    return g_ptr_array_index (self->devices, index);

  return NULL;
}

/* Returns: (transfer none) (nullable) */
ChpDevice *
chp_device_list_find_by_installation (ChpDeviceList *self,
                                      const char    *installation_id,
                                      const char    *origin)
{
  g_return_val_if_fail (CHP_IS_DEVICE_LIST (self), NULL);

  for (guint i = 0; i < self->devices->len; i++)
    {
      ChpDevice *device = g_ptr_array_index (self->devices, i);
      const ChpDeviceInfo *info = chp_device_get_info (device);

      if (g_strcmp0 (info->installation_id, installation_id) == 0 &&
          g_strcmp0 (info->origin, origin) == 0)
        return device;
    }

  return NULL;
}

/* Returns: (transfer none) (nullable): the first device paired from @origin */
ChpDevice *
chp_device_list_find_by_origin (ChpDeviceList *self,
                                const char    *origin)
{
  g_return_val_if_fail (CHP_IS_DEVICE_LIST (self), NULL);

  for (guint i = 0; i < self->devices->len; i++)
    {
      ChpDevice *device = g_ptr_array_index (self->devices, i);

      if (g_strcmp0 (chp_device_get_origin (device), origin) == 0)
        return device;
    }

  return NULL;
}
