/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-engine.c: start-up order matters: the store must be open and the devices, revocations
 * and pairing history loaded before the bridge accepts a single connection. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-engine"

#include "chp-engine.h"

#include "chp-json-util.h"
#include "chp-protocol-error.h"

#include <glib/gstdio.h>
#include <stdarg.h>
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
  ChpGrantList *grants;
  ChpHandoffList *handoffs;
  ChpHoldList *holds;
  ChpPlanList *plans;
  ChpUrlFloor *floor;
  ChpAgentSessionList *agent_sessions;
  ChpSafetySettings *safety;

  gboolean stopped;
  GPtrArray *agent_calls;  /* AgentCall: the agents' calls on their way to a browser */

  guint default_grant_minutes;
  guint audit_max_rows;
};

enum {
  PROP_0,
  PROP_STOPPED,
  PROP_DEFAULT_GRANT_MINUTES,
  PROP_AUDIT_MAX_ROWS,
  N_PROPS
};

enum {
  SIGNAL_HANDOFF_ARRIVED,
  SIGNAL_HANDOFF_CHANGED,
  SIGNAL_HOLD_ARRIVED,
  SIGNAL_HOLD_CHANGED,
  N_SIGNALS
};

static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (ChpEngine, chp_engine, G_TYPE_OBJECT)

static void safety_floor_cb            (ChpSafetySettings *safety,
                                        GParamSpec        *pspec,
                                        gpointer           user_data);
static void safety_changed_cb          (ChpSafetySettings *safety,
                                        const char        *key,
                                        gpointer           user_data);
static void apply_floor_rules          (ChpEngine         *self);
static void state_loaded_cb            (GObject           *source,
                                        GAsyncResult      *result,
                                        gpointer           user_data);
static void devices_changed_cb (GListModel *devices,
                                guint       position,
                                guint       removed,
                                guint       added,
                                gpointer    user_data);

static void
chp_engine_dispose (GObject *object)
{
  ChpEngine *self = CHP_ENGINE (object);

  /* Agents went first: whoever composed an agent endpoint on this engine closed it, since its
   * sessions hold calls that hold the bridge (chp_agent_endpoint_close()). */
  /* Calls in flight hold the bridge: stop it now, not when the last of them finishes. */
  if (self->bridge != NULL)
    g_object_run_dispose (G_OBJECT (self->bridge));
  g_clear_object (&self->bridge);
  g_clear_object (&self->pairing);
  g_clear_object (&self->devices);
  g_clear_object (&self->grants);
  g_clear_object (&self->handoffs);
  g_clear_object (&self->holds);
  g_clear_object (&self->plans);
  g_clear_object (&self->floor);
  g_clear_object (&self->agent_sessions);
  if (self->safety != NULL)
    g_signal_handlers_disconnect_by_data (self->safety, self);
  g_clear_object (&self->safety);
  if (self->store != NULL)
    chp_store_close (self->store);
  g_clear_object (&self->store);
  g_clear_object (&self->identity);

  G_OBJECT_CLASS (chp_engine_parent_class)->dispose (object);
}

static void
chp_engine_finalize (GObject *object)
{
  ChpEngine *self = CHP_ENGINE (object);

  g_clear_pointer (&self->data_dir, g_free);
  /* Every call holds the engine through its task: none can be left by now. */
  g_assert (self->agent_calls->len == 0);
  g_clear_pointer (&self->agent_calls, g_ptr_array_unref);

  G_OBJECT_CLASS (chp_engine_parent_class)->finalize (object);
}

static void
chp_engine_get_property (GObject    *object,
                         guint       prop_id,
                         GValue     *value,
                         GParamSpec *pspec)
{
  ChpEngine *self = CHP_ENGINE (object);

  switch (prop_id)
    {
    case PROP_STOPPED:
      g_value_set_boolean (value, self->stopped);
      break;

    case PROP_DEFAULT_GRANT_MINUTES:
      g_value_set_uint (value, self->default_grant_minutes);
      break;

    case PROP_AUDIT_MAX_ROWS:
      g_value_set_uint (value, self->audit_max_rows);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* Applied now when the engine runs, else when it starts. */
static void
apply_settings (ChpEngine *self)
{
  if (self->bridge != NULL)
    chp_bridge_set_default_grant_minutes (self->bridge, self->default_grant_minutes);
  if (self->store != NULL)
    chp_store_set_audit_limit (self->store, self->audit_max_rows);
}

static void
chp_engine_set_property (GObject      *object,
                         guint         prop_id,
                         const GValue *value,
                         GParamSpec   *pspec)
{
  ChpEngine *self = CHP_ENGINE (object);
  guint v;

  switch (prop_id)
    {
    case PROP_DEFAULT_GRANT_MINUTES:
      v = g_value_get_uint (value);
      if (v != self->default_grant_minutes)
        {
          self->default_grant_minutes = v;
          apply_settings (self);
          g_object_notify_by_pspec (object, pspec);
        }
      break;

    case PROP_AUDIT_MAX_ROWS:
      v = g_value_get_uint (value);
      if (v != self->audit_max_rows)
        {
          self->audit_max_rows = v;
          apply_settings (self);
          g_object_notify_by_pspec (object, pspec);
        }
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_engine_class_init (ChpEngineClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = chp_engine_dispose;
  object_class->finalize = chp_engine_finalize;
  object_class->get_property = chp_engine_get_property;
  object_class->set_property = chp_engine_set_property;

  /* The person pressed Stop all (header, Ctrl+Shift+E, tray): every agent call is refused
   * `stopped` until they press Resume in the app. */
  properties[PROP_STOPPED] =
    g_param_spec_boolean ("stopped", NULL, NULL, FALSE,
                          G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  /* The person's Preferences (the app binds its GSettings keys of the same names). */
  properties[PROP_DEFAULT_GRANT_MINUTES] =
    g_param_spec_uint ("default-grant-minutes", NULL, NULL, 1, 1440, 15,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_AUDIT_MAX_ROWS] =
    g_param_spec_uint ("audit-max-rows", NULL, NULL, 1000, 1000000, CHP_STORE_DEFAULT_AUDIT_LIMIT,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * ChpEngine::handoff-arrived:
   * @handoff: a handoff that now waits for the person
   *
   * For the app's notification; the list model already holds it.
   */
  signals[SIGNAL_HANDOFF_ARRIVED] =
    g_signal_new ("handoff-arrived", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, CHP_TYPE_HANDOFF);

  /**
   * ChpEngine::handoff-changed:
   * @handoff: a handoff that arrived or changed state (waiting, done, cancelled, expired…)
   *
   * For the agent interface's `browser_wait`: emitted for every accepted `handoff.changed`,
   * after the list model has applied it.
   */
  signals[SIGNAL_HANDOFF_CHANGED] =
    g_signal_new ("handoff-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, CHP_TYPE_HANDOFF);

  /**
   * ChpEngine::hold-arrived:
   * @hold: an act a browser held, waiting for the person's Approve or Decline
   */
  signals[SIGNAL_HOLD_ARRIVED] =
    g_signal_new ("hold-arrived", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, CHP_TYPE_HOLD);

  /**
   * ChpEngine::hold-changed:
   * @hold: a hold that arrived or ended (done, declined, changed, expired, failed)
   *
   * For `browser_wait`, like #ChpEngine::handoff-changed.
   */
  signals[SIGNAL_HOLD_CHANGED] =
    g_signal_new ("hold-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, CHP_TYPE_HOLD);
}

static void
chp_engine_init (ChpEngine *self)
{
  self->agent_calls = g_ptr_array_new ();
  self->default_grant_minutes = 15;
  self->audit_max_rows = CHP_STORE_DEFAULT_AUDIT_LIMIT;
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
  self->grants = chp_grant_list_new ();
  self->handoffs = chp_handoff_list_new ();
  self->holds = chp_hold_list_new ();
  self->plans = chp_plan_list_new ();
  self->floor = chp_url_floor_new ();
  self->agent_sessions = chp_agent_session_list_new ();
  self->safety = chp_safety_settings_new ();
  g_signal_connect (self->safety, "notify::floor-blind", G_CALLBACK (safety_floor_cb), self);
  g_signal_connect (self->safety, "notify::floor-hands-only", G_CALLBACK (safety_floor_cb), self);
  g_signal_connect (self->safety, "changed", G_CALLBACK (safety_changed_cb), self);
  g_signal_connect_object (self->devices, "items-changed", G_CALLBACK (devices_changed_cb),
                           self, G_CONNECT_DEFAULT);

  return self;
}

/* How many characters of text an agent's tool result may carry; 0 for the default. The
 * person's setting: kept in the store (chp_engine_get_safety_settings()). */
void
chp_engine_set_result_max_chars (ChpEngine *self,
                                 guint      max_chars)
{
  g_return_if_fail (CHP_IS_ENGINE (self));

  chp_safety_settings_set_result_max_chars (self->safety, max_chars);
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
            replace_str (&info->browser, browser);
          if (version != NULL)
            replace_str (&info->version, version);
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
 * Decline: mirrored, audited (metadata only), and said to whoever waits on it. */
static void
apply_hold (ChpEngine  *self,
            const char *device_id,
            JsonObject *object)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpHold) hold = chp_hold_list_apply (self->holds, device_id, object, &error);

  if (error != NULL)
    g_message ("hold.changed from %s refused: %s", device_id, error->message);
  else if (hold != NULL)
    {
      const char *code = chp_hold_get_error (hold);

      if (self->bridge != NULL)
        chp_bridge_audit (self->bridge, "hold", chp_hold_get_kind (hold),
                          chp_hold_get_state (hold), device_id, 0,
                          code != NULL && *code != '\0' ? code : NULL);
      if (chp_hold_is_held (hold))
        g_signal_emit (self, signals[SIGNAL_HOLD_ARRIVED], 0, hold);
      g_signal_emit (self, signals[SIGNAL_HOLD_CHANGED], 0, hold);
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
        {
          if (chp_handoff_is_waiting (handoff))
            g_signal_emit (self, signals[SIGNAL_HANDOFF_ARRIVED], 0, handoff);
          g_signal_emit (self, signals[SIGNAL_HANDOFF_CHANGED], 0, handoff);
        }
    }
  else if (g_strcmp0 (event, "hold.changed") == 0)
    apply_hold (self, device_id, object);
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

static void send_stop (ChpEngine  *self,
                       const char *device_id);

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
    send_stop (self, device_id);

  chp_bridge_call_async (bridge, device_id, "extension.info", NULL, 5000, NULL,
                         extension_info_cb, info_query_new (user_data, device_id));
  /* The mirror may be stale after the app restarted or the browser was away. */
  chp_bridge_call_async (bridge, device_id, "extension.grants", NULL, 5000, NULL,
                         extension_grants_cb, info_query_new (user_data, device_id));
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

  attempts = chp_store_load_pairing_attempts_finish (CHP_STORE (source), result, &error);
  if (attempts == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  chp_pairing_manager_set_history (self->pairing, attempts);
  chp_store_load_state_async (self->store, g_task_get_cancellable (task), state_loaded_cb,
                              g_object_ref (task));
}

static void
state_loaded_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ChpEngine *self = g_task_get_source_object (task);
  g_autoptr(GHashTable) state = NULL;
  g_autoptr(GError) error = NULL;
  guint port = GPOINTER_TO_UINT (g_task_get_task_data (task));

  state = chp_store_load_state_finish (CHP_STORE (source), result, &error);
  if (state == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  chp_safety_settings_load_state (self->safety, state);
  apply_floor_rules (self);

  /* A Stop outlives the app: quitting and starting again (D-Bus activation does it for any
   * agent) must not lift it. Set before the bridge listens, so the first browser to connect is
   * told at once (device_connected_cb). */
  if (g_strcmp0 (g_hash_table_lookup (state, CHP_STATE_STOPPED), "true") == 0 && !self->stopped)
    {
      self->stopped = TRUE;
      g_message ("Stop all (kept from before the app quit)");
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STOPPED]);
    }

  if (!chp_bridge_listen (self->bridge, port, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  /* Chaperone's own bridge is blind to agents: the floor learns which port it is. */
  chp_url_floor_set_bridge_port (self->floor, chp_bridge_get_port (self->bridge));
  apply_floor_rules (self);

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
  g_signal_connect_object (self->bridge, "device-event", G_CALLBACK (device_event_cb),
                           self, G_CONNECT_DEFAULT);
  apply_settings (self);

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

ChpGrantList *
chp_engine_get_grants (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->grants;
}

ChpHoldList *
chp_engine_get_holds (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->holds;
}

ChpPlanList *
chp_engine_get_plans (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->plans;
}

ChpUrlFloor *
chp_engine_get_floor (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->floor;
}

/**
 * chp_engine_set_floor_rules:
 * @blind: (nullable): the person's blind entries
 * @hands_only: (nullable): the person's hands-only entries
 *
 * The person's own additions to the URL floor, as Preferences sets them through
 * chp_engine_get_safety_settings(): stored, applied, and told to browsers (engine.info).
 */
void
chp_engine_set_floor_rules (ChpEngine          *self,
                            const char * const *blind,
                            const char * const *hands_only)
{
  g_return_if_fail (CHP_IS_ENGINE (self));

  chp_safety_settings_set_floor (self->safety, blind, hands_only);
}

/* Entries the floor cannot read are dropped, and said in the log. Browsers learn the list in
 * engine.info when they connect; the app checks it anyway before anything is sent. */
static void
apply_floor_rules (ChpEngine *self)
{
  guint dropped = chp_url_floor_set_person_rules (self->floor,
                                                  chp_safety_settings_get_floor_blind (self->safety),
                                                  chp_safety_settings_get_floor_hands_only (self->safety));

  if (dropped > 0)
    g_message ("%u URL floor entries are not host patterns and were left out", dropped);
  if (self->bridge != NULL)
    {
      g_autoptr(JsonNode) rules = chp_url_floor_person_rules_to_json (self->floor);

      chp_bridge_set_floor_rules (self->bridge, rules);
    }
}

static void
safety_floor_cb (ChpSafetySettings *safety,
                 GParamSpec        *pspec,
                 gpointer           user_data)
{
  apply_floor_rules (user_data);
}

/* The person changed one: stored durably, and a line in Activity says so, so a change nobody
 * made in this window would at least be seen. */
static void
safety_changed_cb (ChpSafetySettings *safety,
                   const char        *key,
                   gpointer           user_data)
{
  ChpEngine *self = user_data;
  g_autofree char *value = chp_safety_settings_to_state (safety, key);

  if (self->store == NULL)
    return;

  chp_store_set_state_async (self->store, key, value, NULL, NULL, NULL);
  if (self->bridge != NULL)
    chp_bridge_audit (self->bridge, "settings", key, "changed", NULL, 0, NULL);
}

/* Returns: (transfer none): the person's floor entries and result cap, which Preferences edits */
ChpSafetySettings *
chp_engine_get_safety_settings (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->safety;
}

ChpHandoffList *
chp_engine_get_handoffs (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->handoffs;
}

static void
person_call_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_bridge_call_finish (CHP_BRIDGE (source), result, &error);

  const char *hold_device = g_object_get_data (G_OBJECT (task), "hold-device");
  ChpEngine *self = g_task_get_source_object (task);

  if (node == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  /* The answer to Approve or Decline is the hold as it ended: mirrored now, so the card and a
   * waiting agent learn it even if the browser's own hold.changed is late or lost. A second
   * report of the same state changes nothing. */
  if (hold_device != NULL && JSON_NODE_HOLDS_OBJECT (node))
    apply_hold (self, hold_device, json_node_get_object (node));
  g_task_return_pointer (task, g_steal_pointer (&node), (GDestroyNotify) json_node_unref);
}

/* The person's own requests to a browser, made from the app's windows. They are methods of the
 * extension's `extension.*` family (and `grant.revoke`), which the agent interface never maps to
 * a tool, so no agent can make them. */
static void
person_call (ChpEngine           *self,
             const char          *device_id,
             const char          *method,
             JsonNode            *params,
             GAsyncReadyCallback  callback,
             gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, NULL, callback, user_data);
  g_autoptr(JsonNode) owned = params;

  g_task_set_source_tag (task, person_call);
  if (g_strcmp0 (method, "extension.hold.resolve") == 0)
    g_object_set_data_full (G_OBJECT (task), "hold-device", g_strdup (device_id), g_free);
  if (self->bridge == NULL)
    {
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_DEVICE_OFFLINE,
                               "Chaperone is not running");
      return;
    }

  chp_bridge_call_async (self->bridge, device_id, method, owned, 10000, NULL,
                         person_call_cb, g_steal_pointer (&task));
}

static JsonNode *
params_new (const char *first_member,
            ...)
{
  g_autoptr(JsonObject) object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);
  const char *member = first_member;
  va_list args;

  va_start (args, first_member);
  while (member != NULL)
    {
      json_object_set_string_member (object, member, va_arg (args, const char *));
      member = va_arg (args, const char *);
    }
  va_end (args);

  json_node_set_object (node, object);
  return node;
}

/* The person pressed Revoke on a grant in the app. */
void
chp_engine_revoke_grant_async (ChpEngine           *self,
                               const char          *device_id,
                               const char          *grant_id,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_return_if_fail (CHP_IS_ENGINE (self));

  person_call (self, device_id, "grant.revoke", params_new ("grantId", grant_id, NULL),
               callback, user_data);
}

/* The person pressed Done (@outcome "done") or Cancel task ("cancelled") on a handoff card. */
void
chp_engine_resolve_handoff_async (ChpEngine           *self,
                                  const char          *device_id,
                                  const char          *handoff_id,
                                  const char          *outcome,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_return_if_fail (CHP_IS_ENGINE (self));
  g_return_if_fail (g_strcmp0 (outcome, "done") == 0 || g_strcmp0 (outcome, "cancelled") == 0);

  person_call (self, device_id, "extension.handoff.resolve",
               params_new ("handoffId", handoff_id, "outcome", outcome, NULL),
               callback, user_data);
}

/* The person pressed Approve (@outcome "approve") or Decline ("decline") on a hold's card. Only
 * the app's widget actions call this; the extension checks the page again before it runs. */
void
chp_engine_resolve_hold_async (ChpEngine           *self,
                               const char          *device_id,
                               const char          *hold_id,
                               const char          *outcome,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_return_if_fail (CHP_IS_ENGINE (self));
  g_return_if_fail (g_strcmp0 (outcome, "approve") == 0 || g_strcmp0 (outcome, "decline") == 0);

  person_call (self, device_id, "extension.hold.resolve",
               params_new ("holdId", hold_id, "outcome", outcome, NULL), callback, user_data);
}

/**
 * chp_engine_post_plan:
 * @session_id: the agent session posting it
 * @args: browser_plan's arguments
 *
 * Returns: (transfer full) (nullable): the plan, waiting for the person, or %NULL with
 *   %CHP_PROTOCOL_ERROR_INVALID_PARAMS (bad plan) or %CHP_PROTOCOL_ERROR_BUSY (too many)
 */
ChpPlan *
chp_engine_post_plan (ChpEngine   *self,
                      const char  *session_id,
                      const char  *client_name,
                      JsonObject  *args,
                      GError     **error)
{
  g_autofree char *plan_id = NULL;
  g_autoptr(ChpPlan) plan = NULL;

  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  plan_id = chp_plan_list_next_id (self->plans);
  plan = chp_plan_new_from_args (plan_id, session_id, client_name, args, error);
  if (plan == NULL || !chp_plan_list_add (self->plans, plan, error))
    return NULL;
  if (self->bridge != NULL)
    chp_bridge_audit (self->bridge, "plan", "post", "waiting", NULL, 0, NULL);
  return g_steal_pointer (&plan);
}

/* The person's Approve or Decline on a plan's card (widget actions only). */
gboolean
chp_engine_decide_plan (ChpEngine  *self,
                        const char *plan_id,
                        gboolean    approve)
{
  gboolean done;

  g_return_val_if_fail (CHP_IS_ENGINE (self), FALSE);

  /* A plan approved while everything is stopped would be waiting for the stop to lift: no.
   * Stop ends every plan, so there is nothing to decide then anyway. */
  if (approve && self->stopped)
    return FALSE;

  done = approve ? chp_plan_list_approve (self->plans, plan_id)
                 : chp_plan_list_decline (self->plans, plan_id);
  if (done && self->bridge != NULL)
    chp_bridge_audit (self->bridge, "plan", approve ? "approve" : "decline",
                      approve ? "approved" : "declined", NULL, 0, NULL);
  return done;
}

/* The person pressed Show tab: the browser brings the tab of a handoff to the front. */
void
chp_engine_show_handoff_tab_async (ChpEngine           *self,
                                   const char          *device_id,
                                   const char          *handoff_id,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  g_return_if_fail (CHP_IS_ENGINE (self));

  person_call (self, device_id, "extension.handoff.show",
               params_new ("handoffId", handoff_id, NULL), callback, user_data);
}

/* The person pressed Resume for a browser they had stopped. */
void
chp_engine_resume_device_async (ChpEngine           *self,
                                const char          *device_id,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_return_if_fail (CHP_IS_ENGINE (self));

  person_call (self, device_id, "extension.resume", params_new (NULL), callback, user_data);
}

/* Returns: (transfer full) (nullable): the browser's answer, or %NULL with its error */
JsonNode *
chp_engine_person_call_finish (ChpEngine     *self,
                               GAsyncResult  *result,
                               GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

ChpAgentSessionList *
chp_engine_get_agent_sessions (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->agent_sessions;
}

gboolean
chp_engine_get_stopped (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), FALSE);

  return self->stopped;
}

static void
fire_and_forget_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  g_autofree char *method = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_bridge_call_finish (CHP_BRIDGE (source), result, &error);

  if (node == NULL)
    g_debug ("%s: %s", method, error->message);
}

static void
send_stop (ChpEngine  *self,
           const char *device_id)
{
  /* The extension knows one source for the app, whichever of its controls was used. The
   * bridge takes its own reference to the params. */
  g_autoptr(JsonNode) params = params_new ("source", "app", NULL);

  chp_bridge_call_async (self->bridge, device_id, "extension.stop", params, 10000, NULL,
                         fire_and_forget_cb, g_strdup ("extension.stop"));
}

typedef struct
{
  GTask    *task;
  gboolean  answered;  /* Stop all answered it already; the browser's answer is dropped */
} AgentCall;

/**
 * chp_engine_stop_all:
 * @source: what the person used ("app", "shortcut", "tray"), for the log
 *
 * The person's Stop: set before anything is sent or awaited, so the very next agent call is
 * refused, and the calls already on their way are answered `stopped` now rather than when the
 * browser gets round to it. Then every connected browser is told (fire and forget; the
 * extension aborts what it runs); a browser that connects later is told when it connects.
 */
void
chp_engine_stop_all (ChpEngine  *self,
                     const char *source)
{
  g_return_if_fail (CHP_IS_ENGINE (self));

  if (!self->stopped)
    {
      self->stopped = TRUE;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STOPPED]);
      /* After the flag, never before: the stop takes effect now, the disk follows. */
      if (self->store != NULL)
        chp_store_set_state_async (self->store, CHP_STATE_STOPPED, "true", NULL, NULL, NULL);
    }

  for (guint i = 0; i < self->agent_calls->len; i++)
    {
      AgentCall *call = g_ptr_array_index (self->agent_calls, i);

      if (call->answered)
        continue;
      call->answered = TRUE;
      g_task_return_new_error (call->task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_STOPPED,
                               "The person stopped all agents");
    }

  /* A plan the person approved ends with the stop: resuming does not bring it back. */
  chp_plan_list_end_all (self->plans, "stopped");

  g_message ("Stop all (%s)", source != NULL ? source : "app");
  if (self->bridge == NULL)
    return;

  chp_bridge_audit (self->bridge, "person", "stop-all", "stopped", NULL, 0, NULL);
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (self->devices)); i++)
    {
      g_autoptr(ChpDevice) device = g_list_model_get_item (G_LIST_MODEL (self->devices), i);

      if (chp_device_get_online (device))
        send_stop (self, chp_device_get_id (device));
    }
}

/**
 * chp_engine_resume_all:
 *
 * The person's Resume in the app: agent calls go through again, and every connected browser is
 * asked to resume too (fire and forget). Only a widget action calls this: nothing on D-Bus,
 * and nothing an agent reaches, may resume.
 */
void
chp_engine_resume_all (ChpEngine *self)
{
  g_return_if_fail (CHP_IS_ENGINE (self));

  if (self->stopped)
    {
      self->stopped = FALSE;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STOPPED]);
      if (self->store != NULL)
        chp_store_set_state_async (self->store, CHP_STATE_STOPPED, NULL, NULL, NULL, NULL);
    }

  g_message ("Resume all");
  if (self->bridge == NULL)
    return;

  chp_bridge_audit (self->bridge, "person", "resume-all", "resumed", NULL, 0, NULL);
  for (guint i = 0; i < g_list_model_get_n_items (G_LIST_MODEL (self->devices)); i++)
    {
      g_autoptr(ChpDevice) device = g_list_model_get_item (G_LIST_MODEL (self->devices), i);

      if (chp_device_get_online (device))
        {
          g_autoptr(JsonNode) params = params_new (NULL);

          chp_bridge_call_async (self->bridge, chp_device_get_id (device), "extension.resume",
                                 params, 10000, NULL,
                                 fire_and_forget_cb, g_strdup ("extension.resume"));
        }
    }
}

static void
agent_call_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  AgentCall *call = user_data;
  ChpEngine *self = g_task_get_source_object (call->task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_bridge_call_finish (CHP_BRIDGE (source), result, &error);

  g_ptr_array_remove_fast (self->agent_calls, call);
  if (!call->answered)
    {
      if (node == NULL)
        g_task_return_error (call->task, g_steal_pointer (&error));
      else
        g_task_return_pointer (call->task, g_steal_pointer (&node),
                               (GDestroyNotify) json_node_unref);
    }

  g_object_unref (call->task);
  g_free (call);
}

/**
 * chp_engine_agent_call_async:
 * @device_id: the browser
 * @method: a `browser.*` method
 * @params: (nullable): its parameters (not consumed)
 * @timeout_ms: 0 for the default
 *
 * The one way an agent's request reaches a browser. Refused at once, before anything is sent:
 * `stopped` while the person has stopped everything, `unknown_method` for anything but
 * `browser.*` — the person's own requests (`extension.*`, `grant.revoke`) are not an agent's
 * to make.
 */
void
chp_engine_agent_call_async (ChpEngine           *self,
                             const char          *device_id,
                             const char          *method,
                             JsonNode            *params,
                             guint                timeout_ms,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  ChpDevice *device;
  AgentCall *call;

  g_return_if_fail (CHP_IS_ENGINE (self));

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, chp_engine_agent_call_async);

  /* The stop check comes first: nothing is looked at, sent or awaited before it. */
  if (self->stopped)
    {
      if (self->bridge != NULL)
        chp_bridge_audit (self->bridge, "agent", method != NULL ? method : "", "refused",
                          device_id, 0, "stopped");
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_STOPPED,
                               "The person stopped all agents");
      return;
    }

  if (method == NULL || !g_str_has_prefix (method, "browser.") || method[8] == '\0')
    {
      if (self->bridge != NULL)
        chp_bridge_audit (self->bridge, "agent", method != NULL ? method : "", "refused",
                          device_id, 0, "unknown_method");
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_UNKNOWN_METHOD,
                               "Agents may call browser.* methods only");
      return;
    }

  if (self->bridge == NULL)
    {
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_DEVICE_OFFLINE,
                               "Chaperone is not running");
      return;
    }

  /* The bridge keeps a detached session's calls for its resume window, which suits a service
   * worker that restarts in a second; an agent is better told at once that the browser is
   * away (closed, or asleep until its next wake-up) than left waiting for its timeout. */
  device = device_id != NULL ? chp_device_list_lookup (self->devices, device_id) : NULL;
  if (device != NULL && !chp_device_get_online (device))
    {
      chp_bridge_audit (self->bridge, "agent", method, "refused", device_id, 0, "device_offline");
      g_task_return_new_error (task, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_DEVICE_OFFLINE,
                               "This browser is not connected now; it reconnects by itself "
                               "when it comes back");
      return;
    }

  call = g_new0 (AgentCall, 1);
  call->task = g_steal_pointer (&task);
  g_ptr_array_add (self->agent_calls, call);
  chp_bridge_call_async (self->bridge, device_id, method, params, timeout_ms, cancellable,
                         agent_call_cb, call);
}

/* Returns: (transfer full) (nullable): the browser's answer, or %NULL with its error */
JsonNode *
chp_engine_agent_call_finish (ChpEngine     *self,
                              GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/**
 * chp_engine_audit_agent:
 * @tool: the MCP tool (or JSON-RPC method) the agent called
 * @outcome: "ok", "error", "refused", "cancelled"…
 * @device_id: (nullable): the browser it concerned
 * @error_code: (nullable): the error code of §5 when it failed
 *
 * One audit row per agent call, metadata only: never arguments, never results.
 */
void
chp_engine_audit_agent (ChpEngine  *self,
                        const char *tool,
                        const char *outcome,
                        const char *device_id,
                        gint64      duration_ms,
                        const char *error_code)
{
  g_return_if_fail (CHP_IS_ENGINE (self));

  if (self->bridge != NULL)
    chp_bridge_audit (self->bridge, "agent", tool != NULL ? tool : "", outcome, device_id,
                      duration_ms, error_code);
}

#define DEVICE_NAME_MAX_CHARS 64

static void
device_renamed_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ChpEngine *self = g_task_get_source_object (task);
  const char *name = g_task_get_task_data (task);
  const char *device_id = g_object_get_data (G_OBJECT (task), "device-id");
  g_autoptr(GError) error = NULL;
  ChpDevice *device;

  if (!chp_store_write_finish (CHP_STORE (source), result, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  /* Stored first, shown second: the list never shows a name a restart would lose. */
  device = self->devices != NULL ? chp_device_list_lookup (self->devices, device_id) : NULL;
  if (device != NULL)
    {
      g_autoptr(ChpDeviceInfo) info = chp_device_info_copy (chp_device_get_info (device));

      replace_str (&info->name, name);
      chp_device_list_add_or_update (self->devices, info);
    }

  g_task_return_boolean (task, TRUE);
}

/**
 * chp_engine_rename_device_async:
 * @name: what the person wants to call the browser; trimmed, one line, at most 64 characters
 *
 * The person renamed a paired browser in the app. Finish with chp_engine_rename_device_finish().
 */
void
chp_engine_rename_device_async (ChpEngine           *self,
                                const char          *device_id,
                                const char          *name,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autofree char *clean = NULL;

  g_return_if_fail (CHP_IS_ENGINE (self));
  g_return_if_fail (device_id != NULL);
  g_return_if_fail (name != NULL);

  task = g_task_new (self, NULL, callback, user_data);
  g_task_set_source_tag (task, chp_engine_rename_device_async);

  clean = g_strstrip (g_utf8_make_valid (name, -1));
  for (char *p = clean; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      *p = ' ';

  if (*clean == '\0' || g_utf8_strlen (clean, -1) > DEVICE_NAME_MAX_CHARS)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                               "A browser's name has 1 to %d characters",
                               DEVICE_NAME_MAX_CHARS);
      return;
    }

  if (self->store == NULL || chp_device_list_lookup (self->devices, device_id) == NULL)
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                               "No paired browser has the id %s", device_id);
      return;
    }

  g_object_set_data_full (G_OBJECT (task), "device-id", g_strdup (device_id), g_free);
  g_task_set_task_data (task, g_strdup (clean), g_free);
  chp_store_rename_device_async (self->store, device_id, clean, NULL, device_renamed_cb,
                                 g_steal_pointer (&task));
}

gboolean
chp_engine_rename_device_finish (ChpEngine     *self,
                                 GAsyncResult  *result,
                                 GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), FALSE);

  return g_task_propagate_boolean (G_TASK (result), error);
}
