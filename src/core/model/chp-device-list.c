/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-device-list.c: a small ordered list (a person pairs a handful of browsers) with lookups by id. */
#include "config.h"

#include "chp-device-list.h"

struct _ChpDeviceList
{
  ChpObjectList parent_instance;
};

G_DEFINE_FINAL_TYPE (ChpDeviceList, chp_device_list, CHP_TYPE_OBJECT_LIST)

static void
chp_device_list_class_init (ChpDeviceListClass *klass)
{
  CHP_OBJECT_LIST_CLASS (klass)->item_type = CHP_TYPE_DEVICE;
}

static void
chp_device_list_init (ChpDeviceList *self)
{
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
  g_autoptr(GPtrArray) devices = g_ptr_array_new_with_free_func (g_object_unref);
  ChpObjectList *list;

  g_return_if_fail (CHP_IS_DEVICE_LIST (self));

  for (guint i = 0; infos != NULL && i < infos->len; i++)
    {
      const ChpDeviceInfo *info = g_ptr_array_index (infos, i);

      if (info->revoked_at == 0)
        g_ptr_array_add (devices, chp_device_new (info));
    }

  /* One items-changed for the whole list, as a reload is. */
  list = CHP_OBJECT_LIST (self);
  chp_object_list_splice (list, 0, chp_object_list_get_len (list), devices->pdata, devices->len);
}

static gboolean
has_id (gpointer      item,
        gconstpointer device_id)
{
  return g_strcmp0 (chp_device_get_id (item), device_id) == 0;
}

/* Returns: (transfer none): the listed device */
ChpDevice *
chp_device_list_add_or_update (ChpDeviceList       *self,
                               const ChpDeviceInfo *info)
{
  g_autoptr(ChpDevice) added = NULL;
  ChpDevice *device;

  g_return_val_if_fail (CHP_IS_DEVICE_LIST (self), NULL);
  g_return_val_if_fail (info != NULL && info->revoked_at == 0, NULL);

  device = chp_object_list_find (CHP_OBJECT_LIST (self), has_id, info->device_id, NULL);
  if (device != NULL)
    {
      chp_device_update_info (device, info);
      return device;
    }

  /* The list keeps the device alive after @added lets go of it. */
  added = chp_device_new (info);
  chp_object_list_append (CHP_OBJECT_LIST (self), added);

  return added;
}

void
chp_device_list_remove (ChpDeviceList *self,
                        const char    *device_id)
{
  guint index;

  g_return_if_fail (CHP_IS_DEVICE_LIST (self));

  if (chp_object_list_find (CHP_OBJECT_LIST (self), has_id, device_id, &index) != NULL)
    chp_object_list_remove_at (CHP_OBJECT_LIST (self), index);
}

/* Returns: (transfer none) (nullable) */
ChpDevice *
chp_device_list_lookup (ChpDeviceList *self,
                        const char    *device_id)
{
  g_return_val_if_fail (CHP_IS_DEVICE_LIST (self), NULL);

  return device_id != NULL
    ? chp_object_list_find (CHP_OBJECT_LIST (self), has_id, device_id, NULL) : NULL;
}

typedef struct
{
  const char *installation_id;
  const char *origin;
} Installation;

static gboolean
is_installation (gpointer      item,
                 gconstpointer data)
{
  const ChpDeviceInfo *info = chp_device_get_info (item);
  const Installation *installation = data;

  return g_strcmp0 (info->installation_id, installation->installation_id) == 0 &&
         g_strcmp0 (info->origin, installation->origin) == 0;
}

/* Returns: (transfer none) (nullable) */
ChpDevice *
chp_device_list_find_by_installation (ChpDeviceList *self,
                                      const char    *installation_id,
                                      const char    *origin)
{
  Installation installation = { installation_id, origin };

  g_return_val_if_fail (CHP_IS_DEVICE_LIST (self), NULL);

  return chp_object_list_find (CHP_OBJECT_LIST (self), is_installation, &installation, NULL);
}

static gboolean
has_origin (gpointer      item,
            gconstpointer origin)
{
  return g_strcmp0 (chp_device_get_origin (item), origin) == 0;
}

/* Returns: (transfer none) (nullable): the first device paired from @origin */
ChpDevice *
chp_device_list_find_by_origin (ChpDeviceList *self,
                                const char    *origin)
{
  g_return_val_if_fail (CHP_IS_DEVICE_LIST (self), NULL);

  return chp_object_list_find (CHP_OBJECT_LIST (self), has_origin, origin, NULL);
}
