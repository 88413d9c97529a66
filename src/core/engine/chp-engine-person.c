/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-engine-person.c: what the person does through the app's widgets — revoke a grant, finish a
 * handoff, approve or decline a hold or a plan, rename or resume a browser, Stop all and Resume.
 * Only widget actions reach these (never D-Bus, an agent or a page): docs/security.md. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-engine"

#include "chp-engine-private.h"

#include "chp-json-util.h"
#include "chp-protocol-error.h"

#include <stdarg.h>
#include <string.h>

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
    chp_engine_apply_hold (self, hold_device, json_node_get_object (node));
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

void
chp_engine_send_stop (ChpEngine  *self,
           const char *device_id)
{
  /* The extension knows one source for the app, whichever of its controls was used. The
   * bridge takes its own reference to the params. */
  g_autoptr(JsonNode) params = params_new ("source", "app", NULL);

  chp_bridge_call_async (self->bridge, device_id, "extension.stop", params, 10000, NULL,
                         fire_and_forget_cb, g_strdup ("extension.stop"));
}

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
      chp_engine_notify_stopped (self);
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
        chp_engine_send_stop (self, chp_device_get_id (device));
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
      chp_engine_notify_stopped (self);
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

      chp_engine_replace_str (&info->name, name);
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
