/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-types.c: copy and free the trace store's records. */
#include "config.h"

#include "chp-trace-types.h"

G_DEFINE_BOXED_TYPE (ChpTraceSession, chp_trace_session, chp_trace_session_copy,
                     chp_trace_session_free)
G_DEFINE_BOXED_TYPE (ChpTraceStep, chp_trace_step, chp_trace_step_copy, chp_trace_step_free)
G_DEFINE_BOXED_TYPE (ChpTraceShot, chp_trace_shot, chp_trace_shot_copy, chp_trace_shot_free)
G_DEFINE_BOXED_TYPE (ChpTraceQuery, chp_trace_query, chp_trace_query_copy, chp_trace_query_free)

/* The words stored in the steps table: part of the file's format, never translated. */
static const char * const decision_names[] = {
  [CHP_TRACE_DECISION_NONE] = NULL,
  [CHP_TRACE_DECISION_HOLD] = "hold",
  [CHP_TRACE_DECISION_PLAN] = "plan",
  [CHP_TRACE_DECISION_HANDOFF] = "handoff",
  [CHP_TRACE_DECISION_STOP] = "stop",
};

/* Returns: (nullable): the stored word, %NULL for %CHP_TRACE_DECISION_NONE */
const char *
chp_trace_decision_to_string (ChpTraceDecision decision)
{
  g_return_val_if_fail ((guint) decision < G_N_ELEMENTS (decision_names), NULL);

  return decision_names[decision];
}

ChpTraceDecision
chp_trace_decision_from_string (const char *text)
{
  if (text == NULL)
    return CHP_TRACE_DECISION_NONE;

  for (guint i = 1; i < G_N_ELEMENTS (decision_names); i++)
    if (g_str_equal (text, decision_names[i]))
      return (ChpTraceDecision) i;

  return CHP_TRACE_DECISION_NONE;
}

ChpTraceSession *
chp_trace_session_copy (const ChpTraceSession *session)
{
  ChpTraceSession *copy;

  g_return_val_if_fail (session != NULL, NULL);

  copy = g_memdup2 (session, sizeof *session);
  copy->id = g_strdup (session->id);
  copy->agent = g_strdup (session->agent);
  copy->device = g_strdup (session->device);
  copy->outcome = g_strdup (session->outcome);
  copy->sites = g_strdupv (session->sites);

  return copy;
}

void
chp_trace_session_free (ChpTraceSession *session)
{
  if (session == NULL)
    return;

  g_free (session->id);
  g_free (session->agent);
  g_free (session->device);
  g_free (session->outcome);
  g_strfreev (session->sites);
  g_free (session);
}

ChpTraceStep *
chp_trace_step_new (void)
{
  return g_new0 (ChpTraceStep, 1);
}

ChpTraceStep *
chp_trace_step_copy (const ChpTraceStep *step)
{
  ChpTraceStep *copy;

  g_return_val_if_fail (step != NULL, NULL);

  copy = g_memdup2 (step, sizeof *step);
  copy->tool = g_strdup (step->tool);
  copy->args = g_strdup (step->args);
  copy->outcome = g_strdup (step->outcome);
  copy->error_code = g_strdup (step->error_code);
  copy->rung = g_strdup (step->rung);
  copy->host = g_strdup (step->host);
  copy->path = g_strdup (step->path);
  copy->role = g_strdup (step->role);
  copy->name = g_strdup (step->name);
  copy->decision = g_strdup (step->decision);
  copy->stopped_by = g_strdup (step->stopped_by);
  copy->snippet = g_strdup (step->snippet);

  return copy;
}

void
chp_trace_step_free (ChpTraceStep *step)
{
  if (step == NULL)
    return;

  g_free (step->tool);
  g_free (step->args);
  g_free (step->outcome);
  g_free (step->error_code);
  g_free (step->rung);
  g_free (step->host);
  g_free (step->path);
  g_free (step->role);
  g_free (step->name);
  g_free (step->decision);
  g_free (step->stopped_by);
  g_free (step->snippet);
  g_free (step);
}

ChpTraceShot *
chp_trace_shot_copy (const ChpTraceShot *shot)
{
  ChpTraceShot *copy;

  g_return_val_if_fail (shot != NULL, NULL);

  copy = g_memdup2 (shot, sizeof *shot);
  if (shot->jpeg != NULL)
    copy->jpeg = g_bytes_ref (shot->jpeg);

  return copy;
}

void
chp_trace_shot_free (ChpTraceShot *shot)
{
  if (shot == NULL)
    return;

  g_clear_pointer (&shot->jpeg, g_bytes_unref);
  g_free (shot);
}

ChpTraceQuery *
chp_trace_query_new (void)
{
  return g_new0 (ChpTraceQuery, 1);
}

ChpTraceQuery *
chp_trace_query_copy (const ChpTraceQuery *query)
{
  ChpTraceQuery *copy;

  g_return_val_if_fail (query != NULL, NULL);

  copy = g_memdup2 (query, sizeof *query);
  copy->search = g_strdup (query->search);
  copy->agent = g_strdup (query->agent);
  copy->outcome = g_strdup (query->outcome);
  copy->site = g_strdup (query->site);

  return copy;
}

void
chp_trace_query_free (ChpTraceQuery *query)
{
  if (query == NULL)
    return;

  g_free (query->search);
  g_free (query->agent);
  g_free (query->outcome);
  g_free (query->site);
  g_free (query);
}
