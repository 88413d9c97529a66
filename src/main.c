/* SPDX-License-Identifier: GPL-3.0-or-later */
/* main.c: the chaperone executable: set up translations, then hand over to ChpApplication. */
#include "config.h"

#include "chp-application.h"

#include <glib/gi18n.h>
#include <locale.h>

int
main (int   argc,
      char *argv[])
{
  g_autoptr(ChpApplication) app = NULL;

  setlocale (LC_ALL, "");
  bindtextdomain (GETTEXT_PACKAGE, LOCALEDIR);
  bind_textdomain_codeset (GETTEXT_PACKAGE, "UTF-8");
  textdomain (GETTEXT_PACKAGE);

  app = chp_application_new ();

  return g_application_run (G_APPLICATION (app), argc, argv);
}
