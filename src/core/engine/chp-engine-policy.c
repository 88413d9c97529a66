/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-engine-policy.c: the administrator's locks (ChpManagedPolicy) where the engine decides —
 * at the agents' door, before anything is sent to a browser, and in the floor and learning
 * switches it owns. The bridge port is the application's to apply: it starts the bridge. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-engine"

#include "chp-engine-private.h"

#include "chp-protocol-error.h"

/* Returns: (transfer none): the administrator's policy; an empty one when there is none */
ChpManagedPolicy *
chp_engine_get_managed_policy (ChpEngine *self)
{
  g_return_val_if_fail (CHP_IS_ENGINE (self), NULL);

  return self->policy;
}

/* The application loads it once at start (a test gives its own); the floor follows at once. */
void
chp_engine_set_managed_policy (ChpEngine        *self,
                               ChpManagedPolicy *policy)
{
  g_return_if_fail (CHP_IS_ENGINE (self));
  g_return_if_fail (CHP_IS_MANAGED_POLICY (policy));

  g_set_object (&self->policy, policy);
  chp_engine_apply_floor_rules (self);
  /* A running bridge takes the lock now; one not yet made takes it when it is (chp-engine.c). */
  if (self->bridge != NULL)
    chp_bridge_set_transport_lock (self->bridge, chp_managed_policy_get_transport (policy));
}

static gboolean
batch_calls_api (JsonNode *params)
{
  JsonObject *o = params != NULL && JSON_NODE_HOLDS_OBJECT (params) ? json_node_get_object (params) : NULL;
  JsonNode *steps = o != NULL ? json_object_get_member (o, "steps") : NULL;
  JsonArray *a;

  /* Not an array: the extension refuses it as invalid_params; nothing to look at here. */
  if (steps == NULL || !JSON_NODE_HOLDS_ARRAY (steps))
    return FALSE;
  a = json_node_get_array (steps);
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *step = json_array_get_element (a, i);
      if (JSON_NODE_HOLDS_OBJECT (step) && json_object_has_member (json_node_get_object (step), "api"))
        return TRUE;
    }
  return FALSE;
}

/* The grant this call works under: the device's grant that names the call's tab. */
static ChpGrant *
grant_for_tab (ChpEngine  *self,
               const char *device_id,
               JsonNode   *params)
{
  JsonObject *o = params != NULL && JSON_NODE_HOLDS_OBJECT (params) ? json_node_get_object (params) : NULL;
  JsonNode *tab = o != NULL ? json_object_get_member (o, "tabId") : NULL;
  gint64 tab_id;
  guint n;

  if (tab == NULL || !JSON_NODE_HOLDS_VALUE (tab) || json_node_get_value_type (tab) != G_TYPE_INT64)
    return NULL;
  tab_id = json_node_get_int (tab);
  n = g_list_model_get_n_items (G_LIST_MODEL (self->grants));
  for (guint i = 0; i < n; i++)
    {
      g_autoptr(ChpGrant) grant = g_list_model_get_item (G_LIST_MODEL (self->grants), i);
      if (g_strcmp0 (chp_grant_get_device_id (grant), device_id) != 0)
        continue;
      for (guint t = 0; t < chp_grant_get_n_targets (grant); t++)
        if (chp_grant_get_target (grant, t)->tab_id == tab_id)
          return grant;   /* the list holds it */
    }
  return NULL;
}

/**
 * chp_engine_policy_refuses:
 *
 * Returns: %TRUE, with @error set, when the administrator's policy refuses this agent call:
 *   `policy_denied` for a call of a site's own API when ApiCalls=false; `grant_expired` when
 *   the grant of the call's tab is older than MaxGrantMinutes (the extension may still show it:
 *   it expires there at the time the person chose, and serves no agent past the limit).
 */
gboolean
chp_engine_policy_refuses (ChpEngine   *self,
                           const char  *device_id,
                           const char  *method,
                           JsonNode    *params,
                           GError     **error)
{
  guint max_minutes = chp_managed_policy_get_max_grant_minutes (self->policy);

  if (!chp_managed_policy_get_api_calls (self->policy) &&
      (g_strcmp0 (method, "browser.api.call") == 0 ||
       (g_strcmp0 (method, "browser.batch") == 0 && batch_calls_api (params))))
    {
      g_set_error (error, CHP_LOCAL_ERROR, CHP_PROTOCOL_ERROR_POLICY_DENIED,
                   "This computer's administrator turned calls of a site's own API off");
      return TRUE;
    }

  if (max_minutes > 0)
    {
      ChpGrant *grant = grant_for_tab (self, device_id, params);

      if (grant != NULL &&
          g_get_real_time () / 1000 - chp_grant_get_created_at (grant) > (gint64) max_minutes * 60000)
        {
          g_set_error (error, CHP_LOCAL_ERROR, CHP_PROTOCOL_ERROR_GRANT_EXPIRED,
                       "This computer's administrator lets a grant serve agents for %u minutes; "
                       "ask the person for a new one", max_minutes);
          return TRUE;
        }
    }
  return FALSE;
}
