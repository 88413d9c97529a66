/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-session.c: one agent's MCP connection (2025-06-18): JSON-RPC 2.0 read a bounded line
 * at a time, answered through an ordered write queue, tool calls run through ChpMcpTools with
 * their own cancellables, and the person's Pause / Resume / Disconnect acted on at once.
 * Nothing an agent sends is ever logged: only methods and sizes. Here: the connection (reading
 * lines, closing) and the person's requests; the write queue, JSON-RPC with MCP's methods, and
 * tool calls have files of their own (chp-mcp-session-{write,rpc,calls}.c). */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp"

#include "chp-mcp-session.h"
#include "chp-mcp-session-private.h"

#include <string.h>

#define READ_CHUNK (64 * 1024)
#define LINE_KEEP_BYTES (64 * 1024)
/* How long a disconnected agent has to take its last message before the socket closes. */
#define DRAIN_TIMEOUT_S 2

enum {
  SIGNAL_CLOSED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (ChpMcpSession, chp_mcp_session, G_TYPE_OBJECT)

/* ---- Closing -------------------------------------------------------------------------- */

static void
stream_closed_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  g_autoptr(ChpMcpSession) self = user_data;
  g_autoptr(GError) error = NULL;

  if (!g_io_stream_close_finish (G_IO_STREAM (source), result, &error))
    g_debug ("%s: close: %s", session_id (self), error->message);
}

/* The stream refuses to close under a pending read or write: it closes when both are back. */
void
chp_mcp_session_maybe_close_stream (ChpMcpSession *self)
{
  if (!self->closed || self->reading || self->writing || self->stream_closing)
    return;

  self->stream_closing = TRUE;
  g_io_stream_close_async (self->stream, G_PRIORITY_DEFAULT, NULL, stream_closed_cb,
                           g_object_ref (self));
}

/* A tool may answer from inside g_cancellable_cancel(), and its answer removes the call from
 * the table: the table is read whole first, and a call is never touched after its cancel. */
static void
cancel_calls (ChpMcpSession *self,
              gboolean       paused)
{
  g_autoptr(GPtrArray) cancellables = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;

  g_hash_table_iter_init (&iter, self->calls);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Call *call = value;

      if (paused)
        call->paused = TRUE;
      g_ptr_array_add (cancellables, g_object_ref (call->cancellable));
    }

  for (guint i = 0; i < cancellables->len; i++)
    g_cancellable_cancel (g_ptr_array_index (cancellables, i));
}

static void agent_requested_cb (ChpAgentSession      *agent,
                                ChpAgentSessionState  state,
                                gpointer              user_data);

/* Everything but the signal and the stream: shared by close and dispose. */
static void
shut_down (ChpMcpSession *self)
{
  self->closed = TRUE;
  g_clear_handle_id (&self->drain_source, g_source_remove);
  g_cancellable_cancel (self->read_cancellable);
  g_cancellable_cancel (self->write_cancellable);
  cancel_calls (self, FALSE);

  /* The head is being written; its callback drops it. */
  while (g_queue_get_length (&self->out) > (self->writing ? 1u : 0u))
    {
      GBytes *bytes = g_queue_pop_tail (&self->out);

      self->queued_bytes -= g_bytes_get_size (bytes);
      g_bytes_unref (bytes);
    }

  g_signal_handlers_disconnect_by_func (self->agent, agent_requested_cb, self);
  chp_agent_session_set_current_step (self->agent, NULL);
  chp_agent_session_set_state (self->agent, CHP_AGENT_SESSION_DISCONNECTED);
}

/**
 * chp_mcp_session_close:
 *
 * Cancels the calls in flight (their answers are dropped), stops reading and writing, closes
 * the socket once the stream lets go, and emits ::closed. Idempotent.
 */
void
chp_mcp_session_close (ChpMcpSession *self)
{
  g_autoptr(ChpMcpSession) guard = NULL;

  g_return_if_fail (CHP_IS_MCP_SESSION (self));

  if (self->closed)
    return;

  guard = g_object_ref (self);
  g_debug ("%s: closed (%u calls in flight)", session_id (self),
           g_hash_table_size (self->calls));
  shut_down (self);
  chp_mcp_session_maybe_close_stream (self);
  g_signal_emit (self, signals[SIGNAL_CLOSED], 0);
}

static gboolean
drain_timeout_cb (gpointer user_data)
{
  ChpMcpSession *self = user_data;

  self->drain_source = 0;
  chp_mcp_session_close (self);
  return G_SOURCE_REMOVE;
}

/* Stops reading and lets what is queued go out first, so that the agent can learn why. */
static void
close_when_written (ChpMcpSession *self)
{
  if (self->closed || self->draining)
    return;

  self->draining = TRUE;
  g_cancellable_cancel (self->read_cancellable);
  cancel_calls (self, FALSE);
  if (!self->writing)
    chp_mcp_session_close (self);
  else
    self->drain_source = g_timeout_add_seconds (DRAIN_TIMEOUT_S, drain_timeout_cb, self);
}

/* ---- The person's requests ------------------------------------------------------------ */

/* What a paused agent's calls answer, with why: the same words in every session the pause holds,
 * and a session that inherited it is told that reconnecting does not lift it. */
char *
chp_mcp_session_paused_message (ChpAgentSession *agent)
{
  const char *why = chp_agent_session_get_attention (agent);
  const char *what;
  const char *wait;

  if (g_strcmp0 (why, "repeated") == 0)
    what = "Chaperone paused this agent: it asked for the same act on the same target too many "
           "times in a row (three; a key that only moves, such as an arrow, 25).";
  else if (g_strcmp0 (why, "failing") == 0)
    what = "Chaperone paused this agent: its acts failed three times in a row on one tab.";
  else if (why != NULL)
    what = "Chaperone paused this agent.";
  else
    what = "The person paused this agent in Chaperone.";
  wait = why != NULL ? " The person must resume it in the Chaperone app; wait for them."
                     : " Wait for them to resume it.";

  if (!chp_agent_session_get_inherited (agent))
    return g_strconcat (what, wait, NULL);
  return g_strconcat (what, " It was paused in another session, and a pause holds for every "
                      "session of this agent, new ones too.", wait, NULL);
}

static void
agent_requested_cb (ChpAgentSession      *agent,
                    ChpAgentSessionState  state,
                    gpointer              user_data)
{
  ChpMcpSession *self = user_data;
  g_autoptr(ChpMcpSession) guard G_GNUC_UNUSED = g_object_ref (self);

  switch (state)
    {
    case CHP_AGENT_SESSION_PAUSED:
      if (chp_agent_session_get_inherited (agent))
        {
          g_autofree char *message = chp_mcp_session_paused_message (agent);

          g_message ("agents: %s paused with its agent", session_id (self));
          chp_mcp_session_send_log (self, LEVEL_WARNING, message);
        }
      else if (chp_agent_session_get_attention (agent) != NULL)
        {
          g_message ("agents: %s paused by the loop guard", session_id (self));
          chp_mcp_session_send_log (self, LEVEL_WARNING,
                                    "Chaperone paused this agent: it repeated the same action, or "
                                    "kept failing on the same tab. Tool calls answer \"paused\" "
                                    "until the person resumes it in the Chaperone app.");
        }
      else
        {
          g_message ("agents: %s paused by the person", session_id (self));
          chp_mcp_session_send_log (self, LEVEL_WARNING,
                                    "The person paused this agent in Chaperone. Tool calls answer "
                                    "\"paused\" until they resume it; wait for them rather than "
                                    "retrying.");
        }
      /* The calls running now answer paused too: the person meant now, not after them. */
      cancel_calls (self, TRUE);
      break;

    case CHP_AGENT_SESSION_RUNNING:
      g_message ("agents: %s resumed by the person", session_id (self));
      chp_mcp_session_send_log (self, LEVEL_WARNING,
                                "The person resumed this agent in Chaperone. Tool calls run "
                                "again.");
      break;

    case CHP_AGENT_SESSION_DISCONNECTED:
    default:
      g_message ("agents: %s disconnected by the person", session_id (self));
      chp_mcp_session_send_log (self, LEVEL_WARNING,
                                "The person disconnected this agent in Chaperone.");
      close_when_written (self);
      break;
    }
}

/* ---- Reading -------------------------------------------------------------------------- */

static void
refuse_long_line (ChpMcpSession *self)
{
  g_autofree char *message = g_strdup_printf ("Invalid Request: a message may be at most %d "
                                              "bytes on one line", CHP_MCP_MAX_LINE_BYTES);

  g_debug ("%s: refused a line over %d bytes", session_id (self), CHP_MCP_MAX_LINE_BYTES);
  chp_mcp_session_send_error (self, NULL, RPC_INVALID_REQUEST, message);
}

static void
reset_line (ChpMcpSession *self)
{
  /* A buffer that grew for one large message is not kept by an idle session. */
  if (self->line->len > LINE_KEEP_BYTES)
    {
      g_byte_array_unref (self->line);
      self->line = g_byte_array_new ();
    }
  else
    g_byte_array_set_size (self->line, 0);
}

static void
feed (ChpMcpSession *self,
      const guint8  *data,
      gsize          len)
{
  const guint8 *p = data;
  const guint8 *end = data + len;

  while (p < end && !self->closed && !self->draining)
    {
      const guint8 *nl = memchr (p, '\n', end - p);
      const guint8 *stop = nl != NULL ? nl : end;
      gsize n = stop - p;

      if (self->skipping)
        {
          if (nl != NULL)
            self->skipping = FALSE;
        }
      else if (self->line->len + n > CHP_MCP_MAX_LINE_BYTES)
        {
          refuse_long_line (self);
          reset_line (self);
          self->skipping = nl == NULL;
        }
      else
        {
          g_byte_array_append (self->line, p, n);
          if (nl != NULL)
            {
              chp_mcp_session_handle_line (self, (const char *) self->line->data, self->line->len);
              reset_line (self);
            }
        }

      p = nl != NULL ? nl + 1 : end;
    }
}

static void read_next (ChpMcpSession *self);

static void
read_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(ChpMcpSession) self = user_data;
  g_autoptr(GError) error = NULL;
  gssize n;

  self->reading = FALSE;
  n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, &error);

  if (self->closed || self->draining)
    {
      chp_mcp_session_maybe_close_stream (self);
      return;
    }

  if (n < 0)
    {
      g_debug ("%s: read failed: %s", session_id (self), error->message);
      chp_mcp_session_close (self);
      return;
    }
  if (n == 0)
    {
      g_debug ("%s: the agent hung up", session_id (self));
      chp_mcp_session_close (self);
      return;
    }

  feed (self, self->read_buffer, n);
  if (!self->closed && !self->draining)
    read_next (self);
}

static void
read_next (ChpMcpSession *self)
{
  self->reading = TRUE;
  g_input_stream_read_async (self->input, self->read_buffer, READ_CHUNK, G_PRIORITY_DEFAULT,
                             self->read_cancellable, read_cb, g_object_ref (self));
}

/* ---- The object ----------------------------------------------------------------------- */

static void
chp_mcp_session_dispose (GObject *object)
{
  ChpMcpSession *self = CHP_MCP_SESSION (object);

  /* Every pending read, write and call holds a reference, so none is left here (unless someone
   * ran dispose by hand): the socket can close at once. */
  if (!self->closed && self->agent != NULL)
    shut_down (self);
  if (self->stream != NULL && !self->stream_closing && !self->reading && !self->writing)
    {
      self->stream_closing = TRUE;
      g_io_stream_close (self->stream, NULL, NULL);
    }

  G_OBJECT_CLASS (chp_mcp_session_parent_class)->dispose (object);
}

static void
chp_mcp_session_finalize (GObject *object)
{
  ChpMcpSession *self = CHP_MCP_SESSION (object);

  g_queue_clear_full (&self->out, (GDestroyNotify) g_bytes_unref);
  g_clear_pointer (&self->calls, g_hash_table_unref);
  g_clear_pointer (&self->line, g_byte_array_unref);
  g_clear_pointer (&self->read_buffer, g_free);
  g_clear_object (&self->read_cancellable);
  g_clear_object (&self->write_cancellable);
  g_clear_object (&self->context);
  g_clear_object (&self->agent);
  g_clear_object (&self->tools);
  g_clear_object (&self->stream);

  G_OBJECT_CLASS (chp_mcp_session_parent_class)->finalize (object);
}

static void
chp_mcp_session_class_init (ChpMcpSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = chp_mcp_session_dispose;
  object_class->finalize = chp_mcp_session_finalize;

  /**
   * ChpMcpSession::closed:
   *
   * The connection is over: the agent hung up, failed, was disconnected by the person, or
   * chp_mcp_session_close() was called. Emitted once.
   */
  signals[SIGNAL_CLOSED] =
    g_signal_new ("closed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
chp_mcp_session_init (ChpMcpSession *self)
{
  self->read_cancellable = g_cancellable_new ();
  self->write_cancellable = g_cancellable_new ();
  self->read_buffer = g_malloc (READ_CHUNK);
  self->line = g_byte_array_new ();
  /* Keys are owned by their Call. */
  self->calls = g_hash_table_new (g_str_hash, g_str_equal);
  self->min_level = LEVEL_INFO;
  g_queue_init (&self->out);
}

/**
 * chp_mcp_session_new:
 * @stream: the agent's connection
 * @tools: the tools its calls reach
 * @agent: how the person sees it; the session keeps it current and obeys its requests
 *
 * Returns: (transfer full): a session that reads nothing until chp_mcp_session_start()
 */
ChpMcpSession *
chp_mcp_session_new (GIOStream       *stream,
                     ChpMcpTools     *tools,
                     ChpAgentSession *agent)
{
  ChpMcpSession *self;

  g_return_val_if_fail (G_IS_IO_STREAM (stream), NULL);
  g_return_val_if_fail (CHP_IS_MCP_TOOLS (tools), NULL);
  g_return_val_if_fail (CHP_IS_AGENT_SESSION (agent), NULL);

  self = g_object_new (CHP_TYPE_MCP_SESSION, NULL);
  self->stream = g_object_ref (stream);
  self->input = g_io_stream_get_input_stream (stream);
  self->output = g_io_stream_get_output_stream (stream);
  self->tools = g_object_ref (tools);
  self->agent = g_object_ref (agent);
  self->context = chp_mcp_context_new (chp_agent_session_get_id (agent));
  g_signal_connect (agent, "requested", G_CALLBACK (agent_requested_cb), self);

  return self;
}

void
chp_mcp_session_start (ChpMcpSession *self)
{
  g_return_if_fail (CHP_IS_MCP_SESSION (self));
  g_return_if_fail (!self->reading);

  if (self->closed)
    return;
  read_next (self);
}

ChpAgentSession *
chp_mcp_session_get_agent (ChpMcpSession *self)
{
  g_return_val_if_fail (CHP_IS_MCP_SESSION (self), NULL);

  return self->agent;
}

/* Returns: the context every tool call of this session shares */
ChpMcpContext *
chp_mcp_session_get_context (ChpMcpSession *self)
{
  g_return_val_if_fail (CHP_IS_MCP_SESSION (self), NULL);

  return self->context;
}
