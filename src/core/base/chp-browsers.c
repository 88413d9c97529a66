/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-browsers.c: where each browser keeps its profiles and native-messaging hosts, and what this
 * person's home holds for each.
 *
 * Only files are read, never a running browser: Chromium keeps each profile's extensions in its
 * `Preferences` and `Secure Preferences` (JSON, `extensions.settings.<id>`, disabled when
 * `disable_reasons` is not empty), Firefox in each profile's `extensions.json` (`addons[]` with
 * `id` and `active`), its profiles listed in `profiles.ini`. A browser that is running may not
 * have written a change yet, so what is read is a hint for the doctor, never a gate.
 *
 * A native-host manifest is ours when its file is named after our host; we write and remove only
 * that file. Flatpak and Snap browsers start a host inside their sandbox, where a program of the
 * host system cannot run: for them there is nothing to register, and the WebSocket bridge (the
 * default transport, over loopback) is the way in. Firefox starts a host with the add-on's id
 * but never the moz-extension origin the extension signs with, so the host refuses it
 * (native-host/README.md): nothing is registered for Firefox either. */
#include "config.h"

#include "chp-browsers.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <unistd.h>

#define CR CHP_BROWSER_FAMILY_CHROMIUM
#define FF CHP_BROWSER_FAMILY_FIREFOX

static const ChpBrowserKind kinds[] = {
  { "google-chrome", N_("Google Chrome"), CR, CHP_BROWSER_SYSTEM, TRUE,
    "google-chrome", "google-chrome/NativeMessagingHosts" },
  { "chromium", N_("Chromium"), CR, CHP_BROWSER_SYSTEM, TRUE,
    "chromium", "chromium/NativeMessagingHosts" },
  { "microsoft-edge", N_("Microsoft Edge"), CR, CHP_BROWSER_SYSTEM, TRUE,
    "microsoft-edge", "microsoft-edge/NativeMessagingHosts" },
  { "brave", N_("Brave"), CR, CHP_BROWSER_SYSTEM, TRUE,
    "BraveSoftware/Brave-Browser", "BraveSoftware/Brave-Browser/NativeMessagingHosts" },
  { "vivaldi", N_("Vivaldi"), CR, CHP_BROWSER_SYSTEM, TRUE,
    "vivaldi", "vivaldi/NativeMessagingHosts" },
  { "firefox", N_("Firefox"), FF, CHP_BROWSER_SYSTEM, FALSE,
    ".mozilla/firefox", ".mozilla/native-messaging-hosts" },
  { "chromium-flatpak", N_("Chromium (Flatpak)"), CR, CHP_BROWSER_FLATPAK, FALSE,
    ".var/app/org.chromium.Chromium/config/chromium",
    ".var/app/org.chromium.Chromium/config/chromium/NativeMessagingHosts" },
  { "google-chrome-flatpak", N_("Google Chrome (Flatpak)"), CR, CHP_BROWSER_FLATPAK, FALSE,
    ".var/app/com.google.Chrome/config/google-chrome",
    ".var/app/com.google.Chrome/config/google-chrome/NativeMessagingHosts" },
  { "microsoft-edge-flatpak", N_("Microsoft Edge (Flatpak)"), CR, CHP_BROWSER_FLATPAK, FALSE,
    ".var/app/com.microsoft.Edge/config/microsoft-edge",
    ".var/app/com.microsoft.Edge/config/microsoft-edge/NativeMessagingHosts" },
  { "brave-flatpak", N_("Brave (Flatpak)"), CR, CHP_BROWSER_FLATPAK, FALSE,
    ".var/app/com.brave.Browser/config/BraveSoftware/Brave-Browser",
    ".var/app/com.brave.Browser/config/BraveSoftware/Brave-Browser/NativeMessagingHosts" },
  { "firefox-flatpak", N_("Firefox (Flatpak)"), FF, CHP_BROWSER_FLATPAK, FALSE,
    ".var/app/org.mozilla.firefox/.mozilla/firefox",
    ".var/app/org.mozilla.firefox/.mozilla/native-messaging-hosts" },
  { "chromium-snap", N_("Chromium (Snap)"), CR, CHP_BROWSER_SNAP, FALSE,
    "snap/chromium/common/chromium", "snap/chromium/common/chromium/NativeMessagingHosts" },
  { "firefox-snap", N_("Firefox (Snap)"), FF, CHP_BROWSER_SNAP, FALSE,
    "snap/firefox/common/.mozilla/firefox", "snap/firefox/common/.mozilla/native-messaging-hosts" },
};

const ChpBrowserKind *
chp_browsers_get_kinds (guint *n_kinds)
{
  *n_kinds = G_N_ELEMENTS (kinds);
  return kinds;
}

const ChpBrowserKind *
chp_browsers_find (const char *id)
{
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    if (g_strcmp0 (kinds[i].id, id) == 0)
      return &kinds[i];
  return NULL;
}

void
chp_browser_paths_init_default (ChpBrowserPaths *paths)
{
  paths->home = g_get_home_dir ();
  paths->config = g_get_user_config_dir ();
}

static char *
resolve (const ChpBrowserKind  *kind,
         const ChpBrowserPaths *paths,
         const char            *relative)
{
  return g_build_filename (kind->in_config ? paths->config : paths->home, relative, NULL);
}

char *
chp_browser_dup_profile_path (const ChpBrowserKind  *kind,
                              const ChpBrowserPaths *paths)
{
  return resolve (kind, paths, kind->profile_dir);
}

char *
chp_browser_dup_manifest_path (const ChpBrowserKind  *kind,
                               const ChpBrowserPaths *paths)
{
  g_autofree char *dir = resolve (kind, paths, kind->hosts_dir);

  return g_build_filename (dir, CHP_NATIVE_HOST_NAME ".json", NULL);
}

/* A browser is there when its profile folder is: it makes it at its first start. */
gboolean
chp_browser_is_present (const ChpBrowserKind  *kind,
                        const ChpBrowserPaths *paths)
{
  g_autofree char *dir = chp_browser_dup_profile_path (kind, paths);

  return g_file_test (dir, G_FILE_TEST_IS_DIR);
}

/* The manifest a Chromium-family browser reads: the host, and the one origin that may start it. */
char *
chp_browser_native_manifest (const ChpBrowserKind *kind,
                             const char           *host_path)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "name");
  json_builder_add_string_value (b, CHP_NATIVE_HOST_NAME);
  json_builder_set_member_name (b, "description");
  json_builder_add_string_value (b, "Chaperone: connects the Chaperone extension to the Chaperone "
                                    "app on this computer");
  json_builder_set_member_name (b, "path");
  json_builder_add_string_value (b, host_path);
  json_builder_set_member_name (b, "type");
  json_builder_add_string_value (b, "stdio");
  json_builder_set_member_name (b, "allowed_origins");
  json_builder_begin_array (b);
  json_builder_add_string_value (b, "chrome-extension://" CHP_EXTENSION_ID_CHROMIUM "/");
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  return json_to_string (root, TRUE);
}

static gboolean
array_has_string (JsonObject *o,
                  const char *member,
                  const char *want)
{
  JsonNode *n = json_object_get_member (o, member);
  JsonArray *a;

  if (n == NULL || !JSON_NODE_HOLDS_ARRAY (n))
    return FALSE;
  a = json_node_get_array (n);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      if (JSON_NODE_HOLDS_VALUE (e) && json_node_get_value_type (e) == G_TYPE_STRING &&
          g_strcmp0 (json_node_get_string (e), want) == 0)
        return TRUE;
    }
  return FALSE;
}

ChpNativeHostState
chp_browser_native_host_state (const ChpBrowserKind  *kind,
                               const ChpBrowserPaths *paths,
                               const char            *host_path)
{
  g_autofree char *path = NULL;
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;
  JsonObject *o;
  const char *named;

  if (kind->packaging != CHP_BROWSER_SYSTEM)
    return CHP_NATIVE_HOST_SANDBOXED;
  if (kind->family == CHP_BROWSER_FAMILY_FIREFOX)
    return CHP_NATIVE_HOST_NOT_FOR_FIREFOX;
  path = chp_browser_dup_manifest_path (kind, paths);
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    return CHP_NATIVE_HOST_MISSING;
  if (!json_parser_load_from_file (parser, path, NULL) ||
      (root = json_parser_get_root (parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return CHP_NATIVE_HOST_UNREADABLE;
  o = json_node_get_object (root);
  named = json_object_get_string_member_with_default (o, "path", "");
  if (host_path != NULL && g_strcmp0 (named, host_path) != 0)
    return CHP_NATIVE_HOST_WRONG_PATH;
  if (!g_path_is_absolute (named) || g_access (named, X_OK) != 0)
    return CHP_NATIVE_HOST_NO_PROGRAM;
  if (!array_has_string (o, "allowed_origins", "chrome-extension://" CHP_EXTENSION_ID_CHROMIUM "/"))
    return CHP_NATIVE_HOST_WRONG_EXTENSION;
  return CHP_NATIVE_HOST_OK;
}

gboolean
chp_browser_register_native_host (const ChpBrowserKind   *kind,
                                  const ChpBrowserPaths  *paths,
                                  const char             *host_path,
                                  GError                **error)
{
  g_autofree char *path = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *text = NULL;

  if (kind->packaging != CHP_BROWSER_SYSTEM)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   _("%s runs in a sandbox that cannot start programs of this computer"),
                   _(kind->name));
      return FALSE;
    }
  if (kind->family == CHP_BROWSER_FAMILY_FIREFOX)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                   _("%s does not tell the native host which extension calls it"), _(kind->name));
      return FALSE;
    }
  path = chp_browser_dup_manifest_path (kind, paths);
  dir = g_path_get_dirname (path);
  if (g_mkdir_with_parents (dir, 0755) != 0)
    {
      int saved = errno;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot make %s: %s"),
                   dir, g_strerror (saved));
      return FALSE;
    }
  text = chp_browser_native_manifest (kind, host_path);
  /* Readable by the browser, written whole (a browser reading it half-written would skip it). */
  return g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0644, error);
}

gboolean
chp_browser_unregister_native_host (const ChpBrowserKind  *kind,
                                    const ChpBrowserPaths *paths,
                                    gboolean              *removed,
                                    GError               **error)
{
  g_autofree char *path = chp_browser_dup_manifest_path (kind, paths);

  *removed = FALSE;
  if (g_unlink (path) == 0)
    {
      *removed = TRUE;
      return TRUE;
    }
  if (errno == ENOENT)
    return TRUE;
  {
    int saved = errno;
    g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved), _("Cannot remove %s: %s"),
                 path, g_strerror (saved));
  }
  return FALSE;
}

/* ---- the extension in a profile ------------------------------------------------------------ */

/* Chromium: -1 unreadable, 0 absent, 1 disabled, 2 present. */
static int
chromium_preferences_state (const char *file)
{
  static const char * const path[] = { "extensions", "settings" };
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;
  JsonObject *o;
  JsonNode *ext;
  JsonNode *reasons;

  if (!json_parser_load_from_file (parser, file, NULL) ||
      (root = json_parser_get_root (parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return -1;
  o = json_node_get_object (root);
  for (guint i = 0; i < G_N_ELEMENTS (path); i++)
    {
      JsonNode *n = json_object_get_member (o, path[i]);
      if (n == NULL || !JSON_NODE_HOLDS_OBJECT (n))
        return 0;
      o = json_node_get_object (n);
    }
  ext = json_object_get_member (o, CHP_EXTENSION_ID_CHROMIUM);
  if (ext == NULL || !JSON_NODE_HOLDS_OBJECT (ext))
    return 0;
  reasons = json_object_get_member (json_node_get_object (ext), "disable_reasons");
  if (reasons != NULL && JSON_NODE_HOLDS_ARRAY (reasons) &&
      json_array_get_length (json_node_get_array (reasons)) > 0)
    return 1;
  /* Older Chromium: "state": 0 is disabled. */
  if (json_object_get_int_member_with_default (json_node_get_object (ext), "state", 1) == 0)
    return 1;
  return 2;
}

static int
chromium_state (const char *user_data)
{
  g_autoptr(GDir) dir = g_dir_open (user_data, 0, NULL);
  const char *name;
  int best = -1;

  if (dir == NULL)
    return -1;
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      if (g_strcmp0 (name, "Default") != 0 && !g_str_has_prefix (name, "Profile "))
        continue;
      for (guint i = 0; i < 2; i++)
        {
          g_autofree char *file = g_build_filename (user_data, name,
                                                    i == 0 ? "Preferences" : "Secure Preferences", NULL);
          best = MAX (best, chromium_preferences_state (file));
        }
    }
  return best;
}

static int
firefox_profile_state (const char *profile)
{
  g_autofree char *file = g_build_filename (profile, "extensions.json", NULL);
  g_autoptr(JsonParser) parser = json_parser_new ();
  JsonNode *root;
  JsonNode *addons;
  JsonArray *a;

  if (!json_parser_load_from_file (parser, file, NULL) ||
      (root = json_parser_get_root (parser)) == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return -1;
  addons = json_object_get_member (json_node_get_object (root), "addons");
  if (addons == NULL || !JSON_NODE_HOLDS_ARRAY (addons))
    return 0;
  a = json_node_get_array (addons);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *e = json_array_get_element (a, i);
      JsonObject *addon;
      if (!JSON_NODE_HOLDS_OBJECT (e))
        continue;
      addon = json_node_get_object (e);
      if (g_strcmp0 (json_object_get_string_member_with_default (addon, "id", ""),
                     CHP_EXTENSION_ID_FIREFOX) == 0)
        return json_object_get_boolean_member_with_default (addon, "active", FALSE) ? 2 : 1;
    }
  return 0;
}

static int
firefox_state (const char *root)
{
  g_autofree char *ini = g_build_filename (root, "profiles.ini", NULL);
  g_autoptr(GKeyFile) kf = g_key_file_new ();
  g_auto(GStrv) groups = NULL;
  int best = -1;

  if (!g_key_file_load_from_file (kf, ini, G_KEY_FILE_NONE, NULL))
    return -1;
  groups = g_key_file_get_groups (kf, NULL);
  for (guint i = 0; groups[i] != NULL; i++)
    {
      g_autofree char *path = NULL;
      g_autofree char *profile = NULL;
      if (!g_str_has_prefix (groups[i], "Profile"))
        continue;
      path = g_key_file_get_string (kf, groups[i], "Path", NULL);
      if (path == NULL)
        continue;
      profile = g_key_file_get_integer (kf, groups[i], "IsRelative", NULL) != 0
                ? g_build_filename (root, path, NULL) : g_strdup (path);
      best = MAX (best, firefox_profile_state (profile));
    }
  return best;
}

ChpExtensionState
chp_browser_extension_state (const ChpBrowserKind  *kind,
                             const ChpBrowserPaths *paths)
{
  g_autofree char *dir = chp_browser_dup_profile_path (kind, paths);
  int state = kind->family == CHP_BROWSER_FAMILY_FIREFOX ? firefox_state (dir) : chromium_state (dir);

  switch (state)
    {
    case 0: return CHP_EXTENSION_ABSENT;
    case 1: return CHP_EXTENSION_DISABLED;
    case 2: return CHP_EXTENSION_PRESENT;
    default: return CHP_EXTENSION_UNKNOWN;
    }
}
