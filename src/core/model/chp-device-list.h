/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-device-list.h: the paired, non-revoked browsers, as a GListModel of ChpDevice. */
#pragma once

#include <gio/gio.h>

#include "chp-device.h"
#include "chp-object-list.h"

G_BEGIN_DECLS

#define CHP_TYPE_DEVICE_LIST (chp_device_list_get_type ())

G_DECLARE_FINAL_TYPE (ChpDeviceList, chp_device_list, CHP, DEVICE_LIST, ChpObjectList)

ChpDeviceList *chp_device_list_new                  (void);
void           chp_device_list_set_all              (ChpDeviceList       *self,
                                                     GPtrArray           *infos);
ChpDevice     *chp_device_list_add_or_update        (ChpDeviceList       *self,
                                                     const ChpDeviceInfo *info);
void           chp_device_list_remove               (ChpDeviceList       *self,
                                                     const char          *device_id);
ChpDevice     *chp_device_list_lookup               (ChpDeviceList       *self,
                                                     const char          *device_id);
ChpDevice     *chp_device_list_find_by_installation (ChpDeviceList       *self,
                                                     const char          *installation_id,
                                                     const char          *origin);
ChpDevice     *chp_device_list_find_by_origin       (ChpDeviceList       *self,
                                                     const char          *origin);

G_END_DECLS
