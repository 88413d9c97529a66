/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-report-json.c: the report's JSON document (chp-trace-report.h), written a session
 * at a time so that only one session's tree is ever built. Every value goes through json-glib's
 * generator; the text around the sessions is the report's own constants. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-report"

#include "chp-trace-report-private.h"

#include <string.h>

char *
chp_trace_report_shot_id (guint session_index,
                          guint seq)
{
  return g_strdup_printf ("shot-%u-%u", session_index + 1, seq);
}

static void
add_string (JsonBuilder *builder,
            const char  *member,
            const char  *value)
{
  json_builder_set_member_name (builder, member);
  if (value != NULL)
    json_builder_add_string_value (builder, value);
  else
    json_builder_add_null_value (builder);
}

static void
add_int (JsonBuilder *builder,
         const char  *member,
         gint64       value)
{
  json_builder_set_member_name (builder, member);
  json_builder_add_int_value (builder, value);
}

static void
add_time (JsonBuilder *builder,
          const char  *member,
          gint64       at_us)
{
  g_autofree char *iso = chp_trace_report_iso_time (at_us);

  add_string (builder, member, iso);
}

static void
add_shot (JsonBuilder      *builder,
          const ReportStep *entry,
          guint             session_index,
          ReportShots       shots)
{
  json_builder_set_member_name (builder, "shot");
  if (entry->shot == NULL && !entry->shot_left_out)
    {
      json_builder_add_null_value (builder);
      return;
    }

  json_builder_begin_object (builder);
  if (entry->shot == NULL)
    {
      json_builder_set_member_name (builder, "left_out");
      json_builder_add_boolean_value (builder, TRUE);
    }
  else
    {
      add_int (builder, "width", entry->shot->width);
      add_int (builder, "height", entry->shot->height);
      add_string (builder, "type", "image/jpeg");
      add_int (builder, "bytes", g_bytes_get_size (entry->shot->jpeg));
      if (shots == REPORT_SHOTS_BASE64)
        {
          gsize size = 0;
          const guchar *data = g_bytes_get_data (entry->shot->jpeg, &size);
          g_autofree char *base64 = g_base64_encode (data, size);

          add_string (builder, "base64", base64);
        }
      else
        {
          g_autofree char *id = chp_trace_report_shot_id (session_index, entry->step->seq);

          add_string (builder, "img", id);
        }
    }
  json_builder_end_object (builder);
}

static void
add_step (JsonBuilder      *builder,
          const ReportStep *entry,
          guint             session_index,
          ReportShots       shots)
{
  const ChpTraceStep *step = entry->step;

  json_builder_begin_object (builder);
  add_int (builder, "seq", step->seq);
  add_time (builder, "at", step->at);
  add_string (builder, "tool", step->tool);
  json_builder_set_member_name (builder, "args");
  if (entry->args != NULL)
    json_builder_add_value (builder, json_node_copy (entry->args));
  else
    json_builder_add_null_value (builder);
  add_int (builder, "queue_us", step->queue_us);
  add_int (builder, "run_us", step->run_us);
  add_int (builder, "page_us", step->page_us);
  add_string (builder, "outcome", step->outcome);
  add_string (builder, "error_code", step->error_code);
  add_string (builder, "rung", step->rung);
  add_string (builder, "host", step->host);
  add_string (builder, "path", step->path);
  add_string (builder, "role", step->role);
  add_string (builder, "name", step->name);
  add_string (builder, "decision_kind", chp_trace_decision_to_string (step->decision_kind));
  add_string (builder, "decision", step->decision);
  add_int (builder, "decision_wait_us", step->decision_wait_us);
  add_string (builder, "stopped_by", step->stopped_by);
  add_int (builder, "retry", step->retry);
  add_string (builder, "snippet", step->snippet);
  add_shot (builder, entry, session_index, shots);
  json_builder_end_object (builder);
}

static JsonNode *
session_node (const ReportSession *report,
              guint                index,
              ReportShots          shots)
{
  g_autoptr(JsonBuilder) builder = json_builder_new_immutable ();
  const ChpTraceSession *session = report->session;

  json_builder_begin_object (builder);
  add_string (builder, "id", session->id);
  add_string (builder, "agent", session->agent);
  add_string (builder, "device", session->device);
  add_time (builder, "started_at", session->started_at);
  add_time (builder, "ended_at", session->ended_at);
  add_time (builder, "last_at", session->last_at);
  add_string (builder, "outcome", session->outcome);
  json_builder_set_member_name (builder, "sites");
  json_builder_begin_array (builder);
  for (guint i = 0; session->sites != NULL && session->sites[i] != NULL; i++)
    json_builder_add_string_value (builder, session->sites[i]);
  json_builder_end_array (builder);
  add_int (builder, "n_steps", session->n_steps);
  add_int (builder, "n_errors", session->n_errors);
  add_int (builder, "n_asked", session->n_asked);
  add_int (builder, "n_approved", session->n_approved);
  add_int (builder, "n_trimmed", session->n_trimmed);
  add_int (builder, "steps_left_out", report->steps_left_out);
  add_int (builder, "redacted_by_export", report->redacted);

  json_builder_set_member_name (builder, "steps");
  json_builder_begin_array (builder);
  for (guint i = 0; i < report->steps->len; i++)
    add_step (builder, g_ptr_array_index (report->steps, i), index, shots);
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

/* Inside <script> only "</script" (and "<!--") would end the block early: no '<' is left, as
 * JSON's own \u003c, which reads back as the same text. A '<' in JSON text is always inside a
 * string, where that escape is valid. */
static void
append_for_script (ReportSink *sink,
                   const char *json)
{
  const char *p = json;
  const char *lt;

  while ((lt = strchr (p, '<')) != NULL)
    {
      g_string_append_len (sink->buffer, p, lt - p);
      g_string_append (sink->buffer, "\\u003c");
      p = lt + 1;
    }
  chp_trace_report_sink_append (sink, p);
}

/**
 * chp_trace_report_write_json:
 * @for_script: the document goes inside an HTML <script> block
 *
 * The whole document. Its head is written by hand: it holds only the report's constants and a
 * time, none of which needs escaping; each session is json-glib's.
 */
void
chp_trace_report_write_json (ReportSink  *sink,
                             GPtrArray   *sessions,
                             gint64       exported_at,
                             ReportShots  shots,
                             gboolean     for_script)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autofree char *exported = chp_trace_report_iso_time (exported_at);

  /* Indented in a file of its own, for a person reading it in a bug tracker; compact inside the
   * page, which is read by programs. */
  json_generator_set_pretty (generator, !for_script);
  chp_trace_report_sink_printf (sink,
                                "{\"format\": \"" CHP_TRACE_REPORT_FORMAT "\", \"version\": %d,"
                                " \"generator\": \"Chaperone " PACKAGE_VERSION "\","
                                " \"exported_at\": \"%s\","
                                " \"limits\": {\"sessions\": %d, \"steps_per_session\": %d,"
                                " \"screenshot_bytes\": %" G_GSIZE_FORMAT "},"
                                " \"sessions\": [\n",
                                CHP_TRACE_REPORT_VERSION, exported,
                                CHP_TRACE_REPORT_MAX_SESSIONS, CHP_TRACE_REPORT_MAX_STEPS,
                                CHP_TRACE_REPORT_MAX_SHOT_BYTES);

  for (guint i = 0; i < sessions->len && sink->error == NULL; i++)
    {
      g_autoptr(JsonNode) node = session_node (g_ptr_array_index (sessions, i), i, shots);
      g_autofree char *text = NULL;

      json_generator_set_root (generator, node);
      text = json_generator_to_data (generator, NULL);
      if (i > 0)
        chp_trace_report_sink_append (sink, ",\n");
      if (for_script)
        append_for_script (sink, text);
      else
        chp_trace_report_sink_append (sink, text);
    }

  chp_trace_report_sink_append (sink, "\n]}\n");
}
