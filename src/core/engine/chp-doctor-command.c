/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-doctor-command.c: `chaperone doctor`, run by main() instead of the application. It reads
 * the same places the app does (the XDG folders, /etc/chaperone/policy.conf); the options that
 * point it elsewhere exist for a second profile (as the app's --data-dir) and for tests. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-doctor"

#include "chp-doctor-command.h"

#include "chp-doctor.h"

#include <glib/gi18n.h>
#include <json-glib/json-glib.h>

static int
usage_error (const char *message)
{
  g_printerr ("%s\n", message);
  g_printerr (_("Try “chaperone doctor --help”.\n"));
  return CHP_DOCTOR_EXIT_USAGE;
}

static void
print_json (GPtrArray *findings,
            GPtrArray *done)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "done");
  json_builder_begin_array (b);
  for (guint i = 0; i < done->len; i++)
    json_builder_add_string_value (b, g_ptr_array_index (done, i));
  json_builder_end_array (b);
  json_builder_set_member_name (b, "findings");
  json_builder_begin_array (b);
  for (guint i = 0; i < findings->len; i++)
    {
      ChpDoctorFinding *f = g_ptr_array_index (findings, i);
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "id");
      json_builder_add_string_value (b, f->id);
      json_builder_set_member_name (b, "level");
      json_builder_add_string_value (b, chp_doctor_level_to_string (f->level));
      json_builder_set_member_name (b, "title");
      json_builder_add_string_value (b, f->title);
      if (f->fix != NULL)
        {
          json_builder_set_member_name (b, "fix");
          json_builder_add_string_value (b, f->fix);
        }
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  text = json_to_string (root, TRUE);
  g_print ("%s\n", text);
}

static void
print_text (GPtrArray *findings,
            GPtrArray *done)
{
  for (guint i = 0; i < done->len; i++)
    g_print ("• %s\n", (const char *) g_ptr_array_index (done, i));
  if (done->len > 0)
    g_print ("\n");
  for (guint i = 0; i < findings->len; i++)
    {
      ChpDoctorFinding *f = g_ptr_array_index (findings, i);
      /* Words, not only marks: a screen reader reads "problem", and grep finds it. */
      static const char * const marks[] = { "✓", "i", "!", "✗" };
      const char *word = f->level == CHP_DOCTOR_OK ? _("ok")
                         : f->level == CHP_DOCTOR_NOTE ? _("note")
                         : f->level == CHP_DOCTOR_WARNING ? _("warning") : _("problem");

      g_print ("%s %s: %s\n", marks[f->level], word, f->title);
      if (f->fix != NULL)
        g_print ("    %s %s\n", _("Fix:"), f->fix);
    }
}

int
chp_doctor_command_run (int    argc,
                        char **argv)
{
  gboolean fix = FALSE, json = FALSE, remove_hosts = FALSE;
  g_autofree char *data_dir = NULL;
  g_autofree char *native_host = NULL;
  g_autofree char *policy = NULL;
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) findings = NULL;
  g_autoptr(GPtrArray) done = g_ptr_array_new_with_free_func (g_free);
  g_auto(GStrv) args = NULL;
  ChpDoctorSetup setup;
  int status = 0;
  const GOptionEntry entries[] = {
    { "fix", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_NONE, &fix,
      N_("Do what needs no person first: register the native host in each browser found, make "
         "Chaperone’s files private"), NULL },
    { "remove-native-hosts", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_NONE, &remove_hosts,
      N_("Remove the native host from every browser (when uninstalling), then check"), NULL },
    { "json", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_NONE, &json,
      N_("Print the findings as JSON"), NULL },
    { "data-dir", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_FILENAME, &data_dir,
      N_("Check the data kept in DIR instead of Chaperone’s data folder"), N_("DIR") },
    { "native-host", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_FILENAME, &native_host,
      N_("The native host program browsers should start (default: the one installed beside "
         "chaperone)"), N_("PROGRAM") },
    { "policy", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_FILENAME, &policy, NULL, NULL },
    { NULL }
  };

  g_return_val_if_fail (argc >= 2, CHP_DOCTOR_EXIT_USAGE);

  g_set_prgname ("chaperone doctor");
  args = g_new0 (char *, argc);
  args[0] = g_strdup ("chaperone doctor");
  for (int i = 2; i < argc; i++)
    args[i - 1] = g_strdup (argv[i]);

  context = g_option_context_new (NULL);
  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);
  g_option_context_set_summary (context,
                                _("Check everything Chaperone needs on this computer — the app, its "
                                  "bridge and files, each browser’s extension and native host, "
                                  "pairing, D-Bus, the Flatpak sandbox, the administrator’s "
                                  "policy — and say exactly what to fix."));
  if (!g_option_context_parse_strv (context, &args, &error))
    return usage_error (error->message);
  if (args[1] != NULL)
    {
      g_autofree char *message = g_strdup_printf (_("Unexpected argument “%s”."), args[1]);
      return usage_error (message);
    }

  chp_doctor_setup_init (&setup);
  setup.data_dir = data_dir;
  setup.native_host = native_host;
  setup.policy_path = policy;
  if (remove_hosts && chp_doctor_remove_native_hosts (&setup, done) > 0)
    status = CHP_DOCTOR_EXIT_ATTENTION;
  if (fix && chp_doctor_fix (&setup, done) > 0)
    status = CHP_DOCTOR_EXIT_ATTENTION;

  findings = chp_doctor_run (&setup);
  for (guint i = 0; i < findings->len; i++)
    if (((ChpDoctorFinding *) g_ptr_array_index (findings, i))->level >= CHP_DOCTOR_WARNING)
      status = CHP_DOCTOR_EXIT_ATTENTION;
  if (json)
    print_json (findings, done);
  else
    print_text (findings, done);
  return status;
}
