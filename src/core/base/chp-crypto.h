/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-crypto.h: the small cryptographic vocabulary of the protocol (DESIGN §2–3): SHA-256,
 * signed texts, P-256 keys as JWK coordinates and P1363 signatures; base64url is chp-b64url.h. */
#pragma once

#include <glib.h>
#include <json-glib/json-glib.h>

#include "chp-b64url.h"

G_BEGIN_DECLS

#define CHP_P256_COORD_LEN 32
#define CHP_P1363_SIG_LEN  64

char    *chp_random_b64url       (gsize          n_bytes);

void     chp_sha256              (const void    *data,
                                  gsize          len,
                                  guint8         out[32]);

char    *chp_signed_text         (const char * const *fields,
                                  GError       **error);

char    *chp_engine_id_for_key   (const char    *x,
                                  const char    *y,
                                  GError       **error);
char    *chp_key_fingerprint     (const char    *x,
                                  const char    *y);

gboolean chp_jwk_read            (JsonObject    *jwk,
                                  char         **x,
                                  char         **y,
                                  GError       **error);
JsonNode *chp_jwk_new            (const char    *x,
                                  const char    *y);

gboolean chp_verify_p1363        (const char    *x,
                                  const char    *y,
                                  const char    *text,
                                  const char    *signature,
                                  GError       **error);

char    *chp_pair_commitment     (const char    *nonce_c,
                                  const char    *ext_x,
                                  const char    *ext_y,
                                  GError       **error);
char    *chp_pair_signed_text    (const char    *label,
                                  const char * const transcript[10],
                                  const char    *extra,
                                  GError       **error);
char    *chp_pair_code           (const char * const transcript[10],
                                  GError       **error);
char    *chp_pair_code_display   (const char    *code);

char    *chp_auth_challenge_text (const char    *engine_id,
                                  const char    *engine_instance_id,
                                  const char    *connection_id,
                                  const char    *challenge,
                                  gint64         timestamp,
                                  GError       **error);
char    *chp_auth_client_text    (const char    *origin,
                                  const char    *engine_id,
                                  const char    *engine_instance_id,
                                  const char    *connection_id,
                                  const char    *challenge,
                                  const char    *installation_id,
                                  JsonArray     *capabilities,
                                  GError       **error);

G_END_DECLS
