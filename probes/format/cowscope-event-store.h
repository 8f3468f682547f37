/* cowscope-event-store.h — the `event_chunks` table: appending events
 * to it in chunks (cowscope-event-chunk.h) and finding and reading them
 * back, side by side.
 *
 * Each row of event_chunks holds consecutive events (by seq), with what a
 * reader needs to skip it without decoding it: its seq range, its least
 * and greatest ts, whether ts never decreases in it, and the set of event
 * types it holds.  A session is in time order when every chunk is and
 * each chunk's times come at or after the previous chunk's: then a chunk
 * is found by time as well as by seq.
 *
 * These use the SQLite API through cowscope-sqlite-api.h, so that the
 * loadable extension (cowscope-sqlite-extension.c) can carry them too.
 */
#pragma once

#include <glib.h>

#include "cowscope-event-chunk.h"
#include "cowscope-sqlite-api.h"

G_BEGIN_DECLS

/* ---- writing -------------------------------------------------------------- */

typedef struct _CowscopeEventStore CowscopeEventStore;

/* A writer of @db's event_chunks (the table must exist).  Events are
 * appended after the last stored one.  NULL with @db's error code in
 * @rc. */
CowscopeEventStore *cowscope_event_store_new (sqlite3 *db, int *rc);
void cowscope_event_store_free (CowscopeEventStore *store);

/* The seq the next event takes by default: one more than the greatest
 * stored or pending. */
gint64 cowscope_event_store_next_seq (const CowscopeEventStore *store);

/* Appends @row (its seq greater than every event's so far: else
 * SQLITE_CONSTRAINT); a full chunk is written at once.  An SQLite result
 * code. */
int cowscope_event_store_append (CowscopeEventStore *store, const CowscopeEventRow *row);

/* Writes the events not yet written as a chunk (replacing the chunk this
 * store wrote for the same first events before), so that readers see
 * them; later appends go on filling that chunk. */
int cowscope_event_store_flush (CowscopeEventStore *store);

/* Forgets the events not yet written (a rolled-back transaction) and
 * reads the last stored seq again. */
int cowscope_event_store_forget_pending (CowscopeEventStore *store);

/* The events appended but not yet in a full chunk (the last chunk's), for
 * readers of the same connection in the same transaction. */
const CowscopeEventBlock *cowscope_event_store_pending (const CowscopeEventStore *store);

/* ---- reading -------------------------------------------------------------- */

/* One event_chunks row, without its data. */
typedef struct {
  gint64 first_seq, last_seq, n;
  gint64 min_ts, max_ts;
  guint64 types;
  gboolean sorted;
} CowscopeChunkInfo;

typedef struct _CowscopeEventCatalog CowscopeEventCatalog;

/* The chunks of @db, read now (see cowscope_event_catalog_refresh()). */
CowscopeEventCatalog *cowscope_event_catalog_new (sqlite3 *db);
void cowscope_event_catalog_free (CowscopeEventCatalog *catalog);

/* Reads the chunk rows again when the database changed since (another
 * connection or this one wrote); an SQLite result code. */
int cowscope_event_catalog_refresh (CowscopeEventCatalog *catalog);

guint cowscope_event_catalog_get_n_chunks (const CowscopeEventCatalog *catalog);
const CowscopeChunkInfo *cowscope_event_catalog_get_chunk (const CowscopeEventCatalog *catalog,
                                                           guint i);
/* Events in all chunks. */
gint64 cowscope_event_catalog_get_n_events (const CowscopeEventCatalog *catalog);
/* Every chunk in time order, and each after the one before. */
gboolean cowscope_event_catalog_is_sorted (const CowscopeEventCatalog *catalog);

/* The first chunk whose last seq is at least @seq (n_chunks: none). */
guint cowscope_event_catalog_find_seq (const CowscopeEventCatalog *catalog, gint64 seq);
/* Sorted catalogs: the first chunk whose greatest ts is at least @ts. */
guint cowscope_event_catalog_find_ts (const CowscopeEventCatalog *catalog, gint64 ts);

/* Chunk @i, decoded; NULL when it cannot be read or is damaged, with
 * @rc (an SQLite code) and @what (NULL when SQLite failed) saying why.
 * The last chunks decoded are kept, so reading the same one again is
 * cheap.  The block belongs to the catalog and may be reused by its next
 * call, unless the caller takes a reference (cowscope_event_block_ref()). */
CowscopeEventBlock *cowscope_event_catalog_read (CowscopeEventCatalog *catalog, guint i, int *rc,
                                                 const char **what);

G_END_DECLS
