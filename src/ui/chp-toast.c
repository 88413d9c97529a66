/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-toast.c: the one way a page, row or view says something short: in the toast overlay
 * around it (the window's). A toast's title is markup, and what the app says there carries
 * browser names, paths and error messages, so the text is always escaped. */
#include "config.h"

#include "chp-toast.h"

#include <adwaita.h>

/* Shows @text in the toast overlay that holds @widget; says nothing when none does (the widget
 * is not in a window yet, or no longer). */
void
chp_toast_show (GtkWidget  *widget,
                const char *text)
{
  GtkWidget *overlay;
  g_autofree char *escaped = NULL;

  g_return_if_fail (GTK_IS_WIDGET (widget));
  g_return_if_fail (text != NULL);

  overlay = gtk_widget_get_ancestor (widget, ADW_TYPE_TOAST_OVERLAY);
  if (overlay == NULL)
    return;
  escaped = g_markup_escape_text (text, -1);
  adw_toast_overlay_add_toast (ADW_TOAST_OVERLAY (overlay), adw_toast_new (escaped));
}
