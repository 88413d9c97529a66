/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-identity.h: the engine's long-lived ECDSA P-256 identity (DESIGN §2). */
#pragma once

#include <glib-object.h>
#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define CHP_IDENTITY_ERROR (chp_identity_error_quark ())

typedef enum
{
  CHP_IDENTITY_ERROR_INSECURE_MODE,
  CHP_IDENTITY_ERROR_CORRUPT,
  CHP_IDENTITY_ERROR_IO,
  CHP_IDENTITY_ERROR_FAILED,
} ChpIdentityError;

#define CHP_TYPE_IDENTITY (chp_identity_get_type ())

G_DECLARE_FINAL_TYPE (ChpIdentity, chp_identity, CHP, IDENTITY, GObject)

GQuark       chp_identity_error_quark      (void);

ChpIdentity *chp_identity_load_or_create   (const char   *data_dir,
                                            GError      **error);
ChpIdentity *chp_identity_new_from_raw     (const char   *x,
                                            const char   *y,
                                            const char   *d,
                                            GError      **error);
ChpIdentity *chp_identity_new_ephemeral    (void);

const char  *chp_identity_get_engine_id    (ChpIdentity  *self);
const char  *chp_identity_get_x            (ChpIdentity  *self);
const char  *chp_identity_get_y            (ChpIdentity  *self);
JsonNode    *chp_identity_dup_public_jwk   (ChpIdentity  *self);
const char  *chp_identity_get_path         (ChpIdentity  *self);

char        *chp_identity_sign             (ChpIdentity  *self,
                                            const char   *text,
                                            GError      **error);

G_END_DECLS
