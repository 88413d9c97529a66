/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-trace-report-cli.c: `chaperone report` run as a person runs it, the built executable
 * ($CHAPERONE_APP) on a data folder this test records through the store: its exit codes and
 * messages, the files it writes, the application's data-folder rule, and a store that stays
 * open beside it as the running app's does, whose open session it must leave open. */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/wait.h>

#include "chp-report-command.h"
#include "chp-test-client.h"
#include "chp-trace-report.h"
#include "test-trace-report-util.h"

typedef struct
{
  int   status;   /* the exit code; -1 if it did not exit */
  char *out;
  char *err;
} Run;

static void
run_clear (Run *run)
{
  g_clear_pointer (&run->out, g_free);
  g_clear_pointer (&run->err, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Run, run_clear)

static gboolean
have_app (void)
{
  if (g_getenv ("CHAPERONE_APP") != NULL)
    return TRUE;
  g_test_skip ("CHAPERONE_APP is not set: meson test sets it to the built chaperone");
  return FALSE;
}

/* `chaperone report ARGS…` in @cwd, with no display (the command never needs one), English
 * messages, and $XDG_DATA_HOME set to @data_home when given. */
static void
run_report (Run                *run,
            const char         *cwd,
            const char         *data_home,
            const char * const *args)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  g_auto(GStrv) argv = NULL;
  g_auto(GStrv) env = g_get_environ ();
  g_autoptr(GError) error = NULL;
  int wait_status = 0;

  g_strv_builder_add (builder, g_getenv ("CHAPERONE_APP"));
  g_strv_builder_add (builder, "report");
  g_strv_builder_addv (builder, (const char **) args);
  argv = g_strv_builder_end (builder);

  env = g_environ_unsetenv (env, "DISPLAY");
  env = g_environ_unsetenv (env, "WAYLAND_DISPLAY");
  env = g_environ_unsetenv (env, "LANGUAGE");
  env = g_environ_setenv (env, "LC_ALL", "C.UTF-8", TRUE);
  if (data_home != NULL)
    env = g_environ_setenv (env, "XDG_DATA_HOME", data_home, TRUE);

  g_assert_true (g_spawn_sync (cwd, argv, env, G_SPAWN_DEFAULT, NULL, NULL, &run->out,
                               &run->err, &wait_status, &error));
  g_assert_no_error (error);
  run->status = WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : -1;
  g_test_message ("chaperone report → %d\nstdout: %s\nstderr: %s", run->status, run->out,
                  run->err);
}

static void
assert_usage_error (const char         *dir,
                    const char * const *args,
                    const char         *says)
{
  g_auto(Run) run = { 0 };

  run_report (&run, dir, dir, args);
  g_assert_cmpint (run.status, ==, CHP_REPORT_EXIT_USAGE);
  g_assert_nonnull (strstr (run.err, says));
  g_assert_nonnull (strstr (run.err, "chaperone report --help"));
}

/* Exit 2 and one line saying what is wrong, for each way of asking wrongly; --help is 0. */
static void
test_usage (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *out = NULL;
  g_auto(Run) help = { 0 };

  if (!have_app ())
    return;
  dir = tr_make_tmp ();
  out = g_build_filename (dir, "r.html", NULL);

  assert_usage_error (dir, (const char *[]) { NULL }, "-o FILE");
  assert_usage_error (dir, (const char *[]) { "--last", "0", "-o", out, NULL },
                      "--last takes a number from 1 to 20, not “0”");
  assert_usage_error (dir, (const char *[]) { "--last", "many", "-o", out, NULL },
                      "not “many”");
  assert_usage_error (dir, (const char *[]) { "--last", "21", "-o", out, NULL }, "not “21”");
  assert_usage_error (dir, (const char *[]) { "--last", "2", "--session", "abc", "-o", out,
                                              NULL },
                      "not both");
  assert_usage_error (dir, (const char *[]) { "--session", "", "-o", out, NULL },
                      "--session needs");
  assert_usage_error (dir, (const char *[]) { "--bogus", "-o", out, NULL }, "--bogus");
  assert_usage_error (dir, (const char *[]) { "-o", out, "extra", NULL },
                      "Unexpected argument “extra”");
  assert_usage_error (dir, (const char *[]) { "-o", dir, NULL }, "is a folder");
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));

  run_report (&help, dir, dir, (const char *[]) { "--help", NULL });
  g_assert_cmpint (help.status, ==, 0);
  g_assert_nonnull (strstr (help.out, "chaperone report"));
  g_assert_nonnull (strstr (help.out, "--last=N"));
  g_assert_nonnull (strstr (help.out, "--session=ID"));
  g_assert_nonnull (strstr (help.out, "--output=FILE"));
  g_assert_nonnull (strstr (help.out, "--data-dir=DIR"));

  tr_remove_tree (dir);
}

/* A folder with no traces: exit 1 saying so, no file, and the folder is not made a store. */
static void
test_nothing_recorded (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *data = NULL;
  g_autofree char *out = NULL;
  g_auto(Run) run = { 0 };

  if (!have_app ())
    return;
  dir = tr_make_tmp ();
  data = g_build_filename (dir, "data", NULL);
  out = g_build_filename (dir, "r.html", NULL);

  run_report (&run, dir, dir, (const char *[]) { "--data-dir", data, "-o", out, NULL });
  g_assert_cmpint (run.status, ==, 1);
  g_assert_nonnull (strstr (run.err, "No agent session has been recorded in"));
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (data, G_FILE_TEST_EXISTS));

  tr_remove_tree (dir);
}

static JsonArray *
sessions_in (JsonNode   **root,
             const char  *path)
{
  g_autofree char *text = tr_read_file (path, NULL);
  g_autoptr(GError) error = NULL;

  *root = json_from_string (text, &error);
  g_assert_no_error (error);
  return json_object_get_array_member (json_node_get_object (*root), "sessions");
}

/* The app not running: both files, the person's choice of sessions, a relative path, and the
 * secret scan over what the command wrote. */
static void
test_export (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *data = NULL;
  g_autofree char *html = NULL;
  g_autofree char *json = NULL;
  g_autofree char *text = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_auto(TrRecorded) recorded = { 0 };
  g_auto(Run) run = { 0 };
  g_auto(Run) one = { 0 };
  g_auto(Run) missing = { 0 };
  g_autofree char *nope = NULL;
  JsonArray *sessions;

  if (!have_app ())
    return;
  dir = tr_make_tmp ();
  data = g_build_filename (dir, "data", NULL);
  tr_record_in (data, &recorded);

  /* Relative to where the person runs it. */
  run_report (&run, dir, dir, (const char *[]) { "--data-dir", data, "--last", "3", "-o",
                                                 "report.html", NULL });
  g_assert_cmpint (run.status, ==, 0);
  html = g_build_filename (dir, "report.html", NULL);
  g_assert_nonnull (strstr (run.out, "Wrote 2 sessions (7 steps) to "));
  g_assert_nonnull (strstr (run.out, html));
  text = tr_read_file (html, NULL);
  g_assert_nonnull (strstr (text, "Session 2 of 2"));
  g_assert_nonnull (strstr (text, "data:image/jpeg;base64,/9j/"));
  tr_assert_no_secrets (html);

  json = g_build_filename (dir, "one.json", NULL);
  run_report (&one, dir, dir, (const char *[]) { "--data-dir", data, "--session",
                                                 recorded.older_id, "-o", json, NULL });
  g_assert_cmpint (one.status, ==, 0);
  g_assert_nonnull (strstr (one.out, "Wrote 1 session (4 steps)"));
  sessions = sessions_in (&root, json);
  g_assert_cmpuint (json_array_get_length (sessions), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (sessions, 0),
                                                  "id"), ==, recorded.older_id);
  tr_assert_no_secrets (json);

  run_report (&missing, dir, dir, (const char *[]) { "--data-dir", data, "--session", "nope",
                                                     "-o", "nope.html", NULL });
  g_assert_cmpint (missing.status, ==, 1);
  g_assert_nonnull (strstr (missing.err, "There is no session “nope” in the traces."));
  nope = g_build_filename (dir, "nope.html", NULL);
  g_assert_false (g_file_test (nope, G_FILE_TEST_EXISTS));

  tr_remove_tree (dir);
}

/* No --data-dir: the application's folder, $XDG_DATA_HOME/chaperone. */
static void
test_default_folder (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *data = NULL;
  g_autofree char *out = NULL;
  g_auto(TrRecorded) recorded = { 0 };
  g_auto(Run) run = { 0 };

  if (!have_app ())
    return;
  dir = tr_make_tmp ();
  data = g_build_filename (dir, "chaperone", NULL);
  out = g_build_filename (dir, "r.json", NULL);
  tr_record_in (data, &recorded);

  run_report (&run, dir, dir, (const char *[]) { "-o", out, NULL });
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "Wrote 1 session (3 steps)"));
  g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));

  tr_remove_tree (dir);
}

/* Beside a store that stays open, as the running app's does, recording a session that has not
 * ended: the command reads it as it is, and leaves it open; the app's end of it still counts. */
static void
test_beside_running_app (void)
{
  g_autofree char *dir = NULL;
  g_autofree char *out = NULL;
  g_autoptr(ChpStore) store = NULL;
  g_autoptr(ChpTraceHandle) trace = NULL;
  g_autoptr(GPtrArray) listed = NULL;
  GAsyncResult *result;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_auto(TrRecorded) recorded = { 0 };
  g_auto(Run) run = { 0 };
  ChpTraceStep step = { .tool = "browser_tabs", .outcome = "ok", .name = "Inbox" };
  ChpTraceSession *session;
  JsonObject *exported;
  g_auto(ChpTestResult) wait = { 0 };

  if (!have_app ())
    return;
  dir = tr_make_tmp ();
  out = g_build_filename (dir, "live.json", NULL);
  store = tr_open_store (dir);
  tr_record (store, &recorded);
  trace = chp_store_trace_begin (store, "codex", "Work Chromium");
  g_assert_cmpuint (chp_store_trace_add_step (store, trace, &step), ==, 1);
  g_assert_cmpuint (chp_store_trace_add_step (store, trace, &step), ==, 2);
  tr_flush (store);

  run_report (&run, dir, dir, (const char *[]) { "--data-dir", dir, "-o", out, NULL });
  g_assert_cmpint (run.status, ==, 0);
  exported = json_array_get_object_element (sessions_in (&root, out), 0);
  g_assert_cmpstr (json_object_get_string_member (exported, "id"), ==,
                   chp_trace_handle_get_id (trace));
  g_assert_true (json_node_is_null (json_object_get_member (exported, "ended_at")));
  g_assert_true (json_node_is_null (json_object_get_member (exported, "outcome")));
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (exported, "steps")), ==,
                    2);

  /* The app goes on: a step more, then the end it decides. */
  g_assert_cmpuint (chp_store_trace_add_step (store, trace, &step), ==, 3);
  chp_store_trace_end (store, trace, "ok");
  tr_flush (store);
  chp_store_list_traces_async (store, NULL, 0, 1, NULL, chp_test_result_cb, &wait);
  result = chp_test_result_wait_within (&wait, 30000);
  listed = chp_store_list_traces_finish (store, result, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (listed->len, ==, 1);
  session = g_ptr_array_index (listed, 0);
  g_assert_cmpstr (session->id, ==, chp_trace_handle_get_id (trace));
  g_assert_cmpstr (session->outcome, ==, "ok");
  g_assert_cmpuint (session->n_steps, ==, 3);

  tr_close_store (&store);
  tr_remove_tree (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/report-cli/usage", test_usage);
  g_test_add_func ("/chaperone/report-cli/nothing-recorded", test_nothing_recorded);
  g_test_add_func ("/chaperone/report-cli/export", test_export);
  g_test_add_func ("/chaperone/report-cli/default-folder", test_default_folder);
  g_test_add_func ("/chaperone/report-cli/beside-running-app", test_beside_running_app);

  return g_test_run ();
}
