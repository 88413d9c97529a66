/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-toast.h: a short message in the window's toast overlay. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

void chp_toast_show (GtkWidget  *widget,
                     const char *text);

G_END_DECLS
