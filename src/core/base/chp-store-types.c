/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-types.c: copy and free the store's plain records. */
#include "config.h"

#include "chp-store-types.h"

G_DEFINE_BOXED_TYPE (ChpDeviceInfo, chp_device_info, chp_device_info_copy, chp_device_info_free)
G_DEFINE_BOXED_TYPE (ChpAuditEntry, chp_audit_entry, chp_audit_entry_copy, chp_audit_entry_free)

ChpDeviceInfo *
chp_device_info_copy (const ChpDeviceInfo *info)
{
  ChpDeviceInfo *copy = g_new0 (ChpDeviceInfo, 1);

  copy->device_id = g_strdup (info->device_id);
  copy->installation_id = g_strdup (info->installation_id);
  copy->origin = g_strdup (info->origin);
  copy->name = g_strdup (info->name);
  copy->browser = g_strdup (info->browser);
  copy->client = g_strdup (info->client);
  copy->version = g_strdup (info->version);
  copy->key_x = g_strdup (info->key_x);
  copy->key_y = g_strdup (info->key_y);
  copy->created_at = info->created_at;
  copy->paired_at = info->paired_at;
  copy->last_seen = info->last_seen;
  copy->revoked_at = info->revoked_at;

  return copy;
}

void
chp_device_info_free (ChpDeviceInfo *info)
{
  if (info == NULL)
    return;

  g_free (info->device_id);
  g_free (info->installation_id);
  g_free (info->origin);
  g_free (info->name);
  g_free (info->browser);
  g_free (info->client);
  g_free (info->version);
  g_free (info->key_x);
  g_free (info->key_y);
  g_free (info);
}

const char *
chp_pairing_outcome_to_string (ChpPairingOutcome outcome)
{
  switch (outcome)
    {
    case CHP_PAIRING_OUTCOME_APPROVED:
      return "approved";
    case CHP_PAIRING_OUTCOME_REJECTED:
      return "rejected";
    case CHP_PAIRING_OUTCOME_EXPIRED:
      return "expired";
    case CHP_PAIRING_OUTCOME_FAILED:
      return "failed";
    case CHP_PAIRING_OUTCOME_ABANDONED:
      return "abandoned";
    default:
      g_assert_not_reached ();
    }
}

void
chp_pairing_attempt_free (ChpPairingAttempt *attempt)
{
  if (attempt == NULL)
    return;

  g_free (attempt->installation_id);
  g_free (attempt->origin);
  g_free (attempt);
}

ChpAuditEntry *
chp_audit_entry_new (const char *category,
                     const char *method,
                     const char *outcome,
                     const char *device_id,
                     gint64      duration_ms,
                     const char *error_code)
{
  ChpAuditEntry *entry = g_new0 (ChpAuditEntry, 1);

  entry->at = g_get_real_time () / 1000;
  entry->category = g_strdup (category);
  entry->method = g_strdup (method);
  entry->outcome = g_strdup (outcome);
  entry->device_id = g_strdup (device_id);
  entry->duration_ms = duration_ms;
  entry->error_code = g_strdup (error_code);

  return entry;
}

ChpAuditEntry *
chp_audit_entry_copy (const ChpAuditEntry *entry)
{
  ChpAuditEntry *copy = chp_audit_entry_new (entry->category, entry->method, entry->outcome,
                                             entry->device_id, entry->duration_ms,
                                             entry->error_code);

  copy->id = entry->id;
  copy->at = entry->at;

  return copy;
}

void
chp_audit_entry_free (ChpAuditEntry *entry)
{
  if (entry == NULL)
    return;

  g_free (entry->category);
  g_free (entry->method);
  g_free (entry->outcome);
  g_free (entry->device_id);
  g_free (entry->error_code);
  g_free (entry);
}

G_DEFINE_BOXED_TYPE (ChpAuditQuery, chp_audit_query, chp_audit_query_copy, chp_audit_query_free)

ChpAuditQuery *
chp_audit_query_new (void)
{
  return g_new0 (ChpAuditQuery, 1);
}

ChpAuditQuery *
chp_audit_query_copy (const ChpAuditQuery *query)
{
  ChpAuditQuery *copy;

  g_return_val_if_fail (query != NULL, NULL);

  copy = g_new0 (ChpAuditQuery, 1);
  copy->category = g_strdup (query->category);
  copy->outcome = g_strdup (query->outcome);
  copy->device_id = g_strdup (query->device_id);
  copy->search = g_strdup (query->search);
  copy->after_id = query->after_id;
  copy->up_to_id = query->up_to_id;

  return copy;
}

void
chp_audit_query_free (ChpAuditQuery *query)
{
  if (query == NULL)
    return;

  g_free (query->category);
  g_free (query->outcome);
  g_free (query->device_id);
  g_free (query->search);
  g_free (query);
}

/* The filters only: the id bounds are where a listing stands, not what it lists. */
gboolean
chp_audit_query_equal (const ChpAuditQuery *a,
                       const ChpAuditQuery *b)
{
  g_return_val_if_fail (a != NULL && b != NULL, FALSE);

  return g_strcmp0 (a->category, b->category) == 0 &&
         g_strcmp0 (a->outcome, b->outcome) == 0 &&
         g_strcmp0 (a->device_id, b->device_id) == 0 &&
         g_strcmp0 (a->search, b->search) == 0;
}
