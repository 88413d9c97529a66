/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-rule-row.c: a rule the person made with "Always allow" on a card. The site is an origin the
 * engine checked and the agent's name is what the agent calls itself: both plain labels. Revoke
 * is a widget action: nothing on the session bus, no agent and no page can press it — nor make,
 * widen or extend a rule, which nothing in the app offers at all. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-rule-row"

#include "chp-rule-row.h"

#include "chp-a11y.h"
#include "chp-hold-row.h"

#include <glib/gi18n.h>

struct _ChpRuleRow
{
  GtkListBoxRow parent_instance;

  GtkLabel *title_label;
  GtkLabel *agent_label;
  GtkLabel *uses_label;
  GtkLabel *error_label;
  GtkWidget *revoke_button;

  ChpApprovalRule *rule;
  ChpEngine *engine;
};

G_DEFINE_FINAL_TYPE (ChpRuleRow, chp_rule_row, GTK_TYPE_LIST_BOX_ROW)

static void
update_uses (ChpRuleRow *self)
{
  gint64 uses = chp_approval_rule_get_use_count (self->rule);
  g_autoptr(GDateTime) until = g_date_time_new_from_unix_local (
    chp_approval_rule_get_expires_at (self->rule) / 1000);
  g_autofree char *when = until != NULL ? g_date_time_format (until, "%x %X") : g_strdup ("");
  g_autofree char *used = NULL;
  g_autofree char *text = NULL;

  if (uses == 0)
    used = g_strdup (_("Not used yet"));
  else
    /* Translators: how many held changes this rule let through */
    used = g_strdup_printf (ngettext ("Used %d time", "Used %d times", (gulong) MIN (uses, G_MAXINT)),
                            (int) MIN (uses, G_MAXINT));
  /* Translators: "Used 3 times · until 12/31/2026 17:00:00" */
  text = g_strdup_printf (_("%s · until %s"), used, when);
  gtk_label_set_text (self->uses_label, text);
}

static void
fill (ChpRuleRow *self)
{
  g_autofree char *host = chp_hold_site_for_title (chp_approval_rule_get_site (self->rule));
  g_autofree char *title = NULL;
  g_autofree char *agent = NULL;
  g_autofree char *revoke_name = NULL;

  /* Translators: %s is a site's host name; the only kind of act a rule covers is a change of
   * data (never a send, a payment or a delete) */
  title = g_strdup_printf (_("Changes on %s"), host);
  gtk_label_set_text (self->title_label, title);
  /* Translators: %s is the agent's name as it gave it, then the site's full origin. A rule
   * covers that agent in every browser paired with Chaperone, not only the one it was made in. */
  agent = g_strdup_printf (_("By %s · %s · in any browser"),
                           chp_approval_rule_get_agent (self->rule),
                           chp_approval_rule_get_site (self->rule));
  gtk_label_set_text (self->agent_label, agent);

  /* Translators: the Revoke button's name for a screen reader; %s is a site's host name */
  revoke_name = g_strdup_printf (_("Revoke the rule for %s"), host);
  chp_a11y_set_name (self->revoke_button, revoke_name);
  gtk_widget_set_tooltip_text (self->revoke_button, revoke_name);
  update_uses (self);
}

static void
revoked_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(ChpRuleRow) self = user_data;
  g_autoptr(GError) error = NULL;

  /* Saved: the engine takes the rule out of the list, and this row with it. Not saved (a full
   * disk): the rule already matches nothing, but a restart would bring it back, so the person
   * is told, and Revoke tries again. */
  if (chp_engine_revoke_rule_finish (CHP_ENGINE (source), result, &error))
    return;

  g_message ("rule not revoked: %s", error->message);
  gtk_label_set_text (self->error_label,
                      _("Revoked until Chaperone restarts, but not saved: it would come back "
                        "then. Press Revoke to try again."));
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), TRUE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "rule.revoke", TRUE);
}

static void
revoke_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  ChpRuleRow *self = CHP_RULE_ROW (widget);

  gtk_widget_action_set_enabled (widget, "rule.revoke", FALSE);
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), FALSE);
  chp_engine_revoke_rule_async (self->engine, chp_approval_rule_get_id (self->rule), revoked_cb,
                                g_object_ref (self));
}

ChpApprovalRule *
chp_rule_row_get_rule (ChpRuleRow *self)
{
  g_return_val_if_fail (CHP_IS_RULE_ROW (self), NULL);

  return self->rule;
}

static void
chp_rule_row_dispose (GObject *object)
{
  ChpRuleRow *self = CHP_RULE_ROW (object);

  if (self->rule != NULL)
    g_signal_handlers_disconnect_by_data (self->rule, self);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_RULE_ROW);
  g_clear_object (&self->rule);
  g_clear_object (&self->engine);

  G_OBJECT_CLASS (chp_rule_row_parent_class)->dispose (object);
}

static void
chp_rule_row_class_init (ChpRuleRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_rule_row_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-rule-row.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpRuleRow, title_label);
  gtk_widget_class_bind_template_child (widget_class, ChpRuleRow, agent_label);
  gtk_widget_class_bind_template_child (widget_class, ChpRuleRow, uses_label);
  gtk_widget_class_bind_template_child (widget_class, ChpRuleRow, error_label);
  gtk_widget_class_bind_template_child (widget_class, ChpRuleRow, revoke_button);

  /* A widget action: not exported on D-Bus. */
  gtk_widget_class_install_action (widget_class, "rule.revoke", NULL, revoke_action);
}

static void
chp_rule_row_init (ChpRuleRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

GtkWidget *
chp_rule_row_new (ChpApprovalRule *rule,
                  ChpEngine       *engine)
{
  ChpRuleRow *self;

  g_return_val_if_fail (CHP_IS_APPROVAL_RULE (rule), NULL);
  g_return_val_if_fail (CHP_IS_ENGINE (engine), NULL);

  self = g_object_new (CHP_TYPE_RULE_ROW, NULL);
  self->rule = g_object_ref (rule);
  self->engine = g_object_ref (engine);
  g_signal_connect_swapped (rule, "notify::use-count", G_CALLBACK (update_uses), self);
  fill (self);

  return GTK_WIDGET (self);
}
