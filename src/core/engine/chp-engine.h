/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-engine.h: the core assembled: identity, store, devices, pairing and bridge, started in
 * order. The app and the test harness both start exactly this. */
#pragma once

#include <gio/gio.h>

#include "chp-agent-session-list.h"
#include "chp-approval-rule-list.h"
#include "chp-bridge.h"
#include "chp-device-list.h"
#include "chp-grant-list.h"
#include "chp-handoff-list.h"
#include "chp-hold-list.h"
#include "chp-identity.h"
#include "chp-managed-policy.h"
#include "chp-pairing-manager.h"
#include "chp-site-list.h"
#include "chp-plan-list.h"
#include "chp-safety-settings.h"
#include "chp-store.h"
#include "chp-trace-recorder.h"
#include "chp-url-floor.h"

G_BEGIN_DECLS

#define CHP_TYPE_ENGINE (chp_engine_get_type ())

G_DECLARE_FINAL_TYPE (ChpEngine, chp_engine, CHP, ENGINE, GObject)

char              *chp_engine_default_data_dir (void);

ChpEngine         *chp_engine_new              (const char          *data_dir);
const char        *chp_engine_get_data_dir     (ChpEngine           *self);
void               chp_engine_set_result_max_chars  (ChpEngine      *self,
                                                     guint           max_chars);
void               chp_engine_start_async      (ChpEngine           *self,
                                                guint                port,
                                                GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data);
gboolean           chp_engine_start_finish     (ChpEngine           *self,
                                                GAsyncResult        *result,
                                                GError             **error);

ChpIdentity       *chp_engine_get_identity     (ChpEngine           *self);
ChpStore          *chp_engine_get_store        (ChpEngine           *self);
ChpDeviceList     *chp_engine_get_devices      (ChpEngine           *self);
ChpPairingManager *chp_engine_get_pairing      (ChpEngine           *self);
ChpBridge         *chp_engine_get_bridge       (ChpEngine           *self);
ChpGrantList      *chp_engine_get_grants       (ChpEngine           *self);
ChpHandoffList    *chp_engine_get_handoffs     (ChpEngine           *self);
ChpHoldList       *chp_engine_get_holds        (ChpEngine           *self);
ChpPlanList       *chp_engine_get_plans        (ChpEngine           *self);
ChpUrlFloor       *chp_engine_get_floor        (ChpEngine           *self);
ChpSafetySettings *chp_engine_get_safety_settings (ChpEngine        *self);
void               chp_engine_set_floor_rules  (ChpEngine           *self,
                                                const char * const  *blind,
                                                const char * const  *hands_only);

void               chp_engine_revoke_grant_async     (ChpEngine           *self,
                                                      const char          *device_id,
                                                      const char          *grant_id,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
void               chp_engine_resolve_handoff_async  (ChpEngine           *self,
                                                      const char          *device_id,
                                                      const char          *handoff_id,
                                                      const char          *outcome,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
void               chp_engine_resolve_hold_async     (ChpEngine           *self,
                                                      const char          *device_id,
                                                      const char          *hold_id,
                                                      const char          *outcome,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
ChpPlan           *chp_engine_post_plan              (ChpEngine           *self,
                                                      const char          *session_id,
                                                      const char          *client_name,
                                                      JsonObject          *args,
                                                      GError             **error);
gboolean           chp_engine_decide_plan            (ChpEngine           *self,
                                                      const char          *plan_id,
                                                      gboolean             approve);
void               chp_engine_show_handoff_tab_async (ChpEngine           *self,
                                                      const char          *device_id,
                                                      const char          *handoff_id,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
void               chp_engine_resume_device_async    (ChpEngine           *self,
                                                      const char          *device_id,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
JsonNode          *chp_engine_person_call_finish     (ChpEngine           *self,
                                                      GAsyncResult        *result,
                                                      GError             **error);
void               chp_engine_rename_device_async    (ChpEngine           *self,
                                                      const char          *device_id,
                                                      const char          *name,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
gboolean           chp_engine_rename_device_finish   (ChpEngine           *self,
                                                      GAsyncResult        *result,
                                                      GError             **error);

ChpAgentSessionList *chp_engine_get_agent_sessions   (ChpEngine           *self);
ChpTraceRecorder  *chp_engine_get_traces             (ChpEngine           *self);
ChpApprovalRuleList *chp_engine_get_rules            (ChpEngine           *self);
const char        *chp_engine_get_hold_agent         (ChpEngine           *self,
                                                      ChpHold             *hold);
gboolean           chp_engine_can_allow_always       (ChpEngine           *self,
                                                      ChpHold             *hold);
void               chp_engine_allow_always_async     (ChpEngine           *self,
                                                      ChpHold             *hold,
                                                      guint                seconds,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
void               chp_engine_revoke_rule_async      (ChpEngine           *self,
                                                      const char          *rule_id,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
gboolean           chp_engine_revoke_rule_finish     (ChpEngine           *self,
                                                      GAsyncResult        *result,
                                                      GError             **error);
gboolean           chp_engine_get_stopped            (ChpEngine           *self);
gboolean           chp_engine_get_site_learning      (ChpEngine           *self);
ChpManagedPolicy  *chp_engine_get_managed_policy     (ChpEngine           *self);
void               chp_engine_set_managed_policy     (ChpEngine           *self,
                                                      ChpManagedPolicy    *policy);
ChpSiteList       *chp_engine_get_sites              (ChpEngine           *self);
void               chp_engine_sites_changed          (ChpEngine           *self);
void               chp_engine_forget_site_async      (ChpEngine           *self,
                                                      const char          *origin,
                                                      GCancellable        *cancellable,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
void               chp_engine_restore_site_async     (ChpEngine           *self,
                                                      const char          *origin,
                                                      GCancellable        *cancellable,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
gboolean           chp_engine_site_finish            (ChpEngine           *self,
                                                      GAsyncResult        *result,
                                                      GError             **error);
void               chp_engine_export_sites_async     (ChpEngine           *self,
                                                      const char          *origin,
                                                      GCancellable        *cancellable,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
JsonNode          *chp_engine_export_sites_finish    (ChpEngine           *self,
                                                      GAsyncResult        *result,
                                                      GError             **error);
void               chp_engine_set_site_learning      (ChpEngine           *self,
                                                      gboolean             learning);
void               chp_engine_stop_all               (ChpEngine           *self,
                                                      const char          *source);
void               chp_engine_resume_all             (ChpEngine           *self);
void               chp_engine_agent_call_async       (ChpEngine           *self,
                                                      const char          *device_id,
                                                      const char          *method,
                                                      JsonNode            *params,
                                                      guint                timeout_ms,
                                                      GCancellable        *cancellable,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
void               chp_engine_agent_call_as_async    (ChpEngine           *self,
                                                      const char          *session_id,
                                                      const char          *device_id,
                                                      const char          *method,
                                                      JsonNode            *params,
                                                      guint                timeout_ms,
                                                      GCancellable        *cancellable,
                                                      GAsyncReadyCallback  callback,
                                                      gpointer             user_data);
JsonNode          *chp_engine_agent_call_finish      (ChpEngine           *self,
                                                      GAsyncResult        *result,
                                                      GError             **error);
gint64             chp_engine_agent_call_get_queue_us (GAsyncResult       *result);
JsonObject        *chp_engine_agent_call_get_rule_run (GAsyncResult       *result);
void               chp_engine_audit_agent            (ChpEngine           *self,
                                                      const char          *tool,
                                                      const char          *outcome,
                                                      const char          *device_id,
                                                      gint64               duration_ms,
                                                      const char          *error_code);

G_END_DECLS
