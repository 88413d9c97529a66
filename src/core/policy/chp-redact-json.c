/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-redact-json.c: the redaction of a result as the extension sent it (chp_redact_json): a deep
 * copy in which every string is redacted as text, and strings and numbers under secret member
 * names (or in a {name, value} pair with a secret name) become markers. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-redact"

#include "chp-redact-private.h"

static JsonNode *
marker_node (const char *name,
             const char *secret,
             guint      *count)
{
  g_autoptr(GString) out = g_string_new (NULL);
  JsonNode *node = json_node_new (JSON_NODE_VALUE);

  chp_redact_append_marker (out, name, strlen (name), secret, strlen (secret));
  json_node_set_string (node, out->str);
  (*count)++;
  return node;
}

/* A scalar under @secret_name (NULL: not a secret name). */
static JsonNode *
redact_value (JsonNode   *node,
              const char *secret_name,
              guint      *count)
{
  GType type = json_node_get_value_type (node);

  if (type == G_TYPE_STRING)
    {
      const char *str = json_node_get_string (node);
      guint found = 0;
      g_autofree char *masked = NULL;
      JsonNode *copy;

      if (secret_name != NULL && *str != '\0' && !chp_redact_is_marker (str))
        return marker_node (secret_name, str, count);
      masked = chp_redact_text (str, &found);
      *count += found;
      copy = json_node_new (JSON_NODE_VALUE);
      json_node_set_string (copy, masked);
      return copy;
    }
  if (secret_name != NULL && type == G_TYPE_INT64)
    {
      g_autofree char *digits = g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (node));

      return marker_node (secret_name, digits, count);
    }
  if (secret_name != NULL && type == G_TYPE_DOUBLE)
    {
      char digits[G_ASCII_DTOSTR_BUF_SIZE];

      return marker_node (secret_name, g_ascii_dtostr (digits, sizeof digits,
                                                       json_node_get_double (node)), count);
    }
  /* Booleans say "filled", "credential", "session: true": never a secret. */
  return json_node_copy (node);
}

static JsonNode *redact_node (JsonNode   *node,
                              const char *secret_name,
                              guint       depth,
                              guint      *count);

typedef struct
{
  JsonObject *into;
  const char *pair_name;  /* the secret "name" of a {name, value} pair, or NULL */
  guint depth;
  guint *count;
} ObjectWalk;

/* A short name of letters (ref, role, frameUrl) holds nothing the redactor finds: most of a
 * large snapshot's members, passed over without a scan (redact-json.js does the same). */
static gboolean
plain_name (const char *name)
{
  gsize n = 0;

  for (; name[n] != '\0'; n++)
    if (n >= 15 || !(g_ascii_isalpha (name[n]) || name[n] == '_' || name[n] == '-'))
      return FALSE;
  return TRUE;
}

static void
redact_member_cb (JsonObject  *object,
                  const char  *member,
                  JsonNode    *node,
                  gpointer     user_data)
{
  ObjectWalk *walk = user_data;
  const char *secret_name = NULL;
  guint masked = 0;
  g_autofree char *name = plain_name (member) ? NULL : chp_redact_text (member, &masked);

  if (chp_redact_name_is_secret (member, -1))
    secret_name = member;
  else if (walk->pair_name != NULL && g_str_equal (member, "value"))
    secret_name = walk->pair_name;
  /* A member's name passes the text redactor too: a map keyed by tokens or session ids
   * ({"ghp_…": {…}}) hides them as any text does. A masked name already there is numbered
   * (" #2"…), so two hidden keys do not become one. */
  if (masked > 0)
    {
      g_autofree char *base = g_steal_pointer (&name);

      *walk->count += masked;
      name = g_strdup (base);
      for (guint n = 2; json_object_has_member (walk->into, name); n++)
        {
          g_free (name);
          name = g_strdup_printf ("%s #%u", base, n);
        }
    }
  else
    {
      g_free (name);
      name = g_strdup (member);
    }
  json_object_set_member (walk->into, name,
                          redact_node (node, secret_name, walk->depth + 1, walk->count));
}

static JsonNode *
redact_node (JsonNode   *node,
             const char *secret_name,
             guint       depth,
             guint      *count)
{
  JsonNode *copy;

  if (depth > MAX_JSON_DEPTH)
    {
      /* Deeper than anything the frame reader lets in: drop it rather than recurse. */
      (*count)++;
      return json_node_new (JSON_NODE_NULL);
    }

  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_OBJECT:
      {
        JsonObject *object = json_node_get_object (node);
        g_autoptr(JsonObject) into = json_object_new ();
        ObjectWalk walk = { into, NULL, depth, count };
        JsonNode *name = json_object_get_member (object, "name");

        /* A header, cookie or field as {name, value}: the value is as secret as its name says. */
        if (name != NULL && JSON_NODE_HOLDS_VALUE (name) &&
            json_node_get_value_type (name) == G_TYPE_STRING &&
            chp_redact_name_is_secret (json_node_get_string (name), -1))
          walk.pair_name = json_node_get_string (name);
        json_object_foreach_member (object, redact_member_cb, &walk);
        copy = json_node_new (JSON_NODE_OBJECT);
        json_node_set_object (copy, into);
        return copy;
      }

    case JSON_NODE_ARRAY:
      {
        JsonArray *array = json_node_get_array (node);
        g_autoptr(JsonArray) into = json_array_sized_new (json_array_get_length (array));

        /* Scalars in a list under a secret name ("cookies": ["a=b"]) are secrets; objects in
         * it are judged member by member. */
        for (guint i = 0; i < json_array_get_length (array); i++)
          json_array_add_element (into, redact_node (json_array_get_element (array, i),
                                                     secret_name, depth + 1, count));
        copy = json_node_new (JSON_NODE_ARRAY);
        json_node_set_array (copy, into);
        return copy;
      }

    case JSON_NODE_VALUE:
      return redact_value (node, secret_name, count);

    case JSON_NODE_NULL:
    default:
      return json_node_new (JSON_NODE_NULL);
    }
}

/**
 * chp_redact_json:
 * @node: a result as the extension sent it
 * @count_out: (out) (optional): how many secrets were masked
 *
 * Returns: (transfer full): a deep copy of @node with every string passed through
 *   chp_redact_text(), and strings and numbers under secret member names (or in a
 *   `{name, value}` pair with a secret name) replaced by a marker. Booleans, nulls, member
 *   names and the shape of the tree are kept.
 */
JsonNode *
chp_redact_json (JsonNode *node,
                 guint    *count_out)
{
  guint count = 0;
  JsonNode *copy;

  if (count_out != NULL)
    *count_out = 0;
  g_return_val_if_fail (node != NULL, NULL);

  copy = redact_node (node, NULL, 0, &count);
  if (count_out != NULL)
    *count_out = count;
  return copy;
}
