/* cowscope-session-merge.h — several recorded sessions (the ranks of a
 * distributed run, say) into one, each member its own process group:
 * what `cowscope-cli merge` does.
 *
 * Every member's processes, threads, strings, call stacks (with their
 * symbols), CUDA records and events are written through the recorder's
 * session writer and the merged session is finalized by the session
 * format, as a recording is, so the derived tables, views and reports
 * of the merged session are those of its events.  Events are copied one
 * chunk at a time (cowscope-format-events.h): memory does not grow with
 * their number.
 *
 *   - Pids: member N's pid P becomes (N << 22) | P (pids are below 2^22
 *     on Linux), so that pids of different machines never collide; the
 *     originals are in merged_processes.
 *   - Times: moved onto the first member's CLOCK_MONOTONIC.  Members of
 *     the first one's boot (meta.boot_id) share that clock exactly; the
 *     others are aligned through their clock pairs (meta.clock_realtime_ns
 *     and clock_monotonic_ns), which is as good as the machines' wall
 *     clocks agree (NTP: typically well under a millisecond on a LAN).
 *   - Order and labels: by meta.rank when every member has one, else as
 *     given; labelled by @labels, else "rank N" (with the host when the
 *     members ran on several), else the file's name.
 *
 * Refused, with the output left untouched or removed: an output that is
 * one of the members (even with @force), the same file twice, two copies
 * of one recording, a member that is itself a merged session, a member
 * that cannot be read (damaged, newer, not a session), more than
 * COWSCOPE_MERGE_MAX_SESSIONS members, a label count that does not match.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* (N << 22) | pid must stay a positive 32-bit pid. */
#define COWSCOPE_MERGE_MAX_SESSIONS 511

typedef struct {
  guint sessions;
  guint64 events;
  gboolean aligned_by_wall_clock; /* some member ran on another boot */
  gboolean unaligned;             /* some member had no clock pair */
} CowscopeMergeResult;

/* Merges the @n_paths sessions @paths into a new session @output (an
 * existing file is an error unless @force).  @labels: NULL, or @n_paths
 * labels in the order of @paths.  FALSE with @error naming the file and
 * the problem. */
gboolean cowscope_session_merge (const char *const *paths, guint n_paths,
                                 const char *const *labels, const char *output, gboolean force,
                                 CowscopeMergeResult *result, GError **error);

G_END_DECLS
