/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-context.c: one agent session's memory between tool calls — what the tools need to
 * answer the next call well (the last snapshot of each frame, for `diff`), never what the
 * person must decide. Bounded: a session that snapshots many frames forgets the oldest. */
#include "config.h"

#include "chp-mcp-context.h"

/* Frames an agent can usefully diff against at once; more is a session that wanders. */
#define MAX_MEMORIES 32

struct _ChpMcpContext
{
  GObject parent_instance;

  char *session_id;
  char *client_name;
  GHashTable *memory;  /* key → JsonNode */
  GQueue order;        /* keys (owned by @memory), oldest first */
};

G_DEFINE_FINAL_TYPE (ChpMcpContext, chp_mcp_context, G_TYPE_OBJECT)

static void
chp_mcp_context_finalize (GObject *object)
{
  ChpMcpContext *self = CHP_MCP_CONTEXT (object);

  g_queue_clear (&self->order);
  g_clear_pointer (&self->memory, g_hash_table_unref);
  g_clear_pointer (&self->session_id, g_free);
  g_clear_pointer (&self->client_name, g_free);

  G_OBJECT_CLASS (chp_mcp_context_parent_class)->finalize (object);
}

static void
chp_mcp_context_class_init (ChpMcpContextClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_mcp_context_finalize;
}

static void
chp_mcp_context_init (ChpMcpContext *self)
{
  self->memory = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                        (GDestroyNotify) json_node_unref);
  g_queue_init (&self->order);
}

ChpMcpContext *
chp_mcp_context_new (const char *session_id)
{
  ChpMcpContext *self;

  g_return_val_if_fail (session_id != NULL, NULL);

  self = g_object_new (CHP_TYPE_MCP_CONTEXT, NULL);
  self->session_id = g_strdup (session_id);
  self->client_name = g_strdup ("");
  return self;
}

const char *
chp_mcp_context_get_session_id (ChpMcpContext *self)
{
  g_return_val_if_fail (CHP_IS_MCP_CONTEXT (self), NULL);

  return self->session_id;
}

/* Returns: the client's name from `initialize` (clientInfo.name), or "" before it */
const char *
chp_mcp_context_get_client_name (ChpMcpContext *self)
{
  g_return_val_if_fail (CHP_IS_MCP_CONTEXT (self), NULL);

  return self->client_name;
}

void
chp_mcp_context_set_client_name (ChpMcpContext *self,
                                 const char    *client_name)
{
  g_return_if_fail (CHP_IS_MCP_CONTEXT (self));

  g_free (self->client_name);
  self->client_name = g_strdup (client_name != NULL ? client_name : "");
}

/* Returns: (transfer none) (nullable): what was remembered under @key */
JsonNode *
chp_mcp_context_recall (ChpMcpContext *self,
                        const char    *key)
{
  g_return_val_if_fail (CHP_IS_MCP_CONTEXT (self), NULL);
  g_return_val_if_fail (key != NULL, NULL);

  return g_hash_table_lookup (self->memory, key);
}

void
chp_mcp_context_forget (ChpMcpContext *self,
                        const char    *key)
{
  char *stored = NULL;

  g_return_if_fail (CHP_IS_MCP_CONTEXT (self));
  g_return_if_fail (key != NULL);

  if (!g_hash_table_lookup_extended (self->memory, key, (gpointer *) &stored, NULL))
    return;
  g_queue_remove (&self->order, stored);
  g_hash_table_remove (self->memory, key);
}

/* @value: (transfer none): kept (a reference) under @key, replacing what was there */
void
chp_mcp_context_remember (ChpMcpContext *self,
                          const char    *key,
                          JsonNode      *value)
{
  char *stored;

  g_return_if_fail (CHP_IS_MCP_CONTEXT (self));
  g_return_if_fail (key != NULL);
  g_return_if_fail (value != NULL);

  chp_mcp_context_forget (self, key);
  while (g_queue_get_length (&self->order) >= MAX_MEMORIES)
    g_hash_table_remove (self->memory, g_queue_pop_head (&self->order));

  stored = g_strdup (key);
  g_hash_table_insert (self->memory, stored, json_node_ref (value));
  g_queue_push_tail (&self->order, stored);
}
