/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-session-private.h: the inside of ChpMcpSession, shared by its files: the session's state,
 * a call in flight and its progress, and what each file offers the others. */
#pragma once

#include "chp-mcp-session.h"

#include "chp-frame.h"
#include "chp-json-util.h"
#include "chp-mcp-format.h"
#include "chp-protocol-error.h"

G_BEGIN_DECLS

/* JSON-RPC 2.0 error codes. */
#define RPC_PARSE_ERROR      (-32700)
#define RPC_INVALID_REQUEST  (-32600)
#define RPC_METHOD_NOT_FOUND (-32601)
#define RPC_INVALID_PARAMS   (-32602)
#define RPC_INTERNAL_ERROR   (-32603)

/* The MCP log levels we send at (chp-mcp-session-rpc.c names them all). */
enum { LEVEL_DEBUG, LEVEL_INFO, LEVEL_NOTICE, LEVEL_WARNING };

/* The progress closure handed to a tool: reference-counted, because a tool may report after
 * its call was answered; by then @session is NULL and the report is dropped. */
typedef struct
{
  ChpMcpSession *session;
  JsonNode      *token;
  double         last;
  gboolean       reported;
} Progress;

typedef struct
{
  ChpMcpSession *session;        /* a reference: the tool's answer needs somewhere to go */
  JsonNode      *id;
  char          *key;
  char          *tool;
  GCancellable  *cancellable;
  Progress      *progress;       /* nullable; our reference */
  gboolean       client_cancelled;
  gboolean       paused;
} Call;

struct _ChpMcpSession
{
  GObject parent_instance;

  GIOStream *stream;
  GInputStream *input;
  GOutputStream *output;
  ChpMcpTools *tools;
  ChpAgentSession *agent;
  ChpMcpContext *context;

  GCancellable *read_cancellable;
  GCancellable *write_cancellable;
  guint8 *read_buffer;
  GByteArray *line;
  gboolean skipping;             /* inside a line that was too long, until its newline */
  gboolean reading;

  GQueue out;                    /* GBytes: one message and its newline each */
  gsize queued_bytes;
  gboolean writing;

  GHashTable *calls;             /* key → Call, owned by the call's own callback */

  gboolean initialized;          /* initialize answered */
  guint min_level;
  gboolean draining;             /* the last messages go out, then the socket closes */
  guint drain_source;
  gboolean closed;
  gboolean stream_closing;
};

static inline const char *
session_id (ChpMcpSession *self)
{
  return chp_agent_session_get_id (self->agent);
}

/* chp-mcp-session.c: the connection */
void        chp_mcp_session_maybe_close_stream  (ChpMcpSession   *self);
char       *chp_mcp_session_paused_message      (ChpAgentSession *agent);

/* chp-mcp-session-write.c: the ordered write queue */
void        chp_mcp_session_send_result         (ChpMcpSession   *self,
                                                 JsonNode        *id,
                                                 JsonNode        *result);
void        chp_mcp_session_send_empty_result   (ChpMcpSession   *self,
                                                 JsonNode        *id);
void        chp_mcp_session_send_error          (ChpMcpSession   *self,
                                                 JsonNode        *id,
                                                 int              code,
                                                 const char      *message);
void        chp_mcp_session_send_notification   (ChpMcpSession   *self,
                                                 const char      *method,
                                                 JsonObject      *params);

/* chp-mcp-session-rpc.c: JSON-RPC and MCP's own methods */
void        chp_mcp_session_handle_line         (ChpMcpSession   *self,
                                                 const char      *text,
                                                 gsize            len);
void        chp_mcp_session_send_log            (ChpMcpSession   *self,
                                                 guint            level,
                                                 const char      *text);

/* chp-mcp-session-calls.c: tools/call */
void        chp_mcp_session_handle_tools_call   (ChpMcpSession   *self,
                                                 JsonNode        *id,
                                                 const char      *key,
                                                 JsonObject      *params);

G_END_DECLS
