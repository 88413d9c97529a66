/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-display-memory.c: what drawing keeps for windows that are gone.
 *
 * With its last window closed the app runs in the tray for hours, and GTK, Pango and cairo keep
 * what they made to draw it, for a window that may never come back (bench/app-memory-bench.mjs,
 * after an agent's session):
 * - On X11, cairo draws a window into images in memory the X server reads too (MIT-SHM). It keeps
 *   that memory in pools and gives a pool back only when the pool is wholly free and cairo next
 *   looks at its pools: when an image of that memory is made or freed. Nothing is drawn in the
 *   tray, so nothing looks: 3.5 MB stayed mapped. One small image made and freed at once lets
 *   cairo retire the window's last images (the X server read them seconds ago), then drop every
 *   pool that is free. On Wayland GTK hands the compositor buffers of its own: nothing to do.
 * - Pango keeps the fonts, font sets and coverage it loaded for the window's text, and GTK the
 *   icons it looked up (0.5 MB each in the heap). Both are caches their own APIs let go of.
 * A window opened later loads them again as it draws (a few milliseconds). */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-memory"

#include "chp-display-memory.h"

#include <pango/pangocairo.h>
#include <pango/pangofc-fontmap.h>

#if defined(GDK_WINDOWING_X11) && defined(HAVE_CAIRO_XLIB)
#include <gdk/x11/gdkx.h>
#include <cairo-xlib.h>
#endif

static void
release_shared_images (GdkDisplay *display)
{
#if defined(GDK_WINDOWING_X11) && defined(HAVE_CAIRO_XLIB)
  if (GDK_IS_X11_DISPLAY (display))
    {
      Display *xdisplay = gdk_x11_display_get_xdisplay (display);
      int screen = DefaultScreen (xdisplay);
      cairo_surface_t *root;
      cairo_surface_t *image;

      /* A surface of the root window, 1×1: nothing is drawn on it; it is only the way to the
       * display's cairo device, whose pools these are. */
      root = cairo_xlib_surface_create (xdisplay, RootWindow (xdisplay, screen),
                                        DefaultVisual (xdisplay, screen), 1, 1);
      /* The server has read every image so far: cairo may retire them all. */
      gdk_display_sync (display);
      /* 16×16 ARGB: above cairo's least image of shared memory (128 bytes). */
      image = cairo_surface_create_similar_image (root, CAIRO_FORMAT_ARGB32, 16, 16);
      /* Had no pool room for it, cairo attached a new pool: the server must have done so before
       * the pool counts as free, or it would stay for good. */
      gdk_display_sync (display);
      cairo_surface_destroy (image);
      cairo_surface_destroy (root);
    }
#else
  (void) display;
#endif
}

/**
 * chp_display_release_memory:
 * @display: the display the app's windows were on
 *
 * With no window left on @display, gives back what drawing them kept: cairo's shared images,
 * Pango's loaded fonts, GTK's icon lookups. Call it a moment after the last window closed (the
 * X server must have read its last frame); a window that opens afterwards draws as before.
 */
void
chp_display_release_memory (GdkDisplay *display)
{
  PangoFontMap *fonts = pango_cairo_font_map_get_default ();
  GtkIconTheme *icons;
  g_auto(GStrv) search_path = NULL;

  g_return_if_fail (GDK_IS_DISPLAY (display));

  release_shared_images (display);

  /* GTK's widgets draw with the default font map (none of ours sets its own). */
  if (PANGO_IS_FC_FONT_MAP (fonts))
    pango_fc_font_map_cache_clear (PANGO_FC_FONT_MAP (fonts));

  /* The theme's lookups go when its search path is set, even to the same path: GTK reads the
   * theme again on the next lookup. */
  icons = gtk_icon_theme_get_for_display (display);
  search_path = gtk_icon_theme_get_search_path (icons);
  gtk_icon_theme_set_search_path (icons, (const char * const *) search_path);

  g_debug ("gave back the memory drawing kept for closed windows");
}
