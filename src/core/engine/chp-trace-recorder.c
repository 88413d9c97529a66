/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-recorder.c: the agent sessions' traces on their way to the store. A trace begins at an
 * agent session's first call (so an agent that only connected leaves none) and ends when the agent
 * leaves, with an outcome from how it went; steps only queue (the store writes them in batches on
 * its thread), so recording costs a call microseconds. After an act that failed on a page, the
 * browser is asked for a screenshot of the tab, which the extension masks (and refuses on blind
 * and sign-in pages), for the person's trace browser only: no agent ever gets it back. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-traces"

#include "chp-trace-recorder.h"

#include "chp-agent-session.h"
#include "chp-device.h"
#include "chp-json-util.h"

#include <string.h>

/* The extension bounds a screenshot to 300 KB of JPEG; base64 makes that 4/3. */
#define SHOT_MAX_BASE64 (CHP_TRACE_MAX_SHOT / 3 * 4 + 4)
#define SHOT_TIMEOUT_MS 10000

struct _ChpTraceRecorder
{
  GObject parent_instance;

  ChpStore *store;
  ChpBridge *bridge;
  ChpAgentSessionList *sessions;
  ChpDeviceList *devices;
  GHashTable *traces;   /* agent session id → Trace */
};

G_DEFINE_FINAL_TYPE (ChpTraceRecorder, chp_trace_recorder, G_TYPE_OBJECT)

enum {
  SIGNAL_CHANGED,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

/* One agent session's trace while it is open. */
typedef struct
{
  ChpTraceHandle *handle;
  char *last_tool;      /* for retries: the same tool with the same masked arguments again */
  char *last_args;
  guint last_retry;
  gboolean last_ok;
  gboolean stopped;     /* a step was stopped by the person */
} Trace;

static void
trace_free (Trace *trace)
{
  g_clear_pointer (&trace->handle, chp_trace_handle_unref);
  g_free (trace->last_tool);
  g_free (trace->last_args);
  g_free (trace);
}

/* How a trace ended, as the trace browser lists it. */
static const char *
outcome_of (Trace *trace)
{
  if (trace->stopped)
    return "stopped";
  return trace->last_ok ? "completed" : "failed";
}

static void
end_trace (ChpTraceRecorder *self,
           Trace            *trace,
           const char       *outcome)
{
  chp_store_trace_end (self->store, trace->handle, outcome);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0, chp_trace_handle_get_id (trace->handle));
}

/* An agent left: its trace ends. The list holds a handful of agents at most. */
static void
sessions_changed_cb (GListModel *list,
                     guint       position,
                     guint       removed,
                     guint       added,
                     gpointer    user_data)
{
  ChpTraceRecorder *self = user_data;
  GHashTableIter iter;
  const char *id;
  Trace *trace;

  if (removed == 0)
    return;
  g_hash_table_iter_init (&iter, self->traces);
  while (g_hash_table_iter_next (&iter, (gpointer *) &id, (gpointer *) &trace))
    {
      if (chp_agent_session_list_lookup (self->sessions, id) != NULL)
        continue;
      end_trace (self, trace, outcome_of (trace));
      g_hash_table_iter_remove (&iter);
    }
}

static void
chp_trace_recorder_dispose (GObject *object)
{
  ChpTraceRecorder *self = CHP_TRACE_RECORDER (object);

  if (self->sessions != NULL)
    g_signal_handlers_disconnect_by_data (self->sessions, self);
  g_clear_object (&self->sessions);
  g_clear_object (&self->devices);
  g_clear_object (&self->bridge);
  g_clear_object (&self->store);
  g_clear_pointer (&self->traces, g_hash_table_unref);

  G_OBJECT_CLASS (chp_trace_recorder_parent_class)->dispose (object);
}

static void
chp_trace_recorder_class_init (ChpTraceRecorderClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = chp_trace_recorder_dispose;

  /**
   * ChpTraceRecorder::changed:
   * @trace_id: the trace that began, grew, got its screenshot or ended
   *
   * Its writes are queued when this is emitted: chp_store_trace_flush_async() before reading.
   */
  signals[SIGNAL_CHANGED] =
    g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);
}

static void
chp_trace_recorder_init (ChpTraceRecorder *self)
{
  self->traces = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                        (GDestroyNotify) trace_free);
}

ChpTraceRecorder *
chp_trace_recorder_new (ChpStore            *store,
                        ChpBridge           *bridge,
                        ChpAgentSessionList *sessions,
                        ChpDeviceList       *devices)
{
  ChpTraceRecorder *self;

  g_return_val_if_fail (CHP_IS_STORE (store), NULL);
  g_return_val_if_fail (CHP_IS_BRIDGE (bridge), NULL);

  self = g_object_new (CHP_TYPE_TRACE_RECORDER, NULL);
  self->store = g_object_ref (store);
  self->bridge = g_object_ref (bridge);
  self->sessions = g_object_ref (sessions);
  self->devices = g_object_ref (devices);
  g_signal_connect (sessions, "items-changed", G_CALLBACK (sessions_changed_cb), self);
  return self;
}

/* ---- screenshots ------------------------------------------------------------------------ */

typedef struct
{
  GWeakRef recorder;
  ChpTraceHandle *handle;
  guint seq;
} Shot;

static void
shot_free (Shot *shot)
{
  g_weak_ref_clear (&shot->recorder);
  g_clear_pointer (&shot->handle, chp_trace_handle_unref);
  g_free (shot);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Shot, shot_free)

/* The browser's screenshot of the tab where an act failed. A refusal (a blind or sign-in page,
 * a tab in the background) or anything malformed leaves the step without one. */
static void
shot_cb (GObject      *source,
         GAsyncResult *result,
         gpointer      user_data)
{
  g_autoptr(Shot) shot = user_data;
  g_autoptr(ChpTraceRecorder) self = g_weak_ref_get (&shot->recorder);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = chp_bridge_call_finish (CHP_BRIDGE (source), result, &error);
  g_autoptr(GBytes) jpeg = NULL;
  JsonObject *o;
  const char *b64;
  gint64 width, height;
  guchar *data;
  gsize len = 0;

  if (self == NULL)
    return;
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    {
      g_debug ("traces: no screenshot for step %u: %s", shot->seq,
               error != NULL ? error->message : "not an object");
      return;
    }
  o = json_node_get_object (node);
  b64 = chp_json_get_string (o, "jpeg");
  width = chp_json_get_int (o, "width", 0);
  height = chp_json_get_int (o, "height", 0);
  if (b64 == NULL || strlen (b64) > SHOT_MAX_BASE64 ||
      width <= 0 || width > CHP_TRACE_MAX_SHOT_SIDE || height <= 0 ||
      height > CHP_TRACE_MAX_SHOT_SIDE)
    {
      g_debug ("traces: the screenshot for step %u is malformed", shot->seq);
      return;
    }
  data = g_base64_decode (b64, &len);
  jpeg = g_bytes_new_take (data, len);
  /* A JPEG starts with its SOI marker; anything else is not what the trace browser shows. */
  if (len < 4 || data[0] != 0xff || data[1] != 0xd8 || data[2] != 0xff)
    {
      g_debug ("traces: the screenshot for step %u is not a JPEG", shot->seq);
      return;
    }
  chp_store_trace_add_shot (self->store, shot->handle, shot->seq, jpeg, width, height);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0, chp_trace_handle_get_id (shot->handle));
}

static void
ask_for_shot (ChpTraceRecorder *self,
              Trace            *trace,
              const char       *device_id,
              guint             seq,
              gint64            tab)
{
  g_autoptr(JsonNode) params = json_node_new (JSON_NODE_OBJECT);
  JsonObject *o = json_object_new ();
  Shot *shot = g_new0 (Shot, 1);

  json_object_set_int_member (o, "tabId", tab);
  json_node_take_object (params, o);
  g_weak_ref_init (&shot->recorder, self);
  shot->handle = chp_trace_handle_ref (trace->handle);
  shot->seq = seq;
  chp_bridge_call_async (self->bridge, device_id, "browser.screenshot", params, SHOT_TIMEOUT_MS,
                         NULL, shot_cb, shot);
}

/* ---- recording -------------------------------------------------------------------------- */

static Trace *
trace_for (ChpTraceRecorder *self,
           const char       *agent_session_id,
           const char       *device_id)
{
  Trace *trace = g_hash_table_lookup (self->traces, agent_session_id);
  g_autoptr(ChpDevice) only = NULL;
  ChpAgentSession *agent;
  ChpDevice *device;

  if (trace != NULL)
    return trace;

  agent = chp_agent_session_list_lookup (self->sessions, agent_session_id);
  device = device_id != NULL ? chp_device_list_lookup (self->devices, device_id) : NULL;
  /* An agent's first call is mostly browser_tabs, which asks every browser: with one online,
   * that is the session's browser. */
  if (device == NULL)
    {
      GListModel *devices = G_LIST_MODEL (self->devices);
      guint online = 0;

      for (guint i = 0; i < g_list_model_get_n_items (devices); i++)
        {
          g_autoptr(ChpDevice) d = g_list_model_get_item (devices, i);

          if (chp_device_get_online (d) && online++ == 0)
            g_set_object (&only, d);
        }
      device = online == 1 ? only : NULL;
    }
  trace = g_new0 (Trace, 1);
  trace->last_ok = TRUE;
  trace->handle = chp_store_trace_begin (self->store,
                                         agent != NULL &&
                                         chp_agent_session_get_client_name (agent) != NULL
                                         ? chp_agent_session_get_client_name (agent) : "agent",
                                         device != NULL ? chp_device_get_name (device) : "");
  g_hash_table_insert (self->traces, g_strdup (agent_session_id), trace);
  return trace;
}

/**
 * chp_trace_recorder_step:
 * @agent_session_id: (nullable): the calling agent's session; %NULL records nothing
 * @device_id: (nullable): the browser the call went to
 * @step: (transfer none): masked by the caller; its retry is counted here
 * @shot_tab: the tab to take a screenshot of for this step, or -1
 *
 * Returns: the step's number in its trace, or 0 when nothing was recorded
 */
guint
chp_trace_recorder_step (ChpTraceRecorder *self,
                         const char       *agent_session_id,
                         const char       *device_id,
                         ChpTraceStep     *step,
                         gint64            shot_tab)
{
  Trace *trace;
  guint seq;

  g_return_val_if_fail (CHP_IS_TRACE_RECORDER (self), 0);
  g_return_val_if_fail (step != NULL && step->tool != NULL, 0);

  if (agent_session_id == NULL)
    return 0;
  trace = trace_for (self, agent_session_id, device_id);
  /* The same call again, as the agent tries once more: a retry, counted. */
  step->retry = g_strcmp0 (trace->last_tool, step->tool) == 0 &&
                g_strcmp0 (trace->last_args, step->args) == 0 ? trace->last_retry + 1 : 0;
  seq = chp_store_trace_add_step (self->store, trace->handle, step);
  g_free (trace->last_tool);
  trace->last_tool = g_strdup (step->tool);
  g_free (trace->last_args);
  trace->last_args = g_strdup (step->args);
  trace->last_retry = step->retry;
  trace->last_ok = step->error_code == NULL;
  if (g_strcmp0 (step->stopped_by, "person") == 0)
    trace->stopped = TRUE;

  if (seq != 0 && shot_tab >= 0 && device_id != NULL)
    ask_for_shot (self, trace, device_id, seq, shot_tab);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0, chp_trace_handle_get_id (trace->handle));
  return seq;
}

/* The app is closing: every open trace ends with @outcome. */
void
chp_trace_recorder_end_all (ChpTraceRecorder *self,
                            const char       *outcome)
{
  GHashTableIter iter;
  Trace *trace;

  g_return_if_fail (CHP_IS_TRACE_RECORDER (self));

  g_hash_table_iter_init (&iter, self->traces);
  while (g_hash_table_iter_next (&iter, NULL, (gpointer *) &trace))
    {
      end_trace (self, trace, outcome);
      g_hash_table_iter_remove (&iter);
    }
}

/* Returns: (nullable): the store's id of the agent session's open trace */
const char *
chp_trace_recorder_trace_of (ChpTraceRecorder *self,
                             const char       *agent_session_id)
{
  Trace *trace;

  g_return_val_if_fail (CHP_IS_TRACE_RECORDER (self), NULL);

  trace = agent_session_id != NULL ? g_hash_table_lookup (self->traces, agent_session_id) : NULL;
  return trace != NULL ? chp_trace_handle_get_id (trace->handle) : NULL;
}
