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
 * Secret names (chp_redact_name_is_secret, shared with JSON member names; it follows the
 * extension's credentialName in snapshot-core.js and adds cookies, sessions, CSRF, auth): a word
 * of the name containing password, passwd, passphrase, passcode, passwort, secret, token,
 * apikey, csrf, xsrf, cookie, sessionid, sessid, privatekey, accesskey, authorization; or a whole
 * word pin, otp, totp, hotp, cvv, cvc, csc, pwd, pw, pass, mfa, 2fa, auth, sid, ssn, sig,
 * signature, session, bearer, jwt, iban, cardnumber, ccnumber, ccnum (optionally followed by
 * code, number, num, no or digits); or the word pairs api key, access key, private key,
 * account key, card number, cc number, credit card, security code, account number,
 * verification code, recovery code(s), backup code(s), recovery phrase, seed phrase; or a word
 * containing mnemonic. Words split at
 * non-alphanumerics and camelCase. Not secret: a name whose last word says it is about the
 * secret rather than the secret (tokenType, passwordHint, sessionExpires, valueLength,
 * csrfHeaderName — see META_WORDS), and the words tokens, tokenizer, secretary.
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

#include "chp-redact.h"

#include <string.h>

#define MAX_NAME        128   /* longer "names" are not names */
#define MAX_QUOTED      4096  /* a quoted value with no end this far is masked to here */
#define MAX_MARKER_NAME 40
#define MAX_JSON_DEPTH  256
#define MAX_TOKENS      16

static const char MARKER_PREFIX[] = "[redacted ";

/* ---- names ------------------------------------------------------------------------------ */

static const char * const SECRET_SUBSTRINGS[] = {
  "password", "passwd", "passphrase", "passcode", "passwort", "secret", "token", "apikey",
  "csrf", "xsrf", "cookie", "sessionid", "sessid", "privatekey", "accesskey", "authorization",
  "mnemonic",
  NULL,
};

static const char * const SECRET_WORDS[] = {
  "pin", "otp", "totp", "hotp", "cvv", "cvc", "csc", "pwd", "pw", "pass", "mfa", "2fa", "auth",
  "sid", "ssn", "sig", "signature", "session", "bearer", "jwt", "iban", "cardnumber", "ccnumber",
  "ccnum",
  NULL,
};

static const char * const SECRET_WORD_SUFFIXES[] = { "code", "number", "num", "no", NULL };

static const struct { const char *first; const char *second; } SECRET_PAIRS[] = {
  { "api", "key" }, { "api", "keys" }, { "access", "key" }, { "private", "key" },
  { "card", "number" }, { "card", "num" }, { "card", "no" }, { "cc", "number" },
  { "cc", "num" }, { "cc", "no" }, { "credit", "card" }, { "security", "code" },
  { "account", "number" }, { "account", "key" }, { "verification", "code" },
  { "recovery", "code" }, { "recovery", "codes" }, { "backup", "code" }, { "backup", "codes" },
  { "recovery", "phrase" }, { "seed", "phrase" },
};

/* Words that never make a name secret although they contain a secret word. */
static const char * const NOT_SECRET_WORDS[] = {
  "tokens", "tokenizer", "tokenize", "tokenized", "tokenization", "secretary", "secretariat",
  NULL,
};

/* A last word that says the value is about the secret, not the secret itself. */
static const char * const META_WORDS[] = {
  "length", "len", "count", "size", "type", "kind", "name", "names", "label", "hint", "field",
  "fields", "policy", "rule", "rules", "required", "present", "filled", "enabled", "disabled",
  "visible", "expires", "expiry", "expiration", "expired", "exp", "ttl", "age", "max", "min",
  "url", "uri", "endpoint", "path", "domain", "format", "status", "header", "param", "strength",
  "reset", "changed", "updated", "created", "at", "date", "time", "timeout", "mode", "version",
  "valid", "invalid", "error", "errors", "message", "placeholder", "prompt", "icon",
  NULL,
};

static gboolean
in_list (const char * const *list,
         const char         *word)
{
  for (guint i = 0; list[i] != NULL; i++)
    if (strcmp (list[i], word) == 0)
      return TRUE;
  return FALSE;
}

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
set_bit (guint32 *set,
         guint    bit)
{
  set[bit / 32] |= 1u << (bit % 32);
}

static gboolean
has_bit (const guint32 *set,
         guint          bit)
{
  return (set[bit / 32] & (1u << (bit % 32))) != 0;
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
 * Returns: whether a value under this name is a secret (see the table at the top of the file).
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

/* ---- markers ---------------------------------------------------------------------------- */

static gboolean
is_marker_name_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '.' || c == '-';
}

/* The length of a well-formed marker at @p, or 0. */
static gsize
marker_len (const char *p,
            gsize       n)
{
  gsize i = sizeof MARKER_PREFIX - 1;
  gsize start;

  if (n < i || memcmp (p, MARKER_PREFIX, i) != 0)
    return 0;
  for (start = i; i < n && i - start < 64 && is_marker_name_char (p[i]); i++)
    ;
  if (i == start || n - i < 5 || memcmp (p + i, " len=", 5) != 0)
    return 0;
  i += 5;
  for (start = i; i < n && i - start < 10 && g_ascii_isdigit (p[i]); i++)
    ;
  if (i == start || i >= n || p[i] != ']')
    return 0;
  return i + 1;
}

/**
 * chp_redact_is_marker:
 *
 * Returns: whether @text is exactly one `[redacted <name> len=N]` marker.
 */
gboolean
chp_redact_is_marker (const char *text)
{
  gsize n;

  g_return_val_if_fail (text != NULL, FALSE);

  n = strlen (text);
  return n > 0 && marker_len (text, n) == n;
}

static void
append_marker (GString    *out,
               const char *name,
               gsize       name_len,
               const char *secret,
               gsize       secret_len)
{
  gsize start;

  g_string_append (out, MARKER_PREFIX);
  start = out->len;
  /* The name is page text too: only characters that cannot end the marker or start markup. */
  for (gsize i = 0; i < name_len && out->len - start < MAX_MARKER_NAME; i++)
    {
      if (is_marker_name_char (name[i]))
        g_string_append_c (out, name[i]);
      else if (out->len > start && out->str[out->len - 1] != '_')
        g_string_append_c (out, '_');
    }
  while (out->len > start && out->str[out->len - 1] == '_')
    g_string_truncate (out, out->len - 1);
  if (out->len == start)
    g_string_append (out, "secret");
  g_string_append_printf (out, " len=%ld]", g_utf8_strlen (secret, secret_len));
}

/* ---- text ------------------------------------------------------------------------------- */

typedef struct
{
  const char *s;
  gsize n;
  GString *out;
  guint count;
  gboolean no_pem_end;  /* a search for "-----END " already failed: never search again */
  gsize pw_from;        /* a URL's password, masked when the scan gets there; pw_to 0: none */
  gsize pw_to;
} Scan;

static void
emit (Scan       *sc,
      const char *name,
      gsize       name_len,
      gsize       from,
      gsize       to)
{
  append_marker (sc->out, name, name_len, sc->s + from, to - from);
  sc->count++;
}

static gboolean
is_token_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-';
}

static gboolean
is_name_char (char c)
{
  return is_token_char (c) || c == '.' || c == '[' || c == ']';
}

static gboolean
is_b64url (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-';
}

static gboolean
is_blank (char c)
{
  return c == ' ' || c == '\t';
}

static gboolean
is_value_delim (char c)
{
  return g_ascii_isspace (c) || strchr ("&;,\"'<>`)]}#", c) != NULL;
}

static gsize
skip_blanks (const Scan *sc,
             gsize       i,
             guint       max)
{
  for (guint k = 0; k < max && i < sc->n && is_blank (sc->s[i]); k++)
    i++;
  return i;
}

static gsize
run (const Scan *sc,
     gsize       i,
     gboolean  (*ok) (char))
{
  while (i < sc->n && ok (sc->s[i]))
    i++;
  return i;
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

typedef struct
{
  const char *prefix;
  guint min_body;
  guint exact_body;       /* 0: any length from min_body */
  gboolean upper_digits;  /* body is [0-9A-Z] only */
  gboolean needs_digit;
  const char *name;
} KeyShape;

static const KeyShape KEY_SHAPES[] = {
  { "sk_live_", 10, 0, FALSE, FALSE, "stripe_key" },
  { "sk_test_", 10, 0, FALSE, FALSE, "stripe_key" },
  { "rk_live_", 10, 0, FALSE, FALSE, "stripe_key" },
  { "rk_test_", 10, 0, FALSE, FALSE, "stripe_key" },
  { "sk-", 20, 0, FALSE, FALSE, "api_key" },
  { "ghp_", 30, 0, FALSE, FALSE, "github_token" },
  { "gho_", 30, 0, FALSE, FALSE, "github_token" },
  { "ghu_", 30, 0, FALSE, FALSE, "github_token" },
  { "ghs_", 30, 0, FALSE, FALSE, "github_token" },
  { "ghr_", 30, 0, FALSE, FALSE, "github_token" },
  { "github_pat_", 30, 0, FALSE, FALSE, "github_token" },
  { "glpat-", 20, 0, FALSE, FALSE, "gitlab_token" },
  { "xoxa-", 10, 0, FALSE, FALSE, "slack_token" },
  { "xoxb-", 10, 0, FALSE, FALSE, "slack_token" },
  { "xoxe-", 10, 0, FALSE, FALSE, "slack_token" },
  { "xoxp-", 10, 0, FALSE, FALSE, "slack_token" },
  { "xoxr-", 10, 0, FALSE, FALSE, "slack_token" },
  { "xoxs-", 10, 0, FALSE, FALSE, "slack_token" },
  { "npm_", 36, 0, FALSE, FALSE, "npm_token" },
  { "hf_", 30, 0, FALSE, FALSE, "hf_token" },
  { "AKIA", 16, 16, TRUE, FALSE, "aws_key" },
  { "ASIA", 16, 16, TRUE, TRUE, "aws_key" },   /* "ASIAN…" is a word; real ones have digits */
  { "AIza", 35, 35, FALSE, FALSE, "google_api_key" },
  { "ya29.", 20, 0, FALSE, FALSE, "google_oauth_token" },  /* the '.' is part of the prefix */
};

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
  static const char * const schemes[] = { "bearer", "basic" };
  static const char * const names[] = { "bearer", "basic" };

  for (guint k = 0; k < G_N_ELEMENTS (schemes); k++)
    {
      gsize len = strlen (schemes[k]);
      gsize v, e;
      gboolean telling = FALSE;

      if (sc->n - i <= len || g_ascii_strncasecmp (sc->s + i, schemes[k], len) != 0 ||
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
      emit (sc, names[k], strlen (names[k]), v, e);
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
      gboolean header = g_str_equal (lower, "cookie") || g_str_equal (lower, "set-cookie") ||
                        g_str_equal (lower, "authorization") ||
                        g_str_equal (lower, "proxy-authorization") || strchr (lower, '-') != NULL;

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

/* ---- numbers: cards and national ids ----------------------------------------------------- */

#define MAX_ID_CHARS 19  /* the longest card number; ids are shorter */
#define MAX_GROUPS   8

/* A number as written at a word start: its characters (digits, and the letters an id may have)
 * and where each group of it ends, the groups split by one space or one '-' (the same one). */
typedef struct
{
  char c[MAX_ID_CHARS];
  guint n;
  guint n_groups;
  guint group_chars[MAX_GROUPS];  /* characters before the end of each group */
  gsize group_end[MAX_GROUPS];    /* text offset after each group */
  char sep;
} Number;

static gboolean
is_digit_at (const Scan *sc,
             gsize       i)
{
  return i < sc->n && g_ascii_isdigit (sc->s[i]);
}

/* Reads the number at @i into @num. Groups stop where one more would pass MAX_ID_CHARS; a first
 * group longer than that is no id at all. */
static gboolean
read_number (const Scan *sc,
             gsize       i,
             Number     *num)
{
  const char *s = sc->s;
  gsize e = i;

  num->n = 0;
  num->n_groups = 0;
  num->sep = '\0';
  for (;;)
    {
      gsize group_start = e;

      while (e < sc->n)
        {
          char c = s[e];
          /* A French NIR's department may be 2A or 2B (Corsica); a Chinese id may end in X. */
          gboolean letter = (num->n == 6 && num->c[5] == '2' && (c == 'A' || c == 'B')) ||
                            (num->n == 17 && (c == 'X' || c == 'x'));

          if (!g_ascii_isdigit (c) && !letter)
            break;
          if (num->n == MAX_ID_CHARS)
            {
              if (num->n_groups == 0)
                return FALSE;
              num->n = num->group_chars[num->n_groups - 1];
              return TRUE;
            }
          num->c[num->n++] = c;
          e++;
          if (c == 'X' || c == 'x')
            break;
        }
      if (e == group_start)
        break;
      num->group_chars[num->n_groups] = num->n;
      num->group_end[num->n_groups] = e;
      num->n_groups++;
      if (num->n_groups == MAX_GROUPS || e + 1 >= sc->n || (s[e] != ' ' && s[e] != '-') ||
          (num->sep != '\0' && s[e] != num->sep) || !is_digit_at (sc, e + 1) ||
          g_ascii_toupper (num->c[num->n - 1]) == 'X')
        break;
      num->sep = s[e];
      e++;
    }
  return num->n_groups > 0;
}

static gboolean
luhn_ok (const char *c,
         guint       n)
{
  guint sum = 0;

  for (guint k = 0; k < n; k++)
    {
      guint d = (guint) (c[n - 1 - k] - '0');

      if (k % 2 == 1)
        d = d * 2 > 9 ? d * 2 - 9 : d * 2;
      sum += d;
    }
  return sum % 10 == 0;
}

static guint
number_of (const char *c,
           guint       len)
{
  guint v = 0;

  for (guint k = 0; k < len; k++)
    v = v * 10 + (guint) (c[k] - '0');
  return v;
}

/* A payment card: 13 to 19 digits with a card network's first digits and length, and a valid
 * Luhn check digit (one number in ten passes Luhn alone). */
static gboolean
card_ok (const char *c,
         guint       n)
{
  guint two, four;
  gboolean brand;

  if (n < 13 || n > 19)
    return FALSE;
  for (guint k = 0; k < n; k++)
    if (!g_ascii_isdigit (c[k]))
      return FALSE;
  two = number_of (c, 2);
  four = number_of (c, 4);
  switch (c[0])
    {
    case '4':  /* Visa */
      brand = n == 13 || n == 16 || n == 19;
      break;
    case '5':  /* Mastercard */
      brand = two >= 51 && two <= 55 && n == 16;
      break;
    case '2':  /* Mastercard's 2-series */
      brand = four >= 2221 && four <= 2720 && n == 16;
      break;
    case '3':  /* American Express; JCB; Diners */
      brand = ((two == 34 || two == 37) && n == 15) || (two == 35 && n >= 16) ||
              ((two == 36 || two == 38 || two == 39 || (two == 30 && c[2] <= '5')) && n >= 14);
      break;
    case '6':  /* Discover, UnionPay, Maestro */
      brand = n >= 16;
      break;
    default:
      brand = FALSE;
    }
  return brand && luhn_ok (c, n);
}

/* A US social security number, 123-45-6789: area not 000, 666 or 9xx, group not 00, serial
 * not 0000. */
static gboolean
ssn_ok (const Number *num,
        guint         groups)
{
  const char *c = num->c;

  if (groups != 3 || num->sep != '-' || num->group_chars[0] != 3 || num->group_chars[1] != 5 ||
      num->group_chars[2] != 9)
    return FALSE;
  for (guint k = 0; k < 9; k++)
    if (!g_ascii_isdigit (c[k]))
      return FALSE;
  return number_of (c, 3) != 0 && number_of (c, 3) != 666 && c[0] != '9' &&
         number_of (c + 3, 2) != 0 && number_of (c + 5, 4) != 0;
}

/* A French social security number (NIR): sex, year, month, department (2A/2B for Corsica),
 * commune, order, then a key that is 97 minus the first thirteen digits modulo 97. */
static gboolean
nir_ok (const char *c,
        guint       n)
{
  guint64 v = 0;
  guint month;

  if (n != 15 || strchr ("123478", c[0]) == NULL)
    return FALSE;
  for (guint k = 0; k < 15; k++)
    if (!g_ascii_isdigit (c[k]) && k != 6)
      return FALSE;
  month = number_of (c + 3, 2);
  if (!((month >= 1 && month <= 12) || (month >= 20 && month <= 42) || month >= 50))
    return FALSE;
  for (guint k = 0; k < 13; k++)
    {
      guint d;

      if (k == 5 && c[6] == 'A')
        d = 1;                 /* 2A counts as 19 */
      else if (k == 6 && c[6] == 'A')
        d = 9;
      else if (k == 5 && c[6] == 'B')
        d = 1;                 /* 2B as 18 */
      else if (k == 6 && c[6] == 'B')
        d = 8;
      else if (!g_ascii_isdigit (c[k]))
        return FALSE;
      else
        d = (guint) (c[k] - '0');
      v = v * 10 + d;
    }
  return 97 - v % 97 == number_of (c + 13, 2);
}

/* A Chinese resident identity number: region, birth date, sequence, then a check character
 * (ISO 7064 MOD 11-2; 'X' stands for 10). */
static gboolean
cn_id_ok (const char *c,
          guint       n)
{
  static const guint weights[17] = { 7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2 };
  guint sum = 0, year, month, day;

  if (n != 18 || c[0] < '1' || c[0] > '8')
    return FALSE;
  for (guint k = 0; k < 17; k++)
    {
      if (!g_ascii_isdigit (c[k]))
        return FALSE;
      sum += weights[k] * (guint) (c[k] - '0');
    }
  year = number_of (c + 6, 4);
  month = number_of (c + 10, 2);
  day = number_of (c + 12, 2);
  if (year < 1900 || year > 2099 || month < 1 || month > 12 || day < 1 || day > 31)
    return FALSE;
  return g_ascii_toupper (c[17]) == "10X98765432"[sum % 11];
}

/* A card number or a national id at @i, a word start with a digit: its length, and its kind in
 * @name; or 0. The whole number is tried first, then shorter ones at its group ends (a card
 * number followed by its expiry date), each ending a word. */
static gsize
match_number (const Scan  *sc,
              gsize        i,
              const char **name)
{
  const char *s = sc->s;
  Number num;
  gsize d = i;

  /* Most numbers are short and alone ("12", "2024,"): out before anything is read. What can
   * match is 13 or more digits, or digits then a separator and a digit, or a NIR's 2A/2B. */
  while (is_digit_at (sc, d))
    d++;
  if (d - i < 13 &&
      !(d + 1 < sc->n && (s[d] == ' ' || s[d] == '-') && g_ascii_isdigit (s[d + 1])) &&
      !(d - i == 6 && s[d - 1] == '2' && (s[d] == 'A' || s[d] == 'B')))
    return 0;

  /* "3.4111…" is a decimal fraction, not a number of its own. A marker's ']' counts as the
   * digit it may have replaced: the second pass must keep what the first kept. */
  if (i >= 2 && (s[i - 1] == '.' || s[i - 1] == ',') &&
      (g_ascii_isdigit (s[i - 2]) || s[i - 2] == ']'))
    return 0;
  if (!read_number (sc, i, &num))
    return 0;
  for (guint g = num.n_groups; g > 0; g--)
    {
      guint n = num.group_chars[g - 1];
      gsize e = num.group_end[g - 1];

      /* The number must end a word: "4111…1111abc" and "…1111-rc1" are names, "…1111.5" a
       * decimal ('[' as a digit: a marker there must not make the second pass differ). */
      if (e < sc->n && (is_token_char (s[e]) ||
                        ((s[e] == '.' || s[e] == ',') && e + 1 < sc->n &&
                         (g_ascii_isdigit (s[e + 1]) || s[e + 1] == '['))))
        continue;
      if (g == num.n_groups && ssn_ok (&num, g))
        *name = "ssn";
      else if (card_ok (num.c, n))
        *name = "card_number";
      else if (nir_ok (num.c, n) || cn_id_ok (num.c, n))
        *name = "national_id";
      else
        continue;
      return e - i;
    }
  return 0;
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
      marker_len (colon + 1, sc->n - (colon + 1 - s)) > 0)
    return;
  sc->pw_from = colon + 1 - s;
  sc->pw_to = at;
}

/* ---- phrases: "Your verification code is 482913", "API key is …" -------------------------- */

typedef enum
{
  PHRASE_CODE,  /* a short code: 482913, 482 913, G-482913 */
  PHRASE_KEY,   /* a password or a key: hunter22, 4f2c9a7e… */
} PhraseKind;

typedef struct
{
  const char *text;   /* lowercase; a space stands for one to four blanks */
  const char *name;   /* the marker's name */
  PhraseKind kind;
} Phrase;

/* What a page says just before a secret. A short code only after one of these: a six-digit
 * number alone is an order, a date or a price. Single words already secret as names (password,
 * token, …) only add "is": their "name: value" and "name=value" forms are the rules above. */
static const Phrase PHRASES[] = {
  { "verification code", "verification_code", PHRASE_CODE },
  { "confirmation code", "confirmation_code", PHRASE_CODE },
  { "security code", "security_code", PHRASE_CODE },
  { "one-time code", "one_time_code", PHRASE_CODE },
  { "one time code", "one_time_code", PHRASE_CODE },
  { "one-time passcode", "one_time_code", PHRASE_CODE },
  { "one-time password", "one_time_code", PHRASE_CODE },
  { "one time password", "one_time_code", PHRASE_CODE },
  { "login code", "login_code", PHRASE_CODE },
  { "sign-in code", "login_code", PHRASE_CODE },
  { "authentication code", "auth_code", PHRASE_CODE },
  { "auth code", "auth_code", PHRASE_CODE },
  { "access code", "access_code", PHRASE_CODE },
  { "activation code", "activation_code", PHRASE_CODE },
  { "recovery code", "recovery_code", PHRASE_CODE },
  { "backup code", "backup_code", PHRASE_CODE },
  { "2fa code", "otp", PHRASE_CODE },
  { "mfa code", "otp", PHRASE_CODE },
  { "sms code", "otp", PHRASE_CODE },
  { "otp", "otp", PHRASE_CODE },
  { "totp", "otp", PHRASE_CODE },
  { "pin", "pin", PHRASE_CODE },
  { "pin code", "pin", PHRASE_CODE },
  { "passcode", "passcode", PHRASE_CODE },
  { "your code", "code", PHRASE_CODE },
  { "code de v\xc3\xa9rification", "verification_code", PHRASE_CODE },
  { "code de confirmation", "confirmation_code", PHRASE_CODE },
  { "code de s\xc3\xa9" "curit\xc3\xa9", "security_code", PHRASE_CODE },
  { "code \xc3\xa0 usage unique", "one_time_code", PHRASE_CODE },
  { "code de r\xc3\xa9" "cup\xc3\xa9ration", "recovery_code", PHRASE_CODE },
  { "code de secours", "backup_code", PHRASE_CODE },
  { "code pin", "pin", PHRASE_CODE },
  { "votre code", "code", PHRASE_CODE },
  { "\xe9\xaa\x8c\xe8\xaf\x81\xe7\xa0\x81", "verification_code", PHRASE_CODE },  /* 验证码 */
  { "\xe6\xa0\xa1\xe9\xaa\x8c\xe7\xa0\x81", "verification_code", PHRASE_CODE },  /* 校验码 */
  { "\xe5\x8a\xa8\xe6\x80\x81\xe7\xa0\x81", "one_time_code", PHRASE_CODE },      /* 动态码 */
  { "\xe5\x8a\xa8\xe6\x80\x81\xe5\xaf\x86\xe7\xa0\x81", "one_time_code", PHRASE_CODE },
                                                                               /* 动态密码 */
  { "\xe6\x81\xa2\xe5\xa4\x8d\xe7\xa0\x81", "recovery_code", PHRASE_CODE },      /* 恢复码 */
  { "\xe5\xa4\x87\xe7\x94\xa8\xe7\xa0\x81", "backup_code", PHRASE_CODE },        /* 备用码 */

  { "password", "password", PHRASE_KEY },
  { "passphrase", "passphrase", PHRASE_KEY },
  { "secret", "secret", PHRASE_KEY },
  { "token", "token", PHRASE_KEY },
  { "api key", "api_key", PHRASE_KEY },
  { "access key", "access_key", PHRASE_KEY },
  { "secret key", "secret_key", PHRASE_KEY },
  { "private key", "private_key", PHRASE_KEY },
  { "account key", "account_key", PHRASE_KEY },
  { "client secret", "client_secret", PHRASE_KEY },
  { "mot de passe", "password", PHRASE_KEY },
  { "cl\xc3\xa9 priv\xc3\xa9" "e", "private_key", PHRASE_KEY },
  { "cl\xc3\xa9 secr\xc3\xa8" "te", "secret_key", PHRASE_KEY },
  { "cl\xc3\xa9 api", "api_key", PHRASE_KEY },
  { "cl\xc3\xa9 d'api", "api_key", PHRASE_KEY },
  { "\xe5\xaf\x86\xe7\xa0\x81", "password", PHRASE_KEY },                        /* 密码 */
  { "\xe7\xa7\x81\xe9\x92\xa5", "private_key", PHRASE_KEY },                     /* 私钥 */
  { "\xe5\xaf\x86\xe9\x92\xa5", "secret_key", PHRASE_KEY },                      /* 密钥 */
};

/* Words between a phrase and its secret: "is", "est", "是", "为". */
static const char * const CONNECTOR_WORDS[] = {
  "is", "was", "est", "\xe6\x98\xaf", "\xe4\xb8\xba", "\xe7\x82\xba", NULL,
};

/* Every word start asks whether a phrase starts there: a set of the phrases' first three bytes
 * (lowercase, hashed) rules out almost every word in one lookup, as the name sets do. Only a
 * "maybe": at_phrase() decides. */
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

static gboolean
may_start_phrase (const Scan *sc,
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

/* "482913 is your verification code", "G-482913 est votre code": a code at @i, then "is your"
 * and, within four more words, "code", "passcode", "pin" or "otp". Its end, or 0. */
static gsize
code_before_phrase (const Scan *sc,
                    gsize       i)
{
  static const char * const leads[] = { "is your", "est votre", NULL };
  static const char * const ends[] = { "code", "passcode", "pin", "otp", NULL };
  gsize e, k = 0;

  /* Out at once unless "is", "est" (or a second group of digits) follows the word. */
  for (e = i; e < sc->n && (g_ascii_isalnum (sc->s[e]) || sc->s[e] == '-'); e++)
    ;
  k = skip_blanks (sc, e, 4);
  if (k >= sc->n || !(g_ascii_isdigit (sc->s[k]) || strchr ("iIeE", sc->s[k]) != NULL))
    return 0;
  k = 0;
  if ((e = code_end (sc, i)) == 0)
    return 0;
  for (guint l = 0; leads[l] != NULL && k == 0; l++)
    k = match_words (sc, skip_blanks (sc, e, 4), leads[l]);
  for (guint w = 0; k > 0 && w < 5; w++)
    {
      gsize word = skip_blanks (sc, k, 4);

      if (word == k)
        return 0;
      for (guint x = 0; ends[x] != NULL; x++)
        if (match_words (sc, word, ends[x]) > 0)
          return e;
      k = run (sc, word, is_token_char);
      if (k == word || k - word > 32)
        return 0;
    }
  return 0;
}

/* A phrase of PHRASES at @i and the secret after it. Emits everything up to the end of the
 * secret and returns that end, or 0. */
static gsize
at_phrase (Scan  *sc,
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
      if (v >= n || marker_len (s + v, n - v) > 0)
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
  if (g_ascii_isdigit (s[i]) && (m = match_number (sc, i, &kind)) > 0)
    {
      emit (sc, kind, strlen (kind), i, i + m);
      return i + m;
    }
  if ((g_ascii_isdigit (s[i]) ||
       (i + 2 < sc->n && s[i + 1] == '-' && g_ascii_isdigit (s[i + 2]))) &&
      (m = code_before_phrase (sc, i)) > 0)
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
          marker_len (s + from, sc->n - from) == 0)
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
      if (marker_len (s + from, sc->n - from) > 0)
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

  if (may_start_phrase (sc, i) && (m = at_phrase (sc, i)) > 0)
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
      if (marker_len (s + v + 1, n - v - 1) == end - v - 1)
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
  if (marker_len (s + v, n - v) > 0)
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
      if (c == '[' && (m = marker_len (s + i, sc->n - i)) > 0)
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
      else if ((guchar) c >= 0x80 && may_start_phrase (sc, i) && (m = at_phrase (sc, i)) > 0)
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

/* ---- JSON ------------------------------------------------------------------------------- */

static JsonNode *
marker_node (const char *name,
             const char *secret,
             guint      *count)
{
  g_autoptr(GString) out = g_string_new (NULL);
  JsonNode *node = json_node_new (JSON_NODE_VALUE);

  append_marker (out, name, strlen (name), secret, strlen (secret));
  json_node_set_string (node, out->str);
  (*count)++;
  return node;
}

/* A scalar under @secret_name (NULL: not a secret name). */
static JsonNode *
redact_value (JsonNode   *node,
              const char *secret_name,
              guint      *count)
{
  GType type = json_node_get_value_type (node);

  if (type == G_TYPE_STRING)
    {
      const char *str = json_node_get_string (node);
      guint found = 0;
      g_autofree char *masked = NULL;
      JsonNode *copy;

      if (secret_name != NULL && *str != '\0' && !chp_redact_is_marker (str))
        return marker_node (secret_name, str, count);
      masked = chp_redact_text (str, &found);
      *count += found;
      copy = json_node_new (JSON_NODE_VALUE);
      json_node_set_string (copy, masked);
      return copy;
    }
  if (secret_name != NULL && type == G_TYPE_INT64)
    {
      g_autofree char *digits = g_strdup_printf ("%" G_GINT64_FORMAT, json_node_get_int (node));

      return marker_node (secret_name, digits, count);
    }
  if (secret_name != NULL && type == G_TYPE_DOUBLE)
    {
      char digits[G_ASCII_DTOSTR_BUF_SIZE];

      return marker_node (secret_name, g_ascii_dtostr (digits, sizeof digits,
                                                       json_node_get_double (node)), count);
    }
  /* Booleans say "filled", "credential", "session: true": never a secret. */
  return json_node_copy (node);
}

static JsonNode *redact_node (JsonNode   *node,
                              const char *secret_name,
                              guint       depth,
                              guint      *count);

typedef struct
{
  JsonObject *into;
  const char *pair_name;  /* the secret "name" of a {name, value} pair, or NULL */
  guint depth;
  guint *count;
} ObjectWalk;

static void
redact_member_cb (JsonObject  *object,
                  const char  *member,
                  JsonNode    *node,
                  gpointer     user_data)
{
  ObjectWalk *walk = user_data;
  const char *secret_name = NULL;

  if (chp_redact_name_is_secret (member, -1))
    secret_name = member;
  else if (walk->pair_name != NULL && g_str_equal (member, "value"))
    secret_name = walk->pair_name;
  json_object_set_member (walk->into, member,
                          redact_node (node, secret_name, walk->depth + 1, walk->count));
}

static JsonNode *
redact_node (JsonNode   *node,
             const char *secret_name,
             guint       depth,
             guint      *count)
{
  JsonNode *copy;

  if (depth > MAX_JSON_DEPTH)
    {
      /* Deeper than anything the frame reader lets in: drop it rather than recurse. */
      (*count)++;
      return json_node_new (JSON_NODE_NULL);
    }

  switch (json_node_get_node_type (node))
    {
    case JSON_NODE_OBJECT:
      {
        JsonObject *object = json_node_get_object (node);
        g_autoptr(JsonObject) into = json_object_new ();
        ObjectWalk walk = { into, NULL, depth, count };
        JsonNode *name = json_object_get_member (object, "name");

        /* A header, cookie or field as {name, value}: the value is as secret as its name says. */
        if (name != NULL && JSON_NODE_HOLDS_VALUE (name) &&
            json_node_get_value_type (name) == G_TYPE_STRING &&
            chp_redact_name_is_secret (json_node_get_string (name), -1))
          walk.pair_name = json_node_get_string (name);
        json_object_foreach_member (object, redact_member_cb, &walk);
        copy = json_node_new (JSON_NODE_OBJECT);
        json_node_set_object (copy, into);
        return copy;
      }

    case JSON_NODE_ARRAY:
      {
        JsonArray *array = json_node_get_array (node);
        g_autoptr(JsonArray) into = json_array_sized_new (json_array_get_length (array));

        /* Scalars in a list under a secret name ("cookies": ["a=b"]) are secrets; objects in
         * it are judged member by member. */
        for (guint i = 0; i < json_array_get_length (array); i++)
          json_array_add_element (into, redact_node (json_array_get_element (array, i),
                                                     secret_name, depth + 1, count));
        copy = json_node_new (JSON_NODE_ARRAY);
        json_node_set_array (copy, into);
        return copy;
      }

    case JSON_NODE_VALUE:
      return redact_value (node, secret_name, count);

    case JSON_NODE_NULL:
    default:
      return json_node_new (JSON_NODE_NULL);
    }
}

/**
 * chp_redact_json:
 * @node: a result as the extension sent it
 * @count_out: (out) (optional): how many secrets were masked
 *
 * Returns: (transfer full): a deep copy of @node with every string passed through
 *   chp_redact_text(), and strings and numbers under secret member names (or in a
 *   `{name, value}` pair with a secret name) replaced by a marker. Booleans, nulls, member
 *   names and the shape of the tree are kept.
 */
JsonNode *
chp_redact_json (JsonNode *node,
                 guint    *count_out)
{
  guint count = 0;
  JsonNode *copy;

  if (count_out != NULL)
    *count_out = 0;
  g_return_val_if_fail (node != NULL, NULL);

  copy = redact_node (node, NULL, 0, &count);
  if (count_out != NULL)
    *count_out = count;
  return copy;
}
