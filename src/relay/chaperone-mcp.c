/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chaperone-mcp.c: the stdio relay an MCP client launches. It connects to Chaperone's agent
 * socket, starting the app by D-Bus activation when it is not running, and then copies bytes
 * both ways without reading them (DESIGN §7; docs/relay.md). This part is the byte copying and
 * main(); reaching the app is in chaperone-mcp-connect.c, and the answer when it cannot be
 * reached in chaperone-mcp-fallback.c. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp"

#include "chaperone-mcp-private.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Bounded buffers: a 2 MiB line streams through in pieces instead of being held whole, and a
 * side that stops reading stops the other side too (backpressure, not memory growth). */
#define RELAY_BUFFER_SIZE         (64 * 1024)
/* A cold start of a GTK app on a slow disk; long enough, but an MCP client's own start
 * timeout is usually 30-60 s and it should hear our answer before it gives up. */
#define START_TIMEOUT_MS_DEFAULT  20000
#define START_TIMEOUT_MS_MAX      600000

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

  path = relay_agent_socket_path ();
  sock = relay_connect_agent_socket (path, &error);
  if (sock < 0 && relay_error_is_retryable (error))
    {
      g_debug ("%s; starting " APP_ID, error->message);
      g_clear_error (&error);
      sock = relay_start_app_and_connect (path, timeout_ms, &error);
    }
  if (sock < 0)
    {
      g_autofree char *message = NULL;

      /* Our own errors are whole sentences; a system error needs to say what it was about. */
      if (error->domain == RELAY_ERROR)
        message = g_strdup (error->message);
      else
        message = g_strdup_printf ("cannot reach Chaperone: %s", error->message);

      return relay_give_up (STDIN_FILENO, out_fd, message);
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
