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
  GObject parent_instance;

  GPtrArray *items;
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

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (ChpPlanList, chp_plan_list, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static GType
get_item_type (GListModel *model)
{
  return CHP_TYPE_PLAN;
}

static guint
get_n_items (GListModel *model)
{
  return CHP_PLAN_LIST (model)->items->len;
}

static gpointer
get_item (GListModel *model,
          guint       position)
{
  ChpPlanList *self = CHP_PLAN_LIST (model);

  return position < self->items->len ? g_object_ref (g_ptr_array_index (self->items, position))
                                     : NULL;
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

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
  g_clear_pointer (&self->items, g_ptr_array_unref);
  g_queue_clear_full (&self->history, g_object_unref);

  G_OBJECT_CLASS (chp_plan_list_parent_class)->finalize (object);
}

static void
chp_plan_list_class_init (ChpPlanListClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = chp_plan_list_finalize;

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
  self->items = g_ptr_array_new_with_free_func (g_object_unref);
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

static gint
position_of (ChpPlanList *self,
             const char  *plan_id)
{
  for (guint i = 0; i < self->items->len; i++)
    if (g_strcmp0 (chp_plan_get_id (g_ptr_array_index (self->items, i)), plan_id) == 0)
      return (gint) i;
  return -1;
}

/* Sets the plan's final state, takes it out of the list, and says so. */
static void
finish (ChpPlanList *self,
        guint        position,
        const char  *state,
        const char  *reason)
{
  g_autoptr(ChpPlan) plan = g_object_ref (g_ptr_array_index (self->items, position));

  g_hash_table_remove (self->timers, chp_plan_get_id (plan));
  chp_plan_set_state (plan, state, reason, 0);
  g_ptr_array_remove_index (self->items, position);
  g_queue_push_tail (&self->history, g_object_ref (plan));
  if (g_queue_get_length (&self->history) > MAX_HISTORY)
    g_object_unref (g_queue_pop_head (&self->history));
  g_list_model_items_changed (G_LIST_MODEL (self), position, 1, 0);
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

  if (self->items->len >= MAX_LIVE)
    {
      g_set_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_BUSY,
                   "%d plans are already waiting or running", MAX_LIVE);
      return FALSE;
    }

  g_ptr_array_add (self->items, g_object_ref (plan));
  g_list_model_items_changed (G_LIST_MODEL (self), self->items->len - 1, 0, 1);
  g_signal_emit (self, signals[SIGNAL_PLAN_CHANGED], 0, plan);
  return TRUE;
}

/* Returns: (transfer none) (nullable): a live plan */
ChpPlan *
chp_plan_list_lookup (ChpPlanList *self,
                      const char  *plan_id)
{
  gint position;

  g_return_val_if_fail (CHP_IS_PLAN_LIST (self), NULL);

  position = position_of (self, plan_id);
  return position >= 0 ? g_ptr_array_index (self->items, position) : NULL;
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
  gint position = position_of (self, expiry->plan_id);

  /* The source is ending: take it out of the table without removing it twice. */
  g_hash_table_steal (self->timers, expiry->plan_id);
  if (position >= 0)
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
  gint position;

  g_return_val_if_fail (CHP_IS_PLAN_LIST (self), FALSE);

  position = position_of (self, plan_id);
  if (position < 0 ||
      g_strcmp0 (chp_plan_get_state (g_ptr_array_index (self->items, position)), "waiting") != 0)
    return FALSE;
  finish (self, position, "declined", NULL);
  return TRUE;
}

/* Stop: every plan ends, waiting or approved. */
void
chp_plan_list_end_all (ChpPlanList *self,
                       const char  *reason)
{
  g_return_if_fail (CHP_IS_PLAN_LIST (self));

  while (self->items->len > 0)
    finish (self, self->items->len - 1, "ended", reason);
}

void
chp_plan_list_end_session (ChpPlanList *self,
                           const char  *session_id,
                           const char  *reason)
{
  g_return_if_fail (CHP_IS_PLAN_LIST (self));

  for (guint i = self->items->len; i > 0; i--)
    if (g_strcmp0 (chp_plan_get_session_id (g_ptr_array_index (self->items, i - 1)),
                   session_id) == 0)
      finish (self, i - 1, "ended", reason);
}

/* Returns: (transfer none) (nullable): the session's oldest approved plan with steps left */
ChpPlan *
chp_plan_list_covering (ChpPlanList *self,
                        const char  *session_id)
{
  g_return_val_if_fail (CHP_IS_PLAN_LIST (self), NULL);

  for (guint i = 0; i < self->items->len; i++)
    {
      ChpPlan *plan = g_ptr_array_index (self->items, i);

      if (chp_plan_is_approved (plan) && g_strcmp0 (chp_plan_get_session_id (plan), session_id) == 0)
        return plan;
    }
  return NULL;
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
  gint position;
  ChpPlan *plan;
  gint step;

  g_return_val_if_fail (CHP_IS_PLAN_LIST (self), 0);

  position = position_of (self, plan_id);
  if (position < 0)
    return 0;
  plan = g_ptr_array_index (self->items, position);
  step = chp_plan_use_step (plan, host);
  if (step == 0)
    return 0;

  if (chp_plan_get_n_used (plan) == chp_plan_get_n_steps (plan))
    finish (self, position, "ended", "used");
  else
    g_signal_emit (self, signals[SIGNAL_PLAN_CHANGED], 0, plan);
  return step;
}
