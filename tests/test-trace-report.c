/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-trace-report.c: the trace report (chp-trace-report.h) from sessions recorded on real
 * SQLite files: the HTML page and its JSON, the JSON file, page-derived text escaped, every
 * planted secret absent from every byte written, the bounds, and what is left when it fails.
 * `chaperone report` itself is test-trace-report-cli.c. */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>

#include "chp-test-client.h"
#include "chp-trace-report.h"
#include "test-trace-report-util.h"

#define SCRIPT_OPEN "<script type=\"application/json\" id=\"chaperone-trace-report\">"

typedef struct
{
  char       *dir;
  ChpStore   *store;
  TrRecorded  recorded;
} Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  fixture->dir = tr_make_tmp ();
  fixture->store = tr_open_store (fixture->dir);
  if (data == NULL)
    tr_record (fixture->store, &fixture->recorded);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  tr_close_store (&fixture->store);
  tr_recorded_clear (&fixture->recorded);
  tr_remove_tree (fixture->dir);
  g_free (fixture->dir);
}

static gboolean
export (ChpStore    *store,
        const char  *session_id,
        guint        last_n,
        const char  *path,
        guint       *n_sessions,
        GError     **error)
{
  g_autoptr(GFile) out = g_file_new_for_path (path);
  g_auto(ChpTestResult) wait = { 0 };

  chp_trace_report_write_async (store, session_id, last_n, out, NULL, chp_test_result_cb, &wait);
  return chp_trace_report_write_finish (store, chp_test_result_wait_within (&wait, 60000), n_sessions,
                                        NULL, error);
}

static char *
export_ok (Fixture    *fixture,
           const char *session_id,
           guint       last_n,
           const char *name)
{
  g_autoptr(GError) error = NULL;
  char *path = g_build_filename (fixture->dir, name, NULL);

  g_assert_true (export (fixture->store, session_id, last_n, path, NULL, &error));
  g_assert_no_error (error);
  return path;
}

static guint
count (const char *text,
       const char *needle)
{
  guint n = 0;

  for (const char *p = text; (p = strstr (p, needle)) != NULL; p += strlen (needle))
    n++;
  return n;
}

static JsonNode *
parse (const char *text)
{
  g_autoptr(GError) error = NULL;
  JsonNode *root = json_from_string (text, &error);

  g_assert_no_error (error);
  g_assert_nonnull (root);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (root));
  return root;
}

/* The document inside the page's <script> block. */
static JsonNode *
parse_embedded (const char *html)
{
  const char *start = strstr (html, SCRIPT_OPEN);
  const char *end;
  g_autofree char *json = NULL;

  g_assert_nonnull (start);
  start += strlen (SCRIPT_OPEN);
  end = strstr (start, "</script>");
  g_assert_nonnull (end);
  json = g_strndup (start, end - start);
  g_assert_null (strchr (json, '<'));
  return parse (json);
}

static JsonArray *
sessions_of (JsonNode *root)
{
  JsonObject *object = json_node_get_object (root);

  g_assert_cmpstr (json_object_get_string_member (object, "format"), ==,
                   CHP_TRACE_REPORT_FORMAT);
  g_assert_cmpint (json_object_get_int_member (object, "version"), ==, CHP_TRACE_REPORT_VERSION);
  return json_object_get_array_member (object, "sessions");
}

static JsonObject *
step_of (JsonArray *sessions,
         guint      session,
         guint      step)
{
  JsonObject *object = json_array_get_object_element (sessions, session);
  JsonArray *steps = json_object_get_array_member (object, "steps");

  return json_array_get_object_element (steps, step);
}

/* The page: both sessions newest first, every step, the decision, the error and its snippet,
 * the screenshot inline, and the same data as JSON for programs. */
static void
test_html (Fixture       *fixture,
           gconstpointer  data)
{
  g_autofree char *path = export_ok (fixture, NULL, 5, "report.html");
  g_autofree char *html = tr_read_file (path, NULL);
  g_autoptr(JsonNode) root = parse_embedded (html);
  JsonArray *sessions = sessions_of (root);
  JsonObject *older, *failing, *shot;
  g_autofree char *img = NULL;
  GStatBuf st;

  g_assert_true (g_str_has_prefix (html, "<!DOCTYPE html>"));
  /* No script runs and nothing is fetched. */
  g_assert_nonnull (strstr (html, "default-src 'none'; img-src data:;"));
  g_assert_null (strstr (html, "http://"));
  g_assert_null (strstr (html, "src=\"http"));
  g_assert_cmpuint (count (html, "<script"), ==, 1);
  g_assert_cmpuint (count (html, "</script>"), ==, 1);

  /* Newest first; the last one asked for is there too (5 asked, 2 recorded). */
  g_assert_cmpuint (json_array_get_length (sessions), ==, 2);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (sessions, 0),
                                                  "id"), ==, fixture->recorded.newer_id);
  older = json_array_get_object_element (sessions, 1);
  g_assert_cmpstr (json_object_get_string_member (older, "id"), ==, fixture->recorded.older_id);
  g_assert_cmpstr (json_object_get_string_member (older, "agent"), ==, "claude-code");
  g_assert_cmpstr (json_object_get_string_member (older, "outcome"), ==, "ok");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (older, "steps")), ==, 4);
  g_assert_nonnull (json_object_get_string_member (older, "ended_at"));

  /* The timeline: the session's header, each step's tool and place, the decision. */
  g_assert_nonnull (strstr (html, "claude-code"));
  g_assert_nonnull (strstr (html, "Work Chromium"));
  g_assert_nonnull (strstr (html, "browser_navigate"));
  g_assert_nonnull (strstr (html, "bank.example.com"));
  g_assert_nonnull (strstr (html, "/transfer"));
  g_assert_nonnull (strstr (html, "stale_document"));
  g_assert_nonnull (strstr (html, "Held for you"));
  g_assert_nonnull (strstr (html, "approved"));
  g_assert_nonnull (strstr (html, "after 1.50 s"));
  g_assert_nonnull (strstr (html, "Stopped by the person"));
  g_assert_null (strstr (html, "by person"));
  /* The export's date inside the sentence, where the translation puts it. */
  g_assert_nonnull (strstr (html, "exported by Chaperone " PACKAGE_VERSION " on <time datetime="));
  g_assert_nonnull (strstr (html, "</time>.</p>"));
  g_assert_nonnull (strstr (html, "Confirm the transfer"));
  g_assert_nonnull (strstr (html, "class=\"bar\""));

  /* The failing step's screenshot is in the page, once, and the JSON points at it. */
  failing = step_of (sessions, 1, 3);
  g_assert_cmpstr (json_object_get_string_member (failing, "error_code"), ==, "stale_document");
  shot = json_object_get_object_member (failing, "shot");
  g_assert_cmpint (json_object_get_int_member (shot, "width"), ==, 8);
  g_assert_false (json_object_has_member (shot, "base64"));
  img = g_strdup_printf ("<img id=\"%s\" src=\"data:image/jpeg;base64,/9j/",
                         json_object_get_string_member (shot, "img"));
  g_assert_cmpuint (count (html, img), ==, 1);
  g_assert_cmpuint (count (html, "data:image/jpeg;base64,"), ==, 1);
  g_assert_true (json_node_is_null (json_object_get_member (step_of (sessions, 1, 0), "shot")));

  /* The person's, until they share it. */
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);
}

/* What a page wrote is text, wherever it lands: the header, a cell, the JSON block. */
static void
test_escaped (Fixture       *fixture,
              gconstpointer  data)
{
  g_autofree char *path = export_ok (fixture, NULL, 2, "report.html");
  g_autofree char *html = tr_read_file (path, NULL);
  g_autoptr(JsonNode) root = parse_embedded (html);
  JsonArray *sessions = sessions_of (root);

  /* Every element is the report's own: the one <img> is its screenshot. */
  g_assert_null (strstr (html, "<img src=x"));
  g_assert_cmpuint (count (html, "<img"), ==, count (html, "<img id=\"shot-"));
  g_assert_cmpuint (count (html, "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"), ==, 2);
  g_assert_nonnull (strstr (html, "Say &quot;hi&quot; &amp; &#39;bye&#39;"));
  g_assert_nonnull (strstr (html, "\\u003c/script>\\u003cimg src=x onerror=alert(1)>"));

  /* Read back, the JSON holds the very texts the page wrote. */
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (sessions, 0),
                                                  "agent"), ==, TR_HOSTILE);
  g_assert_cmpstr (json_object_get_string_member (step_of (sessions, 0, 1), "name"), ==,
                   TR_HOSTILE);
  g_assert_cmpstr (json_object_get_string_member (step_of (sessions, 1, 2), "name"), ==,
                   TR_QUOTED);
}

/* FILE.json is the document alone, its screenshots as their bytes. */
static void
test_json (Fixture       *fixture,
           gconstpointer  data)
{
  g_autofree char *path = export_ok (fixture, NULL, 2, "report.JSON");
  g_autofree char *text = tr_read_file (path, NULL);
  g_autoptr(JsonNode) root = parse (text);
  g_autoptr(GBytes) jpeg = tr_tiny_jpeg ();
  JsonArray *sessions = sessions_of (root);
  JsonObject *fill, *shot;
  g_autofree guchar *decoded = NULL;
  gsize decoded_len = 0;

  g_assert_null (strstr (text, "<!DOCTYPE"));
  g_assert_cmpuint (json_array_get_length (sessions), ==, 2);

  fill = step_of (sessions, 1, 1);
  g_assert_cmpstr (json_object_get_string_member (fill, "tool"), ==, "browser_act");
  g_assert_cmpint (json_object_get_int_member (
                     json_object_get_object_member (json_object_get_object_member (fill, "args"),
                                                    "value"), "length"),
                   ==, strlen (TR_TYPED_SECRET));
  g_assert_cmpint (json_object_get_int_member (step_of (sessions, 1, 0), "page_us"), ==, 30000);
  g_assert_cmpstr (json_object_get_string_member (step_of (sessions, 1, 2), "decision_kind"),
                   ==, "hold");
  g_assert_cmpint (json_object_get_int_member (step_of (sessions, 1, 2), "decision_wait_us"),
                   ==, 1500000);

  shot = json_object_get_object_member (step_of (sessions, 1, 3), "shot");
  decoded = g_base64_decode (json_object_get_string_member (shot, "base64"), &decoded_len);
  g_assert_cmpmem (decoded, decoded_len, g_bytes_get_data (jpeg, NULL), g_bytes_get_size (jpeg));
}

/* The secret scan: what the person typed never reached the store; the tokens a page showed
 * did, and the export's redaction replaced them. Every byte of both files is searched. */
static void
test_secrets (Fixture       *fixture,
              gconstpointer  data)
{
  g_autofree char *html_path = export_ok (fixture, NULL, 2, "report.html");
  g_autofree char *json_path = export_ok (fixture, NULL, 2, "report.json");
  g_autofree char *html = tr_read_file (html_path, NULL);
  g_autofree char *json = tr_read_file (json_path, NULL);
  g_autoptr(JsonNode) root = NULL;
  JsonArray *sessions;

  tr_assert_no_secrets (html_path);
  tr_assert_no_secrets (json_path);

  /* Masked, not dropped: the reader still sees that something was there. */
  g_assert_nonnull (strstr (html, "[redacted github_token len=40]"));
  g_assert_nonnull (strstr (html, "[redacted aws_key len=20]"));
  g_assert_nonnull (strstr (html, "[redacted jwt len="));
  g_assert_nonnull (strstr (html, "texts looked like secrets and were masked again"));
  root = parse (json);
  sessions = sessions_of (root);
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (sessions, 0),
                                               "redacted_by_export"), >=, 4);
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (sessions, 1),
                                               "redacted_by_export"), ==, 1);
}

/* --session: that session alone; an id the store does not have: an error, and no file. */
static void
test_session_id (Fixture       *fixture,
                 gconstpointer  data)
{
  g_autofree char *path = export_ok (fixture, fixture->recorded.older_id, 1, "one.json");
  g_autofree char *text = tr_read_file (path, NULL);
  g_autoptr(JsonNode) root = parse (text);
  JsonArray *sessions = sessions_of (root);
  g_autofree char *missing = g_build_filename (fixture->dir, "missing.html", NULL);
  g_autoptr(GError) error = NULL;
  guint n_sessions = 0;

  g_assert_cmpuint (json_array_get_length (sessions), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (sessions, 0),
                                                  "id"), ==, fixture->recorded.older_id);

  g_assert_false (export (fixture->store, "no-such-session", 1, missing, &n_sessions, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  g_assert_false (g_file_test (missing, G_FILE_TEST_EXISTS));

  /* --last 1: the newest alone. */
  g_clear_pointer (&path, g_free);
  path = export_ok (fixture, NULL, 1, "newest.html");
  g_clear_pointer (&text, g_free);
  text = tr_read_file (path, NULL);
  g_assert_nonnull (strstr (text, "Session 1 of 1"));
  g_assert_nonnull (strstr (text, "Home Chromium"));
  g_assert_null (strstr (text, "Work Chromium"));
}

/* Nothing recorded: an error saying so, and no file. */
static void
test_empty (Fixture       *fixture,
            gconstpointer  data)
{
  g_autofree char *path = g_build_filename (fixture->dir, "report.html", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_false (export (fixture->store, NULL, 3, path, NULL, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
}

/* An existing file is replaced whole; a report that cannot be written leaves no part behind
 * and the old file as it was. */
static void
test_replace (Fixture       *fixture,
              gconstpointer  data)
{
  g_autofree char *path = g_build_filename (fixture->dir, "report.html", NULL);
  g_autofree char *nowhere = g_build_filename (fixture->dir, "no", "such", "report.html", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) listing = NULL;
  g_autofree char *text = NULL;
  const char *name;

  g_assert_true (g_file_set_contents (path, "old", -1, NULL));
  g_free (export_ok (fixture, NULL, 2, "report.html"));
  text = tr_read_file (path, NULL);
  g_assert_true (g_str_has_prefix (text, "<!DOCTYPE html>"));
  g_assert_true (g_str_has_suffix (text, "</html>\n"));

  g_assert_false (export (fixture->store, NULL, 2, nowhere, NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);

  listing = g_dir_open (fixture->dir, 0, NULL);
  while ((name = g_dir_read_name (listing)) != NULL)
    g_assert_false (g_str_has_suffix (name, ".part"));
}

/* A session longer than the report's bound: its newest steps, and the page says so. */
static void
test_bounded (Fixture       *fixture,
              gconstpointer  data)
{
  g_autoptr(ChpTraceHandle) trace = chp_store_trace_begin (fixture->store, "loop", "Chromium");
  guint total = CHP_TRACE_REPORT_MAX_STEPS + 5;
  g_autofree char *path = NULL;
  g_autofree char *text = NULL;
  g_autoptr(JsonNode) root = NULL;
  JsonArray *sessions;
  JsonObject *session;
  JsonArray *steps;
  g_autofree char *note = NULL;

  for (guint i = 0; i < total; i++)
    {
      ChpTraceStep step = { .tool = "browser_tabs", .outcome = "ok", .run_us = i };

      g_assert_cmpuint (chp_store_trace_add_step (fixture->store, trace, &step), ==, i + 1);
    }
  chp_store_trace_end (fixture->store, trace, "ok");
  tr_flush (fixture->store);

  path = export_ok (fixture, NULL, 1, "long.html");
  text = tr_read_file (path, NULL);
  root = parse_embedded (text);
  sessions = sessions_of (root);
  session = json_array_get_object_element (sessions, 0);
  steps = json_object_get_array_member (session, "steps");
  g_assert_cmpuint (json_array_get_length (steps), ==, CHP_TRACE_REPORT_MAX_STEPS);
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (steps, 0), "seq"),
                   ==, 6);
  g_assert_cmpint (json_object_get_int_member (session, "steps_left_out"), ==, 5);
  g_assert_cmpint (json_object_get_int_member (session, "n_steps"), ==, total);
  note = g_strdup_printf ("Only the newest %u steps are in this report: 5 older steps are left "
                          "out.", CHP_TRACE_REPORT_MAX_STEPS);
  g_assert_nonnull (strstr (text, note));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/chaperone/trace-report/html", Fixture, NULL, fixture_set_up, test_html,
              fixture_tear_down);
  g_test_add ("/chaperone/trace-report/escaped", Fixture, NULL, fixture_set_up, test_escaped,
              fixture_tear_down);
  g_test_add ("/chaperone/trace-report/json", Fixture, NULL, fixture_set_up, test_json,
              fixture_tear_down);
  g_test_add ("/chaperone/trace-report/secrets", Fixture, NULL, fixture_set_up, test_secrets,
              fixture_tear_down);
  g_test_add ("/chaperone/trace-report/session-id", Fixture, NULL, fixture_set_up,
              test_session_id, fixture_tear_down);
  g_test_add ("/chaperone/trace-report/replace", Fixture, NULL, fixture_set_up, test_replace,
              fixture_tear_down);
  g_test_add ("/chaperone/trace-report/empty", Fixture, "empty", fixture_set_up, test_empty,
              fixture_tear_down);
  g_test_add ("/chaperone/trace-report/bounded", Fixture, "empty", fixture_set_up, test_bounded,
              fixture_tear_down);

  return g_test_run ();
}
