/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-session-write.c: the session's ordered write queue: one JSON-RPC message per line, sent
 * in the order written; a client that does not read its answers is closed. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp"

#include "chp-mcp-session-private.h"

#include <string.h>

/* A client that does not read its answers is closed rather than kept in memory. */
#define MAX_QUEUED_BYTES (32 * 1024 * 1024)

static void write_next (ChpMcpSession *self);

/* @message: (transfer none) */
static void
send_message (ChpMcpSession *self,
              JsonNode      *message)
{
  char *text;
  gsize len;

  if (self->closed || self->draining)
    return;

  /* chp_json_to_string() escapes every control character, so the newline added here is the
   * only one in the line (and it writes numbers JSON can read, which json-glib 1.6 does not). */
  text = chp_json_to_string (message);
  len = strlen (text);
  if (self->queued_bytes + len + 1 > MAX_QUEUED_BYTES)
    {
      g_free (text);
      g_message ("agents: %s does not read its answers (%" G_GSIZE_FORMAT " bytes waiting); "
                 "closing", session_id (self), self->queued_bytes);
      chp_mcp_session_close (self);
      return;
    }

  text = g_realloc (text, len + 1);
  text[len] = '\n';
  g_queue_push_tail (&self->out, g_bytes_new_take (text, len + 1));
  self->queued_bytes += len + 1;

  if (!self->writing)
    write_next (self);
}

static void
write_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  g_autoptr(ChpMcpSession) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = g_queue_pop_head (&self->out);

  self->writing = FALSE;
  self->queued_bytes -= g_bytes_get_size (bytes);

  if (!g_output_stream_write_all_finish (G_OUTPUT_STREAM (source), result, NULL, &error))
    {
      if (!self->closed)
        {
          g_debug ("%s: write failed: %s", session_id (self), error->message);
          chp_mcp_session_close (self);
        }
      chp_mcp_session_maybe_close_stream (self);
      return;
    }

  if (self->closed)
    {
      chp_mcp_session_maybe_close_stream (self);
      return;
    }

  if (!g_queue_is_empty (&self->out))
    write_next (self);
  else if (self->draining)
    chp_mcp_session_close (self);
}

static void
write_next (ChpMcpSession *self)
{
  GBytes *bytes = g_queue_peek_head (&self->out);
  gsize len;
  const guint8 *data = g_bytes_get_data (bytes, &len);

  g_assert (!self->writing);

  self->writing = TRUE;
  g_output_stream_write_all_async (self->output, data, len, G_PRIORITY_DEFAULT,
                                   self->write_cancellable, write_done_cb, g_object_ref (self));
}

static JsonObject *
message_new (JsonNode *id)
{
  JsonObject *object = json_object_new ();

  json_object_set_string_member (object, "jsonrpc", "2.0");
  if (id != NULL)
    json_object_set_member (object, "id", json_node_copy (id));
  return object;
}

/* @object: (transfer full) */
static void
send_object (ChpMcpSession *self,
             JsonObject    *object)
{
  g_autoptr(JsonNode) node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, object);
  send_message (self, node);
}

/* @result: (transfer full) */
void
chp_mcp_session_send_result (ChpMcpSession *self,
                             JsonNode      *id,
                             JsonNode      *result)
{
  JsonObject *object = message_new (id);

  json_object_set_member (object, "result", result);
  send_object (self, object);
}

void
chp_mcp_session_send_empty_result (ChpMcpSession *self,
                                   JsonNode      *id)
{
  JsonNode *result = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (result, json_object_new ());
  chp_mcp_session_send_result (self, id, result);
}

/* @id: (nullable): %NULL answers with id null, as JSON-RPC asks when the id is unknown */
void
chp_mcp_session_send_error (ChpMcpSession *self,
                            JsonNode      *id,
                            int            code,
                            const char    *message)
{
  JsonObject *object = json_object_new ();
  JsonObject *error = json_object_new ();

  json_object_set_string_member (object, "jsonrpc", "2.0");
  if (id != NULL)
    json_object_set_member (object, "id", json_node_copy (id));
  else
    json_object_set_null_member (object, "id");
  json_object_set_int_member (error, "code", code);
  json_object_set_string_member (error, "message", message);
  json_object_set_object_member (object, "error", error);

  g_debug ("%s: JSON-RPC error %d", session_id (self), code);
  send_object (self, object);
}

/* @params: (transfer full) */
void
chp_mcp_session_send_notification (ChpMcpSession *self,
                                   const char    *method,
                                   JsonObject    *params)
{
  JsonObject *object = message_new (NULL);

  json_object_set_string_member (object, "method", method);
  json_object_set_object_member (object, "params", params);
  send_object (self, object);
}

