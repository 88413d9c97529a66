/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-ui-preferences.c: the Preferences window under a display: each row shows its GSettings key
 * and writes it back when the person changes it (memory backend); the floor's lists and the result
 * cap show and change the engine's safety settings, never GSettings; the trace cap is a key; Start
 * at Login writes and removes the autostart entry. Skips, saying why, without a display. */
#include "config.h"

#include "chp-autostart.h"
#include "chp-preferences-window.h"
#include "chp-safety-settings.h"
#include "chp-test-client.h"
#include "chp-ui-test.h"

#include <glib/gstdio.h>

static gboolean have_display;

typedef struct
{
  GSettings *settings;
  ChpSafetySettings *safety;
  ChpManagedPolicy *policy;    /* NULL but where a test sets one */
  char *data_dir;
  ChpPreferencesWindow *window;
} Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  if (!have_display)
    return;

  /* GSETTINGS_BACKEND=memory: every test starts from the schema's defaults. */
  fixture->settings = g_settings_new (APP_ID);
  g_assert_true (G_IS_SETTINGS (fixture->settings));
  g_settings_reset (fixture->settings, "bridge-port");
  g_settings_reset (fixture->settings, "run-in-background");
  g_settings_reset (fixture->settings, "default-grant-minutes");
  g_settings_reset (fixture->settings, "audit-max-rows");
  g_settings_reset (fixture->settings, "trace-cap-mb");
  g_settings_reset (fixture->settings, "agent-result-max-chars");
  g_settings_reset (fixture->settings, "floor-blind");
  g_settings_reset (fixture->settings, "floor-hands-only");

  fixture->safety = chp_safety_settings_new ();
  fixture->data_dir = g_dir_make_tmp ("chaperone-prefs-XXXXXX", &error);
  g_assert_no_error (error);
}

static void
open_window (Fixture *fixture)
{
  fixture->window = chp_preferences_window_new (NULL, fixture->settings, fixture->safety,
                                                fixture->policy, fixture->data_dir);
  g_object_ref_sink (fixture->window);
  gtk_window_present (GTK_WINDOW (fixture->window));
  chp_test_until (gtk_widget_get_mapped (GTK_WIDGET (fixture->window)));
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  if (fixture->window != NULL)
    {
      gtk_window_destroy (GTK_WINDOW (fixture->window));
      chp_test_finalize_object (g_steal_pointer (&fixture->window));
    }

  if (fixture->data_dir != NULL)
    g_rmdir (fixture->data_dir);
  g_clear_pointer (&fixture->data_dir, g_free);

  /* Nothing of a test's autostart entry may leak into the next one. */
  if (have_display)
    chp_autostart_set_enabled (FALSE, NULL);

  g_clear_object (&fixture->settings);
  g_clear_object (&fixture->safety);
  g_clear_object (&fixture->policy);
}

/* The port is a "q" (guint16), which g_settings_get_uint() refuses. */
static guint
get_port (GSettings *settings)
{
  guint16 port = 0;

  g_settings_get (settings, "bridge-port", "q", &port);

  return port;
}

static void
set_port (GSettings *settings,
          guint16    port)
{
  g_settings_set (settings, "bridge-port", "q", port);
}

static gboolean
skip_without_display (void)
{
  if (have_display)
    return FALSE;

  g_test_skip ("no display (run under xvfb-run; build-aux/test.sh does)");
  return TRUE;
}

static GtkWidget *
find_row (GtkWidget  *widget,
          const char *title)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found;

      if (ADW_IS_PREFERENCES_ROW (child) &&
          g_strcmp0 (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (child)), title) == 0)
        return child;

      found = find_row (child, title);
      if (found != NULL)
        return found;
    }

  return NULL;
}

static GtkWidget *
find_descendant (GtkWidget *widget,
                 GType      type)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found;

      if (G_TYPE_CHECK_INSTANCE_TYPE (child, type))
        return child;

      found = find_descendant (child, type);
      if (found != NULL)
        return found;
    }

  return NULL;
}

/* The control of the row a person sees under @title. */
static GtkWidget *
row_control (Fixture    *fixture,
             const char *title,
             GType       type)
{
  GtkWidget *row = find_row (GTK_WIDGET (fixture->window), title);
  GtkWidget *control;

  g_assert_nonnull (row);
  g_assert_true (gtk_widget_is_visible (row));
  control = find_descendant (row, type);
  g_assert_nonnull (control);

  return control;
}

static void
test_opens (Fixture       *fixture,
            gconstpointer  data)
{
  GtkWidget *data_row;
  g_autofree char *display_dir = NULL;
  const char *titles[] = {
    "Run in Background", "Start at Login", "Bridge Port", "Default Grant Duration",
    "Activity Log Size", "Data Folder",
  };

  if (skip_without_display ())
    return;

  open_window (fixture);

  g_assert_cmpstr (gtk_window_get_title (GTK_WINDOW (fixture->window)), ==, "Preferences");
  for (gsize i = 0; i < G_N_ELEMENTS (titles); i++)
    {
      g_test_message ("row %s", titles[i]);
      g_assert_nonnull (find_row (GTK_WIDGET (fixture->window), titles[i]));
    }

  /* The data folder, as the person would type it, with a button to open it. */
  data_row = find_row (GTK_WIDGET (fixture->window), "Data Folder");
  display_dir = g_filename_display_name (fixture->data_dir);
  g_assert_cmpstr (adw_action_row_get_subtitle (ADW_ACTION_ROW (data_row)), ==, display_dir);
  g_assert_nonnull (find_descendant (data_row, GTK_TYPE_BUTTON));
  g_assert_cmpstr (chp_preferences_window_get_data_dir (fixture->window), ==, fixture->data_dir);
  g_assert_true (chp_preferences_window_get_settings (fixture->window) == fixture->settings);
}

static void
test_run_in_background (Fixture       *fixture,
                        gconstpointer  data)
{
  GtkSwitch *toggle;

  if (skip_without_display ())
    return;

  open_window (fixture);
  toggle = GTK_SWITCH (row_control (fixture, "Run in Background", GTK_TYPE_SWITCH));

  /* On by default: closing the window must not drop the browsers unless the person says so. */
  g_assert_true (g_settings_get_boolean (fixture->settings, "run-in-background"));
  g_assert_true (gtk_switch_get_active (toggle));

  /* The person flips the switch (as a click or Space does). */
  gtk_widget_activate (GTK_WIDGET (toggle));
  chp_test_spin_pending ();
  g_assert_false (gtk_switch_get_active (toggle));
  g_assert_false (g_settings_get_boolean (fixture->settings, "run-in-background"));

  /* Changed elsewhere (gsettings set), the switch follows. */
  g_settings_set_boolean (fixture->settings, "run-in-background", TRUE);
  chp_test_spin_pending ();
  g_assert_true (gtk_switch_get_active (toggle));
}

static void
test_bridge_port (Fixture       *fixture,
                  gconstpointer  data)
{
  GtkSpinButton *spin;

  if (skip_without_display ())
    return;

  open_window (fixture);
  spin = GTK_SPIN_BUTTON (row_control (fixture, "Bridge Port", GTK_TYPE_SPIN_BUTTON));

  g_assert_cmpint (gtk_spin_button_get_value_as_int (spin), ==, 64333);

  gtk_spin_button_set_value (spin, 50123);
  chp_test_spin_pending ();
  g_assert_cmpuint (get_port (fixture->settings), ==, 50123);

  set_port (fixture->settings, 40000);
  chp_test_spin_pending ();
  g_assert_cmpint (gtk_spin_button_get_value_as_int (spin), ==, 40000);

  /* Privileged ports are out of reach: the spin stops at 1024. */
  gtk_spin_button_set_value (spin, 80);
  chp_test_spin_pending ();
  g_assert_cmpuint (get_port (fixture->settings), ==, 1024);
}

static void
test_bridge_port_not_rewritten (Fixture       *fixture,
                                gconstpointer  data)
{
  GtkSpinButton *spin;

  if (skip_without_display ())
    return;

  /* 0 ("any free port", for tests) is outside what the row offers: opening Preferences shows
   * the nearest value but must not write it back behind the person's back. */
  set_port (fixture->settings, 0);
  open_window (fixture);
  spin = GTK_SPIN_BUTTON (row_control (fixture, "Bridge Port", GTK_TYPE_SPIN_BUTTON));

  g_assert_cmpint (gtk_spin_button_get_value_as_int (spin), ==, 1024);
  g_assert_cmpuint (get_port (fixture->settings), ==, 0);
}

static void
test_default_grant (Fixture       *fixture,
                    gconstpointer  data)
{
  AdwComboRow *row;
  const struct
  {
    guint selected;
    guint minutes;
  } choices[] = { { 0, 5 }, { 1, 15 }, { 2, 60 }, { 3, 480 } };

  if (skip_without_display ())
    return;

  open_window (fixture);
  row = ADW_COMBO_ROW (find_row (GTK_WIDGET (fixture->window), "Default Grant Duration"));
  g_assert_nonnull (row);

  /* 15 minutes by default, and the list says so in words. */
  g_assert_cmpuint (adw_combo_row_get_selected (row), ==, 1);
  g_assert_cmpuint (g_list_model_get_n_items (adw_combo_row_get_model (row)), ==, 4);
  g_assert_cmpstr (gtk_string_list_get_string (GTK_STRING_LIST (adw_combo_row_get_model (row)), 1),
                   ==, "15 minutes");

  for (gsize i = 0; i < G_N_ELEMENTS (choices); i++)
    {
      adw_combo_row_set_selected (row, (choices[i].selected + 1) % 4);
      chp_test_spin_pending ();
      adw_combo_row_set_selected (row, choices[i].selected);
      chp_test_spin_pending ();
      g_assert_cmpuint (g_settings_get_uint (fixture->settings, "default-grant-minutes"), ==,
                        choices[i].minutes);

      g_settings_set_uint (fixture->settings, "default-grant-minutes", choices[(i + 2) % 4].minutes);
      chp_test_spin_pending ();
      g_assert_cmpuint (adw_combo_row_get_selected (row), ==, choices[(i + 2) % 4].selected);
    }

  /* Another value (set outside) shows as the nearest choice and is kept as it is. */
  g_settings_set_uint (fixture->settings, "default-grant-minutes", 90);
  chp_test_spin_pending ();
  g_assert_cmpuint (adw_combo_row_get_selected (row), ==, 2);
  g_assert_cmpuint (g_settings_get_uint (fixture->settings, "default-grant-minutes"), ==, 90);
}

static void
test_audit_rows (Fixture       *fixture,
                 gconstpointer  data)
{
  GtkSpinButton *spin;

  if (skip_without_display ())
    return;

  open_window (fixture);
  spin = GTK_SPIN_BUTTON (row_control (fixture, "Activity Log Size", GTK_TYPE_SPIN_BUTTON));

  g_assert_cmpint (gtk_spin_button_get_value_as_int (spin), ==, 10000);

  gtk_spin_button_set_value (spin, 250000);
  chp_test_spin_pending ();
  g_assert_cmpuint (g_settings_get_uint (fixture->settings, "audit-max-rows"), ==, 250000);

  g_settings_set_uint (fixture->settings, "audit-max-rows", 2000);
  chp_test_spin_pending ();
  g_assert_cmpint (gtk_spin_button_get_value_as_int (spin), ==, 2000);

  /* The bounds of the key are the bounds of the row. */
  gtk_spin_button_set_value (spin, 10);
  chp_test_spin_pending ();
  g_assert_cmpuint (g_settings_get_uint (fixture->settings, "audit-max-rows"), ==, 1000);
  gtk_spin_button_set_value (spin, 5e6);
  chp_test_spin_pending ();
  g_assert_cmpuint (g_settings_get_uint (fixture->settings, "audit-max-rows"), ==, 1000000);
}

/* The traces' cap: 100 MB unless changed, never under 1 MB, written to the key the application
 * applies to the store (chp_store_set_trace_cap()). */
static void
test_trace_cap (Fixture       *fixture,
                gconstpointer  data)
{
  GtkSpinButton *spin;

  if (skip_without_display ())
    return;

  open_window (fixture);
  spin = GTK_SPIN_BUTTON (row_control (fixture, "Trace Size Limit", GTK_TYPE_SPIN_BUTTON));

  g_assert_cmpint (gtk_spin_button_get_value_as_int (spin), ==, 100);

  gtk_spin_button_set_value (spin, 250);
  chp_test_spin_pending ();
  g_assert_cmpuint (g_settings_get_uint (fixture->settings, "trace-cap-mb"), ==, 250);

  g_settings_set_uint (fixture->settings, "trace-cap-mb", 40);
  chp_test_spin_pending ();
  g_assert_cmpint (gtk_spin_button_get_value_as_int (spin), ==, 40);

  gtk_spin_button_set_value (spin, 0);
  chp_test_spin_pending ();
  g_assert_cmpuint (g_settings_get_uint (fixture->settings, "trace-cap-mb"), ==, 1);
}

static void
test_result_chars (Fixture       *fixture,
                   gconstpointer  data)
{
  GtkSpinButton *spin;

  if (skip_without_display ())
    return;

  open_window (fixture);
  spin = GTK_SPIN_BUTTON (row_control (fixture, "Longest Agent Result", GTK_TYPE_SPIN_BUTTON));

  g_assert_cmpint (gtk_spin_button_get_value_as_int (spin), ==, 8000);
  gtk_spin_button_set_value (spin, 20000);
  chp_test_spin_pending ();
  g_assert_cmpuint (chp_safety_settings_get_result_max_chars (fixture->safety), ==, 20000);

  /* Below the floor an agent could not read even one snapshot page: the row will not go there. */
  gtk_spin_button_set_value (spin, 10);
  chp_test_spin_pending ();
  g_assert_cmpuint (chp_safety_settings_get_result_max_chars (fixture->safety), ==, 1000);

  /* Another process of the user rewriting the old GSettings key changes nothing. */
  g_settings_set_uint (fixture->settings, "agent-result-max-chars", 100000);
  chp_test_spin_pending ();
  g_assert_cmpuint (chp_safety_settings_get_result_max_chars (fixture->safety), ==, 1000);
  g_assert_cmpint (gtk_spin_button_get_value_as_int (spin), ==, 1000);
}

/* The administrator's locks: shown at the top, their rows read-only, the settings untouched. */
static void
test_policy_locks (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autofree char *path = g_build_filename (fixture->data_dir, "policy.conf", NULL);
  GtkWidget *port_row;
  GtkWidget *learning_row;
  GtkSpinButton *spin;
  GtkSwitch *learning;

  if (skip_without_display ())
    return;

  g_assert_true (g_file_set_contents (path, "[Chaperone]\nBridgePort=64400\nSiteLearning=false\n"
                                            "ApiCalls=false\nTransport=native\n", -1, NULL));
  fixture->policy = chp_managed_policy_load (path);
  g_unlink (path);
  g_settings_set (fixture->settings, "bridge-port", "q", (guint16) 65000);
  g_settings_set_boolean (fixture->settings, "site-learning", TRUE);
  open_window (fixture);

  port_row = find_row (GTK_WIDGET (fixture->window), "Bridge Port");
  spin = GTK_SPIN_BUTTON (row_control (fixture, "Bridge Port", GTK_TYPE_SPIN_BUTTON));
  g_assert_false (gtk_widget_is_sensitive (port_row));
  g_assert_cmpint (gtk_spin_button_get_value_as_int (spin), ==, 64400);
  learning_row = find_row (GTK_WIDGET (fixture->window), "Learn How Sites Work");
  learning = GTK_SWITCH (row_control (fixture, "Learn How Sites Work", GTK_TYPE_SWITCH));
  g_assert_false (gtk_widget_is_sensitive (learning_row));
  g_assert_false (gtk_switch_get_active (learning));
  /* The person's own settings stay as they were, for a day without the policy. */
  {
    guint16 port = 0;
    g_settings_get (fixture->settings, "bridge-port", "q", &port);
    g_assert_cmpuint (port, ==, 65000);
  }
  g_assert_true (g_settings_get_boolean (fixture->settings, "site-learning"));
  /* The group at the top says what is locked, in words. */
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (fixture->window), "The bridge port is 64400"));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (fixture->window),
                                            "Agents may not call a site’s own API"));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (fixture->window),
                                            "Browsers connect only through the native host"));
}

static void
test_start_at_login (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autofree char *path = chp_autostart_get_path ();
  GtkSwitch *toggle;

  if (skip_without_display ())
    return;

  g_assert_true (g_str_has_prefix (path, g_getenv ("XDG_CONFIG_HOME")));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));

  open_window (fixture);
  toggle = GTK_SWITCH (row_control (fixture, "Start at Login", GTK_TYPE_SWITCH));
  g_assert_false (gtk_switch_get_active (toggle));

  gtk_widget_activate (GTK_WIDGET (toggle));
  chp_test_spin_pending ();
  g_assert_true (gtk_switch_get_active (toggle));
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));
  g_assert_true (chp_autostart_is_enabled ());

  gtk_widget_activate (GTK_WIDGET (toggle));
  chp_test_spin_pending ();
  g_assert_false (gtk_switch_get_active (toggle));
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
test_start_at_login_reads_file (Fixture       *fixture,
                                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  GtkSwitch *toggle;

  if (skip_without_display ())
    return;

  /* Enabled before the window opened (an earlier session): the switch shows it. */
  g_assert_true (chp_autostart_set_enabled (TRUE, &error));
  g_assert_no_error (error);

  open_window (fixture);
  toggle = GTK_SWITCH (row_control (fixture, "Start at Login", GTK_TYPE_SWITCH));
  g_assert_true (gtk_switch_get_active (toggle));
}

static void
test_start_at_login_fails (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autofree char *path = chp_autostart_get_path ();
  GtkSwitch *toggle;

  if (skip_without_display ())
    return;

  /* A folder where the entry should go: the write fails, and the switch must not claim
   * otherwise. */
  g_assert_cmpint (g_mkdir_with_parents (path, 0700), ==, 0);

  open_window (fixture);
  toggle = GTK_SWITCH (row_control (fixture, "Start at Login", GTK_TYPE_SWITCH));
  g_assert_false (gtk_switch_get_active (toggle));

  gtk_widget_activate (GTK_WIDGET (toggle));
  chp_test_spin_pending ();
  g_assert_false (gtk_switch_get_active (toggle));
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_DIR));

  g_assert_cmpint (g_rmdir (path), ==, 0);
}

/* A button inside @widget showing @icon_name. */
static GtkWidget *
find_icon_button (GtkWidget  *widget,
                  const char *icon_name)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found;

      if (GTK_IS_BUTTON (child) &&
          g_strcmp0 (gtk_button_get_icon_name (GTK_BUTTON (child)), icon_name) == 0)
        return child;

      found = find_icon_button (child, icon_name);
      if (found != NULL)
        return found;
    }

  return NULL;
}

static void
assert_strv (ChpSafetySettings *safety,
             const char        *key,
             const char        *expected)
{
  g_auto(GStrv) values = NULL;
  g_autofree char *joined = NULL;

  g_object_get (safety, key, &values, NULL);
  joined = g_strjoinv (",", values);
  g_assert_cmpstr (joined, ==, expected);
}

static void
test_floor_lists (Fixture       *fixture,
                  gconstpointer  data)
{
  GtkWidget *blind;
  GtkWidget *hands_only;
  GtkWidget *row;
  const char * const outside[] = { "bank.example", "not a host", NULL };

  if (skip_without_display ())
    return;

  open_window (fixture);
  blind = find_row (GTK_WIDGET (fixture->window), "Add a Site Agents Never See");
  hands_only = find_row (GTK_WIDGET (fixture->window), "Add a Site Agents May Only Read");
  g_assert_true (ADW_IS_ENTRY_ROW (blind));
  g_assert_true (ADW_IS_ENTRY_ROW (hands_only));
  assert_strv (fixture->safety, "floor-blind", "");

  /* A URL typed with Enter: saved as the floor reads it, the host alone, and listed. */
  gtk_editable_set_text (GTK_EDITABLE (blind), "  HTTPS://Mail.Example.COM/inbox?x=1 ");
  g_signal_emit_by_name (blind, "entry-activated");
  chp_test_spin_pending ();
  assert_strv (fixture->safety, "floor-blind", "mail.example.com");
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (blind)), ==, "");
  g_assert_nonnull (find_row (GTK_WIDGET (fixture->window), "mail.example.com"));

  /* The same again is not a second entry. */
  gtk_editable_set_text (GTK_EDITABLE (blind), "mail.example.com");
  g_signal_emit_by_name (blind, "entry-activated");
  chp_test_spin_pending ();
  assert_strv (fixture->safety, "floor-blind", "mail.example.com");

  /* Not a host pattern: refused, shown as an error, nothing saved; typing again clears it. */
  gtk_editable_set_text (GTK_EDITABLE (blind), "http://");
  g_signal_emit_by_name (blind, "entry-activated");
  chp_test_spin_pending ();
  assert_strv (fixture->safety, "floor-blind", "mail.example.com");
  g_assert_true (gtk_widget_has_css_class (blind, "error"));
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (blind)), ==, "http://");
  gtk_editable_set_text (GTK_EDITABLE (blind), "*.*.example");
  g_assert_false (gtk_widget_has_css_class (blind, "error"));
  g_signal_emit_by_name (blind, "entry-activated");
  chp_test_spin_pending ();
  g_assert_true (gtk_widget_has_css_class (blind, "error"));
  assert_strv (fixture->safety, "floor-blind", "mail.example.com");

  /* Read-only sites, added with the row's Add button. */
  gtk_editable_set_text (GTK_EDITABLE (hands_only), "*.Corp.Example");
  g_signal_emit_by_name (find_icon_button (hands_only, "list-add-symbolic"), "clicked");
  chp_test_spin_pending ();
  assert_strv (fixture->safety, "floor-hands-only", "*.corp.example");
  assert_strv (fixture->safety, "floor-blind", "mail.example.com");

  /* Remove, with the row's own button. */
  row = find_row (GTK_WIDGET (fixture->window), "mail.example.com");
  g_assert_nonnull (row);
  g_signal_emit_by_name (find_icon_button (row, "user-trash-symbolic"), "clicked");
  chp_test_spin_pending ();
  assert_strv (fixture->safety, "floor-blind", "");
  g_assert_null (find_row (GTK_WIDGET (fixture->window), "mail.example.com"));

  /* Another process of the user rewriting the old GSettings keys (gsettings set) changes
   * nothing: the lists are the store's. */
  gtk_editable_set_text (GTK_EDITABLE (blind), "mail.example.com");
  g_signal_emit_by_name (blind, "entry-activated");
  chp_test_spin_pending ();
  g_settings_set_strv (fixture->settings, "floor-blind", outside);
  g_settings_set_strv (fixture->settings, "floor-hands-only", outside);
  chp_test_spin_pending ();
  assert_strv (fixture->safety, "floor-blind", "mail.example.com");
  assert_strv (fixture->safety, "floor-hands-only", "*.corp.example");
  g_assert_null (find_row (GTK_WIDGET (fixture->window), "bank.example"));
  g_assert_nonnull (find_row (GTK_WIDGET (fixture->window), "mail.example.com"));

  /* Changed in the model (another Preferences window): the list follows. */
  chp_safety_settings_remove_floor_entry (fixture->safety, "floor-hands-only", "*.corp.example");
  chp_test_spin_pending ();
  g_assert_null (find_row (GTK_WIDGET (fixture->window), "*.corp.example"));
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *config_home = NULL;
  g_autofree char *autostart_dir = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  /* Start at Login must never touch the real ~/.config: a private XDG_CONFIG_HOME, set before
   * anything reads (and caches) it. Not G_TEST_OPTION_ISOLATE_DIRS: it hides XDG_DATA_DIRS,
   * and GTK then cannot tell an SVG icon from any other file. */
  config_home = g_dir_make_tmp ("chaperone-prefs-config-XXXXXX", &error);
  g_assert_no_error (error);
  g_setenv ("XDG_CONFIG_HOME", config_home, TRUE);
  autostart_dir = g_build_filename (config_home, "autostart", NULL);

  g_test_init (&argc, &argv, NULL);

  have_display = gtk_init_check ();
  if (have_display)
    {
      adw_init ();
      /* A switch flipped with animations on changes state only when its slide ends. */
      g_object_set (gtk_settings_get_default (), "gtk-enable-animations", FALSE, NULL);
    }
  else
    g_test_message ("no display: every test here skips (run under xvfb-run)");

#define ADD(path, func) \
  g_test_add ("/chaperone/ui/preferences/" path, Fixture, NULL, fixture_set_up, func, \
              fixture_tear_down)

  ADD ("opens", test_opens);
  ADD ("run-in-background", test_run_in_background);
  ADD ("bridge-port", test_bridge_port);
  ADD ("bridge-port-not-rewritten", test_bridge_port_not_rewritten);
  ADD ("default-grant", test_default_grant);
  ADD ("audit-rows", test_audit_rows);
  ADD ("result-chars", test_result_chars);
  ADD ("trace-cap", test_trace_cap);
  ADD ("start-at-login", test_start_at_login);
  ADD ("start-at-login-reads-file", test_start_at_login_reads_file);
  ADD ("start-at-login-fails", test_start_at_login_fails);
  ADD ("floor-lists", test_floor_lists);
  ADD ("policy-locks", test_policy_locks);

#undef ADD

  status = g_test_run ();

  g_rmdir (autostart_dir);
  g_rmdir (config_home);

  return status;
}
