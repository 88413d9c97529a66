/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-site-row.c: a remembered site. The row follows its ChpSite, which the list updates in place
 * at each reload, so a Forget shows as Undo without the row being made again. Forget and Undo are
 * widget actions: nothing on the session bus, no agent and no page can press them. The toast that
 * says a site was forgotten offers Undo too; it outlives the row, so it holds the engine weakly
 * and the origin, nothing of the row. The API entries, recipes and how the page shows it is ready
 * are read from the store only when the person expands the row, and read again at each
 * expansion. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-site-row"

#include "chp-site-row.h"

#include "chp-a11y.h"
#include "chp-store-sites.h"

#include <glib/gi18n.h>
#include <math.h>

struct _ChpSiteRow
{
  AdwExpanderRow parent_instance;

  GtkWidget *forget_button;
  GtkWidget *undo_button;

  ChpSite *site;
  ChpEngine *engine;
  GPtrArray *detail_rows;       /* the rows shown when expanded; the expander owns them */
  GCancellable *loading;        /* while the API entries are being read */
  gboolean busy;                /* a Forget or an Undo is on its way to the store */
};

G_DEFINE_FINAL_TYPE (ChpSiteRow, chp_site_row, ADW_TYPE_EXPANDER_ROW)

static void
toast (GtkWidget *widget,
       AdwToast  *toast)
{
  GtkWidget *overlay = gtk_widget_get_ancestor (widget, ADW_TYPE_TOAST_OVERLAY);

  if (overlay != NULL)
    adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), toast);
  else
    g_object_unref (toast);
}

/* A toast's title is markup. */
static void
toast_text (GtkWidget  *widget,
            const char *text)
{
  g_autofree char *escaped = g_markup_escape_text (text, -1);

  toast (widget, adw_toast_new (escaped));
}

/* "last used 5 minutes ago": how long ago, in the largest whole unit. */
static char *
format_last_used (gint64 last_used_ms,
                  gint64 now_ms)
{
  gint64 ago_s = (now_ms - last_used_ms) / 1000;
  g_autoptr(GDateTime) when = NULL;
  g_autofree char *date = NULL;
  int n;

  if (last_used_ms <= 0)
    return g_strdup (_("never used"));
  if (ago_s < 60)
    return g_strdup (_("last used just now"));
  if (ago_s < 3600)
    {
      n = (int) (ago_s / 60);
      return g_strdup_printf (ngettext ("last used %d minute ago", "last used %d minutes ago", n),
                              n);
    }
  if (ago_s < 24 * 3600)
    {
      n = (int) (ago_s / 3600);
      return g_strdup_printf (ngettext ("last used %d hour ago", "last used %d hours ago", n), n);
    }
  if (ago_s < 30 * 24 * 3600)
    {
      n = (int) (ago_s / (24 * 3600));
      return g_strdup_printf (ngettext ("last used %d day ago", "last used %d days ago", n), n);
    }

  when = g_date_time_new_from_unix_local (last_used_ms / 1000);
  date = when != NULL ? g_date_time_format (when, "%x") : g_strdup ("");
  /* Translators: %s is a date */
  return g_strdup_printf (_("last used on %s"), date);
}

static char *
format_summary (ChpSite *site,
                gint64   now_ms)
{
  guint n_endpoints = chp_site_get_n_endpoints (site);
  guint n_quarantined = chp_site_get_n_quarantined (site);
  g_autoptr(GString) text = g_string_new (NULL);
  g_autofree char *last_used = format_last_used (chp_site_get_last_used (site), now_ms);

  /* Translators: how many of a site's API calls are remembered */
  g_string_append_printf (text, ngettext ("%u API entry", "%u API entries", n_endpoints),
                          n_endpoints);
  /* Without an entry there is nothing to be confident of. */
  if (n_endpoints > 0)
    {
      g_string_append (text, " · ");
      /* Translators: how far the remembered entries have proved right, as a percentage */
      g_string_append_printf (text, _("confidence %d %%"),
                              (int) lround (chp_site_get_confidence (site) * 100));
    }
  if (chp_site_get_n_recipes (site) > 0)
    {
      guint n = chp_site_get_n_recipes (site);

      g_string_append (text, " · ");
      /* Translators: how many recipes (step lists an agent saved) are remembered for a site */
      g_string_append_printf (text, ngettext ("%u recipe", "%u recipes", n), n);
    }
  g_string_append_printf (text, " · %s", last_used);
  if (n_quarantined > 0)
    {
      g_string_append (text, " · ");
      /* Translators: how many API entries are no longer used after failing twice in a row */
      g_string_append_printf (text, ngettext ("%u quarantined", "%u quarantined", n_quarantined),
                              n_quarantined);
    }

  return g_string_free (g_steal_pointer (&text), FALSE);
}

static void
clear_details (ChpSiteRow *self)
{
  g_cancellable_cancel (self->loading);
  g_clear_object (&self->loading);
  for (guint i = 0; i < self->detail_rows->len; i++)
    adw_expander_row_remove (ADW_EXPANDER_ROW (self),
                             g_ptr_array_index (self->detail_rows, i));
  g_ptr_array_set_size (self->detail_rows, 0);
}

static void
update (ChpSiteRow *self)
{
  gboolean forgotten = chp_site_get_forgotten (self->site);
  gint64 now_ms = g_get_real_time () / 1000;
  g_autofree char *subtitle = NULL;

  if (forgotten)
    {
      gint64 left_ms = chp_site_get_forgotten_at (self->site) + CHP_SITE_RESTORE_MS - now_ms;
      int hours = (int) CLAMP ((left_ms + 3599999) / 3600000, 1, 24);

      subtitle = g_strdup_printf (ngettext ("Forgotten — you can undo this for %d more hour",
                                            "Forgotten — you can undo this for %d more hours",
                                            hours),
                                  hours);
    }
  else
    subtitle = format_summary (self->site, now_ms);
  adw_expander_row_set_subtitle (ADW_EXPANDER_ROW (self), subtitle);

  gtk_widget_set_visible (self->forget_button, !forgotten);
  gtk_widget_set_visible (self->undo_button, forgotten);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "site.forget", !self->busy && !forgotten);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "site.restore", !self->busy && forgotten);

  /* A forgotten site's memory is hidden from everything, this list included. */
  if (forgotten)
    {
      adw_expander_row_set_expanded (ADW_EXPANDER_ROW (self), FALSE);
      clear_details (self);
    }
  adw_expander_row_set_enable_expansion (ADW_EXPANDER_ROW (self), !forgotten);
}

/* Details */

static void
add_detail (ChpSiteRow *self,
            const char *title,
            const char *subtitle)
{
  GtkWidget *row = adw_action_row_new ();

  /* Paths and methods are the site's, not ours: plain text. */
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  if (subtitle != NULL)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  adw_expander_row_add_row (ADW_EXPANDER_ROW (self), row);
  g_ptr_array_add (self->detail_rows, row);
}

/* A recipe's line: its name, how many steps, the names of its params (never a value: the
 * memory holds none). */
static void
add_recipe (ChpSiteRow          *self,
            const ChpSiteRecipe *recipe)
{
  g_autoptr(JsonNode) params = json_from_string (recipe->params, NULL);
  JsonArray *list = params != NULL && JSON_NODE_HOLDS_ARRAY (params)
                    ? json_node_get_array (params) : NULL;
  g_autoptr(GString) names = g_string_new (NULL);
  g_autofree char *title = NULL;
  g_autofree char *subtitle = NULL;

  for (guint i = 0; list != NULL && i < json_array_get_length (list); i++)
    {
      JsonNode *p = json_array_get_element (list, i);

      if (JSON_NODE_HOLDS_OBJECT (p))
        g_string_append_printf (names, "%s%s", names->len > 0 ? ", " : "",
                                json_object_get_string_member_with_default (
                                  json_node_get_object (p), "name", "?"));
    }
  /* Translators: a recipe an agent saved for the site: its name and how many steps it has,
   * e.g. "Recipe new-note — 4 steps" */
  title = g_strdup_printf (ngettext ("Recipe %s — %d step", "Recipe %s — %d steps",
                                     recipe->n_steps), recipe->name, recipe->n_steps);
  if (names->len > 0)
    /* Translators: the names of what a recipe asks for each time it is replayed */
    subtitle = g_strdup_printf (_("Asks for: %s"), names->str);
  else
    subtitle = g_strdup (_("Asks for nothing"));
  add_detail (self, title, subtitle);
}

/* How the site's page says it is ready, as learned over two visits. */
static void
add_ready (ChpSiteRow  *self,
           const char  *ready)
{
  g_autoptr(JsonNode) node = ready != NULL ? json_from_string (ready, NULL) : NULL;
  JsonObject *o = node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node)
                                                                : NULL;
  const char *heading = o != NULL ? json_object_get_string_member_with_default (o, "heading",
                                                                                NULL) : NULL;
  const char *control = o != NULL ? json_object_get_string_member_with_default (o, "control",
                                                                                NULL) : NULL;
  g_autofree char *text = NULL;

  if (heading != NULL)
    /* Translators: how Chaperone tells the site's page has loaded; %s is a heading's text */
    text = g_strdup_printf (_("Ready when the heading “%s” shows"), heading);
  else if (control != NULL)
    /* Translators: how Chaperone tells the site's page has loaded; %s is a control's name */
    text = g_strdup_printf (_("Ready when “%s” shows"), control);
  if (text != NULL)
    add_detail (self, text, NULL);
}

static void
show_record (ChpSiteRow          *self,
             const ChpSiteRecord *record)
{
  guint n_controls = 0;
  guint n_recipes = record->recipes != NULL ? record->recipes->len : 0;

  add_ready (self, record->info->ready);
  for (guint i = 0; i < n_recipes; i++)
    add_recipe (self, g_ptr_array_index (record->recipes, i));

  for (guint i = 0; i < record->endpoints->len; i++)
    {
      const ChpSiteEndpoint *endpoint = g_ptr_array_index (record->endpoints, i);
      g_autofree char *title = NULL;

      /* Translators: an API entry: its method, its path and how far it is trusted (0 to 1),
       * e.g. "GET /recipes/default/tiddlers.json — 0.60" */
      title = g_strdup_printf (_("%s %s — %.2f"), endpoint->method, endpoint->path_template,
                               endpoint->confidence);
      add_detail (self, title,
                  endpoint->quarantined ? _("Quarantined after failing twice in a row") : NULL);
    }

  for (guint i = 0; i < record->controls->len; i++)
    {
      const ChpSiteControl *c = g_ptr_array_index (record->controls, i);

      /* Page headings are kept to tell the page is ready (above), not as controls. */
      if (c->label != NULL && !g_str_equal (c->role, "heading"))
        n_controls++;
    }
  if (n_controls > 0)
    {
      g_autofree char *text = NULL;

      /* Translators: buttons, links and fields known by their label, which is kept only once
       * seen on two visits */
      text = g_strdup_printf (ngettext ("%u control seen on two visits",
                                        "%u controls seen on two visits", n_controls),
                              n_controls);
      add_detail (self, text, NULL);
    }

  if (record->endpoints->len == 0 && n_controls == 0 && n_recipes == 0 &&
      record->info->ready == NULL)
    add_detail (self, _("Nothing learned of this site yet"), NULL);
}

static void
loaded_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(ChpSiteRow) self = user_data;
  g_autoptr(ChpSiteRecord) record = NULL;
  g_autoptr(GError) error = NULL;

  record = chp_store_load_site_finish (CHP_STORE (source), result, &error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) || self->site == NULL)
    return;

  g_clear_object (&self->loading);
  clear_details (self);
  if (record != NULL)
    show_record (self, record);
  else if (g_error_matches (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND))
    add_detail (self, _("Nothing is remembered of this site any more"), NULL);
  else
    {
      g_message ("Could not read a remembered site: %s", error->message);
      add_detail (self, _("This site’s memory could not be read"), error->message);
    }
}

static void
expanded_cb (ChpSiteRow *self)
{
  ChpStore *store;

  if (!adw_expander_row_get_expanded (ADW_EXPANDER_ROW (self)) ||
      chp_site_get_forgotten (self->site))
    return;

  store = chp_engine_get_store (self->engine);
  if (store == NULL)
    return;

  g_cancellable_cancel (self->loading);
  g_clear_object (&self->loading);
  self->loading = g_cancellable_new ();
  chp_store_load_site_async (store, chp_site_get_origin (self->site), self->loading, loaded_cb,
                             g_object_ref (self));
}

/* The list was read again and the site changed: an expanded row reads its entries again. */
static void
site_notify_cb (ChpSiteRow *self)
{
  update (self);
  if (adw_expander_row_get_expanded (ADW_EXPANDER_ROW (self)))
    expanded_cb (self);
}

/* Forget and Undo */

typedef struct
{
  GWeakRef engine;
  char *origin;
} Undo;

static void
undo_free (gpointer  data,
           GClosure *closure)
{
  Undo *undo = data;

  g_weak_ref_clear (&undo->engine);
  g_free (undo->origin);
  g_free (undo);
}

static void
toast_restored_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(GError) error = NULL;

  /* The toast is gone by now: the row says whether the site came back. */
  if (!chp_engine_site_finish (CHP_ENGINE (source), result, &error))
    g_message ("A forgotten site was not restored: %s", error->message);
}

static void
toast_undo_cb (AdwToast *toast,
               Undo     *undo)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&undo->engine);

  /* The engine stopped while the toast was up: nothing left to restore into. */
  if (engine == NULL || chp_engine_get_store (engine) == NULL)
    return;

  chp_engine_restore_site_async (engine, undo->origin, NULL, toast_restored_cb, NULL);
}

static void
toast_forgotten (ChpSiteRow *self)
{
  const char *origin = chp_site_get_origin (self->site);
  g_autofree char *escaped = g_markup_escape_text (origin, -1);
  g_autofree char *title = NULL;
  AdwToast *forgot;
  Undo *undo = g_new0 (Undo, 1);

  g_weak_ref_init (&undo->engine, self->engine);
  undo->origin = g_strdup (origin);

  /* Translators: %s is a site's origin, such as https://wiki.example */
  title = g_strdup_printf (_("Forgot %s"), escaped);
  forgot = adw_toast_new (title);
  adw_toast_set_button_label (forgot, _("_Undo"));
  g_signal_connect_data (forgot, "button-clicked", G_CALLBACK (toast_undo_cb), undo, undo_free,
                         G_CONNECT_DEFAULT);
  toast (GTK_WIDGET (self), forgot);
}

static void
forgot_cb (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(ChpSiteRow) self = user_data;
  g_autoptr(GError) error = NULL;

  self->busy = FALSE;
  if (self->site == NULL)
    return;

  if (!chp_engine_site_finish (CHP_ENGINE (source), result, &error))
    {
      g_autofree char *text = NULL;

      g_message ("A site was not forgotten: %s", error->message);
      /* Translators: %s is a site's origin, then why */
      text = g_strdup_printf (_("%s was not forgotten: %s"), chp_site_get_origin (self->site),
                              error->message);
      toast_text (GTK_WIDGET (self), text);
    }
  else
    toast_forgotten (self);
  update (self);
}

static void
restored_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(ChpSiteRow) self = user_data;
  g_autoptr(GError) error = NULL;

  self->busy = FALSE;
  if (self->site == NULL)
    return;

  if (!chp_engine_site_finish (CHP_ENGINE (source), result, &error))
    {
      g_autofree char *text = NULL;

      g_message ("A site was not restored: %s", error->message);
      /* Translators: %s is a site's origin, then why */
      text = g_strdup_printf (_("%s was not restored: %s"), chp_site_get_origin (self->site),
                              error->message);
      toast_text (GTK_WIDGET (self), text);
    }
  update (self);
}

static void
forget_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  ChpSiteRow *self = CHP_SITE_ROW (widget);

  if (self->busy || chp_site_get_forgotten (self->site) ||
      chp_engine_get_store (self->engine) == NULL)
    return;

  self->busy = TRUE;
  update (self);
  chp_engine_forget_site_async (self->engine, chp_site_get_origin (self->site), NULL, forgot_cb,
                                g_object_ref (self));
}

static void
restore_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  ChpSiteRow *self = CHP_SITE_ROW (widget);

  if (self->busy || !chp_site_get_forgotten (self->site) ||
      chp_engine_get_store (self->engine) == NULL)
    return;

  self->busy = TRUE;
  update (self);
  chp_engine_restore_site_async (self->engine, chp_site_get_origin (self->site), NULL,
                                 restored_cb, g_object_ref (self));
}

/* The row */

ChpSite *
chp_site_row_get_site (ChpSiteRow *self)
{
  g_return_val_if_fail (CHP_IS_SITE_ROW (self), NULL);

  return self->site;
}

/* "5 minutes ago" and "for 3 more hours" age while nothing changes: said again when shown. */
static void
chp_site_row_map (GtkWidget *widget)
{
  ChpSiteRow *self = CHP_SITE_ROW (widget);

  GTK_WIDGET_CLASS (chp_site_row_parent_class)->map (widget);

  if (self->site != NULL)
    update (self);
}

static void
chp_site_row_dispose (GObject *object)
{
  ChpSiteRow *self = CHP_SITE_ROW (object);

  g_cancellable_cancel (self->loading);
  g_clear_object (&self->loading);
  if (self->site != NULL)
    g_signal_handlers_disconnect_by_data (self->site, self);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_SITE_ROW);
  g_clear_pointer (&self->detail_rows, g_ptr_array_unref);
  g_clear_object (&self->site);
  g_clear_object (&self->engine);

  G_OBJECT_CLASS (chp_site_row_parent_class)->dispose (object);
}

static void
chp_site_row_class_init (ChpSiteRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_site_row_dispose;
  widget_class->map = chp_site_row_map;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-site-row.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpSiteRow, forget_button);
  gtk_widget_class_bind_template_child (widget_class, ChpSiteRow, undo_button);

  /* Widget actions: not exported on D-Bus. Only the person forgets or restores a site. */
  gtk_widget_class_install_action (widget_class, "site.forget", NULL, forget_action);
  gtk_widget_class_install_action (widget_class, "site.restore", NULL, restore_action);
}

static void
chp_site_row_init (ChpSiteRow *self)
{
  self->detail_rows = g_ptr_array_new ();
  gtk_widget_init_template (GTK_WIDGET (self));
}

GtkWidget *
chp_site_row_new (ChpSite   *site,
                  ChpEngine *engine)
{
  ChpSiteRow *self;
  const char *origin;
  g_autofree char *forget_name = NULL;
  g_autofree char *undo_name = NULL;

  g_return_val_if_fail (CHP_IS_SITE (site), NULL);
  g_return_val_if_fail (CHP_IS_ENGINE (engine), NULL);

  self = g_object_new (CHP_TYPE_SITE_ROW, NULL);
  self->site = g_object_ref (site);
  self->engine = g_object_ref (engine);
  origin = chp_site_get_origin (site);

  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self), origin);
  /* Translators: the Forget button's name for a screen reader; %s is a site's origin */
  forget_name = g_strdup_printf (_("Forget %s"), origin);
  chp_a11y_set_name (self->forget_button, forget_name);
  gtk_widget_set_tooltip_text (self->forget_button, forget_name);
  /* Translators: the Undo button's name for a screen reader; %s is a site's origin */
  undo_name = g_strdup_printf (_("Undo forgetting %s"), origin);
  chp_a11y_set_name (self->undo_button, undo_name);
  gtk_widget_set_tooltip_text (self->undo_button, undo_name);

  g_signal_connect_swapped (site, "notify", G_CALLBACK (site_notify_cb), self);
  g_signal_connect (self, "notify::expanded", G_CALLBACK (expanded_cb), NULL);
  update (self);

  return GTK_WIDGET (self);
}
