/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-audit-item.h: one row of the activity log as a list item. It may be a placeholder whose
 * row is still being read; it fills in place (notify::loaded) when the row arrives. */
#pragma once

#include <glib-object.h>

#include "chp-store-types.h"

G_BEGIN_DECLS

#define CHP_TYPE_AUDIT_ITEM (chp_audit_item_get_type ())

G_DECLARE_FINAL_TYPE (ChpAuditItem, chp_audit_item, CHP, AUDIT_ITEM, GObject)

ChpAuditItem        *chp_audit_item_new        (void);
gboolean             chp_audit_item_get_loaded (ChpAuditItem        *self);
const ChpAuditEntry *chp_audit_item_get_entry  (ChpAuditItem        *self);
void                 chp_audit_item_set_entry  (ChpAuditItem        *self,
                                                const ChpAuditEntry *entry);

G_END_DECLS
