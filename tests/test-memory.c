/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-memory.c: after a large payload the heap is trimmed once the main loop has been idle for a
 * moment, once for a whole burst, whichever thread handled the payloads; small payloads never
 * ask for it. */
#include "config.h"

#include "chp-memory.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static gboolean
deadline_cb (gpointer data)
{
  *(gboolean *) data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Runs the main context until the trim count passes @count, or @timeout_ms passes. */
static gboolean
wait_trims_above (guint count,
                  guint timeout_ms)
{
  gboolean expired = FALSE;
  guint deadline = g_timeout_add (timeout_ms, deadline_cb, &expired);

  while (chp_memory_get_trims () <= count && !expired)
    g_main_context_iteration (NULL, TRUE);
  if (!expired)
    g_source_remove (deadline);
  return chp_memory_get_trims () > count;
}

/* The KiB that /proc file @path gives for @field ("RssFile:"), the first one after @section when
 * there is one ("[stack]" in smaps): what a person's tools see. */
static guint64
proc_kib (const char *path,
          const char *section,
          const char *field)
{
  g_autofree char *contents = NULL;
  const char *at;

  g_assert_true (g_file_get_contents (path, &contents, NULL, NULL));
  at = section != NULL ? strstr (contents, section) : contents;
  g_assert_nonnull (at);
  at = strstr (at, field);
  g_assert_nonnull (at);
  return g_ascii_strtoull (at + strlen (field), NULL, 10);
}

/* The RSS of the process's file mappings. */
static guint64
rss_file_kib (void)
{
  return proc_kib ("/proc/self/status", NULL, "RssFile:");
}

/* In the tray: a read-only file mapping (a library's code, a font) and a private writable one
 * that was only read (a library's data segment) give their pages back, and come back when read
 * again. The file is the test's own, mapped by no other process: a page
 * that another process maps too (libc's, under a running build) is not the kernel's to reclaim. */
static void
test_memory_page_out (void)
{
#ifdef MADV_PAGEOUT
  const gsize size = 8 * 1024 * 1024;
  g_autofree char *path = NULL;
  g_autofree char *data = g_malloc (size);
  g_autoptr(GError) error = NULL;
  guint64 before, mapped, after;
  volatile const char *map;
  volatile char *data_map;
  guint advised;
  int fd;

  memset (data, 'c', size);
  fd = g_file_open_tmp ("chaperone-memory-XXXXXX", &path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (write (fd, data, size), ==, (gssize) size);
  g_assert_cmpint (fsync (fd), ==, 0);    /* clean pages: nothing to write back */
  map = mmap (NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  g_assert_true (map != MAP_FAILED);
  /* The same file as a library's data segment is mapped: private and writable, only read. */
  data_map = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  g_assert_true (data_map != MAP_FAILED);

  before = rss_file_kib ();
  for (gsize i = 0; i < size; i += 4096)
    (void) map[i];
  for (gsize i = 0; i < size; i += 4096)
    (void) data_map[i];
  mapped = rss_file_kib ();
  advised = chp_memory_page_out_now ();
  after = rss_file_kib ();
  g_test_message ("file RSS %" G_GUINT64_FORMAT " → %" G_GUINT64_FORMAT " → %" G_GUINT64_FORMAT
                  " KiB (%u mappings advised)", before, mapped, after, advised);
  g_assert_cmpuint (advised, >, 0);
  /* The file came in, through both mappings (the same page cache pages, counted in each)… */
  g_assert_cmpuint (mapped, >=, before + 2 * 6 * 1024);
  /* …and went out again from both: the data segment's read pages too. */
  g_assert_cmpuint (after, <=, mapped - 2 * 6 * 1024);
  /* And it reads the same when it comes back, and the writable one still writes. */
  g_assert_cmpint (map[size - 1], ==, 'c');
  data_map[0] = 'd';
  g_assert_cmpint (data_map[0], ==, 'd');
  g_assert_cmpint (map[0], ==, 'c');                    /* private: the file is unchanged */

  munmap ((void *) data_map, size);
  munmap ((void *) map, size);
  close (fd);
  g_unlink (path);
#else
  g_test_skip ("this C library has no MADV_PAGEOUT");
#endif
}

/* AddressSanitizer may keep a function's locals on a heap of its own (to find uses after
 * return): deep calls would not grow the thread's stack at all. */
#if defined(__SANITIZE_ADDRESS__)
#define STACK_ON_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STACK_ON_HEAP 1
#endif
#endif

#if defined(MADV_PAGEOUT) && !defined(STACK_ON_HEAP)
/* The resident KiB of the main thread's stack mapping. */
static guint64
stack_rss_kib (void)
{
  return proc_kib ("/proc/self/smaps", "[stack]", "\nRss:");
}

/* Uses `depth` frames of 16 KiB each, writing every page of them (as a window's layout recursing
 * through its widgets does); → a sum that proves the frames held what was written. */
static G_GNUC_NO_INLINE guint64
deep (guint depth)
{
  volatile char frame[16 * 1024];
  guint64 below;

  for (gsize i = 0; i < sizeof frame; i += 512)
    frame[i] = (char) (depth & 0x7f);
  below = depth > 0 ? deep (depth - 1) : 0;
  return below + (guint64) frame[sizeof frame - 512];
}
#endif

/* In the tray: the main thread's stack below what is in use gives its pages back, and a deep
 * call afterwards works as before (it gets fresh pages). */
static void
test_memory_page_out_stack (void)
{
#ifdef STACK_ON_HEAP
  g_test_skip ("built with AddressSanitizer: locals may not live on the stack");
#elif defined(MADV_PAGEOUT)
  guint64 sum, deep_rss, after;
  guint64 expected = 0;

  for (guint d = 1; d <= 128; d++)
    expected += d & 0x7f;
  sum = deep (128);                                    /* 2 MiB of stack, every page written */
  g_assert_cmpuint (sum, ==, expected);
  deep_rss = stack_rss_kib ();
  chp_memory_page_out_now ();
  after = stack_rss_kib ();
  g_test_message ("stack RSS %" G_GUINT64_FORMAT " → %" G_GUINT64_FORMAT " KiB", deep_rss, after);
  g_assert_cmpuint (deep_rss, >=, 2 * 1024);
  g_assert_cmpuint (after, <=, deep_rss - 1536);
  /* The stack is whole: the same calls again give the same answer. */
  g_assert_cmpuint (deep (128), ==, expected);
#else
  g_test_skip ("this C library has no MADV_PAGEOUT");
#endif
}

static void
test_memory_small_payloads_do_not_trim (void)
{
  guint before = chp_memory_get_trims ();

  chp_memory_trim_after (CHP_MEMORY_TRIM_THRESHOLD - 1, "a small message");
  /* Longer than the trim's idle delay (1.5 s): nothing was asked, nothing runs. */
  g_assert_false (wait_trims_above (before, 2500));
}

static gpointer
large_payloads_thread (gpointer data)
{
  for (guint i = 0; i < 10; i++)
    chp_memory_trim_after (16 * 1024 * 1024, "a large message was parsed");
  return NULL;
}

static void
test_memory_a_burst_trims_once (void)
{
  guint before = chp_memory_get_trims ();
  GThread *worker = g_thread_new ("payloads", large_payloads_thread, NULL);

  g_thread_join (worker);
  g_assert_true (wait_trims_above (before, 10000));
  g_assert_cmpuint (chp_memory_get_trims (), ==, before + 1);
  /* And no second one for the same burst. */
  g_assert_false (wait_trims_above (before + 1, 2500));
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/memory/page-out-gives-back-file-pages", test_memory_page_out);
  g_test_add_func ("/memory/page-out-gives-back-the-stack-below", test_memory_page_out_stack);
  g_test_add_func ("/memory/small-payloads-do-not-trim", test_memory_small_payloads_do_not_trim);
  g_test_add_func ("/memory/a-burst-trims-once", test_memory_a_burst_trims_once);
  return g_test_run ();
}
