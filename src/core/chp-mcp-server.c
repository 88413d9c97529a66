/* chp-mcp-server.c: placeholder until the agent endpoint lands (issue 5). */
#include "config.h"

#include "chp-mcp-server.h"

struct _ChpMcpServer
{
  GObject parent_instance;
};

G_DEFINE_FINAL_TYPE (ChpMcpServer, chp_mcp_server, G_TYPE_OBJECT)

static void chp_mcp_server_class_init (ChpMcpServerClass *klass) { }
static void chp_mcp_server_init (ChpMcpServer *self) { }

char *
chp_mcp_server_default_path (void)
{
  return g_build_filename (g_get_user_runtime_dir (), "chaperone", "agent.sock", NULL);
}

ChpMcpServer *
chp_mcp_server_new (ChpMcpTools         *tools,
                    ChpAgentSessionList *sessions)
{
  return g_object_new (CHP_TYPE_MCP_SERVER, NULL);
}

gboolean
chp_mcp_server_listen (ChpMcpServer  *self,
                       const char    *socket_path,
                       GError       **error)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "not yet");
  return FALSE;
}

void
chp_mcp_server_close (ChpMcpServer *self)
{
}

const char *
chp_mcp_server_get_path (ChpMcpServer *self)
{
  return NULL;
}
