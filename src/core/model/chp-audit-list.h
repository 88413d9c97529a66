/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-audit-list.h: the activity log as a GListModel of ChpAuditItem, newest first, read from
 * the store a page at a time as a list view asks for rows, so that a long log costs only what
 * is on screen. */
#pragma once

#include <gio/gio.h>

#include "chp-audit-item.h"
#include "chp-store.h"

G_BEGIN_DECLS

#define CHP_AUDIT_LIST_PAGE_SIZE 100
#define CHP_AUDIT_LIST_MAX_PAGES 64

#define CHP_TYPE_AUDIT_LIST (chp_audit_list_get_type ())

G_DECLARE_FINAL_TYPE (ChpAuditList, chp_audit_list, CHP, AUDIT_LIST, GObject)

ChpAuditList        *chp_audit_list_new         (ChpStore            *store);
ChpStore            *chp_audit_list_get_store   (ChpAuditList        *self);
const ChpAuditQuery *chp_audit_list_get_query   (ChpAuditList        *self);
void                 chp_audit_list_set_query   (ChpAuditList        *self,
                                                 const ChpAuditQuery *query);
gboolean             chp_audit_list_get_loading (ChpAuditList        *self);
void                 chp_audit_list_reload      (ChpAuditList        *self);

G_END_DECLS
