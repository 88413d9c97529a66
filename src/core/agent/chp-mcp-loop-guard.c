/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-loop-guard.c: an agent that repeats itself is paused, as the person's Pause would pause
 * it, before the repetition does harm; only the person resumes it. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

/* Where the guard keeps what it saw, on the agent's context. */
#define LOOP_KEY               "loop-guard"

/* Acts only: reading the same page twice harms nobody, doing the same thing twice may. A batch
 * is one act per call: the same steps with the same params (or recipe) make the same act. */
static gboolean
is_guarded (ToolCall *call)
{
  return g_str_equal (call->spec->name, "browser_act") ||
         g_str_equal (call->spec->name, "browser_navigate") ||
         g_str_equal (call->spec->name, "browser_batch");
}

/* A hash of @member of the arguments as JSON: what it holds may be a secret. */
static guint
hash_member (ToolCall   *call,
             const char *member)
{
  JsonNode *node = json_object_get_member (call->args, member);
  g_autofree char *json = node != NULL ? json_to_string (node, FALSE) : NULL;

  return g_str_hash (json != NULL ? json : "");
}

/* Kept on the context object, not in its memory: that memory forgets its oldest entry after 32
 * snapshots or recipes, and the counts must outlive them. */
static JsonObject *
loop_memory (ToolCall *call)
{
  JsonObject *memory = g_object_get_data (G_OBJECT (call->context), LOOP_KEY);

  if (memory == NULL)
    {
      memory = json_object_new ();
      g_object_set_data_full (G_OBJECT (call->context), LOOP_KEY, memory,
                              (GDestroyNotify) json_object_unref);
    }
  return memory;
}

/* Pauses the agent's session as the person's Pause would, and asks the person about it. */
static void
loop_pause (ToolCall   *call,
            const char *why)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  ChpAgentSession *agent;

  /* What tripped the guard is forgotten: after the person's Resume the agent starts afresh. */
  g_object_set_data (G_OBJECT (call->context), LOOP_KEY, NULL);
  call->guard_paused = TRUE;
  if (engine == NULL)
    return;
  agent = chp_agent_session_list_lookup (chp_engine_get_agent_sessions (engine),
                                         chp_mcp_context_get_session_id (call->context));
  if (agent != NULL)
    chp_agent_session_pause_for (agent, why);
}

/* Whether @key (browser_act press) only moves: the focus, a selection, a caret or a slider's
 * thumb, never what a control does. Modifiers other than Shift (Shift+Tab) make a shortcut. */
static gboolean
is_move_key (const char *key)
{
  static const char * const moves[] = {
    "ArrowUp", "ArrowDown", "ArrowLeft", "ArrowRight", "Up", "Down", "Left", "Right", "Tab",
    "PageUp", "PageDown", "Home", "End", NULL,
  };

  if (g_str_has_prefix (key, "Shift+"))
    key += sizeof "Shift+" - 1;
  return g_strv_contains (moves, key);
}

/* Before an act: the same act on the same target LOOP_REPEATS times in a row is not sent (a key
 * that only moves, LOOP_MOVE_REPEATS times). */
gboolean
chp_tool_loop_guard_enter (ToolCall *call)
{
  JsonObject *memory;
  const char *press;
  g_autofree char *key = NULL;
  g_autofree char *message = NULL;
  gint64 repeats;
  gint64 allowed;

  if (!is_guarded (call))
    return TRUE;

  /* What is filled or typed is hashed, not kept: it may be a secret. A press of another key is
   * another act, and a drag onto another target. */
  press = chp_mcp_json_string (call->args, "key", "");
  key = g_strdup_printf ("%s|%s|%s|%s|%s|%s|%s|%u|%u|%u|%u|%s", call->spec->name,
                         chp_mcp_json_string (call->args, "tab", ""),
                         chp_mcp_json_string (call->args, "ref", ""),
                         chp_mcp_json_string (call->args, "to", ""),
                         chp_mcp_json_string (call->args, "url", ""),
                         chp_mcp_json_string (call->args, "action", ""), press,
                         g_str_hash (chp_mcp_json_string (call->args, "value", "")),
                         g_str_hash (chp_mcp_json_string (call->args, "text", "")),
                         hash_member (call, "steps"), hash_member (call, "params"),
                         chp_mcp_json_string (call->args, "recipe", ""));
  memory = loop_memory (call);
  repeats = g_strcmp0 (chp_mcp_json_string (memory, "key", NULL), key) == 0
            ? chp_mcp_json_int (memory, "repeats", 0) + 1 : 1;
  json_object_set_string_member (memory, "key", key);
  json_object_set_int_member (memory, "repeats", repeats);
  allowed = g_strcmp0 (chp_mcp_json_string (call->args, "action", ""), "press") == 0 &&
            is_move_key (press) ? LOOP_MOVE_REPEATS : LOOP_REPEATS;
  if (repeats < allowed)
    return TRUE;

  loop_pause (call, "repeated");
  message = g_strdup_printf ("Paused by Chaperone: you asked for exactly this act on this target "
                             "%" G_GINT64_FORMAT " times in a row; this one was not done. The "
                             "person must resume you in the Chaperone app; meanwhile every call "
                             "answers paused. When resumed, try another way or ask the person.",
                             repeats);
  chp_tool_return_error (call->task, "paused", message, NULL);
  return FALSE;
}

/* After an act: LOOP_FAILURES failures in a row on one tab pause the agent. Returns TRUE when
 * this failure did, and the answer must say so instead. */
gboolean
chp_tool_loop_guard_failed (ToolCall   *call,
                            const char *code)
{
  static const char * const not_failures[] = { "paused", "stopped", "cancelled", NULL };
  const char *tab = chp_mcp_json_string (call->args, "tab", "");
  JsonObject *memory;
  gint64 failures;

  /* A batch that halted answers with what it did, not an error: chp-tool-batch.c says how. */
  if (code == NULL && call->task != NULL)
    code = g_object_get_data (G_OBJECT (call->task), CHP_LOOP_FAILURE_KEY);
  if (!is_guarded (call) || g_strv_contains (not_failures, code != NULL ? code : ""))
    return FALSE;

  memory = loop_memory (call);
  if (code == NULL)
    {
      json_object_set_int_member (memory, "failures", 0);
      return FALSE;
    }
  failures = g_strcmp0 (chp_mcp_json_string (memory, "failedTab", NULL), tab) == 0
             ? chp_mcp_json_int (memory, "failures", 0) + 1 : 1;
  json_object_set_string_member (memory, "failedTab", tab);
  json_object_set_int_member (memory, "failures", failures);
  if (failures < LOOP_FAILURES)
    return FALSE;

  loop_pause (call, "failing");
  return TRUE;
}
