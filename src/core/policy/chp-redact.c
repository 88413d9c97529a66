/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-redact.c: the app's own pass over page-derived results before an agent sees them
 * (DESIGN §8). The extension redacts first; this pass catches what it missed, so it errs towards
 * masking: a masked word costs the agent a little, a leaked cookie costs the person an account.
 *
 * Every secret becomes `[redacted <name> len=N]`: <name> is the kind (jwt, bearer, …) or the
 * parameter, header or member name it was found under; N its length in characters. The marker is
 * passed through unchanged, so redacting twice changes nothing more.
 *
 * Text rules (chp_redact_text), tried at each word start, in this order:
 *
 *   found                                          name              example
 *   ---------------------------------------------  ----------------  --------------------------
 *   "-----BEGIN … PRIVATE KEY-----" … "-----END …"  private_key       a PEM private key block
 *   three+ base64url segments, the first "eyJ…"    jwt               eyJhbGciOi….eyJzdWIi….sig
 *   "Bearer <token>" / "Basic <base64>" *          bearer / basic    Bearer abc.def-123
 *   sk-…(20+), sk_live_/sk_test_/rk_live_/rk_test_ api_key, stripe_key
 *   ghp_ gho_ ghu_ ghs_ ghr_ (30+), github_pat_    github_token
 *   glpat-, xox[abeprs]-, npm_, hf_                gitlab_token, slack_token, npm_token, hf_token
 *   AKIA/ASIA + 16 [0-9A-Z], AIza + 35, ya29.+20   aws_key, google_api_key, google_oauth_token
 *   a card number: 13-19 digits (groups split by   card_number       4111 1111 1111 1111
 *     one ' ' or '-'), a network's prefix and
 *     length, Luhn
 *   123-45-6789 (US SSN), a French NIR with its    ssn, national_id  1 85 05 78 006 084 91
 *     key, a Chinese resident id with its check
 *   a code, then "is your … code" (≤ 4 words)      code              G-482913 is your … code
 *   scheme://user:<password>@host                  password          postgres://admin:pw@db
 *   <secret name>=<value>                          the name          ?session_id=…  sid=…; a=b
 *   ?code= / &code= / #code= with 8+ characters    code              an OAuth callback
 *   <secret name>: <value> at a line start, for    the header        Cookie: …  X-Api-Key: …
 *     Cookie, Set-Cookie, (Proxy-)Authorization,
 *     and secret names with a '-': rest of line
 *   <secret name>: <one token> **                  the name          password: hunter22
 *   "<secret name>": "<value>" (JSON/dict text)    the name          "apiKey": "…"
 *   <secret name> <20+ chars, letters and digits>  the name          token 4f2c9a7e1b3d5f6a8c0e
 *   a phrase of PHRASES, then "is", ':' or nothing  the phrase's      verification code is 482913
 *     and a short code (3-12 digits; or 4-32       name              Votre mot de passe est …
 *     letters, digits, '-' with 2+ digits), or                       验证码：482913
 *     for passwords and keys a key (ASCII, 6+ with
 *     a digit or symbol, or 16+) ***
 *
 *   *  the token must have 8+ characters with a digit or a symbol ("Bearer instruments" stays).
 *   ** the token must end its line (or be followed by , ; } ] ) or a quote) and have 6+
 *      characters with a digit or a symbol, or 16+ ("Password: required" stays).
 *   *** a one-word phrase needs "is" or ':' ("pin 2024 posts" stays), and a key after ':' must
 *      end its line, as **; a single word's "name: value" is that rule's.
 *
 * The words, key prefixes, schemes, headers and phrases of these rules are data:
 * src/core/policy/redact-patterns.json, made into chp-redact-patterns.h here and into the
 * extension's redact-patterns.js, so the two redactions read one list. The rules themselves are
 * split by what they read: secret names (chp-redact-names.c, shared with JSON member names),
 * cards and national ids (chp-redact-numbers.c), phrases (chp-redact-phrases.c), the markers
 * (chp-redact-marker.c) and the JSON walk (chp-redact-json.c); this file scans the text.
 *
 * Kept on purpose (false-positive guards): plain words and prose; UUIDs, hashes and ids in URL
 * paths and text unless under a secret name; "key=" alone (too common: i18n keys, React keys);
 * '==' comparisons; C++/Rust paths (Token::new); numbers and booleans under names that are not
 * secret; numbers in prose (an order, a date, a phone number, a price) unless a code phrase is
 * next to them or they check out as a card or an id; "code=" outside a query; in JSON,
 * booleans always (filled, credential, session: true) and objects (their own members are judged
 * by their own names, so a cookie list keeps its names and domains).
 *
 * Bounded work: one pass, no regular expressions; a look-ahead is at most MAX_NAME bytes for a
 * quoted name, and a look-ahead for a value consumes what it read, so the cost is linear. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-redact"

#include "chp-redact-private.h"

/* ---- text ------------------------------------------------------------------------------- */

static gboolean
is_b64url (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-';
}

static gboolean
is_value_delim (char c)
{
  return g_ascii_isspace (c) || strchr ("&;,\"'<>`)]}#", c) != NULL;
}

/* A JWT or JWE: "eyJ" + base64url, then 2 to 4 more ".segment"s (the last may be empty: alg
 * "none"). */
static gsize
match_jwt (const Scan *sc,
           gsize       i)
{
  gsize e = run (sc, i, is_b64url);
  guint segments = 1;

  if (e - i < 10 || strncmp (sc->s + i, "eyJ", 3) != 0)
    return 0;
  while (segments < 5 && e < sc->n && sc->s[e] == '.')
    {
      gsize next = run (sc, e + 1, is_b64url);

      if (segments == 1 && next - (e + 1) < 2)
        return 0;
      if (next == e + 1 && segments >= 3)
        break;  /* a sentence's full stop after a complete token */
      e = next;
      segments++;
    }
  return segments >= 3 ? e - i : 0;
}

static gsize
match_key_shape (const Scan  *sc,
                 gsize        i,
                 const char **name)
{
  for (gsize k = 0; k < G_N_ELEMENTS (KEY_SHAPES); k++)
    {
      const KeyShape *shape = &KEY_SHAPES[k];
      gsize plen, word_end, body;
      gboolean digit = FALSE;
      gboolean ok = TRUE;

      /* Most words end here: this runs at every word. */
      if (sc->s[i] != shape->prefix[0])
        continue;
      plen = strlen (shape->prefix);
      if (sc->n - i <= plen || strncmp (sc->s + i, shape->prefix, plen) != 0)
        continue;
      word_end = run (sc, i + plen, is_token_char);
      body = word_end - i - plen;
      if (body == 0 || body < shape->min_body ||
          (shape->exact_body != 0 && body != shape->exact_body))
        continue;
      for (gsize j = i + plen; j < word_end; j++)
        {
          char c = sc->s[j];

          digit |= g_ascii_isdigit (c);
          if (shape->upper_digits && !g_ascii_isupper (c) && !g_ascii_isdigit (c))
            ok = FALSE;
        }
      if (!ok || (shape->needs_digit && !digit))
        continue;
      *name = shape->name;
      return word_end - i;
    }
  return 0;
}

/* "Bearer <token>" and "Basic <base64>": the scheme word stays, the credential goes. Returns
 * the end of the credential, or 0. */
static gsize
match_auth_scheme (Scan  *sc,
                   gsize  i)
{
  for (guint k = 0; AUTH_SCHEMES[k] != NULL; k++)
    {
      const char *scheme = AUTH_SCHEMES[k];
      gsize len = strlen (scheme);
      gsize v, e;
      gboolean telling = FALSE;

      if (sc->n - i <= len || g_ascii_strncasecmp (sc->s + i, scheme, len) != 0 ||
          !is_blank (sc->s[i + len]))
        continue;
      v = skip_blanks (sc, i + len, 4);
      for (e = v; e < sc->n; e++)
        {
          char c = sc->s[e];

          if (g_ascii_isdigit (c) || strchr ("-._~+/", c) != NULL)
            telling = TRUE;
          else if (!g_ascii_isalpha (c))
            break;
        }
      while (e < sc->n && sc->s[e] == '=')
        {
          e++;
          telling = TRUE;
        }
      if (e - v < 8 || !telling)
        return 0;
      g_string_append_len (sc->out, sc->s + i, v - i);
      emit (sc, scheme, len, v, e);
      return e;
    }
  return 0;
}

/* A PEM private key block, BEGIN line to END line. */
static gsize
match_pem (Scan  *sc,
           gsize  i)
{
  const char *begin = sc->s + i;
  const char *line_end, *end, *close;

  if (sc->no_pem_end || strncmp (begin, "-----BEGIN ", 11) != 0)
    return 0;
  line_end = strstr (begin + 11, "-----");
  if (line_end == NULL || line_end - begin > 80 ||
      g_strstr_len (begin, line_end - begin, "PRIVATE KEY") == NULL)
    return 0;
  end = strstr (line_end + 5, "-----END ");
  if (end == NULL)
    {
      sc->no_pem_end = TRUE;
      return 0;
    }
  close = strstr (end + 9, "-----");
  if (close == NULL || close - end > 80)
    return 0;
  emit (sc, "private_key", 11, i, (close + 5) - sc->s);
  return (close + 5) - begin;
}

static gboolean
at_line_start (const Scan *sc,
               gsize       i)
{
  while (i > 0 && is_blank (sc->s[i - 1]))
    i--;
  return i == 0 || sc->s[i - 1] == '\n' || sc->s[i - 1] == '\r' || sc->s[i - 1] == '"' ||
         sc->s[i - 1] == '\'';
}

/* A quoted value starting at the quote @v: the content's end (the closing quote), or where the
 * search stopped (a newline, the end, MAX_QUOTED) — an unterminated secret is masked to there.
 * Backslash escapes are skipped when @escapes. */
static gsize
quoted_end (const Scan *sc,
            gsize       v,
            gboolean    escapes)
{
  char q = sc->s[v];
  gsize e;

  for (e = v + 1; e < sc->n && e - v <= MAX_QUOTED; e++)
    {
      char c = sc->s[e];

      if (c == q || c == '\n' || c == '\r')
        break;
      if (escapes && c == '\\' && e + 1 < sc->n && sc->s[e + 1] != '\n')
        e++;
    }
  /* Stopped by the bound inside a character: mask it whole, or its last bytes would be left
   * after the marker and the text would no longer be UTF-8. */
  while (e < sc->n && ((guchar) sc->s[e] & 0xC0) == 0x80)
    e++;
  return MIN (e, sc->n);
}

static gboolean
looks_secret (const char *p,
              gsize       len)
{
  gboolean telling = FALSE;

  for (gsize i = 0; i < len; i++)
    if (!g_ascii_isalpha (p[i]))
      telling = TRUE;
  return (len >= 6 && telling) || len >= 16;
}

/* Finds the value after a secret name ending at @j; sets [*from, *to). */
static gboolean
find_value (Scan  *sc,
            gsize  i,
            gsize  j,
            gsize *from,
            gsize *to)
{
  const char *s = sc->s;
  gsize n = sc->n;
  gsize k = skip_blanks (sc, j, 4);
  gsize v, e;

  if (k < n && s[k] == '=' && (k + 1 >= n || s[k + 1] != '='))
    {
      v = skip_blanks (sc, k + 1, 4);
      if (v < n && (s[v] == '"' || s[v] == '\''))
        {
          *from = v + 1;
          *to = quoted_end (sc, v, FALSE);
          return *to > *from;
        }
      for (e = v; e < n && !is_value_delim (s[e]); e++)
        ;
      *from = v;
      *to = e;
      return e > v;
    }

  if (k < n && s[k] == ':' && (k + 1 >= n || s[k + 1] != ':'))
    {
      g_autofree char *lower = g_ascii_strdown (s + i, j - i);
      char quote = i > 0 && (s[i - 1] == '"' || s[i - 1] == '\'') ? s[i - 1] : '\0';
      gboolean header = in_list (LINE_HEADERS, lower) || strchr (lower, '-') != NULL;

      if (header && at_line_start (sc, i))
        {
          v = skip_blanks (sc, k + 1, 16);
          for (e = v; e < n && s[e] != '\n' && s[e] != '\r' && s[e] != quote; e++)
            ;
          while (e > v && is_blank (s[e - 1]))
            e--;
          *from = v;
          *to = e;
          return e > v;
        }

      v = skip_blanks (sc, k + 1, 4);
      if (v < n && (s[v] == '"' || s[v] == '\''))
        {
          *from = v + 1;
          *to = quoted_end (sc, v, TRUE);
          return *to > *from;
        }
      for (e = v; e < n && !g_ascii_isspace (s[e]) && strchr (",;}])\"'<>", s[e]) == NULL; e++)
        ;
      k = skip_blanks (sc, e, G_MAXUINT);
      if (e > v && (k == n || strchr ("\r\n,;}])\"'", s[k]) != NULL) &&
          looks_secret (s + v, e - v))
        {
          *from = v;
          *to = e;
          return TRUE;
        }
      return FALSE;
    }

  if (k > j && k < n)
    {
      gboolean digit = FALSE, alpha = FALSE;

      /* "Token eyJ….eyJ….sig": the JWT whole, dots and all, not its first segment alone (which
       * the run below would stop at, leaving the claims and the signature to the agent). */
      if ((e = match_jwt (sc, k)) > 0)
        {
          *from = k;
          *to = k + e;
          return TRUE;
        }
      for (e = k; e < n && (g_ascii_isalnum (s[e]) || strchr ("+/_-=", s[e]) != NULL); e++)
        {
          digit |= g_ascii_isdigit (s[e]);
          alpha |= g_ascii_isalpha (s[e]);
        }
      if (e - k >= 20 && digit && alpha && (e == n || !is_name_char (s[e]) || s[e] == '.'))
        {
          *from = k;
          *to = e;
          return TRUE;
        }
    }
  return FALSE;
}

/* ---- URLs: a password in the userinfo, an OAuth code ---------------------------------------- */

static gboolean
is_scheme (const char *p,
           gsize       len)
{
  if (len == 0 || !g_ascii_isalpha (p[0]))
    return FALSE;
  for (gsize k = 1; k < len; k++)
    if (!g_ascii_isalnum (p[k]) && strchr ("+-.", p[k]) == NULL)
      return FALSE;
  return TRUE;
}

/* "scheme://user:password@host": @u is just after "//". Finds the password (from the first ':'
 * to the last '@' of the authority, as a browser reads it) and leaves it for scan() to mask when
 * it gets there: the user part before it is scanned as any text, so that a second pass, which
 * no longer finds the '@' past the marker, reads it the same way. */
static void
find_userinfo (Scan  *sc,
               gsize  u)
{
  const char *s = sc->s;
  const char *colon;
  gsize e, at = 0;

  for (e = u; e < sc->n && e - u <= 256; e++)
    {
      char c = s[e];

      if (g_ascii_isspace (c) || strchr ("/?#\"'<>`", c) != NULL)
        break;
      if (c == '@')
        at = e;
    }
  if (at == 0 || (colon = memchr (s + u, ':', at - u)) == NULL || colon + 1 == s + at ||
      chp_redact_marker_len (colon + 1, sc->n - (colon + 1 - s)) > 0)
    return;
  sc->pw_from = colon + 1 - s;
  sc->pw_to = at;
}

/* At the start of a word: a key shape, an auth scheme, or a name and maybe its value. Always
 * consumes at least one byte and returns the new position. */
static gsize
at_word (Scan  *sc,
         gsize  i)
{
  const char *s = sc->s;
  const char *kind = NULL;
  gsize m, j, name_end, from, to;

  if ((m = match_jwt (sc, i)) > 0)
    {
      emit (sc, "jwt", 3, i, i + m);
      return i + m;
    }
  if ((m = match_key_shape (sc, i, &kind)) > 0)
    {
      emit (sc, kind, strlen (kind), i, i + m);
      return i + m;
    }
  if ((m = match_auth_scheme (sc, i)) > 0)
    return m;
  if (g_ascii_isdigit (s[i]) && (m = chp_redact_match_number (sc, i, &kind)) > 0)
    {
      emit (sc, kind, strlen (kind), i, i + m);
      return i + m;
    }
  if ((g_ascii_isdigit (s[i]) ||
       (i + 2 < sc->n && s[i + 1] == '-' && g_ascii_isdigit (s[i + 2]))) &&
      (m = chp_redact_code_before_phrase (sc, i)) > 0)
    {
      emit (sc, "code", 4, i, m);
      return m;
    }

  j = run (sc, i, is_name_char);
  name_end = j;
  while (name_end > i && sc->s[name_end - 1] == '.')
    name_end--;

  /* "postgres://admin:pw@db": the password in a URL's userinfo. */
  if (j + 2 < sc->n && s[j] == ':' && s[j + 1] == '/' && s[j + 2] == '/' &&
      is_scheme (s + i, j - i))
    find_userinfo (sc, j + 3);

  /* "API key 4f2c…": two words that only together name a secret. */
  if (name_end == j && j - i == 3 && g_ascii_strncasecmp (s + i, "api", 3) == 0 &&
      j + 4 <= sc->n && s[j] == ' ' && g_ascii_strncasecmp (s + j + 1, "key", 3) == 0)
    {
      gsize after = run (sc, j + 1, is_name_char);

      if (after - (j + 1) == 3 && find_value (sc, i, after, &from, &to) &&
          chp_redact_marker_len (s + from, sc->n - from) == 0)
        {
          g_string_append_len (sc->out, s + i, from - i);
          emit (sc, "api_key", 7, from, to);
          return to;
        }
    }

  if (name_end == j && j - i <= MAX_NAME && chp_redact_name_is_secret (s + i, j - i) &&
      find_value (sc, i, j, &from, &to))
    {
      g_string_append_len (sc->out, s + i, from - i);
      /* An earlier pass's marker: keep it as it is, and the main loop copies it. */
      if (chp_redact_marker_len (s + from, sc->n - from) > 0)
        return from;
      emit (sc, s + i, j - i, from, to);
      return to;
    }

  /* An OAuth callback's "?code=…" (not "country_code", not "code=404"). */
  if (j - i == 4 && i > 0 && strchr ("?&#", s[i - 1]) != NULL &&
      g_ascii_strncasecmp (s + i, "code", 4) == 0 && j < sc->n && s[j] == '=')
    {
      gsize e;

      /* Not through a '[': a marker a later rule leaves there would make the second pass
       * longer than the first. */
      for (e = j + 1; e < sc->n && !is_value_delim (s[e]) && s[e] != '['; e++)
        ;
      if (e - (j + 1) >= 8)
        {
          g_string_append_len (sc->out, s + i, j + 1 - i);
          emit (sc, "code", 4, j + 1, e);
          return e;
        }
    }

  if (chp_redact_may_start_phrase (sc, i) && (m = chp_redact_at_phrase (sc, i)) > 0)
    return m;

  g_string_append_len (sc->out, s + i, j - i);
  return j;
}

/* `"name": "value"` or `'name' => 'value'` with a secret name. Returns the position after the
 * masked value (its closing quote is left to the main loop), or 0 when this is not one. */
static gsize
quoted_member (Scan  *sc,
               gsize  i)
{
  const char *s = sc->s;
  gsize n = sc->n;
  char q = s[i];
  gsize e, k, v, end;

  for (e = i + 1; e < n && e - i <= MAX_NAME && s[e] != q && s[e] != '\n' && s[e] != '\\'; e++)
    ;
  if (e >= n || s[e] != q || e == i + 1)
    return 0;
  k = skip_blanks (sc, e + 1, 4);
  if (k < n && s[k] == ':')
    k++;
  else if (k + 1 < n && s[k] == '=' && s[k + 1] == '>')
    k += 2;
  else
    return 0;
  /* A name holding an earlier pass's marker is not one: "[redacted ssn len=11]" says ssn. */
  if (!chp_redact_name_is_secret (s + i + 1, e - i - 1) ||
      g_strstr_len (s + i + 1, e - i - 1, MARKER_PREFIX) != NULL)
    return 0;

  v = skip_blanks (sc, k, 4);
  if (v < n && (s[v] == '"' || s[v] == '\''))
    {
      end = quoted_end (sc, v, TRUE);
      if (end == v + 1)
        return 0;
      if (chp_redact_marker_len (s + v + 1, n - v - 1) == end - v - 1)
        {
          /* An earlier pass's marker: the member as that pass left it, its name not read
           * again as text (where "token=abc" would now be found). */
          g_string_append_len (sc->out, s + i, v + 1 - i);
          return v + 1;
        }
      g_string_append_len (sc->out, s + i, v + 1 - i);
      emit (sc, s + i + 1, e - i - 1, v + 1, end);
      return end;
    }
  if (chp_redact_marker_len (s + v, n - v) > 0)
    {
      /* A number an earlier pass masked: as above. */
      g_string_append_len (sc->out, s + i, v - i);
      return v;
    }
  for (end = v; end < n && (g_ascii_isdigit (s[end]) || strchr ("+-.eE", s[end]) != NULL); end++)
    ;
  if (end == v || !g_ascii_isdigit (s[v] == '-' && v + 1 < n ? s[v + 1] : s[v]))
    return 0;
  g_string_append_len (sc->out, s + i, v - i);
  emit (sc, s + i + 1, e - i - 1, v, end);
  return end;
}

static void
scan (Scan *sc)
{
  const char *s = sc->s;
  gsize i = 0;

  while (i < sc->n)
    {
      char c = s[i];
      gsize m;

      if (sc->pw_to > 0 && i >= sc->pw_from)
        {
          gboolean here = i == sc->pw_from;  /* else a rule before it masked through it */

          if (here)
            {
              emit (sc, "password", 8, sc->pw_from, sc->pw_to);
              i = sc->pw_to;
            }
          sc->pw_from = sc->pw_to = 0;
          if (here)
            continue;
        }
      if (c == '[' && (m = chp_redact_marker_len (s + i, sc->n - i)) > 0)
        {
          g_string_append_len (sc->out, s + i, m);
          i += m;
        }
      else if (c == '-' && (m = match_pem (sc, i)) > 0)
        i += m;
      else if ((c == '"' || c == '\'') && (m = quoted_member (sc, i)) > 0)
        i = m;
      else if (is_token_char (c) && (i == 0 || !is_token_char (s[i - 1])))
        i = at_word (sc, i);
      else if ((guchar) c >= 0x80 && chp_redact_may_start_phrase (sc, i) &&
               (m = chp_redact_at_phrase (sc, i)) > 0)
        i = m;  /* "验证码：482913" */
      else
        {
          g_string_append_c (sc->out, c);
          i++;
        }
    }
}

/**
 * chp_redact_text:
 * @text: page-derived text (invalid UTF-8 is repaired first)
 * @count_out: (out) (optional): how many secrets were masked
 *
 * Returns: (transfer full): @text with each secret replaced by `[redacted <name> len=N]`.
 */
char *
chp_redact_text (const char *text,
                 guint      *count_out)
{
  g_autofree char *valid = NULL;
  Scan sc = { 0, };

  if (count_out != NULL)
    *count_out = 0;
  g_return_val_if_fail (text != NULL, NULL);

  if (!g_utf8_validate (text, -1, NULL))
    text = valid = g_utf8_make_valid (text, -1);

  sc.s = text;
  sc.n = strlen (text);
  sc.out = g_string_sized_new (sc.n + 1);
  scan (&sc);

  if (count_out != NULL)
    *count_out = sc.count;
  return g_string_free (sc.out, FALSE);
}
