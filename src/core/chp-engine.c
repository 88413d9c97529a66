/* chp-engine.c: start-up order matters: the store must be open and the devices, revocations
 * and pairing history loaded before the bridge accepts a single connection. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-engine"

#include "chp-engine.h"

#include <string.h>

struct _ChpEngine
{
  GObject parent_instance;

  char *data_dir;
  ChpIdentity *identity;
  ChpStore *store;
  ChpDeviceList *devices;
  ChpPairingManager *pairing;
  ChpBridge *bridge;
};

G_DEFINE_FINAL_TYPE (ChpEngine, chp_engine, G_TYPE_OBJECT)

static void
chp_engine_dispose (GObject *object)
{
  ChpEngine *self = CHP_ENGINE (object);

  /* Calls in flight hold the bridge: stop it now, not when the last of them finishes. */
  if (self->bridge != NULL)
    g_object_run_dispose (G_OBJECT (self->bridge));
  g_clear_object (&self->bridge);
  g_clear_object (&self->pairing);
  g_clear_object (&self->devices);
  if (self->store != NULL)
    chp_store_close (self->store);
  g_clear_object (&self->store);
  g_clear_object (&self->identity);

  G_OBJECT_CLASS (chp_engine_parent_class)->dispose (object);
}

static void
chp_engine_finalize (GObject *object)
{
  g_clear_pointer (&CHP_ENGINE (object)->data_dir, g_free);

  G_OBJECT_CLASS (chp_engine_parent_class)->finalize (object);
}

static void
chp_engine_class_init (ChpEngineClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = chp_engine_dispose;
  object_class->finalize = chp_engine_finalize;
}

static void
chp_engine_init (ChpEngine *self)
{
}

char *
chp_engine_default_data_dir (void)
{
  return g_build_filename (g_get_user_data_dir (), "chaperone", NULL);
}

/* @data_dir: (nullable): where the key and the database live; %NULL for $XDG_DATA_HOME/chaperone */
ChpEngine *
chp_engine_new (const char *data_dir)
{
  ChpEngine *self = g_object_new (CHP_TYPE_ENGINE, NULL);

  self->data_dir = data_dir ? g_strdup (data_dir) : chp_engine_default_data_dir ();
  self->devices = chp_device_list_new ();

  return self;
}

const char *
chp_engine_get_data_dir (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->data_dir;
}

/* GLib 2.74 has no g_set_str. */
static void
replace_str (char       **slot,
                  const char  *value)
{
  g_free (*slot);
  *slot = g_strdup (value);
}

typedef struct
{
  GWeakRef   engine;    /* an answer that comes after the engine is gone is dropped */
  char      *device_id;
} InfoQuery;

static const char *
label_member (JsonObject *o,
              const char *member)
{
  const char *value = json_object_get_string_member_with_default (o, member, NULL);

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
            replace_str (&info->browser, browser);
          if (version != NULL)
            replace_str (&info->version, version);
          chp_device_list_add_or_update (self->devices, info);
          chp_store_save_device_async (self->store, info, NULL, NULL, NULL);
        }
    }

  g_weak_ref_clear (&query->engine);
  g_free (query->device_id);
  g_free (query);
}

static void
device_connected_cb (ChpBridge  *bridge,
                     const char *device_id,
                     const char *session_id,
                     gboolean    resumed,
                     gpointer    user_data)
{
  InfoQuery *query = g_new0 (InfoQuery, 1);

  g_weak_ref_init (&query->engine, user_data);
  query->device_id = g_strdup (device_id);
  chp_bridge_call_async (bridge, device_id, "extension.info", NULL, 5000, NULL,
                         extension_info_cb, query);
}

static void
attempts_loaded_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ChpEngine *self = g_task_get_source_object (task);
  g_autoptr(GPtrArray) attempts = NULL;
  g_autoptr(GError) error = NULL;
  guint port = GPOINTER_TO_UINT (g_task_get_task_data (task));

  attempts = chp_store_load_pairing_attempts_finish (CHP_STORE (source), result, &error);
  if (attempts == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  chp_pairing_manager_set_history (self->pairing, attempts);

  if (!chp_bridge_listen (self->bridge, port, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  g_task_return_boolean (task, TRUE);
}

static void
devices_loaded_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ChpEngine *self = g_task_get_source_object (task);
  g_autoptr(GPtrArray) infos = NULL;
  g_autoptr(GError) error = NULL;

  infos = chp_store_load_devices_finish (CHP_STORE (source), result, &error);
  if (infos == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  chp_device_list_set_all (self->devices, infos);
  chp_bridge_set_revoked (self->bridge, infos);

  /* The lock looks back 10 minutes and the daily limit one day. */
  chp_store_load_pairing_attempts_async (self->store,
                                         g_get_real_time () / 1000 - 24 * 3600 * 1000,
                                         g_task_get_cancellable (task),
                                         attempts_loaded_cb, g_object_ref (task));
}

static void
store_opened_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ChpEngine *self = g_task_get_source_object (task);
  g_autoptr(GError) error = NULL;

  if (!chp_store_open_finish (CHP_STORE (source), result, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  chp_store_load_devices_async (self->store, g_task_get_cancellable (task),
                                devices_loaded_cb, g_object_ref (task));
}

/**
 * chp_engine_start_async:
 * @port: the bridge port; 0 for any free one
 *
 * Loads (or makes) the identity, opens the store, then listens. An error says, in words a
 * person can act on, what is wrong (a loose file mode, a read-only folder, a newer database).
 */
void
chp_engine_start_async (ChpEngine           *self,
                        guint                port,
                        GCancellable        *cancellable,
                        GAsyncReadyCallback  callback,
                        gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *db_path = NULL;

  g_return_if_fail (CHP_IS_ENGINE (self));
  g_return_if_fail (self->bridge == NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, chp_engine_start_async);
  g_task_set_task_data (task, GUINT_TO_POINTER (port), NULL);

  /* A few hundred bytes read once at start: not worth a thread. */
  self->identity = chp_identity_load_or_create (self->data_dir, &error);
  if (self->identity == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  db_path = g_build_filename (self->data_dir, "chaperone.db", NULL);
  self->store = chp_store_new (db_path);
  self->pairing = chp_pairing_manager_new (self->store);
  self->bridge = chp_bridge_new (self->identity, self->store, self->devices, self->pairing);
  g_signal_connect_object (self->bridge, "device-connected", G_CALLBACK (device_connected_cb),
                           self, G_CONNECT_DEFAULT);

  chp_store_open_async (self->store, cancellable, store_opened_cb, g_steal_pointer (&task));
}

gboolean
chp_engine_start_finish (ChpEngine     *self,
                         GAsyncResult  *result,
                         GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}

ChpIdentity *
chp_engine_get_identity (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->identity;
}

ChpStore *
chp_engine_get_store (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->store;
}

ChpDeviceList *
chp_engine_get_devices (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->devices;
}

ChpPairingManager *
chp_engine_get_pairing (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->pairing;
}

ChpBridge *
chp_engine_get_bridge (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->bridge;
}
