/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chaperone-mcp-fallback.c: when Chaperone cannot be reached, the relay says why on stderr and
 * answers the MCP client's first request (read with src/wire's strict JSON reader) with that
 * reason as a JSON-RPC error. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp"

#include "chaperone-mcp-private.h"

#include "chp-json-reader.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

/* The first-line peek when giving up: an initialize request is a few hundred bytes, and a
 * client that has sent nothing in 5 s is not waiting for an answer anyway. */
#define PEEK_MAX_BYTES            (1024 * 1024)
#define PEEK_TIMEOUT_MS           5000
/* JSON-RPC's "server error" range; the app has no code of its own for "not there". */
#define JSONRPC_SERVER_ERROR      (-32000)

/* Reads the client's first line, or what came before EOF, within a bounded time and size.
 * Returns: (nullable): the line without its newline; %NULL when there is none to answer. */
static GByteArray *
read_first_line (int fd)
{
  g_autoptr(GByteArray) line = g_byte_array_new ();
  gint64 deadline = g_get_monotonic_time () + (gint64) PEEK_TIMEOUT_MS * 1000;

  while (line->len <= PEEK_MAX_BYTES)
    {
      struct pollfd pfd = { .fd = fd, .events = POLLIN };
      gint64 remaining_ms = (deadline - g_get_monotonic_time ()) / 1000;
      guint8 chunk[4096];
      guint8 *newline;
      ssize_t n;
      int ready;

      if (remaining_ms <= 0)
        return NULL;

      ready = poll (&pfd, 1, (int) remaining_ms);
      if (ready < 0 && errno == EINTR)
        continue;
      if (ready <= 0)
        return NULL;

      /* poll() said readable, so this read returns at once even on a blocking stdin. */
      n = read (fd, chunk, sizeof chunk);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n < 0)
        return NULL;
      if (n == 0)
        return line->len > 0 ? g_steal_pointer (&line) : NULL;

      newline = memchr (chunk, '\n', (gsize) n);
      g_byte_array_append (line, chunk, newline != NULL ? (guint) (newline - chunk) : (guint) n);
      if (newline != NULL)
        return line->len <= PEEK_MAX_BYTES ? g_steal_pointer (&line) : NULL;
    }

  return NULL;
}

/* Returns: (nullable): the JSON-RPC error answering @line, newline-terminated, or %NULL when
 * @line is not a request with an id (a notification must not be answered). */
static char *
error_reply_for (const GByteArray *line,
                 const char       *message)
{
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) reply = NULL;
  g_autofree char *text = NULL;
  JsonObject *request;
  JsonNode *id, *method;
  GType id_type;

  /* The wire layer's strict reader: bounded depth, one value, nothing json-glib's parser
   * tolerates. */
  root = chp_json_read ((const char *) line->data, line->len, NULL);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    return NULL;

  request = json_node_get_object (root);
  method = json_object_get_member (request, "method");
  id = json_object_get_member (request, "id");
  if (method == NULL || !JSON_NODE_HOLDS_VALUE (method) ||
      json_node_get_value_type (method) != G_TYPE_STRING ||
      id == NULL || !JSON_NODE_HOLDS_VALUE (id))
    return NULL;

  /* MCP ids are strings or numbers (never null); the copy keeps the client's own value. */
  id_type = json_node_get_value_type (id);
  if (id_type != G_TYPE_STRING && id_type != G_TYPE_INT64 && id_type != G_TYPE_DOUBLE)
    return NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "jsonrpc");
  json_builder_add_string_value (builder, "2.0");
  json_builder_set_member_name (builder, "id");
  json_builder_add_value (builder, json_node_copy (id));
  json_builder_set_member_name (builder, "error");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "code");
  json_builder_add_int_value (builder, JSONRPC_SERVER_ERROR);
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, message);
  json_builder_end_object (builder);
  json_builder_end_object (builder);

  reply = json_builder_get_root (builder);
  json_generator_set_root (generator, reply);
  text = json_generator_to_data (generator, NULL);

  return g_strconcat (text, "\n", NULL);
}

static gboolean
write_all (int         fd,
           const char *data,
           gsize       len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, data, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        {
          struct pollfd pfd = { .fd = fd, .events = POLLOUT };

          poll (&pfd, 1, -1);
          continue;
        }
      if (n < 0)
        return FALSE;

      data += n;
      len -= (gsize) n;
    }

  return TRUE;
}

/* Says why once on stderr and, so the MCP client shows that reason instead of a bare "server
 * disconnected" or a hang until its own timeout, answers its first request with it. */
int
relay_give_up (int         in_fd,
               int         out_fd,
               const char *message)
{
  g_autoptr(GByteArray) line = NULL;
  g_autofree char *reply = NULL;

  g_printerr ("chaperone-mcp: %s\n", message);

  line = read_first_line (in_fd);
  if (line != NULL)
    reply = error_reply_for (line, message);
  if (reply != NULL)
    write_all (out_fd, reply, strlen (reply));

  return 1;
}
