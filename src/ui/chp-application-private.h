/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-application-private.h: shared by the parts of ChpApplication (chp-application.c,
 * chp-application-engine.c, chp-application-notify.c, chp-application-tray.c). */
#pragma once

#include "chp-agent-endpoint.h"
#include "chp-application.h"
#include "chp-tray.h"
#include "chp-window.h"

G_BEGIN_DECLS

typedef enum
{
  ENGINE_STOPPED,
  ENGINE_STARTING,
  ENGINE_RUNNING,
  ENGINE_FAILED,
} EngineState;

struct _ChpApplication
{
  AdwApplication parent_instance;

  GSettings *settings;      /* NULL when the schema is not installed */
  char *data_dir;           /* NULL: the engine's default */
  int bridge_port;          /* -1: take it from the settings */
  ChpManagedPolicy *policy; /* the administrator's, read once at start */

  ChpEngine *engine;
  ChpAgentEndpoint *agents;  /* the MCP endpoint composed on the running engine */
  GCancellable *start_cancellable;
  EngineState engine_state;
  char *start_error;
  gulong pairing_changed_id;

  gulong handoff_arrived_id;
  gulong handoffs_changed_id;
  gulong hold_arrived_id;
  gulong holds_changed_id;
  gulong stopped_changed_id;
  gulong trace_cap_changed_id;  /* on settings, while an engine runs */
  gulong site_learning_changed_id;  /* on settings, while there is an engine */

  /* Everything that waits for the person, as the Needs you page lists it: the tray counts it
   * even when no window is open. */
  GListModel *needs;

  /* The StatusNotifierItem; NULL without a session bus. */
  ChpTray *tray;
  gboolean said_where_tray_is;

  /* Notification ids ("pairing:<request id>", "handoff:<device id>/<handoff id>",
   * "hold:<device id>/<hold id>") that are on screen, so each is withdrawn when its item ends. */
  GHashTable *notified;

  gboolean start_hidden;    /* --background: the first activation shows no window */
  gboolean background_hold; /* holding the app because it runs with no main window */
  guint display_release_id; /* in the tray: the display's drawing memory given back soon */
  gboolean agents_hold;     /* holding the app while agents are connected */
  guint service_grace_id;   /* started by D-Bus activation: time for the agent to connect */

  guint sigterm_id;
  guint sigint_id;
};

/* chp-application.c: the windows */
ChpWindow *chp_application_find_main_window         (ChpApplication    *self);
void       chp_application_update_windows           (ChpApplication    *self);

/* chp-application-engine.c: starting and stopping the engine */
void       chp_application_stop_engine              (ChpApplication    *self);

/* chp-application-notify.c: pairing windows and notifications for what waits for the person */
void       chp_application_withdraw_all             (ChpApplication    *self);
void       chp_application_pairing_items_changed_cb (GListModel        *model,
                                                     guint              position,
                                                     guint              removed,
                                                     guint              added,
                                                     ChpApplication    *self);
void       chp_application_handoff_arrived_cb       (ChpEngine         *engine,
                                                     ChpHandoff        *handoff,
                                                     ChpApplication    *self);
void       chp_application_handoffs_changed_cb      (GListModel        *model,
                                                     guint              position,
                                                     guint              removed,
                                                     guint              added,
                                                     ChpApplication    *self);
void       chp_application_hold_arrived_cb          (ChpEngine         *engine,
                                                     ChpHold           *hold,
                                                     ChpApplication    *self);
void       chp_application_holds_changed_cb         (GListModel        *model,
                                                     guint              position,
                                                     guint              removed,
                                                     guint              added,
                                                     ChpApplication    *self);

/* chp-application-tray.c: the tray icon */
void       chp_application_start_tray               (ChpApplication    *self);
void       chp_application_update_tray              (ChpApplication    *self);

G_END_DECLS
