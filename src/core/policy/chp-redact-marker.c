/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-redact-marker.c: the `[redacted <name> len=N]` marker every secret becomes — written, and
 * recognised, so that an earlier pass's markers pass through unchanged and redacting twice
 * changes nothing more. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-redact"

#include "chp-redact-private.h"

static gboolean
is_marker_name_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '.' || c == '-';
}

/* The length of a well-formed marker at @p, or 0. */
gsize
chp_redact_marker_len (const char *p,
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
  return n > 0 && chp_redact_marker_len (text, n) == n;
}

/* Writes the marker for @secret, found under @name, to @out. */
void
chp_redact_append_marker (GString    *out,
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
