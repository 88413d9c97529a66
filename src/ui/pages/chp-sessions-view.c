/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-sessions-view.c: a GtkListView over ChpTraceList, which reads the trace store a page at a
 * time: the view asks only for the rows it shows, so 10,000 sessions scroll like 10. The search
 * and the filters become the list's query. The agent filter offers the agents the list has read
 * (the store has no list of them), and keeps the one chosen while it is the filter. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-activity-page"

#include "chp-sessions-view.h"

#include "chp-a11y.h"
#include "chp-trace-format.h"
#include "chp-trace-row.h"

#include <glib/gi18n.h>

struct _ChpSessionsView
{
  AdwBin parent_instance;

  GtkSearchEntry *search_entry;
  GtkDropDown *outcome_dropdown;
  GtkDropDown *agent_dropdown;
  GtkStack *stack;
  AdwStatusPage *empty_status;
  GtkListView *list_view;

  ChpTraceList *list;
  GPtrArray *agents;        /* the agent dropdown's names; NULL first, for "all" */
  gboolean rebuilding;      /* the agent dropdown is being refilled: not the person's choice */
};

G_DEFINE_FINAL_TYPE (ChpSessionsView, chp_sessions_view, ADW_TYPE_BIN)

enum {
  SIGNAL_SESSION_ACTIVATED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* How sessions end (chp-trace-format.c has their words). NULL first: no filter. */
static const char * const outcomes[] = {
  NULL, "completed", "failed", "stopped", "interrupted", "app-closed",
};

static void
update_page (ChpSessionsView *self)
{
  const ChpTraceQuery *query;
  gboolean filtered;
  guint n;

  if (self->list == NULL)
    {
      gtk_stack_set_visible_child_name (self->stack, "empty");
      return;
    }

  /* While a listing is read, keep what is shown rather than flash "nothing"; but sessions that
   * came in show at once, even while the list keeps refreshing behind a busy agent. */
  n = g_list_model_get_n_items (G_LIST_MODEL (self->list));
  if (n == 0 && chp_trace_list_get_loading (self->list))
    return;

  query = chp_trace_list_get_query (self->list);
  filtered = query->search != NULL || query->agent != NULL || query->outcome != NULL ||
             query->site != NULL;
  if (filtered)
    {
      adw_status_page_set_title (self->empty_status, _("Nothing matches"));
      adw_status_page_set_description (self->empty_status,
                                       _("No agent session matches these filters and this "
                                         "search."));
      adw_status_page_set_icon_name (self->empty_status, "edit-find-symbolic");
    }
  else
    {
      adw_status_page_set_title (self->empty_status, _("No agent sessions yet"));
      adw_status_page_set_description (self->empty_status,
                                       _("What each agent does is kept here step by step: "
                                         "the tools it used, the pages and elements, what it "
                                         "asked you and what you decided, and where it failed. "
                                         "Never what was typed."));
      adw_status_page_set_icon_name (self->empty_status, "system-run-symbolic");
    }

  gtk_stack_set_visible_child_name (self->stack, n == 0 ? "empty" : "list");
}

static void
apply_filters (ChpSessionsView *self)
{
  g_autoptr(ChpTraceQuery) query = NULL;
  guint outcome = gtk_drop_down_get_selected (self->outcome_dropdown);
  guint agent = gtk_drop_down_get_selected (self->agent_dropdown);
  const char *search = gtk_editable_get_text (GTK_EDITABLE (self->search_entry));

  if (self->list == NULL || self->rebuilding)
    return;

  query = chp_trace_query_copy (chp_trace_list_get_query (self->list));
  g_clear_pointer (&query->outcome, g_free);
  g_clear_pointer (&query->agent, g_free);
  g_clear_pointer (&query->search, g_free);
  if (outcome < G_N_ELEMENTS (outcomes))
    query->outcome = g_strdup (outcomes[outcome]);
  if (agent < self->agents->len)
    query->agent = g_strdup (g_ptr_array_index (self->agents, agent));
  if (search != NULL && *search != '\0')
    query->search = g_strdup (search);

  chp_trace_list_set_query (self->list, query);
}

static void
rebuild_agents (ChpSessionsView *self)
{
  g_autoptr(GtkStringList) names = gtk_string_list_new (NULL);
  g_autofree char *selected_name = NULL;
  guint selected = gtk_drop_down_get_selected (self->agent_dropdown);
  const char * const *agents = self->list != NULL ? chp_trace_list_get_agents (self->list) : NULL;
  guint keep = 0;

  if (selected < self->agents->len)
    selected_name = g_strdup (g_ptr_array_index (self->agents, selected));

  g_ptr_array_set_size (self->agents, 0);
  gtk_string_list_append (names, _("All agents"));
  g_ptr_array_add (self->agents, NULL);
  for (guint i = 0; agents != NULL && agents[i] != NULL; i++)
    {
      if (g_strcmp0 (agents[i], selected_name) == 0)
        keep = self->agents->len;
      gtk_string_list_append (names, agents[i]);
      g_ptr_array_add (self->agents, g_strdup (agents[i]));
    }
  /* The chosen agent stays a choice even when no session of it is read any more. */
  if (selected_name != NULL && keep == 0)
    {
      keep = self->agents->len;
      gtk_string_list_append (names, selected_name);
      g_ptr_array_add (self->agents, g_strdup (selected_name));
    }

  self->rebuilding = TRUE;
  gtk_drop_down_set_model (self->agent_dropdown, G_LIST_MODEL (names));
  gtk_drop_down_set_selected (self->agent_dropdown, keep);
  self->rebuilding = FALSE;
}

static void
row_open_cb (ChpSessionsView *self,
             ChpTraceRow     *row)
{
  ChpTraceItem *item = chp_trace_row_get_item (row);

  if (item != NULL && chp_trace_item_get_loaded (item))
    g_signal_emit (self, signals[SIGNAL_SESSION_ACTIVATED], 0, item);
}

static void
setup_row_cb (GtkSignalListItemFactory *factory,
              GtkListItem              *list_item,
              ChpSessionsView          *self)
{
  GtkWidget *row = chp_trace_row_new ();

  /* Opened through the accessibility tree: the row's own action. */
  g_signal_connect_object (row, "open", G_CALLBACK (row_open_cb), self, G_CONNECT_SWAPPED);
  gtk_list_item_set_child (list_item, row);
}

static void
bind_row_cb (GtkSignalListItemFactory *factory,
             GtkListItem              *list_item,
             gpointer                  user_data)
{
  chp_trace_row_set_item (CHP_TRACE_ROW (gtk_list_item_get_child (list_item)),
                          gtk_list_item_get_item (list_item));
}

static void
unbind_row_cb (GtkSignalListItemFactory *factory,
               GtkListItem              *list_item,
               gpointer                  user_data)
{
  chp_trace_row_set_item (CHP_TRACE_ROW (gtk_list_item_get_child (list_item)), NULL);
}

/**
 * chp_sessions_view_activate:
 * @position: a row of the list
 *
 * What Enter or a click on a row does: emits ChpSessionsView::session-activated for a session
 * that has been read. Returns: whether it did.
 */
gboolean
chp_sessions_view_activate (ChpSessionsView *self,
                            guint            position)
{
  g_autoptr(ChpTraceItem) item = NULL;

  g_return_val_if_fail (CHP_IS_SESSIONS_VIEW (self), FALSE);

  if (self->list == NULL)
    return FALSE;
  item = g_list_model_get_item (G_LIST_MODEL (self->list), position);
  /* A row still being read has nothing to open yet. */
  if (item == NULL || !chp_trace_item_get_loaded (item))
    return FALSE;

  g_signal_emit (self, signals[SIGNAL_SESSION_ACTIVATED], 0, item);
  return TRUE;
}

static void
list_activate_cb (ChpSessionsView *self,
                  guint            position,
                  GtkListView     *view)
{
  chp_sessions_view_activate (self, position);
}

/* @list: (nullable): the sessions to show; %NULL shows none */
void
chp_sessions_view_set_list (ChpSessionsView *self,
                            ChpTraceList    *list)
{
  g_return_if_fail (CHP_IS_SESSIONS_VIEW (self));
  g_return_if_fail (list == NULL || CHP_IS_TRACE_LIST (list));

  if (self->list == list)
    return;

  gtk_list_view_set_model (self->list_view, NULL);
  if (self->list != NULL)
    g_signal_handlers_disconnect_by_data (self->list, self);
  g_set_object (&self->list, list);

  if (list != NULL)
    {
      g_autoptr(GtkSelectionModel) selection =
        GTK_SELECTION_MODEL (gtk_no_selection_new (g_object_ref (G_LIST_MODEL (list))));

      gtk_list_view_set_model (self->list_view, selection);
      g_signal_connect_swapped (list, "notify::loading", G_CALLBACK (update_page), self);
      g_signal_connect_swapped (list, "notify::count", G_CALLBACK (update_page), self);
      g_signal_connect_swapped (list, "notify::agents", G_CALLBACK (rebuild_agents), self);
      apply_filters (self);
    }

  rebuild_agents (self);
  update_page (self);
}

/* Returns: (transfer none) (nullable) */
ChpTraceList *
chp_sessions_view_get_list (ChpSessionsView *self)
{
  g_return_val_if_fail (CHP_IS_SESSIONS_VIEW (self), NULL);

  return self->list;
}

GtkListView *
chp_sessions_view_get_list_view (ChpSessionsView *self)
{
  g_return_val_if_fail (CHP_IS_SESSIONS_VIEW (self), NULL);

  return self->list_view;
}

static void
chp_sessions_view_dispose (GObject *object)
{
  ChpSessionsView *self = CHP_SESSIONS_VIEW (object);

  if (self->list_view != NULL)
    chp_sessions_view_set_list (self, NULL);
  /* AdwBin (1.2) unparents its child in its own dispose: let go of it first, or the template
   * and the bin would both unparent it. */
  adw_bin_set_child (ADW_BIN (self), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_SESSIONS_VIEW);
  g_clear_pointer (&self->agents, g_ptr_array_unref);

  G_OBJECT_CLASS (chp_sessions_view_parent_class)->dispose (object);
}

static void
chp_sessions_view_class_init (ChpSessionsViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_sessions_view_dispose;

  /**
   * ChpSessionsView::session-activated:
   * @item: the session the person opened
   */
  signals[SIGNAL_SESSION_ACTIVATED] =
    g_signal_new ("session-activated", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, CHP_TYPE_TRACE_ITEM);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-sessions-view.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpSessionsView, search_entry);
  gtk_widget_class_bind_template_child (widget_class, ChpSessionsView, outcome_dropdown);
  gtk_widget_class_bind_template_child (widget_class, ChpSessionsView, agent_dropdown);
  gtk_widget_class_bind_template_child (widget_class, ChpSessionsView, stack);
  gtk_widget_class_bind_template_child (widget_class, ChpSessionsView, empty_status);
  gtk_widget_class_bind_template_child (widget_class, ChpSessionsView, list_view);
  gtk_widget_class_bind_template_callback (widget_class, list_activate_cb);
}

static void
chp_sessions_view_init (ChpSessionsView *self)
{
  g_autoptr(GtkStringList) outcome_words = gtk_string_list_new (NULL);
  g_autoptr(GtkListItemFactory) factory = gtk_signal_list_item_factory_new ();

  self->agents = g_ptr_array_new_with_free_func (g_free);
  gtk_widget_init_template (GTK_WIDGET (self));
  /* The same words as the .ui gives the drop-downs themselves. */
  chp_a11y_name_dropdown (self->outcome_dropdown, _("Outcome"));
  chp_a11y_name_dropdown (self->agent_dropdown, _("Agent"));

  gtk_string_list_append (outcome_words, _("All outcomes"));
  for (guint i = 1; i < G_N_ELEMENTS (outcomes); i++)
    gtk_string_list_append (outcome_words, chp_trace_format_session_outcome (outcomes[i]));
  gtk_drop_down_set_model (self->outcome_dropdown, G_LIST_MODEL (outcome_words));
  rebuild_agents (self);

  g_signal_connect (factory, "setup", G_CALLBACK (setup_row_cb), self);
  g_signal_connect (factory, "bind", G_CALLBACK (bind_row_cb), NULL);
  g_signal_connect (factory, "unbind", G_CALLBACK (unbind_row_cb), NULL);
  gtk_list_view_set_factory (self->list_view, factory);

  g_signal_connect_swapped (self->outcome_dropdown, "notify::selected",
                            G_CALLBACK (apply_filters), self);
  g_signal_connect_swapped (self->agent_dropdown, "notify::selected",
                            G_CALLBACK (apply_filters), self);
  /* A search is a store query of a few milliseconds, and what is shown stays until its results
   * replace it: it runs as the person types, not after GTK's 150 ms pause (bench/
   * ui-trace-bench.c measures from the key to the frame with the results; the target is 100). */
  gtk_search_entry_set_search_delay (self->search_entry, 0);
  g_signal_connect_swapped (self->search_entry, "search-changed",
                            G_CALLBACK (apply_filters), self);
  update_page (self);
}
