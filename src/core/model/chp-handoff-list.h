/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-handoff-list.h: the handoffs waiting for the person, as a GListModel of ChpHandoff. */
#pragma once

#include <gio/gio.h>

#include "chp-handoff.h"
#include "chp-object-list.h"

G_BEGIN_DECLS

#define CHP_TYPE_HANDOFF_LIST (chp_handoff_list_get_type ())

G_DECLARE_FINAL_TYPE (ChpHandoffList, chp_handoff_list, CHP, HANDOFF_LIST, ChpObjectList)

ChpHandoffList *chp_handoff_list_new           (void);
ChpHandoff     *chp_handoff_list_apply         (ChpHandoffList  *self,
                                                const char      *device_id,
                                                JsonObject      *change,
                                                GError         **error);
void            chp_handoff_list_remove_device (ChpHandoffList  *self,
                                                const char      *device_id);
ChpHandoff     *chp_handoff_list_lookup        (ChpHandoffList  *self,
                                                const char      *device_id,
                                                const char      *handoff_id);
JsonNode       *chp_handoff_list_to_json       (ChpHandoffList  *self);

G_END_DECLS
