/* test-trace.c — the events each engine operation reports to the trace
 * sink, checked with the recording sink from test-support. */
#include "test-support.h"

#include <stddef.h>
#include <stdalign.h>
#include <unistd.h>

G_STATIC_ASSERT (sizeof (CowTraceEvent) == 64);

/* A fresh recorder, installed. */
static TestRecorder *
recording (void)
{
  TestRecorder *rec = test_recorder_new ();
  test_recorder_start (rec);
  return rec;
}

static CowTensor *
lazy_clone (CowTensor *tensor)
{
  CowError error = { 0 };
  CowTensor *clone = cow_tensor_lazy_clone (tensor, &error);
  test_assert_cow_ok (&error);
  g_assert_nonnull (clone);
  return clone;
}

static uint64_t
storage_id (const CowTensor *tensor)
{
  return cow_storage_id (cow_tensor_storage (tensor));
}

static uint64_t
allocation_id (const CowTensor *tensor)
{
  return cow_storage_allocation_id (cow_tensor_storage (tensor));
}

static uint64_t
context_id (const CowTensor *tensor)
{
  return cow_storage_context_id (cow_tensor_storage (tensor));
}

/* The one event of @type, asserting there is exactly one; copied, since
 * the recorder may grow. */
static CowTraceEvent
only (TestRecorder *rec, CowEventType type)
{
  g_assert_cmpuint (test_recorder_count (rec, type), ==, 1);
  return *test_recorder_find (rec, type, 0);
}

/* ------------------------------------------------------------------ */
/* Records and sinks                                                   */
/* ------------------------------------------------------------------ */

/* Events are 64 bytes, with the documented header layout. */
static void
test_event_layout (void)
{
  g_assert_cmpuint (sizeof (CowTraceEvent), ==, 64);
  g_assert_cmpuint (alignof (CowTraceEvent), ==, 8);
  g_assert_cmpuint (offsetof (CowTraceEvent, type), ==, 0);
  g_assert_cmpuint (offsetof (CowTraceEvent, op), ==, 2);
  g_assert_cmpuint (offsetof (CowTraceEvent, aux), ==, 4);
  g_assert_cmpuint (offsetof (CowTraceEvent, pid), ==, 8);
  g_assert_cmpuint (offsetof (CowTraceEvent, tid), ==, 12);
  g_assert_cmpuint (offsetof (CowTraceEvent, time_ns), ==, 16);
  g_assert_cmpuint (offsetof (CowTraceEvent, v), ==, 24);
  g_assert_cmpuint (offsetof (CowTraceEvent, materialize_end.lock_wait_ns), ==, 56);
  g_assert_cmpint (COW_N_EVENT_TYPES, <=, G_MAXUINT16);
  g_assert_cmpint (COW_N_OPS, <=, G_MAXUINT16);
}

/* Every event names this process and the calling kernel thread, and
 * times on one thread never go backwards. */
static void
test_event_header (void)
{
  int64_t before = cow_trace_now_ns ();
  TestRecorder *rec = recording ();
  CowTensor *a = test_tensor_arange_f32 (1, (int64_t[]) { 8 }, 0);
  CowTensor *b = lazy_clone (a);
  CowError error = { 0 };
  g_assert_cmpint (cow_tensor_fill_ (b, 1, &error), ==, COW_OK);
  cow_range_push ("header");
  cow_mark ("m");
  cow_range_pop ();
  cow_tensor_unref (a);
  cow_tensor_unref (b);
  test_recorder_stop (rec);
  int64_t after = cow_trace_now_ns ();

  guint n = test_recorder_n_events (rec);
  g_assert_cmpuint (n, >=, 15);
  int64_t last = before;
  for (guint i = 0; i < n; i++)
    {
      const CowTraceEvent *e = test_recorder_event (rec, i);
      g_assert_cmpuint (e->pid, ==, (uint32_t) getpid ());
      g_assert_cmpuint (e->tid, ==, (uint32_t) gettid ());
      g_assert_cmpint (e->type, >, COW_EVENT_NONE);
      g_assert_cmpint (e->type, <, COW_N_EVENT_TYPES);
      g_assert_cmpint (e->op, <, COW_N_OPS);
      g_assert_cmpint (e->time_ns, >=, last);
      g_assert_cmpint (e->time_ns, <=, after);
      last = e->time_ns;
    }
  test_recorder_free (rec);
}

typedef struct {
  uint32_t tid;
  uint64_t tensor_id;
} ThreadResult;

static gpointer
make_tensor_thread (gpointer data)
{
  ThreadResult *result = data;
  result->tid = (uint32_t) gettid ();
  CowTensor *t = test_tensor_arange_f32 (1, (int64_t[]) { 4 }, 0);
  result->tensor_id = cow_tensor_id (t);
  cow_tensor_unref (t);
  return NULL;
}

/* Events carry the tid of the thread that caused them. */
static void
test_event_header_thread (void)
{
  TestRecorder *rec = recording ();
  ThreadResult result = { 0 };
  GThread *thread = g_thread_new ("tracer", make_tensor_thread, &result);
  g_thread_join (thread);
  CowTensor *t = test_tensor_arange_f32 (1, (int64_t[]) { 4 }, 0);
  test_recorder_stop (rec);

  g_assert_cmpuint (result.tid, !=, (uint32_t) gettid ());
  CowTraceEvent theirs = *test_recorder_find_id (rec, COW_EVENT_TENSOR_NEW, result.tensor_id);
  g_assert_cmpuint (theirs.tid, ==, result.tid);
  g_assert_cmpuint (theirs.pid, ==, (uint32_t) getpid ());
  CowTraceEvent freed = *test_recorder_find_id (rec, COW_EVENT_TENSOR_FREE, result.tensor_id);
  g_assert_cmpuint (freed.tid, ==, result.tid);
  CowTraceEvent mine = *test_recorder_find_id (rec, COW_EVENT_TENSOR_NEW, cow_tensor_id (t));
  g_assert_cmpuint (mine.tid, ==, (uint32_t) gettid ());
  cow_tensor_unref (t);
  test_recorder_free (rec);
}

/* With no sink nothing is delivered, and a replaced sink hears nothing
 * more. */
static void
test_sink_none (void)
{
  TestRecorder *first = recording ();
  g_assert_nonnull (cow_trace_get_sink ());
  test_recorder_stop (first);
  g_assert_null (cow_trace_get_sink ());

  CowTensor *a = test_tensor_arange_f32 (2, (int64_t[]) { 2, 2 }, 0);
  CowTensor *b = lazy_clone (a);
  cow_tensor_set_name (b, "unheard");
  CowError error = { 0 };
  g_assert_cmpint (cow_tensor_fill_ (b, 3, &error), ==, COW_OK);
  cow_range_push ("unheard-range");
  cow_mark ("unheard-mark");
  cow_range_pop ();
  cow_tensor_unref (b);
  g_assert_cmpuint (test_recorder_n_events (first), ==, 0);
  g_assert_cmpuint (test_recorder_n_strings (first), ==, 0);

  /* Replaced: the first recorder stops hearing, the second hears. */
  test_recorder_start (first);
  TestRecorder *second = recording ();
  g_assert_true (cow_trace_get_sink () != NULL);
  CowTensor *c = lazy_clone (a);
  cow_tensor_unref (c);
  g_assert_cmpuint (test_recorder_n_events (first), ==, 0);
  g_assert_cmpuint (test_recorder_n_events (second), >, 0);
  test_recorder_stop (second);
  guint heard = test_recorder_n_events (second);
  cow_tensor_unref (a);
  g_assert_cmpuint (test_recorder_n_events (second), ==, heard);

  test_recorder_free (first);
  test_recorder_free (second);
}

/* Event types and ops have stable names. */
static void
test_names (void)
{
  g_assert_cmpstr (cow_event_type_name (COW_EVENT_LAZY_CLONE), ==, "lazy_clone");
  g_assert_cmpstr (cow_event_type_name (COW_EVENT_MATERIALIZE_END), ==, "materialize_end");
  g_assert_cmpstr (cow_event_type_name (COW_EVENT_ALLOCATION_NEW), ==, "allocation_new");
  g_assert_cmpstr (cow_event_type_name (COW_N_EVENT_TYPES), ==, "unknown");
  g_assert_cmpstr (cow_event_type_name ((CowEventType) -1), ==, "unknown");
  for (int t = COW_EVENT_NONE; t < COW_N_EVENT_TYPES; t++)
    g_assert_cmpstr (cow_event_type_name ((CowEventType) t), !=, "unknown");
  g_assert_cmpstr (cow_op_name (COW_OP_FILL_), ==, "fill_");
  g_assert_cmpstr (cow_op_name (COW_OP_LAZY_CLONE), ==, "lazy_clone");
  g_assert_cmpstr (cow_op_name (COW_N_OPS), ==, "unknown");
  for (int op = COW_OP_NONE; op < COW_N_OPS; op++)
    g_assert_cmpstr (cow_op_name ((CowOp) op), !=, "unknown");
}

/* ------------------------------------------------------------------ */
/* Object lifecycles                                                   */
/* ------------------------------------------------------------------ */

/* empty: an allocation, a storage and a tensor, each new then freed,
 * with matching ids. */
static void
test_lifecycle_empty (void)
{
  CowError error = { 0 };
  TestRecorder *rec = recording ();
  CowTensor *t = cow_tensor_empty (2, (int64_t[]) { 3, 5 }, COW_DTYPE_F64, &error);
  test_assert_cow_ok (&error);
  uint64_t tid = cow_tensor_id (t), sid = storage_id (t), aid = allocation_id (t);
  uintptr_t address = cow_tensor_data_address (t);
  g_assert_cmpuint (tid, !=, 0);
  g_assert_cmpuint (sid, !=, 0);
  g_assert_cmpuint (aid, !=, 0);
  g_assert_cmpuint (tid, !=, sid);
  g_assert_cmpuint (sid, !=, aid);

  CowTraceEvent alloc = only (rec, COW_EVENT_ALLOCATION_NEW);
  g_assert_cmpuint (alloc.op, ==, COW_OP_EMPTY);
  g_assert_cmpuint (alloc.aux, ==, COW_ALLOCATION_CPU);
  g_assert_cmpuint (alloc.allocation.allocation_id, ==, aid);
  g_assert_cmpuint (alloc.allocation.nbytes, ==, 15 * 8);
  g_assert_cmpuint (alloc.allocation.address, ==, address);
  g_assert_cmpuint (alloc.allocation.device_index, ==, 0);

  CowTraceEvent storage = only (rec, COW_EVENT_STORAGE_NEW);
  g_assert_cmpuint (storage.op, ==, COW_OP_EMPTY);
  g_assert_cmpuint (storage.storage.storage_id, ==, sid);
  g_assert_cmpuint (storage.storage.allocation_id, ==, aid);
  g_assert_cmpuint (storage.storage.nbytes, ==, 15 * 8);
  g_assert_cmpuint (storage.storage.context_id, ==, 0);
  g_assert_cmpuint (storage.storage.source_storage_id, ==, 0);

  CowTraceEvent tensor = only (rec, COW_EVENT_TENSOR_NEW);
  g_assert_cmpuint (tensor.op, ==, COW_OP_EMPTY);
  g_assert_cmpuint (tensor.aux, ==, (uint32_t) COW_DTYPE_F64 | 2u << 8);
  g_assert_cmpuint (tensor.tensor.tensor_id, ==, tid);
  g_assert_cmpuint (tensor.tensor.storage_id, ==, sid);
  g_assert_cmpuint (tensor.tensor.base_tensor_id, ==, 0);
  g_assert_cmpuint (tensor.tensor.numel, ==, 15);
  g_assert_cmpuint (tensor.tensor.storage_offset, ==, 0);

  g_assert_cmpint (test_recorder_position (rec, COW_EVENT_ALLOCATION_NEW, 0), <,
                   test_recorder_position (rec, COW_EVENT_STORAGE_NEW, 0));
  g_assert_cmpint (test_recorder_position (rec, COW_EVENT_STORAGE_NEW, 0), <,
                   test_recorder_position (rec, COW_EVENT_TENSOR_NEW, 0));
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_TENSOR_FREE), ==, 0);

  cow_tensor_unref (t);
  test_recorder_stop (rec);
  CowTraceEvent tfree = only (rec, COW_EVENT_TENSOR_FREE);
  g_assert_cmpuint (tfree.tensor.tensor_id, ==, tid);
  g_assert_cmpuint (tfree.tensor.storage_id, ==, sid);
  CowTraceEvent sfree = only (rec, COW_EVENT_STORAGE_FREE);
  g_assert_cmpuint (sfree.storage.storage_id, ==, sid);
  g_assert_cmpuint (sfree.storage.allocation_id, ==, aid);
  CowTraceEvent afree = only (rec, COW_EVENT_ALLOCATION_FREE);
  g_assert_cmpuint (afree.allocation.allocation_id, ==, aid);
  g_assert_cmpuint (afree.allocation.nbytes, ==, 15 * 8);
  g_assert_cmpint (test_recorder_position (rec, COW_EVENT_TENSOR_FREE, 0), <,
                   test_recorder_position (rec, COW_EVENT_STORAGE_FREE, 0));
  test_recorder_free (rec);
}

/* from_data and from_foreign say so; foreign memory is marked foreign. */
static void
test_lifecycle_from_data_and_foreign (void)
{
  CowError error = { 0 };
  TestRecorder *rec = recording ();
  CowTensor *t = test_tensor_f32 (1, (int64_t[]) { 3 }, (float[]) { 1, 2, 3 });
  CowTraceEvent tensor = only (rec, COW_EVENT_TENSOR_NEW);
  g_assert_cmpuint (tensor.op, ==, COW_OP_FROM_DATA);
  g_assert_cmpuint (tensor.aux, ==, (uint32_t) COW_DTYPE_F32 | 1u << 8);
  g_assert_cmpuint (tensor.tensor.numel, ==, 3);
  cow_tensor_unref (t);

  test_recorder_clear (rec);
  TestForeign *foreign = test_foreign_new (12);
  t = cow_tensor_from_foreign (1, (int64_t[]) { 3 }, COW_DTYPE_I32, foreign->data,
                               foreign, test_foreign_deleter, &error);
  test_assert_cow_ok (&error);
  CowTraceEvent alloc = only (rec, COW_EVENT_ALLOCATION_NEW);
  g_assert_cmpuint (alloc.op, ==, COW_OP_FROM_FOREIGN);
  g_assert_cmpuint (alloc.aux, ==, COW_ALLOCATION_FOREIGN);
  g_assert_cmpuint (alloc.allocation.address, ==, (uintptr_t) foreign->data);
  g_assert_cmpuint (alloc.allocation.nbytes, ==, 12);
  g_assert_cmpuint (alloc.allocation.allocation_id, ==, allocation_id (t));
  tensor = only (rec, COW_EVENT_TENSOR_NEW);
  g_assert_cmpuint (tensor.op, ==, COW_OP_FROM_FOREIGN);
  g_assert_cmpuint (tensor.aux, ==, (uint32_t) COW_DTYPE_I32 | 1u << 8);
  uint64_t aid = allocation_id (t);
  cow_tensor_unref (t);
  test_recorder_stop (rec);
  g_assert_cmpint (foreign->n_deleted, ==, 1);
  CowTraceEvent afree = only (rec, COW_EVENT_ALLOCATION_FREE);
  g_assert_cmpuint (afree.allocation.allocation_id, ==, aid);
  test_foreign_free (foreign);
  test_recorder_free (rec);
}

typedef CowTensor *(*ViewFn) (CowTensor *t, CowError *error);

static CowTensor *do_view (CowTensor *t, CowError *e) { return cow_tensor_view (t, 2, (int64_t[]) { 3, 4 }, e); }
static CowTensor *do_slice (CowTensor *t, CowError *e) { return cow_tensor_slice (t, 1, 1, 4, 2, e); }
static CowTensor *do_select (CowTensor *t, CowError *e) { return cow_tensor_select (t, 0, 1, e); }
static CowTensor *do_narrow (CowTensor *t, CowError *e) { return cow_tensor_narrow (t, 0, 1, 1, e); }
static CowTensor *do_transpose (CowTensor *t, CowError *e) { return cow_tensor_transpose (t, 0, 1, e); }
static CowTensor *do_permute (CowTensor *t, CowError *e) { return cow_tensor_permute (t, 2, (int[]) { 1, 0 }, e); }
static CowTensor *do_as_strided (CowTensor *t, CowError *e)
{
  return cow_tensor_as_strided (t, 2, (int64_t[]) { 2, 2 }, (int64_t[]) { 4, 1 }, 3, e);
}
/* A [1, 4] view of @t's first row, to expand. */
static CowTensor *
make_row (CowTensor *t, CowError *e)
{
  CowTensor *row = cow_tensor_select (t, 0, 0, NULL); /* not traced below */
  CowTensor *r = cow_tensor_view (row, 2, (int64_t[]) { 1, 4 }, e);
  cow_tensor_unref (row);
  return r;
}

/* Each view op reports one TENSOR_NEW with its op, its source as base and
 * the source's storage, and nothing else. */
static void
test_lifecycle_views (void)
{
  static const struct {
    const char *name;
    ViewFn fn;
    CowOp op;
    uint64_t numel, offset;
  } cases[] = {
    { "view", do_view, COW_OP_VIEW, 12, 0 },
    { "slice", do_slice, COW_OP_SLICE, 6, 1 },
    { "select", do_select, COW_OP_SELECT, 4, 4 },
    { "narrow", do_narrow, COW_OP_NARROW, 4, 4 },
    { "transpose", do_transpose, COW_OP_TRANSPOSE, 12, 0 },
    { "permute", do_permute, COW_OP_PERMUTE, 12, 0 },
    { "as_strided", do_as_strided, COW_OP_AS_STRIDED, 4, 3 },
  };
  CowError error = { 0 };
  CowTensor *src = test_tensor_arange_f32 (2, (int64_t[]) { 3, 4 }, 0);

  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("%s", cases[i].name);
      TestRecorder *rec = recording ();
      CowTensor *v = cases[i].fn (src, &error);
      test_recorder_stop (rec);
      test_assert_cow_ok (&error);
      g_assert_nonnull (v);
      g_assert_cmpuint (test_recorder_n_events (rec), ==, 1);
      CowTraceEvent e = only (rec, COW_EVENT_TENSOR_NEW);
      g_assert_cmpuint (e.op, ==, cases[i].op);
      g_assert_cmpuint (e.tensor.tensor_id, ==, cow_tensor_id (v));
      g_assert_cmpuint (e.tensor.base_tensor_id, ==, cow_tensor_id (src));
      g_assert_cmpuint (e.tensor.storage_id, ==, storage_id (src));
      g_assert_cmpuint (e.tensor.numel, ==, cases[i].numel);
      g_assert_cmpuint (e.tensor.storage_offset, ==, cases[i].offset);
      g_assert_cmpuint (e.aux >> 8, ==, (uint32_t) cow_tensor_ndim (v));
      g_assert_cmpuint (e.aux & 0xff, ==, COW_DTYPE_F32);

      test_recorder_clear (rec);
      test_recorder_start (rec);
      cow_tensor_unref (v);
      test_recorder_stop (rec);
      /* The storage lives on in src: only the tensor goes. */
      g_assert_cmpuint (test_recorder_n_events (rec), ==, 1);
      CowTraceEvent f = only (rec, COW_EVENT_TENSOR_FREE);
      g_assert_cmpuint (f.tensor.tensor_id, ==, e.tensor.tensor_id);
      test_recorder_free (rec);
    }

  /* expand of a [1, 4] view. */
  CowTensor *row = make_row (src, &error);
  test_assert_cow_ok (&error);
  TestRecorder *rec = recording ();
  CowTensor *x = cow_tensor_expand (row, 2, (int64_t[]) { 5, 4 }, &error);
  test_recorder_stop (rec);
  test_assert_cow_ok (&error);
  CowTraceEvent e = only (rec, COW_EVENT_TENSOR_NEW);
  g_assert_cmpuint (e.op, ==, COW_OP_EXPAND);
  g_assert_cmpuint (e.tensor.base_tensor_id, ==, cow_tensor_id (row));
  g_assert_cmpuint (e.tensor.storage_id, ==, storage_id (src));
  g_assert_cmpuint (e.tensor.numel, ==, 20);
  cow_tensor_unref (x);
  cow_tensor_unref (row);
  cow_tensor_unref (src);
  test_recorder_free (rec);
}

/* A host-memory allocator that calls itself device 1 of CUDA, to check
 * that events carry the allocator's kind and device. */
static CowStatus
fake_device_allocate (CowAllocator *self, size_t nbytes, CowDataPtr *out,
                      CowError *error)
{
  (void) self;
  CowAllocator *cpu = cow_cpu_allocator ();
  return cpu->allocate (cpu, nbytes, out, error);
}

static CowStatus
fake_device_copy (CowAllocator *self, void *dst, const void *src, size_t nbytes,
                  CowError *error)
{
  (void) self;
  CowAllocator *cpu = cow_cpu_allocator ();
  return cpu->copy_data (cpu, dst, src, nbytes, error);
}

static bool
fake_device_is_simple (CowAllocator *self, const CowDataPtr *ptr)
{
  (void) self;
  CowAllocator *cpu = cow_cpu_allocator ();
  return cpu->is_simple_data_ptr (cpu, ptr);
}

static CowAllocator fake_device = {
  .name = "fake-device",
  .device_type = COW_DEVICE_CUDA,
  .device_index = 1,
  .allocate = fake_device_allocate,
  .copy_data = fake_device_copy,
  .is_simple_data_ptr = fake_device_is_simple,
};

/* ALLOCATION_FREE describes the allocation as ALLOCATION_NEW did (kind,
 * bytes, address, device), whether a plain storage, the last sharer of a
 * context or a materialized copy frees it.  Sharing device bytes needs
 * the device itself (its stream order is kept with CUDA events), so for
 * the fake cuda:1 the shared cases run only where cuda:1 exists;
 * elsewhere the lazy clone must refuse with the device's error. */
static void
test_lifecycle_allocation_free_matches_new (void)
{
  CowAllocator *allocators[] = { cow_cpu_allocator (), &fake_device };
  for (gsize a = 0; a < G_N_ELEMENTS (allocators); a++)
    {
      g_test_message ("%s", allocators[a]->name);
      gboolean can_share = allocators[a]->device_type == COW_DEVICE_CPU
                           || cow_cuda_check_device (allocators[a]->device_index, NULL) == COW_OK;
      guint n_allocations = can_share ? 3 : 2;
      CowError error = { 0 };
      TestRecorder *rec = recording ();
      /* Plain. */
      CowStorage *plain = cow_storage_new (40, allocators[a], &error);
      test_assert_cow_ok (&error);
      cow_storage_unref (plain);
      /* Shared to the end: the context frees it. */
      CowStorage *s1 = cow_storage_new (48, allocators[a], &error);
      test_assert_cow_ok (&error);
      CowStorage *s2 = cow_storage_lazy_clone (s1, &error);
      if (!can_share)
        {
          g_assert_null (s2);
          g_assert_true (error.code == COW_ERROR_DEVICE || error.code == COW_ERROR_OUT_OF_RANGE);
          g_assert_false (cow_storage_is_cow (s1));
          cow_storage_unref (s1);
        }
      else
        {
          test_assert_cow_ok (&error);
          /* A copy made by materializing. */
          CowStorage *s3 = cow_storage_lazy_clone (s1, &error);
          test_assert_cow_ok (&error);
          g_assert_nonnull (cow_storage_mutable_data (s3, &error));
          test_assert_cow_ok (&error);
          cow_storage_unref (s3);
          cow_storage_unref (s1);
          cow_storage_unref (s2);
        }
      test_recorder_stop (rec);

      g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_ALLOCATION_NEW), ==, n_allocations);
      g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_ALLOCATION_FREE), ==, n_allocations);
      for (guint i = 0; i < n_allocations; i++)
        {
          CowTraceEvent made = *test_recorder_find (rec, COW_EVENT_ALLOCATION_NEW, i);
          const CowTraceEvent *f = test_recorder_find_id (rec, COW_EVENT_ALLOCATION_FREE,
                                                          made.allocation.allocation_id);
          g_assert_nonnull (f);
          CowTraceEvent freed = *f;
          g_assert_cmpuint (made.aux, ==, a == 0 ? COW_ALLOCATION_CPU : COW_ALLOCATION_CUDA);
          g_assert_cmpuint (made.allocation.device_index, ==, (uint64_t) allocators[a]->device_index);
          g_assert_cmpuint (freed.aux, ==, made.aux);
          g_assert_cmpuint (freed.allocation.nbytes, ==, made.allocation.nbytes);
          g_assert_cmpuint (freed.allocation.address, ==, made.allocation.address);
          g_assert_cmpuint (freed.allocation.device_index, ==, made.allocation.device_index);
        }
      test_recorder_free (rec);
    }
}

/* ------------------------------------------------------------------ */
/* Contexts and lazy clones                                            */
/* ------------------------------------------------------------------ */

/* CONTEXT_NEW, _REF, _UNREF, _FREE with the refcount after each. */
static void
test_context_events (void)
{
  CowTensor *a = test_tensor_arange_f32 (1, (int64_t[]) { 6 }, 0);
  TestRecorder *rec = recording ();
  CowTensor *b = lazy_clone (a);
  uint64_t ctx = context_id (a);
  uint64_t aid = allocation_id (a);
  g_assert_cmpuint (ctx, !=, 0);

  CowTraceEvent created = only (rec, COW_EVENT_CONTEXT_NEW);
  g_assert_cmpuint (created.op, ==, COW_OP_LAZY_CLONE);
  g_assert_cmpuint (created.context.context_id, ==, ctx);
  g_assert_cmpuint (created.context.storage_id, ==, storage_id (a));
  g_assert_cmpuint (created.context.refcount, ==, 1);
  g_assert_cmpuint (created.context.allocation_id, ==, aid);
  CowTraceEvent ref = only (rec, COW_EVENT_CONTEXT_REF);
  g_assert_cmpuint (ref.context.context_id, ==, ctx);
  g_assert_cmpuint (ref.context.storage_id, ==, storage_id (b));
  g_assert_cmpuint (ref.context.refcount, ==, 2);
  g_assert_cmpuint (ref.context.allocation_id, ==, aid);
  g_assert_cmpint (test_recorder_position (rec, COW_EVENT_CONTEXT_NEW, 0), <,
                   test_recorder_position (rec, COW_EVENT_CONTEXT_REF, 0));

  CowTensor *c = lazy_clone (b);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_CONTEXT_NEW), ==, 1);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_CONTEXT_REF), ==, 2);
  CowTraceEvent ref2 = *test_recorder_find (rec, COW_EVENT_CONTEXT_REF, 1);
  g_assert_cmpuint (ref2.context.refcount, ==, 3);
  g_assert_cmpuint (ref2.context.storage_id, ==, storage_id (c));

  uint64_t sc = storage_id (c), sb = storage_id (b), sa = storage_id (a);
  cow_tensor_unref (c);
  cow_tensor_unref (b);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_CONTEXT_UNREF), ==, 2);
  CowTraceEvent u1 = *test_recorder_find (rec, COW_EVENT_CONTEXT_UNREF, 0);
  CowTraceEvent u2 = *test_recorder_find (rec, COW_EVENT_CONTEXT_UNREF, 1);
  g_assert_cmpuint (u1.context.storage_id, ==, sc);
  g_assert_cmpuint (u1.context.refcount, ==, 2);
  g_assert_cmpuint (u2.context.storage_id, ==, sb);
  g_assert_cmpuint (u2.context.refcount, ==, 1);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_CONTEXT_FREE), ==, 0);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_ALLOCATION_FREE), ==, 0);

  cow_tensor_unref (a);
  test_recorder_stop (rec);
  CowTraceEvent u3 = *test_recorder_find (rec, COW_EVENT_CONTEXT_UNREF, 2);
  g_assert_cmpuint (u3.context.storage_id, ==, sa);
  g_assert_cmpuint (u3.context.refcount, ==, 0);
  CowTraceEvent freed = only (rec, COW_EVENT_CONTEXT_FREE);
  g_assert_cmpuint (freed.context.context_id, ==, ctx);
  g_assert_cmpuint (freed.context.refcount, ==, 0);
  g_assert_cmpuint (freed.context.allocation_id, ==, aid);
  CowTraceEvent afree = only (rec, COW_EVENT_ALLOCATION_FREE);
  g_assert_cmpuint (afree.allocation.allocation_id, ==, aid);
  g_assert_cmpint (test_recorder_position (rec, COW_EVENT_CONTEXT_UNREF, 2), <,
                   test_recorder_position (rec, COW_EVENT_CONTEXT_FREE, 0));
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_STORAGE_FREE), ==, 3);
  test_recorder_free (rec);
}

/* A lazy clone reports the new storage (sharing the allocation through
 * the context), the new tensor (based on its source) and LAZY_CLONE;
 * no allocation. */
static void
test_lazy_clone_events (void)
{
  CowTensor *a = test_tensor_arange_f32 (2, (int64_t[]) { 2, 4 }, 0);
  TestRecorder *rec = recording ();
  CowTensor *b = lazy_clone (a);
  test_recorder_stop (rec);
  uint64_t ctx = context_id (a);

  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_ALLOCATION_NEW), ==, 0);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_LAZY_CLONE_EAGER), ==, 0);
  CowTraceEvent lc = only (rec, COW_EVENT_LAZY_CLONE);
  g_assert_cmpuint (lc.op, ==, COW_OP_LAZY_CLONE);
  g_assert_cmpuint (lc.lazy_clone.source_tensor_id, ==, cow_tensor_id (a));
  g_assert_cmpuint (lc.lazy_clone.result_tensor_id, ==, cow_tensor_id (b));
  g_assert_cmpuint (lc.lazy_clone.source_storage_id, ==, storage_id (a));
  g_assert_cmpuint (lc.lazy_clone.result_storage_id, ==, storage_id (b));
  g_assert_cmpuint (lc.lazy_clone.context_id_or_nbytes, ==, ctx);

  CowTraceEvent s = only (rec, COW_EVENT_STORAGE_NEW);
  g_assert_cmpuint (s.op, ==, COW_OP_LAZY_CLONE);
  g_assert_cmpuint (s.storage.storage_id, ==, storage_id (b));
  g_assert_cmpuint (s.storage.allocation_id, ==, allocation_id (a));
  g_assert_cmpuint (s.storage.nbytes, ==, 32);
  g_assert_cmpuint (s.storage.context_id, ==, ctx);
  g_assert_cmpuint (s.storage.source_storage_id, ==, storage_id (a));

  CowTraceEvent t = only (rec, COW_EVENT_TENSOR_NEW);
  g_assert_cmpuint (t.op, ==, COW_OP_LAZY_CLONE);
  g_assert_cmpuint (t.tensor.tensor_id, ==, cow_tensor_id (b));
  g_assert_cmpuint (t.tensor.storage_id, ==, storage_id (b));
  g_assert_cmpuint (t.tensor.base_tensor_id, ==, cow_tensor_id (a));
  g_assert_cmpuint (t.tensor.numel, ==, 8);

  cow_tensor_unref (a);
  cow_tensor_unref (b);
  test_recorder_free (rec);
}

/* An allocator whose data pointers are never simple: lazy clones of its
 * storages must copy. */
static CowStatus
never_simple_allocate (CowAllocator *self, size_t nbytes, CowDataPtr *out,
                       CowError *error)
{
  (void) self;
  CowAllocator *cpu = cow_cpu_allocator ();
  return cpu->allocate (cpu, nbytes, out, error);
}

static CowStatus
never_simple_copy (CowAllocator *self, void *dst, const void *src,
                   size_t nbytes, CowError *error)
{
  (void) self;
  CowAllocator *cpu = cow_cpu_allocator ();
  return cpu->copy_data (cpu, dst, src, nbytes, error);
}

static bool
never_simple_is_simple (CowAllocator *self, const CowDataPtr *ptr)
{
  (void) self;
  (void) ptr;
  return false;
}

static CowAllocator never_simple = {
  .name = "never-simple",
  .device_type = COW_DEVICE_CPU,
  .allocate = never_simple_allocate,
  .copy_data = never_simple_copy,
  .is_simple_data_ptr = never_simple_is_simple,
};

/* Eager fallbacks say why and how many bytes they copied. */
static void
test_lazy_clone_eager_events (void)
{
  CowError error = { 0 };
  TestForeign *foreign = test_foreign_new (8 * sizeof (float));
  CowTensor *f = cow_tensor_from_foreign (2, (int64_t[]) { 2, 4 }, COW_DTYPE_F32,
                                          foreign->data, foreign,
                                          test_foreign_deleter, &error);
  test_assert_cow_ok (&error);
  CowTensor *n = cow_tensor_empty_with_allocator (1, (int64_t[]) { 5 }, COW_DTYPE_I64,
                                                  &never_simple, &error);
  test_assert_cow_ok (&error);
  g_assert_cmpint (cow_tensor_fill_ (n, 4, &error), ==, COW_OK);

  TestRecorder *rec = recording ();
  CowTensor *fc = lazy_clone (f);
  CowTensor *nc = lazy_clone (n);
  test_recorder_stop (rec);

  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_LAZY_CLONE), ==, 0);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_CONTEXT_NEW), ==, 0);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_LAZY_CLONE_EAGER), ==, 2);
  CowTraceEvent e1 = *test_recorder_find (rec, COW_EVENT_LAZY_CLONE_EAGER, 0);
  g_assert_cmpuint (e1.aux, ==, COW_EAGER_FOREIGN_DATA_PTR);
  g_assert_cmpuint (e1.lazy_clone.source_tensor_id, ==, cow_tensor_id (f));
  g_assert_cmpuint (e1.lazy_clone.result_tensor_id, ==, cow_tensor_id (fc));
  g_assert_cmpuint (e1.lazy_clone.source_storage_id, ==, storage_id (f));
  g_assert_cmpuint (e1.lazy_clone.result_storage_id, ==, storage_id (fc));
  g_assert_cmpuint (e1.lazy_clone.context_id_or_nbytes, ==, 32);
  CowTraceEvent e2 = *test_recorder_find (rec, COW_EVENT_LAZY_CLONE_EAGER, 1);
  g_assert_cmpuint (e2.aux, ==, COW_EAGER_NOT_SIMPLE);
  g_assert_cmpuint (e2.lazy_clone.source_tensor_id, ==, cow_tensor_id (n));
  g_assert_cmpuint (e2.lazy_clone.result_tensor_id, ==, cow_tensor_id (nc));
  g_assert_cmpuint (e2.lazy_clone.context_id_or_nbytes, ==, 40);
  /* The copies got allocations of their own. */
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_ALLOCATION_NEW), ==, 2);
  g_assert_cmpuint (cow_tensor_data_address (nc), !=, cow_tensor_data_address (n));
  g_assert_false (cow_tensor_is_cow (n));
  test_assert_tensor_values (nc, 4, 4, 4, 4, 4);

  cow_tensor_unref (f);
  cow_tensor_unref (fc);
  cow_tensor_unref (n);
  cow_tensor_unref (nc);
  g_assert_cmpint (foreign->n_deleted, ==, 1);
  test_foreign_free (foreign);
  test_recorder_free (rec);
}

/* ------------------------------------------------------------------ */
/* Materialization                                                     */
/* ------------------------------------------------------------------ */

typedef CowStatus (*WriteFn) (CowTensor *t, CowTensor *other);

static CowStatus w_fill (CowTensor *t, CowTensor *o) { (void) o; return cow_tensor_fill_ (t, 2, NULL); }
static CowStatus w_add (CowTensor *t, CowTensor *o) { return cow_tensor_add_ (t, o, 1, NULL); }
static CowStatus w_mul (CowTensor *t, CowTensor *o) { return cow_tensor_mul_ (t, o, NULL); }
static CowStatus w_copy (CowTensor *t, CowTensor *o) { return cow_tensor_copy_ (t, o, NULL); }
static CowStatus
w_mutable (CowTensor *t, CowTensor *o)
{
  (void) o;
  return cow_tensor_mutable_data (t, NULL) ? COW_OK : COW_ERROR_NO_MEMORY;
}

/* The writer copies (BEGIN/END with the op that wrote, a new allocation
 * reported with that op, the context dropping to 1), then the source
 * steals (the original allocation, no new one). */
static void
test_materialize_events (void)
{
  static const struct {
    const char *name;
    WriteFn fn;
    CowOp op;
  } cases[] = {
    { "fill_", w_fill, COW_OP_FILL_ },
    { "add_", w_add, COW_OP_ADD_ },
    { "mul_", w_mul, COW_OP_MUL_ },
    { "copy_", w_copy, COW_OP_COPY_ },
    { "mutable_data", w_mutable, COW_OP_MUTABLE_DATA },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("%s", cases[i].name);
      CowTensor *other = test_tensor_arange_f32 (2, (int64_t[]) { 2, 3 }, 1);
      CowTensor *a = test_tensor_arange_f32 (2, (int64_t[]) { 2, 3 }, 0);
      CowTensor *b = lazy_clone (a);
      /* A view of all of b, so the write goes through another tensor. */
      CowTensor *view = cow_tensor_slice (b, 0, 0, 2, 1, NULL);
      g_assert_nonnull (view);
      uint64_t ctx = context_id (a), original = allocation_id (a);

      TestRecorder *rec = recording ();
      g_assert_cmpint (cases[i].fn (view, other), ==, COW_OK);
      test_recorder_stop (rec);

      CowTraceEvent begin = only (rec, COW_EVENT_MATERIALIZE_BEGIN);
      g_assert_cmpuint (begin.op, ==, cases[i].op);
      g_assert_cmpuint (begin.materialize_begin.storage_id, ==, storage_id (b));
      g_assert_cmpuint (begin.materialize_begin.context_id, ==, ctx);
      g_assert_cmpuint (begin.materialize_begin.tensor_id, ==, cow_tensor_id (view));
      g_assert_cmpuint (begin.materialize_begin.nbytes, ==, 24);
      CowTraceEvent end = only (rec, COW_EVENT_MATERIALIZE_END);
      g_assert_cmpuint (end.op, ==, cases[i].op);
      g_assert_cmpuint (end.aux, ==, COW_MATERIALIZE_COPY);
      g_assert_cmpuint (end.materialize_end.storage_id, ==, storage_id (b));
      g_assert_cmpuint (end.materialize_end.context_id, ==, ctx);
      g_assert_cmpuint (end.materialize_end.nbytes, ==, 24);
      g_assert_cmpuint (end.materialize_end.allocation_id, !=, original);
      g_assert_cmpuint (end.materialize_end.allocation_id, ==, allocation_id (b));
      g_assert_cmpint (test_recorder_position (rec, COW_EVENT_MATERIALIZE_BEGIN, 0), <,
                       test_recorder_position (rec, COW_EVENT_MATERIALIZE_END, 0));
      CowTraceEvent alloc = only (rec, COW_EVENT_ALLOCATION_NEW);
      g_assert_cmpuint (alloc.op, ==, cases[i].op);
      g_assert_cmpuint (alloc.allocation.allocation_id, ==, allocation_id (b));
      g_assert_cmpuint (alloc.allocation.address, ==, cow_tensor_data_address (b));
      g_assert_cmpuint (alloc.allocation.nbytes, ==, 24);
      CowTraceEvent unref = only (rec, COW_EVENT_CONTEXT_UNREF);
      g_assert_cmpuint (unref.op, ==, cases[i].op);
      g_assert_cmpuint (unref.context.context_id, ==, ctx);
      g_assert_cmpuint (unref.context.storage_id, ==, storage_id (b));
      g_assert_cmpuint (unref.context.refcount, ==, 1);
      g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_CONTEXT_FREE), ==, 0);

      /* The source is last now: it steals. */
      test_recorder_clear (rec);
      test_recorder_start (rec);
      g_assert_cmpint (cases[i].fn (a, other), ==, COW_OK);
      test_recorder_stop (rec);
      begin = only (rec, COW_EVENT_MATERIALIZE_BEGIN);
      g_assert_cmpuint (begin.op, ==, cases[i].op);
      g_assert_cmpuint (begin.materialize_begin.tensor_id, ==, cow_tensor_id (a));
      g_assert_cmpuint (begin.materialize_begin.storage_id, ==, storage_id (a));
      end = only (rec, COW_EVENT_MATERIALIZE_END);
      g_assert_cmpuint (end.op, ==, cases[i].op);
      g_assert_cmpuint (end.aux, ==, COW_MATERIALIZE_STEAL);
      g_assert_cmpuint (end.materialize_end.allocation_id, ==, original);
      g_assert_cmpuint (end.materialize_end.context_id, ==, ctx);
      g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_ALLOCATION_NEW), ==, 0);
      CowTraceEvent freed = only (rec, COW_EVENT_CONTEXT_FREE);
      g_assert_cmpuint (freed.context.context_id, ==, ctx);
      g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_ALLOCATION_FREE), ==, 0);
      unref = only (rec, COW_EVENT_CONTEXT_UNREF);
      g_assert_cmpuint (unref.context.refcount, ==, 0);
      g_assert_cmpuint (allocation_id (a), ==, original);

      /* A second write materializes nothing. */
      test_recorder_clear (rec);
      test_recorder_start (rec);
      g_assert_cmpint (cases[i].fn (a, other), ==, COW_OK);
      test_recorder_stop (rec);
      g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_MATERIALIZE_BEGIN), ==, 0);

      cow_tensor_unref (view);
      cow_tensor_unref (a);
      cow_tensor_unref (b);
      cow_tensor_unref (other);
      test_recorder_free (rec);
    }
}

/* Out-of-place ops report their result as made by the op and never
 * materialize copy-on-write inputs. */
static void
test_ops_events (void)
{
  CowError error = { 0 };
  CowTensor *a = test_tensor_arange_f32 (2, (int64_t[]) { 2, 2 }, 0);
  CowTensor *b = lazy_clone (a);
  TestRecorder *rec = recording ();
  CowTensor *s = cow_tensor_add (a, b, 1, &error);
  test_assert_cow_ok (&error);
  CowTensor *m = cow_tensor_matmul (a, b, &error);
  test_assert_cow_ok (&error);
  CowTensor *c = cow_tensor_clone (b, &error);
  test_assert_cow_ok (&error);
  test_recorder_stop (rec);

  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_MATERIALIZE_BEGIN), ==, 0);
  g_assert_cmpuint (test_recorder_count_op (rec, COW_EVENT_TENSOR_NEW, COW_OP_ADD), ==, 1);
  g_assert_cmpuint (test_recorder_count_op (rec, COW_EVENT_TENSOR_NEW, COW_OP_MATMUL), ==, 1);
  g_assert_cmpuint (test_recorder_count_op (rec, COW_EVENT_TENSOR_NEW, COW_OP_CLONE), ==, 1);
  g_assert_cmpuint (test_recorder_find_id (rec, COW_EVENT_TENSOR_NEW, cow_tensor_id (s))->op,
                    ==, COW_OP_ADD);
  g_assert_cmpuint (test_recorder_find_id (rec, COW_EVENT_TENSOR_NEW, cow_tensor_id (c))->op,
                    ==, COW_OP_CLONE);
  test_assert_tensor_values (m, 2, 3, 6, 11);

  cow_tensor_unref (s);
  cow_tensor_unref (m);
  cow_tensor_unref (c);
  cow_tensor_unref (a);
  cow_tensor_unref (b);
  test_recorder_free (rec);
}

/* A failed copy reports FAILED and keeps the context. */
static void
test_materialize_failed_event (void)
{
  CowError error = { 0 };
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *a = cow_tensor_empty_with_allocator (1, (int64_t[]) { 4 }, COW_DTYPE_F32,
                                       test_allocator_get (alloc), &error);
  test_assert_cow_ok (&error);
  CowTensor *b = lazy_clone (a);
  TestRecorder *rec = recording ();
  test_allocator_fail_next (alloc, 1);
  g_assert_cmpint (cow_tensor_fill_ (b, 1, &error), ==, COW_ERROR_NO_MEMORY);
  test_recorder_stop (rec);
  CowTraceEvent end = only (rec, COW_EVENT_MATERIALIZE_END);
  g_assert_cmpuint (end.aux, ==, COW_MATERIALIZE_FAILED);
  g_assert_cmpuint (end.op, ==, COW_OP_FILL_);
  g_assert_cmpuint (end.materialize_end.context_id, ==, context_id (b));
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_CONTEXT_UNREF), ==, 0);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_ALLOCATION_NEW), ==, 0);
  cow_tensor_unref (a);
  cow_tensor_unref (b);
  test_recorder_free (rec);
  test_allocator_free (alloc);
}

/* ------------------------------------------------------------------ */
/* Names, ranges and marks                                             */
/* ------------------------------------------------------------------ */

/* A name is announced once, before the TENSOR_NAME event using its id. */
static void
test_tensor_names (void)
{
  CowTensor *a = test_tensor_arange_f32 (1, (int64_t[]) { 2 }, 0);
  CowTensor *b = test_tensor_arange_f32 (1, (int64_t[]) { 2 }, 0);
  TestRecorder *rec = recording ();

  /* A name unique to this run, so no earlier sink could have seen it. */
  g_autofree char *name = g_strdup_printf ("weights.fc1.%d", g_test_rand_int_range (0, 1 << 30));
  cow_tensor_set_name (a, name);
  g_assert_cmpstr (cow_tensor_get_name (a), ==, name);
  CowTraceEvent ev = only (rec, COW_EVENT_TENSOR_NAME);
  g_assert_cmpuint (ev.name.tensor_id, ==, cow_tensor_id (a));
  g_assert_cmpuint (ev.name.string_id, !=, 0);
  g_assert_cmpstr (test_recorder_string (rec, ev.name.string_id), ==, name);
  g_assert_cmpuint (test_recorder_string_count (rec, ev.name.string_id), ==, 1);
  g_assert_cmpint (test_recorder_string_position (rec, ev.name.string_id), <=,
                   test_recorder_position (rec, COW_EVENT_TENSOR_NAME, 0));

  /* The same name again: the same id, not announced again. */
  cow_tensor_set_name (b, name);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_TENSOR_NAME), ==, 2);
  CowTraceEvent ev2 = *test_recorder_find (rec, COW_EVENT_TENSOR_NAME, 1);
  g_assert_cmpuint (ev2.name.tensor_id, ==, cow_tensor_id (b));
  g_assert_cmpuint (ev2.name.string_id, ==, ev.name.string_id);
  g_assert_cmpuint (test_recorder_string_count (rec, ev.name.string_id), ==, 1);
  g_assert_cmpuint (test_recorder_n_strings (rec), ==, 1);
  /* The interned copy, not the caller's buffer. */
  g_assert_true (cow_tensor_get_name (a) != name);
  g_assert_true (cow_tensor_get_name (a) == cow_tensor_get_name (b));

  /* A new sink hears the string again before its first use. */
  test_recorder_stop (rec);
  TestRecorder *rec2 = recording ();
  cow_tensor_set_name (a, name);
  test_recorder_stop (rec2);
  CowTraceEvent ev3 = only (rec2, COW_EVENT_TENSOR_NAME);
  g_assert_cmpuint (ev3.name.string_id, ==, ev.name.string_id);
  g_assert_cmpstr (test_recorder_string (rec2, ev.name.string_id), ==, name);
  g_assert_cmpint (test_recorder_string_position (rec2, ev.name.string_id), <=,
                   test_recorder_position (rec2, COW_EVENT_TENSOR_NAME, 0));

  /* NULL clears the name. */
  test_recorder_clear (rec2);
  test_recorder_start (rec2);
  cow_tensor_set_name (a, NULL);
  test_recorder_stop (rec2);
  g_assert_null (cow_tensor_get_name (a));
  CowTraceEvent cleared = only (rec2, COW_EVENT_TENSOR_NAME);
  g_assert_cmpuint (cleared.name.tensor_id, ==, cow_tensor_id (a));
  g_assert_cmpuint (cleared.name.string_id, ==, 0);
  g_assert_cmpuint (test_recorder_n_strings (rec2), ==, 0);

  cow_tensor_unref (a);
  cow_tensor_unref (b);
  test_recorder_free (rec);
  test_recorder_free (rec2);
}

/* A mark names what its buffer holds at the call, even when the buffer
 * is reused for another name (a prefix of the old one, a longer one):
 * each text gets its own id, announced once. */
static void
test_marks_reused_buffer (void)
{
  char buffer[64];
  const int tag = g_test_rand_int_range (0, 1 << 30);
  char texts[4][64];
  g_snprintf (texts[0], sizeof texts[0], "reused-%d-alpha", tag);
  g_snprintf (texts[1], sizeof texts[1], "reused-%d", tag);       /* a prefix */
  g_snprintf (texts[2], sizeof texts[2], "reused-%d-alphabet", tag); /* longer */
  g_snprintf (texts[3], sizeof texts[3], "reused-%d-alpha", tag); /* the first again */
  TestRecorder *rec = recording ();
  for (guint i = 0; i < 4; i++)
    {
      g_strlcpy (buffer, texts[i], sizeof buffer);
      cow_mark (buffer);
      cow_mark (buffer);
    }
  test_recorder_stop (rec);

  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_MARK), ==, 8);
  guint64 ids[8];
  for (guint m = 0; m < 8; m++)
    {
      ids[m] = test_recorder_find (rec, COW_EVENT_MARK, m)->range.string_id;
      g_assert_cmpstr (test_recorder_string (rec, ids[m]), ==, texts[m / 2]);
      g_assert_cmpuint (test_recorder_string_count (rec, ids[m]), ==, 1);
      g_assert_cmpint (test_recorder_string_position (rec, ids[m]), <=,
                       test_recorder_position (rec, COW_EVENT_MARK, m));
    }
  for (guint i = 0; i < 4; i++)
    g_assert_cmpuint (ids[2 * i], ==, ids[2 * i + 1]);
  g_assert_cmpuint (ids[0], !=, ids[2]);
  g_assert_cmpuint (ids[2], !=, ids[4]);
  g_assert_cmpuint (ids[0], !=, ids[4]);
  g_assert_cmpuint (ids[6], ==, ids[0]);
  g_assert_cmpuint (test_recorder_n_strings (rec), ==, 3);
  test_recorder_free (rec);
}

/* Ranges nest: BEGIN names its string and parent, END its range. */
static void
test_ranges_nesting (void)
{
  TestRecorder *rec = recording ();
  uint64_t outer = cow_range_push ("step");
  uint64_t inner = cow_range_push ("fc1");
  cow_mark ("checkpoint");
  cow_range_pop ();
  cow_range_pop ();
  cow_range_pop (); /* none open: no event */
  cow_mark ("after");
  test_recorder_stop (rec);

  g_assert_cmpuint (outer, !=, 0);
  g_assert_cmpuint (inner, !=, 0);
  g_assert_cmpuint (inner, !=, outer);
  g_assert_cmpuint (test_recorder_n_events (rec), ==, 6);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_RANGE_BEGIN), ==, 2);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_RANGE_END), ==, 2);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_MARK), ==, 2);

  CowTraceEvent b0 = *test_recorder_event (rec, 0);
  g_assert_cmpuint (b0.type, ==, COW_EVENT_RANGE_BEGIN);
  g_assert_cmpuint (b0.range.range_id, ==, outer);
  g_assert_cmpuint (b0.range.parent_range_id, ==, 0);
  g_assert_cmpstr (test_recorder_string (rec, b0.range.string_id), ==, "step");
  g_assert_cmpint (test_recorder_string_position (rec, b0.range.string_id), <=, 0);

  CowTraceEvent b1 = *test_recorder_event (rec, 1);
  g_assert_cmpuint (b1.type, ==, COW_EVENT_RANGE_BEGIN);
  g_assert_cmpuint (b1.range.range_id, ==, inner);
  g_assert_cmpuint (b1.range.parent_range_id, ==, outer);
  g_assert_cmpstr (test_recorder_string (rec, b1.range.string_id), ==, "fc1");
  g_assert_cmpint (test_recorder_string_position (rec, b1.range.string_id), <=, 1);

  CowTraceEvent m = *test_recorder_event (rec, 2);
  g_assert_cmpuint (m.type, ==, COW_EVENT_MARK);
  g_assert_cmpuint (m.range.range_id, ==, 0);
  g_assert_cmpstr (test_recorder_string (rec, m.range.string_id), ==, "checkpoint");
  g_assert_cmpint (test_recorder_string_position (rec, m.range.string_id), <=, 2);

  CowTraceEvent e0 = *test_recorder_event (rec, 3);
  g_assert_cmpuint (e0.type, ==, COW_EVENT_RANGE_END);
  g_assert_cmpuint (e0.range.range_id, ==, inner);
  CowTraceEvent e1 = *test_recorder_event (rec, 4);
  g_assert_cmpuint (e1.type, ==, COW_EVENT_RANGE_END);
  g_assert_cmpuint (e1.range.range_id, ==, outer);

  CowTraceEvent m2 = *test_recorder_event (rec, 5);
  g_assert_cmpuint (m2.type, ==, COW_EVENT_MARK);
  g_assert_cmpuint (m2.range.range_id, ==, 0);
  g_assert_cmpuint (m2.range.parent_range_id, ==, 0);
  g_assert_cmpstr (test_recorder_string (rec, m2.range.string_id), ==, "after");

  /* Strings are interned: the same name, the same id, announced once. */
  test_recorder_clear (rec);
  test_recorder_start (rec);
  cow_range_push ("step");
  cow_range_pop ();
  cow_range_push ("step");
  cow_range_pop ();
  test_recorder_stop (rec);
  CowTraceEvent r0 = *test_recorder_find (rec, COW_EVENT_RANGE_BEGIN, 0);
  CowTraceEvent r1 = *test_recorder_find (rec, COW_EVENT_RANGE_BEGIN, 1);
  g_assert_cmpuint (r0.range.string_id, ==, r1.range.string_id);
  g_assert_cmpuint (r0.range.range_id, !=, r1.range.range_id);
  g_assert_cmpuint (test_recorder_string_count (rec, r0.range.string_id), ==, 1);
  test_recorder_free (rec);
}

typedef struct {
  uint64_t range;
  uint32_t tid;
} RangeThread;

static gpointer
range_thread (gpointer data)
{
  RangeThread *rt = data;
  rt->tid = (uint32_t) gettid ();
  rt->range = cow_range_push ("worker");
  cow_range_pop ();
  return NULL;
}

/* Ranges nest per thread: another thread's range has no parent even while
 * this thread has one open. */
static void
test_ranges_per_thread (void)
{
  TestRecorder *rec = recording ();
  uint64_t mine = cow_range_push ("main");
  RangeThread rt = { 0 };
  GThread *thread = g_thread_new ("ranges", range_thread, &rt);
  g_thread_join (thread);
  cow_range_pop ();
  test_recorder_stop (rec);

  g_assert_cmpuint (rt.range, !=, mine);
  CowTraceEvent theirs = *test_recorder_find_id (rec, COW_EVENT_RANGE_BEGIN, rt.range);
  g_assert_cmpuint (theirs.tid, ==, rt.tid);
  g_assert_cmpuint (theirs.range.parent_range_id, ==, 0);
  CowTraceEvent their_end = *test_recorder_find_id (rec, COW_EVENT_RANGE_END, rt.range);
  g_assert_cmpuint (their_end.tid, ==, rt.tid);
  /* This thread's range is still the one its pop closes. */
  CowTraceEvent my_end = *test_recorder_find_id (rec, COW_EVENT_RANGE_END, mine);
  g_assert_cmpuint (my_end.tid, ==, (uint32_t) gettid ());
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_RANGE_END), ==, 2);
  test_recorder_free (rec);
}

/* ------------------------------------------------------------------ */
/* Ids                                                                 */
/* ------------------------------------------------------------------ */

/* Ids are never 0 and never repeat, across object kinds. */
static void
test_ids_unique (void)
{
  TestRecorder *rec = recording ();
  CowTensor *t[16];
  for (int i = 0; i < 16; i++)
    {
      t[i] = test_tensor_arange_f32 (1, (int64_t[]) { 3 }, i);
      if (i % 2)
        {
          CowTensor *c = lazy_clone (t[i - 1]);
          cow_tensor_unref (t[i]);
          t[i] = c;
        }
    }
  cow_range_push ("ids");
  cow_range_pop ();
  for (int i = 0; i < 16; i++)
    cow_tensor_unref (t[i]);
  test_recorder_stop (rec);

  GHashTable *seen = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  static const CowEventType creators[] = {
    COW_EVENT_ALLOCATION_NEW, COW_EVENT_STORAGE_NEW, COW_EVENT_TENSOR_NEW,
    COW_EVENT_CONTEXT_NEW, COW_EVENT_RANGE_BEGIN,
  };
  guint total = 0;
  for (gsize k = 0; k < G_N_ELEMENTS (creators); k++)
    for (guint i = 0;; i++)
      {
        const CowTraceEvent *e = test_recorder_find (rec, creators[k], i);
        if (e == NULL)
          break;
        guint64 id = e->v[0];
        g_assert_cmpuint (id, !=, 0);
        g_assert_false (g_hash_table_contains (seen, &id));
        g_hash_table_add (seen, g_memdup2 (&id, sizeof id));
        total++;
      }
  /* 16 tensors from data + 8 clones; 16 allocations; 24 storages; 8
   * contexts; 1 range. */
  g_assert_cmpuint (total, ==, 16 + 24 + 24 + 8 + 1);
  g_hash_table_unref (seen);
  test_recorder_free (rec);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/trace/event/layout", test_event_layout);
  g_test_add_func ("/trace/event/header", test_event_header);
  g_test_add_func ("/trace/event/header-thread", test_event_header_thread);
  g_test_add_func ("/trace/sink/none", test_sink_none);
  g_test_add_func ("/trace/names", test_names);
  g_test_add_func ("/trace/lifecycle/empty", test_lifecycle_empty);
  g_test_add_func ("/trace/lifecycle/from-data-and-foreign",
                   test_lifecycle_from_data_and_foreign);
  g_test_add_func ("/trace/lifecycle/views", test_lifecycle_views);
  g_test_add_func ("/trace/lifecycle/allocation-free-matches-new",
                   test_lifecycle_allocation_free_matches_new);
  g_test_add_func ("/trace/context/lifecycle", test_context_events);
  g_test_add_func ("/trace/lazy-clone/events", test_lazy_clone_events);
  g_test_add_func ("/trace/lazy-clone/eager", test_lazy_clone_eager_events);
  g_test_add_func ("/trace/materialize/copy-then-steal", test_materialize_events);
  g_test_add_func ("/trace/materialize/failed", test_materialize_failed_event);
  g_test_add_func ("/trace/ops/results-and-reads", test_ops_events);
  g_test_add_func ("/trace/tensor-name", test_tensor_names);
  g_test_add_func ("/trace/marks/reused-buffer", test_marks_reused_buffer);
  g_test_add_func ("/trace/ranges/nesting", test_ranges_nesting);
  g_test_add_func ("/trace/ranges/per-thread", test_ranges_per_thread);
  g_test_add_func ("/trace/ids/unique", test_ids_unique);

  return g_test_run ();
}
