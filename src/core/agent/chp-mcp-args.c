/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-args.c: an agent's arguments, checked before anything happens: against the tool's input
 * schema (what it states, nothing less), then what a schema cannot say. A failure is an
 * invalid_params error of the call, naming the argument. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include <stdarg.h>
#include <string.h>

/* Whether @s matches @pattern as a JSON Schema (ECMAScript) pattern does: `$` is the end of the
 * string, where PCRE's default lets a newline end it too ("1:e7\n" would pass "^…$"). */
static gboolean
matches (const char *pattern,
         const char *s)
{
  return g_regex_match_simple (pattern, s, G_REGEX_DOLLAR_ENDONLY, 0);
}

static gboolean
invalid (GError    **error,
         const char *format,
         ...) G_GNUC_PRINTF (2, 3);

static gboolean
invalid (GError    **error,
         const char *format,
         ...)
{
  g_autofree char *message = NULL;
  va_list args;

  va_start (args, format);
  message = g_strdup_vprintf (format, args);
  va_end (args);

  g_set_error_literal (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS, message);
  return FALSE;
}

gboolean
chp_tool_node_is_integer (JsonNode *node,
                          gint64   *out)
{
  GType type;

  if (!JSON_NODE_HOLDS_VALUE (node))
    return FALSE;
  type = json_node_get_value_type (node);
  if (type == G_TYPE_INT64)
    {
      *out = json_node_get_int (node);
      return TRUE;
    }
  /* JSON has numbers, not integers: 2.0 is the integer 2 (as JSON Schema says). */
  if (type == G_TYPE_DOUBLE)
    {
      double d = json_node_get_double (node);

      if (d == (double) (gint64) d && d > -9007199254740992.0 && d < 9007199254740992.0)
        {
          *out = (gint64) d;
          return TRUE;
        }
    }
  return FALSE;
}

/* Checks one argument against its property schema: what the schema states, nothing less. */
static gboolean check_members (const char  *where,
                               JsonObject  *schema,
                               JsonObject  *args,
                               GError     **error);
static gboolean check_value   (const char  *name,
                               JsonObject  *schema,
                               JsonNode    *value,
                               GError     **error);

/* An object whose names are the agent's (browser_api's params and body): at most maxProperties
 * of them, each checked against additionalProperties when that is a schema; true lets any JSON
 * through, whose size the tool bounds. */
static gboolean
check_open_object (const char  *name,
                   JsonObject  *schema,
                   JsonObject  *object,
                   GError     **error)
{
  JsonNode *extra = json_object_get_member (schema, "additionalProperties");
  g_autoptr(GList) names = json_object_get_members (object);

  if (json_object_has_member (schema, "maxProperties") &&
      g_list_length (names) > (guint) json_object_get_int_member (schema, "maxProperties"))
    return invalid (error, "%s must have at most %" G_GINT64_FORMAT " members", name,
                    json_object_get_int_member (schema, "maxProperties"));
  if (extra == NULL || !JSON_NODE_HOLDS_OBJECT (extra))
    return TRUE;
  for (GList *l = names; l != NULL; l = l->next)
    {
      g_autofree char *shown = chp_mcp_format_line (l->data, 40);
      g_autofree char *member = g_strdup_printf ("%s.%s", name, shown);

      if (!check_value (member, json_node_get_object (extra),
                        json_object_get_member (object, l->data), error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
check_value (const char  *name,
             JsonObject  *schema,
             JsonNode    *value,
             GError     **error)
{
  const char *type = chp_mcp_json_string (schema, "type", NULL);

  if (g_strcmp0 (type, "string") == 0)
    {
      const char *s;
      glong length;
      JsonArray *values;

      if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_STRING)
        return invalid (error, "%s must be a string", name);
      s = json_node_get_string (value);
      length = g_utf8_strlen (s, -1);
      if (json_object_has_member (schema, "minLength") &&
          length < json_object_get_int_member (schema, "minLength"))
        return invalid (error, "%s must have at least %" G_GINT64_FORMAT " character(s)", name,
                        json_object_get_int_member (schema, "minLength"));
      if (json_object_has_member (schema, "maxLength") &&
          length > json_object_get_int_member (schema, "maxLength"))
        return invalid (error, "%s must have at most %" G_GINT64_FORMAT " characters", name,
                        json_object_get_int_member (schema, "maxLength"));
      if (json_object_has_member (schema, "pattern") &&
          !matches (json_object_get_string_member (schema, "pattern"), s))
        return invalid (error, "%s does not have the right form (%s)", name,
                        json_object_get_string_member (schema, "pattern"));
      if ((values = chp_json_get_array (schema, "enum")) != NULL)
        {
          g_autoptr(GString) allowed = g_string_new (NULL);

          for (guint i = 0; i < json_array_get_length (values); i++)
            {
              if (g_strcmp0 (json_array_get_string_element (values, i), s) == 0)
                return TRUE;
              g_string_append_printf (allowed, "%s%s", i > 0 ? ", " : "",
                                      json_array_get_string_element (values, i));
            }
          return invalid (error, "%s must be one of %s", name, allowed->str);
        }
      return TRUE;
    }

  if (g_strcmp0 (type, "integer") == 0)
    {
      gint64 n;

      if (!chp_tool_node_is_integer (value, &n))
        return invalid (error, "%s must be an integer", name);
      if (json_object_has_member (schema, "minimum") &&
          n < json_object_get_int_member (schema, "minimum"))
        return invalid (error, "%s must be at least %" G_GINT64_FORMAT, name,
                        json_object_get_int_member (schema, "minimum"));
      return TRUE;
    }

  if (g_strcmp0 (type, "boolean") == 0)
    {
      if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_BOOLEAN)
        return invalid (error, "%s must be true or false", name);
      return TRUE;
    }

  if (g_strcmp0 (type, "array") == 0)
    {
      JsonArray *array;
      guint length;

      if (!JSON_NODE_HOLDS_ARRAY (value))
        return invalid (error, "%s must be a list", name);
      array = json_node_get_array (value);
      length = json_array_get_length (array);
      if (json_object_has_member (schema, "minItems") &&
          length < json_object_get_int_member (schema, "minItems"))
        return invalid (error, "%s must have at least %" G_GINT64_FORMAT " item(s)", name,
                        json_object_get_int_member (schema, "minItems"));
      if (json_object_has_member (schema, "maxItems") &&
          length > json_object_get_int_member (schema, "maxItems"))
        return invalid (error, "%s must have at most %" G_GINT64_FORMAT " items", name,
                        json_object_get_int_member (schema, "maxItems"));
      for (guint i = 0; i < length; i++)
        {
          g_autofree char *item = g_strdup_printf ("%s[%u]", name, i);

          if (!check_value (item, json_object_get_object_member (schema, "items"),
                            json_array_get_element (array, i), error))
            return FALSE;
        }
      return TRUE;
    }

  if (g_strcmp0 (type, "object") == 0)
    {
      if (!JSON_NODE_HOLDS_OBJECT (value))
        return invalid (error, "%s must be an object", name);
      if (!json_object_has_member (schema, "properties"))
        return check_open_object (name, schema, json_node_get_object (value), error);
      return check_members (name, schema, json_node_get_object (value), error);
    }

  g_assert_not_reached ();
  return FALSE;
}

/* @where: the tool, or the argument whose members these are */
static gboolean
check_members (const char  *where,
               JsonObject  *schema,
               JsonObject  *args,
               GError     **error)
{
  JsonObject *properties = json_object_get_object_member (schema, "properties");
  JsonArray *required = chp_json_get_array (schema, "required");
  g_autoptr(GList) names = json_object_get_members (args);

  for (GList *l = names; l != NULL; l = l->next)
    {
      JsonObject *property;

      if (!json_object_has_member (properties, l->data))
        {
          g_autofree char *shown = chp_mcp_format_line (l->data, 40);

          return invalid (error, "%s takes no argument \"%s\"", where, shown);
        }
      property = json_object_get_object_member (properties, l->data);
      if (!check_value (l->data, property, json_object_get_member (args, l->data), error))
        return FALSE;
    }

  for (guint i = 0; required != NULL && i < json_array_get_length (required); i++)
    if (!json_object_has_member (args, json_array_get_string_element (required, i)))
      return invalid (error, "%s is required", json_array_get_string_element (required, i));

  return TRUE;
}

gboolean
chp_tool_check_arguments (const ToolSpec  *spec,
                          JsonObject      *schema,
                          JsonObject      *args,
                          GError         **error)
{
  return check_members (spec->name, schema, args, error);
}

/* Whether every string in @node is exactly one {{placeholder}}: what a recipe may keep of a
 * body, so that no value an agent typed outlives the call. */
static gboolean
only_placeholders (JsonNode *node)
{
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    return matches (CHP_PLACEHOLDER_RE, json_node_get_string (node));
  if (JSON_NODE_HOLDS_OBJECT (node))
    {
      g_autoptr(GList) values = json_object_get_values (json_node_get_object (node));

      for (GList *l = values; l != NULL; l = l->next)
        if (!only_placeholders (l->data))
          return FALSE;
    }
  else if (JSON_NODE_HOLDS_ARRAY (node))
    {
      JsonArray *array = json_node_get_array (node);

      for (guint i = 0; i < json_array_get_length (array); i++)
        if (!only_placeholders (json_array_get_element (array, i)))
          return FALSE;
    }
  return TRUE;
}

/* @member of @o: absent (unless @required), or a string of @min to @max characters. */
static gboolean
batch_string (JsonObject  *o,
              const char  *member,
              glong        min,
              glong        max,
              gboolean     required,
              guint        n,
              GError     **error)
{
  const char *s = chp_mcp_json_string (o, member, NULL);
  glong length;

  if (s == NULL)
    return !required || invalid (error, "step %u: %s is required", n, member);
  length = g_utf8_strlen (s, -1);
  if (length < min || length > max)
    return invalid (error, "step %u: %s must have %ld to %ld characters", n, member, min, max);
  return TRUE;
}

/* Params an agent names: at most 32, each a string of at most 1,024 characters. */
static gboolean
batch_params (JsonObject  *params,
              const char  *where,
              GError     **error)
{
  g_autoptr(GList) values = params != NULL ? json_object_get_values (params) : NULL;

  if (g_list_length (values) > 32)
    return invalid (error, "%s must have at most 32 members", where);
  for (GList *l = values; l != NULL; l = l->next)
    if (!JSON_NODE_HOLDS_VALUE (l->data) || json_node_get_value_type (l->data) != G_TYPE_STRING ||
        g_utf8_strlen (json_node_get_string (l->data), -1) > 1024)
      return invalid (error, "each member of %s must be a string of at most 1024 characters",
                      where);
  return TRUE;
}

static JsonObject *
object_member (JsonObject *o,
               const char *member)
{
  JsonNode *node = json_object_get_member (o, member);

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

static gboolean
check_batch_act (JsonObject  *act,
                 guint        n,
                 gboolean     saving,
                 GError     **error)
{
  static const struct
  {
    const char *action;
    const char *argument;
    glong       min, max;
  } own[] = { { "fill", "value", 0, 65536 }, { "press", "key", 1, 64 }, { "type", "text", 1, 2000 } };
  const char *action = chp_mcp_json_string (act, "action", NULL);
  const char *ref = chp_mcp_json_string (act, "ref", NULL);
  JsonObject *target = object_member (act, "target");

  if (action == NULL)
    return invalid (error, "step %u: action is required", n);
  for (guint i = 0; i < G_N_ELEMENTS (own); i++)
    {
      gboolean mine = g_str_equal (action, own[i].action);
      const char *value = chp_mcp_json_string (act, own[i].argument, NULL);

      if (!mine && json_object_has_member (act, own[i].argument))
        return invalid (error, "step %u: %s is for %s only", n, own[i].argument, own[i].action);
      if (mine && !batch_string (act, own[i].argument, own[i].min, own[i].max, TRUE, n, error))
        return FALSE;
      /* A key press is no typed value: its key is kept as it is. */
      if (mine && saving && !g_str_equal (action, "press") &&
          !matches (CHP_PLACEHOLDER_RE, value))
        return invalid (error, "step %u: a recipe keeps no typed value: %s must be a "
                        "{{placeholder}} filled from params", n, own[i].argument);
    }
  if (g_str_equal (action, "press") &&
      !matches (CHP_TOOL_KEY_PATTERN, json_object_get_string_member (act, "key")))
    return invalid (error, "step %u: key must be a key such as Enter, Tab or Control+s", n);
  if (ref != NULL && target != NULL)
    return invalid (error, "step %u: give ref or target, not both", n);
  if (ref != NULL && !matches (CHP_TOOL_REF_PATTERN, ref))
    return invalid (error, "step %u: ref must be a ref from browser_snapshot, e.g. 3:e12", n);
  if (target != NULL && (!batch_string (target, "role", 1, 64, TRUE, n, error) ||
                         !batch_string (target, "name", 1, 200, TRUE, n, error)))
    return FALSE;
  if (ref == NULL && target == NULL && !g_str_equal (action, "press") &&
      !g_str_equal (action, "type"))
    return invalid (error, "step %u: %s needs a target {role, name} or a ref", n, action);
  if (saving && ref != NULL)
    return invalid (error, "step %u: a recipe cannot keep a ref, which lasts only as long as its "
                    "snapshot: name the element with target {role, name}", n);
  return TRUE;
}

/* One step of browser_batch (@n counts from 1, as its result does). @saving: it is to be kept as
 * a recipe, which holds no ref (refs die with their snapshot) and no typed value. */
static gboolean
check_batch_step (JsonObject  *step,
                  guint        n,
                  gboolean     saving,
                  GError     **error)
{
  JsonObject *part;

  if (json_object_get_size (step) != 1)
    return invalid (error, "step %u must have exactly one of act, api, wait", n);
  if ((part = object_member (step, "wait")) != NULL)
    {
      gint64 timeout = chp_tool_int_argument (part, "timeoutMs", 0);

      if (!batch_string (part, "text", 1, 200, TRUE, n, error))
        return FALSE;
      if (timeout < 0 || timeout > CHP_BATCH_WAIT_MAX_MS)
        return invalid (error, "step %u: timeoutMs is at most %d", n, CHP_BATCH_WAIT_MAX_MS);
      return TRUE;
    }
  if ((part = object_member (step, "api")) != NULL)
    {
      JsonNode *body = json_object_get_member (part, "body");
      g_autofree char *where = g_strdup_printf ("step %u: params", n);
      g_autofree char *json = body != NULL ? json_to_string (body, FALSE) : NULL;

      if (!batch_string (part, "entryId", 13, 13, TRUE, n, error) ||
          !batch_params (object_member (part, "params"), where, error))
        return FALSE;
      if (json != NULL && strlen (json) > 65536)
        return invalid (error, "step %u: body is larger than 64 KiB", n);
      if (saving && body != NULL && !only_placeholders (body))
        return invalid (error, "step %u: a recipe keeps no typed value: each string of body must "
                        "be a {{placeholder}} filled from params", n);
      return TRUE;
    }
  return check_batch_act (object_member (step, "act"), n, saving, error);
}

static gboolean
check_batch (JsonObject  *args,
             GError     **error)
{
  JsonArray *steps = chp_json_get_array (args, "steps");
  const char *recipe = chp_mcp_json_string (args, "recipe", NULL);
  gboolean saving = json_object_has_member (args, "saveAs");

  if ((steps != NULL) == (recipe != NULL))
    return invalid (error, "give steps, or the name of a recipe you saved; not both");
  if (recipe != NULL && !matches (CHP_RECIPE_PATTERN, recipe))
    return invalid (error, "recipe is the name a batch was saved as");
  if (saving && steps == NULL)
    return invalid (error, "saveAs goes with steps");
  if (steps != NULL && (json_array_get_length (steps) == 0 ||
                        json_array_get_length (steps) > CHP_BATCH_MAX_STEPS))
    return invalid (error, "steps must have 1 to %d steps", CHP_BATCH_MAX_STEPS);
  if (!batch_params (object_member (args, "params"), "params", error))
    return FALSE;
  for (guint i = 0; steps != NULL && i < json_array_get_length (steps); i++)
    if (!check_batch_step (json_array_get_object_element (steps, i), i + 1, saving, error))
      return FALSE;
  return TRUE;
}

/* What the schema cannot say: checks that need two arguments, or a parser. */
gboolean
chp_tool_check_semantics (const ToolSpec  *spec,
                          JsonObject      *args,
                          GError         **error)
{
  if (g_str_equal (spec->name, "browser_act"))
    {
      /* Each action's own argument: required with it, refused with any other. */
      static const struct
      {
        const char *action;
        const char *argument;
      } own[] = { { "fill", "value" }, { "press", "key" }, { "type", "text" }, { "drag", "to" } };
      const char *action = json_object_get_string_member (args, "action");

      for (guint i = 0; i < G_N_ELEMENTS (own); i++)
        {
          gboolean mine = g_str_equal (action, own[i].action);

          if (mine && !json_object_has_member (args, own[i].argument))
            return invalid (error, "%s is required when action is %s", own[i].argument,
                            own[i].action);
          if (!mine && json_object_has_member (args, own[i].argument))
            return invalid (error, "%s is for %s only", own[i].argument, own[i].action);
        }
      if (!json_object_has_member (args, "ref") && !g_str_equal (action, "press") &&
          !g_str_equal (action, "type"))
        return invalid (error, "ref is required when action is %s", action);
      if (json_object_has_member (args, "key") &&
          !matches (CHP_TOOL_KEY_PATTERN, json_object_get_string_member (args, "key")))
        return invalid (error, "key must be a key such as Enter, Tab or Control+s");
      if (json_object_has_member (args, "to") &&
          !matches (CHP_TOOL_REF_PATTERN, json_object_get_string_member (args, "to")))
        return invalid (error, "to must be a ref from browser_snapshot, e.g. 3:e12");
    }
  else if (g_str_equal (spec->name, "browser_navigate"))
    {
      const char *url = json_object_get_string_member (args, "url");
      g_autoptr(GUri) uri = g_uri_parse (url, G_URI_FLAGS_NONE, NULL);

      if (uri == NULL || g_uri_get_host (uri) == NULL || *g_uri_get_host (uri) == '\0' ||
          (g_strcmp0 (g_uri_get_scheme (uri), "http") != 0 &&
           g_strcmp0 (g_uri_get_scheme (uri), "https") != 0))
        return invalid (error, "url must be an absolute http or https URL");
    }
  else if (g_str_equal (spec->name, "browser_batch"))
    return check_batch (args, error);
  else if (g_str_equal (spec->name, "browser_wait"))
    {
      const char *id = json_object_get_string_member (args, "id");

      if (!g_str_has_prefix (id, "plan-") && chp_tool_wait_kind_of (id) == NULL)
        return invalid (error, "id must come from browser_handoff, a held browser_act or "
                        "browser_plan");
    }

  return TRUE;
}

gint64
chp_tool_int_argument (JsonObject *args,
                       const char *name,
                       gint64      fallback)
{
  JsonNode *node = json_object_get_member (args, name);
  gint64 value;

  return node != NULL && chp_tool_node_is_integer (node, &value) ? value : fallback;
}
