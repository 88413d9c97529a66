/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-agent-session-list.c: a short list (a person runs a handful of agents) in connection order,
 * with lookups by id. A session's own properties change in place; the list only changes when a
 * session comes or goes.
 *
 * The agents' pauses live here too, because a pause must outlive the connection it was made on:
 * an agent told "paused" could otherwise open a new MCP session and carry on. A pause records
 * what tells the agent apart — its client names and its processes (ChpAgentSession:client-key
 * and :process-key) — and holds every listed session that shares one of them, connected then or
 * later, until the person resumes one of them. A session that joins a pause brings its own name
 * and process into it, so an agent that changes one of the two at a time is still held. Pauses
 * are kept in memory for the app's lifetime: quitting the app ends every session anyway. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-agents"

#include "chp-agent-session-list.h"

/* Names and processes one pause keeps. An agent that reconnects under a new name each time is
 * held by its process all the same; this only bounds what such an agent costs in memory. */
#define MAX_PAUSE_KEYS 64

typedef struct
{
  GPtrArray *names;       /* char *: client keys */
  GPtrArray *processes;   /* char *: process keys */
  char *why;              /* the loop guard's reason; NULL when the person paused the agent */
} Pause;

struct _ChpAgentSessionList
{
  ChpObjectList parent_instance;

  GPtrArray *pauses;      /* Pause *, oldest first, each until the person resumes its agent */
  GListStore *attention;  /* ChpAgentSession: one per agent the loop guard paused */
};

G_DEFINE_FINAL_TYPE (ChpAgentSessionList, chp_agent_session_list, CHP_TYPE_OBJECT_LIST)

/* ---- Pauses ---------------------------------------------------------------------------- */

static Pause *
pause_new (const char *why)
{
  Pause *pause = g_new0 (Pause, 1);

  pause->names = g_ptr_array_new_with_free_func (g_free);
  pause->processes = g_ptr_array_new_with_free_func (g_free);
  pause->why = g_strdup (why);
  return pause;
}

static void
pause_free (Pause *pause)
{
  g_ptr_array_unref (pause->names);
  g_ptr_array_unref (pause->processes);
  g_free (pause->why);
  g_free (pause);
}

static gboolean
has_key (GPtrArray  *keys,
         const char *key)
{
  return key != NULL && g_ptr_array_find_with_equal_func (keys, key, g_str_equal, NULL);
}

static void
add_key (GPtrArray  *keys,
         const char *key)
{
  if (key != NULL && keys->len < MAX_PAUSE_KEYS && !has_key (keys, key))
    g_ptr_array_add (keys, g_strdup (key));
}

/* Whether @pause holds @session: the same client name, or the same agent process. */
static gboolean
pause_holds (Pause           *pause,
             ChpAgentSession *session)
{
  return has_key (pause->names, chp_agent_session_get_client_key (session)) ||
         has_key (pause->processes, chp_agent_session_get_process_key (session));
}

/* Returns: (nullable): the pause that holds @session. A session that two pauses hold (one by its
 * name, one by its process) makes them one: from then on they are one agent's, and one Resume
 * lifts both. */
static Pause *
pause_of (ChpAgentSessionList *self,
          ChpAgentSession     *session)
{
  Pause *first = NULL;

  for (guint i = 0; i < self->pauses->len;)
    {
      Pause *pause = g_ptr_array_index (self->pauses, i);

      if (!pause_holds (pause, session))
        i++;
      else if (first == NULL)
        {
          first = pause;
          i++;
        }
      else
        {
          for (guint j = 0; j < pause->names->len; j++)
            add_key (first->names, g_ptr_array_index (pause->names, j));
          for (guint j = 0; j < pause->processes->len; j++)
            add_key (first->processes, g_ptr_array_index (pause->processes, j));
          if (first->why == NULL)
            first->why = g_steal_pointer (&pause->why);
          g_ptr_array_remove_index (self->pauses, i);
        }
    }

  return first;
}

/* Returns: (transfer none) (nullable): a running session, other than @session, that @session's
 * pause holds */
static ChpAgentSession *
next_held (ChpAgentSessionList *self,
           ChpAgentSession     *session)
{
  ChpObjectList *list = CHP_OBJECT_LIST (self);
  Pause *pause = pause_of (self, session);

  for (guint i = 0; pause != NULL && i < chp_object_list_get_len (list); i++)
    {
      ChpAgentSession *other = chp_object_list_get_item_at (list, i);

      if (other != session && chp_agent_session_get_state (other) == CHP_AGENT_SESSION_RUNNING &&
          pause_holds (pause, other))
        return other;
    }

  return NULL;
}

/* Brings @session under its agent's pause (or makes one, when the session itself was just
 * paused), and from there every other session of the same agent. */
static void
settle (ChpAgentSessionList *self,
        ChpAgentSession     *session)
{
  ChpAgentSessionState state = chp_agent_session_get_state (session);
  ChpAgentSession *other;
  Pause *pause;

  if (state == CHP_AGENT_SESSION_DISCONNECTED)
    return;

  pause = pause_of (self, session);
  if (pause == NULL)
    {
      /* A session of no paused agent; or a paused one that nothing could recognise again (no
       * name yet, no process): then its pause is its own, as it always was. */
      if (state != CHP_AGENT_SESSION_PAUSED ||
          (chp_agent_session_get_client_key (session) == NULL &&
           chp_agent_session_get_process_key (session) == NULL))
        return;
      pause = pause_new (chp_agent_session_get_attention (session));
      g_ptr_array_add (self->pauses, pause);
    }
  add_key (pause->names, chp_agent_session_get_client_key (session));
  add_key (pause->processes, chp_agent_session_get_process_key (session));

  if (state == CHP_AGENT_SESSION_RUNNING)
    {
      /* Its "requested" brings it back here, paused, to spread the pause further. */
      g_message ("agents: %s is paused: its agent was paused in another session",
                 chp_agent_session_get_id (session));
      chp_agent_session_pause_with_agent (session, pause->why);
      return;
    }

  /* Looked for again after each: pausing a session runs its handlers, which may merge pauses
   * or change the list. Each round pauses one, so this ends. */
  while ((other = next_held (self, session)) != NULL)
    {
      g_message ("agents: %s is paused with %s: the same agent",
                 chp_agent_session_get_id (other), chp_agent_session_get_id (session));
      chp_agent_session_pause_with_agent (other, pause_of (self, session)->why);
    }
}

/* The person resumed @session: its agent's pause is over, for every session it held. */
static void
lift (ChpAgentSessionList *self,
      ChpAgentSession     *session)
{
  g_autoptr(GPtrArray) held = g_ptr_array_new_with_free_func (g_object_unref);
  ChpObjectList *list = CHP_OBJECT_LIST (self);
  Pause *pause = pause_of (self, session);

  if (pause == NULL)
    return;

  for (guint i = 0; i < chp_object_list_get_len (list); i++)
    {
      ChpAgentSession *other = chp_object_list_get_item_at (list, i);

      if (other != session && pause_holds (pause, other))
        g_ptr_array_add (held, g_object_ref (other));
    }
  g_ptr_array_remove (self->pauses, pause);

  for (guint i = 0; i < held->len; i++)
    chp_agent_session_request_resume (g_ptr_array_index (held, i));
}

static gboolean
model_has_at (GListModel *model,
              guint       position,
              gpointer    item)
{
  g_autoptr(GObject) at = g_list_model_get_item (model, position);

  return at == item;
}

/* One card per agent the loop guard paused, however many sessions it has: its first paused
 * session in the list speaks for it. Sessions whose pause nothing can recognise are their own
 * agents. The store changes in one splice, and only where it differs: cards that stay are not
 * made anew, and a card handed to the agent's next session never makes the count dip (a window
 * turns to Needs you when it grows). */
static void
update_attention (ChpAgentSessionList *self)
{
  g_autoptr(GPtrArray) want = g_ptr_array_new ();
  g_autoptr(GPtrArray) shown = g_ptr_array_new ();
  ChpObjectList *list = CHP_OBJECT_LIST (self);
  GListModel *model = G_LIST_MODEL (self->attention);
  guint n = g_list_model_get_n_items (model);
  guint prefix = 0;
  guint suffix = 0;

  for (guint i = 0; i < chp_object_list_get_len (list); i++)
    {
      ChpAgentSession *session = chp_object_list_get_item_at (list, i);
      Pause *pause;

      if (chp_agent_session_get_attention (session) == NULL ||
          chp_agent_session_get_state (session) != CHP_AGENT_SESSION_PAUSED)
        continue;
      pause = pause_of (self, session);
      if (pause != NULL && g_ptr_array_find (shown, pause, NULL))
        continue;
      if (pause != NULL)
        g_ptr_array_add (shown, pause);
      g_ptr_array_add (want, session);
    }

  while (prefix < n && prefix < want->len &&
         model_has_at (model, prefix, g_ptr_array_index (want, prefix)))
    prefix++;
  while (suffix < n - prefix && suffix < want->len - prefix &&
         model_has_at (model, n - 1 - suffix, g_ptr_array_index (want, want->len - 1 - suffix)))
    suffix++;
  if (prefix + suffix == n && n == want->len)
    return;

  g_list_store_splice (self->attention, prefix, n - prefix - suffix, want->pdata + prefix,
                       want->len - prefix - suffix);
}

/* ---- Watching the sessions ------------------------------------------------------------- */

static void
session_requested_cb (ChpAgentSession      *session,
                      ChpAgentSessionState  state,
                      ChpAgentSessionList  *self)
{
  if (state == CHP_AGENT_SESSION_PAUSED)
    settle (self, session);
  else if (state == CHP_AGENT_SESSION_RUNNING)
    lift (self, session);
  update_attention (self);
}

/* A name (at initialize) or a process that says which agent this is: it may be a paused one. */
static void
session_identified_cb (ChpAgentSession     *session,
                       GParamSpec          *pspec,
                       ChpAgentSessionList *self)
{
  settle (self, session);
  update_attention (self);
}

static void
session_changed_cb (ChpAgentSession     *session,
                    GParamSpec          *pspec,
                    ChpAgentSessionList *self)
{
  update_attention (self);
}

static void
watch (ChpAgentSessionList *self,
       ChpAgentSession     *session)
{
  g_signal_connect (session, "requested", G_CALLBACK (session_requested_cb), self);
  g_signal_connect (session, "notify::client-key", G_CALLBACK (session_identified_cb), self);
  g_signal_connect (session, "notify::process-key", G_CALLBACK (session_identified_cb), self);
  g_signal_connect (session, "notify::attention", G_CALLBACK (session_changed_cb), self);
  g_signal_connect (session, "notify::state", G_CALLBACK (session_changed_cb), self);
}

static void
unwatch (ChpAgentSessionList *self,
         ChpAgentSession     *session)
{
  g_signal_handlers_disconnect_by_data (session, self);
}

/* ---- The object ------------------------------------------------------------------------ */

static void
chp_agent_session_list_dispose (GObject *object)
{
  ChpAgentSessionList *self = CHP_AGENT_SESSION_LIST (object);
  ChpObjectList *list = CHP_OBJECT_LIST (self);

  for (guint i = 0; i < chp_object_list_get_len (list); i++)
    unwatch (self, chp_object_list_get_item_at (list, i));
  if (self->attention != NULL)
    g_list_store_remove_all (self->attention);

  G_OBJECT_CLASS (chp_agent_session_list_parent_class)->dispose (object);
}

static void
chp_agent_session_list_finalize (GObject *object)
{
  ChpAgentSessionList *self = CHP_AGENT_SESSION_LIST (object);

  g_clear_pointer (&self->pauses, g_ptr_array_unref);
  g_clear_object (&self->attention);

  G_OBJECT_CLASS (chp_agent_session_list_parent_class)->finalize (object);
}

static void
chp_agent_session_list_class_init (ChpAgentSessionListClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = chp_agent_session_list_dispose;
  object_class->finalize = chp_agent_session_list_finalize;

  CHP_OBJECT_LIST_CLASS (klass)->item_type = CHP_TYPE_AGENT_SESSION;
}

static void
chp_agent_session_list_init (ChpAgentSessionList *self)
{
  self->pauses = g_ptr_array_new_with_free_func ((GDestroyNotify) pause_free);
  self->attention = g_list_store_new (CHP_TYPE_AGENT_SESSION);
}

ChpAgentSessionList *
chp_agent_session_list_new (void)
{
  return g_object_new (CHP_TYPE_AGENT_SESSION_LIST, NULL);
}

static gboolean
has_id (gpointer      item,
        gconstpointer id)
{
  return g_strcmp0 (chp_agent_session_get_id (item), id) == 0;
}

/* Adds @session at the end; a session with the same id is replaced in place (an agent that
 * reconnected under the id it had). A session of an agent that is paused is paused at once. */
void
chp_agent_session_list_add (ChpAgentSessionList *self,
                            ChpAgentSession     *session)
{
  ChpObjectList *list;
  ChpAgentSession *listed;
  guint index;

  g_return_if_fail (CHP_IS_AGENT_SESSION_LIST (self));
  g_return_if_fail (CHP_IS_AGENT_SESSION (session));

  list = CHP_OBJECT_LIST (self);
  listed = chp_object_list_find (list, has_id, chp_agent_session_get_id (session), &index);
  if (listed == session)
    return;

  if (listed == NULL)
    chp_object_list_append (list, session);
  else
    {
      unwatch (self, listed);
      chp_object_list_splice (list, index, 1, (gpointer *) &session, 1);
    }
  watch (self, session);
  settle (self, session);
  update_attention (self);
}

/* Returns: whether a session of that id was listed. Its agent's pause, if any, stays. */
gboolean
chp_agent_session_list_remove (ChpAgentSessionList *self,
                               const char          *id)
{
  ChpAgentSession *listed;
  guint index;

  g_return_val_if_fail (CHP_IS_AGENT_SESSION_LIST (self), FALSE);

  listed = chp_object_list_find (CHP_OBJECT_LIST (self), has_id, id, &index);
  if (listed == NULL)
    return FALSE;

  unwatch (self, listed);
  chp_object_list_remove_at (CHP_OBJECT_LIST (self), index);
  update_attention (self);
  return TRUE;
}

/* Returns: (transfer none) (nullable) */
ChpAgentSession *
chp_agent_session_list_lookup (ChpAgentSessionList *self,
                               const char          *id)
{
  g_return_val_if_fail (CHP_IS_AGENT_SESSION_LIST (self), NULL);

  return id != NULL ? chp_object_list_find (CHP_OBJECT_LIST (self), has_id, id, NULL) : NULL;
}

/* One call of session @id ended: counted, and its error code (%NULL when it succeeded) kept as
 * the last error only when there was one, so the person still sees what last went wrong. */
void
chp_agent_session_list_record_call (ChpAgentSessionList *self,
                                    const char          *id,
                                    const char          *error_code)
{
  ChpAgentSession *session;

  g_return_if_fail (CHP_IS_AGENT_SESSION_LIST (self));

  session = chp_agent_session_list_lookup (self, id);
  if (session == NULL)
    return;

  chp_agent_session_add_call (session);
  if (error_code != NULL)
    chp_agent_session_set_last_error (session, error_code);
}

guint
chp_agent_session_list_count_state (ChpAgentSessionList  *self,
                                    ChpAgentSessionState  state)
{
  ChpObjectList *list;
  guint n = 0;

  g_return_val_if_fail (CHP_IS_AGENT_SESSION_LIST (self), 0);

  list = CHP_OBJECT_LIST (self);
  for (guint i = 0; i < chp_object_list_get_len (list); i++)
    if (chp_agent_session_get_state (chp_object_list_get_item_at (list, i)) == state)
      n++;

  return n;
}

/**
 * chp_agent_session_list_get_attention:
 *
 * The agents the loop guard paused, for the person's Needs you: one session for each agent (the
 * first of its sessions listed), whatever the number of sessions its pause holds.
 *
 * Returns: (transfer none): a #GListModel of #ChpAgentSession
 */
GListModel *
chp_agent_session_list_get_attention (ChpAgentSessionList *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_SESSION_LIST (self), NULL);

  return G_LIST_MODEL (self->attention);
}

/**
 * chp_agent_session_list_disconnect_agent:
 * @session: a listed session
 *
 * The person's Disconnect on a paused agent's card: every session of that agent is closed. Its
 * pause stays: an agent that comes back is held until the person resumes it.
 */
void
chp_agent_session_list_disconnect_agent (ChpAgentSessionList *self,
                                         ChpAgentSession     *session)
{
  g_autoptr(GPtrArray) held = g_ptr_array_new_with_free_func (g_object_unref);
  ChpObjectList *list;
  Pause *pause;

  g_return_if_fail (CHP_IS_AGENT_SESSION_LIST (self));
  g_return_if_fail (CHP_IS_AGENT_SESSION (session));

  list = CHP_OBJECT_LIST (self);
  pause = pause_of (self, session);
  g_ptr_array_add (held, g_object_ref (session));
  for (guint i = 0; pause != NULL && i < chp_object_list_get_len (list); i++)
    {
      ChpAgentSession *other = chp_object_list_get_item_at (list, i);

      if (other != session && pause_holds (pause, other))
        g_ptr_array_add (held, g_object_ref (other));
    }

  /* Closing a session takes it out of the list at once: the list is read whole first. */
  for (guint i = 0; i < held->len; i++)
    chp_agent_session_request_disconnect (g_ptr_array_index (held, i));
}
