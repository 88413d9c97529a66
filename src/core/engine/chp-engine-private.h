/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-engine-private.h: the inside of ChpEngine, shared by the files that implement it —
 * chp-engine.c (the object, start-up, settings), chp-engine-events.c (what browsers tell it),
 * chp-engine-person.c (what the person does through the widgets) and chp-engine-agent.c (what
 * agents ask through the tools). Nothing outside src/core/engine includes this. */
#pragma once

#include "chp-engine.h"

G_BEGIN_DECLS

struct _ChpEngine
{
  GObject parent_instance;

  char *data_dir;
  ChpIdentity *identity;
  ChpStore *store;
  gboolean site_learning_off;    /* the person turned "Learn how sites work" off */
  ChpSiteList *sites;            /* the remembered sites, for the person's Sites page */
  ChpDeviceList *devices;
  ChpPairingManager *pairing;
  ChpBridge *bridge;
  ChpGrantList *grants;
  ChpHandoffList *handoffs;
  ChpHoldList *holds;
  ChpPlanList *plans;
  ChpUrlFloor *floor;
  ChpAgentSessionList *agent_sessions;
  ChpSafetySettings *safety;
  ChpManagedPolicy *policy;      /* the administrator's locks; an empty one when there are none */
  ChpApprovalRuleList *rules;
  ChpTraceRecorder *traces;  /* from start on */
  GPtrArray *parked;        /* ParkedHold: held holds waiting for the answer of the act they came from */
  GHashTable *hold_agents;  /* "device\nhold" → the name of the agent whose act it held */

  gboolean stopped;
  GPtrArray *agent_calls;  /* AgentCall: the agents' calls on their way to a browser */

  guint default_grant_minutes;
  guint audit_max_rows;
};

enum {
  PROP_0,
  PROP_STOPPED,
  PROP_DEFAULT_GRANT_MINUTES,
  PROP_AUDIT_MAX_ROWS,
  N_PROPS
};

enum {
  SIGNAL_HANDOFF_ARRIVED,
  SIGNAL_HANDOFF_CHANGED,
  SIGNAL_HOLD_ARRIVED,
  SIGNAL_HOLD_CHANGED,
  SIGNAL_TRACE_CHANGED,
  N_SIGNALS
};

typedef struct
{
  GTask    *task;
  gboolean  answered;  /* Stop all answered it already; the browser's answer is dropped */
  char     *device_id;
  char     *method;
  char     *agent;     /* the calling agent's name (clientInfo.name), or NULL */
} AgentCall;

/* chp-engine.c: the engine's signals and the stopped flag's notification. */
void chp_engine_emit_hold_changed    (ChpEngine  *self,
                                      ChpHold    *hold,
                                      gboolean    arrived);
void chp_engine_emit_handoff_changed (ChpEngine  *self,
                                      ChpHandoff *handoff,
                                      gboolean    arrived);
void chp_engine_notify_stopped       (ChpEngine  *self);

/* chp-engine-policy.c: the administrator's locks at the agents' door. */
gboolean chp_engine_policy_refuses   (ChpEngine   *self,
                                      const char  *device_id,
                                      const char  *method,
                                      JsonNode    *params,
                                      GError     **error);
void     chp_engine_apply_floor_rules (ChpEngine  *self);

/* chp-engine-events.c: listens to the devices list, then to the bridge once it exists. */
void chp_engine_watch_devices        (ChpEngine  *self);
void chp_engine_watch_bridge         (ChpEngine  *self);
void chp_engine_apply_hold           (ChpEngine  *self,
                                      const char *device_id,
                                      JsonObject *object);
void chp_engine_apply_hold_now       (ChpEngine  *self,
                                      const char *device_id,
                                      JsonObject *object);
void chp_engine_mirror_hold          (ChpEngine  *self,
                                      const char *device_id,
                                      JsonObject *object);

/* chp-engine-rules.c: which agent's act a hold came from, and the person's rules. */
void     chp_engine_rules_init        (ChpEngine    *self);
void     chp_engine_rules_dispose     (ChpEngine    *self);
gboolean chp_engine_park_hold         (ChpEngine    *self,
                                       const char   *device_id,
                                       JsonObject   *object);
gboolean chp_engine_apply_by_rule     (ChpEngine    *self,
                                       const char   *device_id,
                                       JsonObject   *object,
                                       AgentCall    *call,
                                       JsonNode     *answer);
void     chp_engine_forget_hold_agent (ChpEngine    *self,
                                       ChpHold      *hold);
gboolean chp_engine_release_holds     (ChpEngine    *self,
                                       AgentCall    *call,
                                       JsonNode     *answer);
void     chp_engine_agent_call_free   (AgentCall    *call);

/* chp-engine-person.c: tells one browser to stop (fire and forget). */
void chp_engine_send_stop            (ChpEngine  *self,
                                      const char *device_id);

/* GLib 2.74 has no g_set_str. */
static inline void
chp_engine_replace_str (char       **slot,
                        const char  *value)
{
  g_free (*slot);
  *slot = g_strdup (value);
}

G_END_DECLS
