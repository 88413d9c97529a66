/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-grants-page.c: the grant mirror is one list for every browser; here each browser gets its
 * own group, whose list is the mirror filtered to that browser, so a grant moves, appears and
 * goes with the mirror and nothing is copied. Above them, the person's "Always allow" rules. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-grants-page"

#include "chp-grants-page.h"

#include "chp-grant-row.h"
#include "chp-rule-row.h"


struct _ChpGrantsPage
{
  AdwBin parent_instance;

  GtkStack *stack;
  AdwPreferencesPage *groups_page;
  GtkWidget *rules_group;
  GtkListBox *rules_list;

  ChpEngine *engine;
  GListModel *grants;
  GListModel *devices;
  GListModel *rules;
  gulong rules_changed_id;
  gulong grants_changed_id;
  gulong devices_changed_id;
  GPtrArray *groups;    /* AdwPreferencesGroup, one per device */
};

G_DEFINE_FINAL_TYPE (ChpGrantsPage, chp_grants_page, ADW_TYPE_BIN)

static void
update_page (ChpGrantsPage *self)
{
  gboolean no_rules = self->rules == NULL || g_list_model_get_n_items (self->rules) == 0;
  gboolean empty = (self->grants == NULL || g_list_model_get_n_items (self->grants) == 0) &&
                   no_rules;

  gtk_widget_set_visible (self->rules_group, !no_rules);

  gtk_stack_set_visible_child_name (self->stack, empty ? "empty" : "list");
}

static GtkWidget *
create_row (gpointer item,
            gpointer user_data)
{
  return chp_grant_row_new (CHP_GRANT (item), CHP_GRANTS_PAGE (user_data)->engine);
}

static GtkWidget *
create_rule_row (gpointer item,
                 gpointer user_data)
{
  return chp_rule_row_new (CHP_APPROVAL_RULE (item), CHP_GRANTS_PAGE (user_data)->engine);
}

static gboolean
grant_of_device (gpointer item,
                 gpointer user_data)
{
  return g_strcmp0 (chp_grant_get_device_id (item), user_data) == 0;
}

/* An empty group says nothing: it shows only while its browser holds a grant. */
static void
group_items_changed_cb (GListModel *model,
                        guint       position,
                        guint       removed,
                        guint       added,
                        GtkWidget  *group)
{
  gtk_widget_set_visible (group, g_list_model_get_n_items (model) > 0);
}

static void
remove_groups (ChpGrantsPage *self)
{
  for (guint i = 0; self->groups != NULL && i < self->groups->len; i++)
    {
      GtkWidget *group = g_ptr_array_index (self->groups, i);
      GtkListBox *list = g_object_get_data (G_OBJECT (group), "chp-list");

      gtk_list_box_bind_model (list, NULL, NULL, NULL, NULL);
      adw_preferences_page_remove (self->groups_page, ADW_PREFERENCES_GROUP (group));
    }
  if (self->groups != NULL)
    g_ptr_array_set_size (self->groups, 0);
}

/* Browsers are few and rarely change: remake every group. */
static void
rebuild_groups (ChpGrantsPage *self)
{
  guint n = g_list_model_get_n_items (self->devices);

  remove_groups (self);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(ChpDevice) device = g_list_model_get_item (self->devices, i);
      GtkCustomFilter *filter = gtk_custom_filter_new (grant_of_device,
                                                       g_strdup (chp_device_get_id (device)),
                                                       g_free);
      g_autoptr(GtkFilterListModel) model = NULL;
      GtkWidget *group = adw_preferences_group_new ();
      GtkWidget *list = gtk_list_box_new ();

      model = gtk_filter_list_model_new (g_object_ref (self->grants), GTK_FILTER (filter));
      g_object_bind_property (device, "name", group, "title", G_BINDING_SYNC_CREATE);
      gtk_list_box_set_selection_mode (GTK_LIST_BOX (list), GTK_SELECTION_NONE);
      gtk_widget_add_css_class (list, "boxed-list");
      gtk_accessible_update_property (GTK_ACCESSIBLE (list), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                      chp_device_get_name (device), -1);
      gtk_list_box_bind_model (GTK_LIST_BOX (list), G_LIST_MODEL (model), create_row, self, NULL);
      adw_preferences_group_add (ADW_PREFERENCES_GROUP (group), list);
      g_object_set_data (G_OBJECT (group), "chp-list", list);
      /* The group keeps its model (and the handler goes with it). */
      g_signal_connect_object (model, "items-changed", G_CALLBACK (group_items_changed_cb),
                               group, G_CONNECT_DEFAULT);
      g_object_set_data_full (G_OBJECT (group), "chp-model", g_object_ref (model), g_object_unref);
      gtk_widget_set_visible (group, g_list_model_get_n_items (G_LIST_MODEL (model)) > 0);

      adw_preferences_page_add (self->groups_page, ADW_PREFERENCES_GROUP (group));
      g_ptr_array_add (self->groups, group);
    }
}

/* @engine: (nullable): the running engine, or %NULL to show nothing */
void
chp_grants_page_set_engine (ChpGrantsPage *self,
                            ChpEngine     *engine)
{
  g_return_if_fail (CHP_IS_GRANTS_PAGE (self));
  g_return_if_fail (engine == NULL || CHP_IS_ENGINE (engine));

  if (self->groups_page != NULL)
    remove_groups (self);
  if (self->grants != NULL)
    g_clear_signal_handler (&self->grants_changed_id, self->grants);
  if (self->devices != NULL)
    g_clear_signal_handler (&self->devices_changed_id, self->devices);
  if (self->rules != NULL)
    g_clear_signal_handler (&self->rules_changed_id, self->rules);
  if (self->rules_list != NULL)
    gtk_list_box_bind_model (self->rules_list, NULL, NULL, NULL, NULL);
  g_clear_object (&self->rules);
  g_clear_object (&self->grants);
  g_clear_object (&self->devices);
  g_set_object (&self->engine, engine);

  if (engine != NULL)
    {
      self->grants = G_LIST_MODEL (g_object_ref (chp_engine_get_grants (engine)));
      self->devices = G_LIST_MODEL (g_object_ref (chp_engine_get_devices (engine)));
      self->grants_changed_id = g_signal_connect_swapped (self->grants, "items-changed",
                                                          G_CALLBACK (update_page), self);
      self->devices_changed_id = g_signal_connect_swapped (self->devices, "items-changed",
                                                           G_CALLBACK (rebuild_groups), self);
      rebuild_groups (self);
      self->rules = G_LIST_MODEL (g_object_ref (chp_engine_get_rules (engine)));
      self->rules_changed_id = g_signal_connect_swapped (self->rules, "items-changed",
                                                         G_CALLBACK (update_page), self);
      gtk_list_box_bind_model (self->rules_list, self->rules, create_rule_row, self, NULL);
    }

  if (self->stack != NULL)
    update_page (self);
}

static void
chp_grants_page_dispose (GObject *object)
{
  ChpGrantsPage *self = CHP_GRANTS_PAGE (object);

  chp_grants_page_set_engine (self, NULL);
  /* AdwBin (1.2) unparents its child in its own dispose: let go of it first, or the template
   * and the bin would both unparent it. */
  adw_bin_set_child (ADW_BIN (self), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_GRANTS_PAGE);
  g_clear_pointer (&self->groups, g_ptr_array_unref);

  G_OBJECT_CLASS (chp_grants_page_parent_class)->dispose (object);
}

static void
chp_grants_page_class_init (ChpGrantsPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_grants_page_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-grants-page.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpGrantsPage, stack);
  gtk_widget_class_bind_template_child (widget_class, ChpGrantsPage, groups_page);
  gtk_widget_class_bind_template_child (widget_class, ChpGrantsPage, rules_group);
  gtk_widget_class_bind_template_child (widget_class, ChpGrantsPage, rules_list);
}

static void
chp_grants_page_init (ChpGrantsPage *self)
{
  self->groups = g_ptr_array_new ();
  gtk_widget_init_template (GTK_WIDGET (self));
  update_page (self);
}
