/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-bridge-fixture.c: a real engine on 127.0.0.1 in a temporary folder, and a browser paired
 * with it as a person would, shared by the bridge's two test programs. */
#include "config.h"

#include "test-bridge-fixture.h"

void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->engine = chp_test_engine_start ("chp-bridge-XXXXXX", &f->dir, &f->port);
}

void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  g_clear_object (&f->engine);
  g_free (f->dir);
}

ChpPairingRequest *
waiting_request (Fixture *f)
{
  GListModel *model = G_LIST_MODEL (chp_engine_get_pairing (f->engine));

  if (g_list_model_get_n_items (model) == 0)
    return NULL;

  return g_list_model_get_item (model, 0);
}

/* Pairs @client: the code the engine shows equals the browser's, then the person presses Pair. */
void
pair (Fixture       *f,
      ChpTestClient *client)
{
  g_autofree char *code = chp_test_client_begin_pairing (client, NULL);
  g_autoptr(ChpPairingRequest) request = waiting_request (f);

  g_assert_nonnull (code);
  g_assert_nonnull (request);
  g_assert_cmpstr (chp_pairing_request_get_code (request), ==, code);
  g_assert_cmpstr (chp_pairing_request_get_origin (request), ==, client->origin);

  chp_pairing_request_approve (request, FALSE);
  g_assert_true (chp_test_client_finish_pairing (client));
  g_assert_cmpint (chp_pairing_request_get_state (request), ==, CHP_PAIRING_STATE_APPROVED);
}

/* The next request the browser receives, skipping those the engine makes of its own accord
 * on every connection (extension.info, extension.grants). */
JsonObject *
next_request (ChpTestClient *client,
              guint          timeout_ms)
{
  JsonObject *o;

  while ((o = chp_test_client_next_type (client, "request", timeout_ms)) != NULL)
    {
      const char *method = json_object_get_string_member (o, "method");

      if (g_strcmp0 (method, "extension.info") != 0 && g_strcmp0 (method, "extension.grants") != 0)
        return o;
    }

  return NULL;
}

void
answer (ChpTestClient *client,
        JsonObject    *request)
{
  g_autofree char *reply = g_strdup_printf ("{\"type\":\"response\",\"id\":\"%s\",\"result\":{}}",
                                            json_object_get_string_member (request, "id"));

  chp_test_client_send (client, reply);
}
