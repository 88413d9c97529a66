/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-crypto.c: the shared vectors (the JSON files in tests/vectors), checked against GnuTLS exactly as
 * tests/js/vectors.test.mjs checks them against WebCrypto. */
#include "config.h"

#include <json-glib/json-glib.h>
#include <string.h>

#include "chp-crypto.h"
#include "chp-identity.h"

static JsonObject *
load_vectors (const char *name,
              JsonParser **parser_out)
{
  const char *dir = g_getenv ("CHAPERONE_VECTORS_DIR");
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  JsonParser *parser = json_parser_new ();

  g_assert_nonnull (dir);
  path = g_build_filename (dir, name, NULL);
  json_parser_load_from_file (parser, path, &error);
  g_assert_no_error (error);
  *parser_out = parser;

  return json_node_get_object (json_parser_get_root (parser));
}

static char *
hex_of (const guint8 *data,
        gsize         len)
{
  GString *s = g_string_new (NULL);

  for (gsize i = 0; i < len; i++)
    g_string_append_printf (s, "%02x", data[i]);

  return g_string_free (s, FALSE);
}

static GBytes *
bytes_of_hex (const char *hex)
{
  gsize len = strlen (hex) / 2;
  guint8 *data = g_malloc (len + 1);

  for (gsize i = 0; i < len; i++)
    data[i] = (g_ascii_xdigit_value (hex[2 * i]) << 4) | g_ascii_xdigit_value (hex[2 * i + 1]);

  return g_bytes_new_take (data, len);
}

static const char **
strings_of (JsonArray *array)
{
  guint n = json_array_get_length (array);
  const char **items = g_new0 (const char *, n + 1);

  for (guint i = 0; i < n; i++)
    items[i] = json_array_get_string_element (array, i);

  return items;
}

static ChpIdentity *
key_of (JsonObject *file,
        const char *name)
{
  JsonObject *jwk = json_object_get_object_member (
    json_object_get_object_member (json_object_get_object_member (file, "keys"), name), "jwk");
  g_autoptr(GError) error = NULL;
  ChpIdentity *key = chp_identity_new_from_raw (json_object_get_string_member (jwk, "x"),
                                                json_object_get_string_member (jwk, "y"),
                                                json_object_get_string_member (jwk, "d"),
                                                &error);

  g_assert_no_error (error);
  g_assert_cmpstr (chp_identity_get_x (key), ==, json_object_get_string_member (jwk, "x"));
  g_assert_cmpstr (chp_identity_get_y (key), ==, json_object_get_string_member (jwk, "y"));

  return key;
}

static void
check_signature (ChpIdentity *key,
                 const char  *text,
                 const char  *signature,
                 gboolean     valid)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *own = NULL;
  gboolean ok = chp_verify_p1363 (chp_identity_get_x (key), chp_identity_get_y (key), text,
                                  signature, &error);

  g_assert_cmpint (ok, ==, valid);
  if (!valid)
    g_assert_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_BAD_SIGNATURE);

  /* And GnuTLS's own signature over the same text verifies the same way WebCrypto's does. */
  own = chp_identity_sign (key, text, NULL);
  g_assert_nonnull (own);
  g_assert_cmpuint (strlen (own), ==, 86);
  g_assert_true (chp_verify_p1363 (chp_identity_get_x (key), chp_identity_get_y (key), text,
                                   own, NULL));
}

static void
check_refuse (JsonObject *v)
{
  g_autofree const char **items = strings_of (json_object_get_array_member (v, "items"));
  g_autoptr(GError) error = NULL;
  g_autofree char *text = chp_signed_text (items, &error);

  g_assert_null (text);
  g_assert_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_FIELD);
}

static void
test_pairing_vectors (void)
{
  g_autoptr(JsonParser) parser = NULL;
  JsonObject *file = load_vectors ("pairing.json", &parser);
  JsonArray *vectors = json_object_get_array_member (file, "vectors");
  guint checked = 0;

  for (guint i = 0; i < json_array_get_length (vectors); i++)
    {
      JsonObject *v = json_array_get_object_element (vectors, i);
      const char *kind = json_object_get_string_member (v, "kind");

      g_test_message ("vector %s", json_object_get_string_member (v, "name"));

      if (g_str_equal (kind, "public-key"))
        {
          g_autoptr(ChpIdentity) key = key_of (file, json_object_get_string_member (v, "key"));
          g_autofree char *fingerprint = chp_key_fingerprint (chp_identity_get_x (key),
                                                              chp_identity_get_y (key));

          g_assert_cmpstr (chp_identity_get_engine_id (key), ==,
                           json_object_get_string_member (v, "sha256Id"));
          g_assert_cmpstr (fingerprint, ==, json_object_get_string_member (v, "fingerprint"));
        }
      else if (g_str_equal (kind, "pairing"))
        {
          JsonObject *in = json_object_get_object_member (v, "inputs");
          JsonObject *ex = json_object_get_object_member (v, "expected");
          g_autoptr(ChpIdentity) ext = key_of (file, json_object_get_string_member (in, "extensionKey"));
          g_autoptr(ChpIdentity) eng = key_of (file, json_object_get_string_member (in, "engineKey"));
          g_autofree const char **t = strings_of (json_object_get_array_member (ex, "transcript"));
          g_autofree char *commitment = NULL;
          g_autofree char *code = NULL;
          g_autofree char *display = NULL;
          g_autofree char *reveal = NULL;
          g_autofree char *approved = NULL;

          g_assert_cmpstr (chp_identity_get_engine_id (eng), ==,
                           json_object_get_string_member (ex, "engineId"));

          commitment = chp_pair_commitment (json_object_get_string_member (in, "nonceC"),
                                            chp_identity_get_x (ext), chp_identity_get_y (ext), NULL);
          g_assert_cmpstr (commitment, ==, json_object_get_string_member (ex, "commitment"));

          /* The transcript is built from the inputs in the order DESIGN §3 gives. */
          g_assert_cmpstr (t[0], ==, json_object_get_string_member (in, "requestId"));
          g_assert_cmpstr (t[1], ==, json_object_get_string_member (in, "origin"));
          g_assert_cmpstr (t[2], ==, json_object_get_string_member (in, "installationId"));
          g_assert_cmpstr (t[3], ==, chp_identity_get_x (ext));
          g_assert_cmpstr (t[4], ==, chp_identity_get_y (ext));
          g_assert_cmpstr (t[5], ==, chp_identity_get_engine_id (eng));
          g_assert_cmpstr (t[6], ==, chp_identity_get_x (eng));
          g_assert_cmpstr (t[7], ==, chp_identity_get_y (eng));
          g_assert_cmpstr (t[8], ==, json_object_get_string_member (in, "nonceC"));
          g_assert_cmpstr (t[9], ==, json_object_get_string_member (in, "nonceE"));

          code = chp_pair_code (t, NULL);
          g_assert_cmpstr (code, ==, json_object_get_string_member (ex, "code"));
          display = chp_pair_code_display (code);
          g_assert_cmpstr (display, ==, json_object_get_string_member (ex, "codeDisplay"));

          reveal = chp_pair_signed_text ("reveal", t, NULL, NULL);
          g_assert_cmpstr (reveal, ==, json_object_get_string_member (ex, "revealText"));
          check_signature (ext, reveal, json_object_get_string_member (ex, "revealSignature"), TRUE);

          approved = chp_pair_signed_text ("approved", t,
                                           json_object_get_string_member (in, "deviceId"), NULL);
          g_assert_cmpstr (approved, ==, json_object_get_string_member (ex, "approvedText"));
          check_signature (eng, approved, json_object_get_string_member (ex, "approvedSignature"),
                           TRUE);
        }
      else if (g_str_equal (kind, "signature"))
        {
          g_autoptr(ChpIdentity) key = key_of (file, json_object_get_string_member (v, "key"));

          check_signature (key, json_object_get_string_member (v, "text"),
                           json_object_get_string_member (v, "signature"),
                           json_object_get_boolean_member (v, "valid"));
        }
      else if (g_str_equal (kind, "commitment"))
        {
          g_autoptr(ChpIdentity) key = key_of (file, json_object_get_string_member (v, "key"));
          g_autofree char *commitment =
            chp_pair_commitment (json_object_get_string_member (v, "nonceC"),
                                 chp_identity_get_x (key), chp_identity_get_y (key), NULL);

          g_assert_cmpstr (commitment, ==, json_object_get_string_member (v, "commitment"));
          g_assert_cmpint (g_str_equal (commitment, json_object_get_string_member (v, "matches")),
                           ==, json_object_get_boolean_member (v, "equal"));
        }
      else if (g_str_equal (kind, "refuse"))
        check_refuse (v);
      else
        g_error ("Unknown vector kind %s", kind);

      checked++;
    }

  g_assert_cmpuint (checked, >, 5);
}

static void
test_auth_vectors (void)
{
  g_autoptr(JsonParser) parser = NULL;
  JsonObject *file = load_vectors ("auth.json", &parser);
  JsonArray *vectors = json_object_get_array_member (file, "vectors");

  for (guint i = 0; i < json_array_get_length (vectors); i++)
    {
      JsonObject *v = json_array_get_object_element (vectors, i);
      const char *kind = json_object_get_string_member (v, "kind");

      g_test_message ("vector %s", json_object_get_string_member (v, "name"));

      if (g_str_equal (kind, "engine-challenge"))
        {
          JsonObject *in = json_object_get_object_member (v, "inputs");
          JsonObject *ex = json_object_get_object_member (v, "expected");
          g_autoptr(ChpIdentity) key = key_of (file, json_object_get_string_member (v, "key"));
          g_autofree char *text =
            chp_auth_challenge_text (json_object_get_string_member (in, "engineId"),
                                     json_object_get_string_member (in, "engineInstanceId"),
                                     json_object_get_string_member (in, "connectionId"),
                                     json_object_get_string_member (in, "challenge"),
                                     json_object_get_int_member (in, "timestamp"), NULL);

          g_assert_cmpstr (text, ==, json_object_get_string_member (ex, "text"));
          check_signature (key, text, json_object_get_string_member (ex, "signature"), TRUE);
        }
      else if (g_str_equal (kind, "client-auth"))
        {
          JsonObject *in = json_object_get_object_member (v, "inputs");
          JsonObject *ex = json_object_get_object_member (v, "expected");
          g_autoptr(ChpIdentity) key = key_of (file, json_object_get_string_member (v, "key"));
          g_autofree char *text =
            chp_auth_client_text (json_object_get_string_member (in, "origin"),
                                  json_object_get_string_member (in, "engineId"),
                                  json_object_get_string_member (in, "engineInstanceId"),
                                  json_object_get_string_member (in, "connectionId"),
                                  json_object_get_string_member (in, "challenge"),
                                  json_object_get_string_member (in, "installationId"),
                                  json_object_get_array_member (in, "capabilities"), NULL);

          g_assert_cmpstr (text, ==, json_object_get_string_member (ex, "text"));
          check_signature (key, text, json_object_get_string_member (ex, "signature"), TRUE);
        }
      else if (g_str_equal (kind, "signature"))
        {
          g_autoptr(ChpIdentity) key = key_of (file, json_object_get_string_member (v, "key"));

          check_signature (key, json_object_get_string_member (v, "text"),
                           json_object_get_string_member (v, "signature"),
                           json_object_get_boolean_member (v, "valid"));
        }
      else if (g_str_equal (kind, "refuse"))
        check_refuse (v);
      else
        g_error ("Unknown vector kind %s", kind);
    }
}

static void
test_encoding_vectors (void)
{
  g_autoptr(JsonParser) parser = NULL;
  JsonObject *file = load_vectors ("encoding.json", &parser);
  JsonArray *vectors = json_object_get_array_member (file, "vectors");

  for (guint i = 0; i < json_array_get_length (vectors); i++)
    {
      JsonObject *v = json_array_get_object_element (vectors, i);
      const char *kind = json_object_get_string_member (v, "kind");

      g_test_message ("vector %s", json_object_get_string_member (v, "name"));

      if (g_str_equal (kind, "b64url"))
        {
          g_autoptr(GBytes) raw = bytes_of_hex (json_object_get_string_member (v, "hex"));
          g_autofree char *text = chp_b64url_encode (g_bytes_get_data (raw, NULL),
                                                     g_bytes_get_size (raw));
          g_autoptr(GBytes) back = NULL;

          g_assert_cmpstr (text, ==, json_object_get_string_member (v, "text"));
          back = chp_b64url_decode (text, NULL);
          g_assert_nonnull (back);
          g_assert_true (g_bytes_equal (back, raw));
        }
      else if (g_str_equal (kind, "b64url-invalid"))
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(GBytes) back = chp_b64url_decode (json_object_get_string_member (v, "text"),
                                                      &error);

          g_assert_null (back);
          g_assert_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_ENCODING);
        }
      else if (g_str_equal (kind, "sha256"))
        {
          guint8 digest[32];
          g_autofree char *hex = NULL;

          if (json_object_has_member (v, "hex"))
            {
              g_autoptr(GBytes) raw = bytes_of_hex (json_object_get_string_member (v, "hex"));

              chp_sha256 (g_bytes_get_data (raw, NULL), g_bytes_get_size (raw), digest);
            }
          else
            {
              const char *text = json_object_get_string_member (v, "text");

              chp_sha256 (text, strlen (text), digest);
            }
          hex = hex_of (digest, 32);
          g_assert_cmpstr (hex, ==, json_object_get_string_member (v, "digestHex"));
        }
      else if (g_str_equal (kind, "join"))
        {
          g_autofree const char **items = strings_of (json_object_get_array_member (v, "items"));
          g_autofree char *text = chp_signed_text (items, NULL);

          g_assert_cmpstr (text, ==, json_object_get_string_member (v, "text"));
        }
      else if (g_str_equal (kind, "refuse"))
        check_refuse (v);
      else if (g_str_equal (kind, "code"))
        {
          g_autofree const char **t = strings_of (json_object_get_array_member (v, "transcript"));
          JsonObject *ex = json_object_get_object_member (v, "expected");
          g_autofree char *code = chp_pair_code (t, NULL);
          g_autofree char *display = chp_pair_code_display (code);

          g_assert_cmpstr (code, ==, json_object_get_string_member (ex, "code"));
          g_assert_cmpstr (display, ==, json_object_get_string_member (ex, "codeDisplay"));
        }
      else
        g_error ("Unknown vector kind %s", kind);
    }
}

static void
test_b64url_strict (void)
{
  const char *bad[] = { "A", "AA=", "A+", "A/", "AB", "AAA ", "\xc3\xa9" };

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GBytes) bytes = chp_b64url_decode (bad[i], &error);

      /* "AB" has a non-zero trailing bit: two spellings of one byte must not both pass. */
      g_assert_null (bytes);
      g_assert_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_ENCODING);
    }
}

/* The plain definition, a character at a time, to check the table-driven code against. */
static char *
reference_b64url (const guint8 *data,
                  gsize         len)
{
  static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  GString *out = g_string_new (NULL);
  guint32 bits = 0;
  guint n_bits = 0;

  for (gsize i = 0; i < len; i++)
    {
      bits = (bits << 8) | data[i];
      n_bits += 8;
      while (n_bits >= 6)
        {
          n_bits -= 6;
          g_string_append_c (out, alphabet[(bits >> n_bits) & 63]);
        }
    }
  if (n_bits > 0)
    g_string_append_c (out, alphabet[(bits << (6 - n_bits)) & 63]);

  return g_string_free (out, FALSE);
}

/* Every length around the word-at-a-time loops' edges, random bytes: encoding matches the
 * definition and decodes back, into a buffer of exactly the right size. */
static void
test_b64url_lengths (void)
{
  g_autoptr(GRand) rand = g_rand_new_with_seed (4648);

  for (gsize len = 0; len < 200; len++)
    {
      g_autofree guint8 *data = g_malloc (len + 1);
      g_autofree char *text = NULL;
      g_autofree char *expected = NULL;
      g_autofree guint8 *back = NULL;

      for (gsize i = 0; i < len; i++)
        data[i] = g_rand_int_range (rand, 0, 256);

      text = chp_b64url_encode (data, len);
      expected = reference_b64url (data, len);
      g_assert_cmpstr (text, ==, expected);
      g_assert_cmpuint (strlen (text), ==, chp_b64url_encoded_len (len));

      /* Exactly len bytes: a store past the end is an ASan error in the sanitizer build. */
      back = g_malloc (MAX (len, 1));
      g_assert_true (chp_b64url_decode_to (text, strlen (text), back, len, NULL));
      g_assert_cmpmem (back, len, data, len);
    }
}

/* A character outside the alphabet, or the standard alphabet's, at every offset of a long text
 * (inside the two-quad loop, the quad loop and the tail) is refused with its offset; so are
 * set trailing bits after a long run. */
static void
test_b64url_strict_long (void)
{
  static const char bad[] = { '+', '/', '=', ' ', '\0', '\x80', '"', '.' };
  g_autofree guint8 *out = g_malloc (64);

  for (gsize len = 2; len < 80; len++)
    {
      if (len % 4 == 1)
        continue;

      for (gsize at = 0; at < len; at++)
        for (guint k = 0; k < G_N_ELEMENTS (bad); k++)
          {
            g_autofree char *text = g_strnfill (len, 'A');
            g_autoptr(GError) error = NULL;
            g_autofree char *offset = g_strdup_printf ("offset %" G_GSIZE_FORMAT, at);

            text[at] = bad[k];
            g_assert_false (chp_b64url_decode_to (text, len, out,
                                                  len / 4 * 3 + (len % 4 ? len % 4 - 1 : 0),
                                                  &error));
            g_assert_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_ENCODING);
            g_assert_nonnull (strstr (error->message, offset));
          }
    }

  /* "...AB": 12 bits with the low four set. "...AAB": 18 bits with the low two set. */
  for (gsize len = 60; len < 64; len++)
    {
      g_autofree char *two = g_strnfill (len * 4 + 2, 'A');
      g_autofree char *three = g_strnfill (len * 4 + 3, 'A');
      g_autoptr(GError) error = NULL;

      two[len * 4 + 1] = 'B';
      three[len * 4 + 2] = 'B';
      g_assert_null (chp_b64url_decode (two, &error));
      g_assert_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_ENCODING);
      g_clear_error (&error);
      g_assert_null (chp_b64url_decode (three, &error));
      g_assert_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_ENCODING);
    }
}

static void
test_signature_shape (void)
{
  g_autoptr(ChpIdentity) key = chp_identity_new_ephemeral ();
  g_autofree char *sig = chp_identity_sign (key, "hello", NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *truncated = g_strndup (sig, 80);

  g_assert_true (chp_verify_p1363 (chp_identity_get_x (key), chp_identity_get_y (key), "hello",
                                   sig, NULL));
  g_assert_false (chp_verify_p1363 (chp_identity_get_x (key), chp_identity_get_y (key), "hellO",
                                    sig, NULL));
  g_assert_false (chp_verify_p1363 (chp_identity_get_x (key), chp_identity_get_y (key), "hello",
                                    truncated, &error));
  g_assert_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_BAD_SIGNATURE);

  /* Many signatures: the r or s with a high bit or a leading zero byte must round-trip. */
  for (guint i = 0; i < 200; i++)
    {
      g_autofree char *text = g_strdup_printf ("message %u", i);
      g_autofree char *s = chp_identity_sign (key, text, NULL);

      g_assert_true (chp_verify_p1363 (chp_identity_get_x (key), chp_identity_get_y (key), text,
                                       s, NULL));
    }
}

static void
test_jwk (void)
{
  g_autoptr(ChpIdentity) key = chp_identity_new_ephemeral ();
  g_autoptr(JsonNode) jwk = chp_identity_dup_public_jwk (key);
  JsonObject *o = json_node_get_object (jwk);
  g_autofree char *x = NULL, *y = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (chp_jwk_read (o, &x, &y, NULL));
  g_assert_cmpstr (x, ==, chp_identity_get_x (key));

  json_object_set_string_member (o, "d", "AAAA");
  g_assert_false (chp_jwk_read (o, &x, &y, &error));
  g_assert_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_BAD_KEY);
  g_clear_error (&error);

  json_object_remove_member (o, "d");
  json_object_set_string_member (o, "crv", "P-384");
  g_assert_false (chp_jwk_read (o, &x, &y, &error));
  g_assert_error (error, CHP_CRYPTO_ERROR, CHP_CRYPTO_ERROR_BAD_KEY);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/crypto/vectors/pairing", test_pairing_vectors);
  g_test_add_func ("/chaperone/crypto/vectors/auth", test_auth_vectors);
  g_test_add_func ("/chaperone/crypto/vectors/encoding", test_encoding_vectors);
  g_test_add_func ("/chaperone/crypto/b64url-strict", test_b64url_strict);
  g_test_add_func ("/chaperone/crypto/b64url-lengths", test_b64url_lengths);
  g_test_add_func ("/chaperone/crypto/b64url-strict-long", test_b64url_strict_long);
  g_test_add_func ("/chaperone/crypto/signature-shape", test_signature_shape);
  g_test_add_func ("/chaperone/crypto/jwk", test_jwk);

  return g_test_run ();
}
