/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-request-head.c: checks an HTTP request's head line by line as its bytes are handed to
 * libsoup, which parses it only once the whole head has arrived, so a line refused here never
 * reaches it. The head ends where libsoup's reader ends it (a blank line after at least two bytes
 * of head, three for "\r\n"; blank lines before the request line are skipped), so the two never
 * disagree on which lines are the head's.
 *
 * What is refused is what libsoup 3.2 (Debian 12) mishandles, found by fuzz-bridge-http
 * (tests/fuzz/crashes/README.md):
 * - a Content-Length that is not a plain decimal number: "-5" becomes a body length of -5, which
 *   libsoup hands to a stream that refuses it with a warning (and then reads the body to the end
 *   of the connection); "abc" is answered 400 and leaks the request's path;
 * - a header line folded onto the next (a line that starts with a space or a tab), which could
 *   carry such a value past this check.
 * Every other line is libsoup's to judge. The bridge's requests are WebSocket upgrades, which
 * have no body: nothing a browser sends is refused. */
#include "config.h"

#include "chp-request-head.h"

#include <string.h>

#include <gio/gio.h>

/* Enough for "Content-Length: " and 18 digits with spaces around; a longer line is kept only as
 * far as this, which is enough to know its name. */
#define LINE_KEEP 64
/* At most 18 digits: every such number fits libsoup's signed 64-bit length; not every 19-digit
 * one does. */
#define LENGTH_DIGITS_MAX 18

struct _ChpRequestHead
{
  char     line[LINE_KEEP];
  gsize    len;          /* what is kept of the line */
  gsize    line_bytes;   /* all of the line so far, without its \n */
  gsize    head_bytes;   /* the head's bytes before this line */
  gboolean done;         /* the blank line that ends the head was seen */
};

ChpRequestHead *
chp_request_head_new (void)
{
  return g_new0 (ChpRequestHead, 1);
}

void
chp_request_head_free (ChpRequestHead *self)
{
  g_free (self);
}

gboolean
chp_request_head_is_done (ChpRequestHead *self)
{
  return self->done;
}

static gboolean
refuse (GError    **error,
        const char *why)
{
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, why);
  return FALSE;
}

static gboolean
is_blank (char c)
{
  return c == ' ' || c == '\t';
}

/* The line just ended (without its \n). */
static gboolean
check_line (ChpRequestHead  *self,
            GError         **error)
{
  const char *l = self->line;
  gsize len = self->len;
  gboolean cut = self->line_bytes > self->len;
  const char *colon;
  gsize name_len;
  gsize i;
  gsize digits = 0;

  if (!cut && len > 0 && l[len - 1] == '\r')
    len--;
  if (len == 0 && !cut)
    {
      /* "\n" after at least two bytes of head, "\r\n" after three, ends it (libsoup's
       * soup_message_io_data_read_headers()); a blank line before that is skipped. */
      if (self->head_bytes >= self->line_bytes + 2)
        self->done = TRUE;
      return TRUE;
    }
  /* Every other line is checked, the request line too: it never looks like a header. */
  if (is_blank (l[0]))
    return refuse (error, "A folded header line");
  colon = memchr (l, ':', len);
  if (colon == NULL)
    return TRUE;
  for (name_len = colon - l; name_len > 0 && is_blank (l[name_len - 1]); name_len--)
    ;
  if (name_len != strlen ("Content-Length") ||
      g_ascii_strncasecmp (l, "Content-Length", name_len) != 0)
    return TRUE;

  if (cut)
    return refuse (error, "A Content-Length that is not a number");
  for (i = colon - l + 1; i < len && is_blank (l[i]); i++)
    ;
  for (; i < len && g_ascii_isdigit (l[i]); i++)
    digits++;
  for (; i < len && is_blank (l[i]); i++)
    ;
  if (i != len || digits == 0 || digits > LENGTH_DIGITS_MAX)
    return refuse (error, "A Content-Length that is not a number");
  return TRUE;
}

/**
 * chp_request_head_feed:
 * @self: the checker of one request
 * @data: the next @n bytes of the connection
 * @n: how many
 * @error: G_IO_ERROR_INVALID_DATA for a line refused
 *
 * Checks the lines @data ends; the bytes after the head are not looked at.
 *
 * Returns: %FALSE if a line was refused (the connection should go)
 */
gboolean
chp_request_head_feed (ChpRequestHead  *self,
                       const guint8    *data,
                       gsize            n,
                       GError         **error)
{
  for (gsize i = 0; i < n && !self->done; i++)
    {
      if (data[i] == '\0')
        return refuse (error, "A NUL byte in the request's head");
      if (data[i] == '\n')
        {
          if (!check_line (self, error))
            return FALSE;
          self->head_bytes += self->line_bytes + 1;
          self->len = 0;
          self->line_bytes = 0;
          continue;
        }
      if (self->len < LINE_KEEP)
        self->line[self->len++] = (char) data[i];
      self->line_bytes++;
    }
  return TRUE;
}
