/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-window.c: the main window. It hands the engine to its pages, which bind to the engine's
 * models; the window itself changes nothing but the stopped flag, through Stop all and Resume,
 * which are widget actions (app.* and win.* are on the session bus, and an agent must never
 * be able to resume). */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-window"

#include "chp-window.h"

#include "chp-a11y.h"
#include "chp-activity-page.h"
#include "chp-agents-page.h"
#include "chp-browsers-page.h"
#include "chp-grants-page.h"
#include "chp-needs-page.h"
#include "chp-sites-page.h"

#include <glib/gi18n.h>

struct _ChpWindow
{
  AdwApplicationWindow parent_instance;

  GtkWidget *stop_button;
  AdwViewSwitcherTitle *switcher_title;
  AdwViewSwitcherBar *switcher_bar;
  GtkRevealer *stopped_revealer;
  GtkRevealer *lock_revealer;
  GtkLabel *lock_label;
  GtkRevealer *notice_revealer;
  GtkLabel *notice_label;
  GtkStack *stack;
  GtkLabel *error_label;
  GtkWidget *dismiss_button;
  GtkWidget *retry_button;
  AdwViewStack *view_stack;
  AdwViewStackPage *needs_stack_page;  /* owned by view_stack */
  ChpNeedsPage *needs_page;
  ChpBrowsersPage *browsers_page;
  ChpGrantsPage *grants_page;
  ChpAgentsPage *agents_page;
  ChpActivityPage *activity_page;
  ChpSitesPage *sites_page;

  ChpEngine *engine;
  gulong stopped_id;
  gulong devices_changed_id;
  gulong grants_changed_id;
  gulong needs_changed_id;
  GHashTable *known_grants;    /* "device/grant" of every grant seen, to tell new ones */
  GHashTable *watched_devices; /* ChpDevice whose stopped flag the window follows */
  guint last_needs_count;
  ChpPairingManager *pairing;
  gulong locked_until_id;
  guint lock_tick_id;
  gboolean showing_error;
  GtkWidget *starting_spinner;
  guint starting_spinner_id;
};

G_DEFINE_FINAL_TYPE (ChpWindow, chp_window, ADW_TYPE_APPLICATION_WINDOW)

/* A start that is over at once needs no spinner: one flashing for a moment reads as a glitch.
 * It also keeps librsvg out of the app: Adwaita draws the spinner from an SVG only, and the SVG
 * renderer stays in memory (6 MB) for the rest of the session once loaded. */
#define STARTING_SPINNER_DELAY_MS 600

static gboolean
starting_spinner_cb (gpointer user_data)
{
  ChpWindow *self = CHP_WINDOW (user_data);

  self->starting_spinner_id = 0;
  gtk_widget_set_visible (self->starting_spinner, TRUE);

  return G_SOURCE_REMOVE;
}

static void
update_page (ChpWindow *self)
{
  const char *page;

  if (self->engine == NULL)
    page = self->showing_error ? "error" : "starting";
  else
    page = "main";

  if (g_str_equal (page, "starting"))
    {
      if (self->starting_spinner_id == 0 && !gtk_widget_get_visible (self->starting_spinner))
        {
          self->starting_spinner_id = g_timeout_add (STARTING_SPINNER_DELAY_MS,
                                                     starting_spinner_cb, self);
          g_source_set_name_by_id (self->starting_spinner_id, "[chaperone] starting spinner");
        }
    }
  else
    {
      g_clear_handle_id (&self->starting_spinner_id, g_source_remove);
      gtk_widget_set_visible (self->starting_spinner, FALSE);
    }

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

/* One button, two faces: its label, style and action follow the engine's stopped flag. */
static void
update_stopped (ChpWindow *self)
{
  gboolean stopped = self->engine != NULL && chp_engine_get_stopped (self->engine);

  gtk_button_set_label (GTK_BUTTON (self->stop_button),
                        stopped ? _("_Resume All") : _("_Stop All"));
  gtk_actionable_set_action_name (GTK_ACTIONABLE (self->stop_button),
                                  stopped ? "main.resume-all" : "main.stop-all");
  chp_a11y_set_name (self->stop_button, stopped ? _("Resume All") : _("Stop All"));
  gtk_widget_set_tooltip_text (self->stop_button,
                               stopped ? _("Let agents act again in every browser")
                                       : _("Stop every agent in every browser (Ctrl+Shift+E)"));
  if (stopped)
    {
      gtk_widget_remove_css_class (self->stop_button, "destructive-action");
      gtk_widget_add_css_class (self->stop_button, "suggested-action");
    }
  else
    {
      gtk_widget_remove_css_class (self->stop_button, "suggested-action");
      gtk_widget_add_css_class (self->stop_button, "destructive-action");
    }
  gtk_revealer_set_reveal_child (self->stopped_revealer, stopped);

  gtk_widget_action_set_enabled (GTK_WIDGET (self), "main.stop-all", self->engine != NULL);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "main.resume-all",
                                 self->engine != NULL && stopped);
}

static void
update_badge (ChpWindow *self)
{
  guint count = chp_needs_page_get_count (self->needs_page);

  adw_view_stack_page_set_badge_number (self->needs_stack_page, count);
  adw_view_stack_page_set_needs_attention (self->needs_stack_page, count > 0);
}

/* The window turns to the page of what just happened, when it is something the person just did
 * elsewhere or something that waits for them: a pairing or a handoff (Needs you), a browser
 * paired or stopped in its popup (Browsers, where Resume is), a grant made in the popup
 * (Grants). A page that is not shown is not realized, and its buttons cannot be pressed by
 * assistive technology either: this keeps the one that matters at hand. */
static void
follow (ChpWindow  *self,
        const char *page_name)
{
  chp_window_show_page (self, page_name);
}

static void
device_stopped_cb (ChpDevice  *device,
                   GParamSpec *pspec,
                   ChpWindow  *self)
{
  if (chp_device_get_stopped (device))
    follow (self, "browsers");
}

static void
watch_devices (ChpWindow *self)
{
  GListModel *devices = G_LIST_MODEL (chp_engine_get_devices (self->engine));

  for (guint i = 0; i < g_list_model_get_n_items (devices); i++)
    {
      g_autoptr(ChpDevice) device = g_list_model_get_item (devices, i);

      if (g_hash_table_add (self->watched_devices, g_object_ref (device)))
        g_signal_connect_object (device, "notify::stopped", G_CALLBACK (device_stopped_cb), self,
                                 G_CONNECT_DEFAULT);
    }
}

static void
devices_items_changed_cb (GListModel *model,
                          guint       position,
                          guint       removed,
                          guint       added,
                          ChpWindow  *self)
{
  watch_devices (self);
  /* A browser joins the list only when the person has just pressed Pair. */
  if (added > 0)
    follow (self, "browsers");
}

static gboolean
note_grants (ChpWindow *self)
{
  GListModel *grants = G_LIST_MODEL (chp_engine_get_grants (self->engine));
  gboolean any_new = FALSE;

  for (guint i = 0; i < g_list_model_get_n_items (grants); i++)
    {
      g_autoptr(ChpGrant) grant = g_list_model_get_item (grants, i);

      any_new |= g_hash_table_add (self->known_grants,
                                   g_strconcat (chp_grant_get_device_id (grant), "/",
                                                chp_grant_get_id (grant), NULL));
    }

  return any_new;
}

/* A browser sends its whole list on every change and on every connection: only a grant not
 * seen before is news. */
static void
grants_items_changed_cb (GListModel *model,
                         guint       position,
                         guint       removed,
                         guint       added,
                         ChpWindow  *self)
{
  if (note_grants (self))
    follow (self, "grants");
}

static void
needs_count_cb (ChpWindow *self)
{
  guint count = chp_needs_page_get_count (self->needs_page);

  if (count > self->last_needs_count)
    follow (self, "needs-you");
  self->last_needs_count = count;
}

static void
set_pages_engine (ChpWindow *self,
                  ChpEngine *engine)
{
  /* Also runs from dispose, which may run twice: the second time the template is gone. */
  if (self->needs_page == NULL)
    return;

  chp_needs_page_set_engine (self->needs_page, engine);
  chp_browsers_page_set_engine (self->browsers_page, engine);
  chp_grants_page_set_engine (self->grants_page, engine);
  chp_agents_page_set_engine (self->agents_page, engine);
  chp_activity_page_set_engine (self->activity_page, engine);
  chp_sites_page_set_engine (self->sites_page, engine);
}

static void
unbind_engine (ChpWindow *self)
{
  set_pages_engine (self, NULL);

  if (self->pairing != NULL)
    g_clear_signal_handler (&self->locked_until_id, self->pairing);
  g_clear_object (&self->pairing);
  g_clear_handle_id (&self->lock_tick_id, g_source_remove);

  if (self->engine != NULL)
    {
      g_clear_signal_handler (&self->stopped_id, self->engine);
      g_clear_signal_handler (&self->devices_changed_id, chp_engine_get_devices (self->engine));
      g_clear_signal_handler (&self->grants_changed_id, chp_engine_get_grants (self->engine));
    }
  if (self->needs_page != NULL)
    g_clear_signal_handler (&self->needs_changed_id, self->needs_page);
  if (self->watched_devices != NULL)
    {
      GHashTableIter iter;
      gpointer device;

      g_hash_table_iter_init (&iter, self->watched_devices);
      while (g_hash_table_iter_next (&iter, &device, NULL))
        g_signal_handlers_disconnect_by_func (device, device_stopped_cb, self);
      g_hash_table_remove_all (self->watched_devices);
    }
  if (self->known_grants != NULL)
    g_hash_table_remove_all (self->known_grants);
  g_clear_object (&self->engine);

  if (self->lock_revealer != NULL)
    gtk_revealer_set_reveal_child (self->lock_revealer, FALSE);
  if (self->notice_revealer != NULL)
    gtk_revealer_set_reveal_child (self->notice_revealer, FALSE);
  if (self->stop_button != NULL)
    update_stopped (self);
}

static void
bind_engine (ChpWindow *self,
             ChpEngine *engine)
{
  const char *moved_aside;

  self->engine = g_object_ref (engine);
  self->stopped_id = g_signal_connect_swapped (engine, "notify::stopped",
                                               G_CALLBACK (update_stopped), self);
  update_stopped (self);

  set_pages_engine (self, engine);

  /* Start where the person is needed, or else on their browsers: with none paired yet (the first
   * run), that page is the setup guide. A pairing request turns the window to Needs you. */
  note_grants (self);
  watch_devices (self);
  if (chp_needs_page_get_count (self->needs_page) == 0)
    chp_window_show_page (self, "browsers");
  else
    chp_window_show_page (self, "needs-you");
  self->devices_changed_id = g_signal_connect (chp_engine_get_devices (engine), "items-changed",
                                               G_CALLBACK (devices_items_changed_cb), self);
  self->grants_changed_id = g_signal_connect (chp_engine_get_grants (engine), "items-changed",
                                              G_CALLBACK (grants_items_changed_cb), self);
  /* The Needs you list is a flattened model of the page: its count notifies after a change. */
  self->last_needs_count = chp_needs_page_get_count (self->needs_page);
  self->needs_changed_id = g_signal_connect_swapped (self->needs_page, "notify::count",
                                                     G_CALLBACK (needs_count_cb), self);

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

/**
 * chp_window_show_page:
 * @page_name: "needs-you", "browsers", "grants", "agents", "activity" or "sites"
 *
 * Brings a page to the front (a notification's "show me", the tray's Needs you).
 */
void
chp_window_show_page (ChpWindow  *self,
                      const char *page_name)
{
  g_return_if_fail (CHP_IS_WINDOW (self));
  g_return_if_fail (page_name != NULL);

  if (adw_view_stack_get_child_by_name (self->view_stack, page_name) == NULL)
    {
      g_debug ("no page named %s", page_name);
      return;
    }

  adw_view_stack_set_visible_child_name (self->view_stack, page_name);
}

const char *
chp_window_get_visible_page (ChpWindow *self)
{
  g_return_val_if_fail (CHP_IS_WINDOW (self), NULL);

  return adw_view_stack_get_visible_child_name (self->view_stack);
}

static void
stop_all_action (GtkWidget  *widget,
                 const char *action_name,
                 GVariant   *parameter)
{
  ChpWindow *self = CHP_WINDOW (widget);

  if (self->engine != NULL)
    chp_engine_stop_all (self->engine, "app");
}

static void
resume_all_action (GtkWidget  *widget,
                   const char *action_name,
                   GVariant   *parameter)
{
  ChpWindow *self = CHP_WINDOW (widget);

  if (self->engine != NULL)
    chp_engine_resume_all (self->engine);
}

static void
retry_action (GtkWidget  *widget,
              const char *action_name,
              GVariant   *parameter)
{
  /* The application owns the engine; the window asks it through its action and does not know
   * its type (the application builds windows, so a call back into it would be a cycle). */
  gtk_widget_activate_action (widget, "app.start-engine", NULL);
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
  g_clear_handle_id (&self->starting_spinner_id, g_source_remove);
  g_clear_pointer (&self->known_grants, g_hash_table_unref);
  g_clear_pointer (&self->watched_devices, g_hash_table_unref);
  /* libadwaita 1.2's switchers must let go of the stack before it goes, or they unparent
   * buttons that are already gone. */
  if (self->switcher_bar != NULL)
    adw_view_switcher_bar_set_stack (self->switcher_bar, NULL);
  if (self->switcher_title != NULL)
    adw_view_switcher_title_set_stack (self->switcher_title, NULL);
  self->needs_stack_page = NULL;
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_WINDOW);

  G_OBJECT_CLASS (chp_window_parent_class)->dispose (object);
}

static void
chp_window_class_init (ChpWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_window_dispose;

  /* The pages are in the template: their types must exist before it is parsed. */
  g_type_ensure (CHP_TYPE_NEEDS_PAGE);
  g_type_ensure (CHP_TYPE_BROWSERS_PAGE);
  g_type_ensure (CHP_TYPE_GRANTS_PAGE);
  g_type_ensure (CHP_TYPE_AGENTS_PAGE);
  g_type_ensure (CHP_TYPE_ACTIVITY_PAGE);
  g_type_ensure (CHP_TYPE_SITES_PAGE);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-window.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, stop_button);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, switcher_title);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, switcher_bar);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, stopped_revealer);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, lock_revealer);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, lock_label);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, notice_revealer);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, notice_label);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, starting_spinner);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, error_label);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, dismiss_button);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, retry_button);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, view_stack);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, needs_page);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, browsers_page);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, grants_page);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, agents_page);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, activity_page);
  gtk_widget_class_bind_template_child (widget_class, ChpWindow, sites_page);

  /* Widget actions, not win.*: nothing here should be reachable over D-Bus. Stop all would be
   * harmless there, but Resume must not be, and the two share one button. */
  gtk_widget_class_install_action (widget_class, "main.stop-all", NULL, stop_all_action);
  gtk_widget_class_install_action (widget_class, "main.resume-all", NULL, resume_all_action);
  gtk_widget_class_install_action (widget_class, "main.retry", NULL, retry_action);
  gtk_widget_class_install_action (widget_class, "main.dismiss-notice", NULL,
                                   dismiss_notice_action);

  /* Stop only, never a toggle: pressed twice in a hurry, an emergency key must not resume. */
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_e,
                                       GDK_CONTROL_MASK | GDK_SHIFT_MASK,
                                       "main.stop-all", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK,
                                       "window.close", NULL);
}

static void
chp_window_init (ChpWindow *self)
{
  self->known_grants = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->watched_devices = g_hash_table_new_full (NULL, NULL, g_object_unref, NULL);
  gtk_widget_init_template (GTK_WIDGET (self));
  /* Looked up, not bound: disposing the template would drop a reference the stack owns. */
  self->needs_stack_page = adw_view_stack_get_page (self->view_stack,
                                                    GTK_WIDGET (self->needs_page));

  /* The bar at the bottom shows when the header has no room for the switcher. */
  g_object_bind_property (self->switcher_title, "title-visible",
                          self->switcher_bar, "reveal", G_BINDING_SYNC_CREATE);
  g_signal_connect_object (self->needs_page, "notify::count", G_CALLBACK (update_badge), self,
                           G_CONNECT_SWAPPED);

  chp_a11y_set_name (self->dismiss_button, _("Dismiss"));
  chp_a11y_set_name (self->retry_button, _("Try Again"));
  update_stopped (self);
  update_badge (self);
  update_page (self);
}

/* The keyboard shortcuts window exists only while it is shown. GtkApplication builds it with
 * every application window and keeps it hidden; GTK 4.8's AT-SPI root answers GetChildAtIndex
 * past its last shown window with the last toplevel, and a never-shown one has no object path:
 * a screen reader's walk racing a dialog's close then crashed the app (g_variant_new with a NULL
 * path). Built on demand and destroyed on close, no hidden toplevel is left to answer with. */
static gboolean
shortcuts_close_request_cb (GtkWindow            *shortcuts,
                            GtkApplicationWindow *window)
{
  gtk_application_window_set_help_overlay (window, NULL);
  return GDK_EVENT_STOP;
}

static void
show_shortcuts (GSimpleAction *action,
                GVariant      *parameter,
                gpointer       user_data)
{
  GtkApplicationWindow *window = user_data;
  GtkShortcutsWindow *shortcuts = gtk_application_window_get_help_overlay (window);

  if (shortcuts == NULL)
    {
      g_autoptr(GtkBuilder) builder =
        gtk_builder_new_from_resource ("/io/github/chaperone/Chaperone/gtk/help-overlay.ui");

      shortcuts = GTK_SHORTCUTS_WINDOW (gtk_builder_get_object (builder, "help_overlay"));
      gtk_application_window_set_help_overlay (window, shortcuts);
      g_signal_connect_object (shortcuts, "close-request", G_CALLBACK (shortcuts_close_request_cb),
                               window, G_CONNECT_DEFAULT);
    }
  gtk_window_present (GTK_WINDOW (shortcuts));
}

ChpWindow *
chp_window_new (GtkApplication *application)
{
  g_autoptr(GSimpleAction) show = g_simple_action_new ("show-help-overlay", NULL);
  ChpWindow *self;

  g_return_val_if_fail (GTK_IS_APPLICATION (application), NULL);

  self = g_object_new (CHP_TYPE_WINDOW, "application", application, NULL);
  gtk_application_window_set_help_overlay (GTK_APPLICATION_WINDOW (self), NULL);
  g_signal_connect_object (show, "activate", G_CALLBACK (show_shortcuts), self, G_CONNECT_DEFAULT);
  g_action_map_add_action (G_ACTION_MAP (self), G_ACTION (show));

  return self;
}
