/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-api.c: which learned endpoint a hint means, and the URL an entry and params make.
 *
 * Route is deliberately timid: it answers with an entry only when exactly one read matches the
 * hint best and every part of its path has a value. Anything else (nothing matches, two match
 * alike, a part is missing) is a reason to use the page instead, said in words the agent can act
 * on, because a wrong guess at a site's API is a wrong answer that looks right. */
#include "config.h"

#include "chp-mcp-api.h"

#include <string.h>

#include "chp-json-util.h"

G_DEFINE_QUARK (chp-mcp-api-error-quark, chp_mcp_api_error)

/* A value that goes into a path part or a query: a name, an id, a title; never a document. */
#define PARAM_MAX_CHARS 1024

/* Words a hint says that name no endpoint ("get the list of my contacts"). */
static const char * const STOP_WORDS[] = {
  "a", "an", "the", "of", "for", "to", "in", "on", "my", "me", "all", "list", "get", "show",
  "with", "and", "by", "from", "read", "fetch", "find", "api", "json", "v1", "v2", "v3", "html",
  "php", "index", NULL,
};

static const char *
entry_string (JsonObject *entry,
              const char *member)
{
  return chp_json_get_string (entry, member);
}

/* The template's {slots}, in order. */
GStrv
chp_mcp_api_template_slots (const char *path_template)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  for (const char *p = path_template; p != NULL && (p = strchr (p, '{')) != NULL;)
    {
      const char *end = strchr (p, '}');

      if (end == NULL)
        break;
      if (end > p + 1)
        {
          g_autofree char *name = g_strndup (p + 1, end - p - 1);

          g_strv_builder_add (builder, name);
        }
      p = end + 1;
    }
  return g_strv_builder_end (builder);
}

/* "contactsByTag" → "contacts", "by", "tag"; everything lowercase, plural and singular alike. */
static void
add_words (GHashTable *words,
           const char *text)
{
  g_autoptr(GString) word = g_string_new (NULL);

  for (const char *p = text;; p++)
    {
      gboolean boundary = *p == '\0' || !g_ascii_isalnum (*p) ||
                          (g_ascii_isupper (*p) && word->len > 0 &&
                           g_ascii_islower (word->str[word->len - 1]));

      if (boundary && word->len > 0)
        {
          char *w = g_ascii_strdown (word->str, -1);
          gsize n = strlen (w);

          /* tiddlers, tiddler; messages, message; addresses, address. */
          if (n > 4 && g_str_has_suffix (w, "es") && !g_str_has_suffix (w, "ses"))
            w[n - 1] = '\0';
          else if (n > 3 && w[n - 1] == 's' && w[n - 2] != 's')
            w[n - 1] = '\0';
          if (!g_strv_contains (STOP_WORDS, w))
            g_hash_table_add (words, w);
          else
            g_free (w);
          g_string_truncate (word, 0);
        }
      if (*p == '\0')
        break;
      if (g_ascii_isalnum (*p))
        g_string_append_c (word, *p);
    }
}

gboolean
chp_mcp_api_is_read (JsonObject *entry)
{
  const char *method = entry_string (entry, "method");

  return g_strcmp0 (method, "GET") == 0 || g_strcmp0 (method, "HEAD") == 0;
}

/* The words an entry answers to: its path's literal parts, its slots' names, its query keys. */
static GHashTable *
entry_words (JsonObject *entry)
{
  GHashTable *words = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  JsonArray *keys = chp_json_get_array (entry, "queryKeys");

  add_words (words, entry_string (entry, "pathTemplate") != NULL
                    ? entry_string (entry, "pathTemplate") : "");
  for (guint i = 0; keys != NULL && i < json_array_get_length (keys); i++)
    if (JSON_NODE_HOLDS_VALUE (json_array_get_element (keys, i)))
      add_words (words, json_array_get_string_element (keys, i));
  return words;
}

static gboolean
param_given (JsonObject *params,
             const char *name)
{
  return params != NULL && chp_json_get_string (params, name) != NULL;
}

/* Whether @value holds a "." or ".." step between its slashes or backslashes (or is one). */
static gboolean
has_dot_step (const char *value)
{
  g_auto(GStrv) steps = g_regex_split_simple ("[/\\\\]", value, 0, 0);

  for (guint i = 0; steps[i] != NULL; i++)
    if (g_str_equal (steps[i], ".") || g_str_equal (steps[i], ".."))
      return TRUE;
  return FALSE;
}

char *
chp_mcp_api_build_url (JsonObject  *entry,
                       JsonObject  *params,
                       GError     **error)
{
  const char *origin = entry_string (entry, "origin");
  const char *template = entry_string (entry, "pathTemplate");
  JsonArray *keys = chp_json_get_array (entry, "queryKeys");
  g_auto(GStrv) slots = NULL;
  g_autoptr(GString) url = NULL;
  g_autoptr(GList) names = NULL;
  gboolean first = TRUE;

  g_return_val_if_fail (origin != NULL && template != NULL, NULL);

  slots = chp_mcp_api_template_slots (template);
  url = g_string_new (origin);
  for (const char *p = template; *p != '\0';)
    {
      const char *open = strchr (p, '{');
      const char *close = open != NULL ? strchr (open, '}') : NULL;
      g_autofree char *name = NULL;
      const char *value;
      g_autofree char *escaped = NULL;

      if (open == NULL || close == NULL)
        {
          g_string_append (url, p);
          break;
        }
      g_string_append_len (url, p, open - p);
      name = g_strndup (open + 1, close - open - 1);
      value = params != NULL ? chp_json_get_string (params, name) : NULL;
      if (value == NULL || *value == '\0')
        {
          g_set_error (error, CHP_MCP_API_ERROR, CHP_MCP_API_ERROR_MISSING_PARAM,
                       "%s %s needs %s: pass params {\"%s\": …}", entry_string (entry, "method"),
                       template, name, name);
          return NULL;
        }
      if (g_utf8_strlen (value, -1) > PARAM_MAX_CHARS)
        {
          g_set_error (error, CHP_MCP_API_ERROR, CHP_MCP_API_ERROR_BAD_VALUE,
                       "params.%s is longer than %d characters", name, PARAM_MAX_CHARS);
          return NULL;
        }
      /* A value is one part of the path, escaped whole (a wiki's "$:/SiteTitle" keeps its slash
       * as %2F, as the page sends it). Never a step up or none, though, anywhere in it: "." or
       * "..", which escaping leaves as they are and a URL reads as a step (/notes/{id} with ".."
       * is /), nor "../../account" between slashes or backslashes, which a proxy that decodes
       * %2F (nginx with a URI in proxy_pass) or a server that reads %5C as a slash (IIS) would
       * take as steps out of the template. */
      if (has_dot_step (value))
        {
          g_set_error (error, CHP_MCP_API_ERROR, CHP_MCP_API_ERROR_BAD_VALUE,
                       "params.%s cannot be \"%s\": a value is one part of the path, with no "
                       "\".\" or \"..\" step in it", name, value);
          return NULL;
        }
      escaped = g_uri_escape_string (value, NULL, TRUE);
      g_string_append (url, escaped);
      p = close + 1;
    }

  names = params != NULL ? json_object_get_members (params) : NULL;
  names = g_list_sort (names, (GCompareFunc) g_strcmp0);
  for (GList *l = names; l != NULL; l = l->next)
    {
      const char *name = l->data;
      const char *value = chp_json_get_string (params, name);
      gboolean known = FALSE;
      g_autofree char *k = NULL;
      g_autofree char *v = NULL;

      if (g_strv_contains ((const char * const *) slots, name))
        continue;
      for (guint i = 0; keys != NULL && i < json_array_get_length (keys); i++)
        if (g_strcmp0 (json_array_get_string_element (keys, i), name) == 0)
          known = TRUE;
      if (!known)
        {
          g_autoptr(GString) takes = g_string_new (NULL);

          for (guint i = 0; slots[i] != NULL; i++)
            g_string_append_printf (takes, "%s%s", takes->len > 0 ? ", " : "", slots[i]);
          for (guint i = 0; keys != NULL && i < json_array_get_length (keys); i++)
            g_string_append_printf (takes, "%s%s", takes->len > 0 ? ", " : "",
                                    json_array_get_string_element (keys, i));
          g_set_error (error, CHP_MCP_API_ERROR, CHP_MCP_API_ERROR_UNKNOWN_PARAM,
                       "%s %s takes no param \"%s\"%s%s", entry_string (entry, "method"), template,
                       name, takes->len > 0 ? "; it takes: " : "", takes->str);
          return NULL;
        }
      if (value == NULL || g_utf8_strlen (value, -1) > PARAM_MAX_CHARS)
        {
          g_set_error (error, CHP_MCP_API_ERROR, CHP_MCP_API_ERROR_BAD_VALUE,
                       "params.%s must be a string of at most %d characters", name,
                       PARAM_MAX_CHARS);
          return NULL;
        }
      k = g_uri_escape_string (name, NULL, TRUE);
      v = g_uri_escape_string (value, NULL, TRUE);
      g_string_append_printf (url, "%c%s=%s", first ? '?' : '&', k, v);
      first = FALSE;
    }
  return g_string_free (g_steal_pointer (&url), FALSE);
}

/* Whether @entry's path template goes on from @parent's (/notes/{id}/delete from /notes/{id}). */
static gboolean
extends (JsonObject *entry,
         JsonObject *parent)
{
  const char *path = entry_string (entry, "pathTemplate");
  const char *base = entry_string (parent, "pathTemplate");
  gsize n = base != NULL ? strlen (base) : 0;

  return path != NULL && n > 0 && strncmp (path, base, n) == 0 && path[n] == '/' &&
         g_strcmp0 (entry_string (entry, "origin"), entry_string (parent, "origin")) == 0;
}

/*
 * chp_mcp_api_route:
 * @entries: the site's entries
 * @hint: the agent's words for what it wants
 * @params: (nullable): values for the entries' slots
 * @why: (out): when no entry is chosen, why not, in words for the agent
 *
 * Returns: (transfer none) (nullable): the one read that matches @hint best (of two alike where
 * one's path goes on from the other's, the other), with a value for every slot; %NULL when none
 * does, two do alike, or the best one lacks a value.
 */
JsonObject *
chp_mcp_api_route (JsonArray  *entries,
                   const char *hint,
                   JsonObject *params,
                   char      **why)
{
  g_autoptr(GHashTable) wanted = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  JsonObject *best = NULL;
  JsonObject *tied = NULL;
  JsonObject *wanting = NULL;       /* the best match that lacks a value */
  gint best_score = 0;
  gint wanting_score = 0;
  gint quarantined_score = 0;     /* the best match that stopped answering */
  GHashTableIter iter;
  gpointer word;

  *why = NULL;
  add_words (wanted, hint != NULL ? hint : "");
  if (g_hash_table_size (wanted) == 0)
    {
      *why = g_strdup ("the hint has no word that could name an endpoint");
      return NULL;
    }

  for (guint i = 0; entries != NULL && i < json_array_get_length (entries); i++)
    {
      JsonNode *node = json_array_get_element (entries, i);
      JsonObject *entry;
      g_autoptr(GHashTable) words = NULL;
      g_auto(GStrv) slots = NULL;
      gint score = 0;
      gboolean complete = TRUE;

      if (!JSON_NODE_HOLDS_OBJECT (node))
        continue;
      entry = json_node_get_object (node);
      if (!chp_mcp_api_is_read (entry))
        continue;
      words = entry_words (entry);
      g_hash_table_iter_init (&iter, wanted);
      while (g_hash_table_iter_next (&iter, &word, NULL))
        if (g_hash_table_contains (words, word))
          score++;
      if (score == 0)
        continue;
      if (chp_json_get_bool (entry, "quarantined", FALSE))
        {
          quarantined_score = MAX (quarantined_score, score);
          continue;
        }
      slots = chp_mcp_api_template_slots (entry_string (entry, "pathTemplate"));
      /* A slot the agent filled says which entry it means ({tiddler} with a title). */
      for (guint s = 0; slots[s] != NULL; s++)
        {
          if (param_given (params, slots[s]))
            score++;
          else
            complete = FALSE;
        }
      if (!complete)
        {
          if (score > wanting_score)
            {
              wanting = entry;
              wanting_score = score;
            }
          continue;
        }
      if (score > best_score)
        {
          best = entry;
          best_score = score;
          tied = NULL;
        }
      else if (score == best_score)
        tied = entry;
    }

  /* Of two alike where one's path goes on from the other's, the hint named the parent: "note"
   * means /notes/{id}, not /notes/{id}/delete (a GET that deletes, which a route never sends). */
  if (best != NULL && tied != NULL && extends (tied, best))
    tied = NULL;
  else if (best != NULL && tied != NULL && extends (best, tied))
    {
      best = tied;
      tied = NULL;
    }
  if (best != NULL && tied != NULL)
    {
      *why = g_strdup_printf ("two learned reads match the hint alike (GET %s and GET %s): name "
                              "one with browser_api call and its entryId",
                              entry_string (best, "pathTemplate"),
                              entry_string (tied, "pathTemplate"));
      return NULL;
    }
  if (best == NULL && quarantined_score > 0 && quarantined_score >= wanting_score)
    {
      *why = g_strdup ("the read that matches the hint stopped answering as learned (the site "
                       "changed): it is quarantined until a call to it works again");
      return NULL;
    }
  if (wanting != NULL && wanting_score > best_score)
    {
      g_auto(GStrv) slots = chp_mcp_api_template_slots (entry_string (wanting, "pathTemplate"));
      g_autoptr(GString) missing = g_string_new (NULL);

      for (guint s = 0; slots[s] != NULL; s++)
        if (!param_given (params, slots[s]))
          g_string_append_printf (missing, "%s%s", missing->len > 0 ? ", " : "", slots[s]);
      *why = g_strdup_printf ("the read that matches best, GET %s, needs %s: pass it in params",
                              entry_string (wanting, "pathTemplate"), missing->str);
      return NULL;
    }
  if (best == NULL)
    {
      *why = g_strdup ("no learned read matches the hint (browser_api learn after the page "
                       "has loaded what you want, or use the page)");
      return NULL;
    }
  return best;
}

/* The types a shape names. The redactor masks a value by its member's name ({password:
 * "string"} is a field named password), and a masked type name is still a name of a type: the
 * browser said one of these, so a masked one is a string. */
static const char * const SHAPE_TYPES[] = {
  "string", "number", "boolean", "null", "object", "array", NULL,
};

JsonNode *
chp_mcp_api_shape_copy (JsonNode *node,
                        guint     depth)
{
  if (node != NULL && JSON_NODE_HOLDS_OBJECT (node) && depth < 4)
    {
      JsonObject *in = json_node_get_object (node);
      JsonObject *out = json_object_new ();
      g_autoptr(GList) names = json_object_get_members (in);

      for (GList *l = names; l != NULL; l = l->next)
        {
          JsonNode *member = json_object_get_member (in, l->data);

          /* {array: n, item: {...}} keeps its count. */
          if (g_str_equal (l->data, "array") && JSON_NODE_HOLDS_VALUE (member) &&
              json_node_get_value_type (member) == G_TYPE_INT64)
            json_object_set_int_member (out, "array", json_node_get_int (member));
          else
            json_object_set_member (out, l->data, chp_mcp_api_shape_copy (member, depth + 1));
        }
      return chp_json_node_take_object (out);
    }
  if (node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
      json_node_get_value_type (node) == G_TYPE_STRING &&
      g_strv_contains (SHAPE_TYPES, json_node_get_string (node)))
    return json_node_copy (node);
  return json_node_init_string (json_node_alloc (), "string");
}

/* A body's shape as learned: its kind, its keys' types, its GraphQL or RPC operation. */
JsonNode *
chp_mcp_api_body_copy (JsonNode *node)
{
  JsonObject *in;
  JsonObject *out;
  JsonNode *keys;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return json_node_init_null (json_node_alloc ());
  in = json_node_get_object (node);
  out = json_object_new ();
  json_object_set_string_member (out, "kind", chp_json_get_string (in, "kind") != NULL
                                              ? chp_json_get_string (in, "kind") : "none");
  keys = json_object_get_member (in, "keys");
  json_object_set_member (out, "keys", keys != NULL && JSON_NODE_HOLDS_OBJECT (keys)
                                       ? chp_mcp_api_shape_copy (keys, 1)
                                       : chp_json_node_take_object (json_object_new ()));
  if (chp_json_get_string (in, "operation") != NULL)
    json_object_set_string_member (out, "operation", chp_json_get_string (in, "operation"));
  return chp_json_node_take_object (out);
}
