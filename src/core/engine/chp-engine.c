/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-engine.c: the engine object, its start-up and the person's settings. Start-up order
 * matters: the store must be open and the devices, revocations and pairing history loaded before
 * the bridge accepts a single connection. What browsers say is chp-engine-events.c, what the
 * person does chp-engine-person.c, what agents ask chp-engine-agent.c. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-engine"

#include "chp-engine-private.h"

#include "chp-site-allowlist.h"
#include "chp-store-sites.h"

#include "chp-json-util.h"
#include "chp-protocol-error.h"

#include <string.h>


static GParamSpec *properties[N_PROPS];
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (ChpEngine, chp_engine, G_TYPE_OBJECT)

static void safety_floor_cb            (ChpSafetySettings *safety,
                                        GParamSpec        *pspec,
                                        gpointer           user_data);
static void safety_changed_cb          (ChpSafetySettings *safety,
                                        const char        *key,
                                        gpointer           user_data);
static void state_loaded_cb            (GObject           *source,
                                        GAsyncResult      *result,
                                        gpointer           user_data);
static void rules_loaded_cb            (GObject           *source,
                                        GAsyncResult      *result,
                                        gpointer           user_data);

static void
chp_engine_dispose (GObject *object)
{
  ChpEngine *self = CHP_ENGINE (object);

  /* Agents went first: whoever composed an agent endpoint on this engine closed it, since its
   * sessions hold calls that hold the bridge (chp_agent_endpoint_close()). */
  /* The agents' traces end before the store closes (their ends are queued writes). */
  if (self->traces != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->traces, self);
      chp_trace_recorder_end_all (self->traces, "app-closed");
    }
  g_clear_object (&self->traces);
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
  chp_engine_rules_dispose (self);
  g_clear_object (&self->sites);
  if (self->safety != NULL)
    g_signal_handlers_disconnect_by_data (self->safety, self);
  g_clear_object (&self->safety);
  g_clear_object (&self->policy);
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

  /**
   * ChpEngine::trace-changed:
   * @trace_id: an agent session's trace that began, grew or ended
   *
   * For the trace browser. The writes are queued: chp_store_trace_flush_async() before reading.
   */
  signals[SIGNAL_TRACE_CHANGED] =
    g_signal_new ("trace-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
trace_changed_cb (ChpTraceRecorder *traces,
                  const char       *trace_id,
                  gpointer          user_data)
{
  g_signal_emit (user_data, signals[SIGNAL_TRACE_CHANGED], 0, trace_id);
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
  chp_engine_rules_init (self);
  self->safety = chp_safety_settings_new ();
  self->policy = chp_managed_policy_new_empty ();
  g_signal_connect (self->safety, "notify::floor-blind", G_CALLBACK (safety_floor_cb), self);
  g_signal_connect (self->safety, "notify::floor-hands-only", G_CALLBACK (safety_floor_cb), self);
  g_signal_connect (self->safety, "changed", G_CALLBACK (safety_changed_cb), self);
  chp_engine_watch_devices (self);

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

  state = chp_store_load_state_finish (CHP_STORE (source), result, &error);
  if (state == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  chp_safety_settings_load_state (self->safety, state);
  chp_engine_apply_floor_rules (self);

  /* A Stop outlives the app: quitting and starting again (D-Bus activation does it for any
   * agent) must not lift it. Set before the bridge listens, so the first browser to connect is
   * told at once (chp-engine-events.c). */
  if (g_strcmp0 (g_hash_table_lookup (state, CHP_STATE_STOPPED), "true") == 0 && !self->stopped)
    {
      self->stopped = TRUE;
      g_message ("Stop all (kept from before the app quit)");
      chp_engine_notify_stopped (self);
    }

  /* The person's rules are in the list before the first hold can arrive. */
  chp_store_load_rules_async (self->store, g_get_real_time () / 1000,
                              g_task_get_cancellable (task), rules_loaded_cb,
                              g_object_ref (task));
}

static void
rules_loaded_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  ChpEngine *self = g_task_get_source_object (task);
  g_autoptr(GPtrArray) rules = NULL;
  g_autoptr(GError) error = NULL;
  guint port = GPOINTER_TO_UINT (g_task_get_task_data (task));

  rules = chp_store_load_rules_finish (CHP_STORE (source), result, &error);
  if (rules == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  chp_approval_rule_list_set_all (self->rules, rules);
  if (self->sites != NULL)
    chp_site_list_reload (self->sites);

  if (!chp_bridge_listen (self->bridge, port, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  /* Chaperone's own bridge is blind to agents: the floor learns which port it is. */
  chp_url_floor_set_bridge_port (self->floor, chp_bridge_get_port (self->bridge));
  chp_engine_apply_floor_rules (self);

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
  /* What the site memory may keep is policy's word (it fails closed without it). */
  chp_store_set_site_policy (self->store, chp_site_allowlist_check,
                             chp_site_allowlist_label_is_personal);
  self->pairing = chp_pairing_manager_new (self->store);
  self->bridge = chp_bridge_new (self->identity, self->store, self->devices, self->pairing);
  chp_bridge_set_transport_lock (self->bridge, chp_managed_policy_get_transport (self->policy));
  self->traces = chp_trace_recorder_new (self->store, self->bridge, self->agent_sessions,
                                         self->devices);
  g_signal_connect (self->traces, "changed", G_CALLBACK (trace_changed_cb), self);
  chp_engine_watch_bridge (self);
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

/* Returns: (nullable): the agents' traces, once the engine started */
ChpTraceRecorder *
chp_engine_get_traces (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->traces;
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
void
chp_engine_apply_floor_rules (ChpEngine *self)
{
  /* The administrator's entries come first and stay whatever the person removes (they edit only
   * their own list, in Preferences). */
  g_autoptr(GStrvBuilder) blind = g_strv_builder_new ();
  g_autoptr(GStrvBuilder) hands_only = g_strv_builder_new ();
  g_auto(GStrv) blind_v = NULL;
  g_auto(GStrv) hands_only_v = NULL;
  guint dropped;

  g_strv_builder_addv (blind, (const char **) chp_managed_policy_get_floor_blind (self->policy));
  g_strv_builder_addv (blind, (const char **) chp_safety_settings_get_floor_blind (self->safety));
  g_strv_builder_addv (hands_only, (const char **) chp_managed_policy_get_floor_hands_only (self->policy));
  g_strv_builder_addv (hands_only, (const char **) chp_safety_settings_get_floor_hands_only (self->safety));
  blind_v = g_strv_builder_end (blind);
  hands_only_v = g_strv_builder_end (hands_only);
  dropped = chp_url_floor_set_person_rules (self->floor, (const char * const *) blind_v,
                                            (const char * const *) hands_only_v);

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
  chp_engine_apply_floor_rules (user_data);
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

ChpAgentSessionList *
chp_engine_get_agent_sessions (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->agent_sessions;
}

/* Whether what agents learn of a site (its API entries, its controls) is kept for later visits
 * (the person's Preference, "Learn how sites work"). Off, an agent's session still keeps what it
 * learned until it ends. */
gboolean
chp_engine_get_site_learning (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), FALSE);

  return !self->site_learning_off && chp_managed_policy_get_site_learning (self->policy);
}

void
chp_engine_set_site_learning (ChpEngine *self,
                              gboolean   learning)
{
  g_return_if_fail (CHP_IS_ENGINE (self));

  self->site_learning_off = !learning;
}

gboolean
chp_engine_get_stopped (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), FALSE);

  return self->stopped;
}


void
chp_engine_emit_hold_changed (ChpEngine *self,
                              ChpHold   *hold,
                              gboolean   arrived)
{
  if (arrived)
    g_signal_emit (self, signals[SIGNAL_HOLD_ARRIVED], 0, hold);
  g_signal_emit (self, signals[SIGNAL_HOLD_CHANGED], 0, hold);
}

void
chp_engine_emit_handoff_changed (ChpEngine  *self,
                                 ChpHandoff *handoff,
                                 gboolean    arrived)
{
  if (arrived)
    g_signal_emit (self, signals[SIGNAL_HANDOFF_ARRIVED], 0, handoff);
  g_signal_emit (self, signals[SIGNAL_HANDOFF_CHANGED], 0, handoff);
}

void
chp_engine_notify_stopped (ChpEngine *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STOPPED]);
}
