/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-bridge-doors.c: the way in: the Host/Origin gate before any upgrade, the same checks again
 * in the WebSocket handlers, and the connections that have not upgraded yet, with their timeout and
 * the cap on unauthenticated ones. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-bridge"

#include "chp-bridge-private.h"

#include "chp-connection.h"
#include "chp-limited-input-stream.h"
#include "chp-limited-io-stream.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

/* A connection between its accept and its WebSocket upgrade. It holds no reference: the stream
 * is libsoup's, and its weak reference removes the entry when libsoup lets it go. */
struct _ChpBridgePending
{
  ChpBridge *bridge;
  guint64    serial;
  GIOStream *stream;
  guint      timeout_source;
};
typedef ChpBridgePending Pending;

/* Host/Origin gate, before any upgrade */

static gboolean
all_in (const char *s,
        gsize       len,
        const char *set)
{
  return strlen (s) == len && strspn (s, set) == len;
}

gboolean
chp_bridge_check_origin (const char *origin)
{
  if (origin == NULL)
    return FALSE;

  if (g_str_has_prefix (origin, "chrome-extension://"))
    return all_in (origin + strlen ("chrome-extension://"), 32, "abcdefghijklmnop");

  if (g_str_has_prefix (origin, "moz-extension://"))
    {
      const char *uuid = origin + strlen ("moz-extension://");
      static const guint groups[] = { 8, 4, 4, 4, 12 };

      for (guint i = 0; i < G_N_ELEMENTS (groups); i++)
        {
          if (strspn (uuid, "0123456789abcdef") != groups[i])
            return FALSE;
          uuid += groups[i];
          if (i + 1 < G_N_ELEMENTS (groups) && *uuid++ != '-')
            return FALSE;
        }
      return *uuid == '\0';
    }

  return FALSE;
}

/* The administrator's Transport lock: whether a socket that came this way may come at all
 * (chp-transport.h says how the two ways are told apart). */
gboolean
chp_bridge_check_transport (ChpBridge          *self,
                            SoupMessageHeaders *headers)
{
  gboolean via_host = g_strcmp0 (soup_message_headers_get_one (headers, CHP_TRANSPORT_HEADER),
                                 CHP_TRANSPORT_NATIVE_HOST) == 0;

  switch (self->transport)
    {
    case CHP_TRANSPORT_WEBSOCKET:
      return !via_host;
    case CHP_TRANSPORT_NATIVE:
      return via_host;
    case CHP_TRANSPORT_ANY:
    default:
      return TRUE;
    }
}

static gboolean
check_host (ChpBridge  *self,
            const char *host)
{
  g_autofree char *ip = g_strdup_printf ("127.0.0.1:%u", self->port);
  g_autofree char *name = g_strdup_printf ("localhost:%u", self->port);

  /* Exact match: a DNS-rebound page arrives with its own hostname here. */
  return host != NULL && (g_str_equal (host, ip) || g_str_equal (host, name));
}

/* The two doors, and nothing under them: libsoup hands "/pairing/x", "/pairing/" and
 * "/extension/" to the handler of the longest registered prefix, so a check that compared only
 * the exact paths let a web page's WebSocket through to the handlers. */
static gboolean
is_door (const char *path)
{
  return g_strcmp0 (path, "/extension") == 0 || g_strcmp0 (path, "/pairing") == 0;
}

void
chp_bridge_early_handler_cb (SoupServer        *server,
                             SoupServerMessage *msg,
                             const char        *path,
                             GHashTable        *query,
                             gpointer           user_data)
{
  ChpBridge *self = user_data;
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  const char *host = soup_message_headers_get_one (headers, "Host");
  const char *origin = soup_message_headers_get_one (headers, "Origin");

  if (!check_host (self, host))
    {
      g_debug ("Refused a request with Host %s", host ? host : "(none)");
      soup_server_message_set_status (msg, SOUP_STATUS_FORBIDDEN, NULL);
      return;
    }

  if (!is_door (path))
    {
      g_debug ("Refused a request for another path");
      soup_server_message_set_status (msg, SOUP_STATUS_NOT_FOUND, NULL);
      return;
    }

  if (!chp_bridge_check_origin (origin))
    {
      g_debug ("Refused %s from a non-extension origin", path);
      soup_server_message_set_status (msg, SOUP_STATUS_FORBIDDEN, NULL);
      chp_bridge_audit (self, "connection", path, "refused", NULL, 0, "unauthorized");
      return;
    }

  if (!chp_bridge_check_transport (self, headers))
    {
      g_debug ("Refused %s by the administrator's transport lock", path);
      soup_server_message_set_status (msg, SOUP_STATUS_FORBIDDEN, NULL);
      chp_bridge_audit (self, "connection", path, "refused", NULL, 0, "policy_denied");
    }
}

static void pending_remove (ChpBridge *self,
                            guint64    serial);

/**
 * chp_bridge_check_upgrade:
 * @path: the path libsoup gave the handler
 * @expected_path: the handler's own path
 *
 * The handlers check again what the early handler checked, so that no routing of libsoup's can
 * bring a socket to them that the gate did not see: the exact path, the Host, an extension
 * Origin. The connection is no longer in its header phase either way.
 *
 * Returns: whether the socket may go on
 */
gboolean
chp_bridge_check_upgrade (ChpBridge         *self,
                          SoupServerMessage *msg,
                          const char        *path,
                          const char        *expected_path)
{
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);
  GSocketAddress *remote = soup_server_message_get_remote_address (msg);

  if (remote != NULL)
    pending_remove (self, GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (remote),
                                                                 "chp-pending")));

  if (g_strcmp0 (path, expected_path) == 0 &&
      check_host (self, soup_message_headers_get_one (headers, "Host")) &&
      chp_bridge_check_origin (soup_message_headers_get_one (headers, "Origin")) &&
      chp_bridge_check_transport (self, headers))
    return TRUE;

  g_debug ("Refused a socket on a path or from an origin the gate should have stopped");
  chp_bridge_audit (self, "connection", expected_path, "refused", NULL, 0, "unauthorized");
  return FALSE;
}

void
chp_bridge_not_found_cb (SoupServer        *server,
                         SoupServerMessage *msg,
                         const char        *path,
                         GHashTable        *query,
                         gpointer           user_data)
{
  /* A plain GET to a WebSocket path, or anything else: nothing to see. */
  if (soup_server_message_get_status (msg) == 0 || soup_server_message_get_status (msg) == SOUP_STATUS_OK)
    soup_server_message_set_status (msg, SOUP_STATUS_NOT_FOUND, NULL);
}

void
chp_bridge_pairing_cb (SoupServer              *server,
                       SoupServerMessage       *msg,
                       const char              *path,
                       SoupWebsocketConnection *ws,
                       gpointer                 user_data)
{
  ChpBridge *self = user_data;
  SoupMessageHeaders *headers = soup_server_message_get_request_headers (msg);

  if (!chp_bridge_check_upgrade (self, msg, path, "/pairing"))
    {
      soup_websocket_connection_close (ws, CHP_CLOSE_UNAUTHENTICATED, "unauthorized");
      return;
    }

  chp_bridge_pairing_start (self, ws, soup_message_headers_get_one (headers, "Origin"));
}

/* The limiter travels on the remote address that libsoup hands back with each message. */
GInputStream *
chp_bridge_get_limiter (SoupServerMessage *msg)
{
  GSocketAddress *remote = soup_server_message_get_remote_address (msg);

  return remote ? g_object_get_data (G_OBJECT (remote), "chp-limiter") : NULL;
}

/* Pending connections */

static void pending_stream_gone_cb (gpointer  data,
                                    GObject  *stream);

void
chp_bridge_pending_free (Pending *pending)
{
  if (pending->stream != NULL)
    g_object_weak_unref (G_OBJECT (pending->stream), pending_stream_gone_cb, pending);
  g_clear_handle_id (&pending->timeout_source, g_source_remove);
  g_free (pending);
}

static void
pending_remove (ChpBridge *self,
                guint64    serial)
{
  if (serial != 0 && self->pending != NULL)
    g_hash_table_remove (self->pending, &serial);
}

static void
pending_stream_gone_cb (gpointer  data,
                        GObject  *stream)
{
  Pending *pending = data;

  /* libsoup dropped the connection (the peer closed it, or a 4xx ended it): nothing to close. */
  pending->stream = NULL;
  pending_remove (pending->bridge, pending->serial);
}

static gboolean
pending_timeout_cb (gpointer user_data)
{
  Pending *pending = user_data;
  g_autoptr(GIOStream) stream = g_object_ref (pending->stream);

  pending->timeout_source = 0;
  g_debug ("Closed a connection that did not upgrade within %u ms",
           pending->bridge->header_timeout_ms);
  pending_remove (pending->bridge, pending->serial);
  /* libsoup's read fails and it drops the connection, and with it the descriptor. */
  g_io_stream_close (stream, NULL, NULL);

  return G_SOURCE_REMOVE;
}

static guint
count_unauthenticated (ChpBridge *self)
{
  return g_hash_table_size (self->pending) + self->handshakes->len +
         (self->pairings != NULL ? self->pairings->len : 0);
}

gboolean
chp_bridge_incoming_cb (GSocketService    *service,
                        GSocketConnection *connection,
                        GObject           *source_object,
                        gpointer           user_data)
{
  ChpBridge *self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GSocketAddress) local = g_socket_connection_get_local_address (connection, NULL);
  g_autoptr(GSocketAddress) remote = g_socket_connection_get_remote_address (connection, NULL);
  g_autoptr(GIOStream) stream = NULL;

  if (local == NULL || remote == NULL)
    return TRUE;

  if (count_unauthenticated (self) >= self->max_unauthenticated)
    {
      gint64 now = g_get_monotonic_time ();

      /* Once in a while, not once per connection: a flood must not flood the log too. */
      if (now - self->last_refusal_log_us > 10 * G_USEC_PER_SEC)
        {
          g_message ("bridge: %u connections have not authenticated; refusing more",
                     self->max_unauthenticated);
          self->last_refusal_log_us = now;
        }
      g_io_stream_close (G_IO_STREAM (connection), NULL, NULL);
      return TRUE;
    }

  /* Every frame is written whole. With Nagle on, a small frame sent while the previous one is
   * unacknowledged waits for the browser's delayed ACK (40 ms on Linux): pair_approved after
   * pair_pending, a second request while the first is still running in the page. */
  if (!g_socket_set_option (g_socket_connection_get_socket (connection), IPPROTO_TCP, TCP_NODELAY,
                            TRUE, &error))
    {
      g_debug ("TCP_NODELAY: %s", error->message);
      g_clear_error (&error);
    }

  stream = chp_limited_io_stream_new (G_IO_STREAM (connection), CHP_BRIDGE_PREAUTH_BUDGET);
  /* The request's head is checked before libsoup parses it: a body length libsoup 3.2 would
   * mishandle (a warning, a leak) drops the connection instead (chp-request-head.c). */
  chp_limited_input_stream_check_request_head (
    CHP_LIMITED_INPUT_STREAM (chp_limited_io_stream_get_limiter (CHP_LIMITED_IO_STREAM (stream))));
  g_object_set_data_full (G_OBJECT (remote), "chp-limiter",
                          g_object_ref (chp_limited_io_stream_get_limiter (CHP_LIMITED_IO_STREAM (stream))),
                          g_object_unref);

  {
    Pending *pending = g_new0 (Pending, 1);

    pending->bridge = self;
    pending->serial = ++self->next_pending;
    pending->stream = stream;
    g_object_weak_ref (G_OBJECT (stream), pending_stream_gone_cb, pending);
    pending->timeout_source = g_timeout_add (self->header_timeout_ms, pending_timeout_cb, pending);
    g_hash_table_insert (self->pending, &pending->serial, pending);
    g_object_set_data (G_OBJECT (remote), "chp-pending", GSIZE_TO_POINTER (pending->serial));
  }

  if (!soup_server_accept_iostream (self->server, stream, local, remote, &error))
    g_debug ("Could not accept a connection: %s", error->message);

  return TRUE;
}

/**
 * chp_bridge_set_unauthenticated_limits:
 * @max_connections: how many connections may be unauthenticated at once
 * @header_timeout_ms: how long a connection may take to upgrade
 *
 * For tests; the defaults are %CHP_BRIDGE_MAX_UNAUTHENTICATED and %CHP_BRIDGE_HEADER_TIMEOUT_MS.
 * The time counts from now for connections already waiting.
 */
void
chp_bridge_set_unauthenticated_limits (ChpBridge *self,
                                       guint      max_connections,
                                       guint      header_timeout_ms)
{
  GHashTableIter iter;
  gpointer value;

  g_return_if_fail (CHP_IS_BRIDGE (self));
  g_return_if_fail (max_connections > 0 && header_timeout_ms > 0);

  self->max_unauthenticated = max_connections;
  self->header_timeout_ms = header_timeout_ms;

  g_hash_table_iter_init (&iter, self->pending);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    {
      Pending *pending = value;

      g_clear_handle_id (&pending->timeout_source, g_source_remove);
      pending->timeout_source = g_timeout_add (header_timeout_ms, pending_timeout_cb, pending);
    }
}

