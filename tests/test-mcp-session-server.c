/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-session-server.c: the folder and the socket: made private, refused when loose or a
 * symlink, a stale socket replaced and one in use or another's left alone, a peer of another user
 * refused; the session limit, and the server closing. */
#include "config.h"

#include "test-mcp-session-harness.h"

#include <errno.h>
#include <gio/gunixsocketaddress.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static void
assert_listen_fails (Fixture    *fixture,
                     int         code,
                     const char *names)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (chp_mcp_server_listen (fixture->server, fixture->path, &error));
  g_assert_error (error, G_IO_ERROR, code);
  g_test_message ("refused: %s", error->message);
  g_assert_nonnull (strstr (error->message, names));
}

static void
test_folder_created (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *nested = g_build_filename (fixture->dir, "run", "user", NULL);
  g_autofree char *path = g_build_filename (nested, "chaperone", "agent.sock", NULL);
  g_autofree char *folder = g_path_get_dirname (path);
  struct stat st;

  /* As for the runtime folder's fallback: missing parents are made too. */
  g_assert_true (chp_mcp_server_listen (fixture->server, path, &error));
  g_assert_no_error (error);
  g_assert_cmpstr (chp_mcp_server_get_path (fixture->server), ==, path);
  g_assert_cmpuint (mode_of (folder), ==, 0700);
  g_assert_cmpint (g_lstat (path, &st), ==, 0);
  g_assert_true (S_ISSOCK (st.st_mode));
  g_assert_cmpuint (st.st_mode & 0777, ==, 0600);

  chp_mcp_server_close (fixture->server);
  g_assert_false (g_file_test (path, G_FILE_TEST_EXISTS));
  chp_mcp_server_close (fixture->server);
}

static void
test_socket_mode (Fixture       *fixture,
                  gconstpointer  data)
{
  struct stat st;

  g_assert_cmpuint (mode_of (fixture->folder), ==, 0700);
  g_assert_cmpint (g_lstat (fixture->path, &st), ==, 0);
  g_assert_true (S_ISSOCK (st.st_mode));
  g_assert_cmpuint (st.st_mode & 0777, ==, 0600);
  g_assert_cmpuint (st.st_uid, ==, getuid ());
}

static void
test_folder_loose_mode (Fixture       *fixture,
                        gconstpointer  data)
{
  g_assert_cmpint (g_mkdir (fixture->folder, 0700), ==, 0);
  g_assert_cmpint (g_chmod (fixture->folder, 0755), ==, 0);

  assert_listen_fails (fixture, G_IO_ERROR_PERMISSION_DENIED, fixture->folder);
  /* Refused, never repaired behind the person's back. */
  g_assert_cmpuint (mode_of (fixture->folder), ==, 0755);
  g_assert_false (g_file_test (fixture->path, G_FILE_TEST_EXISTS));

  g_assert_cmpint (g_chmod (fixture->folder, 0710), ==, 0);
  assert_listen_fails (fixture, G_IO_ERROR_PERMISSION_DENIED, fixture->folder);
}

static void
test_folder_symlink (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autofree char *real = g_build_filename (fixture->dir, "elsewhere", NULL);

  g_assert_cmpint (g_mkdir (real, 0700), ==, 0);
  g_assert_cmpint (symlink (real, fixture->folder), ==, 0);
  assert_listen_fails (fixture, G_IO_ERROR_NOT_DIRECTORY, fixture->folder);
  g_assert_cmpint (g_unlink (fixture->folder), ==, 0);

  /* A file where the folder should be. */
  g_assert_true (g_file_set_contents (fixture->folder, "", 0, NULL));
  assert_listen_fails (fixture, G_IO_ERROR_NOT_DIRECTORY, fixture->folder);
}

static void
test_socket_stale (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocket) old = NULL;
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new (fixture->path);

  /* A socket file nobody listens on: what a crashed Chaperone leaves. */
  g_assert_cmpint (g_mkdir (fixture->folder, 0700), ==, 0);
  old = g_socket_new (G_SOCKET_FAMILY_UNIX, G_SOCKET_TYPE_STREAM, G_SOCKET_PROTOCOL_DEFAULT,
                      &error);
  g_assert_no_error (error);
  g_assert_true (g_socket_bind (old, address, FALSE, &error));
  g_assert_no_error (error);
  g_socket_close (old, NULL);
  g_assert_true (g_file_test (fixture->path, G_FILE_TEST_EXISTS));

  g_assert_true (chp_mcp_server_listen (fixture->server, fixture->path, &error));
  g_assert_no_error (error);
  {
    g_autoptr(Client) client = client_connect (fixture->path);

    assert_ping (client, 1);
  }

  /* Something that is not a socket is not ours to remove. */
  chp_mcp_server_close (fixture->server);
  g_assert_true (g_file_set_contents (fixture->path, "keep", -1, NULL));
  g_clear_object (&fixture->server);
  fixture->server = chp_mcp_server_new (fixture->tools, fixture->sessions);
  assert_listen_fails (fixture, G_IO_ERROR_EXISTS, fixture->path);
  g_assert_true (g_file_test (fixture->path, G_FILE_TEST_IS_REGULAR));
}

static void
test_socket_in_use (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(ChpMcpServer) second = chp_mcp_server_new (fixture->tools, fixture->sessions);
  g_autoptr(GError) error = NULL;
  g_autoptr(Client) client = NULL;

  g_assert_false (chp_mcp_server_listen (second, fixture->path, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE);
  g_assert_nonnull (strstr (error->message, "another Chaperone is serving agents at"));
  g_assert_nonnull (strstr (error->message, fixture->path));
  /* The first one's probe connection came and went. */
  g_assert_true (chp_test_spin_until (list_is_empty, fixture->sessions, WAIT_MS));

  /* The first is untouched. */
  client = client_connect (fixture->path);
  assert_ping (client, 1);
  chp_mcp_server_close (second);
}

static void
test_socket_replaced_not_removed (Fixture       *fixture,
                                  gconstpointer  data)
{
  g_autoptr(ChpMcpServer) second = chp_mcp_server_new (fixture->tools, fixture->sessions);
  g_autoptr(GError) error = NULL;

  /* Someone removed our socket and a second instance now serves at the path: closing the
   * first must not take the second's socket with it. */
  g_assert_cmpint (g_unlink (fixture->path), ==, 0);
  g_assert_true (chp_mcp_server_listen (second, fixture->path, &error));
  g_assert_no_error (error);
  chp_mcp_server_close (fixture->server);
  g_assert_true (g_file_test (fixture->path, G_FILE_TEST_EXISTS));
  {
    g_autoptr(Client) client = client_connect (fixture->path);

    assert_ping (client, 1);
  }
  chp_mcp_server_close (second);
  g_assert_false (g_file_test (fixture->path, G_FILE_TEST_EXISTS));
  chp_test_finalize_object (g_steal_pointer (&second));
}

/* The child process: as another user, connect, send a ping, and say what came back. */
static int
other_user_child (const char *path)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  const char ping[] = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
  char buf[256];
  ssize_t n;
  int fd;

  if (setgid (65534) != 0 || setuid (65534) != 0)
    return 10;
  fd = socket (AF_UNIX, SOCK_STREAM, 0);
  g_strlcpy (sun.sun_path, path, sizeof sun.sun_path);
  if (connect (fd, (struct sockaddr *) &sun, sizeof sun) != 0)
    return 11;
  if (write (fd, ping, sizeof ping - 1) < 0 && errno != EPIPE)
    return 12;
  alarm (10);
  n = read (fd, buf, sizeof buf);
  return n == 0 || (n < 0 && errno == ECONNRESET) ? 0 : 13;
}

static void
test_peer_other_user (Fixture       *fixture,
                      gconstpointer  data)
{
  int status = -1;
  pid_t pid;

  if (getuid () != 0)
    {
      g_test_skip ("connecting as another user needs root (to setuid a child)");
      return;
    }

  /* Open the door on purpose, so that only the SO_PEERCRED check stands in the way. */
  g_assert_cmpint (g_chmod (fixture->dir, 0755), ==, 0);
  g_assert_cmpint (g_chmod (fixture->folder, 0755), ==, 0);
  g_assert_cmpint (g_chmod (fixture->path, 0666), ==, 0);

  signal (SIGPIPE, SIG_IGN);
  pid = fork ();
  g_assert_cmpint (pid, >=, 0);
  if (pid == 0)
    _exit (other_user_child (fixture->path));

  g_child_watch_add (pid, child_exited_cb, &status);
  g_assert_true (chp_test_spin_until (child_done, &status, WAIT_MS * 2));
  g_assert_cmpint (status, ==, 0);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (fixture->sessions)), ==, 0);

  {
    g_autoptr(Client) client = client_connect (fixture->path);

    assert_ping (client, 1);
  }
}

static gboolean
below_limit (gpointer data)
{
  return g_list_model_get_n_items (G_LIST_MODEL (data)) < 16;
}

static void
test_session_limit (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(GPtrArray) clients = g_ptr_array_new_with_free_func ((GDestroyNotify) client_free);
  Client *extra;

  for (guint i = 0; i < 16; i++)
    {
      Client *client = client_connect (fixture->path);

      g_ptr_array_add (clients, client);
      assert_ping (client, i);
    }

  /* The seventeenth is closed unanswered. */
  extra = client_connect (fixture->path);
  client_send (extra, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
  g_assert_true (client_sees_eof (extra));
  client_free (extra);
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (fixture->sessions)), ==, 16);

  /* Room again once one leaves. */
  g_ptr_array_remove_index (clients, 0);
  g_assert_true (chp_test_spin_until (below_limit, fixture->sessions, WAIT_MS));
  extra = client_connect (fixture->path);
  assert_ping (extra, 1);
  client_free (extra);
}

static void
test_server_close (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(Client) client = client_connect (fixture->path);
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketClient) socket_client = g_socket_client_new ();
  g_autoptr(GSocketAddress) address = g_unix_socket_address_new (fixture->path);
  g_autoptr(GSocketConnection) refused = NULL;

  client_initialize (client, "2025-06-18", NULL);
  chp_mcp_server_close (fixture->server);

  g_assert_true (client_sees_eof (client));
  g_assert_cmpuint (g_list_model_get_n_items (G_LIST_MODEL (fixture->sessions)), ==, 0);
  g_assert_false (g_file_test (fixture->path, G_FILE_TEST_EXISTS));
  refused = g_socket_client_connect (socket_client, G_SOCKET_CONNECTABLE (address), NULL, &error);
  g_assert_null (refused);
  g_assert_nonnull (error);
}

void
test_mcp_session_add_server (void)
{
  ADD_BARE ("server/folder-created", test_folder_created);
  ADD ("server/socket-mode", test_socket_mode);
  ADD_BARE ("server/folder-loose-mode", test_folder_loose_mode);
  ADD_BARE ("server/folder-symlink", test_folder_symlink);
  ADD_BARE ("server/socket-stale", test_socket_stale);
  ADD ("server/socket-in-use", test_socket_in_use);
  ADD ("server/socket-replaced", test_socket_replaced_not_removed);
  ADD ("server/peer-other-user", test_peer_other_user);
  ADD ("server/session-limit", test_session_limit);
  ADD ("server/close", test_server_close);
}
