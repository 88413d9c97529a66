/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-pairing-window.c: the only place where a person lets a browser pair. It shows the code the
 * browser shows too, counts down to the request's expiry, and then says in plain words how the
 * attempt ended before closing itself. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-pairing-window"

#include "chp-pairing-window.h"

#include "chp-a11y.h"

#include <glib/gi18n.h>

/* Long enough to read the outcome, short enough not to linger over the next request. */
#define CLOSE_DELAY_SECONDS 6

struct _ChpPairingWindow
{
  AdwWindow parent_instance;

  GtkLabel *code_label;
  GtkLabel *countdown_label;
  AdwActionRow *browser_row;
  AdwActionRow *origin_row;
  GtkWidget *choice_box;
  GtkLabel *choice_label;
  GtkWidget *add_toggle;
  GtkWidget *replace_toggle;
  GtkLabel *choice_hint;
  GtkLabel *outcome_label;
  GtkWidget *reject_button;
  GtkWidget *pair_button;

  ChpPairingRequest *request;
  guint countdown_id;
  guint close_id;
  gboolean decided;     /* the person pressed a button (or closed the window) */
};

enum {
  PROP_0,
  PROP_REQUEST,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpPairingWindow, chp_pairing_window, ADW_TYPE_WINDOW)

static gboolean
is_waiting (ChpPairingWindow *self)
{
  return chp_pairing_request_get_state (self->request) == CHP_PAIRING_STATE_WAITING;
}

static void
update_countdown (ChpPairingWindow *self)
{
  gint64 now_ms = g_get_real_time () / 1000;
  gint64 remaining_ms = chp_pairing_request_get_expires_at (self->request) - now_ms;
  g_autofree char *text = NULL;

  if (remaining_ms > 0)
    {
      /* Rounded up, so the last second shows "0:01", not "0:00". */
      int seconds = (int) ((remaining_ms + 999) / 1000);

      /* Translators: minutes and seconds left before the pairing code expires, e.g. "1:59" */
      text = g_strdup_printf (_("Expires in %d:%02d"), seconds / 60, seconds % 60);
      gtk_label_set_text (self->countdown_label, text);
    }
  else
    {
      /* The engine ends the request on its own clock; until it does, do not invite a press. */
      gtk_label_set_text (self->countdown_label, _("The code has expired"));
      gtk_widget_action_set_enabled (GTK_WIDGET (self), "pairing.approve", FALSE);
    }
}

static gboolean
countdown_cb (gpointer user_data)
{
  update_countdown (CHP_PAIRING_WINDOW (user_data));

  return G_SOURCE_CONTINUE;
}

static gboolean
close_cb (gpointer user_data)
{
  ChpPairingWindow *self = CHP_PAIRING_WINDOW (user_data);

  self->close_id = 0;
  gtk_window_destroy (GTK_WINDOW (self));

  return G_SOURCE_REMOVE;
}

/* Only "Paired." is a heading; a longer outcome reads better as a sentence. */
static const char *outcome_success[] = { "title-4", "success", NULL };
static const char *outcome_error[] = { "error", NULL };
static const char *outcome_plain[] = { NULL };
static const char *outcome_pending[] = { "dim-label", NULL };

static void
show_outcome (ChpPairingWindow  *self,
              const char        *text,
              const char       **css_classes)
{
  gtk_label_set_text (self->outcome_label, text);
  gtk_widget_set_css_classes (GTK_WIDGET (self->outcome_label), css_classes);
  gtk_widget_set_visible (GTK_WIDGET (self->outcome_label), TRUE);
}

static void
update_existing_device (ChpPairingWindow *self)
{
  const char *name = chp_pairing_request_get_existing_device_name (self->request);
  g_autofree char *explanation = NULL;
  g_autofree char *replace = NULL;

  gtk_widget_set_visible (self->choice_box, name != NULL);
  if (name == NULL)
    return;

  explanation = g_strdup_printf (_("This extension is already paired as “%s”, from another "
                                   "browser profile or an earlier installation."),
                                 name);
  gtk_label_set_text (self->choice_label, explanation);

  replace = g_strdup_printf (_("Replace %s"), name);
  gtk_button_set_label (GTK_BUTTON (self->replace_toggle), replace);
  chp_a11y_set_name (self->replace_toggle, replace);
}

/* Says what the selected choice will do, under the two buttons. */
static void
choice_toggled_cb (ChpPairingWindow *self)
{
  gboolean replace = gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (self->replace_toggle));

  gtk_label_set_text (self->choice_hint,
                      replace ? _("The old pairing stops working at once.")
                              : _("Both stay paired."));
}

static void
update_state (ChpPairingWindow *self)
{
  const char *text;
  const char **css_classes = outcome_error;

  switch (chp_pairing_request_get_state (self->request))
    {
    case CHP_PAIRING_STATE_CHALLENGED:
    case CHP_PAIRING_STATE_WAITING:
      /* Pair was pressed and the engine is saving the browser: say so, the buttons are off. */
      if (self->decided)
        show_outcome (self, _("Pairing…"), outcome_pending);
      return;

    case CHP_PAIRING_STATE_APPROVED:
      text = _("Paired.");
      css_classes = outcome_success;
      break;

    case CHP_PAIRING_STATE_REJECTED:
      text = _("You rejected this browser. It was not paired.");
      css_classes = outcome_plain;
      break;

    case CHP_PAIRING_STATE_EXPIRED:
      text = _("The code expired before anyone pressed Pair. Start pairing again from the "
               "browser.");
      break;

    case CHP_PAIRING_STATE_FAILED:
    case CHP_PAIRING_STATE_ABANDONED:
    default:
      text = _("The browser stopped pairing.");
      break;
    }

  /* Final: nothing on this window can change the outcome any more. */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "pairing.approve", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "pairing.reject", FALSE);
  g_clear_handle_id (&self->countdown_id, g_source_remove);
  /* Emptied and greyed, not hidden: a window does not shrink back, and hiding would leave a
   * hole. The choice stays visible too, so the person sees which one was applied. */
  gtk_label_set_text (self->countdown_label, "");
  gtk_widget_set_sensitive (self->choice_box, FALSE);
  gtk_widget_add_css_class (GTK_WIDGET (self->code_label), "chp-finished");
  show_outcome (self, text, css_classes);

  if (self->close_id == 0)
    self->close_id = g_timeout_add_seconds (CLOSE_DELAY_SECONDS, close_cb, self);
}

static void
update_code (ChpPairingWindow *self)
{
  g_autofree char *code = chp_pairing_request_dup_code_display (self->request);

  gtk_label_set_text (self->code_label, code != NULL ? code : "");
}

/* Both decisions disable both buttons first: a second press must not reach the engine. */
static void
begin_decision (ChpPairingWindow *self)
{
  self->decided = TRUE;
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "pairing.approve", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "pairing.reject", FALSE);
  gtk_widget_set_sensitive (self->choice_box, FALSE);
}

static void
approve_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  ChpPairingWindow *self = CHP_PAIRING_WINDOW (widget);
  g_autoptr(ChpPairingWindow) guard = NULL;
  gboolean replace;

  if (self->decided || !is_waiting (self))
    return;

  replace = chp_pairing_request_get_existing_device_name (self->request) != NULL &&
            gtk_toggle_button_get_active (GTK_TOGGLE_BUTTON (self->replace_toggle));

  /* The engine may finish the request (and so update this window) before approve() returns. */
  guard = g_object_ref (self);
  begin_decision (self);
  update_state (self);
  chp_pairing_request_approve (self->request, replace);
}

static void
reject_action (GtkWidget  *widget,
               const char *action_name,
               GVariant   *parameter)
{
  ChpPairingWindow *self = CHP_PAIRING_WINDOW (widget);
  g_autoptr(ChpPairingWindow) guard = NULL;

  if (self->decided || !is_waiting (self))
    return;

  guard = g_object_ref (self);
  begin_decision (self);
  chp_pairing_request_reject (self->request);
}

static gboolean
chp_pairing_window_close_request (GtkWindow *window)
{
  ChpPairingWindow *self = CHP_PAIRING_WINDOW (window);

  /* A code that nobody looks at must not stay approvable for two minutes; closing answers no,
   * and the browser learns it at once instead of waiting for the expiry. */
  if (!self->decided && is_waiting (self))
    {
      self->decided = TRUE;
      chp_pairing_request_reject (self->request);
    }

  return GTK_WINDOW_CLASS (chp_pairing_window_parent_class)->close_request (window);
}

ChpPairingRequest *
chp_pairing_window_get_request (ChpPairingWindow *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_WINDOW (self), NULL);

  return self->request;
}

static void
chp_pairing_window_constructed (GObject *object)
{
  ChpPairingWindow *self = CHP_PAIRING_WINDOW (object);

  G_OBJECT_CLASS (chp_pairing_window_parent_class)->constructed (object);

  g_assert (CHP_IS_PAIRING_REQUEST (self->request));

  adw_action_row_set_subtitle (self->browser_row, chp_pairing_request_get_browser (self->request));
  adw_action_row_set_subtitle (self->origin_row, chp_pairing_request_get_origin (self->request));

  g_signal_connect_object (self->request, "notify::code", G_CALLBACK (update_code), self,
                           G_CONNECT_SWAPPED);
  g_signal_connect_object (self->request, "notify::existing-device-name",
                           G_CALLBACK (update_existing_device), self, G_CONNECT_SWAPPED);
  g_signal_connect_object (self->request, "notify::state", G_CALLBACK (update_state), self,
                           G_CONNECT_SWAPPED);

  update_code (self);
  update_existing_device (self);
  update_countdown (self);
  /* Whole seconds are all a countdown shows; this lets GLib batch the wake-ups. */
  self->countdown_id = g_timeout_add_seconds (1, countdown_cb, self);
  update_state (self);
}

static void
chp_pairing_window_dispose (GObject *object)
{
  ChpPairingWindow *self = CHP_PAIRING_WINDOW (object);

  g_clear_handle_id (&self->countdown_id, g_source_remove);
  g_clear_handle_id (&self->close_id, g_source_remove);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_PAIRING_WINDOW);
  g_clear_object (&self->request);

  G_OBJECT_CLASS (chp_pairing_window_parent_class)->dispose (object);
}

static void
chp_pairing_window_get_property (GObject    *object,
                                 guint       prop_id,
                                 GValue     *value,
                                 GParamSpec *pspec)
{
  ChpPairingWindow *self = CHP_PAIRING_WINDOW (object);

  switch (prop_id)
    {
    case PROP_REQUEST:
      g_value_set_object (value, self->request);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_pairing_window_set_property (GObject      *object,
                                 guint         prop_id,
                                 const GValue *value,
                                 GParamSpec   *pspec)
{
  ChpPairingWindow *self = CHP_PAIRING_WINDOW (object);

  switch (prop_id)
    {
    case PROP_REQUEST:
      self->request = g_value_dup_object (value);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_pairing_window_class_init (ChpPairingWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS (klass);

  object_class->constructed = chp_pairing_window_constructed;
  object_class->dispose = chp_pairing_window_dispose;
  object_class->get_property = chp_pairing_window_get_property;
  object_class->set_property = chp_pairing_window_set_property;

  window_class->close_request = chp_pairing_window_close_request;

  properties[PROP_REQUEST] =
    g_param_spec_object ("request", NULL, NULL, CHP_TYPE_PAIRING_REQUEST,
                         G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY |
                         G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (
    widget_class, "/io/github/chaperone/Chaperone/chp-pairing-window.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpPairingWindow, code_label);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingWindow, countdown_label);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingWindow, browser_row);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingWindow, origin_row);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingWindow, choice_box);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingWindow, choice_label);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingWindow, add_toggle);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingWindow, replace_toggle);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingWindow, choice_hint);
  gtk_widget_class_bind_template_callback (widget_class, choice_toggled_cb);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingWindow, outcome_label);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingWindow, reject_button);
  gtk_widget_class_bind_template_child (widget_class, ChpPairingWindow, pair_button);

  /* Widget actions only: app.* and win.* actions are exported on the session bus, where an
   * agent could reach them. Approving must take a person at this window. */
  gtk_widget_class_install_action (widget_class, "pairing.approve", NULL, approve_action);
  gtk_widget_class_install_action (widget_class, "pairing.reject", NULL, reject_action);
}

static void
chp_pairing_window_init (ChpPairingWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  chp_a11y_set_name (self->reject_button, _("Reject"));
  chp_a11y_set_name (self->pair_button, _("Pair"));
  chp_a11y_set_name (self->add_toggle, _("Add as another profile"));
  choice_toggled_cb (self);
}

ChpPairingWindow *
chp_pairing_window_new (GtkApplication    *application,
                        ChpPairingRequest *request)
{
  g_return_val_if_fail (application == NULL || GTK_IS_APPLICATION (application), NULL);
  g_return_val_if_fail (CHP_IS_PAIRING_REQUEST (request), NULL);

  return g_object_new (CHP_TYPE_PAIRING_WINDOW,
                       "application", application,
                       "request", request,
                       NULL);
}
