/* cowscope-format-index.h — the packed summaries a finalized session
 * carries so that the application opens it without reading every event.
 *
 * Written by cowscope_format_finalize() (and by the test fixtures), in
 * the caller's transaction, from the time-ordered `events` and the
 * derived object tables:
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
 * The rules are the format's own (cowscope-graph-state.h,
 * cowscope-format-timeline.h, cowscope-format-counters.h), the records
 * cowscope-packed-records.h's; meta.index_format names their layout
 * (COWSCOPE_FORMAT_INDEX_VERSION).
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* Instants (or spans) per timeline chunk. */
#define COWSCOPE_TIMELINE_CHUNK 65536

/* Makes the next writes cut chunks of @instants (0: the default) so that
 * tests exercise many chunks per lane on small sessions.  Not thread-safe;
 * tests only. */
void cowscope_format_index_set_chunk_for_tests (guint instants);

/* Replaces the tables above (which must exist) and sets
 * meta.index_format.  A checkpoint is taken every @checkpoint_interval
 * events, or every as many events as objects are alive when that is
 * more.  FALSE with @error (naming @path) on failure; the caller rolls
 * its transaction back. */
gboolean cowscope_format_index_write (sqlite3 *db, const char *path,
                                      gint64 checkpoint_interval, GError **error);

G_END_DECLS
