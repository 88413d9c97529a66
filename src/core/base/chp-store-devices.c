/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-devices.c: paired browsers as the store keeps them: saved, loaded, renamed,
 * revoked, last seen. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-private.h"

#include <glib/gi18n.h>

static gpointer
save_device_job (ChpStore  *self,
                 gpointer   data,
                 GError   **error)
{
  ChpDeviceInfo *info = data;
  sqlite3_stmt *stmt = chp_store_get_stmt (self, STMT_DEVICE_UPSERT, error);

  if (stmt == NULL)
    return NULL;

  chp_store_bind_text (stmt, 1, info->device_id);
  chp_store_bind_text (stmt, 2, info->installation_id);
  chp_store_bind_text (stmt, 3, info->origin);
  chp_store_bind_text (stmt, 4, info->name ? info->name : "");
  chp_store_bind_text (stmt, 5, info->browser ? info->browser : "");
  chp_store_bind_text (stmt, 6, info->client ? info->client : "");
  chp_store_bind_text (stmt, 7, info->version ? info->version : "");
  chp_store_bind_text (stmt, 8, info->key_x);
  chp_store_bind_text (stmt, 9, info->key_y);
  sqlite3_bind_int64 (stmt, 10, info->created_at);
  sqlite3_bind_int64 (stmt, 11, info->paired_at);
  sqlite3_bind_int64 (stmt, 12, info->last_seen);
  sqlite3_bind_int64 (stmt, 13, info->revoked_at);

  return chp_store_step_done (self, stmt, _("the paired browser"), error)
         ? GINT_TO_POINTER (TRUE) : NULL;
}

void
chp_store_save_device_async (ChpStore            *self,
                             const ChpDeviceInfo *info,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (info != NULL && info->device_id != NULL);

  chp_store_push_job (self, JOB_WRITE, save_device_job, chp_device_info_copy (info),
                      (GDestroyNotify) chp_device_info_free, NULL, chp_store_save_device_async,
                      cancellable, callback, user_data);
}

static gpointer
load_devices_job (ChpStore  *self,
                  gpointer   data,
                  GError   **error)
{
  g_autoptr(GPtrArray) devices = g_ptr_array_new_with_free_func ((GDestroyNotify) chp_device_info_free);
  sqlite3_stmt *stmt = chp_store_get_stmt (self, STMT_DEVICE_LIST, error);
  int rc;

  if (stmt == NULL)
    return NULL;

  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      ChpDeviceInfo *info = g_new0 (ChpDeviceInfo, 1);

      info->device_id = chp_store_column_dup (stmt, 0);
      info->installation_id = chp_store_column_dup (stmt, 1);
      info->origin = chp_store_column_dup (stmt, 2);
      info->name = chp_store_column_dup (stmt, 3);
      info->browser = chp_store_column_dup (stmt, 4);
      info->client = chp_store_column_dup (stmt, 5);
      info->version = chp_store_column_dup (stmt, 6);
      info->key_x = chp_store_column_dup (stmt, 7);
      info->key_y = chp_store_column_dup (stmt, 8);
      info->created_at = sqlite3_column_int64 (stmt, 9);
      info->paired_at = sqlite3_column_int64 (stmt, 10);
      info->last_seen = sqlite3_column_int64 (stmt, 11);
      info->revoked_at = sqlite3_column_int64 (stmt, 12);
      g_ptr_array_add (devices, info);
    }
  sqlite3_reset (stmt);

  if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "devices");
      return NULL;
    }

  return g_steal_pointer (&devices);
}

void
chp_store_load_devices_async (ChpStore            *self,
                              GCancellable        *cancellable,
                              GAsyncReadyCallback  callback,
                              gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));

  chp_store_push_job (self, JOB_READ, load_devices_job, NULL, NULL,
                      (GDestroyNotify) g_ptr_array_unref, chp_store_load_devices_async,
                      cancellable, callback, user_data);
}

GPtrArray *
chp_store_load_devices_finish (ChpStore      *self,
                               GAsyncResult  *result,
                               GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

typedef struct
{
  StmtId  stmt;
  char   *device_id;
  char   *text;
  gint64  value;
} DeviceUpdate;

static void
device_update_free (DeviceUpdate *update)
{
  g_free (update->device_id);
  g_free (update->text);
  g_free (update);
}

static gpointer
device_update_job (ChpStore  *self,
                   gpointer   data,
                   GError   **error)
{
  DeviceUpdate *update = data;
  sqlite3_stmt *stmt = chp_store_get_stmt (self, update->stmt, error);

  if (stmt == NULL)
    return NULL;

  chp_store_bind_text (stmt, 1, update->device_id);
  if (update->text != NULL)
    chp_store_bind_text (stmt, 2, update->text);
  else
    sqlite3_bind_int64 (stmt, 2, update->value);

  if (!chp_store_step_done (self, stmt, _("the paired browser"), error))
    return NULL;

  if (sqlite3_changes (self->db) == 0 && update->stmt != STMT_DEVICE_TOUCH)
    {
      g_set_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND,
                   _("No paired browser has the id %s"), update->device_id);
      return NULL;
    }

  return GINT_TO_POINTER (TRUE);
}

static void
push_device_update (ChpStore            *self,
                    StmtId               stmt,
                    const char          *device_id,
                    const char          *text,
                    gint64               value,
                    gpointer             source_tag,
                    GCancellable        *cancellable,
                    GAsyncReadyCallback  callback,
                    gpointer             user_data)
{
  DeviceUpdate *update = g_new0 (DeviceUpdate, 1);

  update->stmt = stmt;
  update->device_id = g_strdup (device_id);
  update->text = g_strdup (text);
  update->value = value;

  chp_store_push_job (self, JOB_WRITE, device_update_job, update,
                      (GDestroyNotify) device_update_free, NULL, source_tag, cancellable,
                      callback, user_data);
}

void
chp_store_revoke_device_async (ChpStore            *self,
                               const char          *device_id,
                               gint64               revoked_at,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (device_id != NULL);

  push_device_update (self, STMT_DEVICE_REVOKE, device_id, NULL, revoked_at,
                      chp_store_revoke_device_async, cancellable, callback, user_data);
}

void
chp_store_rename_device_async (ChpStore            *self,
                               const char          *device_id,
                               const char          *name,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  g_return_if_fail (CHP_IS_STORE (self));
  g_return_if_fail (device_id != NULL && name != NULL);

  push_device_update (self, STMT_DEVICE_RENAME, device_id, name, 0,
                      chp_store_rename_device_async, cancellable, callback, user_data);
}

void
chp_store_touch_device (ChpStore   *self,
                        const char *device_id,
                        gint64      last_seen)
{
  g_return_if_fail (CHP_IS_STORE (self));

  push_device_update (self, STMT_DEVICE_TOUCH, device_id, NULL, last_seen,
                      chp_store_touch_device, NULL, NULL, NULL);
}
