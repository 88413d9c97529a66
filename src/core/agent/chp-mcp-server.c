/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-server.c: the agent endpoint. The socket's folder and mode keep other accounts out,
 * and SO_PEERCRED checks each connection again, because the socket is the whole of the agents'
 * authentication: whoever connects drives the person's browser within the grants. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp"

#include "chp-mcp-server.h"

#include "chp-mcp-session.h"

#include <errno.h>
#include <gio/gunixsocketaddress.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* A person runs a handful of agents; more is a loop gone wrong, not a workload. */
#define MAX_SESSIONS 16

struct _ChpMcpServer
{
  GObject parent_instance;

  ChpMcpTools *tools;
  ChpAgentSessionList *sessions;
  GSocketService *service;
  char *path;
  dev_t socket_dev;          /* the socket file we made, to unlink only ours */
  ino_t socket_ino;
  GPtrArray *live;           /* ChpMcpSession */
  guint next_id;
};

G_DEFINE_FINAL_TYPE (ChpMcpServer, chp_mcp_server, G_TYPE_OBJECT)

static void
chp_mcp_server_dispose (GObject *object)
{
  ChpMcpServer *self = CHP_MCP_SERVER (object);

  chp_mcp_server_close (self);
  g_clear_object (&self->tools);
  g_clear_object (&self->sessions);

  G_OBJECT_CLASS (chp_mcp_server_parent_class)->dispose (object);
}

static void
chp_mcp_server_finalize (GObject *object)
{
  ChpMcpServer *self = CHP_MCP_SERVER (object);

  g_clear_pointer (&self->live, g_ptr_array_unref);
  g_clear_pointer (&self->path, g_free);

  G_OBJECT_CLASS (chp_mcp_server_parent_class)->finalize (object);
}

static void
chp_mcp_server_class_init (ChpMcpServerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = chp_mcp_server_dispose;
  object_class->finalize = chp_mcp_server_finalize;
}

static void
chp_mcp_server_init (ChpMcpServer *self)
{
  self->live = g_ptr_array_new_with_free_func (g_object_unref);
}

/* Returns: $XDG_RUNTIME_DIR/chaperone/agent.sock */
char *
chp_mcp_server_default_path (void)
{
  return g_build_filename (g_get_user_runtime_dir (), "chaperone", "agent.sock", NULL);
}

ChpMcpServer *
chp_mcp_server_new (ChpMcpTools         *tools,
                    ChpAgentSessionList *sessions)
{
  ChpMcpServer *self;

  g_return_val_if_fail (CHP_IS_MCP_TOOLS (tools), NULL);
  g_return_val_if_fail (CHP_IS_AGENT_SESSION_LIST (sessions), NULL);

  self = g_object_new (CHP_TYPE_MCP_SERVER, NULL);
  self->tools = g_object_ref (tools);
  self->sessions = g_object_ref (sessions);
  return self;
}

/* The folder is made 0700 when missing; one that exists must already be ours and private.
 * Someone else's folder is never chmod-ed: that would be taking it over. */
static gboolean
ensure_folder (const char  *folder,
               GError     **error)
{
  struct stat st;

  if (g_lstat (folder, &st) != 0)
    {
      int saved = errno;
      g_autofree char *parent = g_path_get_dirname (folder);

      if (saved != ENOENT)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "Cannot read the agent socket folder %s: %s", folder,
                       g_strerror (saved));
          return FALSE;
        }

      /* Only the runtime folder's own fallback (GLib's, under the cache folder) may be
       * missing; what we make there is private too. */
      if (g_mkdir_with_parents (parent, 0700) != 0)
        {
          saved = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "Cannot make %s: %s", parent, g_strerror (saved));
          return FALSE;
        }

      if (g_mkdir (folder, 0700) == 0)
        {
          /* A umask can only take bits away, but exactly 0700 is what the check wants. */
          if (g_chmod (folder, 0700) != 0)
            {
              saved = errno;
              g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                           "Cannot set the mode of %s: %s", folder, g_strerror (saved));
              return FALSE;
            }
        }
      else if (errno != EEXIST)
        {
          saved = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "Cannot make the agent socket folder %s: %s", folder,
                       g_strerror (saved));
          return FALSE;
        }

      if (g_lstat (folder, &st) != 0)
        {
          saved = errno;
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                       "Cannot read the agent socket folder %s: %s", folder,
                       g_strerror (saved));
          return FALSE;
        }
    }

  if (!S_ISDIR (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_DIRECTORY,
                   "The agent socket folder %s is %s, not a folder; move it away",
                   folder, S_ISLNK (st.st_mode) ? "a symbolic link" : "a file");
      return FALSE;
    }

  if (st.st_uid != getuid ())
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "The agent socket folder %s belongs to another user (uid %u); Chaperone "
                   "uses only its own", folder, (guint) st.st_uid);
      return FALSE;
    }

  if ((st.st_mode & 077) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED,
                   "The agent socket folder %s is open to other users (mode %04o). "
                   "Fix it with: chmod 700 %s", folder, (guint) (st.st_mode & 07777), folder);
      return FALSE;
    }

  return TRUE;
}

/* A socket file left at @path is either another Chaperone serving agents or a leftover of one
 * that died: only a connection tells them apart. */
static gboolean
clear_old_socket (const char      *path,
                  GSocketAddress  *address,
                  GError         **error)
{
  g_autoptr(GSocket) probe = NULL;
  g_autoptr(GError) local_error = NULL;
  struct stat st;

  if (g_lstat (path, &st) != 0)
    {
      int saved = errno;

      if (saved == ENOENT)
        return TRUE;
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot read %s: %s", path, g_strerror (saved));
      return FALSE;
    }

  if (!S_ISSOCK (st.st_mode))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS,
                   "%s exists and is not a socket; move it away", path);
      return FALSE;
    }

  probe = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT,
                        error);
  if (probe == NULL)
    return FALSE;
  /* A listener with a full backlog would make a blocking connect wait: it answers "busy",
   * which means someone is there. */
  g_socket_set_blocking (probe, FALSE);
  if (g_socket_connect (probe, address, NULL, &local_error) ||
      g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_PENDING) ||
      g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    {
      g_socket_close (probe, NULL);
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE,
                   "another Chaperone is serving agents at %s", path);
      return FALSE;
    }

  if (!g_error_matches (local_error, G_IO_ERROR, G_IO_ERROR_CONNECTION_REFUSED))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "Cannot tell whether %s is in use: %s", path, local_error->message);
      return FALSE;
    }

  g_debug ("Removing the stale agent socket %s", path);
  if (g_unlink (path) != 0 && errno != ENOENT)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot remove the stale socket %s: %s", path, g_strerror (saved));
      return FALSE;
    }

  return TRUE;
}

static void
session_closed_cb (ChpMcpSession *session,
                   gpointer       user_data)
{
  ChpMcpServer *self = user_data;
  g_autofree char *id = g_strdup (chp_agent_session_get_id (chp_mcp_session_get_agent (session)));

  g_signal_handlers_disconnect_by_func (session, session_closed_cb, self);
  chp_agent_session_list_remove (self->sessions, id);
  g_ptr_array_remove (self->live, session);
  g_debug ("agents: %s left", id);
}

/* Reads /proc/<pid>/stat: the parent's pid (field 4) and the start time (field 22, in clock
 * ticks since boot), each when asked for. The name (field 2) may hold spaces and parentheses:
 * fields are counted from its last ')'. */
static gboolean
read_stat (pid_t    pid,
           pid_t   *parent,
           guint64 *start)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *text = NULL;
  g_auto(GStrv) fields = NULL;
  const char *rest;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  rest = strrchr (text, ')');
  if (rest == NULL || rest[1] != ' ')
    return FALSE;
  fields = g_strsplit (rest + 2, " ", 21);
  if (g_strv_length (fields) < 21)
    return FALSE;

  /* fields[0] is field 3, the state. */
  if (parent != NULL)
    *parent = (pid_t) g_ascii_strtoll (fields[1], NULL, 10);
  if (start != NULL)
    *start = g_ascii_strtoull (fields[19], NULL, 10);
  return TRUE;
}

/* Returns: (nullable): the agent behind a connection, as "<pid>@<start time>": the peer's
 * parent, which is what launched the relay (Claude Code, an editor) when the peer is
 * chaperone-mcp. The start time makes a reused pid another process. %NULL when it cannot be
 * known: a peer in another pid namespace (the kernel says pid 0, as when Chaperone runs in a
 * Flatpak sandbox), a peer already gone, a parent that is init (an orphan says nothing). */
static char *
agent_process_of (pid_t peer)
{
  pid_t parent = 0;
  guint64 start = 0;

  if (peer <= 0 || !read_stat (peer, &parent, NULL) || parent <= 1 ||
      !read_stat (parent, NULL, &start))
    return NULL;

  return g_strdup_printf ("%d@%" G_GUINT64_FORMAT, (int) parent, start);
}

/* @process: (out) (optional): what agent_process_of() says of the peer */
static gboolean
peer_is_us (GSocketConnection  *connection,
            char              **process)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GCredentials) credentials = NULL;
  uid_t uid;
  pid_t pid;

  credentials = g_socket_get_credentials (g_socket_connection_get_socket (connection), &error);
  if (credentials == NULL)
    {
      g_message ("agents: refused a connection whose user is unknown: %s", error->message);
      return FALSE;
    }

  uid = g_credentials_get_unix_user (credentials, &error);
  if (uid == (uid_t) -1)
    {
      g_message ("agents: refused a connection whose user is unknown: %s", error->message);
      return FALSE;
    }

  if (uid != getuid ())
    {
      g_message ("agents: refused a connection from another user (uid %u)", (guint) uid);
      return FALSE;
    }

  pid = g_credentials_get_unix_pid (credentials, NULL);
  if (process != NULL)
    *process = pid != -1 ? agent_process_of (pid) : NULL;
  return TRUE;
}

static gboolean
incoming_cb (GSocketService    *service,
             GSocketConnection *connection,
             GObject           *source_object,
             gpointer           user_data)
{
  ChpMcpServer *self = user_data;
  g_autoptr(ChpAgentSession) agent = NULL;
  g_autoptr(ChpMcpSession) session = NULL;
  g_autofree char *id = NULL;
  g_autofree char *process = NULL;

  if (!peer_is_us (connection, &process))
    {
      g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
      return TRUE;
    }

  if (self->live->len >= MAX_SESSIONS)
    {
      g_message ("agents: refused a connection: %d agents are connected already", MAX_SESSIONS);
      g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
      return TRUE;
    }

  id = g_strdup_printf ("agent-%u", ++self->next_id);
  agent = chp_agent_session_new (id, NULL, g_get_real_time () / 1000);
  /* Before the list sees it: a session of an agent that is paused starts paused. */
  chp_agent_session_set_process_key (agent, process);
  session = chp_mcp_session_new (G_IO_STREAM (connection), self->tools, agent);
  g_signal_connect (session, "closed", G_CALLBACK (session_closed_cb), self);
  g_ptr_array_add (self->live, g_object_ref (session));
  g_debug ("agents: %s connected (agent process %s)", id, process != NULL ? process : "unknown");
  chp_agent_session_list_add (self->sessions, agent);
  chp_mcp_session_start (session);

  return TRUE;
}

/**
 * chp_mcp_server_listen:
 * @socket_path: where agents connect; its folder is made 0700, or must be ours and 0700
 *
 * Returns: %FALSE with a #G_IO_ERROR that names the path and what is wrong; in particular
 *   %G_IO_ERROR_ADDRESS_IN_USE when another Chaperone serves agents there
 */
gboolean
chp_mcp_server_listen (ChpMcpServer  *self,
                       const char    *socket_path,
                       GError       **error)
{
  g_autofree char *folder = NULL;
  g_autoptr(GSocketAddress) address = NULL;
  g_autoptr(GSocketService) service = NULL;
  struct stat st;
  mode_t old_umask;
  gboolean bound;

  g_return_val_if_fail (CHP_IS_MCP_SERVER (self), FALSE);
  g_return_val_if_fail (socket_path != NULL, FALSE);
  g_return_val_if_fail (self->service == NULL, FALSE);

  if (strlen (socket_path) >= sizeof (((struct sockaddr_un *) NULL)->sun_path))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FILENAME_TOO_LONG,
                   "The agent socket path %s is too long for a Unix socket", socket_path);
      return FALSE;
    }

  folder = g_path_get_dirname (socket_path);
  if (!ensure_folder (folder, error))
    return FALSE;

  address = g_unix_socket_address_new (socket_path);
  if (!clear_old_socket (socket_path, address, error))
    return FALSE;

  service = g_socket_service_new ();
  /* The socket is born private: no moment exists when another account could connect. The
   * umask is the process's, so it is put back at once. */
  old_umask = umask (0077);
  bound = g_socket_listener_add_address (G_SOCKET_LISTENER (service), address,
                                         G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT,
                                         NULL, NULL, error);
  umask (old_umask);
  if (!bound)
    return FALSE;

  if (g_chmod (socket_path, 0600) != 0 || g_lstat (socket_path, &st) != 0)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "Cannot set the mode of %s: %s", socket_path, g_strerror (saved));
      g_socket_listener_close (G_SOCKET_LISTENER (service));
      g_unlink (socket_path);
      return FALSE;
    }

  self->socket_dev = st.st_dev;
  self->socket_ino = st.st_ino;
  g_free (self->path);
  self->path = g_strdup (socket_path);
  self->service = g_steal_pointer (&service);
  g_signal_connect (self->service, "incoming", G_CALLBACK (incoming_cb), self);
  g_socket_service_start (self->service);

  g_message ("agents: listening on %s", socket_path);
  return TRUE;
}

/**
 * chp_mcp_server_close:
 *
 * Stops listening, closes every session and removes the socket file if it is still ours.
 * Idempotent.
 */
void
chp_mcp_server_close (ChpMcpServer *self)
{
  g_autoptr(GPtrArray) live = NULL;
  struct stat st;

  g_return_if_fail (CHP_IS_MCP_SERVER (self));

  if (self->service != NULL)
    {
      g_signal_handlers_disconnect_by_func (self->service, incoming_cb, self);
      g_socket_service_stop (self->service);
      g_socket_listener_close (G_SOCKET_LISTENER (self->service));
      g_clear_object (&self->service);

      /* Another instance may have replaced a socket it judged stale: that one is not ours. */
      if (g_lstat (self->path, &st) == 0 && st.st_dev == self->socket_dev &&
          st.st_ino == self->socket_ino)
        g_unlink (self->path);
    }

  if (self->live == NULL || self->live->len == 0)
    return;

  live = g_steal_pointer (&self->live);
  self->live = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < live->len; i++)
    {
      ChpMcpSession *session = g_ptr_array_index (live, i);

      g_signal_handlers_disconnect_by_func (session, session_closed_cb, self);
      if (self->sessions != NULL)
        chp_agent_session_list_remove (self->sessions,
                                       chp_agent_session_get_id (chp_mcp_session_get_agent (session)));
      chp_mcp_session_close (session);
    }
}

/* Returns: (nullable): the socket's path once listening */
const char *
chp_mcp_server_get_path (ChpMcpServer *self)
{
  g_return_val_if_fail (CHP_IS_MCP_SERVER (self), NULL);

  return self->path;
}
