/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-step-item.c: a stored step never changes; only whether its screenshot is held. */
#include "config.h"

#include "chp-trace-step-item.h"

struct _ChpTraceStepItem
{
  GObject parent_instance;

  ChpTraceStep *step;
  ChpTraceShotState shot_state;
  ChpTraceShot *shot;         /* only while LOADED */
};

enum {
  PROP_0,
  PROP_SHOT_STATE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (ChpTraceStepItem, chp_trace_step_item, G_TYPE_OBJECT)

static void
chp_trace_step_item_finalize (GObject *object)
{
  ChpTraceStepItem *self = CHP_TRACE_STEP_ITEM (object);

  g_clear_pointer (&self->step, chp_trace_step_free);
  g_clear_pointer (&self->shot, chp_trace_shot_free);

  G_OBJECT_CLASS (chp_trace_step_item_parent_class)->finalize (object);
}

static void
chp_trace_step_item_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_SHOT_STATE:
      g_value_set_uint (value, CHP_TRACE_STEP_ITEM (object)->shot_state);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
chp_trace_step_item_class_init (ChpTraceStepItemClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = chp_trace_step_item_finalize;
  object_class->get_property = chp_trace_step_item_get_property;

  /* A ChpTraceShotState. */
  properties[PROP_SHOT_STATE] =
    g_param_spec_uint ("shot-state", NULL, NULL, CHP_TRACE_SHOT_NONE, CHP_TRACE_SHOT_FAILED,
                       CHP_TRACE_SHOT_NONE,
                       G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
chp_trace_step_item_init (ChpTraceStepItem *self)
{
}

ChpTraceStepItem *
chp_trace_step_item_new (const ChpTraceStep *step)
{
  ChpTraceStepItem *self;

  g_return_val_if_fail (step != NULL, NULL);

  self = g_object_new (CHP_TYPE_TRACE_STEP_ITEM, NULL);
  self->step = chp_trace_step_copy (step);
  return self;
}

const ChpTraceStep *
chp_trace_step_item_get_step (ChpTraceStepItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_STEP_ITEM (self), NULL);

  return self->step;
}

/* The step's time end to end: waiting in the queue, then the call (the page's work is a part of
 * the call). */
gint64
chp_trace_step_item_get_total_us (ChpTraceStepItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_STEP_ITEM (self), 0);

  return self->step->queue_us + MAX (self->step->run_us, self->step->page_us);
}

ChpTraceShotState
chp_trace_step_item_get_shot_state (ChpTraceStepItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_STEP_ITEM (self), CHP_TRACE_SHOT_NONE);

  return self->shot_state;
}

/* Returns: (nullable): the screenshot, while it is held */
const ChpTraceShot *
chp_trace_step_item_get_shot (ChpTraceStepItem *self)
{
  g_return_val_if_fail (CHP_IS_TRACE_STEP_ITEM (self), NULL);

  return self->shot;
}

/* @shot: (nullable): the screenshot when @state is LOADED; dropped otherwise */
void
chp_trace_step_item_set_shot (ChpTraceStepItem   *self,
                              ChpTraceShotState   state,
                              const ChpTraceShot *shot)
{
  g_return_if_fail (CHP_IS_TRACE_STEP_ITEM (self));
  g_return_if_fail ((state == CHP_TRACE_SHOT_LOADED) == (shot != NULL));

  g_clear_pointer (&self->shot, chp_trace_shot_free);
  if (shot != NULL)
    self->shot = chp_trace_shot_copy (shot);
  self->shot_state = state;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SHOT_STATE]);
}
