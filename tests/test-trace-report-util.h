/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-trace-report-util.h: what the trace report's tests share: sessions recorded through the
 * store's own calls on real files, the secrets planted in them, and a scan of a file's bytes. */
#pragma once

#include "chp-store-traces.h"

G_BEGIN_DECLS

/* What the person typed: the recorder masks it to its length, so it never reaches the store. */
#define TR_TYPED_SECRET  "hunter2-SECRET-abc"
/* Token-looking texts a page put in an element's name, a path and a snippet: they do reach the
 * store (a recorder that missed them), and the export's redaction must catch them. */
#define TR_GITHUB_TOKEN  "ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
#define TR_AWS_KEY       "AKIAIOSFODNN7EXAMPLE"
#define TR_JWT_SIGNATURE "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
#define TR_JWT           "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." TR_JWT_SIGNATURE
#define TR_SNIPPET_PASSWORD "Zq9-correct-horse-77"
/* Page-derived text that would be markup if it were not escaped. */
#define TR_HOSTILE       "</script><img src=x onerror=alert(1)>"
#define TR_QUOTED        "Say \"hi\" & 'bye'"

typedef struct
{
  char *older_id;   /* ended "ok": a navigation, a held act, a failing act with a screenshot */
  char *newer_id;   /* ended "stopped": the hostile and token-looking texts */
} TrRecorded;

void         tr_recorded_clear     (TrRecorded   *recorded);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TrRecorded, tr_recorded_clear)

char        *tr_make_tmp           (void);
void         tr_remove_tree        (const char   *dir);
ChpStore    *tr_open_store         (const char   *data_dir);
void         tr_flush              (ChpStore     *store);
void         tr_close_store        (ChpStore    **store);
GBytes      *tr_tiny_jpeg          (void);
void         tr_record             (ChpStore     *store,
                                    TrRecorded   *recorded);
void         tr_record_in          (const char   *data_dir,
                                    TrRecorded   *recorded);

char        *tr_read_file          (const char   *path,
                                    gsize        *len);
void         tr_assert_no_secrets  (const char   *path);

G_END_DECLS
