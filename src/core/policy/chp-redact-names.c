/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-redact-names.c: which parameter, header, cookie, field and JSON member names hold a secret
 * (chp_redact_name_is_secret), for the text scan and the JSON walk alike.
 *
 * Secret names (it follows the extension's credentialName in snapshot-core.js and adds cookies,
 * sessions, CSRF, auth): a word of the name containing a SECRET_SUBSTRINGS entry (password,
 * secret, token, cookie, …); or a whole word of SECRET_WORDS (pin, otp, cvv, session, …),
 * optionally followed by a SECRET_WORD_SUFFIXES entry (code, number, …) or digits; or two words
 * of SECRET_PAIRS (api key, credit card, seed phrase, …). The lists are the "names" part of
 * src/core/policy/redact-patterns.json, which the extension's redact-patterns.js is made from
 * too. Words split at non-alphanumerics and camelCase. Not secret: a name whose last word says it
 * is about the secret rather than the secret (tokenType, passwordHint, sessionExpires,
 * valueLength, csrfHeaderName — see META_WORDS), and the words tokens, tokenizer, secretary
 * (NOT_SECRET_WORDS). */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-redact"

#include "chp-redact-private.h"

static gboolean
is_secret_word (const char *word)
{
  for (guint i = 0; SECRET_WORDS[i] != NULL; i++)
    {
      gsize len = strlen (SECRET_WORDS[i]);
      const char *rest;

      if (strncmp (word, SECRET_WORDS[i], len) != 0)
        continue;
      rest = word + len;
      if (*rest == '\0' || in_list (SECRET_WORD_SUFFIXES, rest))
        return TRUE;
      while (g_ascii_isdigit (*rest))
        rest++;
      if (*rest == '\0')
        return TRUE;
    }
  return FALSE;
}

/* Splits "X-Api-Key", "userPassword" or "csrf_token2" into lowercase words, as the extension's
 * tokens() does: at non-alphanumerics and at a lowercase letter or digit followed by a capital. */
static guint
split_words (const char *name,
             gsize       length,
             char        words[MAX_TOKENS][MAX_NAME + 1])
{
  guint n = 0;
  gsize w = 0;

  for (gsize i = 0; i <= length; i++)
    {
      char c = i < length ? name[i] : '\0';
      gboolean alnum = g_ascii_isalnum (c);
      gboolean camel = alnum && g_ascii_isupper (c) && w > 0 &&
                       (g_ascii_islower (name[i - 1]) || g_ascii_isdigit (name[i - 1]));

      if ((!alnum || camel) && w > 0)
        {
          words[n][w] = '\0';
          w = 0;
          if (++n == MAX_TOKENS)
            return n;
        }
      if (alnum)
        words[n][w++] = g_ascii_tolower (c);
    }
  return n;
}

/* The checks below compare each word with some sixty strings, and every word of every string in
 * every browser answer is a candidate name: that was most of the redaction's time. A word can
 * only match if it starts as a secret word or a pair's first word starts (its first three
 * letters, or both letters of a two-letter one) or holds the first three letters of a secret
 * substring somewhere (every one has at least four). These sets, built from the lists themselves
 * so that they cannot fall out of step with them, rule most words out in a few lookups. They
 * only say "maybe": the checks that decide are unchanged. */
#define N_ALNUM 36
#define TRIGRAM_BITS (N_ALNUM * N_ALNUM * N_ALNUM)

static guint32 start2[(N_ALNUM * N_ALNUM + 31) / 32];
static guint32 start3[(TRIGRAM_BITS + 31) / 32];
static guint32 contain3[(TRIGRAM_BITS + 31) / 32];

/* @c: a lowercase ASCII letter or a digit, as split_words() leaves them */
static guint
alnum_index (char c)
{
  return g_ascii_isdigit (c) ? (guint) (c - '0') : 10 + (guint) (c - 'a');
}

static guint
gram_index (const char *p,
            guint       n)
{
  guint index = 0;

  for (guint i = 0; i < n; i++)
    index = index * N_ALNUM + alnum_index (p[i]);
  return index;
}

static void
add_start (const char *word)
{
  gsize len = strlen (word);

  g_assert (len >= 2);
  if (len == 2)
    set_bit (start2, gram_index (word, 2));
  else
    set_bit (start3, gram_index (word, 3));
}

static gpointer
build_gram_sets (gpointer data)
{
  for (guint i = 0; SECRET_WORDS[i] != NULL; i++)
    add_start (SECRET_WORDS[i]);
  for (gsize i = 0; i < G_N_ELEMENTS (SECRET_PAIRS); i++)
    add_start (SECRET_PAIRS[i].first);
  for (guint i = 0; SECRET_SUBSTRINGS[i] != NULL; i++)
    {
      g_assert (strlen (SECRET_SUBSTRINGS[i]) >= 4);
      set_bit (contain3, gram_index (SECRET_SUBSTRINGS[i], 3));
    }
  return NULL;
}

/* @word: lowercase ASCII letters and digits, from split_words() */
static gboolean
may_be_secret_word (const char *word)
{
  gsize len = strlen (word);

  if (len < 2)
    return FALSE;
  if (has_bit (start2, gram_index (word, 2)))
    return TRUE;
  if (len < 3)
    return FALSE;
  if (has_bit (start3, gram_index (word, 3)))
    return TRUE;
  for (gsize i = 0; i + 3 <= len; i++)
    if (has_bit (contain3, gram_index (word + i, 3)))
      return TRUE;
  return FALSE;
}

/**
 * chp_redact_name_is_secret:
 * @name: a parameter, header, cookie, field or JSON member name
 * @length: its length in bytes, or -1 when nul-terminated
 *
 * Returns: whether a value under this name is a secret (see the top of this file).
 */
gboolean
chp_redact_name_is_secret (const char *name,
                           gssize      length)
{
  static GOnce gram_sets_once = G_ONCE_INIT;
  char words[MAX_TOKENS][MAX_NAME + 1];
  guint n;
  guint first;

  g_return_val_if_fail (name != NULL, FALSE);

  if (length < 0)
    length = strlen (name);
  if (length == 0 || length > MAX_NAME)
    return FALSE;

  g_once (&gram_sets_once, build_gram_sets, NULL);
  n = split_words (name, length, words);
  for (first = 0; first < n && !may_be_secret_word (words[first]); first++)
    ;
  if (first == n)
    return FALSE;

  if (n >= 2 && in_list (META_WORDS, words[n - 1]))
    return FALSE;

  for (guint i = first; i < n; i++)
    {
      if (in_list (NOT_SECRET_WORDS, words[i]))
        continue;
      for (guint k = 0; SECRET_SUBSTRINGS[k] != NULL; k++)
        if (strstr (words[i], SECRET_SUBSTRINGS[k]) != NULL)
          return TRUE;
      if (is_secret_word (words[i]))
        return TRUE;
      if (i + 1 < n)
        for (gsize k = 0; k < G_N_ELEMENTS (SECRET_PAIRS); k++)
          if (strcmp (words[i], SECRET_PAIRS[k].first) == 0 &&
              strcmp (words[i + 1], SECRET_PAIRS[k].second) == 0)
            return TRUE;
    }
  return FALSE;
}
