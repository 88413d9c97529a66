/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-setup-guide.h: the Browsers page's first-run walkthrough — add the extension to each
 * browser found, register the native host, pair, connect an agent. */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define CHP_TYPE_SETUP_GUIDE (chp_setup_guide_get_type ())

G_DECLARE_FINAL_TYPE (ChpSetupGuide, chp_setup_guide, CHP, SETUP_GUIDE, AdwBin)

GtkWidget  *chp_setup_guide_new          (void);
void        chp_setup_guide_refresh      (ChpSetupGuide *self);
gboolean    chp_setup_guide_is_busy      (ChpSetupGuide *self);

G_END_DECLS
