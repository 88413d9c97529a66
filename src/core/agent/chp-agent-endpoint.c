/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-agent-endpoint.c: the engine is below the agent layer and must not create the server that
 * calls back into it (that was an include cycle), so whoever runs an engine — the application,
 * the test engine — makes one of these once the engine has started. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-agents"

#include "chp-agent-endpoint.h"

#include <glib/gstdio.h>

struct _ChpAgentEndpoint
{
  GObject parent_instance;

  ChpEngine *engine;
  ChpMcpTools *tools;
  ChpMcpServer *server;
  char *port_file;  /* bridge-port beside the agent socket, once written */
};

G_DEFINE_FINAL_TYPE (ChpAgentEndpoint, chp_agent_endpoint, G_TYPE_OBJECT)

static void
result_max_chars_cb (ChpSafetySettings *safety,
                     GParamSpec        *pspec,
                     gpointer           user_data)
{
  ChpAgentEndpoint *self = user_data;

  chp_mcp_tools_set_result_max_chars (self->tools,
                                      chp_safety_settings_get_result_max_chars (safety));
}

/* Tools and tests learn the bridge's port from a file beside the agent socket — 0600, in the
 * 0700 folder the server made and checked — not from a log line meant for people. A reader
 * still connects to find out whether the app that wrote it is alive: a crash leaves it behind. */
static void
write_port_file (ChpAgentEndpoint *self)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_path_get_dirname (chp_mcp_server_get_path (self->server));
  g_autofree char *path = g_build_filename (dir, CHP_AGENT_ENDPOINT_PORT_FILE, NULL);
  g_autofree char *text = NULL;

  text = g_strdup_printf ("%u\n", chp_bridge_get_port (chp_engine_get_bridge (self->engine)));
  if (!g_file_set_contents_full (path, text, -1, G_FILE_SET_CONTENTS_CONSISTENT, 0600, &error))
    {
      g_message ("Could not write %s: %s", path, error->message);
      return;
    }
  self->port_file = g_steal_pointer (&path);
}

/**
 * chp_agent_endpoint_close:
 *
 * Stops listening, ends every agent's session and removes the port file. Safe to call twice.
 */
void
chp_agent_endpoint_close (ChpAgentEndpoint *self)
{
  g_return_if_fail (CHP_IS_AGENT_ENDPOINT (self));

  if (self->port_file != NULL)
    g_unlink (self->port_file);
  g_clear_pointer (&self->port_file, g_free);
  if (self->server != NULL)
    chp_mcp_server_close (self->server);
}

static void
chp_agent_endpoint_dispose (GObject *object)
{
  ChpAgentEndpoint *self = CHP_AGENT_ENDPOINT (object);

  chp_agent_endpoint_close (self);
  if (self->engine != NULL)
    g_signal_handlers_disconnect_by_data (chp_engine_get_safety_settings (self->engine), self);
  g_clear_object (&self->server);
  g_clear_object (&self->tools);
  g_clear_object (&self->engine);

  G_OBJECT_CLASS (chp_agent_endpoint_parent_class)->dispose (object);
}

static void
chp_agent_endpoint_class_init (ChpAgentEndpointClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = chp_agent_endpoint_dispose;
}

static void
chp_agent_endpoint_init (ChpAgentEndpoint *self)
{
}

/**
 * chp_agent_endpoint_new:
 * @engine: a started engine
 *
 * The tools over @engine, with the person's cap on result size kept in step, and a server for
 * the engine's agent sessions. Nothing listens until chp_agent_endpoint_listen().
 */
ChpAgentEndpoint *
chp_agent_endpoint_new (ChpEngine *engine)
{
  ChpAgentEndpoint *self;
  ChpSafetySettings *safety;

  g_return_val_if_fail (CHP_IS_ENGINE (engine), NULL);

  self = g_object_new (CHP_TYPE_AGENT_ENDPOINT, NULL);
  self->engine = g_object_ref (engine);
  self->tools = chp_mcp_tools_new (engine);
  safety = chp_engine_get_safety_settings (engine);
  chp_mcp_tools_set_result_max_chars (self->tools,
                                      chp_safety_settings_get_result_max_chars (safety));
  g_signal_connect_object (safety, "notify::result-max-chars", G_CALLBACK (result_max_chars_cb),
                           self, G_CONNECT_DEFAULT);
  self->server = chp_mcp_server_new (self->tools, chp_engine_get_agent_sessions (engine));
  return self;
}

/**
 * chp_agent_endpoint_listen:
 * @socket_path: (nullable): where; %NULL for `$XDG_RUNTIME_DIR/chaperone/agent.sock`
 *
 * Listens for agents and writes the bridge's port beside the socket.
 *
 * Returns: %FALSE with @error when the socket cannot be made (someone else's runtime folder, a
 *   loose mode); the bridge keeps running without agents then.
 */
gboolean
chp_agent_endpoint_listen (ChpAgentEndpoint  *self,
                           const char        *socket_path,
                           GError           **error)
{
  g_autofree char *path = NULL;

  g_return_val_if_fail (CHP_IS_AGENT_ENDPOINT (self), FALSE);

  path = socket_path != NULL ? g_strdup (socket_path) : chp_mcp_server_default_path ();
  if (!chp_mcp_server_listen (self->server, path, error))
    return FALSE;

  write_port_file (self);
  return TRUE;
}

/* Returns: (nullable): the agent socket's path once it listens */
const char *
chp_agent_endpoint_get_path (ChpAgentEndpoint *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_ENDPOINT (self), NULL);

  return chp_mcp_server_get_path (self->server);
}

/* Returns: (transfer none): the tools agents call */
ChpMcpTools *
chp_agent_endpoint_get_tools (ChpAgentEndpoint *self)
{
  g_return_val_if_fail (CHP_IS_AGENT_ENDPOINT (self), NULL);

  return self->tools;
}
