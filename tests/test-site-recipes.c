/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-site-recipes.c: recipes in the site memory, on a real SQLite file: kept with their
 * {{placeholders}} and params by name and type, replaced when saved again under their name, their
 * replays counted; a recipe that keeps a typed value refuses the whole update and leaves no byte of
 * it in the files; Forget hides them with their site and the purge deletes them; the export
 * carries them; a store of the previous schema (4) gains them at open; a site keeps at most 32. */
#include "config.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

#include "chp-site-allowlist.h"
#include "chp-store-sites.h"
#include "chp-test-client.h"

#define ORIGIN  "https://wiki.example"
#define HOUR_MS ((gint64) 3600 * 1000)
#define PLANTED "Harbour-Keeper-Log-Entry"

/* One call in flight at a time: its result is kept until the next one is read. */
static ChpTestResult wait;

#define CB chp_test_result_cb, &wait

/* Returns: (transfer none): the result of the call started with CB, once its callback ran */
static GAsyncResult *
result_now (void)
{
  return chp_test_result_wait (&wait);
}

typedef struct
{
  char     *dir;
  char     *path;
  ChpStore *store;
} Fixture;

static ChpStore *
open_store (const char *path)
{
  ChpStore *store = chp_store_new (path);
  g_autoptr(GError) error = NULL;

  chp_store_set_site_policy (store, chp_site_allowlist_check, chp_site_allowlist_label_is_personal);
  chp_store_open_async (store, NULL, CB);
  g_assert_true (chp_store_open_finish (store, result_now (), &error));
  g_assert_no_error (error);
  return store;
}

static void
fixture_setup (Fixture *fx, gconstpointer data)
{
  g_autoptr(GError) error = NULL;

  fx->dir = g_dir_make_tmp ("chp-recipes-XXXXXX", &error);
  g_assert_no_error (error);
  fx->path = g_build_filename (fx->dir, "chaperone.db", NULL);
  fx->store = open_store (fx->path);
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

/* JSON written with ' for ", to read like the vectors. */
static JsonObject *
parse (const char *text)
{
  g_autofree char *json = g_strdelimit (g_strdup (text), "'", '"');
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = json_from_string (json, &error);

  g_assert_no_error (error);
  return json_object_ref (json_node_get_object (node));
}

/* An update with one endpoint and a recipe @name whose fill keeps @value ('{{title}}' when it
 * keeps no typed value) and whose wait waits for @wait. */
static JsonObject *
recipe_update (const char *name,
               const char *value,
               const char *wait_text)
{
  g_autofree char *text = g_strdup_printf (
    "{'origin': '" ORIGIN "', 'endpoints': [{'method': 'GET', 'pathTemplate':"
    " '/recipes/default/tiddlers/{tiddler}', 'credential': {'kind': 'cookie'}, 'frame': '" ORIGIN
    "/', 'sampleStatus': 200}], 'recipes': [{'name': '%s', 'params': [{'name': 'title', 'type':"
    " 'string'}], 'steps': [{'api': {'entryId': 'e0a1b2c3d4e5f', 'params': {'tiddler':"
    " '{{title}}'}}}, {'act': {'target': {'role': 'textbox', 'name': 'Title'}, 'action': 'fill',"
    " 'value': '%s'}}, {'act': {'target': {'role': 'button', 'name': 'Save'}, 'action':"
    " 'click'}}, {'wait': {'text': '%s', 'timeoutMs': 2000}}]}]}", name, value, wait_text);

  return parse (text);
}

static ChpSiteRecord *
merge (Fixture *fx, JsonObject *update, gint64 now, GError **error)
{
  chp_store_merge_site_async (fx->store, update, NULL, now, NULL, CB);
  return chp_store_merge_site_finish (fx->store, result_now (), error);
}

static ChpSiteRecord *
load (Fixture *fx, GError **error)
{
  chp_store_load_site_async (fx->store, ORIGIN, NULL, CB);
  return chp_store_load_site_finish (fx->store, result_now (), error);
}

static gboolean
recipe_used (Fixture *fx, const char *name, gint64 now, GError **error)
{
  chp_store_site_recipe_used_async (fx->store, ORIGIN, name, now, NULL, CB);
  return chp_store_write_finish (fx->store, result_now (), error);
}

static gboolean
forget_or_restore (Fixture *fx, gboolean forget, gint64 now, GError **error)
{
  if (forget)
    chp_store_forget_site_async (fx->store, ORIGIN, now, NULL, CB);
  else
    chp_store_restore_site_async (fx->store, ORIGIN, now, NULL, CB);
  return chp_store_write_finish (fx->store, result_now (), error);
}

static char *
export_text (Fixture *fx)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) root = NULL;

  chp_store_export_sites_async (fx->store, NULL, NULL, CB);
  root = chp_store_export_sites_finish (fx->store, result_now (), &error);
  g_assert_no_error (error);
  return json_to_string (root, FALSE);
}

static gint64
db_int (const char *path, const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 value = -1;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    value = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return value;
}

/* Whether @needle's bytes are in the database file or its WAL. */
static gboolean
files_contain (Fixture *fx, const char *needle)
{
  const char * const suffixes[] = { "", "-wal" };

  for (guint f = 0; f < G_N_ELEMENTS (suffixes); f++)
    {
      g_autofree char *file = g_strconcat (fx->path, suffixes[f], NULL);
      g_autofree char *bytes = NULL;
      gsize len = 0;

      g_file_get_contents (file, &bytes, &len, NULL);
      for (gsize i = 0; bytes != NULL && i + strlen (needle) <= len; i++)
        if (memcmp (bytes + i, needle, strlen (needle)) == 0)
          return TRUE;
    }
  return FALSE;
}

static void
test_kept (Fixture *fx, gconstpointer data)
{
  g_autoptr(JsonObject) update = recipe_update ("new-note", "{{title}}", "Saved");
  g_autoptr(JsonObject) again = parse ("{'origin': '" ORIGIN "', 'recipes': [{'name': 'new-note',"
                                       " 'steps': [{'wait': {'text': 'Ready'}}]}]}");
  g_autoptr(ChpSiteRecord) record = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *exported = NULL;
  const ChpSiteRecipe *recipe;
  gint64 now = g_get_real_time () / 1000;

  record = merge (fx, update, now, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (record->recipes->len, ==, 1);
  g_assert_cmpuint (record->info->n_recipes, ==, 1);
  recipe = g_ptr_array_index (record->recipes, 0);
  g_assert_cmpstr (recipe->name, ==, "new-note");
  g_assert_cmpint (recipe->n_steps, ==, 4);
  g_assert_cmpint (recipe->saved_at, ==, now);
  g_assert_cmpint (recipe->last_used, ==, 0);
  g_assert_cmpstr (recipe->params, ==, "[{\"name\":\"title\",\"type\":\"string\"}]");
  g_assert_nonnull (strstr (recipe->steps, "\"value\":\"{{title}}\""));
  g_assert_nonnull (strstr (recipe->steps, "\"name\":\"Save\""));

  /* A replay is counted; a recipe never saved is not there to count. */
  g_assert_true (recipe_used (fx, "new-note", now + 5, &error));
  g_assert_false (recipe_used (fx, "other", now + 5, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_clear_pointer (&record, chp_site_record_free);
  record = load (fx, &error);
  g_assert_cmpint (((ChpSiteRecipe *) g_ptr_array_index (record->recipes, 0))->last_used, ==,
                   now + 5);

  /* The export carries it in the allowlist's form. */
  exported = export_text (fx);
  g_assert_nonnull (strstr (exported, "\"recipes\":[{\"name\":\"new-note\",\"params\":[{\"name\":"
                                      "\"title\",\"type\":\"string\"}],\"steps\":[{\"api\""));
  g_assert_nonnull (strstr (exported, "\"lastUsed\":"));

  /* Saved again under its name, it replaces the one kept. */
  g_clear_pointer (&record, chp_site_record_free);
  record = merge (fx, again, now + 10, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (record->recipes->len, ==, 1);
  recipe = g_ptr_array_index (record->recipes, 0);
  g_assert_cmpint (recipe->n_steps, ==, 1);
  g_assert_cmpstr (recipe->params, ==, "[]");
  g_assert_cmpint (recipe->last_used, ==, 0);
}

/* A recipe that would keep what was typed refuses the whole update: nothing of it, not even the
 * endpoint beside it, is written, and its value is nowhere in the files. */
static void
test_refused (Fixture *fx, gconstpointer data)
{
  g_autoptr(JsonObject) typed = recipe_update ("new-note", PLANTED, "Saved");
  g_autoptr(JsonObject) personal = recipe_update ("new-note", "{{title}}",
                                                  "Sent to keeper@example.org");
  g_autoptr(GError) error = NULL;

  g_assert_null (merge (fx, typed, 1000, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "recipes[0].steps[1].act.value"));
  g_assert_null (strstr (error->message, PLANTED));
  g_clear_error (&error);
  g_assert_null (merge (fx, personal, 1000, &error));
  g_assert_nonnull (strstr (error->message, "recipes[0].steps[3].wait.text"));
  g_clear_error (&error);

  g_assert_cmpint (db_int (fx->path, "SELECT (SELECT count(*) FROM sites) +"
                                     " (SELECT count(*) FROM site_endpoints) +"
                                     " (SELECT count(*) FROM site_recipes)"), ==, 0);
  chp_store_close (fx->store);
  g_clear_object (&fx->store);
  g_assert_false (files_contain (fx, PLANTED));
  g_assert_false (files_contain (fx, "keeper@example.org"));
}

/* Forget hides them with the site; Restore brings them back; after the day they are deleted. */
static void
test_forget (Fixture *fx, gconstpointer data)
{
  g_autoptr(JsonObject) update = recipe_update ("new-note", "{{title}}", "Saved");
  g_autoptr(ChpSiteRecord) record = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *exported = NULL;
  gint64 now = g_get_real_time () / 1000;

  chp_site_record_free (merge (fx, update, now, &error));
  g_assert_no_error (error);
  g_assert_true (forget_or_restore (fx, TRUE, now + 1, &error));
  g_assert_null (load (fx, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_false (recipe_used (fx, "new-note", now + 2, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  exported = export_text (fx);
  g_assert_null (strstr (exported, "new-note"));

  g_assert_true (forget_or_restore (fx, FALSE, now + 2, &error));
  record = load (fx, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (record->recipes->len, ==, 1);

  g_assert_true (forget_or_restore (fx, TRUE, now + 3, &error));
  g_assert_false (forget_or_restore (fx, FALSE, now + 25 * HOUR_MS, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  g_assert_cmpint (db_int (fx->path, "SELECT count(*) FROM site_recipes"), ==, 0);
}

/* A store of schema 4 (before recipes) gains the table at open and keeps what it had. */
static void
test_migration (Fixture *fx, gconstpointer data)
{
  g_autoptr(JsonObject) endpoint_only = parse ("{'origin': '" ORIGIN "', 'endpoints': [{'method':"
                                               " 'GET', 'pathTemplate': '/status', 'credential':"
                                               " {'kind': 'none'}, 'frame': '" ORIGIN "/',"
                                               " 'sampleStatus': 200}]}");
  g_autoptr(JsonObject) update = recipe_update ("new-note", "{{title}}", "Saved");
  g_autoptr(ChpSiteRecord) record = NULL;
  g_autoptr(GError) error = NULL;
  sqlite3 *db = NULL;

  chp_site_record_free (merge (fx, endpoint_only, 1000, &error));
  g_assert_no_error (error);
  chp_store_close (fx->store);
  g_clear_object (&fx->store);
  g_assert_cmpint (sqlite3_open (fx->path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "DROP TABLE site_recipes; PRAGMA user_version = 4;", NULL,
                                 NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);

  fx->store = open_store (fx->path);
  g_assert_cmpint (db_int (fx->path, "PRAGMA user_version"), ==, 5);
  g_assert_cmpint (db_int (fx->path, "SELECT count(*) FROM site_endpoints"), ==, 1);
  record = merge (fx, update, 2000, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (record->recipes->len, ==, 1);
  g_assert_cmpuint (record->endpoints->len, ==, 2);
}

/* A site keeps its 32 most recently saved or used recipes. */
static void
test_bound (Fixture *fx, gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpSiteRecord) record = NULL;

  for (guint i = 0; i < 9; i++)
    {
      g_autoptr(GString) text = g_string_new ("{'origin': '" ORIGIN "', 'recipes': [");

      for (guint j = 0; j < 4; j++)
        g_string_append_printf (text, "%s{'name': 'r%u', 'steps': [{'wait': {'text': 'Ready'}}]}",
                                j == 0 ? "" : ", ", i * 4 + j);
      g_string_append (text, "]}");
      {
        g_autoptr(JsonObject) update = parse (text->str);

        chp_site_record_free (merge (fx, update, 1000 + i, &error));
        g_assert_no_error (error);
      }
    }
  record = load (fx, &error);
  g_assert_cmpuint (record->recipes->len, ==, 32);
  /* The oldest four (saved first) made room. */
  for (guint i = 0; i < record->recipes->len; i++)
    g_assert_cmpstr (((ChpSiteRecipe *) g_ptr_array_index (record->recipes, i))->name, !=, "r0");
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, func) \
  g_test_add ("/chaperone/site-recipes/" path, Fixture, NULL, fixture_setup, func, fixture_teardown)

  ADD ("kept", test_kept);
  ADD ("refused", test_refused);
  ADD ("forget", test_forget);
  ADD ("migration", test_migration);
  ADD ("bound", test_bound);

#undef ADD

  return g_test_run ();
}
