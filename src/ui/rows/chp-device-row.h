/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-device-row.h: one paired browser on the Browsers page, as a card. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_DEVICE_ROW (chp_device_row_get_type ())

G_DECLARE_FINAL_TYPE (ChpDeviceRow, chp_device_row, CHP, DEVICE_ROW, GtkListBoxRow)

GtkWidget *chp_device_row_new        (ChpDevice    *device,
                                      ChpEngine    *engine);
ChpDevice *chp_device_row_get_device (ChpDeviceRow *self);

G_END_DECLS
