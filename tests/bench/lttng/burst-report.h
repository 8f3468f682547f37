/* burst-report.h — what a burst target (burst-target.c) reports about
 * its own loop, parsed from the one line it prints.  Both the Cowscope
 * and the LTTng build print the same line, so one parser serves both. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  guint64 events;     /* events the loop emitted */
  gboolean enabled;   /* a tracer was listening when the loop began */
  double first_ns;    /* the first event alone */
  double mean_ns;     /* the other events: loop time over their count */
  double warm_ns;     /* median over fixed-size chunks of ns per event */
  gint64 loop_end_ns; /* CLOCK_MONOTONIC when the loop ended */
  gint64 cpu_ns;      /* the target's own CPU time at the loop's end */
} BurstReport;

/* Fills @report from the target's output @text (the line may be
 * surrounded by other output).  FALSE with a message naming the missing
 * or malformed field otherwise. */
gboolean burst_report_parse (const char *text, BurstReport *report,
                             GError **error);

/* CLOCK_MONOTONIC in ns: the clock of loop_end_ns, for the caller's own
 * instants. */
gint64 burst_report_now_ns (void);

G_END_DECLS
