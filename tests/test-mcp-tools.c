/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-tools.c: the agent's tools. How results read (the untrusted wrapper, the character
 * budget, snapshot lines, pages, queries and diffs) as pure functions; the tools table as an
 * MCP client sees it; argument checks; and the tools on a real engine, with no browser and with
 * a C client playing the extension, down to what is sent to the browser and what is audited. */
#include "config.h"

#include "test-mcp-tools-harness.h"

/* Each family's file adds its cases; the order here is the order they run in. */
int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  test_mcp_tools_add_format ();
  test_mcp_tools_add_snapshot ();
  test_mcp_tools_add_list ();
  test_mcp_tools_add_engine ();
  test_mcp_tools_add_browser ();
  test_mcp_tools_add_safety ();
  test_mcp_tools_add_handoff ();
  test_mcp_tools_add_rules ();
  test_mcp_tools_add_trace ();
  test_mcp_tools_add_api ();
  test_mcp_tools_add_batch ();
  test_mcp_tools_add_policy ();
  test_mcp_tools_add_drag ();

  return g_test_run ();
}
