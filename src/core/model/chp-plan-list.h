/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-plan-list.h: the live plans (waiting for the person, or approved with steps left), as a
 * GListModel of ChpPlan. It alone moves a plan on, and ends each after its lifetime. */
#pragma once

#include <gio/gio.h>

#include "chp-object-list.h"
#include "chp-plan.h"

G_BEGIN_DECLS

#define CHP_PLAN_LIFETIME_MS (60 * 60 * 1000)

#define CHP_TYPE_PLAN_LIST (chp_plan_list_get_type ())

G_DECLARE_FINAL_TYPE (ChpPlanList, chp_plan_list, CHP, PLAN_LIST, ChpObjectList)

ChpPlanList *chp_plan_list_new           (void);
void         chp_plan_list_set_lifetime  (ChpPlanList  *self,
                                          guint         lifetime_ms);
char        *chp_plan_list_next_id       (ChpPlanList  *self);
gboolean     chp_plan_list_add           (ChpPlanList  *self,
                                          ChpPlan      *plan,
                                          GError      **error);
ChpPlan     *chp_plan_list_lookup        (ChpPlanList  *self,
                                          const char   *plan_id);
gboolean     chp_plan_list_approve       (ChpPlanList  *self,
                                          const char   *plan_id);
gboolean     chp_plan_list_decline       (ChpPlanList  *self,
                                          const char   *plan_id);
void         chp_plan_list_end_all       (ChpPlanList  *self,
                                          const char   *reason);
void         chp_plan_list_end_session   (ChpPlanList  *self,
                                          const char   *session_id,
                                          const char   *reason);
ChpPlan     *chp_plan_list_find          (ChpPlanList  *self,
                                          const char   *plan_id);
ChpPlan     *chp_plan_list_covering      (ChpPlanList  *self,
                                          const char   *session_id);
gint         chp_plan_list_use_step      (ChpPlanList  *self,
                                          const char   *plan_id,
                                          const char   *host);

G_END_DECLS
