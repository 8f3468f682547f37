/* session-fixture.h — generates synthetic but consistent session
 * databases for the session-model tests and benchmark.
 *
 * The generator creates the session format's schema, with the engine's
 * vocabulary in the lookup tables, and simulates the engine:
 * tensors, views, lazy clones (CONTEXT_NEW, STORAGE_NEW sharing a context,
 * LAZY_CLONE), materializations (copy or steal, with CONTEXT_UNREF, the
 * fresh allocation and a CUDA memcpy for device storages), frees, simulate
 * violations and user ranges, in several processes and threads, emitting
 * the same event sequences the engine does.  It fills the derived tables
 * and the indexes the session model relies on, and has the format's own
 * cowscope_format_index_write() add the checkpoints (every
 * `checkpoint_interval` events, or as many as objects are alive), graph
 * states and timeline summaries, in one transaction with synchronous=OFF. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  guint64 n_events;          /* at least this many events */
  guint n_processes;         /* 1..4 */
  guint n_threads;           /* per process */
  guint target_live;         /* live objects kept in steady state */
  guint checkpoint_interval; /* events between checkpoints (0: none) */
  gboolean finalized;        /* meta.finalized */
  guint32 seed;
  guint timeline_chunk;      /* instants per timeline chunk (0: the recorder's) */
} SessionFixtureOptions;

typedef struct {
  gint64 start_ns, end_ns;
  guint64 n_events;
  guint n_thread_lanes;
  guint n_cuda_lanes;
  guint64 n_checkpoints;
  /* A copy of a CUDA storage, for "explain a copy". */
  gint64 copy_seq;           /* materializations.seq */
  gint64 copy_lazy_clone_seq;
  guint64 copy_nbytes;
  gint64 copy_cuda_id;
  guint64 copy_storage_id;
  /* A steal and a violation. */
  gint64 steal_seq;
  gint64 violation_seq;
} SessionFixtureInfo;

/* Default options for a small session (a few thousand events). */
void session_fixture_options_small (SessionFixtureOptions *options);

/* Writes a new session at @path (replacing any file).  FALSE with @error
 * on failure. */
gboolean session_fixture_generate (const char *path, const SessionFixtureOptions *options,
                                   SessionFixtureInfo *info, GError **error);

/* TRUE when @path holds a session this build opens as it is: finalized
 * with the current schema.  A benchmark that caches its generated session
 * regenerates one that is not (an older one would be re-finalized into a
 * copy at every open, and the benchmark would time that). */
gboolean session_fixture_is_current (const char *path);

G_END_DECLS
