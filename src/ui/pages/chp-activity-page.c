/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-activity-page.c: the Activity page: agent sessions (ChpSessionsView over ChpTraceList), a
 * session's timeline (ChpTimelineView) in a leaflet that slides to it and back, and every event
 * of the audit log, since pairings and connections are no agent's: a GtkColumnView over
 * ChpAuditList, which reads the store a page at a time: the view asks only for the rows it
 * shows, so a log of 100,000 rows scrolls like one of 100. Filters and the search become the
 * list's query; Clear asks first. The engine says when traces change (ChpEngine::trace-changed):
 * the sessions and an open timeline follow. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-activity-page"

#include "chp-activity-page.h"

#include "chp-a11y.h"
#include "chp-sessions-view.h"
#include "chp-timeline-view.h"
#include "chp-toast.h"

#include <glib/gi18n.h>

typedef enum
{
  COLUMN_TIME,
  COLUMN_CATEGORY,
  COLUMN_METHOD,
  COLUMN_OUTCOME,
  COLUMN_BROWSER,
  COLUMN_DURATION,
  COLUMN_ERROR,
  N_COLUMNS
} Column;

struct _ChpActivityPage
{
  AdwBin parent_instance;

  AdwLeaflet *leaflet;
  GtkStack *mode_stack;
  ChpSessionsView *sessions_view;
  ChpTimelineView *timeline_view;
  GtkSearchEntry *search_entry;
  GtkWidget *clear_button;
  GtkDropDown *category_dropdown;
  GtkDropDown *outcome_dropdown;
  GtkDropDown *browser_dropdown;
  GtkStack *stack;
  AdwStatusPage *empty_status;
  GtkScrolledWindow *scroller;
  GtkColumnView *column_view;

  ChpEngine *engine;
  gulong trace_changed_id;
  gboolean traces_stale;   /* traces changed while the page was not on screen */
  ChpTraceList *traces;
  ChpAuditList *audit;
  GtkSelectionModel *selection;  /* over audit: the column view's model while it is shown */
  GListModel *devices;
  gulong devices_changed_id;
  GPtrArray *browser_ids;  /* the browser dropdown's device ids; NULL first, for "all" */
};

G_DEFINE_FINAL_TYPE (ChpActivityPage, chp_activity_page, ADW_TYPE_BIN)

static void sync_column_model (ChpActivityPage *self);

/* The values stored in the log, and the words shown for them. NULL first: no filter. */
static const struct { const char *value; const char *words; } categories[] = {
  { NULL, N_("All categories") },
  { "call", N_("Requests") },
  { "connection", N_("Connections") },
  { "pairing", N_("Pairing") },
  { "device", N_("Browsers") },
  { "person", N_("Your actions") },
  { "agent", N_("Agents") },
};

static const struct { const char *value; const char *words; } outcomes[] = {
  { NULL, N_("All outcomes") },
  { "ok", N_("Succeeded") },
  { "error", N_("Error") },
  { "refused", N_("Refused") },
  { "accepted", N_("Accepted") },
  { "resumed", N_("Resumed") },
  { "disconnected", N_("Disconnected") },
  { "revoked", N_("Revoked") },
  { "approved", N_("Approved") },
  { "rejected", N_("Rejected") },
  { "expired", N_("Expired") },
  { "failed", N_("Failed") },
  { "abandoned", N_("Abandoned") },
  { "locked", N_("Locked") },
  { "stopped", N_("Stopped") },
};

static const char *
category_words (const char *value)
{
  for (guint i = 1; i < G_N_ELEMENTS (categories); i++)
    if (g_strcmp0 (categories[i].value, value) == 0)
      return _(categories[i].words);
  return value;
}

static const char *
outcome_words (const char *value)
{
  for (guint i = 1; i < G_N_ELEMENTS (outcomes); i++)
    if (g_strcmp0 (outcomes[i].value, value) == 0)
      return _(outcomes[i].words);
  return value;
}

static void
update_page (ChpActivityPage *self)
{
  const ChpAuditQuery *query;
  gboolean filtered;

  if (self->audit == NULL)
    {
      gtk_stack_set_visible_child_name (self->stack, "empty");
      gtk_widget_action_set_enabled (GTK_WIDGET (self), "activity.clear", FALSE);
      return;
    }

  /* While new filters are being counted, keep what is shown rather than flash "nothing". */
  if (chp_audit_list_get_loading (self->audit))
    return;

  query = chp_audit_list_get_query (self->audit);
  filtered = query->category != NULL || query->outcome != NULL || query->device_id != NULL ||
             query->search != NULL;
  if (filtered)
    {
      adw_status_page_set_title (self->empty_status, _("Nothing matches"));
      adw_status_page_set_description (self->empty_status,
                                       _("No activity matches these filters and this search."));
      adw_status_page_set_icon_name (self->empty_status, "edit-find-symbolic");
    }
  else
    {
      adw_status_page_set_title (self->empty_status, _("No activity yet"));
      adw_status_page_set_description (self->empty_status,
                                       _("Every pairing, connection and request is logged here: "
                                         "what kind, which method, how it ended and how long it "
                                         "took. Never what was sent or read."));
      adw_status_page_set_icon_name (self->empty_status, "document-open-recent-symbolic");
    }

  gtk_stack_set_visible_child_name (self->stack,
                                    g_list_model_get_n_items (G_LIST_MODEL (self->audit)) == 0
                                    ? "empty" : "list");
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "activity.clear",
                                 g_list_model_get_n_items (G_LIST_MODEL (self->audit)) > 0 ||
                                 filtered);
}

static void
apply_filters (ChpActivityPage *self)
{
  g_autoptr(ChpAuditQuery) query = chp_audit_query_new ();
  guint category = gtk_drop_down_get_selected (self->category_dropdown);
  guint outcome = gtk_drop_down_get_selected (self->outcome_dropdown);
  guint browser = gtk_drop_down_get_selected (self->browser_dropdown);
  const char *search = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));

  if (self->audit == NULL)
    return;

  if (category < G_N_ELEMENTS (categories))
    query->category = g_strdup (categories[category].value);
  if (outcome < G_N_ELEMENTS (outcomes))
    query->outcome = g_strdup (outcomes[outcome].value);
  if (browser < self->browser_ids->len)
    query->device_id = g_strdup (g_ptr_array_index (self->browser_ids, browser));
  if (search != NULL && *search != '\0')
    query->search = g_strdup (search);

  chp_audit_list_set_query (self->audit, query);
}

static void
rebuild_browsers (ChpActivityPage *self)
{
  g_autoptr(GtkStringList) names = gtk_string_list_new (NULL);
  g_autofree char *selected_id = NULL;
  guint selected = gtk_drop_down_get_selected (self->browser_dropdown);
  guint keep = 0;

  if (selected < self->browser_ids->len)
    selected_id = g_strdup (g_ptr_array_index (self->browser_ids, selected));

  g_ptr_array_set_size (self->browser_ids, 0);
  gtk_string_list_append (names, _("All browsers"));
  g_ptr_array_add (self->browser_ids, NULL);
  for (guint i = 0; self->devices != NULL && i < g_list_model_get_n_items (self->devices); i++)
    {
      g_autoptr(ChpDevice) device = g_list_model_get_item (self->devices, i);

      if (g_strcmp0 (chp_device_get_id (device), selected_id) == 0)
        keep = self->browser_ids->len;
      gtk_string_list_append (names, chp_device_get_name (device));
      g_ptr_array_add (self->browser_ids, g_strdup (chp_device_get_id (device)));
    }

  gtk_drop_down_set_model (self->browser_dropdown, G_LIST_MODEL (names));
  gtk_drop_down_set_selected (self->browser_dropdown, keep);
}

static const char *
browser_name (ChpActivityPage *self,
              const char      *device_id)
{
  ChpDevice *device;

  if (device_id == NULL)
    return "";
  if (self == NULL || self->engine == NULL ||
      (device = chp_device_list_lookup (chp_engine_get_devices (self->engine), device_id)) == NULL)
    /* A revoked browser is no longer listed; its rows stay. */
    return _("Removed browser");

  return chp_device_get_name (device);
}

static void
fill_cell (GtkLabel     *label,
           ChpAuditItem *item)
{
  Column column = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (label), "chp-column"));
  const ChpAuditEntry *entry = chp_audit_item_get_entry (item);
  g_autofree char *owned = NULL;
  const char *text = "";

  if (entry == NULL)
    {
      /* Being read: a placeholder that takes the row's height without words. */
      gtk_label_set_text (label, column == COLUMN_TIME ? "…" : "");
      return;
    }

  switch (column)
    {
    case COLUMN_TIME:
      {
        g_autoptr(GDateTime) when = g_date_time_new_from_unix_local (entry->at / 1000);

        owned = when != NULL ? g_date_time_format (when, "%Y-%m-%d %H:%M:%S") : NULL;
        text = owned;
      }
      break;
    case COLUMN_CATEGORY:
      text = category_words (entry->category);
      break;
    case COLUMN_METHOD:
      text = entry->method;
      break;
    case COLUMN_OUTCOME:
      text = outcome_words (entry->outcome);
      break;
    case COLUMN_BROWSER:
      text = browser_name (CHP_ACTIVITY_PAGE (gtk_widget_get_ancestor (GTK_WIDGET (label),
                                                                       CHP_TYPE_ACTIVITY_PAGE)),
                           entry->device_id);
      break;
    case COLUMN_DURATION:
      /* Translators: a duration in milliseconds, e.g. "12 ms" */
      /* A plain %lld: xgettext cannot see through G_GINT64_FORMAT, and the string would never
       * be translated. */
      owned = g_strdup_printf (_("%lld ms"), (long long) entry->duration_ms);
      text = owned;
      break;
    case COLUMN_ERROR:
      text = entry->error_code;
      break;
    case N_COLUMNS:
    default:
      g_assert_not_reached ();
    }

  gtk_label_set_text (label, text != NULL ? text : "");
}

static void
item_loaded_cb (ChpAuditItem *item,
                GParamSpec   *pspec,
                GtkLabel     *label)
{
  fill_cell (label, item);
}

static void
setup_cell_cb (GtkSignalListItemFactory *factory,
               GtkListItem              *list_item,
               gpointer                  user_data)
{
  Column column = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (factory), "chp-column"));
  GtkWidget *label = gtk_label_new (NULL);

  gtk_label_set_xalign (GTK_LABEL (label), column == COLUMN_DURATION ? 1 : 0);
  gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  if (column == COLUMN_TIME || column == COLUMN_DURATION)
    gtk_widget_add_css_class (label, "numeric");
  g_object_set_data (G_OBJECT (label), "chp-column", GINT_TO_POINTER (column));
  gtk_list_item_set_child (list_item, label);
}

static void
bind_cell_cb (GtkSignalListItemFactory *factory,
              GtkListItem              *list_item,
              gpointer                  user_data)
{
  GtkWidget *label = gtk_list_item_get_child (list_item);
  ChpAuditItem *item = gtk_list_item_get_item (list_item);

  fill_cell (GTK_LABEL (label), item);
  /* A placeholder fills in place when its page has been read. */
  if (!chp_audit_item_get_loaded (item))
    g_signal_connect_object (item, "notify::loaded", G_CALLBACK (item_loaded_cb), label,
                             G_CONNECT_DEFAULT);
}

static void
unbind_cell_cb (GtkSignalListItemFactory *factory,
                GtkListItem              *list_item,
                gpointer                  user_data)
{
  GtkWidget *label = gtk_list_item_get_child (list_item);
  ChpAuditItem *item = gtk_list_item_get_item (list_item);

  if (item != NULL)
    g_signal_handlers_disconnect_by_func (item, item_loaded_cb, label);
}

static void
add_columns (ChpActivityPage *self)
{
  const struct { Column column; const char *title; gboolean expand; int width; } columns[] = {
    { COLUMN_TIME, N_("Time"), FALSE, 160 },
    { COLUMN_CATEGORY, N_("Category"), FALSE, 110 },
    { COLUMN_METHOD, N_("Method"), TRUE, 160 },
    { COLUMN_OUTCOME, N_("Outcome"), FALSE, 100 },
    { COLUMN_BROWSER, N_("Browser"), FALSE, 130 },
    { COLUMN_DURATION, N_("Duration"), FALSE, 80 },
    { COLUMN_ERROR, N_("Error"), FALSE, 120 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (columns); i++)
    {
      GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
      g_autoptr(GtkColumnViewColumn) column = NULL;

      g_object_set_data (G_OBJECT (factory), "chp-column", GINT_TO_POINTER (columns[i].column));
      g_signal_connect (factory, "setup", G_CALLBACK (setup_cell_cb), self);
      g_signal_connect (factory, "bind", G_CALLBACK (bind_cell_cb), self);
      g_signal_connect (factory, "unbind", G_CALLBACK (unbind_cell_cb), self);

      column = gtk_column_view_column_new (_(columns[i].title), factory);
      gtk_column_view_column_set_expand (column, columns[i].expand);
      gtk_column_view_column_set_resizable (column, TRUE);
      gtk_column_view_column_set_fixed_width (column, columns[i].width);
      gtk_column_view_append_column (self->column_view, column);
    }
}

static void
cleared_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GtkWidget) widget = user_data;
  g_autoptr(GError) error = NULL;
  GtkWidget *overlay;

  if (chp_store_write_finish (CHP_STORE (source), result, &error))
    return;

  g_message ("Could not clear the activity log: %s", error->message);
  overlay = gtk_widget_get_ancestor (widget, ADW_TYPE_TOAST_OVERLAY);
  if (overlay != NULL)
    adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay),
                                 adw_toast_new (_("The activity log was not cleared")));
}

static void
clear_response_cb (AdwMessageDialog *dialog,
                   const char       *response,
                   ChpActivityPage  *self)
{
  if (g_strcmp0 (response, "clear") != 0 || self->engine == NULL)
    return;

  chp_store_clear_audit_async (chp_engine_get_store (self->engine), NULL, cleared_cb,
                               g_object_ref (self));
}

static void
clear_action (GtkWidget  *widget,
              const char *action_name,
              GVariant   *parameter)
{
  ChpActivityPage *self = CHP_ACTIVITY_PAGE (widget);
  GtkRoot *root = gtk_widget_get_root (widget);
  AdwMessageDialog *dialog;

  dialog = ADW_MESSAGE_DIALOG (adw_message_dialog_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root)
                                                                           : NULL,
                                                       _("Clear the Activity Log?"), NULL));
  adw_message_dialog_set_body (dialog,
                               _("Every entry is deleted, not only those shown. This cannot be "
                                 "undone."));
  adw_message_dialog_add_responses (dialog,
                                    "cancel", _("_Cancel"),
                                    "clear", _("C_lear"),
                                    NULL);
  adw_message_dialog_set_response_appearance (dialog, "clear", ADW_RESPONSE_DESTRUCTIVE);
  /* Enter and Escape both keep the log: clearing takes a deliberate click. */
  adw_message_dialog_set_default_response (dialog, "cancel");
  adw_message_dialog_set_close_response (dialog, "cancel");
  g_signal_connect_object (dialog, "response", G_CALLBACK (clear_response_cb), self,
                           G_CONNECT_DEFAULT);
  chp_a11y_name_buttons (GTK_WIDGET (dialog));
  gtk_window_present (GTK_WINDOW (dialog));
}

/* Sessions and timelines */


/* @session_id: (nullable): the trace that began, grew or ended; %NULL for any */
static void
chp_activity_page_traces_changed (ChpActivityPage *self,
                                  const char      *session_id)
{
  /* A busy agent changes its trace at every call: off screen, the page reads it again once,
   * when it is shown, rather than at each step. */
  if (!gtk_widget_get_mapped (GTK_WIDGET (self)))
    {
      self->traces_stale = TRUE;
      return;
    }
  if (self->traces != NULL)
    chp_trace_list_invalidate (self->traces, session_id);
  chp_timeline_view_invalidate (self->timeline_view, session_id);
}

static void
session_activated_cb (ChpActivityPage *self,
                      ChpTraceItem    *item)
{
  if (self->engine == NULL)
    return;

  chp_timeline_view_set_session (self->timeline_view, chp_engine_get_store (self->engine), item);
  adw_leaflet_set_visible_child_name (self->leaflet, "timeline");
  chp_timeline_view_focus (self->timeline_view);
}

static void
back_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  ChpActivityPage *self = CHP_ACTIVITY_PAGE (widget);

  if (g_strcmp0 (adw_leaflet_get_visible_child_name (self->leaflet), "timeline") != 0)
    return;

  adw_leaflet_set_visible_child_name (self->leaflet, "overview");
  /* Where the person came from: the list of sessions. */
  gtk_widget_grab_focus (GTK_WIDGET (chp_sessions_view_get_list_view (self->sessions_view)));
}

/* Back at the sessions, once the slide is over: the timeline lets go of its session, and of
 * the screenshots it showed. */
static void
leaflet_transition_cb (ChpActivityPage *self)
{
  /* Back (and its Escape) only from a timeline: elsewhere Escape is not the page's. */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "activity.back",
                                 g_strcmp0 (adw_leaflet_get_visible_child_name (self->leaflet),
                                            "timeline") == 0);

  if (adw_leaflet_get_child_transition_running (self->leaflet) ||
      g_strcmp0 (adw_leaflet_get_visible_child_name (self->leaflet), "overview") != 0)
    return;

  chp_timeline_view_set_session (self->timeline_view, NULL, NULL);
}

static void
forgotten_cb (ChpActivityPage *self,
              const char      *session_id)
{
  if (self->traces != NULL)
    chp_trace_list_reload (self->traces);
  if (g_strcmp0 (adw_leaflet_get_visible_child_name (self->leaflet), "timeline") == 0)
    gtk_widget_activate_action (GTK_WIDGET (self), "activity.back", NULL);
  chp_toast_show (GTK_WIDGET (self), _("Session forgotten"));
}

/**
 * chp_activity_page_show_view:
 * @name: "sessions" (the agent sessions) or "events" (every event of the activity log)
 */
void
chp_activity_page_show_view (ChpActivityPage *self,
                             const char      *name)
{
  g_return_if_fail (CHP_IS_ACTIVITY_PAGE (self));
  g_return_if_fail (g_strcmp0 (name, "sessions") == 0 || g_strcmp0 (name, "events") == 0);

  adw_leaflet_set_visible_child_name (self->leaflet, "overview");
  gtk_stack_set_visible_child_name (self->mode_stack, name);
}

/* Returns: (transfer none) (nullable): the sessions the page lists */
ChpTraceList *
chp_activity_page_get_trace_list (ChpActivityPage *self)
{
  g_return_val_if_fail (CHP_IS_ACTIVITY_PAGE (self), NULL);

  return self->traces;
}

ChpSessionsView *
chp_activity_page_get_sessions_view (ChpActivityPage *self)
{
  g_return_val_if_fail (CHP_IS_ACTIVITY_PAGE (self), NULL);

  return self->sessions_view;
}

ChpTimelineView *
chp_activity_page_get_timeline_view (ChpActivityPage *self)
{
  g_return_val_if_fail (CHP_IS_ACTIVITY_PAGE (self), NULL);

  return self->timeline_view;
}

/* Returns: (transfer none) (nullable): the model the column view shows */
ChpAuditList *
chp_activity_page_get_audit_list (ChpActivityPage *self)
{
  g_return_val_if_fail (CHP_IS_ACTIVITY_PAGE (self), NULL);

  return self->audit;
}

GtkScrolledWindow *
chp_activity_page_get_scroller (ChpActivityPage *self)
{
  g_return_val_if_fail (CHP_IS_ACTIVITY_PAGE (self), NULL);

  return self->scroller;
}

/* @engine: (nullable): the running engine, or %NULL to show nothing */
void
chp_activity_page_set_engine (ChpActivityPage *self,
                              ChpEngine       *engine)
{
  g_return_if_fail (CHP_IS_ACTIVITY_PAGE (self));
  g_return_if_fail (engine == NULL || CHP_IS_ENGINE (engine));

  if (self->column_view != NULL)
    gtk_column_view_set_model (self->column_view, NULL);
  if (self->timeline_view != NULL)
    chp_timeline_view_set_session (self->timeline_view, NULL, NULL);
  if (self->sessions_view != NULL)
    chp_sessions_view_set_list (self->sessions_view, NULL);
  if (self->engine != NULL)
    g_clear_signal_handler (&self->trace_changed_id, self->engine);
  g_clear_object (&self->traces);
  g_clear_object (&self->selection);
  if (self->audit != NULL)
    g_signal_handlers_disconnect_by_data (self->audit, self);
  g_clear_object (&self->audit);
  if (self->devices != NULL)
    g_clear_signal_handler (&self->devices_changed_id, self->devices);
  g_clear_object (&self->devices);
  g_set_object (&self->engine, engine);

  if (engine != NULL && chp_engine_get_store (engine) != NULL)
    {
      self->audit = chp_audit_list_new (chp_engine_get_store (engine));
      self->selection = GTK_SELECTION_MODEL (gtk_no_selection_new (g_object_ref (G_LIST_MODEL (self->audit))));
      sync_column_model (self);
      g_signal_connect_swapped (self->audit, "notify::loading", G_CALLBACK (update_page), self);
      g_signal_connect_swapped (self->audit, "notify::count", G_CALLBACK (update_page), self);

      self->devices = G_LIST_MODEL (g_object_ref (chp_engine_get_devices (engine)));
      self->devices_changed_id = g_signal_connect_swapped (self->devices, "items-changed",
                                                           G_CALLBACK (rebuild_browsers), self);
      apply_filters (self);

      self->traces = chp_trace_list_new (chp_engine_get_store (engine));
      chp_sessions_view_set_list (self->sessions_view, self->traces);
      self->trace_changed_id = g_signal_connect_swapped (engine, "trace-changed",
                                                         G_CALLBACK (chp_activity_page_traces_changed),
                                                         self);
    }

  if (self->stack != NULL)
    {
      rebuild_browsers (self);
      update_page (self);
    }
}

static GListModel *
words_model (const char * const *words,
             guint               n)
{
  GtkStringList *list = gtk_string_list_new (NULL);

  for (guint i = 0; i < n; i++)
    gtk_string_list_append (list, _(words[i]));

  return G_LIST_MODEL (list);
}

/* The column view has its model only while it is on screen: GTK 4.8 keeps about 200 rows of a
 * list realized whether or not they show, four labels each, 17 MB with a long log, for a view
 * the person is not looking at. Coming back shows the newest entries first again. It is set
 * and cleared around the page's own map and unmap (never inside the view's unmap: GTK 4.8 then
 * keeps row widgets its list item manager asserts are gone when the view is disposed). */
static void
sync_column_model (ChpActivityPage *self)
{
  gboolean shown = gtk_widget_get_mapped (GTK_WIDGET (self)) &&
                   g_strcmp0 (gtk_stack_get_visible_child_name (self->mode_stack), "events") == 0;
  GtkSelectionModel *model = shown ? self->selection : NULL;

  if (gtk_column_view_get_model (self->column_view) != model)
    gtk_column_view_set_model (self->column_view, model);
}

static void
chp_activity_page_map (GtkWidget *widget)
{
  ChpActivityPage *self = CHP_ACTIVITY_PAGE (widget);

  GTK_WIDGET_CLASS (chp_activity_page_parent_class)->map (widget);
  sync_column_model (self);
  if (self->traces_stale)
    {
      self->traces_stale = FALSE;
      chp_activity_page_traces_changed (self, NULL);
    }
}

static void
chp_activity_page_unmap (GtkWidget *widget)
{
  ChpActivityPage *self = CHP_ACTIVITY_PAGE (widget);

  gtk_column_view_set_model (self->column_view, NULL);
  GTK_WIDGET_CLASS (chp_activity_page_parent_class)->unmap (widget);
}

static void
chp_activity_page_dispose (GObject *object)
{
  ChpActivityPage *self = CHP_ACTIVITY_PAGE (object);

  chp_activity_page_set_engine (self, NULL);
  /* AdwBin (1.2) unparents its child in its own dispose: let go of it first, or the template
   * and the bin would both unparent it. */
  adw_bin_set_child (ADW_BIN (self), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_ACTIVITY_PAGE);
  g_clear_pointer (&self->browser_ids, g_ptr_array_unref);

  G_OBJECT_CLASS (chp_activity_page_parent_class)->dispose (object);
}

static void
chp_activity_page_class_init (ChpActivityPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  widget_class->map = chp_activity_page_map;
  widget_class->unmap = chp_activity_page_unmap;

  object_class->dispose = chp_activity_page_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-activity-page.ui");
  g_type_ensure (CHP_TYPE_SESSIONS_VIEW);
  g_type_ensure (CHP_TYPE_TIMELINE_VIEW);
  gtk_widget_class_bind_template_child (widget_class, ChpActivityPage, leaflet);
  gtk_widget_class_bind_template_child (widget_class, ChpActivityPage, mode_stack);
  gtk_widget_class_bind_template_child (widget_class, ChpActivityPage, sessions_view);
  gtk_widget_class_bind_template_child (widget_class, ChpActivityPage, timeline_view);
  gtk_widget_class_bind_template_child (widget_class, ChpActivityPage, search_entry);
  gtk_widget_class_bind_template_child (widget_class, ChpActivityPage, clear_button);
  gtk_widget_class_bind_template_child (widget_class, ChpActivityPage, category_dropdown);
  gtk_widget_class_bind_template_child (widget_class, ChpActivityPage, outcome_dropdown);
  gtk_widget_class_bind_template_child (widget_class, ChpActivityPage, browser_dropdown);
  gtk_widget_class_bind_template_child (widget_class, ChpActivityPage, stack);
  gtk_widget_class_bind_template_child (widget_class, ChpActivityPage, empty_status);
  gtk_widget_class_bind_template_child (widget_class, ChpActivityPage, scroller);
  gtk_widget_class_bind_template_child (widget_class, ChpActivityPage, column_view);

  gtk_widget_class_bind_template_callback (widget_class, session_activated_cb);
  gtk_widget_class_bind_template_callback (widget_class, forgotten_cb);

  gtk_widget_class_install_action (widget_class, "activity.clear", NULL, clear_action);
  gtk_widget_class_install_action (widget_class, "activity.back", NULL, back_action);
  /* Alt+Left and the back button of a mouse are the leaflet's own; Escape too, from a
   * timeline (a search entry keeps its Escape for itself). */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "activity.back", NULL);
}

static void
chp_activity_page_init (ChpActivityPage *self)
{
  const char *category_words_list[G_N_ELEMENTS (categories)];
  const char *outcome_words_list[G_N_ELEMENTS (outcomes)];
  g_autoptr(GListModel) category_model = NULL;
  g_autoptr(GListModel) outcome_model = NULL;

  self->browser_ids = g_ptr_array_new_with_free_func (g_free);
  gtk_widget_init_template (GTK_WIDGET (self));
  chp_a11y_name_buttons (self->clear_button);
  /* The same words as the .ui gives the drop-downs themselves. */
  chp_a11y_name_dropdown (self->category_dropdown, _("Category"));
  chp_a11y_name_dropdown (self->outcome_dropdown, _("Outcome"));
  chp_a11y_name_dropdown (self->browser_dropdown, _("Browser"));

  for (guint i = 0; i < G_N_ELEMENTS (categories); i++)
    category_words_list[i] = categories[i].words;
  for (guint i = 0; i < G_N_ELEMENTS (outcomes); i++)
    outcome_words_list[i] = outcomes[i].words;
  category_model = words_model (category_words_list, G_N_ELEMENTS (categories));
  outcome_model = words_model (outcome_words_list, G_N_ELEMENTS (outcomes));
  gtk_drop_down_set_model (self->category_dropdown, category_model);
  gtk_drop_down_set_model (self->outcome_dropdown, outcome_model);
  rebuild_browsers (self);
  add_columns (self);

  g_signal_connect_swapped (self->category_dropdown, "notify::selected",
                            G_CALLBACK (apply_filters), self);
  g_signal_connect_swapped (self->outcome_dropdown, "notify::selected",
                            G_CALLBACK (apply_filters), self);
  g_signal_connect_swapped (self->browser_dropdown, "notify::selected",
                            G_CALLBACK (apply_filters), self);
  g_signal_connect_swapped (self->search_entry, "search-changed",
                            G_CALLBACK (apply_filters), self);
  g_signal_connect_swapped (self->mode_stack, "notify::visible-child",
                            G_CALLBACK (sync_column_model), self);
  g_signal_connect_swapped (self->leaflet, "notify::child-transition-running",
                            G_CALLBACK (leaflet_transition_cb), self);
  g_signal_connect_swapped (self->leaflet, "notify::visible-child",
                            G_CALLBACK (leaflet_transition_cb), self);
  leaflet_transition_cb (self);
  update_page (self);
}
