/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-autostart.h: "Start at login", as an XDG autostart entry that starts Chaperone hidden. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What the entry runs: the binary on PATH, so a reinstall elsewhere keeps working. */
#define CHP_AUTOSTART_EXEC "chaperone --background"

char     *chp_autostart_get_path     (void);
char     *chp_autostart_get_contents (void);
gboolean  chp_autostart_is_enabled   (void);
gboolean  chp_autostart_set_enabled  (gboolean   enabled,
                                      GError   **error);

G_END_DECLS
