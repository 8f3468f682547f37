/* cowscope-protocol.h — how a probed target and the recorder talk.
 *
 * The recorder spawns the target with the environment below.  The probe
 * library (libcowscope-probe.so, preloaded) sees COWSCOPE_SOCKET, connects
 * a SOCK_SEQPACKET Unix socket to it (one connection per process; a
 * forked child opens its own), says HELLO, sends its memory map, and then
 * one RING message (with the ring's memfd as SCM_RIGHTS ancillary data)
 * for every thread, when the thread starts (or, for a thread the probe
 * did not see start, before its first record), preceded by a fresh copy
 * of the map when libraries were loaded or unloaded since the last one.
 * Events themselves never cross the socket: they go through the rings,
 * which the recorder keeps mapped, so whatever a target wrote before it
 * crashed is kept.
 *
 * The recorder trusts none of it: who a process is comes from the kernel
 * (SO_PEERCRED, /proc/PID), and what HELLO says is kept as a claim.  The
 * socket's hang-up is how the probe learns the recorder is gone.
 *
 * Every message is one datagram: a CowscopeMessageHeader then its
 * payload.  All integers are native-endian (both ends run on one machine).
 * In-target side: libc only (HACKING.md, "Layering").
 */
#pragma once

#include <stdint.h>

#include "cowscope-ring.h"

/* Environment the recorder sets for the target. */
#define COWSCOPE_ENV_SOCKET "COWSCOPE_SOCKET"               /* socket path */
#define COWSCOPE_ENV_STACKS "COWSCOPE_STACKS"               /* "1" or "0" */
#define COWSCOPE_ENV_RING_POLICY "COWSCOPE_RING_POLICY"     /* "drop" | "block" */
#define COWSCOPE_ENV_RING_CAPACITY "COWSCOPE_RING_CAPACITY" /* bytes, power of 2 */
#define COWSCOPE_ENV_CUDA "COWSCOPE_CUDA"                   /* "1" or "0" */
/* Set by the recorder for --cuda-only: the probe is loaded by the CUDA
 * driver through CUDA_INJECTION64_PATH rather than LD_PRELOAD. */
#define COWSCOPE_ENV_CUDA_ONLY "COWSCOPE_CUDA_ONLY"

#define COWSCOPE_PROTOCOL_VERSION 1u

/* Call stacks: at most this many frames are captured per stack. */
#define COWSCOPE_MAX_STACK_DEPTH 32

typedef enum {
  COWSCOPE_MESSAGE_HELLO = 1,      /* CowscopeHello, then exe and cmdline */
  COWSCOPE_MESSAGE_MAPS = 2,       /* CowscopeMapsChunk, then /proc/self/maps text */
  COWSCOPE_MESSAGE_RING = 3,       /* CowscopeRingMessage + the memfd (SCM_RIGHTS) */
  COWSCOPE_MESSAGE_GPU_STATUS = 4, /* CowscopeGpuStatus, then the reason text */
  COWSCOPE_MESSAGE_BYE = 5,        /* CowscopeBye: the process is exiting normally */
} CowscopeMessageType;

typedef struct {
  uint32_t type; /* CowscopeMessageType */
  uint32_t size; /* payload bytes after this header */
} CowscopeMessageHeader;

/* HELLO: followed by exe_length bytes of the executable's path and
 * cmdline_length bytes of its command line (arguments separated by NUL,
 * no final NUL). */
typedef struct {
  uint32_t protocol_version; /* COWSCOPE_PROTOCOL_VERSION */
  uint32_t pid;
  uint32_t ppid;
  uint32_t trace_abi_version; /* COW_TRACE_ABI_VERSION of the engine */
  int64_t monotonic_ns;       /* CLOCK_MONOTONIC when the probe started */
  int64_t realtime_ns;        /* CLOCK_REALTIME at the same moment */
  uint32_t exe_length;
  uint32_t cmdline_length;
} CowscopeHello;

/* MAPS: /proc/self/maps in chunks that fit a datagram; `offset` is the
 * chunk's position in the text, `final` is 1 on the last chunk.  A
 * process sends its maps after HELLO and again with each new thread (so
 * libraries loaded later are covered); the newest complete copy wins. */
typedef struct {
  uint32_t generation; /* increases with every new copy of the maps */
  uint32_t final;
  uint64_t offset;
} CowscopeMapsChunk;

#define COWSCOPE_MAPS_CHUNK_BYTES 32768

/* RING: a thread's ring.  The memfd travels as SCM_RIGHTS; both ends
 * close it once the ring is mapped. */
typedef struct {
  uint32_t tid;
  uint32_t reserved;
  char thread_name[16]; /* NUL-padded, as prctl(PR_GET_NAME) gives it when
                         * the ring is made (the ring's header carries the
                         * thread's final name) */
} CowscopeRingMessage;

/* GPU_STATUS: followed by reason_length bytes ("no CUDA driver: …").
 * Sent only when CUDA tracing was asked for (COWSCOPE_CUDA=1). */
typedef struct {
  uint32_t available; /* 1: CUPTI activity tracing is on */
  uint32_t reason_length;
} CowscopeGpuStatus;

/* BYE: sent from an atexit handler; a process that sends none crashed,
 * was killed or called _exit. */
typedef struct {
  uint32_t pid;
  uint32_t reserved;
} CowscopeBye;

/* ---- Blob records in the rings ------------------------------------- */

/* COWSCOPE_RING_BLOB_STACK: the user call stack of the event record that
 * immediately precedes it in the same ring (the recorder checks
 * event_time_ns and event_type before attaching it). */
typedef struct {
  int64_t event_time_ns;
  uint32_t event_type; /* CowEventType */
  uint32_t n_frames;   /* ≤ COWSCOPE_MAX_STACK_DEPTH */
  /* followed by n_frames uint64_t return addresses, innermost first */
} CowscopeStackBlob;

/* COWSCOPE_RING_BLOB_CUPTI: one CUDA activity, normalized by the probe
 * from CUPTI's record (only the leading fields every version shares). */
typedef enum {
  COWSCOPE_CUDA_MEMCPY = 1,
  COWSCOPE_CUDA_MEMSET = 2,
  COWSCOPE_CUDA_KERNEL = 3,
  COWSCOPE_CUDA_MEMORY_ALLOC = 4,
  COWSCOPE_CUDA_MEMORY_FREE = 5,
  COWSCOPE_CUDA_EXTERNAL_CORRELATION = 6, /* a = external id (engine op id) */
  COWSCOPE_CUDA_RUNTIME_API = 7,          /* a CPU-side API call span */
} CowscopeCudaKind;

/* Per kind: subkind is the memcpy kind (CUpti_ActivityMemcpyKind) for
 * MEMCPY, the memory kind for MEMSET and MEMORY_*, the external kind for
 * EXTERNAL_CORRELATION and the callback id for RUNTIME_API; `a` is the
 * address for MEMORY_*, the external id for EXTERNAL_CORRELATION and the
 * system tid for RUNTIME_API.  Kernel names are interned by the probe
 * itself: name_string_id has bit 63 set (so it never meets an engine
 * id) and a STRING record announces it earlier on the same ring.  One
 * blob holds one record. */
typedef struct {
  uint32_t kind;           /* CowscopeCudaKind */
  uint32_t subkind;        /* see above */
  int64_t start_ns;        /* on CLOCK_MONOTONIC (CUPTI's clock is aligned) */
  int64_t end_ns;          /* = start_ns for instants (alloc/free) */
  uint64_t bytes;
  uint32_t correlation_id; /* CUPTI's */
  uint32_t device_id;
  uint32_t context_id;
  uint32_t stream_id;
  uint64_t a;              /* per kind: address (memory), external id */
  uint64_t name_string_id; /* kernels: an interned string, 0 otherwise */
} CowscopeCudaRecord;
