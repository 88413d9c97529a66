/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-timing-bar.h: a step's times as a bar: the wait in the queue, then the call, with the
 * page's own part of it, scaled to the session's longest step. Named in words for screen
 * readers ("Queued 2 ms, ran 40 ms, page 12 ms"). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define CHP_TYPE_TIMING_BAR (chp_timing_bar_get_type ())

G_DECLARE_FINAL_TYPE (ChpTimingBar, chp_timing_bar, CHP, TIMING_BAR, GtkWidget)

GtkWidget *chp_timing_bar_new      (void);
void       chp_timing_bar_set      (ChpTimingBar *self,
                                    gint64        queue_us,
                                    gint64        run_us,
                                    gint64        page_us,
                                    gint64        longest_us,
                                    const char   *words);
void       chp_timing_bar_get      (ChpTimingBar *self,
                                    double       *queue_fraction,
                                    double       *run_fraction,
                                    double       *page_fraction);

G_END_DECLS
