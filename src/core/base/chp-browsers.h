/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-browsers.h: the browsers Chaperone knows on Linux — where each keeps its profiles and its
 * native-messaging host manifests, for its system, Flatpak and Snap builds — and what this
 * person's home holds for each: the extension installed or not, the native host registered or
 * not. The doctor reads it; `chaperone doctor --fix` and the app's setup write the manifests. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define CHP_NATIVE_HOST_NAME "io.github.chaperone.native"

typedef enum
{
  CHP_BROWSER_FAMILY_CHROMIUM,
  CHP_BROWSER_FAMILY_FIREFOX,
} ChpBrowserFamily;

typedef enum
{
  CHP_BROWSER_SYSTEM,
  CHP_BROWSER_FLATPAK,
  CHP_BROWSER_SNAP,
} ChpBrowserPackaging;

typedef struct
{
  const char          *id;            /* "chromium", "firefox-flatpak", … */
  const char          *name;          /* N_(): translate with _() where shown */
  ChpBrowserFamily     family;
  ChpBrowserPackaging  packaging;
  gboolean             in_config;     /* paths below are relative to XDG config home, else home */
  const char          *profile_dir;   /* Chromium: the user data folder; Firefox: profiles.ini's */
  const char          *hosts_dir;     /* NativeMessagingHosts / native-messaging-hosts */
} ChpBrowserKind;

/* Where a person's files are: tests point both into a temporary folder. */
typedef struct
{
  const char *home;
  const char *config;
} ChpBrowserPaths;

typedef enum
{
  CHP_NATIVE_HOST_OK,
  CHP_NATIVE_HOST_MISSING,        /* no manifest of ours */
  CHP_NATIVE_HOST_UNREADABLE,     /* a manifest of ours that is not valid JSON */
  CHP_NATIVE_HOST_WRONG_PATH,     /* it names another host program than the one given */
  CHP_NATIVE_HOST_NO_PROGRAM,     /* the program it names does not exist or cannot run */
  CHP_NATIVE_HOST_WRONG_EXTENSION,/* it does not allow our extension */
  CHP_NATIVE_HOST_SANDBOXED,      /* a Flatpak or Snap browser cannot start a host outside */
  CHP_NATIVE_HOST_NOT_FOR_FIREFOX,/* Firefox does not say which origin calls: the host refuses it */
} ChpNativeHostState;

typedef enum
{
  CHP_EXTENSION_UNKNOWN,          /* no profile could be read */
  CHP_EXTENSION_ABSENT,
  CHP_EXTENSION_DISABLED,
  CHP_EXTENSION_PRESENT,
} ChpExtensionState;

const ChpBrowserKind *chp_browsers_get_kinds            (guint                  *n_kinds);
const ChpBrowserKind *chp_browsers_find                 (const char             *id);
void                  chp_browser_paths_init_default    (ChpBrowserPaths        *paths);

char                 *chp_browser_dup_profile_path      (const ChpBrowserKind   *kind,
                                                         const ChpBrowserPaths  *paths);
char                 *chp_browser_dup_manifest_path     (const ChpBrowserKind   *kind,
                                                         const ChpBrowserPaths  *paths);
gboolean              chp_browser_is_present            (const ChpBrowserKind   *kind,
                                                         const ChpBrowserPaths  *paths);

char                 *chp_browser_native_manifest       (const ChpBrowserKind   *kind,
                                                         const char             *host_path);
ChpNativeHostState    chp_browser_native_host_state     (const ChpBrowserKind   *kind,
                                                         const ChpBrowserPaths  *paths,
                                                         const char             *host_path);
gboolean              chp_browser_register_native_host  (const ChpBrowserKind   *kind,
                                                         const ChpBrowserPaths  *paths,
                                                         const char             *host_path,
                                                         GError                **error);
gboolean              chp_browser_unregister_native_host(const ChpBrowserKind   *kind,
                                                         const ChpBrowserPaths  *paths,
                                                         gboolean               *removed,
                                                         GError                **error);

ChpExtensionState     chp_browser_extension_state       (const ChpBrowserKind   *kind,
                                                         const ChpBrowserPaths  *paths);

G_END_DECLS
