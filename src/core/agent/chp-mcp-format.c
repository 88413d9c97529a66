/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-format.c: the words an agent reads. Page-derived text is made safe to quote (valid
 * UTF-8, no control characters, no way to close the wrapper it sits in), every result fits the
 * character budget, and a snapshot is cut into pages so that the first one stays small while
 * every element stays reachable by page or query. Here: a browser's JSON read by type, one line
 * or text of the page's, an origin, and a result or an error as MCP carries it; the untrusted
 * wrapper (chp-mcp-untrusted.c) and snapshots (chp-mcp-snapshot*.c) have files of their own. */
#include "config.h"

#include "chp-mcp-format.h"
#include "chp-mcp-format-private.h"

#include <string.h>

/*
 * What the browser sent, read by type: a member of another type than expected counts as missing.
 * (json-glib 1.6's *_with_default() getters warn on a wrong type instead, and a browser's answer
 * is not ours to trust that far.)
 */
const char *
chp_mcp_json_string (JsonObject *object,
                     const char *member,
                     const char *fallback)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, member) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return fallback;
  return json_node_get_string (node);
}

gboolean
chp_mcp_json_bool (JsonObject *object,
                   const char *member)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, member) : NULL;

  return node != NULL && JSON_NODE_HOLDS_VALUE (node) &&
         json_node_get_value_type (node) == G_TYPE_BOOLEAN && json_node_get_boolean (node);
}

gint64
chp_mcp_json_int (JsonObject *object,
                  const char *member,
                  gint64      fallback)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, member) : NULL;

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_INT64)
    return fallback;
  return json_node_get_int (node);
}

/* Bidirectional overrides and isolates, marks and the BOM: invisible, and able to make a line
 * read differently to a person reviewing a transcript than to the model. */
static gboolean
is_invisible (gunichar c)
{
  return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) ||
         c == 0x200E || c == 0x200F || c == 0xFEFF;
}

/* Cuts @s (owned) to @max_chars characters, the last of them an ellipsis when it was cut. */
static char *
clip_chars (char  *s,
            guint  max_chars)
{
  GString *out;

  if (max_chars == 0 || nchars (s) <= max_chars)
    return s;

  out = g_string_new_len (s, g_utf8_offset_to_pointer (s, max_chars - 1) - s);
  g_string_append (out, "…");
  g_free (s);
  return g_string_free (out, FALSE);
}

/**
 * chp_mcp_format_line:
 * @text: (nullable): page-derived text
 * @max_chars: 0 for no limit
 *
 * One line of page-derived text: valid UTF-8, every run of white space and control characters
 * made one space, invisible direction marks dropped, trimmed, and cut with an ellipsis. A page
 * cannot start a line of its own in our output with it.
 *
 * Returns: (transfer full): the line
 */
char *
chp_mcp_format_line (const char *text,
                     guint       max_chars)
{
  g_autofree char *valid = NULL;
  GString *out;
  gboolean space = FALSE;

  if (text == NULL)
    return g_strdup ("");

  valid = g_utf8_make_valid (text, -1);
  out = g_string_sized_new (strlen (valid));
  for (const char *p = valid; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (is_invisible (c))
        continue;
      if (g_unichar_isspace (c) || g_unichar_iscntrl (c) || c == 0x2028 || c == 0x2029)
        {
          space = out->len > 0;
          continue;
        }
      if (space)
        g_string_append_c (out, ' ');
      space = FALSE;
      g_string_append_unichar (out, c);
    }

  return clip_chars (g_string_free (out, FALSE), max_chars);
}

/**
 * chp_mcp_format_text:
 * @text: (nullable): page-derived text of several lines
 *
 * Like chp_mcp_format_line() but keeps line breaks (any kind becomes `\n`) and tabs.
 *
 * Returns: (transfer full): the text
 */
char *
chp_mcp_format_text (const char *text)
{
  g_autofree char *valid = NULL;
  GString *out;

  if (text == NULL)
    return g_strdup ("");

  valid = g_utf8_make_valid (text, -1);
  out = g_string_sized_new (strlen (valid));
  for (const char *p = valid; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (c == '\r')
        {
          if (p[1] != '\n')
            g_string_append_c (out, '\n');
        }
      else if (c == '\n' || c == 0x2028 || c == 0x2029 || c == 0x85)
        g_string_append_c (out, '\n');
      else if (c == '\t')
        g_string_append_c (out, '\t');
      else if (!g_unichar_iscntrl (c) && !is_invisible (c))
        g_string_append_unichar (out, c);
    }

  return g_string_free (out, FALSE);
}

/**
 * chp_mcp_format_origin:
 * @url: (nullable): a page's URL
 *
 * Returns: (transfer full) (nullable): `scheme://host[:port]`, cleaned to one short line, or
 *   %NULL when @url has no host
 */
char *
chp_mcp_format_origin (const char *url)
{
  g_autoptr(GUri) uri = NULL;
  g_autofree char *origin = NULL;
  const char *host;
  int port;

  if (url == NULL)
    return NULL;
  uri = g_uri_parse (url, G_URI_FLAGS_PARSE_RELAXED, NULL);
  if (uri == NULL || (host = g_uri_get_host (uri)) == NULL || *host == '\0')
    return NULL;

  port = g_uri_get_port (uri);
  origin = g_strdup_printf ("%s://%s%s%s%s", g_uri_get_scheme (uri),
                            strchr (host, ':') != NULL ? "[" : "", host,
                            strchr (host, ':') != NULL ? "]" : "", "");
  if (port > 0)
    {
      char *with_port = g_strdup_printf ("%s:%d", origin, port);

      g_free (origin);
      origin = with_port;
    }

  return chp_mcp_format_line (origin, 200);
}

static JsonNode *
text_content (const char *text)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();

  json_builder_begin_array (b);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "type");
  json_builder_add_string_value (b, "text");
  json_builder_set_member_name (b, "text");
  json_builder_add_string_value (b, text);
  json_builder_end_object (b);
  json_builder_end_array (b);
  return json_builder_get_root (b);
}

/**
 * chp_mcp_format_result:
 * @structured: (transfer full) (nullable): the structuredContent object
 * @how_to_get_more: (nullable): said when @text had to be cut
 *
 * When the result carries page content, in its text or marked in @structured, @structured says
 * the result's marker in `untrusted`: a program strips exactly those tags, and a model reading
 * only structuredContent learns which tag ends the page's words.
 *
 * Returns: (transfer full): an MCP CallToolResult whose text has at most @max_chars characters
 */
JsonNode *
chp_mcp_format_result (const char *text,
                       JsonNode   *structured,
                       guint       max_chars,
                       const char *how_to_get_more)
{
  g_autofree char *cut = chp_mcp_format_truncate (text, max_chars, how_to_get_more);
  JsonObject *result = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_member (result, "content", text_content (cut));
  if (structured != NULL && JSON_NODE_HOLDS_OBJECT (structured) &&
      !json_object_has_member (json_node_get_object (structured), "untrusted"))
    {
      g_autofree char *marker = chp_mcp_marker_in_text (text);

      if (marker == NULL)
        marker = chp_mcp_marker_in_node (structured);
      if (marker != NULL)
        json_object_set_string_member (json_node_get_object (structured), "untrusted", marker);
    }
  if (structured != NULL)
    json_object_set_member (result, "structuredContent", structured);
  json_node_take_object (node, result);
  return node;
}

/**
 * chp_mcp_format_error_hint:
 * @code: an error code of DESIGN §5
 *
 * Returns: (nullable): what an agent can do about it, in one or two sentences
 */
const char *
chp_mcp_format_error_hint (const char *code)
{
  static const struct
  {
    const char *code;
    const char *hint;
  } hints[] = {
    { "stopped", "The person pressed Stop: every call is refused until they resume, and only they "
                 "can, in the Chaperone app. Do not retry; tell the person where you were." },
    /* Not "the person paused": the loop guard pauses an agent too, and its answer says so. */
    { "paused", "This agent is paused. Wait, or ask the person to resume it in the Chaperone "
                "app." },
    { "no_grant",
     "Call browser_tabs for the tabs you may use. Only the person grants a tab, in the "
                  "Chaperone extension's popup: ask them." },
    { "grant_expired", "The person's grant on this tab ran out. Ask them to grant it again in the "
                       "Chaperone extension's popup." },
    { "scope_denied", "The grant does not allow this. Ask the person for a grant that does (the "
                      "Control preset allows acting and handoffs)." },
    { "target_denied", "That target is refused (another site, a frame that is not granted, or an "
                       "element that is covered, hidden, disabled or outside an open dialog). "
                       "Take a new snapshot and choose another way, or ask the person." },
    { "stale_document", "The page changed (it navigated or reloaded). Take a new browser_snapshot "
                        "and use its refs." },
    { "origin_changed", "The tab left the site that was granted. Navigate back within the site, or "
                        "ask the person." },
    { "stale_node", "That ref is no longer valid. Take a new browser_snapshot and use its refs." },
    { "device_offline",
     "That browser is not connected to Chaperone now. Ask the person to open it; "
                        "the extension connects by itself." },
    { "not_paired", "That browser is not paired with Chaperone any more. Call browser_tabs." },
    { "revoked", "The person removed that browser from Chaperone. Call browser_tabs." },
    { "busy", "The browser is busy (or a handoff already waits on this tab). Wait a moment, then "
              "try again." },
    { "timeout", "The browser did not answer in time. Try once more; if it happens again, ask the "
                 "person to look at the tab." },
    { "too_large", "The answer was too large. Ask for less (a frame, a query)." },
    { "refused_floor", "Chaperone never lets an agent use this kind of page. Ask the person to do "
                       "this step (browser_handoff)." },
    { "policy_denied", "This computer's administrator turned this off. Do the task through the "
                       "page's controls, or ask the person." },
    { "held", "Nothing was sent: a person decides in the Chaperone app. Call browser_wait with "
              "the id." },
    { "declined", "The person declined. Do not try again in another way." },
    { "changed", "The page changed before the person's decision took effect; nothing ran. Take a "
                 "new snapshot." },
    { "invalid_params", "Check the arguments against the tool's input schema." },
    { "unknown_method", "This browser's Chaperone extension does not know this. Ask the person to "
                        "update it." },
    { "unsupported", "This browser's Chaperone extension cannot do this. Ask the person to update "
                     "it." },
    { "cancelled", "The call was cancelled." },
    { "internal", "Something failed inside Chaperone or the extension. Try once more; if it fails "
                  "again, tell the person." },
  };

  for (guint i = 0; i < G_N_ELEMENTS (hints); i++)
    if (g_strcmp0 (hints[i].code, code) == 0)
      return hints[i].hint;

  return NULL;
}

/**
 * chp_mcp_format_error:
 * @code: an error code of DESIGN §5
 * @message: our words: what failed
 * @browser_detail: (nullable): what the browser said; it may quote the page, so it is shown
 *   inside the untrusted wrapper, and marked in `detail`
 *
 * Returns: (transfer full): a CallToolResult with `isError` and `structuredContent {code,
 *   message, detail?}`
 */
JsonNode *
chp_mcp_format_error (const char *code,
                      const char *message,
                      const char *browser_detail,
                      guint       max_chars)
{
  g_autoptr(GString) text = g_string_new (NULL);
  g_autofree char *detail = browser_detail != NULL ? chp_mcp_format_line (browser_detail,
                                                                          1000) : NULL;
  g_autofree char *marker = chp_mcp_format_new_marker ();
  const char *hint = chp_mcp_format_error_hint (code);
  JsonObject *structured = json_object_new ();
  JsonNode *structured_node = json_node_new (JSON_NODE_OBJECT);
  JsonNode *result;

  g_string_append_printf (text, "Error (%s): %s", code, message);
  if (hint != NULL)
    g_string_append_printf (text, "\n%s", hint);
  if (detail != NULL && *detail != '\0')
    {
      g_string_append_c (text, '\n');
      chp_mcp_format_add_untrusted (text, marker, "the browser (its message may quote the page)",
                                    detail);
    }

  json_object_set_string_member (structured, "code", code);
  json_object_set_string_member (structured, "message", message);
  if (detail != NULL && *detail != '\0')
    {
      g_autofree char *marked = chp_mcp_format_mark (marker, detail);

      json_object_set_string_member (structured, "detail", marked);
    }
  json_node_take_object (structured_node, structured);

  result = chp_mcp_format_result (text->str, structured_node, max_chars, NULL);
  json_object_set_boolean_member (json_node_get_object (result), "isError", TRUE);
  return result;
}

