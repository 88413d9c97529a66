/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-a11y.h: accessible names that GTK 4.8 gets wrong on its own. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

void chp_a11y_set_name     (GtkWidget  *widget,
                            const char *name);
void chp_a11y_name_buttons (GtkWidget  *widget);
void chp_a11y_name_dropdown (GtkDropDown *dropdown,
                             const char  *name);

G_END_DECLS
