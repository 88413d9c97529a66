/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-timeline-view.c: a GtkListView over a ChpTraceStepList, which reads a session's steps a
 * page at a time and grows while the session runs. The header follows the session's item, which
 * the sessions list keeps up to date. Forget asks first (AdwMessageDialog) and, once the store
 * has forgotten, emits ChpTimelineView::forgotten; Export writes the masked report
 * (chp-trace-report.h) where the person chooses. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-timeline"

#include "chp-timeline-view.h"

#include "chp-a11y.h"
#include "chp-step-row.h"
#include "chp-trace-format.h"
#include "chp-trace-report.h"
#include "chp-toast.h"

#include <glib/gi18n.h>

/* Sites named in the header; the rest are counted. */
#define HEADER_SITES 4

struct _ChpTimelineView
{
  AdwBin parent_instance;

  GtkWidget *back_button;
  GtkLabel *title_label;
  GtkLabel *subtitle_label;
  GtkLabel *outcome_label;
  GtkLabel *summary_label;
  GtkWidget *export_button;
  GtkWidget *forget_button;
  GtkStack *stack;
  AdwStatusPage *empty_status;
  GtkListView *list_view;

  ChpStore *store;
  ChpTraceItem *item;
  ChpTraceStepList *steps;
  GtkFileChooserNative *chooser;   /* while Export asks where */
};

G_DEFINE_FINAL_TYPE (ChpTimelineView, chp_timeline_view, ADW_TYPE_BIN)

enum {
  SIGNAL_FORGOTTEN,
  N_SIGNALS
};

static guint signals[N_SIGNALS];


static void
update_header (ChpTimelineView *self)
{
  const char *agent, *device, *outcome;
  g_autofree char *sites = NULL;
  g_autofree char *when = NULL;
  g_autofree char *subtitle = NULL;
  g_autofree char *counts = NULL;
  g_autofree char *errors = NULL;
  g_autofree char *duration = NULL;
  g_autoptr(GString) summary = g_string_new (NULL);

  if (self->item == NULL || !chp_trace_item_get_loaded (self->item))
    {
      gtk_label_set_text (self->title_label, "");
      gtk_label_set_text (self->subtitle_label, "");
      gtk_label_set_text (self->summary_label, "");
      gtk_widget_set_visible (GTK_WIDGET (self->outcome_label), FALSE);
      gtk_widget_action_set_enabled (GTK_WIDGET (self), "timeline.forget", FALSE);
      gtk_widget_action_set_enabled (GTK_WIDGET (self), "timeline.export", FALSE);
      return;
    }

  agent = chp_trace_item_get_agent (self->item);
  gtk_label_set_text (self->title_label, agent != NULL && *agent != '\0' ? agent : _("Agent"));

  device = chp_trace_item_get_device (self->item);
  sites = chp_trace_format_sites (chp_trace_item_get_sites (self->item), HEADER_SITES);
  when = chp_trace_format_when (chp_trace_item_get_started_at (self->item), g_get_real_time ());
  if (device != NULL && *device != '\0')
    /* Translators: a session's browser, sites and start, e.g. "Work Chromium · bank.example ·
     * Today at 14:02" */
    subtitle = g_strdup_printf (_("%s · %s · %s"), device, sites, when);
  else
    subtitle = g_strdup_printf (_("%s · %s"), sites, when);
  gtk_label_set_text (self->subtitle_label, subtitle);

  outcome = chp_trace_item_get_outcome (self->item);
  gtk_label_set_text (self->outcome_label, chp_trace_format_session_outcome (outcome));
  gtk_widget_set_visible (GTK_WIDGET (self->outcome_label), TRUE);

  counts = chp_trace_format_counts (chp_trace_item_get_n_steps (self->item),
                                    chp_trace_item_get_n_asked (self->item),
                                    chp_trace_item_get_n_approved (self->item));
  g_string_append (summary, counts);
  errors = chp_trace_format_errors (chp_trace_item_get_n_errors (self->item));
  if (errors != NULL)
    g_string_append_printf (summary, " · %s", errors);
  duration = chp_trace_format_duration (chp_trace_item_get_duration (self->item, 0));
  /* Translators: how long a session lasted, after its counts: "… · lasted 3 min 5 s" */
  g_string_append_printf (summary, _(" · lasted %s"), duration);
  gtk_label_set_text (self->summary_label, summary->str);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "timeline.forget", self->store != NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "timeline.export", self->store != NULL);
}

static void
update_stack (ChpTimelineView *self)
{
  gboolean gone = self->steps != NULL && chp_trace_step_list_get_gone (self->steps);
  guint n = self->steps != NULL ? g_list_model_get_n_items (G_LIST_MODEL (self->steps)) : 0;

  if (self->steps != NULL && chp_trace_step_list_get_loading (self->steps))
    return;

  if (gone)
    {
      adw_status_page_set_title (self->empty_status, _("This session is gone"));
      adw_status_page_set_description (self->empty_status,
                                       _("It was forgotten, or the oldest sessions made room "
                                         "for new ones."));
    }
  else
    {
      adw_status_page_set_title (self->empty_status, _("No steps yet"));
      adw_status_page_set_description (self->empty_status,
                                       _("The agent has not used a tool in this session."));
    }
  gtk_stack_set_visible_child_name (self->stack, n > 0 ? "list" : "empty");
}

static void
setup_row_cb (GtkSignalListItemFactory *factory,
              GtkListItem              *list_item,
              gpointer                  user_data)
{
  gtk_list_item_set_child (list_item, chp_step_row_new ());
}

static void
bind_row_cb (GtkSignalListItemFactory *factory,
             GtkListItem              *list_item,
             ChpTimelineView          *self)
{
  chp_step_row_bind (CHP_STEP_ROW (gtk_list_item_get_child (list_item)), self->steps,
                     gtk_list_item_get_item (list_item));
}

static void
unbind_row_cb (GtkSignalListItemFactory *factory,
               GtkListItem              *list_item,
               gpointer                  user_data)
{
  chp_step_row_bind (CHP_STEP_ROW (gtk_list_item_get_child (list_item)), NULL, NULL);
}

/* Enter on a step: its screenshot, shown or hidden. */
static void
list_activate_cb (ChpTimelineView *self,
                  guint            position,
                  GtkListView     *view)
{
  g_autoptr(ChpTraceStepItem) item = NULL;

  if (self->steps == NULL)
    return;
  item = g_list_model_get_item (G_LIST_MODEL (self->steps), position);
  if (item != NULL)
    chp_step_row_toggle_shot (self->steps, item);
}

/* Forget */

typedef struct
{
  ChpTimelineView *self;   /* a reference */
  char            *id;     /* the view may show another session by the time it is done */
} Forgetting;

static void
forgotten_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Forgetting *forgetting = user_data;
  g_autoptr(GError) error = NULL;

  /* Already gone (the cap evicted it meanwhile) is forgotten all the same. */
  if (!chp_store_write_finish (CHP_STORE (source), result, &error) &&
      !g_error_matches (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND))
    {
      g_message ("Could not forget a session: %s", error->message);
      chp_toast_show (GTK_WIDGET (forgetting->self), _("The session was not forgotten"));
    }
  else
    {
      g_signal_emit (forgetting->self, signals[SIGNAL_FORGOTTEN], 0, forgetting->id);
    }

  g_object_unref (forgetting->self);
  g_free (forgetting->id);
  g_free (forgetting);
}

static void
forget_response_cb (AdwMessageDialog *dialog,
                    const char       *response,
                    ChpTimelineView  *self)
{
  Forgetting *forgetting;

  if (g_strcmp0 (response, "forget") != 0 || self->store == NULL || self->item == NULL ||
      chp_trace_item_get_id (self->item) == NULL)
    return;

  forgetting = g_new0 (Forgetting, 1);
  forgetting->self = g_object_ref (self);
  forgetting->id = g_strdup (chp_trace_item_get_id (self->item));
  chp_store_forget_trace_async (self->store, forgetting->id, NULL, forgotten_cb, forgetting);
}

static void
forget_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  ChpTimelineView *self = CHP_TIMELINE_VIEW (widget);
  GtkRoot *root = gtk_widget_get_root (widget);
  AdwMessageDialog *dialog;

  if (self->item == NULL || !chp_trace_item_get_loaded (self->item))
    return;

  dialog = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root)
                                                                           : NULL,
                                                       _("Forget This Session?"), NULL));
  adw_message_dialog_set_body (dialog,
                               _("Its steps, screenshots and sites are deleted from the traces. "
                                 "This cannot be undone."));
  adw_message_dialog_add_responses (dialog,
                                    "cancel", _("_Cancel"),
                                    "forget", _("_Forget"),
                                    NULL);
  adw_message_dialog_set_response_appearance (dialog, "forget", ADW_RESPONSE_DESTRUCTIVE);
  /* Enter and Escape both keep it: forgetting takes a deliberate click. */
  adw_message_dialog_set_default_response (dialog, "cancel");
  adw_message_dialog_set_close_response (dialog, "cancel");
  g_signal_connect_object (dialog, "response", G_CALLBACK (forget_response_cb), self,
                           G_CONNECT_DEFAULT);
  chp_a11y_name_buttons (GTK_WIDGET (dialog));
  gtk_window_present (GTK_WINDOW (dialog));
}

/* Export */

static void
exported_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(ChpTimelineView) self = user_data;
  g_autoptr(GError) error = NULL;
  guint n_steps = 0;

  if (!chp_trace_report_write_finish (CHP_STORE (source), result, NULL, &n_steps, &error))
    {
      g_autofree char *text = NULL;

      g_message ("Could not export a session: %s", error->message);
      /* Translators: %s says why, e.g. "Permission denied" */
      text = g_strdup_printf (_("The report was not saved: %s"), error->message);
      chp_toast_show (GTK_WIDGET (self), text);
      return;
    }

  chp_toast_show (GTK_WIDGET (self), _("Report saved"));
}

/**
 * chp_timeline_view_export_to:
 * @file: where the report goes: HTML, or JSON alone when its name ends in .json
 *
 * What Export does once the person chose where (tests call it without the dialog). A toast
 * says how it went.
 */
void
chp_timeline_view_export_to (ChpTimelineView *self,
                             GFile           *file)
{
  const char *id;

  g_return_if_fail (CHP_IS_TIMELINE_VIEW (self));
  g_return_if_fail (G_IS_FILE (file));

  id = self->item != NULL ? chp_trace_item_get_id (self->item) : NULL;
  if (self->store == NULL || id == NULL)
    return;

  chp_trace_report_write_async (self->store, id, 1, file, NULL, exported_cb,
                                g_object_ref (self));
}

static void
chooser_response_cb (GtkNativeDialog *chooser,
                     int              response,
                     ChpTimelineView *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));

      if (file != NULL)
        chp_timeline_view_export_to (self, file);
    }

  g_clear_object (&self->chooser);
}

static void
export_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  ChpTimelineView *self = CHP_TIMELINE_VIEW (widget);
  GtkRoot *root = gtk_widget_get_root (widget);
  g_autoptr(GtkFileFilter) html = gtk_file_filter_new ();
  g_autoptr(GtkFileFilter) json = gtk_file_filter_new ();
  g_autofree char *name = NULL;

  if (self->item == NULL || chp_trace_item_get_id (self->item) == NULL || self->chooser != NULL)
    return;

  self->chooser = gtk_file_chooser_native_new (_("Export Session"),
                                               GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                               GTK_FILE_CHOOSER_ACTION_SAVE,
                                               _("_Save"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (self->chooser), TRUE);
  gtk_file_filter_set_name (html, _("Web page with the timeline (HTML)"));
  gtk_file_filter_add_suffix (html, "html");
  gtk_file_filter_set_name (json, _("Data only (JSON)"));
  gtk_file_filter_add_suffix (json, "json");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), html);
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), json);
  name = g_strdup_printf ("chaperone-session-%s.html", chp_trace_item_get_id (self->item));
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (self->chooser), name);
  g_signal_connect_object (self->chooser, "response", G_CALLBACK (chooser_response_cb), self,
                           G_CONNECT_DEFAULT);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

/* The session */

/**
 * chp_timeline_view_set_session:
 * @store: (nullable): where the session's steps are read
 * @item: (nullable): the session, as the sessions list holds it; %NULL shows nothing
 */
void
chp_timeline_view_set_session (ChpTimelineView *self,
                               ChpStore        *store,
                               ChpTraceItem    *item)
{
  g_return_if_fail (CHP_IS_TIMELINE_VIEW (self));
  g_return_if_fail (store == NULL || CHP_IS_STORE (store));
  g_return_if_fail (item == NULL || CHP_IS_TRACE_ITEM (item));

  gtk_list_view_set_model (self->list_view, NULL);
  if (self->steps != NULL)
    g_signal_handlers_disconnect_by_data (self->steps, self);
  g_clear_object (&self->steps);
  if (self->item != NULL)
    g_signal_handlers_disconnect_by_data (self->item, self);
  g_set_object (&self->item, item);
  g_set_object (&self->store, store);

  if (item != NULL)
    g_signal_connect_swapped (item, "notify", G_CALLBACK (update_header), self);
  if (store != NULL && item != NULL && chp_trace_item_get_id (item) != NULL)
    {
      g_autoptr(GtkSelectionModel) selection = NULL;

      self->steps = chp_trace_step_list_new (store, chp_trace_item_get_id (item));
      selection = GTK_SELECTION_MODEL (gtk_no_selection_new (g_object_ref (G_LIST_MODEL (self->steps))));
      gtk_list_view_set_model (self->list_view, selection);
      g_signal_connect_swapped (self->steps, "notify::loading", G_CALLBACK (update_stack), self);
      g_signal_connect_swapped (self->steps, "notify::count", G_CALLBACK (update_stack), self);
      g_signal_connect_swapped (self->steps, "notify::gone", G_CALLBACK (update_stack), self);
    }

  update_header (self);
  update_stack (self);
}

/* Returns: (transfer none) (nullable) */
ChpTraceItem *
chp_timeline_view_get_session (ChpTimelineView *self)
{
  g_return_val_if_fail (CHP_IS_TIMELINE_VIEW (self), NULL);

  return self->item;
}

/* Returns: (transfer none) (nullable): the steps shown */
ChpTraceStepList *
chp_timeline_view_get_steps (ChpTimelineView *self)
{
  g_return_val_if_fail (CHP_IS_TIMELINE_VIEW (self), NULL);

  return self->steps;
}

GtkListView *
chp_timeline_view_get_list_view (ChpTimelineView *self)
{
  g_return_val_if_fail (CHP_IS_TIMELINE_VIEW (self), NULL);

  return self->list_view;
}

/* @session_id: the session that grew or ended (the engine's ChpEngine::trace-changed) */
void
chp_timeline_view_invalidate (ChpTimelineView *self,
                              const char      *session_id)
{
  g_return_if_fail (CHP_IS_TIMELINE_VIEW (self));

  if (self->steps != NULL &&
      (session_id == NULL ||
       g_strcmp0 (session_id, chp_trace_step_list_get_session_id (self->steps)) == 0))
    chp_trace_step_list_invalidate (self->steps);
}

/* Opened from the keyboard: the focus goes where the person goes on from. */
void
chp_timeline_view_focus (ChpTimelineView *self)
{
  g_return_if_fail (CHP_IS_TIMELINE_VIEW (self));

  gtk_widget_grab_focus (self->back_button);
}

static void
chp_timeline_view_dispose (GObject *object)
{
  ChpTimelineView *self = CHP_TIMELINE_VIEW (object);

  if (self->chooser != NULL)
    gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
  g_clear_object (&self->chooser);
  if (self->list_view != NULL)
    chp_timeline_view_set_session (self, NULL, NULL);
  adw_bin_set_child (ADW_BIN (self), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_TIMELINE_VIEW);

  G_OBJECT_CLASS (chp_timeline_view_parent_class)->dispose (object);
}

static void
chp_timeline_view_class_init (ChpTimelineViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_timeline_view_dispose;

  /**
   * ChpTimelineView::forgotten:
   * @session_id: the session the store has forgotten
   */
  signals[SIGNAL_FORGOTTEN] =
    g_signal_new ("forgotten", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-timeline-view.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpTimelineView, back_button);
  gtk_widget_class_bind_template_child (widget_class, ChpTimelineView, title_label);
  gtk_widget_class_bind_template_child (widget_class, ChpTimelineView, subtitle_label);
  gtk_widget_class_bind_template_child (widget_class, ChpTimelineView, outcome_label);
  gtk_widget_class_bind_template_child (widget_class, ChpTimelineView, summary_label);
  gtk_widget_class_bind_template_child (widget_class, ChpTimelineView, export_button);
  gtk_widget_class_bind_template_child (widget_class, ChpTimelineView, forget_button);
  gtk_widget_class_bind_template_child (widget_class, ChpTimelineView, stack);
  gtk_widget_class_bind_template_child (widget_class, ChpTimelineView, empty_status);
  gtk_widget_class_bind_template_child (widget_class, ChpTimelineView, list_view);
  gtk_widget_class_bind_template_callback (widget_class, list_activate_cb);

  gtk_widget_class_install_action (widget_class, "timeline.forget", NULL, forget_action);
  gtk_widget_class_install_action (widget_class, "timeline.export", NULL, export_action);
}

static void
chp_timeline_view_init (ChpTimelineView *self)
{
  g_autoptr(GtkListItemFactory) factory = gtk_signal_list_item_factory_new ();

  gtk_widget_init_template (GTK_WIDGET (self));
  chp_a11y_name_buttons (self->export_button);
  chp_a11y_name_buttons (self->forget_button);

  g_signal_connect (factory, "setup", G_CALLBACK (setup_row_cb), NULL);
  g_signal_connect (factory, "bind", G_CALLBACK (bind_row_cb), self);
  g_signal_connect (factory, "unbind", G_CALLBACK (unbind_row_cb), NULL);
  gtk_list_view_set_factory (self->list_view, factory);

  update_header (self);
  update_stack (self);
}
