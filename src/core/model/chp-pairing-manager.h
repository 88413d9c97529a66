/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-pairing-manager.h: pairing limits and lockout (DESIGN §3.6), and the list of requests that
 * wait for a person, as a GListModel of ChpPairingRequest. */
#pragma once

#include <gio/gio.h>

#include "chp-object-list.h"
#include "chp-pairing-request.h"
#include "chp-store.h"

G_BEGIN_DECLS

#define CHP_PAIRING_ERROR (chp_pairing_error_quark ())

typedef enum
{
  CHP_PAIRING_ERROR_LOCKED,
  CHP_PAIRING_ERROR_RATE_LIMITED,
  CHP_PAIRING_ERROR_BUSY,
} ChpPairingError;

#define CHP_PAIRING_TTL_MS            (120 * 1000)
#define CHP_PAIRING_MAX_PENDING       3
#define CHP_PAIRING_LOCK_FAILURES     3
#define CHP_PAIRING_LOCK_WINDOW_MS    (10 * 60 * 1000)
#define CHP_PAIRING_LOCK_MS           (10 * 60 * 1000)
#define CHP_PAIRING_MAX_PER_DAY       20

#define CHP_TYPE_PAIRING_MANAGER (chp_pairing_manager_get_type ())

G_DECLARE_FINAL_TYPE (ChpPairingManager, chp_pairing_manager, CHP, PAIRING_MANAGER,
                      ChpObjectList)

GQuark             chp_pairing_error_quark            (void);

ChpPairingManager *chp_pairing_manager_new            (ChpStore          *store);
void               chp_pairing_manager_set_history    (ChpPairingManager *self,
                                                       GPtrArray         *attempts);
gboolean           chp_pairing_manager_admit          (ChpPairingManager *self,
                                                       const char        *installation_id,
                                                       gint64             now_ms,
                                                       gint64            *retry_after_ms,
                                                       GError           **error);
void               chp_pairing_manager_track          (ChpPairingManager *self,
                                                       ChpPairingRequest *request);
void               chp_pairing_manager_show           (ChpPairingManager *self,
                                                       ChpPairingRequest *request);
void               chp_pairing_manager_finish         (ChpPairingManager *self,
                                                       ChpPairingRequest *request,
                                                       ChpPairingState    state,
                                                       gint64             now_ms);
gint64             chp_pairing_manager_get_locked_until (ChpPairingManager *self);
ChpPairingRequest *chp_pairing_manager_lookup         (ChpPairingManager *self,
                                                       const char        *request_id);

G_END_DECLS
