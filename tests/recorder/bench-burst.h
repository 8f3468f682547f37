/* bench-burst.h — Cowscope's side of the benchmarks against LTTng-UST:
 * one burst of the Cowscope burst target recorded by the recorder
 * embedded in the benchmark's process (as the app embeds it), with
 * default settings, and what it cost; plus the statistics both sides'
 * tables use. */
#pragma once

#include <glib.h>

#include "burst-report.h"
#include "cowscope-collector.h"

G_BEGIN_DECLS

typedef struct {
  BurstReport target;              /* what the target measured in its loop */
  CowscopeCollectorTotals totals;  /* ring records: produced = stored + dropped */
  guint64 bytes_on_disk;           /* the finished session (and any -wal, -shm) */
  gint64 recorder_cpu_ns;          /* the recorder's CPU (every thread), start to ready */
  gint64 finalize_cpu_ns;          /* of which after the last event was committed */
  gint64 drained_ns;               /* the loop's end to every event committed */
  gint64 ready_ns;                 /* the loop's end to the finished session */
} BenchBurstRun;

/* Records `@target @events` into @session_path (replaced) with default
 * options (drop mode, default ring, stacks on), the probe from
 * COWSCOPE_PROBE_PATH.  FALSE with a message when the recording or the
 * target failed, or the target saw no sink. */
gboolean bench_burst_record (const char *target, guint64 events, const char *session_path,
                             BenchBurstRun *run, GError **error);

/* The median of @n values (sorted in place); 0 for none. */
double bench_median (double *values, guint n);

/* An integer from the environment variable @name, or @fallback when it
 * is unset; exits with a message when it is set but not in [@min, @max]. */
guint64 bench_env_count (const char *name, guint64 fallback, guint64 min, guint64 max);

/* "load average 3.12 (2 CPUs)": how busy this machine is now. */
char *bench_machine_load (void);

G_END_DECLS
