/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-read.c: browser_snapshot and browser_inspect: a granted tab read as
 * compact lines, paged, filtered and diffed, and one element of it described. The agent's memory
 * of its snapshots is what gives its refs and diffs their meaning. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

/* ---- browser_snapshot --------------------------------------------------------------------- */

/* Formats the browser's capture of @frame for the agent — only what changed since the agent's
 * previous snapshot of that frame when @diff — and remembers it as the agent's latest snapshot
 * there, even for a page that does not exist: it is what the agent's next refs and its next diff
 * are about. @answer has passed the capture and floor checks. */
ChpMcpSnapshot *
chp_tool_remember_snapshot (ToolCall   *call,
                            JsonObject *answer,
                            gint64      frame,
                            gboolean    diff,
                            guint       page,
                            const char *query,
                            guint       max_chars,
                            gint64     *out_document)
{
  ChpMcpSnapshot *snapshot;
  g_autofree char *key = chp_tool_frame_key (call, frame);
  g_autofree char *tab = chp_tool_tab_name (call);
  g_autofree char *subject = NULL;
  g_autofree char *prefix = NULL;
  g_autofree char *doc_key = NULL;
  g_autofree char *origin = NULL;
  ChpMcpSnapshotOptions options = { 0, };
  JsonObject *previous = chp_tool_recall_object (call->context, key);
  JsonObject *base = NULL;
  JsonObject *memory;
  JsonObject *doc;
  const char *document_id = chp_mcp_json_string (answer, "documentId", "");
  const char *capture_id = chp_mcp_json_string (answer, "captureId", "");
  gboolean same_document;
  gint64 document;

  same_document = previous != NULL &&
                  g_strcmp0 (chp_mcp_json_string (previous, "documentId", NULL),
                             document_id) == 0;
  document = same_document ? json_object_get_int_member (previous, "document")
                           : chp_tool_next_document (call->context);

  if (diff && same_document)
    {
      /* Later pages of a diff compare with the base its first page used. */
      if (page > 1 && json_object_has_member (previous, "base"))
        base = json_object_get_object_member (previous, "base");
      else
        base = json_object_get_object_member (previous, "current");
    }
  else if (diff)
    options.note = previous != NULL
                   ? "The tab shows a new document since your previous snapshot, so this is a full "
                     "snapshot; refs of the old document no longer work."
                   : "You have no earlier snapshot of this tab and frame, so this is a full "
                     "snapshot.";

  subject = frame != 0 ? g_strdup_printf ("tab %s, frame %" G_GINT64_FORMAT, tab, frame)
                       : g_strdup_printf ("tab %s", tab);
  prefix = g_strdup_printf ("%" G_GINT64_FORMAT ":", document);
  options.subject = subject;
  options.ref_prefix = prefix;
  options.query = query;
  options.page = page;
  options.max_chars = max_chars;
  options.base = base;
  options.marker = call->marker;
  snapshot = chp_mcp_format_snapshot (answer, &options);

  memory = json_object_new ();
  json_object_set_int_member (memory, "document", document);
  json_object_set_string_member (memory, "documentId", document_id);
  json_object_set_string_member (memory, "captureId", capture_id);
  json_object_set_object_member (memory, "current", json_object_ref (snapshot->memory));
  if (base != NULL)
    json_object_set_object_member (memory, "base", json_object_ref (base));
  chp_tool_remember_object (call->context, key, memory);
  json_object_unref (memory);

  origin = chp_mcp_format_origin (chp_mcp_json_string (answer, "url", NULL));
  doc = json_object_new ();
  json_object_set_string_member (doc, "device", call->device_id);
  json_object_set_int_member (doc, "tabId", call->tab_id);
  json_object_set_int_member (doc, "frameId", frame);
  json_object_set_string_member (doc, "documentId", document_id);
  json_object_set_string_member (doc, "captureId", capture_id);
  json_object_set_string_member (doc, "origin", origin != NULL ? origin : "this page");
  doc_key = chp_tool_document_key (document);
  chp_tool_remember_object (call->context, doc_key, doc);
  json_object_unref (doc);

  *out_document = document;
  return snapshot;
}

/* The browser's capture found a visible password field (which makes any page blind). */
gboolean
chp_tool_capture_has_password (JsonObject *answer)
{
  JsonNode *auth = json_object_get_member (answer, "auth");

  return auth != NULL && JSON_NODE_HOLDS_OBJECT (auth) &&
         chp_mcp_json_bool (json_node_get_object (auth), "passwordField");
}

static void
snapshot_answered_cb (GObject      *source,
                      GAsyncResult *result,
                      gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) answer = chp_tool_browser_answer (task, source, result, "Reading the tab");
  g_autoptr(ChpMcpSnapshot) snapshot = NULL;
  g_autofree char *tab = NULL;
  JsonObject *structured;
  const char *capture_id;
  gint64 frame = chp_tool_int_argument (call->args, "frame", 0);
  gint64 document;

  if (answer == NULL)
    return;

  capture_id = chp_mcp_json_string (answer, "captureId", NULL);
  if (capture_id == NULL || *capture_id == '\0')
    {
      chp_tool_return_error (task, "internal", "The browser's snapshot has no capture id", NULL);
      return;
    }

  /* Again on what the browser read: the tab may have moved to a blind page since its grant
   * said where it was, and a sign-in form makes any page blind. Nothing of it is kept. */
  if (!chp_tool_floor_allows (task, chp_mcp_json_string (answer, "url", ""), FALSE,
                              chp_tool_capture_has_password (answer)))
    return;

  snapshot = chp_tool_remember_snapshot (call, answer, frame,
                                         chp_mcp_json_bool (call->args, "diff"),
                                         chp_tool_int_argument (call->args, "page", 1),
                                         chp_mcp_json_string (call->args, "query", NULL),
                                         call->self->result_max_chars, &document);
  if (snapshot->out_of_range)
    {
      chp_tool_return_error (task, "invalid_params", snapshot->text, NULL);
      return;
    }

  tab = chp_tool_tab_name (call);
  structured = json_object_ref (json_node_get_object (snapshot->structured));
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_int_member (structured, "frame", frame);
  json_object_set_int_member (structured, "document", document);
  chp_tool_return_ok (task, snapshot->text, structured, "Ask for the next page, or a query.");
}

void
chp_tool_snapshot (ToolCall *call)
{
  GTask *task = call->task;

  if (!chp_tool_resolve_tab (task, json_object_get_string_member (call->args, "tab")) ||
      !chp_tool_floor_allows (task, NULL, FALSE, FALSE))
    return;

  /* The extension's own diff is against the page's previous capture, whoever made it; the diff
   * an agent asks for is against its own previous snapshot, which only the app knows. */
  chp_tool_browser_call (task, "browser.context",
                         chp_tool_params_new ("tabId", chp_tool_int_node (call->tab_id),
                                              "frameId", chp_tool_int_node (
                                                chp_tool_int_argument (call->args, "frame", 0)),
                                              NULL),
                         CONTEXT_TIMEOUT_MS, snapshot_answered_cb);
}

/* ---- browser_inspect ---------------------------------------------------------------------- */

static void
inspected_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) answer = chp_tool_browser_answer (task, source, result,
                                                          "Inspecting the element");
  g_autoptr(GString) text = NULL;
  g_autoptr(GString) page = NULL;
  g_autofree char *tab = NULL;
  g_autofree char *line = NULL;
  JsonObject *structured;
  JsonObject *attributes;
  JsonObject *bounds;
  static const char * const strings[] = { "tag", "role", "name" };
  static const char * const booleans[] = { "visible", "inViewport", "inModal", "credential" };

  if (answer == NULL)
    return;

  tab = chp_tool_tab_name (call);
  structured = json_object_new ();
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_string_member (structured, "ref", call->ref);
  for (guint i = 0; i < G_N_ELEMENTS (strings); i++)
    chp_tool_copy_typed (structured, answer, strings[i], G_TYPE_STRING);
  for (guint i = 0; i < G_N_ELEMENTS (booleans); i++)
    chp_tool_copy_typed (structured, answer, booleans[i], G_TYPE_BOOLEAN);
  chp_tool_copy_typed (structured, answer, "attributes", JSON_TYPE_OBJECT);
  chp_tool_copy_typed (structured, answer, "state", JSON_TYPE_OBJECT);
  chp_tool_copy_typed (structured, answer, "bounds", JSON_TYPE_OBJECT);

  /* The same line a snapshot shows, then the rest, all of it the page's words. */
  page = g_string_new (NULL);
  line = chp_mcp_format_node_line (answer, NULL, json_object_get_string_member (call->document,
                                                                                "origin"));
  g_string_append_printf (page, "%s (%s)\n", line,
                          chp_mcp_json_string (structured, "tag", "element"));
  if (json_object_has_member (structured, "attributes"))
    {
      g_autoptr(GList) names = NULL;

      attributes = json_object_get_object_member (structured, "attributes");
      names = json_object_get_members (attributes);
      for (GList *l = names; l != NULL; l = l->next)
        {
          JsonNode *value = json_object_get_member (attributes, l->data);
          g_autofree char *name = chp_mcp_format_line (l->data, 60);
          g_autofree char *shown = NULL;

          if (!JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_STRING)
            continue;
          shown = chp_mcp_format_line (json_node_get_string (value), 300);
          g_string_append_printf (page, "%s=%s\n", name, shown);
        }
    }
  g_string_append_printf (page, "%s, %s the viewport%s%s\n",
                          chp_mcp_json_bool (structured, "visible")
                          ? "visible" : "not visible",
                          chp_mcp_json_bool (structured, "inViewport")
                          ? "in" : "outside",
                          chp_mcp_json_bool (structured, "inModal")
                          ? ", in an open dialog" : "",
                          chp_mcp_json_bool (structured, "credential")
                          ? ", a credential field (its value is never read)" : "");
  if (json_object_has_member (structured, "bounds"))
    {
      bounds = json_object_get_object_member (structured, "bounds");
      g_string_append_printf (page, "bounds: x %" G_GINT64_FORMAT ", y %" G_GINT64_FORMAT
                              ", %" G_GINT64_FORMAT "×%" G_GINT64_FORMAT "\n",
                              chp_mcp_json_int (bounds, "x", 0),
                              chp_mcp_json_int (bounds, "y", 0),
                              chp_mcp_json_int (bounds, "width", 0),
                              chp_mcp_json_int (bounds, "height", 0));
    }

  text = g_string_new (NULL);
  g_string_append_printf (text, "Element %s on tab %s:\n", call->ref, tab);
  chp_mcp_format_add_untrusted (text, call->marker, chp_tool_document_origin (call), page->str);

  /* The page's words in structuredContent, marked as in the text: the tag (a custom element's
   * is any word), the name, the attributes, the state; the role only when it is not one. */
  {
    static const char * const role[] = { "role", NULL };

    chp_mcp_format_mark_member (structured, "tag", call->marker, NULL);
    chp_mcp_format_mark_member (structured, "role", call->marker, role);
    chp_mcp_format_mark_member (structured, "name", call->marker, NULL);
    chp_mcp_format_mark_member (structured, "attributes", call->marker, NULL);
    chp_mcp_format_mark_member (structured, "state", call->marker, NULL);
  }
  chp_tool_return_ok (task, text->str, structured, NULL);
}

void
chp_tool_inspect (ToolCall *call)
{
  GTask *task = call->task;
  g_autofree char *wire_ref = NULL;

  if (!chp_tool_resolve_tab (task, json_object_get_string_member (call->args, "tab")) ||
      !chp_tool_floor_allows (task, NULL, FALSE, FALSE) ||
      !chp_tool_resolve_ref (task, json_object_get_string_member (call->args, "ref"), &wire_ref))
    return;

  chp_tool_browser_call (task, "browser.node.inspect",
                         chp_tool_params_new ("ref", chp_tool_string_node (wire_ref), NULL),
                         NODE_TIMEOUT_MS, inspected_cb);
}
