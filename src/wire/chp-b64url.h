/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-b64url.h: base64url without padding, the encoding of every key, nonce, signature and chunk
 * on the wire (DESIGN §2). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define CHP_CRYPTO_ERROR (chp_crypto_error_quark ())

typedef enum
{
  CHP_CRYPTO_ERROR_ENCODING,
  CHP_CRYPTO_ERROR_BAD_KEY,
  CHP_CRYPTO_ERROR_BAD_SIGNATURE,
  CHP_CRYPTO_ERROR_FIELD,
  CHP_CRYPTO_ERROR_FAILED,
} ChpCryptoError;

/* The domain is the crypto's: encoding errors were always CHP_CRYPTO_ERROR_ENCODING. */

GQuark   chp_crypto_error_quark  (void);

char    *chp_b64url_encode       (const guint8  *data,
                                  gsize          len);
gsize    chp_b64url_encoded_len  (gsize          len);
char    *chp_b64url_encode_to    (const guint8  *data,
                                  gsize          len,
                                  char          *out);
gboolean chp_b64url_decode_to    (const char    *text,
                                  gsize          text_len,
                                  guint8        *out,
                                  gsize          out_len,
                                  GError       **error);
GBytes  *chp_b64url_decode       (const char    *text,
                                  GError       **error);

G_END_DECLS
