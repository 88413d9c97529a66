/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-rules.c: the person's "Always allow" rules in a real SQLite file (kept across reopening,
 * counted, revoked, trimmed; only a write can be stored at all) and in the model (what a rule
 * matches: one agent, one origin, a write, before it expires). The engine's side is in
 * test-mcp-tools-rules.c. */
#include "config.h"

#include <sqlite3.h>

#include "chp-approval-rule-list.h"
#include "chp-store.h"
#include "chp-test-client.h"

#define SHOP "https://shop.example"
#define HOUR_MS ((gint64) 3600 * 1000)
#define DAY_MS (24 * HOUR_MS)

static ChpStore *
open_store (const char *path)
{
  g_autoptr(GError) error = NULL;
  ChpStore *store = chp_store_new (path);
  g_auto(ChpTestResult) wait = { 0 };

  chp_store_open_async (store, NULL, chp_test_result_cb, &wait);
  g_assert_true (chp_store_open_finish (store, chp_test_result_wait (&wait), &error));
  g_assert_no_error (error);
  return store;
}

/* TRUE, or FALSE with @error. */
static gboolean
save_rule (ChpStore    *store,
           const char  *id,
           const char  *kind,
           gint64       created_at,
           gint64       expires_at,
           GError     **error)
{
  ChpRuleInfo info = {
    .rule_id = (char *) id, .agent = "Claude Code", .site = SHOP, .kind = (char *) kind,
    .created_at = created_at, .expires_at = expires_at,
  };
  g_auto(ChpTestResult) wait = { 0 };
  gboolean ok;

  chp_store_save_rule_async (store, &info, NULL, chp_test_result_cb, &wait);
  ok = chp_store_write_finish (store, chp_test_result_wait (&wait), error);
  return ok;
}

static gboolean
update_rule (ChpStore    *store,
             gboolean     revoke,
             const char  *id,
             gint64       at,
             GError     **error)
{
  g_auto(ChpTestResult) wait = { 0 };
  gboolean ok;

  if (revoke)
    chp_store_revoke_rule_async (store, id, at, NULL, chp_test_result_cb, &wait);
  else
    chp_store_use_rule_async (store, id, at, NULL, chp_test_result_cb, &wait);
  ok = chp_store_write_finish (store, chp_test_result_wait (&wait), error);
  return ok;
}

static GPtrArray *
load_rules (ChpStore *store,
            gint64    now)
{
  g_autoptr(GError) error = NULL;
  g_auto(ChpTestResult) wait = { 0 };
  GPtrArray *rules;

  chp_store_load_rules_async (store, now, NULL, chp_test_result_cb, &wait);
  rules = chp_store_load_rules_finish (store, chp_test_result_wait (&wait), &error);
  g_assert_no_error (error);
  return rules;
}

static gint64
count_rows (const char *path)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  gint64 n;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "SELECT count(*) FROM rules", -1, &stmt, NULL), ==,
                   SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  n = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return n;
}

static void
test_store (void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp ("chp-rules-XXXXXX", &error);
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(ChpStore) store = NULL;
  g_autoptr(GPtrArray) rules = NULL;
  gint64 now = g_get_real_time () / 1000;
  ChpRuleInfo *info;

  g_assert_no_error (error);
  store = open_store (path);
  g_assert_true (save_rule (store, "r-live", "write", now, now + HOUR_MS, &error));
  g_assert_true (save_rule (store, "r-gone", "write", now - 2 * HOUR_MS, now - HOUR_MS, &error));
  g_assert_true (save_rule (store, "r-old", "write", now - 40 * DAY_MS, now - 35 * DAY_MS, &error));
  g_assert_true (save_rule (store, "r-revoked", "write", now, now + HOUR_MS, &error));
  g_assert_no_error (error);

  /* Only a write is ever stored: the table refuses a send, a delete, a message. */
  for (guint i = 0; i < 3; i++)
    {
      static const char *kinds[] = { "outward", "delete", "Write" };

      g_assert_false (save_rule (store, "r-bad", kinds[i], now, now + HOUR_MS, &error));
      g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_FAILED);
      g_clear_error (&error);
    }
  /* Nor one that ends before it starts. */
  g_assert_false (save_rule (store, "r-bad", "write", now, now, &error));
  g_clear_error (&error);

  g_assert_true (update_rule (store, FALSE, "r-live", now + 1, &error));
  g_assert_true (update_rule (store, FALSE, "r-live", now + 2, &error));
  g_assert_true (update_rule (store, TRUE, "r-revoked", now + 3, &error));
  g_assert_no_error (error);
  /* A revoked rule is neither used nor revoked again. */
  g_assert_false (update_rule (store, FALSE, "r-revoked", now + 4, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  g_assert_false (update_rule (store, TRUE, "r-revoked", now + 4, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* Reopened, as after a restart: the standing rule, with its uses; the rest not loaded, and
   * the one that ended over a month ago deleted. */
  chp_store_close (store);
  g_clear_object (&store);
  g_assert_cmpint (count_rows (path), ==, 4);
  store = open_store (path);
  rules = load_rules (store, now + 10);
  g_assert_cmpuint (rules->len, ==, 1);
  info = g_ptr_array_index (rules, 0);
  g_assert_cmpstr (info->rule_id, ==, "r-live");
  g_assert_cmpstr (info->agent, ==, "Claude Code");
  g_assert_cmpstr (info->site, ==, SHOP);
  g_assert_cmpstr (info->kind, ==, "write");
  g_assert_cmpint (info->use_count, ==, 2);
  g_assert_cmpint (info->last_used, ==, now + 2);
  g_assert_cmpint (info->expires_at, ==, now + HOUR_MS);
  chp_store_close (store);
  g_clear_object (&store);
  g_assert_cmpint (count_rows (path), ==, 3);

  /* Past its expiry, a rule is not loaded. */
  store = open_store (path);
  g_clear_pointer (&rules, g_ptr_array_unref);
  rules = load_rules (store, now + HOUR_MS);
  g_assert_cmpuint (rules->len, ==, 0);
  chp_store_close (store);
}

static ChpApprovalRule *
rule_new (const char *agent,
          const char *site,
          gint64      expires_at)
{
  ChpRuleInfo info = {
    .rule_id = "r1", .agent = (char *) agent, .site = (char *) site, .kind = "write",
    .created_at = 1000, .expires_at = expires_at,
  };

  return chp_approval_rule_new (&info);
}

static void
test_model (void)
{
  gint64 now = g_get_real_time () / 1000;
  g_autoptr(ChpApprovalRule) rule = rule_new ("Claude Code", SHOP, now + HOUR_MS);
  g_autoptr(ChpApprovalRuleList) list = chp_approval_rule_list_new ();
  g_autoptr(GPtrArray) infos = g_ptr_array_new ();
  ChpRuleInfo live = {
    .rule_id = "a", .agent = "Claude Code", .site = SHOP, .kind = "write",
    .created_at = now, .expires_at = now + HOUR_MS,
  };
  ChpRuleInfo expired = live;
  ChpRuleInfo revoked = live;

  /* Exactly this agent, this origin, a write, before its expiry. */
  g_assert_true (chp_approval_rule_matches (rule, "Claude Code", SHOP, "write", now));
  g_assert_true (chp_approval_rule_matches (rule, "Claude Code", "HTTPS://SHOP.EXAMPLE", "write",
                                            now));
  g_assert_false (chp_approval_rule_matches (rule, "claude code", SHOP, "write", now));
  g_assert_false (chp_approval_rule_matches (rule, "Claude Code ", SHOP, "write", now));
  g_assert_false (chp_approval_rule_matches (rule, NULL, SHOP, "write", now));
  g_assert_false (chp_approval_rule_matches (rule, "Claude Code", "https://www.shop.example",
                                            "write", now));
  g_assert_false (chp_approval_rule_matches (rule, "Claude Code", "http://shop.example", "write",
                                            now));
  g_assert_false (chp_approval_rule_matches (rule, "Claude Code", SHOP ":8443", "write", now));
  g_assert_false (chp_approval_rule_matches (rule, "Claude Code", SHOP, "outward", now));
  g_assert_false (chp_approval_rule_matches (rule, "Claude Code", SHOP, "delete", now));
  g_assert_false (chp_approval_rule_matches (rule, "Claude Code", SHOP, "write", now + HOUR_MS));

  /* What a rule may name at all. */
  g_assert_true (chp_approval_rule_site_allowed (SHOP));
  g_assert_true (chp_approval_rule_site_allowed ("http://127.0.0.1:8080"));
  g_assert_false (chp_approval_rule_site_allowed ("https://shop.example/cart"));
  g_assert_false (chp_approval_rule_site_allowed ("https://shop.example/"));
  g_assert_false (chp_approval_rule_site_allowed ("https://ada@shop.example"));
  g_assert_false (chp_approval_rule_site_allowed ("file:///etc"));
  g_assert_false (chp_approval_rule_site_allowed ("chrome-extension://abc"));
  g_assert_false (chp_approval_rule_site_allowed ("shop.example"));
  g_assert_false (chp_approval_rule_site_allowed (""));
  g_assert_true (chp_approval_rule_kind_allowed ("write"));
  g_assert_false (chp_approval_rule_kind_allowed ("outward"));
  g_assert_false (chp_approval_rule_kind_allowed ("delete"));
  g_assert_true (chp_approval_rule_agent_allowed ("Claude Code"));
  g_assert_false (chp_approval_rule_agent_allowed (""));
  g_assert_false (chp_approval_rule_agent_allowed (NULL));
  g_assert_false (chp_approval_rule_agent_allowed ("two\nlines"));

  /* The list loads standing rules only, finds them, counts their use, lets them go. */
  expired.rule_id = "b";
  expired.expires_at = now - 1;
  revoked.rule_id = "c";
  revoked.revoked_at = now;
  g_ptr_array_add (infos, &live);
  g_ptr_array_add (infos, &expired);
  g_ptr_array_add (infos, &revoked);
  chp_approval_rule_list_set_all (list, infos);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==, 1);
  g_assert_nonnull (chp_approval_rule_list_lookup (list, "a"));
  g_assert_true (chp_approval_rule_list_find_match (list, "Claude Code", SHOP, "write", now) ==
                 chp_approval_rule_list_lookup (list, "a"));
  g_assert_null (chp_approval_rule_list_find_match (list, "Claude Code", SHOP, "delete", now));
  chp_approval_rule_record_use (chp_approval_rule_list_lookup (list, "a"), now);
  g_assert_cmpint (chp_approval_rule_get_use_count (chp_approval_rule_list_lookup (list, "a")), ==,
                   1);
  g_assert_true (chp_approval_rule_list_remove (list, "a"));
  g_assert_false (chp_approval_rule_list_remove (list, "a"));
  g_assert_null (chp_approval_rule_list_find_match (list, "Claude Code", SHOP, "write", now));

  /* A revoked rule matches nothing, even while still listed (its revoke not saved yet). */
  {
    g_autoptr(ChpApprovalRule) revoked_rule = rule_new ("Claude Code", SHOP, now + HOUR_MS);

    chp_approval_rule_set_revoked (revoked_rule);
    g_assert_false (chp_approval_rule_matches (revoked_rule, "Claude Code", SHOP, "write", now));
  }

  /* A list never holds more than its cap: one more is refused, not made room for silently
   * (the engine revokes the oldest, in the store too). Loaded past the cap, as after a revoke
   * the disk did not save, the newest are kept, as they were while running. */
  {
    g_autoptr(GPtrArray) many = NULL;
    g_autoptr(ChpApprovalRule) extra = rule_new ("Claude Code", SHOP, now + HOUR_MS);
    g_autoptr(ChpApprovalRule) first = NULL;
    g_autoptr(ChpApprovalRule) last = NULL;

    many = g_ptr_array_new_with_free_func ((GDestroyNotify) chp_rule_info_free);
    for (guint i = 0; i <= CHP_APPROVAL_RULE_LIST_MAX; i++)
      {
        ChpRuleInfo *info = chp_rule_info_copy (&live);

        g_free (info->rule_id);
        info->rule_id = g_strdup_printf ("n%u", i);
        info->created_at = now + i;
        g_ptr_array_add (many, info);
      }
    chp_approval_rule_list_set_all (list, many);
    g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==,
                      CHP_APPROVAL_RULE_LIST_MAX);
    first = g_list_model_get_item (G_LIST_MODEL (list), 0);
    last = g_list_model_get_item (G_LIST_MODEL (list), CHP_APPROVAL_RULE_LIST_MAX - 1);
    g_assert_cmpstr (chp_approval_rule_get_id (first), ==, "n1");
    g_assert_cmpstr (chp_approval_rule_get_id (last), ==, "n200");
    g_assert_false (chp_approval_rule_list_add (list, extra));
    g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (list)), ==,
                      CHP_APPROVAL_RULE_LIST_MAX);
    g_assert_nonnull (chp_approval_rule_list_lookup (list, "n1"));
    g_ptr_array_set_size (many, 0);
    chp_approval_rule_list_set_all (list, many);
  }

  /* A rule that runs out leaves the list by itself. */
  {
    g_autoptr(ChpApprovalRule) soon = rule_new ("Claude Code", SHOP, now + 50);

    chp_approval_rule_list_add (list, soon);
  }
  chp_test_until (g_list_model_get_n_items (G_LIST_MODEL (list)) == 0);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/rules/store", test_store);
  g_test_add_func ("/chaperone/rules/model", test_model);

  return g_test_run ();
}
