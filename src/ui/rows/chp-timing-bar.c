/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-timing-bar.c: drawn, not built of widgets: a timeline may hold thousands of steps. Its
 * colours are the theme's (the foreground for the queue, the accent for the call, a deeper
 * shade for the page's part; the error colour when the row is an error), so it follows light and
 * dark. */
#include "config.h"

#include "chp-timing-bar.h"

#define BAR_HEIGHT 8
#define BAR_MIN_WIDTH 48

struct _ChpTimingBar
{
  GtkWidget parent_instance;

  double queue;   /* fractions of the row's width */
  double run;
  double page;
};

G_DEFINE_FINAL_TYPE (ChpTimingBar, chp_timing_bar, GTK_TYPE_WIDGET)

static void
chp_timing_bar_measure (GtkWidget      *widget,
                        GtkOrientation  orientation,
                        int             for_size,
                        int            *minimum,
                        int            *natural,
                        int            *minimum_baseline,
                        int            *natural_baseline)
{
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    {
      *minimum = BAR_MIN_WIDTH;
      *natural = BAR_MIN_WIDTH * 4;
    }
  else
    {
      *minimum = *natural = BAR_HEIGHT;
    }
}

static GdkRGBA
theme_colour (GtkWidget  *widget,
              const char *name,
              double      alpha)
{
  GtkStyleContext *style = gtk_widget_get_style_context (widget);
  GdkRGBA colour;

  if (name == NULL || !gtk_style_context_lookup_color (style, name, &colour))
    gtk_style_context_get_color (style, &colour);
  colour.alpha *= alpha;
  return colour;
}

static void
fill_rounded (GtkSnapshot   *snapshot,
              const GdkRGBA *colour,
              double         x,
              double         width,
              double         height)
{
  GskRoundedRect rect;

  if (width <= 0)
    return;
  gsk_rounded_rect_init_from_rect (&rect, &GRAPHENE_RECT_INIT (x, 0, width, height),
                                   MIN (height / 2, width / 2));
  gtk_snapshot_push_rounded_clip (snapshot, &rect);
  gtk_snapshot_append_color (snapshot, colour, &GRAPHENE_RECT_INIT (x, 0, width, height));
  gtk_snapshot_pop (snapshot);
}

static void
chp_timing_bar_snapshot (GtkWidget   *widget,
                         GtkSnapshot *snapshot)
{
  ChpTimingBar *self = CHP_TIMING_BAR (widget);
  double width = gtk_widget_get_width (widget);
  double height = gtk_widget_get_height (widget);
  gboolean error = FALSE;
  GdkRGBA track, queue, run, page;
  double x, w;
  guint depth = 0;

  /* The step's row says it failed; the bar sits a few levels inside it. */
  for (GtkWidget *ancestor = widget; ancestor != NULL && !error && depth < 4;
       ancestor = gtk_widget_get_parent (ancestor), depth++)
    error = gtk_widget_has_css_class (ancestor, "error");

  track = theme_colour (widget, NULL, 0.08);
  queue = theme_colour (widget, NULL, 0.35);
  run = theme_colour (widget, error ? "error_color" : "accent_color", 0.75);
  page = theme_colour (widget, error ? "error_color" : "accent_color", 1.0);

  fill_rounded (snapshot, &track, 0, width, height);

  /* Each part at least a sliver, so a step of 0.1 ms still shows that it ran. */
  x = 0;
  w = self->queue > 0 ? MAX (self->queue * width, 2) : 0;
  fill_rounded (snapshot, &queue, x, MIN (w, width), height);
  x += w;
  w = self->run > 0 ? MAX (self->run * width, 2) : 0;
  fill_rounded (snapshot, &run, x, MIN (w, width - x), height);
  w = self->page > 0 ? MAX (self->page * width, 2) : 0;
  fill_rounded (snapshot, &page, x, MIN (w, width - x), height);
}

static void
chp_timing_bar_class_init (ChpTimingBarClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  widget_class->measure = chp_timing_bar_measure;
  widget_class->snapshot = chp_timing_bar_snapshot;

  gtk_widget_class_set_css_name (widget_class, "chp-timing-bar");
  /* A picture with a name: what a screen reader says is the words chp_timing_bar_set() gets. */
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
chp_timing_bar_init (ChpTimingBar *self)
{
  gtk_widget_set_valign (GTK_WIDGET (self), GTK_ALIGN_CENTER);
}

GtkWidget *
chp_timing_bar_new (void)
{
  return g_object_new (CHP_TYPE_TIMING_BAR, NULL);
}

/**
 * chp_timing_bar_set:
 * @longest_us: what the full width stands for (the session's longest step)
 * @words: the times in words: the bar's accessible name and tooltip
 */
void
chp_timing_bar_set (ChpTimingBar *self,
                    gint64        queue_us,
                    gint64        run_us,
                    gint64        page_us,
                    gint64        longest_us,
                    const char   *words)
{
  double scale;

  g_return_if_fail (CHP_IS_TIMING_BAR (self));

  scale = longest_us > 0 ? 1.0 / longest_us : 0;
  self->queue = CLAMP (MAX (queue_us, 0) * scale, 0, 1);
  self->run = CLAMP (MAX (run_us, page_us) * scale, 0, 1 - self->queue);
  self->page = CLAMP (MAX (page_us, 0) * scale, 0, self->run);

  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  words != NULL ? words : "", -1);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self), words);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* What the bar draws, as fractions of its width: for tests. */
void
chp_timing_bar_get (ChpTimingBar *self,
                    double       *queue_fraction,
                    double       *run_fraction,
                    double       *page_fraction)
{
  g_return_if_fail (CHP_IS_TIMING_BAR (self));

  if (queue_fraction != NULL)
    *queue_fraction = self->queue;
  if (run_fraction != NULL)
    *run_fraction = self->run;
  if (page_fraction != NULL)
    *page_fraction = self->page;
}
