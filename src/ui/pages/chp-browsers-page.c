/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-browsers-page.c: binds the engine's device list; each card acts on its own browser. With
 * none paired, the setup guide (ChpSetupGuide) takes the page. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-browsers-page"

#include "chp-browsers-page.h"

#include "chp-device-row.h"
#include "chp-setup-guide.h"

struct _ChpBrowsersPage
{
  AdwBin parent_instance;

  GtkStack *stack;
  AdwBin *empty_bin;
  GtkListBox *list;

  ChpEngine *engine;
  GListModel *devices;
  gulong changed_id;
  gboolean disposing;
};

G_DEFINE_FINAL_TYPE (ChpBrowsersPage, chp_browsers_page, ADW_TYPE_BIN)

static void
update_page (ChpBrowsersPage *self)
{
  gboolean empty = self->devices == NULL || g_list_model_get_n_items (self->devices) == 0;

  if (self->disposing)
    return;
  /* The guide lives only while nothing is paired: once a browser is, its rows, icons and the
   * profiles it reads are of no use to a window that may stay open for days. */
  if (empty && adw_bin_get_child (self->empty_bin) == NULL)
    adw_bin_set_child (self->empty_bin, chp_setup_guide_new ());
  gtk_stack_set_visible_child_name (self->stack, empty ? "empty" : "list");
  if (!empty)
    adw_bin_set_child (self->empty_bin, NULL);
}

static GtkWidget *
create_row (gpointer item,
            gpointer user_data)
{
  return chp_device_row_new (CHP_DEVICE (item), CHP_BROWSERS_PAGE (user_data)->engine);
}

/* @engine: (nullable): the running engine, or %NULL to show nothing */
void
chp_browsers_page_set_engine (ChpBrowsersPage *self,
                              ChpEngine       *engine)
{
  g_return_if_fail (CHP_IS_BROWSERS_PAGE (self));
  g_return_if_fail (engine == NULL || CHP_IS_ENGINE (engine));

  if (self->list != NULL)
    gtk_list_box_bind_model (self->list, NULL, NULL, NULL, NULL);
  if (self->devices != NULL)
    g_clear_signal_handler (&self->changed_id, self->devices);
  g_clear_object (&self->devices);
  g_set_object (&self->engine, engine);

  if (engine != NULL)
    {
      self->devices = G_LIST_MODEL (g_object_ref (chp_engine_get_devices (engine)));
      gtk_list_box_bind_model (self->list, self->devices, create_row, self, NULL);
      self->changed_id = g_signal_connect_swapped (self->devices, "items-changed",
                                                   G_CALLBACK (update_page), self);
    }

  if (self->stack != NULL)
    update_page (self);
}

static void
chp_browsers_page_dispose (GObject *object)
{
  ChpBrowsersPage *self = CHP_BROWSERS_PAGE (object);

  self->disposing = TRUE;   /* no guide made for a page that is going */
  chp_browsers_page_set_engine (self, NULL);
  /* AdwBin (1.2) unparents its child in its own dispose: let go of it first, or the template
   * and the bin would both unparent it. */
  adw_bin_set_child (ADW_BIN (self), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_BROWSERS_PAGE);

  G_OBJECT_CLASS (chp_browsers_page_parent_class)->dispose (object);
}

static void
chp_browsers_page_class_init (ChpBrowsersPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_browsers_page_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-browsers-page.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpBrowsersPage, stack);
  gtk_widget_class_bind_template_child (widget_class, ChpBrowsersPage, empty_bin);
  gtk_widget_class_bind_template_child (widget_class, ChpBrowsersPage, list);
}

static void
chp_browsers_page_init (ChpBrowsersPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  update_page (self);
}
