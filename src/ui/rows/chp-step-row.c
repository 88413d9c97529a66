/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-step-row.c: a list view recycles rows: a row is bound to a step, follows its screenshot
 * while bound, and lets go. A screenshot is read from the store only when the person asks for it
 * (the button, or Enter on the row), decoded off the main thread, and kept on the step's item
 * while shown, so a row scrolled away and back shows it again without reading it twice. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-timeline"

#include "chp-step-row.h"

#include "chp-a11y.h"
#include "chp-timing-bar.h"
#include "chp-trace-format.h"

#include <adwaita.h>
#include <glib/gi18n.h>

struct _ChpStepRow
{
  GtkBox parent_instance;

  GtkLabel *seq_label;
  GtkLabel *time_label;
  GtkLabel *tool_label;
  GtkLabel *outcome_label;
  GtkLabel *where_label;
  GtkLabel *element_label;
  ChpTimingBar *timing_bar;
  GtkLabel *total_label;
  GtkLabel *decision_label;
  GtkLabel *detail_label;
  GtkWidget *shot_box;
  GtkWidget *shot_button;
  GtkLabel *shot_button_label;
  GtkLabel *shot_status;
  GtkPicture *shot_picture;

  ChpTraceStepList *list;
  ChpTraceStepItem *item;
};

G_DEFINE_FINAL_TYPE (ChpStepRow, chp_step_row, GTK_TYPE_BOX)

/* On a step's item: the decoded screenshot (a GdkTexture), while it is shown. */
#define TEXTURE_KEY "chp-step-texture"
/* On a step's item: its screenshot is being decoded. */
#define DECODING_KEY "chp-step-decoding"

static void
set_label (GtkLabel   *label,
           const char *text)
{
  gtk_label_set_text (label, text != NULL ? text : "");
  gtk_widget_set_visible (GTK_WIDGET (label), text != NULL && *text != '\0');
}

static void update_shot (ChpStepRow *self);

static void
decode_thread (GTask        *task,
               gpointer      source,
               gpointer      data,
               GCancellable *cancellable)
{
  GError *error = NULL;
  GdkTexture *texture = gdk_texture_new_from_bytes (data, &error);

  if (texture == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, texture, g_object_unref);
}

static void
decoded_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  ChpTraceStepItem *item = CHP_TRACE_STEP_ITEM (source);
  g_autoptr(GError) error = NULL;
  GdkTexture *texture = g_task_propagate_pointer (G_TASK (result), &error);

  g_object_set_data (G_OBJECT (item), DECODING_KEY, NULL);
  if (texture == NULL)
    {
      g_message ("A step's screenshot could not be decoded: %s", error->message);
      chp_trace_step_item_set_shot (item, CHP_TRACE_SHOT_FAILED, NULL);
      return;
    }

  /* Hidden again while it was decoded. */
  if (chp_trace_step_item_get_shot_state (item) != CHP_TRACE_SHOT_LOADED)
    {
      g_object_unref (texture);
      return;
    }

  g_object_set_data_full (G_OBJECT (item), TEXTURE_KEY, texture, g_object_unref);
  /* Any row bound to it shows it now. */
  g_object_notify (G_OBJECT (item), "shot-state");
}

static void
decode (ChpTraceStepItem *item)
{
  const ChpTraceShot *shot = chp_trace_step_item_get_shot (item);
  g_autoptr(GTask) task = g_task_new (item, NULL, decoded_cb, NULL);

  g_task_set_source_tag (task, decode);
  g_task_set_task_data (task, g_bytes_ref (shot->jpeg), (GDestroyNotify) g_bytes_unref);
  g_task_run_in_thread (task, decode_thread);
}

static void
update_shot (ChpStepRow *self)
{
  ChpTraceShotState state;
  GdkTexture *texture;
  const char *status = NULL;
  gboolean shown;

  if (self->item == NULL || !chp_trace_step_item_get_step (self->item)->has_shot)
    {
      gtk_widget_set_visible (self->shot_box, FALSE);
      gtk_picture_set_paintable (self->shot_picture, NULL);
      return;
    }

  state = chp_trace_step_item_get_shot_state (self->item);
  texture = g_object_get_data (G_OBJECT (self->item), TEXTURE_KEY);
  if (state != CHP_TRACE_SHOT_LOADED && texture != NULL)
    {
      /* Hidden: the picture goes, and its memory with it. */
      g_object_set_data (G_OBJECT (self->item), TEXTURE_KEY, NULL);
      texture = NULL;
    }
  if (state == CHP_TRACE_SHOT_LOADED && texture == NULL &&
      !g_object_get_data (G_OBJECT (self->item), DECODING_KEY))
    {
      g_object_set_data (G_OBJECT (self->item), DECODING_KEY, GINT_TO_POINTER (TRUE));
      decode (self->item);
    }

  gtk_widget_set_visible (self->shot_box, TRUE);
  shown = state == CHP_TRACE_SHOT_LOADED || state == CHP_TRACE_SHOT_LOADING;
  gtk_label_set_text (self->shot_button_label,
                      shown ? _("Hide Screenshot") : _("Show Screenshot"));
  /* A button with a child of its own has no name in GTK 4.8 but the one it is given. */
  chp_a11y_set_name (self->shot_button, shown ? _("Hide Screenshot") : _("Show Screenshot"));
  if (state == CHP_TRACE_SHOT_LOADING || (state == CHP_TRACE_SHOT_LOADED && texture == NULL))
    status = _("Loading the screenshot…");
  else if (state == CHP_TRACE_SHOT_FAILED)
    status = _("The screenshot could not be read.");
  set_label (self->shot_status, status);

  gtk_picture_set_paintable (self->shot_picture, GDK_PAINTABLE (texture));
  gtk_widget_set_visible (GTK_WIDGET (self->shot_picture), texture != NULL);
  if (texture != NULL)
    {
      /* Translators: the accessible description of a step's screenshot; %u is its number */
      g_autofree char *words = g_strdup_printf (_("Screenshot of the page at step %u"),
                                                chp_trace_step_item_get_step (self->item)->seq);

      gtk_picture_set_alternative_text (self->shot_picture, words);
    }
}

static void
update_bar (ChpStepRow *self)
{
  const ChpTraceStep *step = chp_trace_step_item_get_step (self->item);
  g_autofree char *words = chp_trace_format_timing (step);
  g_autofree char *total = chp_trace_format_duration (chp_trace_step_item_get_total_us (self->item));

  chp_timing_bar_set (self->timing_bar, step->queue_us, step->run_us, step->page_us,
                      self->list != NULL ? chp_trace_step_list_get_longest_us (self->list) : 0,
                      words);
  gtk_label_set_text (self->total_label, total);
}

static void
update (ChpStepRow *self)
{
  const ChpTraceStep *step;
  g_autofree char *seq = NULL;
  g_autofree char *time = NULL;
  g_autofree char *outcome = NULL;
  g_autofree char *where = NULL;
  g_autofree char *element = NULL;
  g_autofree char *decision = NULL;
  g_autoptr(GString) detail = g_string_new (NULL);
  gboolean failed;

  if (self->item == NULL)
    return;

  step = chp_trace_step_item_get_step (self->item);
  failed = step->error_code != NULL || g_strcmp0 (step->outcome, "error") == 0;

  seq = g_strdup_printf ("%u", step->seq);
  gtk_label_set_text (self->seq_label, seq);
  time = chp_trace_format_time_of_day (step->at);
  gtk_label_set_text (self->time_label, time);
  gtk_label_set_text (self->tool_label, step->tool);

  if (step->error_code != NULL)
    /* Translators: a step's outcome and its error code, e.g. "Error: stale_node" */
    outcome = g_strdup_printf (_("%s: %s"), chp_trace_format_step_outcome (step->outcome),
                               step->error_code);
  set_label (self->outcome_label,
             outcome != NULL ? outcome : chp_trace_format_step_outcome (step->outcome));

  where = chp_trace_format_where (step);
  set_label (self->where_label, where);
  element = chp_trace_format_element (step);
  set_label (self->element_label, element);

  decision = chp_trace_format_decision (step);
  set_label (self->decision_label, decision);

  if (step->retry > 0)
    /* Translators: a step that was tried again; %u is which retry */
    g_string_append_printf (detail, _("Retry %u"), step->retry);
  if (step->snippet != NULL && *step->snippet != '\0')
    {
      if (detail->len > 0)
        g_string_append (detail, " · ");
      /* Translators: a short masked text of the page where a step failed */
      g_string_append_printf (detail, _("On the page: %s"), step->snippet);
    }
  set_label (self->detail_label, detail->str);

  /* Errors stand out: the row's colour, and the words in the chip. */
  if (failed)
    {
      gtk_widget_add_css_class (GTK_WIDGET (self), "error");
      gtk_widget_add_css_class (GTK_WIDGET (self->outcome_label), "error");
    }
  else
    {
      gtk_widget_remove_css_class (GTK_WIDGET (self), "error");
      gtk_widget_remove_css_class (GTK_WIDGET (self->outcome_label), "error");
    }
  if (step->decision_kind != CHP_TRACE_DECISION_NONE)
    gtk_widget_add_css_class (GTK_WIDGET (self), "chp-asked");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self), "chp-asked");

  update_bar (self);
  update_shot (self);
}

static void
toggle_shot_action (GtkWidget  *widget,
                    const char *action_name,
                    GVariant   *parameter)
{
  ChpStepRow *self = CHP_STEP_ROW (widget);

  if (self->list != NULL && self->item != NULL)
    chp_step_row_toggle_shot (self->list, self->item);
}

/* Shows @item's screenshot, reading it first; or hides it when shown. */
void
chp_step_row_toggle_shot (ChpTraceStepList *list,
                          ChpTraceStepItem *item)
{
  g_return_if_fail (CHP_IS_TRACE_STEP_LIST (list));
  g_return_if_fail (CHP_IS_TRACE_STEP_ITEM (item));

  if (!chp_trace_step_item_get_step (item)->has_shot)
    return;

  switch (chp_trace_step_item_get_shot_state (item))
    {
    case CHP_TRACE_SHOT_LOADING:
    case CHP_TRACE_SHOT_LOADED:
      /* Hidden: its bytes and its picture go, bound to a row or not. */
      g_object_set_data (G_OBJECT (item), TEXTURE_KEY, NULL);
      chp_trace_step_item_set_shot (item, CHP_TRACE_SHOT_NONE, NULL);
      break;
    case CHP_TRACE_SHOT_NONE:
    case CHP_TRACE_SHOT_FAILED:
    default:
      chp_trace_step_list_load_shot (list, item);
      break;
    }
}

GtkWidget *
chp_step_row_new (void)
{
  return g_object_new (CHP_TYPE_STEP_ROW, NULL);
}

/**
 * chp_step_row_bind:
 * @list: (nullable): the step's list: the longest step, and where screenshots are read
 * @item: (nullable): the step; %NULL unbinds
 */
void
chp_step_row_bind (ChpStepRow       *self,
                   ChpTraceStepList *list,
                   ChpTraceStepItem *item)
{
  g_return_if_fail (CHP_IS_STEP_ROW (self));

  if (self->list != NULL)
    g_signal_handlers_disconnect_by_func (self->list, update_bar, self);
  if (self->item != NULL)
    g_signal_handlers_disconnect_by_func (self->item, update_shot, self);
  g_set_object (&self->list, list);
  g_set_object (&self->item, item);

  if (list != NULL)
    g_signal_connect_swapped (list, "notify::longest-us", G_CALLBACK (update_bar), self);
  if (item != NULL)
    {
      g_signal_connect_swapped (item, "notify::shot-state", G_CALLBACK (update_shot), self);
      update (self);
    }
}

/* Returns: (transfer none) (nullable) */
ChpTraceStepItem *
chp_step_row_get_item (ChpStepRow *self)
{
  g_return_val_if_fail (CHP_IS_STEP_ROW (self), NULL);

  return self->item;
}

/* Returns: (transfer none) (nullable): the screenshot shown, if any */
GdkPaintable *
chp_step_row_get_shot (ChpStepRow *self)
{
  g_return_val_if_fail (CHP_IS_STEP_ROW (self), NULL);

  return gtk_widget_get_visible (GTK_WIDGET (self->shot_picture))
         ? gtk_picture_get_paintable (self->shot_picture) : NULL;
}

static void
chp_step_row_dispose (GObject *object)
{
  ChpStepRow *self = CHP_STEP_ROW (object);

  chp_step_row_bind (self, NULL, NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_STEP_ROW);

  G_OBJECT_CLASS (chp_step_row_parent_class)->dispose (object);
}

static void
chp_step_row_class_init (ChpStepRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_step_row_dispose;

  g_type_ensure (CHP_TYPE_TIMING_BAR);
  g_type_ensure (ADW_TYPE_CLAMP);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-step-row.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, seq_label);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, time_label);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, tool_label);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, outcome_label);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, where_label);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, element_label);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, timing_bar);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, total_label);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, decision_label);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, detail_label);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, shot_box);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, shot_button);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, shot_button_label);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, shot_status);
  gtk_widget_class_bind_template_child (widget_class, ChpStepRow, shot_picture);

  gtk_widget_class_install_action (widget_class, "step.toggle-shot", NULL, toggle_shot_action);
}

static void
chp_step_row_init (ChpStepRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}
