/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-site-allowlist-text.c: the shapes the site memory's allowlist refuses in a string — what
 * the redactor masks, keys, JWT-like tokens, control characters, and (outside a control's label)
 * email addresses, phone numbers and long numbers — and which control labels are the person's
 * data (chp-site-allowlist.c walks the fields; this says what a string may hold). */
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

static gboolean
has_email (const char *s)
{
  for (const char *at = strchr (s, '@'); at != NULL; at = strchr (at + 1, '@'))
    {
      const char *p = at + 1;
      const char *last_dot = NULL;
      guint tld = 0;

      if (at == s || !is_email_local_char (at[-1]))
        continue;
      while (g_ascii_isalnum (*p) || *p == '-' || *p == '.')
        {
          if (*p == '.')
            {
              last_dot = p;
              tld = 0;
            }
          else if (last_dot != NULL)
            tld += g_ascii_isalpha (*p) ? 1 : 100;
          p++;
        }
      if (last_dot != NULL && last_dot > at + 1 && tld >= 2 && tld < 100)
        return TRUE;
    }
  return FALSE;
}

/* Runs of digits, blanks, '-', '(', ')' and a leading '+'. A phone number has 7+ digits and
 * says so: a '+' or '(', 10+ digits, or groups after the first of 3+ digits ("555-1234"),
 * which a date ("2024-01-15") has not. A code is 6 to 8 digits in 2+ groups of 3+. */
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
      gboolean plus = FALSE, paren = FALSE, groups_ok = TRUE;
      guint digits = 0, groups = 0, group = 0, min_group = G_MAXUINT;

      if (!g_ascii_isdigit (*p) && *p != '+' && *p != '(')
        {
          p++;
          continue;
        }
      if (*p == '+')
        {
          plus = TRUE;
          p++;
        }
      for (; g_ascii_isdigit (*p) || strchr (" -()", *p) != NULL; p++)
        {
          if (*p == '\0')
            break;
          if (g_ascii_isdigit (*p))
            {
              digits++;
              group++;
              *longest_run = MAX (*longest_run, group);
              continue;
            }
          paren |= *p == '(' || *p == ')';
          if (group > 0)
            {
              if (groups > 0 && group < 3)
                groups_ok = FALSE;
              min_group = MIN (min_group, group);
              groups++;
              group = 0;
            }
        }
      if (group > 0)
        {
          if (groups > 0 && group < 3)
            groups_ok = FALSE;
          min_group = MIN (min_group, group);
          groups++;
        }
      if (digits >= 7 && (plus || paren || digits >= 10 || (groups >= 2 && groups_ok)))
        *phone = TRUE;
      if (digits >= 6 && digits <= 8 && groups >= 2 && min_group >= 3)
        *grouped_code = TRUE;
      if (*p != '\0' && !g_ascii_isdigit (*p) && *p != '+' && *p != '(')
        p++;
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

  if (has_email (s))
    return "carries an email address";
  scan_numbers (s, &phone, &grouped_code, &longest_run);
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
  gboolean phone, grouped_code;
  guint longest_run;

  g_return_val_if_fail (label != NULL, TRUE);

  if (has_email (label))
    return TRUE;
  scan_numbers (label, &phone, &grouped_code, &longest_run);
  return phone || grouped_code || longest_run >= 5;
}
