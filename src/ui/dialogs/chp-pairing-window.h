/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-pairing-window.h: one browser asking to pair: the code to compare, and Pair / Reject. */
#pragma once

#include <adwaita.h>

#include "chp-pairing-request.h"

G_BEGIN_DECLS

#define CHP_TYPE_PAIRING_WINDOW (chp_pairing_window_get_type ())

G_DECLARE_FINAL_TYPE (ChpPairingWindow, chp_pairing_window, CHP, PAIRING_WINDOW, AdwWindow)

ChpPairingWindow  *chp_pairing_window_new         (GtkApplication   *application,
                                                   ChpPairingRequest *request);
ChpPairingRequest *chp_pairing_window_get_request (ChpPairingWindow *self);

G_END_DECLS
