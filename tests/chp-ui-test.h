/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-ui-test.h: what the UI tests share — the application they all open windows in, finding
 * widgets and text on screen, and sizing a window the way a person's narrow screen would. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

GtkApplication *chp_ui_test_app_new      (const char  *app_id,
                                          const char  *skipped_path);
void            chp_ui_test_find_all     (GtkWidget   *widget,
                                          GType        type,
                                          GPtrArray   *out);
GtkWidget      *chp_ui_test_find_row_named (GtkWidget *widget,
                                           const char *name);
GtkWidget      *chp_ui_test_find_type    (GtkWidget   *widget,
                                          GType        type);
char           *chp_ui_test_all_text     (GtkWidget   *widget);
gboolean        chp_ui_test_shows_text   (GtkWidget   *widget,
                                          const char  *text);
void            chp_ui_test_wait_frame   (GtkWidget   *widget);
void            chp_ui_test_show_at      (GtkWindow   *window,
                                          int          width,
                                          int          height);
void            chp_ui_test_assert_fits  (GtkWidget   *widget,
                                          int          max_width,
                                          const char  *what);
void            chp_ui_test_assert_no_svg_drawn (void);

G_END_DECLS
