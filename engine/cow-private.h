/* cow-private.h — helpers shared by the engine's sources.  Not installed. */
#pragma once

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cow-error.h"
#include "cow-trace.h"

#define COW_LIKELY(x) __builtin_expect (!!(x), 1)
#define COW_UNLIKELY(x) __builtin_expect (!!(x), 0)
#define COW_INTERNAL __attribute__ ((visibility ("hidden")))
#define COW_COLD __attribute__ ((cold, noinline))
#define COW_PRINTF(f, a) __attribute__ ((format (printf, f, a)))

/* Fills @error (if not NULL) and returns @code, so a failing path can say
 * `return cow_set_error (error, COW_ERROR_SHAPE, "…", …);`. */
COW_INTERNAL CowStatus cow_set_error (CowError *error, CowStatus code,
                                      const char *format, ...) COW_PRINTF (3, 4);

/* In entry points whose failures arrive through a CowError (a NULL
 * return), point @error at a local one so the status is never lost when
 * the caller passed NULL. */
#define COW_ENSURE_ERROR(error)                                               \
  CowError cow_local_error_;                                                   \
  if ((error) == NULL)                                                         \
    (error) = &cow_local_error_

/* Thread-locals in the hot path use the initial-exec model: a plain
 * %fs-relative load instead of a __tls_get_addr call.  A library loaded
 * with dlopen() gets such storage from glibc's small reserve (512 bytes
 * by default, shared with other libraries), so only small hot variables
 * use it: about 250 bytes in all. */
#define COW_TLS _Thread_local __attribute__ ((tls_model ("initial-exec")))

/* Ids are handed out to each thread in blocks (cow-id.c): the next one
 * and the end of the thread's block. */
COW_INTERNAL extern COW_TLS uint64_t cow_thread_next_id;
COW_INTERNAL extern COW_TLS uint64_t cow_thread_id_limit;
/* Takes a new block for the calling thread and returns its first id. */
COW_INTERNAL uint64_t cow_next_id_block (void) COW_COLD;

/* A fresh object id: unique within the process, never 0. */
static inline uint64_t
cow_next_id (void)
{
  if (COW_UNLIKELY (cow_thread_next_id == cow_thread_id_limit))
    return cow_next_id_block ();
  return cow_thread_next_id++;
}

/* Cached kernel ids of the calling thread and the process (reset in a
 * forked child; 0 until first asked for).  Inline, since every event
 * carries both. */
COW_INTERNAL extern COW_TLS uint32_t cow_cached_tid;
COW_INTERNAL extern _Atomic uint32_t cow_cached_pid;
COW_INTERNAL uint32_t cow_current_tid_slow (void) COW_COLD;
COW_INTERNAL uint32_t cow_current_pid_slow (void) COW_COLD;

static inline uint32_t
cow_current_tid (void)
{
  uint32_t tid = cow_cached_tid;
  return COW_LIKELY (tid != 0) ? tid : cow_current_tid_slow ();
}

static inline uint32_t
cow_current_pid (void)
{
  /* Relaxed: every thread computes the same value. */
  uint32_t pid = atomic_load_explicit (&cow_cached_pid, memory_order_relaxed);
  return COW_LIKELY (pid != 0) ? pid : cow_current_pid_slow ();
}

/* The installed sink.  Acquire pairs with the release in
 * cow_trace_set_sink(), so the sink's fields are visible; on x86-64 and
 * arm64 it is a plain load. */
COW_INTERNAL extern _Atomic (const CowTraceSink *) cow_trace_sink_installed;
COW_INTERNAL extern _Atomic uint64_t cow_trace_sink_epoch;

static inline const CowTraceSink *
cow_trace_sink (void)
{
  return atomic_load_explicit (&cow_trace_sink_installed, memory_order_acquire);
}

/* Fills an event's header and hands it to @sink.  Cold: only called once
 * a trace point has seen a sink. */
COW_INTERNAL void cow_trace_emit (const CowTraceSink *sink, CowEventType type,
                                  CowOp op, uint32_t aux, uint64_t v0,
                                  uint64_t v1, uint64_t v2, uint64_t v3,
                                  uint64_t v4) COW_COLD;

/* The trace point: one branch when no sink is installed; the arguments
 * are evaluated only when one is. */
#define COW_TRACE(type, op, aux, v0, v1, v2, v3, v4)                          \
  COW_TRACE_TO (cow_trace_sink (), type, op, aux, v0, v1, v2, v3, v4)

/* The same to a sink the caller loaded once (cow_trace_sink()) for all
 * the trace points of one operation. */
#define COW_TRACE_TO(sink, type, op, aux, v0, v1, v2, v3, v4)                 \
  do {                                                                         \
    const CowTraceSink *cow_sink_ = (sink);                                    \
    if (COW_UNLIKELY (cow_sink_ != NULL))                                      \
      cow_trace_emit (cow_sink_, (type), (op), (aux), (v0), (v1), (v2), (v3),  \
                      (v4));                                                   \
  } while (0)

/* Drops one reference from @refcount; true when it was the last, with
 * every other holder's use of the object visible to the caller.  A count
 * of 1 seen by a holder cannot grow (only holders add references), so
 * the atomic RMW is skipped then, as libstdc++'s shared_ptr does. */
static inline bool
cow_release_ref (_Atomic int64_t *refcount)
{
  if (atomic_load_explicit (refcount, memory_order_acquire) == 1)
    return true;
  /* acq_rel rather than release + fence: the same instruction on x86-64,
   * and ThreadSanitizer models it (it does not model fences). */
  return atomic_fetch_sub_explicit (refcount, 1, memory_order_acq_rel) == 1;
}

/* Interns @text (immortal copy) and returns its id (0 for NULL or when
 * memory runs out).  If a sink is installed and has not seen the string,
 * it is announced first.  *@stable receives the interned copy. */
COW_INTERNAL uint64_t cow_intern_string (const char *text, const char **stable);

/* Overflow-checked arithmetic for sizes. */
static inline int
cow_mul_overflows (int64_t a, int64_t b, int64_t *out)
{
  return __builtin_mul_overflow (a, b, out);
}
