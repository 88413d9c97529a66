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
 * and one trim covers a burst of them (paging through a large snapshot). */

#include "config.h"

#define G_LOG_DOMAIN "chaperone-memory"

#include "chp-memory.h"

#ifdef HAVE_MALLOC_TRIM
#include <malloc.h>
#endif

/* Long enough for a burst of pages to end; short enough that the memory is back before the
 * person looks. */
#define TRIM_DELAY_MS 1500

static guint trim_source;
static guint trims;

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
