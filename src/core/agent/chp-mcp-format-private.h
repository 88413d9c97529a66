/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-format-private.h: the inside of the formatting, shared by its files: the untrusted
 * wrapper's markers, and a snapshot on its way to pages (its sections, lines and build). */
#pragma once

#include "chp-mcp-format.h"

#include <string.h>

G_BEGIN_DECLS

static inline guint
nchars (const char *s)
{
  return s != NULL ? (guint) g_utf8_strlen (s, -1) : 0;
}

/* chp-mcp-untrusted.c */
char        *chp_mcp_marker_in_text              (const char   *text);
char        *chp_mcp_marker_in_node              (JsonNode     *node);

/* ---- snapshots: chp-mcp-snapshot.c assembles a page from the stream of lines
 * (chp-mcp-snapshot-lines.c), cut into pages (chp-mcp-snapshot-pages.c). */

typedef enum
{
  SECTION_PAGE,
  SECTION_FRAMES,
  SECTION_HEADINGS,
  SECTION_TEXT,
  SECTION_ELEMENTS,
  SECTION_HIDDEN,
  SECTION_ADDED,
  SECTION_CHANGED,
  SECTION_REMOVED,
  SECTION_NEW_TEXT,
  SECTION_MORE_HEADINGS,
  SECTION_MORE_TEXT,
  SECTION_FOUND,
  N_SECTIONS
} Section;

typedef struct
{
  Section  section;
  char    *line;
  guint    chars;
  int      node;      /* index in the snapshot's nodes, or -1 */
  char    *ref;       /* the agent ref, for a removed node */
  guint    ordinal;   /* 1-based among the listed elements, or 0 */
  guint    page;
  gboolean pinned;    /* on the first page, wherever the stream puts it */
} Item;

typedef struct
{
  const ChpMcpSnapshotOptions *options;
  JsonObject *snapshot;
  JsonArray  *nodes;
  char       *origin;
  char       *source;       /* our words for the wrapper: the origin, or "this page" */
  char       *marker;       /* the result's, in the text's tags and the structured strings */
  char       *folded_query;
  gboolean    diff;
  gboolean    compact;      /* a small budget: our words in their short form */
  guint       listed;       /* elements in the stream (after the query) */
  guint       unlisted_hidden; /* elements not rendered now, left out (no query) */
  guint       unlisted_drag;   /* elements only to drag (a palette's items), left out (no query) */
  guint       added, changed, removed;
  gboolean    text_changed;
  guint       new_text_lines;
} Build;

static inline const char *
page_ref_of (const char *wire_ref)
{
  const char *colon = strrchr (wire_ref, ':');

  return colon != NULL ? colon + 1 : wire_ref;
}

/* chp-mcp-snapshot-lines.c */
void         chp_mcp_snapshot_item_clear         (gpointer      data);
void         chp_mcp_snapshot_add_full_items     (Build        *build,
                                                  GArray       *items,
                                                  JsonObject   *lines);
void         chp_mcp_snapshot_add_diff_items     (Build        *build,
                                                  GArray       *items,
                                                  JsonObject   *lines);

/* chp-mcp-snapshot-pages.c */
const char  *chp_mcp_snapshot_label_of           (Section       section,
                                                  gboolean      continued);
guint        chp_mcp_snapshot_pack               (GArray       *items,
                                                  guint         budget);
char        *chp_mcp_snapshot_header             (Build        *build,
                                                  guint         page,
                                                  guint         pages,
                                                  guint         first,
                                                  guint         last);
char        *chp_mcp_snapshot_footer             (Build        *build,
                                                  guint         page,
                                                  guint         pages);
guint        chp_mcp_snapshot_wrapper_chars      (Build        *build);

G_END_DECLS
