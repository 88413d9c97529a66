/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chaperone-native-host.c: relays Chrome native messaging (length-prefixed JSON on stdio) to the
 * loopback bridge, sending the Origin the browser vouched for in argv[1] and nothing else. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-native-host"

#include "chp-json-reader.h"
#include "chp-transport.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <gio/gio.h>
#include <gio/gunixinputstream.h>
#include <gio/gunixoutputstream.h>
#include <json-glib/json-glib.h>
#include <libsoup/soup.h>

/* Browser → host: Chrome allows up to 64 MiB, the bridge never takes a message over 16 MiB
 * (chunked), so anything bigger is a broken or hostile peer and is refused unread. */
#define NH_MAX_IN_BYTES        (16u * 1024 * 1024)
/* Host → browser: Chrome disconnects a host that sends more than 1 MiB in one message. */
#define NH_MAX_OUT_BYTES       (1024u * 1024)
/* native_open is a few dozen bytes; a larger first message is not one. */
#define NH_MAX_OPEN_DEPTH      8
#define NH_MAX_OPEN_BYTES      4096
/* Must match CHP_BRIDGE_DEFAULT_PORT and the app's `bridge-port` default; this program does
 * not link the core to learn it. */
#define NH_DEFAULT_PORT        64333
/* Set where the browser starts (so in the host's own environment): for an app run with
 * --bridge-port, and for tests. */
#define NH_PORT_ENV            "CHAPERONE_BRIDGE_PORT"
/* One byte over what the browser may receive: libsoup refuses a frame at (3.2) or above its
 * limit with a bare close, so a frame of exactly 1 MiB must pass the socket and a bigger one
 * reach the message guard below, which can say "too_large". Never 0: unbounded frames have
 * had an out-of-bounds read (TESTING.md). */
#define NH_WS_MAX_PAYLOAD      (NH_MAX_OUT_BYTES + 1)

#define CHROME_ORIGIN_PREFIX   "chrome-extension://"
#define CHROME_ID_LEN          32

typedef enum
{
  HOST_AWAIT_OPEN,
  HOST_CONNECTING,
  HOST_RELAYING,
  HOST_FINISHED,
} HostState;

typedef struct
{
  GMainLoop               *loop;
  int                      exit_status;
  HostState                state;
  char                    *origin;
  guint                    port;

  GInputStream            *in;
  GOutputStream           *out;
  GCancellable            *cancellable;
  guint32                  prefix;
  guint8                  *payload;
  gsize                    payload_len;

  SoupSession             *session;
  SoupMessage             *upgrade;
  SoupWebsocketConnection *ws;
} Host;

static void read_prefix (Host *host);

/* Accepts what Chrome passes (`chrome-extension://<id>/`) and returns the Origin header the
 * extension's own WebSocket would carry: the same without the slash. */
static char *
origin_from_argument (const char *arg)
{
  const char *id;
  gsize rest;

  if (arg == NULL || !g_str_has_prefix (arg, CHROME_ORIGIN_PREFIX))
    return NULL;

  id = arg + strlen (CHROME_ORIGIN_PREFIX);
  for (gsize i = 0; i < CHROME_ID_LEN; i++)
    if (id[i] < 'a' || id[i] > 'p')
      return NULL;

  rest = strlen (id + CHROME_ID_LEN);
  if (rest > 1 || (rest == 1 && id[CHROME_ID_LEN] != '/'))
    return NULL;

  return g_strndup (arg, strlen (CHROME_ORIGIN_PREFIX) + CHROME_ID_LEN);
}

/* Firefox starts a host with the path of its manifest and the calling add-on's id
 * (`/…/io.github.chaperone.native.json chaperone@chaperone.github.io`), never the origin the
 * add-on's own WebSocket sends and signs: that is moz-extension://<UUID>, a UUID Firefox draws
 * per profile, which no argument carries. Recognised only to refuse with a reason the extension
 * can show; the values are not trusted for anything. */
static gboolean
firefox_caller (int    argc,
                char **argv)
{
  const char *id;

  if (argc != 3 || !g_path_is_absolute (argv[1]) || !g_str_has_suffix (argv[1], ".json"))
    return FALSE;

  id = argv[2];
  if (*id == '\0' || strlen (id) > 255)
    return FALSE;
  for (const char *c = id; *c != '\0'; c++)
    if (!g_ascii_isgraph (*c))
      return FALSE;
  /* Add-on ids are an e-mail-like name or a {GUID}. */
  return strchr (id, '@') != NULL || (id[0] == '{' && g_str_has_suffix (id, "}"));
}

/* The app's own `bridge-port` setting, when its schema is installed where this program looks;
 * 0 (a free port at each start, for tests) says nothing a host could use. */
static guint
setting_port (void)
{
  GSettingsSchemaSource *source = g_settings_schema_source_get_default ();
  g_autoptr(GSettingsSchema) schema = NULL;
  g_autoptr(GSettingsSchemaKey) key = NULL;
  g_autoptr(GSettings) settings = NULL;
  guint16 port = 0;

  if (source == NULL ||
      (schema = g_settings_schema_source_lookup (source, APP_ID, TRUE)) == NULL ||
      !g_settings_schema_has_key (schema, "bridge-port"))
    return 0;
  key = g_settings_schema_get_key (schema, "bridge-port");
  if (!g_variant_type_equal (g_settings_schema_key_get_value_type (key), G_VARIANT_TYPE_UINT16))
    return 0;

  settings = g_settings_new_full (schema, NULL, NULL);
  g_settings_get (settings, "bridge-port", "q", &port);
  return port;
}

/* The one port this host dials, decided by the host and never by a message: the extension's
 * word could otherwise point it, with the extension's Origin, at any service on this computer.
 * The environment's override first, then the app's setting, then the default. Returns 0 for
 * an override that is not a port. */
static guint
bridge_port (void)
{
  const char *override = g_getenv (NH_PORT_ENV);
  guint64 port = 0;

  if (override != NULL && *override != '\0')
    return g_ascii_string_to_unsigned (override, 10, 1, 65535, &port, NULL) ? (guint) port : 0;

  port = setting_port ();
  return port != 0 ? (guint) port : NH_DEFAULT_PORT;
}

/* Stops the relay. Whatever is still in flight (a stdin read, the connect) is cancelled; an
 * open socket gets its close frame now, because nothing iterates the loop after this. */
static void
host_finish (Host    *host,
             int      status,
             gushort  close_code)
{
  if (host->state == HOST_FINISHED)
    return;

  host->state = HOST_FINISHED;
  host->exit_status = status;
  g_cancellable_cancel (host->cancellable);

  if (host->ws != NULL &&
      soup_websocket_connection_get_state (host->ws) == SOUP_WEBSOCKET_STATE_OPEN)
    soup_websocket_connection_close (host->ws,
                                     close_code ? close_code : SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);

  g_main_loop_quit (host->loop);
}

/* Writes one native-messaging frame. Synchronous on purpose: the browser reads its end
 * promptly, and a blocked pipe should hold back the socket rather than grow a queue. */
static gboolean
write_frame (Host       *host,
             const void *data,
             gsize       len)
{
  g_autoptr(GError) error = NULL;
  guint32 prefix = (guint32) len;
  GOutputVector vectors[] = {
    { &prefix, sizeof prefix },
    { data, len },
  };

  g_assert (len <= NH_MAX_OUT_BYTES);

  if (!g_output_stream_writev_all (host->out, vectors, G_N_ELEMENTS (vectors), NULL, NULL,
                                   &error))
    {
      /* The browser is gone (EPIPE): there is nobody left to tell. */
      g_debug ("writing %" G_GSIZE_FORMAT " bytes to the browser failed: %s", len,
               error->message);
      return FALSE;
    }

  return TRUE;
}

static gboolean
write_json (Host        *host,
            JsonBuilder *builder)
{
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;

  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  text = json_to_string (root, FALSE);

  return write_frame (host, text, strlen (text));
}

static void
add_string (JsonBuilder *b,
            const char  *member,
            const char  *value)
{
  json_builder_set_member_name (b, member);
  json_builder_add_string_value (b, value);
}

/* A message of the host's own; the error table of docs/protocol.md §12 supplies the codes. */
static void
send_native_error (Host       *host,
                   const char *code,
                   const char *message)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  add_string (b, "type", "native_error");
  add_string (b, "code", code);
  add_string (b, "message", message);
  write_json (host, b);
}

static void
send_native_closed (Host       *host,
                    guint       code,
                    guint       http_status,
                    const char *reason)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  /* The reason comes from the peer or from GLib; Chrome drops a host that sends bad UTF-8. */
  g_autofree char *valid = g_utf8_make_valid (reason ? reason : "", -1);

  json_builder_begin_object (b);
  add_string (b, "type", "native_closed");
  json_builder_set_member_name (b, "code");
  json_builder_add_int_value (b, code);
  if (http_status != 0 || code == 0)
    {
      json_builder_set_member_name (b, "status");
      json_builder_add_int_value (b, http_status);
    }
  add_string (b, "reason", valid);
  write_json (host, b);
}

static gboolean
send_native_opened (Host *host)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  add_string (b, "type", "native_opened");
  json_builder_set_member_name (b, "port");
  json_builder_add_int_value (b, host->port);
  return write_json (host, b);
}

static void
ws_message_cb (SoupWebsocketConnection *ws,
               gint                     type,
               GBytes                  *message,
               Host                    *host)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (message, &len);

  if (host->state != HOST_RELAYING)
    return;

  if (type != SOUP_WEBSOCKET_DATA_TEXT)
    {
      /* Native messaging carries JSON text only; the bridge never sends binary frames. */
      g_debug ("bridge sent a binary message (%" G_GSIZE_FORMAT " bytes); closing", len);
      send_native_error (host, "unsupported", "The bridge sent a binary message");
      host_finish (host, 1, SOUP_WEBSOCKET_CLOSE_UNSUPPORTED_DATA);
      return;
    }

  if (len > NH_MAX_OUT_BYTES)
    {
      /* The bridge chunks above 512 KiB, so this is a guard: forwarding it would make Chrome
       * drop the port with no explanation. */
      g_debug ("bridge sent %" G_GSIZE_FORMAT " bytes, over the browser's limit; closing", len);
      send_native_error (host, "too_large",
                         "A message from the bridge is larger than the browser accepts");
      host_finish (host, 1, SOUP_WEBSOCKET_CLOSE_TOO_BIG);
      return;
    }

  g_debug ("bridge -> browser: %" G_GSIZE_FORMAT " bytes", len);
  if (!write_frame (host, data, len))
    host_finish (host, 1, SOUP_WEBSOCKET_CLOSE_GOING_AWAY);
}

static void
ws_error_cb (SoupWebsocketConnection *ws,
             GError                  *error,
             Host                    *host)
{
  if (host->state != HOST_RELAYING)
    return;

  /* A single frame over NH_WS_MAX_PAYLOAD: libsoup drops the socket before the message guard
   * sees it. Report it the same way. */
  if (g_error_matches (error, SOUP_WEBSOCKET_ERROR, SOUP_WEBSOCKET_CLOSE_TOO_BIG))
    {
      g_debug ("bridge sent a frame over %u bytes; closing", NH_WS_MAX_PAYLOAD);
      send_native_error (host, "too_large",
                         "A message from the bridge is larger than the browser accepts");
      host_finish (host, 1, SOUP_WEBSOCKET_CLOSE_TOO_BIG);
      return;
    }

  g_debug ("socket error: %s", error->message);
}

static void
ws_closed_cb (SoupWebsocketConnection *ws,
              Host                    *host)
{
  gushort code;

  if (host->state != HOST_RELAYING)
    return;

  /* The code the bridge sent; none at all means the socket just went away, which a browser's
   * own WebSocket reports as 1006. */
  code = soup_websocket_connection_get_close_code (ws);
  if (code == 0)
    code = SOUP_WEBSOCKET_CLOSE_ABNORMAL;

  g_debug ("socket closed: %u", code);
  send_native_closed (host, code, 0, soup_websocket_connection_get_close_data (ws));
  host_finish (host, 0, 0);
}

static void
connect_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  Host *host = user_data;
  g_autoptr(GError) error = NULL;
  SoupWebsocketConnection *ws;

  ws = soup_session_websocket_connect_finish (SOUP_SESSION (source), result, &error);
  if (ws == NULL)
    {
      guint status;

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      /* An HTTP answer that is not an upgrade (403 from the Host/Origin gate) has a status;
       * no answer at all (nothing listening) has none. */
      status = soup_message_get_status (host->upgrade);
      if (status < 100)
        status = 0;
      g_debug ("connect failed (HTTP %u): %s", status, error->message);
      send_native_closed (host, 0, status, error->message);
      host_finish (host, 0, 0);
      return;
    }

  host->ws = ws;
  soup_websocket_connection_set_max_incoming_payload_size (ws, NH_WS_MAX_PAYLOAD);
  /* The bridge pings in the protocol itself (§8); WebSocket-level pings would be noise. */
  soup_websocket_connection_set_keepalive_interval (ws, 0);
  g_signal_connect (ws, "message", G_CALLBACK (ws_message_cb), host);
  g_signal_connect (ws, "error", G_CALLBACK (ws_error_cb), host);
  g_signal_connect (ws, "closed", G_CALLBACK (ws_closed_cb), host);

  g_debug ("socket open");
  host->state = HOST_RELAYING;

  /* The browser's WebSocket has an open event and the extension's handshake waits for it;
   * without this word a port could not tell "connected" from "still dialling" (and a refused
   * connection from a refusal by the app). Written before any relayed message can be. */
  if (!send_native_opened (host))
    {
      host_finish (host, 1, SOUP_WEBSOCKET_CLOSE_GOING_AWAY);
      return;
    }

  /* Reading resumes only now, so what the browser sent right after native_open waited in the
   * pipe and goes out in order. */
  read_prefix (host);
}

/* A string member, read by type: json-glib 1.6's *_with_default() getters log a critical for
 * an object or an array, and a critical is not the answer a malformed message gets. */
static const char *
string_member (JsonObject *o,
               const char *member)
{
  JsonNode *node = json_object_get_member (o, member);

  if (node == NULL || !JSON_NODE_HOLDS_VALUE (node) ||
      json_node_get_value_type (node) != G_TYPE_STRING)
    return "";
  return json_node_get_string (node);
}

/* The one message the host reads. Returns the error text for native_error, or NULL. */
static const char *
parse_native_open (const guint8 *data,
                   gsize         len,
                   guint         bridge,
                   const char  **path_out)
{
  g_autoptr(JsonNode) root = NULL;
  JsonObject *o;
  JsonNode *port;
  const char *path;

  /* The core's strict reader: bounded depth, exactly one value, no echo of the input. */
  if (len > NH_MAX_OPEN_BYTES ||
      (root = chp_json_read_shallow ((const char *) data, len, NH_MAX_OPEN_DEPTH, NULL)) == NULL ||
      !JSON_NODE_HOLDS_OBJECT (root))
    return "The first message must be a native_open object";

  o = json_node_get_object (root);
  if (g_strcmp0 (string_member (o, "type"), "native_open") != 0)
    return "The first message must be native_open";

  /* Only the path and the port are read. Any other member — "origin" above all — is ignored:
   * the origin is the browser's word in argv[1], never the page's. */
  path = string_member (o, "path");
  if (g_strcmp0 (path, "/extension") == 0)
    *path_out = "/extension";
  else if (g_strcmp0 (path, "/pairing") == 0)
    *path_out = "/pairing";
  else
    return "native_open.path must be \"/extension\" or \"/pairing\"";

  /* The port is the host's to know. An extension may still say which one it expects; any
   * other is refused rather than dialled, so a mismatch shows instead of reaching some other
   * service on this computer. */
  port = json_object_get_member (o, "port");
  if (port != NULL &&
      (!JSON_NODE_HOLDS_VALUE (port) || json_node_get_value_type (port) != G_TYPE_INT64 ||
       json_node_get_int (port) != (gint64) bridge))
    return "native_open.port must be left out or be the bridge port this host is set to "
           "(CHAPERONE_BRIDGE_PORT where the browser starts, else the app's bridge-port "
           "setting, else 64333)";

  return NULL;
}

static void
handle_native_open (Host   *host,
                    GBytes *message)
{
  g_autofree char *uri = NULL;
  const char *problem;
  const char *path = NULL;
  guint port = host->port;
  gsize len;
  const guint8 *data = g_bytes_get_data (message, &len);

  problem = parse_native_open (data, len, port, &path);
  if (problem != NULL)
    {
      g_debug ("refused a first message of %" G_GSIZE_FORMAT " bytes", len);
      send_native_error (host, "invalid_params", problem);
      host_finish (host, 1, 0);
      return;
    }

  /* The literal address, never "localhost": a name may resolve to ::1, where the engine does
   * not listen and another process could (docs/protocol.md §1). */
  uri = g_strdup_printf ("ws://127.0.0.1:%u%s", port, path);
  host->upgrade = soup_message_new ("GET", uri);
  /* Which way in this is, for an administrator's Transport lock (chp-transport.h). */
  soup_message_headers_replace (soup_message_get_request_headers (host->upgrade),
                                CHP_TRANSPORT_HEADER, CHP_TRANSPORT_NATIVE_HOST);
  host->state = HOST_CONNECTING;
  g_debug ("connecting to 127.0.0.1:%u%s", port, path);

  soup_session_websocket_connect_async (host->session, host->upgrade, host->origin, NULL,
                                        G_PRIORITY_DEFAULT, host->cancellable, connect_cb, host);
}

static void
relay_to_bridge (Host   *host,
                 GBytes *message)
{
  gsize len;
  const char *data = g_bytes_get_data (message, &len);

  /* A text frame must be UTF-8 (and libsoup warns on one that is not); a NUL is refused too,
   * since JSON text never holds one raw. Chrome only sends valid JSON, so this is a guard. */
  if (len > 0 && !g_utf8_validate_len (data, len, NULL))
    {
      g_debug ("refused %" G_GSIZE_FORMAT " bytes that are not UTF-8 text", len);
      send_native_error (host, "invalid_params", "A message from the browser is not UTF-8 text");
      host_finish (host, 1, SOUP_WEBSOCKET_CLOSE_BAD_DATA);
      return;
    }

  g_debug ("browser -> bridge: %" G_GSIZE_FORMAT " bytes", len);
  soup_websocket_connection_send_message (host->ws, SOUP_WEBSOCKET_DATA_TEXT, message);
  read_prefix (host);
}

static void
read_payload_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  Host *host = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) message = NULL;
  gsize n = 0;

  if (!g_input_stream_read_all_finish (G_INPUT_STREAM (source), result, &n, &error))
    {
      g_clear_pointer (&host->payload, g_free);
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      g_printerr ("chaperone-native-host: reading from the browser failed: %s\n", error->message);
      host_finish (host, 1, SOUP_WEBSOCKET_CLOSE_GOING_AWAY);
      return;
    }

  message = g_bytes_new_take (g_steal_pointer (&host->payload), host->payload_len);
  if (n < host->payload_len)
    {
      g_printerr ("chaperone-native-host: the browser closed the pipe in the middle of a "
                  "message\n");
      host_finish (host, 1, SOUP_WEBSOCKET_CLOSE_GOING_AWAY);
      return;
    }

  if (host->state == HOST_AWAIT_OPEN)
    handle_native_open (host, message);
  else if (host->state == HOST_RELAYING)
    relay_to_bridge (host, message);
}

static void
read_prefix_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  Host *host = user_data;
  g_autoptr(GError) error = NULL;
  gsize n = 0;

  if (!g_input_stream_read_all_finish (G_INPUT_STREAM (source), result, &n, &error))
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      g_printerr ("chaperone-native-host: reading from the browser failed: %s\n", error->message);
      host_finish (host, 1, SOUP_WEBSOCKET_CLOSE_GOING_AWAY);
      return;
    }

  if (n == 0)
    {
      /* The browser closed the port (or the extension was unloaded): the relay's job is done.
       * Nobody reads stdout any more, so nothing is written there. */
      g_debug ("browser closed the pipe");
      host_finish (host, 0, SOUP_WEBSOCKET_CLOSE_GOING_AWAY);
      return;
    }

  if (n < sizeof host->prefix)
    {
      g_printerr ("chaperone-native-host: the browser closed the pipe in the middle of a "
                  "length prefix\n");
      host_finish (host, 1, SOUP_WEBSOCKET_CLOSE_GOING_AWAY);
      return;
    }

  /* Checked before anything is allocated: a bogus prefix must not make this process ask for
   * up to 4 GiB, and nothing after it can be trusted to be a frame boundary. */
  if (host->prefix > NH_MAX_IN_BYTES)
    {
      g_printerr ("chaperone-native-host: refusing a message of %u bytes from the browser "
                  "(the limit is %u)\n", host->prefix, NH_MAX_IN_BYTES);
      host_finish (host, 1, SOUP_WEBSOCKET_CLOSE_TOO_BIG);
      return;
    }

  host->payload_len = host->prefix;
  host->payload = g_malloc (MAX (host->payload_len, 1));
  g_input_stream_read_all_async (host->in, host->payload, host->payload_len, G_PRIORITY_DEFAULT,
                                 host->cancellable, read_payload_cb, host);
}

static void
read_prefix (Host *host)
{
  if (host->state == HOST_FINISHED)
    return;

  /* Native byte order, as Chrome writes it: read into the integer as is. */
  g_input_stream_read_all_async (host->in, &host->prefix, sizeof host->prefix, G_PRIORITY_DEFAULT,
                                 host->cancellable, read_prefix_cb, host);
}

/* Frames get a private copy of fd 1, and fd 1 itself becomes stderr: a stray write to stdout
 * by any library would otherwise corrupt the framing and make Chrome drop the port. */
static int
claim_stdout (void)
{
  int fd = fcntl (STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);

  if (fd < 0 || dup2 (STDERR_FILENO, STDOUT_FILENO) < 0)
    return -1;

  return fd;
}

/* Says why in the one way the add-on can read (a native_error on the port), then ends: taking
 * the origin from a message instead would let the caller choose the origin the app pairs with
 * and binds the device to (docs/security.md, "The native-messaging host"). */
static int
refuse_firefox (const char *addon_id)
{
  Host host = { 0 };
  int out_fd;

  g_printerr ("chaperone-native-host: refusing Firefox (add-on %s): Firefox does not pass the "
              "extension's moz-extension:// origin, and this host takes the origin from the browser "
              "only. The Firefox extension connects over the WebSocket.\n", addon_id);

  signal (SIGPIPE, SIG_IGN);
  out_fd = claim_stdout ();
  if (out_fd < 0)
    return 1;
  host.out = g_unix_output_stream_new (out_fd, TRUE);
  send_native_error (&host, "unsupported",
                     "Firefox does not tell a native host the extension's moz-extension:// "
                     "origin; Chaperone's native host takes the origin from the browser only, "
                     "so in Firefox the extension connects over the WebSocket");
  g_clear_object (&host.out);
  return 1;
}

int
main (int   argc,
      char *argv[])
{
  g_autofree char *origin = NULL;
  g_autoptr(GMainLoop) loop = NULL;
  Host host = { 0 };
  int out_fd;

  /* GLib writes debug output to stdout by default; here stdout is the browser's channel. */
  g_log_writer_default_set_use_stderr (TRUE);

  /* Chrome passes the caller's origin; Chrome on Windows adds --parent-window, which does not
   * matter here. Nothing else may supply or change the origin. */
  origin = origin_from_argument (argc > 1 ? argv[1] : NULL);
  if (origin == NULL && firefox_caller (argc, argv))
    return refuse_firefox (argv[2]);
  if (origin == NULL)
    {
      g_printerr ("chaperone-native-host: the first argument must be the caller origin that "
                  "Chrome passes, chrome-extension://<32 letters a-p>/ (got %s%s%s).\n"
                  "This program is started by the browser; see the native messaging manifest.\n",
                  argc > 1 ? "\"" : "", argc > 1 ? argv[1] : "nothing", argc > 1 ? "\"" : "");
      return 1;
    }

  /* A closed stdout must fail the write with EPIPE, not kill the process mid-close. */
  signal (SIGPIPE, SIG_IGN);

  out_fd = claim_stdout ();
  if (out_fd < 0)
    {
      g_printerr ("chaperone-native-host: cannot use stdout: %s\n", g_strerror (errno));
      return 1;
    }

  /* After stdout is ours: reading the app's setting may load modules that print. */
  host.port = bridge_port ();
  if (host.port == 0)
    {
      g_printerr ("chaperone-native-host: %s must be a port from 1 to 65535 (got \"%s\").\n",
                  NH_PORT_ENV, g_getenv (NH_PORT_ENV));
      return 1;
    }

  loop = g_main_loop_new (NULL, FALSE);
  host.loop = loop;
  host.origin = origin;
  host.state = HOST_AWAIT_OPEN;
  host.in = g_unix_input_stream_new (STDIN_FILENO, FALSE);
  host.out = g_unix_output_stream_new (out_fd, TRUE);
  host.cancellable = g_cancellable_new ();
  host.session = soup_session_new ();
  /* The bridge is on loopback: a configured HTTP proxy must never see this connection. */
  soup_session_set_proxy_resolver (host.session, NULL);

  g_debug ("started for %s, bridge port %u", origin, host.port);
  read_prefix (&host);
  g_main_loop_run (loop);

  if (host.ws != NULL)
    g_signal_handlers_disconnect_by_data (host.ws, &host);
  g_clear_object (&host.ws);
  g_clear_object (&host.upgrade);
  g_clear_object (&host.session);
  g_clear_object (&host.cancellable);
  g_clear_object (&host.out);
  g_clear_object (&host.in);
  g_clear_pointer (&host.payload, g_free);

  g_debug ("exiting with status %d", host.exit_status);
  return host.exit_status;
}
