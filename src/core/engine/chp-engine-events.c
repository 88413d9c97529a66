/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-engine-events.c: what browsers tell the engine — who they are, their grants, handoffs and
 * holds as they change — and what it tells a browser the moment it connects. Everything here is
 * the browser's word: checked, and a malformed event is logged and dropped, never trusted. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-engine"

#include "chp-engine-private.h"

#include "chp-json-util.h"
#include "chp-protocol-error.h"

#include <string.h>

typedef struct
{
  GWeakRef   engine;    /* an answer that comes after the engine is gone is dropped */
  char      *device_id;
} InfoQuery;

static const char *
label_member (JsonObject *o,
              const char *member)
{
  const char *value = chp_json_get_string (o, member);

  /* Shown to the person: one short line or nothing. */
  if (value == NULL || *value == '\0' || strlen (value) > 128 || strchr (value, '\n') != NULL)
    return NULL;

  return value;
}

static void
extension_info_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  InfoQuery *query = user_data;
  g_autoptr(ChpEngine) self = g_weak_ref_get (&query->engine);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_bridge_call_finish (CHP_BRIDGE (source), result, &error);
  ChpDevice *device;

  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    {
      g_debug ("extension.info from %s: %s", query->device_id,
               error ? error->message : "not an object");
    }
  else if (self != NULL && self->devices != NULL &&
           (device = chp_device_list_lookup (self->devices, query->device_id)) != NULL)
    {
      JsonObject *o = json_node_get_object (node);
      const char *browser = label_member (o, "browser");
      const char *version = label_member (o, "version");
      const ChpDeviceInfo *old = chp_device_get_info (device);

      /* A browser that updated itself reports its new version here, not by pairing again. */
      if ((browser != NULL && g_strcmp0 (browser, old->browser) != 0) ||
          (version != NULL && g_strcmp0 (version, old->version) != 0))
        {
          g_autoptr(ChpDeviceInfo) info = chp_device_info_copy (old);

          if (browser != NULL)
            chp_engine_replace_str (&info->browser, browser);
          if (version != NULL)
            chp_engine_replace_str (&info->version, version);
          chp_device_list_add_or_update (self->devices, info);
          chp_store_save_device_async (self->store, info, NULL, NULL, NULL);
        }

      /* A browser the person stopped while the app was away is still stopped. */
      device = chp_device_list_lookup (self->devices, query->device_id);
      if (device != NULL && json_object_has_member (o, "stopped"))
        chp_device_set_stopped (device, chp_json_get_bool (o, "stopped", FALSE));
    }

  g_weak_ref_clear (&query->engine);
  g_free (query->device_id);
  g_free (query);
}

static void
extension_grants_cb (GObject      *source,
                     GAsyncResult *result,
                     gpointer      user_data)
{
  InfoQuery *query = user_data;
  g_autoptr(ChpEngine) self = g_weak_ref_get (&query->engine);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_bridge_call_finish (CHP_BRIDGE (source), result, &error);
  JsonArray *grants;

  if (self != NULL && node != NULL && JSON_NODE_HOLDS_OBJECT (node) &&
      (grants = chp_json_get_array (json_node_get_object (node), "grants")) != NULL &&
      !chp_grant_list_set_device_grants (self->grants, query->device_id, grants, &error))
    g_message ("grants from %s refused: %s", query->device_id, error->message);
  else if (error != NULL)
    g_debug ("extension.grants from %s: %s", query->device_id, error->message);

  g_weak_ref_clear (&query->engine);
  g_free (query->device_id);
  g_free (query);
}

static InfoQuery *
info_query_new (ChpEngine  *self,
                const char *device_id)
{
  InfoQuery *query = g_new0 (InfoQuery, 1);

  g_weak_ref_init (&query->engine, self);
  query->device_id = g_strdup (device_id);
  return query;
}

/* A hold the browser reported, by its event or in its answer to the person's Approve or
 * Decline: mirrored, audited (metadata only), and said to whoever waits on it. One that arrives
 * while an act is on its way to that browser waits for the act's answer, which says whose act it
 * was (chp-engine-rules.c). */
void
chp_engine_apply_hold (ChpEngine  *self,
                       const char *device_id,
                       JsonObject *object)
{
  if (!chp_engine_park_hold (self, device_id, object))
    chp_engine_apply_hold_now (self, device_id, object);
}

/* The same, never parked: a rule of the person's may approve it (no card), or it is mirrored. */
void
chp_engine_apply_hold_now (ChpEngine  *self,
                           const char *device_id,
                           JsonObject *object)
{
  if (!chp_engine_apply_by_rule (self, device_id, object, NULL, NULL))
    chp_engine_mirror_hold (self, device_id, object);
}

/* A hold mirrored as the browser reported it, with no rule asked: a held one becomes a card. */
void
chp_engine_mirror_hold (ChpEngine  *self,
                        const char *device_id,
                        JsonObject *object)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpHold) hold = NULL;

  hold = chp_hold_list_apply (self->holds, device_id, object, &error);

  if (error != NULL)
    g_message ("hold.changed from %s refused: %s", device_id, error->message);
  else if (hold != NULL)
    {
      const char *code = chp_hold_get_error (hold);

      if (self->bridge != NULL)
        chp_bridge_audit (self->bridge, "hold", chp_hold_get_kind (hold),
                          chp_hold_get_state (hold), device_id, 0,
                          code != NULL && *code != '\0' ? code : NULL);
      chp_engine_emit_hold_changed (self, hold, chp_hold_is_held (hold));
      if (!chp_hold_is_held (hold))
        chp_engine_forget_hold_agent (self, hold);
    }
}

/* Malformed events are the browser's fault, not ours: said in the log (g_message, not a
 * warning, which the tests make fatal), and the models keep what they had.
 *
 * What a paired extension tells the app on its own: grants it holds, handoffs it shows, and
 * whether the person stopped it. The data is the extension's; its strings are the page's, and
 * the models check and bound them before anything shows them. */
static void
device_event_cb (ChpBridge  *bridge,
                 const char *device_id,
                 const char *event,
                 JsonNode   *data,
                 gint64      sequence,
                 gpointer    user_data)
{
  ChpEngine *self = user_data;
  g_autoptr(GError) error = NULL;
  JsonObject *object;

  if (data == NULL || !JSON_NODE_HOLDS_OBJECT (data))
    return;
  object = json_node_get_object (data);

  if (g_strcmp0 (event, "grant.changed") == 0)
    {
      JsonArray *grants = chp_json_get_array (object, "grants");

      if (grants == NULL ||
          !chp_grant_list_set_device_grants (self->grants, device_id, grants, &error))
        g_message ("grant.changed from %s refused: %s", device_id,
                   error ? error->message : "no grants array");
    }
  else if (g_strcmp0 (event, "handoff.changed") == 0)
    {
      g_autoptr(ChpHandoff) handoff = chp_handoff_list_apply (self->handoffs, device_id,
                                                              object, &error);

      if (error != NULL)
        g_message ("handoff.changed from %s refused: %s", device_id, error->message);
      else if (handoff != NULL)
        chp_engine_emit_handoff_changed (self, handoff, chp_handoff_is_waiting (handoff));
    }
  else if (g_strcmp0 (event, "hold.changed") == 0)
    chp_engine_apply_hold (self, device_id, object);
  else if (g_strcmp0 (event, "stop.halted") == 0)
    {
      /* How long the browser took from the person's Stop to the last running call halted. */
      gint64 halted_ms = chp_json_get_int (object, "haltedMs", -1);

      if (self->bridge != NULL && halted_ms >= 0 && halted_ms < G_MAXINT32)
        chp_bridge_audit (self->bridge, "stop", "halted", "stopped", device_id, halted_ms, NULL);
    }
  else if (g_strcmp0 (event, "stop.changed") == 0)
    {
      ChpDevice *device = chp_device_list_lookup (self->devices, device_id);

      if (device != NULL)
        chp_device_set_stopped (device,
                                chp_json_get_bool (object, "stopped", FALSE));
    }
}

/* A device that left the list (revoked) takes its grants and handoffs with it. */
static void
devices_changed_cb (GListModel *devices,
                    guint       position,
                    guint       removed,
                    guint       added,
                    gpointer    user_data)
{
  ChpEngine *self = user_data;
  g_autoptr(GHashTable) known = NULL;
  g_autoptr(GPtrArray) gone = NULL;

  if (removed == 0)
    return;

  known = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < g_list_model_get_n_items (devices); i++)
    {
      g_autoptr(ChpDevice) device = g_list_model_get_item (devices, i);

      g_hash_table_add (known, (gpointer) chp_device_get_id (device));
    }

  gone = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (self->grants)); i++)
    {
      g_autoptr(ChpGrant) grant = g_list_model_get_item (G_LIST_MODEL (self->grants), i);

      if (!g_hash_table_contains (known, chp_grant_get_device_id (grant)))
        g_ptr_array_add (gone, g_strdup (chp_grant_get_device_id (grant)));
    }
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (self->handoffs)); i++)
    {
      g_autoptr(ChpHandoff) handoff = g_list_model_get_item (G_LIST_MODEL (self->handoffs), i);

      if (!g_hash_table_contains (known, chp_handoff_get_device_id (handoff)))
        g_ptr_array_add (gone, g_strdup (chp_handoff_get_device_id (handoff)));
    }

  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (self->holds)); i++)
    {
      g_autoptr(ChpHold) hold = g_list_model_get_item (G_LIST_MODEL (self->holds), i);

      if (!g_hash_table_contains (known, chp_hold_get_device_id (hold)))
        g_ptr_array_add (gone, g_strdup (chp_hold_get_device_id (hold)));
    }

  for (guint i = 0; i < gone->len; i++)
    {
      chp_grant_list_remove_device (self->grants, g_ptr_array_index (gone, i));
      chp_handoff_list_remove_device (self->handoffs, g_ptr_array_index (gone, i));
      chp_hold_list_remove_device (self->holds, g_ptr_array_index (gone, i));
    }
}

static void
device_connected_cb (ChpBridge  *bridge,
                     const char *device_id,
                     const char *session_id,
                     gboolean    resumed,
                     gpointer    user_data)
{
  ChpEngine *self = user_data;

  /* A browser that was away when the person pressed Stop all learns it first of all. */
  if (self->stopped)
    chp_engine_send_stop (self, device_id);

  chp_bridge_call_async (bridge, device_id, "extension.info", NULL, 5000, NULL,
                         extension_info_cb, info_query_new (user_data, device_id));
  /* The mirror may be stale after the app restarted or the browser was away. */
  chp_bridge_call_async (bridge, device_id, "extension.grants", NULL, 5000, NULL,
                         extension_grants_cb, info_query_new (user_data, device_id));
}


void
chp_engine_watch_devices (ChpEngine *self)
{
  g_signal_connect_object (self->devices, "items-changed", G_CALLBACK (devices_changed_cb),
                           self, G_CONNECT_DEFAULT);
}

void
chp_engine_watch_bridge (ChpEngine *self)
{
  g_signal_connect_object (self->bridge, "device-connected", G_CALLBACK (device_connected_cb),
                           self, G_CONNECT_DEFAULT);
  g_signal_connect_object (self->bridge, "device-event", G_CALLBACK (device_event_cb),
                           self, G_CONNECT_DEFAULT);
}
