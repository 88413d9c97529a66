/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-report-html.c: the report as one page a person reads without scripts, network or
 * other files: a header per session, a row per step with its timing as a bar, the person's
 * decisions, errors with their snippet, screenshots as data: URIs; then the JSON document for
 * programs. Every text from the store was written by a page or an agent: it is escaped here, in
 * one function, and nothing of it reaches an attribute but through that function. A
 * Content-Security-Policy that allows no script and no fetch is the second fence. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-report"

#include "chp-trace-report-private.h"

#include <glib/gi18n.h>

#define U_REPLACEMENT "\xef\xbf\xbd"
/* Stands for the export's date in the report's first sentence: a character no text has. */
#define DATE_MARK "\001"

static const char style[] =
  ":root{color-scheme:light dark;--fg:#1e1e1e;--bg:#fafafa;--dim:#5e5c64;--line:#d7d7db;"
  "--err:#c01c28;--q:#9a9996;--r:#3584e4;--p:#e66100;--ask:#813d9c}"
  "@media (prefers-color-scheme:dark){:root{--fg:#eee;--bg:#242424;--dim:#b0afb5;"
  "--line:#444;--err:#ff7b63;--q:#77767b;--r:#78aeed;--p:#ffa348;--ask:#dc8add}}"
  "body{font:14px/1.4 system-ui,sans-serif;color:var(--fg);background:var(--bg);margin:1em;"
  "overflow-wrap:anywhere}"
  "h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em}"
  ".note,.dim,figcaption{color:var(--dim)}"
  "dl{display:grid;grid-template-columns:repeat(auto-fill,minmax(16em,1fr));gap:.5em 1em}"
  "dt{font-weight:600}dd{margin:0}"
  /* A narrow window scrolls the table rather than breaking every word of it. */
  ".scroll{overflow-x:auto}table{border-collapse:collapse;width:100%;min-width:56em}"
  "th,td{text-align:left;vertical-align:top;padding:.3em .5em;border-bottom:1px solid var(--line)}"
  "tr.detail td{border-bottom:1px solid var(--line)}"
  "tr.error td:first-child{border-left:3px solid var(--err)}"
  "tr.asked td:first-child{border-left:3px solid var(--ask)}"
  ".err{color:var(--err);font-weight:600}code,pre{font:12px/1.3 monospace}"
  "pre{white-space:pre-wrap;margin:.3em 0}"
  ".bar{display:flex;width:8em;height:.6em;background:var(--line);margin:.3em 0}"
  ".bar span{display:block;height:100%}.q{background:var(--q)}.r{background:var(--r)}"
  ".p{background:var(--p)}"
  ".mark{border:1px solid var(--ask);color:var(--ask);border-radius:.3em;padding:0 .3em}"
  "img{max-width:100%;height:auto;border:1px solid var(--line)}figure{margin:.3em 0}"
  "time{white-space:nowrap}";

/* The one way page-derived text enters the page: the five characters HTML gives a meaning to
 * become references, control characters (which have no business in a report and which some
 * viewers mishandle) become U+FFFD. Safe in text and in a quoted attribute alike. */
static void
append_escaped (ReportSink *sink,
                const char *text)
{
  g_autofree char *valid = NULL;
  GString *out = sink->buffer;

  if (text == NULL)
    return;
  if (!g_utf8_validate (text, -1, NULL))
    text = valid = g_utf8_make_valid (text, -1);

  for (const char *p = text; *p != '\0'; p++)
    {
      guchar c = (guchar) *p;

      switch (c)
        {
        case '&': g_string_append (out, "&amp;"); break;
        case '<': g_string_append (out, "&lt;"); break;
        case '>': g_string_append (out, "&gt;"); break;
        case '"': g_string_append (out, "&quot;"); break;
        case '\'': g_string_append (out, "&#39;"); break;
        case '\t':
        case '\n':
          g_string_append_c (out, (char) c);
          break;
        default:
          if (c < 0x20 || c == 0x7f)
            g_string_append (out, U_REPLACEMENT);
          else
            g_string_append_c (out, (char) c);
          break;
        }
    }
  chp_trace_report_sink_append (sink, "");
}

static void
append_element (ReportSink *sink,
                const char *open,
                const char *text,
                const char *close)
{
  chp_trace_report_sink_append (sink, open);
  append_escaped (sink, text);
  chp_trace_report_sink_append (sink, close);
}

static char *
format_duration (gint64 us)
{
  us = MAX (us, 0);
  if (us < 1000)
    return g_strdup_printf ("%" G_GINT64_FORMAT " µs", us);
  if (us < 10 * 1000)
    return g_strdup_printf ("%.1f ms", us / 1000.0);
  if (us < G_USEC_PER_SEC)
    return g_strdup_printf ("%.0f ms", us / 1000.0);
  if (us < 60 * G_USEC_PER_SEC)
    return g_strdup_printf ("%.2f s", us / (double) G_USEC_PER_SEC);
  if (us < G_TIME_SPAN_HOUR)
    return g_strdup_printf ("%" G_GINT64_FORMAT " min %" G_GINT64_FORMAT " s",
                            us / G_TIME_SPAN_MINUTE, (us % G_TIME_SPAN_MINUTE) / G_USEC_PER_SEC);
  return g_strdup_printf ("%" G_GINT64_FORMAT " h %" G_GINT64_FORMAT " min",
                          us / G_TIME_SPAN_HOUR, (us % G_TIME_SPAN_HOUR) / G_TIME_SPAN_MINUTE);
}

/* <time datetime="UTC">local</time>: the person reads their own clock, a program the exact
 * instant. */
static void
append_time (ReportSink *sink,
             gint64      at_us,
             gboolean    with_date)
{
  g_autofree char *iso = chp_trace_report_iso_time (at_us);
  g_autoptr(GDateTime) local = NULL;
  g_autofree char *shown = NULL;

  if (iso == NULL ||
      (local = g_date_time_new_from_unix_local (at_us / G_USEC_PER_SEC)) == NULL)
    {
      chp_trace_report_sink_append (sink, "—");
      return;
    }

  shown = g_date_time_format (local, with_date ? "%Y-%m-%d %H:%M:%S (UTC%:z)" : "%H:%M:%S");
  chp_trace_report_sink_printf (sink, "<time datetime=\"%s\">", iso);
  append_escaped (sink, shown);
  if (!with_date)
    chp_trace_report_sink_printf (sink, ".%03d", (int) (at_us % G_USEC_PER_SEC / 1000));
  chp_trace_report_sink_append (sink, "</time>");
}

/* Who stopped a step, as the store keeps it (a word, see chp-trace-recorder.c), in a sentence:
 * each word its own string, so a translation never shows the English word. */
static const char *
stopped_by_text (const char *who)
{
  if (g_strcmp0 (who, "person") == 0)
    /* Translators: in the exported report, under a step the person stopped */
    return _("Stopped by the person");
  if (g_strcmp0 (who, "agent") == 0)
    return _("Stopped by the agent");
  if (g_strcmp0 (who, "app") == 0)
    return _("Stopped by Chaperone");
  if (g_strcmp0 (who, "browser") == 0)
    return _("Stopped by the browser");
  return _("Stopped");
}

static void
append_fact (ReportSink *sink,
             const char *label,
             const char *value)
{
  append_element (sink, "<div><dt>", label, "</dt><dd>");
  append_escaped (sink, value != NULL ? value : "—");
  chp_trace_report_sink_append (sink, "</dd></div>\n");
}

static void
append_note (ReportSink *sink,
             const char *text)
{
  append_element (sink, "<p class=\"note\">", text, "</p>\n");
}

/* A width in percent of the session's longest step, in tenths: never through printf's %f,
 * whose decimal point is the locale's, and CSS wants a full stop. */
static void
append_segment (ReportSink *sink,
                const char *class_name,
                gint64      us,
                gint64      scale_us)
{
  guint tenths;

  if (us <= 0 || scale_us <= 0)
    return;
  tenths = (guint) MIN ((us * 1000) / scale_us, 1000);
  chp_trace_report_sink_printf (sink, "<span class=\"%s\" style=\"width:%u.%u%%\"></span>",
                                class_name, tenths / 10, tenths % 10);
}

static void
append_timing (ReportSink         *sink,
               const ChpTraceStep *step,
               gint64              scale_us)
{
  gint64 page = CLAMP (step->page_us, 0, MAX (step->run_us, 0));
  g_autofree char *queue_text = format_duration (step->queue_us);
  g_autofree char *run_text = format_duration (step->run_us);
  g_autofree char *page_text = format_duration (page);
  g_autofree char *text = NULL;

  chp_trace_report_sink_append (sink, "<span class=\"bar\" aria-hidden=\"true\">");
  append_segment (sink, "q", step->queue_us, scale_us);
  append_segment (sink, "r", MAX (step->run_us, 0) - page, scale_us);
  append_segment (sink, "p", page, scale_us);
  chp_trace_report_sink_append (sink, "</span>");
  /* Translators: a step's timing in the exported report: time waiting in the browser's queue,
   * time the call ran, and of that the page's own work; each value is like "12 ms" */
  text = g_strdup_printf (_("queue %s · run %s · page %s"), queue_text, run_text, page_text);
  append_element (sink, "<span class=\"dim\">", text, "</span>");
}

static const char *
decision_label (ChpTraceDecision kind)
{
  switch (kind)
    {
    case CHP_TRACE_DECISION_HOLD:
      return _("Held for you");
    case CHP_TRACE_DECISION_PLAN:
      return _("Plan");
    case CHP_TRACE_DECISION_HANDOFF:
      return _("Handed to you");
    case CHP_TRACE_DECISION_STOP:
      return _("Stopped");
    case CHP_TRACE_DECISION_NONE:
    default:
      return NULL;
    }
}

static void
append_person (ReportSink         *sink,
               const ChpTraceStep *step)
{
  const char *label = decision_label (step->decision_kind);

  if (label != NULL)
    {
      append_element (sink, "<span class=\"mark\">", label, "</span> ");
      append_escaped (sink, step->decision);
      if (step->decision_wait_us > 0)
        {
          g_autofree char *wait = format_duration (step->decision_wait_us);
          /* Translators: how long the person took to decide, in the exported report */
          g_autofree char *text = g_strdup_printf (_("after %s"), wait);

          append_element (sink, " <span class=\"dim\">", text, "</span>");
        }
    }
  if (step->stopped_by != NULL)
    append_element (sink, "<div>", stopped_by_text (step->stopped_by), "</div>");
}

static void
append_shot (ReportSink       *sink,
             const ReportStep *entry,
             guint             session_index)
{
  g_autofree char *id = chp_trace_report_shot_id (session_index, entry->step->seq);
  /* Translators: the text of a screenshot in the exported report; %u is the step's number */
  g_autofree char *alt = g_strdup_printf (_("Screenshot of the page after step %u"),
                                          entry->step->seq);
  gsize size = 0;
  const guchar *data = g_bytes_get_data (entry->shot->jpeg, &size);
  g_autofree char *base64 = g_base64_encode (data, size);

  chp_trace_report_sink_printf (sink, "<figure><img id=\"%s\" src=\"data:image/jpeg;base64,", id);
  chp_trace_report_sink_append (sink, base64);
  chp_trace_report_sink_append (sink, "\"");
  if (entry->shot->width > 0 && entry->shot->height > 0)
    chp_trace_report_sink_printf (sink, " width=\"%u\" height=\"%u\"",
                                  MIN (entry->shot->width, CHP_TRACE_MAX_SHOT_SIDE),
                                  MIN (entry->shot->height, CHP_TRACE_MAX_SHOT_SIDE));
  append_element (sink, " alt=\"", alt, "\">");
  append_element (sink, "<figcaption>", alt, "</figcaption></figure>");
}

static void
append_step (ReportSink          *sink,
             const ReportSession *report,
             const ReportStep    *entry,
             guint                session_index)
{
  const ChpTraceStep *step = entry->step;
  gboolean failed = step->error_code != NULL;
  gboolean detail = step->snippet != NULL || entry->shot != NULL || entry->shot_left_out;

  chp_trace_report_sink_printf (sink, "<tr class=\"step%s%s\"><td>%u</td><td>",
                                failed ? " error" : "",
                                step->decision_kind != CHP_TRACE_DECISION_NONE ? " asked" : "",
                                step->seq);
  append_time (sink, step->at, FALSE);

  append_element (sink, "</td><td>", step->tool, "");
  if (entry->args != NULL)
    {
      g_autofree char *args = json_to_string (entry->args, FALSE);

      append_element (sink, "<br><code>", args, "</code>");
    }

  append_element (sink, "</td><td>", step->host, "");
  append_element (sink, "<span class=\"dim\">", step->path, "</span>");

  append_element (sink, "</td><td>", step->role, step->role != NULL ? " " : "");
  append_element (sink, "<strong>", step->name, "</strong>");

  chp_trace_report_sink_append (sink, "</td><td>");
  append_element (sink, failed ? "<span class=\"err\">" : "<span>", step->outcome, "</span>");
  if (failed)
    append_element (sink, " <code>", step->error_code, "</code>");
  if (step->retry > 0)
    {
      /* Translators: in the exported report: this step was the nth retry of the one before */
      g_autofree char *retry = g_strdup_printf (_("retry %u"), step->retry);

      append_element (sink, " <span class=\"dim\">", retry, "</span>");
    }

  chp_trace_report_sink_append (sink, "</td><td>");
  append_timing (sink, step, report->longest_us);
  chp_trace_report_sink_append (sink, "</td><td>");
  append_person (sink, step);
  chp_trace_report_sink_append (sink, "</td></tr>\n");

  if (!detail)
    return;

  chp_trace_report_sink_append (sink, "<tr class=\"detail\"><td></td><td colspan=\"7\">");
  if (step->snippet != NULL)
    append_element (sink, "<pre>", step->snippet, "</pre>");
  if (entry->shot != NULL)
    append_shot (sink, entry, session_index);
  else if (entry->shot_left_out)
    append_note (sink, _("This step’s screenshot is left out of the report: it was past the "
                         "report’s limit for screenshots, or not a picture."));
  chp_trace_report_sink_append (sink, "</td></tr>\n");
}

static void
append_session_notes (ReportSink          *sink,
                      const ReportSession *report)
{
  const ChpTraceSession *session = report->session;
  g_autofree char *trimmed = NULL;
  g_autofree char *left_out = NULL;
  g_autofree char *redacted = NULL;

  if (session->n_trimmed > 0)
    {
      trimmed = g_strdup_printf (ngettext ("The oldest step was removed by the trace store’s "
                                           "size limit before this export.",
                                           "The oldest %u steps were removed by the trace "
                                           "store’s size limit before this export.",
                                           session->n_trimmed),
                                 session->n_trimmed);
      append_note (sink, trimmed);
    }
  if (report->steps_left_out > 0)
    {
      left_out = g_strdup_printf (ngettext ("Only the newest %u steps are in this report: %u "
                                            "older step is left out.",
                                            "Only the newest %u steps are in this report: %u "
                                            "older steps are left out.",
                                            report->steps_left_out),
                                  report->steps->len, report->steps_left_out);
      append_note (sink, left_out);
    }
  if (report->redacted > 0)
    {
      redacted = g_strdup_printf (ngettext ("%u text looked like a secret and was masked again "
                                            "when exported.",
                                            "%u texts looked like secrets and were masked again "
                                            "when exported.",
                                            report->redacted),
                                  report->redacted);
      append_note (sink, redacted);
    }
}

static void
append_session (ReportSink          *sink,
                const ReportSession *report,
                guint                index,
                guint                n_sessions)
{
  const ChpTraceSession *session = report->session;
  g_autofree char *title = NULL;
  g_autofree char *sites = NULL;
  g_autofree char *duration = NULL;
  g_autofree char *counts = NULL;
  gboolean ended = session->ended_at > 0;

  /* Translators: a heading of the exported report: "Session 1 of 3" */
  title = g_strdup_printf (_("Session %u of %u"), index + 1, n_sessions);
  chp_trace_report_sink_printf (sink, "<section aria-labelledby=\"session-%u\">\n"
                                "<h2 id=\"session-%u\">", index + 1, index + 1);
  append_escaped (sink, title);
  chp_trace_report_sink_append (sink, "</h2>\n<dl>\n");

  append_fact (sink, _("Agent"), session->agent);
  append_fact (sink, _("Browser"), session->device);
  sites = session->sites != NULL ? g_strjoinv (", ", session->sites) : NULL;
  append_fact (sink, _("Sites"), sites != NULL && *sites != '\0' ? sites : NULL);

  append_element (sink, "<div><dt>", _("Started"), "</dt><dd>");
  append_time (sink, session->started_at, TRUE);
  append_element (sink, "</dd></div>\n<div><dt>", _("Ended"), "</dt><dd>");
  if (ended)
    append_time (sink, session->ended_at, TRUE);
  else
    append_escaped (sink, _("Not ended when exported"));
  chp_trace_report_sink_append (sink, "</dd></div>\n");
  if (ended)
    {
      duration = format_duration (session->ended_at - session->started_at);
      append_fact (sink, _("Duration"), duration);
    }
  append_fact (sink, _("Outcome"), ended ? session->outcome : _("Open"));

  counts = g_strdup_printf (_("%u recorded, %u with an error, %u waited for you, %u approved"),
                            session->n_steps, session->n_errors, session->n_asked,
                            session->n_approved);
  append_fact (sink, _("Steps"), counts);
  append_element (sink, "<div><dt>", _("Session id"), "</dt><dd><code>");
  append_escaped (sink, session->id);
  chp_trace_report_sink_append (sink, "</code></dd></div>\n</dl>\n");

  append_session_notes (sink, report);

  if (report->steps->len == 0)
    {
      append_note (sink, _("No step of this session is left in the traces."));
      chp_trace_report_sink_append (sink, "</section>\n");
      return;
    }

  chp_trace_report_sink_append (sink, "<div class=\"scroll\"><table>\n<thead><tr>");
  append_element (sink, "<th scope=\"col\">", "#", "</th>");
  append_element (sink, "<th scope=\"col\">", _("Time"), "</th>");
  append_element (sink, "<th scope=\"col\">", _("Tool"), "</th>");
  append_element (sink, "<th scope=\"col\">", _("Page"), "</th>");
  append_element (sink, "<th scope=\"col\">", _("Element"), "</th>");
  append_element (sink, "<th scope=\"col\">", _("Outcome"), "</th>");
  append_element (sink, "<th scope=\"col\">", _("Timing"), "</th>");
  append_element (sink, "<th scope=\"col\">", _("You"), "</th>");
  chp_trace_report_sink_append (sink, "</tr></thead>\n<tbody>\n");
  for (guint i = 0; i < report->steps->len && sink->error == NULL; i++)
    append_step (sink, report, g_ptr_array_index (report->steps, i), index);
  chp_trace_report_sink_append (sink, "</tbody>\n</table></div>\n</section>\n");
}

void
chp_trace_report_write_html (ReportSink *sink,
                             GPtrArray  *sessions,
                             gint64      exported_at)
{
  /* Translators: the language code of the exported report's page (its lang attribute): your
   * language's, as in "de" or "pt-BR" */
  const char *lang = C_("report html lang", "en");
  g_autofree char *summary = NULL;
  char *date_at;

  append_element (sink, "<!DOCTYPE html>\n<html lang=\"", lang, "\">\n<head>\n");
  /* No script runs and nothing is fetched, whatever the page holds: only the inline style and
   * the screenshots' data: URIs are allowed. No referrer, should a link ever be followed. */
  chp_trace_report_sink_append (sink,
                                "<meta charset=\"utf-8\">\n"
                                "<meta http-equiv=\"Content-Security-Policy\" "
                                "content=\"default-src 'none'; img-src data:; "
                                "style-src 'unsafe-inline'\">\n"
                                "<meta name=\"referrer\" content=\"no-referrer\">\n"
                                "<meta name=\"viewport\" "
                                "content=\"width=device-width, initial-scale=1\">\n");
  append_element (sink, "<title>", _("Chaperone trace report"), "</title>\n");
  chp_trace_report_sink_printf (sink, "<style>%s</style>\n</head>\n<body>\n<header>\n", style);
  append_element (sink, "<h1>", _("Chaperone trace report"), "</h1>\n<p>");
  /* Translators: the report's first sentence; the first %s is Chaperone's version, the second
   * the date and time of the export */
  summary = g_strdup_printf (ngettext ("%u agent session, newest first, exported by "
                                       "Chaperone %s on %s.",
                                       "%u agent sessions, newest first, exported by "
                                       "Chaperone %s on %s.",
                                       sessions->len),
                             sessions->len, PACKAGE_VERSION, DATE_MARK);
  /* The date goes where the translation puts it: the sentence is printed with a mark in its
   * place, then written out escaped on each side of the <time> element. */
  date_at = strstr (summary, DATE_MARK);
  if (date_at != NULL)
    {
      *date_at = '\0';
      append_escaped (sink, summary);
      append_time (sink, exported_at, TRUE);
      append_escaped (sink, date_at + strlen (DATE_MARK));
    }
  else
    {
      append_escaped (sink, summary);
    }
  chp_trace_report_sink_append (sink, "</p>\n");
  append_note (sink, _("What agents typed, what fields held and the query strings of addresses "
                       "are never recorded, and every text here was masked again when it was "
                       "exported. Screenshots are taken only when a step fails, and never of a "
                       "page with a visible password field: look at them before you share this "
                       "file."));
  chp_trace_report_sink_append (sink, "</header>\n<main>\n");

  for (guint i = 0; i < sessions->len && sink->error == NULL; i++)
    append_session (sink, g_ptr_array_index (sessions, i), i, sessions->len);

  /* The same document as FILE.json, for programs; a screenshot's "img" is its <img>'s id. */
  chp_trace_report_sink_append (sink, "</main>\n<script type=\"application/json\" "
                                "id=\"chaperone-trace-report\">");
  chp_trace_report_write_json (sink, sessions, exported_at, REPORT_SHOTS_IMG_ID, TRUE);
  chp_trace_report_sink_append (sink, "</script>\n</body>\n</html>\n");
}
