/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-setup-guide.c: the Browsers page's first-run walkthrough (issue 18).
 *
 * What it says about each browser comes from the same core code as `chaperone doctor`
 * (chp-browsers.c, chp-doctor.c), read in a worker thread because it reads the person's
 * profiles: the UI thread never waits on disk. It reads again whenever it is shown and whenever
 * the window comes back to the front, since the person adds the extension in another window.
 * Register is a widget action, not an app action: nothing on the session bus may write into the
 * person's browsers. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-setup-guide"

#include "chp-setup-guide.h"

#include "chp-browsers.h"
#include "chp-doctor.h"
#include "chp-memory.h"
#include "chp-toast.h"

#include <glib/gi18n.h>

/* The command README.md documents for Claude Code; not translated, it is typed as it is. */
#define AGENT_COMMAND "claude mcp add chaperone -- chaperone-mcp"

struct _ChpSetupGuide
{
  AdwBin parent_instance;

  AdwPreferencesGroup *extension_group;
  GtkListBox *extension_list;
  GtkListBox *host_list;
  GtkWidget *register_button;
  AdwActionRow *command_row;

  char *home;            /* NULL: the person's own; tests point these into a folder of theirs */
  char *config_dir;
  char *extension_dir;
  char *native_host;

  GCancellable *cancellable;
  GtkWidget *watched_root;
  gulong active_id;
  gboolean busy;
  gboolean again;        /* asked to read again while reading: once it is done */
  gboolean can_register;
};

enum {
  PROP_0,
  PROP_HOME,
  PROP_CONFIG_DIR,
  PROP_EXTENSION_DIR,
  PROP_NATIVE_HOST,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpSetupGuide, chp_setup_guide, ADW_TYPE_BIN)

/* What the worker needs, copied: the guide may go away while it runs. */
typedef struct
{
  char *home;
  char *config_dir;
  char *extension_dir;
  char *native_host;
  gboolean register_hosts;
} Job;

typedef struct
{
  const ChpBrowserKind *kind;
  ChpExtensionState extension;
  ChpNativeHostState host;
  char *advice;          /* how to add the extension, translated */
  char *path;            /* what the person picks: the folder, or the Firefox add-on file */
  gboolean path_exists;
} Found;

typedef struct
{
  GPtrArray *found;      /* Found, in chp_browsers_get_kinds() order */
  GPtrArray *done;       /* char *, what Register did */
} Outcome;

static void
job_free (Job *job)
{
  g_free (job->home);
  g_free (job->config_dir);
  g_free (job->extension_dir);
  g_free (job->native_host);
  g_free (job);
}

static void
found_free (Found *found)
{
  g_free (found->advice);
  g_free (found->path);
  g_free (found);
}

static void
outcome_free (Outcome *outcome)
{
  g_clear_pointer (&outcome->found, g_ptr_array_unref);
  g_clear_pointer (&outcome->done, g_ptr_array_unref);
  g_free (outcome);
}

static void
read_in_thread (GTask        *task,
                gpointer      source,
                gpointer      task_data,
                GCancellable *cancellable)
{
  Job *job = task_data;
  Outcome *outcome = g_new0 (Outcome, 1);
  g_autofree char *native_host = NULL;
  g_autofree char *extension_dir = NULL;
  ChpDoctorSetup setup;
  guint n;
  const ChpBrowserKind *kinds = chp_browsers_get_kinds (&n);

  native_host = job->native_host != NULL ? g_strdup (job->native_host)
                : chp_doctor_default_native_host ();
  extension_dir = job->extension_dir != NULL ? g_strdup (job->extension_dir)
                  : chp_doctor_default_extension_dir ();
  chp_doctor_setup_init (&setup);
  setup.native_host = native_host;
  setup.extension_dir = extension_dir;
  if (job->home != NULL)
    setup.browsers.home = job->home;
  if (job->config_dir != NULL)
    setup.browsers.config = job->config_dir;

  outcome->done = g_ptr_array_new_with_free_func (g_free);
  if (job->register_hosts)
    chp_doctor_register_native_hosts (&setup, outcome->done);   /* each line says how it went */

  outcome->found = g_ptr_array_new_with_free_func ((GDestroyNotify) found_free);
  for (guint i = 0; i < n; i++)
    {
      Found *f;

      if (!chp_browser_is_present (&kinds[i], &setup.browsers))
        continue;
      f = g_new0 (Found, 1);
      f->kind = &kinds[i];
      f->extension = chp_browser_extension_state (f->kind, &setup.browsers);
      f->host = chp_browser_native_host_state (f->kind, &setup.browsers, native_host);
      f->advice = chp_doctor_extension_advice (f->kind, extension_dir);
      f->path = chp_doctor_extension_path (f->kind, extension_dir);
      f->path_exists = g_file_test (f->path, G_FILE_TEST_EXISTS);
      g_ptr_array_add (outcome->found, f);
    }
  g_task_return_pointer (task, outcome, (GDestroyNotify) outcome_free);
}

/* ---- the rows ------------------------------------------------------------------------------ */

typedef enum
{
  MARK_DONE,
  MARK_TO_DO,
  MARK_NOT_NEEDED,
  MARK_ATTENTION,
} Mark;

/* An icon that is not the only sign: the row's words say the same, and a screen reader hears
 * the icon's meaning too. */
static GtkWidget *
mark_new (Mark mark)
{
  static const struct { const char *icon; const char *style; const char *words; } marks[] = {
    [MARK_DONE] = { "emblem-ok-symbolic", "success", N_("Done") },
    [MARK_TO_DO] = { "checkbox-symbolic", "dim-label", N_("To do") },
    [MARK_NOT_NEEDED] = { "dialog-information-symbolic", "dim-label", N_("Not needed") },
    [MARK_ATTENTION] = { "dialog-warning-symbolic", "warning", N_("Needs attention") },
  };
  GtkWidget *icon = gtk_image_new_from_icon_name (marks[mark].icon);

  gtk_widget_add_css_class (icon, marks[mark].style);
  gtk_accessible_update_property (GTK_ACCESSIBLE (icon), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _(marks[mark].words), -1);
  return icon;
}

static GtkWidget *
row_new (const char *name,
         const char *title,
         const char *subtitle,
         Mark        mark)
{
  GtkWidget *row = adw_action_row_new ();

  /* Subtitles carry paths, which are not markup. */
  adw_preferences_row_set_use_markup (ADW_PREFERENCES_ROW (row), FALSE);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), subtitle);
  adw_action_row_set_subtitle_lines (ADW_ACTION_ROW (row), 0);
  gtk_widget_set_name (row, name);
  adw_action_row_add_prefix (ADW_ACTION_ROW (row), mark_new (mark));
  return row;
}

static GtkWidget *
extension_row_new (const Found *f)
{
  g_autofree char *name = g_strconcat ("extension:", f->kind->id, NULL);
  g_autofree char *subtitle = NULL;
  const char *manage = f->kind->family == CHP_BROWSER_FAMILY_FIREFOX ? "about:addons"
                                                                     : "chrome://extensions";
  const char *title = _(f->kind->name);
  GtkWidget *row;
  GtkWidget *copy;
  Mark mark;

  switch (f->extension)
    {
    case CHP_EXTENSION_PRESENT:
      subtitle = g_strdup (_("The extension is installed."));
      mark = MARK_DONE;
      break;
    case CHP_EXTENSION_DISABLED:
      subtitle = g_strdup_printf (_("The extension is installed but turned off: turn it on in %s."),
                                  manage);
      mark = MARK_ATTENTION;
      break;
    case CHP_EXTENSION_ABSENT:
    case CHP_EXTENSION_UNKNOWN:
    default:
      /* Run from a build tree, nothing is installed where the advice points yet. */
      if (f->path_exists)
        subtitle = g_strdup (f->advice);
      else
        subtitle = g_strdup_printf ("%s %s", f->advice,
                                    f->kind->family == CHP_BROWSER_FAMILY_FIREFOX
                                    ? _("That file is not there yet: install Chaperone first "
                                        "(“meson install -C build”).")
                                    : _("That folder is not there yet: install Chaperone first "
                                        "(“meson install -C build”)."));
      mark = MARK_TO_DO;
      break;
    }
  row = row_new (name, title, subtitle, mark);
  if (f->extension == CHP_EXTENSION_PRESENT || f->extension == CHP_EXTENSION_DISABLED)
    return row;

  /* The path is long and typed into a file chooser: copying it saves the person the typing. */
  copy = gtk_button_new_from_icon_name ("edit-copy-symbolic");
  gtk_widget_set_valign (copy, GTK_ALIGN_CENTER);
  gtk_widget_add_css_class (copy, "flat");
  gtk_widget_set_tooltip_text (copy, _("Copy Path"));
  {
    g_autofree char *label = g_strdup_printf (_("Copy the path to pick in %s"), title);
    gtk_accessible_update_property (GTK_ACCESSIBLE (copy), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
  }
  gtk_actionable_set_action_name (GTK_ACTIONABLE (copy), "guide.copy-path");
  gtk_actionable_set_action_target_value (GTK_ACTIONABLE (copy), g_variant_new_string (f->path));
  adw_action_row_add_suffix (ADW_ACTION_ROW (row), copy);
  return row;
}

static GtkWidget *
host_row_new (const Found *f,
              gboolean    *takes_host,
              gboolean    *needs_registering)
{
  g_autofree char *name = g_strconcat ("native-host:", f->kind->id, NULL);
  const char *subtitle;
  Mark mark;

  *takes_host = TRUE;
  *needs_registering = FALSE;
  switch (f->host)
    {
    case CHP_NATIVE_HOST_OK:
      subtitle = _("Registered");
      mark = MARK_DONE;
      break;
    case CHP_NATIVE_HOST_SANDBOXED:
      subtitle = _("Nothing to register: it runs in a sandbox and reaches Chaperone over the "
                   "loopback bridge");
      mark = MARK_NOT_NEEDED;
      *takes_host = FALSE;
      break;
    case CHP_NATIVE_HOST_NOT_FOR_FIREFOX:
      subtitle = _("Nothing to register: Firefox reaches Chaperone over the loopback bridge");
      mark = MARK_NOT_NEEDED;
      *takes_host = FALSE;
      break;
    case CHP_NATIVE_HOST_MISSING:
      subtitle = _("Not registered yet: press Register");
      mark = MARK_TO_DO;
      *needs_registering = TRUE;
      break;
    case CHP_NATIVE_HOST_WRONG_PATH:
    case CHP_NATIVE_HOST_UNREADABLE:
    case CHP_NATIVE_HOST_NO_PROGRAM:
    case CHP_NATIVE_HOST_WRONG_EXTENSION:
    default:
      subtitle = _("Registered for another copy of Chaperone, or out of date: press Register");
      mark = MARK_ATTENTION;
      *needs_registering = TRUE;
      break;
    }
  return row_new (name, _(f->kind->name), subtitle, mark);
}

static void
clear_list (GtkListBox *list)
{
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (list))) != NULL)
    gtk_list_box_remove (list, child);
}

static void
update_actions (ChpSetupGuide *self)
{
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "guide.refresh", !self->busy);
  gtk_widget_action_set_enabled (GTK_WIDGET (self), "guide.register",
                                 !self->busy && self->can_register);
}


static void
show_outcome (ChpSetupGuide *self,
              Outcome       *outcome)
{
  gboolean any_takes_host = FALSE;
  gboolean can_register = FALSE;

  clear_list (self->extension_list);
  clear_list (self->host_list);
  for (guint i = 0; i < outcome->found->len; i++)
    {
      const Found *f = g_ptr_array_index (outcome->found, i);
      gboolean takes_host, needs_registering;

      gtk_list_box_append (self->extension_list, extension_row_new (f));
      gtk_list_box_append (self->host_list, host_row_new (f, &takes_host, &needs_registering));
      any_takes_host |= takes_host;
      can_register |= needs_registering;
    }
  if (outcome->found->len == 0)
    {
      adw_preferences_group_set_description (self->extension_group, NULL);
      gtk_list_box_append (self->extension_list,
                           row_new ("no-browser", _("No browser found"),
                                    _("Chaperone works with Chrome, Chromium, Edge, Brave, Vivaldi "
                                      "and Firefox. Install one (for example “sudo apt install "
                                      "chromium firefox-esr”), start it once, then press Check "
                                      "Again."),
                                    MARK_ATTENTION));
    }
  else
    adw_preferences_group_set_description (self->extension_group,
                                           _("Chaperone found these browsers on this computer. Do "
                                             "what each one says, then come back here."));
  gtk_widget_set_visible (GTK_WIDGET (self->host_list), outcome->found->len > 0);
  /* Only Firefox, Flatpak or Snap browsers: there is nothing Register could ever do. */
  gtk_widget_set_visible (self->register_button, any_takes_host);
  self->can_register = can_register;

  for (guint i = 0; i < outcome->done->len; i++)
    chp_toast_show (GTK_WIDGET (self), g_ptr_array_index (outcome->done, i));
}

static void start (ChpSetupGuide *self,
                   gboolean       register_hosts);

static void
read_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(ChpSetupGuide) self = user_data;
  Outcome *outcome = g_task_propagate_pointer (G_TASK (result), NULL);

  self->busy = FALSE;
  /* The worker parsed the browsers' profile files (a Chromium Preferences file can be large):
   * what its thread's heap held for them goes back to the system, as after any large payload. */
  chp_memory_trim_soon ("the setup guide read the browsers' profiles");
  if (outcome == NULL)
    return;   /* the guide went away: nothing of it to update */
  show_outcome (self, outcome);
  outcome_free (outcome);
  update_actions (self);
  if (self->again)
    start (self, FALSE);
}

static void
start (ChpSetupGuide *self,
       gboolean       register_hosts)
{
  g_autoptr(GTask) task = NULL;
  Job *job;

  if (self->busy)
    {
      /* Register is off while reading, so only a read can be asked for here. */
      self->again = TRUE;
      return;
    }
  self->busy = TRUE;
  self->again = FALSE;
  update_actions (self);

  job = g_new0 (Job, 1);
  job->home = g_strdup (self->home);
  job->config_dir = g_strdup (self->config_dir);
  job->extension_dir = g_strdup (self->extension_dir);
  job->native_host = g_strdup (self->native_host);
  job->register_hosts = register_hosts;
  task = g_task_new (NULL, self->cancellable, read_cb, g_object_ref (self));
  g_task_set_source_tag (task, start);
  g_task_set_return_on_cancel (task, TRUE);
  g_task_set_task_data (task, job, (GDestroyNotify) job_free);
  g_task_run_in_thread (task, read_in_thread);
}

/**
 * chp_setup_guide_refresh:
 *
 * Reads the browsers again (it does when it is shown and when its window comes back to the
 * front); what it shows changes when the worker is done.
 */
void
chp_setup_guide_refresh (ChpSetupGuide *self)
{
  g_return_if_fail (CHP_IS_SETUP_GUIDE (self));

  start (self, FALSE);
}

/* Whether it is reading or registering: what it shows may be about to change. */
gboolean
chp_setup_guide_is_busy (ChpSetupGuide *self)
{
  g_return_val_if_fail (CHP_IS_SETUP_GUIDE (self), FALSE);

  return self->busy || self->again;
}

/* ---- actions --------------------------------------------------------------------------------- */

static void
copy_text (ChpSetupGuide *self,
           const char    *text,
           const char    *said)
{
  gdk_clipboard_set_text (gtk_widget_get_clipboard (GTK_WIDGET (self)), text);
  chp_toast_show (GTK_WIDGET (self), said);
}

static void
copy_path_action (GtkWidget  *widget,
                  const char *action_name,
                  GVariant   *parameter)
{
  copy_text (CHP_SETUP_GUIDE (widget), g_variant_get_string (parameter, NULL), _("Path copied"));
}

static void
copy_command_action (GtkWidget  *widget,
                     const char *action_name,
                     GVariant   *parameter)
{
  copy_text (CHP_SETUP_GUIDE (widget), AGENT_COMMAND, _("Command copied"));
}

static void
refresh_action (GtkWidget  *widget,
                const char *action_name,
                GVariant   *parameter)
{
  start (CHP_SETUP_GUIDE (widget), FALSE);
}

static void
register_action (GtkWidget  *widget,
                 const char *action_name,
                 GVariant   *parameter)
{
  start (CHP_SETUP_GUIDE (widget), TRUE);
}

/* ---- shown, and the window coming back ------------------------------------------------------- */

static void
root_active_cb (GtkWindow     *window,
                GParamSpec    *pspec,
                ChpSetupGuide *self)
{
  if (gtk_window_is_active (window))
    start (self, FALSE);
}

static void
unwatch_root (ChpSetupGuide *self)
{
  if (self->watched_root != NULL)
    g_clear_signal_handler (&self->active_id, self->watched_root);
  self->active_id = 0;   /* a window already gone took its handler with it */
  g_clear_weak_pointer (&self->watched_root);
}

static void
chp_setup_guide_map (GtkWidget *widget)
{
  ChpSetupGuide *self = CHP_SETUP_GUIDE (widget);
  GtkRoot *root;

  GTK_WIDGET_CLASS (chp_setup_guide_parent_class)->map (widget);

  root = gtk_widget_get_root (widget);
  unwatch_root (self);
  if (GTK_IS_WINDOW (root))
    {
      g_set_weak_pointer (&self->watched_root, GTK_WIDGET (root));
      self->active_id = g_signal_connect (root, "notify::is-active",
                                          G_CALLBACK (root_active_cb), self);
    }
  start (self, FALSE);
}

static void
chp_setup_guide_unmap (GtkWidget *widget)
{
  unwatch_root (CHP_SETUP_GUIDE (widget));

  GTK_WIDGET_CLASS (chp_setup_guide_parent_class)->unmap (widget);
}

/* ---- the object ------------------------------------------------------------------------------ */

static void
set_path (ChpSetupGuide *self,
          char         **field,
          const GValue  *value,
          guint          prop_id)
{
  if (g_strcmp0 (*field, g_value_get_string (value)) == 0)
    return;
  g_free (*field);
  *field = g_value_dup_string (value);
  g_object_notify_by_pspec (G_OBJECT (self), properties[prop_id]);
  if (gtk_widget_get_mapped (GTK_WIDGET (self)))
    start (self, FALSE);
}

static void
chp_setup_guide_get_property (GObject    *object,
                              guint       prop_id,
                              GValue     *value,
                              GParamSpec *pspec)
{
  ChpSetupGuide *self = CHP_SETUP_GUIDE (object);

  switch (prop_id)
    {
    case PROP_HOME: g_value_set_string (value, self->home); break;
    case PROP_CONFIG_DIR: g_value_set_string (value, self->config_dir); break;
    case PROP_EXTENSION_DIR: g_value_set_string (value, self->extension_dir); break;
    case PROP_NATIVE_HOST: g_value_set_string (value, self->native_host); break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_setup_guide_set_property (GObject      *object,
                              guint         prop_id,
                              const GValue *value,
                              GParamSpec   *pspec)
{
  ChpSetupGuide *self = CHP_SETUP_GUIDE (object);

  switch (prop_id)
    {
    case PROP_HOME: set_path (self, &self->home, value, prop_id); break;
    case PROP_CONFIG_DIR: set_path (self, &self->config_dir, value, prop_id); break;
    case PROP_EXTENSION_DIR: set_path (self, &self->extension_dir, value, prop_id); break;
    case PROP_NATIVE_HOST: set_path (self, &self->native_host, value, prop_id); break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_setup_guide_dispose (GObject *object)
{
  ChpSetupGuide *self = CHP_SETUP_GUIDE (object);

  g_cancellable_cancel (self->cancellable);
  unwatch_root (self);
  /* AdwBin (1.2) unparents its child in its own dispose: let go of it first, or the template
   * and the bin would both unparent it. */
  adw_bin_set_child (ADW_BIN (self), NULL);
  gtk_widget_dispose_template (GTK_WIDGET (self), CHP_TYPE_SETUP_GUIDE);

  G_OBJECT_CLASS (chp_setup_guide_parent_class)->dispose (object);
}

static void
chp_setup_guide_finalize (GObject *object)
{
  ChpSetupGuide *self = CHP_SETUP_GUIDE (object);

  g_clear_object (&self->cancellable);
  g_free (self->home);
  g_free (self->config_dir);
  g_free (self->extension_dir);
  g_free (self->native_host);

  G_OBJECT_CLASS (chp_setup_guide_parent_class)->finalize (object);
}

static void
chp_setup_guide_class_init (ChpSetupGuideClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->dispose = chp_setup_guide_dispose;
  object_class->finalize = chp_setup_guide_finalize;
  object_class->get_property = chp_setup_guide_get_property;
  object_class->set_property = chp_setup_guide_set_property;
  widget_class->map = chp_setup_guide_map;
  widget_class->unmap = chp_setup_guide_unmap;

  /* Each %NULL by default: the person's own home, config folder, installed extension and the
   * native host beside this program. */
  properties[PROP_HOME] = g_param_spec_string ("home", NULL, NULL, NULL, flags);
  properties[PROP_CONFIG_DIR] = g_param_spec_string ("config-dir", NULL, NULL, NULL, flags);
  properties[PROP_EXTENSION_DIR] = g_param_spec_string ("extension-dir", NULL, NULL, NULL, flags);
  properties[PROP_NATIVE_HOST] = g_param_spec_string ("native-host", NULL, NULL, NULL, flags);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/io/github/chaperone/Chaperone/chp-setup-guide.ui");
  gtk_widget_class_bind_template_child (widget_class, ChpSetupGuide, extension_group);
  gtk_widget_class_bind_template_child (widget_class, ChpSetupGuide, extension_list);
  gtk_widget_class_bind_template_child (widget_class, ChpSetupGuide, host_list);
  gtk_widget_class_bind_template_child (widget_class, ChpSetupGuide, register_button);
  gtk_widget_class_bind_template_child (widget_class, ChpSetupGuide, command_row);

  /* Widget actions: app.* and win.* actions are on the session bus, and nothing there may write
   * into the person's browsers (or their clipboard). */
  gtk_widget_class_install_action (widget_class, "guide.refresh", NULL, refresh_action);
  gtk_widget_class_install_action (widget_class, "guide.register", NULL, register_action);
  gtk_widget_class_install_action (widget_class, "guide.copy-path", "s", copy_path_action);
  gtk_widget_class_install_action (widget_class, "guide.copy-command", NULL, copy_command_action);
}

static void
chp_setup_guide_init (ChpSetupGuide *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->cancellable = g_cancellable_new ();
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (self->command_row), AGENT_COMMAND);
  update_actions (self);
}

GtkWidget *
chp_setup_guide_new (void)
{
  return g_object_new (CHP_TYPE_SETUP_GUIDE, NULL);
}
