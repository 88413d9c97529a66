/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-identity.c: load or make the engine key (PKCS#8 PEM, 0600 in a 0700 folder) and sign with it. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-identity"

#include "chp-identity.h"

#include "chp-crypto.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct _ChpIdentity
{
  GObject parent_instance;

  gnutls_privkey_t key;
  char *x;
  char *y;
  char *engine_id;
  char *path;
};

G_DEFINE_FINAL_TYPE (ChpIdentity, chp_identity, G_TYPE_OBJECT)
G_DEFINE_QUARK (chp-identity-error-quark, chp_identity_error)

static void
chp_identity_finalize (GObject *object)
{
  ChpIdentity *self = CHP_IDENTITY (object);

  g_clear_pointer (&self->key, gnutls_privkey_deinit);
  g_clear_pointer (&self->x, g_free);
  g_clear_pointer (&self->y, g_free);
  g_clear_pointer (&self->engine_id, g_free);
  g_clear_pointer (&self->path, g_free);

  G_OBJECT_CLASS (chp_identity_parent_class)->finalize (object);
}

static void
chp_identity_class_init (ChpIdentityClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_identity_finalize;
}

static void
chp_identity_init (ChpIdentity *self)
{
}

/* GnuTLS hands coordinates back as big integers: sometimes with a leading zero
 * byte, sometimes shorter than 32 bytes. JWK wants exactly 32. */
static char *
coord_to_b64url (const gnutls_datum_t *d)
{
  guint8 buf[CHP_P256_COORD_LEN] = { 0 };
  const guint8 *p = d->data;
  gsize len = d->size;

  while (len > CHP_P256_COORD_LEN && *p == 0)
    {
      p++;
      len--;
    }
  g_assert (len <= CHP_P256_COORD_LEN);
  memcpy (buf + CHP_P256_COORD_LEN - len, p, len);

  return chp_b64url_encode (buf, sizeof buf);
}

static gboolean
identity_adopt_key (ChpIdentity       *self,
                    gnutls_privkey_t   key,
                    GError           **error)
{
  gnutls_ecc_curve_t curve;
  gnutls_datum_t x = { NULL, 0 }, y = { NULL, 0 };
  int ret;

  ret = gnutls_privkey_export_ecc_raw2 (key, &curve, &x, &y, NULL, 0);
  if (ret != 0 || curve != GNUTLS_ECC_CURVE_SECP256R1)
    {
      gnutls_free (x.data);
      gnutls_free (y.data);
      g_set_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_CORRUPT,
                   _("The engine key is not a P-256 key"));
      return FALSE;
    }

  self->key = key;
  self->x = coord_to_b64url (&x);
  self->y = coord_to_b64url (&y);
  self->engine_id = chp_engine_id_for_key (self->x, self->y, NULL);
  gnutls_free (x.data);
  gnutls_free (y.data);

  return TRUE;
}

static gnutls_privkey_t
generate_key (void)
{
  gnutls_privkey_t key = NULL;

  if (gnutls_privkey_init (&key) != 0 ||
      gnutls_privkey_generate2 (key, GNUTLS_PK_ECDSA,
                                GNUTLS_CURVE_TO_BITS (GNUTLS_ECC_CURVE_SECP256R1), 0, NULL, 0) != 0)
    g_error ("Could not generate a P-256 key");

  return key;
}

static gboolean
check_mode (const char  *path,
            mode_t       wanted,
            gboolean     is_dir,
            GError     **error)
{
  struct stat st;

  if (g_lstat (path, &st) != 0)
    {
      int saved = errno;

      g_set_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_IO,
                   _("Cannot read %s: %s"), path, g_strerror (saved));
      return FALSE;
    }

  if (is_dir ? !S_ISDIR (st.st_mode) : !S_ISREG (st.st_mode))
    {
      g_set_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_INSECURE_MODE,
                   is_dir ? _("%s must be a folder") : _("%s must be a regular file"), path);
      return FALSE;
    }

  if (st.st_uid != getuid ())
    {
      g_set_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_INSECURE_MODE,
                   _("%s belongs to another user; Chaperone uses only its own files"), path);
      return FALSE;
    }

  /* Group or other access to the key would let another account sign as this engine. */
  if ((st.st_mode & 077) != 0)
    {
      g_set_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_INSECURE_MODE,
                   _("%s is readable by other users (mode %04o). Fix it with: chmod %o %s"),
                   path, (guint) (st.st_mode & 07777), (guint) wanted, path);
      return FALSE;
    }

  return TRUE;
}

static ChpIdentity *
identity_load (const char  *path,
               GError     **error)
{
  g_autoptr(ChpIdentity) self = NULL;
  g_autofree char *contents = NULL;
  gsize len = 0;
  gnutls_x509_privkey_t x509 = NULL;
  gnutls_privkey_t key = NULL;
  gnutls_datum_t datum;
  g_autoptr(GError) local_error = NULL;

  if (!g_file_get_contents (path, &contents, &len, &local_error))
    {
      g_set_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_IO,
                   _("Cannot read the engine key %s: %s"), path, local_error->message);
      return NULL;
    }

  datum = (gnutls_datum_t) { (guint8 *) contents, len };
  if (gnutls_x509_privkey_init (&x509) != 0)
    g_error ("Out of memory");

  if (gnutls_x509_privkey_import_pkcs8 (x509, &datum, GNUTLS_X509_FMT_PEM, NULL,
                                        GNUTLS_PKCS_PLAIN) != 0 ||
      gnutls_privkey_init (&key) != 0 ||
      gnutls_privkey_import_x509 (key, x509, GNUTLS_PRIVKEY_IMPORT_AUTO_RELEASE) != 0)
    {
      if (key != NULL)
        gnutls_privkey_deinit (key);
      gnutls_x509_privkey_deinit (x509);
      explicit_bzero (contents, len);
      g_set_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_CORRUPT,
                   _("The engine key %s is not a PKCS#8 PEM key. Move it away to make a new "
                     "one; every paired browser will then need to pair again."), path);
      return NULL;
    }
  explicit_bzero (contents, len);

  self = g_object_new (CHP_TYPE_IDENTITY, NULL);
  if (!identity_adopt_key (self, key, error))
    {
      gnutls_privkey_deinit (key);
      return NULL;
    }
  self->path = g_strdup (path);

  return g_steal_pointer (&self);
}

static gboolean
identity_save (gnutls_privkey_t   key,
               const char        *path,
               GError           **error)
{
  gnutls_x509_privkey_t x509 = NULL;
  gnutls_datum_t pem = { NULL, 0 };
  g_autofree char *tmp = g_strconcat (path, ".new", NULL);
  gboolean ok = FALSE;
  int fd;

  if (gnutls_privkey_export_x509 (key, &x509) != 0 ||
      gnutls_x509_privkey_export2_pkcs8 (x509, GNUTLS_X509_FMT_PEM, NULL,
                                         GNUTLS_PKCS_PLAIN, &pem) != 0)
    {
      g_clear_pointer (&x509, gnutls_x509_privkey_deinit);
      g_set_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_FAILED,
                   _("Could not encode the engine key"));
      return FALSE;
    }
  gnutls_x509_privkey_deinit (x509);

  /* Created 0600 from the start (never chmod after the fact) and renamed into
   * place only once it is complete on disk. */
  fd = g_open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd >= 0)
    {
      gsize done = 0;

      while (done < pem.size)
        {
          gssize n = write (fd, pem.data + done, pem.size - done);

          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            break;
          done += n;
        }

      ok = done == pem.size && fsync (fd) == 0;
      ok = close (fd) == 0 && ok;
      ok = ok && g_rename (tmp, path) == 0;
    }

  if (!ok)
    {
      int saved = errno;

      g_unlink (tmp);
      g_set_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_IO,
                   _("Could not write the engine key %s: %s"), path, g_strerror (saved));
    }

  explicit_bzero (pem.data, pem.size);
  gnutls_free (pem.data);

  return ok;
}

/**
 * chp_identity_load_or_create:
 * @data_dir: the folder that holds `engine-key.pem` (made 0700 if missing)
 *
 * Returns: (transfer full): the identity, or %NULL with a message that says how to fix it.
 */
ChpIdentity *
chp_identity_load_or_create (const char  *data_dir,
                             GError     **error)
{
  g_autofree char *path = NULL;
  g_autoptr(ChpIdentity) self = NULL;
  gnutls_privkey_t key;

  g_return_val_if_fail (data_dir != NULL, NULL);

  if (g_mkdir_with_parents (data_dir, 0700) != 0)
    {
      int saved = errno;

      g_set_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_IO,
                   _("Cannot create the data folder %s: %s"), data_dir, g_strerror (saved));
      return NULL;
    }

  if (!check_mode (data_dir, 0700, TRUE, error))
    return NULL;

  path = g_build_filename (data_dir, "engine-key.pem", NULL);
  if (g_file_test (path, G_FILE_TEST_EXISTS))
    {
      if (!check_mode (path, 0600, FALSE, error))
        return NULL;
      return identity_load (path, error);
    }

  key = generate_key ();
  if (!identity_save (key, path, error))
    {
      gnutls_privkey_deinit (key);
      return NULL;
    }

  self = g_object_new (CHP_TYPE_IDENTITY, NULL);
  if (!identity_adopt_key (self, key, error))
    {
      gnutls_privkey_deinit (key);
      return NULL;
    }
  self->path = g_steal_pointer (&path);
  g_info ("Made a new engine identity %s", self->engine_id);

  return g_steal_pointer (&self);
}

/* For tests and vectors: an identity from raw JWK coordinates (x, y, d). */
ChpIdentity *
chp_identity_new_from_raw (const char  *x,
                           const char  *y,
                           const char  *d,
                           GError     **error)
{
  g_autoptr(GBytes) bx = chp_b64url_decode (x, NULL);
  g_autoptr(GBytes) by = chp_b64url_decode (y, NULL);
  g_autoptr(GBytes) bd = chp_b64url_decode (d, NULL);
  g_autoptr(ChpIdentity) self = NULL;
  gnutls_privkey_t key = NULL;
  gnutls_datum_t dx, dy, dd;

  if (bx == NULL || by == NULL || bd == NULL)
    {
      g_set_error_literal (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_CORRUPT,
                           "Bad key encoding");
      return NULL;
    }

  dx = (gnutls_datum_t) { (guint8 *) g_bytes_get_data (bx, NULL), g_bytes_get_size (bx) };
  dy = (gnutls_datum_t) { (guint8 *) g_bytes_get_data (by, NULL), g_bytes_get_size (by) };
  dd = (gnutls_datum_t) { (guint8 *) g_bytes_get_data (bd, NULL), g_bytes_get_size (bd) };

  if (gnutls_privkey_init (&key) != 0 ||
      gnutls_privkey_import_ecc_raw (key, GNUTLS_ECC_CURVE_SECP256R1, &dx, &dy, &dd) != 0 ||
      gnutls_privkey_verify_params (key) != 0)
    {
      if (key != NULL)
        gnutls_privkey_deinit (key);
      g_set_error_literal (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_CORRUPT,
                           "The key is not a valid P-256 key");
      return NULL;
    }

  self = g_object_new (CHP_TYPE_IDENTITY, NULL);
  if (!identity_adopt_key (self, key, error))
    {
      gnutls_privkey_deinit (key);
      return NULL;
    }

  return g_steal_pointer (&self);
}

/* A key that lives only in memory: the test client and benchmarks play a browser with it. */
ChpIdentity *
chp_identity_new_ephemeral (void)
{
  ChpIdentity *self = g_object_new (CHP_TYPE_IDENTITY, NULL);
  g_autoptr(GError) error = NULL;

  if (!identity_adopt_key (self, generate_key (), &error))
    g_error ("%s", error->message);

  return self;
}

const char *
chp_identity_get_engine_id (ChpIdentity *self)
{
  g_return_val_if_fail (CHP_IS_IDENTITY (self), NULL);

  return self->engine_id;
}

const char *
chp_identity_get_x (ChpIdentity *self)
{
  g_return_val_if_fail (CHP_IS_IDENTITY (self), NULL);

  return self->x;
}

const char *
chp_identity_get_y (ChpIdentity *self)
{
  g_return_val_if_fail (CHP_IS_IDENTITY (self), NULL);

  return self->y;
}

const char *
chp_identity_get_path (ChpIdentity *self)
{
  g_return_val_if_fail (CHP_IS_IDENTITY (self), NULL);

  return self->path;
}

JsonNode *
chp_identity_dup_public_jwk (ChpIdentity *self)
{
  g_return_val_if_fail (CHP_IS_IDENTITY (self), NULL);

  return chp_jwk_new (self->x, self->y);
}

/* Returns the P1363 signature (r||s, 64 bytes) as base64url, the format WebCrypto verifies. */
char *
chp_identity_sign (ChpIdentity  *self,
                   const char   *text,
                   GError      **error)
{
  gnutls_datum_t data, der = { NULL, 0 }, r = { NULL, 0 }, s = { NULL, 0 };
  guint8 raw[CHP_P1363_SIG_LEN] = { 0 };
  int ret;

  g_return_val_if_fail (CHP_IS_IDENTITY (self), NULL);
  g_return_val_if_fail (text != NULL, NULL);

  data = (gnutls_datum_t) { (guint8 *) text, strlen (text) };
  ret = gnutls_privkey_sign_data (self->key, GNUTLS_DIG_SHA256, 0, &data, &der);
  if (ret == 0)
    ret = gnutls_decode_rs_value (&der, &r, &s);
  gnutls_free (der.data);

  if (ret == 0)
    {
      gnutls_datum_t *parts[2] = { &r, &s };

      for (guint i = 0; i < 2; i++)
        {
          const guint8 *p = parts[i]->data;
          gsize len = parts[i]->size;

          while (len > 32 && *p == 0)
            {
              p++;
              len--;
            }
          g_assert (len <= 32);
          memcpy (raw + i * 32 + (32 - len), p, len);
        }
    }
  gnutls_free (r.data);
  gnutls_free (s.data);

  if (ret != 0)
    {
      g_set_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_FAILED,
                   "Signing failed: %s", gnutls_strerror (ret));
      return NULL;
    }

  return chp_b64url_encode (raw, sizeof raw);
}
