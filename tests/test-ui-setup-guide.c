/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-ui-setup-guide.c: the Browsers page's setup guide under a display, on a private home:
 * it lists exactly the browsers found there, each with what to do in it; Copy Path puts on the
 * clipboard what the person picks in that browser; Register (a widget action) writes the native
 * host's manifest where Chromium reads it, and the row then says so; with no browser it says
 * none was found. Skips, saying why, without a display. */
#include "config.h"

#include "chp-browsers.h"
#include "chp-setup-guide.h"
#include "chp-test-client.h"
#include "chp-ui-test.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#define AGENT_COMMAND "claude mcp add chaperone -- chaperone-mcp"

typedef struct
{
  char *root;
  char *home;
  char *config;
  char *extension_dir;
  char *xpi;
  char *host;
  GtkWidget *window;
  GtkWidget *overlay;
  ChpSetupGuide *guide;
} Fixture;

static void
write_file (const char *path,
            const char *text)
{
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, text, -1, NULL));
}

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  f->root = g_dir_make_tmp ("chaperone-ui-setup-guide-XXXXXX", &error);
  g_assert_no_error (error);
  f->home = g_build_filename (f->root, "home", NULL);
  f->config = g_build_filename (f->home, ".config", NULL);
  f->extension_dir = g_build_filename (f->root, "share", "chaperone", "extension", NULL);
  f->xpi = g_build_filename (f->root, "share", "chaperone", "chaperone-firefox.xpi", NULL);
  f->host = g_build_filename (f->root, "chaperone-native-host", NULL);
  g_assert_cmpint (g_mkdir_with_parents (f->home, 0700), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (f->extension_dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents_full (f->host, "#!/bin/sh\n", -1,
                                           G_FILE_SET_CONTENTS_CONSISTENT, 0755, NULL));
}

/* Shows the guide on the fixture's home, in a window with a toast overlay as the app's has, and
 * waits until it has read the browsers. */
static void
show_guide (Fixture *f)
{
  f->guide = g_object_new (CHP_TYPE_SETUP_GUIDE,
                           "home", f->home,
                           "config-dir", f->config,
                           "extension-dir", f->extension_dir,
                           "native-host", f->host,
                           NULL);
  f->overlay = adw_toast_overlay_new ();
  adw_toast_overlay_set_child (ADW_TOAST_OVERLAY (f->overlay), GTK_WIDGET (f->guide));
  f->window = gtk_window_new ();
  g_object_ref_sink (f->window);
  gtk_window_set_child (GTK_WINDOW (f->window), f->overlay);
  chp_ui_test_show_at (GTK_WINDOW (f->window), 360, 800);
  chp_test_until (!chp_setup_guide_is_busy (f->guide));
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  if (f->window != NULL)
    {
      chp_test_until (!chp_setup_guide_is_busy (f->guide));
      gtk_window_destroy (GTK_WINDOW (f->window));
      chp_test_finalize_object (g_steal_pointer (&f->window));
    }
  chp_test_remove_tree (f->root);
  g_free (f->root);
  g_free (f->home);
  g_free (f->config);
  g_free (f->extension_dir);
  g_free (f->xpi);
  g_free (f->host);
}

/* The AdwActionRows whose name starts with @prefix, in the order shown. */
static void
rows_with_prefix (GtkWidget  *widget,
                  const char *prefix,
                  GPtrArray  *out)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      if (ADW_IS_ACTION_ROW (child) && gtk_widget_get_visible (child) &&
          g_str_has_prefix (gtk_widget_get_name (child), prefix))
        g_ptr_array_add (out, (gpointer) gtk_widget_get_name (child));
      rows_with_prefix (child, prefix, out);
    }
}

static char *
names_with_prefix (Fixture    *f,
                   const char *prefix)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new ();

  rows_with_prefix (GTK_WIDGET (f->guide), prefix, names);
  g_ptr_array_add (names, NULL);
  return g_strjoinv (" ", (char **) names->pdata);
}

static GtkWidget *
row (Fixture    *f,
     const char *name)
{
  GtkWidget *widget = chp_ui_test_find_row_named (GTK_WIDGET (f->guide), name);

  g_assert_nonnull (widget);
  return widget;
}

static const char *
icon_of_row (GtkWidget *widget)
{
  GtkWidget *image = chp_ui_test_find_type (widget, GTK_TYPE_IMAGE);

  return image != NULL ? gtk_image_get_icon_name (GTK_IMAGE (image)) : NULL;
}

/* The button a person presses for @action, found in @widget: there must be exactly one. */
static GtkWidget *
button_for (GtkWidget  *widget,
            const char *action)
{
  g_autoptr(GPtrArray) buttons = g_ptr_array_new ();
  GtkWidget *found = NULL;

  chp_ui_test_find_all (widget, GTK_TYPE_BUTTON, buttons);
  for (guint i = 0; i < buttons->len; i++)
    {
      GtkWidget *b = g_ptr_array_index (buttons, i);

      if (g_strcmp0 (gtk_actionable_get_action_name (GTK_ACTIONABLE (b)), action) == 0)
        {
          g_assert_null (found);
          found = b;
        }
    }
  return found;
}

/* Presses the button (as a click does: its action, with its target) once it can be pressed. */
static void
press (GtkWidget *button)
{
  g_assert_nonnull (button);
  g_assert_true (gtk_widget_is_sensitive (button));
  g_signal_emit_by_name (button, "clicked");
}

static void
text_read_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GError) error = NULL;
  char **text = user_data;

  *text = gdk_clipboard_read_text_finish (GDK_CLIPBOARD (source), result, &error);
  g_assert_no_error (error);
}

/* What a paste elsewhere would get. */
static char *
clipboard_text (Fixture *f)
{
  char *text = NULL;

  gdk_clipboard_read_text_async (gtk_widget_get_clipboard (f->window), NULL, text_read_cb, &text);
  chp_test_until (text != NULL);
  return text;
}

static void
test_two_browsers (Fixture       *f,
                   gconstpointer  data)
{
  g_autofree char *chromium_prefs = g_build_filename (f->config, "chromium", "Default",
                                                      "Preferences", NULL);
  g_autofree char *firefox = g_build_filename (f->home, ".mozilla", "firefox", NULL);
  g_autofree char *profiles_ini = g_build_filename (firefox, "profiles.ini", NULL);
  g_autofree char *firefox_addons = g_build_filename (firefox, "abcd.default", "extensions.json",
                                                      NULL);
  g_autofree char *manifest = g_build_filename (f->config, "chromium", "NativeMessagingHosts",
                                                CHP_NATIVE_HOST_NAME ".json", NULL);
  g_autofree char *firefox_manifest = g_build_filename (f->home, ".mozilla", "native-messaging-hosts",
                                                        CHP_NATIVE_HOST_NAME ".json", NULL);
  g_autofree char *names = NULL;
  g_autofree char *copied = NULL;
  g_autofree char *installed = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  /* A Chromium and a Firefox, each started once, neither with the extension yet. */
  write_file (chromium_prefs, "{\"extensions\":{\"settings\":{}}}");
  write_file (profiles_ini, "[Profile0]\nName=default\nIsRelative=1\nPath=abcd.default\n");
  write_file (firefox_addons, "{\"addons\":[]}");
  show_guide (f);

  /* Exactly those two, in both steps, and nothing says no browser was found. */
  names = names_with_prefix (f, "extension:");
  g_assert_cmpstr (names, ==, "extension:chromium extension:firefox");
  g_clear_pointer (&names, g_free);
  names = names_with_prefix (f, "native-host:");
  g_assert_cmpstr (names, ==, "native-host:chromium native-host:firefox");
  g_assert_null (chp_ui_test_find_row_named (GTK_WIDGET (f->guide), "no-browser"));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (f->guide), "Set up your browsers"));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (f->guide), "Chaperone found these browsers"));

  /* What to do in each: Chromium loads the folder, Firefox installs the add-on file. */
  g_assert_true (chp_ui_test_shows_text (row (f, "extension:chromium"), "Chromium"));
  g_assert_true (chp_ui_test_shows_text (row (f, "extension:chromium"), "chrome://extensions"));
  g_assert_true (chp_ui_test_shows_text (row (f, "extension:chromium"), "Load unpacked"));
  g_assert_true (chp_ui_test_shows_text (row (f, "extension:chromium"), f->extension_dir));
  g_assert_true (chp_ui_test_shows_text (row (f, "extension:firefox"), "Firefox"));
  g_assert_true (chp_ui_test_shows_text (row (f, "extension:firefox"), "about:addons"));
  g_assert_true (chp_ui_test_shows_text (row (f, "extension:firefox"), "chaperone-firefox.xpi"));
  g_assert_false (chp_ui_test_shows_text (row (f, "extension:firefox"), "chrome://extensions"));
  /* The folder is there; the add-on file is not (yet), and the row says what to do about it. */
  g_assert_false (chp_ui_test_shows_text (row (f, "extension:chromium"), "not there yet"));
  g_assert_true (chp_ui_test_shows_text (row (f, "extension:firefox"), "install Chaperone first"));
  g_assert_cmpstr (icon_of_row (row (f, "extension:chromium")), ==, "checkbox-symbolic");

  /* Copy Path: what the person then picks in that browser's file chooser, and a toast says so. */
  press (button_for (row (f, "extension:chromium"), "guide.copy-path"));
  copied = clipboard_text (f);
  g_assert_cmpstr (copied, ==, f->extension_dir);
  chp_test_until (chp_ui_test_shows_text (f->overlay, "Path copied"));
  g_clear_pointer (&copied, g_free);
  press (button_for (row (f, "extension:firefox"), "guide.copy-path"));
  copied = clipboard_text (f);
  g_assert_cmpstr (copied, ==, f->xpi);
  g_clear_pointer (&copied, g_free);

  /* Step 4's command, as README.md gives it, shown and copied. */
  g_assert_true (chp_ui_test_shows_text (row (f, "agent-command"), AGENT_COMMAND));
  press (button_for (row (f, "agent-command"), "guide.copy-command"));
  copied = clipboard_text (f);
  g_assert_cmpstr (copied, ==, AGENT_COMMAND);

  /* Step 2 before: Chromium needs the host, Firefox has nothing to register. */
  g_assert_true (chp_ui_test_shows_text (row (f, "native-host:chromium"), "Not registered yet"));
  g_assert_true (chp_ui_test_shows_text (row (f, "native-host:firefox"), "Nothing to register"));
  g_assert_false (g_file_test (manifest, G_FILE_TEST_EXISTS));

  /* Register: the person's press on the widget action's button. */
  press (button_for (GTK_WIDGET (f->guide), "guide.register"));
  g_assert_true (chp_setup_guide_is_busy (f->guide));
  chp_test_until (!chp_setup_guide_is_busy (f->guide));

  /* The manifest is where Chromium reads it, names our host and nothing is left for Firefox. */
  g_assert_true (json_parser_load_from_file (parser, manifest, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (json_parser_get_root (parser)),
                                                  "path"), ==, f->host);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (json_parser_get_root (parser)),
                                                  "name"), ==, CHP_NATIVE_HOST_NAME);
  g_assert_false (g_file_test (firefox_manifest, G_FILE_TEST_EXISTS));
  g_assert_true (chp_ui_test_shows_text (row (f, "native-host:chromium"), "Registered"));
  g_assert_false (chp_ui_test_shows_text (row (f, "native-host:chromium"), "Not registered"));
  g_assert_cmpstr (icon_of_row (row (f, "native-host:chromium")), ==, "emblem-ok-symbolic");
  g_assert_true (chp_ui_test_shows_text (row (f, "native-host:firefox"), "Nothing to register"));
  /* Nothing left to register: the button rests. */
  g_assert_false (gtk_widget_is_sensitive (button_for (GTK_WIDGET (f->guide), "guide.register")));

  /* The person adds the extension to Chromium and comes back: the row says it is there and
   * offers no path to copy any more. */
  installed = g_strdup_printf ("{\"extensions\":{\"settings\":{\"%s\":{}}}}",
                               CHP_EXTENSION_ID_CHROMIUM);
  write_file (chromium_prefs, installed);
  chp_setup_guide_refresh (f->guide);
  chp_test_until (!chp_setup_guide_is_busy (f->guide));
  g_assert_true (chp_ui_test_shows_text (row (f, "extension:chromium"), "The extension is installed"));
  g_assert_false (chp_ui_test_shows_text (row (f, "extension:chromium"), "Load unpacked"));
  g_assert_null (button_for (row (f, "extension:chromium"), "guide.copy-path"));
  g_assert_cmpstr (icon_of_row (row (f, "extension:chromium")), ==, "emblem-ok-symbolic");
  g_assert_true (chp_ui_test_shows_text (row (f, "extension:firefox"), "about:addons"));

  /* All of it readable in a 360 px window. */
  chp_ui_test_wait_frame (f->window);
  chp_ui_test_assert_fits (f->window, 360, "the setup guide at 360 px");

  /* The app's icon at the top is the picture rendered at build time for that size, not GTK's
   * "missing image", and nothing in the guide was drawn from an SVG. */
  {
    GtkIconTheme *theme = gtk_icon_theme_get_for_display (gtk_widget_get_display (f->window));
    g_autoptr(GtkIconPaintable) icon = gtk_icon_theme_lookup_icon (theme, APP_ID, NULL, 64, 1,
                                                                   GTK_TEXT_DIR_NONE, 0);
    g_autoptr(GFile) file = gtk_icon_paintable_get_file (icon);
    g_autofree char *uri = g_file_get_uri (file);

    g_assert_cmpstr (uri, ==, "resource:///io/github/chaperone/Chaperone/icons/64x64/apps/"
                              APP_ID ".png");
    chp_ui_test_assert_no_svg_drawn ();
  }
}

static void
test_no_browser (Fixture       *f,
                 gconstpointer  data)
{
  g_autofree char *names = NULL;

  show_guide (f);

  names = names_with_prefix (f, "extension:");
  g_assert_cmpstr (names, ==, "");
  g_clear_pointer (&names, g_free);
  names = names_with_prefix (f, "native-host:");
  g_assert_cmpstr (names, ==, "");
  g_assert_true (chp_ui_test_shows_text (row (f, "no-browser"), "No browser found"));
  g_assert_true (chp_ui_test_shows_text (row (f, "no-browser"), "sudo apt install chromium"));
  /* Nothing to register anywhere: no Register button, no list of browsers in step 2. */
  g_assert_false (gtk_widget_get_visible (button_for (GTK_WIDGET (f->guide), "guide.register")));
  g_assert_false (chp_ui_test_shows_text (GTK_WIDGET (f->guide), "Chaperone found these browsers"));
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GtkApplication) app = NULL;

  g_test_init (&argc, &argv, NULL);
  app = chp_ui_test_app_new ("io.github.chaperone.Chaperone.TestSetupGuide",
                             "/chaperone/ui/setup-guide/skipped");
  if (app == NULL)
    return g_test_run ();

#define ADD(path, fn) g_test_add (path, Fixture, NULL, fixture_setup, fn, fixture_teardown)
  ADD ("/chaperone/ui/setup-guide/two-browsers", test_two_browsers);
  ADD ("/chaperone/ui/setup-guide/no-browser", test_no_browser);
#undef ADD

  return g_test_run ();
}
