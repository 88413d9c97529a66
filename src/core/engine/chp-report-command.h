/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-report-command.h: `chaperone report [--last N] [--session ID] -o FILE`: writes the trace
 * report (chp-trace-report.h) from the person's data folder and exits, without starting the
 * application, so that it works whether Chaperone runs or not. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Exit codes: 0 written; 1 nothing to export or it failed; 2 bad usage. */
#define CHP_REPORT_EXIT_FAILED 1
#define CHP_REPORT_EXIT_USAGE  2

int chp_report_command_run (int    argc,
                            char **argv);

G_END_DECLS
