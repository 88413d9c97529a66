/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-bridge-calls.c: the engine's method table that browsers call, and the engine's calls to
 * browsers, each answered or failed with a typed error and audited. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-bridge"

#include "chp-bridge-private.h"

#include "chp-connection.h"
#include "chp-protocol-error.h"
#include "chp-session.h"

typedef struct
{
  ChpBridgeMethodFunc func;
  gpointer            user_data;
} MethodEntry;

/* A request from a browser that an engine method is answering. */
typedef struct
{
  ChpConnection *connection;
  char          *id;
  GCancellable  *cancellable;
  gulong         cancel_id;
} Incoming;

/* Engine methods that browsers call */

static void
incoming_free (Incoming *incoming)
{
  if (incoming->cancel_id != 0)
    g_signal_handler_disconnect (incoming->connection, incoming->cancel_id);
  g_clear_object (&incoming->connection);
  g_clear_object (&incoming->cancellable);
  g_free (incoming->id);
  g_free (incoming);
}

static void
incoming_cancel_cb (ChpConnection *connection,
                    const char    *id,
                    gpointer       user_data)
{
  Incoming *incoming = user_data;

  if (g_str_equal (id, incoming->id))
    g_cancellable_cancel (incoming->cancellable);
}

static void
method_done_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  Incoming *incoming = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = g_task_propagate_pointer (G_TASK (result), &error);

  if (node != NULL)
    chp_connection_respond (incoming->connection, incoming->id, node);
  else
    chp_connection_respond_error (incoming->connection, incoming->id, error);

  incoming_free (incoming);
}

void
chp_bridge_connection_request_cb (ChpConnection *connection,
                                  const char    *id,
                                  const char    *method,
                                  JsonNode      *params,
                                  gpointer       user_data)
{
  ChpBridge *self = user_data;
  MethodEntry *entry = g_hash_table_lookup (self->methods, method);
  ChpDevice *device = chp_device_list_lookup (self->devices,
                                              chp_connection_get_device_id (connection));
  g_autoptr(GTask) task = NULL;
  Incoming *incoming;

  if (entry == NULL || device == NULL)
    {
      g_autoptr(GError) error = NULL;

      g_set_error (&error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_UNKNOWN_METHOD,
                   "The engine has no method \"%s\"", method);
      chp_connection_respond_error (connection, id, error);
      return;
    }

  incoming = g_new0 (Incoming, 1);
  incoming->connection = g_object_ref (connection);
  incoming->id = g_strdup (id);
  incoming->cancellable = g_cancellable_new ();
  incoming->cancel_id = g_signal_connect (connection, "cancel",
                                          G_CALLBACK (incoming_cancel_cb), incoming);

  task = g_task_new (self, incoming->cancellable, method_done_cb, incoming);
  g_task_set_check_cancellable (task, TRUE);
  entry->func (self, device, params, task, entry->user_data);
}

void
chp_bridge_engine_info_method (ChpBridge *self,
                               ChpDevice *device,
                               JsonNode  *params,
                               GTask     *task,
                               gpointer   user_data)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "engineId");
  json_builder_add_string_value (builder, chp_identity_get_engine_id (self->identity));
  json_builder_set_member_name (builder, "engineInstanceId");
  json_builder_add_string_value (builder, self->instance_id);
  json_builder_set_member_name (builder, "version");
  json_builder_add_string_value (builder, PACKAGE_VERSION);
  json_builder_set_member_name (builder, "deviceId");
  json_builder_add_string_value (builder, chp_device_get_id (device));
  json_builder_set_member_name (builder, "deviceName");
  json_builder_add_string_value (builder, chp_device_get_name (device));
  json_builder_set_member_name (builder, "defaultGrantMinutes");
  json_builder_add_int_value (builder, self->default_grant_minutes);
  if (self->floor_rules != NULL)
    {
      json_builder_set_member_name (builder, "floor");
      json_builder_add_value (builder, json_node_copy (self->floor_rules));
    }
  json_builder_end_object (builder);

  g_task_return_pointer (task, json_builder_get_root (builder), (GDestroyNotify) json_node_unref);
}

void
chp_bridge_add_method (ChpBridge           *self,
                       const char          *method,
                       ChpBridgeMethodFunc  func,
                       gpointer             user_data)
{
  MethodEntry *entry;

  g_return_if_fail (CHP_IS_BRIDGE (self));
  g_return_if_fail (method != NULL && func != NULL);

  entry = g_new0 (MethodEntry, 1);
  entry->func = func;
  entry->user_data = user_data;
  g_hash_table_replace (self->methods, g_strdup (method), entry);
}

/* Calls to browsers */

typedef struct
{
  char   *device_id;
  char   *method;
  gint64  started_us;
  gint64  queue_us;     /* how long it waited in the device's queue before it was sent */
} CallData;

static void
call_data_free (CallData *data)
{
  g_free (data->device_id);
  g_free (data->method);
  g_free (data);
}

static void
call_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ChpBridge *self = g_task_get_source_object (task);
  CallData *data = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  JsonNode *node = chp_session_call_finish (CHP_SESSION (source), result, &error);
  gint64 duration_ms = (g_get_monotonic_time () - data->started_us) / 1000;

  data->queue_us = chp_session_call_get_queue_us (result);

  chp_bridge_audit (self, "call", data->method, node ? "ok" : "error", data->device_id,
                    duration_ms, chp_protocol_error_code_of (error));

  if (node != NULL)
    g_task_return_pointer (task, node, (GDestroyNotify) json_node_unref);
  else
    g_task_return_error (task, g_steal_pointer (&error));
}

/**
 * chp_bridge_call_async:
 * @device_id: the one browser to ask; there is no fallback to another
 *
 * Sends a request to a browser. Errors are %CHP_PROTOCOL_ERROR: `not_paired`, `revoked`,
 * `device_offline`, `timeout`, `cancelled`, or whatever the browser answered.
 */
void
chp_bridge_call_async (ChpBridge           *self,
                       const char          *device_id,
                       const char          *method,
                       JsonNode            *params,
                       guint                timeout_ms,
                       GCancellable        *cancellable,
                       GAsyncReadyCallback  callback,
                       gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  CallData *data;
  ChpSession *session;

  g_return_if_fail (CHP_IS_BRIDGE (self));
  g_return_if_fail (device_id != NULL && method != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, chp_bridge_call_async);
  data = g_new0 (CallData, 1);
  data->device_id = g_strdup (device_id);
  data->method = g_strdup (method);
  data->started_us = g_get_monotonic_time ();
  g_task_set_task_data (task, data, (GDestroyNotify) call_data_free);

  if (g_hash_table_contains (self->revoked, device_id))
    {
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_REVOKED,
                               "This browser was revoked");
      return;
    }

  if (chp_device_list_lookup (self->devices, device_id) == NULL)
    {
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_NOT_PAIRED,
                               "No paired browser has this id");
      return;
    }

  /* Only a session that may still resume is worth waiting for. */
  session = g_hash_table_lookup (self->sessions, device_id);
  if (session == NULL)
    {
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_DEVICE_OFFLINE,
                               "This browser is not connected");
      return;
    }

  chp_session_call_async (session, method, params, timeout_ms, cancellable, call_done_cb,
                          g_steal_pointer (&task));
}

JsonNode *
chp_bridge_call_finish (ChpBridge     *self,
                        GAsyncResult  *result,
                        GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * chp_bridge_call_get_queue_us:
 * @result: a finished chp_bridge_call_async()'s result
 *
 * Returns: how long the call waited behind the browser's other calls (eight at most are on their
 *   way at once) or for the browser to resume, before it was sent, in µs; 0 when it was sent at
 *   once or never reached a session
 */
gint64
chp_bridge_call_get_queue_us (GAsyncResult *result)
{
  CallData *data;

  g_return_val_if_fail (G_IS_TASK (result), 0);
  g_return_val_if_fail (g_task_get_source_tag (G_TASK (result)) == chp_bridge_call_async, 0);

  data = g_task_get_task_data (G_TASK (result));
  return data != NULL ? data->queue_us : 0;
}

