/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-pairing-manager.c: counts attempts (kept in the store so a restart does not reset a
 * lockout) and decides whether a new pairing may start. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-pairing"

#include "chp-pairing-manager.h"

#include <glib/gi18n.h>

/* The list's items are the requests a person must decide. */
struct _ChpPairingManager
{
  ChpObjectList parent_instance;

  ChpStore *store;
  GPtrArray *history;   /* ChpPairingAttempt, oldest first, the last day only */
  GPtrArray *live;      /* every request not yet finished */
  gint64 locked_until;
};

enum {
  PROP_0,
  PROP_LOCKED_UNTIL,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpPairingManager, chp_pairing_manager, CHP_TYPE_OBJECT_LIST)
G_DEFINE_QUARK (chp-pairing-error-quark, chp_pairing_error)

static void
chp_pairing_manager_finalize (GObject *object)
{
  ChpPairingManager *self = CHP_PAIRING_MANAGER (object);

  g_clear_object (&self->store);
  g_clear_pointer (&self->history, g_ptr_array_unref);
  g_clear_pointer (&self->live, g_ptr_array_unref);

  G_OBJECT_CLASS (chp_pairing_manager_parent_class)->finalize (object);
}

static void
chp_pairing_manager_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  ChpPairingManager *self = CHP_PAIRING_MANAGER (object);

  switch (prop_id)
    {
    case PROP_LOCKED_UNTIL:
      g_value_set_int64 (value, self->locked_until);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_pairing_manager_class_init (ChpPairingManagerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = chp_pairing_manager_finalize;
  object_class->get_property = chp_pairing_manager_get_property;
  CHP_OBJECT_LIST_CLASS (klass)->item_type = CHP_TYPE_PAIRING_REQUEST;

  /* Milliseconds since the epoch; 0 or past means pairing is open. */
  properties[PROP_LOCKED_UNTIL] =
    g_param_spec_int64 ("locked-until", NULL, NULL, 0, G_MAXINT64, 0,
                        G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
chp_pairing_manager_init (ChpPairingManager *self)
{
  self->history = g_ptr_array_new_with_free_func ((GDestroyNotify) chp_pairing_attempt_free);
  self->live = g_ptr_array_new_with_free_func (g_object_unref);
}

ChpPairingManager *
chp_pairing_manager_new (ChpStore *store)
{
  ChpPairingManager *self = g_object_new (CHP_TYPE_PAIRING_MANAGER, NULL);

  self->store = store ? g_object_ref (store) : NULL;

  return self;
}

static gboolean
is_failure (ChpPairingOutcome outcome)
{
  /* Only an approval is not a failure: a rejected, expired or abandoned attempt may be an
   * attacker's guess at the code, and each one is counted against the lock. */
  return outcome != CHP_PAIRING_OUTCOME_APPROVED;
}

static void
update_lock (ChpPairingManager *self,
             gint64             now_ms)
{
  guint failures = 0;
  gint64 until = 0;

  for (guint i = self->history->len; i > 0; i--)
    {
      ChpPairingAttempt *attempt = g_ptr_array_index (self->history, i - 1);

      if (now_ms - attempt->at > CHP_PAIRING_LOCK_WINDOW_MS)
        break;

      if (is_failure (attempt->outcome) && ++failures == 1)
        until = attempt->at + CHP_PAIRING_LOCK_MS;
    }

  if (failures < CHP_PAIRING_LOCK_FAILURES)
    until = 0;

  if (until != self->locked_until && (until > now_ms || self->locked_until != 0))
    {
      self->locked_until = until > now_ms ? until : 0;
      if (self->locked_until != 0)
        g_message ("pairing: locked after %u failed attempts", failures);
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LOCKED_UNTIL]);
    }
}

/* Takes the attempts of the last day from the store at start-up. */
void
chp_pairing_manager_set_history (ChpPairingManager *self,
                                 GPtrArray         *attempts)
{
  g_return_if_fail (CHP_IS_PAIRING_MANAGER (self));

  g_ptr_array_set_size (self->history, 0);
  for (guint i = 0; attempts != NULL && i < attempts->len; i++)
    {
      const ChpPairingAttempt *attempt = g_ptr_array_index (attempts, i);
      ChpPairingAttempt *copy = g_new0 (ChpPairingAttempt, 1);

      copy->at = attempt->at;
      copy->installation_id = g_strdup (attempt->installation_id);
      copy->origin = g_strdup (attempt->origin);
      copy->outcome = attempt->outcome;
      g_ptr_array_add (self->history, copy);
    }

  update_lock (self, g_get_real_time () / 1000);
}

/**
 * chp_pairing_manager_admit:
 * @retry_after_ms: (out): for %CHP_PAIRING_ERROR_LOCKED and _RATE_LIMITED, how long to wait
 *
 * Whether a new pairing request may start now.
 */
gboolean
chp_pairing_manager_admit (ChpPairingManager  *self,
                           const char         *installation_id,
                           gint64              now_ms,
                           gint64             *retry_after_ms,
                           GError            **error)
{
  guint today = 0;
  gint64 oldest_today = 0;

  g_return_val_if_fail (CHP_IS_PAIRING_MANAGER (self), FALSE);

  *retry_after_ms = 0;
  update_lock (self, now_ms);

  if (self->locked_until > now_ms)
    {
      *retry_after_ms = self->locked_until - now_ms;
      g_set_error (error, CHP_PAIRING_ERROR, CHP_PAIRING_ERROR_LOCKED,
                   _("Pairing is locked after three failed attempts. Try again in %d minutes."),
                   (int) ((*retry_after_ms + 59999) / 60000));
      return FALSE;
    }

  for (guint i = 0; i < self->history->len; i++)
    {
      ChpPairingAttempt *attempt = g_ptr_array_index (self->history, i);

      if (now_ms - attempt->at < 24 * 3600 * 1000)
        {
          if (today++ == 0)
            oldest_today = attempt->at;
        }
    }
  /* Requests still in progress count too: otherwise a burst could overshoot the day's budget. */
  if (today + self->live->len >= CHP_PAIRING_MAX_PER_DAY)
    {
      *retry_after_ms = MAX (oldest_today + 24 * 3600 * 1000 - now_ms, 1000);
      g_set_error (error, CHP_PAIRING_ERROR, CHP_PAIRING_ERROR_RATE_LIMITED,
                   _("Too many pairing attempts today. Try again tomorrow."));
      return FALSE;
    }

  if (self->live->len >= CHP_PAIRING_MAX_PENDING)
    {
      g_set_error (error, CHP_PAIRING_ERROR, CHP_PAIRING_ERROR_BUSY,
                   _("Three pairing requests are already waiting"));
      return FALSE;
    }

  for (guint i = 0; i < self->live->len; i++)
    {
      if (g_strcmp0 (chp_pairing_request_get_installation_id (g_ptr_array_index (self->live, i)),
                     installation_id) == 0)
        {
          g_set_error (error, CHP_PAIRING_ERROR, CHP_PAIRING_ERROR_BUSY,
                       _("This browser already has a pairing request waiting"));
          return FALSE;
        }
    }

  return TRUE;
}

void
chp_pairing_manager_track (ChpPairingManager *self,
                           ChpPairingRequest *request)
{
  g_return_if_fail (CHP_IS_PAIRING_MANAGER (self));

  g_ptr_array_add (self->live, g_object_ref (request));
}

/* The code is ready and verified: show it to the person. */
void
chp_pairing_manager_show (ChpPairingManager *self,
                          ChpPairingRequest *request)
{
  g_return_if_fail (CHP_IS_PAIRING_MANAGER (self));
  g_return_if_fail (chp_pairing_request_get_code (request) != NULL);

  chp_pairing_request_set_state (request, CHP_PAIRING_STATE_WAITING);
  chp_object_list_append (CHP_OBJECT_LIST (self), request);
}

static ChpPairingOutcome
outcome_for_state (ChpPairingState state)
{
  switch (state)
    {
    case CHP_PAIRING_STATE_APPROVED:
      return CHP_PAIRING_OUTCOME_APPROVED;
    case CHP_PAIRING_STATE_REJECTED:
      return CHP_PAIRING_OUTCOME_REJECTED;
    case CHP_PAIRING_STATE_EXPIRED:
      return CHP_PAIRING_OUTCOME_EXPIRED;
    case CHP_PAIRING_STATE_ABANDONED:
      return CHP_PAIRING_OUTCOME_ABANDONED;
    case CHP_PAIRING_STATE_FAILED:
    case CHP_PAIRING_STATE_CHALLENGED:
    case CHP_PAIRING_STATE_WAITING:
    default:
      return CHP_PAIRING_OUTCOME_FAILED;
    }
}

/* Ends @request with @state (a final one), records the attempt and updates the lock. */
void
chp_pairing_manager_finish (ChpPairingManager *self,
                            ChpPairingRequest *request,
                            ChpPairingState    state,
                            gint64             now_ms)
{
  g_autoptr(ChpPairingRequest) guard = NULL;
  ChpPairingAttempt attempt = { 0 };
  guint index;

  g_return_if_fail (CHP_IS_PAIRING_MANAGER (self));

  if (!g_ptr_array_find (self->live, request, &index))
    return;

  guard = g_object_ref (request);
  g_ptr_array_remove_index (self->live, index);
  if (chp_object_list_find (CHP_OBJECT_LIST (self), NULL, request, &index) != NULL)
    chp_object_list_remove_at (CHP_OBJECT_LIST (self), index);

  chp_pairing_request_set_state (request, state);

  attempt.at = now_ms;
  attempt.installation_id = (char *) chp_pairing_request_get_installation_id (request);
  attempt.origin = (char *) chp_pairing_request_get_origin (request);
  attempt.outcome = outcome_for_state (state);

  {
    ChpPairingAttempt *copy = g_new0 (ChpPairingAttempt, 1);

    copy->at = attempt.at;
    copy->installation_id = g_strdup (attempt.installation_id);
    copy->origin = g_strdup (attempt.origin);
    copy->outcome = attempt.outcome;
    g_ptr_array_add (self->history, copy);
  }

  if (self->store != NULL)
    chp_store_add_pairing_attempt_async (self->store, &attempt, NULL, NULL, NULL);

  update_lock (self, now_ms);
}

gint64
chp_pairing_manager_get_locked_until (ChpPairingManager *self)
{
  g_return_val_if_fail (CHP_IS_PAIRING_MANAGER (self), 0);

  return self->locked_until;
}

/* Returns: (transfer none) (nullable): a request still in progress */
ChpPairingRequest *
chp_pairing_manager_lookup (ChpPairingManager *self,
                            const char        *request_id)
{
  g_return_val_if_fail (CHP_IS_PAIRING_MANAGER (self), NULL);

  for (guint i = 0; i < self->live->len; i++)
    {
      ChpPairingRequest *request = g_ptr_array_index (self->live, i);

      if (g_strcmp0 (chp_pairing_request_get_id (request), request_id) == 0)
        return request;
    }

  return NULL;
}
