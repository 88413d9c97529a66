/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-types.h: the records of the trace store (chp-store-traces.h): a session, a step, a
 * screenshot, and which sessions to list. Plain boxed structs that cross between the main thread
 * and the database thread. */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

/* What the person was asked, or told, at a step. */
typedef enum
{
  CHP_TRACE_DECISION_NONE,
  CHP_TRACE_DECISION_HOLD,     /* the browser held an act for the person */
  CHP_TRACE_DECISION_PLAN,     /* the agent's plan waited for the person */
  CHP_TRACE_DECISION_HANDOFF,  /* the agent handed the tab to the person */
  CHP_TRACE_DECISION_STOP,     /* the step was stopped (see stopped_by) */
} ChpTraceDecision;

const char       *chp_trace_decision_to_string   (ChpTraceDecision  decision);
ChpTraceDecision  chp_trace_decision_from_string (const char       *text);

/* One agent session as the trace browser lists it. Times are µs since the epoch. */
typedef struct
{
  char    *id;          /* the store's, random: what to load, forget or export by */
  char    *agent;       /* the MCP client's name */
  char    *device;      /* the browser's name */
  gint64   started_at;
  gint64   ended_at;    /* 0 while the session is open */
  gint64   last_at;     /* the last step's time; 0 before any */
  char    *outcome;     /* NULL while open; "interrupted" when the app died before its end */
  guint    n_steps;     /* every step recorded, evicted ones too */
  guint    n_errors;    /* steps with an error code */
  guint    n_asked;     /* steps that waited for the person: hold, plan, hand-off */
  guint    n_approved;  /* of those, what the person approved */
  guint    n_trimmed;   /* oldest steps the cap removed while the session was still open */
  char   **sites;       /* hosts visited, sorted, at most CHP_TRACE_LIST_SITES */
} ChpTraceSession;

#define CHP_TRACE_LIST_SITES 16

#define CHP_TYPE_TRACE_SESSION (chp_trace_session_get_type ())
GType            chp_trace_session_get_type (void);
ChpTraceSession *chp_trace_session_copy     (const ChpTraceSession *session);
void             chp_trace_session_free     (ChpTraceSession       *session);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpTraceSession, chp_trace_session_free)

/* One tool call. The store keeps exactly what it is given, bounded (chp-store-traces.h says
 * how): the caller masks. Never a typed value, a field's content or a query string: @args says
 * a typed text by its length only, @path has no query. */
typedef struct
{
  guint             seq;              /* 1, 2, …: chp_store_trace_add_step() numbers them */
  gint64            at;               /* µs since the epoch; 0 when adding: now */
  char             *tool;             /* "browser_act" */
  char             *args;             /* masked arguments, JSON text */
  gint64            queue_us;         /* waiting to be sent: behind the browser's other calls
                                       * (eight at most at once), or for it to resume */
  gint64            run_us;           /* the rest of the call, from when it was sent */
  gint64            page_us;          /* of which the page's own work (settling) */
  char             *outcome;          /* "ok", "error", "refused", "held", "stopped", … */
  char             *error_code;       /* a protocol error code; NULL on success */
  char             *rung;             /* how it acted: "page" (API later) */
  char             *host;
  char             *path;             /* without query or fragment */
  char             *role;             /* the element's role */
  char             *name;             /* the element's accessible name */
  ChpTraceDecision  decision_kind;
  char             *decision;         /* "approved", "declined", "expired", "done", … */
  gint64            decision_wait_us; /* how long the person took */
  char             *stopped_by;       /* "person", "agent", "app", "browser" */
  guint             retry;            /* 0 on a first try; n for the nth retry */
  char             *snippet;          /* a small masked text of the page, on a failing step */
  /* Read back only. */
  gboolean          has_shot;
} ChpTraceStep;

#define CHP_TYPE_TRACE_STEP (chp_trace_step_get_type ())
GType         chp_trace_step_get_type (void);
ChpTraceStep *chp_trace_step_new      (void);
ChpTraceStep *chp_trace_step_copy     (const ChpTraceStep *step);
void          chp_trace_step_free     (ChpTraceStep       *step);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpTraceStep, chp_trace_step_free)

/* A failing step's screenshot, as stored: a downscaled JPEG. */
typedef struct
{
  GBytes *jpeg;
  guint   width;
  guint   height;
} ChpTraceShot;

#define CHP_TYPE_TRACE_SHOT (chp_trace_shot_get_type ())
GType         chp_trace_shot_get_type (void);
ChpTraceShot *chp_trace_shot_copy     (const ChpTraceShot *shot);
void          chp_trace_shot_free     (ChpTraceShot       *shot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpTraceShot, chp_trace_shot_free)

/* Which sessions to list, newest first. %NULL or 0 matches anything. @search is words, each a
 * prefix of a word of a step's tool, host, path, element name or error code, all in one step. */
typedef struct
{
  char   *search;
  char   *agent;    /* exact */
  char   *outcome;  /* exact */
  char   *site;     /* a host the session visited, exact */
  gint64  since;    /* started at or after, µs */
  gint64  until;    /* started at or before, µs: holds a listing still while sessions begin */
} ChpTraceQuery;

#define CHP_TYPE_TRACE_QUERY (chp_trace_query_get_type ())
GType          chp_trace_query_get_type (void);
ChpTraceQuery *chp_trace_query_new      (void);
ChpTraceQuery *chp_trace_query_copy     (const ChpTraceQuery *query);
void           chp_trace_query_free     (ChpTraceQuery       *query);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (ChpTraceQuery, chp_trace_query_free)

G_END_DECLS
