/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-site-allowlist-text.c: the shapes the site memory's allowlist refuses in a string — what
 * the redactor masks, keys, JWT-like tokens, control characters, and (outside a control's label)
 * email addresses, phone numbers and long numbers — and which control labels are the person's
 * data (chp-site-allowlist.c walks the fields; this says what a string may hold). The person's
 * data is looked for in the string's NFKC form: a fullwidth "０９０" or "＠" is the same number
 * or address to whoever reads it. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-site-allowlist"

#include "chp-site-allowlist.h"
#include "chp-site-allowlist-private.h"

#include <string.h>

#include "chp-redact.h"

static gboolean
is_key_char (char c)
{
  return g_ascii_isalnum (c) || (c != '\0' && strchr ("_-+=~", c) != NULL);
}

static gboolean
is_b64url_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-';
}

/* A key or token: 20+ key characters mixing letters and digits. */
static gboolean
has_key_token (const char *s)
{
  for (const char *p = s; *p != '\0';)
    {
      const char *start = p;
      gboolean letter = FALSE, digit = FALSE, upper = FALSE, lower = FALSE;
      guint alternations = 0;
      int last = 0;  /* 1 letter, 2 digit */
      guint8 seen[256] = { 0 };
      guint distinct = 0;

      if (!is_key_char (*p))
        {
          p++;
          continue;
        }
      for (; is_key_char (*p); p++)
        {
          int kind = g_ascii_isalpha (*p) ? 1 : g_ascii_isdigit (*p) ? 2 : 0;

          letter |= kind == 1;
          digit |= kind == 2;
          upper |= g_ascii_isupper (*p);
          lower |= g_ascii_islower (*p);
          if (kind != 0 && last != 0 && kind != last)
            alternations++;
          if (kind != 0)
            last = kind;
          if (!seen[(guint8) *p]++)
            distinct++;
        }
      if (p - start >= 20 && letter && digit &&
          (alternations >= 3 || (upper && lower && distinct >= 14)))
        return TRUE;
    }
  return FALSE;
}

/* Three or more '.'-separated segments of 8+ base64url characters in a row. */
static gboolean
has_jwt_like (const char *s)
{
  guint segments = 0;

  for (const char *p = s; *p != '\0';)
    {
      const char *start = p;

      while (is_b64url_char (*p))
        p++;
      if (p - start >= 8)
        segments++;
      else
        segments = 0;
      if (segments >= 3)
        return TRUE;
      if (*p == '.')
        p++;
      else if (*p != '\0')
        {
          segments = 0;
          p++;
        }
    }
  return FALSE;
}

static gboolean
is_email_local_char (char c)
{
  return g_ascii_isalnum (c) || (c != '\0' && strchr ("._%+-", c) != NULL);
}

/* An address: a local part, '@', and a domain whose last label is 2+ letters. The sentence's
 * own end ("write to alice@example.com.") is not the domain's: trailing dots and hyphens go
 * before the last label is read. */
static gboolean
has_email (const char *s)
{
  for (const char *at = strchr (s, '@'); at != NULL; at = strchr (at + 1, '@'))
    {
      const char *end = at + 1;
      const char *label;
      guint tld = 0;

      if (at == s || !is_email_local_char (at[-1]))
        continue;
      while (g_ascii_isalnum (*end) || *end == '-' || *end == '.')
        end++;
      while (end > at + 1 && (end[-1] == '.' || end[-1] == '-'))
        end--;
      for (label = end; label > at + 1 && label[-1] != '.'; label--)
        tld += g_ascii_isalpha (label[-1]) ? 1 : 100;
      if (label - 1 > at + 1 && tld >= 2 && tld < 100)
        return TRUE;
    }
  return FALSE;
}

typedef enum
{
  SEP_NONE,
  SEP_BLANK,
  SEP_PAREN,
  SEP_DOT,
} Separator;

/* What may stand between a number's digits: blanks (NFKC made U+00A0 one), '-' and the dashes
 * U+2010 to U+2015, parentheses, and the dots and slashes of "555.123.4567" and "030/1234567". */
static Separator
separator_of (gunichar c)
{
  if (c == ' ' || c == '-' || c == 0x00a0 || (c >= 0x2010 && c <= 0x2015))
    return SEP_BLANK;
  if (c == '(' || c == ')')
    return SEP_PAREN;
  if (c == '.' || c == '/')
    return SEP_DOT;
  return SEP_NONE;
}

/* Runs of digits (of any script: "０９０", "٠٩٠") and separators, with a leading '+'. A phone
 * number has 7+ digits and says so: a '+' or '(', 10+ digits, or groups after the first of 3+
 * digits ("555-1234"), which a date ("2024-01-15") has not. A code is 6 to 8 digits in 2+
 * groups of 3+. Dots and slashes are also a version's (120.0.6099.109) and an address's
 * (192.168.100.200): a run they part is a phone number only when every group after the first
 * has 2+ digits, and four groups of at most 3 parted by dots alone are an IPv4 address. */
static void
scan_numbers (const char *s,
              gboolean   *phone,
              gboolean   *grouped_code,
              guint      *longest_run)
{
  *phone = *grouped_code = FALSE;
  *longest_run = 0;

  for (const char *p = s; *p != '\0';)
    {
      gboolean plus = FALSE, paren = FALSE, dotted = FALSE, blank = FALSE, groups_ok, address;
      guint digits = 0, groups = 0, group = 0, min_group = G_MAXUINT, max_group = 0;
      guint min_later = G_MAXUINT;
      gunichar c = g_utf8_get_char (p);

      if (g_unichar_digit_value (c) < 0 && c != '+' && c != '(')
        {
          p = g_utf8_next_char (p);
          continue;
        }
      if (c == '+')
        {
          plus = TRUE;
          p++;
        }
      for (; *p != '\0'; p = g_utf8_next_char (p))
        {
          Separator sep;

          c = g_utf8_get_char (p);
          if (g_unichar_digit_value (c) >= 0)
            {
              digits++;
              group++;
              *longest_run = MAX (*longest_run, group);
              continue;
            }
          if ((sep = separator_of (c)) == SEP_NONE)
            break;
          paren |= sep == SEP_PAREN;
          dotted |= sep == SEP_DOT;
          blank |= sep == SEP_BLANK;
          if (group > 0)
            {
              if (groups > 0)
                min_later = MIN (min_later, group);
              min_group = MIN (min_group, group);
              max_group = MAX (max_group, group);
              groups++;
              group = 0;
            }
        }
      if (group > 0)
        {
          if (groups > 0)
            min_later = MIN (min_later, group);
          min_group = MIN (min_group, group);
          max_group = MAX (max_group, group);
          groups++;
        }
      groups_ok = groups < 2 || min_later >= 3;
      address = dotted && !paren && !blank && groups == 4 && max_group <= 3;
      if (!address && digits >= 7 && (!dotted || groups < 2 || min_later >= 2) &&
          (plus || paren || digits >= 10 || (groups >= 2 && groups_ok)))
        *phone = TRUE;
      if (!address && digits >= 6 && digits <= 8 && groups >= 2 && min_group >= 3)
        *grouped_code = TRUE;
      if (*p != '\0' && c != '+')
        p = g_utf8_next_char (p);
    }
}

static gboolean
has_control_chars (const char *s)
{
  for (const char *p = s; *p != '\0'; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      return TRUE;
  return FALSE;
}

/* Why @s may not be kept under @rules, or %NULL (the header says which rules refuse what). */
const char *
chp_site_allowlist_text_problem (const char *s,
                                 TextRules   rules)
{
  g_autofree char *masked = NULL;
  g_autofree char *plain = NULL;
  gboolean phone, grouped_code;
  guint longest_run, count = 0;

  if (!g_utf8_validate (s, -1, NULL))
    return "is not valid UTF-8";
  if (has_control_chars (s))
    return "holds control characters";

  masked = chp_redact_text (s, &count);
  if (count > 0)
    return "is shaped like a credential";
  if (has_jwt_like (s))
    return "is shaped like a token";
  if (has_key_token (s))
    return "is shaped like a key";
  if (rules == TEXT_LABEL)
    return NULL;

  plain = g_utf8_normalize (s, -1, G_NORMALIZE_NFKC);
  if (has_email (plain))
    return "carries an email address";
  scan_numbers (plain, &phone, &grouped_code, &longest_run);
  if (phone)
    return "carries a phone number";
  if (longest_run >= 6 || grouped_code)
    return "carries a code or a long number";
  if (rules == TEXT_READY && longest_run >= 5)
    return "carries a number of 5 digits or more";

  return NULL;
}

/**
 * chp_site_allowlist_label_is_personal:
 *
 * Whether a control's label carries the person's data — an email address, a phone number, a
 * number of 5 digits or more, a grouped code — and so is never kept (it does not refuse the
 * update: see the file's comment).
 */
gboolean
chp_site_allowlist_label_is_personal (const char *label)
{
  g_autofree char *plain = NULL;
  gboolean phone, grouped_code;
  guint longest_run;

  g_return_val_if_fail (label != NULL, TRUE);

  /* A label that is not text cannot be read, so it is not kept. */
  if ((plain = g_utf8_normalize (label, -1, G_NORMALIZE_NFKC)) == NULL)
    return TRUE;
  if (has_email (plain))
    return TRUE;
  scan_numbers (plain, &phone, &grouped_code, &longest_run);
  return phone || grouped_code || longest_run >= 5;
}
