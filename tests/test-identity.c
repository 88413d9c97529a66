/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-identity.c: the engine key is made once, kept private, and refused when exposed. */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

#include "chp-crypto.h"
#include "chp-identity.h"

static char *
make_tmp (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("chp-identity-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

static void
test_create_and_reload (void)
{
  g_autofree char *tmp = make_tmp ();
  g_autofree char *dir = g_build_filename (tmp, "chaperone", NULL);
  g_autofree char *path = g_build_filename (dir, "engine-key.pem", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpIdentity) first = chp_identity_load_or_create (dir, &error);
  g_autoptr(ChpIdentity) second = NULL;
  g_autofree char *pem = NULL;
  struct stat st;

  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (chp_identity_get_engine_id (first), "sha256:"));
  g_assert_cmpuint (strlen (chp_identity_get_engine_id (first)), ==, 7 + 64);

  g_assert_cmpint (g_stat (dir, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0700);
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);

  g_assert_true (g_file_get_contents (path, &pem, NULL, NULL));
  g_assert_true (g_str_has_prefix (pem, "-----BEGIN PRIVATE KEY-----"));

  second = chp_identity_load_or_create (dir, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (chp_identity_get_engine_id (second), ==, chp_identity_get_engine_id (first));

  /* What one signs, the other's public key verifies: it is the same key. */
  {
    g_autofree char *sig = chp_identity_sign (first, "x", NULL);

    g_assert_true (chp_verify_p1363 (chp_identity_get_x (second), chp_identity_get_y (second),
                                     "x", sig, NULL));
  }
}

static void
test_loose_file_mode (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "engine-key.pem", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpIdentity) identity = chp_identity_load_or_create (dir, &error);
  g_autoptr(ChpIdentity) again = NULL;
  g_autofree char *fix = NULL;

  g_assert_no_error (error);
  g_clear_object (&identity);

  g_assert_cmpint (g_chmod (path, 0644), ==, 0);
  again = chp_identity_load_or_create (dir, &error);
  g_assert_null (again);
  g_assert_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_INSECURE_MODE);
  /* The message says how to fix it. */
  fix = g_strdup_printf ("chmod 600 %s", path);
  g_assert_nonnull (strstr (error->message, fix));
}

static void
test_loose_folder_mode (void)
{
  g_autofree char *dir = make_tmp ();
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpIdentity) identity = NULL;

  g_assert_cmpint (g_chmod (dir, 0755), ==, 0);
  identity = chp_identity_load_or_create (dir, &error);
  g_assert_null (identity);
  g_assert_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_INSECURE_MODE);
  g_assert_nonnull (strstr (error->message, "chmod 700"));
}

static void
test_corrupt_key (void)
{
  g_autofree char *dir = make_tmp ();
  g_autofree char *path = g_build_filename (dir, "engine-key.pem", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpIdentity) identity = NULL;

  g_assert_true (g_file_set_contents_full (path, "not a key", -1, G_FILE_SET_CONTENTS_NONE,
                                           0600, NULL));
  identity = chp_identity_load_or_create (dir, &error);
  g_assert_null (identity);
  g_assert_error (error, CHP_IDENTITY_ERROR, CHP_IDENTITY_ERROR_CORRUPT);

  /* Nothing was overwritten: the person decides what to do with their file. */
  {
    g_autofree char *contents = NULL;

    g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
    g_assert_cmpstr (contents, ==, "not a key");
  }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/identity/create-and-reload", test_create_and_reload);
  g_test_add_func ("/chaperone/identity/loose-file-mode", test_loose_file_mode);
  g_test_add_func ("/chaperone/identity/loose-folder-mode", test_loose_folder_mode);
  g_test_add_func ("/chaperone/identity/corrupt-key", test_corrupt_key);

  return g_test_run ();
}
