/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-act.c: browser_act: a click, double-click, focus, scroll, fill, hover, key press,
 * typing or drag onto another on an element from a snapshot (a press or typing also on the
 * focused element); a click, key press or drop the browser holds for the person; the step of an
 * approved plan it uses; and what changed on the page after it. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include "chp-memory.h"

/* After an act that changed the page, its result shows what changed (a diff against the agent's
 * previous snapshot) within this many characters; browser_snapshot with diff gives the rest. */
#define ACT_DIFF_MAX_CHARS    4000
/* ...and when it does not show them, what to do instead. */
#define ACT_SNAPSHOT_HINT \
  " To see the page now, browser_snapshot with diff true lists only what changed."

/* The words the answer may say, as the extension says them, and ours for each: the reason an act
 * answered before its effects were over (page-settle.js), the page's sign that a write was saved
 * (page-holds.js watchWrite). */
typedef struct
{
  const char *word;
  const char *said;
} Word;

static const Word SETTLE_REASONS[] = {
  { "network", "requests it started were still running" },
  { "busy", "a busy indicator it showed was still there" },
  { "dom", "the page was still changing" },
  { "cap", "it took too long" },
  { NULL, NULL },
};

static const Word SAVE_SIGNS[] = {
  { "notice", "a notice appeared" },
  { "url", "the URL changed" },
  { "control-disabled", "the control got disabled" },
  { "control-gone", "the control went away" },
  { "list-item", "a list got a new item" },
  { NULL, NULL },
};

static const char * const CHANGES_PLAIN[] = { "reason", "by", NULL };

/* Our words for @word, or @otherwise when it is none of @words. */
static const char *
said_for (const Word *words,
          const char *word,
          const char *otherwise)
{
  for (guint i = 0; word != NULL && words[i].word != NULL; i++)
    if (g_str_equal (words[i].word, word))
      return words[i].said;
  return otherwise;
}

/* Keeps @member of @changes only when it is one of @words: these go to the agent unwrapped, so
 * anything else (a browser that says more than it should) is dropped, not passed on. */
static void
keep_word (JsonObject *changes,
           const char *member,
           const Word *words)
{
  if (json_object_has_member (changes, member) &&
      said_for (words, chp_mcp_json_string (changes, member, NULL), NULL) == NULL)
    json_object_remove_member (changes, member);
}

/* Whether the agent has a snapshot of the very document the act is on, for a diff to compare with. */
static gboolean
act_document_known (ToolCall *call)
{
  g_autofree char *key = NULL;
  JsonObject *previous;

  if (call->document == NULL)
    return FALSE;
  key = chp_tool_frame_key (call, chp_mcp_json_int (call->document, "frameId", 0));
  previous = chp_tool_recall_object (call->context, key);
  return previous != NULL &&
         g_strcmp0 (chp_mcp_json_string (previous, "documentId", NULL),
                    chp_mcp_json_string (call->document, "documentId", "")) == 0;
}

/* Never after a fill or typing: a page that echoes what is typed (a preview, a strength meter
 * quoting it) would say the value back, and their results never do. */
static gboolean
act_may_show_diff (const char *action)
{
  return g_strcmp0 (action, "fill") != 0 && g_strcmp0 (action, "type") != 0;
}

/* Whether an act's result should show the page's diff: the page changed (elements or text),
 * did not start leaving, and the agent has a snapshot of this very document to compare with. */
static gboolean
act_diff_wanted (ToolCall   *call,
                 const char *action,
                 JsonObject *changes)
{
  if (changes == NULL || chp_mcp_json_bool (changes, "navigating") || !act_may_show_diff (action))
    return FALSE;
  if (chp_mcp_json_int (changes, "added", 0) == 0 &&
      chp_mcp_json_int (changes, "removed", 0) == 0 &&
      !chp_mcp_json_bool (changes, "textChanged"))
    return FALSE;
  return act_document_known (call);
}

/* The page read again after an act is formatted as a diff of the frame the ref was from, in the
 * worker like any snapshot (chp-tool-read.c). */
static gpointer
act_diff_prepare (ToolCall *call)
{
  gint64 frame = chp_mcp_json_int (call->document, "frameId", 0);

  return chp_tool_snapshot_job_new (call, frame, TRUE, 1, NULL, ACT_DIFF_MAX_CHARS);
}

static const ReplyFormat act_diff_reply = {
  .prepare = act_diff_prepare,
  .format = chp_tool_snapshot_format,
  .free = chp_tool_snapshot_job_free,
  .unshared = TRUE,
};

/* The act's own answer, when the page was asked to read itself again once the act settled: its
 * capture (the answer's context, when the page took one) is formatted as that diff would be. */
static gpointer
act_capture_prepare (ToolCall *call)
{
  return call->act_capture ? act_diff_prepare (call) : NULL;
}

static void
act_capture_format (gpointer  data,
                    JsonNode *answer)
{
  JsonObject *o = JSON_NODE_HOLDS_OBJECT (answer) ? json_node_get_object (answer) : NULL;
  JsonNode *context = o != NULL ? json_object_get_member (o, "context") : NULL;

  if (context != NULL && JSON_NODE_HOLDS_OBJECT (context))
    chp_tool_snapshot_format (data, context);
}

static const ReplyFormat act_reply = {
  .prepare = act_capture_prepare,
  .format = act_capture_format,
  .free = chp_tool_snapshot_job_free,
};

/* The act's result with the page read again after it (@answer: that capture, or %NULL when it
 * could not be read). The act is done whatever happens here: a page that cannot be read now
 * (gone, blind, the agent paused) leaves the act's result as it was, with the hint. */
static void
act_diff_show (GTask       *task,
               JsonObject  *answer,
               SnapshotJob *job)
{
  ToolCall *call = call_of (task);
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autoptr(GString) text = g_string_new (call->act_text);
  g_autoptr(ChpMcpSnapshot) snapshot = NULL;
  JsonObject *structured = g_steal_pointer (&call->act_structured);
  const char *capture_id = answer != NULL ? chp_mcp_json_string (answer, "captureId", "") : "";
  const char *url = answer != NULL ? chp_mcp_json_string (answer, "url", "") : "";
  gint64 document;

  /* The floor again on what the browser read: the act may have brought up a sign-in form,
   * which makes any page blind (whatever its URL). */
  if (answer == NULL || *capture_id == '\0' || engine == NULL ||
      chp_tool_capture_has_password (answer) ||
      (*url != '\0' && chp_tool_floor_level (chp_engine_get_floor (engine), url, FALSE, NULL) ==
                       CHP_FLOOR_BLIND))
    {
      g_string_append (text, ACT_SNAPSHOT_HINT);
      chp_tool_return_ok (task, text->str, structured, NULL);
      return;
    }

  snapshot = chp_tool_remember_snapshot (call, answer, job, &document);
  g_string_append (text, "\n\n");
  g_string_append (text, snapshot->text);
  json_object_set_object_member (structured, "page",
                                 json_object_ref (json_node_get_object (snapshot->structured)));
  chp_tool_return_ok (task, text->str, structured, NULL);
}

static void
act_diff_cb (GObject      *source,
             GAsyncResult *result,
             gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_tool_reply_finish (result, &error);

  act_diff_show (task, node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node)
                                                                     : NULL,
                 chp_tool_reply_get_data (result));
}

/* The page's own alert, confirm or prompt during the act (content/page-dialogs.js): said, with
 * how it was answered; its words, the page's, in the wrapper. structuredContent has the kinds and
 * the answers only. An agent's own act is never answered OK (only one the person approved is,
 * and its outcome goes to the hold). */
static void
act_dialogs (ToolCall   *call,
             JsonObject *answer,
             JsonObject *structured,
             GString    *text)
{
  static const char * const kinds[] = { "alert", "confirm", "prompt", NULL };
  static const char * const answers[] = { "cancel", "closed", NULL };
  JsonNode *node = json_object_get_member (answer, "dialogs");
  JsonArray *list = node != NULL && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
  g_autoptr(GString) words = g_string_new (NULL);
  JsonArray *said = json_array_new ();
  gboolean asked_cancel = FALSE;

  for (guint i = 0; list != NULL && i < json_array_get_length (list) && i < 3; i++)
    {
      JsonNode *one = json_array_get_element (list, i);
      JsonObject *d = JSON_NODE_HOLDS_OBJECT (one) ? json_node_get_object (one) : NULL;
      const char *kind = d != NULL ? chp_mcp_json_string (d, "kind", "") : "";
      const char *answered = d != NULL ? chp_mcp_json_string (d, "answered", "") : "";
      JsonObject *item;

      if (!g_strv_contains (kinds, kind) || !g_strv_contains (answers, answered))
        continue;
      asked_cancel |= g_str_equal (answered, "cancel");
      g_string_append_printf (words, "%s: %s\n", kind, chp_mcp_json_string (d, "message", ""));
      item = json_object_new ();
      json_object_set_string_member (item, "kind", kind);
      json_object_set_string_member (item, "answered", answered);
      json_array_add_object_element (said, item);
    }
  if (json_array_get_length (said) == 0)
    {
      json_array_unref (said);
      return;
    }
  json_object_set_array_member (structured, "dialogs", said);
  g_string_append_printf (text, " The page raised %u dialog(s) of its own during the act "
                          "(alert, confirm or prompt), which stop it until they are answered.",
                          json_array_get_length (said));
  if (asked_cancel)
    g_string_append (text, " Chaperone answered its question Cancel: a page's questions are the "
                           "person's, never an agent's. If it must go on, ask the person "
                           "(browser_handoff).");
  g_string_append (text, " Its words:\n");
  chp_mcp_format_add_untrusted (text, call->marker,
                                chp_mcp_json_string (call->document, "origin", "the page"),
                                words->str);
}

static void
acted_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ToolCall *call = call_of (task);
  g_autoptr(JsonObject) answer = chp_tool_browser_answer (task, source, result, "The action");
  g_autoptr(GString) text = NULL;
  g_autofree char *tab = NULL;
  const char *action = json_object_get_string_member (call->args, "action");
  JsonObject *structured;
  JsonObject *changes = NULL;
  static const struct
  {
    const char *action;
    const char *done;
  } words[] = {
    { "click", "Clicked" }, { "dblclick", "Double-clicked" }, { "focus", "Focused" },
    { "scroll", "Scrolled to" },
    { "fill", "Filled" }, { "hover", "Hovered over" }, { "press", "Pressed a key on" },
    { "type", "Typed into" }, { "drag", "Dragged" },
  };
  const char *done = "Acted on";
  g_autofree char *pressed = NULL;
  gboolean once = FALSE;

  if (answer == NULL)
    return;

  if (chp_mcp_json_bool (answer, "held"))
    {
      chp_tool_return_held (task, answer, action, chp_tool_reply_get_rule_run (result));
      return;
    }

  /* A double-click that went as one click (the control sends, deletes or writes, or the first
   * click changed it): said as what ran. */
  if (g_str_equal (action, "dblclick") &&
      g_strcmp0 (chp_mcp_json_string (answer, "action", NULL), "click") == 0)
    {
      action = "click";
      once = TRUE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (words); i++)
    if (g_str_equal (words[i].action, action))
      done = words[i].done;
  /* The key is the agent's own argument (KEY_PATTERN), never the page's words. */
  if (g_str_equal (action, "press"))
    done = pressed = g_strdup_printf ("Pressed %s on",
                                      json_object_get_string_member (call->args, "key"));

  tab = chp_tool_tab_name (call);
  structured = json_object_new ();
  json_object_set_boolean_member (structured, "ok",
                                  !json_object_has_member (answer, "done") ||
                                  chp_mcp_json_bool (answer, "done"));
  json_object_set_string_member (structured, "tab", tab);
  json_object_set_string_member (structured, "ref", call->ref);
  json_object_set_string_member (structured, "action", action);
  chp_tool_copy_typed (structured, answer, "changes", JSON_TYPE_OBJECT);
  if (json_object_has_member (structured, "changes"))
    {
      JsonObject *c = json_object_get_object_member (structured, "changes");

      keep_word (c, "reason", SETTLE_REASONS);
      keep_word (c, "by", SAVE_SIGNS);
    }
  /* Counts, yes/no and the two words above; any other string there would be the page's. */
  chp_mcp_format_mark_member (structured, "changes", call->marker, CHANGES_PLAIN);

  /* What changed, in numbers and yes/no, with the value an agent filled never said back; the
   * page's own words come after, from the diff (act_diff_wanted), in their wrapper. */
  text = g_string_new (NULL);
  if (g_str_equal (action, "drag"))
    g_string_append_printf (text, "%s %s onto %s on tab %s.", done, call->ref,
                            json_object_get_string_member (call->args, "to"), tab);
  else
    g_string_append_printf (text, "%s %s on tab %s.", done, call->ref, tab);
  if (once)
    g_string_append (text, " Once, not twice: a second click goes only to a control that sends, "
                           "deletes and writes nothing and that the first click left as it was.");
  if (json_object_has_member (structured, "changes"))
    {
      changes = json_object_get_object_member (structured, "changes");
      g_string_append_printf (text, " What changed: %" G_GINT64_FORMAT " element(s) added, %"
                              G_GINT64_FORMAT " removed; the URL %s; the title %s; the text %s.",
                              chp_mcp_json_int (changes, "added", 0),
                              chp_mcp_json_int (changes, "removed", 0),
                              chp_mcp_json_bool (changes, "urlChanged")
                              ? "changed" : "did not change",
                              chp_mcp_json_bool (changes, "titleChanged")
                              ? "changed" : "did not change",
                              chp_mcp_json_bool (changes, "textChanged")
                              ? "changed" : "did not change");
      /* An act capped before its own effects were over: the page may still be changing. */
      if (json_object_has_member (changes, "settled") && !chp_mcp_json_bool (changes, "settled") &&
          !chp_mcp_json_bool (changes, "navigating"))
        g_string_append_printf (text, " The page had not settled when this answered (%s); "
                                "look again before relying on it.",
                                said_for (SETTLE_REASONS,
                                          chp_mcp_json_string (changes, "reason", NULL),
                                          "it took too long"));
    }
  /* The page did not say it would take the drop there (no dragover cancelled): as a person's
   * drop there, nothing happened but the drag itself. */
  if (changes != NULL && json_object_has_member (changes, "dropped") &&
      !chp_mcp_json_bool (changes, "dropped"))
    g_string_append (text, " The page did not take the drop there.");
  /* A write that went through (a plan's): the page's own sign that it was saved, or none. */
  if (changes != NULL && json_object_has_member (changes, "verified"))
    {
      if (chp_mcp_json_bool (changes, "verified"))
        g_string_append_printf (text, " Saved, as the page showed (%s).",
                                said_for (SAVE_SIGNS, chp_mcp_json_string (changes, "by", NULL),
                                          "it changed"));
      else
        g_string_append (text, " Could not confirm that it was saved: no notice appeared, the "
                               "control stayed, the URL did not change and no list grew.");
    }
  chp_tool_plan_step_used (call, answer, structured, text);
  act_dialogs (call, answer, structured, text);

  /* The page changed in place: the result shows what changed, from the page's own read right
   * after the act when it took one, else from reading it again. */
  if (act_diff_wanted (call, action, changes))
    {
      gint64 frame = chp_mcp_json_int (call->document, "frameId", 0);
      JsonNode *context = json_object_get_member (answer, "context");
      SnapshotJob *job = chp_tool_reply_get_data (result);

      call->act_text = g_strdup (text->str);
      call->act_structured = structured;
      if (context != NULL && JSON_NODE_HOLDS_OBJECT (context) && job != NULL)
        {
          /* The page's read goes with the answer, once this returns: a burst of acts leaves
           * freed heap as a burst of snapshots does (chp-mcp-reply.c). */
          chp_memory_trim_soon ("an act's page read was released");
          act_diff_show (task, json_node_get_object (context), job);
          return;
        }
      chp_tool_browser_call_format (task, "browser.context",
                                    chp_tool_params_new ("tabId", chp_tool_int_node (call->tab_id),
                                                         "frameId", chp_tool_int_node (frame),
                                                         NULL),
                                    CONTEXT_TIMEOUT_MS, &act_diff_reply, act_diff_cb);
      return;
    }

  g_string_append (text, ACT_SNAPSHOT_HINT);
  chp_tool_return_ok (task, text->str, structured, NULL);
}

/* A drag's target (@to) is a ref of the very document its element (@ref, resolved) is from (the
 * number refs start with), sent as that capture's: the page drags within one document, as a
 * person's pointer does. */
static gboolean
resolve_drop (ToolCall    *call,
              const char  *ref,
              const char  *to,
              char       **wire_to)
{
  const char *colon = strchr (to, ':');

  if (colon == NULL || strchr (ref, ':') - ref != colon - to || strncmp (ref, to, colon - to) != 0)
    {
      chp_tool_return_error (call->task, "invalid_params",
                             "to must be a ref from the same snapshot as ref", NULL);
      return FALSE;
    }
  *wire_to = g_strdup_printf ("%s:%s",
                              json_object_get_string_member (call->document, "captureId"),
                              colon + 1);
  return TRUE;
}

/* A press or typing without a ref goes to the element that has focus in the tab's main document,
 * as the agent's latest snapshot of it knows that document: its capture, on the wire. */
static gboolean
resolve_focused (GTask  *task,
                 char  **capture_id)
{
  ToolCall *call = call_of (task);
  g_autofree char *frame_key = chp_tool_frame_key (call, 0);
  g_autofree char *doc_key = NULL;
  JsonObject *memory = chp_tool_recall_object (call->context, frame_key);
  JsonObject *doc;

  if (memory != NULL)
    {
      doc_key = chp_tool_document_key (chp_mcp_json_int (memory, "document", 0));
      doc = chp_tool_recall_object (call->context, doc_key);
      if (doc != NULL &&
          g_strcmp0 (chp_mcp_json_string (doc, "device", NULL), call->device_id) == 0 &&
          chp_mcp_json_int (doc, "tabId", -1) == call->tab_id &&
          chp_mcp_json_string (doc, "captureId", NULL) != NULL)
        {
          call->document = json_object_ref (doc);
          call->ref = g_strdup ("the focused element");
          *capture_id = g_strdup (json_object_get_string_member (doc, "captureId"));
          return TRUE;
        }
    }
  chp_tool_return_error (task, "stale_node", "Without a ref, press and type go to the focused "
                         "element of the page you last took a snapshot of: take browser_snapshot "
                         "of this tab first", NULL);
  return FALSE;
}

void
chp_tool_act (ToolCall *call)
{
  GTask *task = call->task;
  g_autofree char *wire_ref = NULL;
  g_autofree char *wire_to = NULL;
  g_autofree char *capture_id = NULL;
  const char *action = json_object_get_string_member (call->args, "action");
  const char *ref = chp_mcp_json_string (call->args, "ref", NULL);
  const char *to = chp_mcp_json_string (call->args, "to", NULL);
  JsonNode *params;
  JsonObject *o;
  JsonNode *allow;

  if (!chp_tool_resolve_tab (task, json_object_get_string_member (call->args, "tab")) ||
      !chp_tool_floor_allows (task, NULL, TRUE, FALSE))
    return;
  if (ref != NULL ? !chp_tool_resolve_ref (task, ref, &wire_ref)
                  : !resolve_focused (task, &capture_id))
    return;
  if (to != NULL && !resolve_drop (call, ref, to, &wire_to))
    return;

  params = chp_tool_params_new ("action",
                                chp_tool_string_node (g_str_equal (action, "fill") ? "setValue"
                                                                                   : action),
                                NULL);
  o = json_node_get_object (params);
  if (wire_ref != NULL)
    json_object_set_string_member (o, "ref", wire_ref);
  else
    json_object_set_string_member (o, "captureId", capture_id);
  if (g_str_equal (action, "fill"))
    json_object_set_string_member (o, "value", json_object_get_string_member (call->args, "value"));
  else if (g_str_equal (action, "press"))
    json_object_set_string_member (o, "key", json_object_get_string_member (call->args, "key"));
  else if (g_str_equal (action, "type"))
    json_object_set_string_member (o, "text", json_object_get_string_member (call->args, "text"));
  else if (wire_to != NULL)
    json_object_set_string_member (o, "to", wire_to);

  /* A key press may set off a write (Enter in a form whose button saves), and a drag (a card
   * moved to another column): a plan covers them as it covers the click. */
  allow = chp_tool_act_may_write (action) ? chp_tool_plan_allowance (call) : NULL;
  if (allow != NULL)
    json_object_set_member (json_node_get_object (params), "allow", allow);
  /* An act that may show the page's diff asks the page to read itself again once it settled,
   * which spares the result a second round trip to the browser. */
  call->act_capture = act_may_show_diff (action) && act_document_known (call);
  if (call->act_capture)
    json_object_set_boolean_member (o, "capture", TRUE);

  chp_tool_browser_call_format (task, "browser.node.action", params, NODE_TIMEOUT_MS, &act_reply,
                                acted_cb);
}
