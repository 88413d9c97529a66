/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-report-command.c: `chaperone report`, run by main() instead of the application.
 *
 * The person's trace file may be open in a running Chaperone, and opening a ChpStore on it would
 * write to it: migrations, and every session without an end marked "interrupted" (right for the
 * app's own start after a crash, wrong for the session it is recording right now, whose real end
 * would then be lost). So the command never opens the person's files for writing: it copies the
 * trace file into a private temporary folder with SQLite's VACUUM INTO, from a read-only
 * connection (in WAL mode a reader never blocks the app, nor the app it, and the copy is one
 * consistent instant), opens a store on the copy, writes the report through
 * chp_trace_report_write_async() and deletes the copy. (A reader of a WAL file that had no -wal
 * and -shm beside it leaves an empty -wal and a -shm there: SQLite's, 0600 like the file, and
 * taken over by the app's next open.) */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-report"

#include "chp-report-command.h"

#include "chp-engine.h"
#include "chp-trace-report.h"

#include <glib-unix.h>
#include <glib/gi18n.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>

typedef struct
{
  gboolean      done;
  GAsyncResult *result;
} Wait;

static void
wait_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  Wait *wait = user_data;

  wait->result = g_object_ref (result);
  wait->done = TRUE;
}

/* Returns: (transfer full) */
static GAsyncResult *
wait_for (Wait *wait)
{
  while (!wait->done)
    g_main_context_iteration (NULL, TRUE);
  return g_steal_pointer (&wait->result);
}

static gboolean
cancel_cb (gpointer user_data)
{
  g_cancellable_cancel (user_data);
  return G_SOURCE_CONTINUE;
}

static int
usage_error (const char *message)
{
  g_printerr ("%s\n", message);
  g_printerr (_("Try “chaperone report --help”.\n"));
  return CHP_REPORT_EXIT_USAGE;
}

static void
sqlite_error (GError    **error,
              sqlite3    *db,
              const char *path)
{
  g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot read the traces in %s: %s"),
               path, db != NULL ? sqlite3_errmsg (db) : g_strerror (ENOMEM));
}

/* The copy's sessions without an end are left without one: the store marks such a session
 * "interrupted" when it opens a trace file (only where ended_at is 0), which would call the
 * session the app is still recording interrupted. Any value but 0 keeps the mark off; the
 * report shows a session whose end is not after 0 as not ended. Only the private copy is
 * changed. If the file's tables ever differ, the report says "interrupted": not worth failing
 * for. */
static void
keep_open_sessions_open (const char *copy)
{
  sqlite3 *db = NULL;

  if (sqlite3_open_v2 (copy, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK ||
      sqlite3_exec (db, "UPDATE sessions SET ended_at = -1 WHERE ended_at = 0", NULL, NULL,
                    NULL) != SQLITE_OK)
    g_debug ("report: open sessions not kept open: %s", db != NULL ? sqlite3_errmsg (db) : "");
  sqlite3_close (db);
}

static gboolean
copy_traces (const char  *live,
             const char  *copy,
             GError     **error)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  int rc;

  rc = sqlite3_open_v2 (live, &db, SQLITE_OPEN_READONLY, NULL);
  if (rc == SQLITE_OK)
    {
      /* A checkpoint of the app's can hold the file for a moment. */
      sqlite3_busy_timeout (db, 5000);
      rc = sqlite3_prepare_v2 (db, "VACUUM INTO ?1", -1, &stmt, NULL);
    }
  if (rc == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, copy, -1, SQLITE_STATIC);
      rc = sqlite3_step (stmt);
    }
  if (rc != SQLITE_OK && rc != SQLITE_DONE)
    sqlite_error (error, db, live);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  if (rc != SQLITE_OK && rc != SQLITE_DONE)
    return FALSE;

  keep_open_sessions_open (copy);
  return TRUE;
}

static void
remove_folder (const char *dir)
{
  g_autoptr(GDir) listing = g_dir_open (dir, 0, NULL);
  const char *name;

  while (listing != NULL && (name = g_dir_read_name (listing)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);

      if (g_unlink (path) != 0)
        g_debug ("report: could not remove %s: %s", path, g_strerror (errno));
    }
  if (g_rmdir (dir) != 0)
    g_debug ("report: could not remove %s: %s", dir, g_strerror (errno));
}

/* The person's trace file, by the store's own rule for where it sits beside the database. */
static char *
live_trace_path (const char *data_dir)
{
  g_autofree char *db_path = g_build_filename (data_dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) probe = chp_store_new (db_path);
  char *path = g_strdup (chp_store_get_trace_path (probe));

  /* Never opened: closing only stops its thread. */
  chp_store_close (probe);
  return path;
}

static gboolean
export (const char  *data_dir,
        const char  *session_id,
        guint        last_n,
        GFile       *out,
        GError     **error)
{
  g_autofree char *live = live_trace_path (data_dir);
  g_autofree char *tmp = NULL;
  g_autofree char *copy_db = NULL;
  g_autoptr(ChpStore) store = NULL;
  g_autoptr(GAsyncResult) opened = NULL;
  g_autoptr(GAsyncResult) written = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autofree char *shown = NULL;
  guint n_sessions = 0, n_steps = 0, sigint, sigterm;
  Wait wait_open = { 0 }, wait_write = { 0 };
  gboolean ok = FALSE;

  if (!g_file_test (live, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                   _("No agent session has been recorded in %s."), data_dir);
      return FALSE;
    }

  /* 0700: the copy holds what the traces hold. */
  tmp = g_dir_make_tmp ("chaperone-report-XXXXXX", error);
  if (tmp == NULL)
    return FALSE;

  /* Interrupted, the report is not left half written, nor the copy behind. */
  sigint = g_unix_signal_add (SIGINT, cancel_cb, cancellable);
  sigterm = g_unix_signal_add (SIGTERM, cancel_cb, cancellable);

  copy_db = g_build_filename (tmp, "chaperone.db", NULL);
  store = chp_store_new (copy_db);
  if (!copy_traces (live, chp_store_get_trace_path (store), error))
    goto out;

  chp_store_open_async (store, cancellable, wait_cb, &wait_open);
  opened = wait_for (&wait_open);
  if (!chp_store_open_finish (store, opened, error))
    goto out;

  chp_trace_report_write_async (store, session_id, last_n, out, cancellable, wait_cb,
                                &wait_write);
  written = wait_for (&wait_write);
  if (!chp_trace_report_write_finish (store, written, &n_sessions, &n_steps, error))
    goto out;

  shown = g_file_get_parse_name (out);
  g_print (ngettext ("Wrote %u session (%u steps) to %s\n",
                     "Wrote %u sessions (%u steps) to %s\n", n_sessions),
           n_sessions, n_steps, shown);
  g_print (_("Typed values, field contents and query strings are never in it. Look at its "
             "screenshots before you share it.\n"));
  ok = TRUE;

out:
  g_source_remove (sigint);
  g_source_remove (sigterm);
  chp_store_close (store);
  /* The store's finished jobs give their last references back through the main context. */
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
  g_clear_object (&store);
  remove_folder (tmp);

  return ok;
}

/**
 * chp_report_command_run:
 * @argv: the program's, with "report" as argv[1]
 *
 * Returns: the exit code (chp-report-command.h)
 */
int
chp_report_command_run (int    argc,
                        char **argv)
{
  g_autofree char *last_text = NULL;
  g_autofree char *session_id = NULL;
  g_autofree char *output = NULL;
  g_autofree char *data_dir_arg = NULL;
  g_autofree char *data_dir = NULL;
  g_autofree char *summary = NULL;
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GFile) out = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) args = NULL;
  guint64 last_n = 1;
  const GOptionEntry entries[] = {
    { "last", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_STRING, &last_text,
      N_("Export the newest N agent sessions (1 when neither this nor --session is given)"),
      N_("N") },
    { "session", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_STRING, &session_id,
      N_("Export the agent session with this id"), N_("ID") },
    { "output", 'o', G_OPTION_FLAG_NONE, G_OPTION_ARG_FILENAME, &output,
      N_("Write the report to FILE: the data alone if its name ends in .json, else one page "
         "to read, with the data inside (FILE.html)"),
      N_("FILE") },
    /* The application's own option: the same folder, for tests and second profiles. */
    { "data-dir", 0, G_OPTION_FLAG_NONE, G_OPTION_ARG_FILENAME, &data_dir_arg,
      N_("Read the traces kept in DIR instead of Chaperone’s data folder"), N_("DIR") },
    { NULL }
  };

  g_return_val_if_fail (argc >= 2, CHP_REPORT_EXIT_USAGE);

  /* "chaperone report" is the program the options' help and errors name. */
  g_set_prgname ("chaperone report");
  args = g_new0 (char *, argc);
  args[0] = g_strdup ("chaperone report");
  for (int i = 2; i < argc; i++)
    args[i - 1] = g_strdup (argv[i]);

  context = g_option_context_new (NULL);
  g_option_context_set_translation_domain (context, GETTEXT_PACKAGE);
  g_option_context_add_main_entries (context, entries, GETTEXT_PACKAGE);
  summary = g_strdup_printf ("%s\n\n%s",
                             _("Export what agents did, step by step, as one file to attach to "
                               "a bug report: the sessions, their steps and timings, the "
                               "person’s decisions, errors and screenshots."),
                             _("Typed values, field contents and query strings are never "
                               "recorded, and every text is masked again on export. It works "
                               "whether Chaperone is running or not."));
  g_option_context_set_summary (context, summary);
  g_option_context_set_description (context, _("Example: chaperone report --last 3 -o "
                                               "report.html"));

  if (!g_option_context_parse_strv (context, &args, &error))
    return usage_error (error->message);

  if (args[1] != NULL)
    {
      g_autofree char *message = g_strdup_printf (_("Unexpected argument “%s”."), args[1]);

      return usage_error (message);
    }
  if (output == NULL || *output == '\0')
    return usage_error (_("Say where to write the report, with -o FILE."));
  if (last_text != NULL && session_id != NULL)
    return usage_error (_("Give --last or --session, not both."));
  if (session_id != NULL && *session_id == '\0')
    return usage_error (_("--session needs a session’s id."));
  if (last_text != NULL &&
      !g_ascii_string_to_unsigned (last_text, 10, 1, CHP_TRACE_REPORT_MAX_SESSIONS, &last_n,
                                   NULL))
    {
      g_autofree char *message = g_strdup_printf (_("--last takes a number from 1 to %d, "
                                                    "not “%s”."),
                                                  CHP_TRACE_REPORT_MAX_SESSIONS, last_text);

      return usage_error (message);
    }

  /* The application's rule: its --data-dir, else $XDG_DATA_HOME/chaperone. */
  data_dir = data_dir_arg != NULL ? g_canonicalize_filename (data_dir_arg, NULL)
                                  : chp_engine_default_data_dir ();
  out = g_file_new_for_commandline_arg (output);
  if (g_file_query_file_type (out, G_FILE_QUERY_INFO_NONE, NULL) == G_FILE_TYPE_DIRECTORY)
    {
      g_autofree char *message = g_strdup_printf (_("“%s” is a folder: give -o a file’s name, "
                                                    "such as report.html."), output);

      return usage_error (message);
    }

  if (!export (data_dir, session_id, (guint) last_n, out, &error))
    {
      g_printerr (_("Could not write the report: %s\n"), error->message);
      return CHP_REPORT_EXIT_FAILED;
    }

  return EXIT_SUCCESS;
}
