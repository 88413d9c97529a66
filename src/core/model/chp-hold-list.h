/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-hold-list.h: the holds waiting for the person, as a GListModel of ChpHold. */
#pragma once

#include <gio/gio.h>

#include "chp-hold.h"
#include "chp-object-list.h"

G_BEGIN_DECLS

#define CHP_TYPE_HOLD_LIST (chp_hold_list_get_type ())

G_DECLARE_FINAL_TYPE (ChpHoldList, chp_hold_list, CHP, HOLD_LIST, ChpObjectList)

ChpHoldList *chp_hold_list_new           (void);
ChpHold     *chp_hold_list_apply         (ChpHoldList  *self,
                                          const char   *device_id,
                                          JsonObject   *change,
                                          GError      **error);
void         chp_hold_list_remove_device (ChpHoldList  *self,
                                          const char   *device_id);
ChpHold     *chp_hold_list_lookup        (ChpHoldList  *self,
                                          const char   *device_id,
                                          const char   *hold_id);

G_END_DECLS
