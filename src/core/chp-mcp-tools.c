/* chp-mcp-tools.c: placeholder until the tools table lands (issue 5). */
#include "config.h"

#include "chp-mcp-tools.h"

struct _ChpMcpTools
{
  GObject parent_instance;
};

G_DEFINE_FINAL_TYPE (ChpMcpTools, chp_mcp_tools, G_TYPE_OBJECT)

static void chp_mcp_tools_class_init (ChpMcpToolsClass *klass) { }
static void chp_mcp_tools_init (ChpMcpTools *self) { }

ChpMcpTools *
chp_mcp_tools_new (ChpEngine *engine)
{
  return g_object_new (CHP_TYPE_MCP_TOOLS, NULL);
}

void
chp_mcp_tools_set_result_max_chars (ChpMcpTools *self,
                                    guint        max_chars)
{
}

JsonNode *
chp_mcp_tools_list (ChpMcpTools *self)
{
  return json_node_init_array (json_node_alloc (), json_array_new ());
}

gboolean
chp_mcp_tools_has (ChpMcpTools *self,
                   const char  *name)
{
  return FALSE;
}

void
chp_mcp_tools_audit (ChpMcpTools *self,
                     const char  *name,
                     const char  *outcome,
                     const char  *device_id,
                     gint64       duration_ms,
                     const char  *error_code)
{
}

void
chp_mcp_tools_call_async (ChpMcpTools         *self,
                          ChpMcpContext       *context,
                          const char          *name,
                          JsonObject          *arguments,
                          ChpMcpProgressFunc   progress,
                          gpointer             progress_data,
                          GDestroyNotify       progress_destroy,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  g_task_report_new_error (self, callback, user_data, chp_mcp_tools_call_async,
                           G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, "not yet");
  if (progress_destroy != NULL)
    progress_destroy (progress_data);
}

JsonNode *
chp_mcp_tools_call_finish (ChpMcpTools   *self,
                           GAsyncResult  *result,
                           GError       **error)
{
  return g_task_propagate_pointer (G_TASK (result), error);
}
