/* cowscope-collector.h — the recorder's drain and writer threads.
 *
 * The collector owns a session writer and every ring handed to it.  A
 * drain thread copies records out of all rings in turn (a bounded share
 * of each ring per visit, so small rings are visited often) into
 * in-memory batches and never touches the disk, so a slow write cannot
 * keep BLOCK-mode producers waiting past their timeout.  One writer
 * thread applies the batches to SQLite in order, committing every
 * ~50 ms: SQLite is only ever touched from that thread.  Up to 64 MiB
 * may wait between the two; beyond that the drain thread pauses and the
 * rings absorb (and, in DROP mode, count) the excess.  Other threads
 * (the recorder's socket loop) tell the collector about processes,
 * rings, maps and GPU status through a queue; commands are applied in
 * the order given, interleaved with the records.  Rings stay mapped until
 * the collector is freed, so a target that died keeps everything it
 * wrote.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "cowscope-ring.h"
#include "cowscope-session-writer.h"

G_BEGIN_DECLS

typedef struct _CowscopeCollector CowscopeCollector;

typedef struct {
  uint64_t produced;
  uint64_t stored;
  uint64_t dropped;
  uint64_t malformed; /* records consumed but unusable (bad size, orphan stack) */
  uint64_t rings;
} CowscopeCollectorTotals;

/* Takes @writer; starts the threads.  @stacks: expect STACK blobs after
 * stack-carrying events. */
CowscopeCollector *cowscope_collector_new (CowscopeSessionWriter *writer,
                                           gboolean stacks);

/* Queue commands for the thread.  Strings are copied; @ring is taken. */
void cowscope_collector_add_process (CowscopeCollector *collector, uint32_t pid,
                                     uint32_t ppid, const char *exe,
                                     const char *cmdline, int64_t start_ns);
void cowscope_collector_add_ring (CowscopeCollector *collector, uint32_t pid,
                                  uint32_t tid, const char *name,
                                  CowscopeRing *ring);
void cowscope_collector_add_maps (CowscopeCollector *collector, uint32_t pid,
                                  uint32_t generation, const char *maps);
void cowscope_collector_gpu_status (CowscopeCollector *collector, uint32_t pid,
                                    const char *status);
void cowscope_collector_process_end (CowscopeCollector *collector, uint32_t pid,
                                     int64_t end_ns, const char *reason,
                                     int exit_status, int exit_signal);

/* While recording, from any thread: what the rings handed over so far
 * say (produced, stored = consumed by the drain thread, dropped, rings);
 * malformed is left 0.  A snapshot, not a transaction: counters of
 * different rings are read at slightly different moments. */
void cowscope_collector_get_live_totals (CowscopeCollector *collector,
                                         CowscopeCollectorTotals *totals);

/* TRUE once the writer hit a write error (it then stops writing). */
gboolean cowscope_collector_has_failed (CowscopeCollector *collector);

/* Stops the threads after draining every ring until empty and writing
 * it all, writes the threads table with final counters (produced =
 * stored + dropped per thread), commits and joins.  Returns FALSE with the first write error.
 * The writer stays open for the caller (cowscope_collector_get_writer). */
gboolean cowscope_collector_finish (CowscopeCollector *collector,
                                    CowscopeCollectorTotals *totals,
                                    GError **error);

/* The writer; only after finish (before, it belongs to the thread). */
CowscopeSessionWriter *cowscope_collector_get_writer (CowscopeCollector *collector);

/* Unmaps the rings and frees the collector (finishing it first if
 * needed); the writer is closed unless it was stolen. */
void cowscope_collector_free (CowscopeCollector *collector);

/* Takes the writer away from a finished collector. */
CowscopeSessionWriter *cowscope_collector_steal_writer (CowscopeCollector *collector);

G_END_DECLS
