/* SPDX-License-Identifier: GPL-3.0-or-later */
/* main.c: the chaperone executable: set up translations, then hand over to ChpApplication. */
#include "config.h"

#include "chp-application.h"
#include "chp-doctor-command.h"
#include "chp-report-command.h"

#include <glib/gi18n.h>
#include <locale.h>
#include <malloc.h>
#include <unistd.h>

int
main (int   argc,
      char *argv[])
{
  g_autoptr(ChpApplication) app = NULL;

  /* GLib 2.74's slice allocator keeps what json-glib's nodes freed in its own magazines, out of
   * malloc's reach: after an agent read a large page, 13 MB that the heap trim (chp-memory.c)
   * could not give back. With malloc underneath, it can; GLib 2.76 made that the only mode.
   * GLib reads G_SLICE at its first slice, which its own constructors make before main(): the
   * setting takes a fresh start of this same program (the same process id), once. */
  if (g_getenv ("G_SLICE") == NULL)
    {
      g_setenv ("G_SLICE", "always-malloc", TRUE);
      execv ("/proc/self/exe", argv);
      /* No /proc, say: run as we are. */
    }

#ifdef M_ARENA_MAX
  /* One malloc arena for every thread. glibc gives each thread that allocates an arena of its
   * own, and a trim (chp-memory.c) cannot return what a few live blocks pin in each: in the tray
   * they were most of the 3.6 MB of anonymous memory beside the heap. Chaperone's threads (the
   * database's, GIO's workers) allocate little and rarely at once, so sharing costs nothing. */
  mallopt (M_ARENA_MAX, 1);
#endif

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  /* `chaperone report …` writes a trace report and exits: it never starts the application, so
   * it runs beside a Chaperone that is running (chp-report-command.c). */
  if (argc > 1 && g_strcmp0 (argv[1], "report") == 0)
    return chp_report_command_run (argc, argv);
  /* `chaperone doctor …` checks the setup and exits (chp-doctor-command.c). */
  if (argc > 1 && g_strcmp0 (argv[1], "doctor") == 0)
    return chp_doctor_command_run (argc, argv);

  /* Chaperone draws with cairo, not OpenGL, unless the person's environment chose (GDK_DEBUG or
   * GSK_RENDERER set). It stays running for days, mostly without a window, and GTK's X11 backend
   * loads the GL driver when it opens the display, window or not: on Mesa's llvmpipe that is
   * 60 MB resident for nothing, and the renderer's buffers add 50 MB more while the window is
   * open. A window of lists and buttons draws as smoothly without. bench/app-bench.py measures
   * both: idle in the background 92 MB with GL, 29 MB without; window open 214 MB and 54 MB. */
  if (g_getenv ("GDK_DEBUG") == NULL && g_getenv ("GSK_RENDERER") == NULL)
    {
      g_setenv ("GDK_DEBUG", "gl-disable", TRUE);
      g_setenv ("GSK_RENDERER", "cairo", TRUE);   /* else GSK tries GL first, and says it failed */
    }

  app = chp_application_new ();

  return g_application_run (G_APPLICATION (app), argc, argv);
}
