/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-attention-row.c: Chaperone paused an agent that went round in circles (the same act again
 * and again, or failure after failure on one tab); the person looks and lets it go on, or
 * disconnects it. The card stands for the agent, not one connection: Resume lifts the pause from
 * every session of the agent (the session list does that), Disconnect closes them all. The
 * buttons are widget actions, not app.* or win.* ones: an agent on the session bus must not be
 * able to resume itself. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-attention-row"

#include "chp-attention-row.h"

#include "chp-a11y.h"

#include <glib/gi18n.h>

struct _ChpAttentionRow
{
  GtkListBoxRow parent_instance;

  GtkLabel *title_label;
  GtkLabel *why_label;
  GtkWidget *resume_button;
  GtkWidget *disconnect_button;

  ChpAgentSession *session;
  ChpAgentSessionList *sessions;   /* nullable */
};

G_DEFINE_FINAL_TYPE (ChpAttentionRow, chp_attention_row, GTK_TYPE_LIST_BOX_ROW)

/**
 * chp_attention_row_why_text:
 * @attention: (nullable): why the loop guard paused an agent (#ChpAgentSession:attention)
 *
 * Returns: the reason in the person's words. The code is the core's closed set: the words are ours.
 */
const char *
chp_attention_row_why_text (const char *attention)
{
  if (g_strcmp0 (attention, "repeated") == 0)
    return _("It repeated the same action too many times in a row.");
  if (g_strcmp0 (attention, "failing") == 0)
    return _("Its last three actions on a tab failed.");
  return _("Chaperone paused it so that you can look first.");
}

static void
update (ChpAttentionRow *self)
{
  const char *client = chp_agent_session_get_client_name (self->session);
  g_autofree char *title = NULL;
  g_autofree char *name = NULL;

  if (client == NULL || *client == '\0')
    client = _("Agent");

  /* Translators: %s is the agent's name as it gives it, e.g. "Claude Desktop was paused" */
  title = g_strdup_printf (_("%s was paused"), client);
  gtk_label_set_text (self->title_label, title);
  gtk_label_set_text (self->why_label,
                      chp_attention_row_why_text (chp_agent_session_get_attention (self->session)));

  name = g_strdup_printf (_("Resume %s"), client);
  chp_a11y_set_name (self->resume_button, name);
  g_free (name);
  name = g_strdup_printf (_("Disconnect %s"), client);
  chp_a11y_set_name (self->disconnect_button, name);
}

static void
resume_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  /* Resuming clears the attention, which takes this row away before the call returns. */
  g_autoptr(ChpAgentSession) session = g_object_ref (CHP_ATTENTION_ROW (widget)->session);

  chp_agent_session_request_resume (session);
}

static void
disconnect_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  ChpAttentionRow *self = CHP_ATTENTION_ROW (widget);
  g_autoptr(ChpAgentSession) session = g_object_ref (self->session);
  g_autoptr(ChpAgentSessionList) sessions = self->sessions != NULL ? g_object_ref (self->sessions)
                                                                   : NULL;

  if (sessions != NULL)
    chp_agent_session_list_disconnect_agent (sessions, session);
  else
    chp_agent_session_request_disconnect (session);
}

ChpAgentSession *
chp_attention_row_get_session (ChpAttentionRow *self)
{
  g_return_val_if_fail (CHP_IS_ATTENTION_ROW (self), NULL);

  return self->session;
}

static void
chp_attention_row_dispose (GObject *object)
{
  ChpAttentionRow *self = CHP_ATTENTION_ROW (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_ATTENTION_ROW);
  g_clear_object (&self->session);
  g_clear_object (&self->sessions);

  G_OBJECT_CLASS (chp_attention_row_parent_class)->dispose (object);
}

static void
chp_attention_row_class_init (ChpAttentionRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_attention_row_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/"
                                               "chp-attention-row.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpAttentionRow, title_label);
  gtk_widget_class_bind_template_child (widget_class, ChpAttentionRow, why_label);
  gtk_widget_class_bind_template_child (widget_class, ChpAttentionRow, resume_button);
  gtk_widget_class_bind_template_child (widget_class, ChpAttentionRow, disconnect_button);

  gtk_widget_class_install_action (widget_class, "attention.resume", NULL, resume_action);
  gtk_widget_class_install_action (widget_class, "attention.disconnect", NULL,
                                   disconnect_action);
}

static void
chp_attention_row_init (ChpAttentionRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

/**
 * chp_attention_row_new:
 * @session: the session that speaks for the paused agent
 * @sessions: (nullable): the list it is in, so that Disconnect closes every session of the agent;
 *   %NULL closes @session alone
 */
GtkWidget *
chp_attention_row_new (ChpAgentSession     *session,
                       ChpAgentSessionList *sessions)
{
  ChpAttentionRow *self;

  g_return_val_if_fail (CHP_IS_AGENT_SESSION (session), NULL);
  g_return_val_if_fail (sessions == NULL || CHP_IS_AGENT_SESSION_LIST (sessions), NULL);

  self = g_object_new (CHP_TYPE_ATTENTION_ROW, NULL);
  self->session = g_object_ref (session);
  self->sessions = sessions != NULL ? g_object_ref (sessions) : NULL;
  g_signal_connect_object (session, "notify::client-name", G_CALLBACK (update), self,
                           G_CONNECT_SWAPPED);
  update (self);

  return GTK_WIDGET (self);
}
