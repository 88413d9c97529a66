/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-trace-list-private.h: the inside of ChpTraceList, shared by chp-trace-list.c (the model,
 * its pages) and chp-trace-list-refresh.c (starting over, following changes). */
#pragma once

#include "chp-trace-list.h"

G_BEGIN_DECLS

struct _ChpTraceList
{
  GObject parent_instance;

  ChpStore *store;
  ChpTraceQuery *query;     /* the filters; since and until are the person's */
  GCancellable *cancellable;

  GPtrArray *slots;         /* ChpTraceItem, or NULL where one was dropped: one per position */
  gboolean more;            /* the last slot stands for sessions not read yet */
  guint n_held;             /* slots that are not NULL */
  guint last_asked;         /* where the view looks */

  gint64 until;             /* the snapshot: sessions started later are not listed yet */
  guint generation;         /* moves on every reset: older reads are dropped */
  guint inserted;           /* sessions inserted at the top since the reset */

  GHashTable *dirty;        /* ids told changed since the running refresh began */
  gboolean dirty_all;
  gboolean resetting;       /* the first page of a new listing is being read */
  gboolean refreshing;
  gboolean refresh_again;
  guint refresh_pending;    /* pages the running refresh reads again */

  gboolean loading;
  GPtrArray *agents;        /* the agents seen, sorted, NULL-terminated */
};

/* chp-trace-list.c */
void chp_trace_list_update_loading (ChpTraceList *self);
void chp_trace_list_note_agent     (ChpTraceList *self,
                                    const char   *agent);
void chp_trace_list_read_page      (ChpTraceList *self,
                                    guint         offset,
                                    gboolean      first,
                                    gboolean      again);
void chp_trace_list_notify_count   (ChpTraceList *self);

/* chp-trace-list-refresh.c */
void chp_trace_list_reset          (ChpTraceList *self);
void chp_trace_list_start_refresh  (ChpTraceList *self);
void chp_trace_list_refresh_done   (ChpTraceList *self);

G_END_DECLS
