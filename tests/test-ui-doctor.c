/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-ui-doctor.c: Check Setup under a display, on a private home: it shows one row per
 * finding with the fix in words, says how many things need attention, and its Fix (a widget
 * action) registers the native host in the browser it found, after which that row is in order.
 * Skips, saying why, without a display. */
#include "config.h"

#include "chp-doctor-window.h"
#include "chp-test-client.h"
#include "chp-ui-test.h"

#include <glib/gstdio.h>

static const char *
icon_of_row (GtkWidget *row)
{
  GtkWidget *image = chp_ui_test_find_type (row, GTK_TYPE_IMAGE);

  return image != NULL ? gtk_image_get_icon_name (GTK_IMAGE (image)) : NULL;
}

static void
test_check_and_fix (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *root = NULL;
  g_autofree char *home = NULL, *config = NULL, *run = NULL, *data = NULL, *host = NULL;
  g_autofree char *prefs = NULL, *manifest = NULL, *prefs_text = NULL;
  ChpDoctorWindow *window;
  GtkWidget *row;


  root = g_dir_make_tmp ("chaperone-ui-doctor-XXXXXX", &error);
  g_assert_no_error (error);
  home = g_build_filename (root, "home", NULL);
  config = g_build_filename (home, ".config", NULL);
  run = g_build_filename (root, "run", NULL);
  data = g_build_filename (root, "data", NULL);
  host = g_build_filename (root, "chaperone-native-host", NULL);
  prefs = g_build_filename (config, "chromium", "Default", "Preferences", NULL);
  manifest = g_build_filename (config, "chromium", "NativeMessagingHosts",
                               "io.github.chaperone.native.json", NULL);
  g_assert_cmpint (g_mkdir_with_parents (run, 0700), ==, 0);
  {
    g_autofree char *profile = g_path_get_dirname (prefs);
    g_assert_cmpint (g_mkdir_with_parents (profile, 0700), ==, 0);
  }
  prefs_text = g_strdup_printf ("{\"extensions\":{\"settings\":{\"%s\":{}}}}", CHP_EXTENSION_ID_CHROMIUM);
  g_assert_true (g_file_set_contents (prefs, prefs_text, -1, NULL));
  g_assert_true (g_file_set_contents_full (host, "#!/bin/sh\n", -1, G_FILE_SET_CONTENTS_CONSISTENT,
                                           0755, NULL));

  window = chp_doctor_window_new (NULL, data);
  g_object_ref_sink (window);
  chp_doctor_window_set_home (window, home, config, run, "/nonexistent/policy.conf", host);
  gtk_window_present (GTK_WINDOW (window));
  chp_test_until (gtk_widget_get_mapped (GTK_WIDGET (window)) &&
                  !chp_doctor_window_is_checking (window) &&
                  chp_ui_test_find_row_named (GTK_WIDGET (window), "app") != NULL);

  /* What it found, in words: the app is not running, Chromium has the extension but no host. */
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (window), "Chaperone is not running"));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (window), "Chromium has the Chaperone extension"));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (window), "things need attention"));
  row = chp_ui_test_find_row_named (GTK_WIDGET (window), "native-host:chromium");
  g_assert_nonnull (row);
  g_assert_cmpstr (icon_of_row (row), ==, "dialog-warning-symbolic");
  g_assert_true (chp_ui_test_shows_text (row, "chaperone doctor --fix"));

  /* Fix: the person's press, a widget action of the window's own. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (window), "doctor.fix", NULL));
  chp_test_until (!chp_doctor_window_is_checking (window));
  g_assert_true (g_file_test (manifest, G_FILE_TEST_EXISTS));
  row = chp_ui_test_find_row_named (GTK_WIDGET (window), "native-host:chromium");
  g_assert_nonnull (row);
  g_assert_cmpstr (icon_of_row (row), ==, "emblem-ok-symbolic");

  gtk_window_destroy (GTK_WINDOW (window));
  chp_test_finalize_object (window);
  g_unlink (manifest);
  g_unlink (prefs);
  g_unlink (host);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GtkApplication) app = NULL;

  g_test_init (&argc, &argv, NULL);
  app = chp_ui_test_app_new ("io.github.chaperone.Chaperone.TestDoctor", "/chaperone/ui/doctor/skipped");
  if (app == NULL)
    return g_test_run ();

  g_test_add_func ("/chaperone/ui/doctor/check-and-fix", test_check_and_fix);

  return g_test_run ();
}
