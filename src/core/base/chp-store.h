/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store.h: the SQLite store, owned by one database thread (DESIGN §9). */
#pragma once

#include <gio/gio.h>

#include "chp-store-types.h"

G_BEGIN_DECLS

#define CHP_STORE_ERROR (chp_store_error_quark ())

typedef enum
{
  CHP_STORE_ERROR_OPEN,
  CHP_STORE_ERROR_READ_ONLY,
  CHP_STORE_ERROR_FULL,
  CHP_STORE_ERROR_NEWER,
  CHP_STORE_ERROR_CLOSED,
  CHP_STORE_ERROR_NOT_FOUND,
  CHP_STORE_ERROR_FAILED,
} ChpStoreError;

#define CHP_STORE_DEFAULT_AUDIT_LIMIT 10000

#define CHP_TYPE_STORE (chp_store_get_type ())

G_DECLARE_FINAL_TYPE (ChpStore, chp_store, CHP, STORE, GObject)

GQuark      chp_store_error_quark            (void);

ChpStore   *chp_store_new                    (const char           *path);
const char *chp_store_get_path               (ChpStore             *self);
const char *chp_store_get_moved_aside_path   (ChpStore             *self);
void        chp_store_set_audit_limit        (ChpStore             *self,
                                              guint                 limit);

void        chp_store_open_async             (ChpStore             *self,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
gboolean    chp_store_open_finish            (ChpStore             *self,
                                              GAsyncResult         *result,
                                              GError              **error);

void        chp_store_load_devices_async     (ChpStore             *self,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
GPtrArray  *chp_store_load_devices_finish    (ChpStore             *self,
                                              GAsyncResult         *result,
                                              GError              **error);

void        chp_store_save_device_async      (ChpStore             *self,
                                              const ChpDeviceInfo  *info,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
void        chp_store_revoke_device_async    (ChpStore             *self,
                                              const char           *device_id,
                                              gint64                revoked_at,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
void        chp_store_rename_device_async    (ChpStore             *self,
                                              const char           *device_id,
                                              const char           *name,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
void        chp_store_touch_device           (ChpStore             *self,
                                              const char           *device_id,
                                              gint64                last_seen);

void        chp_store_add_pairing_attempt_async   (ChpStore                *self,
                                                   const ChpPairingAttempt *attempt,
                                                   GCancellable            *cancellable,
                                                   GAsyncReadyCallback      callback,
                                                   gpointer                 user_data);
void        chp_store_load_pairing_attempts_async (ChpStore                *self,
                                                   gint64                   since,
                                                   GCancellable            *cancellable,
                                                   GAsyncReadyCallback      callback,
                                                   gpointer                 user_data);
GPtrArray  *chp_store_load_pairing_attempts_finish (ChpStore               *self,
                                                    GAsyncResult           *result,
                                                    GError                **error);

void        chp_store_add_audit_async        (ChpStore             *self,
                                              const ChpAuditEntry  *entry,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
void        chp_store_list_audit_async       (ChpStore             *self,
                                              guint                 limit,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
GPtrArray  *chp_store_list_audit_finish      (ChpStore             *self,
                                              GAsyncResult         *result,
                                              GError              **error);

void        chp_store_query_audit_async      (ChpStore             *self,
                                              const ChpAuditQuery  *query,
                                              guint                 offset,
                                              guint                 limit,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
GPtrArray  *chp_store_query_audit_finish     (ChpStore             *self,
                                              GAsyncResult         *result,
                                              GError              **error);
void        chp_store_count_audit_async      (ChpStore             *self,
                                              const ChpAuditQuery  *query,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
gboolean    chp_store_count_audit_finish     (ChpStore             *self,
                                              GAsyncResult         *result,
                                              ChpAuditCount        *count,
                                              GError              **error);
void        chp_store_clear_audit_async      (ChpStore             *self,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);

void        chp_store_set_state_async        (ChpStore             *self,
                                              const char           *key,
                                              const char           *value,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
void        chp_store_load_state_async       (ChpStore             *self,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
GHashTable *chp_store_load_state_finish      (ChpStore             *self,
                                              GAsyncResult         *result,
                                              GError              **error);
gboolean    chp_store_write_finish           (ChpStore             *self,
                                              GAsyncResult         *result,
                                              GError              **error);

void        chp_store_save_rule_async        (ChpStore             *self,
                                              const ChpRuleInfo    *info,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
void        chp_store_load_rules_async       (ChpStore             *self,
                                              gint64                now,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
GPtrArray  *chp_store_load_rules_finish      (ChpStore             *self,
                                              GAsyncResult         *result,
                                              GError              **error);
void        chp_store_use_rule_async         (ChpStore             *self,
                                              const char           *rule_id,
                                              gint64                at,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);
void        chp_store_revoke_rule_async      (ChpStore             *self,
                                              const char           *rule_id,
                                              gint64                at,
                                              GCancellable         *cancellable,
                                              GAsyncReadyCallback   callback,
                                              gpointer              user_data);

void        chp_store_release_memory         (ChpStore             *self);
void        chp_store_close                  (ChpStore             *self);

G_END_DECLS
