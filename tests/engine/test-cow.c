/* test-cow.c — copy-on-write storage: contexts, lazy clones and
 * materialization.
 *
 * The cases of PyTorch's c10/test/core/impl/cow_test.cpp, re-expressed
 * against this engine's public API, plus the guarantees cow-lazy.h and
 * README.md ("Thread safety") add: views, reads that never materialize,
 * ops that never write their inputs, first writer copies and the last
 * one steals, and bytes freed exactly once. */
#include "test-support.h"

#include <string.h>

static CowTensor *
lazy_clone (CowTensor *tensor)
{
  CowError error = { 0 };
  CowTensor *clone = cow_tensor_lazy_clone (tensor, &error);
  test_assert_cow_ok (&error);
  g_assert_nonnull (clone);
  return clone;
}

static void *
write_ptr (CowTensor *tensor)
{
  CowError error = { 0 };
  void *data = cow_tensor_mutable_data (tensor, &error);
  test_assert_cow_ok (&error);
  g_assert_nonnull (data);
  return data;
}

static void
fill (CowTensor *tensor, double value)
{
  CowError error = { 0 };
  g_assert_cmpint (cow_tensor_fill_ (tensor, value, &error), ==, COW_OK);
  test_assert_cow_ok (&error);
}

static int64_t
context_refcount (const CowTensor *tensor)
{
  return cow_storage_context_refcount (cow_tensor_storage (tensor));
}

static uint64_t
context_id (const CowTensor *tensor)
{
  return cow_storage_context_id (cow_tensor_storage (tensor));
}

/* A 2×3 f32 tensor 0..5 from @alloc (NULL: the CPU allocator). */
static CowTensor *
make_2x3 (TestAllocator *alloc)
{
  CowError error = { 0 };
  const int64_t sizes[] = { 2, 3 };
  CowTensor *t = cow_tensor_empty_with_allocator (
    2, sizes, COW_DTYPE_F32, alloc ? test_allocator_get (alloc) : NULL, &error);
  test_assert_cow_ok (&error);
  g_assert_nonnull (t);
  float *data = write_ptr (t);
  for (int i = 0; i < 6; i++)
    data[i] = (float) i;
  return t;
}

/* ------------------------------------------------------------------ */
/* The context                                                         */
/* ------------------------------------------------------------------ */

/* PyTorch ContextTest.Basic: references come and go; only the last one
 * releases the bytes. */
static void
test_context_refcount (void)
{
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *a = make_2x3 (alloc);

  g_assert_false (cow_tensor_is_cow (a));
  g_assert_cmpint (context_refcount (a), ==, 0);
  g_assert_cmpuint (context_id (a), ==, 0);

  CowTensor *b = lazy_clone (a);
  g_assert_cmpint (context_refcount (a), ==, 2);
  g_assert_cmpint (context_refcount (b), ==, 2);
  g_assert_cmpuint (context_id (a), !=, 0);
  g_assert_cmpuint (context_id (a), ==, context_id (b));

  CowTensor *c = lazy_clone (b);
  g_assert_cmpint (context_refcount (a), ==, 3);
  g_assert_cmpuint (context_id (c), ==, context_id (a));

  /* Views share one storage and count once. */
  CowError error = { 0 };
  CowTensor *v = cow_tensor_slice (b, 1, 0, 2, 1, &error);
  test_assert_cow_ok (&error);
  g_assert_cmpint (context_refcount (a), ==, 3);
  /* Extra references to a tensor do not count either. */
  cow_tensor_ref (c);
  g_assert_cmpint (context_refcount (a), ==, 3);
  cow_tensor_unref (c);
  g_assert_cmpint (context_refcount (a), ==, 3);

  cow_tensor_unref (c);
  g_assert_cmpint (context_refcount (a), ==, 2);
  cow_tensor_unref (b);
  /* The view still holds b's storage. */
  g_assert_cmpint (context_refcount (a), ==, 2);
  g_assert_cmpint (test_allocator_n_frees (alloc), ==, 0);
  cow_tensor_unref (v);
  g_assert_cmpint (context_refcount (a), ==, 1);
  g_assert_true (cow_tensor_is_cow (a));
  g_assert_cmpint (test_allocator_n_frees (alloc), ==, 0);
  test_assert_tensor_values (a, 0, 1, 2, 3, 4, 5);

  cow_tensor_unref (a);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);
  g_assert_cmpint (test_allocator_n_frees (alloc), ==, 1);
  test_allocator_free (alloc);
}

/* PyTorch ContextTest.cow_deleter: whichever sharer goes last frees the
 * bytes, once, in every order. */
static void
test_context_last_reference (void)
{
  static const int orders[6][3] = {
    { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 }, { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 },
  };
  for (int o = 0; o < 6; o++)
    {
      TestAllocator *alloc = test_allocator_new ();
      TestRecorder *rec = test_recorder_new ();
      CowTensor *t[3];
      t[0] = make_2x3 (alloc);
      test_recorder_start (rec);
      t[1] = lazy_clone (t[0]);
      t[2] = lazy_clone (t[1]);
      uint64_t allocation = cow_storage_allocation_id (cow_tensor_storage (t[0]));
      uint64_t ctx = context_id (t[0]);

      for (int i = 0; i < 3; i++)
        {
          g_assert_cmpint (test_allocator_n_frees (alloc), ==, 0);
          if (i < 2)
            g_assert_cmpint (context_refcount (t[orders[o][2]]), ==, 3 - i);
          cow_tensor_unref (t[orders[o][i]]);
        }
      test_recorder_stop (rec);

      g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);
      g_assert_cmpint (test_allocator_n_frees (alloc), ==, 1);
      g_assert_cmpuint (test_recorder_count_id (rec, COW_EVENT_ALLOCATION_FREE, allocation), ==, 1);
      g_assert_cmpuint (test_recorder_count_id (rec, COW_EVENT_CONTEXT_FREE, ctx), ==, 1);
      g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_STORAGE_FREE), ==, 3);
      test_recorder_free (rec);
      test_allocator_free (alloc);
    }
}

/* ------------------------------------------------------------------ */
/* Lazy clone                                                          */
/* ------------------------------------------------------------------ */

/* PyTorch lazy_clone_storage_test.no_context: a plain storage turns
 * copy-on-write in place and shares its bytes with the new storage. */
static void
test_lazy_clone_plain (void)
{
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *a = make_2x3 (alloc);
  uintptr_t address = cow_tensor_data_address (a);
  uint64_t allocation = cow_storage_allocation_id (cow_tensor_storage (a));
  g_assert_false (cow_tensor_is_cow (a));

  CowTensor *b = lazy_clone (a);
  g_assert_true (cow_tensor_is_cow (a));
  g_assert_true (cow_tensor_is_cow (b));
  /* A copy: its own storage, so no aliasing. */
  g_assert_false (cow_tensor_is_alias_of (a, b));
  g_assert_true (cow_tensor_storage (a) != cow_tensor_storage (b));
  g_assert_cmpuint (cow_storage_id (cow_tensor_storage (a)), !=,
                    cow_storage_id (cow_tensor_storage (b)));
  /* But the same bytes, not copied. */
  g_assert_cmpuint (cow_tensor_data_address (a), ==, address);
  g_assert_cmpuint (cow_tensor_data_address (b), ==, address);
  g_assert_true (cow_tensor_const_data (b) == cow_tensor_const_data (a));
  g_assert_cmpuint (cow_storage_allocation_id (cow_tensor_storage (b)), ==, allocation);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);
  g_assert_cmpint (context_refcount (a), ==, 2);
  g_assert_cmpuint (cow_storage_nbytes (cow_tensor_storage (b)), ==, 24);
  test_assert_tensor_sizes (b, 2, ((int64_t[]) { 2, 3 }));
  g_assert_cmpint (cow_tensor_strides (b)[0], ==, 3);
  g_assert_cmpint (cow_tensor_strides (b)[1], ==, 1);
  g_assert_cmpint (cow_tensor_dtype (b), ==, COW_DTYPE_F32);
  test_assert_tensor_values (b, 0, 1, 2, 3, 4, 5);

  cow_tensor_unref (a);
  cow_tensor_unref (b);
  test_allocator_free (alloc);
}

/* PyTorch lazy_clone_storage_test.already_copy_on_write: cloning a CoW
 * storage adds one more sharer of the same context and bytes. */
static void
test_lazy_clone_already_cow (void)
{
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *a = make_2x3 (alloc);
  CowTensor *b = lazy_clone (a);
  uint64_t ctx = context_id (b);
  g_assert_cmpint (context_refcount (b), ==, 2);

  CowTensor *c = lazy_clone (b);
  g_assert_true (cow_tensor_is_cow (c));
  g_assert_false (cow_tensor_is_alias_of (b, c));
  g_assert_cmpuint (context_id (c), ==, ctx);
  g_assert_cmpint (context_refcount (a), ==, 3);
  g_assert_cmpint (context_refcount (c), ==, 3);
  g_assert_cmpuint (cow_tensor_data_address (c), ==, cow_tensor_data_address (a));
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);

  /* Cloning the source again joins the same context too. */
  CowTensor *d = lazy_clone (a);
  g_assert_cmpuint (context_id (d), ==, ctx);
  g_assert_cmpint (context_refcount (a), ==, 4);

  cow_tensor_unref (a);
  cow_tensor_unref (b);
  cow_tensor_unref (c);
  cow_tensor_unref (d);
  test_allocator_free (alloc);
}

/* The storage-level API does the same; foreign storages refuse. */
static void
test_lazy_clone_storage_api (void)
{
  CowError error = { 0 };
  CowStorage *s = cow_storage_new (16, NULL, &error);
  test_assert_cow_ok (&error);
  memcpy (cow_storage_mutable_data (s, &error), "abcdefghijklmnop", 16);
  test_assert_cow_ok (&error);
  const void *original = cow_storage_const_data (s);

  CowStorage *clone = cow_storage_lazy_clone (s, &error);
  test_assert_cow_ok (&error);
  g_assert_nonnull (clone);
  g_assert_true (clone != s);
  g_assert_true (cow_storage_is_cow (s));
  g_assert_true (cow_storage_is_cow (clone));
  g_assert_true (cow_storage_const_data (clone) == original);
  g_assert_cmpuint (cow_storage_nbytes (clone), ==, 16);
  g_assert_cmpint (cow_storage_refcount (clone), ==, 1);
  g_assert_cmpint (cow_storage_context_refcount (s), ==, 2);

  /* PyTorch materialize_test.copy_on_write. */
  char *copy = cow_storage_mutable_data (clone, &error);
  test_assert_cow_ok (&error);
  g_assert_true (copy != original);
  g_assert_true (cow_storage_const_data (s) == original);
  g_assert_cmpmem (copy, 16, original, 16);
  g_assert_false (cow_storage_is_cow (clone));
  cow_storage_unref (clone);
  cow_storage_unref (s);

  /* PyTorch lazy_clone_storage_test.different_context. */
  TestForeign *foreign = test_foreign_new (8);
  CowStorage *f = cow_storage_new_foreign (foreign->data, 8, foreign,
                                           test_foreign_deleter, &error);
  test_assert_cow_ok (&error);
  g_assert_null (cow_storage_lazy_clone (f, &error));
  test_assert_cow_error (&error, COW_ERROR_NOT_SUPPORTED);
  g_assert_false (cow_storage_is_cow (f));
  cow_storage_unref (f);
  g_assert_cmpint (foreign->n_deleted, ==, 1);
  test_foreign_free (foreign);
}

/* Foreign memory cannot be wrapped: the tensor-level lazy clone copies
 * eagerly, says why, and leaves the foreign owner alone. */
static void
test_lazy_clone_foreign (void)
{
  CowError error = { 0 };
  TestForeign *foreign = test_foreign_new (4 * sizeof (float));
  float *values = foreign->data;
  for (int i = 0; i < 4; i++)
    values[i] = (float) (10 + i);
  const int64_t sizes[] = { 4 };
  CowTensor *t = cow_tensor_from_foreign (1, sizes, COW_DTYPE_F32, foreign->data,
                                          foreign, test_foreign_deleter, &error);
  test_assert_cow_ok (&error);
  g_assert_cmpuint (cow_tensor_data_address (t), ==, (uintptr_t) foreign->data);

  TestRecorder *rec = test_recorder_new ();
  test_recorder_start (rec);
  CowTensor *c = lazy_clone (t);
  test_recorder_stop (rec);

  g_assert_cmpuint (cow_tensor_data_address (c), !=, (uintptr_t) foreign->data);
  g_assert_false (cow_tensor_is_cow (t));
  g_assert_false (cow_tensor_is_cow (c));
  g_assert_false (cow_tensor_is_alias_of (t, c));
  test_assert_tensor_values (c, 10, 11, 12, 13);

  const CowTraceEvent *ev = test_recorder_find (rec, COW_EVENT_LAZY_CLONE_EAGER, 0);
  g_assert_nonnull (ev);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_LAZY_CLONE_EAGER), ==, 1);
  g_assert_cmpuint (ev->aux, ==, COW_EAGER_FOREIGN_DATA_PTR);
  g_assert_cmpuint (ev->lazy_clone.source_tensor_id, ==, cow_tensor_id (t));
  g_assert_cmpuint (ev->lazy_clone.result_tensor_id, ==, cow_tensor_id (c));
  g_assert_cmpuint (ev->lazy_clone.context_id_or_nbytes, ==, 4 * sizeof (float));
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_LAZY_CLONE), ==, 0);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_CONTEXT_NEW), ==, 0);

  /* The copy is independent of the foreign bytes. */
  fill (c, 7);
  test_assert_tensor_values (t, 10, 11, 12, 13);
  values[0] = 99;
  test_assert_tensor_values (c, 7, 7, 7, 7);

  cow_tensor_unref (c);
  g_assert_cmpint (foreign->n_deleted, ==, 0);
  cow_tensor_unref (t);
  g_assert_cmpint (foreign->n_deleted, ==, 1);
  test_foreign_free (foreign);
  test_recorder_free (rec);
}

/* A lazy clone of a view keeps the view's layout over a clone of the
 * whole storage. */
static void
test_lazy_clone_of_view (void)
{
  CowError error = { 0 };
  CowTensor *a = make_2x3 (NULL);
  CowTensor *col = cow_tensor_select (a, 1, 1, &error); /* 1, 4 */
  test_assert_cow_ok (&error);
  CowTensor *c = lazy_clone (col);

  test_assert_tensor_sizes (c, 1, ((int64_t[]) { 2 }));
  g_assert_cmpint (cow_tensor_strides (c)[0], ==, cow_tensor_strides (col)[0]);
  g_assert_cmpint (cow_tensor_storage_offset (c), ==, cow_tensor_storage_offset (col));
  g_assert_cmpuint (cow_tensor_data_address (c), ==, cow_tensor_data_address (col));
  g_assert_cmpuint (cow_storage_nbytes (cow_tensor_storage (c)), ==, 24);
  test_assert_tensor_values (c, 1, 4);
  /* The source's storage (shared by a and col) became copy-on-write. */
  g_assert_true (cow_tensor_is_cow (a));
  g_assert_cmpint (context_refcount (a), ==, 2);

  fill (c, 8);
  test_assert_tensor_values (c, 8, 8);
  test_assert_tensor_values (a, 0, 1, 2, 3, 4, 5);
  test_assert_tensor_values (col, 1, 4);

  cow_tensor_unref (c);
  cow_tensor_unref (col);
  cow_tensor_unref (a);
}

/* ------------------------------------------------------------------ */
/* Materialization                                                     */
/* ------------------------------------------------------------------ */

/* PyTorch materialize_test.not_copy_on_write_context. */
static void
test_materialize_not_cow (void)
{
  TestRecorder *rec = test_recorder_new ();
  CowTensor *a = make_2x3 (NULL);
  uintptr_t address = cow_tensor_data_address (a);
  test_recorder_start (rec);
  g_assert_cmpuint ((uintptr_t) write_ptr (a), ==, address);
  fill (a, 1);
  test_recorder_stop (rec);
  g_assert_cmpuint (cow_tensor_data_address (a), ==, address);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_MATERIALIZE_BEGIN), ==, 0);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_MATERIALIZE_END), ==, 0);
  cow_tensor_unref (a);
  test_recorder_free (rec);
}

/* PyTorch materialize_test.copy_on_write_single_reference: the only
 * sharer keeps the bytes without allocating. */
static void
test_materialize_steal (void)
{
  TestAllocator *alloc = test_allocator_new ();
  TestRecorder *rec = test_recorder_new ();
  CowTensor *a = make_2x3 (alloc);
  CowTensor *b = lazy_clone (a);
  uintptr_t address = cow_tensor_data_address (a);
  uint64_t allocation = cow_storage_allocation_id (cow_tensor_storage (a));
  cow_tensor_unref (a);

  g_assert_true (cow_tensor_is_cow (b));
  g_assert_cmpint (context_refcount (b), ==, 1);
  g_assert_cmpuint (cow_tensor_data_address (b), ==, address);

  test_recorder_start (rec);
  g_assert_cmpuint ((uintptr_t) write_ptr (b), ==, address);
  test_recorder_stop (rec);

  g_assert_false (cow_tensor_is_cow (b));
  g_assert_cmpint (context_refcount (b), ==, 0);
  g_assert_cmpuint (context_id (b), ==, 0);
  g_assert_cmpuint (cow_storage_allocation_id (cow_tensor_storage (b)), ==, allocation);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);
  g_assert_cmpint (test_allocator_n_frees (alloc), ==, 0);
  g_assert_cmpuint (test_recorder_count_materialize (rec, COW_MATERIALIZE_STEAL), ==, 1);
  g_assert_cmpuint (test_recorder_count_materialize (rec, COW_MATERIALIZE_COPY), ==, 0);
  test_assert_tensor_values (b, 0, 1, 2, 3, 4, 5);

  cow_tensor_unref (b);
  g_assert_cmpint (test_allocator_n_frees (alloc), ==, 1);
  test_recorder_free (rec);
  test_allocator_free (alloc);
}

/* PyTorch materialize_test.copy_on_write: a shared storage copies; the
 * other sharer keeps the original bytes. */
static void
test_materialize_copy (void)
{
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *a = make_2x3 (alloc);
  uintptr_t original = cow_tensor_data_address (a);
  CowTensor *b = lazy_clone (a);

  float *data = write_ptr (b);
  g_assert_cmpuint ((uintptr_t) data, !=, original);
  g_assert_cmpuint (cow_tensor_data_address (b), ==, (uintptr_t) data);
  g_assert_cmpuint (cow_tensor_data_address (a), ==, original);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 2);
  g_assert_false (cow_tensor_is_cow (b));
  /* The same bytes, copied. */
  g_assert_cmpmem (data, 24, (const void *) original, 24);
  /* a is the context's last sharer now. */
  g_assert_true (cow_tensor_is_cow (a));
  g_assert_cmpint (context_refcount (a), ==, 1);

  data[0] = 42;
  test_assert_tensor_values (b, 42, 1, 2, 3, 4, 5);
  test_assert_tensor_values (a, 0, 1, 2, 3, 4, 5);

  /* Writing a now steals. */
  g_assert_cmpuint ((uintptr_t) write_ptr (a), ==, original);
  g_assert_false (cow_tensor_is_cow (a));
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 2);

  cow_tensor_unref (a);
  cow_tensor_unref (b);
  g_assert_cmpint (test_allocator_n_frees (alloc), ==, 2);
  test_allocator_free (alloc);
}

/* Whichever side writes first copies; the other then steals.  @source_first
 * picks the order. */
static void
check_first_writer_copies (gboolean source_first)
{
  TestAllocator *alloc = test_allocator_new ();
  TestRecorder *rec = test_recorder_new ();
  CowTensor *a = make_2x3 (alloc);
  uintptr_t original = cow_tensor_data_address (a);
  CowTensor *b = lazy_clone (a);
  CowTensor *first = source_first ? a : b;
  CowTensor *second = source_first ? b : a;

  test_recorder_start (rec);
  fill (first, 1);
  g_assert_cmpuint (cow_tensor_data_address (first), !=, original);
  g_assert_cmpuint (cow_tensor_data_address (second), ==, original);
  g_assert_false (cow_tensor_is_cow (first));
  g_assert_true (cow_tensor_is_cow (second));
  test_assert_tensor_filled (first, 1);
  test_assert_tensor_values (second, 0, 1, 2, 3, 4, 5);
  g_assert_cmpuint (test_recorder_count_materialize (rec, COW_MATERIALIZE_COPY), ==, 1);

  fill (second, 2);
  test_recorder_stop (rec);
  g_assert_cmpuint (cow_tensor_data_address (second), ==, original);
  g_assert_false (cow_tensor_is_cow (second));
  test_assert_tensor_filled (first, 1);
  test_assert_tensor_filled (second, 2);
  g_assert_cmpuint (test_recorder_count_materialize (rec, COW_MATERIALIZE_COPY), ==, 1);
  g_assert_cmpuint (test_recorder_count_materialize (rec, COW_MATERIALIZE_STEAL), ==, 1);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 2);

  cow_tensor_unref (a);
  cow_tensor_unref (b);
  test_recorder_free (rec);
  test_allocator_free (alloc);
}

static void
test_materialize_source_writes_first (void)
{
  check_first_writer_copies (TRUE);
}

static void
test_materialize_clone_writes_first (void)
{
  check_first_writer_copies (FALSE);
}

/* Three sharers all writing: two copies, then the last steals. */
static void
test_materialize_three_sharers (void)
{
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *a = make_2x3 (alloc);
  uintptr_t original = cow_tensor_data_address (a);
  CowTensor *b = lazy_clone (a);
  CowTensor *c = lazy_clone (a);
  g_assert_cmpint (context_refcount (a), ==, 3);

  fill (b, 1);
  g_assert_cmpint (context_refcount (a), ==, 2);
  g_assert_cmpint (context_refcount (c), ==, 2);
  fill (c, 2);
  g_assert_cmpint (context_refcount (a), ==, 1);
  fill (a, 3);
  g_assert_cmpuint (cow_tensor_data_address (a), ==, original);
  g_assert_cmpuint (cow_tensor_data_address (b), !=, original);
  g_assert_cmpuint (cow_tensor_data_address (c), !=, original);
  g_assert_cmpuint (cow_tensor_data_address (b), !=, cow_tensor_data_address (c));
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 3);
  test_assert_tensor_filled (a, 3);
  test_assert_tensor_filled (b, 1);
  test_assert_tensor_filled (c, 2);

  /* A materialized storage can be lazily cloned again: a new context. */
  uint64_t old_ctx = cow_storage_context_id (cow_tensor_storage (a));
  g_assert_cmpuint (old_ctx, ==, 0);
  CowTensor *d = lazy_clone (b);
  g_assert_cmpuint (context_id (d), !=, 0);
  g_assert_cmpint (context_refcount (b), ==, 2);
  test_assert_tensor_filled (d, 1);

  cow_tensor_unref (a);
  cow_tensor_unref (b);
  cow_tensor_unref (c);
  cow_tensor_unref (d);
  g_assert_cmpint (test_allocator_n_frees (alloc), ==, 3);
  test_allocator_free (alloc);
}

/* A copy that cannot be made leaves a valid lazy copy (fallible steps
 * before the decrement), and a later write succeeds. */
static void
test_materialize_failure (void)
{
  TestAllocator *alloc = test_allocator_new ();
  TestRecorder *rec = test_recorder_new ();
  CowTensor *a = make_2x3 (alloc);
  uintptr_t original = cow_tensor_data_address (a);
  CowTensor *b = lazy_clone (a);

  test_recorder_start (rec);
  test_allocator_fail_next (alloc, 1);
  CowError error = { 0 };
  g_assert_null (cow_tensor_mutable_data (b, &error));
  test_assert_cow_error (&error, COW_ERROR_NO_MEMORY);
  g_assert_true (cow_tensor_is_cow (b));
  g_assert_cmpint (context_refcount (a), ==, 2);
  g_assert_cmpuint (cow_tensor_data_address (b), ==, original);
  test_assert_tensor_values (b, 0, 1, 2, 3, 4, 5);
  g_assert_cmpuint (test_recorder_count_materialize (rec, COW_MATERIALIZE_FAILED), ==, 1);

  /* Through an op too. */
  test_allocator_fail_next (alloc, 1);
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_fill_ (b, 5, &error), ==, COW_ERROR_NO_MEMORY);
  test_assert_cow_error (&error, COW_ERROR_NO_MEMORY);
  g_assert_true (cow_tensor_is_cow (b));
  g_assert_cmpint (context_refcount (a), ==, 2);
  test_assert_tensor_values (b, 0, 1, 2, 3, 4, 5);
  test_assert_tensor_values (a, 0, 1, 2, 3, 4, 5);

  fill (b, 5);
  test_recorder_stop (rec);
  g_assert_false (cow_tensor_is_cow (b));
  g_assert_cmpint (context_refcount (a), ==, 1);
  test_assert_tensor_filled (b, 5);
  test_assert_tensor_values (a, 0, 1, 2, 3, 4, 5);
  g_assert_cmpuint (test_recorder_count_materialize (rec, COW_MATERIALIZE_COPY), ==, 1);

  cow_tensor_unref (a);
  cow_tensor_unref (b);
  test_recorder_free (rec);
  test_allocator_free (alloc);
}

/* ------------------------------------------------------------------ */
/* Views                                                               */
/* ------------------------------------------------------------------ */

/* Views of a lazy clone share its storage; a write through one view
 * materializes the whole storage for all of them. */
static void
test_views_materialize_whole_storage (void)
{
  CowError error = { 0 };
  TestRecorder *rec = test_recorder_new ();
  CowTensor *a = make_2x3 (NULL);
  uintptr_t original = cow_tensor_data_address (a);
  CowTensor *b = lazy_clone (a);
  CowTensor *row = cow_tensor_select (b, 0, 1, &error); /* 3, 4, 5 */
  test_assert_cow_ok (&error);
  CowTensor *t = cow_tensor_transpose (b, 0, 1, &error);
  test_assert_cow_ok (&error);

  g_assert_true (cow_tensor_is_alias_of (row, b));
  g_assert_true (cow_tensor_is_alias_of (t, b));
  g_assert_false (cow_tensor_is_alias_of (row, a));
  g_assert_true (cow_tensor_is_cow (row));
  g_assert_true (cow_tensor_is_cow (t));
  g_assert_cmpint (context_refcount (a), ==, 2);

  test_recorder_start (rec);
  fill (row, 9);
  test_recorder_stop (rec);

  /* One materialization, of the whole storage, by the view. */
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_MATERIALIZE_BEGIN), ==, 1);
  const CowTraceEvent *begin = test_recorder_find (rec, COW_EVENT_MATERIALIZE_BEGIN, 0);
  g_assert_cmpuint (begin->materialize_begin.tensor_id, ==, cow_tensor_id (row));
  g_assert_cmpuint (begin->materialize_begin.nbytes, ==, 24);
  g_assert_cmpuint (test_recorder_count_materialize (rec, COW_MATERIALIZE_COPY), ==, 1);

  g_assert_false (cow_tensor_is_cow (b));
  g_assert_false (cow_tensor_is_cow (row));
  g_assert_false (cow_tensor_is_cow (t));
  g_assert_cmpuint (cow_tensor_data_address (b), !=, original);
  g_assert_cmpuint (cow_tensor_data_address (row), ==,
                    cow_tensor_data_address (b) + 3 * sizeof (float));
  g_assert_cmpuint (cow_tensor_data_address (t), ==, cow_tensor_data_address (b));
  test_assert_tensor_values (b, 0, 1, 2, 9, 9, 9);
  test_assert_tensor_values (t, 0, 9, 1, 9, 2, 9);
  test_assert_tensor_values (row, 9, 9, 9);
  test_assert_tensor_values (a, 0, 1, 2, 3, 4, 5);
  g_assert_cmpuint (cow_tensor_data_address (a), ==, original);

  /* Later writes through another view need no second materialization. */
  test_recorder_clear (rec);
  test_recorder_start (rec);
  fill (t, 4);
  test_recorder_stop (rec);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_MATERIALIZE_BEGIN), ==, 0);
  test_assert_tensor_filled (b, 4);
  test_assert_tensor_values (a, 0, 1, 2, 3, 4, 5);

  cow_tensor_unref (t);
  cow_tensor_unref (row);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
  test_recorder_free (rec);
}

/* Writing the source's view materializes the source's storage: the
 * clone keeps the original values. */
static void
test_views_of_source (void)
{
  CowError error = { 0 };
  CowTensor *a = make_2x3 (NULL);
  CowTensor *col = cow_tensor_narrow (a, 1, 2, 1, &error); /* 2, 5 */
  test_assert_cow_ok (&error);
  CowTensor *b = lazy_clone (a);
  g_assert_true (cow_tensor_is_cow (col));

  fill (col, -1);
  test_assert_tensor_values (a, 0, 1, -1, 3, 4, -1);
  test_assert_tensor_values (col, -1, -1);
  test_assert_tensor_values (b, 0, 1, 2, 3, 4, 5);
  g_assert_false (cow_tensor_is_cow (a));
  g_assert_false (cow_tensor_is_cow (col));

  cow_tensor_unref (col);
  cow_tensor_unref (a);
  cow_tensor_unref (b);
}

/* ------------------------------------------------------------------ */
/* Reads and ops                                                       */
/* ------------------------------------------------------------------ */

/* Asserts that @a and @b still share their bytes and that nothing
 * materialized while @rec recorded. */
static void
assert_still_shared (TestRecorder *rec, CowTensor *a, CowTensor *b,
                     uintptr_t original)
{
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_MATERIALIZE_BEGIN), ==, 0);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_MATERIALIZE_END), ==, 0);
  g_assert_true (cow_tensor_is_cow (a));
  g_assert_true (cow_tensor_is_cow (b));
  g_assert_cmpint (context_refcount (a), ==, 2);
  g_assert_cmpuint (cow_tensor_data_address (a), ==, original);
  g_assert_cmpuint (cow_tensor_data_address (b), ==, original);
  test_assert_tensor_values (a, 0, 1, 2, 3, 4, 5);
  test_assert_tensor_values (b, 0, 1, 2, 3, 4, 5);
}

/* const_data, read_elements, get_f64, item and views only read. */
static void
test_read_never_materializes (void)
{
  CowError error = { 0 };
  TestRecorder *rec = test_recorder_new ();
  CowTensor *a = make_2x3 (NULL);
  uintptr_t original = cow_tensor_data_address (a);
  CowTensor *b = lazy_clone (a);

  test_recorder_start (rec);
  const float *p = cow_tensor_const_data (b);
  g_assert_cmpuint ((uintptr_t) p, ==, original);
  g_assert_cmpfloat (p[4], ==, 4);
  g_assert_true (cow_storage_const_data (cow_tensor_storage (a)) == (const void *) original);

  float out[6];
  g_assert_cmpint (cow_tensor_read_elements (b, out, sizeof out, &error), ==, COW_OK);
  test_assert_cow_ok (&error);
  for (int i = 0; i < 6; i++)
    g_assert_cmpfloat (out[i], ==, i);
  double v;
  g_assert_cmpint (cow_tensor_get_f64 (a, (int64_t[]) { 1, 2 }, &v, &error), ==, COW_OK);
  g_assert_cmpfloat (v, ==, 5);

  CowTensor *t = cow_tensor_transpose (b, 0, 1, &error);
  test_assert_cow_ok (&error);
  CowTensor *e = cow_tensor_select (t, 0, 2, &error);
  test_assert_cow_ok (&error);
  CowTensor *one = cow_tensor_select (e, 0, 1, &error); /* b[1][2] */
  test_assert_cow_ok (&error);
  g_assert_cmpint (cow_tensor_item (one, &v, &error), ==, COW_OK);
  g_assert_cmpfloat (v, ==, 5);
  test_assert_tensor_values (t, 0, 3, 1, 4, 2, 5);
  test_recorder_stop (rec);

  assert_still_shared (rec, a, b, original);
  cow_tensor_unref (one);
  cow_tensor_unref (e);
  cow_tensor_unref (t);
  cow_tensor_unref (a);
  cow_tensor_unref (b);
  test_recorder_free (rec);
}

/* Ops that read copy-on-write inputs leave them shared and unchanged
 * (PyTorch #97856: writes through pointers from const access). */
static void
test_ops_read_inputs (void)
{
  CowError error = { 0 };
  TestRecorder *rec = test_recorder_new ();
  CowTensor *a = make_2x3 (NULL);
  uintptr_t original = cow_tensor_data_address (a);
  CowTensor *b = lazy_clone (a);

  test_recorder_start (rec);
  CowTensor *sum = cow_tensor_add (a, b, 1.0, &error);
  test_assert_cow_ok (&error);
  test_assert_tensor_values (sum, 0, 2, 4, 6, 8, 10);
  CowTensor *prod = cow_tensor_mul (b, a, &error);
  test_assert_cow_ok (&error);
  test_assert_tensor_values (prod, 0, 1, 4, 9, 16, 25);
  CowTensor *total = cow_tensor_sum (b, &error);
  test_assert_cow_ok (&error);
  test_assert_tensor_values (total, 15);
  CowTensor *bt = cow_tensor_transpose (b, 0, 1, &error);
  test_assert_cow_ok (&error);
  CowTensor *mm = cow_tensor_matmul (a, bt, &error); /* a × aᵀ */
  test_assert_cow_ok (&error);
  test_assert_tensor_values (mm, 5, 14, 14, 50);
  CowTensor *contig = cow_tensor_contiguous (bt, &error);
  test_assert_cow_ok (&error);
  test_assert_tensor_values (contig, 0, 3, 1, 4, 2, 5);
  CowTensor *cl = cow_tensor_clone (b, &error);
  test_assert_cow_ok (&error);
  g_assert_false (cow_tensor_is_alias_of (cl, b));

  /* In-place ops and copy_ write only their destination. */
  CowTensor *dst = cow_tensor_zeros (2, (int64_t[]) { 2, 3 }, COW_DTYPE_F32, &error);
  test_assert_cow_ok (&error);
  g_assert_cmpint (cow_tensor_add_ (dst, b, 2.0, &error), ==, COW_OK);
  g_assert_cmpint (cow_tensor_mul_ (dst, a, &error), ==, COW_OK);
  test_assert_tensor_values (dst, 0, 2, 8, 18, 32, 50);
  g_assert_cmpint (cow_tensor_copy_ (dst, b, &error), ==, COW_OK);
  test_assert_tensor_values (dst, 0, 1, 2, 3, 4, 5);
  /* Broadcast: a row of b into every row. */
  CowTensor *row = cow_tensor_select (b, 0, 1, &error);
  test_assert_cow_ok (&error);
  g_assert_cmpint (cow_tensor_copy_ (dst, row, &error), ==, COW_OK);
  test_assert_tensor_values (dst, 3, 4, 5, 3, 4, 5);
  test_recorder_stop (rec);

  assert_still_shared (rec, a, b, original);
  CowTensor *made[] = { sum, prod, total, bt, mm, contig, cl, dst, row };
  for (gsize i = 0; i < G_N_ELEMENTS (made); i++)
    cow_tensor_unref (made[i]);
  cow_tensor_unref (a);
  cow_tensor_unref (b);
  test_recorder_free (rec);
}

/* An in-place op on a lazy clone that reads its sibling: the writer
 * materializes, the sibling stays unchanged. */
static void
test_ops_write_clone_reading_source (void)
{
  CowError error = { 0 };
  CowTensor *a = make_2x3 (NULL);
  uintptr_t original = cow_tensor_data_address (a);
  CowTensor *b = lazy_clone (a);

  g_assert_cmpint (cow_tensor_add_ (b, a, 10.0, &error), ==, COW_OK);
  test_assert_cow_ok (&error);
  test_assert_tensor_values (b, 0, 11, 22, 33, 44, 55);
  test_assert_tensor_values (a, 0, 1, 2, 3, 4, 5);
  g_assert_cmpuint (cow_tensor_data_address (a), ==, original);
  g_assert_false (cow_tensor_is_cow (b));

  /* And the other way round, the source reading a clone. */
  CowTensor *c = lazy_clone (a);
  g_assert_cmpint (cow_tensor_mul_ (a, c, &error), ==, COW_OK);
  test_assert_tensor_values (a, 0, 1, 4, 9, 16, 25);
  test_assert_tensor_values (c, 0, 1, 2, 3, 4, 5);

  CowTensor *d = lazy_clone (c);
  g_assert_cmpint (cow_tensor_copy_ (d, b, &error), ==, COW_OK);
  test_assert_tensor_values (d, 0, 11, 22, 33, 44, 55);
  test_assert_tensor_values (c, 0, 1, 2, 3, 4, 5);
  g_assert_cmpint (cow_tensor_scale_ (c, 2.0, &error), ==, COW_OK);
  test_assert_tensor_values (c, 0, 2, 4, 6, 8, 10);
  test_assert_tensor_values (d, 0, 11, 22, 33, 44, 55);

  cow_tensor_unref (a);
  cow_tensor_unref (b);
  cow_tensor_unref (c);
  cow_tensor_unref (d);
}

/* ------------------------------------------------------------------ */
/* Freeing                                                             */
/* ------------------------------------------------------------------ */

/* Every allocation is freed exactly once, whether it was shared to the
 * end, copied from or stolen. */
static void
test_free_once (void)
{
  TestAllocator *alloc = test_allocator_new ();
  TestRecorder *rec = test_recorder_new ();
  test_recorder_start (rec);

  /* Shared to the end, with views. */
  CowError error = { 0 };
  CowTensor *a = make_2x3 (alloc);
  uint64_t allocation = cow_storage_allocation_id (cow_tensor_storage (a));
  CowTensor *b = lazy_clone (a);
  CowTensor *c = lazy_clone (b);
  CowTensor *v = cow_tensor_transpose (c, 0, 1, &error);
  test_assert_cow_ok (&error);
  cow_tensor_unref (c);
  cow_tensor_unref (a);
  cow_tensor_unref (b);
  g_assert_cmpint (test_allocator_n_frees (alloc), ==, 0);
  g_assert_cmpuint (test_recorder_count_id (rec, COW_EVENT_ALLOCATION_FREE, allocation), ==, 0);
  cow_tensor_unref (v);
  g_assert_cmpint (test_allocator_n_frees (alloc), ==, 1);
  g_assert_cmpuint (test_recorder_count_id (rec, COW_EVENT_ALLOCATION_FREE, allocation), ==, 1);

  /* One copy, one steal: two allocations, each freed once. */
  a = make_2x3 (alloc);
  b = lazy_clone (a);
  fill (b, 1);
  fill (a, 2);
  cow_tensor_unref (a);
  cow_tensor_unref (b);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 3);
  g_assert_cmpint (test_allocator_n_frees (alloc), ==, 3);

  /* A copy, then the source freed while its sibling is still lazy. */
  a = make_2x3 (alloc);
  b = lazy_clone (a);
  c = lazy_clone (a);
  fill (b, 1);
  cow_tensor_unref (a);
  g_assert_cmpint (test_allocator_n_live (alloc), ==, 2);
  cow_tensor_unref (c);
  g_assert_cmpint (test_allocator_n_live (alloc), ==, 1);
  cow_tensor_unref (b);
  test_recorder_stop (rec);

  g_assert_cmpint (test_allocator_n_live (alloc), ==, 0);
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_ALLOCATION_FREE), ==,
                    test_recorder_count (rec, COW_EVENT_ALLOCATION_NEW));
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_CONTEXT_FREE), ==,
                    test_recorder_count (rec, COW_EVENT_CONTEXT_NEW));
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_STORAGE_FREE), ==,
                    test_recorder_count (rec, COW_EVENT_STORAGE_NEW));
  g_assert_cmpuint (test_recorder_count (rec, COW_EVENT_TENSOR_FREE), ==,
                    test_recorder_count (rec, COW_EVENT_TENSOR_NEW));
  test_recorder_free (rec);
  test_allocator_free (alloc);
}

/* Foreign bytes copied eagerly by a lazy clone are freed once, by their
 * own deleter, and the copy by the engine. */
static void
test_free_foreign_once (void)
{
  CowError error = { 0 };
  TestForeign *foreign = test_foreign_new (16);
  CowTensor *t = cow_tensor_from_foreign (1, (int64_t[]) { 4 }, COW_DTYPE_I32,
                                          foreign->data, foreign,
                                          test_foreign_deleter, &error);
  test_assert_cow_ok (&error);
  CowTensor *v = cow_tensor_slice (t, 0, 1, 3, 1, &error);
  test_assert_cow_ok (&error);
  CowTensor *c1 = lazy_clone (t);
  CowTensor *c2 = lazy_clone (v);
  CowTensor *c3 = lazy_clone (c1); /* an engine copy: truly lazy */
  g_assert_true (cow_tensor_is_cow (c3));
  cow_tensor_unref (t);
  g_assert_cmpint (foreign->n_deleted, ==, 0);
  cow_tensor_unref (v);
  g_assert_cmpint (foreign->n_deleted, ==, 1);
  cow_tensor_unref (c1);
  cow_tensor_unref (c2);
  cow_tensor_unref (c3);
  g_assert_cmpint (foreign->n_deleted, ==, 1);
  test_foreign_free (foreign);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/cow/context/refcount", test_context_refcount);
  g_test_add_func ("/cow/context/last-reference", test_context_last_reference);
  g_test_add_func ("/cow/lazy-clone/plain", test_lazy_clone_plain);
  g_test_add_func ("/cow/lazy-clone/already-cow", test_lazy_clone_already_cow);
  g_test_add_func ("/cow/lazy-clone/storage-api", test_lazy_clone_storage_api);
  g_test_add_func ("/cow/lazy-clone/foreign-eager", test_lazy_clone_foreign);
  g_test_add_func ("/cow/lazy-clone/of-view", test_lazy_clone_of_view);
  g_test_add_func ("/cow/materialize/not-cow", test_materialize_not_cow);
  g_test_add_func ("/cow/materialize/steal-unique", test_materialize_steal);
  g_test_add_func ("/cow/materialize/copy-shared", test_materialize_copy);
  g_test_add_func ("/cow/materialize/source-writes-first",
                   test_materialize_source_writes_first);
  g_test_add_func ("/cow/materialize/clone-writes-first",
                   test_materialize_clone_writes_first);
  g_test_add_func ("/cow/materialize/three-sharers", test_materialize_three_sharers);
  g_test_add_func ("/cow/materialize/failure-keeps-lazy-copy", test_materialize_failure);
  g_test_add_func ("/cow/views/materialize-whole-storage",
                   test_views_materialize_whole_storage);
  g_test_add_func ("/cow/views/of-source", test_views_of_source);
  g_test_add_func ("/cow/read/never-materializes", test_read_never_materializes);
  g_test_add_func ("/cow/ops/read-inputs-not-written", test_ops_read_inputs);
  g_test_add_func ("/cow/ops/write-clone-reading-sibling",
                   test_ops_write_clone_reading_source);
  g_test_add_func ("/cow/free/once", test_free_once);
  g_test_add_func ("/cow/free/foreign-once", test_free_foreign_once);

  return g_test_run ();
}
