/* chp-mcp-format.c: placeholder (issue 5). */
#include "config.h"

#include "chp-mcp-format.h"
