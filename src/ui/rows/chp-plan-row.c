/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-plan-row.c: the person reads an agent's plan and approves it once, or declines it. The
 * summaries are the agent's words: plain labels, bounded, never markup. What a plan can cover is
 * the core's to decide (creates and edits only); the card says what it never covers. The buttons
 * are widget actions: nothing on the session bus can press them. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-plan-row"

#include "chp-plan-row.h"

#include "chp-a11y.h"

#include <glib/gi18n.h>

struct _ChpPlanRow
{
  GtkListBoxRow parent_instance;

  GtkLabel *title_label;
  GtkLabel *summary_label;
  GtkBox *steps_box;
  GtkLabel *error_label;

  ChpPlan *plan;
  ChpEngine *engine;
};

G_DEFINE_FINAL_TYPE (ChpPlanRow, chp_plan_row, GTK_TYPE_LIST_BOX_ROW)

static GtkWidget *
new_step (guint       number,
          const char *kind,
          const char *site,
          const char *summary)
{
  gboolean create = g_strcmp0 (kind, "create") == 0;
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *image = gtk_image_new_from_icon_name (create ? "document-new-symbolic"
                                                          : "document-edit-symbolic");
  GtkWidget *label = gtk_label_new (NULL);
  g_autofree char *text = NULL;

  /* The kind is a closed set (create, edit): ours to word. The site and the summary are the
   * agent's. */
  if (create)
    /* Translators: a step of an agent's plan: its number, the site, then the agent's own
     * summary, e.g. "1. Create on shop.example: Add a delivery address" */
    text = g_strdup_printf (_("%u. Create on %s: %s"), number, site, summary);
  else
    /* Translators: as "%u. Create on %s: %s", for a step that edits something */
    text = g_strdup_printf (_("%u. Edit on %s: %s"), number, site, summary);

  gtk_accessible_update_property (GTK_ACCESSIBLE (image), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  create ? _("Create") : _("Edit"), -1);
  gtk_widget_set_valign (image, GTK_ALIGN_START);
  gtk_label_set_use_markup (GTK_LABEL (label), FALSE);
  gtk_label_set_text (GTK_LABEL (label), text);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_label_set_wrap_mode (GTK_LABEL (label), PANGO_WRAP_WORD_CHAR);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  gtk_label_set_lines (GTK_LABEL (label), 3);
  gtk_label_set_width_chars (GTK_LABEL (label), 10);
  gtk_label_set_max_width_chars (GTK_LABEL (label), 60);
  gtk_widget_set_hexpand (label, TRUE);

  gtk_box_append (GTK_BOX (box), image);
  gtk_box_append (GTK_BOX (box), label);
  return box;
}

static void
fill (ChpPlanRow *self)
{
  const char *client = chp_plan_get_client_name (self->plan);
  g_autofree char *title = NULL;
  guint n_steps = chp_plan_get_n_steps (self->plan);

  /* An agent that gave no name is still an agent. */
  if (client == NULL || *client == '\0')
    client = _("An agent");
  /* Translators: %s is the agent's name as it gives it, e.g. "Claude Desktop" */
  title = g_strdup_printf (_("%s asks to follow a plan"), client);
  gtk_label_set_text (self->title_label, title);
  gtk_label_set_text (self->summary_label, chp_plan_get_summary (self->plan));

  for (guint i = 0; i < n_steps; i++)
    {
      const char *kind, *site, *summary;

      if (chp_plan_get_step (self->plan, i, &kind, &site, &summary, NULL))
        gtk_box_append (self->steps_box, new_step (i + 1, kind, site, summary));
    }
}

static void
decide (ChpPlanRow *self,
        gboolean    approve)
{
  /* Deciding takes the plan out of Needs you, and with it this row, before the call returns:
   * keep the row (and the plan's id) until the end. */
  g_autoptr(ChpPlanRow) keep G_GNUC_UNUSED = g_object_ref (self);
  g_autofree char *plan_id = g_strdup (chp_plan_get_id (self->plan));
  g_autoptr(ChpEngine) engine = g_object_ref (self->engine);

  if (chp_engine_decide_plan (engine, plan_id, approve))
    {
      if (self->error_label != NULL)
        gtk_widget_set_visible (GTK_WIDGET (self->error_label), FALSE);
      return;
    }

  if (self->error_label == NULL)
    return;
  if (approve && chp_engine_get_stopped (engine))
    gtk_label_set_text (self->error_label,
                        _("Everything is stopped. Press Resume All before you approve a plan."));
  else
    gtk_label_set_text (self->error_label, _("This plan has ended; there is nothing to decide."));
  gtk_widget_set_visible (GTK_WIDGET (self->error_label), TRUE);
}

static void
approve_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  decide (CHP_PLAN_ROW (widget), TRUE);
}

static void
decline_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  decide (CHP_PLAN_ROW (widget), FALSE);
}

ChpPlan *
chp_plan_row_get_plan (ChpPlanRow *self)
{
  g_return_val_if_fail (CHP_IS_PLAN_ROW (self), NULL);

  return self->plan;
}

static void
chp_plan_row_dispose (GObject *object)
{
  ChpPlanRow *self = CHP_PLAN_ROW (object);

  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_PLAN_ROW);
  g_clear_object (&self->plan);
  g_clear_object (&self->engine);

  G_OBJECT_CLASS (chp_plan_row_parent_class)->dispose (object);
}

static void
chp_plan_row_class_init (ChpPlanRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_plan_row_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-plan-row.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpPlanRow, title_label);
  gtk_widget_class_bind_template_child (widget_class, ChpPlanRow, summary_label);
  gtk_widget_class_bind_template_child (widget_class, ChpPlanRow, steps_box);
  gtk_widget_class_bind_template_child (widget_class, ChpPlanRow, error_label);

  gtk_widget_class_install_action (widget_class, "plan.approve", NULL, approve_action);
  gtk_widget_class_install_action (widget_class, "plan.decline", NULL, decline_action);
}

static void
chp_plan_row_init (ChpPlanRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  chp_a11y_name_buttons (GTK_WIDGET (self));
}

GtkWidget *
chp_plan_row_new (ChpPlan   *plan,
                  ChpEngine *engine)
{
  ChpPlanRow *self;

  g_return_val_if_fail (CHP_IS_PLAN (plan), NULL);
  g_return_val_if_fail (CHP_IS_ENGINE (engine), NULL);

  self = g_object_new (CHP_TYPE_PLAN_ROW, NULL);
  self->plan = g_object_ref (plan);
  self->engine = g_object_ref (engine);
  fill (self);

  return GTK_WIDGET (self);
}
