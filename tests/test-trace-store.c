/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-trace-store.c: the trace store on real SQLite files: sessions, steps and screenshots
 * back as they were given, search over words and never over values, forgetting, the cap, the
 * file's modes and version, and files that are not ours. The kill -9 loop is
 * test-trace-store-kill.c. */
#include "config.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

#include "chp-store-traces.h"
#include "chp-test-client.h"
#include "test-trace-store-util.h"

#define SECRET "hunter2-Zq9xW"

static ChpStore *
open_in (const char *dir)
{
  g_autofree char *path = g_build_filename (dir, "chaperone.db", NULL);
  g_autoptr(GError) error = NULL;
  ChpStore *store = tt_open_store (path, &error);

  g_assert_no_error (error);
  return store;
}

static guint
add (ChpStore       *store,
     ChpTraceHandle *trace,
     const char     *tool,
     const char     *host,
     const char     *name,
     const char     *error_code)
{
  ChpTraceStep step = {
    .tool = (char *) tool, .host = (char *) host, .path = "/a/b", .name = (char *) name,
    .error_code = (char *) error_code, .outcome = error_code ? "error" : "ok",
    .args = "{\"ref\":\"e1\"}",
  };
  guint seq = chp_store_trace_add_step (store, trace, &step);

  g_assert_cmpuint (seq, >, 0);
  return seq;
}

static void
flush_ok (ChpStore *store)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (tt_flush (store, &error));
  g_assert_no_error (error);
}

static ChpTraceSession *
session_at (GPtrArray *sessions,
            guint      i)
{
  g_assert_cmpuint (i, <, sessions->len);
  return g_ptr_array_index (sessions, i);
}

static ChpTraceStep *
step_at (GPtrArray *steps,
         guint      i)
{
  g_assert_cmpuint (i, <, steps->len);
  return g_ptr_array_index (steps, i);
}

/* What was given comes back after a reopen, field for field. */
static void
test_round_trip (void)
{
  g_autofree char *dir = tt_make_tmp ();
  g_autoptr(ChpStore) store = open_in (dir);
  g_autoptr(ChpTraceHandle) trace = NULL;
  g_autoptr(GBytes) jpeg = tt_fake_jpeg (20000, 0x5a);
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GPtrArray) steps = NULL;
  g_autoptr(ChpTraceShot) shot = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *id = NULL;
  ChpTraceStep navigate = {
    .tool = "browser_navigate", .args = "{\"url\":\"https://bank.example.com/accounts\"}",
    .queue_us = 120, .run_us = 45000, .page_us = 30000, .outcome = "ok", .rung = "page",
    .host = "Bank.Example.com", .path = "/accounts?id=123#top",
  };
  ChpTraceStep click = {
    .tool = "browser_act", .args = "{\"ref\":\"e12\",\"action\":\"click\"}", .outcome = "ok",
    .rung = "page", .host = "bank.example.com", .path = "/transfer", .role = "button",
    .name = "Send money", .decision_kind = CHP_TRACE_DECISION_HOLD, .decision = "approved",
    .decision_wait_us = 1500000,
  };
  ChpTraceStep fill = {
    .at = 1700000000000000, .tool = "browser_act",
    .args = "{\"ref\":\"e7\",\"action\":\"fill\",\"text\":{\"length\":8}}", .outcome = "error",
    .error_code = "stale_document", .rung = "page", .host = "bank.example.com",
    .path = "/transfer", .role = "textbox", .name = "Amount", .retry = 1,
    .snippet = "Transfer to [redacted name len=5]", .stopped_by = NULL,
  };
  ChpTraceSession *session;
  ChpTraceStep *step;
  ChpAuditEntry audit = { .at = 1, .category = "agent", .method = "browser_act", .outcome = "ok" };

  trace = chp_store_trace_begin (store, "claude-code", "Work Chromium");
  id = g_strdup (chp_trace_handle_get_id (trace));
  g_assert_cmpuint (chp_store_trace_add_step (store, trace, &navigate), ==, 1);
  /* An audit entry between steps shares their batch and is written too. */
  chp_store_add_audit_async (store, &audit, NULL, NULL, NULL);
  g_assert_cmpuint (chp_store_trace_add_step (store, trace, &click), ==, 2);
  g_assert_cmpuint (chp_store_trace_add_step (store, trace, &fill), ==, 3);
  chp_store_trace_add_shot (store, trace, 3, jpeg, 640, 400);
  chp_store_trace_end (store, trace, "ok");
  /* Ended: no more steps. */
  g_assert_cmpuint (chp_store_trace_add_step (store, trace, &fill), ==, 0);
  flush_ok (store);
  tt_close_store (&store);

  store = open_in (dir);
  sessions = tt_list (store, NULL, 0, 50);
  g_assert_cmpuint (sessions->len, ==, 1);
  session = session_at (sessions, 0);
  g_assert_cmpstr (session->id, ==, id);
  g_assert_cmpstr (session->agent, ==, "claude-code");
  g_assert_cmpstr (session->device, ==, "Work Chromium");
  g_assert_cmpstr (session->outcome, ==, "ok");
  g_assert_cmpint (session->started_at, >, 0);
  g_assert_cmpint (session->ended_at, >=, session->started_at);
  g_assert_cmpuint (session->n_steps, ==, 3);
  g_assert_cmpuint (session->n_errors, ==, 1);
  g_assert_cmpuint (session->n_asked, ==, 1);
  g_assert_cmpuint (session->n_approved, ==, 1);
  g_assert_cmpuint (g_strv_length (session->sites), ==, 1);
  g_assert_cmpstr (session->sites[0], ==, "bank.example.com");

  steps = tt_steps (store, id, 0, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (steps->len, ==, 3);

  step = step_at (steps, 0);
  g_assert_cmpuint (step->seq, ==, 1);
  g_assert_cmpstr (step->tool, ==, "browser_navigate");
  g_assert_cmpstr (step->args, ==, navigate.args);
  g_assert_cmpint (step->queue_us, ==, 120);
  g_assert_cmpint (step->run_us, ==, 45000);
  g_assert_cmpint (step->page_us, ==, 30000);
  g_assert_cmpstr (step->host, ==, "bank.example.com");
  g_assert_cmpstr (step->path, ==, "/accounts");  /* never the query */
  g_assert_cmpstr (step->rung, ==, "page");
  g_assert_null (step->error_code);
  g_assert_false (step->has_shot);

  step = step_at (steps, 1);
  g_assert_cmpstr (step->role, ==, "button");
  g_assert_cmpstr (step->name, ==, "Send money");
  g_assert_cmpint (step->decision_kind, ==, CHP_TRACE_DECISION_HOLD);
  g_assert_cmpstr (step->decision, ==, "approved");
  g_assert_cmpint (step->decision_wait_us, ==, 1500000);

  step = step_at (steps, 2);
  g_assert_cmpint (step->at, ==, 1700000000000000);
  g_assert_cmpstr (step->outcome, ==, "error");
  g_assert_cmpstr (step->error_code, ==, "stale_document");
  g_assert_cmpuint (step->retry, ==, 1);
  g_assert_cmpstr (step->snippet, ==, fill.snippet);
  g_assert_true (step->has_shot);

  shot = tt_shot (store, id, 3, &error);
  g_assert_no_error (error);
  g_assert_true (g_bytes_equal (shot->jpeg, jpeg));
  g_assert_cmpuint (shot->width, ==, 640);
  g_assert_cmpuint (shot->height, ==, 400);

  g_assert_null (tt_shot (store, id, 1, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* A page of steps. */
  g_clear_pointer (&steps, g_ptr_array_unref);
  steps = tt_steps (store, id, 1, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (steps->len, ==, 1);
  g_assert_cmpuint (step_at (steps, 0)->seq, ==, 2);

  g_assert_null (tt_steps (store, "no-such-session", 0, 0, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  tt_close_store (&store);
  tt_remove_tmp (dir);
}

static gboolean
lists_ids (GPtrArray  *sessions,
           const char *first,
           ...)
{
  va_list args;
  guint i = 0;

  va_start (args, first);
  for (const char *id = first; id != NULL; id = va_arg (args, const char *), i++)
    if (i >= sessions->len || g_strcmp0 (session_at (sessions, i)->id, id) != 0)
      {
        va_end (args);
        return FALSE;
      }
  va_end (args);

  return i == sessions->len;
}

/* The index holds the words a person searches for, and a value given in the arguments or the
 * snippet is found by no search; the arguments hold exactly what was given. */
static void
test_search_never_values (void)
{
  g_autofree char *dir = tt_make_tmp ();
  g_autofree char *trace_path = g_build_filename (dir, "traces.db", NULL);
  g_autoptr(ChpStore) store = open_in (dir);
  g_autoptr(ChpTraceHandle) bank = chp_store_trace_begin (store, "agent-a", "Chromium");
  g_autoptr(ChpTraceHandle) shop = NULL;
  g_autoptr(GPtrArray) steps = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *stored_args = NULL;
  ChpTraceQuery by_agent = { .search = "example", .agent = "agent-b" };
  const char *args = "{\"ref\":\"e3\",\"action\":\"fill\",\"text\":\"" SECRET "\"}";
  ChpTraceStep with_secret = {
    .tool = "browser_act", .args = (char *) args, .host = "bank.example.com",
    .path = "/login", .role = "textbox", .name = "Password", .outcome = "error",
    .error_code = "held", .snippet = "Welcome back " SECRET, .decision = SECRET,
  };
  const char *bank_id = chp_trace_handle_get_id (bank);
  const char *shop_id;
  const char * const nothing[] = { SECRET, "hunter2", "Zq9xW", "welcome", "e3", NULL };
  const char * const odd[] = { "\"", "bank\" OR \"x", "NEAR(", "*", "^bank", "a:b", "-", "()",
                               "bank AND", NULL };

  add (store, bank, "browser_navigate", "bank.example.com", NULL, NULL);
  add (store, bank, "browser_act", "bank.example.com", "Send money", "stale_document");
  g_assert_cmpuint (chp_store_trace_add_step (store, bank, &with_secret), ==, 3);
  chp_store_trace_end (store, bank, "error");
  shop = chp_store_trace_begin (store, "agent-b", "Chromium");
  shop_id = chp_trace_handle_get_id (shop);
  add (store, shop, "browser_snapshot", "shop.example.org", "Basket", NULL);
  {
    ChpTraceStep order = { .tool = "browser_navigate", .host = "shop.example.org",
                           .path = "/orders/123456" };

    g_assert_cmpuint (chp_store_trace_add_step (store, shop, &order), ==, 2);
  }
  flush_ok (store);

#define SEARCH_GIVES(text, ...) G_STMT_START { \
    g_autoptr(GPtrArray) found = tt_search (store, text); \
    if (!lists_ids (found, __VA_ARGS__, NULL)) \
      g_error ("search %s gave %u sessions, not the expected ones", text, found->len); \
  } G_STMT_END

  SEARCH_GIVES ("bank", bank_id);
  SEARCH_GIVES ("BANK.example", bank_id);
  SEARCH_GIVES ("exam", shop_id, bank_id);     /* a prefix; newest first */
  SEARCH_GIVES ("stale_document", bank_id);
  SEARCH_GIVES ("send mon", bank_id);
  SEARCH_GIVES ("password", bank_id);
  SEARCH_GIVES ("snapshot", shop_id);
  SEARCH_GIVES ("transfer", NULL);
  SEARCH_GIVES ("basket shop", shop_id);
  SEARCH_GIVES ("basket bank", NULL);          /* all words in one step */
  SEARCH_GIVES ("orders 1234", shop_id);       /* a number, typed in part */
  SEARCH_GIVES ("exam bank", NULL);            /* only the last word may be a part */
#undef SEARCH_GIVES

  for (guint i = 0; nothing[i] != NULL; i++)
    {
      g_autoptr(GPtrArray) found = tt_search (store, nothing[i]);

      if (found->len != 0)
        g_error ("a search for %s, which is only in values, found a session", nothing[i]);
    }

  /* What a person types is never FTS5 syntax, and never an error. */
  for (guint i = 0; odd[i] != NULL; i++)
    g_ptr_array_unref (tt_search (store, odd[i]));

  {
    g_autoptr(GPtrArray) found = tt_list (store, &by_agent, 0, 10);

    g_assert_true (lists_ids (found, shop_id, NULL));
  }

  /* The store kept the masked arguments as given: masking is the caller's, not the store's. */
  steps = tt_steps (store, bank_id, 2, 1, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (step_at (steps, 0)->args, ==, args);
  tt_close_store (&store);

  {
    sqlite3 *db = tt_open_file (trace_path);

    stored_args = tt_file_text (db, "SELECT args FROM steps WHERE name = 'Password'");
    g_assert_cmpstr (stored_args, ==, args);
    /* The index's terms, read straight from it: none of the values. */
    g_assert_cmpint (tt_file_int (db, "SELECT count(*) FROM step_text"
                                      " WHERE step_text MATCH 'hunter2'"), ==, 0);
    sqlite3_close (db);
  }
  tt_assert_file_ok (trace_path);
  tt_remove_tmp (dir);
}

/* Newest first, a page at a time, each filter alone. */
static void
test_filters_and_pages (void)
{
  g_autofree char *dir = tt_make_tmp ();
  g_autoptr(ChpStore) store = open_in (dir);
  g_autoptr(GPtrArray) handles =
    g_ptr_array_new_with_free_func ((GDestroyNotify) chp_trace_handle_unref);
  g_autoptr(GPtrArray) all = NULL;
  gint64 since;

  for (guint i = 0; i < 30; i++)
    {
      ChpTraceHandle *trace = chp_store_trace_begin (store, i % 2 ? "agent-b" : "agent-a", "C");
      g_autofree char *host = g_strdup_printf ("site%u.example", i % 3);

      add (store, trace, "browser_tabs", host, NULL, NULL);
      chp_store_trace_end (store, trace, i % 5 == 0 ? "error" : "ok");
      g_ptr_array_add (handles, trace);
    }
  flush_ok (store);

  all = tt_list (store, NULL, 0, 1000);
  g_assert_cmpuint (all->len, ==, 30);
  for (guint i = 0; i < 30; i++)
    g_assert_cmpstr (session_at (all, i)->id, ==,
                     chp_trace_handle_get_id (g_ptr_array_index (handles, 29 - i)));
  since = session_at (all, 9)->started_at;

  {
    g_autoptr(GPtrArray) page = tt_list (store, NULL, 25, 10);

    g_assert_cmpuint (page->len, ==, 5);
    g_assert_cmpstr (session_at (page, 0)->id, ==, session_at (all, 25)->id);
  }
  {
    ChpTraceQuery query = { .agent = "agent-b" };
    g_autoptr(GPtrArray) page = tt_list (store, &query, 0, 100);

    g_assert_cmpuint (page->len, ==, 15);
    for (guint i = 0; i < page->len; i++)
      g_assert_cmpstr (session_at (page, i)->agent, ==, "agent-b");
  }
  {
    ChpTraceQuery query = { .outcome = "error" };
    g_autoptr(GPtrArray) page = tt_list (store, &query, 0, 100);

    g_assert_cmpuint (page->len, ==, 6);
  }
  {
    ChpTraceQuery query = { .site = "site1.example" };
    g_autoptr(GPtrArray) page = tt_list (store, &query, 0, 100);

    g_assert_cmpuint (page->len, ==, 10);
    for (guint i = 0; i < page->len; i++)
      g_assert_cmpstr (session_at (page, i)->sites[0], ==, "site1.example");
  }
  {
    ChpTraceQuery query = { .since = since };
    g_autoptr(GPtrArray) page = tt_list (store, &query, 0, 100);

    g_assert_cmpuint (page->len, >=, 10);
    for (guint i = 0; i < page->len; i++)
      g_assert_cmpint (session_at (page, i)->started_at, >=, since);
  }
  {
    /* A search pages as a listing does. */
    ChpTraceQuery query = { .search = "tabs", .agent = "agent-a" };
    g_autoptr(GPtrArray) page = tt_list (store, &query, 3, 4);

    g_assert_cmpuint (page->len, ==, 4);
    g_assert_cmpstr (session_at (page, 0)->id, ==, session_at (all, 7)->id);
  }
  tt_close_store (&store);
  tt_remove_tmp (dir);
}

/* The person's Forget: the session, its steps, index entries, screenshots and sites; and steps
 * still arriving for a forgotten open session are not kept. */
static void
test_forget (void)
{
  g_autofree char *dir = tt_make_tmp ();
  g_autofree char *trace_path = g_build_filename (dir, "traces.db", NULL);
  g_autoptr(ChpStore) store = open_in (dir);
  g_autoptr(ChpTraceHandle) gone = chp_store_trace_begin (store, "a", "C");
  g_autoptr(ChpTraceHandle) kept = chp_store_trace_begin (store, "a", "C");
  g_autoptr(GBytes) jpeg = tt_fake_jpeg (50000, 0x11);
  g_autoptr(GPtrArray) left = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *gone_id = g_strdup (chp_trace_handle_get_id (gone));
  guint seq;

  for (guint i = 0; i < 20; i++)
    {
      seq = add (store, gone, "browser_act", "forgotten.example", "Private button", "held");
      chp_store_trace_add_shot (store, gone, seq, jpeg, 100, 100);
      add (store, kept, "browser_act", "kept.example", "Other", NULL);
    }
  flush_ok (store);

  g_assert_true (tt_forget (store, gone_id, &error));
  g_assert_no_error (error);
  g_assert_false (tt_forget (store, gone_id, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);

  /* Still open: later steps of the forgotten session go nowhere, and that is no failure. */
  add (store, gone, "browser_act", "forgotten.example", "Private button", NULL);
  flush_ok (store);

  left = tt_list (store, NULL, 0, 10);
  g_assert_cmpuint (left->len, ==, 1);
  g_assert_cmpstr (session_at (left, 0)->id, ==, chp_trace_handle_get_id (kept));
  g_assert_null (tt_steps (store, gone_id, 0, 0, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_NOT_FOUND);
  g_clear_error (&error);
  {
    g_autoptr(GPtrArray) found = tt_search (store, "forgotten");

    g_assert_cmpuint (found->len, ==, 0);
  }
  tt_close_store (&store);

  {
    sqlite3 *db = tt_open_file (trace_path);

    g_assert_cmpint (tt_file_int (db, "SELECT count(*) FROM steps"), ==, 20);
    g_assert_cmpint (tt_file_int (db, "SELECT count(*) FROM shots"), ==, 0);
    g_assert_cmpint (tt_file_int (db, "SELECT count(*) FROM sites"), ==, 1);
    g_assert_cmpint (tt_file_int (db, "SELECT count(*) FROM steps"
                                      " WHERE host = 'forgotten.example'"), ==, 0);
    g_assert_cmpint (tt_file_int (db, "SELECT count(*) FROM step_text"
                                      " WHERE step_text MATCH 'forgotten'"), ==, 0);
    /* Its words are not offered to a search any more; the kept session's are. */
    g_assert_cmpint (tt_file_int (db, "SELECT count(*) FROM words"
                                      " WHERE word IN ('forgotten', 'private')"), ==, 0);
    g_assert_cmpint (tt_file_int (db, "SELECT count(*) FROM words"
                                      " WHERE word IN ('kept', 'other', 'act')"), ==, 3);
    /* The screenshots' pages were given back. */
    g_assert_cmpint (tt_file_int (db, "PRAGMA freelist_count"), <, 4);
    sqlite3_close (db);
  }
  tt_assert_file_ok (trace_path);
  tt_remove_tmp (dir);
}

/* A small cap: the file stays within 1% of it after every batch, the oldest ended sessions go
 * first, an open session older than all of them stays, and the newest are all there. */
static void
test_cap (void)
{
  const guint64 cap = 2 * 1024 * 1024;
  g_autofree char *dir = tt_make_tmp ();
  g_autofree char *trace_path = g_build_filename (dir, "traces.db", NULL);
  g_autoptr(ChpStore) store = open_in (dir);
  g_autoptr(ChpTraceHandle) open_first = NULL;
  g_autoptr(GPtrArray) ids = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GBytes) jpeg = tt_fake_jpeg (24000, 0x33);
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GPtrArray) steps = NULL;
  g_autoptr(GError) error = NULL;
  guint64 size = 0, smallest_after = G_MAXUINT64;
  GStatBuf st;

  chp_store_set_trace_cap (store, cap);
  g_assert_cmpuint (chp_store_get_trace_cap (store), ==, cap);
  open_first = chp_store_trace_begin (store, "long-running", "C");
  for (guint i = 0; i < 5; i++)
    add (store, open_first, "browser_tabs", "first.example", NULL, NULL);

  for (guint s = 0; s < 160; s++)
    {
      g_autoptr(ChpTraceHandle) trace = chp_store_trace_begin (store, "agent", "C");

      g_ptr_array_add (ids, g_strdup (chp_trace_handle_get_id (trace)));
      for (guint i = 0; i < 40; i++)
        {
          g_autofree char *name = g_strdup_printf ("Button %u of session %u", i, s);
          guint seq = add (store, trace, "browser_act", "cap.example", name,
                           i % 10 == 9 ? "timeout" : NULL);

          if (i % 10 == 9)
            chp_store_trace_add_shot (store, trace, seq, jpeg, 320, 200);
        }
      chp_store_trace_end (store, trace, "ok");
      flush_ok (store);

      size = tt_size (store);
      if (size > cap + cap / 100)
        g_error ("after session %u the trace file is %" G_GUINT64_FORMAT " bytes, over its cap "
                 "of %" G_GUINT64_FORMAT " by more than 1%%", s, size, cap);
      if (s >= 120)
        smallest_after = MIN (smallest_after, size);
    }
  g_test_message ("trace file %" G_GUINT64_FORMAT " bytes, at least %.1f%% of the cap once full",
                  size, 100.0 * smallest_after / cap);
  /* Held at the cap, not emptied: the file is cut back to 99% of it at each eviction. */
  g_assert_cmpuint (smallest_after, >=, cap * 98 / 100);

  sessions = tt_list (store, NULL, 0, 1000);
  g_assert_cmpuint (sessions->len, <, 160);
  g_assert_cmpuint (sessions->len, >, 10);
  /* The open one, oldest of all, is still there, with every step. */
  g_assert_cmpstr (session_at (sessions, sessions->len - 1)->id, ==,
                   chp_trace_handle_get_id (open_first));
  steps = tt_steps (store, chp_trace_handle_get_id (open_first), 0, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (steps->len, ==, 5);
  /* The newest ended ones are all there, in order; the oldest went. */
  for (guint i = 0; i + 1 < sessions->len; i++)
    g_assert_cmpstr (session_at (sessions, i)->id, ==, g_ptr_array_index (ids, 159 - i));
  tt_close_store (&store);

  /* Closed, the WAL is checkpointed into the file: its size on disk is within the cap too. */
  g_assert_cmpint (g_stat (trace_path, &st), ==, 0);
  g_assert_cmpint (st.st_size, <=, cap + cap / 100);
  tt_assert_file_ok (trace_path);
  tt_remove_tmp (dir);
}

/* With nothing but an open session, the cap takes that session's oldest steps. */
static void
test_cap_open_session (void)
{
  g_autofree char *dir = tt_make_tmp ();
  g_autoptr(ChpStore) store = open_in (dir);
  g_autoptr(ChpTraceHandle) trace = chp_store_trace_begin (store, "busy", "C");
  g_autoptr(GPtrArray) sessions = NULL;
  g_autoptr(GPtrArray) steps = NULL;
  g_autoptr(GError) error = NULL;
  guint last = 0;

  chp_store_set_trace_cap (store, CHP_TRACE_MIN_CAP);
  for (guint i = 0; i < 12000; i++)
    {
      g_autofree char *name = g_strdup_printf ("Row %u", i);

      last = add (store, trace, "browser_act", "busy.example", name, NULL);
      if (i % 1000 == 999)
        flush_ok (store);
    }
  flush_ok (store);

  g_assert_cmpuint (tt_size (store), <=, CHP_TRACE_MIN_CAP + CHP_TRACE_MIN_CAP / 100);
  sessions = tt_list (store, NULL, 0, 10);
  g_assert_cmpuint (sessions->len, ==, 1);
  g_assert_cmpuint (session_at (sessions, 0)->n_steps, ==, 12000);
  g_assert_cmpuint (session_at (sessions, 0)->n_trimmed, >, 0);
  steps = tt_steps (store, session_at (sessions, 0)->id, 0, 0, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (steps->len, ==, 12000 - session_at (sessions, 0)->n_trimmed);
  g_assert_cmpuint (step_at (steps, steps->len - 1)->seq, ==, last);
  tt_close_store (&store);
  tt_remove_tmp (dir);
}

static void
assert_mode (const char *path,
             guint       mode)
{
  GStatBuf st;

  g_assert_cmpint (g_stat (path, &st), ==, 0);
  if ((st.st_mode & 0777) != mode)
    g_error ("%s is %04o, not %04o", path, st.st_mode & 0777, mode);
}

/* traces.db beside the store's file, 0600 with its -wal and -shm whatever the umask; its own
 * version and id; incremental vacuum; WAL; a session the app never ended is "interrupted". */
static void
test_file (void)
{
  g_autofree char *dir = tt_make_tmp ();
  g_autofree char *trace_path = g_build_filename (dir, "traces.db", NULL);
  g_autofree char *wal = g_strconcat (trace_path, "-wal", NULL);
  g_autofree char *shm = g_strconcat (trace_path, "-shm", NULL);
  g_autoptr(ChpStore) store = NULL;
  g_autoptr(ChpTraceHandle) trace = NULL;
  g_autoptr(GPtrArray) sessions = NULL;
  mode_t old_umask = umask (022);

  store = open_in (dir);
  g_assert_cmpstr (chp_store_get_trace_path (store), ==, trace_path);
  trace = chp_store_trace_begin (store, "a", "C");
  add (store, trace, "browser_tabs", "x.example", NULL, NULL);
  flush_ok (store);
  assert_mode (trace_path, 0600);
  assert_mode (wal, 0600);
  assert_mode (shm, 0600);
  tt_close_store (&store);
  umask (old_umask);

  {
    sqlite3 *db = tt_open_file (trace_path);
    g_autofree char *journal = tt_file_text (db, "PRAGMA journal_mode");

    g_assert_cmpint (tt_file_int (db, "PRAGMA user_version"), ==, 1);
    g_assert_cmpint (tt_file_int (db, "PRAGMA application_id"), ==, 0x43687074);
    g_assert_cmpint (tt_file_int (db, "PRAGMA auto_vacuum"), ==, 2);
    g_assert_cmpstr (journal, ==, "wal");
    sqlite3_close (db);
  }

  /* A file an older version left 0644 is tightened. */
  g_assert_cmpint (g_chmod (trace_path, 0644), ==, 0);
  store = open_in (dir);
  assert_mode (trace_path, 0600);
  sessions = tt_list (store, NULL, 0, 10);
  g_assert_cmpuint (sessions->len, ==, 1);
  g_assert_cmpstr (session_at (sessions, 0)->outcome, ==, "interrupted");
  g_assert_cmpint (session_at (sessions, 0)->ended_at, >=, session_at (sessions, 0)->started_at);
  tt_close_store (&store);
  tt_remove_tmp (dir);
}

static void
write_foreign (const char *path,
               const char *sql)
{
  sqlite3 *db = NULL;

  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
}

static guint
count_moved_aside (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  const char *name;
  guint n = 0;

  while ((name = g_dir_read_name (d)) != NULL)
    n += g_str_has_prefix (name, "traces.db.corrupt-") && !g_str_has_suffix (name, "-wal") &&
         !g_str_has_suffix (name, "-shm");
  return n;
}

/* Another program's file, or no database at all, is moved aside (never deleted) and traces
 * start afresh; a newer Chaperone's is left alone and the store works without traces. */
static void
test_not_ours (void)
{
  g_autofree char *dir = tt_make_tmp ();
  g_autofree char *trace_path = g_build_filename (dir, "traces.db", NULL);
  g_autoptr(ChpStore) store = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpTraceHandle) trace = NULL;

  write_foreign (trace_path, "CREATE TABLE theirs (x); PRAGMA application_id = 7;");
  store = open_in (dir);
  trace = chp_store_trace_begin (store, "a", "C");
  add (store, trace, "browser_tabs", "x.example", NULL, NULL);
  flush_ok (store);
  tt_close_store (&store);
  g_assert_cmpuint (count_moved_aside (dir), ==, 1);

  g_assert_true (g_file_set_contents (trace_path, "not a database at all, not even close......"
                                      "..........................................................."
                                      "...........................", -1, NULL));
  store = open_in (dir);
  g_clear_pointer (&trace, chp_trace_handle_unref);
  trace = chp_store_trace_begin (store, "a", "C");
  add (store, trace, "browser_tabs", "x.example", NULL, NULL);
  flush_ok (store);
  tt_close_store (&store);
  g_assert_cmpuint (count_moved_aside (dir), ==, 2);

  write_foreign (trace_path, "PRAGMA user_version = 99;");
  store = open_in (dir);
  g_assert_false (tt_flush (store, &error));
  g_assert_error (error, CHP_STORE_ERROR, CHP_STORE_ERROR_CLOSED);
  tt_close_store (&store);
  g_assert_cmpuint (count_moved_aside (dir), ==, 2);
  {
    sqlite3 *db = tt_open_file (trace_path);

    g_assert_cmpint (tt_file_int (db, "PRAGMA user_version"), ==, 99);
    sqlite3_close (db);
  }
  tt_remove_tmp (dir);
}

/* What a page can make long is cut, a query never kept, bad UTF-8 made good, over-long
 * arguments replaced by their length; a screenshot that is no JPEG is not kept. */
/* A trace file whose pages were damaged (its first intact) is found at open, moved aside and
 * started afresh; the store's own file is not touched. */
static void
test_damaged (void)
{
  g_autofree char *dir = tt_make_tmp ();
  g_autofree char *trace_path = g_build_filename (dir, "traces.db", NULL);
  g_autoptr(ChpStore) store = open_in (dir);
  g_autoptr(ChpTraceHandle) trace = chp_store_trace_begin (store, "a", "C");
  g_autoptr(GPtrArray) sessions = NULL;
  g_autofree char *contents = NULL;
  gsize len = 0;

  for (guint i = 0; i < 2000; i++)
    add (store, trace, "browser_act", "damaged.example", "Some button", NULL);
  flush_ok (store);
  tt_close_store (&store);

  g_assert_true (g_file_get_contents (trace_path, &contents, &len, NULL));
  g_assert_cmpuint (len, >, 3 * 4096);
  memset (contents + 4096, 0x5a, len - 4096);
  g_assert_true (g_file_set_contents (trace_path, contents, len, NULL));

  store = open_in (dir);
  sessions = tt_list (store, NULL, 0, 10);
  g_assert_cmpuint (sessions->len, ==, 0);
  g_clear_pointer (&trace, chp_trace_handle_unref);
  trace = chp_store_trace_begin (store, "a", "C");
  add (store, trace, "browser_act", "fresh.example", NULL, NULL);
  flush_ok (store);
  tt_close_store (&store);
  g_assert_cmpuint (count_moved_aside (dir), ==, 1);
  tt_assert_file_ok (trace_path);
  tt_remove_tmp (dir);
}

static void
test_bounds (void)
{
  g_autofree char *dir = tt_make_tmp ();
  g_autoptr(ChpStore) store = open_in (dir);
  g_autoptr(ChpTraceHandle) trace = chp_store_trace_begin (store, "a", "C");
  g_autoptr(GPtrArray) steps = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) png = g_bytes_new_static ("\x89PNG\r\n\x1a\n0000", 12);
  g_autofree char *long_name = g_strnfill (10000, 'n');
  g_autofree char *long_args = g_strnfill (CHP_TRACE_MAX_ARGS + 10, 'a');
  g_autofree char *accents = g_strnfill (300, 'x');
  ChpTraceStep step = {
    .tool = "browser_act", .name = long_name, .args = long_args,
    .path = "/search/?q=" SECRET, .host = "bad\xff.example",
  };
  ChpTraceStep *got;
  guint seq;

  /* Two-byte characters across the bound: the cut is at a character. */
  memcpy (accents + 255, "\xc3\xa9", 2);
  seq = chp_store_trace_add_step (store, trace, &step);
  step.name = accents;
  step.args = NULL;
  chp_store_trace_add_step (store, trace, &step);
  chp_store_trace_add_shot (store, trace, seq, png, 10, 10);
  flush_ok (store);

  steps = tt_steps (store, chp_trace_handle_get_id (trace), 0, 0, &error);
  g_assert_no_error (error);
  got = step_at (steps, 0);
  g_assert_cmpuint (strlen (got->name), ==, CHP_TRACE_MAX_NAME);
  g_assert_cmpstr (got->path, ==, "/search/");
  g_assert_true (g_utf8_validate (got->host, -1, NULL));
  g_assert_null (strstr (got->host, "\xff"));
  g_assert_false (got->has_shot);
  {
    g_autofree char *expected = g_strdup_printf ("{\"truncated\":%u}", CHP_TRACE_MAX_ARGS + 10);

    g_assert_cmpstr (got->args, ==, expected);
  }
  got = step_at (steps, 1);
  g_assert_cmpuint (strlen (got->name), ==, 255);
  g_assert_true (g_utf8_validate (got->name, -1, NULL));
  tt_close_store (&store);
  tt_remove_tmp (dir);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/trace-store/round-trip", test_round_trip);
  g_test_add_func ("/chaperone/trace-store/search-never-values", test_search_never_values);
  g_test_add_func ("/chaperone/trace-store/filters-and-pages", test_filters_and_pages);
  g_test_add_func ("/chaperone/trace-store/forget", test_forget);
  g_test_add_func ("/chaperone/trace-store/cap", test_cap);
  g_test_add_func ("/chaperone/trace-store/cap-open-session", test_cap_open_session);
  g_test_add_func ("/chaperone/trace-store/file", test_file);
  g_test_add_func ("/chaperone/trace-store/not-ours", test_not_ours);
  g_test_add_func ("/chaperone/trace-store/damaged", test_damaged);
  g_test_add_func ("/chaperone/trace-store/bounds", test_bounds);

  return g_test_run ();
}
