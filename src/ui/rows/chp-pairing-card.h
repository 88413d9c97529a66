/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-pairing-card.h: a browser asking to pair, as a card in Needs you. The decision itself
 * stays in the pairing window, which the card opens. */
#pragma once

#include <adwaita.h>

#include "chp-pairing-request.h"

G_BEGIN_DECLS

#define CHP_TYPE_PAIRING_CARD (chp_pairing_card_get_type ())

G_DECLARE_FINAL_TYPE (ChpPairingCard, chp_pairing_card, CHP, PAIRING_CARD, GtkListBoxRow)

GtkWidget         *chp_pairing_card_new         (ChpPairingRequest *request);
ChpPairingRequest *chp_pairing_card_get_request (ChpPairingCard    *self);

G_END_DECLS
