/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-redact-phrases.c: secrets a page announces in words — "Your verification code is 482913",
 * "API key is …", "Votre mot de passe est …", "验证码：482913", "482913 is your code" — found after
 * (or before) a phrase of PHRASES, from src/core/policy/redact-patterns.json. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-redact"

#include "chp-redact-private.h"

/* Every word start asks whether a phrase starts there: a set of the phrases' first three bytes
 * (lowercase, hashed) rules out almost every word in one lookup, as the name sets do. Only a
 * "maybe": chp_redact_at_phrase() decides. */
#define PHRASE_START_BITS 4096

static guint32 phrase_start[PHRASE_START_BITS / 32];

static guint
start_hash (guchar a,
            guchar b,
            guchar c)
{
  return ((guint) g_ascii_tolower (a) * 961 + (guint) g_ascii_tolower (b) * 31 +
          (guint) g_ascii_tolower (c)) % PHRASE_START_BITS;
}

static gpointer
build_phrase_start (gpointer data)
{
  for (gsize k = 0; k < G_N_ELEMENTS (PHRASES); k++)
    {
      const guchar *t = (const guchar *) PHRASES[k].text;

      g_assert (strlen (PHRASES[k].text) >= 3);
      set_bit (phrase_start, start_hash (t[0], t[1], t[2]));
    }
  return NULL;
}

gboolean
chp_redact_may_start_phrase (const Scan *sc,
                             gsize       i)
{
  static GOnce once = G_ONCE_INIT;
  const guchar *s = (const guchar *) sc->s;

  g_once (&once, build_phrase_start, NULL);
  return i + 2 < sc->n && has_bit (phrase_start, start_hash (s[i], s[i + 1], s[i + 2]));
}

/* The end of @text (lowercase) matched at @i, ASCII case ignored, or 0. */
static gsize
match_words (const Scan *sc,
             gsize       i,
             const char *text)
{
  gsize k = i;

  for (const char *p = text; *p != '\0'; p++)
    {
      if (*p == ' ')
        {
          gsize b = skip_blanks (sc, k, 4);

          if (b == k)
            return 0;
          k = b;
        }
      else if (k < sc->n && g_ascii_tolower (sc->s[k]) == *p)
        k++;
      else
        return 0;
    }
  /* A whole word: "pin" is not "ping". */
  if (k < sc->n && is_token_char (sc->s[k]) && is_token_char (sc->s[k - 1]))
    return 0;
  return k;
}

/* @p: printable ASCII, as key_end() reads it */
static gboolean
looks_like_key (const char *p,
                gsize       len)
{
  gboolean telling = FALSE;

  for (gsize k = 0; k < len; k++)
    if (!g_ascii_isalpha (p[k]))
      telling = TRUE;
  return (len >= 6 && telling) || len >= 16;
}

/* A short code at @v: 3 to 12 digits (two groups of three or four may be split by a space), or
 * 4 to 32 letters, digits and inner hyphens with two digits at least. Its end, or 0. */
static gsize
code_end (const Scan *sc,
          gsize       v)
{
  const char *s = sc->s;
  gsize e = v;
  guint digits = 0;
  gboolean other = FALSE;

  while (e < sc->n && (g_ascii_isalnum (s[e]) ||
                       (s[e] == '-' && e > v && e + 1 < sc->n && g_ascii_isalnum (s[e + 1]))))
    {
      if (g_ascii_isdigit (s[e]))
        digits++;
      else
        other = TRUE;
      e++;
    }
  if (!other && (e - v == 3 || e - v == 4) && e + 1 < sc->n && s[e] == ' ')
    {
      gsize f = e + 1;

      while (is_digit_at (sc, f))
        f++;
      if (f - (e + 1) == e - v && !(f < sc->n && is_token_char (s[f])))
        {
          digits += f - (e + 1);
          e = f;
        }
    }
  /* "482913.5", "482913:x", "482913-": part of something longer. '[' as a letter: a later
   * rule's marker there must not make the second pass mask what the first kept. */
  if (e < sc->n && (is_token_char (s[e]) || s[e] == '@' || s[e] == '/' ||
                    (strchr (".:,", s[e]) != NULL && e + 1 < sc->n &&
                     (g_ascii_isalnum (s[e + 1]) || s[e + 1] == '['))))
    return 0;
  if (!other)
    return digits >= 3 && digits <= 12 ? e : 0;
  return e - v >= 4 && e - v <= 32 && digits >= 2 ? e : 0;
}

/* A key after "is": printable ASCII up to a delimiter, less a sentence's full stop; its end, or
 * 0. One that runs into a '[' is refused: a later rule may mask part of a refused key, and the
 * second pass, which stops at that marker, must refuse what is left of it too. */
static gsize
key_end (const Scan *sc,
         gsize       v)
{
  gsize e;

  for (e = v; e < sc->n && (guchar) sc->s[e] > 0x20 && (guchar) sc->s[e] < 0x7f &&
              strchr ("\"'<>`,;()[]{}", sc->s[e]) == NULL; e++)
    ;
  if (e < sc->n && sc->s[e] == '[')
    return 0;
  while (e > v && strchr (".!?:", sc->s[e - 1]) != NULL)
    e--;
  return looks_like_key (sc->s + v, e - v) ? e : 0;
}

/* "secret key 4f2c9a7e…" with nothing between: 20 or more letters, digits and +/_-= with both
 * a letter and a digit, as after a secret name; its end, or 0. */
static gsize
long_token_end (const Scan *sc,
                gsize       v)
{
  gboolean digit = FALSE, alpha = FALSE;
  gsize e;

  for (e = v; e < sc->n && (g_ascii_isalnum (sc->s[e]) || strchr ("+/_-=", sc->s[e]) != NULL); e++)
    {
      digit |= g_ascii_isdigit (sc->s[e]);
      alpha |= g_ascii_isalpha (sc->s[e]);
    }
  /* A '[' after it refuses it (a name character), as key_end() does. */
  if (e - v >= 20 && digit && alpha && (e == sc->n || !is_name_char (sc->s[e]) || sc->s[e] == '.'))
    return e;
  return 0;
}

/* Whether @c may start a lead of CODE_LEADS: a quick "no" for most words. */
static gboolean
starts_a_lead (char c)
{
  for (guint l = 0; CODE_LEADS[l] != NULL; l++)
    if (CODE_LEADS[l][0] == g_ascii_tolower (c))
      return TRUE;
  return FALSE;
}

/* "482913 is your verification code", "G-482913 est votre code": a code at @i, then a lead of
 * CODE_LEADS ("is your") and, within four more words, a word of CODE_ENDS ("code", "passcode",
 * "pin" or "otp"). Its end, or 0. */
gsize
chp_redact_code_before_phrase (const Scan *sc,
                               gsize       i)
{
  gsize e, k = 0;

  /* Out at once unless "is", "est" (or a second group of digits) follows the word. */
  for (e = i; e < sc->n && (g_ascii_isalnum (sc->s[e]) || sc->s[e] == '-'); e++)
    ;
  k = skip_blanks (sc, e, 4);
  if (k >= sc->n || !(g_ascii_isdigit (sc->s[k]) || starts_a_lead (sc->s[k])))
    return 0;
  k = 0;
  if ((e = code_end (sc, i)) == 0)
    return 0;
  for (guint l = 0; CODE_LEADS[l] != NULL && k == 0; l++)
    k = match_words (sc, skip_blanks (sc, e, 4), CODE_LEADS[l]);
  for (guint w = 0; k > 0 && w < 5; w++)
    {
      gsize word = skip_blanks (sc, k, 4);

      if (word == k)
        return 0;
      for (guint x = 0; CODE_ENDS[x] != NULL; x++)
        if (match_words (sc, word, CODE_ENDS[x]) > 0)
          return e;
      k = run (sc, word, is_token_char);
      if (k == word || k - word > 32)
        return 0;
    }
  return 0;
}

/* A phrase of PHRASES at @i and the secret after it. Emits everything up to the end of the
 * secret and returns that end, or 0. */
gsize
chp_redact_at_phrase (Scan  *sc,
                      gsize  i)
{
  const char *s = sc->s;
  gsize n = sc->n;

  for (gsize p = 0; p < G_N_ELEMENTS (PHRASES); p++)
    {
      const Phrase *phrase = &PHRASES[p];
      gboolean word = FALSE, colon = FALSE, single;
      gsize k, v, e;

      if (phrase->text[0] != g_ascii_tolower (s[i]) || (k = match_words (sc, i, phrase->text)) == 0)
        continue;

      /* "is", "is:", ":", "：", "est", "是" … or nothing. */
      v = skip_blanks (sc, k, 4);
      for (guint c = 0; CONNECTOR_WORDS[c] != NULL; c++)
        {
          gsize after = match_words (sc, v, CONNECTOR_WORDS[c]);

          if (after > 0)
            {
              word = TRUE;
              v = skip_blanks (sc, after, 4);
              break;
            }
        }
      if (v < n && s[v] == ':' && !(v + 1 < n && s[v + 1] == ':'))
        {
          colon = TRUE;
          v++;
        }
      else if (v + 3 <= n && memcmp (s + v, "\xef\xbc\x9a", 3) == 0)  /* full-width colon */
        {
          colon = TRUE;
          v += 3;
        }
      v = skip_blanks (sc, v, 4);
      if (v >= n || chp_redact_marker_len (s + v, n - v) > 0)
        continue;
      /* One ASCII word ("pin", "token"): too common a word to be trusted without "is" or ':'. */
      single = strchr (phrase->text, ' ') == NULL && (guchar) phrase->text[0] < 0x80;

      if (phrase->kind == PHRASE_CODE)
        e = single && !word && !colon ? 0 : code_end (sc, v);
      else if (word)
        e = key_end (sc, v);
      else if (colon)
        {
          /* As "name: value": the value ends its line. A single word's is that rule's. */
          gsize after;

          e = single ? 0 : key_end (sc, v);
          after = skip_blanks (sc, e, G_MAXUINT);
          if (e > 0 && after < n && strchr ("\r\n,;}])\"'.!?", s[after]) == NULL)
            e = 0;
        }
      else
        e = single ? 0 : long_token_end (sc, v);
      if (e == 0)
        continue;
      g_string_append_len (sc->out, s + i, v - i);
      emit (sc, phrase->name, strlen (phrase->name), v, e);
      return e;
    }
  return 0;
}
