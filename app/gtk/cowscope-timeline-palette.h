/* cowscope-timeline-palette.h — the colours the copy timeline draws with.
 *
 * Every colour is a named colour of the application's style sheets
 * (style.css, and style-dark.css which libadwaita adds while the dark
 * style is on), looked up from a widget's style context: a theme or the
 * dark style changes them without code, and a widget notices through its
 * css_changed vfunc.  The painters take a palette, so they never look at
 * a widget. */
#pragma once

#include <gtk/gtk.h>

#include "cowscope-session-types.h"

G_BEGIN_DECLS

typedef struct {
  GdkRGBA kinds[COWSCOPE_N_ITEM_KINDS];      /* @timeline_KIND_color */
  GdkRGBA counters[COWSCOPE_N_COUNTERS];     /* @timeline_COUNTER_color */
  GdkRGBA foreground;      /* text, lines and tints, at full strength */
  GdkRGBA ruler;           /* the time ruler's background */
  GdkRGBA gutter;          /* behind lane titles */
  GdkRGBA process_gutter;  /* behind a process lane's title */
  GdkRGBA overlay;         /* a box drawn over the lanes (range totals) */
  GdkRGBA label_backdrop;  /* behind a counter lane's scale */
  GdkRGBA accent;          /* the cursor and the selected range */
  GdkRGBA highlight;       /* events of the highlighted objects */
} CowscopeTimelinePalette;

/* Fills @palette from @widget's style context.  A colour the style sheets
 * do not define (a widget outside the application) is grey. */
void cowscope_timeline_palette_lookup (CowscopeTimelinePalette *palette, GtkWidget *widget);

gboolean cowscope_timeline_palette_equal (const CowscopeTimelinePalette *a,
                                          const CowscopeTimelinePalette *b);

/* The foreground at @alpha of its strength. */
GdkRGBA cowscope_timeline_palette_fg (const CowscopeTimelinePalette *palette, float alpha);

/* @color with its alpha multiplied by @alpha. */
GdkRGBA cowscope_rgba_with_alpha (const GdkRGBA *color, float alpha);

G_END_DECLS
