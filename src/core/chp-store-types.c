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
