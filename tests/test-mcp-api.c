/* SPDX-License-Identifier: GPL-3.0-or-later */
/* browser_api's rules apart from any call: which learned entry a hint routes to (and every reason
 * it routes to the page instead), and the URL an entry and the agent's params make. */
#include "config.h"

#include "chp-mcp-api.h"

#include <string.h>

static JsonArray *
entries_of (const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  g_assert_true (json_parser_load_from_data (parser, json, -1, &error));
  g_assert_no_error (error);
  return json_array_ref (json_node_get_array (json_parser_get_root (parser)));
}

static JsonObject *
object_of (const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new ();

  g_assert_true (json_parser_load_from_data (parser, json, -1, NULL));
  return json_object_ref (json_node_get_object (json_parser_get_root (parser)));
}

/* TiddlyWiki's own API as its page uses it, and a contacts app's. */
static const char *WIKI =
  "[{\"entryId\":\"e000000000001\",\"method\":\"GET\",\"origin\":\"http://127.0.0.1:8080\","
  "  \"pathTemplate\":\"/recipes/default/tiddlers.json\",\"queryKeys\":[\"filter\"]},"
  " {\"entryId\":\"e000000000002\",\"method\":\"GET\",\"origin\":\"http://127.0.0.1:8080\","
  "  \"pathTemplate\":\"/recipes/default/tiddlers/{tiddler}\",\"queryKeys\":[]},"
  " {\"entryId\":\"e000000000003\",\"method\":\"PUT\",\"origin\":\"http://127.0.0.1:8080\","
  "  \"pathTemplate\":\"/recipes/default/tiddlers/{tiddler}\",\"queryKeys\":[]},"
  " {\"entryId\":\"e000000000004\",\"method\":\"GET\",\"origin\":\"http://127.0.0.1:8080\","
  "  \"pathTemplate\":\"/status\",\"queryKeys\":[]}]";

static void
test_route_picks_the_one_read (void)
{
  g_autoptr(JsonArray) entries = entries_of (WIKI);
  g_autoptr(JsonObject) title = object_of ("{\"tiddler\":\"HelloThere\"}");
  g_autofree char *why = NULL;
  JsonObject *chosen;

  /* The list: the entry by a title needs one, so the list is the one complete match. */
  chosen = chp_mcp_api_route (entries, "list the tiddlers", NULL, &why);
  g_assert_nonnull (chosen);
  g_assert_cmpstr (json_object_get_string_member (chosen, "entryId"), ==, "e000000000001");
  g_assert_null (why);

  /* A title given: the entry it fills wins over the list. */
  chosen = chp_mcp_api_route (entries, "tiddler", title, &why);
  g_assert_nonnull (chosen);
  g_assert_cmpstr (json_object_get_string_member (chosen, "entryId"), ==, "e000000000002");

  /* A write is never a route, whatever the hint. */
  chosen = chp_mcp_api_route (entries, "status", NULL, &why);
  g_assert_cmpstr (json_object_get_string_member (chosen, "entryId"), ==, "e000000000004");
}

/* An old-style app deletes a note on a GET: "note" still routes to the note, not to its delete
 * link (which the extension would refuse as no read: the route would say ui). */
static void
test_route_prefers_the_parent_of_a_sub_path (void)
{
  g_autoptr(JsonArray) entries = entries_of (
    "[{\"entryId\":\"e1\",\"method\":\"GET\",\"origin\":\"http://x\","
    "  \"pathTemplate\":\"/api/notes/{id}/delete\",\"queryKeys\":[]},"
    " {\"entryId\":\"e2\",\"method\":\"GET\",\"origin\":\"http://x\","
    "  \"pathTemplate\":\"/api/notes/{id}\",\"queryKeys\":[]}]");
  g_autoptr(JsonObject) id = object_of ("{\"id\":\"7\"}");
  g_autofree char *why = NULL;
  JsonObject *chosen;

  chosen = chp_mcp_api_route (entries, "note", id, &why);
  g_assert_nonnull (chosen);
  g_assert_cmpstr (json_object_get_string_member (chosen, "entryId"), ==, "e2");
  /* Asked for by its own word, the sub-path matches better (and is refused by the extension). */
  chosen = chp_mcp_api_route (entries, "delete note", id, &why);
  g_assert_cmpstr (json_object_get_string_member (chosen, "entryId"), ==, "e1");
}

static void
test_route_says_ui_and_why (void)
{
  g_autoptr(JsonArray) entries = entries_of (WIKI);
  g_autoptr(JsonArray) twins = entries_of (
    "[{\"entryId\":\"e1\",\"method\":\"GET\",\"origin\":\"http://x\",\"pathTemplate\":\"/contacts\","
    "  \"queryKeys\":[]},"
    " {\"entryId\":\"e2\",\"method\":\"GET\",\"origin\":\"http://x\",\"pathTemplate\":\"/v2/contacts\","
    "  \"queryKeys\":[]}]");
  g_autoptr(JsonArray) needs = entries_of (
    "[{\"entryId\":\"e1\",\"method\":\"GET\",\"origin\":\"http://x\","
    "  \"pathTemplate\":\"/contacts/{id}\",\"queryKeys\":[]}]");
  g_autoptr(JsonArray) broken = entries_of (
    "[{\"entryId\":\"e1\",\"method\":\"GET\",\"origin\":\"http://x\",\"pathTemplate\":\"/contacts\","
    "  \"queryKeys\":[],\"quarantined\":true}]");
  char *why = NULL;

  g_assert_null (chp_mcp_api_route (entries, "invoices", NULL, &why));
  g_assert_true (strstr (why, "no learned read matches") != NULL);
  g_clear_pointer (&why, g_free);

  g_assert_null (chp_mcp_api_route (twins, "contacts", NULL, &why));
  g_assert_true (strstr (why, "alike") != NULL);
  g_assert_true (strstr (why, "/v2/contacts") != NULL);
  g_clear_pointer (&why, g_free);

  g_assert_null (chp_mcp_api_route (needs, "contact", NULL, &why));
  g_assert_true (strstr (why, "needs id") != NULL);
  g_clear_pointer (&why, g_free);

  g_assert_null (chp_mcp_api_route (broken, "contacts", NULL, &why));
  g_assert_true (strstr (why, "quarantined") != NULL);
  g_clear_pointer (&why, g_free);

  g_assert_null (chp_mcp_api_route (entries, "the of a", NULL, &why));
  g_assert_nonnull (why);
  g_free (why);
}

static void
test_build_url (void)
{
  g_autoptr(JsonArray) entries = entries_of (WIKI);
  JsonObject *list = json_array_get_object_element (entries, 0);
  JsonObject *one = json_array_get_object_element (entries, 1);
  g_autoptr(JsonObject) title = object_of ("{\"tiddler\":\"$:/admin/A b?c\"}");
  g_autoptr(JsonObject) filter = object_of ("{\"filter\":\"[tag[Journal]]\"}");
  g_autoptr(JsonObject) stray = object_of ("{\"limit\":\"5\"}");
  g_autoptr(GError) error = NULL;
  g_autofree char *url = NULL;
  g_autofree char *query = NULL;
  g_autofree char *none = NULL;

  /* A value is one part of the path, escaped whole: a system tiddler's slash goes as %2F. */
  url = chp_mcp_api_build_url (one, title, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (url, ==,
                   "http://127.0.0.1:8080/recipes/default/tiddlers/%24%3A%2Fadmin%2FA%20b%3Fc");

  query = chp_mcp_api_build_url (list, filter, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (query, ==,
                   "http://127.0.0.1:8080/recipes/default/tiddlers.json?filter=%5Btag%5BJournal%5D%5D");

  /* Only the keys the page itself used. */
  none = chp_mcp_api_build_url (list, stray, &error);
  g_assert_null (none);
  g_assert_error (error, CHP_MCP_API_ERROR, CHP_MCP_API_ERROR_UNKNOWN_PARAM);
  g_assert_true (strstr (error->message, "it takes: filter") != NULL);
  g_clear_error (&error);

  g_assert_null (chp_mcp_api_build_url (one, NULL, &error));
  g_assert_error (error, CHP_MCP_API_ERROR, CHP_MCP_API_ERROR_MISSING_PARAM);
  g_clear_error (&error);

  /* Nor a step up or none, which escaping would leave as it is (/tiddlers/.. is
   * /recipes/default/), nor one between slashes or backslashes, which a proxy that decodes %2F,
   * or IIS reading %5C as a slash, would follow out of the template. */
  for (guint i = 0; i < 5; i++)
    {
      static const char * const bad[] = {
        "{\"tiddler\":\"..\"}", "{\"tiddler\":\".\"}", "{\"tiddler\":\"../../account/delete\"}",
        "{\"tiddler\":\"a/./b\"}", "{\"tiddler\":\"x\\\\..\\\\admin\"}",
      };
      g_autoptr(JsonObject) dots = object_of (bad[i]);

      g_assert_null (chp_mcp_api_build_url (one, dots, &error));
      g_assert_error (error, CHP_MCP_API_ERROR, CHP_MCP_API_ERROR_BAD_VALUE);
      g_assert_true (strstr (error->message, "one part of the path") != NULL);
      g_clear_error (&error);
    }
  /* Dots inside a value are its own: escaped, nothing to resolve. */
  g_clear_pointer (&url, g_free);
  {
    g_autoptr(JsonObject) dotted = object_of ("{\"tiddler\":\"...and so on\"}");

    url = chp_mcp_api_build_url (one, dotted, &error);
    g_assert_no_error (error);
    g_assert_cmpstr (url, ==, "http://127.0.0.1:8080/recipes/default/tiddlers/...and%20so%20on");
  }
}

static void
test_slots (void)
{
  g_auto(GStrv) slots = chp_mcp_api_template_slots ("/a/{org}/b/{id}/c");
  g_auto(GStrv) none = chp_mcp_api_template_slots ("/a/b");

  g_assert_cmpuint (g_strv_length (slots), ==, 2);
  g_assert_cmpstr (slots[0], ==, "org");
  g_assert_cmpstr (slots[1], ==, "id");
  g_assert_cmpuint (g_strv_length (none), ==, 0);
}

/* A shape the redactor passed through: a type name it masked (a field named password) is still a
 * type, never the marker; counts stay; anything else is a string. */
static void
test_shapes (void)
{
  g_autoptr(JsonObject) in = object_of ("{\"kind\":\"json\",\"keys\":{\"user\":\"string\","
                                        "\"password\":\"[redacted: 6 chars]\",\"n\":\"number\","
                                        "\"list\":{\"array\":3,\"item\":{\"id\":\"number\"}}},"
                                        "\"operation\":\"sendMessage\",\"extra\":1}");
  g_autoptr(JsonNode) node = json_node_init_object (json_node_alloc (), in);
  g_autoptr(JsonNode) out = chp_mcp_api_body_copy (node);
  g_autofree char *text = json_to_string (out, FALSE);

  g_assert_cmpstr (text, ==, "{\"kind\":\"json\",\"keys\":{\"user\":\"string\","
                   "\"password\":\"string\",\"n\":\"number\","
                   "\"list\":{\"array\":3,\"item\":{\"id\":\"number\"}}},"
                   "\"operation\":\"sendMessage\"}");
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/mcp-api/route/picks-the-one-read", test_route_picks_the_one_read);
  g_test_add_func ("/mcp-api/route/says-ui-and-why", test_route_says_ui_and_why);
  g_test_add_func ("/mcp-api/route/prefers-the-parent-of-a-sub-path",
                   test_route_prefers_the_parent_of_a_sub_path);
  g_test_add_func ("/mcp-api/url/built-escaped-and-bounded", test_build_url);
  g_test_add_func ("/mcp-api/url/slots", test_slots);
  g_test_add_func ("/mcp-api/shapes/types-only", test_shapes);
  return g_test_run ();
}
