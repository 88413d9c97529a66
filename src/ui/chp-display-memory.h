/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-display-memory.h: what drawing keeps for windows that are gone. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

void chp_display_release_memory (GdkDisplay *display);

G_END_DECLS
