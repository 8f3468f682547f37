/* cow-trace.h — the engine's trace points.
 *
 * Every engine operation reports what it did as fixed-size binary events
 * to at most one sink.  With no sink installed a trace point costs one
 * predictable branch on a relaxed load; event records are filled only
 * when a sink is present.  The probes (probes/) install a sink that
 * copies events into a shared-memory ring; tests install one that keeps
 * them in memory.
 *
 * Every object gets a 64-bit id from one process-wide counter (ids are
 * never reused within a process; pointers are).  Strings (tensor names,
 * user ranges and marks) are interned: the sink's string callback sees
 * each string once, with its id, before the first event that names it.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a record's layout or meaning changes.  2: aux carries
 * the device (COW_TRACE_AUX_DEVICE). */
#define COW_TRACE_ABI_VERSION 2

typedef enum {
  COW_EVENT_NONE = 0,
  COW_EVENT_ALLOCATION_NEW = 1,
  COW_EVENT_ALLOCATION_FREE = 2,
  COW_EVENT_STORAGE_NEW = 3,
  COW_EVENT_STORAGE_FREE = 4,
  COW_EVENT_TENSOR_NEW = 5,
  COW_EVENT_TENSOR_FREE = 6,
  COW_EVENT_TENSOR_NAME = 7,
  COW_EVENT_CONTEXT_NEW = 8,
  COW_EVENT_CONTEXT_REF = 9,
  COW_EVENT_CONTEXT_UNREF = 10,
  COW_EVENT_CONTEXT_FREE = 11,
  COW_EVENT_LAZY_CLONE = 12,
  COW_EVENT_LAZY_CLONE_EAGER = 13,
  COW_EVENT_MATERIALIZE_BEGIN = 14,
  COW_EVENT_MATERIALIZE_END = 15,
  COW_EVENT_SIMULATE_VIOLATION = 16,
  COW_EVENT_RANGE_BEGIN = 17,
  COW_EVENT_RANGE_END = 18,
  COW_EVENT_MARK = 19,
  /* Cross-process (CUDA IPC) reference counting; emitted by the IPC layer. */
  COW_EVENT_IPC_SEND = 20,
  COW_EVENT_IPC_RECEIVE = 21,
  COW_EVENT_IPC_RELEASE = 22,
  COW_EVENT_IPC_LIMBO_ENTER = 23,
  COW_EVENT_IPC_LIMBO_FREE = 24,
  COW_EVENT_IPC_COLLECT = 25,
  COW_N_EVENT_TYPES
} CowEventType;

/* The operation on whose behalf an event happened. */
typedef enum {
  COW_OP_NONE = 0,
  COW_OP_EMPTY,
  COW_OP_FROM_DATA,
  COW_OP_FROM_FOREIGN,
  COW_OP_VIEW,
  COW_OP_RESHAPE,
  COW_OP_SLICE,
  COW_OP_SELECT,
  COW_OP_NARROW,
  COW_OP_TRANSPOSE,
  COW_OP_PERMUTE,
  COW_OP_EXPAND,
  COW_OP_AS_STRIDED,
  COW_OP_CONTIGUOUS,
  COW_OP_CLONE,
  COW_OP_LAZY_CLONE,
  COW_OP_MUTABLE_DATA,
  COW_OP_FILL_,
  COW_OP_ADD,
  COW_OP_ADD_,
  COW_OP_MUL,
  COW_OP_MUL_,
  COW_OP_MATMUL,
  COW_OP_SUM,
  COW_OP_COPY_,
  COW_OP_TO_DEVICE,
  COW_OP_IPC,
  COW_OP_SCALE_,
  COW_N_OPS
} CowOp;

/* Bits 16–23 of aux in STORAGE_NEW, TENSOR_NEW, LAZY_CLONE,
 * MATERIALIZE_BEGIN and MATERIALIZE_END: the device of the bytes, 0 for
 * the CPU and 1 + N for cuda:N (ALLOCATION_NEW/FREE give the device in
 * their payload).  Readers of the other aux fields mask them (& 0xff). */
#define COW_TRACE_AUX_DEVICE_SHIFT 16
#define COW_TRACE_AUX_DEVICE(aux) (((aux) >> COW_TRACE_AUX_DEVICE_SHIFT) & 0xffu)

/* COW_EVENT_MATERIALIZE_END.aux: how the storage got its own bytes. */
typedef enum {
  COW_MATERIALIZE_COPY = 1,   /* other storages still shared: bytes copied */
  COW_MATERIALIZE_STEAL = 2,  /* last reference: original bytes taken over */
  COW_MATERIALIZE_FAILED = 3, /* copy failed (no memory); still a lazy copy */
} CowMaterializeKind;
/* Or-ed into a STEAL: every other sharer left while this one copied, so
 * its copy was thrown away (correct, but the copy was wasted work). */
#define COW_MATERIALIZE_FLAG_COPY_DISCARDED 0x100u
#define COW_MATERIALIZE_KIND_MASK 0xffu

/* COW_EVENT_LAZY_CLONE_EAGER.aux: why a lazy clone copied eagerly. */
typedef enum {
  COW_EAGER_FOREIGN_DATA_PTR = 1, /* data pointer has a foreign owner context */
  COW_EAGER_NOT_SIMPLE = 2,       /* the allocator calls it not simple */
} CowEagerReason;

/* COW_EVENT_SIMULATE_VIOLATION.aux: the access that revealed it. */
typedef enum {
  COW_ACCESS_READ = 1,
  COW_ACCESS_WRITE = 2,
} CowAccessKind;

/* COW_EVENT_ALLOCATION_NEW.aux: who provided the bytes. */
typedef enum {
  COW_ALLOCATION_CPU = 0,
  COW_ALLOCATION_CUDA = 1,
  COW_ALLOCATION_FOREIGN = 2,
} CowAllocationKind;

/* One event: 64 bytes, naturally aligned, no pointers that the reader
 * needs to follow.  The payload's meaning depends on @type; read it
 * through the member named after the event. */
typedef struct {
  uint16_t type;   /* CowEventType */
  uint16_t op;     /* CowOp */
  uint32_t aux;    /* per type: a kind, reason or dtype/ndim (see below) */
  uint32_t pid;
  uint32_t tid;    /* kernel thread id */
  int64_t time_ns; /* CLOCK_MONOTONIC */
  union {
    uint64_t v[5];
    /* ALLOCATION_NEW (aux = CowAllocationKind), ALLOCATION_FREE */
    struct { uint64_t allocation_id, nbytes, address, device_index; } allocation;
    /* STORAGE_NEW, STORAGE_FREE; source_storage_id: lazy-clone source or 0 */
    struct { uint64_t storage_id, allocation_id, nbytes, context_id, source_storage_id; } storage;
    /* TENSOR_NEW (aux = dtype | ndim << 8), TENSOR_FREE; base: the tensor
     * this one was made from (view source, lazy-clone source) or 0 */
    struct { uint64_t tensor_id, storage_id, base_tensor_id, numel, storage_offset; } tensor;
    /* TENSOR_NAME */
    struct { uint64_t tensor_id, string_id; } name;
    /* CONTEXT_NEW, _REF, _UNREF, _FREE; refcount after the change */
    struct { uint64_t context_id, storage_id, refcount, allocation_id; } context;
    /* LAZY_CLONE (context_id set), LAZY_CLONE_EAGER (aux = CowEagerReason,
     * nbytes copied) */
    struct { uint64_t source_tensor_id, result_tensor_id, source_storage_id, result_storage_id, context_id_or_nbytes; } lazy_clone;
    /* MATERIALIZE_BEGIN: op = trigger; tensor_id: the tensor written through */
    struct { uint64_t storage_id, context_id, tensor_id, nbytes; } materialize_begin;
    /* MATERIALIZE_END (aux = CowMaterializeKind): allocation now owned by
     * the storage (new for a copy, the original for a steal) and the time
     * spent waiting for the context's lock */
    struct { uint64_t storage_id, context_id, allocation_id, nbytes, lock_wait_ns; } materialize_end;
    /* SIMULATE_VIOLATION (aux = CowAccessKind): a write through one shadow
     * set followed by an access through another on one physical storage */
    struct { uint64_t storage_id, writer_tensor_id, accessor_tensor_id, writer_generation, accessor_generation; } violation;
    /* RANGE_BEGIN, RANGE_END (string_id 0), MARK (range_id 0); parent:
     * the thread's enclosing open range (for RANGE_END, the one that is
     * innermost once this one closes), or 0 */
    struct { uint64_t range_id, string_id, parent_range_id; } range;
    /* IPC_*: block = sent allocation; counter = slot; count after change */
    struct { uint64_t allocation_id, counter_file_id, counter_offset, count, peer_pid; } ipc;
  };
} CowTraceEvent;

_Static_assert (sizeof (CowTraceEvent) == 64, "trace events are 64 bytes");

typedef struct {
  /* Called for every event, on the thread that caused it.  Must be
   * thread-safe and must not call back into the engine. */
  void (*event) (const CowTraceEvent *event, void *user_data);
  /* Called once per interned string before any event names it. */
  void (*string) (uint64_t string_id, const char *text, size_t length,
                  void *user_data);
  void *user_data;
} CowTraceSink;

/* Installs @sink (NULL removes the current one).  The sink must stay valid
 * until it is replaced and every thread has left the engine.  Strings
 * interned before are announced again to a new sink on their next use. */
void cow_trace_set_sink (const CowTraceSink *sink);

/* The installed sink, or NULL. */
const CowTraceSink *cow_trace_get_sink (void);

/* "lazy_clone", "materialize_end", … ; "unknown" for other values. */
const char *cow_event_type_name (CowEventType type);
const char *cow_op_name (CowOp op);

/* CLOCK_MONOTONIC in ns: the clock of every event's time_ns.  Read
 * through the TSC where it is invariant and the kernel keeps time with it
 * (calibrated against clock_gettime(), slewed to stay within a few
 * microseconds of it, never going back); clock_gettime() elsewhere, or
 * with COW_TRACE_CLOCK=monotonic in the environment. */
int64_t cow_trace_now_ns (void);

/* Which source cow_trace_now_ns() reads: "tsc" or "clock_gettime". */
const char *cow_trace_clock_name (void);

#ifdef __cplusplus
}
#endif
