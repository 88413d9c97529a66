/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-api.h: browser_api's reasoning about a site's learned endpoints, apart from any call:
 * which entry a hint means (route), and the URL an entry and the agent's params make. Entries are
 * JSON objects as browser_api lists them:
 *   {entryId, method, origin, pathTemplate, queryKeys: [..], body: {kind, keys} | null,
 *    credential: {kind, header?}, sampleStatus, confidence, quarantined}
 * Pure functions, so the rules are tested without a browser (tests/test-mcp-api.c). */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

#define CHP_MCP_API_ERROR (chp_mcp_api_error_quark ())

typedef enum
{
  CHP_MCP_API_ERROR_MISSING_PARAM,   /* a {slot} of the template has no value */
  CHP_MCP_API_ERROR_UNKNOWN_PARAM,   /* a param the entry does not take */
  CHP_MCP_API_ERROR_BAD_VALUE,       /* a value that cannot go in a URL as it is */
} ChpMcpApiError;

GQuark      chp_mcp_api_error_quark     (void);

GStrv       chp_mcp_api_template_slots  (const char  *path_template);
char       *chp_mcp_api_build_url       (JsonObject  *entry,
                                         JsonObject  *params,
                                         GError     **error);
JsonObject *chp_mcp_api_route           (JsonArray   *entries,
                                         const char  *hint,
                                         JsonObject  *params,
                                         char       **why);
gboolean    chp_mcp_api_is_read         (JsonObject  *entry);
JsonNode   *chp_mcp_api_shape_copy      (JsonNode    *node,
                                         guint        depth);
JsonNode   *chp_mcp_api_body_copy       (JsonNode    *node);

G_END_DECLS
