/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-trace-store-util.h: what the trace store's tests share: a store opened on a real file
 * in a temporary folder, its calls waited for, and the trace file read directly. */
#pragma once

#include <sqlite3.h>

#include "chp-store-traces.h"

G_BEGIN_DECLS

char          *tt_make_tmp        (void);
void           tt_remove_tmp      (const char           *dir);
ChpStore      *tt_open_store      (const char           *path,
                                   GError              **error);
void           tt_close_store     (ChpStore            **store);
gboolean       tt_flush           (ChpStore             *store,
                                   GError              **error);
GPtrArray     *tt_list            (ChpStore             *store,
                                   const ChpTraceQuery  *query,
                                   guint                 offset,
                                   guint                 limit);
GPtrArray     *tt_steps           (ChpStore             *store,
                                   const char           *session_id,
                                   guint                 after_seq,
                                   guint                 limit,
                                   GError              **error);
ChpTraceShot  *tt_shot            (ChpStore             *store,
                                   const char           *session_id,
                                   guint                 seq,
                                   GError              **error);
gboolean       tt_forget          (ChpStore             *store,
                                   const char           *session_id,
                                   GError              **error);
guint64        tt_size            (ChpStore             *store);
GPtrArray     *tt_search          (ChpStore             *store,
                                   const char           *search);
GBytes        *tt_fake_jpeg       (gsize                 size,
                                   guint8                fill);

/* The trace file opened directly, after the store is closed. */
sqlite3       *tt_open_file       (const char           *path);
gint64         tt_file_int        (sqlite3              *db,
                                   const char           *sql);
char          *tt_file_text       (sqlite3              *db,
                                   const char           *sql);
void           tt_assert_file_ok  (const char           *path);

G_END_DECLS
