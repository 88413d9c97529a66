/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-bridge-pairing.c: the /pairing socket, commit then reveal (DESIGN §3). The browser commits
 * to its nonce before it sees ours, so a man in the middle gets one guess at the six digits per
 * attempt instead of grinding nonces until the codes match. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-pairing"

#include "chp-bridge-private.h"

#include "chp-connection.h"
#include "chp-crypto.h"
#include "chp-frame.h"
#include "chp-json-util.h"

#include <glib/gi18n.h>
#include <string.h>

#define MAX_LABEL_LEN 128

typedef enum
{
  STAGE_AWAIT_REQUEST,
  STAGE_AWAIT_REVEAL,
  STAGE_AWAIT_DECISION,
  STAGE_SAVING,
  STAGE_DONE,
} Stage;

typedef struct
{
  ChpBridge               *bridge;
  guint64                  serial;
  SoupWebsocketConnection *ws;
  Stage                    stage;
  char                    *origin;
  char                    *installation_id;
  char                    *client;
  char                    *version;
  char                    *browser;
  char                    *ext_x;
  char                    *ext_y;
  char                    *commitment;
  char                    *nonce_c;
  char                    *nonce_e;
  ChpPairingRequest       *request;
  gulong                   decided_id;
  guint                    timeout_source;
} Pairing;

static void
pairing_free (Pairing *pairing)
{
  g_clear_handle_id (&pairing->timeout_source, g_source_remove);
  if (pairing->request != NULL)
    {
      g_clear_signal_handler (&pairing->decided_id, pairing->request);
      /* Gone before a decision: the attempt still counts (it may have been a guess). */
      chp_pairing_manager_finish (pairing->bridge->pairing, pairing->request,
                                  CHP_PAIRING_STATE_ABANDONED, chp_bridge_now_ms ());
    }
  g_clear_object (&pairing->request);
  if (pairing->ws != NULL)
    {
      g_signal_handlers_disconnect_by_data (pairing->ws, pairing);
      if (soup_websocket_connection_get_state (pairing->ws) == SOUP_WEBSOCKET_STATE_OPEN)
        soup_websocket_connection_close (pairing->ws, SOUP_WEBSOCKET_CLOSE_GOING_AWAY, NULL);
    }
  g_clear_object (&pairing->ws);
  g_free (pairing->origin);
  g_free (pairing->installation_id);
  g_free (pairing->client);
  g_free (pairing->version);
  g_free (pairing->browser);
  g_free (pairing->ext_x);
  g_free (pairing->ext_y);
  g_free (pairing->commitment);
  g_free (pairing->nonce_c);
  g_free (pairing->nonce_e);
  g_free (pairing);
}

/* Every final message ends the socket: pairing is one exchange. */
static void
pairing_end (Pairing         *pairing,
             ChpPairingState  state)
{
  g_autoptr(SoupWebsocketConnection) ws = g_object_ref (pairing->ws);

  pairing->stage = STAGE_DONE;
  g_clear_handle_id (&pairing->timeout_source, g_source_remove);
  if (pairing->request != NULL)
    {
      const char *outcome = state == CHP_PAIRING_STATE_APPROVED ? "approved"
                          : state == CHP_PAIRING_STATE_REJECTED ? "rejected"
                          : state == CHP_PAIRING_STATE_EXPIRED ? "expired" : "failed";

      g_clear_signal_handler (&pairing->decided_id, pairing->request);
      chp_pairing_manager_finish (pairing->bridge->pairing, pairing->request, state,
                                  chp_bridge_now_ms ());
      chp_bridge_audit (pairing->bridge, "pairing", "pair", outcome, NULL, 0, NULL);
      g_clear_object (&pairing->request);
    }

  if (soup_websocket_connection_get_state (ws) == SOUP_WEBSOCKET_STATE_OPEN)
    soup_websocket_connection_close (ws, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
}

static void
send_pair_error (Pairing    *pairing,
                 const char *code,
                 const char *message)
{
  g_autoptr(JsonBuilder) builder = chp_bridge_begin_message ("pair_error");

  json_builder_set_member_name (builder, "code");
  json_builder_add_string_value (builder, code);
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, message);
  chp_bridge_send_json (pairing->ws, builder);
}

static void
send_simple (Pairing    *pairing,
             const char *type)
{
  g_autoptr(JsonBuilder) builder = chp_bridge_begin_message (type);

  json_builder_set_member_name (builder, "requestId");
  json_builder_add_string_value (builder, chp_pairing_request_get_id (pairing->request));
  chp_bridge_send_json (pairing->ws, builder);
}

static void
fail (Pairing    *pairing,
      const char *code,
      const char *message)
{
  g_debug ("Pairing failed: %s", message);
  send_pair_error (pairing, code, message);
  pairing_end (pairing, CHP_PAIRING_STATE_FAILED);
}

static const char *
get_label (JsonObject *object,
           const char *member)
{
  const char *value = chp_json_get_string (object, member);

  /* Shown to the person and signed nowhere: still, one short line. */
  if (value == NULL || strlen (value) > MAX_LABEL_LEN || strchr (value, '\n') != NULL ||
      !g_utf8_validate (value, -1, NULL))
    return NULL;

  return value;
}

static gboolean
is_b64url_of (const char *text,
              gsize       n_bytes)
{
  g_autoptr(GBytes) bytes = NULL;

  if (text == NULL)
    return FALSE;

  bytes = chp_b64url_decode (text, NULL);
  return bytes != NULL && g_bytes_get_size (bytes) == n_bytes;
}

static char **
transcript (Pairing *pairing)
{
  ChpIdentity *identity = pairing->bridge->identity;
  char **t = g_new0 (char *, 11);

  t[0] = g_strdup (chp_pairing_request_get_id (pairing->request));
  t[1] = g_strdup (pairing->origin);
  t[2] = g_strdup (pairing->installation_id);
  t[3] = g_strdup (pairing->ext_x);
  t[4] = g_strdup (pairing->ext_y);
  t[5] = g_strdup (chp_identity_get_engine_id (identity));
  t[6] = g_strdup (chp_identity_get_x (identity));
  t[7] = g_strdup (chp_identity_get_y (identity));
  t[8] = g_strdup (pairing->nonce_c);
  t[9] = g_strdup (pairing->nonce_e);

  return t;
}

static char *
labelled_transcript (Pairing    *pairing,
                     const char *label,
                     const char *extra)
{
  g_auto(GStrv) t = transcript (pairing);

  return chp_pair_signed_text (label, (const char * const *) t, extra, NULL);
}

static gboolean
expired_cb (gpointer user_data)
{
  Pairing *pairing = user_data;

  pairing->timeout_source = 0;
  if (pairing->request != NULL)
    {
      send_simple (pairing, "pair_expired");
      pairing_end (pairing, CHP_PAIRING_STATE_EXPIRED);
    }
  else
    {
      pairing_end (pairing, CHP_PAIRING_STATE_FAILED);
    }

  return G_SOURCE_REMOVE;
}

static void
handle_request (Pairing  *pairing,
                ChpFrame *frame)
{
  ChpBridge *self = pairing->bridge;
  JsonObject *o = frame->object;
  JsonNode *key = json_object_get_member (o, "publicKey");
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) engine_key = NULL;
  g_autoptr(JsonBuilder) builder = NULL;
  g_autofree char *request_id = NULL;
  const char *installation_id, *client, *version, *browser, *commitment;
  gint64 retry_after = 0, expires_at;

  /* Read by type: a member of another type is a malformed field, not a critical in the log. */
  installation_id = chp_json_get_string (o, "installationId");
  client = get_label (o, "client");
  version = get_label (o, "version");
  browser = get_label (o, "browser");
  commitment = chp_json_get_string (o, "commitment");

  if (chp_json_get_int (o, "protocol", 0) != CHP_BRIDGE_PROTOCOL)
    {
      fail (pairing, "unsupported", "This version of the protocol is not supported");
      return;
    }

  if (!is_b64url_of (installation_id, 16) || client == NULL || version == NULL ||
      browser == NULL || !is_b64url_of (commitment, 32) || key == NULL ||
      !JSON_NODE_HOLDS_OBJECT (key) ||
      !chp_jwk_read (json_node_get_object (key), &pairing->ext_x, &pairing->ext_y, NULL))
    {
      fail (pairing, "invalid_params", "pair_request is missing or has malformed fields");
      return;
    }

  if (!chp_pairing_manager_admit (self->pairing, installation_id, chp_bridge_now_ms (),
                                  &retry_after, &error))
    {
      if (g_error_matches (error, CHP_PAIRING_ERROR, CHP_PAIRING_ERROR_LOCKED))
        {
          builder = chp_bridge_begin_message ("pair_locked");
          json_builder_set_member_name (builder, "retryAfter");
          json_builder_add_int_value (builder, retry_after);
          json_builder_set_member_name (builder, "message");
          json_builder_add_string_value (builder, error->message);
          chp_bridge_send_json (pairing->ws, builder);
          chp_bridge_audit (self, "pairing", "pair", "locked", NULL, 0, NULL);
          pairing->stage = STAGE_DONE;
          soup_websocket_connection_close (pairing->ws, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
        }
      else
        {
          gboolean limited = g_error_matches (error, CHP_PAIRING_ERROR,
                                              CHP_PAIRING_ERROR_RATE_LIMITED);

          send_pair_error (pairing, limited ? "rate_limited" : "busy", error->message);
          chp_bridge_audit (self, "pairing", "pair", "refused", NULL, 0,
                            limited ? "rate_limited" : "busy");
          pairing->stage = STAGE_DONE;
          soup_websocket_connection_close (pairing->ws, SOUP_WEBSOCKET_CLOSE_NORMAL, NULL);
        }
      return;
    }

  pairing->installation_id = g_strdup (installation_id);
  pairing->client = g_strdup (client);
  pairing->version = g_strdup (version);
  pairing->browser = g_strdup (browser);
  pairing->commitment = g_strdup (commitment);
  pairing->nonce_e = chp_random_b64url (32);

  request_id = chp_random_b64url (16);
  expires_at = chp_bridge_now_ms () + CHP_PAIRING_TTL_MS;
  pairing->request = chp_pairing_request_new (request_id, installation_id, pairing->origin,
                                              browser, expires_at);
  chp_pairing_manager_track (self->pairing, pairing->request);
  pairing->stage = STAGE_AWAIT_REVEAL;

  g_clear_handle_id (&pairing->timeout_source, g_source_remove);
  pairing->timeout_source = g_timeout_add (CHP_PAIRING_TTL_MS, expired_cb, pairing);

  engine_key = chp_identity_dup_public_jwk (self->identity);
  builder = chp_bridge_begin_message ("pair_challenge");
  json_builder_set_member_name (builder, "requestId");
  json_builder_add_string_value (builder, request_id);
  json_builder_set_member_name (builder, "engineId");
  json_builder_add_string_value (builder, chp_identity_get_engine_id (self->identity));
  json_builder_set_member_name (builder, "enginePublicKey");
  json_builder_add_value (builder, json_node_copy (engine_key));
  json_builder_set_member_name (builder, "nonceE");
  json_builder_add_string_value (builder, pairing->nonce_e);
  json_builder_set_member_name (builder, "expiresAt");
  json_builder_add_int_value (builder, expires_at);
  chp_bridge_send_json (pairing->ws, builder);
}

static Pairing *
find_by_serial (ChpBridge *self,
                guint64    serial)
{
  for (guint i = 0; self->pairings != NULL && i < self->pairings->len; i++)
    {
      Pairing *pairing = g_ptr_array_index (self->pairings, i);

      if (pairing->serial == serial)
        return pairing;
    }

  return NULL;
}

typedef struct
{
  ChpBridge     *bridge;
  guint64        serial;
  ChpDeviceInfo *info;
} Saving;

static void
saving_free (Saving *saving)
{
  g_object_unref (saving->bridge);
  chp_device_info_free (saving->info);
  g_free (saving);
}

static void
send_approved (Pairing             *pairing,
               const ChpDeviceInfo *info)
{
  ChpBridge *self = pairing->bridge;
  ChpPairingRequest *request = pairing->request;
  g_autofree char *signed_text = NULL;
  g_autofree char *signature = NULL;
  g_autoptr(JsonNode) engine_key = NULL;
  g_autoptr(JsonBuilder) builder = NULL;

  /* The device is listed before the browser is told, so its first auth cannot race us. */
  chp_device_list_add_or_update (self->devices, info);

  if (chp_pairing_request_get_replace (request))
    chp_bridge_revoke_device (self, chp_pairing_request_get_existing_device_id (request));

  signed_text = labelled_transcript (pairing, "approved", info->device_id);
  signature = chp_identity_sign (self->identity, signed_text, NULL);
  engine_key = chp_identity_dup_public_jwk (self->identity);

  builder = chp_bridge_begin_message ("pair_approved");
  json_builder_set_member_name (builder, "requestId");
  json_builder_add_string_value (builder, chp_pairing_request_get_id (request));
  json_builder_set_member_name (builder, "deviceId");
  json_builder_add_string_value (builder, info->device_id);
  json_builder_set_member_name (builder, "engineId");
  json_builder_add_string_value (builder, chp_identity_get_engine_id (self->identity));
  json_builder_set_member_name (builder, "enginePublicKey");
  json_builder_add_value (builder, json_node_copy (engine_key));
  json_builder_set_member_name (builder, "signature");
  json_builder_add_string_value (builder, signature);
  chp_bridge_send_json (pairing->ws, builder);

  g_message ("pairing: approved %s as %s", pairing->origin, info->device_id);
  pairing_end (pairing, CHP_PAIRING_STATE_APPROVED);
}

static void
device_saved_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  Saving *saving = user_data;
  Pairing *pairing = find_by_serial (saving->bridge, saving->serial);
  g_autoptr(GError) error = NULL;

  if (!chp_store_write_finish (CHP_STORE (source), result, &error))
    {
      g_warning ("Could not save the paired browser: %s", error->message);
      if (pairing != NULL && pairing->stage == STAGE_SAVING)
        fail (pairing, "internal", error->message);
    }
  else if (pairing != NULL && pairing->stage == STAGE_SAVING)
    {
      send_approved (pairing, saving->info);
    }

  saving_free (saving);
}

/* The person pressed Pair: store the device durably first, then tell the browser. */
static void
approve (Pairing *pairing)
{
  ChpBridge *self = pairing->bridge;
  ChpDevice *existing;
  ChpDeviceInfo info = { 0 };
  g_autofree char *device_id = NULL;
  gint64 now = chp_bridge_now_ms ();
  Saving *saving;

  existing = chp_device_list_find_by_installation (self->devices, pairing->installation_id,
                                                   pairing->origin);
  if (existing != NULL)
    {
      /* The same browser profile again: rotate its key in place, keeping id, name, creation. */
      info = *chp_device_get_info (existing);
      device_id = g_strdup (info.device_id);
    }
  else
    {
      device_id = chp_random_b64url (16);
      info.created_at = now;
      info.name = pairing->browser;
    }

  info.device_id = device_id;
  info.installation_id = pairing->installation_id;
  info.origin = pairing->origin;
  info.browser = pairing->browser;
  info.client = pairing->client;
  info.version = pairing->version;
  info.key_x = pairing->ext_x;
  info.key_y = pairing->ext_y;
  info.paired_at = now;
  info.last_seen = now;
  info.revoked_at = 0;

  if (self->store == NULL)
    {
      send_approved (pairing, &info);
      return;
    }

  pairing->stage = STAGE_SAVING;
  saving = g_new0 (Saving, 1);
  saving->bridge = g_object_ref (self);
  saving->serial = pairing->serial;
  saving->info = chp_device_info_copy (&info);
  chp_store_save_device_async (self->store, &info, NULL, device_saved_cb, saving);
}

static void
decided_cb (ChpPairingRequest *request,
            gboolean           approved,
            gpointer           user_data)
{
  Pairing *pairing = user_data;

  if (pairing->stage != STAGE_AWAIT_DECISION)
    return;

  if (approved)
    {
      approve (pairing);
    }
  else
    {
      send_simple (pairing, "pair_rejected");
      pairing_end (pairing, CHP_PAIRING_STATE_REJECTED);
    }
}

static void
handle_reveal (Pairing  *pairing,
               ChpFrame *frame)
{
  ChpBridge *self = pairing->bridge;
  JsonObject *o = frame->object;
  const char *request_id = chp_json_get_string (o, "requestId");
  const char *nonce_c = chp_json_get_string (o, "nonceC");
  const char *signature = chp_json_get_string (o, "signature");
  g_autofree char *commitment = NULL;
  g_autofree char *reveal_text = NULL;
  g_autofree char *code = NULL;
  g_auto(GStrv) t = NULL;
  g_autoptr(JsonBuilder) builder = NULL;
  ChpDevice *same_origin;

  if (g_strcmp0 (request_id, chp_pairing_request_get_id (pairing->request)) != 0 ||
      !is_b64url_of (nonce_c, 32) || signature == NULL)
    {
      fail (pairing, "invalid_params", "pair_reveal is missing or has malformed fields");
      return;
    }

  commitment = chp_pair_commitment (nonce_c, pairing->ext_x, pairing->ext_y, NULL);
  if (commitment == NULL || !g_str_equal (commitment, pairing->commitment))
    {
      fail (pairing, "commitment_mismatch", "The revealed nonce does not match the commitment");
      return;
    }

  pairing->nonce_c = g_strdup (nonce_c);
  reveal_text = labelled_transcript (pairing, "reveal", NULL);
  if (reveal_text == NULL ||
      !chp_verify_p1363 (pairing->ext_x, pairing->ext_y, reveal_text, signature, NULL))
    {
      fail (pairing, "bad_signature", "The reveal signature does not verify");
      return;
    }

  t = transcript (pairing);
  code = chp_pair_code ((const char * const *) t, NULL);
  chp_pairing_request_set_code (pairing->request, code);

  if (chp_device_list_find_by_installation (self->devices, pairing->installation_id,
                                            pairing->origin) == NULL &&
      (same_origin = chp_device_list_find_by_origin (self->devices, pairing->origin)) != NULL)
    chp_pairing_request_set_existing_device (pairing->request, chp_device_get_id (same_origin),
                                             chp_device_get_name (same_origin));

  pairing->stage = STAGE_AWAIT_DECISION;
  pairing->decided_id = g_signal_connect (pairing->request, "decided",
                                          G_CALLBACK (decided_cb), pairing);
  chp_pairing_manager_show (self->pairing, pairing->request);

  builder = chp_bridge_begin_message ("pair_pending");
  json_builder_set_member_name (builder, "requestId");
  json_builder_add_string_value (builder, request_id);
  json_builder_set_member_name (builder, "expiresAt");
  json_builder_add_int_value (builder, chp_pairing_request_get_expires_at (pairing->request));
  chp_bridge_send_json (pairing->ws, builder);
}

static void
message_cb (SoupWebsocketConnection *ws,
            gint                     type,
            GBytes                  *message,
            gpointer                 user_data)
{
  Pairing *pairing = user_data;
  g_autoptr(ChpFrame) frame = NULL;
  gsize len;
  const char *data = g_bytes_get_data (message, &len);

  frame = chp_frame_parse (data, len, NULL);

  if (type != SOUP_WEBSOCKET_DATA_TEXT || frame == NULL)
    {
      fail (pairing, "invalid_params", "Malformed pairing message");
      return;
    }

  if (pairing->stage == STAGE_AWAIT_REQUEST && g_str_equal (frame->type_name, "pair_request"))
    handle_request (pairing, frame);
  else if (pairing->stage == STAGE_AWAIT_REVEAL && g_str_equal (frame->type_name, "pair_reveal"))
    handle_reveal (pairing, frame);
  else if (pairing->stage != STAGE_DONE)
    fail (pairing, "invalid_params", "Unexpected message during pairing");
}

static void
closed_cb (SoupWebsocketConnection *ws,
           gpointer                 user_data)
{
  Pairing *pairing = user_data;

  g_ptr_array_remove (pairing->bridge->pairings, pairing);
}

void
chp_bridge_pairing_start (ChpBridge               *self,
                          SoupWebsocketConnection *ws,
                          const char              *origin)
{
  static guint64 next_serial;
  Pairing *pairing;

  /* Only a browser extension pairs: a web page, or anything else, never gets as far as a
   * pairing window, whatever path or header led it here. */
  if (!chp_bridge_check_origin (origin))
    {
      soup_websocket_connection_close (ws, CHP_CLOSE_UNAUTHENTICATED, "unauthorized");
      return;
    }

  pairing = g_new0 (Pairing, 1);
  if (self->pairings == NULL)
    self->pairings = g_ptr_array_new_with_free_func ((GDestroyNotify) pairing_free);

  pairing->bridge = self;
  pairing->serial = ++next_serial;
  pairing->ws = g_object_ref (ws);
  pairing->origin = g_strdup (origin);
  g_ptr_array_add (self->pairings, pairing);

  soup_websocket_connection_set_max_incoming_payload_size (ws, CHP_BRIDGE_PREAUTH_MAX);
  soup_websocket_connection_set_keepalive_interval (ws, 0);
  g_signal_connect (ws, "message", G_CALLBACK (message_cb), pairing);
  g_signal_connect (ws, "closed", G_CALLBACK (closed_cb), pairing);

  /* The first message within 5 s, as on /extension; after that the request's 120 s rule. */
  pairing->timeout_source = g_timeout_add (CHP_BRIDGE_AUTH_TIMEOUT_MS, expired_cb, pairing);
}

void
chp_bridge_pairing_clear (ChpBridge *self)
{
  if (self->pairings != NULL)
    g_ptr_array_set_size (self->pairings, 0);
}
