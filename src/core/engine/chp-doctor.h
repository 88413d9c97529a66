/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-doctor.h: everything a person's setup needs, checked, each finding with what to do about
 * it — for `chaperone doctor` and the app's Check Setup window. Blocking file and socket I/O:
 * the app runs it in a worker thread. */
#pragma once

#include "chp-browsers.h"

#include <glib.h>

G_BEGIN_DECLS

typedef enum
{
  CHP_DOCTOR_OK,
  CHP_DOCTOR_NOTE,      /* worth knowing, nothing to fix */
  CHP_DOCTOR_WARNING,   /* works, but not as it should for everything */
  CHP_DOCTOR_PROBLEM,   /* something a person relies on does not work */
} ChpDoctorLevel;

typedef struct
{
  char           *id;      /* "app", "bridge", "data", "pairing", "extension:<browser>", … */
  ChpDoctorLevel  level;
  char           *title;   /* one translated line */
  char           *fix;     /* (nullable): what to do, translated, with the exact command */
} ChpDoctorFinding;

/* Where to look; %NULL members mean the person's own places. Tests point them elsewhere. */
typedef struct
{
  const char         *data_dir;          /* chaperone.db, traces.db, engine-key.pem */
  const char         *runtime_dir;       /* agent.sock and bridge-port */
  const char         *native_host;       /* the host program manifests must name */
  const char         *extension_dir;     /* the unpacked extension, for the "Load unpacked" advice */
  const char         *policy_path;
  const char         *flatpak_info;      /* /.flatpak-info inside a Flatpak sandbox */
  const char * const *service_dirs;      /* folders of D-Bus .service files */
  ChpBrowserPaths     browsers;
} ChpDoctorSetup;

void        chp_doctor_finding_free    (ChpDoctorFinding     *finding);
void        chp_doctor_setup_init      (ChpDoctorSetup       *setup);
char       *chp_doctor_default_native_host (void);
char       *chp_doctor_default_extension_dir (void);
GPtrArray  *chp_doctor_run             (const ChpDoctorSetup *setup);
guint       chp_doctor_fix             (const ChpDoctorSetup *setup,
                                        GPtrArray            *done);
guint       chp_doctor_register_native_hosts (const ChpDoctorSetup *setup,
                                              GPtrArray            *done);
char       *chp_doctor_extension_path  (const ChpBrowserKind *kind,
                                        const char           *extension_dir);
char       *chp_doctor_extension_advice (const ChpBrowserKind *kind,
                                         const char           *extension_dir);
guint       chp_doctor_remove_native_hosts (const ChpDoctorSetup *setup,
                                            GPtrArray            *done);
const char *chp_doctor_level_to_string (ChpDoctorLevel        level);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpDoctorFinding, chp_doctor_finding_free)

G_END_DECLS
