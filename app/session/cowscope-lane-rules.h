/* cowscope-lane-rules.h — how events become timeline items and counter
 * values: the one definition that the loader (cowscope-session-document.c)
 * and the live view (cowscope-live-session.c) both apply, so that a
 * session looks the same while it records and once it is finalized.
 *
 * The recorder's finalizer writes the counter tracks of a schema-2
 * session with the same rules (probes/recorder/cowscope-session-index.c,
 * which may not use the application's code); README.md, "Session
 * database", documents them. */
#pragma once

#include <glib.h>

#include "cowscope-session-types.h"

G_BEGIN_DECLS

/* The CowscopeItemKind of an event of @type (events.type); @aux is the
 * event's aux (for materialize_end, its low byte says copy or steal). */
guint8 cowscope_lane_rules_event_kind (gint64 type, gint64 aux);

/* The byte count an event carries (0 when none); @v holds at least the
 * payload's v0..v3. */
guint64 cowscope_lane_rules_event_bytes (gint64 type, const gint64 *v);

/* The CowscopeItemKind of a CUDA record from its cuda_kinds name (NULL:
 * unknown). */
guint8 cowscope_lane_rules_cuda_kind (const char *name);

/* The three counter tracks (bytes allocated, bytes shared lazily, live
 * storages) as events change them, in time order. */
typedef struct {
  double value[COWSCOPE_N_COUNTERS]; /* the counters after the last event */
  GHashTable *contexts;              /* (pid, context id) -> bytes one sharer shares */
} CowscopeCounterRules;

void cowscope_counter_rules_init (CowscopeCounterRules *rules);
void cowscope_counter_rules_clear (CowscopeCounterRules *rules);

/* Applies one event of process @pid (@v: at least v0..v3); returns the
 * set of counters it changed (bit k: counter k, now rules->value[k]). */
guint cowscope_counter_rules_apply (CowscopeCounterRules *rules, guint32 pid, gint64 type,
                                    const gint64 *v);

G_END_DECLS
