/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-agent-session.c: the person's Pause, Resume and Disconnect change the state here first,
 * synchronously, so that whatever serves the agent refuses its next call even before it has
 * handled the "requested" signal. What a pause holds for beyond this one connection (the agent,
 * as far as its name and its process tell it) is the session list's to decide. */
#include "config.h"

#include "chp-agent-session.h"

struct _ChpAgentSession
{
  GObject parent_instance;

  char *id;
  char *client_name;
  char *client_key;
  char *process_key;
  gint64 since;
  guint calls;
  char *current_step;
  char *last_error;
  char *attention;
  gboolean inherited;
  ChpAgentSessionState state;
};

enum {
  PROP_0,
  PROP_ID,
  PROP_CLIENT_NAME,
  PROP_CLIENT_KEY,
  PROP_PROCESS_KEY,
  PROP_SINCE,
  PROP_CALLS,
  PROP_CURRENT_STEP,
  PROP_LAST_ERROR,
  PROP_STATE,
  PROP_ATTENTION,
  PROP_INHERITED,
  N_PROPS
};

enum {
  SIGNAL_REQUESTED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (ChpAgentSession, chp_agent_session, G_TYPE_OBJECT)

G_DEFINE_ENUM_TYPE (ChpAgentSessionState, chp_agent_session_state,
                    G_DEFINE_ENUM_VALUE (CHP_AGENT_SESSION_RUNNING, "running"),
                    G_DEFINE_ENUM_VALUE (CHP_AGENT_SESSION_PAUSED, "paused"),
                    G_DEFINE_ENUM_VALUE (CHP_AGENT_SESSION_DISCONNECTED, "disconnected"))

static void
chp_agent_session_finalize (GObject *object)
{
  ChpAgentSession *self = CHP_AGENT_SESSION (object);

  g_clear_pointer (&self->id, g_free);
  g_clear_pointer (&self->client_name, g_free);
  g_clear_pointer (&self->client_key, g_free);
  g_clear_pointer (&self->process_key, g_free);
  g_clear_pointer (&self->current_step, g_free);
  g_clear_pointer (&self->last_error, g_free);
  g_clear_pointer (&self->attention, g_free);

  G_OBJECT_CLASS (chp_agent_session_parent_class)->finalize (object);
}

static void
chp_agent_session_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  ChpAgentSession *self = CHP_AGENT_SESSION (object);

  switch (prop_id)
    {
    case PROP_ID:
      g_value_set_string (value, self->id);
      break;

    case PROP_CLIENT_NAME:
      g_value_set_string (value, self->client_name);
      break;

    case PROP_CLIENT_KEY:
      g_value_set_string (value, self->client_key);
      break;

    case PROP_PROCESS_KEY:
      g_value_set_string (value, self->process_key);
      break;

    case PROP_SINCE:
      g_value_set_int64 (value, self->since);
      break;

    case PROP_CALLS:
      g_value_set_uint (value, self->calls);
      break;

    case PROP_CURRENT_STEP:
      g_value_set_string (value, self->current_step);
      break;

    case PROP_LAST_ERROR:
      g_value_set_string (value, self->last_error);
      break;

    case PROP_STATE:
      g_value_set_enum (value, self->state);
      break;

    case PROP_ATTENTION:
      g_value_set_string (value, self->attention);
      break;

    case PROP_INHERITED:
      g_value_set_boolean (value, self->inherited);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_agent_session_set_property (GObject      *object,
                                guint         prop_id,
                                const GValue *value,
                                GParamSpec   *pspec)
{
  ChpAgentSession *self = CHP_AGENT_SESSION (object);

  switch (prop_id)
    {
    case PROP_ID:
      self->id = g_value_dup_string (value);
      break;

    case PROP_CLIENT_NAME:
      chp_agent_session_set_client_name (self, g_value_get_string (value));
      break;

    case PROP_CLIENT_KEY:
      chp_agent_session_set_client_key (self, g_value_get_string (value));
      break;

    case PROP_PROCESS_KEY:
      chp_agent_session_set_process_key (self, g_value_get_string (value));
      break;

    case PROP_SINCE:
      self->since = g_value_get_int64 (value);
      break;

    case PROP_CALLS:
      chp_agent_session_set_calls (self, g_value_get_uint (value));
      break;

    case PROP_CURRENT_STEP:
      chp_agent_session_set_current_step (self, g_value_get_string (value));
      break;

    case PROP_LAST_ERROR:
      chp_agent_session_set_last_error (self, g_value_get_string (value));
      break;

    case PROP_STATE:
      chp_agent_session_set_state (self, g_value_get_enum (value));
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_agent_session_class_init (ChpAgentSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  const GParamFlags once = G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = chp_agent_session_finalize;
  object_class->get_property = chp_agent_session_get_property;
  object_class->set_property = chp_agent_session_set_property;

  properties[PROP_ID] = g_param_spec_string ("id", NULL, NULL, NULL, once);
  /* As the client named itself (MCP clientInfo): its words, shown, never trusted. */
  properties[PROP_CLIENT_NAME] = g_param_spec_string ("client-name", NULL, NULL, NULL, flags);
  /* What a pause is held by, besides the process: the client's name without its version, in
   * one case. As self-declared as the name: it catches an agent that reconnects, not one that
   * sets out to hide. */
  properties[PROP_CLIENT_KEY] = g_param_spec_string ("client-key", NULL, NULL, NULL, flags);
  /* The agent's process (what launched the relay), as "<pid>@<start time>"; NULL when the app
   * cannot see it. */
  properties[PROP_PROCESS_KEY] = g_param_spec_string ("process-key", NULL, NULL, NULL, flags);
  properties[PROP_SINCE] = g_param_spec_int64 ("since", NULL, NULL, 0, G_MAXINT64, 0, once);
  properties[PROP_CALLS] = g_param_spec_uint ("calls", NULL, NULL, 0, G_MAXUINT, 0, flags);
  properties[PROP_CURRENT_STEP] = g_param_spec_string ("current-step", NULL, NULL, NULL, flags);
  properties[PROP_LAST_ERROR] = g_param_spec_string ("last-error", NULL, NULL, NULL, flags);
  properties[PROP_STATE] = g_param_spec_enum ("state", NULL, NULL, CHP_TYPE_AGENT_SESSION_STATE,
                                              CHP_AGENT_SESSION_RUNNING, flags);
  /* Why Chaperone itself paused the agent (the loop guard), for the person's Needs you card;
   * NULL when the person paused it, or it runs. */
  properties[PROP_ATTENTION] = g_param_spec_string ("attention", NULL, NULL, NULL,
                                                    G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                                    G_PARAM_STATIC_STRINGS);
  /* Paused because another session of the same agent was: the pause is the agent's, made
   * earlier or elsewhere, and not about this connection. */
  properties[PROP_INHERITED] = g_param_spec_boolean ("inherited", NULL, NULL, FALSE,
                                                     G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                                     G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * ChpAgentSession::requested:
   * @state: what the person asked for: paused, running (resume) or disconnected
   *
   * The person pressed Pause, Resume or Disconnect. The state has already changed; the agent
   * server (issue 5) acts on it: holds the agent's next calls, lets them through, or closes
   * its connection.
   */
  signals[SIGNAL_REQUESTED] =
    g_signal_new ("requested", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, CHP_TYPE_AGENT_SESSION_STATE);
}

static void
chp_agent_session_init (ChpAgentSession *self)
{
}

/* @since: ms since the epoch, when the agent connected */
ChpAgentSession *
chp_agent_session_new (const char *id,
                       const char *client_name,
                       gint64      since)
{
  g_return_val_if_fail (id != NULL, NULL);

  return g_object_new (CHP_TYPE_AGENT_SESSION,
                       "id", id,
                       "client-name", client_name,
                       "since", since,
                       NULL);
}

const char *
chp_agent_session_get_id (ChpAgentSession *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_SESSION (self), NULL);

  return self->id;
}

/* Returns: (nullable): the name the client gave, or %NULL when it gave none */
const char *
chp_agent_session_get_client_name (ChpAgentSession *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_SESSION (self), NULL);

  return self->client_name;
}

/* GLib 2.74 has no g_set_str. */
static gboolean
replace_str (char       **slot,
             const char  *value)
{
  /* Empty and absent mean the same to the person: nothing to show. */
  if (value != NULL && *value == '\0')
    value = NULL;
  if (g_strcmp0 (*slot, value) == 0)
    return FALSE;

  g_free (*slot);
  *slot = g_strdup (value);
  return TRUE;
}

void
chp_agent_session_set_client_name (ChpAgentSession *self,
                                   const char      *client_name)
{
  g_return_if_fail (CHP_IS_AGENT_SESSION (self));

  if (replace_str (&self->client_name, client_name))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CLIENT_NAME]);
}

/* Returns: (nullable): the client's name as a pause matches it (see #ChpAgentSession:client-key) */
const char *
chp_agent_session_get_client_key (ChpAgentSession *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_SESSION (self), NULL);

  return self->client_key;
}

/* @name: (nullable): the client's name without its version (MCP clientInfo.name), made fit to
 *   show; kept case-folded, so that "Claude-Code" is "claude-code" */
void
chp_agent_session_set_client_key (ChpAgentSession *self,
                                  const char      *name)
{
  g_autofree char *folded = NULL;

  g_return_if_fail (CHP_IS_AGENT_SESSION (self));
  g_return_if_fail (name == NULL || g_utf8_validate (name, -1, NULL));

  if (name != NULL && *name != '\0')
    folded = g_utf8_casefold (name, -1);
  if (replace_str (&self->client_key, folded))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CLIENT_KEY]);
}

/* Returns: (nullable): the agent's process (see #ChpAgentSession:process-key) */
const char *
chp_agent_session_get_process_key (ChpAgentSession *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_SESSION (self), NULL);

  return self->process_key;
}

/* @process: (nullable): the agent's process, named so that another process never has the same
 *   name (a pid alone is reused) */
void
chp_agent_session_set_process_key (ChpAgentSession *self,
                                   const char      *process)
{
  g_return_if_fail (CHP_IS_AGENT_SESSION (self));

  if (replace_str (&self->process_key, process))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PROCESS_KEY]);
}

gint64
chp_agent_session_get_since (ChpAgentSession *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_SESSION (self), 0);

  return self->since;
}

guint
chp_agent_session_get_calls (ChpAgentSession *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_SESSION (self), 0);

  return self->calls;
}

void
chp_agent_session_set_calls (ChpAgentSession *self,
                             guint            calls)
{
  g_return_if_fail (CHP_IS_AGENT_SESSION (self));

  if (self->calls == calls)
    return;

  self->calls = calls;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CALLS]);
}

void
chp_agent_session_add_call (ChpAgentSession *self)
{
  g_return_if_fail (CHP_IS_AGENT_SESSION (self));

  if (self->calls < G_MAXUINT)
    chp_agent_session_set_calls (self, self->calls + 1);
}

/* Returns: (nullable): what the agent says it is doing now */
const char *
chp_agent_session_get_current_step (ChpAgentSession *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_SESSION (self), NULL);

  return self->current_step;
}

void
chp_agent_session_set_current_step (ChpAgentSession *self,
                                    const char      *step)
{
  g_return_if_fail (CHP_IS_AGENT_SESSION (self));

  if (replace_str (&self->current_step, step))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CURRENT_STEP]);
}

/* Returns: (nullable): the protocol error code of the agent's last failed call */
const char *
chp_agent_session_get_last_error (ChpAgentSession *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_SESSION (self), NULL);

  return self->last_error;
}

void
chp_agent_session_set_last_error (ChpAgentSession *self,
                                  const char      *error_code)
{
  g_return_if_fail (CHP_IS_AGENT_SESSION (self));

  if (replace_str (&self->last_error, error_code))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LAST_ERROR]);
}

ChpAgentSessionState
chp_agent_session_get_state (ChpAgentSession *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_SESSION (self), CHP_AGENT_SESSION_DISCONNECTED);

  return self->state;
}

/* For the agent server: what actually happened (it connected again, it went away). */
void
chp_agent_session_set_state (ChpAgentSession      *self,
                             ChpAgentSessionState  state)
{
  g_return_if_fail (CHP_IS_AGENT_SESSION (self));
  g_return_if_fail (state <= CHP_AGENT_SESSION_DISCONNECTED);

  if (self->state == state)
    return;

  self->state = state;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STATE]);
}

static void
set_inherited (ChpAgentSession *self,
               gboolean         inherited)
{
  if (self->inherited == inherited)
    return;

  self->inherited = inherited;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_INHERITED]);
}

static void
request (ChpAgentSession      *self,
         ChpAgentSessionState  state)
{
  /* A disconnected session is over: nothing the person presses brings it back. */
  if (self->state == CHP_AGENT_SESSION_DISCONNECTED)
    return;

  /* Those who watch the properties hear of the change once it is whole, after "requested" has
   * been handled: a Resume that lifts an agent's pause from all its sessions is never seen
   * half done (one session running, the others still asking the person). */
  g_object_freeze_notify (G_OBJECT (self));
  /* Whatever the person decides answers the guard's question. */
  if (state != CHP_AGENT_SESSION_PAUSED)
    {
      if (replace_str (&self->attention, NULL))
        g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ATTENTION]);
      set_inherited (self, FALSE);
    }
  chp_agent_session_set_state (self, state);
  g_signal_emit (self, signals[SIGNAL_REQUESTED], 0, state);
  g_object_thaw_notify (G_OBJECT (self));
}

static void
pause_session (ChpAgentSession *self,
               const char      *why,
               gboolean         inherited)
{
  if (self->state != CHP_AGENT_SESSION_RUNNING)
    return;

  g_object_freeze_notify (G_OBJECT (self));
  if (replace_str (&self->attention, why))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ATTENTION]);
  set_inherited (self, inherited);
  request (self, CHP_AGENT_SESSION_PAUSED);
  g_object_thaw_notify (G_OBJECT (self));
}

/* Returns: (nullable): why Chaperone paused the agent, when it did */
const char *
chp_agent_session_get_attention (ChpAgentSession *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_SESSION (self), NULL);

  return self->attention;
}

/**
 * chp_agent_session_pause_for:
 * @why: "repeated" (the same act again and again) or "failing" (failure after failure on one
 *   tab); the app words it for the person
 *
 * Chaperone's own pause (the loop guard): like the person's Pause, and the session asks for them
 * in Needs you until they resume or disconnect it.
 */
void
chp_agent_session_pause_for (ChpAgentSession *self,
                             const char      *why)
{
  g_return_if_fail (CHP_IS_AGENT_SESSION (self));
  g_return_if_fail (why != NULL);

  pause_session (self, why, FALSE);
}

/* Returns: whether the session is paused because another session of its agent was */
gboolean
chp_agent_session_get_inherited (ChpAgentSession *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_SESSION (self), FALSE);

  return self->inherited;
}

/**
 * chp_agent_session_pause_with_agent:
 * @why: (nullable): the loop guard's reason when it made the agent's pause, %NULL when the
 *   person did
 *
 * For the session list: another session of the same agent is paused, so this one is, with the
 * same reason, until the person resumes the agent.
 */
void
chp_agent_session_pause_with_agent (ChpAgentSession *self,
                                    const char      *why)
{
  g_return_if_fail (CHP_IS_AGENT_SESSION (self));

  pause_session (self, why, TRUE);
}

/* The person pressed Pause: the agent's next calls wait until Resume. */
void
chp_agent_session_request_pause (ChpAgentSession *self)
{
  g_return_if_fail (CHP_IS_AGENT_SESSION (self));

  pause_session (self, NULL, FALSE);
}

void
chp_agent_session_request_resume (ChpAgentSession *self)
{
  g_return_if_fail (CHP_IS_AGENT_SESSION (self));

  if (self->state == CHP_AGENT_SESSION_PAUSED)
    request (self, CHP_AGENT_SESSION_RUNNING);
}

void
chp_agent_session_request_disconnect (ChpAgentSession *self)
{
  g_return_if_fail (CHP_IS_AGENT_SESSION (self));

  request (self, CHP_AGENT_SESSION_DISCONNECTED);
}
