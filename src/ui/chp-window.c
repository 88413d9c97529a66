/* chp-window.c: the main window. It binds to the engine's models and never changes them itself:
 * revoking happens in the rows, pairing in the pairing windows. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-window"

#include "chp-window.h"

#include "chp-a11y.h"
#include "chp-application.h"
#include "chp-device-row.h"
#include "chp-grant-row.h"
#include "chp-handoff-row.h"

#include <glib/gi18n.h>

struct _ChpWindow
{
  AdwApplicationWindow parent_instance;

  GtkRevealer *lock_revealer;
  GtkLabel *lock_label;
  GtkRevealer *notice_revealer;
  GtkLabel *notice_label;
  GtkStack *stack;
  GtkLabel *error_label;
  GtkListBox *device_list;
  GtkWidget *needs_group;
  GtkListBox *handoff_list;
  GtkWidget *grants_group;
  GtkListBox *grant_list;
  GtkWidget *dismiss_button;
  GtkWidget *retry_button;

  ChpEngine *engine;
  GListModel *devices;
  gulong devices_changed_id;
  GListModel *grants;
  gulong grants_changed_id;
  GListModel *handoffs;
  gulong handoffs_changed_id;
  ChpPairingManager *pairing;
  gulong locked_until_id;
  guint lock_tick_id;
  gboolean showing_error;
};

G_DEFINE_FINAL_TYPE (ChpWindow, chp_window, ADW_TYPE_APPLICATION_WINDOW)

static void
update_page (ChpWindow *self)
{
  const char *page;

  if (self->engine == NULL)
    page = self->showing_error ? "error" : "starting";
  else if (g_list_model_get_n_items (self->devices) == 0)
    page = "empty";
  else
    page = "devices";

  gtk_stack_set_visible_child_name (self->stack, page);
}

static void update_lock (ChpWindow *self);

static gboolean
lock_tick_cb (gpointer user_data)
{
  ChpWindow *self = CHP_WINDOW (user_data);

  self->lock_tick_id = 0;
  update_lock (self);

  return G_SOURCE_REMOVE;
}

static void
update_lock (ChpWindow *self)
{
  gint64 now_ms = g_get_real_time () / 1000;
  gint64 until_ms = 0;
  g_autofree char *text = NULL;
  int minutes;

  g_clear_handle_id (&self->lock_tick_id, g_source_remove);

  if (self->pairing != NULL)
    until_ms = chp_pairing_manager_get_locked_until (self->pairing);

  if (until_ms <= now_ms)
    {
      gtk_revealer_set_reveal_child (self->lock_revealer, FALSE);
      return;
    }

  /* Rounded up: "locked for 0 minutes" would read as "not locked". */
  minutes = (int) ((until_ms - now_ms + 59999) / 60000);
  text = g_strdup_printf (ngettext ("Pairing is locked for %d minute after three failed attempts.",
                                    "Pairing is locked for %d minutes after three failed attempts.",
                                    minutes),
                          minutes);
  gtk_label_set_text (self->lock_label, text);
  gtk_revealer_set_reveal_child (self->lock_revealer, TRUE);

  /* The core announces a lock when it starts, not when it runs out: count down here. */
  self->lock_tick_id = g_timeout_add_seconds (5, lock_tick_cb, self);
}

static GtkWidget *
create_device_row (gpointer item,
                   gpointer user_data)
{
  ChpWindow *self = CHP_WINDOW (user_data);

  return chp_device_row_new (CHP_DEVICE (item), chp_engine_get_bridge (self->engine));
}

static GtkWidget *
create_grant_row (gpointer item,
                  gpointer user_data)
{
  return chp_grant_row_new (CHP_GRANT (item), CHP_WINDOW (user_data)->engine);
}

static GtkWidget *
create_handoff_row (gpointer item,
                    gpointer user_data)
{
  return chp_handoff_row_new (CHP_HANDOFF (item), CHP_WINDOW (user_data)->engine);
}

/* Empty groups say nothing: they show only when they hold something. */
static void
update_groups (ChpWindow *self)
{
  gtk_widget_set_visible (self->needs_group,
                          self->handoffs != NULL && g_list_model_get_n_items (self->handoffs) > 0);
  gtk_widget_set_visible (self->grants_group,
                          self->grants != NULL && g_list_model_get_n_items (self->grants) > 0);
}

static void
unbind_engine (ChpWindow *self)
{
  /* Also runs from dispose, which may run twice: the second time the template is gone. */
  if (self->device_list != NULL)
    gtk_list_box_bind_model (self->device_list, NULL, NULL, NULL, NULL);

  if (self->grant_list != NULL)
    gtk_list_box_bind_model (self->grant_list, NULL, NULL, NULL, NULL);
  if (self->handoff_list != NULL)
    gtk_list_box_bind_model (self->handoff_list, NULL, NULL, NULL, NULL);
  if (self->devices != NULL)
    g_clear_signal_handler (&self->devices_changed_id, self->devices);
  g_clear_object (&self->devices);
  if (self->grants != NULL)
    g_clear_signal_handler (&self->grants_changed_id, self->grants);
  g_clear_object (&self->grants);
  if (self->handoffs != NULL)
    g_clear_signal_handler (&self->handoffs_changed_id, self->handoffs);
  g_clear_object (&self->handoffs);
  if (self->needs_group != NULL)
    update_groups (self);

  if (self->pairing != NULL)
    g_clear_signal_handler (&self->locked_until_id, self->pairing);
  g_clear_object (&self->pairing);
  g_clear_handle_id (&self->lock_tick_id, g_source_remove);

  g_clear_object (&self->engine);

  if (self->lock_revealer != NULL)
    gtk_revealer_set_reveal_child (self->lock_revealer, FALSE);
  if (self->notice_revealer != NULL)
    gtk_revealer_set_reveal_child (self->notice_revealer, FALSE);
}

static void
bind_engine (ChpWindow *self,
             ChpEngine *engine)
{
  const char *moved_aside;

  self->engine = g_object_ref (engine);

  self->devices = G_LIST_MODEL (g_object_ref (chp_engine_get_devices (engine)));
  gtk_list_box_bind_model (self->device_list, self->devices, create_device_row, self, NULL);
  self->devices_changed_id = g_signal_connect_swapped (self->devices, "items-changed",
                                                       G_CALLBACK (update_page), self);

  self->grants = G_LIST_MODEL (g_object_ref (chp_engine_get_grants (engine)));
  gtk_list_box_bind_model (self->grant_list, self->grants, create_grant_row, self, NULL);
  self->grants_changed_id = g_signal_connect_swapped (self->grants, "items-changed",
                                                      G_CALLBACK (update_groups), self);
  self->handoffs = G_LIST_MODEL (g_object_ref (chp_engine_get_handoffs (engine)));
  gtk_list_box_bind_model (self->handoff_list, self->handoffs, create_handoff_row, self, NULL);
  self->handoffs_changed_id = g_signal_connect_swapped (self->handoffs, "items-changed",
                                                        G_CALLBACK (update_groups), self);
  update_groups (self);

  self->pairing = g_object_ref (chp_engine_get_pairing (engine));
  self->locked_until_id = g_signal_connect_swapped (self->pairing, "notify::locked-until",
                                                    G_CALLBACK (update_lock), self);
  update_lock (self);

  /* A banner, not a toast: the person may want to read (or copy) the whole path. */
  moved_aside = chp_store_get_moved_aside_path (chp_engine_get_store (engine));
  if (moved_aside != NULL)
    {
      g_autofree char *text = NULL;

      text = g_strdup_printf (_("The database was damaged and was moved to %s; a new one was "
                                "started. Browsers paired before must be paired again."),
                              moved_aside);
      gtk_label_set_text (self->notice_label, text);
      gtk_revealer_set_reveal_child (self->notice_revealer, TRUE);
    }
}

/* Returns: (transfer none) (nullable): the running engine the window shows */
ChpEngine *
chp_window_get_engine (ChpWindow *self)
{
  g_return_val_if_fail (CHP_IS_WINDOW (self), NULL);

  return self->engine;
}

/**
 * chp_window_set_engine:
 * @engine: (nullable): a started engine, or %NULL while one is starting
 */
void
chp_window_set_engine (ChpWindow *self,
                       ChpEngine *engine)
{
  g_return_if_fail (CHP_IS_WINDOW (self));
  g_return_if_fail (engine == NULL || CHP_IS_ENGINE (engine));

  self->showing_error = FALSE;

  if (self->engine != engine)
    {
      unbind_engine (self);
      if (engine != NULL)
        bind_engine (self, engine);
    }

  update_page (self);
}

/* The engine did not start: say why, in the core's words, which tell the person what to do. */
void
chp_window_show_error (ChpWindow  *self,
                       const char *message)
{
  g_return_if_fail (CHP_IS_WINDOW (self));

  unbind_engine (self);
  self->showing_error = TRUE;
  gtk_label_set_text (self->error_label, message != NULL ? message : "");
  update_page (self);
}

static void
retry_action (GtkWidget  *widget,
              const char *action_name,
              GVariant   *parameter)
{
  GtkApplication *application = gtk_window_get_application (GTK_WINDOW (widget));

  if (CHP_IS_APPLICATION (application))
    chp_application_start_engine (CHP_APPLICATION (application));
}

static void
dismiss_notice_action (GtkWidget  *widget,
                       const char *action_name,
                       GVariant   *parameter)
{
  gtk_revealer_set_reveal_child (CHP_WINDOW (widget)->notice_revealer, FALSE);
}

static void
chp_window_dispose (GObject *object)
{
  ChpWindow *self = CHP_WINDOW (object);

  unbind_engine (self);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_WINDOW);

  G_OBJECT_CLASS (chp_window_parent_class)->dispose (object);
}

static void
chp_window_class_init (ChpWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_window_dispose;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-window.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, lock_revealer);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, lock_label);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, notice_revealer);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, notice_label);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, error_label);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, device_list);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, needs_group);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, handoff_list);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, grants_group);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, grant_list);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, dismiss_button);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, retry_button);

  /* Widget actions, not win.*: nothing here should be reachable over D-Bus. */
  gtk_widget_class_install_action (widget_class, "main.retry", NULL, retry_action);
  gtk_widget_class_install_action (widget_class, "main.dismiss-notice", NULL,
                                   dismiss_notice_action);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK,
                                       "window.close", NULL);
}

static void
chp_window_init (ChpWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));

  chp_a11y_set_name (self->dismiss_button, _("Dismiss"));
  chp_a11y_set_name (self->retry_button, _("Try Again"));
  update_page (self);
}

ChpWindow *
chp_window_new (GtkApplication *application)
{
  g_return_val_if_fail (GTK_IS_APPLICATION (application), NULL);

  return g_object_new (CHP_TYPE_WINDOW, "application", application, NULL);
}
