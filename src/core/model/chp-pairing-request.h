/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-pairing-request.h: one browser asking to pair, as the person sees it in the pairing window. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

typedef enum
{
  CHP_PAIRING_STATE_CHALLENGED, /* waiting for the browser's reveal; nothing to show yet */
  CHP_PAIRING_STATE_WAITING,    /* the code is shown; a person must decide */
  CHP_PAIRING_STATE_APPROVED,
  CHP_PAIRING_STATE_REJECTED,
  CHP_PAIRING_STATE_EXPIRED,
  CHP_PAIRING_STATE_FAILED,
  CHP_PAIRING_STATE_ABANDONED,
} ChpPairingState;

#define CHP_TYPE_PAIRING_STATE (chp_pairing_state_get_type ())
GType chp_pairing_state_get_type (void);

#define CHP_TYPE_PAIRING_REQUEST (chp_pairing_request_get_type ())

G_DECLARE_FINAL_TYPE (ChpPairingRequest, chp_pairing_request, CHP, PAIRING_REQUEST, GObject)

ChpPairingRequest *chp_pairing_request_new               (const char        *request_id,
                                                          const char        *installation_id,
                                                          const char        *origin,
                                                          const char        *browser,
                                                          gint64             expires_at);
const char        *chp_pairing_request_get_id            (ChpPairingRequest *self);
const char        *chp_pairing_request_get_installation_id (ChpPairingRequest *self);
const char        *chp_pairing_request_get_origin        (ChpPairingRequest *self);
const char        *chp_pairing_request_get_browser       (ChpPairingRequest *self);
gint64             chp_pairing_request_get_expires_at    (ChpPairingRequest *self);
const char        *chp_pairing_request_get_code          (ChpPairingRequest *self);
char              *chp_pairing_request_dup_code_display  (ChpPairingRequest *self);
ChpPairingState    chp_pairing_request_get_state         (ChpPairingRequest *self);
const char        *chp_pairing_request_get_existing_device_id   (ChpPairingRequest *self);
const char        *chp_pairing_request_get_existing_device_name (ChpPairingRequest *self);
gboolean           chp_pairing_request_get_replace       (ChpPairingRequest *self);

void               chp_pairing_request_set_code          (ChpPairingRequest *self,
                                                          const char        *code);
void               chp_pairing_request_set_existing_device (ChpPairingRequest *self,
                                                            const char        *device_id,
                                                            const char        *name);
void               chp_pairing_request_set_state         (ChpPairingRequest *self,
                                                          ChpPairingState    state);

void               chp_pairing_request_approve           (ChpPairingRequest *self,
                                                          gboolean           replace_existing);
void               chp_pairing_request_reject            (ChpPairingRequest *self);

G_END_DECLS
