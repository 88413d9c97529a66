/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-plan-list.c: a plan leaves the list the moment it stops being live, with its final state
 * set first, so a card or an agent's browser_wait holding it sees how it ended. Ending is what
 * matters for safety: after Stop, an hour, or its last step, nothing a plan approved goes on. */
#include "config.h"

#include "chp-plan-list.h"

#include "chp-protocol-error.h"

/* More plans than a person reads at once is an agent flooding the queue. */
#define MAX_LIVE 16
/* Ended plans remembered for a late browser_wait. */
#define MAX_HISTORY 64

struct _ChpPlanList
{
  ChpObjectList parent_instance;

  GHashTable *timers;   /* plan id → GSource id of its end */
  GQueue history;       /* ended plans, oldest first */
  guint lifetime_ms;
  guint next_id;
};

enum {
  SIGNAL_PLAN_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (ChpPlanList, chp_plan_list, CHP_TYPE_OBJECT_LIST)

static void
remove_timer (gpointer data)
{
  g_source_remove (GPOINTER_TO_UINT (data));
}

static void
chp_plan_list_finalize (GObject *object)
{
  ChpPlanList *self = CHP_PLAN_LIST (object);

  g_clear_pointer (&self->timers, g_hash_table_unref);
  g_queue_clear_full (&self->history, g_object_unref);

  G_OBJECT_CLASS (chp_plan_list_parent_class)->finalize (object);
}

static void
chp_plan_list_class_init (ChpPlanListClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_plan_list_finalize;
  CHP_OBJECT_LIST_CLASS (klass)->item_type = CHP_TYPE_PLAN;

  /**
   * ChpPlanList::plan-changed:
   * @plan: a plan that was posted, approved, used a step, or ended
   */
  signals[SIGNAL_PLAN_CHANGED] =
    g_signal_new ("plan-changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, CHP_TYPE_PLAN);
}

static void
chp_plan_list_init (ChpPlanList *self)
{
  self->timers = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, remove_timer);
  self->lifetime_ms = CHP_PLAN_LIFETIME_MS;
}

ChpPlanList *
chp_plan_list_new (void)
{
  return g_object_new (CHP_TYPE_PLAN_LIST, NULL);
}

/* For tests: how long an approved plan lasts (an hour unless set). */
void
chp_plan_list_set_lifetime (ChpPlanList *self,
                            guint        lifetime_ms)
{
  g_return_if_fail (CHP_IS_PLAN_LIST (self));
  self->lifetime_ms = MAX (lifetime_ms, 1);
}

/* Returns: (transfer full): an id no plan of this run had */
char *
chp_plan_list_next_id (ChpPlanList *self)
{
  g_return_val_if_fail (CHP_IS_PLAN_LIST (self), NULL);
  return g_strdup_printf ("plan-%u", ++self->next_id);
}

static gboolean
has_id (gpointer      item,
        gconstpointer plan_id)
{
  return g_strcmp0 (chp_plan_get_id (item), plan_id) == 0;
}

/* Sets the plan's final state, takes it out of the list, and says so. */
static void
finish (ChpPlanList *self,
        guint        position,
        const char  *state,
        const char  *reason)
{
  ChpObjectList *list = CHP_OBJECT_LIST (self);
  g_autoptr(ChpPlan) plan = g_object_ref (chp_object_list_get_item_at (list, position));

  g_hash_table_remove (self->timers, chp_plan_get_id (plan));
  chp_plan_set_state (plan, state, reason, 0);
  /* Into the history before items-changed, so that whoever it wakes finds the plan ended. */
  g_queue_push_tail (&self->history, g_object_ref (plan));
  if (g_queue_get_length (&self->history) > MAX_HISTORY)
    g_object_unref (g_queue_pop_head (&self->history));
  chp_object_list_remove_at (list, position);
  g_signal_emit (self, signals[SIGNAL_PLAN_CHANGED], 0, plan);
}

/* Returns: (transfer none) (nullable): a live plan, or one that ended lately */
ChpPlan *
chp_plan_list_find (ChpPlanList *self,
                    const char  *plan_id)
{
  ChpPlan *plan;

  g_return_val_if_fail (CHP_IS_PLAN_LIST (self), NULL);

  plan = chp_plan_list_lookup (self, plan_id);
  for (GList *l = self->history.tail; plan == NULL && l != NULL; l = l->prev)
    if (g_strcmp0 (chp_plan_get_id (l->data), plan_id) == 0)
      plan = l->data;
  return plan;
}

gboolean
chp_plan_list_add (ChpPlanList  *self,
                   ChpPlan      *plan,
                   GError      **error)
{
  g_return_val_if_fail (CHP_IS_PLAN_LIST (self), FALSE);
  g_return_val_if_fail (CHP_IS_PLAN (plan), FALSE);

  if (chp_object_list_get_len (CHP_OBJECT_LIST (self)) >= MAX_LIVE)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_BUSY,
                   "%d plans are already waiting or running", MAX_LIVE);
      return FALSE;
    }

  chp_object_list_append (CHP_OBJECT_LIST (self), plan);
  g_signal_emit (self, signals[SIGNAL_PLAN_CHANGED], 0, plan);
  return TRUE;
}

/* Returns: (transfer none) (nullable): a live plan */
ChpPlan *
chp_plan_list_lookup (ChpPlanList *self,
                      const char  *plan_id)
{
  g_return_val_if_fail (CHP_IS_PLAN_LIST (self), NULL);

  return chp_object_list_find (CHP_OBJECT_LIST (self), has_id, plan_id, NULL);
}

typedef struct
{
  ChpPlanList *self;
  char *plan_id;
} Expiry;

static void
expiry_free (gpointer data)
{
  Expiry *expiry = data;

  g_free (expiry->plan_id);
  g_free (expiry);
}

static gboolean
expired_cb (gpointer data)
{
  Expiry *expiry = data;
  ChpPlanList *self = expiry->self;
  guint position;

  /* The source is ending: take it out of the table without removing it twice. */
  g_hash_table_steal (self->timers, expiry->plan_id);
  if (chp_object_list_find (CHP_OBJECT_LIST (self), has_id, expiry->plan_id, &position) != NULL)
    finish (self, position, "ended", "expired");
  return G_SOURCE_REMOVE;
}

/* The person's Approve (a widget action in the app, never an agent). */
gboolean
chp_plan_list_approve (ChpPlanList *self,
                       const char  *plan_id)
{
  ChpPlan *plan;
  Expiry *expiry;
  guint source;

  g_return_val_if_fail (CHP_IS_PLAN_LIST (self), FALSE);

  plan = chp_plan_list_lookup (self, plan_id);
  if (plan == NULL || g_strcmp0 (chp_plan_get_state (plan), "waiting") != 0)
    return FALSE;

  expiry = g_new0 (Expiry, 1);
  expiry->self = self;
  expiry->plan_id = g_strdup (plan_id);
  source = g_timeout_add_full (G_PRIORITY_DEFAULT, self->lifetime_ms, expired_cb, expiry,
                               expiry_free);
  g_source_set_name_by_id (source, "[chaperone] plan lifetime");
  g_hash_table_replace (self->timers, g_strdup (plan_id), GUINT_TO_POINTER (source));

  chp_plan_set_state (plan, "approved", NULL, g_get_real_time () / 1000 + self->lifetime_ms);
  g_signal_emit (self, signals[SIGNAL_PLAN_CHANGED], 0, plan);
  return TRUE;
}

gboolean
chp_plan_list_decline (ChpPlanList *self,
                       const char  *plan_id)
{
  ChpPlan *plan;
  guint position;

  g_return_val_if_fail (CHP_IS_PLAN_LIST (self), FALSE);

  plan = chp_object_list_find (CHP_OBJECT_LIST (self), has_id, plan_id, &position);
  if (plan == NULL || g_strcmp0 (chp_plan_get_state (plan), "waiting") != 0)
    return FALSE;
  finish (self, position, "declined", NULL);
  return TRUE;
}

/* Stop: every plan ends, waiting or approved. */
void
chp_plan_list_end_all (ChpPlanList *self,
                       const char  *reason)
{
  ChpObjectList *list;

  g_return_if_fail (CHP_IS_PLAN_LIST (self));

  list = CHP_OBJECT_LIST (self);
  while (chp_object_list_get_len (list) > 0)
    finish (self, chp_object_list_get_len (list) - 1, "ended", reason);
}

void
chp_plan_list_end_session (ChpPlanList *self,
                           const char  *session_id,
                           const char  *reason)
{
  ChpObjectList *list;

  g_return_if_fail (CHP_IS_PLAN_LIST (self));

  list = CHP_OBJECT_LIST (self);
  for (guint i = chp_object_list_get_len (list); i > 0; i--)
    if (g_strcmp0 (chp_plan_get_session_id (chp_object_list_get_item_at (list, i - 1)),
                   session_id) == 0)
      finish (self, i - 1, "ended", reason);
}

static gboolean
covers_session (gpointer      item,
                gconstpointer session_id)
{
  return chp_plan_is_approved (item) &&
         g_strcmp0 (chp_plan_get_session_id (item), session_id) == 0;
}

/* Returns: (transfer none) (nullable): the session's oldest approved plan with steps left */
ChpPlan *
chp_plan_list_covering (ChpPlanList *self,
                        const char  *session_id)
{
  g_return_val_if_fail (CHP_IS_PLAN_LIST (self), NULL);

  return chp_object_list_find (CHP_OBJECT_LIST (self), covers_session, session_id, NULL);
}

/**
 * chp_plan_list_use_step:
 * @host: where the covered write was made
 *
 * Returns: the step's number (1-based), or 0 when the plan had no step left for @host. The plan
 *   ends when that was its last step.
 */
gint
chp_plan_list_use_step (ChpPlanList *self,
                        const char  *plan_id,
                        const char  *host)
{
  guint position;
  ChpPlan *plan;
  gint step;

  g_return_val_if_fail (CHP_IS_PLAN_LIST (self), 0);

  plan = chp_object_list_find (CHP_OBJECT_LIST (self), has_id, plan_id, &position);
  if (plan == NULL)
    return 0;
  step = chp_plan_use_step (plan, host);
  if (step == 0)
    return 0;

  if (chp_plan_get_n_used (plan) == chp_plan_get_n_steps (plan))
    finish (self, position, "ended", "used");
  else
    g_signal_emit (self, signals[SIGNAL_PLAN_CHANGED], 0, plan);
  return step;
}
