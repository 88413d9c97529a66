/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-hold.h: an act the extension held instead of doing (DESIGN §8): an outward act (send, pay,
 * post…), a delete, or a write no approved plan covers. Only the person releases it, in the app. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define CHP_TYPE_HOLD (chp_hold_get_type ())

G_DECLARE_FINAL_TYPE (ChpHold, chp_hold, CHP, HOLD, GObject)

ChpHold    *chp_hold_new_from_json  (const char  *device_id,
                                     JsonObject  *object,
                                     GError     **error);
gboolean    chp_hold_update         (ChpHold     *self,
                                     ChpHold     *newer);
const char *chp_hold_get_id         (ChpHold     *self);
const char *chp_hold_get_device_id  (ChpHold     *self);
gint64      chp_hold_get_tab_id     (ChpHold     *self);
const char *chp_hold_get_state      (ChpHold     *self);
const char *chp_hold_get_kind       (ChpHold     *self);
const char *chp_hold_get_reason     (ChpHold     *self);
const char *chp_hold_get_word       (ChpHold     *self);
const char *chp_hold_get_control    (ChpHold     *self);
const char *chp_hold_get_source     (ChpHold     *self);
char       *chp_hold_dup_act_text   (ChpHold     *self);
const char *chp_hold_get_site       (ChpHold     *self);
const char *chp_hold_get_signature  (ChpHold     *self);
const char *chp_hold_get_error      (ChpHold     *self);
gint64      chp_hold_get_created_at (ChpHold     *self);
guint       chp_hold_get_n_fields   (ChpHold     *self);
gboolean    chp_hold_get_field      (ChpHold     *self,
                                     guint        index,
                                     const char **name,
                                     const char **value,
                                     gint64      *secret_length);
JsonNode   *chp_hold_get_changes    (ChpHold     *self);
gboolean    chp_hold_is_held        (ChpHold     *self);
JsonNode   *chp_hold_to_json        (ChpHold     *self);

G_END_DECLS
