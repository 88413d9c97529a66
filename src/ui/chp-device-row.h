/* chp-device-row.h: one paired browser in the main window's list. */
#pragma once

#include <adwaita.h>

#include "chp-bridge.h"
#include "chp-device.h"

G_BEGIN_DECLS

#define CHP_TYPE_DEVICE_ROW (chp_device_row_get_type ())

G_DECLARE_FINAL_TYPE (ChpDeviceRow, chp_device_row, CHP, DEVICE_ROW, AdwActionRow)

GtkWidget *chp_device_row_new        (ChpDevice    *device,
                                      ChpBridge    *bridge);
ChpDevice *chp_device_row_get_device (ChpDeviceRow *self);

G_END_DECLS
