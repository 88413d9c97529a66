/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-agent-row.c: the buttons are widget actions, not app.* or win.* ones: an agent on the
 * session bus must not be able to resume itself (or another agent). */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-agent-row"

#include "chp-agent-row.h"

#include "chp-a11y.h"
#include "chp-attention-row.h"

#include <glib/gi18n.h>

struct _ChpAgentRow
{
  GtkListBoxRow parent_instance;

  GtkLabel *name_label;
  GtkWidget *status_dot;
  GtkLabel *state_label;
  GtkLabel *details_label;
  GtkLabel *pause_label;
  GtkLabel *step_label;
  GtkLabel *plan_label;
  GtkWidget *buttons;
  GtkWidget *pause_button;
  GtkWidget *resume_button;
  GtkWidget *disconnect_button;

  ChpAgentSession *session;
  ChpPlanList *plans;   /* nullable */
};

G_DEFINE_FINAL_TYPE (ChpAgentRow, chp_agent_row, GTK_TYPE_LIST_BOX_ROW)

static void
update (ChpAgentRow *self)
{
  const char *client = chp_agent_session_get_client_name (self->session);
  const char *step = chp_agent_session_get_current_step (self->session);
  const char *last_error = chp_agent_session_get_last_error (self->session);
  const char *attention = chp_agent_session_get_attention (self->session);
  ChpAgentSessionState state = chp_agent_session_get_state (self->session);
  guint calls = chp_agent_session_get_calls (self->session);
  g_autoptr(GDateTime) since = g_date_time_new_from_unix_local (chp_agent_session_get_since (self->session) / 1000);
  g_autofree char *since_text = g_date_time_format (since, "%X");
  g_autoptr(GString) details = g_string_new (NULL);
  g_autoptr(GString) now = g_string_new (NULL);
  g_autoptr(GString) why = g_string_new (NULL);
  g_autofree char *name = NULL;

  /* An agent that gave no name is still an agent. */
  if (client == NULL)
    client = _("Agent");
  gtk_label_set_text (self->name_label, client);

  switch (state)
    {
    case CHP_AGENT_SESSION_RUNNING:
      gtk_label_set_text (self->state_label, _("Running"));
      break;
    case CHP_AGENT_SESSION_PAUSED:
      gtk_label_set_text (self->state_label, _("Paused"));
      break;
    case CHP_AGENT_SESSION_DISCONNECTED:
    default:
      gtk_label_set_text (self->state_label, _("Disconnected"));
      break;
    }
  if (state == CHP_AGENT_SESSION_RUNNING)
    gtk_widget_add_css_class (self->status_dot, "online");
  else
    gtk_widget_remove_css_class (self->status_dot, "online");
  if (state == CHP_AGENT_SESSION_PAUSED)
    gtk_widget_add_css_class (self->status_dot, "stopped");
  else
    gtk_widget_remove_css_class (self->status_dot, "stopped");

  /* Translators: when the agent connected (a time of day), e.g. "Connected at 14:02:11" */
  g_string_append_printf (details, _("Connected at %s"), since_text);
  g_string_append (details, " · ");
  g_string_append_printf (details, ngettext ("%u call", "%u calls", calls), calls);
  if (last_error != NULL)
    {
      g_string_append_c (details, '\n');
      /* Translators: a protocol error code, e.g. "Last error: stale_node" */
      g_string_append_printf (details, _("Last error: %s"), last_error);
    }
  gtk_label_set_text (self->details_label, details->str);

  /* A pause is the agent's: a session it holds that the person never paused says where it came
   * from, and the loop guard's pause says why. */
  if (state == CHP_AGENT_SESSION_PAUSED && chp_agent_session_get_inherited (self->session))
    g_string_append (why, _("Paused with another session of this agent"));
  if (state == CHP_AGENT_SESSION_PAUSED && attention != NULL)
    {
      if (why->len > 0)
        g_string_append_c (why, '\n');
      g_string_append (why, chp_attention_row_why_text (attention));
    }
  gtk_label_set_text (self->pause_label, why->str);
  gtk_widget_set_visible (GTK_WIDGET (self->pause_label), why->len > 0);

  if (step != NULL)
    /* Translators: what the agent says it is doing now */
    g_string_append_printf (now, _("Now: %s"), step);
  gtk_label_set_text (self->step_label, now->str);
  gtk_widget_set_visible (GTK_WIDGET (self->step_label), now->len > 0);

  gtk_widget_set_visible (self->pause_button, state == CHP_AGENT_SESSION_RUNNING);
  gtk_widget_set_visible (self->resume_button, state == CHP_AGENT_SESSION_PAUSED);
  gtk_widget_set_visible (self->buttons, state != CHP_AGENT_SESSION_DISCONNECTED);

  name = g_strdup_printf (_("Pause %s"), client);
  chp_a11y_set_name (self->pause_button, name);
  g_free (name);
  name = g_strdup_printf (_("Resume %s"), client);
  chp_a11y_set_name (self->resume_button, name);
  g_free (name);
  name = g_strdup_printf (_("Disconnect %s"), client);
  chp_a11y_set_name (self->disconnect_button, name);
}

/* An approved plan of this agent's, as far as it has gone. */
static void
update_plan (ChpAgentRow *self)
{
  ChpPlan *plan = NULL;
  g_autofree char *text = NULL;

  if (self->plans != NULL)
    plan = chp_plan_list_covering (self->plans, chp_agent_session_get_id (self->session));

  if (plan != NULL && chp_plan_get_n_used (plan) == 0)
    text = g_strdup (_("Plan approved; no step taken yet"));
  else if (plan != NULL)
    /* Translators: how far an approved plan has gone, e.g. "Plan: step 2 of 5" */
    text = g_strdup_printf (_("Plan: step %u of %u"), chp_plan_get_n_used (plan),
                            chp_plan_get_n_steps (plan));

  gtk_label_set_text (self->plan_label, text != NULL ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (self->plan_label), text != NULL);
}

/* A plan is approved (notify::state) and used (notify::used) without leaving the list. */
static void
plans_changed_cb (GListModel  *model,
                  guint        position,
                  guint        removed,
                  guint        added,
                  ChpAgentRow *self)
{
  for (guint i = position; i < position + added; i++)
    {
      g_autoptr(ChpPlan) plan = g_list_model_get_item (model, i);

      if (plan != NULL &&
          g_strcmp0 (chp_plan_get_session_id (plan), chp_agent_session_get_id (self->session)) == 0)
        g_signal_connect_object (plan, "notify", G_CALLBACK (update_plan), self,
                                 G_CONNECT_SWAPPED);
    }
  update_plan (self);
}

static void
pause_action (GtkWidget  *widget,
              const char *action_name,
              GVariant   *parameter)
{
  chp_agent_session_request_pause (CHP_AGENT_ROW (widget)->session);
}

static void
resume_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  chp_agent_session_request_resume (CHP_AGENT_ROW (widget)->session);
}

static void
disconnect_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  chp_agent_session_request_disconnect (CHP_AGENT_ROW (widget)->session);
}

ChpAgentSession *
chp_agent_row_get_session (ChpAgentRow *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_ROW (self), NULL);

  return self->session;
}

static void
chp_agent_row_dispose (GObject *object)
{
  ChpAgentRow *self = CHP_AGENT_ROW (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_AGENT_ROW);
  g_clear_object (&self->session);
  g_clear_object (&self->plans);

  G_OBJECT_CLASS (chp_agent_row_parent_class)->dispose (object);
}

static void
chp_agent_row_class_init (ChpAgentRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_agent_row_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-agent-row.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpAgentRow, name_label);
  gtk_widget_class_bind_template_child (widget_class, ChpAgentRow, status_dot);
  gtk_widget_class_bind_template_child (widget_class, ChpAgentRow, state_label);
  gtk_widget_class_bind_template_child (widget_class, ChpAgentRow, details_label);
  gtk_widget_class_bind_template_child (widget_class, ChpAgentRow, pause_label);
  gtk_widget_class_bind_template_child (widget_class, ChpAgentRow, step_label);
  gtk_widget_class_bind_template_child (widget_class, ChpAgentRow, plan_label);
  gtk_widget_class_bind_template_child (widget_class, ChpAgentRow, buttons);
  gtk_widget_class_bind_template_child (widget_class, ChpAgentRow, pause_button);
  gtk_widget_class_bind_template_child (widget_class, ChpAgentRow, resume_button);
  gtk_widget_class_bind_template_child (widget_class, ChpAgentRow, disconnect_button);

  gtk_widget_class_install_action (widget_class, "agent.pause", NULL, pause_action);
  gtk_widget_class_install_action (widget_class, "agent.resume", NULL, resume_action);
  gtk_widget_class_install_action (widget_class, "agent.disconnect", NULL, disconnect_action);
}

static void
chp_agent_row_init (ChpAgentRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/**
 * chp_agent_row_new:
 * @plans: (nullable): the engine's plans, to show how far this agent's approved plan has gone
 */
GtkWidget *
chp_agent_row_new (ChpAgentSession *session,
                   ChpPlanList     *plans)
{
  ChpAgentRow *self;

  g_return_val_if_fail (CHP_IS_AGENT_SESSION (session), NULL);
  g_return_val_if_fail (plans == NULL || CHP_IS_PLAN_LIST (plans), NULL);

  self = g_object_new (CHP_TYPE_AGENT_ROW, NULL);
  self->session = g_object_ref (session);
  g_signal_connect_object (session, "notify", G_CALLBACK (update), self, G_CONNECT_SWAPPED);
  update (self);

  if (plans != NULL)
    {
      self->plans = g_object_ref (plans);
      g_signal_connect_object (plans, "items-changed", G_CALLBACK (plans_changed_cb), self,
                               G_CONNECT_DEFAULT);
      plans_changed_cb (G_LIST_MODEL (plans), 0, 0, g_list_model_get_n_items (G_LIST_MODEL (plans)),
                        self);
    }
  else
    update_plan (self);

  return GTK_WIDGET (self);
}
