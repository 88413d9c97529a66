/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-agents-page.c: binds the engine's agent sessions; issue 5 fills them from MCP connections. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-browsers-page"

#include "chp-agents-page.h"

#include "chp-agent-row.h"

struct _ChpAgentsPage
{
  AdwBin parent_instance;

  GtkStack *stack;
  GtkListBox *list;

  ChpEngine *engine;
  GListModel *sessions;
  gulong changed_id;
};

G_DEFINE_FINAL_TYPE (ChpAgentsPage, chp_agents_page, ADW_TYPE_BIN)

static void
update_page (ChpAgentsPage *self)
{
  gboolean empty = self->sessions == NULL || g_list_model_get_n_items (self->sessions) == 0;

  gtk_stack_set_visible_child_name (self->stack, empty ? "empty" : "list");
}

static GtkWidget *
create_row (gpointer item,
            gpointer user_data)
{
  ChpAgentsPage *self = CHP_AGENTS_PAGE (user_data);

  return chp_agent_row_new (CHP_AGENT_SESSION (item), chp_engine_get_plans (self->engine));
}

/* @engine: (nullable): the running engine, or %NULL to show nothing */
void
chp_agents_page_set_engine (ChpAgentsPage *self,
                              ChpEngine       *engine)
{
  g_return_if_fail (CHP_IS_AGENTS_PAGE (self));
  g_return_if_fail (engine == NULL || CHP_IS_ENGINE (engine));

  if (self->list != NULL)
    gtk_list_box_bind_model (self->list, NULL, NULL, NULL, NULL);
  if (self->sessions != NULL)
    g_clear_signal_handler (&self->changed_id, self->sessions);
  g_clear_object (&self->sessions);
  g_set_object (&self->engine, engine);

  if (engine != NULL)
    {
      self->sessions = G_LIST_MODEL (g_object_ref (chp_engine_get_agent_sessions (engine)));
      gtk_list_box_bind_model (self->list, self->sessions, create_row, self, NULL);
      self->changed_id = g_signal_connect_swapped (self->sessions, "items-changed",
                                                   G_CALLBACK (update_page), self);
    }

  if (self->stack != NULL)
    update_page (self);
}

static void
chp_agents_page_dispose (GObject *object)
{
  ChpAgentsPage *self = CHP_AGENTS_PAGE (object);

  chp_agents_page_set_engine (self, NULL);
  /* AdwBin (1.2) unparents its child in its own dispose: let go of it first, or the template
   * and the bin would both unparent it. */
  adw_bin_set_child (ADW_BIN (self), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_AGENTS_PAGE);

  G_OBJECT_CLASS (chp_agents_page_parent_class)->dispose (object);
}

static void
chp_agents_page_class_init (ChpAgentsPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_agents_page_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-agents-page.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpAgentsPage, stack);
  gtk_widget_class_bind_template_child (widget_class, ChpAgentsPage, list);
}

static void
chp_agents_page_init (ChpAgentsPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  update_page (self);
}
