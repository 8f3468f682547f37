/* demo-stats.h — the demo's counting trace sink: how many of each
 * copy-on-write event the engine reported, for the summary.
 *
 * The sink is installed only when no other sink is present: under the
 * profiler its probes own the sink and record the same events, and the
 * demo counts nothing.
 */
#pragma once

#include "cowtensor.h"

#include <stdbool.h>
#include <stdint.h>

enum {
  K_EVENTS,
  K_TENSOR_NEW,
  K_TENSOR_FREE,
  K_STORAGE_NEW,
  K_STORAGE_FREE,
  K_ALLOCATION_NEW,
  K_ALLOCATION_BYTES,
  K_ALLOCATION_FREE,
  K_CONTEXT_NEW,
  K_CONTEXT_FREE,
  K_LAZY_CLONE,          /* LAZY_CLONE events */
  K_SHARED_STORAGES,     /* storages made sharing another's bytes */
  K_SHARED_BYTES,        /* their bytes: what eager copies would have copied */
  K_EAGER,
  K_EAGER_BYTES,
  K_EAGER_FOREIGN,
  K_EAGER_NOT_SIMPLE,
  K_EAGER_OTHER,
  K_COPY,
  K_COPY_BYTES,
  K_STEAL,
  K_STEAL_BYTES,
  K_DISCARDED,           /* steals whose copy was made and thrown away */
  K_DISCARDED_BYTES,
  K_FAILED,
  K_LOCK_WAIT_NS,
  K_VIOLATION,
  K_VIOLATION_READ,
  K_VIOLATION_WRITE,
  K_RANGE,
  K_MARK,
  K_NAME,
  K_STRING,
  N_COUNTERS
};

typedef struct {
  uint64_t k[N_COUNTERS];
  uint64_t lazy_by_op[COW_N_OPS];
  uint64_t copy_by_op[COW_N_OPS];
  uint64_t steal_by_op[COW_N_OPS];
} Stats;

/* Installs the counting sink unless another sink is installed; returns
 * whether the demo is now counting. */
bool stats_start_counting (void);

/* Uninstalls the counting sink if stats_start_counting() installed it. */
void stats_stop_counting (void);

/* Whether the installed sink is the demo's counting sink. */
bool stats_counting (void);

/* The counts so far, into @out.  Only read while no thread that the
 * engine reports on is running. */
void stats_snapshot (Stats *out);

/* @after − @before into @after. */
void stats_subtract (Stats *after, const Stats *before);

/* @part added to @total. */
void stats_add (Stats *total, const Stats *part);
