/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-tools-policy.c: the administrator's policy (/etc/chaperone/policy.conf) as an agent
 * meets it, on a real engine with a C client playing the extension: a call of the site's own API
 * answers policy_denied and never reaches the browser; a grant older than MaxGrantMinutes serves
 * no agent; the administrator's floor entries hold whatever the person's list says; learning off
 * keeps nothing of a site. */
#include "config.h"

#include "test-mcp-tools-harness.h"

#include "chp-store-sites.h"

#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#define WIKI "https://wiki.example"

#define LEARNED \
  "{\"origin\":\"" WIKI "\",\"documentId\":\"D1\",\"entries\":[" \
  "{\"method\":\"GET\",\"origin\":\"" WIKI "\",\"pathTemplate\":\"/recipes/default/tiddlers.json\"," \
  " \"queryKeys\":[\"filter\"],\"body\":null,\"credential\":{\"kind\":\"cookie\"},\"frameId\":0," \
  " \"frameUrl\":\"" WIKI "/\",\"sampleStatus\":200,\"count\":3}]}"

typedef struct
{
  Env            env;
  ChpTestClient *client;
} World;

static ChpManagedPolicy *
policy_from (const char *text)
{
  g_autofree char *path = NULL;
  g_autoptr(GError) error = NULL;
  ChpManagedPolicy *policy;
  int fd = g_file_open_tmp ("chaperone-policy-XXXXXX.conf", &path, &error);

  g_assert_no_error (error);
  close (fd);
  g_assert_true (g_file_set_contents (path, text, -1, &error));
  policy = chp_managed_policy_load (path);
  g_unlink (path);
  g_assert_null (chp_managed_policy_get_error (policy));
  return policy;
}

/* The wiki's tab, granted at @created_at (ms since the epoch), under @policy_text. */
static void
world_start (World      *w,
             const char *policy_text,
             gint64      created_at)
{
  gint64 expires = g_get_real_time () / 1000 + 600000;
  g_autoptr(ChpManagedPolicy) policy = policy_from (policy_text);
  g_autofree char *tabs = NULL;
  g_autofree char *grants = NULL;

  env_setup (&w->env, NULL);
  chp_engine_set_managed_policy (w->env.engine, policy);
  w->client = browser_connect (&w->env);
  tabs = g_strdup_printf ("{\"tabs\":[{\"tabId\":7,\"windowId\":1,\"title\":\"Wiki\",\"url\":\"" WIKI "/\","
                          "\"origin\":\"" WIKI "\",\"active\":true,\"grantId\":\"g1\",\"label\":\"Wiki\","
                          "\"scopes\":[\"browser.tabs.read\",\"browser.dom.read\",\"browser.api.call\","
                          "\"browser.network.read\"],\"expiresAt\":%" G_GINT64_FORMAT "}]}", expires);
  grants = g_strdup_printf ("{\"grants\":[{\"grantId\":\"g1\",\"label\":\"Wiki\","
                            "\"createdAt\":%" G_GINT64_FORMAT ",\"expiresAt\":%" G_GINT64_FORMAT ","
                            "\"scopes\":[\"browser.dom.read\",\"browser.api.call\"],"
                            "\"targets\":[{\"tabId\":7,\"frameId\":0,\"origin\":\"" WIKI "\","
                            "\"url\":\"" WIKI "/\"}]}]}", created_at, expires);
  show_tabs_and_grant (&w->env, w->client, tabs, grants);
}

static void
world_stop (World *w)
{
  g_clear_pointer (&w->client, chp_test_client_free);
  env_teardown (&w->env, NULL);
}

static const char *
code_of (Call *call)
{
  g_assert_true (result_is_error (call->result));
  return json_object_get_string_member (result_structured (call->result), "code");
}

/* The next request the browser gets is browser.tabs: nothing else was sent before it. */
static void
assert_nothing_sent (World *w)
{
  g_autoptr(JsonObject) request = NULL;
  Call call = { 0, };

  call_start (w->env.tools, w->env.context, "browser_tabs", NULL, NULL, &call);
  request = browser_request (w->client, "browser.tabs");
  browser_answer (w->client, request, "{\"tabs\":[]}");
  call_wait (&call);
  call_clear (&call);
}

static void
learn (World *w)
{
  g_autoptr(JsonObject) request = NULL;
  Call call = { 0, };

  call_start (w->env.tools, w->env.context, "browser_api",
              "{\"tab\":\"b1:7\",\"action\":\"learn\"}", NULL, &call);
  request = browser_request (w->client, "browser.api.learn");
  browser_answer (w->client, request, LEARNED);
  call_wait (&call);
  g_assert_false (result_is_error (call.result));
  call_clear (&call);
}

static void
test_api_calls_off (void)
{
  World w = { 0, };
  g_autofree char *audit = NULL;
  g_autofree char *entry = NULL;
  g_autofree char *args = NULL;
  Call call = { 0, };

  world_start (&w, "[Chaperone]\nApiCalls=false\n", g_get_real_time () / 1000);
  learn (&w);   /* learning reads what the page did: no call of the site's API */

  /* route says ui, with the reason (as for any refusal); call is refused outright. */
  call_run (w.env.tools, w.env.context, "browser_api",
            "{\"tab\":\"b1:7\",\"action\":\"route\",\"hint\":\"tiddlers\"}", &call);
  g_assert_false (result_is_error (call.result));
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "route"), ==, "ui");
  g_assert_nonnull (strstr (result_text (call.result), "administrator"));
  call_clear (&call);
  entry = chp_site_entry_id (WIKI, "GET", "/recipes/default/tiddlers.json");
  args = g_strdup_printf ("{\"tab\":\"b1:7\",\"action\":\"call\",\"entryId\":\"%s\","
                          "\"params\":{\"filter\":\"x\"}}", entry);
  call_run (w.env.tools, w.env.context, "browser_api", args, &call);
  g_assert_cmpstr (code_of (&call), ==, "policy_denied");
  g_assert_nonnull (strstr (result_text (call.result), "administrator"));
  /* The app's own words, not the browser's: nothing reached it. */
  g_assert_null (strstr (result_text (call.result), "the browser refused"));
  call_clear (&call);
  g_free (args);
  args = g_strdup_printf ("{\"tab\":\"b1:7\",\"steps\":[{\"api\":{\"entryId\":\"%s\","
                          "\"params\":{\"filter\":\"x\"}}}]}", entry);
  call_run (w.env.tools, w.env.context, "browser_batch", args, &call);
  g_assert_no_error (call.error);
  g_assert_cmpstr (code_of (&call), ==, "policy_denied");
  call_clear (&call);
  assert_nothing_sent (&w);

  audit = agent_audit (&w.env);
  g_assert_nonnull (strstr (audit, "policy_denied"));
  world_stop (&w);
}

static void
test_max_grant_minutes (void)
{
  World w = { 0, };
  g_autoptr(JsonObject) request = NULL;
  Call call = { 0, };

  /* Granted two hours ago, for longer; the administrator allows an hour. */
  world_start (&w, "[Chaperone]\nMaxGrantMinutes=60\n", g_get_real_time () / 1000 - 2 * 3600 * 1000);
  call_run (w.env.tools, w.env.context, "browser_snapshot", "{\"tab\":\"b1:7\"}", &call);
  g_assert_cmpstr (code_of (&call), ==, "grant_expired");
  /* The app's own words: the administrator's limit, not a browser's refusal quoted as untrusted. */
  g_assert_nonnull (strstr (result_text (call.result), "administrator lets a grant serve agents for 60 minutes"));
  g_assert_null (strstr (result_text (call.result), "the browser refused"));
  g_assert_null (strstr (result_text (call.result), "untrusted"));
  call_clear (&call);
  assert_nothing_sent (&w);
  world_stop (&w);

  /* Granted a minute ago: the same call reaches the browser. */
  world_start (&w, "[Chaperone]\nMaxGrantMinutes=60\n", g_get_real_time () / 1000 - 60 * 1000);
  call_start (w.env.tools, w.env.context, "browser_snapshot", "{\"tab\":\"b1:7\"}", NULL, &call);
  request = browser_request (w.client, "browser.context");
  browser_refuse (w.client, request, "stale_document", "gone");
  call_wait (&call);
  g_assert_cmpstr (code_of (&call), ==, "stale_document");
  call_clear (&call);
  world_stop (&w);
}

static void
test_floor_and_learning (void)
{
  World w = { 0, };
  ChpSafetySettings *safety;
  g_autoptr(ChpSiteRecord) record = NULL;
  Call call = { 0, };

  world_start (&w, "[Chaperone]\nFloorBlind=wiki.example\nSiteLearning=false\n",
               g_get_real_time () / 1000);
  /* The person's own list is empty, and changing it does not lift the administrator's entry. */
  safety = chp_engine_get_safety_settings (w.env.engine);
  g_assert_cmpuint (g_strv_length ((GStrv) chp_safety_settings_get_floor_blind (safety)), ==, 0);
  chp_engine_set_floor_rules (w.env.engine, (const char *[]) { "other.example", NULL },
                              (const char *[]) { NULL });
  call_run (w.env.tools, w.env.context, "browser_snapshot", "{\"tab\":\"b1:7\"}", &call);
  g_assert_cmpstr (code_of (&call), ==, "refused_floor");
  call_clear (&call);
  assert_nothing_sent (&w);

  /* Learning: the person's switch on, the administrator's off — nothing is kept. */
  chp_engine_set_site_learning (w.env.engine, TRUE);
  g_assert_false (chp_engine_get_site_learning (w.env.engine));
  world_stop (&w);

  world_start (&w, "[Chaperone]\nSiteLearning=false\n", g_get_real_time () / 1000);
  learn (&w);
  record = site_stored (w.env.engine, WIKI);
  g_assert_true (record == NULL || record->endpoints->len == 0);
  world_stop (&w);
}

/* Transport=native: the app's bridge refuses a browser's own WebSocket at the upgrade (the
 * native host's way in is tested with the host, in native-host/test-native-host-more.c). */
static void
test_transport (void)
{
  g_autoptr(ChpManagedPolicy) native = policy_from ("[Chaperone]\nTransport=native\n");
  g_autoptr(ChpManagedPolicy) websocket = policy_from ("[Chaperone]\nTransport=websocket\n");
  Env env = { 0, };
  g_autofree char *host = NULL;

  env_setup (&env, NULL);
  host = g_strdup_printf ("127.0.0.1:%u", env.port);
  g_assert_cmpuint (chp_test_http_upgrade_status (env.port, "/extension", CHP_TEST_ORIGIN, host), ==, 101);
  chp_engine_set_managed_policy (env.engine, native);
  g_assert_cmpuint (chp_test_http_upgrade_status (env.port, "/extension", CHP_TEST_ORIGIN, host), ==, 403);
  g_assert_cmpuint (chp_test_http_upgrade_status (env.port, "/pairing", CHP_TEST_ORIGIN, host), ==, 403);
  chp_engine_set_managed_policy (env.engine, websocket);
  g_assert_cmpuint (chp_test_http_upgrade_status (env.port, "/extension", CHP_TEST_ORIGIN, host), ==, 101);
  env_teardown (&env, NULL);
}

void
test_mcp_tools_add_policy (void)
{
  g_test_add_func ("/mcp-tools/policy/api-calls-off", test_api_calls_off);
  g_test_add_func ("/mcp-tools/policy/max-grant-minutes", test_max_grant_minutes);
  g_test_add_func ("/mcp-tools/policy/floor-and-learning", test_floor_and_learning);
  g_test_add_func ("/mcp-tools/policy/transport", test_transport);
}
