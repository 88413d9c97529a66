/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-plan.h: an agent's plan of creates and edits (DESIGN §8). The person approves it once in the
 * app; then writes on its sites go through without a card each, one step per item saved, until
 * its steps are used, an hour has passed, or the person stops. Deletes, messages and payments are
 * never a plan's: a plan has no step kind for them. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define CHP_PLAN_MAX_STEPS 20

#define CHP_TYPE_PLAN (chp_plan_get_type ())

G_DECLARE_FINAL_TYPE (ChpPlan, chp_plan, CHP, PLAN, GObject)

ChpPlan    *chp_plan_new_from_args (const char   *plan_id,
                                    const char   *session_id,
                                    const char   *client_name,
                                    JsonObject   *args,
                                    GError      **error);
const char *chp_plan_get_id          (ChpPlan      *self);
const char *chp_plan_get_session_id  (ChpPlan      *self);
const char *chp_plan_get_client_name (ChpPlan      *self);
const char *chp_plan_get_summary     (ChpPlan      *self);
const char *chp_plan_get_state       (ChpPlan      *self);
const char *chp_plan_get_end_reason  (ChpPlan      *self);
gint64      chp_plan_get_expires_at  (ChpPlan      *self);
guint       chp_plan_get_n_steps     (ChpPlan      *self);
guint       chp_plan_get_n_used      (ChpPlan      *self);
gboolean    chp_plan_get_step        (ChpPlan      *self,
                                      guint         index,
                                      const char  **kind,
                                      const char  **site,
                                      const char  **summary,
                                      gboolean     *used);
gboolean    chp_plan_is_live         (ChpPlan      *self);
gboolean    chp_plan_is_approved     (ChpPlan      *self);
void        chp_plan_set_state       (ChpPlan      *self,
                                      const char   *state,
                                      const char   *end_reason,
                                      gint64        expires_at);
char      **chp_plan_sites_left      (ChpPlan      *self);
gint        chp_plan_use_step        (ChpPlan      *self,
                                      const char   *host);
JsonNode   *chp_plan_to_json         (ChpPlan      *self);

gboolean    chp_plan_site_matches    (const char   *site,
                                      const char   *host);

G_END_DECLS
