/* trace-check.h — the properties every exported Chrome trace must have,
 * checked on its parsed JSON (the export tests on the fixture session and
 * on a recorded demo share them).
 *
 * - Slice and instant names are stable strings: one of the export's own
 *   names ("copy", "steal", "lazy clone", "ipc send", an operation, ...),
 *   a CUDA record's ("memcpy HtoD", a kernel), or a name the program gave
 *   (ranges, marks), which the caller lists.
 * - Slices of one thread nest: none starts inside another and ends after
 *   it (viewers drop such slices).
 * - Every flow arrow has one start and one end, and each lies strictly
 *   inside a slice of its own thread (in ns, as viewers round µs).
 * - At most one process_name per pid; every async slice begins and ends.
 */
#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

typedef struct {
  guint lazy_flows;   /* lazy clone → copy or steal */
  guint cuda_flows;   /* engine operation → CUDA record */
  guint slices;       /* "X" events */
  guint stacks;       /* slices and instants whose args have a "stack" */
} TraceCheckCounts;

/* Asserts the properties above on @events (the "traceEvents" array);
 * @user_names (NULL-terminated, may be NULL) are the program's range and
 * mark names and the session's kernel names. */
TraceCheckCounts trace_check_properties (JsonArray *events, const char *const *user_names);

/* @ts or @dur member of @event, in ns (µs × 1000, rounded as viewers do). */
gint64 trace_check_ns (JsonObject *event, const char *member);

G_END_DECLS
