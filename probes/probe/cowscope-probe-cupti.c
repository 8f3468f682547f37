/* cowscope-probe-cupti.c — CUDA activity through CUPTI, loaded at run
 * time.
 *
 * When the recorder asks for CUDA (COWSCOPE_CUDA=1) the probe dlopens
 * libcupti.so.13, aligns CUPTI's clock with the engine's
 * (CLOCK_MONOTONIC) before enabling anything, and enables memcpy, memset,
 * memory (MEMORY2), concurrent-kernel, runtime-API and
 * external-correlation records.  CUPTI hands completed buffers to a
 * callback (on its worker thread, or on the thread that forces a flush);
 * each record is read through the leading fields that every version of
 * its struct shares (reference/cupti.md §1), normalized into a
 * CowscopeCudaRecord and written as a COWSCOPE_RING_BLOB_CUPTI blob into
 * the calling thread's ring.  Records CUPTI dropped, or that carry no
 * timestamps, are counted as dropped in that ring.
 *
 * Any failure (no libcupti, no driver, no device, another profiler
 * holding CUPTI, …) is sent as GPU_STATUS{available = 0, reason} and the
 * target runs on without GPU tracing; nothing here aborts.
 */
#include "cowscope-probe.h"
#include "cowscope-probe-private.h"

#ifndef COWSCOPE_HAVE_CUPTI

/* Built without the CUDA toolkit: say so once when asked for CUDA. */
void
cowscope_probe_cupti_start (void)
{
  cowscope_probe_connection_send_gpu_status (
    false, "this probe was built without the CUDA toolkit's CUPTI headers");
}

void
cowscope_probe_cupti_stop (void)
{
}

void
cowscope_probe_cupti_forget (void)
{
}

int
cowscope_probe_push_external_correlation (uint64_t op_id)
{
  (void) op_id;
  return 0;
}

uint64_t
cowscope_probe_pop_external_correlation (void)
{
  return 0;
}

#else /* COWSCOPE_HAVE_CUPTI */

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <cupti.h>

#define CUPTI_SONAME "libcupti.so.13"
#ifndef COWSCOPE_CUPTI_LIBDIR
#define COWSCOPE_CUPTI_LIBDIR "/usr/local/cuda/lib64"
#endif

/* The leading fields read below sit where every version of the record
 * puts them (reference/cupti.md §1); these fail the build if a toolkit
 * ever moves them. */
_Static_assert (offsetof (CUpti_ActivityMemcpy6, bytes) == 8, "memcpy bytes");
_Static_assert (offsetof (CUpti_ActivityMemcpy6, start) == 16, "memcpy start");
_Static_assert (offsetof (CUpti_ActivityMemcpy6, correlationId) == 44, "memcpy correlation");
_Static_assert (offsetof (CUpti_ActivityKernel10, start) == 16, "kernel start");
_Static_assert (offsetof (CUpti_ActivityKernel10, correlationId) == 92, "kernel correlation");
_Static_assert (offsetof (CUpti_ActivityKernel10, name) == 104, "kernel name");
_Static_assert (offsetof (CUpti_ActivityMemory4, address) == 16, "memory address");
_Static_assert (offsetof (CUpti_ActivityMemory4, timestamp) == 32, "memory timestamp");
_Static_assert (sizeof (CowscopeCudaRecord) == 64, "CUDA records are 64 bytes");

/* The CUPTI functions the probe calls, resolved with dlsym; their types
 * come from the toolkit's headers. */
static struct {
  void *library;
  __typeof__ (&cuptiGetVersion) get_version;
  __typeof__ (&cuptiGetResultString) get_result_string;
  __typeof__ (&cuptiActivityRegisterTimestampCallback) register_timestamp_callback;
  __typeof__ (&cuptiActivityRegisterCallbacks) register_callbacks;
  __typeof__ (&cuptiActivityEnable) enable;
  __typeof__ (&cuptiActivityDisable) disable;
  __typeof__ (&cuptiActivityGetNextRecord) get_next_record;
  __typeof__ (&cuptiActivityGetNumDroppedRecords) get_num_dropped_records;
  __typeof__ (&cuptiActivityFlushAll) flush_all;
  __typeof__ (&cuptiActivityPushExternalCorrelationId) push_external_correlation_id;
  __typeof__ (&cuptiActivityPopExternalCorrelationId) pop_external_correlation_id;
  __typeof__ (&cuptiSetThreadIdType) set_thread_id_type; /* optional */
} api;

/* The kinds enabled, in this order (MEMCPY first: with no driver it is
 * the first call that needs one, so the reason names it). */
static const struct {
  CUpti_ActivityKind kind;
  const char *name;
} kinds[] = {
  { CUPTI_ACTIVITY_KIND_MEMCPY, "CUPTI_ACTIVITY_KIND_MEMCPY" },
  { CUPTI_ACTIVITY_KIND_MEMSET, "CUPTI_ACTIVITY_KIND_MEMSET" },
  { CUPTI_ACTIVITY_KIND_MEMORY2, "CUPTI_ACTIVITY_KIND_MEMORY2" },
  { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL" },
  { CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION" },
  { CUPTI_ACTIVITY_KIND_RUNTIME, "CUPTI_ACTIVITY_KIND_RUNTIME" },
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])
static bool kind_enabled[N_KINDS];

/* Start once per process (exchange: acq_rel, only the winner sets up). */
static _Atomic int cupti_started;
/* True while activity tracing is on.  Release when set (after `api` and
 * the pool are ready), acquire by readers that then call through `api`. */
static _Atomic bool cupti_active;

/* Activity buffers: a small pool mapped once (pages are committed only
 * when CUPTI fills them), plus heap buffers if CUPTI ever wants more at
 * once.  Bit i of pool_free set: buffer i is free. */
#define POOL_BUFFERS 8
#define BUFFER_BYTES ((size_t) 4 << 20)
static uint8_t *pool;
static _Atomic uint32_t pool_free;

/* Kernel names are sent as STRING records with ids that have this bit set,
 * so they never collide with the engine's ids (a process-wide counter). */
#define PROBE_STRING_ID_BIT ((uint64_t) 1 << 63)
#define NAME_CACHE_SLOTS 256

/* CLOCK_MONOTONIC in ns: CUPTI's timestamps on the engine's clock. */
static uint64_t CUPTIAPI
monotonic_timestamp (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* Hands CUPTI an empty 8-byte aligned buffer: from the pool when one is
 * free, else from the heap; size 0 (CUPTI drops and counts) only when the
 * heap is exhausted too. */
static void CUPTIAPI
buffer_requested (uint8_t **buffer, size_t *size, size_t *max_records)
{
  *max_records = 0;
  uint32_t free_mask = atomic_load_explicit (&pool_free, memory_order_relaxed);
  while (free_mask != 0)
    {
      int i = __builtin_ctz (free_mask);
      /* Acquire on success: the last reader of this buffer (a completion
       * callback, which released it) is done before CUPTI refills it. */
      if (atomic_compare_exchange_weak_explicit (&pool_free, &free_mask,
                                                 free_mask & ~(1u << i),
                                                 memory_order_acquire,
                                                 memory_order_relaxed))
        {
          *buffer = pool + (size_t) i * BUFFER_BYTES;
          *size = BUFFER_BYTES;
          return;
        }
    }
  *buffer = aligned_alloc (8, BUFFER_BYTES);
  *size = *buffer != NULL ? BUFFER_BYTES : 0;
}

/* Gives a buffer back to the pool (or the heap). */
static void
buffer_release (uint8_t *buffer)
{
  if (buffer >= pool && buffer < pool + POOL_BUFFERS * BUFFER_BYTES)
    {
      uint32_t i = (uint32_t) ((size_t) (buffer - pool) / BUFFER_BYTES);
      /* Release: our reads of the buffer happen before its next use. */
      atomic_fetch_or_explicit (&pool_free, 1u << i, memory_order_release);
    }
  else
    free (buffer);
}

/* FNV-1a of @length bytes of @text. */
static uint64_t
hash_name (const char *text, size_t length)
{
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < length; i++)
    h = (h ^ (uint8_t) text[i]) * 0x100000001b3ull;
  return h;
}

/* The string id of kernel @name, announced on @t's ring first if this
 * ring has not announced it yet; 0 when it could not be announced. */
static uint64_t
announce_name (CowscopeProbeThread *t, const char *name)
{
  if (name == NULL)
    return 0;
  size_t length = strnlen (name, 4096);
  uint64_t id = hash_name (name, length) | PROBE_STRING_ID_BIT;
  if (t->announced_names == NULL)
    t->announced_names = calloc (NAME_CACHE_SLOTS, sizeof (uint64_t));
  uint64_t *slot = t->announced_names != NULL
                     ? &t->announced_names[id % NAME_CACHE_SLOTS]
                     : NULL;
  if (slot != NULL && *slot == id)
    return id;
  if (!cowscope_ring_write_string (t->ring, id, name, length))
    return 0;
  if (slot != NULL)
    *slot = id;
  return id;
}

/* A span is usable when CUPTI gave it both ends (§7: start = end = 0
 * means the device ran out of record buffers). */
static bool
span_ok (uint64_t start, uint64_t end)
{
  return start > 0 && end >= start;
}

/* Converts one CUPTI record into @out.  Returns 1 when @out is filled, 0
 * for kinds the probe does not record, -1 for a record without usable
 * timestamps (counted as dropped). */
static int
convert_record (CowscopeProbeThread *t, const CUpti_Activity *record,
                CowscopeCudaRecord *out)
{
  memset (out, 0, sizeof *out);
  switch (record->kind)
    {
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      {
        const CUpti_ActivityMemcpy6 *r = (const CUpti_ActivityMemcpy6 *) record;
        if (!span_ok (r->start, r->end))
          return -1;
        out->kind = COWSCOPE_CUDA_MEMCPY;
        out->subkind = r->copyKind;
        out->start_ns = (int64_t) r->start;
        out->end_ns = (int64_t) r->end;
        out->bytes = r->bytes;
        out->correlation_id = r->correlationId;
        out->device_id = r->deviceId;
        out->context_id = r->contextId;
        out->stream_id = r->streamId;
        return 1;
      }
    case CUPTI_ACTIVITY_KIND_MEMSET:
      {
        const CUpti_ActivityMemset4 *r = (const CUpti_ActivityMemset4 *) record;
        if (!span_ok (r->start, r->end))
          return -1;
        out->kind = COWSCOPE_CUDA_MEMSET;
        out->subkind = r->memoryKind;
        out->start_ns = (int64_t) r->start;
        out->end_ns = (int64_t) r->end;
        out->bytes = r->bytes;
        out->correlation_id = r->correlationId;
        out->device_id = r->deviceId;
        out->context_id = r->contextId;
        out->stream_id = r->streamId;
        return 1;
      }
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      {
        const CUpti_ActivityMemory4 *r = (const CUpti_ActivityMemory4 *) record;
        if (r->timestamp == 0)
          return -1;
        if (r->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
          out->kind = COWSCOPE_CUDA_MEMORY_ALLOC;
        else if (r->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
          out->kind = COWSCOPE_CUDA_MEMORY_FREE;
        else
          return 0;
        out->subkind = (uint32_t) r->memoryKind;
        out->start_ns = (int64_t) r->timestamp;
        out->end_ns = (int64_t) r->timestamp;
        out->bytes = r->bytes;
        out->correlation_id = r->correlationId;
        out->device_id = r->deviceId;
        out->context_id = r->contextId;
        out->stream_id = r->streamId;
        out->a = r->address;
        return 1;
      }
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    case CUPTI_ACTIVITY_KIND_KERNEL:
      {
        const CUpti_ActivityKernel10 *r = (const CUpti_ActivityKernel10 *) record;
        if (!span_ok (r->start, r->end))
          return -1;
        out->kind = COWSCOPE_CUDA_KERNEL;
        out->start_ns = (int64_t) r->start;
        out->end_ns = (int64_t) r->end;
        out->correlation_id = r->correlationId;
        out->device_id = r->deviceId;
        out->context_id = r->contextId;
        out->stream_id = r->streamId;
        out->name_string_id = announce_name (t, r->name);
        return 1;
      }
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
      {
        const CUpti_ActivityExternalCorrelation *r =
          (const CUpti_ActivityExternalCorrelation *) record;
        out->kind = COWSCOPE_CUDA_EXTERNAL_CORRELATION;
        out->subkind = (uint32_t) r->externalKind;
        out->correlation_id = r->correlationId;
        out->a = r->externalId;
        return 1;
      }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      {
        const CUpti_ActivityAPI *r = (const CUpti_ActivityAPI *) record;
        if (!span_ok (r->start, r->end))
          return -1;
        out->kind = COWSCOPE_CUDA_RUNTIME_API;
        out->subkind = (uint32_t) r->cbid;
        out->start_ns = (int64_t) r->start;
        out->end_ns = (int64_t) r->end;
        out->correlation_id = r->correlationId;
        out->a = r->threadId; /* the calling thread (system tid) */
        return 1;
      }
    default:
      return 0;
    }
}

/* One COWSCOPE_RING_BLOB_CUPTI record. */
typedef struct {
  CowscopeRingBlobHeader blob;
  CowscopeCudaRecord cuda;
} CudaBlob;

/* CUPTI's completed buffer: every record into the calling thread's ring,
 * CUPTI's dropped count and unusable records counted as drops, and the
 * buffer back to the pool. */
static void CUPTIAPI
buffer_completed (CUcontext context, uint32_t stream_id, uint8_t *buffer,
                  size_t size, size_t valid_size)
{
  (void) size;
  CowscopeProbeThread *t = cowscope_probe_enter (false, NULL);
  uint64_t unusable = 0;

  if (t != NULL && valid_size > 0)
    {
      CUpti_Activity *record = NULL;
      CudaBlob blob = { .blob = { .type = COWSCOPE_RING_BLOB_CUPTI, .flags = 0 } };
      /* CUPTI_ERROR_MAX_LIMIT_REACHED ends the buffer;
       * CUPTI_ERROR_INVALID_KIND marks an incomplete record: stop too. */
      while (api.get_next_record (buffer, valid_size, &record) == CUPTI_SUCCESS)
        {
          int converted = convert_record (t, record, &blob.cuda);
          if (converted > 0)
            cowscope_ring_write (t->ring, COWSCOPE_RING_KIND_BLOB, &blob, sizeof blob);
          else if (converted < 0)
            unusable++;
        }
    }

  size_t dropped = 0;
  if (api.get_num_dropped_records (context, stream_id, &dropped) != CUPTI_SUCCESS)
    dropped = 0;
  if (t != NULL)
    {
      cowscope_probe_thread_count_drops (t, unusable + dropped, 0);
      cowscope_probe_leave ();
    }
  buffer_release (buffer);
}

/* "WHAT failed: CUPTI_ERROR_NAME (CODE)". */
static void
failure (char *reason, size_t size, const char *what, CUptiResult result)
{
  const char *name = NULL;
  if (api.get_result_string == NULL
      || api.get_result_string (result, &name) != CUPTI_SUCCESS || name == NULL)
    name = "CUPTI error";
  snprintf (reason, size, "%s failed: %s (%d)", what,
            name, (int) result);
}

/* dlopens libcupti: by soname (the loader's path), then under $CUDA_PATH,
 * then in the toolkit the probe was built against. */
static bool
load_library (char *reason, size_t size)
{
  char path[4096];
  const char *cuda_path = getenv ("CUDA_PATH");
  char first_error[512] = "";

  api.library = dlopen (CUPTI_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (api.library == NULL)
    {
      const char *e = dlerror ();
      snprintf (first_error, sizeof first_error, "%s", e != NULL ? e : "not found");
    }
  if (api.library == NULL && cuda_path != NULL && *cuda_path != '\0')
    {
      snprintf (path, sizeof path, "%s/lib64/%s", cuda_path, CUPTI_SONAME);
      api.library = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    }
  if (api.library == NULL)
    {
      snprintf (path, sizeof path, "%s/%s", COWSCOPE_CUPTI_LIBDIR, CUPTI_SONAME);
      api.library = dlopen (path, RTLD_NOW | RTLD_LOCAL);
    }
  if (api.library == NULL)
    {
      snprintf (reason, size, "cannot load %s: %s",
                CUPTI_SONAME, first_error);
      return false;
    }
  return true;
}

/* Resolves @symbol in libcupti; on failure fills @reason. */
static void *
resolve (const char *symbol, bool required, char *reason, size_t size,
         bool *ok)
{
  void *p = dlsym (api.library, symbol);
  if (p == NULL && required && *ok)
    {
      snprintf (reason, size, "%s has no %s",
                CUPTI_SONAME, symbol);
      *ok = false;
    }
  return p;
}

/* Resolves every function the probe calls. */
static bool
resolve_api (char *reason, size_t size)
{
  bool ok = true;
#define RESOLVE(field, symbol, required) \
  api.field = (__typeof__ (api.field)) resolve (#symbol, required, reason, size, &ok)
  RESOLVE (get_result_string, cuptiGetResultString, false);
  RESOLVE (get_version, cuptiGetVersion, true);
  RESOLVE (register_timestamp_callback, cuptiActivityRegisterTimestampCallback, true);
  RESOLVE (register_callbacks, cuptiActivityRegisterCallbacks, true);
  RESOLVE (enable, cuptiActivityEnable, true);
  RESOLVE (disable, cuptiActivityDisable, true);
  RESOLVE (get_next_record, cuptiActivityGetNextRecord, true);
  RESOLVE (get_num_dropped_records, cuptiActivityGetNumDroppedRecords, true);
  RESOLVE (flush_all, cuptiActivityFlushAll, true);
  RESOLVE (push_external_correlation_id, cuptiActivityPushExternalCorrelationId, true);
  RESOLVE (pop_external_correlation_id, cuptiActivityPopExternalCorrelationId, true);
  RESOLVE (set_thread_id_type, cuptiSetThreadIdType, false);
#undef RESOLVE
  return ok;
}

/* Disables the kinds enabled so far. */
static void
disable_kinds (void)
{
  for (size_t i = 0; i < N_KINDS; i++)
    if (kind_enabled[i])
      {
        api.disable (kinds[i].kind);
        kind_enabled[i] = false;
      }
}

/* Everything from dlopen to the last enabled kind; on failure @reason
 * says what failed and with which CUPTI error, and nothing is enabled. */
/* Without the CUDA driver CUPTI only says CUPTI_ERROR_UNKNOWN; name the
 * real cause.  Only dlopen: cuInit here (a constructor, before main)
 * would make a forking target's children unable to use CUDA. */
static bool
driver_present (char *reason, size_t size)
{
  if (cowscope_probe_config.cuda_only)
    return true; /* the driver itself loaded this probe */
  void *driver = dlopen ("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == NULL)
    {
      const char *why = dlerror ();
      snprintf (reason, size, "no CUDA device: the CUDA driver is not installed (%s)",
                why != NULL ? why : "libcuda.so.1 not found");
      return false;
    }
  dlclose (driver);
  return true;
}

static bool
setup (char *reason, size_t size)
{
  CUptiResult r;
  char what[128];

  if (!driver_present (reason, size) || !load_library (reason, size)
      || !resolve_api (reason, size))
    return false;

  uint32_t version = 0;
  if ((r = api.get_version (&version)) != CUPTI_SUCCESS)
    {
      failure (reason, size, "cuptiGetVersion", r);
      return false;
    }
  if (version / 10000 != CUPTI_API_VERSION / 10000)
    {
      snprintf (reason, size,
                "%s has CUPTI API version %u; this probe reads records of major version %u",
                CUPTI_SONAME, version, (unsigned) (CUPTI_API_VERSION / 10000));
      return false;
    }

  /* Once, before any kind is enabled and before any context exists. */
  if ((r = api.register_timestamp_callback (monotonic_timestamp)) != CUPTI_SUCCESS)
    {
      failure (reason, size, "cuptiActivityRegisterTimestampCallback", r);
      return false;
    }

  if (pool == NULL)
    {
      void *map = mmap (NULL, POOL_BUFFERS * BUFFER_BYTES, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (map == MAP_FAILED)
        {
          snprintf (reason, size,
                    "cannot map activity buffers: %s",
                    strerror (errno));
          return false;
        }
      pool = map;
      /* Release: the pool pointer is published with the free mask. */
      atomic_store_explicit (&pool_free, (1u << POOL_BUFFERS) - 1, memory_order_release);
    }

  if ((r = api.register_callbacks (buffer_requested, buffer_completed)) != CUPTI_SUCCESS)
    {
      failure (reason, size, "cuptiActivityRegisterCallbacks", r);
      return false;
    }
  /* API records carry gettid() ids, like the engine's events. */
  if (api.set_thread_id_type != NULL)
    api.set_thread_id_type (CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);

  for (size_t i = 0; i < N_KINDS; i++)
    {
      if ((r = api.enable (kinds[i].kind)) != CUPTI_SUCCESS)
        {
          snprintf (what, sizeof what, "cuptiActivityEnable(%s)", kinds[i].name);
          failure (reason, size, what, r);
          disable_kinds ();
          return false;
        }
      kind_enabled[i] = true;
    }
  return true;
}

/* Starts CUPTI once and tells the recorder whether GPU tracing is on. */
void
cowscope_probe_cupti_start (void)
{
  char reason[512];

  if (atomic_exchange_explicit (&cupti_started, 1, memory_order_acq_rel) != 0)
    return;
  if (!setup (reason, sizeof reason))
    {
      cowscope_probe_connection_send_gpu_status (false, reason);
      return;
    }
  atomic_store_explicit (&cupti_active, true, memory_order_release);
  cowscope_probe_connection_send_gpu_status (true, "");
}

/* At exit: forces out every buffer (complete or not) into the rings, then
 * disables the kinds.  Does not synchronize the device. */
void
cowscope_probe_cupti_stop (void)
{
  if (!atomic_load_explicit (&cupti_active, memory_order_acquire))
    return;
  api.flush_all (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  /* Release: pairs with the acquire in the push/pop entry points. */
  atomic_store_explicit (&cupti_active, false, memory_order_release);
  disable_kinds ();
}

/* Fork child: CUPTI's state belongs to the parent's CUDA contexts. */
void
cowscope_probe_cupti_forget (void)
{
  /* Relaxed: the child has one thread at this point. */
  atomic_store_explicit (&cupti_active, false, memory_order_relaxed);
}

int
cowscope_probe_push_external_correlation (uint64_t op_id)
{
  /* Acquire: pairs with the release in start, so `api` is filled in. */
  if (!atomic_load_explicit (&cupti_active, memory_order_acquire))
    return 0;
  return api.push_external_correlation_id (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                           op_id) == CUPTI_SUCCESS;
}

uint64_t
cowscope_probe_pop_external_correlation (void)
{
  uint64_t last = 0;
  /* Acquire: as in push. */
  if (!atomic_load_explicit (&cupti_active, memory_order_acquire))
    return 0;
  if (api.pop_external_correlation_id (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                                       &last) != CUPTI_SUCCESS)
    return 0;
  return last;
}

#endif /* COWSCOPE_HAVE_CUPTI */
