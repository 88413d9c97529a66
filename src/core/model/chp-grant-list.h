/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-grant-list.h: every live grant of every paired browser, as a GListModel of ChpGrant. */
#pragma once

#include <gio/gio.h>

#include "chp-grant.h"
#include "chp-object-list.h"

G_BEGIN_DECLS

#define CHP_TYPE_GRANT_LIST (chp_grant_list_get_type ())

G_DECLARE_FINAL_TYPE (ChpGrantList, chp_grant_list, CHP, GRANT_LIST, ChpObjectList)

ChpGrantList *chp_grant_list_new                (void);
gboolean      chp_grant_list_set_device_grants  (ChpGrantList  *self,
                                                 const char    *device_id,
                                                 JsonArray     *grants,
                                                 GError       **error);
void          chp_grant_list_remove_device      (ChpGrantList  *self,
                                                 const char    *device_id);
ChpGrant     *chp_grant_list_lookup             (ChpGrantList  *self,
                                                 const char    *device_id,
                                                 const char    *grant_id);
guint         chp_grant_list_count_for_device   (ChpGrantList  *self,
                                                 const char    *device_id);
JsonNode     *chp_grant_list_to_json            (ChpGrantList  *self);

G_END_DECLS
