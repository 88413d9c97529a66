/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-trace-report-util.c: helpers of the trace report's tests (test-trace-report-util.h). */
#include "config.h"

#include "test-trace-report-util.h"

#include <glib/gstdio.h>
#include <string.h>

#include "chp-test-client.h"

/* An 8 × 8 baseline JPEG (ImageMagick: convert -size 8x8 xc:'#3584e4' -quality 50 -strip):
 * a real picture, so that a viewer of the report shows it, not only bytes that start right. */
static const guint8 tiny_jpeg[] = {
  0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01,
  0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xdb, 0x00, 0x43,
  0x00, 0x10, 0x0b, 0x0c, 0x0e, 0x0c, 0x0a, 0x10, 0x0e, 0x0d, 0x0e, 0x12,
  0x11, 0x10, 0x13, 0x18, 0x28, 0x1a, 0x18, 0x16, 0x16, 0x18, 0x31, 0x23,
  0x25, 0x1d, 0x28, 0x3a, 0x33, 0x3d, 0x3c, 0x39, 0x33, 0x38, 0x37, 0x40,
  0x48, 0x5c, 0x4e, 0x40, 0x44, 0x57, 0x45, 0x37, 0x38, 0x50, 0x6d, 0x51,
  0x57, 0x5f, 0x62, 0x67, 0x68, 0x67, 0x3e, 0x4d, 0x71, 0x79, 0x70, 0x64,
  0x78, 0x5c, 0x65, 0x67, 0x63, 0xff, 0xdb, 0x00, 0x43, 0x01, 0x11, 0x12,
  0x12, 0x18, 0x15, 0x18, 0x2f, 0x1a, 0x1a, 0x2f, 0x63, 0x42, 0x38, 0x42,
  0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63,
  0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63,
  0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63,
  0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63, 0x63,
  0x63, 0x63, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x08, 0x00, 0x08, 0x03,
  0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01, 0xff, 0xc4, 0x00,
  0x15, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xff, 0xc4, 0x00, 0x14,
  0x10, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0xc4, 0x00, 0x14, 0x01, 0x01,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x05, 0xff, 0xc4, 0x00, 0x14, 0x11, 0x01, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0xff, 0xda, 0x00, 0x0c, 0x03, 0x01, 0x00, 0x02, 0x11, 0x03,
  0x11, 0x00, 0x3f, 0x00, 0x90, 0x07, 0x44, 0xbf, 0xff, 0xd9
};

void
tr_recorded_clear (TrRecorded *recorded)
{
  g_clear_pointer (&recorded->older_id, g_free);
  g_clear_pointer (&recorded->newer_id, g_free);
}

char *
tr_make_tmp (void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp ("chp-report-XXXXXX", &error);

  g_assert_no_error (error);
  return dir;
}

void
tr_remove_tree (const char *dir)
{
  chp_test_remove_tree (dir);
}

ChpStore *
tr_open_store (const char *data_dir)
{
  g_autofree char *path = g_build_filename (data_dir, "chaperone.db", NULL);
  GAsyncResult *result;
  g_autoptr(GError) error = NULL;
  ChpStore *store = chp_store_new (path);
  g_auto(ChpTestResult) wait = { 0 };

  g_assert_cmpint (g_mkdir_with_parents (data_dir, 0700), ==, 0);
  chp_store_open_async (store, NULL, chp_test_result_cb, &wait);
  result = chp_test_result_wait_within (&wait, 30000);
  g_assert_true (chp_store_open_finish (store, result, &error));
  g_assert_no_error (error);

  return store;
}

void
tr_flush (ChpStore *store)
{
  GAsyncResult *result;
  g_autoptr(GError) error = NULL;
  g_auto(ChpTestResult) wait = { 0 };

  chp_store_trace_flush_async (store, NULL, chp_test_result_cb, &wait);
  result = chp_test_result_wait_within (&wait, 30000);
  g_assert_true (chp_store_trace_flush_finish (store, result, &error));
  g_assert_no_error (error);
}

void
tr_close_store (ChpStore **store)
{
  chp_store_close (*store);
  /* The jobs' last references come back through the main loop. */
  chp_test_spin_pending ();
  g_clear_object (store);
}

GBytes *
tr_tiny_jpeg (void)
{
  return g_bytes_new_static (tiny_jpeg, sizeof tiny_jpeg);
}

static void
add_step (ChpStore           *store,
          ChpTraceHandle     *trace,
          const ChpTraceStep *step)
{
  g_assert_cmpuint (chp_store_trace_add_step (store, trace, step), >, 0);
}

/* Two sessions, through the store's own calls, as the recorder makes them: the typed text as
 * its length only. What a page wrote (names, paths, a snippet) is kept as the page wrote it,
 * hostile and token-looking texts too. */
void
tr_record (ChpStore   *store,
           TrRecorded *recorded)
{
  g_autoptr(ChpTraceHandle) older = chp_store_trace_begin (store, "claude-code", "Work Chromium");
  g_autoptr(ChpTraceHandle) newer = NULL;
  g_autoptr(GBytes) jpeg = tr_tiny_jpeg ();
  g_autofree char *typed_args = g_strdup_printf ("{\"ref\":\"e7\",\"action\":\"fill\","
                                                 "\"value\":{\"length\":%u}}",
                                                 (guint) strlen (TR_TYPED_SECRET));
  ChpTraceStep navigate = {
    .tool = "browser_navigate", .args = "{\"url\":\"https://bank.example.com/accounts\"}",
    .queue_us = 120, .run_us = 45000, .page_us = 30000, .outcome = "ok", .rung = "page",
    .host = "bank.example.com", .path = "/accounts",
  };
  ChpTraceStep fill = {
    .tool = "browser_act", .args = typed_args, .run_us = 8000, .outcome = "ok", .rung = "page",
    .host = "bank.example.com", .path = "/transfer", .role = "textbox", .name = "Password",
  };
  ChpTraceStep held = {
    .tool = "browser_act", .args = "{\"ref\":\"e12\",\"action\":\"click\"}", .run_us = 90000,
    .page_us = 20000, .outcome = "ok", .rung = "page", .host = "bank.example.com",
    .path = "/transfer", .role = "button", .name = TR_QUOTED,
    .decision_kind = CHP_TRACE_DECISION_HOLD, .decision = "approved",
    .decision_wait_us = 1500000,
  };
  ChpTraceStep failing = {
    .tool = "browser_act", .args = "{\"ref\":\"e14\",\"action\":\"click\"}", .queue_us = 2000,
    .run_us = 300000, .page_us = 250000, .outcome = "error", .error_code = "stale_document",
    .rung = "page", .host = "bank.example.com", .path = "/transfer", .role = "button",
    .name = "Confirm", .retry = 1,
    .snippet = "Confirm the transfer\nPassword: " TR_SNIPPET_PASSWORD "\nCancel",
  };
  ChpTraceStep token_name = {
    .tool = "browser_snapshot", .args = "{}", .run_us = 12000, .outcome = "ok",
    .host = "github.com", .path = "/settings/tokens/" TR_GITHUB_TOKEN,
    .role = "heading", .name = "Deploy key " TR_GITHUB_TOKEN,
  };
  ChpTraceStep hostile = {
    .tool = "browser_act", .args = "{\"ref\":\"e3\",\"text\":\"" TR_GITHUB_TOKEN "\"}",
    .run_us = 5000, .outcome = "ok", .host = "console.example.com",
    .path = "/keys/" TR_AWS_KEY "/view", .role = "link", .name = TR_HOSTILE,
  };
  ChpTraceStep stopped = {
    .tool = "browser_act", .args = "{\"ref\":\"e4\",\"action\":\"click\"}", .outcome = "stopped",
    .error_code = "stopped", .host = "console.example.com", .path = "/keys",
    .role = "button", .name = "Copy " TR_JWT " now",
    .decision_kind = CHP_TRACE_DECISION_STOP, .stopped_by = "person",
  };

  add_step (store, older, &navigate);
  add_step (store, older, &fill);
  add_step (store, older, &held);
  add_step (store, older, &failing);
  chp_store_trace_add_shot (store, older, 4, jpeg, 8, 8);
  chp_store_trace_end (store, older, "ok");

  newer = chp_store_trace_begin (store, TR_HOSTILE, "Home Chromium");
  add_step (store, newer, &token_name);
  add_step (store, newer, &hostile);
  add_step (store, newer, &stopped);
  chp_store_trace_end (store, newer, "stopped");
  tr_flush (store);

  recorded->older_id = g_strdup (chp_trace_handle_get_id (older));
  recorded->newer_id = g_strdup (chp_trace_handle_get_id (newer));
}

void
tr_record_in (const char *data_dir,
              TrRecorded *recorded)
{
  g_autoptr(ChpStore) store = tr_open_store (data_dir);

  tr_record (store, recorded);
  tr_close_store (&store);
}

char *
tr_read_file (const char *path,
              gsize      *len)
{
  g_autoptr(GError) error = NULL;
  char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, len, &error));
  g_assert_no_error (error);
  return text;
}

static gboolean
bytes_contain (const char *data,
               gsize       len,
               const char *needle)
{
  gsize n = strlen (needle);

  for (gsize i = 0; n <= len && i <= len - n; i++)
    if (memcmp (data + i, needle, n) == 0)
      return TRUE;
  return FALSE;
}

/* Every byte of the file, not its parsed text: a secret must not be anywhere in it. */
void
tr_assert_no_secrets (const char *path)
{
  const char * const secrets[] = {
    TR_TYPED_SECRET, TR_GITHUB_TOKEN, TR_AWS_KEY, TR_JWT, TR_JWT_SIGNATURE,
    "eyJzdWIiOiIxMjM0NTY3ODkwIn0", TR_SNIPPET_PASSWORD,
  };
  gsize len = 0;
  g_autofree char *data = tr_read_file (path, &len);

  g_assert_cmpuint (len, >, 0);
  for (guint i = 0; i < G_N_ELEMENTS (secrets); i++)
    if (bytes_contain (data, len, secrets[i]))
      g_error ("%s holds the planted secret “%s”", path, secrets[i]);
}
