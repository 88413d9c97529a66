/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-managed-policy.h: what an administrator locked for everyone on this computer, from
 * /etc/chaperone/policy.conf — read once at start, never written, never changed by the person,
 * an agent or a page. */
#pragma once

#include <glib-object.h>

#include "chp-transport.h"

G_BEGIN_DECLS

#define CHP_MANAGED_POLICY_PATH "/etc/chaperone/policy.conf"

#define CHP_TYPE_MANAGED_POLICY (chp_managed_policy_get_type ())

G_DECLARE_FINAL_TYPE (ChpManagedPolicy, chp_managed_policy, CHP, MANAGED_POLICY, GObject)

ChpManagedPolicy   *chp_managed_policy_new_empty         (void);
ChpManagedPolicy   *chp_managed_policy_load              (const char        *path);

gboolean            chp_managed_policy_get_present       (ChpManagedPolicy  *self);
const char         *chp_managed_policy_get_path          (ChpManagedPolicy  *self);
const char         *chp_managed_policy_get_error         (ChpManagedPolicy  *self);
guint16             chp_managed_policy_get_bridge_port   (ChpManagedPolicy  *self);
guint               chp_managed_policy_get_max_grant_minutes (ChpManagedPolicy *self);
const char * const *chp_managed_policy_get_floor_blind   (ChpManagedPolicy  *self);
const char * const *chp_managed_policy_get_floor_hands_only (ChpManagedPolicy *self);
gboolean            chp_managed_policy_get_api_calls     (ChpManagedPolicy  *self);
gboolean            chp_managed_policy_get_site_learning (ChpManagedPolicy  *self);
ChpTransportLock    chp_managed_policy_get_transport     (ChpManagedPolicy  *self);
char              **chp_managed_policy_dup_locks         (ChpManagedPolicy  *self);

G_END_DECLS
