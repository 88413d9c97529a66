/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-session.c: the agent endpoint over a real Unix socket, as an MCP client sees it:
 * JSON-RPC framing and errors, initialize, the folder and socket checks, and the person's
 * Pause / Resume / Disconnect reaching the agent. Independent of which tools exist. */
#include "config.h"

#include "test-mcp-session-harness.h"

/* Each family's file adds its cases; the order here is the order they run in. */
int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  test_mcp_session_add_protocol ();
  test_mcp_session_add_server ();
  test_mcp_session_add_agents ();
  test_mcp_session_add_alone ();

  return g_test_run ();
}
