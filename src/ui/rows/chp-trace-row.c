/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-row.c: a list view recycles rows, so a row is given an item, follows it while it
 * holds it (a placeholder fills in, an open session grows and ends), and lets go of it.
 *
 * To a screen reader a row is a button named with what it shows, and its action (row.open)
 * opens the session: GTK 4.8's list rows have no action of their own on the accessibility bus
 * (their select and activate take a position), so without it a session could be opened with the
 * pointer and the keyboard but not through the assistive technology. */
#include "config.h"

#include "chp-trace-row.h"

#include "chp-trace-format.h"

#include <glib/gi18n.h>

/* Sites named in a row; the rest are counted. */
#define ROW_SITES 3

struct _ChpTraceRow
{
  GtkBox parent_instance;

  GtkLabel *agent_label;
  GtkLabel *outcome_label;
  GtkLabel *where_label;
  GtkLabel *counts_label;
  GtkLabel *errors_label;
  GtkLabel *when_label;

  ChpTraceItem *item;
};

G_DEFINE_FINAL_TYPE (ChpTraceRow, chp_trace_row, GTK_TYPE_BOX)

enum {
  SIGNAL_OPEN,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
set_outcome_style (ChpTraceRow *self,
                   const char  *outcome)
{
  static const char * const classes[] = { "success", "error", "warning", "accent" };
  const char *wanted;

  if (outcome == NULL)
    wanted = "accent";
  else if (g_str_equal (outcome, "completed") || g_str_equal (outcome, "ok"))
    wanted = "success";
  else if (g_str_equal (outcome, "failed") || g_str_equal (outcome, "error"))
    wanted = "error";
  else
    wanted = "warning";

  /* Never colour alone: the word says it too. */
  for (guint i = 0; i < G_N_ELEMENTS (classes); i++)
    if (g_str_equal (classes[i], wanted))
      gtk_widget_add_css_class (GTK_WIDGET (self->outcome_label), classes[i]);
    else
      gtk_widget_remove_css_class (GTK_WIDGET (self->outcome_label), classes[i]);
}

static void
update (ChpTraceRow *self)
{
  const char *agent, *device;
  g_autofree char *sites = NULL;
  g_autofree char *where = NULL;
  g_autofree char *counts = NULL;
  g_autofree char *errors = NULL;
  g_autofree char *when = NULL;
  g_autofree char *duration = NULL;
  g_autofree char *when_line = NULL;
  gint64 now = g_get_real_time ();

  if (self->item == NULL || !chp_trace_item_get_loaded (self->item))
    {
      /* Being read: a placeholder that takes the row's height without words. */
      gtk_label_set_text (self->agent_label, "…");
      gtk_label_set_text (self->outcome_label, "");
      gtk_widget_set_visible (GTK_WIDGET (self->outcome_label), FALSE);
      gtk_label_set_text (self->where_label, "");
      gtk_label_set_text (self->counts_label, "");
      gtk_widget_set_visible (GTK_WIDGET (self->errors_label), FALSE);
      gtk_label_set_text (self->when_label, "");
      gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      _("A session being read"), -1);
      return;
    }

  agent = chp_trace_item_get_agent (self->item);
  gtk_label_set_text (self->agent_label, agent != NULL && *agent != '\0' ? agent : _("Agent"));
  gtk_label_set_text (self->outcome_label,
                      chp_trace_format_session_outcome (chp_trace_item_get_outcome (self->item)));
  gtk_widget_set_visible (GTK_WIDGET (self->outcome_label), TRUE);
  set_outcome_style (self, chp_trace_item_get_outcome (self->item));

  device = chp_trace_item_get_device (self->item);
  sites = chp_trace_format_sites (chp_trace_item_get_sites (self->item), ROW_SITES);
  if (device != NULL && *device != '\0')
    /* Translators: a browser's name and the sites visited, e.g. "Work Chromium · bank.example" */
    where = g_strdup_printf (_("%s · %s"), device, sites);
  gtk_label_set_text (self->where_label, where != NULL ? where : sites);

  counts = chp_trace_format_counts (chp_trace_item_get_n_steps (self->item),
                                    chp_trace_item_get_n_asked (self->item),
                                    chp_trace_item_get_n_approved (self->item));
  gtk_label_set_text (self->counts_label, counts);
  errors = chp_trace_format_errors (chp_trace_item_get_n_errors (self->item));
  gtk_label_set_text (self->errors_label, errors != NULL ? errors : "");
  gtk_widget_set_visible (GTK_WIDGET (self->errors_label), errors != NULL);

  when = chp_trace_format_when (chp_trace_item_get_started_at (self->item), now);
  duration = chp_trace_format_duration (chp_trace_item_get_duration (self->item, 0));
  /* Translators: when a session began and how long it lasted, e.g. "Today at 14:02 · 3 min 5 s" */
  when_line = g_strdup_printf (_("%s · %s"), when, duration);
  gtk_label_set_text (self->when_label, when_line);

  {
    /* Translators: a session's steps and its errors, as a screen reader says them, e.g.
     * "6 steps · 1 asked you, 1 approved, 2 errors" */
    g_autofree char *done = errors != NULL ? g_strdup_printf (_("%s, %s"), counts, errors)
                                           : g_strdup (counts);
    /* Translators: what a screen reader says of a session in the list: the agent, how the
     * session ended, the browser and sites, what it did, when. E.g. "claude-code, Completed.
     * Chromium · shop.example. 6 steps, 1 error. Today at 14:02 · 3 s" */
    g_autofree char *words = g_strdup_printf (_("%s, %s. %s. %s. %s"),
                                              gtk_label_get_text (self->agent_label),
                                              gtk_label_get_text (self->outcome_label),
                                              gtk_label_get_text (self->where_label), done,
                                              when_line);

    gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL, words,
                                    GTK_ACCESSIBLE_PROPERTY_DESCRIPTION,
                                    _("Opens the session's steps"), -1);
  }
}

static void
open_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  ChpTraceRow *self = CHP_TRACE_ROW (widget);

  /* A row still being read has nothing to open yet. */
  if (self->item != NULL && chp_trace_item_get_loaded (self->item))
    g_signal_emit (self, signals[SIGNAL_OPEN], 0);
}

static void
item_notify_cb (ChpTraceRow *self)
{
  update (self);
}

GtkWidget *
chp_trace_row_new (void)
{
  return g_object_new (CHP_TYPE_TRACE_ROW, NULL);
}

/* @item: (nullable): what to show; %NULL lets go of the last one */
void
chp_trace_row_set_item (ChpTraceRow  *self,
                        ChpTraceItem *item)
{
  g_return_if_fail (CHP_IS_TRACE_ROW (self));
  g_return_if_fail (item == NULL || CHP_IS_TRACE_ITEM (item));

  if (self->item == item)
    return;

  if (self->item != NULL)
    g_signal_handlers_disconnect_by_func (self->item, item_notify_cb, self);
  g_set_object (&self->item, item);
  if (item != NULL)
    /* One handler for every property: set_session() notifies them frozen, in one go. */
    g_signal_connect_swapped (item, "notify", G_CALLBACK (item_notify_cb), self);
  update (self);
}

/* Returns: (transfer none) (nullable) */
ChpTraceItem *
chp_trace_row_get_item (ChpTraceRow *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ROW (self), NULL);

  return self->item;
}

static void
chp_trace_row_dispose (GObject *object)
{
  ChpTraceRow *self = CHP_TRACE_ROW (object);

  chp_trace_row_set_item (self, NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_TRACE_ROW);

  G_OBJECT_CLASS (chp_trace_row_parent_class)->dispose (object);
}

static void
chp_trace_row_class_init (ChpTraceRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_trace_row_dispose;

  /**
   * ChpTraceRow::open:
   *
   * The person asked to open the row's session through its action (row.open): what a screen
   * reader does where the pointer clicks the row and the keyboard presses Enter on it.
   */
  signals[SIGNAL_OPEN] = g_signal_new ("open", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                       NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_BUTTON);
  gtk_widget_class_install_action (widget_class, "row.open", NULL, open_action);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-trace-row.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpTraceRow, agent_label);
  gtk_widget_class_bind_template_child (widget_class, ChpTraceRow, outcome_label);
  gtk_widget_class_bind_template_child (widget_class, ChpTraceRow, where_label);
  gtk_widget_class_bind_template_child (widget_class, ChpTraceRow, counts_label);
  gtk_widget_class_bind_template_child (widget_class, ChpTraceRow, errors_label);
  gtk_widget_class_bind_template_child (widget_class, ChpTraceRow, when_label);
}

static void
chp_trace_row_init (ChpTraceRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  update (self);
}
