/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-approval-rule-list.h: the person's standing "Always allow" rules, as a GListModel of
 * ChpApprovalRule. An expired rule leaves the list on its own. */
#pragma once

#include <gio/gio.h>

#include "chp-approval-rule.h"
#include "chp-object-list.h"

G_BEGIN_DECLS

/* More than any person keeps. */
#define CHP_APPROVAL_RULE_LIST_MAX 200

#define CHP_TYPE_APPROVAL_RULE_LIST (chp_approval_rule_list_get_type ())

G_DECLARE_FINAL_TYPE (ChpApprovalRuleList, chp_approval_rule_list, CHP, APPROVAL_RULE_LIST,
                      ChpObjectList)

ChpApprovalRuleList *chp_approval_rule_list_new        (void);
void                 chp_approval_rule_list_set_all    (ChpApprovalRuleList *self,
                                                        GPtrArray           *infos);
gboolean             chp_approval_rule_list_add        (ChpApprovalRuleList *self,
                                                        ChpApprovalRule     *rule);
ChpApprovalRule     *chp_approval_rule_list_lookup     (ChpApprovalRuleList *self,
                                                        const char          *rule_id);
ChpApprovalRule     *chp_approval_rule_list_find_match (ChpApprovalRuleList *self,
                                                        const char          *agent,
                                                        const char          *site,
                                                        const char          *kind,
                                                        gint64               now);
gboolean             chp_approval_rule_list_remove     (ChpApprovalRuleList *self,
                                                        const char          *rule_id);

G_END_DECLS
