/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-handoff-row.c: the person finishes a step in the browser (a QR code, an MFA code...) and
 * says so here or in the page's banner; either way the extension is told and the agent learns it.
 * The buttons are widget actions: nothing on the session bus can press them. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-handoff-row"

#include "chp-handoff-row.h"

#include "chp-a11y.h"

#include <glib/gi18n.h>

struct _ChpHandoffRow
{
  GtkListBoxRow parent_instance;

  GtkLabel *title_label;
  GtkLabel *waited_label;
  GtkLabel *details_label;
  GtkLabel *message_label;
  GtkWidget *show_button;
  GtkWidget *cancel_button;
  GtkWidget *done_button;

  ChpHandoff *handoff;
  ChpEngine *engine;
  guint tick_id;
};

G_DEFINE_FINAL_TYPE (ChpHandoffRow, chp_handoff_row, GTK_TYPE_LIST_BOX_ROW)

/* The reason is a closed set checked by the core: the words are ours, not the page's. */
static const char *
reason_title (const char *reason)
{
  if (g_strcmp0 (reason, "qr") == 0)
    return _("Scan a QR code");
  if (g_strcmp0 (reason, "mfa") == 0)
    return _("Enter a verification code");
  if (g_strcmp0 (reason, "captcha") == 0)
    return _("Solve a CAPTCHA");
  if (g_strcmp0 (reason, "device") == 0)
    return _("Confirm on your device");
  if (g_strcmp0 (reason, "login") == 0)
    return _("Sign in");
  return _("Do a step in the browser");
}

/* How long something has waited for the person, as the cards of Needs you say it. */
char *
chp_handoff_waited_in_words (gint64 since_ms)
{
  gint64 waited_s = MAX (0, (g_get_real_time () / 1000 - since_ms) / 1000);

  if (waited_s < 60)
    return g_strdup (_("Waiting for less than a minute"));
  if (waited_s < 3600)
    return g_strdup_printf (ngettext ("Waiting for %d minute", "Waiting for %d minutes",
                                      (int) (waited_s / 60)),
                            (int) (waited_s / 60));
  return g_strdup_printf (ngettext ("Waiting for %d hour", "Waiting for %d hours",
                                    (int) (waited_s / 3600)),
                          (int) (waited_s / 3600));
}

static void
update (ChpHandoffRow *self)
{
  ChpDevice *device = chp_device_list_lookup (chp_engine_get_devices (self->engine),
                                              chp_handoff_get_device_id (self->handoff));
  const char *title = chp_handoff_get_title (self->handoff);
  const char *message = chp_handoff_get_message (self->handoff);
  g_autoptr(GString) details = g_string_new (NULL);
  g_autofree char *waited = NULL;
  g_autofree char *quoted = NULL;

  gtk_label_set_text (self->title_label, reason_title (chp_handoff_get_reason (self->handoff)));

  /* Translators: which browser, then which site, e.g. "Chromium · https://example.org" */
  g_string_append_printf (details, _("%s · %s"),
                          device != NULL ? chp_device_get_name (device) : _("Unknown browser"),
                          chp_handoff_get_origin (self->handoff));
  if (title != NULL && *title != '\0')
    /* Translators: the tab's title, as the page gives it */
    g_string_append_printf (details, _("\nTab: %s"), title);
  /* Which agent asked is known once agents connect through the app (issue 5). */
  g_string_append_printf (details, "\n%s", _("Asked by an agent"));
  gtk_label_set_text (self->details_label, details->str);

  if (message != NULL && *message != '\0')
    /* Translators: the agent's own words to the person, quoted */
    quoted = g_strdup_printf (_("“%s”"), message);
  gtk_label_set_text (self->message_label, quoted != NULL ? quoted : "");
  gtk_widget_set_visible (GTK_WIDGET (self->message_label), quoted != NULL);

  waited = chp_handoff_waited_in_words (chp_handoff_get_created_at (self->handoff));
  gtk_label_set_text (self->waited_label, waited);
}

static gboolean
tick_cb (gpointer user_data)
{
  update (CHP_HANDOFF_ROW (user_data));
  return G_SOURCE_CONTINUE;
}

static void
resolved_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GtkWidget) widget = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_engine_person_call_finish (CHP_ENGINE (source), result, &error);

  if (node != NULL)
    return;

  /* The row stays (the handoff is still waiting as far as anyone knows): say why nothing
   * happened, and let the person try again. */
  gtk_widget_set_sensitive (widget, TRUE);
  if (gtk_widget_get_root (widget) != NULL)
    {
      GtkWidget *overlay = gtk_widget_get_ancestor (widget, ADW_TYPE_TOAST_OVERLAY);

      if (overlay != NULL)
        adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay),
                                     adw_toast_new (_("The browser did not answer; try again")));
    }
  g_debug ("handoff: %s", error->message);
}

static void
resolve (ChpHandoffRow *self,
         const char    *outcome)
{
  /* One press is enough: the row goes when the browser confirms. */
  gtk_widget_set_sensitive (GTK_WIDGET (self), FALSE);
  chp_engine_resolve_handoff_async (self->engine,
                                    chp_handoff_get_device_id (self->handoff),
                                    chp_handoff_get_id (self->handoff),
                                    outcome, resolved_cb, g_object_ref (self));
}

static void
done_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  resolve (CHP_HANDOFF_ROW (widget), "done");
}

static void
cancel_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  resolve (CHP_HANDOFF_ROW (widget), "cancelled");
}

static void
shown_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_engine_person_call_finish (CHP_ENGINE (source), result, &error);

  if (node == NULL)
    g_debug ("show tab: %s", error->message);
}

static void
show_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  ChpHandoffRow *self = CHP_HANDOFF_ROW (widget);

  chp_engine_show_handoff_tab_async (self->engine,
                                     chp_handoff_get_device_id (self->handoff),
                                     chp_handoff_get_id (self->handoff),
                                     shown_cb, NULL);
}

static void
chp_handoff_row_dispose (GObject *object)
{
  ChpHandoffRow *self = CHP_HANDOFF_ROW (object);

  g_clear_handle_id (&self->tick_id, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_HANDOFF_ROW);
  g_clear_object (&self->handoff);
  g_clear_object (&self->engine);

  G_OBJECT_CLASS (chp_handoff_row_parent_class)->dispose (object);
}

static void
chp_handoff_row_class_init (ChpHandoffRowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_handoff_row_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-handoff-row.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpHandoffRow, title_label);
  gtk_widget_class_bind_template_child (widget_class, ChpHandoffRow, waited_label);
  gtk_widget_class_bind_template_child (widget_class, ChpHandoffRow, details_label);
  gtk_widget_class_bind_template_child (widget_class, ChpHandoffRow, message_label);
  gtk_widget_class_bind_template_child (widget_class, ChpHandoffRow, show_button);
  gtk_widget_class_bind_template_child (widget_class, ChpHandoffRow, cancel_button);
  gtk_widget_class_bind_template_child (widget_class, ChpHandoffRow, done_button);

  gtk_widget_class_install_action (widget_class, "handoff.done", NULL, done_action);
  gtk_widget_class_install_action (widget_class, "handoff.cancel", NULL, cancel_action);
  gtk_widget_class_install_action (widget_class, "handoff.show", NULL, show_action);
}

static void
chp_handoff_row_init (ChpHandoffRow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  chp_a11y_name_buttons (GTK_WIDGET (self));

  /* The buttons wrap in a flow box when the window is narrow; its slots are not stops of
   * their own on the way to the buttons. */
  for (GtkWidget *child = gtk_widget_get_first_child (gtk_widget_get_parent (gtk_widget_get_parent (self->done_button)));
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    gtk_widget_set_focusable (child, FALSE);
}

GtkWidget *
chp_handoff_row_new (ChpHandoff *handoff,
                     ChpEngine  *engine)
{
  ChpHandoffRow *self;

  g_return_val_if_fail (CHP_IS_HANDOFF (handoff), NULL);
  g_return_val_if_fail (CHP_IS_ENGINE (engine), NULL);

  self = g_object_new (CHP_TYPE_HANDOFF_ROW, NULL);
  self->handoff = g_object_ref (handoff);
  self->engine = g_object_ref (engine);
  update (self);
  /* "Waiting for N minutes" keeps counting. */
  self->tick_id = g_timeout_add_seconds (30, tick_cb, self);

  return GTK_WIDGET (self);
}
