/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chaperone-mcp.c: the stdio relay an MCP client launches. It connects to Chaperone's agent
 * socket, starting the app by D-Bus activation when it is not running, and then copies bytes
 * both ways without reading them (DESIGN §7; docs/relay.md). */
/* struct ucred, for SO_PEERCRED; before any system header. */
#define _GNU_SOURCE
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp"

#include "chp-json-reader.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gio/gio.h>
#include <json-glib/json-glib.h>

/* Bounded buffers: a 2 MiB line streams through in pieces instead of being held whole, and a
 * side that stops reading stops the other side too (backpressure, not memory growth). */
#define RELAY_BUFFER_SIZE         (64 * 1024)
/* A cold start of a GTK app on a slow disk; long enough, but an MCP client's own start
 * timeout is usually 30-60 s and it should hear our answer before it gives up. */
#define START_TIMEOUT_MS_DEFAULT  20000
#define START_TIMEOUT_MS_MAX      600000
#define CONNECT_RETRY_MS          100
/* The first-line peek when giving up: an initialize request is a few hundred bytes, and a
 * client that has sent nothing in 5 s is not waiting for an answer anyway. */
#define PEEK_MAX_BYTES            (1024 * 1024)
#define PEEK_TIMEOUT_MS           5000
/* json-glib's parser recurses; an id sits at depth 1. */
/* JSON-RPC's "server error" range; the app has no code of its own for "not there". */
#define JSONRPC_SERVER_ERROR      (-32000)

#define NOT_STARTED               "Chaperone is not running and could not be started"

typedef enum
{
  RELAY_ERROR_UNSAFE,       /* the folder or socket could have been planted by someone else */
  RELAY_ERROR_NOT_STARTED,  /* no app, and starting one failed or timed out */
  RELAY_ERROR_FAILED,
} RelayError;

#define RELAY_ERROR (relay_error_quark ())
GQuark relay_error_quark (void);
G_DEFINE_QUARK (chaperone-mcp-error-quark, relay_error)

static char *
agent_socket_path (void)
{
  const char *path = g_getenv ("CHAPERONE_AGENT_SOCKET");

  if (path != NULL && *path != '\0')
    return g_strdup (path);

  /* Must match chp_mcp_server_default_path(); this program does not link the core. */
  return g_build_filename (g_get_user_runtime_dir (), "chaperone", "agent.sock", NULL);
}

/* Whether a connect failure means "nobody is listening yet", which starting the app (or waiting
 * for it) can cure. Anything else, such as a refusal on safety grounds, is final. */
static gboolean
error_is_retryable (const GError *error)
{
  return g_error_matches (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND) ||
         g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED) ||
         g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK);
}

/* The folder is what makes the socket trustworthy: only its owner can create, replace or remove
 * entries in a 0700 folder, so a socket found there was put there by us (or root). A symlink, a
 * shared folder or another user's folder could hold a socket that impersonates the app and
 * collects everything the agent sends. */
static gboolean
check_folder (const char  *dir,
              GError     **error)
{
  struct stat st;

  if (lstat (dir, &st) != 0)
    {
      int saved_errno = errno;

      /* The app creates it when it first listens. */
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "cannot look at %s: %s", dir, g_strerror (saved_errno));
      return FALSE;
    }

  if (!S_ISDIR (st.st_mode) || st.st_uid != getuid () || (st.st_mode & 0077) != 0)
    {
      g_set_error (error, RELAY_ERROR, RELAY_ERROR_UNSAFE,
                   "refusing to use %s: it must be a folder owned by you with mode 0700 "
                   "(it is %s, owner uid %u, mode %04o), or someone else could have placed "
                   "the socket in it",
                   dir,
                   S_ISDIR (st.st_mode) ? "a folder" : S_ISLNK (st.st_mode) ? "a symlink"
                                                                           : "not a folder",
                   (guint) st.st_uid, (guint) (st.st_mode & 07777));
      return FALSE;
    }

  return TRUE;
}

static gboolean
check_socket_file (const char  *path,
                   GError     **error)
{
  struct stat st;

  if (lstat (path, &st) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "cannot look at %s: %s", path, g_strerror (saved_errno));
      return FALSE;
    }

  if (!S_ISSOCK (st.st_mode) || st.st_uid != getuid ())
    {
      g_set_error (error, RELAY_ERROR, RELAY_ERROR_UNSAFE,
                   "refusing to use %s: it must be a socket owned by you "
                   "(it is %s, owner uid %u)",
                   path, S_ISSOCK (st.st_mode) ? "a socket" : "not a socket",
                   (guint) st.st_uid);
      return FALSE;
    }

  return TRUE;
}

/* Returns: a connected, non-blocking socket, or -1 with @error set. */
static int
connect_agent_socket (const char  *path,
                      GError     **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  struct ucred peer = { 0 };
  socklen_t peer_len = sizeof peer;
  int fd;

  if (strlen (path) >= sizeof addr.sun_path)
    {
      g_set_error (error, RELAY_ERROR, RELAY_ERROR_FAILED,
                   "the agent socket path %s is longer than a Unix socket allows", path);
      return -1;
    }
  strcpy (addr.sun_path, path);

  if (!check_folder (dir, error) || !check_socket_file (path, error))
    return -1;

  /* Non-blocking from the start: a listener with a full backlog answers EAGAIN (retried like
   * a socket that is not there yet) instead of holding us in connect(). */
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, RELAY_ERROR, RELAY_ERROR_FAILED, "cannot create a socket: %s",
                   g_strerror (saved_errno));
      return -1;
    }

  if (connect (fd, (struct sockaddr *) &addr, sizeof addr) != 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "cannot connect to %s: %s", path, g_strerror (saved_errno));
      close (fd);
      return -1;
    }

  /* The checks above looked at a path; this is about whoever actually answered. */
  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) != 0 || peer.uid != getuid ())
    {
      g_set_error (error, RELAY_ERROR, RELAY_ERROR_UNSAFE,
                   "refusing to use %s: the program listening on it does not run as you", path);
      close (fd);
      return -1;
    }

  return fd;
}

/* Starting the app: a StartServiceByName call and a 100 ms connect retry run side by side on
 * one main loop under one deadline. The socket accepting is what counts; the D-Bus reply only
 * decides what to say if it never does (or ends the wait early when activation failed). */
typedef struct
{
  GMainLoop       *loop;
  GCancellable    *cancellable;
  const char      *path;
  guint            timeout_ms;
  gint64           deadline;
  guint            pending;
  GDBusConnection *bus;
  guint32          start_reply;
  int              fd;
  GError          *error;
} Starter;

/* StartServiceByName's answers (D-Bus specification). */
#define DBUS_START_REPLY_SUCCESS          1
#define DBUS_START_REPLY_ALREADY_RUNNING  2

static void
starter_finish (Starter *starter,
                int      fd,
                GError  *error)
{
  if (starter->fd >= 0 || starter->error != NULL)
    {
      if (fd >= 0)
        close (fd);
      g_clear_error (&error);
      return;
    }

  starter->fd = fd;
  starter->error = error;
  g_main_loop_quit (starter->loop);
}

static void
start_service_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  Starter *starter = user_data;
  g_autoptr(GVariant) reply = NULL;
  g_autoptr(GError) error = NULL;

  starter->pending--;
  reply = g_dbus_connection_call_finish (G_DBUS_CONNECTION (source), result, &error);
  if (reply == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      /* "The name … was not provided by any .service files" reads better without the
       * org.freedesktop.DBus.Error.ServiceUnknown prefix. */
      g_dbus_error_strip_remote_error (error);
      starter_finish (starter, -1,
                      g_error_new (RELAY_ERROR, RELAY_ERROR_NOT_STARTED,
                                   NOT_STARTED ": D-Bus could not start %s: %s", APP_ID,
                                   error->message));
      return;
    }

  g_variant_get (reply, "(u)", &starter->start_reply);
  g_debug ("StartServiceByName answered %u", starter->start_reply);
}

static void
bus_ready_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  Starter *starter = user_data;
  g_autoptr(GError) error = NULL;
  gint64 remaining_ms;

  starter->pending--;
  starter->bus = g_dbus_connection_new_for_address_finish (result, &error);
  if (starter->bus == NULL)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;

      starter_finish (starter, -1,
                      g_error_new (RELAY_ERROR, RELAY_ERROR_NOT_STARTED,
                                   NOT_STARTED ": cannot reach the D-Bus session bus: %s",
                                   error->message));
      return;
    }

  /* Our own deadline cancels the call; its D-Bus timeout is a little later only so that the
   * reason given at the deadline is ours (what was and was not answered), never a race with
   * "Timeout was reached". */
  remaining_ms = (starter->deadline - g_get_monotonic_time ()) / 1000 + 1000;
  starter->pending++;
  g_dbus_connection_call (starter->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                          "org.freedesktop.DBus", "StartServiceByName",
                          g_variant_new ("(su)", APP_ID, 0u), G_VARIANT_TYPE ("(u)"),
                          G_DBUS_CALL_FLAGS_NONE, (int) MAX (remaining_ms, 1),
                          starter->cancellable, start_service_cb, starter);
}

static gboolean
retry_connect_cb (gpointer user_data)
{
  Starter *starter = user_data;
  g_autoptr(GError) error = NULL;
  int fd;

  fd = connect_agent_socket (starter->path, &error);
  if (fd >= 0)
    starter_finish (starter, fd, NULL);
  else if (!error_is_retryable (error))
    starter_finish (starter, -1, g_steal_pointer (&error));

  return G_SOURCE_CONTINUE;
}

static gboolean
deadline_cb (gpointer user_data)
{
  Starter *starter = user_data;
  double seconds = starter->timeout_ms / 1000.0;
  GError *error;

  if (starter->start_reply == DBUS_START_REPLY_ALREADY_RUNNING)
    error = g_error_new (RELAY_ERROR, RELAY_ERROR_NOT_STARTED,
                         "Chaperone is running but its agent socket %s did not accept a "
                         "connection within %g s", starter->path, seconds);
  else if (starter->start_reply == DBUS_START_REPLY_SUCCESS)
    error = g_error_new (RELAY_ERROR, RELAY_ERROR_NOT_STARTED,
                         NOT_STARTED ": it was started but did not open its agent socket %s "
                         "within %g s", starter->path, seconds);
  else if (starter->bus == NULL)
    error = g_error_new (RELAY_ERROR, RELAY_ERROR_NOT_STARTED,
                         NOT_STARTED ": the D-Bus session bus did not answer within %g s",
                         seconds);
  else
    error = g_error_new (RELAY_ERROR, RELAY_ERROR_NOT_STARTED,
                         NOT_STARTED ": D-Bus did not start %s within %g s", APP_ID, seconds);

  starter_finish (starter, -1, error);
  return G_SOURCE_CONTINUE;
}

/* Returns: a connected socket once the started app listens, or -1 with @error set. */
static int
start_app_and_connect (const char  *path,
                       guint        timeout_ms,
                       GError     **error)
{
  g_autoptr(GMainLoop) loop = g_main_loop_new (NULL, FALSE);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) local_error = NULL;
  g_autofree char *address = NULL;
  Starter starter = { 0 };
  guint retry_id, deadline_id;

  /* Without DBUS_SESSION_BUS_ADDRESS this tries $XDG_RUNTIME_DIR/bus, as every GApplication
   * does, so we reach the same bus the app would register on. */
  address = g_dbus_address_get_for_bus_sync (G_BUS_TYPE_SESSION, NULL, &local_error);
  if (address == NULL)
    {
      g_set_error (error, RELAY_ERROR, RELAY_ERROR_NOT_STARTED,
                   NOT_STARTED ": there is no D-Bus session bus: %s", local_error->message);
      return -1;
    }

  starter.loop = loop;
  starter.cancellable = cancellable;
  starter.path = path;
  starter.timeout_ms = timeout_ms;
  starter.deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  starter.fd = -1;

  /* A private connection: the shared session-bus singleton would raise SIGTERM on us if the
   * bus went away while we relay, long after we stopped needing it. */
  starter.pending++;
  g_dbus_connection_new_for_address (address,
                                     G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                                     G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
                                     NULL, cancellable, bus_ready_cb, &starter);
  retry_id = g_timeout_add (CONNECT_RETRY_MS, retry_connect_cb, &starter);
  deadline_id = g_timeout_add (timeout_ms, deadline_cb, &starter);

  g_main_loop_run (loop);

  g_source_remove (retry_id);
  g_source_remove (deadline_id);
  /* The callbacks point into this stack frame: let every one of them run before it goes. */
  g_cancellable_cancel (cancellable);
  while (starter.pending > 0)
    g_main_context_iteration (NULL, TRUE);

  if (starter.bus != NULL)
    {
      g_dbus_connection_close_sync (starter.bus, NULL, NULL);
      g_clear_object (&starter.bus);
    }

  if (starter.fd < 0)
    {
      g_propagate_error (error, starter.error);
      return -1;
    }

  return starter.fd;
}

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

  /* The core's strict reader: bounded depth, one value, nothing json-glib's parser tolerates. */
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
static int
give_up (int         in_fd,
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

typedef struct
{
  char  data[RELAY_BUFFER_SIZE];
  gsize start;
  gsize end;
} Buffer;

static gboolean
buffer_is_empty (const Buffer *buffer)
{
  return buffer->start == buffer->end;
}

static gboolean
buffer_has_room (const Buffer *buffer)
{
  return buffer->end < RELAY_BUFFER_SIZE || buffer->start > 0;
}

static void
buffer_clear (Buffer *buffer)
{
  buffer->start = buffer->end = 0;
}

/* Returns: what read() returned; -1 with errno set. */
static ssize_t
buffer_fill (Buffer *buffer,
             int     fd)
{
  ssize_t n;

  if (buffer->end == RELAY_BUFFER_SIZE)
    {
      memmove (buffer->data, buffer->data + buffer->start, buffer->end - buffer->start);
      buffer->end -= buffer->start;
      buffer->start = 0;
    }

  do
    n = read (fd, buffer->data + buffer->end, RELAY_BUFFER_SIZE - buffer->end);
  while (n < 0 && errno == EINTR);

  if (n > 0)
    buffer->end += (gsize) n;

  return n;
}

/* Writes as much as @fd takes now. Returns: %FALSE with errno set on a write error. */
static gboolean
buffer_drain (Buffer *buffer,
              int     fd)
{
  while (!buffer_is_empty (buffer))
    {
      ssize_t n = write (fd, buffer->data + buffer->start, buffer->end - buffer->start);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EAGAIN)
        return TRUE;
      if (n < 0)
        return FALSE;

      buffer->start += (gsize) n;
    }

  buffer_clear (buffer);
  return TRUE;
}

static gboolean
errno_means_peer_closed (int saved_errno)
{
  return saved_errno == EPIPE || saved_errno == ECONNRESET;
}

/* Copies stdin → socket and socket → stdout until the app closes the socket. Every byte goes
 * on as soon as it arrives: the loop drains right after each read, so a message costs no extra
 * poll round, and nothing waits for a line to be complete.
 * Returns: the exit status. */
static int
relay (int sock,
       int in_fd,
       int out_fd)
{
  g_autofree Buffer *up = g_new0 (Buffer, 1);    /* client → app */
  g_autofree Buffer *down = g_new0 (Buffer, 1);  /* app → client */
  gboolean in_open = TRUE;
  gboolean sock_read_open = TRUE;
  gboolean sock_write_open = TRUE;
  gboolean app_left = FALSE;

  for (;;)
    {
      struct pollfd fds[3];
      int in_i = -1, sock_i = -1;
      nfds_t n_fds = 0;
      short sock_events = 0;

      if (sock_write_open && !buffer_is_empty (up) && !buffer_drain (up, sock))
        {
          int saved_errno = errno;

          if (!errno_means_peer_closed (saved_errno))
            {
              g_printerr ("chaperone-mcp: cannot write to Chaperone: %s\n",
                          g_strerror (saved_errno));
              return 1;
            }

          /* The app stopped reading: what the client sends now goes nowhere, but whatever
           * the app wrote before it left is still owed to the client. */
          app_left = TRUE;
          sock_write_open = FALSE;
          in_open = FALSE;
          buffer_clear (up);
        }

      if (!buffer_is_empty (down) && !buffer_drain (down, out_fd))
        {
          int saved_errno = errno;

          g_printerr ("chaperone-mcp: cannot write to stdout: %s\n", g_strerror (saved_errno));
          return 1;
        }

      /* The client is done and everything it said was delivered: tell the app, then keep
       * relaying its last answers until it closes. */
      if (!in_open && sock_write_open && buffer_is_empty (up))
        {
          shutdown (sock, SHUT_WR);
          sock_write_open = FALSE;
        }

      if (!sock_read_open && buffer_is_empty (down))
        break;

      if (in_open && buffer_has_room (up))
        {
          in_i = (int) n_fds;
          fds[n_fds++] = (struct pollfd) { .fd = in_fd, .events = POLLIN };
        }
      if (sock_read_open && buffer_has_room (down))
        sock_events |= POLLIN;
      if (sock_write_open && !buffer_is_empty (up))
        sock_events |= POLLOUT;
      if (sock_events != 0)
        {
          sock_i = (int) n_fds;
          fds[n_fds++] = (struct pollfd) { .fd = sock, .events = sock_events };
        }
      /* Writable stdout or socket: drained at the top of the next round. */
      if (!buffer_is_empty (down))
        {
          fds[n_fds++] = (struct pollfd) { .fd = out_fd, .events = POLLOUT };
        }

      if (poll (fds, n_fds, -1) < 0)
        {
          int saved_errno = errno;

          if (saved_errno == EINTR)
            continue;
          g_printerr ("chaperone-mcp: poll failed: %s\n", g_strerror (saved_errno));
          return 1;
        }

      if (in_i >= 0 && (fds[in_i].revents & POLLNVAL) != 0)
        in_open = FALSE;
      else if (in_i >= 0 && fds[in_i].revents != 0)
        {
          ssize_t n = buffer_fill (up, in_fd);

          if (n == 0)
            in_open = FALSE;
          else if (n < 0 && errno != EAGAIN)
            {
              int saved_errno = errno;

              g_printerr ("chaperone-mcp: cannot read from stdin: %s\n",
                          g_strerror (saved_errno));
              return 1;
            }
        }

      if (sock_i >= 0 && (sock_events & POLLIN) != 0 && fds[sock_i].revents != 0)
        {
          ssize_t n = buffer_fill (down, sock);

          if (n == 0 || (n < 0 && errno_means_peer_closed (errno)))
            {
              /* Closed before we passed on the client's EOF: the app quit or the person
               * disconnected this agent session. */
              if (sock_write_open)
                app_left = TRUE;
              sock_read_open = FALSE;
              sock_write_open = FALSE;
              in_open = FALSE;
              buffer_clear (up);
            }
          else if (n < 0 && errno != EAGAIN)
            {
              int saved_errno = errno;

              g_printerr ("chaperone-mcp: cannot read from Chaperone: %s\n",
                          g_strerror (saved_errno));
              return 1;
            }
        }
    }

  if (app_left)
    {
      g_printerr ("chaperone-mcp: Chaperone closed the connection (it quit, or this agent "
                  "session was disconnected)\n");
      return 1;
    }

  return 0;
}

/* A launcher that closed fd 0, 1 or 2 would have our socket take its number and be read as
 * stdin or written with messages; /dev/null keeps the numbers what they are meant to be. */
static void
keep_standard_fds_open (void)
{
  for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++)
    if (fcntl (fd, F_GETFD) < 0 && errno == EBADF && open ("/dev/null", O_RDWR) != fd)
      _exit (1);
}

/* The protocol gets a private copy of fd 1, and fd 1 itself becomes stderr: a stray write to
 * stdout by any library would otherwise land in the middle of the JSON-RPC stream. */
static int
claim_stdout (void)
{
  int fd = fcntl (STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);

  if (fd < 0 || dup2 (STDERR_FILENO, STDOUT_FILENO) < 0)
    return -1;

  return fd;
}

static gboolean
parse_start_timeout (guint   *timeout_ms,
                     GError **error)
{
  const char *value = g_getenv ("CHAPERONE_MCP_START_TIMEOUT_MS");
  guint64 parsed;

  *timeout_ms = START_TIMEOUT_MS_DEFAULT;
  if (value == NULL || *value == '\0')
    return TRUE;

  if (!g_ascii_string_to_unsigned (value, 10, 1, START_TIMEOUT_MS_MAX, &parsed, NULL))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "CHAPERONE_MCP_START_TIMEOUT_MS must be a number of milliseconds from 1 "
                   "to %d, not \"%s\"", START_TIMEOUT_MS_MAX, value);
      return FALSE;
    }

  *timeout_ms = (guint) parsed;
  return TRUE;
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *path = NULL;
  gboolean version = FALSE;
  guint timeout_ms;
  int out_fd, sock, out_flags, status;
  const GOptionEntry entries[] = {
    { "version", 0, 0, G_OPTION_ARG_NONE, &version, "Print the version and exit", NULL },
    { NULL }
  };

  keep_standard_fds_open ();

  /* The few strings GLib prints for us (--help, strerror) follow the person's locale. */
  setlocale (LC_ALL, "");

  /* GLib writes debug output to stdout by default; here stdout is the client's channel. */
  g_log_writer_default_set_use_stderr (TRUE);

  context = g_option_context_new (NULL);
  g_option_context_set_summary (context,
    "Relays an MCP client's stdio to Chaperone's agent socket, starting Chaperone by D-Bus\n"
    "activation when it is not running. MCP clients launch it, for example:\n"
    "  claude mcp add chaperone -- chaperone-mcp");
  g_option_context_set_description (context,
    "Environment:\n"
    "  CHAPERONE_AGENT_SOCKET          the socket to use instead of\n"
    "                                  $XDG_RUNTIME_DIR/chaperone/agent.sock\n"
    "  CHAPERONE_MCP_START_TIMEOUT_MS  how long to wait for Chaperone to start (20000)\n"
    "\n"
    "Exit status: 0 when the session ended normally, 1 when Chaperone could not be\n"
    "reached or the connection failed, 2 for a usage error.");
  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("chaperone-mcp: %s (try --help)\n", error->message);
      return 2;
    }
  if (argc > 1)
    {
      g_printerr ("chaperone-mcp: unexpected argument \"%s\" (try --help)\n", argv[1]);
      return 2;
    }
  if (version)
    {
      g_print ("chaperone-mcp %s\n", PACKAGE_VERSION);
      return 0;
    }
  if (!parse_start_timeout (&timeout_ms, &error))
    {
      g_printerr ("chaperone-mcp: %s\n", error->message);
      return 2;
    }

  /* A client that closed its end must fail our write with EPIPE, not kill us mid-message. */
  signal (SIGPIPE, SIG_IGN);

  out_fd = claim_stdout ();
  if (out_fd < 0)
    {
      int saved_errno = errno;

      g_printerr ("chaperone-mcp: cannot use stdout: %s\n", g_strerror (saved_errno));
      return 1;
    }

  path = agent_socket_path ();
  sock = connect_agent_socket (path, &error);
  if (sock < 0 && error_is_retryable (error))
    {
      g_debug ("%s; starting " APP_ID, error->message);
      g_clear_error (&error);
      sock = start_app_and_connect (path, timeout_ms, &error);
    }
  if (sock < 0)
    {
      g_autofree char *message = NULL;

      /* Our own errors are whole sentences; a system error needs to say what it was about. */
      if (error->domain == RELAY_ERROR)
        message = g_strdup (error->message);
      else
        message = g_strdup_printf ("cannot reach Chaperone: %s", error->message);

      return give_up (STDIN_FILENO, out_fd, message);
    }

  /* stdout must not block while the socket has something to say, so the loop can keep
   * reading the client; stdin stays blocking because poll() vouches for each read. A terminal
   * is left alone: its file description is the shell's too, and a person typing is slow. The
   * flag is shared with whoever else holds this pipe, so it is put back when we are done. */
  out_flags = fcntl (out_fd, F_GETFL);
  if (out_flags >= 0 && !isatty (out_fd))
    fcntl (out_fd, F_SETFL, out_flags | O_NONBLOCK);

  status = relay (sock, STDIN_FILENO, out_fd);

  if (out_flags >= 0 && !isatty (out_fd))
    fcntl (out_fd, F_SETFL, out_flags);
  close (sock);

  return status;
}
