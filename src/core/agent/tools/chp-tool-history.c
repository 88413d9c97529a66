/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-history.c: browser_history: an agent's own earlier sessions on a site, from the trace
 * store (chp-store-traces.h), so it does not learn a site again each time. Only that agent's
 * (by the name its client gave), never the one open now, bounded, and masked as the trace is:
 * tools, paths, elements and outcomes, never a value. The paths and element names came from
 * pages: they go inside the untrusted wrapper. No browser is asked. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

#include "chp-store-traces.h"

#include <string.h>

#define HISTORY_SESSIONS 3
#define HISTORY_STEPS    40
#define NAME_CHARS       80

typedef struct
{
  GTask     *task;       /* a reference */
  char      *site;
  char      *skip;       /* the agent's trace open now */
  GPtrArray *sessions;   /* ChpTraceSession, newest first */
  guint      next;
  GString   *lines;      /* the wrapped part */
  guint      shown;
} History;

static void
history_free (History *history)
{
  g_clear_object (&history->task);
  g_free (history->site);
  g_free (history->skip);
  g_clear_pointer (&history->sessions, g_ptr_array_unref);
  if (history->lines != NULL)
    g_string_free (history->lines, TRUE);
  g_free (history);
}

/* A host as the trace keeps it: lowercase letters, digits, dots, dashes, a port. */
static char *
site_of (const char *text)
{
  g_autofree char *site = g_ascii_strdown (text, -1);

  for (const char *p = site; *p != '\0'; p++)
    if (!g_ascii_isalnum (*p) && *p != '.' && *p != '-' && *p != ':')
      return NULL;
  return g_steal_pointer (&site);
}

/* The act a step was, from its masked arguments: only a word of ours. */
static char *
action_of (const char *args)
{
  g_autoptr(JsonNode) node = args != NULL ? json_from_string (args, NULL) : NULL;
  const char *action;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return NULL;
  action = chp_mcp_json_string (json_node_get_object (node), "action", NULL);
  return action != NULL && chp_tool_is_plain_id (action) ? g_strdup (action) : NULL;
}

static void
add_steps (History   *history,
           GPtrArray *steps)
{
  for (guint i = 0; steps != NULL && i < steps->len; i++)
    {
      ChpTraceStep *step = g_ptr_array_index (steps, i);
      g_autofree char *action = action_of (step->args);
      g_autofree char *name = step->name != NULL ? chp_mcp_format_line (step->name, NAME_CHARS)
                                                 : NULL;
      g_autofree char *path = step->path != NULL ? chp_mcp_format_line (step->path, NAME_CHARS)
                                                 : NULL;

      g_string_append_printf (history->lines, "%u. %s", step->seq, step->tool);
      if (action != NULL)
        g_string_append_printf (history->lines, " %s", action);
      if (step->role != NULL && chp_tool_is_plain_id (step->role))
        g_string_append_printf (history->lines, " %s", step->role);
      if (name != NULL && *name != '\0')
        g_string_append_printf (history->lines, " \"%s\"", name);
      if (path != NULL && *path != '\0')
        g_string_append_printf (history->lines, " on %s", path);
      g_string_append_printf (history->lines, ": %s", step->outcome != NULL ? step->outcome : "?");
      if (step->error_code != NULL)
        g_string_append_printf (history->lines, " (%s)", step->error_code);
      if (step->retry > 0)
        g_string_append_printf (history->lines, ", try %u", step->retry + 1);
      if (step->decision != NULL)
        g_string_append_printf (history->lines, "; the person: %s", step->decision);
      g_string_append_c (history->lines, '\n');
    }
}

static void history_next (History *history);

static void
steps_loaded_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  History *history = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) steps = chp_store_load_trace_steps_finish (CHP_STORE (source), result,
                                                                   &error);

  if (error != NULL)
    g_debug ("agents: a past session's steps could not be read: %s", error->message);
  add_steps (history, steps);
  history_next (history);
}

/* Answers the call, and the history is done with. */
static void
history_answer (History *history)
{
  g_autoptr(GString) text = g_string_new (NULL);
  JsonObject *structured = json_object_new ();
  ToolCall *call = call_of (history->task);

  json_object_set_int_member (structured, "sessions", history->shown);
  if (history->shown == 0)
    {
      g_string_append_printf (text, "You have no earlier sessions on %s in Chaperone's trace "
                              "(the person may have forgotten them, or turned them off).",
                              history->site);
      chp_tool_return_ok (history->task, text->str, structured, NULL);
      history_free (history);
      return;
    }
  g_string_append_printf (text, "Your %u earlier session(s) on %s, newest first, from "
                          "Chaperone's trace (what you typed is never kept). Each step: tool, "
                          "act, element, page, outcome.\n\n", history->shown, history->site);
  chp_mcp_format_add_untrusted (text, call->marker, history->site, history->lines->str);
  chp_tool_return_ok (history->task, text->str, structured,
                      "Take browser_snapshot of the site to see it as it is now.");
  history_free (history);
}

static void
history_next (History *history)
{
  g_autoptr(ChpEngine) engine = NULL;
  ToolCall *call = call_of (history->task);
  ChpTraceSession *session;
  g_autoptr(GDateTime) when = NULL;
  g_autofree char *date = NULL;

  if (history->next >= history->sessions->len || history->shown >= HISTORY_SESSIONS)
    {
      history_answer (history);
      return;
    }
  session = g_ptr_array_index (history->sessions, history->next++);
  if (g_strcmp0 (session->id, history->skip) == 0)
    {
      history_next (history);
      return;
    }
  engine = g_weak_ref_get (&call->self->engine);
  if (engine == NULL)
    {
      history_answer (history);
      return;
    }
  history->shown++;
  when = g_date_time_new_from_unix_utc (session->started_at / G_USEC_PER_SEC);
  date = when != NULL ? g_date_time_format (when, "%Y-%m-%d %H:%M UTC") : g_strdup ("?");
  g_string_append_printf (history->lines, "%sSession of %s, %u step(s), %s:\n",
                          history->shown > 1 ? "\n" : "", date, session->n_steps,
                          session->outcome != NULL ? session->outcome : "still open");
  chp_store_load_trace_steps_async (chp_engine_get_store (engine), session->id, 0, HISTORY_STEPS,
                                    g_task_get_cancellable (history->task), steps_loaded_cb,
                                    history);
}

static void
sessions_listed_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  History *history = user_data;
  g_autoptr(GError) error = NULL;

  history->sessions = chp_store_list_traces_finish (CHP_STORE (source), result, &error);
  if (history->sessions == NULL)
    {
      chp_tool_return_error (history->task, "internal", "Chaperone's trace could not be read",
                             NULL);
      history_free (history);
      return;
    }
  history_next (history);
}

void
chp_tool_history (ToolCall *call)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  g_autoptr(ChpTraceQuery) query = chp_trace_query_new ();
  g_autofree char *site = site_of (json_object_get_string_member (call->args, "site"));
  const char *session_id = chp_mcp_context_get_session_id (call->context);
  ChpAgentSession *agent;
  ChpTraceRecorder *traces;
  History *history;

  if (engine == NULL || (traces = chp_engine_get_traces (engine)) == NULL)
    {
      chp_tool_return_error (call->task, "internal", "Chaperone is not running", NULL);
      return;
    }
  if (site == NULL)
    {
      chp_tool_return_error (call->task, "invalid_params", "site is a host, e.g. shop.example",
                             NULL);
      return;
    }
  /* Sessions are the agent's own by the name its client gave: another client's are not listed. */
  agent = session_id != NULL
          ? chp_agent_session_list_lookup (chp_engine_get_agent_sessions (engine), session_id)
          : NULL;
  query->agent = g_strdup (agent != NULL && chp_agent_session_get_client_name (agent) != NULL
                           ? chp_agent_session_get_client_name (agent) : "agent");
  query->site = g_strdup (site);

  history = g_new0 (History, 1);
  history->task = g_object_ref (call->task);
  history->site = g_steal_pointer (&site);
  history->skip = g_strdup (chp_trace_recorder_trace_of (traces, session_id));
  history->lines = g_string_new (NULL);
  chp_store_list_traces_async (chp_engine_get_store (engine), query, 0, HISTORY_SESSIONS + 1,
                               g_task_get_cancellable (call->task), sessions_listed_cb, history);
}
