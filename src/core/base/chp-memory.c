/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-memory.c: giving memory back to the system after a large payload.
 *
 * A 10,000-element snapshot is 16 MiB of JSON, parsed in one worker thread, redacted and
 * formatted in another: json-glib builds hundreds of thousands of small nodes for it, in the
 * malloc arena of whichever thread did the work. Freeing them returns the space to that arena,
 * not to the system: glibc keeps the pages for reuse, and a free chunk in the middle of a heap
 * pins everything below the top, so the app went on holding what one session had freed
 * (bench/app-memory-bench.mjs measures it). malloc_trim(0) walks every arena and gives free pages back
 * (madvise, not only the top), which takes a few milliseconds on a large heap: it runs once the
 * main loop has been idle for a moment after the last large payload, never in the middle of one,
 * and one trim covers a burst of them (paging through a large snapshot).
 *
 * In the tray the app keeps its bridge and engine, but nothing draws: the pages of the libraries
 * only a window uses (GTK, librsvg for icons, fonts, ~25 MB) stay mapped until the kernel needs
 * them. chp_memory_page_out_soon() asks for them back (madvise MADV_PAGEOUT on every private or
 * read-only file mapping) once the app has been in the tray for a moment; what the main loop, the bridge
 * and the engine go on using faults back in at once, from the page cache or the disk, and a
 * window opened later reads the rest again (a few milliseconds). */

#include "config.h"

#define G_LOG_DOMAIN "chaperone-memory"

#include "chp-memory.h"

#ifdef HAVE_MALLOC_TRIM
#include <malloc.h>
#endif
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Long enough for a burst of pages to end; short enough that the memory is back before the
 * person looks. */
#define TRIM_DELAY_MS 1500

/* Long enough for the window to be gone and the trim done; short enough that the tray's
 * figure is the lean one when a person looks. */
#define PAGE_OUT_DELAY_MS 5000

static guint trim_source;
static guint trims;
static guint page_out_source;

static gboolean
trim_now (gpointer data)
{
  (void) data;
  trim_source = 0;
#ifdef HAVE_MALLOC_TRIM
  malloc_trim (0);
#endif
  trims++;
  g_debug ("trimmed the heap (%u)", trims);
  return G_SOURCE_REMOVE;
}

static gboolean
schedule_on_main (gpointer data)
{
  g_debug ("trim soon: %s", (const char *) data);
  /* Every new payload moves the trim on: it runs after the last one of a burst. */
  if (trim_source != 0)
    g_source_remove (trim_source);
  trim_source = g_timeout_add_full (G_PRIORITY_LOW, TRIM_DELAY_MS, trim_now, NULL, NULL);
  g_source_set_name_by_id (trim_source, "[chaperone] memory trim");
  return G_SOURCE_REMOVE;
}

/**
 * chp_memory_trim_soon:
 * @why: (not nullable): a static string, for the debug log
 * Asks for the free heap to be given back to the system once the main loop has been idle for a
 * moment (after a window closed, say). Callable from any thread: the trim runs on the main
 * context, the default one.
 */
void
chp_memory_trim_soon (const char *why)
{
  g_main_context_invoke_full (NULL, G_PRIORITY_LOW, schedule_on_main, (gpointer) why, NULL);
}

/**
 * chp_memory_trim_after:
 * @payload_bytes: the size of a payload just handled (a message, an answer)
 * @why: (not nullable): a static string, for the debug log
 *
 * chp_memory_trim_soon (@why) when @payload_bytes is at least %CHP_MEMORY_TRIM_THRESHOLD.
 */
void
chp_memory_trim_after (gsize       payload_bytes,
                       const char *why)
{
  if (payload_bytes >= CHP_MEMORY_TRIM_THRESHOLD)
    chp_memory_trim_soon (why);
}

/**
 * chp_memory_get_trims:
 *
 * Returns: how many trims have run, for tests and benchmarks.
 */
guint
chp_memory_get_trims (void)
{
  return trims;
}

#ifdef MADV_PAGEOUT
/* Left alone below the stack pointer: the ABI's red zone (128 bytes) with room to spare. */
#define STACK_MARGIN (64 * 1024)

/* The main thread's stack, [start, end): the pages below what is in use now. A window's layout
 * recursed deep once and left them resident (0.7 MB in the tray); what lies below the stack
 * pointer is dead, and a call that reaches there again gets fresh zero pages. Only for the main
 * thread's own stack, which is where this runs. */
static gboolean
release_stack_below (unsigned long start,
                     unsigned long end)
{
  /* The frame's own address, not a local's: under AddressSanitizer locals may live elsewhere. */
  unsigned long sp = (unsigned long) __builtin_frame_address (0);
  unsigned long page = (unsigned long) sysconf (_SC_PAGESIZE);
  unsigned long limit;

  if (sp <= start || sp >= end || sp - start <= STACK_MARGIN + page)
    return FALSE;
  limit = (sp - STACK_MARGIN) & ~(page - 1);
  return madvise ((void *) start, limit - start, MADV_DONTNEED) == 0;
}
#endif

/**
 * chp_memory_page_out_now:
 *
 * Asks the kernel to reclaim the resident pages of every private or read-only file mapping of
 * the process (libraries' code, constants and data, fonts, caches); they come back on their next
 * use. The main thread's stack gives back its pages well below the stack pointer; other anonymous
 * memory and shared writable mappings are left alone. Main thread only. A no-op where the kernel
 * or the C library has no MADV_PAGEOUT.
 *
 * Returns: how many mappings the kernel took the advice for
 */
guint
chp_memory_page_out_now (void)
{
  guint advised = 0;
#ifdef MADV_PAGEOUT
  g_autofree char *maps = NULL;
  char *next;

  if (!g_file_get_contents ("/proc/self/maps", &maps, NULL, NULL))
    return 0;
  for (char *line = maps; line != NULL && *line != '\0'; line = next)
    {
      unsigned long start, end, inode;
      unsigned long long offset;
      char perms[5] = "";
      char dev[16] = "";

      next = strchr (line, '\n');
      if (next != NULL)
        *next++ = '\0';
      if (sscanf (line, "%lx-%lx %4s %llx %15s %lu", &start, &end, perms, &offset, dev,
                  &inode) != 6)
        continue;
      /* A file (an inode), readable: [heap], [stack], [vdso] and anonymous memory have no
       * inode. A private mapping may be writable (a library's data segment): the pages of it
       * that were only read are the file's and go as the code's do (GTK's tables, 1.2 MB in the
       * tray); one written is the process's own, and the kernel keeps it unless there is swap.
       * A shared writable one (shared memory, a file written through) would be written back, or
       * is another process's too: left alone. */
      if (inode == 0 && strstr (line, "[stack]") != NULL)
        {
          if (release_stack_below (start, end))
            advised++;
          continue;
        }
      if (inode == 0 || perms[0] != 'r' || (perms[1] == 'w' && perms[3] != 'p') || end <= start)
        continue;
      if (madvise ((void *) start, end - start, MADV_PAGEOUT) == 0)
        advised++;
    }
#endif
  g_debug ("paged out %u file mappings", advised);
  return advised;
}

static gboolean
page_out_cb (gpointer data)
{
  (void) data;
  page_out_source = 0;
  chp_memory_page_out_now ();
  return G_SOURCE_REMOVE;
}

/**
 * chp_memory_page_out_soon:
 *
 * The app went to the tray: chp_memory_page_out_now() in a few seconds, unless
 * chp_memory_page_out_cancel() comes first (a window opened again). Main thread only.
 */
void
chp_memory_page_out_soon (void)
{
  chp_memory_page_out_cancel ();
  page_out_source = g_timeout_add_full (G_PRIORITY_LOW, PAGE_OUT_DELAY_MS, page_out_cb, NULL, NULL);
  g_source_set_name_by_id (page_out_source, "[chaperone] memory page-out");
}

/**
 * chp_memory_page_out_cancel:
 *
 * A window is back: nothing is paged out for the tray. Main thread only.
 */
void
chp_memory_page_out_cancel (void)
{
  g_clear_handle_id (&page_out_source, g_source_remove);
}
