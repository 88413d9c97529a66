/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-device.h: a paired browser as the rest of the app sees it: what was stored, and whether it
 * is online now and how fast it answers. */
#pragma once

#include <glib-object.h>

#include "chp-store-types.h"

G_BEGIN_DECLS

#define CHP_TYPE_DEVICE (chp_device_get_type ())

G_DECLARE_FINAL_TYPE (ChpDevice, chp_device, CHP, DEVICE, GObject)

ChpDevice           *chp_device_new              (const ChpDeviceInfo *info);
const ChpDeviceInfo *chp_device_get_info         (ChpDevice           *self);
void                 chp_device_update_info      (ChpDevice           *self,
                                                  const ChpDeviceInfo *info);
const char          *chp_device_get_id           (ChpDevice           *self);
const char          *chp_device_get_name         (ChpDevice           *self);
const char          *chp_device_get_origin       (ChpDevice           *self);
const char          *chp_device_get_browser      (ChpDevice           *self);
const char          *chp_device_get_fingerprint  (ChpDevice           *self);
gboolean             chp_device_get_online       (ChpDevice           *self);
void                 chp_device_set_online       (ChpDevice           *self,
                                                  gboolean             online);
double               chp_device_get_rtt_ms       (ChpDevice           *self);
void                 chp_device_set_rtt_ms       (ChpDevice           *self,
                                                  double               rtt_ms);
gint64               chp_device_get_last_seen    (ChpDevice           *self);
void                 chp_device_set_last_seen    (ChpDevice           *self,
                                                  gint64               last_seen);
gboolean             chp_device_get_revoked      (ChpDevice           *self);
gboolean             chp_device_get_stopped      (ChpDevice           *self);
void                 chp_device_set_stopped      (ChpDevice           *self,
                                                  gboolean             stopped);

G_END_DECLS
