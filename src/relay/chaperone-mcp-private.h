/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chaperone-mcp-private.h: shared by the parts of the relay (chaperone-mcp.c, the stdio relay
 * itself; chaperone-mcp-connect.c, reaching the app; chaperone-mcp-fallback.c, the answer when it
 * cannot be reached). */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef enum
{
  RELAY_ERROR_UNSAFE,       /* the folder or socket could have been planted by someone else */
  RELAY_ERROR_NOT_STARTED,  /* no app, and starting one failed or timed out */
  RELAY_ERROR_FAILED,
} RelayError;

#define RELAY_ERROR (relay_error_quark ())
GQuark relay_error_quark (void);

/* chaperone-mcp-connect.c */
char    *relay_agent_socket_path     (void);
gboolean relay_error_is_retryable    (const GError  *error);
int      relay_connect_agent_socket  (const char    *path,
                                      GError       **error);
int      relay_start_app_and_connect (const char    *path,
                                      guint          timeout_ms,
                                      GError       **error);

/* chaperone-mcp-fallback.c */
int      relay_give_up               (int            in_fd,
                                      int            out_fd,
                                      const char    *message);

G_END_DECLS
