/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-tools-rules.h: the world the "Always allow" cases share (test-mcp-tools-rules.c): a
 * real engine, a C client playing a paired browser with a granted tab of SHOP, and agents. */
#pragma once

#include "test-mcp-tools-harness.h"

G_BEGIN_DECLS

#define SHOP "https://shop.example"

typedef struct
{
  Env            env;
  ChpTestClient *client;
  guint          arrived;   /* ChpEngine::hold-arrived: a card and a notification */
  guint          clicks;
} World;

void             world_start    (World         *w);
void             world_stop     (World         *w);
ChpAgentSession *add_agent      (World         *w,
                                 const char    *session_id,
                                 const char    *name);
char            *hold_json      (const char    *id,
                                 const char    *state,
                                 const char    *kind,
                                 const char    *site,
                                 const char    *extra);
guint            n_holds        (World         *w);
void             act_held       (World         *w,
                                 ChpMcpContext *context,
                                 const char    *id,
                                 const char    *kind,
                                 const char    *site,
                                 Call          *call);
ChpHold         *act_makes_card (World         *w,
                                 ChpMcpContext *context,
                                 const char    *id,
                                 const char    *kind,
                                 const char    *site);
ChpApprovalRule *make_rule      (World         *w,
                                 const char    *id,
                                 const char    *site);
void             done_cb        (GObject       *source,
                                 GAsyncResult  *result,
                                 gpointer       user_data);
char            *rule_audit     (World         *w);
GPtrArray       *stored_rules   (World         *w);

void             test_mcp_tools_add_rules_ran (void);

G_END_DECLS
