/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-doctor-command.h: `chaperone doctor [--fix] [--json]`: checks the person's setup
 * (chp-doctor.h) and says what to fix, without starting the application. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Exit codes: 0 all in order; 1 something to fix (a warning or a problem); 2 bad usage. */
#define CHP_DOCTOR_EXIT_ATTENTION 1
#define CHP_DOCTOR_EXIT_USAGE     2

int chp_doctor_command_run (int    argc,
                            char **argv);

G_END_DECLS
