/* chp-agent-session-list.c: a short list (a person runs a handful of agents) in connection order,
 * with lookups by id. A session's own properties change in place; the list only changes when a
 * session comes or goes. */
#include "config.h"

#include "chp-agent-session-list.h"

struct _ChpAgentSessionList
{
  ChpObjectList parent_instance;
};

G_DEFINE_FINAL_TYPE (ChpAgentSessionList, chp_agent_session_list, CHP_TYPE_OBJECT_LIST)

static void
chp_agent_session_list_class_init (ChpAgentSessionListClass *klass)
{
  CHP_OBJECT_LIST_CLASS (klass)->item_type = CHP_TYPE_AGENT_SESSION;
}

static void
chp_agent_session_list_init (ChpAgentSessionList *self)
{
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
 * reconnected under the id it had). */
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
  if (listed == NULL)
    chp_object_list_append (list, session);
  else if (listed != session)
    chp_object_list_splice (list, index, 1, (gpointer *) &session, 1);
}

/* Returns: whether a session of that id was listed */
gboolean
chp_agent_session_list_remove (ChpAgentSessionList *self,
                               const char          *id)
{
  guint index;

  g_return_val_if_fail (CHP_IS_AGENT_SESSION_LIST (self), FALSE);

  if (chp_object_list_find (CHP_OBJECT_LIST (self), has_id, id, &index) == NULL)
    return FALSE;

  chp_object_list_remove_at (CHP_OBJECT_LIST (self), index);
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
