/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-bench-agent.c: how long the window's main loop stalls while a browser's 16 MiB answer (a
 * big snapshot) goes through the agent's tools: redacted and formatted on the main thread (as
 * before) and in a worker (as now), beside the engine's call alone (the bridge's share: the
 * message reassembled and parsed). A 1 ms timer on the main loop measures the stall. */
#include "config.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include <glib/gstdio.h>

#include "chp-bench-agent.h"
#include "chp-chunk-assembler.h"
#include "chp-crypto.h"
#include "chp-engine.h"
#include "chp-frame.h"
#include "chp-mcp-tools-private.h"   /* chp_mcp_tools_set_reply_in_thread(): the "before" */
#include "chp-test-client.h"

/* Under the bridge's limit for one message, with room for the response's envelope. */
#define ANSWER_BYTES (CHP_CHUNK_MAX_MESSAGE - 4096)

#define TABS_RESULT \
  "{\"tabs\":[{\"tabId\":7,\"windowId\":1,\"title\":\"Catalogue\"," \
  "\"url\":\"https://shop.example/catalogue\",\"origin\":\"https://shop.example\"," \
  "\"active\":true,\"grantId\":\"g1\",\"label\":\"Bench\",\"scopes\":[\"browser.dom.read\"]}]}"

static gint64
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (gint64) ts.tv_sec * G_GINT64_CONSTANT (1000000000) + ts.tv_nsec;
}

static void
rm_rf (const char *path)
{
  g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
  const char *name;

  while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *child = g_build_filename (path, name, NULL);

      if (g_file_test (child, G_FILE_TEST_IS_DIR) && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
        rm_rf (child);
      else
        g_unlink (child);
    }
  g_rmdir (path);
}

static int
cmp_double (gconstpointer a,
            gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return (x > y) - (x < y);
}

static double
median (GArray *values)
{
  if (values->len == 0)
    return NAN;
  g_array_sort (values, cmp_double);
  return g_array_index (values, double, (values->len - 1) / 2);
}

/* A catalogue page as the extension captures it: its text, headings and, for the rest of the
 * budget, one actionable element after another. */
static char *
big_snapshot (gsize  target,
              guint *n_nodes,
              gsize *len)
{
  static const char * const roles[] = { "button", "link", "textbox", "checkbox" };
  static const char * const tags[] = { "button", "a", "input", "input" };
  GString *s = g_string_sized_new (target + 1024);
  guint n = 0;

  g_string_append (s, "{\"url\":\"https://shop.example/catalogue\",\"title\":\"Catalogue\","
                   "\"lang\":\"en\",\"text\":\"");
  for (guint i = 0; s->len < target / 5; i++)
    g_string_append_printf (s, "Product %u: a blue mug with a handle, 350 ml, dishwasher safe. "
                            "In stock, ships in two days.\\n", i);
  g_string_append (s, "\",\"textTruncated\":false,\"headings\":[");
  for (guint i = 0; i < 500; i++)
    g_string_append_printf (s, "%s{\"level\":%u,\"text\":\"Section %u\"}", i > 0 ? "," : "",
                            2 + i % 3, i);
  g_string_append (s, "],\"forms\":[],\"nodes\":[");
  while (s->len < target - 1024)
    {
      guint k = ++n % G_N_ELEMENTS (roles);

      g_string_append_printf (s, "%s{\"ref\":\"cap1abcd:e%u\",\"role\":\"%s\","
                              "\"name\":\"Add product %u to the cart\",\"tag\":\"%s\","
                              "\"state\":{%s}", n > 1 ? "," : "", n, roles[k], n, tags[k],
                              n % 7 == 0 ? "\"disabled\":true" : "");
      if (k == 1)
        g_string_append_printf (s, ",\"href\":\"https://shop.example/p/%u\"", n);
      g_string_append_c (s, '}');
    }
  g_string_append_printf (s, "],\"scanned\":%u,\"nodeCount\":%u,\"truncated\":false,"
                          "\"iframes\":[],\"shadowRoots\":0,\"auth\":{\"passwordField\":false,"
                          "\"otpField\":false,\"signInForm\":false,\"captcha\":false,"
                          "\"qr\":false},\"diff\":null,\"captureId\":\"cap1abcd\",\"tabId\":7,"
                          "\"frameId\":0,\"documentId\":\"DOC1\",\"frames\":[]}", n, n);
  *n_nodes = n;
  *len = s->len;
  return g_string_free (s, FALSE);
}

/* The browser, in this process: it answers browser.tabs with one tab and browser.context with
 * the big snapshot, whose chunks it sends one per main-loop turn, as if from another process, so
 * that what stalls the loop is the app's work, not the browser's. */

typedef struct
{
  ChpTestClient *client;
  const char    *snapshot;
  gsize          snapshot_len;
  gulong         handler;
} Browser;

typedef struct
{
  SoupWebsocketConnection *ws;
  char                    *text;
  gsize                    len;
  char                    *transfer_id;
  gint64                   index;
  gint64                   total;
} Sending;

static void
sending_free (gpointer data)
{
  Sending *s = data;

  g_object_unref (s->ws);
  g_free (s->text);
  g_free (s->transfer_id);
  g_free (s);
}

static gboolean
send_chunk_cb (gpointer data)
{
  Sending *s = data;
  gsize offset = s->index * (gsize) CHP_CHUNK_SIZE;
  g_autofree char *frame = chp_frame_build_chunk (s->transfer_id, s->index, s->total, s->len,
                                                  (const guint8 *) s->text + offset,
                                                  MIN (CHP_CHUNK_SIZE, s->len - offset));

  soup_websocket_connection_send_text (s->ws, frame);
  return ++s->index < s->total ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static void
browser_respond (Browser    *b,
                 const char *id,
                 const char *result,
                 gsize       result_len)
{
  GString *text = g_string_sized_new (result_len + 128);
  Sending *s;

  /* The envelope as the frame writer makes it, around the result's JSON made once. */
  chp_frame_write_response (text, id, NULL);
  g_string_truncate (text, text->len - strlen ("null}"));
  g_string_append_len (text, result, result_len);
  g_string_append_c (text, '}');

  if (text->len <= CHP_CHUNK_THRESHOLD)
    {
      soup_websocket_connection_send_text (b->client->ws, text->str);
      g_string_free (text, TRUE);
      return;
    }

  s = g_new0 (Sending, 1);
  s->ws = g_object_ref (b->client->ws);
  s->len = text->len;
  s->text = g_string_free (text, FALSE);
  s->transfer_id = chp_random_b64url (12);
  s->total = (s->len + CHP_CHUNK_SIZE - 1) / CHP_CHUNK_SIZE;
  g_idle_add_full (G_PRIORITY_DEFAULT_IDLE, send_chunk_cb, s, sending_free);
}

static void
browser_message_cb (SoupWebsocketConnection *ws,
                    gint                     type,
                    GBytes                  *message,
                    gpointer                 user_data)
{
  Browser *b = user_data;
  gsize len;
  const char *data = g_bytes_get_data (message, &len);
  g_autoptr(ChpFrame) frame = chp_frame_parse (data, len, NULL);

  if (frame == NULL)
    return;

  if (frame->type == CHP_FRAME_PING)
    {
      g_autofree char *pong = chp_frame_build_pong (frame->sequence, frame->timestamp,
                                                    g_get_real_time () / 1000);

      soup_websocket_connection_send_text (ws, pong);
    }
  else if (frame->type == CHP_FRAME_REQUEST && g_str_equal (frame->method, "browser.context"))
    browser_respond (b, frame->id, b->snapshot, b->snapshot_len);
  else if (frame->type == CHP_FRAME_REQUEST && g_str_equal (frame->method, "browser.tabs"))
    browser_respond (b, frame->id, TABS_RESULT, strlen (TABS_RESULT));
  else if (frame->type == CHP_FRAME_REQUEST)
    browser_respond (b, frame->id, "{}", 2);
}

static gboolean
device_online (gpointer data)
{
  return chp_device_get_online (data);
}

static gboolean
browser_connect (Browser   *b,
                 ChpEngine *engine,
                 guint      port)
{
  g_autofree char *code = NULL;
  g_autoptr(ChpPairingRequest) request = NULL;
  GListModel *requests = G_LIST_MODEL (chp_engine_get_pairing (engine));
  ChpDevice *device;

  b->client = chp_test_client_new (port, NULL);
  code = chp_test_client_begin_pairing (b->client, NULL);
  if (code == NULL || g_list_model_get_n_items (requests) != 1)
    return FALSE;
  request = g_list_model_get_item (requests, 0);
  chp_pairing_request_approve (request, FALSE);
  if (!chp_test_client_finish_pairing (b->client) || !chp_test_client_connect (b->client, NULL))
    return FALSE;
  device = chp_device_list_lookup (chp_engine_get_devices (engine), b->client->device_id);
  if (device == NULL || !chp_test_spin_until (device_online, device, 5000))
    return FALSE;

  /* From here on this handler answers, not the test client's. */
  g_signal_handlers_disconnect_by_data (b->client->ws, b->client);
  b->handler = g_signal_connect (b->client->ws, "message", G_CALLBACK (browser_message_cb), b);
  return TRUE;
}

/* The stall: the longest gap between two runs of a 1 ms timer on the main loop. */

typedef struct
{
  gint64 last;
  gint64 max;
} Stall;

static gboolean
tick_cb (gpointer data)
{
  Stall *s = data;
  gint64 now = now_ns ();

  s->max = MAX (s->max, now - s->last);
  s->last = now;
  return G_SOURCE_CONTINUE;
}

typedef struct
{
  gboolean  done;
  JsonNode *result;
  GError   *error;
} Waiting;

static gboolean
is_done (gpointer data)
{
  return ((Waiting *) data)->done;
}

static void
engine_answered_cb (GObject      *source,
                    GAsyncResult *result,
                    gpointer      user_data)
{
  Waiting *w = user_data;

  w->result = chp_engine_agent_call_finish (CHP_ENGINE (source), result, &w->error);
  w->done = TRUE;
}

static void
tool_answered_cb (GObject      *source,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  Waiting *w = user_data;

  w->result = chp_mcp_tools_call_finish (CHP_MCP_TOOLS (source), result, &w->error);
  w->done = TRUE;
}

/* One browser.context, through the engine alone (@tools NULL) or as browser_snapshot. The
 * answer is let go after the clock stops: what is timed is what the call costs on its way. */
static gboolean
measure_one (ChpEngine     *engine,
             const char    *device_id,
             ChpMcpTools   *tools,
             ChpMcpContext *context,
             double        *stall_ms,
             double        *total_ms)
{
  Stall stall = { now_ns (), 0 };
  Waiting w = { 0, };
  guint timer = g_timeout_add (1, tick_cb, &stall);
  gint64 start = now_ns ();
  gboolean ok;

  if (tools == NULL)
    {
      g_autoptr(JsonNode) params = json_from_string ("{\"tabId\":7,\"frameId\":0}", NULL);

      chp_engine_agent_call_async (engine, device_id, "browser.context", params, 60000, NULL,
                                   engine_answered_cb, &w);
    }
  else
    {
      g_autoptr(JsonNode) args = json_from_string ("{\"tab\":\"b1:7\"}", NULL);

      chp_mcp_tools_call_async (tools, context, "browser_snapshot", json_node_get_object (args),
                                NULL, NULL, NULL, NULL, tool_answered_cb, &w);
    }
  chp_test_spin_until (is_done, &w, 120000);
  *total_ms = (now_ns () - start) / 1e6;
  g_source_remove (timer);
  *stall_ms = MAX (stall.max, now_ns () - stall.last) / 1e6;

  ok = w.done && w.result != NULL &&
       (tools == NULL ||
        !json_object_get_boolean_member_with_default (json_node_get_object (w.result),
                                                      "isError", FALSE));
  if (!ok)
    g_printerr ("bench: the %s call failed: %s\n", tools == NULL ? "engine's" : "tool's",
                w.error != NULL ? w.error->message : "see its result");
  g_clear_pointer (&w.result, json_node_unref);
  g_clear_error (&w.error);
  return ok;
}

/* One browser_act fill, timed from the call to its result, in µs; < 0 when it failed. */
static double
measure_act (ChpMcpTools   *tools,
             ChpMcpContext *context,
             const char    *ref,
             int            i)
{
  g_autofree char *text = g_strdup_printf ("{\"tab\":\"b1:7\",\"ref\":\"%s\","
                                           "\"action\":\"fill\",\"value\":\"word %d\"}",
                                           ref, i);
  g_autoptr(JsonNode) args = json_from_string (text, NULL);
  Waiting w = { 0, };
  gint64 start = now_ns ();
  double us;

  chp_mcp_tools_call_async (tools, context, "browser_act", json_node_get_object (args),
                            NULL, NULL, NULL, NULL, tool_answered_cb, &w);
  chp_test_spin_until (is_done, &w, 10000);
  us = (now_ns () - start) / 1e3;
  if (!w.done || w.result == NULL ||
      json_object_get_boolean_member_with_default (json_node_get_object (w.result), "isError",
                                                   FALSE))
    us = -1;
  g_clear_pointer (&w.result, json_node_unref);
  g_clear_error (&w.error);
  return us;
}

/* The first element's ref in the agent's latest snapshot of the bench tab: "1:e1" style. */
static char *
first_ref (ChpMcpTools   *tools,
           ChpMcpContext *context)
{
  g_autoptr(JsonNode) args = json_from_string ("{\"tab\":\"b1:7\"}", NULL);
  Waiting w = { 0, };
  const char *text, *open, *close;
  char *ref = NULL;

  chp_mcp_tools_call_async (tools, context, "browser_snapshot", json_node_get_object (args),
                            NULL, NULL, NULL, NULL, tool_answered_cb, &w);
  chp_test_spin_until (is_done, &w, 120000);
  text = w.result != NULL
         ? json_object_get_string_member (json_array_get_object_element (
             json_object_get_array_member (json_node_get_object (w.result), "content"), 0), "text")
         : NULL;
  open = text != NULL ? strstr (text, "\n[") : NULL;
  close = open != NULL ? strchr (open, ']') : NULL;
  if (close != NULL)
    ref = g_strndup (open + 2, close - open - 2);
  g_clear_pointer (&w.result, json_node_unref);
  g_clear_error (&w.error);
  return ref;
}

/* What tracing adds to a tool call: small acts, traced and not in turn, so that drift on a
 * shared machine hits both alike. */
static void
measure_tracing (ChpMcpTools   *tools,
                 ChpMcpContext *context,
                 int            calls,
                 ChpBenchAgent *out)
{
  g_autoptr(GArray) traced = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) untraced = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *ref = first_ref (tools, context);

  if (ref == NULL)
    {
      g_printerr ("bench: no element to act on in the bench snapshot\n");
      out->failures++;
      return;
    }
  for (int i = 0; i < 2 * calls; i++)
    {
      double us;

      chp_mcp_tools_set_tracing (tools, i % 2 == 0);
      us = measure_act (tools, context, ref, i);
      if (us < 0)
        out->failures++;
      else
        g_array_append_val (i % 2 == 0 ? traced : untraced, us);
    }
  chp_mcp_tools_set_tracing (tools, TRUE);
  out->act_calls = calls;
  out->act_traced_us = median (traced);
  out->act_untraced_us = median (untraced);
}

static gboolean
never (gpointer data)
{
  return FALSE;
}

void
chp_bench_agent_measure (int            repeats,
                         ChpBenchAgent *out)
{
  g_autoptr(GArray) engine_stall = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) engine_total = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) main_stall = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) main_total = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) worker_stall = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) worker_total = g_array_new (FALSE, FALSE, sizeof (double));
  g_autofree char *dir = NULL;
  g_autofree char *snapshot = NULL;
  g_autoptr(ChpEngine) engine = NULL;
  g_autoptr(ChpMcpTools) tools = NULL;
  g_autoptr(ChpMcpContext) context = NULL;
  Browser browser = { 0, };
  Waiting w = { 0, };
  guint port = 0;

  out->repeats = repeats;
  snapshot = big_snapshot (ANSWER_BYTES, &out->nodes, &out->answer_bytes);
  browser.snapshot = snapshot;
  browser.snapshot_len = out->answer_bytes;

  engine = chp_test_engine_start ("chp-bench-agent-XXXXXX", &dir, &port);
  if (!browser_connect (&browser, engine, port))
    {
      g_printerr ("bench: could not pair and connect the agent bench's browser\n");
      out->failures++;
      goto out;
    }
  tools = chp_mcp_tools_new (engine);
  context = chp_mcp_context_new ("bench");

  /* browser_tabs first: it gives the browser the name (b1) the snapshot's tab id uses. */
  chp_mcp_tools_call_async (tools, context, "browser_tabs", NULL, NULL, NULL, NULL, NULL,
                            tool_answered_cb, &w);
  chp_test_spin_until (is_done, &w, 10000);
  g_clear_pointer (&w.result, json_node_unref);
  g_clear_error (&w.error);

  /* One of each first, not counted; then the three kinds in turn, so that drift on a shared
   * machine hits them alike. */
  for (int i = -1; i < repeats; i++)
    {
      double stall, total;

      if (!measure_one (engine, browser.client->device_id, NULL, NULL, &stall, &total))
        out->failures++;
      else if (i >= 0)
        {
          g_array_append_val (engine_stall, stall);
          g_array_append_val (engine_total, total);
        }

      chp_mcp_tools_set_reply_in_thread (tools, FALSE);
      if (!measure_one (engine, browser.client->device_id, tools, context, &stall, &total))
        out->failures++;
      else if (i >= 0)
        {
          g_array_append_val (main_stall, stall);
          g_array_append_val (main_total, total);
        }

      chp_mcp_tools_set_reply_in_thread (tools, TRUE);
      if (!measure_one (engine, browser.client->device_id, tools, context, &stall, &total))
        out->failures++;
      else if (i >= 0)
        {
          g_array_append_val (worker_stall, stall);
          g_array_append_val (worker_total, total);
        }
      /* The worker that lets the answer go finishes before the next call is timed. */
      chp_test_spin_until (never, NULL, 300);
    }

  measure_tracing (tools, context, 400, out);

out:
  out->engine_stall_ms = median (engine_stall);
  out->engine_total_ms = median (engine_total);
  out->main_stall_ms = median (main_stall);
  out->main_total_ms = median (main_total);
  out->worker_stall_ms = median (worker_stall);
  out->worker_total_ms = median (worker_total);

  if (browser.client != NULL)
    {
      g_clear_signal_handler (&browser.handler, browser.client->ws);
      chp_test_client_free (browser.client);
    }
  g_clear_object (&context);
  g_clear_object (&tools);
  if (engine != NULL)
    chp_test_finalize_object (g_steal_pointer (&engine));
  if (dir != NULL)
    rm_rf (dir);
}
