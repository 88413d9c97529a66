/* SPDX-License-Identifier: GPL-3.0-or-later */
/* fuzz-common.h: what every libFuzzer target here does the same way. */
#pragma once

#include <stdlib.h>

#include <glib.h>

/* A warning or a critical (a g_return_if_fail() tripped) is a bug found, not noise: abort, so
 * that libFuzzer saves the input. (g_log_set_always_fatal() would end in G_BREAKPOINT, a SIGTRAP
 * that libFuzzer does not catch: the process dies and the input is lost.) */
static GLogWriterOutput
fuzz_log_writer (GLogLevelFlags   log_level,
                 const GLogField *fields,
                 gsize            n_fields,
                 gpointer         user_data)
{
  if (log_level & (G_LOG_LEVEL_ERROR | G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING))
    {
      g_log_writer_standard_streams (log_level, fields, n_fields, user_data);
      abort ();
    }
  return g_log_writer_default (log_level, fields, n_fields, user_data);
}

static inline void
fuzz_init (void)
{
  /* GSlice's magazines would hide a use-after-free of a JsonNode from ASan. Set here too in case
   * the runner forgot; it only takes effect if no slice was allocated yet. */
  g_setenv ("G_SLICE", "always-malloc", FALSE);
  g_log_set_writer_func (fuzz_log_writer, NULL, NULL);
}
