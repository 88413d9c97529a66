/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-window.h: the main window: Needs you, Browsers, Grants, Agents and Activity, the header's
 * Stop all / Resume, the pairing lock, and start-up errors. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_WINDOW (chp_window_get_type ())

G_DECLARE_FINAL_TYPE (ChpWindow, chp_window, CHP, WINDOW, AdwApplicationWindow)

ChpWindow  *chp_window_new              (GtkApplication *application);
ChpEngine  *chp_window_get_engine       (ChpWindow      *self);
void        chp_window_set_engine       (ChpWindow      *self,
                                         ChpEngine      *engine);
void        chp_window_show_error       (ChpWindow      *self,
                                         const char     *message);
void        chp_window_show_page        (ChpWindow      *self,
                                         const char     *page_name);
const char *chp_window_get_visible_page (ChpWindow      *self);

G_END_DECLS
