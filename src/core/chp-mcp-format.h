/* chp-mcp-format.h: how tool results read to an agent (placeholder, issue 5). */
#pragma once

#include <json-glib/json-glib.h>
