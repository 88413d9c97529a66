/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-autostart.c: writes, reads back and removes $XDG_CONFIG_HOME/autostart/<app id>.desktop, the
 * file an XDG session reads to start Chaperone at login. The file is the truth: no setting mirrors
 * it, so a person who deletes it by hand sees the switch off the next time. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-autostart"

#include "chp-autostart.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>

#define DESKTOP_GROUP "Desktop Entry"

/**
 * chp_autostart_get_path:
 *
 * Returns: (transfer full): where the autostart entry lives; read from the environment each
 *   time through g_get_user_config_dir()
 */
char *
chp_autostart_get_path (void)
{
  return g_build_filename (g_get_user_config_dir (), "autostart", APP_ID ".desktop", NULL);
}

/**
 * chp_autostart_get_contents:
 *
 * Returns: (transfer full): the exact text of the entry chp_autostart_set_enabled() writes
 */
char *
chp_autostart_get_contents (void)
{
  /* Not translated: the session manager reads this file, not the person, and a translation
   * frozen at the moment the switch was pressed would go stale anyway. */
  return g_strdup ("[" DESKTOP_GROUP "]\n"
                   "Type=Application\n"
                   "Name=Chaperone\n"
                   "Comment=Keep the bridge to your browsers open in the background\n"
                   "Exec=" CHP_AUTOSTART_EXEC "\n"
                   "Icon=" APP_ID "\n"
                   "Terminal=false\n"
                   "NoDisplay=true\n"
                   "X-GNOME-Autostart-enabled=true\n");
}

/* Whether @exec starts Chaperone, natively or as the Flatpak. Anything else at our path is a
 * stranger's entry: reporting it as "on" would make the switch vouch for a program we never
 * wrote there. */
static gboolean
exec_starts_chaperone (const char *exec)
{
  g_auto(GStrv) argv = NULL;
  g_autofree char *program = NULL;

  if (!g_shell_parse_argv (exec, NULL, &argv, NULL) || argv[0] == NULL)
    return FALSE;

  program = g_path_get_basename (argv[0]);
  if (g_str_equal (program, "chaperone"))
    return TRUE;

  if (g_str_equal (program, "flatpak"))
    return g_strv_contains ((const char * const *) argv, APP_ID);

  return FALSE;
}

/**
 * chp_autostart_is_enabled:
 *
 * Returns: %TRUE when the entry exists and a session would start Chaperone from it. A file
 *   that does not parse, is hidden or disabled (the XDG way to switch an entry off) or starts
 *   another program counts as off; chp_autostart_set_enabled() replaces or removes it.
 */
gboolean
chp_autostart_is_enabled (void)
{
  g_autofree char *path = chp_autostart_get_path ();
  g_autoptr(GKeyFile) key_file = g_key_file_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *exec = NULL;

  if (!g_key_file_load_from_file (key_file, path, G_KEY_FILE_NONE, &error))
    {
      if (!g_error_matches (error, G_FILE_ERROR, G_FILE_ERROR_NOENT))
        g_debug ("%s does not count as an autostart entry: %s", path, error->message);
      return FALSE;
    }

  if (g_key_file_get_boolean (key_file, DESKTOP_GROUP, "Hidden", NULL))
    return FALSE;

  /* A missing key reads as FALSE with an error; only an explicit false switches it off. */
  g_clear_error (&error);
  if (!g_key_file_get_boolean (key_file, DESKTOP_GROUP, "X-GNOME-Autostart-enabled", &error) &&
      error == NULL)
    return FALSE;

  exec = g_key_file_get_string (key_file, DESKTOP_GROUP, "Exec", NULL);
  if (exec == NULL || !exec_starts_chaperone (exec))
    {
      g_debug ("%s does not start Chaperone", path);
      return FALSE;
    }

  return TRUE;
}

static gboolean
write_entry (const char  *path,
             GError     **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *contents = chp_autostart_get_contents ();

  /* 0700 like any folder we create for the person; an existing one is left as it is. */
  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not create %s: %s", dir, g_strerror (saved_errno));
      return FALSE;
    }

  /* Written aside and renamed, so a crash never leaves half an entry (or replaces a symlink's
   * target elsewhere: the rename replaces the link itself). */
  if (!g_file_set_contents_full (path, contents, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, error))
    return FALSE;

  /* The umask may have taken bits away; 0644 is what autostart entries have everywhere. */
  if (g_chmod (path, 0644) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not set the mode of %s: %s", path, g_strerror (saved_errno));
      return FALSE;
    }

  return TRUE;
}

/**
 * chp_autostart_set_enabled:
 * @enabled: whether Chaperone should start, hidden, at login
 *
 * Writes the entry (replacing whatever was at its path) or removes it. Removing an entry that
 * is not there succeeds.
 */
gboolean
chp_autostart_set_enabled (gboolean   enabled,
                           GError   **error)
{
  g_autofree char *path = chp_autostart_get_path ();

  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (enabled)
    return write_entry (path, error);

  if (g_unlink (path) != 0 && errno != ENOENT)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not remove %s: %s", path, g_strerror (saved_errno));
      return FALSE;
    }

  return TRUE;
}
