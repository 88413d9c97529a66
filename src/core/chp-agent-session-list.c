/* chp-agent-session-list.c: a short list (a person runs a handful of agents) in connection order,
 * with lookups by id. A session's own properties change in place; the list only changes when a
 * session comes or goes. */
#include "config.h"

#include "chp-agent-session-list.h"

struct _ChpAgentSessionList
{
  GObject parent_instance;

  GPtrArray *sessions;
};

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (ChpAgentSessionList, chp_agent_session_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static GType
get_item_type (GListModel *model)
{
  return CHP_TYPE_AGENT_SESSION;
}

static guint
get_n_items (GListModel *model)
{
  return CHP_AGENT_SESSION_LIST (model)->sessions->len;
}

static gpointer
get_item (GListModel *model,
          guint       position)
{
  ChpAgentSessionList *self = CHP_AGENT_SESSION_LIST (model);

  if (position >= self->sessions->len)
    return NULL;

  return g_object_ref (g_ptr_array_index (self->sessions, position));
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

static void
chp_agent_session_list_finalize (GObject *object)
{
  g_clear_pointer (&CHP_AGENT_SESSION_LIST (object)->sessions, g_ptr_array_unref);

  G_OBJECT_CLASS (chp_agent_session_list_parent_class)->finalize (object);
}

static void
chp_agent_session_list_class_init (ChpAgentSessionListClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_agent_session_list_finalize;
}

static void
chp_agent_session_list_init (ChpAgentSessionList *self)
{
  self->sessions = g_ptr_array_new_with_free_func (g_object_unref);
}

ChpAgentSessionList *
chp_agent_session_list_new (void)
{
  return g_object_new (CHP_TYPE_AGENT_SESSION_LIST, NULL);
}

static gboolean
find_index (ChpAgentSessionList *self,
            const char          *id,
            guint               *index)
{
  for (guint i = 0; i < self->sessions->len; i++)
    {
      if (g_strcmp0 (chp_agent_session_get_id (g_ptr_array_index (self->sessions, i)), id) == 0)
        {
          *index = i;
          return TRUE;
        }
    }

  return FALSE;
}

/* Adds @session at the end; a session with the same id is replaced in place (an agent that
 * reconnected under the id it had). */
void
chp_agent_session_list_add (ChpAgentSessionList *self,
                            ChpAgentSession     *session)
{
  guint index;

  g_return_if_fail (CHP_IS_AGENT_SESSION_LIST (self));
  g_return_if_fail (CHP_IS_AGENT_SESSION (session));

  if (find_index (self, chp_agent_session_get_id (session), &index))
    {
      if (g_ptr_array_index (self->sessions, index) == session)
        return;
      g_object_unref (g_ptr_array_index (self->sessions, index));
      g_ptr_array_index (self->sessions, index) = g_object_ref (session);
      g_list_model_items_changed (G_LIST_MODEL (self), index, 1, 1);
      return;
    }

  g_ptr_array_add (self->sessions, g_object_ref (session));
  g_list_model_items_changed (G_LIST_MODEL (self), self->sessions->len - 1, 0, 1);
}

/* Returns: whether a session of that id was listed */
gboolean
chp_agent_session_list_remove (ChpAgentSessionList *self,
                               const char          *id)
{
  guint index;

  g_return_val_if_fail (CHP_IS_AGENT_SESSION_LIST (self), FALSE);

  if (!find_index (self, id, &index))
    return FALSE;

  g_ptr_array_remove_index (self->sessions, index);
  g_list_model_items_changed (G_LIST_MODEL (self), index, 1, 0);
  return TRUE;
}

/* Returns: (transfer none) (nullable) */
ChpAgentSession *
chp_agent_session_list_lookup (ChpAgentSessionList *self,
                               const char          *id)
{
  guint index;

  g_return_val_if_fail (CHP_IS_AGENT_SESSION_LIST (self), NULL);

  if (id != NULL && find_index (self, id, &index))
    return g_ptr_array_index (self->sessions, index);

  return NULL;
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
  guint n = 0;

  g_return_val_if_fail (CHP_IS_AGENT_SESSION_LIST (self), 0);

  for (guint i = 0; i < self->sessions->len; i++)
    if (chp_agent_session_get_state (g_ptr_array_index (self->sessions, i)) == state)
      n++;

  return n;
}
