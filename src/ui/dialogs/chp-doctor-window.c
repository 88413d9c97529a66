/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-doctor-window.c: Check Setup. The same checks as `chaperone doctor` (chp-doctor.c), run in a
 * worker thread because they read files and dial sockets, shown as one row each: what was found
 * and, when something needs doing, exactly what. Fix does what needs no person (the native host
 * in each browser, private files) and checks again; it is a widget action, not an app action, so
 * nothing on the session bus can trigger it. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-doctor-window"

#include "chp-doctor-window.h"

#include "chp-doctor.h"

#include <glib/gi18n.h>

struct _ChpDoctorWindow
{
  AdwWindow parent_instance;

  AdwToastOverlay *toasts;
  GtkStack *stack;
  GtkLabel *summary_label;
  GtkListBox *list;

  char *data_dir;
  char *home;         /* NULL: the person's; tests point these elsewhere */
  char *config;
  char *runtime_dir;
  char *policy_path;
  char *native_host;
  GCancellable *cancellable;
  gboolean checking;
};

G_DEFINE_FINAL_TYPE (ChpDoctorWindow, chp_doctor_window, ADW_TYPE_WINDOW)

/* What the worker needs, copied: the window may go away while it runs. */
typedef struct
{
  char *data_dir;
  char *home;
  char *config;
  char *runtime_dir;
  char *policy_path;
  char *native_host;
  gboolean fix;
} Job;

typedef struct
{
  GPtrArray *findings;   /* ChpDoctorFinding */
  GPtrArray *done;       /* char *, what Fix did */
} Outcome;

static void
job_free (Job *job)
{
  g_free (job->data_dir);
  g_free (job->home);
  g_free (job->config);
  g_free (job->runtime_dir);
  g_free (job->policy_path);
  g_free (job->native_host);
  g_free (job);
}

static void
outcome_free (Outcome *outcome)
{
  g_clear_pointer (&outcome->findings, g_ptr_array_unref);
  g_clear_pointer (&outcome->done, g_ptr_array_unref);
  g_free (outcome);
}

static void
run_in_thread (GTask        *task,
               gpointer      source,
               gpointer      task_data,
               GCancellable *cancellable)
{
  Job *job = task_data;
  Outcome *outcome = g_new0 (Outcome, 1);
  ChpDoctorSetup setup;

  chp_doctor_setup_init (&setup);
  setup.data_dir = job->data_dir;
  setup.runtime_dir = job->runtime_dir;
  setup.policy_path = job->policy_path;
  setup.native_host = job->native_host;
  if (job->home != NULL)
    setup.browsers.home = job->home;
  if (job->config != NULL)
    setup.browsers.config = job->config;
  outcome->done = g_ptr_array_new_with_free_func (g_free);
  if (job->fix)
    chp_doctor_fix (&setup, outcome->done);
  outcome->findings = chp_doctor_run (&setup);
  g_task_return_pointer (task, outcome, (GDestroyNotify) outcome_free);
}

static const char *
icon_of (ChpDoctorLevel level)
{
  switch (level)
    {
    case CHP_DOCTOR_OK: return "emblem-ok-symbolic";
    case CHP_DOCTOR_NOTE: return "dialog-information-symbolic";
    case CHP_DOCTOR_WARNING: return "dialog-warning-symbolic";
    case CHP_DOCTOR_PROBLEM: default: return "dialog-error-symbolic";
    }
}

static const char *
word_of (ChpDoctorLevel level)
{
  switch (level)
    {
    case CHP_DOCTOR_OK: return _("In order");
    case CHP_DOCTOR_NOTE: return _("Note");
    case CHP_DOCTOR_WARNING: return _("Needs attention");
    case CHP_DOCTOR_PROBLEM: default: return _("Problem");
    }
}

static GtkWidget *
row_for (const ChpDoctorFinding *f)
{
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *icon = gtk_image_new_from_icon_name (icon_of (f->level));

  /* Findings carry paths and messages, never markup. */
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), f->title);
  if (f->fix != NULL)
    adw_action_row_set_subtitle (ADW_ACTION_ROW (row), f->fix);
  adw_action_row_set_title_lines (ADW_ACTION_ROW (row), 0);
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 0);
  gtk_widget_set_name (row, f->id);
  /* The icon's meaning in words, for a screen reader (and not by colour alone). */
  gtk_accessible_update_property (GTK_ACCESSIBLE (icon), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  word_of (f->level), -1);
  gtk_widget_add_css_class (icon, f->level == CHP_DOCTOR_OK ? "success"
                                  : f->level == CHP_DOCTOR_NOTE ? "dim-label"
                                  : f->level == CHP_DOCTOR_WARNING ? "warning" : "error");
  adw_action_row_add_prefix (ADW_ACTION_ROW (row), icon);
  return row;
}

static void
show_outcome (ChpDoctorWindow *self,
              Outcome         *outcome)
{
  guint attention = 0;
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->list))) != NULL)
    gtk_list_box_remove (self->list, child);
  for (guint i = 0; i < outcome->findings->len; i++)
    {
      const ChpDoctorFinding *f = g_ptr_array_index (outcome->findings, i);

      if (f->level >= CHP_DOCTOR_WARNING)
        attention++;
      gtk_list_box_append (self->list, row_for (f));
    }
  if (attention == 0)
    gtk_label_set_text (self->summary_label, _("Everything Chaperone needs is in order"));
  else
    {
      g_autofree char *text = g_strdup_printf (g_dngettext (GETTEXT_PACKAGE,
                                                            "%u thing needs attention",
                                                            "%u things need attention",
                                                            attention), attention);
      gtk_label_set_text (self->summary_label, text);
    }
  for (guint i = 0; i < outcome->done->len; i++)
    adw_toast_overlay_add_toast (self->toasts, adw_toast_new (g_ptr_array_index (outcome->done, i)));
  gtk_stack_set_visible_child_name (self->stack, "results");
}

static void
checked_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(ChpDoctorWindow) self = user_data;
  Outcome *outcome = g_task_propagate_pointer (G_TASK (result), NULL);

  self->checking = FALSE;
  if (outcome == NULL)
    return;   /* the window closed: nothing of it to update */
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "doctor.check", TRUE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "doctor.fix", TRUE);
  show_outcome (self, outcome);
  outcome_free (outcome);
}

static void
start (ChpDoctorWindow *self,
       gboolean         fix)
{
  g_autoptr(GTask) task = NULL;
  Job *job;

  if (self->checking)
    return;
  self->checking = TRUE;
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "doctor.check", FALSE);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "doctor.fix", FALSE);
  gtk_stack_set_visible_child_name (self->stack, "checking");

  job = g_new0 (Job, 1);
  job->data_dir = g_strdup (self->data_dir);
  job->home = g_strdup (self->home);
  job->config = g_strdup (self->config);
  job->runtime_dir = g_strdup (self->runtime_dir);
  job->policy_path = g_strdup (self->policy_path);
  job->native_host = g_strdup (self->native_host);
  job->fix = fix;
  task = g_task_new (NULL, self->cancellable, checked_cb, g_object_ref (self));
  g_task_set_return_on_cancel (task, TRUE);
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  g_task_run_in_thread (task, run_in_thread);
}

/* Runs the checks now (the window runs them when it is first shown). */
void
chp_doctor_window_check (ChpDoctorWindow *self)
{
  g_return_if_fail (CHP_IS_DOCTOR_WINDOW (self));

  start (self, FALSE);
}

gboolean
chp_doctor_window_is_checking (ChpDoctorWindow *self)
{
  g_return_val_if_fail (CHP_IS_DOCTOR_WINDOW (self), FALSE);

  return self->checking;
}

/* For tests: a private home, runtime folder, policy file and host program instead of the
 * person's. */
void
chp_doctor_window_set_home (ChpDoctorWindow *self,
                            const char      *home,
                            const char      *config,
                            const char      *runtime_dir,
                            const char      *policy_path,
                            const char      *native_host)
{
  g_return_if_fail (CHP_IS_DOCTOR_WINDOW (self));

  g_free (self->home);
  self->home = g_strdup (home);
  g_free (self->config);
  self->config = g_strdup (config);
  g_free (self->runtime_dir);
  self->runtime_dir = g_strdup (runtime_dir);
  g_free (self->policy_path);
  self->policy_path = g_strdup (policy_path);
  g_free (self->native_host);
  self->native_host = g_strdup (native_host);
}

static void
check_action (GtkWidget  *widget,
              const char *action_name,
              GVariant   *parameter)
{
  start (CHP_DOCTOR_WINDOW (widget), FALSE);
}

static void
fix_action (GtkWidget  *widget,
            const char *action_name,
            GVariant   *parameter)
{
  start (CHP_DOCTOR_WINDOW (widget), TRUE);
}

static void
chp_doctor_window_map (GtkWidget *widget)
{
  ChpDoctorWindow *self = CHP_DOCTOR_WINDOW (widget);

  GTK_WIDGET_CLASS (chp_doctor_window_parent_class)->map (widget);
  if (gtk_list_box_get_row_at_index (self->list, 0) == NULL)
    start (self, FALSE);
}

static void
chp_doctor_window_dispose (GObject *object)
{
  ChpDoctorWindow *self = CHP_DOCTOR_WINDOW (object);

  g_cancellable_cancel (self->cancellable);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_DOCTOR_WINDOW);

  G_OBJECT_CLASS (chp_doctor_window_parent_class)->dispose (object);
}

static void
chp_doctor_window_finalize (GObject *object)
{
  ChpDoctorWindow *self = CHP_DOCTOR_WINDOW (object);

  g_clear_object (&self->cancellable);
  g_free (self->data_dir);
  g_free (self->home);
  g_free (self->config);
  g_free (self->runtime_dir);
  g_free (self->policy_path);
  g_free (self->native_host);

  G_OBJECT_CLASS (chp_doctor_window_parent_class)->finalize (object);
}

static void
chp_doctor_window_class_init (ChpDoctorWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = chp_doctor_window_dispose;
  object_class->finalize = chp_doctor_window_finalize;
  widget_class->map = chp_doctor_window_map;

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-doctor-window.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpDoctorWindow, toasts);
  gtk_widget_class_bind_template_child (widget_class, ChpDoctorWindow, stack);
  gtk_widget_class_bind_template_child (widget_class, ChpDoctorWindow, summary_label);
  gtk_widget_class_bind_template_child (widget_class, ChpDoctorWindow, list);

  gtk_widget_class_install_action (widget_class, "doctor.check", NULL, check_action);
  gtk_widget_class_install_action (widget_class, "doctor.fix", NULL, fix_action);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "window.close", NULL);
}

static void
chp_doctor_window_init (ChpDoctorWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->cancellable = g_cancellable_new ();
}

/**
 * chp_doctor_window_new:
 * @parent: (nullable): the main window
 * @data_dir: the folder that holds Chaperone's key and databases
 */
ChpDoctorWindow *
chp_doctor_window_new (GtkWindow  *parent,
                       const char *data_dir)
{
  ChpDoctorWindow *self;

  g_return_val_if_fail (parent == NULL || GTK_IS_WINDOW (parent), NULL);
  g_return_val_if_fail (data_dir != NULL, NULL);

  self = g_object_new (CHP_TYPE_DOCTOR_WINDOW, "transient-for", parent, NULL);
  self->data_dir = g_strdup (data_dir);
  return self;
}
