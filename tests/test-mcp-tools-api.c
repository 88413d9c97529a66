/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-tools-api.c: browser_api and browser_network as an agent meets them, on a real engine
 * (its real store) with a C client playing the extension: learning keeps the page's own site's
 * entries (a GET added for what the page writes by path, never another site's; a bearer-signed
 * page's too), route calls the one matching read and says ui with a reason otherwise, answers are
 * redacted and wrapped, a list's or a 204's success counts, a miss lowers confidence and two
 * quarantine while a sign-out's 401 or a 429 is no miss, a write comes back held, the person's
 * "learning off" keeps nothing, and nothing an agent passes can name a URL the page did not call. */
#include "config.h"

#include "test-mcp-tools-harness.h"

#include "chp-mcp-site-card.h"

#include "chp-store-sites.h"

#include <string.h>

#define WIKI "https://wiki.example"

/* What browser.api.learn answers for the wiki's page: its list read (with a filter), the
 * StoryList save it makes at load, and a call to another site's analytics. */
#define LEARNED \
  "{\"origin\":\"" WIKI "\",\"documentId\":\"D1\",\"entries\":[" \
  "{\"method\":\"GET\",\"origin\":\"" WIKI "\",\"pathTemplate\":\"/recipes/default/tiddlers.json\"," \
  " \"queryKeys\":[\"filter\"],\"body\":null,\"credential\":{\"kind\":\"cookie\"},\"frameId\":0," \
  " \"frameUrl\":\"" WIKI "/\",\"sampleStatus\":200,\"count\":3}," \
  "{\"method\":\"PUT\",\"origin\":\"" WIKI "\",\"pathTemplate\":\"/recipes/default/tiddlers/{tiddler}\"," \
  " \"queryKeys\":[],\"body\":{\"kind\":\"json\",\"keys\":{\"title\":\"string\",\"text\":\"string\"}}," \
  " \"credential\":{\"kind\":\"header\",\"header\":\"x-requested-with\"},\"frameId\":0," \
  " \"frameUrl\":\"" WIKI "/\",\"sampleStatus\":204,\"count\":1}," \
  "{\"method\":\"POST\",\"origin\":\"https://stats.example\",\"pathTemplate\":\"/collect\"," \
  " \"queryKeys\":[],\"body\":null,\"credential\":{\"kind\":\"none\"},\"frameId\":0," \
  " \"frameUrl\":\"" WIKI "/\",\"sampleStatus\":204,\"count\":9}]}"

/* A page that signs its calls with a bearer token, as learn reports it: the header named too. */
#define LEARNED_BEARER \
  "{\"origin\":\"" WIKI "\",\"documentId\":\"D2\",\"entries\":[" \
  "{\"method\":\"GET\",\"origin\":\"" WIKI "\",\"pathTemplate\":\"/api/notes\"," \
  " \"queryKeys\":[],\"body\":null,\"credential\":{\"kind\":\"bearer\"," \
  " \"header\":\"authorization\"},\"frameId\":0,\"frameUrl\":\"" WIKI "/\",\"sampleStatus\":200," \
  " \"count\":2}]}"

#define WIKI_TABS \
  "{\"tabs\":[{\"tabId\":7,\"windowId\":1,\"title\":\"Wiki\",\"url\":\"" WIKI "/\"," \
  "\"origin\":\"" WIKI "\",\"active\":true,\"grantId\":\"g1\",\"label\":\"Read the wiki\"," \
  "\"scopes\":[\"browser.tabs.read\",\"browser.dom.read\",\"browser.api.call\"," \
  "\"browser.network.read\"],\"expiresAt\":%" G_GINT64_FORMAT "}]}"

typedef struct
{
  Env            env;
  ChpTestClient *client;
} World;

static void
world_start (World *w)
{
  g_autofree char *tabs = g_strdup_printf (WIKI_TABS, g_get_real_time () / 1000 + 600000);
  g_autofree char *grants = NULL;

  env_setup (&w->env, NULL);
  w->client = browser_connect (&w->env);
  /* The person's grant of the wiki's tab, as the extension mirrors it to the app. */
  grants = g_strdup_printf ("{\"grants\":[{\"grantId\":\"g1\",\"label\":\"Read the wiki\","
                            "\"createdAt\":1,\"expiresAt\":%" G_GINT64_FORMAT ","
                            "\"scopes\":[\"browser.dom.read\",\"browser.api.call\"],"
                            "\"targets\":[{\"tabId\":7,\"frameId\":0,\"origin\":\"" WIKI "\","
                            "\"url\":\"" WIKI "/#Harbour%%20Notes\"}]}]}",
                            g_get_real_time () / 1000 + 600000);
  show_tabs_and_grant (&w->env, w->client, tabs, grants);
}

static void
world_stop (World *w)
{
  g_clear_pointer (&w->client, chp_test_client_free);
  env_teardown (&w->env, NULL);
}

/* Returns: what learn told the agent */
static char *
learn_from (World      *w,
            const char *answer)
{
  g_autoptr(JsonObject) request = NULL;
  Call call = { 0, };
  char *text;

  call_start (w->env.tools, w->env.context, "browser_api",
              "{\"tab\":\"b1:7\",\"action\":\"learn\"}", NULL, &call);
  request = browser_request (w->client, "browser.api.learn");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (request, "params"),
                                               "tabId"), ==, 7);
  browser_answer (w->client, request, answer);
  call_wait (&call);
  if (result_is_error (call.result))
    g_error ("learn: %s", result_text (call.result));
  text = g_strdup (result_text (call.result));
  call_clear (&call);
  return text;
}

static void
learn (World *w)
{
  g_free (learn_from (w, LEARNED));
}

static const ChpSiteEndpoint *
endpoint_of (ChpSiteRecord *record,
             const char    *method,
             const char    *template)
{
  for (guint i = 0; record != NULL && i < record->endpoints->len; i++)
    {
      const ChpSiteEndpoint *e = g_ptr_array_index (record->endpoints, i);

      if (g_str_equal (e->method, method) && g_str_equal (e->path_template, template))
        return e;
    }
  return NULL;
}

static void
test_learn_keeps_the_sites_own (void)
{
  World w = { 0, };
  g_autoptr(ChpSiteRecord) record = NULL;
  Call call = { 0, };
  const char *text;

  world_start (&w);
  learn (&w);
  record = site_stored (w.env.engine, WIKI);
  g_assert_nonnull (record);
  g_assert_nonnull (endpoint_of (record, "GET", "/recipes/default/tiddlers.json"));
  g_assert_nonnull (endpoint_of (record, "PUT", "/recipes/default/tiddlers/{tiddler}"));
  /* What the page saves by its path, it can read there. */
  g_assert_nonnull (endpoint_of (record, "GET", "/recipes/default/tiddlers/{tiddler}"));
  g_assert_cmpint (endpoint_of (record, "GET", "/recipes/default/tiddlers/{tiddler}")->sample_status,
                   ==, 0);
  /* Another site's endpoint is not this site's to remember. */
  g_assert_cmpuint (record->endpoints->len, ==, 3);

  /* list needs no browser. */
  call_run (w.env.tools, w.env.context, "browser_api", "{\"tab\":\"b1:7\",\"action\":\"list\"}",
            &call);
  text = result_text (call.result);
  g_assert_true (inside_wrapper (text, "GET /recipes/default/tiddlers.json ?filter"));
  g_assert_null (strstr (text, "stats.example"));
  g_assert_cmpint (json_object_get_int_member (result_structured (call.result), "count"), ==, 3);
  call_clear (&call);
  world_stop (&w);
}

/* route: the one read, called inside the page; its answer redacted and wrapped; confidence up. */
static void
test_route_calls_the_read (void)
{
  World w = { 0, };
  g_autoptr(JsonObject) request = NULL;
  g_autoptr(ChpSiteRecord) record = NULL;
  JsonObject *params;
  JsonObject *structured;
  Call call = { 0, };
  const char *text;

  world_start (&w);
  learn (&w);
  call_start (w.env.tools, w.env.context, "browser_api",
              "{\"tab\":\"b1:7\",\"action\":\"route\",\"hint\":\"tiddler\","
              "\"params\":{\"tiddler\":\"Harbour Notes/x\"}}", NULL, &call);
  request = browser_request (w.client, "browser.api.call");
  params = json_object_get_object_member (request, "params");
  g_assert_cmpstr (json_object_get_string_member (params, "method"), ==, "GET");
  g_assert_cmpstr (json_object_get_string_member (params, "url"), ==,
                   WIKI "/recipes/default/tiddlers/Harbour%20Notes%2Fx");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (params,
                                                                                 "credential"),
                                                  "kind"), ==, "header");
  browser_answer (w.client, request,
                  "{\"status\":200,\"ok\":true,\"contentType\":\"application/json\",\"size\":120,"
                  "\"ms\":4,\"json\":{\"title\":\"Harbour Notes\",\"text\":\"The lighthouse keeper; "
                  "token=ghp_abcdefghijklmnopqrstuvwxyz0123456789\"},"
                  "\"shape\":{\"title\":\"string\",\"text\":\"string\"}}");
  call_wait (&call);
  g_assert_false (result_is_error (call.result));
  structured = result_structured (call.result);
  g_assert_cmpstr (json_object_get_string_member (structured, "route"), ==, "api");
  g_assert_cmpint (json_object_get_int_member (structured, "status"), ==, 200);
  text = result_text (call.result);
  g_assert_true (inside_wrapper (text, "The lighthouse keeper"));
  g_assert_null (strstr (text, "ghp_abcdefghijklmnopqrstuvwxyz0123456789"));
  call_clear (&call);

  record = site_stored (w.env.engine, WIKI);
  g_assert_cmpfloat (endpoint_of (record, "GET", "/recipes/default/tiddlers/{tiddler}")->confidence,
                     >, 0.5);
  world_stop (&w);
}

/* A read that stops answering: ui with the status, quarantined after two misses, and then no
 * longer tried at all. */
static void
test_route_misses_quarantine (void)
{
  World w = { 0, };
  g_autoptr(ChpSiteRecord) record = NULL;
  Call call = { 0, };

  world_start (&w);
  learn (&w);
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(JsonObject) request = NULL;
      JsonObject *structured;

      call_start (w.env.tools, w.env.context, "browser_api",
                  "{\"tab\":\"b1:7\",\"action\":\"route\",\"hint\":\"tiddlers\"}", NULL, &call);
      request = browser_request (w.client, "browser.api.call");
      browser_answer (w.client, request, "{\"status\":404,\"ok\":false,\"contentType\":\"text/plain\","
                                         "\"size\":9,\"ms\":2,\"text\":\"not found\"}");
      call_wait (&call);
      structured = result_structured (call.result);
      g_assert_cmpstr (json_object_get_string_member (structured, "route"), ==, "ui");
      g_assert_true (strstr (json_object_get_string_member (structured, "why"), "404") != NULL);
      call_clear (&call);
    }
  record = site_stored (w.env.engine, WIKI);
  g_assert_true (endpoint_of (record, "GET", "/recipes/default/tiddlers.json")->quarantined);

  /* The session's copy is the store's now: the quarantined read is not tried again. */
  call_run (w.env.tools, w.env.context, "browser_api",
            "{\"tab\":\"b1:7\",\"action\":\"route\",\"hint\":\"tiddlers\"}", &call);
  g_assert_true (strstr (json_object_get_string_member (result_structured (call.result), "why"),
                         "quarantined") != NULL);
  call_clear (&call);
  world_stop (&w);
}

/* The session's route to the wiki's list read, answered by the page with @answer. */
static void
route_answered (World      *w,
                const char *answer)
{
  g_autoptr(JsonObject) request = NULL;
  Call call = { 0, };

  call_start (w->env.tools, w->env.context, "browser_api",
              "{\"tab\":\"b1:7\",\"action\":\"route\",\"hint\":\"tiddlers\"}", NULL, &call);
  request = browser_request (w->client, "browser.api.call");
  browser_answer (w->client, request, answer);
  call_wait (&call);
  g_assert_false (result_is_error (call.result));
  call_clear (&call);
}

/* A page that signs its calls with a bearer token: what learn found is kept for later visits. */
static void
test_learn_keeps_bearer_calls (void)
{
  World w = { 0, };
  g_autoptr(ChpSiteRecord) record = NULL;
  g_autofree char *text = NULL;

  world_start (&w);
  text = learn_from (&w, LEARNED_BEARER);
  g_assert_null (strstr (text, "did not keep"));
  record = site_stored (w.env.engine, WIKI);
  g_assert_nonnull (record);
  g_assert_nonnull (endpoint_of (record, "GET", "/api/notes"));
  g_assert_cmpstr (endpoint_of (record, "GET", "/api/notes")->credential, ==, "bearer");
  world_stop (&w);
}

/* A list read (a JSON array) and a write's empty 204 work as learned: both gain confidence, and
 * the list's shape is kept. */
static void
test_lists_and_204s_count (void)
{
  World w = { 0, };
  g_autofree char *put_id = chp_site_entry_id (WIKI, "PUT", "/recipes/default/tiddlers/{tiddler}");
  g_autofree char *args = g_strdup_printf ("{\"tab\":\"b1:7\",\"action\":\"call\",\"entryId\":\"%s\","
                                           "\"params\":{\"tiddler\":\"New\"},"
                                           "\"body\":{\"title\":\"New\",\"text\":\"Hello\"}}",
                                           put_id);
  g_autoptr(ChpSiteRecord) record = NULL;
  g_autoptr(JsonObject) request = NULL;
  const ChpSiteEndpoint *list;
  Call call = { 0, };

  world_start (&w);
  learn (&w);
  route_answered (&w, "{\"status\":200,\"ok\":true,\"contentType\":\"application/json\","
                      "\"size\":40,\"ms\":3,\"json\":[{\"title\":\"A\",\"text\":\"x\"}],"
                      "\"shape\":{\"array\":1,\"item\":{\"title\":\"string\",\"text\":\"string\"}}}");
  call_start (w.env.tools, w.env.context, "browser_api", args, NULL, &call);
  request = browser_request (w.client, "browser.api.call");
  browser_answer (w.client, request, "{\"status\":204,\"ok\":true,\"contentType\":null,"
                                     "\"size\":0,\"ms\":5,\"shape\":{\"type\":\"empty\"}}");
  call_wait (&call);
  g_assert_false (result_is_error (call.result));
  call_clear (&call);

  record = site_stored (w.env.engine, WIKI);
  list = endpoint_of (record, "GET", "/recipes/default/tiddlers.json");
  g_assert_cmpfloat_with_epsilon (list->confidence, 0.6, 1e-9);
  g_assert_cmpstr (list->response_shape, ==, "{\"contentType\":\"application/json\","
                   "\"shape\":{\"[]\":{\"title\":\"string\",\"text\":\"string\"}}}");
  g_assert_cmpfloat_with_epsilon (endpoint_of (record, "PUT", "/recipes/default/tiddlers/{tiddler}")
                                  ->confidence, 0.6, 1e-9);
  world_stop (&w);
}

/* Replies about the call, not the entry (signed out, not allowed, too many requests) cost it
 * nothing; a server's error still counts as a miss. */
static void
test_sign_out_is_no_miss (void)
{
  World w = { 0, };
  const char * const neutral[] = { "401", "401", "403", "429", "401" };

  world_start (&w);
  learn (&w);
  for (guint i = 0; i < G_N_ELEMENTS (neutral); i++)
    {
      g_autofree char *answer = g_strdup_printf ("{\"status\":%s,\"ok\":false,"
                                                 "\"contentType\":\"text/plain\",\"size\":6,"
                                                 "\"ms\":2,\"text\":\"denied\"}", neutral[i]);
      g_autoptr(ChpSiteRecord) record = NULL;
      const ChpSiteEndpoint *list;

      route_answered (&w, answer);
      record = site_stored (w.env.engine, WIKI);
      list = endpoint_of (record, "GET", "/recipes/default/tiddlers.json");
      g_assert_false (list->quarantined);
      g_assert_cmpint (list->misses, ==, 0);
      g_assert_cmpfloat_with_epsilon (list->confidence, 0.5, 1e-9);
    }
  /* Nor in a batch: two API steps, both 401. */
  {
    g_autofree char *id = chp_site_entry_id (WIKI, "GET", "/recipes/default/tiddlers.json");
    g_autofree char *args = g_strdup_printf ("{\"tab\":\"b1:7\",\"steps\":[{\"api\":{\"entryId\":"
                                             "\"%s\"}},{\"api\":{\"entryId\":\"%s\"}}]}", id, id);
    g_autoptr(JsonObject) request = NULL;
    g_autoptr(ChpSiteRecord) record = NULL;
    Call call = { 0, };

    call_start (w.env.tools, w.env.context, "browser_batch", args, NULL, &call);
    request = browser_request (w.client, "browser.batch");
    browser_answer (w.client, request, "{\"done\":2,\"of\":2,\"ms\":6,\"steps\":["
                                       "{\"ok\":false,\"ms\":3,\"status\":401,\"size\":6},"
                                       "{\"ok\":false,\"ms\":3,\"status\":401,\"size\":6}]}");
    call_wait (&call);
    g_assert_false (result_is_error (call.result));
    call_clear (&call);
    record = site_stored (w.env.engine, WIKI);
    g_assert_cmpint (endpoint_of (record, "GET", "/recipes/default/tiddlers.json")->misses, ==, 0);
  }
  route_answered (&w, "{\"status\":503,\"ok\":false,\"contentType\":\"text/plain\","
                      "\"size\":4,\"ms\":2,\"text\":\"down\"}");
  {
    g_autoptr(ChpSiteRecord) record = site_stored (w.env.engine, WIKI);

    g_assert_cmpint (endpoint_of (record, "GET", "/recipes/default/tiddlers.json")->misses, ==, 1);
  }
  world_stop (&w);
}

/* Nothing matches, a slot is missing: ui, and no browser request at all. */
static void
test_route_ui_without_a_call (void)
{
  World w = { 0, };
  Call call = { 0, };

  world_start (&w);
  call_run (w.env.tools, w.env.context, "browser_api",
            "{\"tab\":\"b1:7\",\"action\":\"route\",\"hint\":\"tiddlers\"}", &call);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "route"), ==,
                   "ui");
  g_assert_true (strstr (json_object_get_string_member (result_structured (call.result), "why"),
                         "nothing is learned") != NULL);
  call_clear (&call);

  learn (&w);
  call_run (w.env.tools, w.env.context, "browser_api",
            "{\"tab\":\"b1:7\",\"action\":\"route\",\"hint\":\"invoices\"}", &call);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "route"), ==,
                   "ui");
  call_clear (&call);
  /* A title, but for an entry that takes none. */
  call_run (w.env.tools, w.env.context, "browser_api",
            "{\"tab\":\"b1:7\",\"action\":\"route\",\"hint\":\"tiddlers.json\","
            "\"params\":{\"limit\":\"5\"}}", &call);
  g_assert_cmpstr (json_object_get_string_member (result_structured (call.result), "route"), ==,
                   "ui");
  g_assert_true (strstr (json_object_get_string_member (result_structured (call.result), "why"),
                         "takes no param \"limit\"") != NULL);
  call_clear (&call);
  /* No request reached the browser in all of this: the next one it hears is the next call's. */
  {
    g_autoptr(JsonObject) request = NULL;

    call_start (w.env.tools, w.env.context, "browser_network", "{\"tab\":\"b1:7\"}", NULL, &call);
    request = browser_request (w.client, "browser.network.list");
    browser_answer (w.client, request, "{\"entries\":[],\"dropped\":0}");
    call_wait (&call);
    call_clear (&call);
  }
  world_stop (&w);
}

/* call: only an entry the page called; a write goes with the plan's allowance and comes back held. */
static void
test_call_write_is_held (void)
{
  World w = { 0, };
  g_autofree char *put_id = chp_site_entry_id (WIKI, "PUT", "/recipes/default/tiddlers/{tiddler}");
  g_autofree char *args = g_strdup_printf ("{\"tab\":\"b1:7\",\"action\":\"call\",\"entryId\":\"%s\","
                                           "\"params\":{\"tiddler\":\"New\"},"
                                           "\"body\":{\"title\":\"New\",\"text\":\"Hello\"}}",
                                           put_id);
  g_autoptr(JsonObject) request = NULL;
  JsonObject *params;
  Call call = { 0, };

  world_start (&w);
  learn (&w);
  call_run (w.env.tools, w.env.context, "browser_api",
            "{\"tab\":\"b1:7\",\"action\":\"call\",\"entryId\":\"e0123456789ab\"}", &call);
  g_assert_true (result_is_error (call.result));
  g_assert_true (strstr (result_text (call.result), "only what the page itself called") != NULL);
  call_clear (&call);

  call_start (w.env.tools, w.env.context, "browser_api", args, NULL, &call);
  request = browser_request (w.client, "browser.api.call");
  params = json_object_get_object_member (request, "params");
  g_assert_cmpstr (json_object_get_string_member (params, "method"), ==, "PUT");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (params, "body"),
                                                  "text"), ==, "Hello");
  browser_answer (w.client, request,
                  "{\"held\":true,\"hold\":{\"holdId\":\"kaaaaaaaaaaaaaaaa\",\"state\":\"held\","
                  "\"kind\":\"write\",\"reason\":\"api\",\"word\":null,"
                  "\"control\":\"PUT /recipes/default/tiddlers/New\",\"site\":\"" WIKI "\","
                  "\"fields\":[{\"name\":\"title\",\"value\":\"New\"}],\"signature\":\"9f2c\","
                  "\"tabId\":7,\"createdAt\":1}}");
  call_wait (&call);
  if (result_is_error (call.result))
    g_error ("held: %s", result_text (call.result));
  g_assert_true (json_object_get_boolean_member (result_structured (call.result), "held"));
  g_assert_true (strstr (result_text (call.result), "call to the site's API") != NULL);
  call_clear (&call);
  world_stop (&w);
}

/* The person turned learning off: the session has the entries, the store nothing. */
static void
test_learning_off_keeps_nothing (void)
{
  World w = { 0, };
  g_autoptr(ChpSiteRecord) record = NULL;
  Call call = { 0, };

  world_start (&w);
  chp_engine_set_site_learning (w.env.engine, FALSE);
  learn (&w);
  record = site_stored (w.env.engine, WIKI);
  g_assert_null (record);
  call_run (w.env.tools, w.env.context, "browser_api", "{\"tab\":\"b1:7\",\"action\":\"list\"}",
            &call);
  g_assert_cmpint (json_object_get_int_member (result_structured (call.result), "count"), ==, 3);
  call_clear (&call);
  world_stop (&w);
}

/* browser_network: lines of names, sizes and kinds, wrapped; never a value. */
static void
test_network_lines (void)
{
  World w = { 0, };
  g_autoptr(JsonObject) request = NULL;
  JsonObject *filter;
  Call call = { 0, };
  const char *text;

  world_start (&w);
  call_start (w.env.tools, w.env.context, "browser_network",
              "{\"tab\":\"b1:7\",\"path\":\"tiddlers\",\"limit\":5}", NULL, &call);
  request = browser_request (w.client, "browser.network.list");
  filter = json_object_get_object_member (json_object_get_object_member (request, "params"),
                                          "filter");
  g_assert_cmpstr (json_object_get_string_member (filter, "type"), ==, "api");
  g_assert_cmpstr (json_object_get_string_member (filter, "text"), ==, "tiddlers");
  browser_answer (w.client, request,
                  "{\"documentId\":\"D1\",\"origin\":\"" WIKI "\",\"dropped\":0,\"capturing\":true,"
                  "\"entries\":[{\"method\":\"GET\",\"origin\":\"" WIKI "\","
                  "\"path\":\"/recipes/default/tiddlers.json\",\"queryKeys\":[\"filter\"],"
                  "\"type\":\"xmlhttprequest\",\"status\":200,\"contentType\":\"application/json\","
                  "\"size\":165,\"ms\":3,\"credential\":{\"cookie\":true,\"bearer\":false,"
                  "\"headers\":[\"x-requested-with\"]}}]}");
  call_wait (&call);
  text = result_text (call.result);
  g_assert_true (inside_wrapper (text, "GET 200 /recipes/default/tiddlers.json ?filter "
                                       "xmlhttprequest application/json 165 B 3 ms cookie "
                                       "x-requested-with"));
  g_assert_cmpint (json_object_get_int_member (result_structured (call.result), "count"), ==, 1);
  call_clear (&call);
  world_stop (&w);
}

/* Another session's first snapshot of the site starts with the card from memory; its second
 * does not repeat it. */
static void
test_arrival_card (void)
{
  World w = { 0, };
  g_autoptr(ChpMcpContext) later = chp_mcp_context_new ("session-2");
  g_autofree char *shop = shop_snapshot ();
  g_autoptr(GString) page = g_string_new (shop);
  Call call = { 0, };

  /* The wiki's page: a card is shown in front of its own site's page only. */
  g_string_replace (page, "https://shop.example/cart?x=1", WIKI "/", 0);
  world_start (&w);
  learn (&w);
  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(JsonObject) request = NULL;
      const char *text;

      call_start (w.env.tools, later, "browser_snapshot", "{\"tab\":\"b1:7\"}", NULL, &call);
      request = browser_request (w.client, "browser.context");
      browser_answer (w.client, request, page->str);
      call_wait (&call);
      g_assert_false (result_is_error (call.result));
      text = result_text (call.result);
      if (i == 0)
        {
          g_assert_true (g_str_has_prefix (text, "Chaperone remembers this site"));
          g_assert_true (inside_wrapper (text, "GET /recipes/default/tiddlers.json"));
          g_assert_true (inside_wrapper (text, "PUT /recipes/default/tiddlers/{tiddler}"));
        }
      else
        g_assert_null (strstr (text, "Chaperone remembers"));
      call_clear (&call);
    }
  world_stop (&w);
}

static const ChpSiteControl *
control_of (ChpSiteRecord *record,
            const char    *role,
            const char    *label)
{
  for (guint i = 0; record != NULL && i < record->controls->len; i++)
    {
      const ChpSiteControl *c = g_ptr_array_index (record->controls, i);

      if (g_str_equal (c->role, role) && g_strcmp0 (c->label, label) == 0)
        return c;
    }
  return NULL;
}

/* Snapshots teach the site its controls: a label is kept once two visits (documents) showed it,
 * links (the rows of lists) never; and how to tell the page is ready, a heading both visits
 * showed, which the next session's card says. */
static void
test_snapshots_teach_controls (void)
{
  World w = { 0, };
  g_autofree char *base = shop_snapshot ();

  world_start (&w);
  for (guint visit = 1; visit <= 2; visit++)
    {
      g_autoptr(ChpSiteRecord) record = NULL;
      g_autoptr(JsonObject) request = NULL;
      g_autoptr(GString) page = g_string_new (base);
      g_autofree char *document = g_strdup_printf ("\"documentId\":\"VISIT%u\"", visit);
      g_autoptr(ChpMcpContext) context = chp_mcp_context_new (visit == 1 ? "s-a" : "s-b");
      Call call = { 0, };

      /* Another document of the same page: the second visit. Its first heading is a record's,
       * different on each visit. */
      g_string_replace (page, "\"documentId\":\"DOC1\"", document, 1);
      g_string_replace (page, "\"headings\":[", visit == 1
                        ? "\"headings\":[{\"level\":2,\"text\":\"Order 5521873\"},"
                        : "\"headings\":[{\"level\":2,\"text\":\"Order 5521874\"},", 1);
      call_start (w.env.tools, context, "browser_snapshot", "{\"tab\":\"b1:7\"}", NULL, &call);
      request = browser_request (w.client, "browser.context");
      browser_answer (w.client, request, page->str);
      call_wait (&call);
      g_assert_false (result_is_error (call.result));
      call_clear (&call);

      /* The merge's answer sets the ready marker with a write of its own: one read lets it be
       * queued (the store answers in order), the next sees it. */
      chp_site_record_free (site_stored (w.env.engine, "https://shop.example"));
      record = site_stored (w.env.engine, "https://shop.example");
      g_assert_nonnull (record);
      if (visit == 1)
        {
          g_assert_null (control_of (record, "button", "Send"));
          g_assert_null (record->info->ready);
        }
      else
        {
          g_assert_nonnull (control_of (record, "button", "Send"));
          g_assert_nonnull (control_of (record, "checkbox", "I agree"));
          g_assert_null (control_of (record, "link", "Help"));
          /* Seen on both visits: the first page heading tells the page is ready; the one that
           * carries a number (a record's) is never kept. */
          g_assert_cmpstr (record->info->ready, ==, "{\"heading\":\"Your cart\"}");
          g_assert_null (control_of (record, "heading", "Order 5521873"));
        }
    }

  /* The arrival card says it; the headings are not listed as controls. */
  {
    g_autoptr(ChpSiteRecord) record = site_stored (w.env.engine, "https://shop.example");
    g_autofree char *card = chp_mcp_site_card (record, "m1");

    g_assert_nonnull (strstr (card, "Ready when it shows: heading \"Your cart\""));
    g_assert_nonnull (strstr (card, "Controls seen before: "));
    g_assert_nonnull (strstr (card, "button \"Send\""));
    g_assert_null (strstr (card, "heading \"Delivery\""));
  }
  world_stop (&w);
}

void
test_mcp_tools_add_api (void)
{
  g_test_add_func ("/mcp-tools/api/snapshots-teach-controls", test_snapshots_teach_controls);
  g_test_add_func ("/mcp-tools/api/arrival-card", test_arrival_card);
  g_test_add_func ("/mcp-tools/api/learn-keeps-the-sites-own", test_learn_keeps_the_sites_own);
  g_test_add_func ("/mcp-tools/api/route-calls-the-read", test_route_calls_the_read);
  g_test_add_func ("/mcp-tools/api/route-misses-quarantine", test_route_misses_quarantine);
  g_test_add_func ("/mcp-tools/api/learn-keeps-bearer-calls", test_learn_keeps_bearer_calls);
  g_test_add_func ("/mcp-tools/api/lists-and-204s-count", test_lists_and_204s_count);
  g_test_add_func ("/mcp-tools/api/sign-out-is-no-miss", test_sign_out_is_no_miss);
  g_test_add_func ("/mcp-tools/api/route-ui-without-a-call", test_route_ui_without_a_call);
  g_test_add_func ("/mcp-tools/api/call-write-is-held", test_call_write_is_held);
  g_test_add_func ("/mcp-tools/api/learning-off-keeps-nothing", test_learning_off_keeps_nothing);
  g_test_add_func ("/mcp-tools/network/lines", test_network_lines);
}
