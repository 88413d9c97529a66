/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-preferences-window.h: Preferences, each row bound to a GSettings key, to the engine's
 * safety settings (kept in its store) or, for Start at Login, to the autostart entry on disk. */
#pragma once

#include <adwaita.h>

#include "chp-managed-policy.h"
#include "chp-safety-settings.h"

G_BEGIN_DECLS

#define CHP_TYPE_PREFERENCES_WINDOW (chp_preferences_window_get_type ())

G_DECLARE_FINAL_TYPE (ChpPreferencesWindow, chp_preferences_window, CHP, PREFERENCES_WINDOW,
                      AdwPreferencesWindow)

ChpPreferencesWindow *chp_preferences_window_new          (GtkWindow            *parent,
                                                           GSettings            *settings,
                                                           ChpSafetySettings    *safety,
                                                           ChpManagedPolicy     *policy,
                                                           const char           *data_dir);
GSettings            *chp_preferences_window_get_settings (ChpPreferencesWindow *self);
const char           *chp_preferences_window_get_data_dir (ChpPreferencesWindow *self);

G_END_DECLS
