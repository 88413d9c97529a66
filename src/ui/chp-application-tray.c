/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-application-tray.c: ChpApplication's tray icon: what its menu asks of the app, and the state
 * and the count of waiting requests it shows. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-app"

#include "chp-application-private.h"

/* The tray shows the most urgent state: stopped, then someone waiting, else idle. */
void
chp_application_update_tray (ChpApplication *self)
{
  ChpTrayState state = CHP_TRAY_STATE_IDLE;
  guint needs = 0;

  if (self->tray == NULL)
    return;

  if (self->engine != NULL && self->engine_state == ENGINE_RUNNING)
    {
      ChpAgentSessionList *agents = chp_engine_get_agent_sessions (self->engine);

      needs = self->needs != NULL ? g_list_model_get_n_items (self->needs) : 0;
      if (chp_engine_get_stopped (self->engine))
        state = CHP_TRAY_STATE_STOPPED;
      else if (needs > 0)
        state = CHP_TRAY_STATE_NEEDS_YOU;
      else if (chp_agent_session_list_count_state (agents, CHP_AGENT_SESSION_RUNNING) > 0)
        state = CHP_TRAY_STATE_WORKING;
    }

  chp_tray_set_needs_count (self->tray, needs);
  chp_tray_set_state (self->tray, state);
}

static void
tray_registered_cb (ChpTray        *tray,
                    GParamSpec     *pspec,
                    ChpApplication *self)
{
  /* Said once: without a tray the window and notifications are how to reach Chaperone. */
  if (!chp_tray_is_registered (tray) && !self->said_where_tray_is)
    {
      self->said_where_tray_is = TRUE;
      g_message ("tray: no status notifier host; Chaperone stays reachable from its window, "
                 "its notifications and the launcher");
    }
}

static gboolean
tray_check_registered_cb (gpointer user_data)
{
  ChpApplication *self = user_data;

  if (self->tray != NULL)
    tray_registered_cb (self->tray, NULL, self);
  return G_SOURCE_REMOVE;
}

static void
tray_open_cb (ChpTray        *tray,
              ChpApplication *self)
{
  chp_application_show_main_window (self, NULL);
}

static void
tray_show_needs_you_cb (ChpTray        *tray,
                        ChpApplication *self)
{
  chp_application_show_main_window (self, "needs-you");
}

/* Stop only ever makes things safer, so the tray (on the session bus) may ask for it; resuming
 * is the person's, in the window. */
static void
tray_stop_all_cb (ChpTray        *tray,
                  ChpApplication *self)
{
  if (self->engine != NULL && self->engine_state == ENGINE_RUNNING)
    chp_engine_stop_all (self->engine, "tray");
}

static void
tray_quit_cb (ChpTray        *tray,
              ChpApplication *self)
{
  g_application_quit (G_APPLICATION (self));
}

/* The StatusNotifierItem, and what its menu asks of the app. */
void
chp_application_start_tray (ChpApplication *self)
{
  GApplication *application = G_APPLICATION (self);

  self->tray = chp_tray_new (g_application_get_dbus_connection (application), APP_ID, NULL);
  g_signal_connect_object (self->tray, "open", G_CALLBACK (tray_open_cb), self, G_CONNECT_DEFAULT);
  g_signal_connect_object (self->tray, "show-needs-you", G_CALLBACK (tray_show_needs_you_cb),
                           self, G_CONNECT_DEFAULT);
  g_signal_connect_object (self->tray, "stop-all", G_CALLBACK (tray_stop_all_cb), self,
                           G_CONNECT_DEFAULT);
  g_signal_connect_object (self->tray, "quit", G_CALLBACK (tray_quit_cb), self, G_CONNECT_DEFAULT);
  g_signal_connect_object (self->tray, "notify::registered", G_CALLBACK (tray_registered_cb),
                           self, G_CONNECT_DEFAULT);
  /* A watcher answers asynchronously; give it a moment before saying there is none. */
  g_timeout_add_seconds_full (G_PRIORITY_DEFAULT, 3, tray_check_registered_cb,
                              g_object_ref (self), g_object_unref);
}
