/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-request-head.c: the bridge's check of a request's head before libsoup parses it refuses
 * the body lengths libsoup 3.2 mishandles and folded lines, however the bytes are split, and
 * lets every request a browser sends through. */
#include "config.h"

#include <gio/gio.h>
#include <string.h>

#include "chp-request-head.h"

/* Feeds @head in pieces of @step bytes; → whether it was accepted, and whether it ended. */
static gboolean
feed_in_steps (const char *head,
               gsize       step,
               gboolean   *done)
{
  g_autoptr(ChpRequestHead) check = chp_request_head_new ();
  gsize len = strlen (head);

  for (gsize at = 0; at < len; at += step)
    {
      g_autoptr(GError) error = NULL;

      if (!chp_request_head_feed (check, (const guint8 *) head + at, MIN (step, len - at),
                                  &error))
        {
          g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
          return FALSE;
        }
      g_assert_no_error (error);
    }
  *done = chp_request_head_is_done (check);
  return TRUE;
}

static void
assert_head (const char *head,
             gboolean    accepted,
             gboolean    ends)
{
  for (gsize step = 1; step <= strlen (head); step = step < 8 ? step + 1 : step * 2)
    {
      gboolean done = FALSE;

      g_test_message ("%zu-byte pieces of %s", step, head);
      g_assert_cmpint (feed_in_steps (head, step, &done), ==, accepted);
      if (accepted)
        g_assert_cmpint (done, ==, ends);
    }
}

static void
test_browser_requests_pass (void)
{
  /* What Chromium and Firefox send to /extension and /pairing, and a plain GET. */
  assert_head ("GET /extension HTTP/1.1\r\nHost: 127.0.0.1:41000\r\nConnection: Upgrade\r\n"
               "Upgrade: websocket\r\nOrigin: chrome-extension://abcdefghijklmnopabcdefghijklmnop\r\n"
               "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
               TRUE, TRUE);
  assert_head ("GET / HTTP/1.1\nHost: 127.0.0.1\n\n", TRUE, TRUE);
  /* A plain length, with the spaces the grammar allows, in any case. */
  assert_head ("POST /pairing HTTP/1.1\r\ncontent-length:   12 \r\n\r\nhello world!", TRUE, TRUE);
  assert_head ("POST /pairing HTTP/1.1\r\nCONTENT-LENGTH: 0\r\n\r\n", TRUE, TRUE);
  /* Lines named like it are not it; a long line of another name is libsoup's to judge. */
  assert_head ("GET / HTTP/1.1\r\nContent-Length-Extra: -5\r\nX-Content-Length: abc\r\n\r\n", TRUE, TRUE);
  g_autofree char *cookie = g_strdup_printf ("GET / HTTP/1.1\r\nCookie: %0500d\r\n\r\n", 7);
  assert_head (cookie, TRUE, TRUE);
  /* Not ended yet: nothing said about the rest. */
  assert_head ("GET / HTTP/1.1\r\nHost: x\r\n", TRUE, FALSE);
}

static void
test_bad_lengths_refused (void)
{
  /* Found by fuzz-bridge-http: libsoup takes "-5" as a length of -5 and warns. */
  assert_head ("POST /pairing HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length:-5\r\n\r\nhello", FALSE, FALSE);
  assert_head ("POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n", FALSE, FALSE);
  assert_head ("POST / HTTP/1.1\r\nContent-Length: 5 5\r\n\r\n", FALSE, FALSE);
  assert_head ("POST / HTTP/1.1\r\nContent-Length: abc\r\n\r\n", FALSE, FALSE);
  assert_head ("POST / HTTP/1.1\r\nContent-Length:\r\n\r\n", FALSE, FALSE);
  assert_head ("POST / HTTP/1.1\r\nContent-Length : 0x10\r\n\r\n", FALSE, FALSE);
  /* 19 digits do not fit a signed 64-bit length; 18 do. */
  assert_head ("POST / HTTP/1.1\r\nContent-Length: 9999999999999999999\r\n\r\n", FALSE, FALSE);
  assert_head ("POST / HTTP/1.1\r\nContent-Length: 999999999999999999\r\n\r\n", TRUE, TRUE);
  /* A length past what is kept of the line: refused, not read in part. */
  g_autofree char *zeros = g_strdup_printf ("POST / HTTP/1.1\r\nContent-Length: %080d\r\n\r\n", 5);
  assert_head (zeros, FALSE, FALSE);
}

/* libsoup skips blank lines before the request line and ends the head only at a blank line after
 * two bytes of head ("\n") or three ("\r\n"): the check goes on as long as libsoup reads. */
static void
test_leading_blank_lines (void)
{
  assert_head ("\r\n\r\nPOST /pairing HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length:-5\r\n\r\n", FALSE, FALSE);
  assert_head ("\n\nPOST / HTTP/1.1\nContent-Length:-5\n\n", FALSE, FALSE);
  assert_head ("\n\r\nPOST / HTTP/1.1\r\nContent-Length:-5\r\n\r\n", FALSE, FALSE);
  assert_head ("X\n\r\nPOST / HTTP/1.1\r\nContent-Length:-5\r\n\r\n", FALSE, FALSE);
  assert_head ("\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n", TRUE, TRUE);
}

static void
test_nul_refused (void)
{
  g_autoptr(ChpRequestHead) check = chp_request_head_new ();
  g_autoptr(GError) error = NULL;
  const char head[] = "POST / HTTP/1.1\r\nContent-Length\0: -5\r\n\r\n";

  g_assert_false (chp_request_head_feed (check, (const guint8 *) head, sizeof head - 1, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
}

static void
test_folded_lines_refused (void)
{
  assert_head ("POST / HTTP/1.1\r\nContent-Length: 5\r\n -5\r\n\r\n", FALSE, FALSE);
  assert_head ("GET / HTTP/1.1\r\nHost: x\r\n\tmore\r\n\r\n", FALSE, FALSE);
}

static void
test_body_not_read (void)
{
  g_autoptr(ChpRequestHead) check = chp_request_head_new ();
  g_autoptr(GError) error = NULL;
  const char *head = "GET / HTTP/1.1\r\n\r\n";
  const char *after = "Content-Length: -5\r\n \r\n";

  g_assert_true (chp_request_head_feed (check, (const guint8 *) head, strlen (head), &error));
  g_assert_true (chp_request_head_is_done (check));
  /* What follows the head (a WebSocket's frames) is not the head's. */
  g_assert_true (chp_request_head_feed (check, (const guint8 *) after, strlen (after), &error));
  g_assert_no_error (error);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/request-head/browser-requests-pass", test_browser_requests_pass);
  g_test_add_func ("/chaperone/request-head/bad-lengths-refused", test_bad_lengths_refused);
  g_test_add_func ("/chaperone/request-head/folded-lines-refused", test_folded_lines_refused);
  g_test_add_func ("/chaperone/request-head/leading-blank-lines", test_leading_blank_lines);
  g_test_add_func ("/chaperone/request-head/nul-refused", test_nul_refused);
  g_test_add_func ("/chaperone/request-head/body-not-read", test_body_not_read);

  return g_test_run ();
}
