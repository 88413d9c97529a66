/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-tools-list.c: the tools table as an MCP client sees it (names, schemas, hints; one
 * sealed list) and the argument checks made before a tool runs. */
#include "config.h"

#include "test-mcp-tools-harness.h"

#include "chp-protocol-error.h"

#include <string.h>

static void
test_tools_list (void)
{
  g_autoptr(ChpMcpTools) tools = chp_mcp_tools_new (NULL);
  g_autoptr(JsonNode) list = chp_mcp_tools_list (tools);
  JsonArray *array = json_node_get_array (list);
  static const char *names[] = {
    "browser_tabs", "browser_snapshot", "browser_inspect", "browser_act", "browser_navigate",
    "browser_network", "browser_api", "browser_batch", "browser_handoff", "browser_wait",
    "browser_plan", "browser_history", "browser_stop",
  };
  static const struct
  {
    const char *name;
    gboolean read_only;
    gboolean destructive;
    gboolean open_world;
  } hints[] = {
    { "browser_tabs", TRUE, FALSE, TRUE }, { "browser_snapshot", TRUE, FALSE, TRUE },
    { "browser_inspect", TRUE, FALSE, TRUE }, { "browser_act", FALSE, TRUE, TRUE },
    { "browser_network", TRUE, FALSE, TRUE }, { "browser_api", FALSE, TRUE, TRUE },
    { "browser_batch", FALSE, TRUE, TRUE },
    { "browser_navigate", FALSE, FALSE, TRUE }, { "browser_wait", TRUE, FALSE, FALSE },
    { "browser_plan", FALSE, FALSE, FALSE }, { "browser_stop", FALSE, FALSE, FALSE },
  };

  g_assert_cmpuint (json_array_get_length (array), ==, G_N_ELEMENTS (names));
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      JsonObject *tool = json_array_get_object_element (array, i);
      JsonObject *input = json_object_get_object_member (tool, "inputSchema");
      JsonObject *output = json_object_get_object_member (tool, "outputSchema");
      JsonObject *annotations = json_object_get_object_member (tool, "annotations");
      JsonObject *properties = json_object_get_object_member (input, "properties");
      JsonArray *required = json_object_has_member (input, "required")
                            ? json_object_get_array_member (input, "required") : NULL;
      g_autoptr(JsonObject) error = parse_object ("{\"code\":\"stopped\",\"message\":\"m\","
                                                  "\"detail\":\"d\"}");
      g_autoptr(JsonNode) error_node = json_node_init_object (json_node_alloc (), error);

      g_assert_cmpstr (json_object_get_string_member (tool, "name"), ==, names[i]);
      g_assert_true (chp_mcp_tools_has (tools, names[i]));
      g_assert_cmpuint (strlen (json_object_get_string_member (tool, "description")), >, 40);
      g_assert_nonnull (json_object_get_string_member (tool, "title"));

      g_assert_cmpstr (json_object_get_string_member (input, "type"), ==, "object");
      g_assert_false (json_object_get_boolean_member (input, "additionalProperties"));
      for (guint k = 0; required != NULL && k < json_array_get_length (required); k++)
        g_assert_true (json_object_has_member (properties, json_array_get_string_element (required,
                                                                                          k)));

      /* The error form fits every output schema: clients check it even with isError. */
      g_assert_cmpstr (json_object_get_string_member (output, "type"), ==, "object");
      g_assert_false (json_object_has_member (output, "required"));
      assert_valid (output, error_node, names[i]);

      /* Hints are written only where they differ from MCP's defaults (readOnly false,
       * destructive true, idempotent false, openWorld true): read them with those defaults. */
      for (guint k = 0; k < 4; k++)
        {
          static const char *members[] = { "readOnlyHint", "destructiveHint", "idempotentHint",
                                          "openWorldHint" };
          JsonNode *hint = json_object_get_member (annotations, members[k]);

          if (hint != NULL)
            g_assert_true (json_node_get_value_type (hint) == G_TYPE_BOOLEAN);
        }
      for (guint k = 0; k < G_N_ELEMENTS (hints); k++)
        if (g_str_equal (hints[k].name, names[i]))
          {
            gboolean read_only = json_object_get_boolean_member_with_default (annotations,
                                                                              "readOnlyHint",
                                                                              FALSE);

            g_assert_cmpint (read_only, ==, hints[k].read_only);
            /* A read-only tool says nothing of destruction: MCP reads it only for writers. */
            if (read_only)
              g_assert_false (json_object_has_member (annotations, "destructiveHint"));
            else
              g_assert_cmpint (json_object_get_boolean_member_with_default (annotations,
                                                                            "destructiveHint",
                                                                            TRUE),
                               ==, hints[k].destructive);
            g_assert_cmpint (json_object_get_boolean_member_with_default (annotations,
                                                                          "openWorldHint", TRUE),
                             ==, hints[k].open_world);
          }
    }

  g_assert_false (chp_mcp_tools_has (tools, "browser_approve"));
  g_assert_false (chp_mcp_tools_has (tools, "browser_resume"));
  /* One list, built once, shared and sealed. */
  {
    g_autoptr(JsonNode) again = chp_mcp_tools_list (tools);

    g_assert_true (again == list);
    g_assert_true (json_node_is_immutable (again));
  }
}

static void
test_arguments (void)
{
  g_autoptr(ChpMcpTools) tools = chp_mcp_tools_new (NULL);
  g_autoptr(ChpMcpContext) context = chp_mcp_context_new ("s1");
  g_autofree char *long_value = g_strnfill (65537, 'x');
  g_autoptr(GString) cjk = g_string_new (NULL);
  Call call = { 0, };
  const struct
  {
    const char *tool;
    const char *arguments;
    const char *names;   /* what the error message must name */
  } cases[] = {
    { "browser_snapshot", "{}", "tab is required" },
    { "browser_snapshot", "{\"tab\":\"1842\"}", "tab does not have the right form" },
    { "browser_snapshot", "{\"tab\":\"b1:1842\",\"page\":0}", "page must be at least 1" },
    { "browser_snapshot", "{\"tab\":\"b1:1842\",\"diff\":\"yes\"}", "diff must be true or false" },
    { "browser_snapshot", "{\"tab\":\"b1:1842\",\"frame\":1.5}", "frame must be an integer" },
    { "browser_snapshot", "{\"tab\":\"b1:1842\",\"query\":\"\"}", "query must have at least 1" },
    { "browser_tabs", "{\"foo\":1}", "browser_tabs takes no argument \"foo\"" },
    { "browser_act", "{\"tab\":\"b1:1\",\"ref\":\"3:e1\",\"action\":\"pinch\"}",
      "action must be one of click, dblclick, focus, scroll, fill, hover, press, type, drag" },
    { "browser_act", "{\"tab\":\"b1:1\",\"ref\":\"3:e1\",\"action\":\"drag\"}",
      "to is required when action is drag" },
    { "browser_act", "{\"tab\":\"b1:1\",\"ref\":\"3:e1\",\"action\":\"press\"}",
      "key is required when action is press" },
    { "browser_act", "{\"tab\":\"b1:1\",\"action\":\"press\",\"key\":\"Hyper+x\"}",
      "key must be a key such as Enter, Tab or Control+s" },
    { "browser_act", "{\"tab\":\"b1:1\",\"action\":\"press\",\"key\":\"Control+\"}",
      "key must be a key such as Enter, Tab or Control+s" },
    { "browser_act", "{\"tab\":\"b1:1\",\"ref\":\"3:e1\",\"action\":\"click\",\"key\":\"Enter\"}",
      "key is for press only" },
    { "browser_act", "{\"tab\":\"b1:1\",\"action\":\"type\"}",
      "text is required when action is type" },
    { "browser_act", "{\"tab\":\"b1:1\",\"action\":\"type\",\"text\":\"\"}",
      "text must have at least 1" },
    { "browser_act", "{\"tab\":\"b1:1\",\"action\":\"fill\",\"value\":\"x\"}",
      "ref is required when action is fill" },
    { "browser_act", "{\"tab\":\"b1:1\",\"action\":\"hover\"}",
      "ref is required when action is hover" },
    { "browser_act", "{\"tab\":\"b1:1\",\"ref\":\"e1\",\"action\":\"click\"}",
     "ref does not have" },
    { "browser_act", "{\"tab\":\"b1:1\",\"ref\":\"3:e1\",\"action\":\"fill\"}",
      "value is required when action is fill" },
    { "browser_act", "{\"tab\":\"b1:1\",\"ref\":\"3:e1\",\"action\":\"click\",\"value\":\"x\"}",
      "value is for fill only" },
    { "browser_act", NULL, "value must have at most 65536 characters" },
    { "browser_navigate", "{\"tab\":\"b1:1\",\"url\":\"ftp://example.org/\"}",
     "url must be an absolute" },
    { "browser_navigate", "{\"tab\":\"b1:1\",\"url\":\"/relative\"}", "url must be an absolute" },
    { "browser_handoff", "{\"tab\":\"b1:1\",\"reason\":\"bored\",\"message\":\"m\"}",
     "reason must be one of" },
    { "browser_handoff", "{\"tab\":\"b1:1\",\"reason\":\"mfa\"}", "message is required" },
    { "browser_handoff", NULL, "message must have at most 250 characters" },
    { "browser_wait", "{\"id\":\"b1:x-abc\"}", "id must come from browser_handoff" },
    { "browser_wait", "{\"id\":\"b1:h-abc\",\"timeoutMs\":\"soon\"}",
     "timeoutMs must be an integer" },
    { "browser_stop", "{\"reason\":7}", "reason must be a string" },
    { "browser_fly", "{}", "There is no tool called \"browser_fly\"" },
  };

  /* 251 characters of three bytes each: the bound counts characters. */
  for (guint i = 0; i < 251; i++)
    g_string_append (cjk, "確");

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *arguments = NULL;

      if (g_str_equal (cases[i].names, "value must have at most 65536 characters"))
        arguments = g_strdup_printf ("{\"tab\":\"b1:1\",\"ref\":\"3:e1\",\"action\":\"fill\","
                                     "\"value\":\"%s\"}",
                                     long_value);
      else if (g_str_equal (cases[i].names, "message must have at most 250 characters"))
        arguments = g_strdup_printf ("{\"tab\":\"b1:1\",\"reason\":\"mfa\",\"message\":\"%s\"}",
                                     cjk->str);
      else
        arguments = g_strdup (cases[i].arguments);

      call_start (tools, context, cases[i].tool, arguments, NULL, &call);
      call_wait (&call);
      g_assert_null (call.result);
      g_assert_error (call.error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS);
      g_test_message ("%s: %s", cases[i].tool, call.error->message);
      g_assert_nonnull (strstr (call.error->message, cases[i].names));
      /* The value an agent meant to fill is never said back. */
      g_assert_null (strstr (call.error->message, "xxxxxxxx"));
    }
  call_clear (&call);
}

void
test_mcp_tools_add_list (void)
{
  g_test_add_func ("/chaperone/mcp-tools/list", test_tools_list);
  g_test_add_func ("/chaperone/mcp-tools/arguments", test_arguments);
}
