/* cowscope-format-index.h — the packed summaries a finalized session
 * carries so that the application opens it without reading every event.
 *
 *   timeline_lanes, timeline_chunks, timeline_spans, timeline_counters
 *       every timeline lane's instants and spans as packed arrays, and the
 *       counter tracks already binned, so that loading the timeline reads
 *       a few thousand BLOB rows instead of millions of event rows;
 *   checkpoints, checkpoint_objects, checkpoint_states, checkpoint_replays
 *       the live objects at each checkpoint (ids), the whole sharing-graph
 *       state at each checkpoint (every attribute the graph needs, with
 *       its free time and name), and the graph-relevant events between
 *       checkpoints, so that the graph at an instant is one state plus a
 *       partial replay, with no joins.
 *
 * An index writer builds them as the events arrive in time order (the
 * recorder's session builder feeds it while recording: the instants and
 * the counters are written as they come) and writes the rest when told
 * the events are over: the spans, the CUDA lanes, the lanes' rows, the
 * counter tracks and the checkpoints (which need each object's free time
 * and name, known only once the object tables are complete).
 *
 * The rules are the format's own (cowscope-graph-state.h,
 * cowscope-format-timeline.h, cowscope-format-counters.h), the records
 * cowscope-packed-records.h's; meta.index_format names their layout
 * (COWSCOPE_FORMAT_INDEX_VERSION).
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

#include "cowscope-event-chunk.h"
#include "cowscope-packed-records.h"

G_BEGIN_DECLS

/* Instants (or spans) per timeline chunk. */
#define COWSCOPE_TIMELINE_CHUNK 65536

/* Makes the next writes cut chunks of @instants (0: the default) so that
 * tests exercise many chunks per lane on small sessions.  Not thread-safe;
 * tests only. */
void cowscope_format_index_set_chunk_for_tests (guint instants);

typedef struct _CowscopeIndexWriter CowscopeIndexWriter;

/* Starts replacing @db's summaries (the tables above, which must exist:
 * they are emptied), in the caller's transaction.  NULL with @error
 * (naming @path). */
CowscopeIndexWriter *cowscope_index_writer_new (sqlite3 *db, const char *path, GError **error);

/* The next event, in seq (time) order: its instant on its thread's lane,
 * the counters it moves.  FALSE with @error. */
gboolean cowscope_index_writer_event (CowscopeIndexWriter *writer, const CowscopeEventRow *event,
                                      GError **error);

/* A span of thread lane (@pid, @tid): a materialization or a user range. */
void cowscope_index_writer_span (CowscopeIndexWriter *writer, guint32 pid, gint64 tid,
                                 const CowscopeSpan *span);

typedef enum {
  /* The thread lanes' spans come from the materializations and ranges
   * tables (else from cowscope_index_writer_span()). */
  COWSCOPE_INDEX_SPANS_FROM_TABLES = 1 << 0,
  /* Every event is in event_chunks: the checkpoints read them there
   * (else through `events`, which also has an open transaction's). */
  COWSCOPE_INDEX_EVENTS_IN_CHUNKS = 1 << 1,
} CowscopeIndexFlags;

/* Writes the rest (see above) and sets meta.index_format; the derived
 * object tables must be complete.  A checkpoint is taken every
 * @checkpoint_interval events, or every as many events as objects are
 * alive when that is more.  FALSE with @error; the caller rolls back. */
gboolean cowscope_index_writer_finish (CowscopeIndexWriter *writer, gint64 checkpoint_interval,
                                       CowscopeIndexFlags flags, GError **error);

void cowscope_index_writer_free (CowscopeIndexWriter *writer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeIndexWriter, cowscope_index_writer_free)

/* All of it at once from the events and the derived tables (the test
 * fixtures; sessions finalized before the summaries existed). */
gboolean cowscope_format_index_write (sqlite3 *db, const char *path,
                                      gint64 checkpoint_interval, GError **error);

G_END_DECLS
