/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-snapshot.c: one page of a snapshot as an agent reads it: its text in the untrusted
 * wrapper, its structuredContent with the page's words marked, and the memory a later diff compares
 * with. */
#include "config.h"

#include "chp-mcp-format-private.h"

#include <string.h>

/* Whatever the budget, a page body holds at least the longest line (a node line is at most
 * about 400 characters: its role, a 160-character name, a link, its flags). */
#define MIN_BODY_CHARS 450
/* Below this much room for the lines, our words take their compact form. */
#define COMPACT_BELOW_CHARS 1500

static void
build_clear (Build *build)
{
  g_free (build->origin);
  g_free (build->source);
  g_free (build->marker);
  g_free (build->folded_query);
}

static JsonObject *
fields_by_ref (JsonObject *snapshot)
{
  JsonObject *out = json_object_new ();
  JsonNode *forms = json_object_get_member (snapshot, "forms");

  if (forms == NULL || !JSON_NODE_HOLDS_ARRAY (forms))
    return out;

  for (guint i = 0; i < json_array_get_length (json_node_get_array (forms)); i++)
    {
      JsonNode *form = json_array_get_element (json_node_get_array (forms), i);
      JsonNode *fields;

      if (!JSON_NODE_HOLDS_OBJECT (form))
        continue;
      fields = json_object_get_member (json_node_get_object (form), "fields");
      if (fields == NULL || !JSON_NODE_HOLDS_ARRAY (fields))
        continue;
      for (guint k = 0; k < json_array_get_length (json_node_get_array (fields)); k++)
        {
          JsonNode *field = json_array_get_element (json_node_get_array (fields), k);
          const char *ref;

          if (!JSON_NODE_HOLDS_OBJECT (field))
            continue;
          ref = chp_mcp_json_string (json_node_get_object (field), "ref", NULL);
          if (ref != NULL)
            json_object_set_object_member (out, ref,
                                           json_object_ref (json_node_get_object (field)));
        }
    }

  return out;
}

/* The sign-in signals the page shows (the extension's `auth`), only those: most pages show none,
 * and five "false"s on every snapshot were bytes an agent pays for and reads nothing in. */
static void
copy_signals (JsonObject *to,
              JsonObject *from)
{
  JsonNode *auth = json_object_get_member (from, "auth");
  g_autoptr(GList) members = NULL;
  JsonObject *shown;

  if (auth == NULL || !JSON_NODE_HOLDS_OBJECT (auth))
    return;
  shown = json_object_new ();
  members = json_object_get_members (json_node_get_object (auth));
  for (GList *l = members; l != NULL; l = l->next)
    if (chp_mcp_json_bool (json_node_get_object (auth), l->data))
      json_object_set_boolean_member (shown, l->data, TRUE);
  if (json_object_get_size (shown) > 0)
    json_object_set_object_member (to, "auth", shown);
  else
    json_object_unref (shown);
}

/**
 * chp_mcp_format_snapshot:
 * @snapshot: the extension's answer to `browser.context` (docs/extension.md)
 *
 * The snapshot as an agent reads it: one line per actionable element
 * (`[3:e12] button "Send" disabled`), the page's title, frames, headings and text, all of it
 * inside the untrusted wrapper, cut into pages that fit @options->max_chars; or, with a base,
 * only what changed since.
 *
 * Returns: (transfer full): the page asked for, its structured form and the memory for a diff
 */
ChpMcpSnapshot *
chp_mcp_format_snapshot (JsonObject                  *snapshot,
                         const ChpMcpSnapshotOptions *options)
{
  g_autoptr(JsonObject) fields = NULL;
  g_autoptr(JsonObject) lines = NULL;
  g_autoptr(GArray) items = g_array_new (FALSE, FALSE, sizeof (Item));
  g_autoptr(GString) text = g_string_new (NULL);
  g_autoptr(GString) body = g_string_new (NULL);
  g_autoptr(JsonArray) diff_added = json_array_new ();
  g_autoptr(JsonArray) diff_changed = json_array_new ();
  g_autoptr(JsonArray) diff_removed = json_array_new ();
  g_autofree char *header_max = NULL;
  g_autofree char *footer_max = NULL;
  g_autofree char *header = NULL;
  g_autofree char *footer = NULL;
  ChpMcpSnapshot *result;
  JsonObject *structured;
  JsonNode *nodes_member;
  Build build = { 0, };
  guint budget;
  guint first = 0;
  guint last = 0;
  int last_section = -1;
  guint section_first_page[N_SECTIONS] = { 0, };

  g_return_val_if_fail (snapshot != NULL, NULL);
  g_return_val_if_fail (options != NULL && options->subject != NULL && options->ref_prefix != NULL,
                        NULL);

  g_array_set_clear_func (items, chp_mcp_snapshot_item_clear);
  build.options = options;
  build.snapshot = snapshot;
  nodes_member = json_object_get_member (snapshot, "nodes");
  build.nodes = nodes_member != NULL && JSON_NODE_HOLDS_ARRAY (nodes_member)
                ? json_array_ref (json_node_get_array (nodes_member)) : json_array_new ();
  build.origin = chp_mcp_format_origin (chp_mcp_json_string (snapshot, "url", NULL));
  build.source = g_strdup (build.origin != NULL ? build.origin : "this page");
  build.marker = options->marker != NULL ? g_strdup (options->marker)
                                         : chp_mcp_format_new_marker ();
  build.diff = options->base != NULL;
  if (options->query != NULL && *options->query != '\0')
    build.folded_query = g_utf8_casefold (options->query, -1);

  /* Every element's line, by page ref: the text below, and the memory of the next diff. */
  fields = fields_by_ref (snapshot);
  lines = json_object_new ();
  for (guint i = 0; i < json_array_get_length (build.nodes); i++)
    {
      JsonNode *n = json_array_get_element (build.nodes, i);
      const char *ref;
      JsonNode *field;
      g_autofree char *line = NULL;

      if (!JSON_NODE_HOLDS_OBJECT (n) ||
          (ref = chp_mcp_json_string (json_node_get_object (n), "ref", NULL)) == NULL ||
          *page_ref_of (ref) == '\0' || json_object_has_member (lines, page_ref_of (ref)))
        continue;
      field = json_object_get_member (fields, ref);
      line = chp_mcp_format_node_line (json_node_get_object (n),
                                       field != NULL ? json_node_get_object (field) : NULL,
                                       build.origin);
      json_object_set_string_member (lines, page_ref_of (ref), line);
    }

  if (build.diff)
    chp_mcp_snapshot_add_diff_items (&build, items, lines);
  else
    chp_mcp_snapshot_add_full_items (&build, items, lines);

  /* The header and footer at their longest, so that the body's budget holds for every page;
   * when that leaves little room, their compact form. */
  for (int attempt = 0; attempt < 2; attempt++)
    {
      guint overhead;

      g_clear_pointer (&header_max, g_free);
      g_clear_pointer (&footer_max, g_free);
      header_max = chp_mcp_snapshot_header (&build, 1, 99999, 99999, 99999);
      footer_max = chp_mcp_snapshot_footer (&build, 1, 99999);
      overhead = nchars (header_max) + nchars (footer_max) +
                 chp_mcp_snapshot_wrapper_chars (&build) + 2 +
                 5 /* "Page 12345" against "Page 1" */;
      budget = options->max_chars - MIN (options->max_chars, overhead);
      if (build.compact || budget >= COMPACT_BELOW_CHARS)
        break;
      build.compact = TRUE;
    }
  budget = MAX (budget, MIN_BODY_CHARS);

  result = g_new0 (ChpMcpSnapshot, 1);
  result->pages = chp_mcp_snapshot_pack (items, budget);
  result->page = MAX (options->page, 1);
  result->out_of_range = result->page > result->pages;

  for (guint i = 0; i < items->len; i++)
    {
      Item *item = &g_array_index (items, Item, i);

      if (section_first_page[item->section] == 0)
        section_first_page[item->section] = item->page;
      if (item->page != result->page)
        continue;

      if ((int) item->section != last_section)
        {
          const char *label =
            chp_mcp_snapshot_label_of (item->section,
                                       section_first_page[item->section] < item->page);

          if (label != NULL)
            g_string_append_printf (body, "%s\n", label);
          last_section = item->section;
        }
      g_string_append_printf (body, "%s\n", item->line);

      if (item->ordinal > 0)
        {
          first = first == 0 ? item->ordinal : first;
          last = item->ordinal;
        }
      /* The diff's refs are said plainly here as well as in the text: a client that keeps its
       * own list of elements updates it from them. */
      if (item->node >= 0 && (item->section == SECTION_ADDED || item->section == SECTION_CHANGED))
        {
          JsonObject *node = json_array_get_object_element (build.nodes, item->node);
          g_autofree char *agent_ref =
            g_strdup_printf ("%s%s", options->ref_prefix,
                             page_ref_of (json_object_get_string_member (node, "ref")));

          json_array_add_string_element (item->section == SECTION_ADDED ? diff_added : diff_changed,
                                         agent_ref);
        }
      else if (item->section == SECTION_REMOVED)
        json_array_add_string_element (diff_removed, item->ref);
    }

  if (result->out_of_range)
    g_string_append_printf (text, "The snapshot of %s has %u page%s; page %u does not exist. Ask "
                            "for page 1 to %u.\n", options->subject, result->pages,
                            result->pages == 1 ? "" : "s", result->page, result->pages);
  else
    {
      header = chp_mcp_snapshot_header (&build, result->page, result->pages, first, last);
      footer = chp_mcp_snapshot_footer (&build, result->page, result->pages);
      g_string_append (text, header);
      if (body->len > 0)
        {
          g_string_append_c (text, '\n');
          chp_mcp_format_add_untrusted (text, build.marker, build.source, body->str);
        }
      else if (build.folded_query != NULL)
        g_string_append (text, "Nothing matches the query.\n");
      else if (build.diff)
        g_string_append (text, "Nothing changed.\n");
      g_string_append_c (text, '\n');
      g_string_append (text, footer);
    }
  result->text = chp_mcp_format_truncate (text->str, options->max_chars,
                                          "Ask for the next page, or a query.");

  /* What a client can use beside the text, without repeating it (the elements, headings,
   * words, title and URL are the text's: an agent reads them there once, and on a mail app the
   * title and URL marked again here cost a sixth of each result): which page of how many,
   * counts, frames and sign-in signals. The frames' words marked as in the text, with the same
   * marker; refs and counts plain. The browser's ids are the app's business, not the agent's. */
  structured = json_object_new ();
  json_object_set_int_member (structured, "page", result->page);
  json_object_set_int_member (structured, "pages", result->pages);
  if (result->page < result->pages)
    json_object_set_int_member (structured, "nextPage", result->page + 1);
  else
    json_object_set_null_member (structured, "nextPage");
  {
    gboolean browser_cut = chp_mcp_json_bool (snapshot, "truncated") ||
                           chp_mcp_json_bool (snapshot, "textTruncated");

    /* Said only when so: a member that is false says nothing. */
    if (browser_cut)
      json_object_set_boolean_member (structured, "browserTruncated", TRUE);
    json_object_set_boolean_member (structured, "truncated",
                                    result->page < result->pages || browser_cut);
  }
  json_object_set_int_member (structured, "nodeCount",
                              chp_mcp_json_int (snapshot, "nodeCount",
                                                json_array_get_length (build.nodes)));
  json_object_set_int_member (structured, "listed", build.listed);
  if (!build.diff && build.folded_query == NULL && result->page == 1)
    {
      static const char * const frame_plain[] = { "documentId", "reason", NULL };
      JsonNode *frames = json_object_get_member (snapshot, "frames");

      copy_signals (structured, snapshot);
      if (frames != NULL && JSON_NODE_HOLDS_ARRAY (frames) &&
          json_array_get_length (json_node_get_array (frames)) > 0)
        {
          json_object_set_string_member (structured, "untrusted", build.marker);
          json_object_set_member (structured, "frames",
                                  chp_mcp_format_marked (frames, build.marker, frame_plain));
        }
    }
  if (build.diff)
    {
      JsonObject *diff = json_object_new ();

      json_object_set_array_member (diff, "added", g_steal_pointer (&diff_added));
      json_object_set_array_member (diff, "changed", g_steal_pointer (&diff_changed));
      json_object_set_array_member (diff, "removed", g_steal_pointer (&diff_removed));
      json_object_set_int_member (diff, "addedCount", build.added);
      json_object_set_int_member (diff, "changedCount", build.changed);
      json_object_set_int_member (diff, "removedCount", build.removed);
      json_object_set_boolean_member (diff, "textChanged", build.text_changed);
      json_object_set_object_member (structured, "diff", diff);
    }
  result->structured = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (result->structured, structured);

  result->memory = json_object_new ();
  json_object_set_object_member (result->memory, "lines", g_steal_pointer (&lines));
  json_object_set_string_member (result->memory, "text",
                                 chp_mcp_json_string (snapshot, "text", ""));

  json_array_unref (build.nodes);
  build_clear (&build);
  return result;
}

void
chp_mcp_snapshot_free (ChpMcpSnapshot *snapshot)
{
  if (snapshot == NULL)
    return;

  g_free (snapshot->text);
  g_clear_pointer (&snapshot->structured, json_node_unref);
  g_clear_pointer (&snapshot->memory, json_object_unref);
  g_free (snapshot);
}
