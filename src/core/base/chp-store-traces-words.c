/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-store-traces-words.c: the words of the full-text index, kept beside it so that a
 * search's last word, typed in part, can be matched as the whole words it begins: each an
 * exact term the index reads lazily. (FTS5's own prefix term, "chec"*, first gathers every step
 * of every word it begins: 400 ms for "browser"* over a million steps.) Written with the
 * batches; a word no step has any more leaves a little at a time after evictions, and at once
 * when the person forgets a session. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-store"

#include "chp-store-traces-private.h"

#include <glib/gi18n.h>
#include <string.h>

/* Words known to be in the table, so a batch does not look each up again. */
#define KNOWN_MAX 32768

/* Words checked against the index after each eviction. */
#define PRUNE_PER_EVICTION 256

/**
 * chp_store_traces_each_word:
 *
 * Calls @func with each word of @text as the index's tokenizer splits it (runs of letters and
 * digits), lowered and NUL-terminated: "bank.example.com" is "bank", "example", "com";
 * "stale_document" is "stale", "document". Quoted, such a word is one term of the index and
 * never FTS5 syntax: it holds nothing but letters and digits.
 */
void
chp_store_traces_each_word (const char       *text,
                            ChpTraceWordFunc  func,
                            gpointer          data)
{
  const char *p = text;

  while (*p != '\0')
    {
      const char *start;
      gboolean ascii = TRUE, digits = TRUE;

      while (*p != '\0' && !g_unichar_isalnum (g_utf8_get_char (p)))
        p = g_utf8_next_char (p);
      if (*p == '\0')
        break;

      for (start = p; *p != '\0'; p = g_utf8_next_char (p))
        {
          gunichar c = g_utf8_get_char (p);

          if (!g_unichar_isalnum (c))
            break;
          ascii &= c < 0x80;
          digits &= g_ascii_isdigit (c);
        }

      if (ascii && p - start < 128)
        {
          char lowered[128];

          for (gsize i = 0; i < (gsize) (p - start); i++)
            lowered[i] = g_ascii_tolower (start[i]);
          lowered[p - start] = '\0';
          func (lowered, p - start, digits, data);
        }
      else
        {
          g_autofree char *lowered = g_utf8_strdown (start, p - start);

          func (lowered, strlen (lowered), digits, data);
        }
    }
}

/* Numbers (an order's, a row's) are left out: nobody types part of one to find it, and they
 * would be most of the words. A search's last word that is not here is a prefix term after
 * all, which is cheap when it is rare. */
static void
note_word_cb (const char *word,
              gsize       len,
              gboolean    digits,
              gpointer    data)
{
  ChpStoreTraces *traces = data;

  if (digits || len > CHP_TRACE_MAX_WORD ||
      g_hash_table_contains (traces->known_words, word) ||
      g_hash_table_contains (traces->batch_words, word))
    return;
  g_hash_table_add (traces->batch_words, g_strndup (word, len));
}

/* A step's words, written at the end of its batch. */
void
chp_store_traces_note_words (ChpStore           *self,
                             const ChpTraceStep *step)
{
  const char * const texts[] = { step->tool, step->host, step->path, step->name,
                                 step->error_code };

  for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
    if (texts[i] != NULL)
      chp_store_traces_each_word (texts[i], note_word_cb, self->traces);
}

gboolean
chp_store_traces_write_words (ChpStore  *self,
                              GError   **error)
{
  GHashTableIter iter;
  const char *word;

  g_hash_table_iter_init (&iter, self->traces->batch_words);
  while (g_hash_table_iter_next (&iter, (gpointer *) &word, NULL))
    {
      sqlite3_stmt *stmt = chp_store_traces_stmt (self, TSTMT_WORD_INSERT, error);

      if (stmt == NULL)
        return FALSE;
      sqlite3_bind_text (stmt, 1, word, -1, SQLITE_STATIC);
      if (!chp_store_step_done (self, stmt, _("the trace"), error))
        return FALSE;
    }

  return TRUE;
}

/* After the batch: its words are in the table if it was committed. */
void
chp_store_traces_words_done (ChpStore *self,
                             gboolean  committed)
{
  ChpStoreTraces *traces = self->traces;
  GHashTableIter iter;
  char *word;

  if (committed)
    {
      if (g_hash_table_size (traces->known_words) + g_hash_table_size (traces->batch_words) >
          KNOWN_MAX)
        g_hash_table_remove_all (traces->known_words);
      g_hash_table_iter_init (&iter, traces->batch_words);
      while (g_hash_table_iter_next (&iter, (gpointer *) &word, NULL))
        {
          g_hash_table_iter_steal (&iter);
          g_hash_table_add (traces->known_words, word);
        }
    }
  g_hash_table_remove_all (traces->batch_words);
}

/* Whether any step still has @word: the index's newest match, read lazily. */
static gboolean
word_used (ChpStore    *self,
           const char  *word,
           gboolean    *used,
           GError     **error)
{
  g_autofree char *match = g_strdup_printf ("\"%s\"", word);
  sqlite3_stmt *stmt = chp_store_traces_stmt (self, TSTMT_SEARCH, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_text (stmt, 1, match, -1, SQLITE_STATIC);
  rc = sqlite3_step (stmt);
  sqlite3_reset (stmt);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "trace");
      return FALSE;
    }

  *used = rc == SQLITE_ROW;
  return TRUE;
}

static gboolean
drop_if_unused (ChpStore    *self,
                const char  *word,
                GError     **error)
{
  sqlite3_stmt *stmt;
  gboolean used;

  if (!word_used (self, word, &used, error))
    return FALSE;
  if (used)
    return TRUE;

  g_hash_table_remove (self->traces->known_words, word);
  if (!(stmt = chp_store_traces_stmt (self, TSTMT_WORD_DELETE, error)))
    return FALSE;
  sqlite3_bind_text (stmt, 1, word, -1, SQLITE_STATIC);
  return chp_store_step_done (self, stmt, _("the trace"), error);
}

/* After an eviction: the next PRUNE_PER_EVICTION words, in order, round and round, go if no
 * step has them any more. */
gboolean
chp_store_traces_prune_words (ChpStore  *self,
                              GError   **error)
{
  ChpStoreTraces *traces = self->traces;
  g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func (g_free);
  sqlite3_stmt *stmt = chp_store_traces_stmt (self, TSTMT_WORDS_AFTER, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  sqlite3_bind_text (stmt, 1, traces->prune_after != NULL ? traces->prune_after : "", -1,
                     SQLITE_TRANSIENT);
  sqlite3_bind_int (stmt, 2, PRUNE_PER_EVICTION);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (words, g_strdup ((const char *) sqlite3_column_text (stmt, 0)));
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "trace");
      return FALSE;
    }

  g_clear_pointer (&traces->prune_after, g_free);
  if (words->len == PRUNE_PER_EVICTION)
    traces->prune_after = g_strdup (g_ptr_array_index (words, words->len - 1));

  for (guint i = 0; i < words->len; i++)
    if (!drop_if_unused (self, g_ptr_array_index (words, i), error))
      return FALSE;

  return TRUE;
}

static void
collect_word_cb (const char *word,
                 gsize       len,
                 gboolean    digits,
                 gpointer    data)
{
  if (!digits && len <= CHP_TRACE_MAX_WORD)
    g_hash_table_add (data, g_strndup (word, len));
}

/* The words of the steps strictly between @lo and @hi, before they are deleted. */
GHashTable *
chp_store_traces_range_words (ChpStore  *self,
                              gint64     lo,
                              gint64     hi,
                              GError   **error)
{
  g_autoptr(GHashTable) words = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  sqlite3_stmt *stmt = chp_store_traces_stmt (self, TSTMT_RANGE_TEXT, error);
  int rc;

  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int64 (stmt, 1, lo);
  sqlite3_bind_int64 (stmt, 2, hi);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    for (int col = 0; col < 5; col++)
      if (sqlite3_column_type (stmt, col) != SQLITE_NULL)
        chp_store_traces_each_word ((const char *) sqlite3_column_text (stmt, col),
                                    collect_word_cb, words);
  sqlite3_reset (stmt);
  if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "trace");
      return NULL;
    }

  return g_steal_pointer (&words);
}

/* After a forget: those of @words no step has any more go now, so a forgotten session's words
 * are never offered to a search. */
gboolean
chp_store_traces_drop_unused_words (ChpStore    *self,
                                    GHashTable  *words,
                                    GError     **error)
{
  GHashTableIter iter;
  const char *word;

  g_hash_table_iter_init (&iter, words);
  while (g_hash_table_iter_next (&iter, (gpointer *) &word, NULL))
    if (!drop_if_unused (self, word, error))
      return FALSE;

  return TRUE;
}

/* The words @prefix begins, at most @max; NULL (and no error) when there are more. */
GPtrArray *
chp_store_traces_expand (ChpStore    *self,
                         const char  *prefix,
                         guint        max,
                         GError     **error)
{
  g_autoptr(GPtrArray) words = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *upper = g_strconcat (prefix, "\xff", NULL);
  sqlite3_stmt *stmt = chp_store_traces_stmt (self, TSTMT_WORDS_EXPAND, error);
  int rc;

  if (stmt == NULL)
    return NULL;

  sqlite3_bind_text (stmt, 1, prefix, -1, SQLITE_STATIC);
  /* Past every word that begins with it: 0xff is in no UTF-8 text. */
  sqlite3_bind_text (stmt, 2, upper, -1, SQLITE_STATIC);
  sqlite3_bind_int (stmt, 3, max + 1);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    g_ptr_array_add (words, g_strdup ((const char *) sqlite3_column_text (stmt, 0)));
  sqlite3_reset (stmt);

  if (rc != SQLITE_DONE)
    {
      chp_store_set_sqlite_error (error, self->db, rc, "trace");
      return NULL;
    }

  return words->len <= max ? g_steal_pointer (&words) : NULL;
}
