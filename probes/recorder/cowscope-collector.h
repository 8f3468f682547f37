/* cowscope-collector.h — the recorder's drain and writer threads.
 *
 * The collector owns a session writer and every ring handed to it.  A
 * drain thread copies records out of all rings in turn (a bounded share
 * of each ring per visit, so small rings are visited often) into
 * in-memory batches and never touches the disk, so a slow write never
 * keeps BLOCK-mode producers waiting longer than the disk makes it.  One
 * writer thread applies the batches to SQLite in order, committing every
 * ~50 ms: SQLite is only ever touched from that thread.  Up to 64 MiB
 * may wait between the two; beyond that the drain thread pauses and the
 * rings absorb (and, in DROP mode, count) the excess.  Other threads
 * (the recorder's socket loop) tell the collector about processes,
 * rings, maps, GPU status and faulty peers through a queue; commands are
 * applied in the order given, interleaved with the records.
 *
 * A ring whose thread finished is released (unmapped, its final counters
 * kept) as soon as it is drained, so a target that runs thousands of
 * short-lived threads costs the recorder memory for the live ones only.
 * Other rings stay mapped until the collector is freed, so a target that
 * died keeps everything it wrote.  When recording ends every ring is
 * marked detached, so a BLOCK-mode writer that outlives the recording
 * stops waiting.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "cowscope-ring.h"
#include "cowscope-session-writer.h"

G_BEGIN_DECLS

typedef struct _CowscopeCollector CowscopeCollector;

typedef struct {
  uint64_t produced;  /* records: events, strings, stacks, CUDA records */
  uint64_t stored;
  uint64_t dropped;
  uint64_t events_produced; /* of the records, engine events */
  uint64_t events_stored;
  uint64_t events_dropped;
  uint64_t malformed; /* records consumed but unusable (bad size, orphan stack) */
  uint64_t rings;
  uint64_t peer_faults; /* things refused from peers (see peer_faults) */
  /* BLOCK mode: threads that stopped waiting because the recorder hung
   * up on them, or detached from their ring. */
  uint64_t stopped_hung_up;
  uint64_t stopped_detached;
} CowscopeCollectorTotals;

/* Takes @writer; starts the threads.  @stacks: expect STACK blobs after
 * stack-carrying events. */
CowscopeCollector *cowscope_collector_new (CowscopeSessionWriter *writer,
                                           gboolean stacks);

/* Queue commands for the thread.  Strings are copied; @ring is taken. */
void cowscope_collector_add_process (CowscopeCollector *collector,
                                     const CowscopeProcessIdentity *identity,
                                     int64_t start_ns);
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
/* Something refused from peer @pid (user @uid, -1 unknown): @fault names
 * the kind, @detail says what it was (the first one is kept). */
void cowscope_collector_peer_fault (CowscopeCollector *collector, uint32_t pid,
                                    int64_t uid, const char *fault,
                                    const char *detail);

/* While recording, from any thread: what the rings handed over so far
 * say (produced, stored = consumed by the drain thread, dropped, rings);
 * malformed is left 0.  A snapshot, not a transaction: counters of
 * different rings are read at slightly different moments. */
void cowscope_collector_get_live_totals (CowscopeCollector *collector,
                                         CowscopeCollectorTotals *totals);

/* TRUE once the writer hit a write error (it then stops writing). */
gboolean cowscope_collector_has_failed (CowscopeCollector *collector);

/* Stops the threads after draining every ring until empty and writing
 * it all, marks every ring detached, writes the threads table with final
 * counters (produced = stored + dropped per thread, for records and for
 * events), commits and joins.  Returns FALSE with the first write error.
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
