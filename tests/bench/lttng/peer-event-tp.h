/* peer-event-tp.h — the LTTng-UST tracepoint provider that Cowscope's
 * benchmarks compare against: one event, cowscope_peer:event, whose
 * payload is a Cowscope trace event's (CowTraceEvent in cow-trace.h).
 *
 * The fields are CowTraceEvent's type, op, aux, pid, tid and v[0..4]:
 * 56 bytes of integers.  Its time_ns has no field of its own because
 * LTTng stamps every event record with its clock in the record header,
 * as the Cowscope engine stamps time_ns: each tool reads the clock once.
 *
 * Read several times by <lttng/tracepoint-event.h>, hence the
 * multi-read guard in place of #pragma once.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER cowscope_peer

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./peer-event-tp.h"

#if !defined(PEER_EVENT_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define PEER_EVENT_TP_H

#include <lttng/tracepoint.h>

#include "cow-trace.h"

/* One field a line reads better than clang-format's macro nesting. */
/* clang-format off */
LTTNG_UST_TRACEPOINT_EVENT (cowscope_peer, event,
  LTTNG_UST_TP_ARGS (const CowTraceEvent *, e),
  LTTNG_UST_TP_FIELDS (
    lttng_ust_field_integer (uint16_t, type, e->type)
    lttng_ust_field_integer (uint16_t, op, e->op)
    lttng_ust_field_integer (uint32_t, aux, e->aux)
    lttng_ust_field_integer (uint32_t, pid, e->pid)
    lttng_ust_field_integer (uint32_t, tid, e->tid)
    lttng_ust_field_integer (uint64_t, v0, e->v[0])
    lttng_ust_field_integer (uint64_t, v1, e->v[1])
    lttng_ust_field_integer (uint64_t, v2, e->v[2])
    lttng_ust_field_integer (uint64_t, v3, e->v[3])
    lttng_ust_field_integer (uint64_t, v4, e->v[4])
  )
)
/* clang-format on */

#endif /* PEER_EVENT_TP_H */

#include <lttng/tracepoint-event.h>
