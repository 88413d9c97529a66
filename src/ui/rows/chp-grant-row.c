/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-grant-row.c: the person made the grant in the browser; here they see it next to the others
 * and can end it early. Scopes are shown in plain words, never as their wire names. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-grant-row"

#include "chp-grant-row.h"

#include "chp-a11y.h"

#include <glib/gi18n.h>

struct _ChpGrantRow
{
  GtkListBoxRow parent_instance;

  GtkLabel *title_label;
  GtkLabel *tabs_label;
  GtkFlowBox *scopes_box;
  GtkLabel *expiry_label;
  GtkWidget *revoke_button;

  ChpGrant *grant;
  ChpEngine *engine;
  guint tick_id;
};

G_DEFINE_FINAL_TYPE (ChpGrantRow, chp_grant_row, GTK_TYPE_LIST_BOX_ROW)

/* Returns: (nullable): what a scope lets an agent do, or %NULL for a scope this version does
 * not know (shown by name then, rather than hidden). */
const char *
chp_grant_scope_in_words (const char *scope)
{
  static const struct { const char *scope; const char *words; } table[] = {
    { "browser.tabs.read", N_("see these tabs") },
    { "browser.dom.read", N_("read the pages") },
    { "browser.dom.write", N_("click and type") },
    { "browser.tab.activate", N_("bring the tab to the front") },
    { "browser.human.takeover", N_("ask you for a step") },
    { "browser.tab.navigate", N_("open pages of the same site") },
    { "browser.cookies.read", N_("see cookie names") },
  };

  for (guint i = 0; i < G_N_ELEMENTS (table); i++)
    if (g_strcmp0 (table[i].scope, scope) == 0)
      return _(table[i].words);

  return NULL;
}

static void
update_expiry (ChpGrantRow *self)
{
  gint64 left_s = (chp_grant_get_expires_at (self->grant) - g_get_real_time () / 1000) / 1000;
  g_autofree char *text = NULL;

  if (left_s <= 0)
    text = g_strdup (_("Expired"));
  else if (left_s < 60)
    text = g_strdup_printf (ngettext ("%d second left", "%d seconds left", (int) left_s),
                            (int) left_s);
  else if (left_s < 3600)
    text = g_strdup_printf (ngettext ("%d minute left", "%d minutes left", (int) (left_s / 60)),
                            (int) (left_s / 60));
  else
    /* Translators: hours and minutes left, e.g. "7 h 59 min left" */
    text = g_strdup_printf (_("%d h %02d min left"), (int) (left_s / 3600),
                            (int) (left_s % 3600 / 60));

  gtk_label_set_text (self->expiry_label, text);
}

static void
update (ChpGrantRow *self)
{
  const char *label = chp_grant_get_label (self->grant);
  const char *task_id = chp_grant_get_task_id (self->grant);
  const char * const *scopes = chp_grant_get_scopes (self->grant);
  g_autoptr(GString) tabs = g_string_new (NULL);
  g_autofree char *revoke_name = NULL;
  GtkWidget *child;

  if (label == NULL || *label == '\0')
    label = _("Task without a name");
  gtk_label_set_text (self->title_label, label);

  if (task_id != NULL && *task_id != '\0')
    /* Translators: the task's id, as the browser made it, for telling two tasks apart */
    g_string_append_printf (tabs, _("Task %s"), task_id);
  for (guint i = 0; i < chp_grant_get_n_targets (self->grant); i++)
    {
      const ChpGrantTarget *target = chp_grant_get_target (self->grant, i);

      if (tabs->len > 0)
        g_string_append_c (tabs, '\n');
      /* Child frames of a granted tab show as their origin only. */
      if (target->frame_id == 0)
        /* Translators: a tab's title, then its site, e.g. "Menu — https://example.org" */
        g_string_append_printf (tabs, _("%s — %s"),
                                *target->title != '\0' ? target->title : target->url,
                                target->origin);
      else
        /* Translators: a frame inside a granted tab, then its site */
        g_string_append_printf (tabs, _("  frame — %s"), target->origin);
    }
  gtk_label_set_text (self->tabs_label, tabs->str);

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->scopes_box))) != NULL)
    gtk_flow_box_remove (self->scopes_box, child);
  for (guint i = 0; scopes[i] != NULL; i++)
    {
      const char *words = chp_grant_scope_in_words (scopes[i]);
      GtkWidget *chip = gtk_label_new (words != NULL ? words : scopes[i]);

      gtk_widget_add_css_class (chip, "chp-chip");
      gtk_flow_box_append (self->scopes_box, chip);
      gtk_widget_set_can_focus (gtk_widget_get_parent (chip), FALSE);
    }

  revoke_name = g_strdup_printf (_("Revoke %s"), label);
  chp_a11y_set_name (self->revoke_button, revoke_name);
  gtk_widget_set_tooltip_text (self->revoke_button, revoke_name);

  update_expiry (self);
}

static gboolean
tick_cb (gpointer user_data)
{
  update_expiry (CHP_GRANT_ROW (user_data));
  return G_SOURCE_CONTINUE;
}

static void
revoked_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GtkWidget) widget = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_engine_person_call_finish (CHP_ENGINE (source), result, &error);
  GtkWidget *overlay;

  /* On success the browser's grant.changed removes the row. */
  if (node != NULL)
    return;

  gtk_widget_set_sensitive (widget, TRUE);
  overlay = gtk_widget_get_ancestor (widget, ADW_TYPE_TOAST_OVERLAY);
  if (overlay != NULL)
    adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay),
                                 adw_toast_new (_("The browser did not answer; the grant was not revoked")));
  g_debug ("grant.revoke: %s", error->message);
}

static void
revoke_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  ChpGrantRow *self = CHP_GRANT_ROW (widget);

  gtk_widget_set_sensitive (widget, FALSE);
  chp_engine_revoke_grant_async (self->engine,
                                 chp_grant_get_device_id (self->grant),
                                 chp_grant_get_id (self->grant),
                                 revoked_cb, g_object_ref (widget));
}

static void
chp_grant_row_dispose (GObject *object)
{
  ChpGrantRow *self = CHP_GRANT_ROW (object);

  g_clear_handle_id (&self->tick_id, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_GRANT_ROW);
  g_clear_object (&self->grant);
  g_clear_object (&self->engine);

  G_OBJECT_CLASS (chp_grant_row_parent_class)->dispose (object);
}

static void
chp_grant_row_class_init (ChpGrantRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_grant_row_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-grant-row.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpGrantRow, title_label);
  gtk_widget_class_bind_template_child (widget_class, ChpGrantRow, tabs_label);
  gtk_widget_class_bind_template_child (widget_class, ChpGrantRow, scopes_box);
  gtk_widget_class_bind_template_child (widget_class, ChpGrantRow, expiry_label);
  gtk_widget_class_bind_template_child (widget_class, ChpGrantRow, revoke_button);

  /* A widget action: nothing on the session bus can revoke (or widen) a grant. */
  gtk_widget_class_install_action (widget_class, "grant.revoke", NULL, revoke_action);
}

static void
chp_grant_row_init (ChpGrantRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
}

GtkWidget *
chp_grant_row_new (ChpGrant  *grant,
                   ChpEngine *engine)
{
  ChpGrantRow *self;

  g_return_val_if_fail (CHP_IS_GRANT (grant), NULL);
  g_return_val_if_fail (CHP_IS_ENGINE (engine), NULL);

  self = g_object_new (CHP_TYPE_GRANT_ROW, NULL);
  self->grant = g_object_ref (grant);
  self->engine = g_object_ref (engine);
  update (self);
  self->tick_id = g_timeout_add_seconds (1, tick_cb, self);

  return GTK_WIDGET (self);
}
