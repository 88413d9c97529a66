/* SPDX-License-Identifier: GPL-3.0-or-later */
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

/* json_object_get_string_member_with_default() in 1.6 logs a critical when the member is an
 * object or an array, which anyone who sends us JSON could make it do: a string member, or
 * %NULL when it is missing or anything else. */
static inline const char *
chp_json_get_string (JsonObject *object,
                     const char *member)
{
  JsonNode *node = json_object_get_member (object, member);

  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         json_node_get_value_type (node) == G_TYPE_STRING ? json_node_get_string (node) : NULL;
}

/* Likewise for an integer member: @fallback when it is missing or anything else (a fraction
 * too, which the strict reader keeps as a double). */
static inline gint64
chp_json_get_int (JsonObject *object,
                  const char *member,
                  gint64      fallback)
{
  JsonNode *node = json_object_get_member (object, member);

  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         json_node_get_value_type (node) == G_TYPE_INT64 ? json_node_get_int (node) : fallback;
}

/* Likewise for a boolean member. */
static inline gboolean
chp_json_get_bool (JsonObject *object,
                   const char *member,
                   gboolean    fallback)
{
  JsonNode *node = json_object_get_member (object, member);

  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         json_node_get_value_type (node) == G_TYPE_BOOLEAN ? json_node_get_boolean (node) : fallback;
}

/* json_node_init_object() and json_node_init_array() take a reference of their own, so a new
 * object handed to them leaks: these take the caller's. */
static inline JsonNode *
chp_json_node_take_object (JsonObject *object)
{
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, object);
  return node;
}

static inline JsonNode *
chp_json_node_take_array (JsonArray *array)
{
  JsonNode *node = json_node_new (JSON_NODE_ARRAY);

  json_node_take_array (node, array);
  return node;
}

G_END_DECLS
