/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-types.h: plain records that cross between the main thread and the database thread. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

typedef struct
{
  char   *device_id;
  char   *installation_id;
  char   *origin;
  char   *name;
  char   *browser;
  char   *client;
  char   *version;
  char   *key_x;
  char   *key_y;
  gint64  created_at;   /* ms since the epoch */
  gint64  paired_at;    /* last (re-)pairing: a rotation moves this, not created_at */
  gint64  last_seen;
  gint64  revoked_at;   /* 0 while the device is trusted */
} ChpDeviceInfo;

#define CHP_TYPE_DEVICE_INFO (chp_device_info_get_type ())
GType          chp_device_info_get_type (void);
ChpDeviceInfo *chp_device_info_copy     (const ChpDeviceInfo *info);
void           chp_device_info_free     (ChpDeviceInfo       *info);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpDeviceInfo, chp_device_info_free)

typedef enum
{
  CHP_PAIRING_OUTCOME_APPROVED,
  CHP_PAIRING_OUTCOME_REJECTED,
  CHP_PAIRING_OUTCOME_EXPIRED,
  CHP_PAIRING_OUTCOME_FAILED,   /* wrong commitment or signature */
  CHP_PAIRING_OUTCOME_ABANDONED /* the browser went away before anyone decided */
} ChpPairingOutcome;

const char *chp_pairing_outcome_to_string (ChpPairingOutcome outcome);

typedef struct
{
  gint64             at;
  char              *installation_id;
  char              *origin;
  ChpPairingOutcome  outcome;
} ChpPairingAttempt;

void chp_pairing_attempt_free (ChpPairingAttempt *attempt);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpPairingAttempt, chp_pairing_attempt_free)

/* Metadata only: never parameters, values or results (DESIGN §8). */
typedef struct
{
  gint64  id;
  gint64  at;
  char   *category;
  char   *method;
  char   *outcome;
  char   *device_id;
  gint64  duration_ms;
  char   *error_code;
} ChpAuditEntry;

#define CHP_TYPE_AUDIT_ENTRY (chp_audit_entry_get_type ())
GType          chp_audit_entry_get_type (void);
ChpAuditEntry *chp_audit_entry_new      (const char          *category,
                                         const char          *method,
                                         const char          *outcome,
                                         const char          *device_id,
                                         gint64               duration_ms,
                                         const char          *error_code);
ChpAuditEntry *chp_audit_entry_copy     (const ChpAuditEntry *entry);
void           chp_audit_entry_free     (ChpAuditEntry       *entry);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpAuditEntry, chp_audit_entry_free)

/* Which audit rows to read, newest first. Each filter is exact and %NULL matches anything;
 * @search is a case-insensitive substring of the method, the error code or the category.
 * The id bounds hold a listing still while rows are added: ids only grow. */
typedef struct
{
  char   *category;
  char   *outcome;
  char   *device_id;
  char   *search;
  gint64  after_id;  /* only rows with a greater id; 0 for no bound */
  gint64  up_to_id;  /* only rows with this id or a smaller one; 0 for no bound */
} ChpAuditQuery;

#define CHP_TYPE_AUDIT_QUERY (chp_audit_query_get_type ())
GType          chp_audit_query_get_type (void);
ChpAuditQuery *chp_audit_query_new      (void);
ChpAuditQuery *chp_audit_query_copy     (const ChpAuditQuery *query);
void           chp_audit_query_free     (ChpAuditQuery       *query);
gboolean       chp_audit_query_equal    (const ChpAuditQuery *a,
                                         const ChpAuditQuery *b);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpAuditQuery, chp_audit_query_free)

/* A count and the snapshot it was taken at. */
typedef struct
{
  gint64 count;
  gint64 max_id;     /* the greatest id in the log when counted (any filter); 0 when empty */
} ChpAuditCount;

/* A person's "Always allow" rule (chp-store-rules.c): one kind of act (only "write"), on one
 * site (an origin), for one agent (its name), until it expires or is revoked. */
typedef struct
{
  char   *rule_id;
  char   *agent;
  char   *site;
  char   *kind;
  gint64  created_at;   /* ms since the epoch */
  gint64  expires_at;
  gint64  use_count;
  gint64  last_used;    /* 0 until used */
  gint64  revoked_at;   /* 0 while the rule stands */
} ChpRuleInfo;

ChpRuleInfo   *chp_rule_info_copy       (const ChpRuleInfo   *info);
void           chp_rule_info_free       (ChpRuleInfo         *info);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpRuleInfo, chp_rule_info_free)

G_END_DECLS
