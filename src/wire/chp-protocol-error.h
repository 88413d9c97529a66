/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-protocol-error.h: the GError domain for protocol errors, mapped both ways to their wire codes. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define CHP_PROTOCOL_ERROR (chp_protocol_error_quark ())
/* The same codes, given by Chaperone itself (an administrator's policy), never by a browser: an
 * agent hears them in the app's own words, not as a browser's reason that may quote a page. */
#define CHP_LOCAL_ERROR (chp_local_error_quark ())

typedef enum
{
#define CHP_ERROR_CODE(name, str) CHP_PROTOCOL_ERROR_##name,
#include "chp-error-codes.h"
#undef CHP_ERROR_CODE
  CHP_PROTOCOL_ERROR_N_CODES
} ChpProtocolError;

GQuark       chp_protocol_error_quark      (void);
GQuark       chp_local_error_quark         (void);
const char  *chp_protocol_error_to_string  (ChpProtocolError  code);
gboolean     chp_protocol_error_from_string (const char      *str,
                                             ChpProtocolError *code);
const char  *chp_protocol_error_code_of    (const GError     *error);

G_END_DECLS
