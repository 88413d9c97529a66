/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-autostart.c: "Start at login" writes exactly the entry a session needs, under the
 * person's XDG_CONFIG_HOME, reads back what is there, and copes with files it did not write. */
#include "config.h"

#include "chp-autostart.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <sys/stat.h>

static char *
expected_path (void)
{
  /* G_TEST_OPTION_ISOLATE_DIRS gives each test a fresh XDG_CONFIG_HOME under the temporary
   * folder (through g_get_user_config_dir(), which the code reads too): never the real one. */
  const char *config_home = g_get_user_config_dir ();

  g_assert_true (g_str_has_prefix (config_home, g_get_tmp_dir ()));

  return g_build_filename (config_home, "autostart", APP_ID ".desktop", NULL);
}

static void
write_file (const char *path,
            const char *contents)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

static void
test_enable_writes_entry (void)
{
  g_autofree char *path = expected_path ();
  g_autofree char *actual_path = chp_autostart_get_path ();
  g_autofree char *contents = NULL;
  g_autofree char *exec = NULL;
  g_autoptr(GKeyFile) key_file = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  GStatBuf st;
  mode_t old_umask;

  g_assert_cmpstr (actual_path, ==, path);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_false (chp_autostart_is_enabled ());

  /* A strict umask must not make the entry unreadable to the session's tools. */
  old_umask = umask (077);
  g_assert_true (chp_autostart_set_enabled (TRUE, &error));
  umask (old_umask);
  g_assert_no_error (error);

  g_assert_true (chp_autostart_is_enabled ());
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_true (S_ISREG (st.st_mode));
  g_assert_cmpint (st.st_mode & 07777, ==, 0644);

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (contents, ==,
                   "[Desktop Entry]\n"
                   "Type=Application\n"
                   "Name=Chaperone\n"
                   "Comment=Keep the bridge to your browsers open in the background\n"
                   "Exec=chaperone --background\n"
                   "Icon=io.github.chaperone.Chaperone\n"
                   "Terminal=false\n"
                   "NoDisplay=true\n"
                   "X-GNOME-Autostart-enabled=true\n");

  g_key_file_load_from_file (key_file, path, G_KEY_FILE_NONE, &error);
  g_assert_no_error (error);
  exec = g_key_file_get_string (key_file, "Desktop Entry", "Exec", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (exec, ==, "chaperone --background");

  /* Enabling twice is harmless and leaves the same file. */
  g_assert_true (chp_autostart_set_enabled (TRUE, &error));
  g_assert_no_error (error);
  g_assert_true (chp_autostart_is_enabled ());
}

static void
test_entry_validates (void)
{
  g_autofree char *validator = g_find_program_in_path ("desktop-file-validate");
  g_autofree char *path = expected_path ();
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  int status = -1;

  if (validator == NULL)
    {
      g_test_skip ("desktop-file-validate is not installed (Debian: desktop-file-utils)");
      return;
    }

  g_assert_true (chp_autostart_set_enabled (TRUE, &error));
  g_assert_no_error (error);

  {
    const char *argv[] = { validator, path, NULL };

    g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err, &status,
                  &error);
  }
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "");
  g_assert_cmpstr (err, ==, "");
  g_assert_true (g_spawn_check_wait_status (status, NULL));
}

static void
test_disable_removes_entry (void)
{
  g_autofree char *path = expected_path ();
  g_autoptr(GError) error = NULL;

  /* Nothing there yet: switching off is not an error. */
  g_assert_true (chp_autostart_set_enabled (FALSE, &error));
  g_assert_no_error (error);

  g_assert_true (chp_autostart_set_enabled (TRUE, &error));
  g_assert_no_error (error);
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_REGULAR));

  g_assert_true (chp_autostart_set_enabled (FALSE, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  g_assert_false (chp_autostart_is_enabled ());
}

static void
test_removed_by_hand (void)
{
  g_autofree char *path = expected_path ();
  g_autoptr(GError) error = NULL;

  g_assert_true (chp_autostart_set_enabled (TRUE, &error));
  g_assert_no_error (error);

  /* The file is the truth: deleted behind our back, the state reads off. */
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_false (chp_autostart_is_enabled ());
}

static void
test_malformed_entry (void)
{
  g_autofree char *path = expected_path ();
  g_autoptr(GError) error = NULL;

  write_file (path, "this is not a desktop entry\n\x01\x02");
  g_assert_false (chp_autostart_is_enabled ());

  /* Switching on replaces it with the real entry... */
  g_assert_true (chp_autostart_set_enabled (TRUE, &error));
  g_assert_no_error (error);
  g_assert_true (chp_autostart_is_enabled ());

  /* ...and switching off removes whatever is there. */
  write_file (path, "[Desktop Entry\nExec=");
  g_assert_false (chp_autostart_is_enabled ());
  g_assert_true (chp_autostart_set_enabled (FALSE, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
test_foreign_entries (void)
{
  g_autofree char *path = expected_path ();
  g_autoptr(GError) error = NULL;
  const struct
  {
    const char *contents;
    gboolean enabled;
  } cases[] = {
    /* Another program under our name is not "Chaperone starts at login". */
    { "[Desktop Entry]\nType=Application\nName=X\nExec=/usr/bin/something-else --background\n", FALSE },
    { "[Desktop Entry]\nType=Application\nName=X\n", FALSE },
    { "[Other Group]\nExec=chaperone --background\n", FALSE },
    /* The XDG ways of switching an entry off. */
    { "[Desktop Entry]\nType=Application\nName=X\nExec=chaperone --background\nHidden=true\n", FALSE },
    { "[Desktop Entry]\nType=Application\nName=X\nExec=chaperone\nX-GNOME-Autostart-enabled=false\n", FALSE },
    /* Entries written by another version, an absolute path or the Flatpak still start us. */
    { "[Desktop Entry]\nType=Application\nName=X\nExec=/usr/local/bin/chaperone --background\n", TRUE },
    { "[Desktop Entry]\nType=Application\nName=X\nExec=flatpak run " APP_ID " --background\n", TRUE },
    { "[Desktop Entry]\nType=Application\nName=X\nExec=flatpak run org.example.Other\n", FALSE },
    { "[Desktop Entry]\nType=Application\nName=X\nExec=\"unterminated\n", FALSE },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("case %" G_GSIZE_FORMAT ": %s", i, cases[i].contents);
      write_file (path, cases[i].contents);
      g_assert_cmpint (chp_autostart_is_enabled (), ==, cases[i].enabled);
    }

  g_assert_true (chp_autostart_set_enabled (FALSE, &error));
  g_assert_no_error (error);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

static void
test_symlink_replaced (void)
{
  g_autofree char *path = expected_path ();
  g_autofree char *target = g_build_filename (g_get_user_config_dir (), "elsewhere.desktop", NULL);
  g_autofree char *target_contents = NULL;
  g_autoptr(GError) error = NULL;

  write_file (target, "[Desktop Entry]\nExec=/usr/bin/something-else\n");
  write_file (path, "");
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_cmpint (symlink (target, path), ==, 0);

  g_assert_false (chp_autostart_is_enabled ());
  g_assert_true (chp_autostart_set_enabled (TRUE, &error));
  g_assert_no_error (error);

  /* The link itself is replaced; the file it pointed to is left as it was. */
  g_assert_false (g_file_test (path, G_FILE_TEST_IS_SYMLINK));
  g_assert_true (chp_autostart_is_enabled ());
  g_file_get_contents (target, &target_contents, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (target_contents, ==, "[Desktop Entry]\nExec=/usr/bin/something-else\n");
}

static void
test_directory_in_the_way (void)
{
  g_autofree char *path = expected_path ();
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (path, 0700), ==, 0);

  g_assert_false (chp_autostart_is_enabled ());

  /* Reported, not crashed on, and the folder is not deleted. */
  g_assert_false (chp_autostart_set_enabled (TRUE, &error));
  g_assert_nonnull (error);
  g_test_message ("enable: %s", error->message);
  g_clear_error (&error);

  g_assert_false (chp_autostart_set_enabled (FALSE, &error));
  g_assert_nonnull (error);
  g_test_message ("disable: %s", error->message);
  g_assert_true (g_file_test (path, G_FILE_TEST_IS_DIR));
}

static void
test_autostart_folder_created (void)
{
  g_autofree char *path = expected_path ();
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;
  GStatBuf st;

  /* A fresh account has no autostart folder. */
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));
  g_assert_true (chp_autostart_set_enabled (TRUE, &error));
  g_assert_no_error (error);
  g_assert_cmpint (g_stat (dir, &st), ==, 0);
  g_assert_true (S_ISDIR (st.st_mode));
  g_assert_cmpint (st.st_mode & 0077, ==, 0);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  g_test_add_func ("/chaperone/autostart/enable-writes-entry", test_enable_writes_entry);
  g_test_add_func ("/chaperone/autostart/entry-validates", test_entry_validates);
  g_test_add_func ("/chaperone/autostart/disable-removes-entry", test_disable_removes_entry);
  g_test_add_func ("/chaperone/autostart/removed-by-hand", test_removed_by_hand);
  g_test_add_func ("/chaperone/autostart/malformed-entry", test_malformed_entry);
  g_test_add_func ("/chaperone/autostart/foreign-entries", test_foreign_entries);
  g_test_add_func ("/chaperone/autostart/symlink-replaced", test_symlink_replaced);
  g_test_add_func ("/chaperone/autostart/directory-in-the-way", test_directory_in_the_way);
  g_test_add_func ("/chaperone/autostart/folder-created", test_autostart_folder_created);

  return g_test_run ();
}
