/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-snapshot-lines.c: a snapshot as a stream of lines: one per element
 * (chp_mcp_format_node_line(), which browser_inspect shows too), the page's title, frames, headings
 * and text, in the order its pages take them; or, for a diff, what was added, changed and removed,
 * and the text that is new. */
#include "config.h"

#include "chp-mcp-format-private.h"

#include <string.h>

/* Characters of a page-derived line we ever show: a title, a heading, a frame's name. */
#define LINE_MAX_CHARS 300
/* Link targets are shown short: enough to tell links apart, not a second copy of the URL. */
#define HREF_MAX_CHARS 80
/* Text lines longer than this are split, so that no line is bigger than a page can hold. */
#define TEXT_CHUNK_CHARS 300
/* On the first page, the headings and the text excerpt get this much room before the elements;
 * the rest of them follows the elements on later pages. */
#define FIRST_PAGE_HEADINGS_CHARS 700
#define FIRST_PAGE_TEXT_CHARS 1300
/* Lines of text shown for an `until` (the browser sends at most this many), and their room. */
#define FOUND_MAX_LINES 3
#define FIRST_PAGE_FOUND_CHARS 600

/* ---- node lines ------------------------------------------------------------------------- */

static void
append_quoted (GString    *out,
               const char *text)
{
  g_string_append_c (out, '"');
  for (const char *p = text; *p != '\0'; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_c (out, '\\');
      g_string_append_c (out, *p);
    }
  g_string_append_c (out, '"');
}

static void
append_flag (GString    *out,
             const char *flag)
{
  g_string_append_c (out, ' ');
  g_string_append (out, flag);
}

/* The state flags in a fixed, readable order; a state the extension adds later is still shown. */
static void
append_state (GString    *out,
              JsonObject *state)
{
  static const char * const known[] = {
    "disabled", "checked", "expanded", "selected", "focused", "required", "readonly", "hidden",
  };
  JsonNode *checked = json_object_get_member (state, "checked");
  JsonNode *expanded = json_object_get_member (state, "expanded");
  g_autoptr(GList) members = NULL;

  if (chp_mcp_json_bool (state, "disabled"))
    append_flag (out, "disabled");
  if (checked != NULL && JSON_NODE_HOLDS_VALUE (checked))
    {
      if (json_node_get_value_type (checked) == G_TYPE_BOOLEAN)
        append_flag (out, json_node_get_boolean (checked) ? "checked" : "unchecked");
      else if (g_strcmp0 (json_node_get_string (checked), "mixed") == 0)
        append_flag (out, "mixed");
    }
  if (expanded != NULL && JSON_NODE_HOLDS_VALUE (expanded) &&
      json_node_get_value_type (expanded) == G_TYPE_BOOLEAN)
    append_flag (out, json_node_get_boolean (expanded) ? "expanded" : "collapsed");
  for (guint i = 3; i < G_N_ELEMENTS (known); i++)
    if (chp_mcp_json_bool (state, known[i]))
      append_flag (out, known[i]);

  members = json_object_get_members (state);
  for (GList *l = members; l != NULL; l = l->next)
    {
      const char *key = l->data;
      JsonNode *value = json_object_get_member (state, key);
      gboolean is_known = FALSE;
      g_autofree char *clean_key = NULL;

      for (guint i = 0; i < G_N_ELEMENTS (known); i++)
        is_known = is_known || g_str_equal (key, known[i]);
      if (is_known || value == NULL || !JSON_NODE_HOLDS_VALUE (value))
        continue;

      clean_key = chp_mcp_format_line (key, 40);
      if (json_node_get_value_type (value) == G_TYPE_BOOLEAN)
        {
          if (json_node_get_boolean (value))
            append_flag (out, clean_key);
        }
      else if (json_node_get_value_type (value) == G_TYPE_STRING)
        {
          g_autofree char *v = chp_mcp_format_line (json_node_get_string (value), 40);

          g_string_append_printf (out, " %s=%s", clean_key, v);
        }
      else if (json_node_get_value_type (value) == G_TYPE_INT64)
        g_string_append_printf (out, " %s=%" G_GINT64_FORMAT, clean_key, json_node_get_int (value));
    }
}

/**
 * chp_mcp_format_node_line:
 * @node: a node of the extension's snapshot `{ref, role, name, tag, state, href?, inModal?}`
 * @field: (nullable): the same element as a form field `{credential, filled, …}`
 * @page_origin: (nullable): the page's origin, so that same-site links show as paths
 *
 * Returns: (transfer full): the line without its ref, e.g. `button "Send" disabled`
 */
char *
chp_mcp_format_node_line (JsonObject *node,
                          JsonObject *field,
                          const char *page_origin)
{
  GString *out = g_string_new (NULL);
  g_autofree char *role = chp_mcp_format_line (chp_mcp_json_string (node, "role", NULL), 40);
  g_autofree char *name = chp_mcp_format_line (chp_mcp_json_string (node, "name", NULL), 170);
  const char *href = chp_mcp_json_string (node, "href", NULL);
  JsonNode *state = json_object_get_member (node, "state");

  g_string_append (out, *role != '\0' ? role : "element");
  if (*name != '\0')
    {
      g_autoptr(GString) quoted = g_string_new (NULL);

      /* A name of quotes doubles when escaped: bound the line, not just the name. */
      append_quoted (quoted, name);
      if (nchars (quoted->str) > 200)
        {
          g_string_truncate (quoted, g_utf8_offset_to_pointer (quoted->str, 198) - quoted->str);
          if (quoted->str[quoted->len - 1] == '\\')
            g_string_truncate (quoted, quoted->len - 1);
          g_string_append (quoted, "…\"");
        }
      g_string_append_printf (out, " %s", quoted->str);
    }
  if (href != NULL && *href != '\0')
    {
      gsize origin_len = page_origin != NULL ? strlen (page_origin) : 0;
      g_autofree char *shown = NULL;

      if (origin_len > 0 && strncmp (href, page_origin, origin_len) == 0 && href[origin_len] == '/')
        href += origin_len;
      shown = chp_mcp_format_line (href, HREF_MAX_CHARS);
      g_string_append_printf (out, " → %s", shown);
    }
  if (state != NULL && JSON_NODE_HOLDS_OBJECT (state))
    append_state (out, json_node_get_object (state));
  if (chp_mcp_json_bool (node, "inModal"))
    append_flag (out, "in-dialog");
  if (field != NULL)
    {
      const char *r = chp_mcp_json_string (node, "role", "");

      /* Never a value: whether there is one, and whether it is a secret. */
      if (chp_mcp_json_bool (field, "credential"))
        append_flag (out, "credential");
      /* A checkbox says checked, and a select always has a value: "filled" would say nothing. */
      if (chp_mcp_json_bool (field, "filled") &&
          g_strcmp0 (r, "checkbox") != 0 && g_strcmp0 (r, "radio") != 0 &&
          g_strcmp0 (chp_mcp_json_string (node, "tag", ""), "select") != 0)
        append_flag (out, "filled");
    }

  return g_string_free (out, FALSE);
}

/* ---- the stream of lines ------------------------------------------------------------------ */

void
chp_mcp_snapshot_item_clear (gpointer data)
{
  Item *item = data;

  g_free (item->line);
  g_free (item->ref);
}

static void
add_item (GArray  *items,
          Section  section,
          char    *line,
          int      node)
{
  Item item = { section, line, nchars (line), node, NULL, 0, 0, FALSE };

  g_array_append_val (items, item);
}

/* Splits page text into lines of at most TEXT_CHUNK_CHARS, on a space when there is one, and
 * drops blank lines: they cost characters and say nothing. */
static GPtrArray *
text_lines (const char *text)
{
  g_autofree char *clean = chp_mcp_format_text (text);
  g_auto(GStrv) lines = g_strsplit (clean, "\n", -1);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      char *rest = g_strstrip (lines[i]);

      while (*rest != '\0')
        {
          const char *end;
          const char *space = NULL;

          if (nchars (rest) <= TEXT_CHUNK_CHARS)
            {
              g_ptr_array_add (out, g_strdup (rest));
              break;
            }
          end = g_utf8_offset_to_pointer (rest, TEXT_CHUNK_CHARS);
          for (const char *p = rest; p < end; p++)
            if (*p == ' ')
              space = p;
          if (space != NULL && space > rest)
            end = space;
          g_ptr_array_add (out, g_strndup (rest, end - rest));
          rest = (char *) end;
          while (*rest == ' ')
            rest++;
        }
    }

  return out;
}

static gboolean
matches_query (const char *folded_query,
               const char *a,
               const char *b)
{
  g_autofree char *fa = NULL;
  g_autofree char *fb = NULL;

  if (folded_query == NULL)
    return TRUE;
  fa = g_utf8_casefold (a != NULL ? a : "", -1);
  fb = g_utf8_casefold (b != NULL ? b : "", -1);
  return strstr (fa, folded_query) != NULL || strstr (fb, folded_query) != NULL;
}

/* How much of the first page the start of the headings (or of the text) may take: a sixth of
 * the budget at most, so that small budgets keep room for elements. */
static guint
first_page_share (Build *build,
                  guint  most)
{
  return MIN (most, build->options->max_chars / 6);
}

static void
add_meta_items (Build  *build,
                GArray *items)
{
  JsonObject *snapshot = build->snapshot;
  JsonNode *frames = json_object_get_member (snapshot, "frames");
  JsonNode *headings = json_object_get_member (snapshot, "headings");
  const char *title = chp_mcp_json_string (snapshot, "title", NULL);
  const char *url = chp_mcp_json_string (snapshot, "url", NULL);

  if (title != NULL)
    {
      g_autofree char *clean = chp_mcp_format_line (title, LINE_MAX_CHARS);

      add_item (items, SECTION_PAGE, g_strdup_printf ("title: %s", clean), -1);
    }
  if (url != NULL)
    {
      g_autofree char *clean = chp_mcp_format_line (url, LINE_MAX_CHARS);

      add_item (items, SECTION_PAGE, g_strdup_printf ("url: %s", clean), -1);
    }

  if (frames != NULL && JSON_NODE_HOLDS_ARRAY (frames))
    {
      JsonArray *array = json_node_get_array (frames);

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonNode *f = json_array_get_element (array, i);
          JsonObject *o;
          JsonNode *id;
          g_autoptr(GString) line = g_string_new (NULL);
          g_autofree char *where = NULL;
          g_autofree char *name = NULL;

          if (!JSON_NODE_HOLDS_OBJECT (f))
            continue;
          o = json_node_get_object (f);
          id = json_object_get_member (o, "frameId");
          if (id != NULL && JSON_NODE_HOLDS_VALUE (id))
            g_string_append_printf (line, "frame %" G_GINT64_FORMAT, json_node_get_int (id));
          else
            g_string_append (line, "frame (not loaded)");
          where = chp_mcp_format_line (chp_mcp_json_string (o, "url", NULL) != NULL
                                       ? json_object_get_string_member (o, "url")
                                       : chp_mcp_json_string (o, "origin", ""),
                                       HREF_MAX_CHARS);
          if (*where != '\0')
            g_string_append_printf (line, " %s", where);
          /* A frame that inherits the page's origin (about:blank, srcdoc) is read with the page:
           * its elements are among the page's, and it is not a frame to snapshot on its own. */
          if (chp_mcp_json_bool (o, "inline") && chp_mcp_json_bool (o, "readable"))
            g_string_append (line, " part of this page (its elements are listed with the page's)");
          else if (chp_mcp_json_bool (o, "readable"))
            g_string_append (line, " readable");
          else
            {
              const char *why = chp_mcp_json_string (o, "reason", "not granted");
              g_autofree char *reason = chp_mcp_format_line (why, 40);

              g_string_append_printf (line, " not readable (%s)", reason);
            }
          name = chp_mcp_format_line (chp_mcp_json_string (o, "title", NULL) != NULL &&
                                      *json_object_get_string_member (o, "title") != '\0'
                                      ? json_object_get_string_member (o, "title")
                                      : chp_mcp_json_string (o, "name", ""),
                                      80);
          if (*name != '\0')
            {
              g_string_append_c (line, ' ');
              append_quoted (line, name);
            }
          add_item (items, SECTION_FRAMES, g_strdup (line->str), -1);
        }
    }

  if (headings != NULL && JSON_NODE_HOLDS_ARRAY (headings))
    {
      JsonArray *array = json_node_get_array (headings);
      guint used = 0;

      for (guint i = 0; i < json_array_get_length (array); i++)
        {
          JsonNode *h = json_array_get_element (array, i);
          g_autofree char *text = NULL;
          gint64 level;
          char *line;

          if (!JSON_NODE_HOLDS_OBJECT (h))
            continue;
          level = CLAMP (chp_mcp_json_int (json_node_get_object (h), "level", 2), 1, 6);
          text = chp_mcp_format_line (chp_mcp_json_string (json_node_get_object (h), "text", NULL),
                                      LINE_MAX_CHARS);
          if (*text == '\0')
            continue;
          line = g_strdup_printf ("%.*s %s", (int) level, "######", text);
          used += nchars (line) + 1;
          add_item (items, used <= first_page_share (build, FIRST_PAGE_HEADINGS_CHARS)
                           ? SECTION_HEADINGS : SECTION_MORE_HEADINGS, line, -1);
        }
    }
}

/* Whether the browser said @o is not rendered now (a closed menu's item, a panel's, a dialog's). */
static gboolean
node_hidden (JsonObject *o)
{
  JsonNode *state = json_object_get_member (o, "state");

  return state != NULL && JSON_NODE_HOLDS_OBJECT (state) &&
         chp_mcp_json_bool (json_node_get_object (state), "hidden");
}

/* Whether @o is only something to drag (a palette's item, a board's card the page marks by its
 * look or draggable="true" and nothing else): like a closed menu's items, listed for a query
 * only. On Node-RED its palette would add 60 lines to every snapshot; drags are rare next to
 * clicks, and the text shows the items' names to ask for. */
static gboolean
node_drag_only (JsonObject *o)
{
  static const char * const plain[] = { "generic", "listitem", "group", "article", "img", NULL };
  JsonNode *state = json_object_get_member (o, "state");
  JsonObject *s;

  if (state == NULL || !JSON_NODE_HOLDS_OBJECT (state))
    return FALSE;
  s = json_node_get_object (state);
  return chp_mcp_json_bool (s, "draggable") && !chp_mcp_json_bool (s, "clickable") &&
         g_strv_contains (plain, chp_mcp_json_string (o, "role", ""));
}

/* Element lines the text need not repeat: a button's or a list row's words are its name, and
 * on a mail list the rows' text is most of the page. Bounded, so that checking every text line
 * against it stays cheap whatever the page. */
#define SAID_MAX_CHARS 16384

static void
said_add (GString    *said,
          const char *element_line)
{
  if (element_line != NULL && said->len < SAID_MAX_CHARS)
    {
      g_string_append (said, element_line);
      g_string_append_c (said, '\n');
    }
}

/* Whether a line of the page's text is said already, inside an element's line. A line of fewer
 * than four bytes ("/", "•", "OK") costs as little as the check, and could be found inside
 * any element's name by chance. */
static gboolean
said_already (GString    *said,
              const char *text_line)
{
  return said != NULL && said->len > 0 && strlen (text_line) >= 4 &&
         strstr (said->str, text_line) != NULL;
}

static void
add_text_items (Build      *build,
                GArray     *items,
                const char *text,
                GString    *said,
                GPtrArray  *found)
{
  g_autoptr(GPtrArray) lines = text_lines (text);
  guint used = 0;

  for (guint i = 0; i < lines->len; i++)
    {
      char *line;

      if (said_already (said, g_ptr_array_index (lines, i)) ||
          g_ptr_array_find_with_equal_func (found, g_ptr_array_index (lines, i), g_str_equal, NULL))
        continue;
      line = g_strdup (g_ptr_array_index (lines, i));

      used += nchars (line) + 1;
      add_item (items, used <= first_page_share (build, FIRST_PAGE_TEXT_CHARS)
                       ? SECTION_TEXT : SECTION_MORE_TEXT, line, -1);
    }
}

/* After a wait for words (browser_snapshot's `until`), the lines of the page's text that hold them
 * (the browser's "untilLines", from all of its text): on the first page, above the elements,
 * wherever the excerpt would have put them or cut them; within a share of the first page, so a
 * small result bound still has room for the rest. Returns: (transfer full): the lines shown,
 * which the text then does not repeat */
static GPtrArray *
add_found_items (Build  *build,
                 GArray *items)
{
  JsonNode *found = json_object_get_member (build->snapshot, "untilLines");
  GPtrArray *shown = g_ptr_array_new ();
  guint room = first_page_share (build, FIRST_PAGE_FOUND_CHARS);
  JsonArray *array;

  if (found == NULL || !JSON_NODE_HOLDS_ARRAY (found))
    return shown;
  array = json_node_get_array (found);
  for (guint i = 0; i < json_array_get_length (array) && shown->len < FOUND_MAX_LINES && room > 1;
       i++)
    {
      JsonNode *n = json_array_get_element (array, i);
      Item *item;

      if (!JSON_NODE_HOLDS_VALUE (n) || json_node_get_value_type (n) != G_TYPE_STRING)
        continue;
      add_item (items, SECTION_FOUND,
                chp_mcp_format_line (json_node_get_string (n), MIN (TEXT_CHUNK_CHARS, room - 1)),
                -1);
      item = &g_array_index (items, Item, items->len - 1);
      item->pinned = TRUE;
      room -= MIN (room, item->chars + 1);
      g_ptr_array_add (shown, item->line);
    }
  return shown;
}

/* The full snapshot's stream: the page's title, URL and frames, the start of its headings, the
 * elements (rendered ones first), the start of the text — kept on the first page however many
 * elements push the rest onwards — then the rest of the headings and text. A query keeps only
 * elements. Elements not rendered now are listed only for a query: a person does not see a
 * closed menu's items either, and on an app like Node-RED they are most of the page's bytes;
 * the footer says how many were left out (chp_mcp_snapshot_footer()). */
void
chp_mcp_snapshot_add_full_items (Build      *build,
                                 GArray     *items,
                                 JsonObject *lines)
{
  g_autoptr(GArray) more = g_array_new (FALSE, FALSE, sizeof (Item));
  g_autoptr(GArray) text_head = g_array_new (FALSE, FALSE, sizeof (Item));
  g_autoptr(GArray) elements = g_array_new (FALSE, FALSE, sizeof (Item));
  g_autoptr(GArray) hidden = g_array_new (FALSE, FALSE, sizeof (Item));
  g_autoptr(GArray) found = g_array_new (FALSE, FALSE, sizeof (Item));
  guint ordinal = 0;

  if (build->folded_query == NULL)
    {
      g_autoptr(GArray) head = g_array_new (FALSE, FALSE, sizeof (Item));
      g_autoptr(GString) said = g_string_new (NULL);
      g_autoptr(GPtrArray) found_lines = NULL;

      /* The rendered elements' lines, which the text then does not repeat. */
      for (guint i = 0; i < json_array_get_length (build->nodes) && said->len < SAID_MAX_CHARS; i++)
        {
          JsonNode *n = json_array_get_element (build->nodes, i);
          const char *ref;

          if (!JSON_NODE_HOLDS_OBJECT (n) || node_hidden (json_node_get_object (n)) ||
              node_drag_only (json_node_get_object (n)))
            continue;
          ref = chp_mcp_json_string (json_node_get_object (n), "ref", NULL);
          if (ref != NULL)
            said_add (said, chp_mcp_json_string (lines, page_ref_of (ref), NULL));
        }
      add_meta_items (build, head);
      found_lines = add_found_items (build, head);
      add_text_items (build, head, chp_mcp_json_string (build->snapshot, "text", ""), said,
                      found_lines);
      for (guint i = 0; i < head->len; i++)
        {
          Item *item = &g_array_index (head, Item, i);

          if (item->section == SECTION_TEXT)
            {
              item->pinned = TRUE;
              g_array_append_val (text_head, *item);
            }
          else if (item->section == SECTION_FOUND)
            g_array_append_val (found, *item);
          else if (item->section == SECTION_MORE_HEADINGS || item->section == SECTION_MORE_TEXT)
            g_array_append_val (more, *item);
          else
            g_array_append_val (items, *item);
        }
    }

  for (guint i = 0; i < json_array_get_length (build->nodes); i++)
    {
      JsonNode *n = json_array_get_element (build->nodes, i);
      JsonObject *o;
      const char *ref;
      char *line;
      gboolean is_hidden;

      if (!JSON_NODE_HOLDS_OBJECT (n))
        continue;
      o = json_node_get_object (n);
      ref = chp_mcp_json_string (o, "ref", NULL);
      if (ref == NULL || !json_object_has_member (lines, page_ref_of (ref)))
        continue;
      if (!matches_query (build->folded_query,
                          chp_mcp_json_string (o, "name", NULL),
                          chp_mcp_json_string (o, "role", NULL)))
        continue;

      is_hidden = node_hidden (o);
      if (is_hidden && build->folded_query == NULL)
        {
          build->unlisted_hidden++;
          continue;
        }
      if (build->folded_query == NULL && node_drag_only (o))
        {
          build->unlisted_drag++;
          continue;
        }
      line = g_strdup_printf ("[%s%s] %s", build->options->ref_prefix, page_ref_of (ref),
                              json_object_get_string_member (lines, page_ref_of (ref)));
      add_item (is_hidden ? hidden : elements, is_hidden ? SECTION_HIDDEN : SECTION_ELEMENTS, line,
                i);
    }

  /* What the agent waited for, above the elements; then rendered elements first: they are the
   * ones a person sees and most likely the next step. */
  g_array_append_vals (items, found->data, found->len);
  for (guint i = 0; i < elements->len; i++)
    {
      g_array_index (elements, Item, i).ordinal = ++ordinal;
      g_array_append_val (items, g_array_index (elements, Item, i));
    }
  for (guint i = 0; i < hidden->len; i++)
    {
      g_array_index (hidden, Item, i).ordinal = ++ordinal;
      g_array_append_val (items, g_array_index (hidden, Item, i));
    }
  build->listed = ordinal;
  g_array_append_vals (items, text_head->data, text_head->len);
  g_array_append_vals (items, more->data, more->len);
}

/* The diff's stream: added, changed and removed elements, then the lines of text that are new. */
void
chp_mcp_snapshot_add_diff_items (Build      *build,
                                 GArray     *items,
                                 JsonObject *lines)
{
  JsonObject *base = build->options->base;
  JsonNode *base_lines_node = json_object_get_member (base, "lines");
  JsonObject *base_lines = base_lines_node != NULL && JSON_NODE_HOLDS_OBJECT (base_lines_node)
                           ? json_node_get_object (base_lines_node) : NULL;
  const char *base_text = chp_mcp_json_string (base, "text", "");
  const char *text = chp_mcp_json_string (build->snapshot, "text", "");
  g_autoptr(GArray) changed = g_array_new (FALSE, FALSE, sizeof (Item));
  g_autoptr(GArray) removed = g_array_new (FALSE, FALSE, sizeof (Item));
  g_autoptr(GHashTable) old_lines = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) old_text = text_lines (base_text);
  g_autoptr(GPtrArray) new_text = text_lines (text);
  g_autoptr(GList) base_refs = base_lines != NULL ? json_object_get_members (base_lines) : NULL;
  g_autoptr(GString) said = g_string_new (NULL);
  guint ordinal = 0;

  for (guint i = 0; i < json_array_get_length (build->nodes); i++)
    {
      JsonNode *n = json_array_get_element (build->nodes, i);
      JsonObject *o;
      const char *ref;
      const char *line;
      const char *before;
      Item item = { 0, };

      if (!JSON_NODE_HOLDS_OBJECT (n))
        continue;
      o = json_node_get_object (n);
      ref = chp_mcp_json_string (o, "ref", NULL);
      if (ref == NULL || !json_object_has_member (lines, page_ref_of (ref)))
        continue;
      line = json_object_get_string_member (lines, page_ref_of (ref));
      before = base_lines != NULL ? chp_mcp_json_string (base_lines, page_ref_of (ref), NULL)
                                  : NULL;
      if (g_strcmp0 (before, line) == 0)
        continue;
      if (before == NULL)
        build->added++;
      else
        build->changed++;
      /* An added element only to drag is not listed (below): the text keeps its words. */
      if (!node_hidden (o) && !(before == NULL && build->folded_query == NULL && node_drag_only (o)))
        said_add (said, line);
      if (!matches_query (build->folded_query,
                          chp_mcp_json_string (o, "name", NULL),
                          chp_mcp_json_string (o, "role", NULL)))
        continue;
      /* Added while not rendered: as in a full snapshot, counted, not listed. A change (a menu
       * item that hid or showed) is listed: that is what the act did. */
      if (before == NULL && build->folded_query == NULL && node_hidden (o))
        {
          build->unlisted_hidden++;
          continue;
        }
      if (before == NULL && build->folded_query == NULL && node_drag_only (o))
        {
          build->unlisted_drag++;
          continue;
        }

      item.section = before == NULL ? SECTION_ADDED : SECTION_CHANGED;
      item.line = g_strdup_printf ("[%s%s] %s", build->options->ref_prefix, page_ref_of (ref),
                                   line);
      item.chars = nchars (item.line);
      item.node = i;
      item.ordinal = ++ordinal;
      g_array_append_val (before == NULL ? items : changed, item);
    }
  g_array_append_vals (items, changed->data, changed->len);

  for (GList *l = base_refs; l != NULL; l = l->next)
    {
      const char *ref = l->data;
      const char *before = chp_mcp_json_string (base_lines, ref, "");
      Item item = { 0, };

      if (json_object_has_member (lines, ref))
        continue;
      build->removed++;
      if (!matches_query (build->folded_query, before, NULL))
        continue;
      item.section = SECTION_REMOVED;
      item.ref = g_strdup_printf ("%s%s", build->options->ref_prefix, ref);
      item.line = g_strdup_printf ("[%s] %s", item.ref, before);
      item.chars = nchars (item.line);
      item.node = -1;
      item.ordinal = ++ordinal;
      g_array_append_val (removed, item);
    }
  g_array_append_vals (items, removed->data, removed->len);
  build->listed = ordinal;

  /* New text: the lines that were not there before (as a multiset, so a repeated line counts). */
  for (guint i = 0; i < old_text->len; i++)
    {
      const char *line = g_ptr_array_index (old_text, i);
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (old_lines, line));

      g_hash_table_insert (old_lines, g_strdup (line), GUINT_TO_POINTER (n + 1));
    }
  for (guint i = 0; i < new_text->len; i++)
    {
      const char *line = g_ptr_array_index (new_text, i);
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (old_lines, line));

      if (n > 0)
        {
          g_hash_table_insert (old_lines, g_strdup (line), GUINT_TO_POINTER (n - 1));
          continue;
        }
      build->new_text_lines++;
      /* New words an added or changed element says already are not said twice. */
      if (build->folded_query == NULL && !said_already (said, line))
        add_item (items, SECTION_NEW_TEXT, g_strdup (line), -1);
    }
  build->text_changed = g_strcmp0 (base_text, text) != 0;
}

