/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-approval-rule-list.c: the standing rules, oldest first. Only the engine changes the list,
 * on the person's behalf (a card's "Always allow", the Rules list's Revoke) or when a rule's time
 * is up; nothing a browser or an agent says reaches it (docs/security.md). */
#include "config.h"

#include "chp-approval-rule-list.h"

struct _ChpApprovalRuleList
{
  ChpObjectList parent_instance;

  guint expiry_source;
};

enum {
  SIGNAL_EXPIRED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (ChpApprovalRuleList, chp_approval_rule_list, CHP_TYPE_OBJECT_LIST)

static void schedule_expiry (ChpApprovalRuleList *self);

static void
chp_approval_rule_list_dispose (GObject *object)
{
  g_clear_handle_id (&CHP_APPROVAL_RULE_LIST (object)->expiry_source, g_source_remove);

  G_OBJECT_CLASS (chp_approval_rule_list_parent_class)->dispose (object);
}

static void
chp_approval_rule_list_class_init (ChpApprovalRuleListClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = chp_approval_rule_list_dispose;
  CHP_OBJECT_LIST_CLASS (klass)->item_type = CHP_TYPE_APPROVAL_RULE;

  /**
   * ChpApprovalRuleList::expired:
   * @rule: a rule whose time ran out, about to leave the list
   *
   * For the audit: a rule that ends by itself is said in Activity like one revoked.
   */
  signals[SIGNAL_EXPIRED] =
    g_signal_new ("expired", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                  G_TYPE_NONE, 1, CHP_TYPE_APPROVAL_RULE);
}

static void
chp_approval_rule_list_init (ChpApprovalRuleList *self)
{
}

ChpApprovalRuleList *
chp_approval_rule_list_new (void)
{
  return g_object_new (CHP_TYPE_APPROVAL_RULE_LIST, NULL);
}

static gint64
now_ms (void)
{
  return g_get_real_time () / 1000;
}

static gboolean
is_expired (gpointer      item,
            gconstpointer now)
{
  return chp_approval_rule_get_expires_at (item) <= *(const gint64 *) now;
}

static gboolean
has_id (gpointer      item,
        gconstpointer rule_id)
{
  return g_strcmp0 (chp_approval_rule_get_id (item), rule_id) == 0;
}

static gboolean
expiry_cb (gpointer user_data)
{
  ChpApprovalRuleList *self = user_data;
  gint64 now = now_ms ();

  self->expiry_source = 0;
  for (guint i = 0; i < chp_object_list_get_len (CHP_OBJECT_LIST (self)); i++)
    {
      ChpApprovalRule *rule = chp_object_list_get_item_at (CHP_OBJECT_LIST (self), i);

      if (is_expired (rule, &now))
        g_signal_emit (self, signals[SIGNAL_EXPIRED], 0, rule);
    }
  chp_object_list_remove_all (CHP_OBJECT_LIST (self), is_expired, &now);
  schedule_expiry (self);

  return G_SOURCE_REMOVE;
}

/* Matching looks at the expiry itself: the timer only takes the row off the screen. */
static void
schedule_expiry (ChpApprovalRuleList *self)
{
  ChpObjectList *list = CHP_OBJECT_LIST (self);
  gint64 soonest = G_MAXINT64;
  gint64 delay;

  g_clear_handle_id (&self->expiry_source, g_source_remove);

  for (guint i = 0; i < chp_object_list_get_len (list); i++)
    soonest = MIN (soonest,
                   chp_approval_rule_get_expires_at (chp_object_list_get_item_at (list, i)));

  if (soonest == G_MAXINT64)
    return;

  delay = CLAMP (soonest - now_ms (), 0, (gint64) G_MAXINT / 2);
  self->expiry_source = g_timeout_add_full (G_PRIORITY_DEFAULT, (guint) delay, expiry_cb, self,
                                            NULL);
}

/**
 * chp_approval_rule_list_set_all:
 * @infos: (element-type ChpRuleInfo): the store's standing rules, oldest first
 *
 * Replaces the list (at start); a rule that expired meanwhile is left out. Past the cap the
 * newest are kept, as chp_approval_rule_list_add()'s caller keeps them while running.
 */
void
chp_approval_rule_list_set_all (ChpApprovalRuleList *self,
                                GPtrArray           *infos)
{
  g_autoptr(GPtrArray) rules = g_ptr_array_new_with_free_func (g_object_unref);
  ChpObjectList *list;
  gint64 now = now_ms ();

  g_return_if_fail (CHP_IS_APPROVAL_RULE_LIST (self));
  g_return_if_fail (infos != NULL);

  for (guint i = infos->len; i > 0 && rules->len < CHP_APPROVAL_RULE_LIST_MAX; i--)
    {
      const ChpRuleInfo *info = g_ptr_array_index (infos, i - 1);

      if (info->revoked_at == 0 && info->expires_at > now)
        g_ptr_array_insert (rules, 0, chp_approval_rule_new (info));
    }

  list = CHP_OBJECT_LIST (self);
  chp_object_list_splice (list, 0, chp_object_list_get_len (list), rules->pdata, rules->len);
  schedule_expiry (self);
}

/* FALSE, and @rule not listed, when the list is full: the caller makes room first (and says so
 * to the store, or the rule it dropped would come back at the next start). */
gboolean
chp_approval_rule_list_add (ChpApprovalRuleList *self,
                            ChpApprovalRule     *rule)
{
  ChpObjectList *list;

  g_return_val_if_fail (CHP_IS_APPROVAL_RULE_LIST (self), FALSE);
  g_return_val_if_fail (CHP_IS_APPROVAL_RULE (rule), FALSE);

  list = CHP_OBJECT_LIST (self);
  if (chp_object_list_get_len (list) >= CHP_APPROVAL_RULE_LIST_MAX)
    return FALSE;
  chp_object_list_append (list, rule);
  schedule_expiry (self);
  return TRUE;
}

/* Returns: (transfer none) (nullable) */
ChpApprovalRule *
chp_approval_rule_list_lookup (ChpApprovalRuleList *self,
                               const char          *rule_id)
{
  g_return_val_if_fail (CHP_IS_APPROVAL_RULE_LIST (self), NULL);

  return rule_id != NULL ? chp_object_list_find (CHP_OBJECT_LIST (self), has_id, rule_id, NULL)
                         : NULL;
}

/* Returns: (transfer none) (nullable): the oldest standing rule that covers this act at @now */
ChpApprovalRule *
chp_approval_rule_list_find_match (ChpApprovalRuleList *self,
                                   const char          *agent,
                                   const char          *site,
                                   const char          *kind,
                                   gint64               now)
{
  ChpObjectList *list;

  g_return_val_if_fail (CHP_IS_APPROVAL_RULE_LIST (self), NULL);

  list = CHP_OBJECT_LIST (self);
  for (guint i = 0; i < chp_object_list_get_len (list); i++)
    {
      ChpApprovalRule *rule = chp_object_list_get_item_at (list, i);

      if (chp_approval_rule_matches (rule, agent, site, kind, now))
        return rule;
    }

  return NULL;
}

/* TRUE when the rule was listed (and now is not). */
gboolean
chp_approval_rule_list_remove (ChpApprovalRuleList *self,
                               const char          *rule_id)
{
  guint position;

  g_return_val_if_fail (CHP_IS_APPROVAL_RULE_LIST (self), FALSE);

  if (rule_id == NULL ||
      chp_object_list_find (CHP_OBJECT_LIST (self), has_id, rule_id, &position) == NULL)
    return FALSE;

  chp_object_list_remove_at (CHP_OBJECT_LIST (self), position);
  schedule_expiry (self);
  return TRUE;
}
