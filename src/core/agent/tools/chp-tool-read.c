/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-read.c: browser_snapshot and browser_inspect: a granted tab read as compact lines,
 * paged, filtered and diffed, and one element of it described. The agent's memory of its snapshots
 * is what gives its refs and diffs their meaning. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"


/* ---- browser_snapshot --------------------------------------------------------------------- */

/* A capture on its way to the agent. What its formatting needs of the agent's memory is read on
 * the main thread when the answer's turn comes (chp_tool_snapshot_job_new()), the worker formats
 * it (chp_tool_snapshot_format()), and back on the main thread chp_tool_remember_snapshot()
 * keeps it as the agent's latest snapshot of the frame. */
struct _SnapshotJob
{
  char           *key;            /* the frame's memory in the context */
  JsonObject     *previous;       /* (nullable) a reference: the worker reads it, none changes it */
  gint64          documents;      /* the agent's count of documents then */
  gint64          frame;
  gboolean        diff;
  guint           page;
  char           *query;
  guint           max_chars;
  char           *tab;
  char           *marker;

  /* made by snapshot_job_format() */
  ChpMcpSnapshot *snapshot;
  gboolean        same_document;
  gint64          document;
  JsonObject     *base;           /* in @previous */
};

static void
snapshot_job_read (SnapshotJob *job,
                   ToolCall    *call)
{
  g_clear_pointer (&job->previous, json_object_unref);
  g_clear_pointer (&job->snapshot, chp_mcp_snapshot_free);
  job->previous = chp_tool_recall_object (call->context, job->key);
  if (job->previous != NULL)
    json_object_ref (job->previous);
  job->documents = chp_tool_document_count (call->context);
  job->base = NULL;
}

/* On the main thread: what formatting the capture of @frame needs, so that the worker reads
 * nothing of the app's. */
SnapshotJob *
chp_tool_snapshot_job_new (ToolCall   *call,
                           gint64      frame,
                           gboolean    diff,
                           guint       page,
                           const char *query,
                           guint       max_chars)
{
  SnapshotJob *job = g_new0 (SnapshotJob, 1);

  job->key = chp_tool_frame_key (call, frame);
  job->frame = frame;
  job->diff = diff;
  job->page = page;
  job->query = g_strdup (query);
  job->max_chars = max_chars;
  job->tab = chp_tool_tab_name (call);
  job->marker = g_strdup (call->marker);
  snapshot_job_read (job, call);
  return job;
}

void
chp_tool_snapshot_job_free (gpointer data)
{
  SnapshotJob *job = data;

  g_free (job->key);
  g_clear_pointer (&job->previous, json_object_unref);
  g_free (job->query);
  g_free (job->tab);
  g_free (job->marker);
  g_clear_pointer (&job->snapshot, chp_mcp_snapshot_free);
  g_free (job);
}

/* Formats the browser's capture of the job's frame for the agent — only what changed since the
 * agent's previous snapshot of that frame when diff is asked for. Reads the job and @answer,
 * nothing else: it runs in a worker. */
static void
snapshot_job_format (SnapshotJob *job,
                     JsonObject  *answer)
{
  g_autofree char *subject = NULL;
  g_autofree char *prefix = NULL;
  ChpMcpSnapshotOptions options = { 0, };
  JsonObject *previous = job->previous;
  JsonObject *base = NULL;
  const char *document_id = chp_mcp_json_string (answer, "documentId", "");
  gboolean diff = job->diff;
  guint page = job->page;
  gint64 frame = job->frame;
  const char *tab = job->tab;
  JsonNode *structured;
  gboolean same_document;
  gint64 document;

  same_document = previous != NULL &&
                  g_strcmp0 (chp_mcp_json_string (previous, "documentId", NULL),
                             document_id) == 0;
  /* A new document takes the next number (chp_tool_next_document()), when it is kept. */
  document = same_document ? json_object_get_int_member (previous, "document")
                           : job->documents + 1;

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
  options.query = job->query;
  options.page = page;
  options.max_chars = job->max_chars;
  options.base = base;
  options.marker = job->marker;
  job->snapshot = chp_mcp_format_snapshot (answer, &options);
  /* What the tool answers with must not share the answer's values (ReplyFormat.unshared). */
  structured = g_steal_pointer (&job->snapshot->structured);
  job->snapshot->structured = chp_tool_json_copy_deep (structured);
  json_node_unref (structured);
  job->same_document = same_document;
  job->document = document;
  job->base = base;
}

/* The worker's part (ReplyFormat.format): only a capture the tool will show, one with an id
 * (see snapshot_answered_cb() and the act's diff). The floor is checked after it, on the main
 * thread: a page it refuses was formatted for nothing, and none of it is shown or kept. */
void
chp_tool_snapshot_format (gpointer  data,
                          JsonNode *answer)
{
  if (!JSON_NODE_HOLDS_OBJECT (answer) ||
      *chp_mcp_json_string (json_node_get_object (answer), "captureId", "") == '\0')
    return;
  snapshot_job_format (data, json_node_get_object (answer));
}

/* Keeps the formatted capture as the agent's latest snapshot of its frame, even for a page that
 * does not exist: it is what the agent's next refs and its next diff are about. @answer has
 * passed the capture and floor checks.
 *
 * Returns: (transfer full): the snapshot, as chp_mcp_format_snapshot() made it */
ChpMcpSnapshot *
chp_tool_remember_snapshot (ToolCall    *call,
                            JsonObject  *answer,
                            SnapshotJob *job,
                            gint64      *out_document)
{
  g_autofree char *doc_key = NULL;
  g_autofree char *origin = NULL;
  JsonObject *memory;
  JsonObject *doc;
  const char *document_id = chp_mcp_json_string (answer, "documentId", "");
  const char *capture_id = chp_mcp_json_string (answer, "captureId", "");
  gint64 frame = job->frame;
  gint64 document;

  /* The worker formatted against the agent's memory as it was when the answer's turn came. The
   * answers before this one have had their turn, but a call that began meanwhile may have made
   * the bounded context forget this frame to make room: then the capture is formatted again,
   * here, as it would have been had it come now. */
  if (job->snapshot == NULL ||
      chp_tool_recall_object (call->context, job->key) != job->previous ||
      chp_tool_document_count (call->context) != job->documents)
    {
      snapshot_job_read (job, call);
      snapshot_job_format (job, answer);
    }

  document = job->same_document ? job->document : chp_tool_next_document (call->context);
  g_assert (document == job->document);

  memory = json_object_new ();
  json_object_set_int_member (memory, "document", document);
  json_object_set_string_member (memory, "documentId", document_id);
  json_object_set_string_member (memory, "captureId", capture_id);
  json_object_set_object_member (memory, "current", json_object_ref (job->snapshot->memory));
  if (job->base != NULL)
    json_object_set_object_member (memory, "base", json_object_ref (job->base));
  chp_tool_remember_object (call->context, job->key, memory);
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
  return g_steal_pointer (&job->snapshot);
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
    {
      /* What the site memory keeps of it: that sign-in shows at this path. */
      if (chp_tool_capture_has_password (answer))
        chp_tool_site_learn_signin (call, answer, frame);
      return;
    }

  snapshot = chp_tool_remember_snapshot (call, answer, chp_tool_reply_get_data (result),
                                         &document);
  if (snapshot->out_of_range)
    {
      chp_tool_return_error (task, "invalid_params", snapshot->text, NULL);
      return;
    }

  /* What the page teaches the site memory; and the arrival card stays only when this page is
   * its site's (the tab may have left the site its grant last recorded). */
  chp_tool_site_learn_page (call, answer, frame);
  tab = chp_tool_tab_name (call);
  structured = json_object_ref (json_node_get_object (snapshot->structured));
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_int_member (structured, "frame", frame);
  json_object_set_int_member (structured, "document", document);
  /* Waited for a text that did not show: said first, in our words; the page as it is follows. */
  if (json_object_has_member (call->args, "until") &&
      json_object_has_member (answer, "untilFound"))
    {
      gboolean found = chp_mcp_json_bool (answer, "untilFound");
      g_autofree char *text = NULL;

      json_object_set_boolean_member (structured, "untilFound", found);
      if (!found)
        {
          text = g_strconcat (call->site_card != NULL ? call->site_card : "",
                              "The text you waited for (until) did not show within 10 s; this is "
                              "the page as it is now.\n", snapshot->text, NULL);
          chp_tool_return_ok (task, text, structured, "Ask for the next page, or a query.");
          return;
        }
    }
  if (call->site_card != NULL)
    {
      g_autofree char *text = g_strconcat (call->site_card, snapshot->text, NULL);

      chp_tool_return_ok (task, text, structured, "Ask for the next page, or a query.");
      return;
    }
  chp_tool_return_ok (task, snapshot->text, structured, "Ask for the next page, or a query.");
}

static gpointer
snapshot_prepare (ToolCall *call)
{
  guint card = call->site_card != NULL ? strlen (call->site_card) : 0;

  /* The arrival card comes first and the page fills what is left of the result. */
  return chp_tool_snapshot_job_new (call, chp_tool_int_argument (call->args, "frame", 0),
                                    chp_mcp_json_bool (call->args, "diff"),
                                    chp_tool_int_argument (call->args, "page", 1),
                                    chp_mcp_json_string (call->args, "query", NULL),
                                    call->self->result_max_chars > card + 1000
                                    ? call->self->result_max_chars - card
                                    : call->self->result_max_chars);
}

static const ReplyFormat snapshot_reply = {
  .prepare = snapshot_prepare,
  .format = chp_tool_snapshot_format,
  .free = chp_tool_snapshot_job_free,
  .unshared = TRUE,
};

static void snapshot_request (GTask *task);

void
chp_tool_snapshot (ToolCall *call)
{
  GTask *task = call->task;

  if (!chp_tool_resolve_tab (task, json_object_get_string_member (call->args, "tab")) ||
      !chp_tool_floor_allows (task, NULL, FALSE, FALSE))
    return;
  if (!chp_tool_site_load_card (task, snapshot_request))
    snapshot_request (task);
}

static void
snapshot_request (GTask *task)
{
  ToolCall *call = call_of (task);
  JsonNode *params;
  const char *until = chp_mcp_json_string (call->args, "until", NULL);

  /* The extension's own diff is against the page's previous capture, whoever made it; the diff
   * an agent asks for is against its own previous snapshot, which only the app knows. */
  params = chp_tool_params_new ("tabId", chp_tool_int_node (call->tab_id),
                                "frameId", chp_tool_int_node (chp_tool_int_argument (call->args,
                                                                                     "frame", 0)),
                                NULL);
  /* The page waits for the text first (at most 10 s, the extension's bound: well inside
   * CONTEXT_TIMEOUT_MS), then reads; the answer says whether it came (untilFound). */
  if (until != NULL)
    json_object_set_string_member (json_node_get_object (params), "until", until);
  chp_tool_browser_call_format (task, "browser.context", params,
                                CONTEXT_TIMEOUT_MS, &snapshot_reply, snapshot_answered_cb);
}

/* ---- browser_inspect ---------------------------------------------------------------------- */

/* browser_inspect's answer is formatted off the main thread too: what the result says of the
 * call is copied when the answer's turn comes, and the worker makes the whole result. */
typedef struct
{
  char     *ref;
  char     *tab;
  char     *marker;
  char     *origin;     /* the document's, for the element's line */
  char     *source;     /* our words for the wrapper */
  guint     max_chars;
  JsonNode *result;     /* made by inspect_format() */
} InspectJob;

static gpointer
inspect_prepare (ToolCall *call)
{
  InspectJob *job = g_new0 (InspectJob, 1);

  job->ref = g_strdup (call->ref);
  job->tab = chp_tool_tab_name (call);
  job->marker = g_strdup (call->marker);
  job->origin = g_strdup (json_object_get_string_member (call->document, "origin"));
  job->source = g_strdup (chp_tool_document_origin (call));
  job->max_chars = call->self->result_max_chars;
  return job;
}

static void
inspect_job_free (gpointer data)
{
  InspectJob *job = data;

  g_free (job->ref);
  g_free (job->tab);
  g_free (job->marker);
  g_free (job->origin);
  g_free (job->source);
  g_clear_pointer (&job->result, json_node_unref);
  g_free (job);
}

/* In the worker: the result chp_tool_return_ok() would make, from the job and the answer. */
static void
inspect_format (gpointer  data,
                JsonNode *node)
{
  InspectJob *job = data;
  JsonObject *answer;
  g_autoptr(GString) text = NULL;
  g_autoptr(GString) page = NULL;
  g_autofree char *line = NULL;
  const char *tab = job->tab;
  JsonObject *structured;
  JsonObject *attributes;
  JsonObject *bounds;
  JsonNode *structured_node;
  g_autoptr(JsonNode) result = NULL;
  static const char * const strings[] = { "tag", "role", "name" };
  static const char * const booleans[] = { "visible", "inViewport", "inModal", "credential" };

  /* What is not an object is the tool's error to answer (chp_tool_browser_answer()). */
  if (!JSON_NODE_HOLDS_OBJECT (node))
    return;
  answer = json_node_get_object (node);

  structured = json_object_new ();
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_string_member (structured, "ref", job->ref);
  for (guint i = 0; i < G_N_ELEMENTS (strings); i++)
    chp_tool_copy_typed (structured, answer, strings[i], G_TYPE_STRING);
  for (guint i = 0; i < G_N_ELEMENTS (booleans); i++)
    chp_tool_copy_typed (structured, answer, booleans[i], G_TYPE_BOOLEAN);
  chp_tool_copy_typed (structured, answer, "attributes", JSON_TYPE_OBJECT);
  chp_tool_copy_typed (structured, answer, "state", JSON_TYPE_OBJECT);
  chp_tool_copy_typed (structured, answer, "bounds", JSON_TYPE_OBJECT);

  /* The same line a snapshot shows, then the rest, all of it the page's words. */
  page = g_string_new (NULL);
  line = chp_mcp_format_node_line (answer, NULL, job->origin);
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
  g_string_append_printf (text, "Element %s on tab %s:\n", job->ref, tab);
  chp_mcp_format_add_untrusted (text, job->marker, job->source, page->str);

  /* The page's words in structuredContent, marked as in the text: the tag (a custom element's
   * is any word), the name, the attributes, the state; the role only when it is not one. */
  {
    static const char * const role[] = { "role", NULL };

    chp_mcp_format_mark_member (structured, "tag", job->marker, NULL);
    chp_mcp_format_mark_member (structured, "role", job->marker, role);
    chp_mcp_format_mark_member (structured, "name", job->marker, NULL);
    chp_mcp_format_mark_member (structured, "attributes", job->marker, NULL);
    chp_mcp_format_mark_member (structured, "state", job->marker, NULL);
  }
  structured_node = json_node_new (JSON_NODE_OBJECT);
  json_node_take_object (structured_node, structured);
  result = chp_mcp_format_result (text->str, structured_node, job->max_chars, NULL);
  /* What the tool answers with must not share the answer's values (ReplyFormat.unshared). */
  job->result = chp_tool_json_copy_deep (result);
}

static const ReplyFormat inspect_reply = {
  .prepare = inspect_prepare,
  .format = inspect_format,
  .free = inspect_job_free,
  .unshared = TRUE,
};

static void
inspected_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(JsonObject) answer = chp_tool_browser_answer (task, source, result,
                                                          "Inspecting the element");
  InspectJob *job = chp_tool_reply_get_data (result);

  if (answer == NULL)
    return;

  chp_tool_return (task, g_steal_pointer (&job->result), NULL);
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

  chp_tool_browser_call_format (task, "browser.node.inspect",
                                chp_tool_params_new ("ref", chp_tool_string_node (wire_ref), NULL),
                                NODE_TIMEOUT_MS, &inspect_reply, inspected_cb);
}
