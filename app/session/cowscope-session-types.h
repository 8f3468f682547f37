/* cowscope-session-types.h — small enums shared by the session model's
 * classes (the timeline's item kinds, lane kinds, counter kinds). */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* What a timeline item is; a bucket's kind is its most frequent one.
 * Values are stable (the UI maps them to colours). */
typedef enum {
  COWSCOPE_ITEM_OTHER = 0,
  COWSCOPE_ITEM_ALLOCATION,        /* allocation new */
  COWSCOPE_ITEM_FREE,              /* allocation, storage or tensor free */
  COWSCOPE_ITEM_STORAGE,           /* storage new */
  COWSCOPE_ITEM_TENSOR,            /* tensor new or named */
  COWSCOPE_ITEM_CONTEXT,           /* context new/ref/unref/free */
  COWSCOPE_ITEM_LAZY_CLONE,
  COWSCOPE_ITEM_EAGER_COPY,        /* a lazy clone that copied eagerly */
  COWSCOPE_ITEM_MATERIALIZE_BEGIN,
  COWSCOPE_ITEM_COPY,              /* materialization that copied */
  COWSCOPE_ITEM_STEAL,             /* materialization that stole */
  COWSCOPE_ITEM_MATERIALIZE_FAILED,
  COWSCOPE_ITEM_VIOLATION,         /* simulate-mode warning */
  COWSCOPE_ITEM_RANGE,             /* user range begin/end, or a range span */
  COWSCOPE_ITEM_MARK,
  COWSCOPE_ITEM_IPC,
  COWSCOPE_ITEM_CUDA_MEMCPY,
  COWSCOPE_ITEM_CUDA_MEMSET,
  COWSCOPE_ITEM_CUDA_KERNEL,
  COWSCOPE_ITEM_CUDA_OTHER,
  COWSCOPE_ITEM_IPC_LIMBO,         /* span: a sent block in its producer's limbo */
  COWSCOPE_ITEM_IPC_HELD,          /* span: a consumer holds a received block */
  COWSCOPE_N_ITEM_KINDS
} CowscopeItemKind;

typedef enum {
  COWSCOPE_LANE_THREAD,       /* one per (pid, tid) */
  COWSCOPE_LANE_CUDA_STREAM,  /* one per (pid, device, stream) */
  COWSCOPE_LANE_COUNTER,      /* bytes allocated, bytes shared, live storages */
  COWSCOPE_LANE_PROCESS,      /* one per process in multi-process sessions: its
                               * IPC events, limbo and held-block spans */
} CowscopeLaneKind;

typedef enum {
  COWSCOPE_COUNTER_NONE = -1,
  COWSCOPE_COUNTER_BYTES_ALLOCATED = 0,
  COWSCOPE_COUNTER_BYTES_SHARED,     /* bytes lazy copies share: what CoW saved */
  COWSCOPE_COUNTER_LIVE_STORAGES,
  COWSCOPE_N_COUNTERS
} CowscopeCounterKind;

/* The engine's event types (engine/cow-trace.h), as stored in events.type.
 * Repeated here because the session model must not include the engine. */
enum {
  COWSCOPE_EV_ALLOCATION_NEW = 1,
  COWSCOPE_EV_ALLOCATION_FREE = 2,
  COWSCOPE_EV_STORAGE_NEW = 3,
  COWSCOPE_EV_STORAGE_FREE = 4,
  COWSCOPE_EV_TENSOR_NEW = 5,
  COWSCOPE_EV_TENSOR_FREE = 6,
  COWSCOPE_EV_TENSOR_NAME = 7,
  COWSCOPE_EV_CONTEXT_NEW = 8,
  COWSCOPE_EV_CONTEXT_REF = 9,
  COWSCOPE_EV_CONTEXT_UNREF = 10,
  COWSCOPE_EV_CONTEXT_FREE = 11,
  COWSCOPE_EV_LAZY_CLONE = 12,
  COWSCOPE_EV_LAZY_CLONE_EAGER = 13,
  COWSCOPE_EV_MATERIALIZE_BEGIN = 14,
  COWSCOPE_EV_MATERIALIZE_END = 15,
  COWSCOPE_EV_SIMULATE_VIOLATION = 16,
  COWSCOPE_EV_RANGE_BEGIN = 17,
  COWSCOPE_EV_RANGE_END = 18,
  COWSCOPE_EV_MARK = 19,
  COWSCOPE_EV_IPC_SEND = 20,
  COWSCOPE_EV_IPC_RECEIVE = 21,
  COWSCOPE_EV_IPC_RELEASE = 22,
  COWSCOPE_EV_IPC_LIMBO_ENTER = 23,
  COWSCOPE_EV_IPC_LIMBO_FREE = 24,
  COWSCOPE_EV_IPC_COLLECT = 25,
};

/* materialize_kinds / MATERIALIZE_END.aux (low byte) */
enum {
  COWSCOPE_MATERIALIZE_COPY = 1,
  COWSCOPE_MATERIALIZE_STEAL = 2,
  COWSCOPE_MATERIALIZE_FAILED = 3,
  COWSCOPE_MATERIALIZE_FLAG_COPY_DISCARDED = 0x100,
};

G_END_DECLS
