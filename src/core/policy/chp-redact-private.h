/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-redact-private.h: shared by the parts of the redaction — the text scan (chp-redact.c), the
 * secret names (chp-redact-names.c), the markers (chp-redact-marker.c), cards and national ids
 * (chp-redact-numbers.c), the phrases (chp-redact-phrases.c) and the JSON walk
 * (chp-redact-json.c) — with the word lists and key shapes made from redact-patterns.json. */
#pragma once

#include "chp-redact.h"

#include <string.h>

G_BEGIN_DECLS

#define MAX_NAME        128   /* longer "names" are not names */
#define MAX_QUOTED      4096  /* a quoted value with no end this far is masked to here */
#define MAX_MARKER_NAME 40
#define MAX_JSON_DEPTH  256
#define MAX_TOKENS      16

static const char MARKER_PREFIX[] = "[redacted ";

/* One pass of chp_redact_text() over @s: what it has written so far and how many it masked. */
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

/* A row of KEY_SHAPES (chp-redact-patterns.h). */
typedef struct
{
  const char *prefix;
  guint min_body;
  guint exact_body;       /* 0: any length from min_body */
  gboolean upper_digits;  /* body is [0-9A-Z] only */
  gboolean needs_digit;
  const char *name;
} KeyShape;

typedef enum
{
  PHRASE_CODE,  /* a short code: 482913, 482 913, G-482913 */
  PHRASE_KEY,   /* a password or a key: hunter22, 4f2c9a7e… */
} PhraseKind;

/* A row of PHRASES (chp-redact-patterns.h). */
typedef struct
{
  const char *text;   /* lowercase; a space stands for one to four blanks */
  const char *name;   /* the marker's name */
  PhraseKind kind;
} Phrase;

/* The tables, made at build time from src/core/policy/redact-patterns.json. */
#include "chp-redact-patterns.h"

gsize    chp_redact_marker_len          (const char  *p,
                                         gsize        n);
void     chp_redact_append_marker       (GString     *out,
                                         const char  *name,
                                         gsize        name_len,
                                         const char  *secret,
                                         gsize        secret_len);
gsize    chp_redact_match_number        (const Scan  *sc,
                                         gsize        i,
                                         const char **name);
gboolean chp_redact_may_start_phrase    (const Scan  *sc,
                                         gsize        i);
gsize    chp_redact_at_phrase           (Scan        *sc,
                                         gsize        i);
gsize    chp_redact_code_before_phrase  (const Scan  *sc,
                                         gsize        i);

/* Small readers every part of the scan uses. */

static inline gboolean
in_list (const char * const *list,
         const char         *word)
{
  for (guint i = 0; list[i] != NULL; i++)
    if (strcmp (list[i], word) == 0)
      return TRUE;
  return FALSE;
}

static inline void
set_bit (guint32 *set,
         guint    bit)
{
  set[bit / 32] |= 1u << (bit % 32);
}

static inline gboolean
has_bit (const guint32 *set,
         guint          bit)
{
  return (set[bit / 32] & (1u << (bit % 32))) != 0;
}

static inline void
emit (Scan       *sc,
      const char *name,
      gsize       name_len,
      gsize       from,
      gsize       to)
{
  chp_redact_append_marker (sc->out, name, name_len, sc->s + from, to - from);
  sc->count++;
}

static inline gboolean
is_token_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-';
}

static inline gboolean
is_name_char (char c)
{
  return is_token_char (c) || c == '.' || c == '[' || c == ']';
}

static inline gboolean
is_blank (char c)
{
  return c == ' ' || c == '\t';
}

static inline gboolean
is_digit_at (const Scan *sc,
             gsize       i)
{
  return i < sc->n && g_ascii_isdigit (sc->s[i]);
}

static inline gsize
skip_blanks (const Scan *sc,
             gsize       i,
             guint       max)
{
  for (guint k = 0; k < max && i < sc->n && is_blank (sc->s[i]); k++)
    i++;
  return i;
}

static inline gsize
run (const Scan *sc,
     gsize       i,
     gboolean  (*ok) (char))
{
  while (i < sc->n && ok (sc->s[i]))
    i++;
  return i;
}

G_END_DECLS
