/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-session-protocol.c: JSON-RPC as an MCP client speaks it on the agent socket: initialize
 * and its versions, ping and tools/list, notifications, unknown methods, malformed and invalid
 * requests, member types, an oversize line, calls before initialize, tools/call's params and the
 * logging level. */
#include "config.h"

#include "test-mcp-session-harness.h"

#include "chp-mcp-session.h"

#include <string.h>

static void
test_initialize_negotiation (Fixture       *fixture,
                             gconstpointer  data)
{
  const struct { const char *asked, *answered; } cases[] = {
    { "2025-06-18", "2025-06-18" },
    { "2025-11-25", "2025-11-25" },
    { "1999-01-01", "2025-06-18" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(Client) client = client_connect (fixture->path);
      JsonObject *result = client_initialize (client, cases[i].asked, NULL);
      JsonObject *capabilities = json_object_get_object_member (result, "capabilities");
      JsonObject *info = json_object_get_object_member (result, "serverInfo");
      const char *text = json_object_get_string_member (result, "instructions");

      g_assert_cmpstr (json_object_get_string_member (result, "protocolVersion"), ==,
                       cases[i].answered);
      g_assert_false (json_object_get_boolean_member (
        json_object_get_object_member (capabilities, "tools"), "listChanged"));
      g_assert_true (json_object_has_member (capabilities, "logging"));
      g_assert_cmpstr (json_object_get_string_member (info, "name"), ==, "chaperone");
      g_assert_cmpstr (json_object_get_string_member (info, "title"), ==, "Chaperone");
      g_assert_cmpstr (json_object_get_string_member (info, "version"), ==, PACKAGE_VERSION);
      g_assert_nonnull (strstr (text, "untrusted"));
      g_assert_nonnull (strstr (text, "browser_wait"));

      /* Once per connection. */
      assert_error (client_request (client, 2, "initialize",
                                    "{\"protocolVersion\":\"2025-06-18\"}"), 2, -32600);
    }

  /* protocolVersion is required. */
  {
    g_autoptr(Client) client = client_connect (fixture->path);

    assert_error (client_request (client, 3, "initialize", "{}"), 3, -32602);
    assert_error (client_request (client, 4, "initialize", "[1]"), 4, -32602);
    client_initialize (client, "2025-06-18", NULL);
  }
}

static void
test_ping_and_tools_list (Fixture       *fixture,
                          gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  JsonObject *result;

  /* Ping is allowed before initialize. */
  assert_ping (client, 10);
  client_initialize (client, "2025-06-18", NULL);
  assert_ping (client, 11);

  result = result_of (client_request (client, 12, "tools/list", "{\"cursor\":\"x\"}"));
  g_assert_nonnull (json_object_get_array_member (result, "tools"));

  /* String ids come back as strings. */
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"method\":\"ping\"}");
  g_assert_cmpstr (json_object_get_string_member (client_next (client), "id"), ==, "abc");
}

static void
test_notifications_unanswered (Fixture       *fixture,
                               gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);

  client_initialize (client, "2025-06-18", NULL);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\","
                       "\"params\":{\"x\":1}}");
  client_send (client, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                       "\"params\":{\"requestId\":99,\"reason\":\"gone\"}}");
  client_send (client, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                       "\"params\":{\"requestId\":\"nope\"}}");
  client_send (client, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\"}");
  /* A response to a request the server never made is ignored too. */
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":6,\"error\":{\"code\":1,\"message\":\"x\"}}");
  /* The next message is the ping's answer: nothing came for the rest. */
  assert_ping (client, 7);
}

static void
test_unknown_method (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);

  client_initialize (client, "2025-06-18", NULL);
  assert_error (client_request (client, 2, "resources/list", NULL), 2, -32601);
  assert_error (client_request (client, 3, "browser_tabs", "{}"), 3, -32601);
  assert_ping (client, 4);
}

static void
test_malformed (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  const char *bad[] = {
    "{\"jsonrpc\":",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} {\"jsonrpc\":\"2.0\"}",
    "var x = {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\\1ng\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\ud800\"}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,/* c */\"method\":\"ping\"}",
    "not json",
  };
  GString *deep = g_string_new ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":");

  client_initialize (client, "2025-06-18", NULL);
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_test_message ("malformed %u", i);
      client_send (client, bad[i]);
      assert_error (client_next (client), -1, -32700);
    }

  /* Invalid UTF-8 (and a NUL) inside a string. */
  client_send_literal (client, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}\n");
  assert_error (client_next (client), -1, -32700);
  client_send_literal (client, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\0\"}\n");
  assert_error (client_next (client), -1, -32700);

  /* json-glib recurses: nesting is bounded before it parses. */
  for (guint i = 0; i < 5000; i++)
    g_string_append_c (deep, '[');
  for (guint i = 0; i < 5000; i++)
    g_string_append_c (deep, ']');
  g_string_append (deep, "}}");
  client_send (client, deep->str);
  g_string_free (deep, TRUE);
  assert_error (client_next (client), -1, -32700);

  /* Blank lines are nothing; a CRLF line is one message. */
  client_send (client, "");
  client_send (client, "   \t\r");
  client_send_literal (client, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\r\n");
  g_assert_cmpint (json_object_get_int_member (client_next (client), "id"), ==, 8);

  assert_ping (client, 9);
}

static void
test_invalid_requests (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);

  client_initialize (client, "2025-06-18", NULL);

  /* MCP removed batching. */
  client_send (client, "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "42");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "\"ping\"");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "{\"id\":2,\"method\":\"ping\"}");
  assert_error (client_next (client), 2, -32600);
  client_send (client, "{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}");
  assert_error (client_next (client), 3, -32600);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}");
  assert_error (client_next (client), -1, -32600);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":7}");
  assert_error (client_next (client), 4, -32600);
  client_send (client, "{\"jsonrpc\":\"2.0\",\"id\":5}");
  assert_error (client_next (client), 5, -32600);
  assert_error (client_request (client, 6, "tools/list", "\"x\""), 6, -32602);

  assert_ping (client, 7);
}

/* Members of another type than the protocol's are refused as missing ones are, with nothing
 * louder than that in the log: json-glib 1.6's *_with_default() getters log a critical for an
 * object or an array (fatal here, as in any G_DEBUG=fatal-criticals run). Found by
 * tests/fuzz/fuzz-mcp-session. */
static void
test_member_types (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  JsonObject *result;

  client_send (client, "{\"jsonrpc\":{\"v\":\"2.0\"},\"id\":1,\"method\":\"ping\"}");
  assert_error (client_next (client), 1, -32600);
  assert_error (client_request (client, 2, "initialize", "{\"protocolVersion\":[\"2025-06-18\"]}"),
                2, -32602);
  result = result_of (client_request (client, 3, "initialize",
                                      "{\"protocolVersion\":\"2025-06-18\",\"clientInfo\":"
                                      "{\"name\":{\"n\":1},\"version\":[1]}}"));
  g_assert_cmpstr (json_object_get_string_member (result, "protocolVersion"), ==, "2025-06-18");
  assert_error (client_request (client, 4, "logging/setLevel", "{\"level\":[\"debug\"]}"), 4,
                -32602);
  assert_ping (client, 5);
}

static char *
ping_with_padding (gint64 id,
                   gsize  line_len)
{
  g_autofree char *head = g_strdup_printf ("{\"jsonrpc\":\"2.0\",\"id\":%" G_GINT64_FORMAT ","
                                           "\"method\":\"ping\",\"params\":{\"pad\":\"", id);
  const char *tail = "\"}}";
  gsize pad = line_len - strlen (head) - strlen (tail);
  GString *line = g_string_sized_new (line_len + 1);

  g_string_append (line, head);
  for (gsize i = 0; i < pad; i++)
    g_string_append_c (line, 'x');
  g_string_append (line, tail);
  g_assert_cmpuint (line->len, ==, line_len);
  return g_string_free (line, FALSE);
}

static void
test_oversize_line (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  g_autofree char *largest = ping_with_padding (2, CHP_MCP_MAX_LINE_BYTES);
  g_autofree char *too_large = ping_with_padding (3, CHP_MCP_MAX_LINE_BYTES + 1);
  g_autofree char *huge = ping_with_padding (4, 3 * CHP_MCP_MAX_LINE_BYTES);
  JsonObject *response;
  const char *message;

  client_initialize (client, "2025-06-18", NULL);

  /* At the limit: answered. */
  client_send (client, largest);
  response = client_next (client);
  result_of (response);
  g_assert_cmpint (json_object_get_int_member (response, "id"), ==, 2);

  /* One byte over: refused once, skipped to its newline, and the session goes on. */
  client_send (client, too_large);
  message = assert_error (client_next (client), -1, -32600);
  g_assert_nonnull (strstr (message, "1048576"));
  assert_ping (client, 5);

  client_send (client, huge);
  assert_error (client_next (client), -1, -32600);
  assert_ping (client, 6);
}

static void
test_before_initialize (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  const char *message;

  message = assert_error (client_request (client, 1, "tools/list", NULL), 1, -32600);
  g_assert_nonnull (strstr (message, "not initialized"));
  assert_error (client_request (client, 2, "tools/call", "{\"name\":\"browser_tabs\"}"), 2,
                -32600);
  assert_error (client_request (client, 3, "logging/setLevel", "{\"level\":\"info\"}"), 3,
                -32600);
  assert_ping (client, 4);

  /* Lenient: tools work once initialize is answered, even without notifications/initialized. */
  result_of (client_request (client, 5, "initialize", "{\"protocolVersion\":\"2025-06-18\"}"));
  result_of (client_request (client, 6, "tools/list", NULL));
}

static void
test_tools_call_params (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  ChpAgentSession *agent;
  const char *message;

  client_initialize (client, "2025-06-18", NULL);
  agent = only_agent (fixture);

  assert_error (client_request (client, 2, "tools/call", NULL), 2, -32602);
  assert_error (client_request (client, 3, "tools/call", "{}"), 3, -32602);
  assert_error (client_request (client, 4, "tools/call", "{\"name\":5}"), 4, -32602);
  assert_error (client_request (client, 5, "tools/call",
                                "{\"name\":\"browser_tabs\",\"arguments\":\"x\"}"), 5, -32602);
  assert_error (client_request (client, 6, "tools/call",
                                "{\"name\":\"browser_tabs\",\"arguments\":[]}"), 6, -32602);
  g_assert_cmpstr (chp_agent_session_get_last_error (agent), ==, "invalid_params");

  message = assert_error (client_request (client, 7, "tools/call",
                                          "{\"name\":\"no_such_tool\",\"arguments\":{}}"),
                          7, -32602);
  g_assert_cmpstr (message, ==, "Unknown tool: no_such_tool");
  g_assert_cmpstr (chp_agent_session_get_last_error (agent), ==, "unknown_method");
  g_assert_cmpuint (chp_agent_session_get_calls (agent), ==, 6);

  /* An agent's junk is not echoed whole. */
  message = assert_error (client_request (client, 8, "tools/call", "{\"name\":\"a\\nb\"}"),
                          8, -32602);
  g_assert_null (strchr (message, '\n'));
  assert_ping (client, 9);
}

static void
test_logging_level (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  ChpAgentSession *agent;

  client_initialize (client, "2025-06-18", NULL);
  agent = only_agent (fixture);

  assert_error (client_request (client, 2, "logging/setLevel", "{\"level\":\"loud\"}"), 2, -32602);
  assert_error (client_request (client, 3, "logging/setLevel", "{}"), 3, -32602);
  assert_error (client_request (client, 4, "logging/setLevel", "{\"level\":3}"), 4, -32602);

  /* Above warning: the pause is not told. */
  g_assert_cmpuint (json_object_get_size (result_of (
    client_request (client, 5, "logging/setLevel", "{\"level\":\"error\"}"))), ==, 0);
  chp_agent_session_request_pause (agent);
  assert_ping (client, 6);

  /* Warning and below: the resume is. */
  result_of (client_request (client, 7, "logging/setLevel", "{\"level\":\"debug\"}"));
  chp_agent_session_request_resume (agent);
  g_assert_true (is_log (client_next (client), "warning"));
  assert_ping (client, 8);
}

void
test_mcp_session_add_protocol (void)
{
  ADD ("protocol/initialize", test_initialize_negotiation);
  ADD ("protocol/ping-tools-list", test_ping_and_tools_list);
  ADD ("protocol/notifications-unanswered", test_notifications_unanswered);
  ADD ("protocol/unknown-method", test_unknown_method);
  ADD ("protocol/malformed", test_malformed);
  ADD ("protocol/invalid-requests", test_invalid_requests);
  ADD ("protocol/member-types", test_member_types);
  ADD ("protocol/oversize-line", test_oversize_line);
  ADD ("protocol/before-initialize", test_before_initialize);
  ADD ("protocol/tools-call-params", test_tools_call_params);
  ADD ("protocol/logging-level", test_logging_level);
}
