/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-snapshot-pages.c: the stream of lines cut into pages within the budget, a section's label
 * repeated where a page starts in it, and our words above and below a page. */
#include "config.h"

#include "chp-mcp-format-private.h"

static const char * const section_labels[N_SECTIONS] = {
  NULL, "frames:", "headings:", "text:", "elements:", "not rendered now (hidden):",
  "added:", "changed:", "removed:", "new text:", "headings (continued):", "text (continued):",
  "found (until):",
};

const char *
chp_mcp_snapshot_label_of (Section  section,
                           gboolean continued)
{
  if (continued && section == SECTION_HEADINGS)
    return section_labels[SECTION_MORE_HEADINGS];
  if (continued && section == SECTION_TEXT)
    return section_labels[SECTION_MORE_TEXT];
  if (continued && section == SECTION_ELEMENTS)
    return "elements (continued):";
  return section_labels[section];
}

/* Greedy packing: lines in order, each page's body within @budget characters, a section's label
 * repeated where a page starts in it; pinned lines are on the first page, their room kept there
 * first. Returns: the number of pages (at least 1). */
guint
chp_mcp_snapshot_pack (GArray *items,
                       guint   budget)
{
  gboolean seen[N_SECTIONS] = { FALSE, };
  guint first_page[N_SECTIONS] = { 0, };
  guint page = 1;
  guint used = 0;
  int last = -1;

  for (guint i = 0; i < items->len; i++)
    {
      Item *item = &g_array_index (items, Item, i);

      if (!item->pinned)
        continue;
      used += item->chars + 1 +
              ((int) item->section != last
               ? nchars (chp_mcp_snapshot_label_of (item->section, FALSE)) + 1 : 0);
      last = item->section;
      item->page = 1;
      first_page[item->section] = 1;
      seen[item->section] = TRUE;
    }
  last = -1;

  for (guint i = 0; i < items->len; i++)
    {
      Item *item = &g_array_index (items, Item, i);
      guint cost;

      if (item->pinned)
        continue;

      for (int attempt = 0; attempt < 2; attempt++)
        {
          gboolean continued = seen[item->section] && first_page[item->section] < page;
          const char *label = (int) item->section != last
                              ? chp_mcp_snapshot_label_of (item->section, continued) : NULL;

          cost = item->chars + 1 + (label != NULL ? nchars (label) + 1 : 0);
          if (used == 0 || used + cost <= budget)
            break;
          page++;
          used = 0;
          last = -1;
        }

      if (!seen[item->section])
        first_page[item->section] = page;
      seen[item->section] = TRUE;
      item->page = page;
      used += cost;
      last = item->section;
    }

  return page;
}

static char *
auth_signals (JsonObject *snapshot)
{
  static const struct
  {
    const char *member;
    const char *words;
  } signals[] = {
    { "signInForm", "a sign-in form" }, { "passwordField", "a password field" },
    { "otpField", "a one-time code field" }, { "captcha", "a CAPTCHA" }, { "qr", "a QR code" },
  };
  JsonNode *auth = json_object_get_member (snapshot, "auth");
  JsonObject *a = NULL;
  GString *seen = g_string_new (NULL);

  if (auth != NULL && JSON_NODE_HOLDS_OBJECT (auth))
    a = json_node_get_object (auth);

  for (guint i = 0; a != NULL && i < G_N_ELEMENTS (signals); i++)
    if (chp_mcp_json_bool (a, signals[i].member))
      g_string_append_printf (seen, "%s%s", seen->len > 0 ? ", " : "", signals[i].words);

  return g_string_free (seen, seen->len == 0);
}

/* Our words above the page's: what this is, which page, and what the page asks of a person. A
 * compact form keeps small budgets (down to CHP_MCP_RESULT_MIN_CHARS) for the lines themselves. */
char *
chp_mcp_snapshot_header (Build *build,
                         guint  page,
                         guint  pages,
                         guint  first,
                         guint  last)
{
  const ChpMcpSnapshotOptions *o = build->options;
  JsonObject *snapshot = build->snapshot;
  GString *out = g_string_new (NULL);
  g_autofree char *signals = page == 1 ? auth_signals (snapshot) : NULL;
  gint64 count = chp_mcp_json_int (snapshot, "nodeCount",
                                                          json_array_get_length (build->nodes));

  if (build->diff && build->compact)
    g_string_append_printf (out,
                            "Changes on %s since your previous snapshot: %u added, %u changed, "
                            "%u removed; text %s.", o->subject, build->added, build->changed,
                            build->removed, build->text_changed ? "changed" : "unchanged");
  else if (build->diff)
    g_string_append_printf (out, "Changes on %s since your previous snapshot of this document: "
                            "%u added, %u changed, %u removed; the page text %s.",
                            o->subject, build->added, build->changed, build->removed,
                            build->text_changed ? "changed" : "did not change");
  else if (build->folded_query != NULL)
    g_string_append_printf (out, "Snapshot of %s: %u of %" G_GINT64_FORMAT " actionable elements "
                            "match the query.", o->subject, build->listed, count);
  else
    g_string_append_printf (out, "Snapshot of %s: %" G_GINT64_FORMAT " actionable elements.",
                            o->subject, count);
  if (build->diff && build->folded_query != NULL)
    g_string_append_printf (out, " %u match the query.", build->listed);

  if (pages > 1)
    g_string_append_printf (out, " Page %u of %u", page, pages);
  if (pages > 1 && first > 0)
    g_string_append_printf (out, " (%s%u–%u).", build->compact ? "" : "elements ", first, last);
  else if (pages > 1)
    g_string_append_c (out, '.');

  if (o->note != NULL)
    g_string_append_printf (out, "\n%s", o->note);

  if (signals != NULL && build->compact)
    g_string_append_printf (out, "\nThe page shows %s: ask the person (browser_handoff).", signals);
  else if (signals != NULL)
    g_string_append_printf (out, "\nThe page shows %s. Signing in, codes, CAPTCHAs and QR codes "
                            "are the person's to do: ask with browser_handoff.", signals);

  g_string_append_c (out, '\n');
  return g_string_free (out, FALSE);
}

/* Our words below the page's: how to get the rest, and where the browser's capture stopped. */
char *
chp_mcp_snapshot_footer (Build    *build,
                         guint     page,
                         guint     pages)
{
  JsonObject *snapshot = build->snapshot;
  GString *out = g_string_new (NULL);
  gint64 count = chp_mcp_json_int (snapshot, "nodeCount", 0);
  guint listed_by_browser = json_array_get_length (build->nodes);
  gboolean text_cut = chp_mcp_json_bool (snapshot, "textTruncated");

  if (page < pages && build->compact)
    g_string_append_printf (out, "More: page %u, or a query.\n", page + 1);
  else if (page < pages)
    g_string_append_printf (out, "More: browser_snapshot with page %u (of %u), or a query to find "
                            "elements by name or role.\n", page + 1, pages);
  if (count > (gint64) listed_by_browser)
    g_string_append_printf (out, "The browser listed %u of the page's %" G_GINT64_FORMAT
                            " actionable elements%s.\n", listed_by_browser, count,
                            build->compact ? "" : " (visible ones first)");
  if (build->unlisted_hidden > 0)
    g_string_append_printf (out, build->compact
                            ? "Not listed: %u %s not rendered now (a query lists them).\n"
                            : "Not listed: %u %s not rendered now (in closed menus, panels or "
                              "dialogs); a query lists those that match, and they are listed "
                              "once shown.\n",
                            build->unlisted_hidden,
                            build->unlisted_hidden == 1 ? "element" : "elements");
  if (build->unlisted_drag > 0)
    g_string_append_printf (out, build->compact
                            ? "Not listed: %u %s to drag (a query lists them).\n"
                            : "Not listed: %u %s only to drag; a query lists them.\n",
                            build->unlisted_drag,
                            build->unlisted_drag == 1 ? "element" : "elements");
  if (text_cut)
    g_string_append (out, build->compact ? "The text is an excerpt.\n"
                                         : "The browser cut the page text to an excerpt.\n");
  /* That refs are valid for their document the tool's description says once, not every result. */
  if (out->len > 0)
    g_string_truncate (out, out->len - 1);
  return g_string_free (out, FALSE);
}

guint
chp_mcp_snapshot_wrapper_chars (Build *build)
{
  g_autoptr(GString) empty = g_string_new (NULL);

  chp_mcp_format_add_untrusted (empty, build->marker, build->source, "x");
  return nchars (empty->str);
}

