/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-session.c: the engine's calls to one device. At most eight are on the wire at once and the
 * rest wait in order; a call sent before the socket dropped fails `device_offline` and is never
 * re-sent (a click must not happen twice), while one not yet sent waits for the device to resume.
 * How long a call waited before it went on the wire is its queue time (for the traces): 0 for
 * one sent at once. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-session"

#define QUEUE_US_KEY "chp-session-queue-us"

#include "chp-session.h"

#include "chp-crypto.h"
#include "chp-protocol-error.h"

typedef struct
{
  ChpSession   *session;   /* unowned: the session fails every call before it goes */
  char         *id;
  char         *method;
  JsonNode     *params;
  guint         timeout_ms;
  GTask        *task;
  guint         timeout_source;
  gulong        cancelled_id;
  gboolean      sent;
  gint64        queued_at;  /* when it had to wait (monotonic µs); 0: it was sent at once */
  gint64        queue_us;
} Call;

struct _ChpSession
{
  GObject parent_instance;

  char *session_id;
  char *device_id;
  ChpConnection *connection;
  gulong response_id;
  gint64 last_sequence;
  guint64 next_call;

  GHashTable *calls;   /* id -> Call, every unfinished call */
  GQueue queue;        /* Calls not yet sent, oldest first */
  guint in_flight;
};

G_DEFINE_FINAL_TYPE (ChpSession, chp_session, G_TYPE_OBJECT)

static void flush_queue (ChpSession *self);

static void
call_free (Call *call)
{
  g_free (call->id);
  g_free (call->method);
  g_clear_pointer (&call->params, json_node_unref);
  g_clear_object (&call->task);
  g_free (call);
}

/* Ends @call with a result or an error; removes every trace of it first, so that a callback
 * that starts a new call finds the session consistent. */
static void
call_complete (Call     *call,
               JsonNode *result,
               GError   *error)
{
  ChpSession *self = call->session;
  g_autoptr(GTask) task = g_steal_pointer (&call->task);
  GCancellable *cancellable = g_task_get_cancellable (task);

  g_clear_handle_id (&call->timeout_source, g_source_remove);
  if (call->cancelled_id != 0)
    g_cancellable_disconnect (cancellable, call->cancelled_id);
  call->cancelled_id = 0;

  if (call->sent)
    self->in_flight--;
  else
    g_queue_remove (&self->queue, call);
  /* One that never left the queue (timed out, cancelled, the session ended) waited all along. */
  if (!call->sent && call->queued_at > 0)
    call->queue_us = g_get_monotonic_time () - call->queued_at;

  g_hash_table_steal (self->calls, call->id);
  /* The task data stays the call's alone, and goes with it: a cancellation's idle that runs
   * after this must find no call there (call_cancelled_idle_cb). What is left of the call once
   * it is over, its queue time, is kept beside (chp_session_call_get_queue_us()). */
  g_task_set_task_data (task, NULL, NULL);
  g_object_set_data_full (G_OBJECT (task), QUEUE_US_KEY,
                          g_memdup2 (&call->queue_us, sizeof call->queue_us), g_free);

  if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, json_node_ref (result), (GDestroyNotify) json_node_unref);

  call_free (call);
}

static void
call_abort (Call       *call,
            GQuark      domain,
            gint        code,
            const char *message)
{
  g_autoptr(ChpSession) self = g_object_ref (call->session);

  /* The device is still working on it: tell it to stop. */
  if (call->sent && self->connection != NULL)
    chp_connection_send_cancel (self->connection, call->id);

  /* As in response_cb(): the callback may drop the last other reference to the session. */
  call_complete (call, NULL, g_error_new_literal (domain, code, message));
  flush_queue (self);
}

static gboolean
call_timeout_cb (gpointer user_data)
{
  Call *call = user_data;

  call->timeout_source = 0;
  call_abort (call, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_TIMEOUT,
              call->sent ? "The browser did not answer in time"
                         : "The browser was not reachable in time");

  return G_SOURCE_REMOVE;
}

static gboolean
call_cancelled_idle_cb (gpointer user_data)
{
  g_autoptr(GTask) task = user_data;
  Call *call = g_task_get_task_data (task);

  /* The call may have finished between the cancellation and this idle. */
  if (call != NULL && call->task == task)
    call_abort (call, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_CANCELLED, "The call was cancelled");

  return G_SOURCE_REMOVE;
}

static void
call_cancelled_cb (GCancellable *cancellable,
                   gpointer      user_data)
{
  Call *call = user_data;

  /* GCancellable may fire from another thread and while its lock is held: defer. */
  g_idle_add (call_cancelled_idle_cb, g_object_ref (call->task));
}

static void
send_call (ChpSession *self,
           Call       *call)
{
  call->sent = TRUE;
  if (call->queued_at > 0)
    call->queue_us = g_get_monotonic_time () - call->queued_at;
  self->in_flight++;
  chp_connection_send_request (self->connection, call->id, call->method, call->params,
                               call->timeout_ms);
}

static void
flush_queue (ChpSession *self)
{
  while (self->connection != NULL && chp_connection_is_open (self->connection) &&
         self->in_flight < CHP_CONNECTION_MAX_IN_FLIGHT && !g_queue_is_empty (&self->queue))
    send_call (self, g_queue_pop_head (&self->queue));
}

static void
response_cb (ChpConnection *connection,
             const char    *id,
             JsonNode      *result,
             const GError  *error,
             gpointer       user_data)
{
  ChpSession *self = user_data;
  Call *call = g_hash_table_lookup (self->calls, id);
  g_autoptr(ChpSession) alive = NULL;

  /* A late answer to a call that timed out or was cancelled is dropped. */
  if (call == NULL || !call->sent)
    return;

  /* The caller's callback may run from call_complete() and drop the last reference to the
   * session (a test, or the engine after a browser's last answer): the queue is ours until the
   * end of this handler. */
  alive = g_object_ref (self);
  if (error != NULL)
    call_complete (call, NULL, g_error_copy (error));
  else
    call_complete (call, result, NULL);

  flush_queue (self);
}

static void
chp_session_dispose (GObject *object)
{
  ChpSession *self = CHP_SESSION (object);
  g_autoptr(GError) error = g_error_new_literal (CHP_PROTOCOL_ERROR,
                                                 CHP_PROTOCOL_ERROR_DEVICE_OFFLINE,
                                                 "The browser's session ended");

  chp_session_fail_all (self, error);
  chp_session_detach (self);

  G_OBJECT_CLASS (chp_session_parent_class)->dispose (object);
}

static void
chp_session_finalize (GObject *object)
{
  ChpSession *self = CHP_SESSION (object);

  g_clear_pointer (&self->calls, g_hash_table_unref);
  g_clear_pointer (&self->session_id, g_free);
  g_clear_pointer (&self->device_id, g_free);

  G_OBJECT_CLASS (chp_session_parent_class)->finalize (object);
}

static void
chp_session_class_init (ChpSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = chp_session_dispose;
  object_class->finalize = chp_session_finalize;
}

static void
chp_session_init (ChpSession *self)
{
  self->calls = g_hash_table_new (g_str_hash, g_str_equal);
  g_queue_init (&self->queue);
}

ChpSession *
chp_session_new (const char *device_id)
{
  ChpSession *self = g_object_new (CHP_TYPE_SESSION, NULL);

  self->device_id = g_strdup (device_id);
  self->session_id = chp_random_b64url (16);

  return self;
}

const char *
chp_session_get_id (ChpSession *self)
{
  g_return_val_if_fail (CHP_IS_SESSION (self), NULL);

  return self->session_id;
}

const char *
chp_session_get_device_id (ChpSession *self)
{
  g_return_val_if_fail (CHP_IS_SESSION (self), NULL);

  return self->device_id;
}

ChpConnection *
chp_session_get_connection (ChpSession *self)
{
  g_return_val_if_fail (CHP_IS_SESSION (self), NULL);

  return self->connection;
}

gint64
chp_session_get_last_sequence (ChpSession *self)
{
  g_return_val_if_fail (CHP_IS_SESSION (self), 0);

  return self->last_sequence;
}

void
chp_session_set_last_sequence (ChpSession *self,
                               gint64      sequence)
{
  g_return_if_fail (CHP_IS_SESSION (self));

  self->last_sequence = MAX (self->last_sequence, sequence);
}

/* Completing a call runs its callback, which may start or end other calls: walk a copy of
 * the ids and look each one up again. */
static void
fail_calls (ChpSession *self,
            gboolean    only_sent,
            GQuark      domain,
            gint        code,
            const char *message)
{
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  GHashTableIter iter;
  Call *call;

  g_hash_table_iter_init (&iter, self->calls);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &call))
    if (!only_sent || call->sent)
      g_ptr_array_add (ids, g_strdup (call->id));

  for (guint i = 0; i < ids->len; i++)
    {
      call = g_hash_table_lookup (self->calls, g_ptr_array_index (ids, i));
      if (call != NULL)
        call_complete (call, NULL, g_error_new_literal (domain, code, message));
    }
}

void
chp_session_attach (ChpSession    *self,
                    ChpConnection *connection)
{
  g_return_if_fail (CHP_IS_SESSION (self));
  g_return_if_fail (CHP_IS_CONNECTION (connection));

  chp_session_detach (self);
  self->connection = g_object_ref (connection);
  self->response_id = g_signal_connect (connection, "response", G_CALLBACK (response_cb), self);
  flush_queue (self);
}

/* The socket is gone: what was on the wire fails, what waits in the queue keeps waiting. */
void
chp_session_detach (ChpSession *self)
{
  g_return_if_fail (CHP_IS_SESSION (self));

  if (self->connection == NULL)
    return;

  g_clear_signal_handler (&self->response_id, self->connection);
  g_clear_object (&self->connection);

  fail_calls (self, TRUE, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_DEVICE_OFFLINE,
              "The browser disconnected before it answered");
}

void
chp_session_fail_all (ChpSession   *self,
                      const GError *error)
{
  g_return_if_fail (CHP_IS_SESSION (self));
  g_return_if_fail (error != NULL);

  fail_calls (self, FALSE, error->domain, error->code, error->message);
}

void
chp_session_call_async (ChpSession          *self,
                        const char          *method,
                        JsonNode            *params,
                        guint                timeout_ms,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  Call *call;

  g_return_if_fail (CHP_IS_SESSION (self));
  g_return_if_fail (method != NULL);

  call = g_new0 (Call, 1);
  call->session = self;
  call->id = g_strdup_printf ("e%" G_GUINT64_FORMAT, ++self->next_call);
  call->method = g_strdup (method);
  call->params = params ? json_node_ref (params) : NULL;
  call->timeout_ms = timeout_ms > 0 ? timeout_ms : CHP_SESSION_DEFAULT_TIMEOUT_MS;
  call->task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (call->task, chp_session_call_async);
  g_task_set_task_data (call->task, call, NULL);

  if (g_task_return_error_if_cancelled (call->task))
    {
      g_task_set_task_data (call->task, NULL, NULL);
      call_free (call);
      return;
    }

  g_hash_table_insert (self->calls, call->id, call);
  g_queue_push_tail (&self->queue, call);
  call->timeout_source = g_timeout_add (call->timeout_ms, call_timeout_cb, call);
  if (cancellable != NULL)
    call->cancelled_id = g_cancellable_connect (cancellable, G_CALLBACK (call_cancelled_cb),
                                                call, NULL);

  flush_queue (self);
  /* Not sent at once: eight are on the wire, or the device is away until it resumes. */
  if (g_queue_find (&self->queue, call) != NULL)
    call->queued_at = g_get_monotonic_time ();
}

JsonNode *
chp_session_call_finish (ChpSession    *self,
                         GAsyncResult  *result,
                         GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * chp_session_call_get_queue_us:
 * @result: a finished call's result
 *
 * Returns: how long the call waited in this session's queue before it was sent (or, never sent,
 *   until it ended), in µs: 0 for a call sent at once
 */
gint64
chp_session_call_get_queue_us (GAsyncResult *result)
{
  const gint64 *queue_us;

  g_return_val_if_fail (G_IS_TASK (result), 0);

  queue_us = g_object_get_data (G_OBJECT (result), QUEUE_US_KEY);
  return queue_us != NULL ? *queue_us : 0;
}
