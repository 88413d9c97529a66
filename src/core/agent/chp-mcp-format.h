/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-format.h: how tool results read to an agent — the untrusted-content wrapper, the
 * character budget, and the snapshot as compact lines, paged, filtered and diffed. Pure
 * functions of their arguments, so every rule here is unit-tested without a browser. */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

/* Page-derived text sits between two tags and nowhere else (DESIGN §7), both carrying the
 * result's marker, a fresh random word the page cannot know:
 * `<untrusted-page-content-MARKER>` … `</untrusted-page-content-MARKER>`. These are how the
 * tags start; the marker and a '>' follow. */
#define CHP_MCP_UNTRUSTED_OPEN  "<untrusted-page-content-"
#define CHP_MCP_UNTRUSTED_CLOSE "</untrusted-page-content-"
/* Lower-case letters and digits 2-7: 50 random bits. */
#define CHP_MCP_MARKER_CHARS    10

/* No result is made smaller than this, whatever the setting: a page must hold its header, its
 * footer and at least one whole line, or some element would be unreachable. */
#define CHP_MCP_RESULT_MIN_CHARS 1000

const char *chp_mcp_json_string        (JsonObject  *object,
                                        const char  *member,
                                        const char  *fallback);
gboolean  chp_mcp_json_bool            (JsonObject  *object,
                                        const char  *member);
gint64    chp_mcp_json_int             (JsonObject  *object,
                                        const char  *member,
                                        gint64       fallback);

char     *chp_mcp_format_line          (const char  *text,
                                        guint        max_chars);
char     *chp_mcp_format_text          (const char  *text);
char     *chp_mcp_format_neutralize    (const char  *content);
char     *chp_mcp_format_new_marker    (void);
void      chp_mcp_format_add_untrusted (GString     *out,
                                        const char  *marker,
                                        const char  *source,
                                        const char  *content);
char     *chp_mcp_format_untrusted     (const char  *source,
                                        const char  *content);
char     *chp_mcp_format_mark          (const char  *marker,
                                        const char  *content);
JsonNode *chp_mcp_format_marked        (JsonNode    *node,
                                        const char  *marker,
                                        const char * const *plain_members);
void      chp_mcp_format_mark_member   (JsonObject  *object,
                                        const char  *member,
                                        const char  *marker,
                                        const char * const *plain_members);
char     *chp_mcp_format_truncate      (const char  *text,
                                        guint        max_chars,
                                        const char  *how_to_get_more);
char     *chp_mcp_format_origin        (const char  *url);

JsonNode *chp_mcp_format_result        (const char  *text,
                                        JsonNode    *structured,
                                        guint        max_chars,
                                        const char  *how_to_get_more);
JsonNode *chp_mcp_format_error         (const char  *code,
                                        const char  *message,
                                        const char  *browser_detail,
                                        guint        max_chars);
const char *chp_mcp_format_error_hint  (const char  *code);

char     *chp_mcp_format_node_line     (JsonObject  *node,
                                        JsonObject  *field,
                                        const char  *page_origin);

/**
 * ChpMcpSnapshotOptions:
 * @subject: our words for what was captured, e.g. "tab b1:1842"
 * @ref_prefix: what makes a page ref ("e12") an agent ref ("3:e12")
 * @query: (nullable): keep only elements whose role or name contains this, case-insensitively
 * @page: 1-based
 * @max_chars: the text budget of one page
 * @base: (nullable): the memory of the previous snapshot (see #ChpMcpSnapshot.memory): when
 *   set, the result lists only what changed since it
 * @note: (nullable): our words for the header (why this is not the diff that was asked for…)
 * @marker: (nullable): the result's marker (chp_mcp_format_new_marker()); %NULL for a fresh one
 */
typedef struct
{
  const char *subject;
  const char *ref_prefix;
  const char *query;
  guint       page;
  guint       max_chars;
  JsonObject *base;
  const char *note;
  const char *marker;
} ChpMcpSnapshotOptions;

/**
 * ChpMcpSnapshot:
 * @text: the result text, at most max_chars characters
 * @structured: the matching structuredContent (nodes of this page with agent refs, paging…),
 *   its page-derived strings marked (chp_mcp_format_mark()) and the marker in `untrusted`
 * @memory: what a later diff compares with: `{lines:{pageRef: line}, text}`
 * @page: the page shown; @pages: how many there are (at least 1)
 * @out_of_range: the page asked for is past the last one (@text says so)
 */
typedef struct
{
  char       *text;
  JsonNode   *structured;
  JsonObject *memory;
  guint       page;
  guint       pages;
  gboolean    out_of_range;
} ChpMcpSnapshot;

ChpMcpSnapshot *chp_mcp_format_snapshot (JsonObject                  *snapshot,
                                         const ChpMcpSnapshotOptions *options);
void            chp_mcp_snapshot_free   (ChpMcpSnapshot              *snapshot);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpMcpSnapshot, chp_mcp_snapshot_free)

G_END_DECLS
