/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-approval-rule.h: one "Always allow" rule the person made on a hold's card: one kind of act
 * (only a write), on one site (an origin), for one agent (its name), until it expires. */
#pragma once

#include <glib-object.h>

#include "chp-store-types.h"

G_BEGIN_DECLS

/* The longest a rule may stand: the person picks an hour, the rest of the day or 30 days. */
#define CHP_APPROVAL_RULE_MAX_SECONDS (30 * 24 * 3600)
#define CHP_APPROVAL_RULE_MAX_AGENT_CHARS 64

#define CHP_TYPE_APPROVAL_RULE (chp_approval_rule_get_type ())

G_DECLARE_FINAL_TYPE (ChpApprovalRule, chp_approval_rule, CHP, APPROVAL_RULE, GObject)

ChpApprovalRule *chp_approval_rule_new           (const ChpRuleInfo *info);
const char      *chp_approval_rule_get_id        (ChpApprovalRule   *self);
const char      *chp_approval_rule_get_agent     (ChpApprovalRule   *self);
const char      *chp_approval_rule_get_site      (ChpApprovalRule   *self);
const char      *chp_approval_rule_get_kind      (ChpApprovalRule   *self);
gint64           chp_approval_rule_get_created_at (ChpApprovalRule  *self);
gint64           chp_approval_rule_get_expires_at (ChpApprovalRule  *self);
gint64           chp_approval_rule_get_use_count (ChpApprovalRule   *self);
gint64           chp_approval_rule_get_last_used (ChpApprovalRule   *self);
void             chp_approval_rule_record_use    (ChpApprovalRule   *self,
                                                  gint64             at);
void             chp_approval_rule_set_revoked   (ChpApprovalRule   *self);
gboolean         chp_approval_rule_get_revoked   (ChpApprovalRule   *self);
gboolean         chp_approval_rule_matches       (ChpApprovalRule   *self,
                                                  const char        *agent,
                                                  const char        *site,
                                                  const char        *kind,
                                                  gint64             now);

gboolean         chp_approval_rule_kind_allowed  (const char        *kind);
gboolean         chp_approval_rule_site_allowed  (const char        *site);
gboolean         chp_approval_rule_agent_allowed (const char        *agent);

G_END_DECLS
