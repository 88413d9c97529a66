/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-crypto.c: SHA-256, random ids, signed texts and P1363 verification over GnuTLS; base64url
 * itself is in src/wire/chp-b64url.c, below the crypto, so frames can use it without GnuTLS. */
#include "config.h"

#include "chp-crypto.h"

#include "chp-json-util.h"

#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <string.h>

char *
chp_random_b64url (gsize n_bytes)
{
  g_autofree guint8 *buf = g_malloc (n_bytes);

  /* GNUTLS_RND_RANDOM is the generator GnuTLS uses for session keys; nonces and
   * ids here guard pairing and authentication, so they deserve the same. */
  if (gnutls_rnd (GNUTLS_RND_RANDOM, buf, n_bytes) != 0)
    g_error ("The system random number generator failed");

  return chp_b64url_encode (buf, n_bytes);
}

void
chp_sha256 (const void *data,
            gsize       len,
            guint8      out[32])
{
  if (gnutls_hash_fast (GNUTLS_DIG_SHA256, data, len, out) != 0)
    g_error ("SHA-256 is not available");
}

char *
chp_signed_text (const char * const  *fields,
                 GError             **error)
{
  GString *text = g_string_new (NULL);

  g_return_val_if_fail (fields != NULL && fields[0] != NULL, NULL);

  for (guint i = 0; fields[i] != NULL; i++)
    {
      /* A newline inside a field would let one field pose as two. */
      if (strchr (fields[i], '\n') != NULL)
        {
          g_set_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_FIELD,
                       "Field %u of a signed text contains a newline", i);
          g_string_free (text, TRUE);
          return NULL;
        }

      if (i > 0)
        g_string_append_c (text, '\n');
      g_string_append (text, fields[i]);
    }

  return g_string_free (text, FALSE);
}

static gboolean
decode_coord (const char  *coord,
              guint8       out[CHP_P256_COORD_LEN],
              GError     **error)
{
  g_autoptr(GBytes) bytes = NULL;

  if (coord == NULL)
    {
      g_set_error_literal (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_BAD_KEY,
                           "Missing key coordinate");
      return FALSE;
    }

  bytes = chp_b64url_decode (coord, NULL);
  if (bytes == NULL || g_bytes_get_size (bytes) != CHP_P256_COORD_LEN)
    {
      g_set_error_literal (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_BAD_KEY,
                           "A P-256 key coordinate must be 32 bytes of base64url");
      return FALSE;
    }

  memcpy (out, g_bytes_get_data (bytes, NULL), CHP_P256_COORD_LEN);
  return TRUE;
}

static gboolean
uncompressed_point (const char  *x,
                    const char  *y,
                    guint8       point[65],
                    GError     **error)
{
  point[0] = 0x04;
  return decode_coord (x, point + 1, error) && decode_coord (y, point + 33, error);
}

char *
chp_engine_id_for_key (const char  *x,
                       const char  *y,
                       GError     **error)
{
  guint8 point[65];
  guint8 digest[32];
  g_autofree char *hex = NULL;

  if (!uncompressed_point (x, y, point, error))
    return NULL;

  chp_sha256 (point, sizeof point, digest);
  hex = g_malloc (65);
  for (guint i = 0; i < 32; i++)
    g_snprintf (hex + i * 2, 3, "%02x", digest[i]);

  return g_strconcat ("sha256:", hex, NULL);
}

char *
chp_key_fingerprint (const char *x,
                     const char *y)
{
  guint8 point[65];
  guint8 digest[32];
  GString *out;

  if (!uncompressed_point (x, y, point, NULL))
    return g_strdup ("");

  chp_sha256 (point, sizeof point, digest);
  out = g_string_new (NULL);
  for (guint i = 0; i < 16; i += 2)
    {
      if (i > 0)
        g_string_append_c (out, ' ');
      g_string_append_printf (out, "%02x%02x", digest[i], digest[i + 1]);
    }

  return g_string_free (out, FALSE);
}

gboolean
chp_jwk_read (JsonObject  *jwk,
              char       **x,
              char       **y,
              GError     **error)
{
  guint8 point[65];
  const char *kx, *ky;

  g_return_val_if_fail (x != NULL && y != NULL, FALSE);

  if (jwk == NULL ||
      g_strcmp0 (chp_json_get_string (jwk, "kty"), "EC") != 0 ||
      g_strcmp0 (chp_json_get_string (jwk, "crv"), "P-256") != 0)
    {
      g_set_error_literal (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_BAD_KEY,
                           "The public key must be a JWK with kty \"EC\" and crv \"P-256\"");
      return FALSE;
    }

  /* A private member in a public key means the sender leaked its secret:
   * refuse it rather than store it anywhere. */
  if (json_object_has_member (jwk, "d"))
    {
      g_set_error_literal (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_BAD_KEY,
                           "The public key carries a private component");
      return FALSE;
    }

  /* Read by type: a peer's key of another shape is refused, not a critical in the log. */
  kx = chp_json_get_string (jwk, "x");
  ky = chp_json_get_string (jwk, "y");
  if (!uncompressed_point (kx, ky, point, error))
    return FALSE;

  *x = g_strdup (kx);
  *y = g_strdup (ky);
  return TRUE;
}

JsonNode *
chp_jwk_new (const char *x,
             const char *y)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "kty");
  json_builder_add_string_value (builder, "EC");
  json_builder_set_member_name (builder, "crv");
  json_builder_add_string_value (builder, "P-256");
  json_builder_set_member_name (builder, "x");
  json_builder_add_string_value (builder, x);
  json_builder_set_member_name (builder, "y");
  json_builder_add_string_value (builder, y);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

gboolean
chp_verify_p1363 (const char  *x,
                  const char  *y,
                  const char  *text,
                  const char  *signature,
                  GError     **error)
{
  guint8 point[65];
  g_autoptr(GBytes) sig = NULL;
  gnutls_pubkey_t pubkey = NULL;
  gnutls_datum_t dx, dy, dr, ds, der = { NULL, 0 }, data;
  const guint8 *raw;
  int ret;

  g_return_val_if_fail (text != NULL, FALSE);

  if (!uncompressed_point (x, y, point, error))
    return FALSE;

  if (signature == NULL || (sig = chp_b64url_decode (signature, NULL)) == NULL ||
      g_bytes_get_size (sig) != CHP_P1363_SIG_LEN)
    {
      g_set_error_literal (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_BAD_SIGNATURE,
                           "A signature must be 64 bytes (P1363 r||s) of base64url");
      return FALSE;
    }

  raw = g_bytes_get_data (sig, NULL);
  dx = (gnutls_datum_t) { point + 1, CHP_P256_COORD_LEN };
  dy = (gnutls_datum_t) { point + 33, CHP_P256_COORD_LEN };
  dr = (gnutls_datum_t) { (guint8 *) raw, 32 };
  ds = (gnutls_datum_t) { (guint8 *) raw + 32, 32 };
  data = (gnutls_datum_t) { (guint8 *) text, strlen (text) };

  if (gnutls_pubkey_init (&pubkey) != 0)
    g_error ("Out of memory");

  ret = gnutls_pubkey_import_ecc_raw (pubkey, GNUTLS_ECC_CURVE_SECP256R1, &dx, &dy);
  if (ret != 0)
    {
      gnutls_pubkey_deinit (pubkey);
      g_set_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_BAD_KEY,
                   "The public key was refused: %s", gnutls_strerror (ret));
      return FALSE;
    }

  /* WebCrypto speaks P1363; GnuTLS verifies DER. */
  ret = gnutls_encode_rs_value (&der, &dr, &ds);
  if (ret == 0)
    ret = gnutls_pubkey_verify_data2 (pubkey, GNUTLS_SIGN_ECDSA_SHA256, 0, &data, &der);

  gnutls_free (der.data);
  gnutls_pubkey_deinit (pubkey);

  if (ret < 0)
    {
      g_set_error_literal (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_BAD_SIGNATURE,
                           "The signature does not verify");
      return FALSE;
    }

  return TRUE;
}

char *
chp_pair_commitment (const char  *nonce_c,
                     const char  *ext_x,
                     const char  *ext_y,
                     GError     **error)
{
  const char *fields[] = { "chaperone-pair-v1", "commit", nonce_c, ext_x, ext_y, NULL };
  g_autofree char *text = NULL;
  guint8 digest[32];

  g_return_val_if_fail (nonce_c != NULL && ext_x != NULL && ext_y != NULL, NULL);

  if (!(text = chp_signed_text (fields, error)))
    return NULL;

  chp_sha256 (text, strlen (text), digest);
  return chp_b64url_encode (digest, sizeof digest);
}

/**
 * chp_pair_signed_text:
 * @label: "reveal", "code" or "approved"
 * @transcript: T of DESIGN §3, in its order
 * @extra: (nullable): a last line after T (the deviceId, for "approved")
 *
 * Returns: (transfer full) (nullable): J("chaperone-pair-v1", label, T…, extra)
 */
char *
chp_pair_signed_text (const char          *label,
                      const char * const   transcript[10],
                      const char          *extra,
                      GError             **error)
{
  const char *fields[14] = { "chaperone-pair-v1", label };
  guint n = 2;

  g_return_val_if_fail (label != NULL, NULL);

  for (guint i = 0; i < 10; i++)
    {
      g_return_val_if_fail (transcript[i] != NULL, NULL);
      fields[n++] = transcript[i];
    }
  if (extra != NULL)
    fields[n++] = extra;
  fields[n] = NULL;

  return chp_signed_text (fields, error);
}

char *
chp_pair_code (const char * const   transcript[10],
               GError             **error)
{
  g_autofree char *text = NULL;
  guint8 digest[32];
  guint64 value = 0;

  if (!(text = chp_pair_signed_text ("code", transcript, NULL, error)))
    return NULL;

  chp_sha256 (text, strlen (text), digest);
  for (guint i = 0; i < 8; i++)
    value = (value << 8) | digest[i];

  return g_strdup_printf ("%06u", (guint) (value % 1000000));
}

char *
chp_pair_code_display (const char *code)
{
  g_return_val_if_fail (code != NULL && strlen (code) == 6, NULL);

  return g_strdup_printf ("%.3s %.3s", code, code + 3);
}

char *
chp_auth_challenge_text (const char  *engine_id,
                         const char  *engine_instance_id,
                         const char  *connection_id,
                         const char  *challenge,
                         gint64       timestamp,
                         GError     **error)
{
  g_autofree char *stamp = g_strdup_printf ("%" G_GINT64_FORMAT, timestamp);
  const char *fields[] = {
    "chaperone-auth-v1", "engine-challenge", engine_id, engine_instance_id, connection_id,
    challenge, stamp, NULL
  };

  g_return_val_if_fail (engine_id && engine_instance_id && connection_id && challenge, NULL);

  return chp_signed_text (fields, error);
}

static int
compare_strings (gconstpointer a,
                 gconstpointer b)
{
  return strcmp (*(const char * const *) a, *(const char * const *) b);
}

/* Capabilities are signed sorted and joined with ",". Each must be printable ASCII without
 * a comma, so byte order here and JavaScript's UTF-16 sort agree and no join is ambiguous. */
char *
chp_auth_client_text (const char  *origin,
                      const char  *engine_id,
                      const char  *engine_instance_id,
                      const char  *connection_id,
                      const char  *challenge,
                      const char  *installation_id,
                      JsonArray   *capabilities,
                      GError     **error)
{
  g_autoptr(GPtrArray) caps = g_ptr_array_new ();
  g_autofree char *joined = NULL;
  guint n;

  g_return_val_if_fail (capabilities != NULL, NULL);

  n = json_array_get_length (capabilities);
  if (n > 256)
    {
      g_set_error_literal (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_FIELD,
                           "Too many capabilities");
      return NULL;
    }

  for (guint i = 0; i < n; i++)
    {
      JsonNode *node = json_array_get_element (capabilities, i);
      const char *cap;

      if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
        {
          g_set_error_literal (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_FIELD,
                               "Capabilities must be strings");
          return NULL;
        }

      cap = json_node_get_string (node);
      for (const char *p = cap; *p != '\0'; p++)
        {
          if (*p < 0x21 || *p > 0x7e || *p == ',')
            {
              g_set_error_literal (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_FIELD,
                                   "Capabilities must be printable ASCII without commas");
              return NULL;
            }
        }
      if (*cap == '\0')
        {
          g_set_error_literal (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_FIELD,
                               "A capability is empty");
          return NULL;
        }
      g_ptr_array_add (caps, (gpointer) cap);
    }

  g_ptr_array_sort (caps, compare_strings);
  g_ptr_array_add (caps, NULL);
  joined = g_strjoinv (",", (char **) caps->pdata);

  {
    const char *fields[] = {
      "chaperone-auth-v1", "client-auth", origin, engine_id, engine_instance_id, connection_id,
      challenge, installation_id, joined, NULL
    };

    return chp_signed_text (fields, error);
  }
}
