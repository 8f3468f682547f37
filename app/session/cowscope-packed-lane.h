/* cowscope-packed-lane.h — a finalized session's timeline lanes read
 * lazily (private to the session model).
 *
 * At open a lane keeps, per chunk of timeline_chunks (up to 65,536
 * instants), only its row's first and last time and count.  A query
 * decodes a chunk only when it needs finer detail than that: when a pixel
 * boundary falls inside the chunk.  Decoding a chunk keeps its BLOB and a
 * directory of blocks of 64 instants (their times, kinds and bytes), so a
 * later query sums whole blocks and reads single instants only in the
 * blocks that a pixel boundary splits; the chunk's own totals are kept for
 * good, so a pixel that spans whole chunks needs no decoding again.
 *
 * Decoded chunks live in one CowscopeChunkStore per document, an LRU
 * bounded in bytes (64 MiB by default) shared by every lane; results never
 * depend on what it holds.  A chunk that cannot be read or decoded is
 * "damaged": it is left out of every later answer, and the store keeps the
 * first such error for the application to report once.  Everything here
 * is thread-safe (the UI thread draws, a worker counts ranges).
 */
#pragma once

#include <glib.h>

#include "cowscope-timeline-item.h"

G_BEGIN_DECLS

typedef struct _CowscopeChunkStore CowscopeChunkStore;
typedef struct _CowscopePackedLane CowscopePackedLane;

#define COWSCOPE_CHUNK_STORE_DEFAULT_BUDGET (64u << 20)

/* A store reading the session file at @path (a connection of its own,
 * opened at the first load) and naming it @name in messages; @cuda_kinds
 * maps cuda_kinds.id (0..255) to the CowscopeItemKind drawn for it. */
CowscopeChunkStore *cowscope_chunk_store_new (const char *path, const char *name,
                                              const guint8 cuda_kinds[256]);
CowscopeChunkStore *cowscope_chunk_store_ref (CowscopeChunkStore *store);
void cowscope_chunk_store_unref (CowscopeChunkStore *store);

/* The most bytes of decoded chunks kept (at least one chunk always is);
 * shrinking it evicts at once. */
void cowscope_chunk_store_set_budget (CowscopeChunkStore *store, gsize bytes);

typedef struct {
  gsize budget;        /* bytes */
  gsize used;          /* bytes of decoded chunks held now */
  guint n_chunks;      /* decoded chunks held now */
  guint64 loads;       /* chunks read and decoded so far */
  guint64 hits;        /* lookups answered from the store */
  guint64 evictions;
} CowscopeChunkStoreStats;

void cowscope_chunk_store_get_stats (CowscopeChunkStore *store, CowscopeChunkStoreStats *stats);

/* The first error a load met, once (a new reference the caller frees);
 * NULL when none, or when it was taken already. */
GError *cowscope_chunk_store_take_error (CowscopeChunkStore *store);

/* A lane over timeline_lanes row @lane_id of @store's session (CUDA
 * records when @cuda, else events), with no chunk yet. */
CowscopePackedLane *cowscope_packed_lane_new (CowscopeChunkStore *store, gint64 lane_id,
                                              gboolean cuda);
void cowscope_packed_lane_free (CowscopePackedLane *lane);

/* Adds the next chunk (number @chunk, in time order) from its row's
 * columns; FALSE when they contradict the chunks before it (damaged). */
gboolean cowscope_packed_lane_add_chunk (CowscopePackedLane *lane, gint64 chunk, gint64 first_ts,
                                         gint64 last_ts, gint64 n);

/* Instants in the lane (the rows' counts). */
guint64 cowscope_packed_lane_get_n (const CowscopePackedLane *lane);

/* Number of instants with t0 <= ts < t1 (damaged chunks count as empty). */
guint64 cowscope_packed_lane_count (CowscopePackedLane *lane, gint64 t0, gint64 t1);

/* Adds the instants with t0 <= ts < t1 to @sums, per kind, as
 * cowscope_lane_index_sum() does in memory (damaged chunks count as
 * empty). */
void cowscope_packed_lane_sum (CowscopePackedLane *lane, gint64 t0, gint64 t1,
                               CowscopeKindSums *sums);

/* Appends the items of [t0, t1) at @width pixels to @items, exactly as
 * cowscope_lane_index_query() does for the same instants in memory. */
void cowscope_packed_lane_query (CowscopePackedLane *lane, gint64 t0, gint64 t1, guint width,
                                 GArray *items);

/* The same without reading the file: a chunk not decoded yet counts as
 * its instants spread evenly over its time span, in buckets of kind
 * COWSCOPE_ITEM_OTHER (a chunk's row knows only its span and its count);
 * FALSE when that happened (the answer is then an estimate).  For a
 * first frame that must not wait for the disk; never blocks on a chunk
 * another thread decodes. */
gboolean cowscope_packed_lane_query_cached (CowscopePackedLane *lane, gint64 t0, gint64 t1,
                                            guint width, GArray *items);

G_END_DECLS
