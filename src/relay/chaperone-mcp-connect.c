/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chaperone-mcp-connect.c: how the relay reaches Chaperone: the agent socket's path, the checks
 * that it is the person's own app listening there, and starting the app by D-Bus activation when
 * nobody is. */
/* struct ucred, for SO_PEERCRED; before any system header. */
#define _GNU_SOURCE
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp"

#include "chaperone-mcp-private.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define CONNECT_RETRY_MS          100

#define NOT_STARTED               "Chaperone is not running and could not be started"

G_DEFINE_QUARK (chaperone-mcp-error-quark, relay_error)

char *
relay_agent_socket_path (void)
{
  const char *path = g_getenv ("CHAPERONE_AGENT_SOCKET");

  if (path != NULL && *path != '\0')
    return g_strdup (path);

  /* Must match chp_mcp_server_default_path(); this program does not link the core. */
  return g_build_filename (g_get_user_runtime_dir (), "chaperone", "agent.sock", NULL);
}

/* Whether a connect failure means "nobody is listening yet", which starting the app (or waiting
 * for it) can cure. Anything else, such as a refusal on safety grounds, is final. */
gboolean
relay_error_is_retryable (const GError *error)
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
int
relay_connect_agent_socket (const char  *path,
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

  fd = relay_connect_agent_socket (starter->path, &error);
  if (fd >= 0)
    starter_finish (starter, fd, NULL);
  else if (!relay_error_is_retryable (error))
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
int
relay_start_app_and_connect (const char  *path,
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
