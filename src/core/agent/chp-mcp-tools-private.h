/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-mcp-tools-private.h: the inside of ChpMcpTools, shared by the files that make it: the table's
 * entry, one call on its way, and what every tool family (tools/) uses to answer. */
#pragma once

#include "chp-mcp-tools.h"

#include "chp-engine.h"
#include "chp-json-util.h"
#include "chp-mcp-format.h"
#include "chp-protocol-error.h"
#include "chp-site-types.h"

G_BEGIN_DECLS

/* How long each browser request may take. A snapshot of a 10,000-element page takes well under a
 * second; navigation waits up to 15 s for the page to commit in the extension. All of them stay
 * under the MCP clients' usual 60 s request timeout. */
#define TABS_TIMEOUT_MS      10000
#define CONTEXT_TIMEOUT_MS   20000
#define NODE_TIMEOUT_MS      20000
#define NAVIGATE_TIMEOUT_MS  25000
#define HANDOFF_TIMEOUT_MS   10000
#define STATUS_TIMEOUT_MS     5000

/* The loop guard (DESIGN §8): the same act on the same target this many times in a row, or this
 * many failures in a row on one tab, pause the agent until the person resumes it. */
#define LOOP_REPEATS           3
#define LOOP_FAILURES          3
/* A key that only moves (an arrow, Tab, Page Up…) is pressed again and again to get somewhere: a
 * slider's thumb, a list's item, the next field. */
#define LOOP_MOVE_REPEATS     25

struct _ChpMcpTools
{
  GObject parent_instance;

  GWeakRef engine;          /* the engine owns us: no reference back */
  guint result_max_chars;
  JsonNode *list;           /* sealed array of Tool objects */
  GPtrArray *inputs;        /* JsonObject per tool: the input schema arguments are checked with */
  GHashTable *aliases;      /* device id → "bN" */
  GHashTable *devices;      /* "bN" → device id */
  guint next_alias;
  GQueue replies;           /* browsers' answers waiting for their turn (chp-mcp-reply.c) */
  gboolean reply_busy;      /* one of them is with its worker or its tool */
  gboolean reply_in_thread; /* FALSE only for the benchmark's "before" */
  gboolean tracing;         /* FALSE only for the benchmark's "without" (chp-mcp-trace.c) */
};

typedef struct _ToolCall ToolCall;
typedef struct _WaitKind WaitKind;
typedef void (*ToolRun) (ToolCall *call);

/* One tool of the table (chp-mcp-tools.c); its run is in tools/, one file per family. */
typedef struct
{
  const char  *name;
  const char  *title;
  const char  *description;
  gboolean     read_only;
  gboolean     destructive;
  gboolean     idempotent;
  gboolean     open_world;
  JsonObject *(*input) (void);
  JsonObject *(*output) (void);
  ToolRun      run;
} ToolSpec;

/* One tool call on its way: the task's data. */
struct _ToolCall
{
  GTask              *task;          /* not a reference: the task owns this */
  ChpMcpTools        *self;
  const ToolSpec     *spec;
  ChpMcpContext      *context;
  JsonObject         *args;
  ChpMcpProgressFunc  progress;
  gpointer            progress_data;
  GDestroyNotify      progress_destroy;
  double              progress_done;
  gint64              started_us;
  /* How long its requests waited before they went to the browser (the trace's queue time), and
   * until when: waits that overlap (browser_tabs asks every browser at once) count once. */
  gint64              queue_us;
  gint64              queue_until_us;
  char               *marker;        /* the result's (chp_mcp_format_new_marker()) */
  char               *device_id;     /* for the audit */
  char               *alias;
  gint64              tab_id;

  /* browser_tabs */
  GPtrArray          *targets;
  guint               pending;

  /* browser_snapshot, browser_inspect, browser_act: the agent's ref and the document it names */
  char               *ref;
  JsonObject         *document;

  /* browser_act, while the page is read again for its diff: the act's own result so far; and
   * whether the page was asked to read itself again once the act settled (capture) */
  char               *act_text;
  JsonObject         *act_structured;
  gboolean            act_capture;

  /* browser_api: the entry called, and its path template for the trace */
  JsonObject         *api_entry;
  char               *api_path;

  /* browser_snapshot: the arrival card from the site's memory, said first */
  char               *site_card;

  /* browser_wait */
  char               *wait_id;
  const WaitKind     *wait_kind;
  char               *handoff_id;     /* or the hold's id, or the plan's */
  JsonObject         *final_extra;    /* a hold's changes or error, a plan's progress */
  char               *final_state;
  char               *final_by;
  guint               timeout_ms;
  gulong              changed_handler;
  gulong              stopped_handler;
  gulong              cancel_handler;
  guint               timeout_source;
  guint               tick_source;
  gboolean            status_known;
  gboolean            finished;
  /* The loop guard paused the agent in this call: its pause cancels the call, and the answer
   * must still be the guard's own (why), not a cancellation. */
  gboolean            guard_paused;
};

static inline ToolCall *
call_of (GTask *task)
{
  return g_task_get_task_data (task);
}

/* How a tool formats a browser's answer off the main thread (chp-mcp-reply.c). */
typedef struct
{
  /* On the main thread, when the answer's turn comes: what the formatting needs of the app's
   * state (the agent's memory, the call's names), copied or referenced, in data that the main
   * thread then leaves alone until the tool has the answer. */
  gpointer (*prepare) (ToolCall *call);
  /* In a worker thread, on the redacted answer: reads @answer and @data, fills @data, and
   * touches nothing else. */
  void     (*format)  (gpointer  data,
                       JsonNode *answer);
  GDestroyNotify free;
  /* Nothing the tool keeps or answers shares a value with the answer (format copied what it
   * keeps with chp_tool_json_copy_deep()): the answer is then let go in a worker too. */
  gboolean       unshared;
} ReplyFormat;

/* chp-mcp-schemas.c: what each tool takes and gives (JSON Schema) */
JsonObject    *chp_tool_tabs_input           (void);
JsonObject    *chp_tool_tabs_output          (void);
JsonObject    *chp_tool_snapshot_input       (void);
JsonObject    *chp_tool_snapshot_output      (void);
JsonObject    *chp_tool_inspect_input        (void);
JsonObject    *chp_tool_inspect_output       (void);
JsonObject    *chp_tool_act_input            (void);
JsonObject    *chp_tool_act_output           (void);
JsonObject    *chp_tool_navigate_input       (void);
JsonObject    *chp_tool_navigate_output      (void);
JsonObject    *chp_tool_handoff_input        (void);
JsonObject    *chp_tool_handoff_output       (void);
JsonObject    *chp_tool_wait_input           (void);
JsonObject    *chp_tool_wait_output          (void);
JsonObject    *chp_tool_plan_input           (void);
JsonObject    *chp_tool_plan_output          (void);
JsonObject    *chp_tool_history_input        (void);
JsonObject    *chp_tool_history_output       (void);
JsonObject    *chp_tool_stop_input           (void);
JsonObject    *chp_tool_stop_output          (void);
JsonObject    *chp_tool_network_input        (void);
JsonObject    *chp_tool_network_output       (void);
JsonObject    *chp_tool_api_input            (void);
JsonObject    *chp_tool_api_output           (void);
JsonObject    *chp_tool_batch_input          (void);
JsonObject    *chp_tool_batch_output         (void);

/* chp-mcp-args.c: the arguments, checked before anything happens */
gboolean       chp_tool_check_arguments      (const ToolSpec  *spec,
                                              JsonObject      *schema,
                                              JsonObject      *args,
                                              GError         **error);
gboolean       chp_tool_check_semantics      (const ToolSpec  *spec,
                                              JsonObject      *args,
                                              GError         **error);
gboolean       chp_tool_node_is_integer      (JsonNode        *node,
                                              gint64          *out);
gint64         chp_tool_int_argument         (JsonObject      *args,
                                              const char      *name,
                                              gint64           fallback);

/* chp-mcp-loop-guard.c: an agent that repeats itself is paused */
/* On a call's task: the code of a batch that halted, which the guard counts as a failed act. */
#define CHP_LOOP_FAILURE_KEY "chp-loop-failure"
gboolean       chp_tool_loop_guard_enter     (ToolCall        *call);
gboolean       chp_tool_loop_guard_failed    (ToolCall        *call,
                                              const char      *code);

/* chp-mcp-trace.c: the call as a step of its agent session's trace, masked */
char          *chp_tool_trace_mask_args      (JsonObject      *args);
void           chp_tool_trace                (ToolCall        *call,
                                              const char      *outcome,
                                              const char      *code,
                                              JsonNode        *result);

/* chp-mcp-tools.c: finishing a call */
void           chp_tool_audit                (ToolCall        *call,
                                              const char      *outcome,
                                              const char      *code);
void           chp_tool_return               (GTask           *task,
                                              JsonNode        *result,
                                              const char      *code);
void           chp_tool_return_ok            (GTask           *task,
                                              const char      *text,
                                              JsonObject      *structured,
                                              const char      *how_to_get_more);
void           chp_tool_return_error         (GTask           *task,
                                              const char      *code,
                                              const char      *message,
                                              const char      *browser_detail);
void           chp_tool_return_gerror        (GTask           *task,
                                              const GError    *error,
                                              const char      *what);
void           chp_tool_progress             (ToolCall        *call,
                                              double           total,
                                              const char      *message);

/* chp-mcp-targets.c: what a call is about — browsers, tabs, documents and refs — and the
 * floor's say on the page */
const char    *chp_tool_alias_of             (ChpMcpTools     *self,
                                              const char      *device_id);
void           chp_tool_see_devices          (ChpMcpTools     *self,
                                              ChpEngine       *engine);
gboolean       chp_tool_resolve_tab          (GTask           *task,
                                              const char      *tab);
char          *chp_tool_tab_name             (ToolCall        *call);
char          *chp_tool_tab_url              (ToolCall        *call);
JsonNode      *chp_tool_params_new           (const char      *first_member,
                                              ...);
JsonNode      *chp_tool_int_node             (gint64           value);
JsonNode      *chp_tool_string_node          (const char      *value);
ChpFloorLevel  chp_tool_floor_level          (ChpUrlFloor     *floor,
                                              const char      *url,
                                              gboolean         password,
                                              const char     **reason);
gboolean       chp_tool_floor_allows         (GTask           *task,
                                              const char      *url,
                                              gboolean         acting,
                                              gboolean         password);
char          *chp_tool_frame_key            (ToolCall        *call,
                                              gint64           frame_id);
char          *chp_tool_document_key         (gint64           document);
gint64         chp_tool_document_count       (ChpMcpContext   *context);
gint64         chp_tool_next_document        (ChpMcpContext   *context);
void           chp_tool_remember_object      (ChpMcpContext   *context,
                                              const char      *key,
                                              JsonObject      *object);
JsonObject    *chp_tool_recall_object        (ChpMcpContext   *context,
                                              const char      *key);
gboolean       chp_tool_resolve_ref          (GTask           *task,
                                              const char      *ref,
                                              char           **wire_ref);
const char    *chp_tool_document_origin      (ToolCall        *call);
gboolean       chp_tool_is_plain_id          (const char      *id);

/* chp-mcp-reply.c: a request to a browser, and its answer, redacted and formatted off the
 * main thread */
void           chp_tool_agent_call           (ChpMcpTools     *self,
                                              ChpEngine       *engine,
                                              const char      *device_id,
                                              const char      *method,
                                              JsonNode        *params,
                                              guint            timeout_ms,
                                              GCancellable    *cancellable,
                                              const ReplyFormat *format,
                                              ToolCall        *call,
                                              GAsyncReadyCallback callback,
                                              gpointer         user_data);
JsonNode      *chp_tool_reply_finish         (GAsyncResult    *result,
                                              GError         **error);
gpointer       chp_tool_reply_get_data       (GAsyncResult    *result);
JsonObject    *chp_tool_reply_get_rule_run   (GAsyncResult    *result);
JsonNode      *chp_tool_json_copy_deep       (JsonNode        *node);
void           chp_tool_browser_call         (GTask           *task,
                                              const char      *method,
                                              JsonNode        *params,
                                              guint            timeout_ms,
                                              GAsyncReadyCallback callback);
void           chp_tool_browser_call_format  (GTask           *task,
                                              const char      *method,
                                              JsonNode        *params,
                                              guint            timeout_ms,
                                              const ReplyFormat *format,
                                              GAsyncReadyCallback callback);
JsonObject    *chp_tool_browser_answer       (GTask           *task,
                                              GObject         *source,
                                              GAsyncResult    *result,
                                              const char      *what);
void           chp_mcp_tools_set_reply_in_thread (ChpMcpTools *self,
                                                  gboolean     in_thread);
void           chp_mcp_tools_set_tracing     (ChpMcpTools     *self,
                                              gboolean         tracing);
void           chp_tool_copy_typed           (JsonObject      *to,
                                              JsonObject      *from,
                                              const char      *member,
                                              GType            type);

/* tools/: one file per family, as the extension has them (extension/lib/capabilities/) */
void           chp_tool_tabs                 (ToolCall        *call);
void           chp_tool_snapshot             (ToolCall        *call);
void           chp_tool_inspect              (ToolCall        *call);
void           chp_tool_act                  (ToolCall        *call);
void           chp_tool_navigate             (ToolCall        *call);
void           chp_tool_handoff              (ToolCall        *call);
void           chp_tool_wait                 (ToolCall        *call);
void           chp_tool_plan                 (ToolCall        *call);
void           chp_tool_history              (ToolCall        *call);
void           chp_tool_stop                 (ToolCall        *call);
void           chp_tool_network              (ToolCall        *call);
void           chp_tool_api                  (ToolCall        *call);
void           chp_tool_batch                (ToolCall        *call);

/* tools/chp-tool-read.c, for browser_act's diff: a capture formatted off the main thread and
 * kept as the agent's latest snapshot */
typedef struct _SnapshotJob SnapshotJob;

SnapshotJob   *chp_tool_snapshot_job_new     (ToolCall        *call,
                                              gint64           frame,
                                              gboolean         diff,
                                              guint            page,
                                              const char      *query,
                                              guint            max_chars);
void           chp_tool_snapshot_job_free    (gpointer         data);
void           chp_tool_snapshot_format      (gpointer         data,
                                              JsonNode        *answer);
ChpMcpSnapshot *chp_tool_remember_snapshot   (ToolCall        *call,
                                              JsonObject      *answer,
                                              SnapshotJob     *job,
                                              gint64          *out_document);
gboolean       chp_tool_capture_has_password (JsonObject      *answer);

/* tools/chp-tool-plan.c: the person's approved plan, for every tool that writes */
JsonNode      *chp_tool_plan_allowance       (ToolCall        *call);
gboolean       chp_tool_act_may_write        (const char      *action);
void           chp_tool_plan_step_used       (ToolCall        *call,
                                              JsonObject      *answer,
                                              JsonObject      *structured,
                                              GString         *text);

/* tools/chp-tool-held.c: a write the browser held, for the person or for their rule */
void           chp_tool_return_held          (GTask           *task,
                                              JsonObject      *answer,
                                              const char      *action,
                                              JsonObject      *ruled);
gboolean       chp_tool_rule_ran_ok          (JsonObject      *ruled);
gboolean       chp_tool_batch_held           (GTask           *task,
                                              JsonObject      *answer,
                                              guint            n,
                                              const char      *what,
                                              JsonObject      *ruled,
                                              JsonObject      *structured,
                                              GString         *text);

/* tools/chp-tool-site.c: what snapshots teach the site memory, and its arrival card */
typedef void (*ChpSiteThen) (GTask *task);
void           chp_tool_site_learn_page      (ToolCall        *call,
                                              JsonObject      *answer,
                                              gint64           frame);
void           chp_tool_site_learn_signin    (ToolCall        *call,
                                              JsonObject      *answer,
                                              gint64           frame);
gboolean       chp_tool_site_load_card       (GTask           *task,
                                              ChpSiteThen      then);
void           chp_tool_site_remember_recipe (ToolCall        *call,
                                              const char      *site,
                                              const char      *name,
                                              JsonArray       *given,
                                              GPtrArray       *names,
                                              GString         *text);
void           chp_tool_site_recipe_used     (ToolCall        *call,
                                              const char      *site,
                                              const char      *name);

/* tools/chp-tool-api.c, for browser_batch's api steps: the tab's site and its learned entries */
typedef void (*ChpApiThen) (GTask      *task,
                            const char *site,
                            JsonArray  *entries);
char          *chp_tool_api_site_origin      (ToolCall        *call);
void           chp_tool_api_record           (ToolCall        *call,
                                              const char      *entry_id,
                                              gboolean         success,
                                              gint             status,
                                              JsonObject      *answer);
void           chp_tool_api_with_entries     (GTask           *task,
                                              ChpApiThen       then);
ChpSiteRecord *chp_tool_api_site_record      (GTask           *task);
void           chp_tool_api_record_uses      (ToolCall        *call,
                                              GArray          *uses);

/* A key for browser_act press: modifiers joined with "+", then a key name or one character. The
 * extension checks the same form (lib/capabilities/act.js) and the name against its key table. */
#define CHP_TOOL_KEY_PATTERN "^((Control|Ctrl|Shift|Alt|Option|Meta|Cmd|Command)\\+){0,4}" \
                             "([A-Za-z][A-Za-z0-9]{1,15}|[^\\s+]|\\+)$"
/* A ref, as browser_snapshot gives them ("3:e12"). */
#define CHP_TOOL_REF_PATTERN  "^[1-9][0-9]{0,8}:[A-Za-z0-9_-]{1,32}$"
/* browser_batch: its bounds, and the form of a recipe's name and of a {{placeholder}} */
#define CHP_BATCH_MAX_STEPS   50
#define CHP_BATCH_WAIT_MAX_MS 10000
#define CHP_RECIPE_PATTERN    "^[a-z][a-z0-9-]{0,31}$"
#define CHP_PLACEHOLDER_RE    "^\\{\\{[A-Za-z_][A-Za-z0-9_]{0,31}\\}\\}$"

/* tools/chp-tool-handoff.c, for the check of browser_wait's id */
const WaitKind *chp_tool_wait_kind_of        (const char      *id);

G_END_DECLS
