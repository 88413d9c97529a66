/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-site-allowlist.c: the one gate of the site memory (issue 17). A site update says how a
 * site works — endpoints by method, path template and the names and types of their fields,
 * controls by role and label, how to tell the page is ready or asks to sign in, recipes (a
 * batch's steps with {{placeholders}}, its params by name and type) — and never a value. This check reads every field against a fixed table of what may be there, and every
 * string against the shapes of secrets; the first problem refuses the whole update and names
 * the field by its path ("endpoints[2].queryKeys[0]"), never by its text.
 *
 * Refused anywhere (every string, object keys of shapes included):
 *   - what chp_redact_text() would mask (keys, tokens, "name=value" secrets, cards, ids);
 *   - a token of 20+ letters, digits, '_', '-', '+', '=', '~' that mixes letters and digits
 *     (they alternate 3+ times, or upper- and lowercase and 14+ distinct characters): a key;
 *   - three or more '.'-separated segments of 8+ base64url characters: a JWT-like token;
 *   - control characters.
 * Refused in every string but a control's label (origin, paths, frame, keys, names, ready…):
 *   - an email address; a phone number; a run of 6 or more digits (a code or an account), or
 *     6 to 8 digits in groups of 3+ ("482 913"); in ready's texts, 5 digits or more. Paths and
 *     frames are read percent-decoded too (/u/alice%40example.com).
 * A control's label is what a page shows, often the person's own data ("alice@example.com",
 * "Order 1234567"): a label carrying an email, a phone number or 5+ digits does not refuse the
 * update but is never kept (chp_site_allowlist_label_is_personal(), which the store applies).
 * A label shaped like a credential still refuses the whole update: the page showed a secret,
 * and whatever read it must not be trusted with the rest.
 *
 * Paths name array items by index ("controls[3]") and members of objects whose names are data
 * (body keys, shape keys) or unknown by position ("body.keys[#2]", "[#0]"): a field's name may
 * itself be the secret. An unknown member whose name is a plain word of letters is named. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-site-allowlist"

#include "chp-site-allowlist.h"
#include "chp-site-allowlist-private.h"

#include <string.h>

G_DEFINE_QUARK (chp-site-allowlist-error-quark, chp_site_allowlist_error)

typedef struct
{
  GString    *path;
  const char *reason;
  guint       shape_total;
} Check;

static gboolean
in_set (const char * const *set,
        const char         *word)
{
  for (guint i = 0; set[i] != NULL; i++)
    if (g_strcmp0 (set[i], word) == 0)
      return TRUE;
  return FALSE;
}

/* ---- the walk --------------------------------------------------------------------------- */

/* One field of an object, or the item of an array: how to check it, and its bounds. */
typedef struct _Field Field;
typedef gboolean (*FieldCheck) (Check *ck, JsonNode *node, const Field *field);

struct _Field
{
  const char    *name;
  gboolean       required;
  FieldCheck     check;
  guint          max;       /* characters, items or keys */
  TextRules      rules;
  gconstpointer  table;     /* allowed values, the item's Field or an object's Fields */
  gboolean       nullable;
};

static gboolean
fail (Check      *ck,
      const char *reason)
{
  ck->reason = reason;
  return FALSE;
}

static gsize
push_field (Check      *ck,
            const char *name)
{
  gsize mark = ck->path->len;

  if (ck->path->len > 0)
    g_string_append_c (ck->path, '.');
  g_string_append (ck->path, name);
  return mark;
}

/* "[n]" for an array's item, "[#n]" for a member known by its position. */
static gsize
push_index (Check    *ck,
            gboolean  member,
            guint     index)
{
  gsize mark = ck->path->len;

  g_string_append_printf (ck->path, member ? "[#%u]" : "[%u]", index);
  return mark;
}

/* A name worth showing: letters only, so never a token, a code or an address. */
static gboolean
is_plain_word (const char *name)
{
  gsize n = strlen (name);

  if (n == 0 || n > 32)
    return FALSE;
  for (gsize i = 0; i < n; i++)
    if (!g_ascii_isalpha (name[i]))
      return FALSE;
  return TRUE;
}

static gboolean
is_string (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         json_node_get_value_type (node) == G_TYPE_STRING;
}

static gboolean
is_int (JsonNode *node)
{
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         json_node_get_value_type (node) == G_TYPE_INT64;
}

static gboolean
check_text (Check    *ck,
            JsonNode *node,
            guint     max,
            TextRules rules)
{
  const char *s;

  if (!is_string (node))
    return fail (ck, "is not a string");
  s = json_node_get_string (node);
  if (*s == '\0')
    return fail (ck, "is empty");
  if (!g_utf8_validate (s, -1, NULL))
    return fail (ck, "is not valid UTF-8");
  if (g_utf8_strlen (s, -1) > (glong) max)
    return fail (ck, "is too long");

  return (ck->reason = chp_site_allowlist_text_problem (s, rules)) == NULL;
}

static gboolean
check_text_field (Check *ck, JsonNode *node, const Field *field)
{
  if (field->nullable && node != NULL && JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  return check_text (ck, node, field->max, field->rules);
}

static gboolean
check_enum_field (Check *ck, JsonNode *node, const Field *field)
{
  if (!is_string (node))
    return fail (ck, "is not a string");
  if (!in_set (field->table, json_node_get_string (node)))
    return fail (ck, "is not one of the allowed values");
  return TRUE;
}

static gboolean
check_bool_field (Check *ck, JsonNode *node, const Field *field)
{
  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_BOOLEAN)
    return fail (ck, "is not a boolean");
  return TRUE;
}

static gboolean
check_status_field (Check *ck, JsonNode *node, const Field *field)
{
  if (!is_int (node))
    return fail (ck, "is not an integer");
  if (json_node_get_int (node) < 0 || json_node_get_int (node) > 999)
    return fail (ck, "is out of range");
  return TRUE;
}

/* A path as the browser shows it hides its data behind escapes (/u/alice%40example.com): it is
 * read decoded too, until no escape is left; one that does not decode is refused. */
static gboolean
check_decoded (Check *ck, const char *s)
{
  g_autofree char *decoded = g_strdup (s);

  for (guint round = 0; strchr (decoded, '%') != NULL && round < 4; round++)
    {
      char *next = g_uri_unescape_string (decoded, NULL);

      if (next == NULL)
        return fail (ck, "holds an escape that does not decode");
      g_free (decoded);
      decoded = next;
      if ((ck->reason = chp_site_allowlist_text_problem (decoded, TEXT_PLAIN)) != NULL)
        return FALSE;
    }
  return TRUE;
}

/* "/" and then no query, no fragment, no blank: a query's values never get in. */
static gboolean
check_path_field (Check *ck, JsonNode *node, const Field *field)
{
  const char *s;

  if (!check_text (ck, node, field->max, TEXT_PLAIN) ||
      !check_decoded (ck, json_node_get_string (node)))
    return FALSE;
  s = json_node_get_string (node);
  if (s[0] != '/')
    return fail (ck, "does not start with /");
  if (strpbrk (s, "?# \t") != NULL)
    return fail (ck, "holds a query, a fragment or a blank");
  return TRUE;
}

/* Only the characters @allowed names (a-z as "a", A-Z as "A", 0-9 as "0", else themselves). */
static gboolean
check_chars_field (Check *ck, JsonNode *node, const Field *field)
{
  const char *allowed = field->table;

  if (!check_text (ck, node, field->max, TEXT_PLAIN))
    return FALSE;
  for (const char *s = json_node_get_string (node); *s != '\0'; s++)
    if (!((g_ascii_islower (*s) && strchr (allowed, 'a')) ||
          (g_ascii_isupper (*s) && strchr (allowed, 'A')) ||
          (g_ascii_isdigit (*s) && strchr (allowed, '0')) ||
          (!g_ascii_isalnum (*s) && strchr (allowed, *s))))
      return fail (ck, "holds a character that is not allowed");
  return TRUE;
}

static gboolean
is_host_char (char c)
{
  return g_ascii_islower (c) || g_ascii_isdigit (c) || c == '-' || c == '.';
}

/* scheme "://" host [":" port], lowercase, nothing else: what URL.origin gives. */
static gboolean
is_origin (const char *s,
           gsize       n)
{
  const char *end = s + n;
  const char *p;
  const char *host;

  if (n > 8 && strncmp (s, "https://", 8) == 0)
    p = s + 8;
  else if (n > 7 && strncmp (s, "http://", 7) == 0)
    p = s + 7;
  else
    return FALSE;

  host = p;
  if (*p == '[')
    {
      for (p++; p < end && (g_ascii_isdigit (*p) || strchr ("abcdef:.", *p)); p++)
        ;
      if (p >= end || *p++ != ']')
        return FALSE;
    }
  else
    {
      while (p < end && is_host_char (*p))
        p++;
      if (p == host || *host == '.' || *host == '-' || p[-1] == '.' || p[-1] == '-')
        return FALSE;
    }

  if (p < end && *p == ':')
    {
      const char *port = ++p;
      guint value = 0;

      for (; p < end && g_ascii_isdigit (*p) && p - port < 5; p++)
        value = value * 10 + (guint) (*p - '0');
      if (p == port || value == 0 || value > 65535 || *port == '0')
        return FALSE;
    }

  return p == end;
}

static gboolean
check_origin_field (Check *ck, JsonNode *node, const Field *field)
{
  const char *s;

  if (!check_text (ck, node, field->max, TEXT_PLAIN))
    return FALSE;
  s = json_node_get_string (node);
  return is_origin (s, strlen (s)) || fail (ck, "is not an http(s) origin");
}

/* An origin and a path: no query, fragment, blank or user. */
static gboolean
check_frame_field (Check *ck, JsonNode *node, const Field *field)
{
  const char *s, *path;

  if (!check_text (ck, node, field->max, TEXT_PLAIN) ||
      !check_decoded (ck, json_node_get_string (node)))
    return FALSE;
  s = json_node_get_string (node);
  if (strpbrk (s, "?# \t@") != NULL)
    return fail (ck, "holds a query, a fragment, a blank or a user");
  path = strstr (s, "://");
  path = path != NULL ? strchr (path + 3, '/') : NULL;
  if (!is_origin (s, path != NULL ? (gsize) (path - s) : strlen (s)))
    return fail (ck, "is not an origin and a path");
  return TRUE;
}

/* Each member of @node, an object, by the table @fields: unknown members and missing required
 * ones refuse. Members are checked in the object's order, then the missing ones in the
 * table's, so both suites name the same field first. */
static gboolean
check_object_field (Check *ck, JsonNode *node, const Field *field)
{
  const Field *fields = field->table;
  JsonObject *object;
  JsonObjectIter iter;
  const char *name;
  JsonNode *member;
  guint position = 0;

  if (field->nullable && node != NULL && JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return fail (ck, "is not an object");
  object = json_node_get_object (node);

  json_object_iter_init_ordered (&iter, object);
  while (json_object_iter_next_ordered (&iter, &name, &member))
    {
      const Field *known = NULL;
      gsize mark;

      for (guint i = 0; fields[i].name != NULL && known == NULL; i++)
        if (g_str_equal (fields[i].name, name))
          known = &fields[i];

      mark = known != NULL || is_plain_word (name) ? push_field (ck, name)
                                                 : push_index (ck, TRUE, position);
      if (known == NULL)
        return fail (ck, "is not an allowed field");
      if (!known->check (ck, member, known))
        return FALSE;
      g_string_truncate (ck->path, mark);
      position++;
    }

  for (guint i = 0; fields[i].name != NULL; i++)
    if (fields[i].required && !json_object_has_member (object, fields[i].name))
      {
        push_field (ck, fields[i].name);
        return fail (ck, "is missing");
      }

  return TRUE;
}

/* Each item of @node, an array of at most field->max, by the item's Field. */
static gboolean
check_array_field (Check *ck, JsonNode *node, const Field *field)
{
  const Field *item = field->table;
  JsonArray *array;

  if (node == NULL || !JSON_NODE_HOLDS_ARRAY (node))
    return fail (ck, "is not an array");
  array = json_node_get_array (node);
  if (json_array_get_length (array) > field->max)
    return fail (ck, "has too many items");

  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      gsize mark = push_index (ck, FALSE, i);

      if (!item->check (ck, json_array_get_element (array, i), item))
        return FALSE;
      g_string_truncate (ck->path, mark);
    }
  return TRUE;
}

static const char * const methods[] = { "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", NULL };
static const char * const body_kinds[] = { "json", "form", "text", "binary", "none", NULL };
static const char * const credential_kinds[] = { "cookie", "bearer", "header", "none", NULL };
static const char * const type_names[] = {
  "string", "number", "integer", "boolean", "null", "object", "array", "file", "unknown", NULL
};

static const Field type_name_field = { NULL, TRUE, check_enum_field, 0, 0, type_names };

/* Members whose names are data (body keys, a shape's keys): by position, name then value; a
 * shape's values are type names, {"array": n} (the sample's item count) or objects one level
 * down, while depth (in @field->max) allows. */
static gboolean
check_named_map_field (Check *ck, JsonNode *node, const Field *field)
{
  gboolean shape = field->table != NULL;
  guint depth = shape ? field->max : 0;
  JsonObjectIter iter;
  const char *name;
  JsonNode *member;
  guint position = 0;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return fail (ck, "is not an object");
  if (depth > CHP_SITE_MAX_SHAPE_DEPTH)
    return fail (ck, "is nested too deep");
  if (json_object_get_size (json_node_get_object (node)) >
      (shape ? CHP_SITE_MAX_SHAPE_KEYS : CHP_SITE_MAX_BODY_KEYS))
    return fail (ck, "has too many keys");
  if (shape && (ck->shape_total += json_object_get_size (json_node_get_object (node))) >
               CHP_SITE_MAX_SHAPE_TOTAL)
    return fail (ck, "has too many keys");

  json_object_iter_init_ordered (&iter, json_node_get_object (node));
  while (json_object_iter_next_ordered (&iter, &name, &member))
    {
      gsize mark = push_index (ck, TRUE, position++);
      Field inner = { NULL, TRUE, check_named_map_field, depth + 1, 0, field->table };
      JsonObject *array_leaf;

      if (*name == '\0' || !g_utf8_validate (name, -1, NULL))
        return fail (ck, "has an empty or invalid name");
      if (g_utf8_strlen (name, -1) > CHP_SITE_MAX_NAME)
        return fail (ck, "has a name too long");
      if ((ck->reason = chp_site_allowlist_text_problem (name, TEXT_PLAIN)) != NULL)
        return FALSE;

      array_leaf = shape && JSON_NODE_HOLDS_OBJECT (member) ? json_node_get_object (member) : NULL;
      if (array_leaf != NULL && json_object_get_size (array_leaf) == 1 &&
          json_object_has_member (array_leaf, "array") &&
          !JSON_NODE_HOLDS_OBJECT (json_object_get_member (array_leaf, "array")))
        {
          JsonNode *count = json_object_get_member (array_leaf, "array");

          push_field (ck, "array");
          if (!is_int (count) || json_node_get_int (count) < 0 ||
              json_node_get_int (count) > 1000000)
            return fail (ck, "is not a count");
        }
      else if (!shape || !JSON_NODE_HOLDS_OBJECT (member))
        {
          if (!check_enum_field (ck, member, &type_name_field))
            return FALSE;
        }
      else if (!check_named_map_field (ck, member, &inner))
        return FALSE;
      g_string_truncate (ck->path, mark);
    }
  return TRUE;
}

static gboolean
check_shape_field (Check *ck, JsonNode *node, const Field *field)
{
  ck->shape_total = 0;
  return check_named_map_field (ck, node, field);
}

/* The header's name comes with kind "header" and only with it. */
static gboolean
check_credential_field (Check *ck, JsonNode *node, const Field *field)
{
  JsonObject *object;
  gboolean header_kind, has_header;

  if (!check_object_field (ck, node, field))
    return FALSE;
  object = json_node_get_object (node);
  header_kind = g_str_equal (json_object_get_string_member (object, "kind"), "header");
  has_header = json_object_has_member (object, "header");
  if (header_kind != has_header)
    {
      push_field (ck, "header");
      return fail (ck, header_kind ? "is missing" : "is only allowed with kind header");
    }
  return TRUE;
}

/* ---- recipes ------------------------------------------------------------------------------
 * A recipe keeps a batch's structure only: step kinds, targets by role and name (under the rules
 * of ready's texts: no email, phone or number of 5+ digits), key names, API entry ids, and its
 * params by name and type. Every value typed into the page or sent in a call is a {{placeholder}}
 * filled at replay; a literal one refuses the whole update. */

static gboolean
is_placeholder (const char *s)
{
  gsize n = strlen (s);

  if (n < 5 || n > 36 || strncmp (s, "{{", 2) != 0 || strcmp (s + n - 2, "}}") != 0 ||
      !(g_ascii_isalpha (s[2]) || s[2] == '_'))
    return FALSE;
  for (gsize i = 3; i < n - 2; i++)
    if (!g_ascii_isalnum (s[i]) && s[i] != '_')
      return FALSE;
  return TRUE;
}

static gboolean
check_placeholder_field (Check *ck, JsonNode *node, const Field *field)
{
  if (!is_string (node))
    return fail (ck, "is not a string");
  if (!is_placeholder (json_node_get_string (node)))
    return fail (ck, "is a typed value, not a {{placeholder}}");
  return TRUE;
}

/* An API step's params: names the entry's template or query knows, each a {{placeholder}}. */
static gboolean
check_placeholder_map_field (Check *ck, JsonNode *node, const Field *field)
{
  JsonObjectIter iter;
  const char *name;
  JsonNode *member;
  guint position = 0;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return fail (ck, "is not an object");
  if (json_object_get_size (json_node_get_object (node)) > CHP_SITE_MAX_QUERY_KEYS)
    return fail (ck, "has too many keys");
  json_object_iter_init_ordered (&iter, json_node_get_object (node));
  while (json_object_iter_next_ordered (&iter, &name, &member))
    {
      gsize mark = push_index (ck, TRUE, position++);

      if (*name == '\0' || g_utf8_strlen (name, -1) > CHP_SITE_MAX_NAME)
        return fail (ck, "has an empty name or one too long");
      if ((ck->reason = chp_site_allowlist_text_problem (name, TEXT_PLAIN)) != NULL)
        return FALSE;
      if (!check_placeholder_field (ck, member, field))
        return FALSE;
      g_string_truncate (ck->path, mark);
    }
  return TRUE;
}

/* An API write's body: members and items down to the shapes' depth; each string a
 * {{placeholder}}; true, false and null are structure, a number is a typed value. */
static gboolean
check_recipe_body (Check    *ck,
                   JsonNode *node,
                   guint     depth)
{
  if (JSON_NODE_HOLDS_NULL (node))
    return TRUE;
  if (JSON_NODE_HOLDS_VALUE (node))
    {
      if (json_node_get_value_type (node) == G_TYPE_BOOLEAN)
        return TRUE;
      if (json_node_get_value_type (node) != G_TYPE_STRING)
        return fail (ck, "is a typed value, not a {{placeholder}}");
      return check_placeholder_field (ck, node, NULL);
    }
  if (depth > CHP_SITE_MAX_SHAPE_DEPTH)
    return fail (ck, "is nested too deep");
  if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      if (json_array_get_length (array) > CHP_SITE_MAX_BODY_KEYS)
        return fail (ck, "has too many items");
      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          gsize mark = push_index (ck, FALSE, i);

          if (!check_recipe_body (ck, json_array_get_element (array, i), depth + 1))
            return FALSE;
          g_string_truncate (ck->path, mark);
        }
      return TRUE;
    }
  {
    JsonObjectIter iter;
    const char *name;
    JsonNode *member;
    guint position = 0;

    if (json_object_get_size (json_node_get_object (node)) > CHP_SITE_MAX_BODY_KEYS)
      return fail (ck, "has too many keys");
    json_object_iter_init_ordered (&iter, json_node_get_object (node));
    while (json_object_iter_next_ordered (&iter, &name, &member))
      {
        gsize mark = push_index (ck, TRUE, position++);

        if (*name == '\0' || g_utf8_strlen (name, -1) > CHP_SITE_MAX_NAME)
          return fail (ck, "has an empty name or one too long");
        if ((ck->reason = chp_site_allowlist_text_problem (name, TEXT_PLAIN)) != NULL)
          return FALSE;
        if (!check_recipe_body (ck, member, depth + 1))
          return FALSE;
        g_string_truncate (ck->path, mark);
      }
  }
  return TRUE;
}

static gboolean
check_recipe_body_field (Check *ck, JsonNode *node, const Field *field)
{
  if (node == NULL)
    return fail (ck, "is missing");
  return check_recipe_body (ck, node, 1);
}

/* "e" and 12 hex digits (chp_site_entry_id()): a hash, so its digits say nothing of anyone, and
 * the number rules are not applied (they would refuse one id in a few). */
static gboolean
check_entry_id_field (Check *ck, JsonNode *node, const Field *field)
{
  const char *s;

  if (!is_string (node))
    return fail (ck, "is not a string");
  s = json_node_get_string (node);
  if (strlen (s) != 13 || s[0] != 'e')
    return fail (ck, "is not an entry id");
  for (guint i = 1; i < 13; i++)
    if (!g_ascii_isdigit (s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
      return fail (ck, "is not an entry id");
  return TRUE;
}

static gboolean
check_timeout_field (Check *ck, JsonNode *node, const Field *field)
{
  if (!is_int (node))
    return fail (ck, "is not an integer");
  if (json_node_get_int (node) < 0 || json_node_get_int (node) > CHP_SITE_MAX_WAIT_MS)
    return fail (ck, "is out of range");
  return TRUE;
}

/* A step is exactly one of act, api, wait. */
static gboolean
check_step_field (Check *ck, JsonNode *node, const Field *field)
{
  if (!check_object_field (ck, node, field))
    return FALSE;
  if (json_object_get_size (json_node_get_object (node)) != 1)
    return fail (ck, "is not exactly one of act, api, wait");
  return TRUE;
}

/* Every {{name}} in @node, into @used. */
static void
collect_placeholders (JsonNode   *node,
                      GHashTable *used)
{
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    {
      const char *s = json_node_get_string (node);

      if (is_placeholder (s))
        g_hash_table_add (used, g_strndup (s + 2, strlen (s) - 4));
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (array); i++)
        collect_placeholders (json_array_get_element (array, i), used);
    }
  else if (JSON_NODE_HOLDS_OBJECT (node))
    {
      g_autoptr(GList) values = json_object_get_values (json_node_get_object (node));

      for (GList *l = values; l != NULL; l = l->next)
        collect_placeholders (l->data, used);
    }
}

/* The recipe's fields, then: at least one step, and each {{name}} its steps use is a param. */
static gboolean
check_recipe_field (Check *ck, JsonNode *node, const Field *field)
{
  g_autoptr(GHashTable) used = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  JsonObject *recipe;
  JsonArray *steps;
  JsonArray *params;
  GHashTableIter iter;
  gpointer name;

  if (!check_object_field (ck, node, field))
    return FALSE;
  recipe = json_node_get_object (node);
  steps = json_object_get_array_member (recipe, "steps");
  if (json_array_get_length (steps) == 0)
    {
      push_field (ck, "steps");
      return fail (ck, "is empty");
    }
  collect_placeholders (json_object_get_member (recipe, "steps"), used);
  params = json_object_has_member (recipe, "params")
           ? json_object_get_array_member (recipe, "params") : NULL;
  for (guint i = 0; params != NULL && i < json_array_get_length (params); i++)
    g_hash_table_remove (used, json_object_get_string_member (
                                 json_array_get_object_element (params, i), "name"));
  g_hash_table_iter_init (&iter, used);
  if (g_hash_table_iter_next (&iter, &name, NULL))
    {
      push_field (ck, "params");
      return fail (ck, "does not declare a {{placeholder}} the steps use");
    }
  return TRUE;
}

#define TEXT(n, req, max, rules)      { n, req, check_text_field, max, rules, NULL }
#define ENUM(n, set)                  { n, TRUE, check_enum_field, 0, 0, set }
#define CHARS(n, req, max, allowed)   { n, req, check_chars_field, max, 0, allowed }
#define OBJECT(n, req, fields, null)  { n, req, check_object_field, 0, 0, fields, null }
#define ARRAY(n, req, max, item)      { n, req, check_array_field, max, 0, item }

static const Field name_item = TEXT (NULL, TRUE, CHP_SITE_MAX_NAME, TEXT_PLAIN);
static const Field signal_item = TEXT (NULL, TRUE, CHP_SITE_MAX_SIGNAL, TEXT_PLAIN);

static const Field body_fields[] = {
  ENUM ("kind", body_kinds),
  { "keys", TRUE, check_named_map_field, 0, 0, NULL },
  TEXT ("operation", FALSE, CHP_SITE_MAX_NAME, TEXT_PLAIN),
  { NULL },
};

static const Field response_fields[] = {
  TEXT ("contentType", TRUE, CHP_SITE_MAX_CONTENT_TYPE, TEXT_PLAIN),
  { "shape", TRUE, check_shape_field, 1, 0, type_names },
  { NULL },
};

static const Field credential_fields[] = {
  ENUM ("kind", credential_kinds),
  CHARS ("header", FALSE, CHP_SITE_MAX_NAME, "aA0-_"),
  { NULL },
};

static const Field endpoint_fields[] = {
  ENUM ("method", methods),
  { "pathTemplate", TRUE, check_path_field, CHP_SITE_MAX_PATH },
  ARRAY ("queryKeys", FALSE, CHP_SITE_MAX_QUERY_KEYS, &name_item),
  OBJECT ("body", FALSE, body_fields, TRUE),
  OBJECT ("response", FALSE, response_fields, TRUE),
  { "credential", TRUE, check_credential_field, 0, 0, credential_fields },
  { "frame", TRUE, check_frame_field, CHP_SITE_MAX_FRAME },
  { "sampleStatus", TRUE, check_status_field },
  { NULL },
};

static const Field control_fields[] = {
  CHARS ("role", TRUE, CHP_SITE_MAX_ROLE, "a-_"),
  TEXT ("label", TRUE, CHP_SITE_MAX_LABEL, TEXT_LABEL),
  { "key", FALSE, check_text_field, CHP_SITE_MAX_LABEL, TEXT_PLAIN, NULL, TRUE },
  { "inList", TRUE, check_bool_field },
  { NULL },
};

static const Field ready_fields[] = {
  TEXT ("heading", FALSE, CHP_SITE_MAX_LABEL, TEXT_READY),
  TEXT ("control", FALSE, CHP_SITE_MAX_LABEL, TEXT_READY),
  { NULL },
};

static const Field signin_fields[] = {
  { "path", TRUE, check_path_field, CHP_SITE_MAX_PATH },
  ARRAY ("signals", TRUE, CHP_SITE_MAX_SIGNALS, &signal_item),
  { NULL },
};

static const char * const step_actions[] = {
  "click", "dblclick", "focus", "scroll", "fill", "hover", "press", "type", NULL
};
static const char * const param_types[] = { "string", NULL };

static const Field target_fields[] = {
  CHARS ("role", TRUE, CHP_SITE_MAX_ROLE, "a-_"),
  TEXT ("name", TRUE, CHP_SITE_MAX_RECIPE_TEXT, TEXT_READY),
  { NULL },
};

static const Field act_fields[] = {
  ENUM ("action", step_actions),
  OBJECT ("target", FALSE, target_fields, FALSE),
  { "value", FALSE, check_placeholder_field },
  { "text", FALSE, check_placeholder_field },
  CHARS ("key", FALSE, CHP_SITE_MAX_ROLE, "aA0+"),
  { NULL },
};

static const Field api_step_fields[] = {
  { "entryId", TRUE, check_entry_id_field },
  { "params", FALSE, check_placeholder_map_field },
  { "body", FALSE, check_recipe_body_field },
  { NULL },
};

static const Field wait_fields[] = {
  TEXT ("text", TRUE, CHP_SITE_MAX_RECIPE_TEXT, TEXT_READY),
  { "timeoutMs", FALSE, check_timeout_field },
  { NULL },
};

static const Field step_fields[] = {
  OBJECT ("act", FALSE, act_fields, FALSE),
  OBJECT ("api", FALSE, api_step_fields, FALSE),
  OBJECT ("wait", FALSE, wait_fields, FALSE),
  { NULL },
};

static const Field param_fields[] = {
  CHARS ("name", TRUE, 32, "aA0_"),
  ENUM ("type", param_types),
  { NULL },
};

static const Field step_item = { NULL, TRUE, check_step_field, 0, 0, step_fields };
static const Field param_item = OBJECT (NULL, TRUE, param_fields, FALSE);

static const Field recipe_fields[] = {
  CHARS ("name", TRUE, 32, "a0-"),
  ARRAY ("params", FALSE, CHP_SITE_MAX_RECIPE_PARAMS, &param_item),
  ARRAY ("steps", TRUE, CHP_SITE_MAX_RECIPE_STEPS, &step_item),
  { NULL },
};

static const Field recipe_item = { NULL, TRUE, check_recipe_field, 0, 0, recipe_fields };
static const Field endpoint_item = OBJECT (NULL, TRUE, endpoint_fields, FALSE);
static const Field control_item = OBJECT (NULL, TRUE, control_fields, FALSE);

/* Only the origin is required: an update may teach endpoints, controls or signals alone. */
static const Field update_fields[] = {
  { "origin", TRUE, check_origin_field, CHP_SITE_MAX_ORIGIN },
  ARRAY ("endpoints", FALSE, CHP_SITE_MAX_UPDATE_ENDPOINTS, &endpoint_item),
  ARRAY ("controls", FALSE, CHP_SITE_MAX_UPDATE_CONTROLS, &control_item),
  OBJECT ("ready", FALSE, ready_fields, TRUE),
  OBJECT ("signin", FALSE, signin_fields, TRUE),
  ARRAY ("recipes", FALSE, CHP_SITE_MAX_UPDATE_RECIPES, &recipe_item),
  { NULL },
};

static const Field update_root = OBJECT (NULL, TRUE, update_fields, FALSE);

/**
 * chp_site_allowlist_check:
 * @update: a site update (see the header and tests/vectors/site-allowlist.json)
 * @bad_field: (out) (optional) (nullable): on refusal, the refused field's path
 *
 * Returns: %TRUE when the whole update may be kept (its control labels that
 *   chp_site_allowlist_label_is_personal() takes still are not); %FALSE with
 *   CHP_SITE_ALLOWLIST_ERROR_REFUSED, whose message names the field and why, never its text
 */
gboolean
chp_site_allowlist_check (JsonObject  *update,
                          char       **bad_field,
                          GError     **error)
{
  g_autoptr(JsonNode) root = json_node_new (JSON_NODE_OBJECT);
  Check ck = { 0 };
  gboolean ok;

  g_return_val_if_fail (update != NULL, FALSE);

  if (bad_field != NULL)
    *bad_field = NULL;

  json_node_set_object (root, update);
  ck.path = g_string_new (NULL);
  ok = check_object_field (&ck, root, &update_root);

  if (!ok)
    {
      g_set_error (error, CHP_SITE_ALLOWLIST_ERROR, CHP_SITE_ALLOWLIST_ERROR_REFUSED,
                   "The site update was refused: %s %s",
                   ck.path->len > 0 ? ck.path->str : "the update", ck.reason);
      if (bad_field != NULL)
        *bad_field = g_strdup (ck.path->str);
    }
  g_string_free (ck.path, TRUE);

  return ok;
}
