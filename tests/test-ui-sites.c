/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-ui-sites.c: the Sites page as the person meets it, under a display, with a real engine
 * whose store was taught two sites: each row says what is known of its site, expanding it lists
 * the API entries, the recipes and how the page shows it is ready, Forget hides the site's memory at once and offers Undo (in the toast and in
 * the row), Undo brings it back, Export writes it, and with nothing learned the page says what
 * would be. Then the whole app: the Preferences switch turns the engine's learning off and on. */
#include "config.h"

#include <adwaita.h>
#include <glib/gstdio.h>
#include <string.h>

#include "chp-application.h"
#include "chp-preferences-window.h"
#include "chp-site-row.h"
#include "chp-sites-page.h"
#include "chp-store-sites.h"
#include "chp-test-client.h"
#include "chp-ui-test.h"
#include "chp-window.h"

#define WIKI "https://wiki.example"
#define SHOP "https://shop.example"
#define TIDDLERS "/recipes/default/tiddlers.json"

static GtkApplication *app;

typedef struct
{
  ChpEngine *engine;
  char *dir;
  guint port;
  ChpWindow *window;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->engine = chp_test_engine_start ("chp-ui-sites-XXXXXX", &f->dir, &f->port);
  f->window = chp_window_new (app);
  chp_window_set_engine (f->window, f->engine);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_object_add_weak_pointer (G_OBJECT (f->window), (gpointer *) &f->window);
  gtk_window_destroy (GTK_WINDOW (f->window));
  chp_test_until (f->window == NULL);
  g_clear_object (&f->engine);
  g_free (f->dir);
}

/* What an agent's visit teaches: one GET, as the extension reports it. */
static void
learn (Fixture    *f,
       const char *origin,
       const char *path)
{
  ChpStore *store = chp_engine_get_store (f->engine);
  g_autofree char *text = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(ChpSiteRecord) record = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(ChpTestResult) wait = { 0 };

  text = g_strdup_printf ("{\"origin\":\"%s\",\"endpoints\":[{\"method\":\"GET\","
                          "\"pathTemplate\":\"%s\",\"queryKeys\":[\"filter\"],\"body\":null,"
                          "\"response\":null,\"credential\":{\"kind\":\"cookie\"},"
                          "\"frame\":\"%s/\",\"sampleStatus\":200}]}",
                          origin, path, origin);
  node = json_from_string (text, &error);
  g_assert_no_error (error);
  chp_store_merge_site_async (store, json_node_get_object (node), "doc-1",
                              g_get_real_time () / 1000, NULL, chp_test_result_cb, &wait);
  record = chp_store_merge_site_finish (store, chp_test_result_wait (&wait), &error);
  g_assert_no_error (error);
  g_assert_nonnull (record);
}

/* What an agent's saved batch and two visits teach: a recipe and how the page shows it is
 * ready. */
static void
teach_recipe (Fixture    *f,
              const char *origin)
{
  ChpStore *store = chp_engine_get_store (f->engine);
  g_autofree char *text = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(ChpSiteRecord) record = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(ChpTestResult) wait = { 0 };

  text = g_strdup_printf ("{\"origin\":\"%s\",\"ready\":{\"heading\":\"Getting started\"},"
                          "\"recipes\":[{\"name\":\"new-note\",\"params\":[{\"name\":"
                          "\"title\",\"type\":\"string\"}],\"steps\":[{\"act\":{\"target\":"
                          "{\"role\":\"textbox\",\"name\":\"Title\"},\"action\":\"fill\","
                          "\"value\":\"{{title}}\"}},{\"wait\":{\"text\":\"Saved\"}}]}]}",
                          origin);
  node = json_from_string (text, &error);
  g_assert_no_error (error);
  chp_store_merge_site_async (store, json_node_get_object (node), NULL,
                              g_get_real_time () / 1000, NULL, chp_test_result_cb, &wait);
  record = chp_store_merge_site_finish (store, chp_test_result_wait (&wait), &error);
  g_assert_no_error (error);
}

/* An agent's use of a learned entry: a success adds 0.1, two misses in a row quarantine it. */
static void
use_entry (Fixture    *f,
           const char *origin,
           const char *path,
           gboolean    success)
{
  ChpStore *store = chp_engine_get_store (f->engine);
  g_autofree char *entry_id = chp_site_entry_id (origin, "GET", path);
  g_autoptr(ChpSiteEndpoint) endpoint = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(ChpTestResult) wait = { 0 };

  chp_store_site_endpoint_result_async (store, entry_id, success, success ? 200 : 500, NULL,
                                        g_get_real_time () / 1000, NULL, chp_test_result_cb, &wait);
  endpoint = chp_store_site_endpoint_result_finish (store, chp_test_result_wait (&wait), &error);
  g_assert_no_error (error);
}

/* Whether the store still gives the site's memory (a forgotten site's is NOT_FOUND). */
static gboolean
remembered (Fixture    *f,
            const char *origin)
{
  ChpStore *store = chp_engine_get_store (f->engine);
  g_autoptr(ChpSiteRecord) record = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(ChpTestResult) wait = { 0 };

  chp_store_load_site_async (store, origin, NULL, chp_test_result_cb, &wait);
  record = chp_store_load_site_finish (store, chp_test_result_wait (&wait), &error);
  if (record == NULL)
    g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  return record != NULL;
}

static ChpSiteRow *
find_row (Fixture    *f,
          const char *origin)
{
  g_autoptr(GPtrArray) rows = g_ptr_array_new ();

  chp_ui_test_find_all (GTK_WIDGET (f->window), CHP_TYPE_SITE_ROW, rows);
  for (guint i = 0; i < rows->len; i++)
    {
      ChpSiteRow *row = g_ptr_array_index (rows, i);

      if (g_strcmp0 (chp_site_get_origin (chp_site_row_get_site (row)), origin) == 0)
        return row;
    }
  return NULL;
}

static const char *
page_state (Fixture *f)
{
  GtkWidget *page = chp_ui_test_find_type (GTK_WIDGET (f->window), CHP_TYPE_SITES_PAGE);
  GtkWidget *stack = chp_ui_test_find_type (page, GTK_TYPE_STACK);

  return gtk_stack_get_visible_child_name (GTK_STACK (stack));
}

/* A button that shows @label (without its mnemonic) and is, or is not, in a site's row. */
static GtkWidget *
find_button (GtkWidget  *widget,
             const char *label)
{
  g_autoptr(GPtrArray) buttons = g_ptr_array_new ();

  chp_ui_test_find_all (widget, GTK_TYPE_BUTTON, buttons);
  for (guint i = 0; i < buttons->len; i++)
    {
      GtkWidget *button = g_ptr_array_index (buttons, i);
      g_autofree char *text = chp_ui_test_all_text (button);

      if (gtk_widget_get_visible (button) && g_strcmp0 (g_strstrip (text), label) == 0)
        return button;
    }
  return NULL;
}

/* The toast's button: the shown @label outside every row. */
static GtkWidget *
toast_button (Fixture    *f,
              const char *label)
{
  g_autoptr(GPtrArray) buttons = g_ptr_array_new ();

  chp_ui_test_find_all (GTK_WIDGET (f->window), GTK_TYPE_BUTTON, buttons);
  for (guint i = 0; i < buttons->len; i++)
    {
      GtkWidget *button = g_ptr_array_index (buttons, i);
      g_autofree char *text = chp_ui_test_all_text (button);

      if (gtk_widget_get_visible (button) && g_strcmp0 (g_strstrip (text), label) == 0 &&
          gtk_widget_get_ancestor (button, CHP_TYPE_SITE_ROW) == NULL)
        return button;
    }
  return NULL;
}

/* The shown button of @row that says @label. */
static GtkWidget *
row_button (ChpSiteRow *row,
            const char *label)
{
  GtkWidget *button = find_button (GTK_WIDGET (row), label);

  return button != NULL && gtk_widget_get_ancestor (button, CHP_TYPE_SITE_ROW) == GTK_WIDGET (row)
         ? button : NULL;
}

/* With CHAPERONE_SCREENSHOT_DIR set (meson sets it), the window as drawn, to look at. */
static void
shoot (Fixture    *f,
       const char *name)
{
  const char *dir = g_getenv ("CHAPERONE_SCREENSHOT_DIR");
  g_autoptr(GdkPaintable) paintable = NULL;
  g_autoptr(GskRenderNode) node = NULL;
  g_autoptr(GdkTexture) texture = NULL;
  g_autofree char *path = NULL;
  int width = gtk_widget_get_width (GTK_WIDGET (f->window));
  int height = gtk_widget_get_height (GTK_WIDGET (f->window));

  if (dir == NULL)
    return;
  g_assert_cmpint (g_mkdir_with_parents (dir, 0755), ==, 0);
  paintable = gtk_widget_paintable_new (GTK_WIDGET (f->window));
  /* Past the pages' crossfade and the expander's slide. */
  for (guint i = 0; i < 30; i++)
    chp_ui_test_wait_frame (GTK_WIDGET (f->window));
  while (node == NULL)
    {
      g_autoptr(GtkSnapshot) snapshot = gtk_snapshot_new ();

      gdk_paintable_snapshot (paintable, snapshot, width, height);
      node = gtk_snapshot_to_node (snapshot);
      if (node == NULL)
        chp_ui_test_wait_frame (GTK_WIDGET (f->window));
    }
  texture = gsk_renderer_render_texture (gtk_native_get_renderer (GTK_NATIVE (f->window)), node,
                                         &GRAPHENE_RECT_INIT (0, 0, width, height));
  path = g_build_filename (dir, name, NULL);
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("%s", path);
}

static void
test_empty (Fixture       *f,
            gconstpointer  data)
{
  chp_ui_test_show_at (GTK_WINDOW (f->window), 360, 700);
  chp_window_show_page (f->window, "sites");
  g_assert_cmpstr (chp_window_get_visible_page (f->window), ==, "sites");
  chp_test_until (g_strcmp0 (page_state (f), "empty") == 0);
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (f->window), "No sites remembered yet"));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (f->window),
                                         "You can turn learning off in Preferences."));
  chp_ui_test_assert_fits (GTK_WIDGET (f->window), 360, "the empty Sites page");
}

static void
test_forget_and_undo (Fixture       *f,
                      gconstpointer  data)
{
  ChpSiteRow *row;
  ChpSiteRow *shop;
  GtkWidget *button;

  /* What agents learned while the page was not shown: the wiki's entry worked once more, the
   * shop's failed twice. */
  learn (f, WIKI, TIDDLERS);
  use_entry (f, WIKI, TIDDLERS, TRUE);
  teach_recipe (f, WIKI);
  learn (f, SHOP, "/api/cart");
  use_entry (f, SHOP, "/api/cart", FALSE);
  use_entry (f, SHOP, "/api/cart", FALSE);

  /* Shown, the page reads the list again. */
  chp_ui_test_show_at (GTK_WINDOW (f->window), 360, 700);
  chp_window_show_page (f->window, "sites");
  chp_test_until ((row = find_row (f, WIKI)) != NULL && (shop = find_row (f, SHOP)) != NULL);
  g_assert_cmpstr (page_state (f), ==, "list");
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (row), WIKI));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (row),
                                         "1 API entry · confidence 60 % · 1 recipe · "
                                         "last used just now"));
  g_assert_false (chp_ui_test_shows_text (GTK_WIDGET (row), "quarantined"));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (shop), "· 1 quarantined"));

  /* Expanded: the entries, read from the store. */
  adw_expander_row_set_expanded (ADW_EXPANDER_ROW (row), TRUE);
  chp_test_until (chp_ui_test_shows_text (GTK_WIDGET (row), "GET " TIDDLERS " — 0.60"));
  g_assert_false (chp_ui_test_shows_text (GTK_WIDGET (row), "Quarantined"));
  /* Its recipe by name, what it asks for (names, never values), and how the page shows it is
   * ready. */
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (row), "Recipe new-note — 2 steps"));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (row), "Asks for: title"));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (row),
                                         "Ready when the heading “Getting started” shows"));
  g_assert_false (chp_ui_test_shows_text (GTK_WIDGET (shop), "Recipe"));
  adw_expander_row_set_expanded (ADW_EXPANDER_ROW (shop), TRUE);
  chp_test_until (chp_ui_test_shows_text (GTK_WIDGET (shop), "GET /api/cart — 0.00"));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (shop),
                                         "Quarantined after failing twice in a row"));
  shoot (f, "sites-list.png");
  chp_ui_test_assert_fits (GTK_WIDGET (f->window), 360, "the Sites page, expanded");

  /* Forget, as the button does: the memory is hidden at once, and the row offers Undo. */
  g_assert_nonnull (row_button (row, "Forget"));
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (row), "site.forget", NULL));
  chp_test_until (chp_site_get_forgotten (chp_site_row_get_site (row)) &&
                  find_row (f, WIKI) == row);
  g_assert_false (remembered (f, WIKI));
  g_assert_true (remembered (f, SHOP));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (row), "Forgotten — you can undo this"));
  g_assert_false (adw_expander_row_get_expanded (ADW_EXPANDER_ROW (row)));
  g_assert_false (chp_ui_test_shows_text (GTK_WIDGET (row), "GET " TIDDLERS));
  g_assert_false (chp_ui_test_shows_text (GTK_WIDGET (row), "Recipe new-note"));
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (row)));
  chp_test_until (toast_button (f, "Undo") != NULL);
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (f->window), "Forgot " WIKI));

  /* The toast's Undo brings it all back. */
  button = toast_button (f, "Undo");
  gtk_widget_activate (button);
  chp_test_until (!chp_site_get_forgotten (chp_site_row_get_site (row)));
  g_assert_true (remembered (f, WIKI));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (row), "1 API entry"));
  g_assert_true (chp_ui_test_shows_text (GTK_WIDGET (row), "1 recipe"));

  /* Forgotten again, the row's own Undo does the same, for as long as the site can come back. */
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (row), "site.forget", NULL));
  chp_test_until (chp_site_get_forgotten (chp_site_row_get_site (row)));
  g_assert_false (remembered (f, WIKI));
  chp_test_until (row_button (row, "Undo") != NULL);
  g_assert_null (row_button (row, "Forget"));
  g_assert_nonnull (row_button (shop, "Forget"));
  shoot (f, "sites-forgotten.png");
  g_assert_true (gtk_widget_activate_action (GTK_WIDGET (row), "site.restore", NULL));
  chp_test_until (!chp_site_get_forgotten (chp_site_row_get_site (row)));
  g_assert_true (remembered (f, WIKI));
}

static void
test_export (Fixture       *f,
             gconstpointer  data)
{
  g_autofree char *path = g_build_filename (f->dir, "sites.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path (path);
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  GtkWidget *page;
  JsonArray *sites;
  JsonObject *site;

  learn (f, WIKI, TIDDLERS);
  teach_recipe (f, WIKI);
  gtk_window_present (GTK_WINDOW (f->window));
  chp_window_show_page (f->window, "sites");
  chp_test_until (find_row (f, WIKI) != NULL);

  page = chp_ui_test_find_type (GTK_WIDGET (f->window), CHP_TYPE_SITES_PAGE);
  chp_sites_page_export_to (CHP_SITES_PAGE (page), file);
  chp_test_until (g_file_test (path, G_FILE_TEST_EXISTS));
  chp_test_until (chp_ui_test_shows_text (GTK_WIDGET (f->window), "Sites exported"));

  g_assert_true (g_file_get_contents (path, &text, NULL, &error));
  g_assert_no_error (error);
  /* Pretty, for a person to read. */
  g_assert_nonnull (strstr (text, "\n  "));
  node = json_from_string (text, &error);
  g_assert_no_error (error);
  sites = json_object_get_array_member (json_node_get_object (node), "sites");
  g_assert_cmpuint (json_array_get_length (sites), ==, 1);
  site = json_array_get_object_element (sites, 0);
  g_assert_cmpstr (json_object_get_string_member (site, "origin"), ==, WIKI);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (site, "endpoints")), ==,
                    1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (
                     json_object_get_array_member (site, "recipes"), 0), "name"), ==, "new-note");
  g_assert_nonnull (strstr (text, "{{title}}"));
  g_unlink (path);
}

/* The whole app, in this process: its Preferences switch and the engine it runs. */

typedef struct
{
  char *dir;
  gboolean learning_followed;
} AppRun;

static GtkSwitch *
learning_switch (GtkWidget *widget)
{
  if (ADW_IS_ACTION_ROW (widget) &&
      g_strcmp0 (adw_preferences_row_get_title (ADW_PREFERENCES_ROW (widget)),
                 "Learn How Sites Work") == 0)
    return GTK_SWITCH (chp_ui_test_find_type (widget, GTK_TYPE_SWITCH));

  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkSwitch *found = learning_switch (child);

      if (found != NULL)
        return found;
    }
  return NULL;
}

static GtkWindow *
preferences_window (GtkApplication *application)
{
  for (GList *l = gtk_application_get_windows (application); l != NULL; l = l->next)
    if (CHP_IS_PREFERENCES_WINDOW (l->data))
      return l->data;
  return NULL;
}

static void
app_activate_cb (GApplication *application,
                 AppRun       *run)
{
  ChpEngine *engine;
  GtkWindow *preferences;
  GtkSwitch *toggle;

  chp_test_until (chp_application_get_engine (CHP_APPLICATION (application)) != NULL);
  engine = chp_application_get_engine (CHP_APPLICATION (application));
  g_assert_true (chp_engine_get_site_learning (engine));

  g_action_group_activate_action (G_ACTION_GROUP (application), "preferences", NULL);
  chp_test_until ((preferences = preferences_window (GTK_APPLICATION (application))) != NULL &&
                  gtk_widget_get_mapped (GTK_WIDGET (preferences)));
  toggle = learning_switch (GTK_WIDGET (preferences));
  g_assert_nonnull (toggle);
  g_assert_true (gtk_switch_get_active (toggle));

  /* Off, as the person clicks it: the running engine stops learning; on again, it learns. */
  gtk_widget_activate (GTK_WIDGET (toggle));
  chp_test_until (!chp_engine_get_site_learning (engine));
  g_assert_false (gtk_switch_get_active (toggle));
  gtk_widget_activate (GTK_WIDGET (toggle));
  chp_test_until (chp_engine_get_site_learning (engine));
  run->learning_followed = TRUE;

  gtk_window_destroy (preferences);
  g_application_quit (application);
}

static void
test_preference (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSettings) settings = g_settings_new (APP_ID);
  g_autoptr(ChpApplication) chaperone = NULL;
  AppRun run = { 0 };
  g_autofree char *data_dir = NULL;
  char *argv[] = { "chaperone", "--data-dir", NULL, "--bridge-port", "0", "--background", NULL };

  if (g_getenv ("DBUS_SESSION_BUS_ADDRESS") == NULL)
    {
      g_test_skip ("No session bus: the app registers on one (run under dbus-run-session)");
      return;
    }

  g_settings_reset (settings, "site-learning");
  run.dir = g_dir_make_tmp ("chp-ui-sites-app-XXXXXX", &error);
  g_assert_no_error (error);
  data_dir = g_strdup (run.dir);
  argv[2] = data_dir;

  chaperone = chp_application_new ();
  /* Beside whatever Chaperone runs on this bus, never as its second instance. */
  g_application_set_flags (G_APPLICATION (chaperone), G_APPLICATION_NON_UNIQUE);
  g_signal_connect_after (chaperone, "activate", G_CALLBACK (app_activate_cb), &run);
  g_assert_cmpint (g_application_run (G_APPLICATION (chaperone), G_N_ELEMENTS (argv) - 1, argv),
                   ==, 0);
  g_assert_true (run.learning_followed);
  g_free (run.dir);
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *runtime_dir = NULL;

  /* Set before anything reads it (GLib keeps the first answer): the app in test_preference
   * makes its agent socket there, never in the person's own. */
  runtime_dir = g_dir_make_tmp ("chp-ui-sites-run-XXXXXX", NULL);
  g_assert_nonnull (runtime_dir);
  g_setenv ("XDG_RUNTIME_DIR", runtime_dir, TRUE);

  g_test_init (&argc, &argv, NULL);

  app = chp_ui_test_app_new ("io.github.chaperone.Chaperone.TestSites",
                             "/chaperone/ui/sites/skipped");
  if (app == NULL)
    return g_test_run ();

  g_test_add ("/chaperone/ui/sites/empty", Fixture, NULL, fixture_setup, test_empty,
              fixture_teardown);
  g_test_add ("/chaperone/ui/sites/forget-and-undo", Fixture, NULL, fixture_setup,
              test_forget_and_undo, fixture_teardown);
  g_test_add ("/chaperone/ui/sites/export", Fixture, NULL, fixture_setup, test_export,
              fixture_teardown);
  g_test_add_func ("/chaperone/ui/sites/preference", test_preference);

  return g_test_run ();
}
