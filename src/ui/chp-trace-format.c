/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-format.c: the words of the trace browser. The store keeps fixed words (outcomes,
 * decisions: part of its file's format); these are what the person reads for them. A word this
 * file does not know is shown as it is rather than hidden. */
#include "config.h"

#include "chp-trace-format.h"

#include <glib/gi18n.h>

typedef struct
{
  const char *value;
  const char *words;
} Words;

static const Words session_outcomes[] = {
  { "completed", N_("Completed") },
  { "failed", N_("Failed") },
  { "stopped", N_("Stopped") },
  { "interrupted", N_("Interrupted") },
  { "app-closed", N_("App closed") },
  { "disconnected", N_("Disconnected") },
  { "ok", N_("Completed") },
  { "error", N_("Failed") },
};

static const Words step_outcomes[] = {
  { "ok", N_("OK") },
  { "error", N_("Error") },
  { "refused", N_("Refused") },
  { "held", N_("Held") },
  { "stopped", N_("Stopped") },
  { "cancelled", N_("Cancelled") },
  { "timeout", N_("Timed out") },
};

static const Words decisions[] = {
  { "approved", N_("You approved") },
  { "declined", N_("You declined") },
  { "rejected", N_("You declined") },
  { "expired", N_("Nobody answered") },
  { "done", N_("You finished it") },
  { "cancelled", N_("You cancelled it") },
  { "allowed", N_("Allowed by your rule") },
};

static const char *
lookup (const Words *table,
        gsize        n,
        const char  *value)
{
  for (gsize i = 0; i < n; i++)
    if (g_strcmp0 (table[i].value, value) == 0)
      return _(table[i].words);
  return value;
}

/* A length of time a person reads at a glance: "40 ms", "3.2 s", "2 min 5 s", "1 h 4 min". */
char *
chp_trace_format_duration (gint64 us)
{
  gint64 ms = us / 1000;
  gint64 s = us / G_USEC_PER_SEC;

  if (us < 1000)
    /* Translators: a duration in microseconds */
    return g_strdup_printf (_("%d µs"), (int) MAX (us, 0));
  if (ms < 1000)
    /* Translators: a duration in milliseconds */
    return g_strdup_printf (_("%d ms"), (int) ms);
  if (s < 60)
    /* Translators: a duration in seconds, with one decimal */
    return g_strdup_printf (_("%.1f s"), us / (double) G_USEC_PER_SEC);
  if (s < 3600)
    /* Translators: a duration in minutes and seconds */
    return g_strdup_printf (_("%d min %d s"), (int) (s / 60), (int) (s % 60));
  /* Translators: a duration in hours and minutes */
  return g_strdup_printf (_("%d h %d min"), (int) (s / 3600), (int) (s / 60 % 60));
}

/* When a session began: the time of day today, else the day too. */
char *
chp_trace_format_when (gint64 us,
                       gint64 now_us)
{
  g_autoptr(GDateTime) when = g_date_time_new_from_unix_local (us / G_USEC_PER_SEC);
  g_autoptr(GDateTime) now = g_date_time_new_from_unix_local (now_us / G_USEC_PER_SEC);
  g_autofree char *time = NULL;

  if (when == NULL || now == NULL)
    return g_strdup ("");

  time = g_date_time_format (when, "%H:%M");
  if (g_date_time_get_year (when) == g_date_time_get_year (now) &&
      g_date_time_get_day_of_year (when) == g_date_time_get_day_of_year (now))
    /* Translators: when a session began, today; %s is a time of day such as 14:02 */
    return g_strdup_printf (_("Today at %s"), time);
  if (g_date_time_get_year (when) == g_date_time_get_year (now))
    /* Translators: a date in this year and a time, as g_date_time_format() takes it */
    return g_date_time_format (when, _("%e %b, %H:%M"));
  /* Translators: a date in another year and a time, as g_date_time_format() takes it */
  return g_date_time_format (when, _("%e %b %Y, %H:%M"));
}

char *
chp_trace_format_time_of_day (gint64 us)
{
  g_autoptr(GDateTime) when = g_date_time_new_from_unix_local (us / G_USEC_PER_SEC);

  return when != NULL ? g_date_time_format (when, "%H:%M:%S") : g_strdup ("");
}

/* @outcome: (nullable): %NULL while the session is open */
const char *
chp_trace_format_session_outcome (const char *outcome)
{
  if (outcome == NULL)
    return _("Running");
  return lookup (session_outcomes, G_N_ELEMENTS (session_outcomes), outcome);
}

const char *
chp_trace_format_step_outcome (const char *outcome)
{
  if (outcome == NULL)
    return "";
  return lookup (step_outcomes, G_N_ELEMENTS (step_outcomes), outcome);
}

/* "bank.example, shop.example and 3 more": the first @max hosts. */
char *
chp_trace_format_sites (const char * const *sites,
                        guint               max)
{
  g_autoptr(GString) text = g_string_new (NULL);
  guint n = sites != NULL ? g_strv_length ((char **) sites) : 0;

  if (n == 0)
    return g_strdup (_("No site"));

  for (guint i = 0; i < n && i < max; i++)
    {
      if (i > 0)
        g_string_append (text, ", ");
      g_string_append (text, sites[i]);
    }
  if (n > max)
    /* Translators: after a list of sites, e.g. "a.example, b.example and 3 more" */
    g_string_append_printf (text, ngettext (" and %u more", " and %u more", n - max), n - max);

  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* "12 steps · 2 asked you, 1 approved" */
char *
chp_trace_format_counts (guint n_steps,
                         guint n_asked,
                         guint n_approved)
{
  g_autofree char *steps = g_strdup_printf (ngettext ("%u step", "%u steps", n_steps), n_steps);
  g_autofree char *asked = NULL;

  if (n_asked == 0)
    return g_steal_pointer (&steps);

  /* Translators: how many steps waited for the person, and how many of them they approved */
  asked = g_strdup_printf (ngettext ("%u asked you, %u approved", "%u asked you, %u approved",
                                     n_asked),
                           n_asked, n_approved);
  /* Translators: two parts of a session's summary, e.g. "12 steps · 2 asked you, 1 approved" */
  return g_strdup_printf (_("%s · %s"), steps, asked);
}

/* Returns: (nullable): "1 error", or %NULL for none */
char *
chp_trace_format_errors (guint n_errors)
{
  if (n_errors == 0)
    return NULL;
  return g_strdup_printf (ngettext ("%u error", "%u errors", n_errors), n_errors);
}

/* What the person was asked at a step and what they decided: "Held for your approval: you
 * approved after 12 s". Returns: (nullable): %NULL for a step that asked nothing. */
char *
chp_trace_format_decision (const ChpTraceStep *step)
{
  g_autofree char *wait = NULL;
  const char *kind;
  const char *decided;

  switch (step->decision_kind)
    {
    case CHP_TRACE_DECISION_HOLD:
      kind = _("Held for your approval");
      break;
    case CHP_TRACE_DECISION_PLAN:
      kind = _("Plan waited for your approval");
      break;
    case CHP_TRACE_DECISION_HANDOFF:
      kind = _("Handed over to you");
      break;
    case CHP_TRACE_DECISION_STOP:
      if (g_strcmp0 (step->stopped_by, "person") == 0)
        return g_strdup (_("Stopped by you"));
      if (g_strcmp0 (step->stopped_by, "agent") == 0)
        return g_strdup (_("Stopped by the agent"));
      if (g_strcmp0 (step->stopped_by, "browser") == 0)
        return g_strdup (_("Stopped in the browser"));
      return g_strdup (_("Stopped"));
    case CHP_TRACE_DECISION_NONE:
    default:
      return NULL;
    }

  if (step->decision == NULL)
    /* Translators: a step that waited for the person, who has not answered yet */
    return g_strdup_printf (_("%s: no answer yet"), kind);

  decided = lookup (decisions, G_N_ELEMENTS (decisions), step->decision);
  wait = chp_trace_format_duration (step->decision_wait_us);
  /* Translators: e.g. "Held for your approval: You approved after 12 s" */
  return g_strdup_printf (_("%s: %s after %s"), kind, decided, wait);
}

/* The timing bar's words: "Queued 2 ms, ran 40 ms, page 12 ms" */
char *
chp_trace_format_timing (const ChpTraceStep *step)
{
  g_autofree char *queue = chp_trace_format_duration (step->queue_us);
  g_autofree char *run = chp_trace_format_duration (step->run_us);
  g_autofree char *page = chp_trace_format_duration (step->page_us);

  /* Translators: a step's times: waiting for the browser, the call, and the page's own part */
  return g_strdup_printf (_("Queued %s, ran %s, page %s"), queue, run, page);
}

/* "bank.example/login", or %NULL for a step on no page. */
char *
chp_trace_format_where (const ChpTraceStep *step)
{
  if (step->host == NULL || *step->host == '\0')
    return NULL;
  return g_strconcat (step->host, step->path != NULL ? step->path : "", NULL);
}

/* "button “Submit”", or %NULL for a step on no element. */
char *
chp_trace_format_element (const ChpTraceStep *step)
{
  gboolean role = step->role != NULL && *step->role != '\0';
  gboolean name = step->name != NULL && *step->name != '\0';

  if (role && name)
    /* Translators: an element's role and accessible name, e.g. button “Submit” */
    return g_strdup_printf (_("%s “%s”"), step->role, step->name);
  if (name)
    return g_strdup_printf ("“%s”", step->name);
  if (role)
    return g_strdup (step->role);
  return NULL;
}
