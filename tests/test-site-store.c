/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-site-store.c: the site memory on a real SQLite file: merge and load, stable entry ids,
 * confidence and quarantine, the two-visit rule for labels, what is never stored, Forget and
 * Restore within a day and the purge on time, the export, refusals that leave nothing behind, a
 * scan of the files' raw bytes for planted secrets, the migration, and the list model. */
#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "chp-site-allowlist.h"
#include "chp-site-list.h"
#include "chp-store-sites.h"
#include "chp-test-client.h"

#define ORIGIN "https://mail.example.com"
#define HOUR_MS ((gint64) 3600 * 1000)

/* One call in flight at a time: its result is kept until the next one is read. */
static ChpTestResult wait;

#define CB chp_test_result_cb, &wait

/* Returns: (transfer none): the result of the call started with CB, once its callback ran */
static GAsyncResult *
result_now (void)
{
  return chp_test_result_wait (&wait);
}

/* Asserts @error is @code of the store's domain, and clears it for the next call. */
#define assert_store_error(error, code) \
  G_STMT_START { \
    g_assert_error (error, CHP_STORE_ERROR, code); \
    g_clear_error (&(error)); \
  } G_STMT_END

typedef struct
{
  char     *dir;
  char     *path;
  ChpStore *store;
} Fixture;

static ChpStore *
open_store (const char *path, gboolean with_policy)
{
  ChpStore *store = chp_store_new (path);
  g_autoptr(GError) error = NULL;

  if (with_policy)
    chp_store_set_site_policy (store, chp_site_allowlist_check,
                               chp_site_allowlist_label_is_personal);
  chp_store_open_async (store, NULL, CB);
  g_assert_true (chp_store_open_finish (store, result_now (), &error));
  g_assert_no_error (error);

  return store;
}

static void
fixture_setup (Fixture *fx, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  fx->dir = g_dir_make_tmp ("chp-sites-XXXXXX", &error);
  g_assert_no_error (error);
  fx->path = g_build_filename (fx->dir, "chaperone.db", NULL);
  fx->store = open_store (fx->path, TRUE);
}

static void
fixture_teardown (Fixture *fx, gconstpointer data)
{
  if (fx->store != NULL)
    chp_store_close (fx->store);
  g_clear_object (&fx->store);
  chp_test_result_clear (&wait);
  chp_test_remove_tree (fx->dir);
  g_free (fx->path);
  g_free (fx->dir);
}

static void
reopen (Fixture *fx)
{
  chp_store_close (fx->store);
  g_clear_object (&fx->store);
  fx->store = open_store (fx->path, TRUE);
}

/* JSON written with ' for " (no text here has an apostrophe), to read like the vectors. */
static JsonObject *
parse (const char *text)
{
  g_autofree char *json = g_strdelimit (g_strdup (text), "'", '"');
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = json_from_string (json, &error);

  g_assert_no_error (error);
  return json_object_ref (json_node_get_object (node));
}

/* An update in the allowlist's form: a GET at @path and a POST; @query_keys and @controls are
 * JSON text, NULL for the defaults. */
static JsonObject *
make_update (const char *origin, const char *path, const char *query_keys, const char *controls)
{
  g_autofree char *text = g_strdup_printf (
    "{'origin': '%s', 'endpoints': [{'method': 'GET', 'pathTemplate': '%s', 'queryKeys': %s,"
    " 'body': null, 'response': {'contentType': 'application/json', 'shape': {'threads':"
    " {'array': 25}, 'next': 'string'}}, 'credential': {'kind': 'cookie'}, 'frame': '%s/inbox',"
    " 'sampleStatus': 200}, {'method': 'POST', 'pathTemplate': '/api/send', 'body': {'kind':"
    " 'json', 'keys': {'to': 'array', 'subject': 'string'}}, 'credential': {'kind': 'header',"
    " 'header': 'X-Mail-Csrf'}, 'frame': '%s/compose', 'sampleStatus': 202}], 'controls': %s,"
    " 'ready': {'heading': 'Inbox'}, 'signin': {'path': '/login', 'signals': ['password-field']}}",
    origin, path, query_keys ? query_keys : "['q']", origin, origin, controls ? controls : "[]");

  return parse (text);
}

/* Each call below starts an _async call with CB and finishes it with result_now(). */
static ChpSiteRecord *
merge (Fixture *fx, JsonObject *update, const char *visit_id, gint64 now, GError **error)
{
  chp_store_merge_site_async (fx->store, update, visit_id, now, NULL, CB);
  return chp_store_merge_site_finish (fx->store, result_now (), error);
}

static ChpSiteRecord *
merge_ok (Fixture *fx, JsonObject *update, const char *visit_id, gint64 now)
{
  g_autoptr(GError) error = NULL;
  ChpSiteRecord *record = merge (fx, update, visit_id, now, &error);

  g_assert_no_error (error);
  g_assert_nonnull (record);
  return record;
}

static ChpSiteRecord *
load (Fixture *fx, const char *origin, GError **error)
{
  chp_store_load_site_async (fx->store, origin, NULL, CB);
  return chp_store_load_site_finish (fx->store, result_now (), error);
}

static GPtrArray *
list (Fixture *fx, gboolean include_forgotten)
{
  chp_store_list_sites_async (fx->store, include_forgotten, NULL, CB);
  return chp_store_list_sites_finish (fx->store, result_now (), NULL);
}

static ChpSiteEndpoint *
endpoint_result (Fixture *fx, const char *entry_id, gboolean success, JsonObject *response,
                 gint64 now, GError **error)
{
  chp_store_site_endpoint_result_async (fx->store, entry_id, success, success ? 200 : 500,
                                        response, now, NULL, CB);
  return chp_store_site_endpoint_result_finish (fx->store, result_now (), error);
}

typedef void (*SiteWrite) (ChpStore *, const char *, gint64, GCancellable *, GAsyncReadyCallback,
                           gpointer);

/* Forget or Restore. */
static gboolean
site_write (Fixture *fx, SiteWrite write, const char *origin, gint64 now, GError **error)
{
  write (fx->store, origin, now, NULL, CB);
  return chp_store_write_finish (fx->store, result_now (), error);
}

static gboolean
visit (Fixture *fx, const char *origin, const char *visit_id, gint64 now, GError **error)
{
  chp_store_site_visit_async (fx->store, origin, visit_id, now, NULL, CB);
  return chp_store_write_finish (fx->store, result_now (), error);
}

static JsonNode *
export_sites (Fixture *fx, const char *origin, GError **error)
{
  chp_store_export_sites_async (fx->store, origin, NULL, CB);
  return chp_store_export_sites_finish (fx->store, result_now (), error);
}

/* What a second connection reads from the file itself, as text (NULL for SQL NULL). */
static char *
db_text (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  char *text = NULL;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    text = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);
  sqlite3_close (db);

  return text;
}

static gint64
db_int (const char *path, const char *sql)
{
  g_autofree char *text = db_text (path, sql);

  return text != NULL ? g_ascii_strtoll (text, NULL, 10) : -1;
}

/* Every row of every site table, as text: equal dumps, equal memory. */
static char *
db_dump (const char *path)
{
  return db_text (path,
                  "SELECT group_concat (r, char (10)) FROM ("
                  " SELECT quote (origin) || visits || last_used || quote (ready) || forgotten_at"
                  " AS r FROM sites UNION ALL SELECT entry_id || query_keys || confidence || misses"
                  " || sample_status FROM site_endpoints UNION ALL SELECT role || quote (label) ||"
                  " label_hash || visits FROM site_controls ORDER BY 1)");
}

/* Whether @needle's bytes are in the database file or its WAL as they are on disk now (read
 * whole, NULs and all). */
static gboolean
files_contain (Fixture *fx, const char *needle)
{
  const char * const suffixes[] = { "", "-wal" };
  gsize n = strlen (needle);

  for (guint f = 0; f < G_N_ELEMENTS (suffixes); f++)
    {
      g_autofree char *file = g_strconcat (fx->path, suffixes[f], NULL);
      g_autofree char *bytes = NULL;
      gsize len = 0;

      g_file_get_contents (file, &bytes, &len, NULL);
      for (gsize i = 0; bytes != NULL && i + n <= len; i++)
        if (memcmp (bytes + i, needle, n) == 0)
          return TRUE;
    }
  return FALSE;
}

static ChpSiteEndpoint *
find_endpoint (ChpSiteRecord *record, const char *method)
{
  for (guint i = 0; i < record->endpoints->len; i++)
    {
      ChpSiteEndpoint *endpoint = record->endpoints->pdata[i];

      if (g_str_equal (endpoint->method, method))
        return endpoint;
    }
  g_assert_not_reached ();
}

static void
test_merge_load (Fixture *fx, gconstpointer data)
{
  g_autoptr(JsonObject) update = make_update (ORIGIN, "/api/threads", "['q', 'page']", NULL);
  g_autoptr(JsonObject) again = make_update (ORIGIN, "/api/threads", "['label', 'q']", NULL);
  g_autoptr(ChpSiteRecord) record = merge_ok (fx, update, "doc-1", 1000);
  g_autoptr(ChpSiteRecord) merged = NULL;
  g_autoptr(GPtrArray) sites = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *get_id = chp_site_entry_id (ORIGIN, "GET", "/api/threads");
  ChpSiteEndpoint *get;

  g_assert_cmpint (record->info->visits, ==, 1);
  g_assert_cmpint (record->info->created_at, ==, 1000);
  g_assert_cmpuint (record->info->n_endpoints, ==, 2);
  g_assert_cmpfloat_with_epsilon (record->info->confidence, 0.5, 1e-9);
  g_assert_cmpstr (record->info->ready, ==, "{\"heading\":\"Inbox\"}");
  g_assert_cmpstr (record->info->signin, ==,
                   "{\"path\":\"/login\",\"signals\":[\"password-field\"]}");

  get = find_endpoint (record, "GET");
  g_assert_cmpstr (get->entry_id, ==, get_id);
  g_assert_cmpstr (get->query_keys, ==, "[\"q\",\"page\"]");
  g_assert_nonnull (strstr (get->response_shape, "\"threads\":{\"array\":25}"));
  g_assert_cmpstr (get->credential, ==, "cookie");
  g_assert_cmpint (get->sample_status, ==, 200);
  g_assert_cmpfloat_with_epsilon (get->confidence, 0.5, 1e-9);
  g_assert_cmpstr (find_endpoint (record, "POST")->credential, ==, "header:X-Mail-Csrf");
  g_assert_nonnull (strstr (find_endpoint (record, "POST")->body_shape, "\"subject\":\"string\""));

  merged = load (fx, ORIGIN, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (find_endpoint (merged, "GET")->entry_id, ==, get_id);

  /* A used endpoint keeps what it earned through a new visit's merge; its query keys grow. */
  g_clear_pointer (&merged, chp_site_record_free);
  chp_site_endpoint_free (endpoint_result (fx, get_id, TRUE, NULL, 1500, &error));
  g_assert_no_error (error);
  json_object_set_int_member (json_array_get_object_element (
    json_object_get_array_member (again, "endpoints"), 0), "sampleStatus", 203);
  merged = merge_ok (fx, again, "doc-2", 2000);
  get = find_endpoint (merged, "GET");
  g_assert_cmpstr (get->query_keys, ==, "[\"q\",\"page\",\"label\"]");
  g_assert_cmpfloat_with_epsilon (get->confidence, 0.6, 1e-9);
  g_assert_cmpint (get->successes, ==, 1);
  g_assert_cmpint (get->sample_status, ==, 203);
  g_assert_cmpint (get->learned_at, ==, 2000);
  g_assert_cmpint (merged->info->visits, ==, 2);

  /* Visits count once per document id; a visit without one always counts. */
  g_assert_true (visit (fx, ORIGIN, "doc-2", 2100, &error));
  g_assert_true (visit (fx, ORIGIN, "doc-3", 2200, &error));
  g_assert_true (visit (fx, ORIGIN, NULL, 2300, &error));
  g_assert_no_error (error);
  g_assert_cmpint (db_int (fx->path, "SELECT visits FROM sites"), ==, 4);
  g_assert_false (visit (fx, "https://unknown.example", "doc-1", 2400, &error));
  assert_store_error (error, CHP_STORE_ERROR_NOT_FOUND);
  g_assert_cmpint (db_int (fx->path, "SELECT count(*) FROM sites"), ==, 1);

  g_assert_null (load (fx, "https://unknown.example", &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);

  /* It survives a restart. */
  reopen (fx);
  sites = list (fx, FALSE);
  g_assert_cmpuint (sites->len, ==, 1);
  g_assert_cmpuint (((ChpSiteInfo *) sites->pdata[0])->n_endpoints, ==, 2);
}

static void
test_entry_ids (void)
{
  g_autofree char *a = chp_site_entry_id ("https://a.example", "GET", "/x/{id}");
  g_autofree char *b = chp_site_entry_id ("https://a.example", "GET", "/x/{id}");
  g_autofree char *c = chp_site_entry_id ("https://a.example", "POST", "/x/{id}");
  g_autofree char *digest =
    g_compute_checksum_for_string (G_CHECKSUM_SHA256, "https://a.example\nGET\n/x/{id}", -1);
  g_autofree char *expected = g_strdup_printf ("e%.12s", digest);
  g_assert_cmpstr (a, ==, expected);
  g_assert_cmpstr (a, ==, b);
  g_assert_cmpstr (a, !=, c);
  g_assert_cmpuint (strlen (a), ==, 13);
}

static void
test_confidence (Fixture *fx, gconstpointer data)
{
  g_autoptr(JsonObject) update = make_update (ORIGIN, "/api/threads", NULL, NULL);
  g_autoptr(ChpSiteRecord) record = merge_ok (fx, update, "doc-1", 1000);
  g_autoptr(JsonObject) shape = parse ("{'contentType': 'application/json',"
                                       " 'shape': {'threads': {'array': 3}, 'more': 'boolean'}}");
  g_autoptr(JsonObject) leaky = parse ("{'contentType': 'application/json',"
                                       " 'shape': {'bob@example.com': 'string'}}");
  g_autoptr(JsonObject) untyped = parse ("{'contentType': '', 'shape': {'type': 'string'}}");
  JsonObject *refused[] = { leaky, untyped };
  g_autoptr(GError) error = NULL;
  g_autofree char *id = g_strdup (find_endpoint (record, "GET")->entry_id);
  const struct { gboolean success; double confidence; gint misses; gboolean quarantined; }
  steps[] = {
    { TRUE, 0.6, 0, FALSE },
    { FALSE, 0.35, 1, FALSE },
    { FALSE, 0.1, 2, TRUE },
    { FALSE, 0.0, 3, TRUE },
    { TRUE, 0.1, 0, FALSE },
  };

  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      g_autoptr(ChpSiteEndpoint) endpoint = endpoint_result (fx, id, steps[i].success, NULL,
                                                             2000 + i, &error);

      g_assert_no_error (error);
      g_assert_cmpfloat_with_epsilon (endpoint->confidence, steps[i].confidence, 1e-9);
      g_assert_cmpint (endpoint->misses, ==, steps[i].misses);
      g_assert_cmpint (endpoint->quarantined, ==, steps[i].quarantined);
      g_assert_cmpint (endpoint->last_used, ==, 2000 + i);
    }

  for (guint i = 0; i < 12; i++)
    chp_site_endpoint_free (endpoint_result (fx, id, TRUE, NULL, 3000, &error));
  g_assert_no_error (error);
  g_assert_cmpint (db_int (fx->path, "SELECT max (confidence) * 100 FROM site_endpoints"), ==, 100);

  /* A success's response shape is kept when the allowlist takes it. One it refuses (a key that
   * is an address, a reply with no content type) is not, but the call worked all the same: the
   * success counts, and a quarantine lifts. */
  chp_site_endpoint_free (endpoint_result (fx, id, TRUE, shape, 3100, &error));
  g_assert_no_error (error);
  chp_site_endpoint_free (endpoint_result (fx, id, FALSE, NULL, 3150, &error));
  chp_site_endpoint_free (endpoint_result (fx, id, FALSE, NULL, 3160, &error));  /* quarantined */
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_autoptr(ChpSiteEndpoint) endpoint = endpoint_result (fx, id, TRUE, refused[i], 3200 + i,
                                                             &error);

      g_assert_no_error (error);
      g_assert_false (endpoint->quarantined);
      g_assert_cmpint (endpoint->misses, ==, 0);
      g_assert_cmpint (endpoint->last_used, ==, 3200 + i);
      g_assert_nonnull (strstr (endpoint->response_shape, "\"more\":\"boolean\""));
    }
  g_assert_false (files_contain (fx, "bob@example.com"));
  g_clear_pointer (&record, chp_site_record_free);
  record = load (fx, ORIGIN, &error);
  g_assert_nonnull (strstr (find_endpoint (record, "GET")->response_shape, "\"more\":\"boolean\""));
  g_assert_cmpint (record->info->n_quarantined, ==, 0);
  g_assert_cmpint (record->info->last_used, ==, 3201);

  g_assert_null (endpoint_result (fx, "e000000000000", TRUE, NULL, 4000, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
}

#define CONTROL(role, label, in_list) \
  "{'role': '" role "', 'label': '" label "', 'key': null, 'inList': " in_list "}"
#define ARCHIVE "[{'role': 'button', 'label': 'Archive conversation', 'key': 'e', 'inList': false}]"

static void
test_two_visits (Fixture *fx, gconstpointer data)
{
  g_autoptr(JsonObject) update = make_update (ORIGIN, "/api/threads", NULL, ARCHIVE);
  g_autoptr(ChpSiteRecord) first = merge_ok (fx, update, "doc-1", 1000);
  g_autoptr(ChpSiteRecord) same = NULL;
  g_autoptr(ChpSiteRecord) unnamed = NULL;
  g_autoptr(ChpSiteRecord) second = NULL;
  g_autofree char *label = NULL;
  ChpSiteControl *control;

  /* One visit: a hash and a count, no label, and the label's bytes nowhere in the files. */
  g_assert_cmpuint (first->controls->len, ==, 1);
  control = first->controls->pdata[0];
  g_assert_null (control->label);
  g_assert_null (control->key);
  g_assert_cmpint (control->visits, ==, 1);
  g_assert_cmpuint (first->info->n_controls, ==, 0);
  label = db_text (fx->path, "SELECT label FROM site_controls");
  g_assert_null (label);
  g_assert_cmpint (db_int (fx->path, "SELECT length (label_hash) FROM site_controls"), ==, 64);
  g_assert_false (files_contain (fx, "Archive conversation"));

  /* The same visit again, or a visit nobody can tell apart, does not count. */
  same = merge_ok (fx, update, "doc-1", 1100);
  g_assert_null (((ChpSiteControl *) same->controls->pdata[0])->label);
  g_assert_cmpint (((ChpSiteControl *) same->controls->pdata[0])->visits, ==, 1);
  unnamed = merge_ok (fx, update, NULL, 1200);
  g_assert_null (((ChpSiteControl *) unnamed->controls->pdata[0])->label);
  g_assert_cmpint (db_int (fx->path, "SELECT visits FROM site_controls"), ==, 1);

  /* A second distinct visit: now it is known by its label. */
  second = merge_ok (fx, update, "doc-2", 2000);
  control = second->controls->pdata[0];
  g_assert_cmpstr (control->label, ==, "Archive conversation");
  g_assert_cmpstr (control->key, ==, "e");
  g_assert_cmpint (control->visits, ==, 2);
  g_assert_cmpint (control->first_seen, ==, 1000);
  g_assert_cmpint (control->last_seen, ==, 2000);
  g_assert_cmpuint (second->info->n_controls, ==, 1);
  g_free (label);
  label = db_text (fx->path, "SELECT label FROM site_controls");
  g_assert_cmpstr (label, ==, "Archive conversation");
  g_assert_true (files_contain (fx, "Archive conversation"));
}

static void
test_never_stored (Fixture *fx, gconstpointer data)
{
  const char *controls =
    "[" CONTROL ("button", "Reply", "false") ","
    " " CONTROL ("link", "Quarterly numbers from Dana", "true") ","
    " " CONTROL ("button", "Signed in as dana.planted@example.net", "false") ","
    " " CONTROL ("link", "Call +1 555 867 5309", "false") ","
    " " CONTROL ("link", "Order 7734521", "false") "]";
  g_autoptr(JsonObject) update = make_update (ORIGIN, "/api/threads", NULL, controls);
  const char *planted[] = {
    "Quarterly numbers", "dana.planted@example.net", "867 5309", "7734521"
  };

  for (guint i = 0; i < 3; i++)
    {
      g_autofree char *visit_id = g_strdup_printf ("doc-%u", i);
      g_autoptr(ChpSiteRecord) record = merge_ok (fx, update, visit_id, 1000 + i);

      g_assert_cmpuint (record->controls->len, ==, 1);
      g_assert_cmpstr (((ChpSiteControl *) record->controls->pdata[0])->label, ==,
                       i == 0 ? NULL : "Reply");
    }
  g_assert_cmpint (db_int (fx->path, "SELECT count(*) FROM site_controls"), ==, 1);

  for (guint i = 0; i < G_N_ELEMENTS (planted); i++)
    g_assert_false (files_contain (fx, planted[i]));
  g_assert_true (files_contain (fx, "Reply"));
}

static void
test_forget_restore (Fixture *fx, gconstpointer data)
{
  g_autoptr(JsonObject) update = make_update (ORIGIN, "/api/threads", NULL, ARCHIVE);
  g_autoptr(JsonObject) other = make_update ("https://other.example", "/feed", NULL, NULL);
  g_autoptr(GPtrArray) sites = NULL;
  g_autoptr(ChpSiteRecord) record = NULL;
  g_autoptr(GError) error = NULL;
  gint64 now = (g_get_real_time () / 1000);

  chp_site_record_free (merge_ok (fx, update, "doc-1", now));
  chp_site_record_free (merge_ok (fx, other, "doc-1", now - 10));

  /* Forgotten: hidden at once, learning and visits refused, listed only when asked. */
  g_assert_true (site_write (fx, chp_store_forget_site_async, ORIGIN, now + 1, &error));
  g_assert_null (load (fx, ORIGIN, &error));
  assert_store_error (error, CHP_STORE_ERROR_NOT_FOUND);
  g_assert_null (merge (fx, update, "doc-2", now + 2, &error));
  assert_store_error (error, CHP_STORE_ERROR_NOT_FOUND);
  g_assert_false (visit (fx, ORIGIN, "doc-3", now + 2, &error));
  assert_store_error (error, CHP_STORE_ERROR_NOT_FOUND);
  g_assert_false (site_write (fx, chp_store_forget_site_async, ORIGIN, now + 2, &error));
  assert_store_error (error, CHP_STORE_ERROR_NOT_FOUND);
  sites = list (fx, FALSE);
  g_assert_cmpuint (sites->len, ==, 1);
  g_assert_cmpstr (((ChpSiteInfo *) sites->pdata[0])->origin, ==, "https://other.example");
  g_clear_pointer (&sites, g_ptr_array_unref);
  sites = list (fx, TRUE);
  g_assert_cmpuint (sites->len, ==, 2);
  g_assert_cmpint (((ChpSiteInfo *) sites->pdata[0])->forgotten_at, ==, now + 1);
  g_clear_pointer (&sites, g_ptr_array_unref);

  /* Restored within the day: all of it is back. */
  g_assert_true (site_write (fx, chp_store_restore_site_async, ORIGIN, now + 23 * HOUR_MS, &error));
  g_assert_no_error (error);
  record = load (fx, ORIGIN, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (record->endpoints->len, ==, 2);
  g_assert_cmpuint (record->controls->len, ==, 1);
  g_assert_false (site_write (fx, chp_store_restore_site_async, ORIGIN, now + 2, &error));
  assert_store_error (error, CHP_STORE_ERROR_NOT_FOUND);

  /* After the day: gone for good, endpoints and controls with it. */
  g_assert_true (site_write (fx, chp_store_forget_site_async, ORIGIN, now + 3, &error));
  g_assert_false (site_write (fx, chp_store_restore_site_async, ORIGIN, now + 25 * HOUR_MS,
                              &error));
  assert_store_error (error, CHP_STORE_ERROR_NOT_FOUND);
  g_assert_cmpint (db_int (fx->path, "SELECT (SELECT count(*) FROM sites) * 100"
                                     " + (SELECT count(*) FROM site_endpoints"
                                     "    WHERE origin = '" ORIGIN "')"
                                     " + (SELECT count(*) FROM site_controls)"), ==, 100);

  /* Learning starts afresh once it is gone. */
  g_clear_pointer (&record, chp_site_record_free);
  record = merge_ok (fx, update, "doc-9", now + 26 * HOUR_MS);
  g_assert_cmpint (record->info->visits, ==, 1);
  g_assert_cmpfloat_with_epsilon (record->info->confidence, 0.5, 1e-9);

  /* Forgotten over a day ago by the clock as the app quits, before its timer could run: gone
   * as the store opens, before anything reads. */
  chp_store_forget_site_async (fx->store, ORIGIN, now - 25 * HOUR_MS, NULL, NULL, NULL);
  chp_store_close (fx->store);
  g_assert_cmpint (db_int (fx->path, "SELECT count(*) FROM sites"), ==, 2);
  reopen (fx);
  g_assert_cmpint (db_int (fx->path, "SELECT count(*) FROM sites"), ==, 1);
  g_assert_cmpint (db_int (fx->path, "SELECT count(*) FROM site_endpoints"), ==, 2);
}

/* A site forgotten a day ago is deleted for good on time in an app that keeps running: nothing
 * lists the sites, restores one or restarts, and its bytes leave the write-ahead log too. */
static void
test_forget_on_time (Fixture *fx, gconstpointer data)
{
  g_autoptr(JsonObject) update = make_update (ORIGIN, "/api/forgettable", NULL, NULL);
  g_autoptr(JsonObject) other = make_update ("https://other.example", "/feed", NULL, NULL);
  g_autoptr(GError) error = NULL;
  gint64 now = g_get_real_time () / 1000;

  chp_site_record_free (merge_ok (fx, update, "doc-1", now - 26 * HOUR_MS));
  chp_site_record_free (merge_ok (fx, other, "doc-1", now - 26 * HOUR_MS));
  g_assert_true (files_contain (fx, "/api/forgettable"));

  /* Forgotten 25 hours ago: its day is up. The purge's turn comes with the main loop's; a read
   * queued after it sees what it did. */
  g_assert_true (site_write (fx, chp_store_forget_site_async, ORIGIN, now - 25 * HOUR_MS, &error));
  while (g_main_context_iteration (NULL, FALSE))
    ;
  chp_site_record_free (load (fx, "https://other.example", &error));
  g_assert_no_error (error);
  g_assert_false (files_contain (fx, "/api/forgettable"));
  g_assert_cmpint (db_int (fx->path, "SELECT (SELECT count(*) FROM sites) * 100"
                                     " + (SELECT count(*) FROM site_endpoints)"), ==, 102);
}

/* What @path (JSONPath) finds in @root as JSON text with ' for " (the value when it is one,
 * else them all). */
static char *
json_at (JsonNode *root, const char *path)
{
  g_autoptr(JsonNode) found = json_path_query (path, root, NULL);
  JsonArray *hits = json_node_get_array (found);

  char *json = json_to_string (json_array_get_length (hits) == 1 ? json_array_get_element (hits, 0)
                                                                 : found, FALSE);

  return g_strdelimit (json, "\"", '\'');
}

#define assert_json(root, path, expected) \
  G_STMT_START { \
    g_autofree char *json_ = json_at (root, path); \
    g_assert_cmpstr (json_, ==, expected); \
  } G_STMT_END

static void
test_export (Fixture *fx, gconstpointer data)
{
  g_autoptr(JsonObject) update = make_update (ORIGIN, "/api/threads", NULL, ARCHIVE);
  g_autoptr(JsonObject) pending =
    make_update ("https://other.example", "/feed", NULL,
                 "[" CONTROL ("button", "Seen once", "false") "]");
  g_autoptr(JsonNode) all = NULL;
  g_autoptr(JsonNode) one = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  g_autofree char *entry_id = NULL;

  chp_site_record_free (merge_ok (fx, update, "doc-1", 1000));
  chp_site_record_free (merge_ok (fx, update, "doc-2", 2000));
  chp_site_record_free (merge_ok (fx, pending, "doc-1", 1500));

  all = export_sites (fx, NULL, &error);
  g_assert_no_error (error);
  assert_json (all, "$.sites[*].origin", "['" ORIGIN "','https://other.example']");
  assert_json (all, "$.sites[0].visits", "2");
  assert_json (all, "$.sites[0].lastUsed", "2000");
  assert_json (all, "$.sites[0].ready", "{'heading':'Inbox'}");
  assert_json (all, "$.sites[0].signin.path", "'/login'");
  assert_json (all, "$.sites[0].endpoints[*].method", "['POST','GET']");
  assert_json (all, "$.sites[0].endpoints[0].pathTemplate", "'/api/send'");
  assert_json (all, "$.sites[0].endpoints[0].credential",
               "{'kind':'header','header':'X-Mail-Csrf'}");
  assert_json (all, "$.sites[0].endpoints[0].body.kind", "'json'");
  assert_json (all, "$.sites[0].endpoints[0].response", "null");
  assert_json (all, "$.sites[0].endpoints[1].queryKeys", "['q']");
  assert_json (all, "$.sites[0].endpoints[1].confidence", "0.5");
  entry_id = json_at (all, "$.sites[0].endpoints[0].entryId");  /* quoted */
  g_assert_cmpuint (strlen (entry_id), ==, 15);
  assert_json (all, "$.sites[0].controls",
               "[{'role':'button','label':'Archive conversation','key':'e','visits':2}]");

  /* A control seen once is not shown, not even as a hash. */
  assert_json (all, "$.sites[1].controls", "[]");
  text = json_to_string (all, FALSE);
  g_assert_null (strstr (text, "Seen once"));
  g_assert_null (strstr (text, "hash"));

  one = export_sites (fx, "https://other.example", &error);
  g_assert_no_error (error);
  assert_json (one, "$.sites[*].origin", "'https://other.example'");
  g_assert_null (export_sites (fx, "https://nowhere.example", &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
}

static void
test_refused_unchanged (Fixture *fx, gconstpointer data)
{
  g_autoptr(JsonObject) update = make_update (ORIGIN, "/api/threads", NULL, ARCHIVE);
  g_autoptr(JsonObject) bad = make_update (ORIGIN, "/api/labels", "['q', 'new']",
                                           "[{'role': 'button', 'label': 'Archive conversation',"
                                           " 'key': null, 'inList': false},"
                                           " {'role': 'button', 'label': 'x', 'key': null,"
                                           " 'inList': false, 'value': 'typed'}]");
  g_autoptr(JsonObject) fresh = make_update ("https://fresh.example", "/api/{id}", NULL, NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *before = NULL;
  g_autofree char *after = NULL;
  g_autofree char *bare_path = g_build_filename (fx->dir, "bare.db", NULL);
  g_autoptr(ChpStore) bare = NULL;

  chp_site_record_free (merge_ok (fx, update, "doc-1", 1000));
  before = db_dump (fx->path);

  /* Refused at its last control: nothing else of it is kept either (the site's visit, the new
   * endpoint and query key, the first control's second visit). */
  g_assert_null (merge (fx, bad, "doc-2", 2000, &error));
  g_assert_nonnull (strstr (error->message, "controls[1].value"));
  g_assert_null (strstr (error->message, "typed"));
  assert_store_error (error, CHP_STORE_ERROR_FAILED);
  after = db_dump (fx->path);
  g_assert_cmpstr (before, ==, after);

  json_object_set_string_member (fresh, "origin", "https://FRESH.example");
  g_assert_null (merge (fx, fresh, "doc-1", 3000, &error));
  assert_store_error (error, CHP_STORE_ERROR_FAILED);
  g_assert_cmpint (db_int (fx->path, "SELECT count(*) FROM sites"), ==, 1);

  /* A store nobody gave the allowlist keeps nothing. */
  bare = open_store (bare_path, FALSE);
  chp_store_merge_site_async (bare, update, "doc-1", 1000, NULL, CB);
  g_assert_null (chp_store_merge_site_finish (bare, result_now (), &error));
  assert_store_error (error, CHP_STORE_ERROR_FAILED);
  chp_store_close (bare);
  g_assert_cmpint (db_int (bare_path, "SELECT count(*) FROM sites"), ==, 0);
}

/* Updates around planted secrets — each refused — then the raw bytes of the database, its
 * WAL and an export hold none of them. */
static void
test_secret_scan (Fixture *fx, gconstpointer data)
{
  const struct { const char *secret; const char *path; const char *controls; } planted[] = {
    { "Bearer Zk3vQ9xTq2LmN8rW4yHb", "/api/Bearer Zk3vQ9xTq2LmN8rW4yHb", NULL },
    { "hunter2-Pa55word!",
      "/api/threads",
      "[" CONTROL ("textbox", "password: hunter2-Pa55word!", "false") "]" },
    { "planted.person@example.net", "/users/planted.person@example.net", NULL },
    { "739251", "/verify/739251", NULL },
    { "Qm9vZ2llV29vZ2llMTIzNDU2Nzg5",
      "/api/threads",
      "[" CONTROL ("link", "sessionid=Qm9vZ2llV29vZ2llMTIzNDU2Nzg5", "false") "]" },
  };
  g_autoptr(JsonObject) good = make_update (ORIGIN, "/api/threads", NULL, ARCHIVE);
  g_autoptr(JsonObject) email_label =
    make_update (ORIGIN, "/api/threads", NULL,
                 "[{'role': 'button', 'label': 'Account planted.person@example.net',"
                 " 'key': null, 'inList': false}]");
  g_autoptr(JsonNode) exported = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *export_text = NULL;

  chp_site_record_free (merge_ok (fx, good, "doc-1", 1000));
  chp_site_record_free (merge_ok (fx, good, "doc-0", 1001));
  for (guint i = 0; i < G_N_ELEMENTS (planted); i++)
    {
      g_autoptr(JsonObject) update = make_update (ORIGIN, planted[i].path, NULL,
                                                  planted[i].controls);
      g_autofree char *visit_id = g_strdup_printf ("doc-%u", i + 2);

      g_assert_null (merge (fx, update, visit_id, 2000 + i, &error));
      g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_FAILED);
      g_assert_null (strstr (error->message, planted[i].secret));
      g_clear_error (&error);
    }

  /* An email on screen in a label is the person's: kept out without a refusal, twice over. */
  chp_site_record_free (merge_ok (fx, email_label, "doc-8", 3000));
  chp_site_record_free (merge_ok (fx, email_label, "doc-9", 3100));

  exported = export_sites (fx, NULL, &error);
  g_assert_no_error (error);
  export_text = json_to_string (exported, TRUE);

  /* Open (the WAL holds the latest pages), then closed (checkpointed into the file). */
  for (guint pass = 0; pass < 2; pass++)
    {
      for (guint i = 0; i < G_N_ELEMENTS (planted); i++)
        {
          g_assert_false (files_contain (fx, planted[i].secret));
          g_assert_null (strstr (export_text, planted[i].secret));
        }
      /* The scan can fail: what was kept is in the bytes it reads. */
      g_assert_true (files_contain (fx, "/api/threads"));
      g_assert_true (files_contain (fx, "Archive conversation"));
      chp_store_close (fx->store);
    }
}

/* A database as the previous version (3) left it: the current one, stripped of what
 * migration 4 adds. Opening it adds the site memory and keeps everything else. */
static void
test_migration (Fixture *fx, gconstpointer data)
{
  g_autoptr(JsonObject) update = make_update (ORIGIN, "/api/threads", NULL, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpSiteRecord) record = NULL;
  ChpRuleInfo rule = { .rule_id = "r1", .agent = "agent", .site = ORIGIN, .kind = "write",
                       .created_at = 1, .expires_at = G_MAXINT64 };
  g_autofree char *salt = NULL;
  g_autofree char *salt_after = NULL;
  sqlite3 *db = NULL;

  chp_store_save_rule_async (fx->store, &rule, NULL, CB);
  g_assert_true (chp_store_write_finish (fx->store, result_now (), &error));
  chp_store_close (fx->store);
  g_clear_object (&fx->store);

  g_assert_cmpint (sqlite3_open (fx->path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "DROP TABLE site_recipes; DROP TABLE site_controls;"
                                     " DROP TABLE site_endpoints; DROP TABLE sites;"
                                     " DROP TABLE site_salt;"
                                     " PRAGMA user_version = 3;", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);

  fx->store = open_store (fx->path, TRUE);
  g_assert_cmpint (db_int (fx->path, "PRAGMA user_version"), ==, 5);
  g_assert_cmpint (db_int (fx->path, "SELECT count(*) FROM rules"), ==, 1);
  g_assert_cmpint (db_int (fx->path, "SELECT length (salt) FROM site_salt"), ==, 32);
  record = merge_ok (fx, update, "doc-1", 1000);
  g_assert_cmpuint (record->endpoints->len, ==, 2);

  /* A re-open keeps it all, and the key of the hashes with it. */
  salt = db_text (fx->path, "SELECT hex (salt) FROM site_salt");
  reopen (fx);
  salt_after = db_text (fx->path, "SELECT hex (salt) FROM site_salt");
  g_assert_cmpstr (salt, ==, salt_after);
  g_clear_pointer (&record, chp_site_record_free);
  record = load (fx, ORIGIN, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (record->endpoints->len, ==, 2);
  g_assert_cmpint (db_int (fx->path, "SELECT count(*) FROM rules"), ==, 1);
}

/* Counts a signal's emissions (connected swapped: the counter comes first). */
static void
count_cb (guint *counter)
{
  (*counter)++;
}

/* Returns: (transfer none): the list's first site */
static ChpSite *
first_site (ChpSiteList *sites)
{
  ChpSite *site = g_list_model_get_item (G_LIST_MODEL (sites), 0);

  g_object_unref (site);
  return site;
}

static void
test_list_model (Fixture *fx, gconstpointer data)
{
  g_autoptr(JsonObject) a = make_update ("https://a.example", "/a", NULL, NULL);
  g_autoptr(JsonObject) b = make_update ("https://b.example", "/b", NULL, NULL);
  g_autoptr(JsonObject) c = make_update ("https://c.example", "/c", NULL, NULL);
  g_autoptr(ChpSiteList) sites = chp_site_list_new (fx->store);
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpSite) kept = NULL;
  guint reloads = 0;
  guint changes = 0;
  gint64 now = (g_get_real_time () / 1000);

  g_signal_connect_swapped (sites, "reloaded", G_CALLBACK (count_cb), &reloads);
  g_signal_connect_swapped (sites, "items-changed", G_CALLBACK (count_cb), &changes);

  chp_site_record_free (merge_ok (fx, a, "doc-1", now - 30));
  chp_site_record_free (merge_ok (fx, b, "doc-1", now - 20));
  chp_site_record_free (merge_ok (fx, c, "doc-1", now - 10));
  chp_site_list_reload (sites);
  chp_site_list_reload (sites);  /* while one runs: one more after it, one signal */
  chp_test_until (reloads == 1);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (sites)), ==, 3);
  g_assert_cmpstr (chp_site_get_origin (first_site (sites)), ==, "https://c.example");

  /* a used again: it moves to the front as the same object, in one splice. */
  kept = g_object_ref (chp_site_list_lookup (sites, "https://a.example"));
  chp_site_record_free (merge_ok (fx, a, "doc-2", now));
  changes = 0;
  chp_site_list_reload (sites);
  chp_test_until (reloads == 2);
  g_assert_cmpuint (changes, ==, 1);
  g_assert_true (chp_site_list_lookup (sites, "https://a.example") == kept);
  g_assert_cmpstr (chp_site_get_origin (first_site (sites)), ==, "https://a.example");
  g_assert_cmpint (chp_site_get_visits (kept), ==, 2);
  g_assert_cmpfloat_with_epsilon (chp_site_get_confidence (kept), 0.5, 1e-9);
  g_assert_cmpuint (chp_site_get_n_endpoints (kept), ==, 2);

  /* Forgotten: still listed, to be restored, and says so. */
  g_assert_true (site_write (fx, chp_store_forget_site_async, "https://a.example", now + 1,
                             &error));
  changes = 0;
  chp_site_list_reload (sites);
  chp_test_until (reloads == 3);
  g_assert_true (chp_site_get_forgotten (kept));
  g_assert_cmpuint (changes, ==, 0);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (sites)), ==, 3);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func, data) \
  g_test_add ("/chaperone/site-store/" path, Fixture, data, fixture_setup, func, fixture_teardown)

  ADD ("merge-load", test_merge_load, NULL);
  g_test_add_func ("/chaperone/site-store/entry-ids", test_entry_ids);
  ADD ("confidence-quarantine", test_confidence, NULL);
  ADD ("two-visit-labels", test_two_visits, NULL);
  ADD ("never-stored", test_never_stored, NULL);
  ADD ("forget-restore", test_forget_restore, NULL);
  ADD ("forget-on-time", test_forget_on_time, NULL);
  ADD ("export", test_export, NULL);
  ADD ("refused-unchanged", test_refused_unchanged, NULL);
  ADD ("secret-scan", test_secret_scan, NULL);
  ADD ("migration", test_migration, NULL);
  ADD ("list-model", test_list_model, NULL);

#undef ADD

  return g_test_run ();
}
