/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-sites-page.c: the Sites page: a ChpSiteRow per remembered site, bound to the engine's
 * ChpSiteList, which keeps a forgotten site listed (as Undo) while it can be restored. Agents
 * learn while the page is not shown, so the list is read again each time it is (a cheap read on
 * the database thread that changes only what moved). Export writes the memory of every site, as
 * the store exports it (shapes and labels seen twice, never a value), where the person chooses. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-sites-page"

#include "chp-sites-page.h"

#include "chp-a11y.h"
#include "chp-site-row.h"
#include "chp-toast.h"

#include <glib/gi18n.h>

struct _ChpSitesPage
{
  AdwBin parent_instance;

  GtkStack *stack;
  AdwPreferencesGroup *group;
  GtkListBox *list;
  GtkWidget *export_button;

  ChpEngine *engine;
  ChpSiteList *sites;
  gulong items_changed_id;
  GtkFileChooserNative *chooser;   /* while Export asks where */
};

G_DEFINE_FINAL_TYPE (ChpSitesPage, chp_sites_page, ADW_TYPE_BIN)


static void
update_page (ChpSitesPage *self)
{
  guint n = self->sites != NULL ? g_list_model_get_n_items (G_LIST_MODEL (self->sites)) : 0;
  gboolean learning = self->engine == NULL || chp_engine_get_site_learning (self->engine);

  gtk_stack_set_visible_child_name (self->stack, n == 0 ? "empty" : "list");
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "sites.export", n > 0);

  adw_preferences_group_set_description (
    self->group,
    learning ? _("Learned from each site’s own pages so agents work faster there next time: its "
                 "API and its stable controls, never values. A forgotten site can be restored "
                 "for a day.")
             : _("Learning is off in Preferences: what is listed stays until you forget it, "
                 "and nothing new is learned."));
}

static GtkWidget *
create_row (gpointer item,
            gpointer user_data)
{
  return chp_site_row_new (CHP_SITE (item), CHP_SITES_PAGE (user_data)->engine);
}

/* @engine: (nullable): the running engine, or %NULL to show nothing */
void
chp_sites_page_set_engine (ChpSitesPage *self,
                           ChpEngine    *engine)
{
  g_return_if_fail (CHP_IS_SITES_PAGE (self));
  g_return_if_fail (engine == NULL || CHP_IS_ENGINE (engine));

  if (self->sites != NULL)
    g_clear_signal_handler (&self->items_changed_id, self->sites);
  if (self->list != NULL)
    gtk_list_box_bind_model (self->list, NULL, NULL, NULL, NULL);
  g_clear_object (&self->sites);
  g_set_object (&self->engine, engine);

  /* The list exists once the engine's store does (a started engine). */
  if (engine != NULL && chp_engine_get_sites (engine) != NULL)
    {
      self->sites = g_object_ref (chp_engine_get_sites (engine));
      self->items_changed_id = g_signal_connect_swapped (self->sites, "items-changed",
                                                         G_CALLBACK (update_page), self);
      gtk_list_box_bind_model (self->list, G_LIST_MODEL (self->sites), create_row, self, NULL);
      /* Made on first use: nothing has read it yet. */
      chp_engine_sites_changed (engine);
    }

  if (self->stack != NULL)
    update_page (self);
}

/* Export */

static void
written_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(ChpSitesPage) self = user_data;
  g_autoptr(GError) error = NULL;

  if (!g_file_replace_contents_finish (G_FILE (source), result, NULL, &error))
    {
      g_autofree char *text = NULL;

      g_message ("Could not export the remembered sites: %s", error->message);
      /* Translators: %s says why, e.g. "Permission denied" */
      text = g_strdup_printf (_("The sites were not exported: %s"), error->message);
      chp_toast_show (GTK_WIDGET (self), text);
      return;
    }

  chp_toast_show (GTK_WIDGET (self), _("Sites exported"));
}

typedef struct
{
  ChpSitesPage *self;
  GFile *file;
} Export;

static void
export_free (Export *export)
{
  g_object_unref (export->self);
  g_object_unref (export->file);
  g_free (export);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Export, export_free)

static void
exported_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(Export) export = user_data;
  ChpSitesPage *self = export->self;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(JsonGenerator) generator = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;
  gsize length = 0;
  char *text;

  node = chp_engine_export_sites_finish (CHP_ENGINE (source), result, &error);
  if (node == NULL)
    {
      g_autofree char *message = NULL;

      g_message ("Could not export the remembered sites: %s", error->message);
      message = g_strdup_printf (_("The sites were not exported: %s"), error->message);
      chp_toast_show (GTK_WIDGET (self), message);
      return;
    }

  generator = json_generator_new ();
  json_generator_set_pretty (generator, TRUE);
  json_generator_set_root (generator, node);
  text = json_generator_to_data (generator, &length);
  bytes = g_bytes_new_take (text, length);
  /* Private like the database it comes from: structure only, but of the person's sites. */
  g_file_replace_contents_bytes_async (export->file, bytes, NULL, FALSE,
                                       G_FILE_CREATE_PRIVATE | G_FILE_CREATE_REPLACE_DESTINATION,
                                       NULL, written_cb, g_object_ref (self));
}

/**
 * chp_sites_page_export_to:
 * @file: where the JSON goes
 *
 * What Export does once the person chose where (tests call it without the dialog). A toast says
 * how it went.
 */
void
chp_sites_page_export_to (ChpSitesPage *self,
                          GFile        *file)
{
  Export *export;

  g_return_if_fail (CHP_IS_SITES_PAGE (self));
  g_return_if_fail (G_IS_FILE (file));

  if (self->engine == NULL || chp_engine_get_store (self->engine) == NULL)
    return;

  export = g_new0 (Export, 1);
  export->self = g_object_ref (self);
  export->file = g_object_ref (file);
  chp_engine_export_sites_async (self->engine, NULL, NULL, exported_cb, export);
}

static void
chooser_response_cb (GtkNativeDialog *chooser,
                     int              response,
                     ChpSitesPage    *self)
{
  if (response == GTK_RESPONSE_ACCEPT)
    {
      g_autoptr(GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (chooser));

      if (file != NULL)
        chp_sites_page_export_to (self, file);
    }

  g_clear_object (&self->chooser);
}

static void
export_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  ChpSitesPage *self = CHP_SITES_PAGE (widget);
  GtkRoot *root = gtk_widget_get_root (widget);
  g_autoptr(GtkFileFilter) json = gtk_file_filter_new ();

  if (self->engine == NULL || self->chooser != NULL)
    return;

  self->chooser = gtk_file_chooser_native_new (_("Export Remembered Sites"),
                                               GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
                                               GTK_FILE_CHOOSER_ACTION_SAVE,
                                               _("_Save"), _("_Cancel"));
  gtk_native_dialog_set_modal (GTK_NATIVE_DIALOG (self->chooser), TRUE);
  gtk_file_filter_set_name (json, _("JSON"));
  gtk_file_filter_add_suffix (json, "json");
  gtk_file_chooser_add_filter (GTK_FILE_CHOOSER (self->chooser), json);
  gtk_file_chooser_set_current_name (GTK_FILE_CHOOSER (self->chooser), "chaperone-sites.json");
  g_signal_connect_object (self->chooser, "response", G_CALLBACK (chooser_response_cb), self,
                           G_CONNECT_DEFAULT);
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (self->chooser));
}

/* Shown: read the list again, for what agents learned meanwhile (and whether learning is on). */
static void
chp_sites_page_map (GtkWidget *widget)
{
  ChpSitesPage *self = CHP_SITES_PAGE (widget);

  GTK_WIDGET_CLASS (chp_sites_page_parent_class)->map (widget);

  if (self->engine != NULL)
    chp_engine_sites_changed (self->engine);
  update_page (self);
}

static void
chp_sites_page_dispose (GObject *object)
{
  ChpSitesPage *self = CHP_SITES_PAGE (object);

  if (self->chooser != NULL)
    gtk_native_dialog_destroy (GTK_NATIVE_DIALOG (self->chooser));
  g_clear_object (&self->chooser);
  chp_sites_page_set_engine (self, NULL);
  /* AdwBin (1.2) unparents its child in its own dispose: let go of it first, or the template
   * and the bin would both unparent it. */
  adw_bin_set_child (ADW_BIN (self), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_SITES_PAGE);

  G_OBJECT_CLASS (chp_sites_page_parent_class)->dispose (object);
}

static void
chp_sites_page_class_init (ChpSitesPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_sites_page_dispose;
  widget_class->map = chp_sites_page_map;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-sites-page.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpSitesPage, stack);
  gtk_widget_class_bind_template_child (widget_class, ChpSitesPage, group);
  gtk_widget_class_bind_template_child (widget_class, ChpSitesPage, list);
  gtk_widget_class_bind_template_child (widget_class, ChpSitesPage, export_button);

  gtk_widget_class_install_action (widget_class, "sites.export", NULL, export_action);
}

static void
chp_sites_page_init (ChpSitesPage *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  chp_a11y_name_buttons (self->export_button);
  update_page (self);
}
