/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-item.c: a holder that a list view can bind before its session is read; its
 * properties are the session's, for rows to follow. */
#include "config.h"

#include "chp-trace-item.h"

struct _ChpTraceItem
{
  GObject parent_instance;

  ChpTraceSession *session;  /* NULL while being read */
};

enum {
  PROP_0,
  PROP_LOADED,
  PROP_ID,
  PROP_AGENT,
  PROP_DEVICE,
  PROP_OUTCOME,
  PROP_SITES,
  PROP_N_STEPS,
  PROP_N_ERRORS,
  PROP_N_ASKED,
  PROP_N_APPROVED,
  PROP_STARTED_AT,
  PROP_ENDED_AT,
  PROP_LAST_AT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpTraceItem, chp_trace_item, G_TYPE_OBJECT)

static void
chp_trace_item_finalize (GObject *object)
{
  g_clear_pointer (&CHP_TRACE_ITEM (object)->session, chp_trace_session_free);

  G_OBJECT_CLASS (chp_trace_item_parent_class)->finalize (object);
}

static void
chp_trace_item_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  ChpTraceItem *self = CHP_TRACE_ITEM (object);
  const ChpTraceSession *s = self->session;

  switch (prop_id)
    {
    case PROP_LOADED:
      g_value_set_boolean (value, s != NULL);
      break;
    case PROP_ID:
      g_value_set_string (value, s != NULL ? s->id : NULL);
      break;
    case PROP_AGENT:
      g_value_set_string (value, s != NULL ? s->agent : NULL);
      break;
    case PROP_DEVICE:
      g_value_set_string (value, s != NULL ? s->device : NULL);
      break;
    case PROP_OUTCOME:
      g_value_set_string (value, s != NULL ? s->outcome : NULL);
      break;
    case PROP_SITES:
      g_value_set_boxed (value, s != NULL ? s->sites : NULL);
      break;
    case PROP_N_STEPS:
      g_value_set_uint (value, s != NULL ? s->n_steps : 0);
      break;
    case PROP_N_ERRORS:
      g_value_set_uint (value, s != NULL ? s->n_errors : 0);
      break;
    case PROP_N_ASKED:
      g_value_set_uint (value, s != NULL ? s->n_asked : 0);
      break;
    case PROP_N_APPROVED:
      g_value_set_uint (value, s != NULL ? s->n_approved : 0);
      break;
    case PROP_STARTED_AT:
      g_value_set_int64 (value, s != NULL ? s->started_at : 0);
      break;
    case PROP_ENDED_AT:
      g_value_set_int64 (value, s != NULL ? s->ended_at : 0);
      break;
    case PROP_LAST_AT:
      g_value_set_int64 (value, s != NULL ? s->last_at : 0);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_trace_item_class_init (ChpTraceItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  const GParamFlags ro = G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;

  object_class->finalize = chp_trace_item_finalize;
  object_class->get_property = chp_trace_item_get_property;

  properties[PROP_LOADED] = g_param_spec_boolean ("loaded", NULL, NULL, FALSE, ro);
  properties[PROP_ID] = g_param_spec_string ("id", NULL, NULL, NULL, ro);
  properties[PROP_AGENT] = g_param_spec_string ("agent", NULL, NULL, NULL, ro);
  properties[PROP_DEVICE] = g_param_spec_string ("device", NULL, NULL, NULL, ro);
  /* NULL while the session is open. */
  properties[PROP_OUTCOME] = g_param_spec_string ("outcome", NULL, NULL, NULL, ro);
  properties[PROP_SITES] = g_param_spec_boxed ("sites", NULL, NULL, G_TYPE_STRV, ro);
  properties[PROP_N_STEPS] = g_param_spec_uint ("n-steps", NULL, NULL, 0, G_MAXUINT, 0, ro);
  properties[PROP_N_ERRORS] = g_param_spec_uint ("n-errors", NULL, NULL, 0, G_MAXUINT, 0, ro);
  properties[PROP_N_ASKED] = g_param_spec_uint ("n-asked", NULL, NULL, 0, G_MAXUINT, 0, ro);
  properties[PROP_N_APPROVED] = g_param_spec_uint ("n-approved", NULL, NULL, 0, G_MAXUINT, 0,
                                                   ro);
  /* µs since the epoch; ended-at is 0 while the session is open. */
  properties[PROP_STARTED_AT] = g_param_spec_int64 ("started-at", NULL, NULL, 0, G_MAXINT64, 0,
                                                    ro);
  properties[PROP_ENDED_AT] = g_param_spec_int64 ("ended-at", NULL, NULL, 0, G_MAXINT64, 0, ro);
  properties[PROP_LAST_AT] = g_param_spec_int64 ("last-at", NULL, NULL, 0, G_MAXINT64, 0, ro);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
chp_trace_item_init (ChpTraceItem *self)
{
}

ChpTraceItem *
chp_trace_item_new (void)
{
  return g_object_new (CHP_TYPE_TRACE_ITEM, NULL);
}

gboolean
chp_trace_item_get_loaded (ChpTraceItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), FALSE);

  return self->session != NULL;
}

/* Returns: (nullable): the session, or %NULL while it is being read */
const ChpTraceSession *
chp_trace_item_get_session (ChpTraceItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), NULL);

  return self->session;
}

static gboolean
strv_equal0 (char **a,
             char **b)
{
  if (a == NULL || b == NULL)
    return a == b;
  return g_strv_equal ((const char * const *) a, (const char * const *) b);
}

/* Takes a copy; notifies what changed, so a bound row redraws only for a real change. */
void
chp_trace_item_set_session (ChpTraceItem          *self,
                            const ChpTraceSession *session)
{
  g_autoptr(ChpTraceSession) old = NULL;
  const ChpTraceSession *s;
  GObject *object = G_OBJECT (self);

  g_return_if_fail (CHP_IS_TRACE_ITEM (self));
  g_return_if_fail (session != NULL);

  old = g_steal_pointer (&self->session);
  self->session = chp_trace_session_copy (session);
  s = self->session;

  g_object_freeze_notify (object);
#define CHANGED(prop, differs) \
  if (old == NULL || (differs)) \
    g_object_notify_by_pspec (object, properties[prop])
  CHANGED (PROP_LOADED, FALSE);
  CHANGED (PROP_ID, g_strcmp0 (old->id, s->id) != 0);
  CHANGED (PROP_AGENT, g_strcmp0 (old->agent, s->agent) != 0);
  CHANGED (PROP_DEVICE, g_strcmp0 (old->device, s->device) != 0);
  CHANGED (PROP_OUTCOME, g_strcmp0 (old->outcome, s->outcome) != 0);
  CHANGED (PROP_SITES, !strv_equal0 (old->sites, s->sites));
  CHANGED (PROP_N_STEPS, old->n_steps != s->n_steps);
  CHANGED (PROP_N_ERRORS, old->n_errors != s->n_errors);
  CHANGED (PROP_N_ASKED, old->n_asked != s->n_asked);
  CHANGED (PROP_N_APPROVED, old->n_approved != s->n_approved);
  CHANGED (PROP_STARTED_AT, old->started_at != s->started_at);
  CHANGED (PROP_ENDED_AT, old->ended_at != s->ended_at);
  CHANGED (PROP_LAST_AT, old->last_at != s->last_at);
#undef CHANGED
  g_object_thaw_notify (object);
}

/* Returns: (nullable): the session's id; %NULL while it is being read */
const char *
chp_trace_item_get_id (ChpTraceItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), NULL);

  return self->session != NULL ? self->session->id : NULL;
}

const char *
chp_trace_item_get_agent (ChpTraceItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), NULL);

  return self->session != NULL ? self->session->agent : NULL;
}

const char *
chp_trace_item_get_device (ChpTraceItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), NULL);

  return self->session != NULL ? self->session->device : NULL;
}

/* Returns: (nullable): how the session ended; %NULL while it is open */
const char *
chp_trace_item_get_outcome (ChpTraceItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), NULL);

  return self->session != NULL ? self->session->outcome : NULL;
}

/* Returns: (nullable): the hosts visited, sorted */
const char * const *
chp_trace_item_get_sites (ChpTraceItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), NULL);

  return self->session != NULL ? (const char * const *) self->session->sites : NULL;
}

guint
chp_trace_item_get_n_steps (ChpTraceItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), 0);

  return self->session != NULL ? self->session->n_steps : 0;
}

guint
chp_trace_item_get_n_errors (ChpTraceItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), 0);

  return self->session != NULL ? self->session->n_errors : 0;
}

guint
chp_trace_item_get_n_asked (ChpTraceItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), 0);

  return self->session != NULL ? self->session->n_asked : 0;
}

guint
chp_trace_item_get_n_approved (ChpTraceItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), 0);

  return self->session != NULL ? self->session->n_approved : 0;
}

gint64
chp_trace_item_get_started_at (ChpTraceItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), 0);

  return self->session != NULL ? self->session->started_at : 0;
}

gint64
chp_trace_item_get_ended_at (ChpTraceItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), 0);

  return self->session != NULL ? self->session->ended_at : 0;
}

/**
 * chp_trace_item_get_duration:
 * @now: the time to measure an open session to (µs since the epoch), or 0 for its last step
 *
 * Returns: how long the session lasted, in µs: to its end, or while open to @now (or to its
 *   last step); 0 while being read
 */
gint64
chp_trace_item_get_duration (ChpTraceItem *self,
                             gint64        now)
{
  const ChpTraceSession *s;
  gint64 end;

  g_return_val_if_fail (CHP_IS_TRACE_ITEM (self), 0);

  s = self->session;
  if (s == NULL)
    return 0;

  end = s->ended_at > 0 ? s->ended_at : (now > 0 ? now : s->last_at);
  return MAX (end - s->started_at, 0);
}
