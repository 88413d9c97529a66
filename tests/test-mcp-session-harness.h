/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-mcp-session-harness.h: what the agent endpoint tests share, and the families of cases
 * that test-mcp-session.c's main() adds in order. */
#pragma once

#include "chp-engine.h"
#include "chp-mcp-server.h"
#include "chp-mcp-tools.h"
#include "chp-test-client.h"

G_BEGIN_DECLS

#define WAIT_MS 5000

typedef struct
{
  char                *dir;
  char                *folder;   /* dir/chaperone */
  char                *path;     /* dir/chaperone/agent.sock */
  ChpEngine           *engine;
  ChpMcpTools         *tools;
  ChpAgentSessionList *sessions;
  ChpMcpServer        *server;
} Fixture;

typedef struct
{
  GSocketConnection *connection;
  GDataInputStream  *input;
  GCancellable      *cancellable;
  GQueue             inbox;      /* JsonNode*, oldest first */
  JsonNode          *last;
  gboolean           eof;
  gboolean           reading;
  gboolean           writing;
} Client;

/* ---- Files ---------------------------------------------------------------------------- */

void rm_rf (const char *path);

guint mode_of (const char *path);

/* ---- Fixture -------------------------------------------------------------------------- */

void fixture_setup_bare (Fixture       *fixture,
                         gconstpointer  data);

void fixture_setup (Fixture       *fixture,
                    gconstpointer  data);

void fixture_teardown (Fixture       *fixture,
                       gconstpointer  data);

/* A case on a served folder, or on a bare one it serves itself. */
#define ADD(path, func) \
  g_test_add ("/chaperone/mcp/" path, Fixture, NULL, fixture_setup, func, fixture_teardown)
#define ADD_BARE(path, func) \
  g_test_add ("/chaperone/mcp/" path, Fixture, NULL, fixture_setup_bare, func, fixture_teardown)

/* ---- Client --------------------------------------------------------------------------- */

Client *client_connect (const char *path);

void client_free (Client *client);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Client, client_free)

void client_send_raw (Client     *client,
                      const void *data,
                      gsize       len);

/* For text with NULs in it. */
#define client_send_literal(client, text) client_send_raw ((client), (text), sizeof (text) - 1)

void client_send (Client     *client,
                  const char *line);

JsonObject *client_next (Client *client);

gboolean client_sees_eof (Client *client);

JsonObject *client_request (Client     *client,
                            gint64      id,
                            const char *method,
                            const char *params);

JsonObject *result_of (JsonObject *response);

const char *assert_error (JsonObject *response,
                          gint64      id,
                          int         code);

void assert_ping (Client *client,
                  gint64  id);

JsonObject *client_initialize (Client     *client,
                               const char *version,
                               const char *client_info);

ChpAgentSession *only_agent (Fixture *fixture);

gboolean list_has_one (gpointer data);

gboolean list_is_empty (gpointer data);

gboolean is_log (JsonObject *message,
                 const char *level);

/* ---- Child processes ------------------------------------------------------------------ */

void child_exited_cb (GPid     pid,
                      gint     status,
                      gpointer user_data);

gboolean child_done (gpointer data);

/* ---- The families of cases, in the order main() adds them ----------------------------- */

void test_mcp_session_add_protocol (void);
void test_mcp_session_add_server   (void);
void test_mcp_session_add_agents   (void);
void test_mcp_session_add_alone    (void);

G_END_DECLS
