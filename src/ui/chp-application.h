/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-application.h: the single-instance app: options, settings, the engine and its windows. */
#pragma once

#include <adwaita.h>

#include "chp-engine.h"

G_BEGIN_DECLS

#define CHP_TYPE_APPLICATION (chp_application_get_type ())

G_DECLARE_FINAL_TYPE (ChpApplication, chp_application, CHP, APPLICATION, AdwApplication)

ChpApplication *chp_application_new              (void);
ChpEngine      *chp_application_get_engine       (ChpApplication *self);
void            chp_application_start_engine     (ChpApplication *self);
void            chp_application_show_main_window (ChpApplication *self,
                                                  const char     *page_name);

G_END_DECLS
