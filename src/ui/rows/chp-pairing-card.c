/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-pairing-card.c: the card only shows and opens. Pair and Reject live in one place, the
 * pairing window beside the code, so a person never approves from a list at a glance. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-pairing-card"

#include "chp-pairing-card.h"

#include "chp-a11y.h"
#include "chp-handoff-row.h"
#include "chp-pairing-manager.h"
#include "chp-pairing-window.h"

#include <glib/gi18n.h>

struct _ChpPairingCard
{
  GtkListBoxRow parent_instance;

  GtkLabel *waited_label;
  GtkLabel *details_label;
  GtkLabel *code_label;
  GtkLabel *expiry_label;
  GtkWidget *open_button;

  ChpPairingRequest *request;
  guint tick_id;
};

G_DEFINE_FINAL_TYPE (ChpPairingCard, chp_pairing_card, GTK_TYPE_LIST_BOX_ROW)

static void
update_times (ChpPairingCard *self)
{
  gint64 now_ms = g_get_real_time () / 1000;
  gint64 expires_at = chp_pairing_request_get_expires_at (self->request);
  gint64 left_s = MAX (0, (expires_at - now_ms + 999) / 1000);
  g_autofree char *waited = chp_handoff_waited_in_words (expires_at - CHP_PAIRING_TTL_MS);
  g_autofree char *expiry = NULL;

  gtk_label_set_text (self->waited_label, waited);
  if (left_s > 0)
    /* Translators: a countdown in minutes and seconds, e.g. "Ends in 1:45" */
    expiry = g_strdup_printf (_("Ends in %d:%02d"), (int) (left_s / 60), (int) (left_s % 60));
  else
    expiry = g_strdup (_("Ended"));
  gtk_label_set_text (self->expiry_label, expiry);
}

static void
update (ChpPairingCard *self)
{
  const char *browser = chp_pairing_request_get_browser (self->request);
  const char *existing = chp_pairing_request_get_existing_device_name (self->request);
  g_autofree char *code = chp_pairing_request_dup_code_display (self->request);
  g_autoptr(GString) details = g_string_new (NULL);

  g_string_append (details, browser != NULL && *browser != '\0' ? browser : _("Unknown browser"));
  g_string_append_c (details, '\n');
  g_string_append (details, chp_pairing_request_get_origin (self->request));
  if (existing != NULL)
    {
      g_string_append_c (details, '\n');
      /* Translators: the origin already has a paired browser of that name */
      g_string_append_printf (details, _("Already paired as %s"), existing);
    }
  gtk_label_set_text (self->details_label, details->str);

  /* Exactly the digits, as the pairing window shows them: a person (and a test) compares this
   * label with the browser's. */
  gtk_label_set_text (self->code_label, code != NULL ? code : "");
  update_times (self);
}

static gboolean
tick_cb (gpointer user_data)
{
  update_times (CHP_PAIRING_CARD (user_data));
  return G_SOURCE_CONTINUE;
}

/* The application opens a pairing window for every request on its own; this brings it back
 * when the person closed or lost it, and opens one if there is none. */
static void
open_action (GtkWidget  *widget,
             const char *action_name,
             GVariant   *parameter)
{
  ChpPairingCard *self = CHP_PAIRING_CARD (widget);
  GtkRoot *root = gtk_widget_get_root (widget);
  GtkApplication *application = GTK_IS_WINDOW (root) ? gtk_window_get_application (GTK_WINDOW (root))
                                                     : NULL;
  ChpPairingWindow *window;

  if (application == NULL)
    return;

  for (GList *l = gtk_application_get_windows (application); l != NULL; l = l->next)
    {
      if (CHP_IS_PAIRING_WINDOW (l->data) &&
          chp_pairing_window_get_request (l->data) == self->request)
        {
          gtk_window_present (l->data);
          return;
        }
    }

  window = chp_pairing_window_new (application, self->request);
  gtk_window_set_transient_for (GTK_WINDOW (window), GTK_WINDOW (root));
  gtk_window_present (GTK_WINDOW (window));
}

ChpPairingRequest *
chp_pairing_card_get_request (ChpPairingCard *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_CARD (self), NULL);

  return self->request;
}

static void
chp_pairing_card_dispose (GObject *object)
{
  ChpPairingCard *self = CHP_PAIRING_CARD (object);

  g_clear_handle_id (&self->tick_id, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_PAIRING_CARD);
  g_clear_object (&self->request);

  G_OBJECT_CLASS (chp_pairing_card_parent_class)->dispose (object);
}

static void
chp_pairing_card_class_init (ChpPairingCardClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_pairing_card_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-pairing-card.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpPairingCard, waited_label);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingCard, details_label);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingCard, code_label);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingCard, expiry_label);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingCard, open_button);

  gtk_widget_class_install_action (widget_class, "pairing-card.open", NULL, open_action);
}

static void
chp_pairing_card_init (ChpPairingCard *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  chp_a11y_name_buttons (GTK_WIDGET (self));
}

GtkWidget *
chp_pairing_card_new (ChpPairingRequest *request)
{
  ChpPairingCard *self;

  g_return_val_if_fail (CHP_IS_PAIRING_REQUEST (request), NULL);

  self = g_object_new (CHP_TYPE_PAIRING_CARD, NULL);
  self->request = g_object_ref (request);
  g_signal_connect_object (request, "notify", G_CALLBACK (update), self, G_CONNECT_SWAPPED);
  update (self);
  self->tick_id = g_timeout_add_seconds (1, tick_cb, self);

  return GTK_WIDGET (self);
}
