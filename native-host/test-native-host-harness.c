/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-native-host-harness.c: the native host played as Chrome plays it (framed stdio), a
 * scripted stand-in bridge, and a real engine to reach. */
#include "config.h"

#include "test-native-host-harness.h"

#include <signal.h>
#include <string.h>

/* ---- the host, played as Chrome plays it ---------------------------------------------- */

static void host_read (Host *host);

static void
host_read_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Host *host = user_data;
  gssize n = g_input_stream_read_finish (G_INPUT_STREAM (source), result, NULL);

  host->reading = FALSE;
  if (n <= 0)
    {
      host->out_eof = TRUE;
      return;
    }

  g_byte_array_append (host->buf, host->chunk, (guint) n);
  host_read (host);
}

static void
host_read (Host *host)
{
  host->reading = TRUE;
  g_input_stream_read_async (host->out, host->chunk, sizeof host->chunk, G_PRIORITY_DEFAULT,
                             host->cancellable, host_read_cb, host);
}

static void
host_wait_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Host *host = user_data;

  host->waiting = FALSE;
  if (g_subprocess_wait_finish (G_SUBPROCESS (source), result, NULL))
    host->exited = TRUE;
}

/* Starts the host as Chrome does, with @env (name, value, …, %NULL) added to the test's own
 * environment. */
Host *
host_spawn_env (const char         *origin_arg,
                const char * const *env)
{
  const char *path = g_getenv ("CHAPERONE_NATIVE_HOST");
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GError) error = NULL;
  Host *host;

  g_assert_nonnull (path);
  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                        G_SUBPROCESS_FLAGS_STDOUT_PIPE);
  /* All debug output on: it must go to stderr and never into the frames. */
  g_subprocess_launcher_setenv (launcher, "G_MESSAGES_DEBUG", "all", TRUE);
  /* The bridge port comes from the host's environment or the app's setting, never from a
   * message: no test inherits one by accident. */
  g_subprocess_launcher_unsetenv (launcher, "CHAPERONE_BRIDGE_PORT");
  for (guint i = 0; env != NULL && env[i] != NULL; i += 2)
    g_subprocess_launcher_setenv (launcher, env[i], env[i + 1], TRUE);

  host = g_new0 (Host, 1);
  host->proc = g_subprocess_launcher_spawn (launcher, &error, path, origin_arg, NULL);
  g_assert_no_error (error);
  host->in = g_subprocess_get_stdin_pipe (host->proc);
  host->out = g_subprocess_get_stdout_pipe (host->proc);
  host->buf = g_byte_array_new ();
  host->cancellable = g_cancellable_new ();

  host_read (host);
  host->waiting = TRUE;
  g_subprocess_wait_async (host->proc, host->cancellable, host_wait_cb, host);

  return host;
}

/* Starts the host for a bridge on @port (0: the host's own default). */
Host *
host_spawn (const char *origin_arg,
            guint       port)
{
  g_autofree char *text = g_strdup_printf ("%u", port);
  const char *env[] = { "CHAPERONE_BRIDGE_PORT", text, NULL };

  return host_spawn_env (origin_arg, port != 0 ? env : NULL);
}

static gboolean
host_idle (gpointer data)
{
  Host *host = data;

  return !host->reading && !host->waiting;
}

void
host_free (Host *host)
{
  if (!host->exited)
    g_subprocess_force_exit (host->proc);
  g_cancellable_cancel (host->cancellable);
  /* The callbacks hold this struct: let them finish before it goes. */
  g_assert_true (chp_test_spin_until (host_idle, host, 5000));

  g_clear_object (&host->cancellable);
  g_clear_object (&host->proc);
  g_byte_array_unref (host->buf);
  g_free (host);
}

void
frame_append (GByteArray *out,
              const void *data,
              gsize       len)
{
  guint32 prefix = (guint32) len;

  g_byte_array_append (out, (const guint8 *) &prefix, sizeof prefix);
  g_byte_array_append (out, data, (guint) len);
}

void
host_write_raw (Host       *host,
                const void *data,
                gsize       len)
{
  g_autoptr(GError) error = NULL;

  g_output_stream_write_all (host->in, data, len, NULL, NULL, &error);
  g_assert_no_error (error);
}

void
host_send_len (Host       *host,
               const char *data,
               gsize       len)
{
  g_autoptr(GByteArray) frame = g_byte_array_new ();

  frame_append (frame, data, len);
  host_write_raw (host, frame->data, frame->len);
}

void
host_send (Host       *host,
           const char *text)
{
  host_send_len (host, text, strlen (text));
}

void
host_close_stdin (Host *host)
{
  g_assert_true (g_output_stream_close (host->in, NULL, NULL));
}

static gboolean
host_frame_ready (gpointer data)
{
  Host *host = data;
  guint32 len;

  if (host->out_eof)
    return TRUE;
  if (host->buf->len < sizeof len)
    return FALSE;
  memcpy (&len, host->buf->data, sizeof len);

  return host->buf->len - sizeof len >= len;
}

/* Returns: (transfer full) (nullable): the next frame's payload; %NULL at EOF or timeout */
GBytes *
host_next_bytes (Host  *host,
                 guint  timeout_ms)
{
  GBytes *payload;
  guint32 len;

  chp_test_spin_until (host_frame_ready, host, timeout_ms);
  if (host->buf->len < sizeof len)
    return NULL;
  memcpy (&len, host->buf->data, sizeof len);
  if (host->buf->len - sizeof len < len)
    return NULL;

  payload = g_bytes_new (host->buf->data + sizeof len, len);
  g_byte_array_remove_range (host->buf, 0, (guint) (sizeof len + len));

  return payload;
}

/* Returns: (transfer full) (nullable): the next frame as JSON */
JsonNode *
host_next (Host  *host,
           guint  timeout_ms)
{
  g_autoptr(GBytes) payload = host_next_bytes (host, timeout_ms);
  g_autoptr(JsonParser) parser = json_parser_new ();
  gsize len;
  const char *data;

  if (payload == NULL)
    return NULL;

  data = g_bytes_get_data (payload, &len);
  g_assert_cmpuint (len, <=, MAX_OUT_BYTES);
  g_assert_true (g_utf8_validate_len (data, len, NULL));
  g_assert_true (json_parser_load_from_data (parser, data, (gssize) len, NULL));
  g_assert_true (JSON_NODE_HOLDS_OBJECT (json_parser_get_root (parser)));

  return json_node_ref (json_parser_get_root (parser));
}

const char *
str_of (JsonNode   *node,
        const char *member)
{
  return json_object_get_string_member_with_default (json_node_get_object (node), member, NULL);
}

gint64
int_of (JsonNode   *node,
        const char *member)
{
  return json_object_get_int_member_with_default (json_node_get_object (node), member, -1);
}

/* Like the extension, answers the engine's pings and its extension.info question, and returns
 * the next frame of @type. */
JsonNode *
host_next_type (Host       *host,
                const char *type,
                guint       timeout_ms)
{
  for (;;)
    {
      g_autoptr(JsonNode) node = host_next (host, timeout_ms);
      const char *got;

      if (node == NULL)
        return NULL;

      got = str_of (node, "type");
      /* The host's own word that the socket opened comes first; the tests that read raw
       * frames check it (host_expect_opened), these look past it. */
      if (g_strcmp0 (got, "native_opened") == 0 && g_strcmp0 (type, "native_opened") != 0)
        continue;
      if (g_strcmp0 (got, "ping") == 0 && g_strcmp0 (type, "ping") != 0)
        {
          g_autofree char *pong = chp_frame_build_pong (int_of (node, "sequence"),
                                                        int_of (node, "timestamp"),
                                                        g_get_real_time () / 1000);
          host_send (host, pong);
          continue;
        }
      /* The engine asks every connection what it is and which grants it holds. */
      if (g_strcmp0 (got, "request") == 0 && g_strcmp0 (type, "request") != 0 &&
          (g_strcmp0 (str_of (node, "method"), "extension.info") == 0 ||
           g_strcmp0 (str_of (node, "method"), "extension.grants") == 0))
        {
          g_autoptr(JsonNode) info = json_from_string (
            g_strcmp0 (str_of (node, "method"), "extension.info") == 0
            ? "{\"client\":\"chaperone-test-client\",\"version\":\"1\",\"browser\":\"Test Browser 1\"}"
            : "{\"grants\":[]}", NULL);
          g_autofree char *text = chp_frame_build_response (str_of (node, "id"), info);

          host_send (host, text);
          continue;
        }

      if (g_strcmp0 (got, type) != 0)
        {
          g_test_message ("expected %s, got %s", type, got);
          return NULL;
        }

      return g_steal_pointer (&node);
    }
}

static gboolean
host_exited (gpointer data)
{
  return ((Host *) data)->exited;
}

/* Returns: the exit status, or -1 when the host is still running after @timeout_ms */
int
host_wait_exit (Host  *host,
                guint  timeout_ms)
{
  if (!chp_test_spin_until (host_exited, host, timeout_ms))
    return -1;
  if (!g_subprocess_get_if_exited (host->proc))
    return -2;

  return g_subprocess_get_exit_status (host->proc);
}

/* After the host exits, stdout holds nothing more: no frame, no stray byte. */
/* The host's word that the socket is open, with the port it dialled: the first frame after a
 * native_open that connected, before anything the bridge sent. */
void
host_expect_opened (Host  *host,
                    guint  port)
{
  g_autoptr(JsonNode) node = host_next (host, 5000);

  g_assert_nonnull (node);
  g_assert_cmpstr (str_of (node, "type"), ==, "native_opened");
  g_assert_cmpint (int_of (node, "port"), ==, port);
}

void
assert_stdout_drained (Host *host)
{
  g_assert_true (chp_test_spin_until (host_frame_ready, host, 5000));
  g_assert_true (host->out_eof);
  g_assert_cmpuint (host->buf->len, ==, 0);
}

char *
native_open (const char *path,
             guint       port,
             const char *extra)
{
  return g_strdup_printf ("{\"type\":\"native_open\",\"path\":\"%s\",\"port\":%u%s}", path, port,
                          extra ? extra : "");
}

/* ---- a scripted bridge ----------------------------------------------------------------- */

static void
fake_early_cb (SoupServer        *server,
               SoupServerMessage *msg,
               const char        *path,
               GHashTable        *query,
               gpointer           user_data)
{
  FakeBridge *fb = user_data;
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);

  fb->upgrades++;
  g_free (fb->origin);
  fb->origin = g_strdup (soup_message_headers_get_one (headers, "Origin"));
  g_free (fb->host_header);
  fb->host_header = g_strdup (soup_message_headers_get_one (headers, "Host"));
  g_free (fb->path);
  fb->path = g_strdup (path);

  if (fb->refuse_status != 0)
    soup_server_message_set_status (msg, fb->refuse_status, NULL);
}

static void
fake_message_cb (SoupWebsocketConnection *ws,
                 gint                     type,
                 GBytes                  *message,
                 FakeBridge              *fb)
{
  g_ptr_array_add (fb->received, g_bytes_ref (message));
}

static void
fake_closed_cb (SoupWebsocketConnection *ws,
                FakeBridge              *fb)
{
  fb->closed = TRUE;
  fb->close_code = soup_websocket_connection_get_close_code (ws);
}

static void
fake_ws_cb (SoupServer              *server,
            SoupServerMessage       *msg,
            const char              *path,
            SoupWebsocketConnection *ws,
            gpointer                 user_data)
{
  FakeBridge *fb = user_data;

  g_assert_null (fb->ws);
  fb->ws = g_object_ref (ws);
  soup_websocket_connection_set_max_incoming_payload_size (ws, MAX_IN_BYTES + 1024);
  soup_websocket_connection_set_keepalive_interval (ws, 0);
  g_signal_connect (ws, "message", G_CALLBACK (fake_message_cb), fb);
  g_signal_connect (ws, "closed", G_CALLBACK (fake_closed_cb), fb);

  for (guint i = 0; i < fb->greeting->len; i++)
    soup_websocket_connection_send_message (ws, fb->greet_binary ? SOUP_WEBSOCKET_DATA_BINARY
                                                                 : SOUP_WEBSOCKET_DATA_TEXT,
                                            g_ptr_array_index (fb->greeting, i));
}

FakeBridge *
fake_bridge_new (void)
{
  FakeBridge *fb = g_new0 (FakeBridge, 1);
  g_autoptr(GError) error = NULL;
  GSList *uris;

  fb->server = soup_server_new (NULL, NULL);
  fb->greeting = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  fb->received = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  /* libsoup keeps one handler record per path and picks the most specific: an early handler
   * on NULL alone would never run for the WebSocket paths. */
  soup_server_add_early_handler (fb->server, "/extension", fake_early_cb, fb, NULL);
  soup_server_add_early_handler (fb->server, "/pairing", fake_early_cb, fb, NULL);
  soup_server_add_websocket_handler (fb->server, "/extension", NULL, NULL, fake_ws_cb, fb, NULL);
  soup_server_add_websocket_handler (fb->server, "/pairing", NULL, NULL, fake_ws_cb, fb, NULL);
  g_assert_true (soup_server_listen_local (fb->server, 0, SOUP_SERVER_LISTEN_IPV4_ONLY, &error));
  g_assert_no_error (error);

  uris = soup_server_get_uris (fb->server);
  fb->port = (guint) g_uri_get_port (uris->data);
  g_slist_free_full (uris, (GDestroyNotify) g_uri_unref);

  return fb;
}

void
fake_bridge_free (FakeBridge *fb)
{
  if (fb->ws != NULL)
    {
      g_signal_handlers_disconnect_by_data (fb->ws, fb);
      if (soup_websocket_connection_get_state (fb->ws) == SOUP_WEBSOCKET_STATE_OPEN)
        soup_websocket_connection_close (fb->ws, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
      g_clear_object (&fb->ws);
    }
  soup_server_disconnect (fb->server);
  g_clear_object (&fb->server);
  g_ptr_array_unref (fb->greeting);
  g_ptr_array_unref (fb->received);
  g_free (fb->origin);
  g_free (fb->host_header);
  g_free (fb->path);
  g_free (fb);
}

void
fake_greet (FakeBridge *fb,
            const char *data,
            gsize       len)
{
  g_ptr_array_add (fb->greeting, g_bytes_new (data, len));
}

gboolean
fake_closed (gpointer data)
{
  return ((FakeBridge *) data)->closed;
}

gboolean
fake_has_socket (gpointer data)
{
  return ((FakeBridge *) data)->ws != NULL;
}

gboolean
fake_received_n (gpointer data)
{
  Received *r = data;

  return r->fb->received->len >= r->n;
}

void
assert_bytes_eq (GBytes     *bytes,
                 const char *data,
                 gsize       len)
{
  g_assert_nonnull (bytes);
  g_assert_cmpmem (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), data, len);
}

/* A text message of exactly @len bytes: {"type":"event","pad":"xxx…"}. */
char *
padded_message (gsize len)
{
  static const char head[] = "{\"type\":\"event\",\"pad\":\"";
  static const char tail[] = "\"}";
  char *text = g_malloc (len + 1);
  gsize fixed = strlen (head) + strlen (tail);

  g_assert_cmpuint (len, >, fixed);
  memcpy (text, head, strlen (head));
  memset (text + strlen (head), 'x', len - fixed);
  memcpy (text + len - strlen (tail), tail, strlen (tail));
  text[len] = '\0';

  return text;
}

/* ---- the fixture: a real engine on 127.0.0.1, port 0, in a temporary folder ------------ */

void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->engine = chp_test_engine_start ("chp-native-host-XXXXXX", &f->dir, &f->port);
}

static void
remove_tree (GFile *file)
{
  g_autoptr(GFileEnumerator) children = NULL;
  GFileInfo *info;

  children = g_file_enumerate_children (file, G_FILE_ATTRIBUTE_STANDARD_NAME,
                                        G_FILE_QUERY_INFO_NOFOLLOW_SYMLINKS, NULL, NULL);
  while (children != NULL && (info = g_file_enumerator_next_file (children, NULL, NULL)) != NULL)
    {
      g_autoptr(GFile) child = g_file_get_child (file, g_file_info_get_name (info));

      remove_tree (child);
      g_object_unref (info);
    }
  g_file_delete (file, NULL, NULL);
}

void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(GFile) dir = g_file_new_for_path (f->dir);

  g_clear_object (&f->engine);
  remove_tree (dir);
  g_free (f->dir);
}
