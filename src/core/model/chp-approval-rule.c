/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-approval-rule.c: a rule as the engine and the Rules list see it. What it covers is fixed
 * when the person makes it; only its use count and last use change afterwards. The checks here
 * (kind, site, agent) are the ones the engine applies before it stores a rule, and again the
 * store's table refuses any kind but a write (docs/security.md). */
#include "config.h"

#include "chp-approval-rule.h"

#include <string.h>

struct _ChpApprovalRule
{
  GObject parent_instance;

  char *rule_id;
  char *agent;
  char *site;
  char *kind;
  gint64 created_at;
  gint64 expires_at;
  gint64 use_count;
  gint64 last_used;
  gboolean revoked;  /* the person revoked it; it may still be listed until the store has it */
};

enum {
  PROP_0,
  PROP_USE_COUNT,
  PROP_LAST_USED,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpApprovalRule, chp_approval_rule, G_TYPE_OBJECT)

static void
chp_approval_rule_finalize (GObject *object)
{
  ChpApprovalRule *self = CHP_APPROVAL_RULE (object);

  g_free (self->rule_id);
  g_free (self->agent);
  g_free (self->site);
  g_free (self->kind);

  G_OBJECT_CLASS (chp_approval_rule_parent_class)->finalize (object);
}

static void
chp_approval_rule_get_property (GObject    *object,
                                guint       prop_id,
                                GValue     *value,
                                GParamSpec *pspec)
{
  ChpApprovalRule *self = CHP_APPROVAL_RULE (object);

  switch (prop_id)
    {
    case PROP_USE_COUNT:
      g_value_set_int64 (value, self->use_count);
      break;

    case PROP_LAST_USED:
      g_value_set_int64 (value, self->last_used);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_approval_rule_class_init (ChpApprovalRuleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = chp_approval_rule_finalize;
  object_class->get_property = chp_approval_rule_get_property;

  properties[PROP_USE_COUNT] =
    g_param_spec_int64 ("use-count", NULL, NULL, 0, G_MAXINT64, 0,
                        G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_LAST_USED] =
    g_param_spec_int64 ("last-used", NULL, NULL, 0, G_MAXINT64, 0,
                        G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
chp_approval_rule_init (ChpApprovalRule *self)
{
}

/* Returns: (transfer full): the rule @info describes (as stored, or about to be) */
ChpApprovalRule *
chp_approval_rule_new (const ChpRuleInfo *info)
{
  ChpApprovalRule *self;

  g_return_val_if_fail (info != NULL, NULL);

  self = g_object_new (CHP_TYPE_APPROVAL_RULE, NULL);
  self->rule_id = g_strdup (info->rule_id);
  self->agent = g_strdup (info->agent);
  self->site = g_strdup (info->site);
  self->kind = g_strdup (info->kind);
  self->created_at = info->created_at;
  self->expires_at = info->expires_at;
  self->use_count = info->use_count;
  self->last_used = info->last_used;
  return self;
}

#define GETTER(type, name, field) \
  type chp_approval_rule_get_##name (ChpApprovalRule *self) \
  { \
    g_return_val_if_fail (CHP_IS_APPROVAL_RULE (self), (type) 0); \
    return self->field; \
  }

GETTER (const char *, id, rule_id)
GETTER (const char *, agent, agent)
GETTER (const char *, site, site)
GETTER (const char *, kind, kind)
GETTER (gint64, created_at, created_at)
GETTER (gint64, expires_at, expires_at)
GETTER (gint64, use_count, use_count)
GETTER (gint64, last_used, last_used)

#undef GETTER

void
chp_approval_rule_record_use (ChpApprovalRule *self,
                              gint64           at)
{
  g_return_if_fail (CHP_IS_APPROVAL_RULE (self));

  self->use_count++;
  self->last_used = at;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_USE_COUNT]);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LAST_USED]);
}

/* The person revoked this rule: it never matches again, whatever the store does with it. */
void
chp_approval_rule_set_revoked (ChpApprovalRule *self)
{
  g_return_if_fail (CHP_IS_APPROVAL_RULE (self));

  self->revoked = TRUE;
}

gboolean
chp_approval_rule_get_revoked (ChpApprovalRule *self)
{
  g_return_val_if_fail (CHP_IS_APPROVAL_RULE (self), TRUE);

  return self->revoked;
}

/* Whether this rule lets @agent's @kind of act on @site go through at @now. Exact: no wider
 * site, no other agent, nothing after the expiry, nothing once revoked. */
gboolean
chp_approval_rule_matches (ChpApprovalRule *self,
                           const char      *agent,
                           const char      *site,
                           const char      *kind,
                           gint64           now)
{
  g_return_val_if_fail (CHP_IS_APPROVAL_RULE (self), FALSE);

  return !self->revoked && chp_approval_rule_kind_allowed (kind) &&
         g_strcmp0 (self->kind, kind) == 0 &&
         agent != NULL && g_strcmp0 (self->agent, agent) == 0 &&
         site != NULL && g_ascii_strcasecmp (self->site, site) == 0 &&
         now < self->expires_at;
}

/* A rule covers a write only: never a send (a message, a post, a payment) nor a delete. */
gboolean
chp_approval_rule_kind_allowed (const char *kind)
{
  return g_strcmp0 (kind, "write") == 0;
}

/* An origin as a hold names its site — "https://host" or "http://host:port", nothing after — so a
 * rule never covers a path, another scheme or a page the hold did not come from. */
gboolean
chp_approval_rule_site_allowed (const char *site)
{
  g_autoptr(GUri) uri = NULL;
  const char *scheme;

  if (site == NULL || *site == '\0' || strlen (site) > 256)
    return FALSE;

  uri = g_uri_parse (site, G_URI_FLAGS_NONE, NULL);
  if (uri == NULL)
    return FALSE;
  scheme = g_uri_get_scheme (uri);

  return (g_strcmp0 (scheme, "https") == 0 || g_strcmp0 (scheme, "http") == 0) &&
         g_uri_get_host (uri) != NULL && *g_uri_get_host (uri) != '\0' &&
         g_uri_get_userinfo (uri) == NULL && *g_uri_get_path (uri) == '\0' &&
         g_uri_get_query (uri) == NULL && g_uri_get_fragment (uri) == NULL;
}

/* An agent is known by the name its MCP client gave (clientInfo.name): one line, not empty. */
gboolean
chp_approval_rule_agent_allowed (const char *agent)
{
  if (agent == NULL || *agent == '\0' || !g_utf8_validate (agent, -1, NULL) ||
      g_utf8_strlen (agent, -1) > CHP_APPROVAL_RULE_MAX_AGENT_CHARS)
    return FALSE;

  for (const char *p = agent; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      return FALSE;
  return TRUE;
}
