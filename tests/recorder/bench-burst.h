/* bench-burst.h — bursts recorded by Cowscope and by LTTng-UST side by
 * side, for the overhead and recorder benchmarks: Cowscope's burst
 * target recorded by the recorder embedded in the benchmark's process
 * (as the app embeds it) with default settings, LTTng's through
 * lttng-peer.h, in interleaved pairs; and the table rows and statistics
 * both benchmarks print them with. */
#pragma once

#include <glib.h>

#include "burst-report.h"
#include "cowscope-collector.h"
#include "lttng-peer.h"

G_BEGIN_DECLS

typedef struct {
  BurstReport target;             /* what the target measured in its loop */
  CowscopeCollectorTotals totals; /* ring records: produced = stored + dropped */
  guint64 bytes_on_disk;  /* the finished session (and any -wal, -shm) */
  gint64 recorder_cpu_ns; /* the recorder's CPU (every thread), start to ready */
  gint64 finalize_cpu_ns; /* of which after the last event was committed */
  gint64 drained_ns;      /* the loop's end to every event committed */
  gint64 ready_ns;        /* the loop's end to the finished session */
} BenchBurstRun;

/* Records `@target @events` into @session_path (replaced) with default
 * options (drop mode, default ring, stacks on), the probe from
 * COWSCOPE_PROBE_PATH.  FALSE with a message when the recording or the
 * target failed, or the target saw no sink. */
gboolean bench_burst_record (const char *target, guint64 events,
                             const char *session_path, BenchBurstRun *run,
                             GError **error);

/* @pairs bursts of @events through each tracer, interleaved with the
 * order alternating, so that a drift in the machine's load does not
 * favour one side. */
typedef struct {
  guint64 events;
  guint pairs;
  BenchBurstRun *cowscope; /* @pairs runs */
  LttngPeerRun *lttng; /* @pairs runs; NULL when LTTng did not run in every pair */
  char *lttng_channel;        /* its channel, described */
  long lttng_cpus;            /* CPUs it has buffers for */
  guint64 lttng_buffer_bytes; /* its buffer memory on them */
  char *lttng_skipped; /* why LTTng did not run (in every pair), or NULL */
} BenchBurstPairs;

/* Runs the pairs, Cowscope's sessions in @dir (removed after each).
 * FALSE with a message when a Cowscope burst failed; LTTng's failure
 * only sets lttng_skipped. */
gboolean bench_burst_pairs_run (BenchBurstPairs *pairs, guint64 events,
                                guint n_pairs, const char *dir, GError **error);
void bench_burst_pairs_clear (BenchBurstPairs *pairs);

/* Two lines saying how each tracer was set up (buffer memory included),
 * or why LTTng was skipped. */
void bench_print_burst_setup (const BenchBurstPairs *pairs);

/* One table row: the medians of @cowscope and @lttng (NULL: "-") and
 * the median of the per-pair ratios cowscope/lttng, which it returns
 * (0 when there is none). */
double bench_print_peer_row (const char *label, int decimals,
                             const double *cowscope, const double *lttng,
                             guint pairs);
/* The header above those rows. */
void bench_print_peer_header (void);

/* The median of @n values (sorted in place); 0 for none. */
double bench_median (double *values, guint n);

/* An integer from the environment variable @name, or @fallback when it
 * is unset; exits with a message when it is set but not in [@min, @max]. */
guint64 bench_env_count (const char *name, guint64 fallback, guint64 min,
                         guint64 max);

/* "load average 3.12 (2 CPUs)": how busy this machine is now. */
char *bench_machine_load (void);

G_END_DECLS
