/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chaperone-test-engine.c: the real core (bridge, store, identity) without GTK, driven by JSON
 * lines on stdin and reporting JSON lines on stdout, so that the Node tests and benchmarks
 * exercise the C bridge exactly as the app runs it. Approvals here stand in for the person
 * pressing Pair; the app itself has no such door. */
#include "config.h"

#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <json-glib/json-glib.h>
#include <locale.h>
#include <stdio.h>

#include "chp-agent-endpoint.h"
#include "chp-engine.h"
#include "chp-frame.h"
#include "chp-json-util.h"
#include "chp-managed-policy.h"
#include "chp-protocol-error.h"

typedef struct
{
  ChpEngine *engine;
  ChpAgentEndpoint *agents;  /* only with --agent-socket */
  const char *agent_socket;
  GMainLoop *loop;
  GDataInputStream *input;
  GHashTable *calls; /* tag -> GCancellable */
  guint heartbeat_ms;
} Harness;

static void
emit (JsonBuilder *builder)
{
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;

  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  text = chp_json_to_string (root);
  fputs (text, stdout);
  fputc ('\n', stdout);
  fflush (stdout);
}

static JsonBuilder *
begin_event (const char *event)
{
  JsonBuilder *builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "event");
  json_builder_add_string_value (builder, event);

  return builder;
}

static void
add_string (JsonBuilder *builder,
            const char  *member,
            const char  *value)
{
  json_builder_set_member_name (builder, member);
  if (value != NULL)
    json_builder_add_string_value (builder, value);
  else
    json_builder_add_null_value (builder);
}

/* A call's reply says how long it took inside the engine (bridge call to answer), which is what
 * the benchmarks report as "from the app", without the JSON-lines pipe around it. */
static void
add_elapsed (JsonBuilder *b,
             gint64       started_us)
{
  if (started_us <= 0)
    return;
  json_builder_set_member_name (b, "elapsedUs");
  json_builder_add_int_value (b, g_get_monotonic_time () - started_us);
}

static void
reply_error_timed (const char   *tag,
                   const GError *error,
                   gint64        started_us)
{
  g_autoptr(JsonBuilder) b = begin_event ("reply");

  add_string (b, "tag", tag);
  add_elapsed (b, started_us);
  json_builder_set_member_name (b, "error");
  json_builder_begin_object (b);
  add_string (b, "code", chp_protocol_error_code_of (error));
  add_string (b, "message", error->message);
  json_builder_end_object (b);
  emit (b);
}

static void
reply_error (const char   *tag,
             const GError *error)
{
  reply_error_timed (tag, error, 0);
}

static void
reply_result_timed (const char *tag,
                    JsonNode   *result,
                    gint64      started_us)
{
  g_autoptr(JsonBuilder) b = begin_event ("reply");

  add_string (b, "tag", tag);
  add_elapsed (b, started_us);
  json_builder_set_member_name (b, "result");
  json_builder_add_value (b, json_node_copy (result));
  emit (b);
}

static void
reply_result (const char *tag,
              JsonNode   *result)
{
  reply_result_timed (tag, result, 0);
}

static const char *
state_outcome (ChpPairingState state)
{
  switch (state)
    {
    case CHP_PAIRING_STATE_APPROVED:
      return "approved";
    case CHP_PAIRING_STATE_REJECTED:
      return "rejected";
    case CHP_PAIRING_STATE_EXPIRED:
      return "expired";
    case CHP_PAIRING_STATE_CHALLENGED:
    case CHP_PAIRING_STATE_WAITING:
      return NULL;
    case CHP_PAIRING_STATE_FAILED:
    case CHP_PAIRING_STATE_ABANDONED:
    default:
      return "failed";
    }
}

static void
request_state_cb (ChpPairingRequest *request,
                  GParamSpec        *pspec,
                  gpointer           user_data)
{
  const char *outcome = state_outcome (chp_pairing_request_get_state (request));
  g_autoptr(JsonBuilder) b = NULL;

  if (outcome == NULL)
    return;

  b = begin_event ("pairing-ended");
  add_string (b, "requestId", chp_pairing_request_get_id (request));
  add_string (b, "outcome", outcome);
  emit (b);
  g_signal_handlers_disconnect_by_func (request, request_state_cb, user_data);
}

static void
pairing_items_cb (GListModel *model,
                  guint       position,
                  guint       removed,
                  guint       added,
                  gpointer    user_data)
{
  for (guint i = position; i < position + added; i++)
    {
      g_autoptr(ChpPairingRequest) request = g_list_model_get_item (model, i);
      g_autoptr(JsonBuilder) b = begin_event ("pairing");

      add_string (b, "requestId", chp_pairing_request_get_id (request));
      add_string (b, "code", chp_pairing_request_get_code (request));
      add_string (b, "origin", chp_pairing_request_get_origin (request));
      add_string (b, "installationId", chp_pairing_request_get_installation_id (request));
      add_string (b, "browser", chp_pairing_request_get_browser (request));
      add_string (b, "existingDeviceName", chp_pairing_request_get_existing_device_name (request));
      json_builder_set_member_name (b, "expiresAt");
      json_builder_add_int_value (b, chp_pairing_request_get_expires_at (request));
      emit (b);

      g_signal_connect (request, "notify::state", G_CALLBACK (request_state_cb), NULL);
    }
}

static void
device_connected_cb (ChpBridge  *bridge,
                     const char *device_id,
                     const char *session_id,
                     gboolean    resumed,
                     gpointer    user_data)
{
  g_autoptr(JsonBuilder) b = begin_event ("device-online");

  add_string (b, "deviceId", device_id);
  add_string (b, "sessionId", session_id);
  json_builder_set_member_name (b, "resumed");
  json_builder_add_boolean_value (b, resumed);
  emit (b);
}

static void
device_disconnected_cb (ChpBridge  *bridge,
                        const char *device_id,
                        gpointer    user_data)
{
  g_autoptr(JsonBuilder) b = begin_event ("device-offline");

  add_string (b, "deviceId", device_id);
  emit (b);
}

static void
device_event_cb (ChpBridge  *bridge,
                 const char *device_id,
                 const char *name,
                 JsonNode   *data,
                 gint64      sequence,
                 gpointer    user_data)
{
  g_autoptr(JsonBuilder) b = begin_event ("ext-event");

  add_string (b, "deviceId", device_id);
  add_string (b, "name", name);
  json_builder_set_member_name (b, "sequence");
  json_builder_add_int_value (b, sequence);
  json_builder_set_member_name (b, "data");
  if (data != NULL)
    json_builder_add_value (b, json_node_copy (data));
  else
    json_builder_add_null_value (b);
  emit (b);
}

typedef struct
{
  Harness *harness;
  char    *tag;
  gint64   started_us;
} CallTag;

static void
call_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  CallTag *call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_bridge_call_finish (CHP_BRIDGE (source), result, &error);

  if (node != NULL)
    reply_result_timed (call->tag, node, call->started_us);
  else
    reply_error_timed (call->tag, error, call->started_us);

  g_hash_table_remove (call->harness->calls, call->tag);
  g_free (call->tag);
  g_free (call);
}

/* An agent's call, through the engine's single door for agents (stop and method checks first). */
static void
agent_call_done_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  CallTag *call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_engine_agent_call_finish (CHP_ENGINE (source), result, &error);

  if (node != NULL)
    reply_result_timed (call->tag, node, call->started_us);
  else
    reply_error_timed (call->tag, error, call->started_us);

  g_hash_table_remove (call->harness->calls, call->tag);
  g_free (call->tag);
  g_free (call);
}

static void
reply_stopped (Harness    *self,
               const char *tag)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonNode) node = NULL;

  if (tag == NULL)
    return;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "stopped");
  json_builder_add_boolean_value (b, chp_engine_get_stopped (self->engine));
  json_builder_end_object (b);
  node = json_builder_get_root (b);
  reply_result (tag, node);
}

static JsonNode *
devices_json (Harness *self)
{
  ChpDeviceList *devices = chp_engine_get_devices (self->engine);
  g_autoptr(JsonBuilder) b = json_builder_new ();
  guint n = g_list_model_get_n_items (G_LIST_MODEL (devices));

  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(ChpDevice) device = g_list_model_get_item (G_LIST_MODEL (devices), i);
      const ChpDeviceInfo *info = chp_device_get_info (device);

      json_builder_begin_object (b);
      add_string (b, "deviceId", info->device_id);
      add_string (b, "name", info->name);
      add_string (b, "origin", info->origin);
      add_string (b, "installationId", info->installation_id);
      add_string (b, "fingerprint", chp_device_get_fingerprint (device));
      json_builder_set_member_name (b, "createdAt");
      json_builder_add_int_value (b, info->created_at);
      json_builder_set_member_name (b, "online");
      json_builder_add_boolean_value (b, chp_device_get_online (device));
      json_builder_set_member_name (b, "rttMs");
      json_builder_add_double_value (b, chp_device_get_rtt_ms (device));
      json_builder_set_member_name (b, "revoked");
      json_builder_add_boolean_value (b, chp_device_get_revoked (device));
      json_builder_set_member_name (b, "stopped");
      json_builder_add_boolean_value (b, chp_device_get_stopped (device));
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  return json_builder_get_root (b);
}

static void
audit_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autofree char *tag = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) entries = chp_store_list_audit_finish (CHP_STORE (source), result, &error);
  g_autoptr(JsonBuilder) b = NULL;
  g_autoptr(JsonNode) node = NULL;

  if (entries == NULL)
    {
      reply_error (tag, error);
      return;
    }

  b = json_builder_new ();
  json_builder_begin_array (b);
  for (guint i = 0; i < entries->len; i++)
    {
      ChpAuditEntry *entry = g_ptr_array_index (entries, i);

      json_builder_begin_object (b);
      add_string (b, "category", entry->category);
      add_string (b, "method", entry->method);
      add_string (b, "outcome", entry->outcome);
      add_string (b, "deviceId", entry->device_id);
      json_builder_set_member_name (b, "durationMs");
      json_builder_add_int_value (b, entry->duration_ms);
      add_string (b, "errorCode", entry->error_code);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  node = json_builder_get_root (b);
  reply_result (tag, node);
}

/* The person's requests from the app (Revoke on a grant, Done on a handoff...): the same engine
 * functions the app's buttons call. */
static void
person_call_done_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  g_autofree char *tag = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_engine_person_call_finish (CHP_ENGINE (source), result, &error);

  if (tag == NULL)
    return;
  if (node != NULL)
    reply_result (tag, node);
  else
    reply_error (tag, error);
}

static void
grants_changed_cb (GListModel *grants,
                   guint       position,
                   guint       removed,
                   guint       added,
                   gpointer    user_data)
{
  g_autoptr(JsonBuilder) b = begin_event ("grants-changed");

  json_builder_set_member_name (b, "grants");
  json_builder_add_value (b, chp_grant_list_to_json (CHP_GRANT_LIST (grants)));
  emit (b);
}

static void
handoff_arrived_cb (ChpEngine  *engine,
                    ChpHandoff *handoff,
                    gpointer    user_data)
{
  g_autoptr(JsonBuilder) b = begin_event ("handoff-arrived");

  json_builder_set_member_name (b, "handoff");
  json_builder_add_value (b, chp_handoff_to_json (handoff));
  emit (b);
}

static void
handoffs_changed_cb (GListModel *handoffs,
                     guint       position,
                     guint       removed,
                     guint       added,
                     gpointer    user_data)
{
  g_autoptr(JsonBuilder) b = begin_event ("handoffs-changed");

  json_builder_set_member_name (b, "handoffs");
  json_builder_add_value (b, chp_handoff_list_to_json (CHP_HANDOFF_LIST (handoffs)));
  emit (b);
}

/* A hold as the app's card sees it (fields: name and value, or a credential's length). */
static JsonNode *
hold_json (ChpHold *hold)
{
  g_autoptr(JsonNode) shown = chp_hold_to_json (hold);
  JsonObject *o = json_node_get_object (shown);

  json_object_set_string_member (o, "holdId", chp_hold_get_id (hold));
  json_object_set_string_member (o, "deviceId", chp_hold_get_device_id (hold));
  json_object_set_int_member (o, "tabId", chp_hold_get_tab_id (hold));
  json_object_set_string_member (o, "signature", chp_hold_get_signature (hold));
  return g_steal_pointer (&shown);
}

static void
hold_changed_cb (ChpEngine *engine,
                 ChpHold   *hold,
                 gpointer   user_data)
{
  g_autoptr(JsonBuilder) b = begin_event ("hold-changed");

  json_builder_set_member_name (b, "hold");
  json_builder_add_value (b, hold_json (hold));
  emit (b);
}

static void
plan_changed_cb (ChpPlanList *plans,
                 ChpPlan     *plan,
                 gpointer     user_data)
{
  g_autoptr(JsonBuilder) b = begin_event ("plan-changed");
  g_autoptr(JsonNode) shown = chp_plan_to_json (plan);

  json_object_set_string_member (json_node_get_object (shown), "planId", chp_plan_get_id (plan));
  json_builder_set_member_name (b, "plan");
  json_builder_add_value (b, g_steal_pointer (&shown));
  emit (b);
}

static ChpPairingRequest *
find_request (Harness    *self,
              const char *request_id)
{
  return chp_pairing_manager_lookup (chp_engine_get_pairing (self->engine), request_id);
}

static void
handle_command (Harness    *self,
                const char *line)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonObject *o;
  const char *cmd, *tag;

  if (!json_parser_load_from_data (parser, line, -1, &error) ||
      !JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)))
    {
      g_printerr ("test-engine: bad command: %s\n", line);
      return;
    }

  o = json_node_get_object (json_parser_get_root (parser));
  cmd = json_object_get_string_member_with_default (o, "cmd", "");
  tag = json_object_get_string_member_with_default (o, "tag", NULL);

  if (g_str_equal (cmd, "approve") || g_str_equal (cmd, "reject"))
    {
      ChpPairingRequest *request =
        find_request (self, json_object_get_string_member_with_default (o, "requestId", ""));

      if (request == NULL)
        {
          g_set_error_literal (&error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS,
                               "No such pairing request");
          if (tag != NULL)
            reply_error (tag, error);
          return;
        }

      if (g_str_equal (cmd, "approve"))
        chp_pairing_request_approve (request,
                                     json_object_get_boolean_member_with_default (o, "replace", FALSE));
      else
        chp_pairing_request_reject (request);
    }
  else if (g_str_equal (cmd, "call") && tag != NULL)
    {
      CallTag *call = g_new0 (CallTag, 1);
      GCancellable *cancellable = g_cancellable_new ();

      call->harness = self;
      call->tag = g_strdup (tag);
      call->started_us = g_get_monotonic_time ();
      g_hash_table_replace (self->calls, g_strdup (tag), cancellable);
      chp_bridge_call_async (chp_engine_get_bridge (self->engine),
                             json_object_get_string_member_with_default (o, "deviceId", ""),
                             json_object_get_string_member_with_default (o, "method", ""),
                             json_object_get_member (o, "params"),
                             json_object_get_int_member_with_default (o, "timeoutMs", 0),
                             cancellable, call_done_cb, call);
    }
  else if (g_str_equal (cmd, "agent-call") && tag != NULL)
    {
      CallTag *call = g_new0 (CallTag, 1);
      GCancellable *cancellable = g_cancellable_new ();

      call->harness = self;
      call->tag = g_strdup (tag);
      call->started_us = g_get_monotonic_time ();
      g_hash_table_replace (self->calls, g_strdup (tag), cancellable);
      chp_engine_agent_call_async (self->engine,
                                   json_object_get_string_member_with_default (o, "deviceId", ""),
                                   json_object_get_string_member_with_default (o, "method", ""),
                                   json_object_get_member (o, "params"),
                                   json_object_get_int_member_with_default (o, "timeoutMs", 0),
                                   cancellable, agent_call_done_cb, call);
    }
  else if (g_str_equal (cmd, "stop-all"))
    {
      chp_engine_stop_all (self->engine, "app");
      reply_stopped (self, tag);
    }
  else if (g_str_equal (cmd, "resume-all"))
    {
      chp_engine_resume_all (self->engine);
      reply_stopped (self, tag);
    }
  else if (g_str_equal (cmd, "cancel") && tag != NULL)
    {
      GCancellable *cancellable = g_hash_table_lookup (self->calls, tag);

      if (cancellable != NULL)
        g_cancellable_cancel (cancellable);
    }
  else if (g_str_equal (cmd, "revoke"))
    {
      g_autoptr(JsonNode) yes = json_node_init_boolean (json_node_alloc (), TRUE);

      chp_bridge_revoke_device (chp_engine_get_bridge (self->engine),
                                json_object_get_string_member_with_default (o, "deviceId", ""));
      if (tag != NULL)
        reply_result (tag, yes);
    }
  else if (g_str_equal (cmd, "devices") && tag != NULL)
    {
      g_autoptr(JsonNode) node = devices_json (self);

      reply_result (tag, node);
    }
  else if (g_str_equal (cmd, "audit") && tag != NULL)
    {
      chp_store_list_audit_async (chp_engine_get_store (self->engine), 1000, NULL,
                                  audit_done_cb, g_strdup (tag));
    }
  else if (g_str_equal (cmd, "grants") && tag != NULL)
    {
      g_autoptr(JsonNode) node = chp_grant_list_to_json (chp_engine_get_grants (self->engine));

      reply_result (tag, node);
    }
  else if (g_str_equal (cmd, "handoffs") && tag != NULL)
    {
      g_autoptr(JsonNode) node = chp_handoff_list_to_json (chp_engine_get_handoffs (self->engine));

      reply_result (tag, node);
    }
  else if (g_str_equal (cmd, "revoke-grant"))
    {
      chp_engine_revoke_grant_async (self->engine,
                                     json_object_get_string_member_with_default (o, "deviceId", ""),
                                     json_object_get_string_member_with_default (o, "grantId", ""),
                                     person_call_done_cb, g_strdup (tag));
    }
  else if (g_str_equal (cmd, "resolve-handoff"))
    {
      chp_engine_resolve_handoff_async (self->engine,
                                        json_object_get_string_member_with_default (o, "deviceId", ""),
                                        json_object_get_string_member_with_default (o, "handoffId", ""),
                                        json_object_get_string_member_with_default (o, "outcome", "done"),
                                        person_call_done_cb, g_strdup (tag));
    }
  else if (g_str_equal (cmd, "show-handoff-tab"))
    {
      chp_engine_show_handoff_tab_async (self->engine,
                                         json_object_get_string_member_with_default (o, "deviceId", ""),
                                         json_object_get_string_member_with_default (o, "handoffId", ""),
                                         person_call_done_cb, g_strdup (tag));
    }
  else if (g_str_equal (cmd, "resolve-hold"))
    {
      /* The card's Approve and Decline, by the same engine call. */
      chp_engine_resolve_hold_async (self->engine,
                                     json_object_get_string_member_with_default (o, "deviceId", ""),
                                     json_object_get_string_member_with_default (o, "holdId", ""),
                                     g_strcmp0 (json_object_get_string_member_with_default (o, "outcome", ""),
                                                "approve") == 0 ? "approve" : "decline",
                                     person_call_done_cb, g_strdup (tag));
    }
  else if (g_str_equal (cmd, "decide-plan") && tag != NULL)
    {
      gboolean done = chp_engine_decide_plan (self->engine,
                                              json_object_get_string_member_with_default (o, "planId", ""),
                                              json_object_get_boolean_member_with_default (o, "approve", FALSE));
      g_autoptr(JsonNode) node = json_node_init_boolean (json_node_alloc (), done);

      reply_result (tag, node);
    }
  else if (g_str_equal (cmd, "floor-rules"))
    {
      g_autoptr(GStrvBuilder) blind = g_strv_builder_new ();
      g_autoptr(GStrvBuilder) hands_only = g_strv_builder_new ();
      g_auto(GStrv) b = NULL;
      g_auto(GStrv) h = NULL;
      JsonArray *list;

      if ((list = chp_json_get_array (o, "blind")) != NULL)
        for (guint i = 0; i < json_array_get_length (list); i++)
          g_strv_builder_add (blind, json_array_get_string_element (list, i));
      if ((list = chp_json_get_array (o, "handsOnly")) != NULL)
        for (guint i = 0; i < json_array_get_length (list); i++)
          g_strv_builder_add (hands_only, json_array_get_string_element (list, i));
      b = g_strv_builder_end (blind);
      h = g_strv_builder_end (hands_only);
      chp_engine_set_floor_rules (self->engine, (const char * const *) b,
                                  (const char * const *) h);
      if (tag != NULL)
        {
          g_autoptr(JsonNode) node = json_node_init_boolean (json_node_alloc (), TRUE);

          reply_result (tag, node);
        }
    }
  else if (g_str_equal (cmd, "resume"))
    {
      chp_engine_resume_device_async (self->engine,
                                      json_object_get_string_member_with_default (o, "deviceId", ""),
                                      person_call_done_cb, g_strdup (tag));
    }
  else if (g_str_equal (cmd, "quit"))
    {
      g_main_loop_quit (self->loop);
    }
  else
    {
      g_printerr ("test-engine: unknown command %s\n", cmd);
    }
}

static void read_next (Harness *self);

static void
line_read_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Harness *self = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (source),
                                                                     result, NULL, &error);

  if (line == NULL)
    {
      /* stdin closed: the test that started us is gone. */
      g_main_loop_quit (self->loop);
      return;
    }

  if (*line != '\0')
    handle_command (self, line);
  read_next (self);
}

static void
read_next (Harness *self)
{
  g_data_input_stream_read_line_async (self->input, G_PRIORITY_DEFAULT, NULL, line_read_cb, self);
}

static void
started_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  Harness *self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonBuilder) b = NULL;
  ChpBridge *bridge;

  if (!chp_engine_start_finish (CHP_ENGINE (source), result, &error))
    {
      g_autoptr(JsonBuilder) e = begin_event ("error");

      add_string (e, "message", error->message);
      emit (e);
      g_main_loop_quit (self->loop);
      return;
    }

  /* As the application does: the agent endpoint is composed on the started engine. */
  if (self->agent_socket != NULL)
    {
      g_autoptr(GError) agents_error = NULL;

      self->agents = chp_agent_endpoint_new (self->engine);
      if (!chp_agent_endpoint_listen (self->agents, self->agent_socket, &agents_error))
        {
          g_message ("agents: no endpoint: %s", agents_error->message);
          g_clear_object (&self->agents);
        }
    }

  bridge = chp_engine_get_bridge (self->engine);
  if (self->heartbeat_ms > 0)
    chp_bridge_set_heartbeat_interval (bridge, self->heartbeat_ms);

  g_signal_connect (chp_engine_get_pairing (self->engine), "items-changed",
                    G_CALLBACK (pairing_items_cb), self);
  g_signal_connect (bridge, "device-connected", G_CALLBACK (device_connected_cb), self);
  g_signal_connect (bridge, "device-disconnected", G_CALLBACK (device_disconnected_cb), self);
  g_signal_connect (bridge, "device-event", G_CALLBACK (device_event_cb), self);
  g_signal_connect (chp_engine_get_grants (self->engine), "items-changed",
                    G_CALLBACK (grants_changed_cb), self);
  g_signal_connect (chp_engine_get_handoffs (self->engine), "items-changed",
                    G_CALLBACK (handoffs_changed_cb), self);
  g_signal_connect (self->engine, "handoff-arrived", G_CALLBACK (handoff_arrived_cb), self);
  g_signal_connect (self->engine, "hold-changed", G_CALLBACK (hold_changed_cb), self);
  g_signal_connect (chp_engine_get_plans (self->engine), "plan-changed",
                    G_CALLBACK (plan_changed_cb), self);

  b = begin_event ("listening");
  json_builder_set_member_name (b, "port");
  json_builder_add_int_value (b, chp_bridge_get_port (bridge));
  add_string (b, "engineId", chp_identity_get_engine_id (chp_engine_get_identity (self->engine)));
  if (self->agents != NULL)
    add_string (b, "agentSocket", chp_agent_endpoint_get_path (self->agents));
  /* A Stop kept from before a restart is in force before the first browser connects. */
  json_builder_set_member_name (b, "stopped");
  json_builder_add_boolean_value (b, chp_engine_get_stopped (self->engine));
  emit (b);

  read_next (self);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GInputStream) stdin_stream = NULL;
  g_autofree char *data_dir = NULL;
  g_autofree char *agent_socket = NULL;
  g_autofree char *policy_path = NULL;
  Harness self = { 0 };
  int port = 0;
  int heartbeat_ms = 0;
  GOptionEntry entries[] = {
    { "port", 0, 0, G_OPTION_ARG_INT, &port, "Bridge port (0 = any)", "N" },
    { "data-dir", 0, 0, G_OPTION_ARG_FILENAME, &data_dir, "Data folder", "DIR" },
    { "heartbeat-ms", 0, 0, G_OPTION_ARG_INT, &heartbeat_ms, "Heartbeat interval", "MS" },
    { "agent-socket", 0, 0, G_OPTION_ARG_FILENAME, &agent_socket,
      "Serve agents (MCP) on this Unix socket; none without it", "PATH" },
    { "policy", 0, 0, G_OPTION_ARG_FILENAME, &policy_path,
      "An administrator's policy file (the app reads only /etc/chaperone/policy.conf)", "FILE" },
    { NULL }
  };

  setlocale (LC_ALL, "");
  context = g_option_context_new ("- drive the Chaperone core from JSON lines");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s\n", error->message);
      return 2;
    }

  self.loop = g_main_loop_new (NULL, FALSE);
  self.engine = chp_engine_new (data_dir);
  if (policy_path != NULL)
    {
      g_autoptr(ChpManagedPolicy) policy = chp_managed_policy_load (policy_path);

      if (chp_managed_policy_get_error (policy) != NULL)
        {
          g_printerr ("%s: %s\n", policy_path, chp_managed_policy_get_error (policy));
          return 2;
        }
      chp_engine_set_managed_policy (self.engine, policy);
    }
  /* No endpoint unless asked: parallel tests must not fight over the user's real socket. */
  self.agent_socket = agent_socket;
  self.calls = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self.heartbeat_ms = heartbeat_ms;
  stdin_stream = g_unix_input_stream_new (0, FALSE);
  self.input = g_data_input_stream_new (stdin_stream);

  chp_engine_start_async (self.engine, port, NULL, started_cb, &self);
  g_main_loop_run (self.loop);

  g_clear_object (&self.input);
  g_clear_pointer (&self.calls, g_hash_table_unref);
  if (self.agents != NULL)
    chp_agent_endpoint_close (self.agents);
  g_clear_object (&self.agents);
  g_clear_object (&self.engine);
  g_clear_pointer (&self.loop, g_main_loop_unref);

  return 0;
}
