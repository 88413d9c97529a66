/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-tool-stop.c: browser_stop: the person's own Stop, pressed by an agent; only the person
 * resumes. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-mcp-tools"

#include "chp-mcp-tools-private.h"

void
chp_tool_stop (ToolCall *call)
{
  g_autoptr(ChpEngine) engine = g_weak_ref_get (&call->self->engine);
  JsonObject *structured;

  if (engine == NULL)
    {
      chp_tool_return_error (call->task, "internal", "Chaperone is shutting down", NULL);
      return;
    }

  chp_engine_stop_all (engine, "agent");
  structured = json_object_new ();
  json_object_set_boolean_member (structured, "stopped", TRUE);
  chp_tool_return_ok (call->task,
                      "Stopped. Chaperone now refuses every agent's calls in every browser until "
                      "the person resumes in the Chaperone app; no agent can resume. Tell the "
                      "person why you stopped.",
                      structured, NULL);
}
