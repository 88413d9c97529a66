/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-handoff.h: a step only the person can do in the browser (scan a QR code, enter an MFA code,
 * solve a CAPTCHA, confirm on a device, sign in), as the extension reported it. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define CHP_TYPE_HANDOFF (chp_handoff_get_type ())

G_DECLARE_FINAL_TYPE (ChpHandoff, chp_handoff, CHP, HANDOFF, GObject)

ChpHandoff *chp_handoff_new_from_json (const char  *device_id,
                                       JsonObject  *object,
                                       GError     **error);
gboolean    chp_handoff_update        (ChpHandoff  *self,
                                       ChpHandoff  *newer);
const char *chp_handoff_get_id        (ChpHandoff  *self);
const char *chp_handoff_get_device_id (ChpHandoff  *self);
gint64      chp_handoff_get_tab_id    (ChpHandoff  *self);
const char *chp_handoff_get_url       (ChpHandoff  *self);
const char *chp_handoff_get_title     (ChpHandoff  *self);
const char *chp_handoff_get_origin    (ChpHandoff  *self);
const char *chp_handoff_get_reason    (ChpHandoff  *self);
const char *chp_handoff_get_message   (ChpHandoff  *self);
const char *chp_handoff_get_state     (ChpHandoff  *self);
const char *chp_handoff_get_by        (ChpHandoff  *self);
gint64      chp_handoff_get_created_at (ChpHandoff *self);
gboolean    chp_handoff_is_waiting    (ChpHandoff  *self);
JsonNode   *chp_handoff_to_json       (ChpHandoff  *self);

G_END_DECLS
