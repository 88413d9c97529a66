/* chp-mcp-session.c: placeholder until the MCP session lands (issue 5). */
#include "config.h"

#include "chp-mcp-session.h"
