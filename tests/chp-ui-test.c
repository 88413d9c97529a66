/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-ui-test.c: what the UI tests share (see chp-ui-test.h). */
#include "config.h"

#include <adwaita.h>
#include <string.h>

#include "chp-test-client.h"
#include "chp-ui-test.h"

static void
skip_no_display (void)
{
  g_test_skip ("No display: the UI tests need one (run them under xvfb-run)");
}

/**
 * chp_ui_test_app_new:
 * @app_id: the application id (each test program its own: two with one id could not register)
 * @skipped_path: the test path that says why, when there is no display
 *
 * Call after g_test_init(). Returns: (transfer full) (nullable): the registered application, or
 * %NULL without a display — a skipped test is then added, and main() returns g_test_run().
 */
GtkApplication *
chp_ui_test_app_new (const char *app_id,
                     const char *skipped_path)
{
  GtkApplication *app;

  if (!gtk_init_check ())
    {
      g_test_add_func (skipped_path, skip_no_display);
      return NULL;
    }

  app = GTK_APPLICATION (adw_application_new (app_id, G_APPLICATION_NON_UNIQUE));
  g_application_set_resource_base_path (G_APPLICATION (app), "/io/github/chaperone/Chaperone");
  g_assert_true (g_application_register (G_APPLICATION (app), NULL, NULL));
  return app;
}

/* Every widget of @type in @widget's subtree (itself included), in tree order. */
void
chp_ui_test_find_all (GtkWidget *widget,
                      GType      type,
                      GPtrArray *out)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    g_ptr_array_add (out, widget);

  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    chp_ui_test_find_all (child, type, out);
}

/* The first widget of @type in tree order, or %NULL. */
GtkWidget *
chp_ui_test_find_type (GtkWidget *widget,
                       GType      type)
{
  if (G_TYPE_CHECK_INSTANCE_TYPE (widget, type))
    return widget;

  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found = chp_ui_test_find_type (child, type);

      if (found != NULL)
        return found;
    }

  return NULL;
}

static void
collect_labels (GtkWidget *widget,
                GString   *out)
{
  if (GTK_IS_LABEL (widget) && gtk_widget_get_visible (widget))
    g_string_append_printf (out, "%s\n", gtk_label_get_text (GTK_LABEL (widget)));

  for (GtkWidget *child = gtk_widget_get_first_child (widget);
       child != NULL;
       child = gtk_widget_get_next_sibling (child))
    collect_labels (child, out);
}

/* The text of every visible label under @widget, a line each: what a person can read there. */
char *
chp_ui_test_all_text (GtkWidget *widget)
{
  GString *labels = g_string_new (NULL);

  collect_labels (widget, labels);
  return g_string_free (labels, FALSE);
}

gboolean
chp_ui_test_shows_text (GtkWidget  *widget,
                        const char *text)
{
  g_autofree char *labels = chp_ui_test_all_text (widget);

  return strstr (labels, text) != NULL;
}

static void
after_paint_cb (GdkFrameClock *clock,
                guint         *painted)
{
  (*painted)++;
}

/**
 * chp_ui_test_wait_frame:
 * @widget: a widget in a window that is shown
 *
 * Waits until @widget's window has laid out and drawn a frame that began after this call: what
 * a person would see now, sizes and all.
 */
void
chp_ui_test_wait_frame (GtkWidget *widget)
{
  GdkFrameClock *clock;
  guint painted = 0;
  gulong id;

  chp_test_until (gtk_widget_get_mapped (widget) && gtk_widget_get_frame_clock (widget) != NULL);
  clock = gtk_widget_get_frame_clock (widget);
  id = g_signal_connect (clock, "after-paint", G_CALLBACK (after_paint_cb), &painted);
  gtk_widget_queue_draw (widget);
  chp_test_until (painted > 0);
  g_signal_handler_disconnect (clock, id);
}

/* Shows @window so that the window itself (not its surface) is @width px wide, laid out and
 * drawn at that width. */
void
chp_ui_test_show_at (GtkWindow *window,
                     int        width,
                     int        height)
{
  GtkWidget *widget = GTK_WIDGET (window);
  int frame;

  /* Measured at a comfortable size first: below 360 px the window would be squeezed. */
  gtk_window_set_default_size (window, 800, height);
  gtk_window_present (window);
  chp_ui_test_wait_frame (widget);

  /* Without a window manager's frame, GTK keeps a resize border inside the surface: widen the
   * surface by it so the window itself is the width asked for. */
  frame = gdk_surface_get_width (gtk_native_get_surface (GTK_NATIVE (window))) -
          gtk_widget_get_width (widget);
  gtk_window_set_default_size (window, width + MAX (frame, 0), height);
  chp_test_until (gtk_widget_get_width (widget) == width);
  chp_ui_test_wait_frame (widget);
}

static void
dump_widths (GtkWidget *widget,
             int        max_width,
             int        depth)
{
  int min;

  gtk_widget_measure (widget, GTK_ORIENTATION_HORIZONTAL, -1, &min, NULL, NULL, NULL);
  if (min > max_width - 30)
    g_printerr ("%*s%s %d\n", depth * 2, "", G_OBJECT_TYPE_NAME (widget), min);
  if (depth < 14)
    for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
         child = gtk_widget_get_next_sibling (child))
      dump_widths (child, max_width, depth + 1);
}

/* Asserts that nothing in @widget needs more than @max_width px; when something does, the
 * widest widgets are printed first, so the failure says which. */
void
chp_ui_test_assert_fits (GtkWidget  *widget,
                         int         max_width,
                         const char *what)
{
  int width;

  gtk_widget_measure (widget, GTK_ORIENTATION_HORIZONTAL, -1, &width, NULL, NULL, NULL);
  g_test_message ("%s: at least %d px", what, width);
  if (width > max_width)
    dump_widths (widget, max_width, 0);
  g_assert_cmpint (width, <=, max_width);
}

/* The AdwActionRow under @widget whose widget name is @name (rows a dialog names after what they
 * show, as the doctor's findings and the setup guide's browsers are), or %NULL. */
GtkWidget *
chp_ui_test_find_row_named (GtkWidget  *widget,
                            const char *name)
{
  for (GtkWidget *child = gtk_widget_get_first_child (widget); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkWidget *found;

      if (ADW_IS_ACTION_ROW (child) && g_strcmp0 (gtk_widget_get_name (child), name) == 0)
        return child;
      if ((found = chp_ui_test_find_row_named (child, name)) != NULL)
        return found;
    }
  return NULL;
}

/**
 * chp_ui_test_assert_no_svg_drawn:
 *
 * Asserts that nothing the test showed drew an SVG: librsvg, which GTK loads for the first one,
 * is not mapped into the process. The window's icons are all pre-rendered (Adwaita's up to 96 px,
 * the app's own at the sizes it uses), because librsvg would hold 6 MB of the app's memory for
 * the rest of the session (src/ui/style.css, src/ui/meson.build).
 */
void
chp_ui_test_assert_no_svg_drawn (void)
{
  g_autofree char *maps = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (g_file_get_contents ("/proc/self/maps", &maps, NULL, &error));
  g_assert_no_error (error);
  if (strstr (maps, "librsvg") != NULL)
    g_test_message ("an SVG icon was drawn: an icon at a size Adwaita has no picture for "
                    "(above 96 px, or one only drawn as SVG such as the spinner)");
  g_assert_null (strstr (maps, "librsvg"));
}
