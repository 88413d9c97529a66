/* chp-json-util.h: what json-glib 1.6 lacks. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* json_object_get_array_member_with_default() arrived after 1.6: an array member, or %NULL when
 * it is missing or anything else. */
static inline JsonArray *
chp_json_get_array (JsonObject *object,
                    const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  return node != NULL && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

G_END_DECLS
