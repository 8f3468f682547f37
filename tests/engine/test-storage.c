/* test-storage.c — storages: the CPU allocator, reference counting,
 * foreign memory, custom allocators and the introspection functions. */
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "cowtensor.h"
#include "test-support.h"


#define TWO_MIB ((size_t) 2 << 20)

/* ------------------------------------------------------------------ */
/* A counting allocator written for these tests.                      */
/* ------------------------------------------------------------------ */

/* Every block carries a header in front of the data that points back at
 * its allocator, so the deleter (which only gets the context, i.e. the
 * data) can count frees per allocator. */
#define HEADER_BYTES 64

typedef struct {
  CowAllocator base; /* first: the engine passes &base back as `self` */
  gint n_allocs;
  gint n_copies;
  gint n_frees;
  gsize bytes_allocated;
  gsize bytes_copied;
} CountingAllocator;

static void
counting_free (void *context)
{
  char *block = (char *) context - HEADER_BYTES;
  CountingAllocator *self;
  memcpy (&self, block, sizeof self);
  g_atomic_int_inc (&self->n_frees);
  g_free (block);
}

static CowStatus
counting_allocate (CowAllocator *allocator, size_t nbytes, CowDataPtr *out,
                   CowError *error)
{
  CountingAllocator *self = (CountingAllocator *) allocator;
  (void) error;
  char *block = g_malloc0 (HEADER_BYTES + nbytes);
  memcpy (block, &self, sizeof self);
  g_atomic_int_inc (&self->n_allocs);
  self->bytes_allocated += nbytes;
  void *data = block + HEADER_BYTES;
  *out = (CowDataPtr) { .data = data, .context = data, .deleter = counting_free };
  return COW_OK;
}

static CowStatus
counting_copy (CowAllocator *allocator, void *dst, const void *src,
               size_t nbytes, CowError *error)
{
  CountingAllocator *self = (CountingAllocator *) allocator;
  (void) error;
  g_atomic_int_inc (&self->n_copies);
  self->bytes_copied += nbytes;
  if (nbytes > 0)
    memcpy (dst, src, nbytes);
  return COW_OK;
}

static bool
counting_is_simple (CowAllocator *allocator, const CowDataPtr *ptr)
{
  (void) allocator;
  return ptr->context == ptr->data && ptr->deleter == counting_free;
}

static void
counting_init (CountingAllocator *self)
{
  memset (self, 0, sizeof *self);
  self->base.name = "test-counting";
  self->base.device_type = COW_DEVICE_CPU;
  self->base.device_index = 0;
  self->base.allocate = counting_allocate;
  self->base.copy_data = counting_copy;
  self->base.is_simple_data_ptr = counting_is_simple;
}

/* A foreign-memory deleter that counts its runs and remembers its
 * context. */
typedef struct {
  gint runs;
  void *last_context;
  void *to_free;
} DeleterLog;

static void
logging_deleter (void *context)
{
  DeleterLog *log = context;
  log->runs++;
  log->last_context = context;
  g_free (log->to_free);
  log->to_free = NULL;
}

/* ------------------------------------------------------------------ */
/* The CPU allocator                                                   */
/* ------------------------------------------------------------------ */

static void
test_cpu_allocator_small_blocks_are_64_byte_aligned (void)
{
  CowAllocator *cpu = cow_cpu_allocator ();
  const size_t sizes[] = { 0, 1, 3, 8, 63, 64, 65, 100, 1000, 4097, 65536 + 7,
                           TWO_MIB - 1 };

  g_assert_nonnull (cpu);
  g_assert_cmpint (COW_CPU_ALIGNMENT, ==, 64);
  g_assert_cmpint (cpu->device_type, ==, COW_DEVICE_CPU);
  for (gsize i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      CowError err = { 0 };
      CowDataPtr ptr = { 0 };
      g_assert_cmpint (cpu->allocate (cpu, sizes[i], &ptr, &err), ==, COW_OK);
      test_assert_cow_ok (&err);
      g_assert_nonnull (ptr.data);
      g_assert_cmpuint ((uintptr_t) ptr.data % COW_CPU_ALIGNMENT, ==, 0);
      /* The whole block is usable (ASan checks the write). */
      if (sizes[i] > 0)
        memset (ptr.data, 0xab, sizes[i]);
      g_assert_true (cpu->is_simple_data_ptr (cpu, &ptr));
      g_assert_nonnull (ptr.deleter);
      ptr.deleter (ptr.context);
    }
}

static void
test_cpu_allocator_huge_blocks_are_2mib_aligned (void)
{
  CowAllocator *cpu = cow_cpu_allocator ();
  const size_t sizes[] = { TWO_MIB, TWO_MIB + 1, 5 * TWO_MIB / 2, 3 * TWO_MIB };

  for (gsize i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      CowError err = { 0 };
      CowDataPtr ptr = { 0 };
      g_assert_cmpint (cpu->allocate (cpu, sizes[i], &ptr, &err), ==, COW_OK);
      g_assert_nonnull (ptr.data);
      g_assert_cmpuint ((uintptr_t) ptr.data % TWO_MIB, ==, 0);
      ((char *) ptr.data)[0] = 1;
      ((char *) ptr.data)[sizes[i] - 1] = 1;
      ptr.deleter (ptr.context);
    }
}

static void
test_cpu_allocator_storages_and_tensors_are_aligned (void)
{
  CowError err = { 0 };
  CowStorage *small = cow_storage_new (24, NULL, &err);
  CowStorage *big = cow_storage_new (TWO_MIB, NULL, &err);
  int64_t sizes[] = { 3, 5 };
  CowTensor *t = cow_tensor_empty (2, sizes, COW_DTYPE_F64, &err);
  int64_t big_sizes[] = { 1 << 20 };
  CowTensor *tb = cow_tensor_zeros (1, big_sizes, COW_DTYPE_F32, &err); /* 4 MiB */

  test_assert_cow_ok (&err);
  g_assert_cmpuint ((uintptr_t) cow_storage_const_data (small) % 64, ==, 0);
  g_assert_cmpuint ((uintptr_t) cow_storage_const_data (big) % TWO_MIB, ==, 0);
  g_assert_cmpuint (cow_tensor_data_address (t) % 64, ==, 0);
  g_assert_cmpuint (cow_tensor_data_address (tb) % TWO_MIB, ==, 0);
  g_assert_cmpuint (cow_storage_nbytes (cow_tensor_storage (tb)), ==, 4 * (1 << 20));

  cow_tensor_unref (tb);
  cow_tensor_unref (t);
  cow_storage_unref (big);
  cow_storage_unref (small);
}

static void
test_cpu_allocator_copy_data_copies_bytes (void)
{
  CowAllocator *cpu = cow_cpu_allocator ();
  CowError err = { 0 };
  CowDataPtr a = { 0 }, b = { 0 };
  unsigned char expected[300];

  g_assert_cmpint (cpu->allocate (cpu, sizeof expected, &a, &err), ==, COW_OK);
  g_assert_cmpint (cpu->allocate (cpu, sizeof expected, &b, &err), ==, COW_OK);
  for (gsize i = 0; i < sizeof expected; i++)
    expected[i] = (unsigned char) (i * 7 + 3);
  memcpy (a.data, expected, sizeof expected);
  memset (b.data, 0, sizeof expected);
  g_assert_cmpint (cpu->copy_data (cpu, b.data, a.data, sizeof expected, &err), ==, COW_OK);
  g_assert_cmpmem (b.data, sizeof expected, expected, sizeof expected);
  /* Zero bytes is a no-op, not an error. */
  g_assert_cmpint (cpu->copy_data (cpu, b.data, a.data, 0, &err), ==, COW_OK);
  a.deleter (a.context);
  b.deleter (b.context);
}

static void
test_cpu_allocator_simple_data_ptr (void)
{
  CowAllocator *cpu = cow_cpu_allocator ();
  CowDataPtr ptr = { 0 };
  char other;

  g_assert_cmpint (cpu->allocate (cpu, 16, &ptr, NULL), ==, COW_OK);
  g_assert_true (cpu->is_simple_data_ptr (cpu, &ptr));

  /* A data pointer wrapped with another context is not simple. */
  CowDataPtr wrapped = ptr;
  wrapped.context = &other;
  g_assert_false (cpu->is_simple_data_ptr (cpu, &wrapped));
  /* Nor is one with a deleter the allocator does not know. */
  CowDataPtr foreign = ptr;
  foreign.deleter = logging_deleter;
  g_assert_false (cpu->is_simple_data_ptr (cpu, &foreign));

  ptr.deleter (ptr.context);
}

/* ------------------------------------------------------------------ */
/* Storages                                                            */
/* ------------------------------------------------------------------ */

static void
test_storage_new_has_one_reference (void)
{
  CowError err = { 0 };
  CowStorage *s = cow_storage_new (100, NULL, &err);

  test_assert_cow_ok (&err);
  g_assert_nonnull (s);
  g_assert_cmpuint (cow_storage_nbytes (s), ==, 100);
  g_assert_cmpint (cow_storage_refcount (s), ==, 1);
  g_assert_nonnull (cow_storage_const_data (s));
  g_assert_cmpuint (cow_storage_id (s), !=, 0);
  g_assert_cmpuint (cow_storage_allocation_id (s), !=, 0);
  g_assert_false (cow_storage_is_cow (s));
  g_assert_cmpint (cow_storage_context_refcount (s), ==, 0);
  g_assert_cmpuint (cow_storage_context_id (s), ==, 0);

  /* mutable_data of a plain storage is its data, nothing is copied. */
  void *data = cow_storage_mutable_data (s, &err);
  g_assert_true (data == cow_storage_const_data (s));
  memset (data, 0x5a, 100);

  cow_storage_unref (s);
}

static void
test_storage_ref_unref_counts (void)
{
  CowStorage *s = cow_storage_new (8, NULL, NULL);

  g_assert_nonnull (s);
  g_assert_true (cow_storage_ref (s) == s);
  g_assert_cmpint (cow_storage_refcount (s), ==, 2);
  cow_storage_ref (s);
  g_assert_cmpint (cow_storage_refcount (s), ==, 3);
  cow_storage_unref (s);
  g_assert_cmpint (cow_storage_refcount (s), ==, 2);
  cow_storage_unref (s);
  g_assert_cmpint (cow_storage_refcount (s), ==, 1);
  cow_storage_unref (s);

  /* NULL is ignored. */
  g_assert_null (cow_storage_ref (NULL));
  cow_storage_unref (NULL);
}

static void
test_storage_zero_bytes (void)
{
  CowError err = { 0 };
  CowStorage *s = cow_storage_new (0, NULL, &err);
  int64_t sizes[] = { 0, 4 };
  CowTensor *t = cow_tensor_empty (2, sizes, COW_DTYPE_F32, &err);

  test_assert_cow_ok (&err);
  g_assert_nonnull (s);
  g_assert_cmpuint (cow_storage_nbytes (s), ==, 0);
  g_assert_nonnull (t);
  g_assert_cmpint (cow_tensor_numel (t), ==, 0);
  g_assert_cmpuint (cow_tensor_nbytes (t), ==, 0);
  g_assert_cmpuint (cow_storage_nbytes (cow_tensor_storage (t)), ==, 0);
  cow_tensor_unref (t);
  cow_storage_unref (s);
}

static void
test_storage_tensors_hold_references (void)
{
  CowError err = { 0 };
  CowStorage *s = cow_storage_new (6 * sizeof (float), NULL, &err);
  int64_t sizes[] = { 2, 3 };
  CowTensor *t = cow_tensor_new_on_storage (s, 2, sizes, COW_DTYPE_F32, &err);

  test_assert_cow_ok (&err);
  g_assert_nonnull (t);
  g_assert_true (cow_tensor_storage (t) == s);
  g_assert_cmpint (cow_storage_refcount (s), ==, 2);
  g_assert_cmpuint (cow_tensor_data_address (t), ==, (uintptr_t) cow_storage_const_data (s));

  CowTensor *v = cow_tensor_transpose (t, 0, 1, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_storage_refcount (s), ==, 3);

  /* Dropping our own reference: the tensors keep the storage alive. */
  cow_storage_unref (s);
  g_assert_cmpint (cow_storage_refcount (cow_tensor_storage (t)), ==, 2);
  cow_tensor_unref (t);
  g_assert_cmpint (cow_storage_refcount (cow_tensor_storage (v)), ==, 1);
  /* The storage still works through the last view. */
  g_assert_cmpint (cow_tensor_fill_ (v, 1.5, &err), ==, COW_OK);
  test_assert_tensor_values (v, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5);
  cow_tensor_unref (v);
}

static void
test_storage_new_on_storage_shares_bytes (void)
{
  CowError err = { 0 };
  CowStorage *s = cow_storage_new (4 * sizeof (int32_t), NULL, &err);
  int32_t *bytes = cow_storage_mutable_data (s, &err);
  for (int i = 0; i < 4; i++)
    bytes[i] = 10 * (i + 1);
  int64_t sizes[] = { 2, 2 };
  CowTensor *t = cow_tensor_new_on_storage (s, 2, sizes, COW_DTYPE_I32, &err);

  test_assert_cow_ok (&err);
  test_assert_tensor_values (t, 10, 20, 30, 40);
  bytes[3] = -7;
  test_assert_tensor_values (t, 10, 20, 30, -7);
  /* A shape smaller than the storage is fine too. */
  int64_t small[] = { 3 };
  CowTensor *u = cow_tensor_new_on_storage (s, 1, small, COW_DTYPE_I32, &err);
  test_assert_cow_ok (&err);
  g_assert_true (cow_tensor_is_alias_of (t, u));
  test_assert_tensor_values (u, 10, 20, 30);
  cow_tensor_unref (u);
  cow_tensor_unref (t);
  cow_storage_unref (s);
}

static void
test_storage_ids_are_unique (void)
{
  enum { N = 200 };
  CowStorage *storages[N];
  GHashTable *ids = g_hash_table_new (g_int64_hash, g_int64_equal);
  GHashTable *allocation_ids = g_hash_table_new (g_int64_hash, g_int64_equal);
  guint64 keys[N], allocation_keys[N];

  for (int i = 0; i < N; i++)
    {
      storages[i] = cow_storage_new ((size_t) i, NULL, NULL);
      g_assert_nonnull (storages[i]);
      keys[i] = cow_storage_id (storages[i]);
      allocation_keys[i] = cow_storage_allocation_id (storages[i]);
      g_assert_cmpuint (keys[i], !=, 0);
      g_assert_cmpuint (allocation_keys[i], !=, 0);
      g_assert_false (g_hash_table_contains (ids, &keys[i]));
      g_assert_false (g_hash_table_contains (allocation_ids, &allocation_keys[i]));
      g_hash_table_add (ids, &keys[i]);
      g_hash_table_add (allocation_ids, &allocation_keys[i]);
    }
  /* Ids are not reused after a free either. */
  cow_storage_unref (storages[0]);
  CowStorage *again = cow_storage_new (0, NULL, NULL);
  guint64 again_id = cow_storage_id (again);
  g_assert_false (g_hash_table_contains (ids, &again_id));
  cow_storage_unref (again);
  for (int i = 1; i < N; i++)
    cow_storage_unref (storages[i]);
  g_hash_table_unref (allocation_ids);
  g_hash_table_unref (ids);
}

/* ------------------------------------------------------------------ */
/* Foreign memory                                                      */
/* ------------------------------------------------------------------ */

static void
test_foreign_storage_deleter_runs_once_at_last_unref (void)
{
  CowError err = { 0 };
  DeleterLog log = { 0 };
  log.to_free = g_malloc0 (32);
  CowStorage *s = cow_storage_new_foreign (log.to_free, 32, &log, logging_deleter, &err);

  test_assert_cow_ok (&err);
  g_assert_nonnull (s);
  g_assert_cmpuint (cow_storage_nbytes (s), ==, 32);
  g_assert_true (cow_storage_const_data (s) == log.to_free);
  g_assert_false (cow_storage_is_cow (s));

  cow_storage_ref (s);
  cow_storage_ref (s);
  cow_storage_unref (s);
  cow_storage_unref (s);
  g_assert_cmpint (log.runs, ==, 0);
  cow_storage_unref (s);
  g_assert_cmpint (log.runs, ==, 1);
  g_assert_true (log.last_context == &log);
}

static void
test_foreign_tensor_wraps_without_copy (void)
{
  CowError err = { 0 };
  DeleterLog log = { 0 };
  double *data = g_new (double, 6);
  for (int i = 0; i < 6; i++)
    data[i] = i + 0.5;
  log.to_free = data;
  int64_t sizes[] = { 2, 3 };
  CowTensor *t = cow_tensor_from_foreign (2, sizes, COW_DTYPE_F64, data, &log,
                                          logging_deleter, &err);

  test_assert_cow_ok (&err);
  g_assert_nonnull (t);
  g_assert_cmpuint (cow_tensor_data_address (t), ==, (uintptr_t) data);
  g_assert_cmpuint (cow_storage_nbytes (cow_tensor_storage (t)), ==, 6 * sizeof (double));
  g_assert_true (cow_tensor_is_contiguous (t));
  test_assert_tensor_values (t, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5);

  /* No copy: writes to the foreign bytes show, and writes through the
   * tensor land in them. */
  data[1] = -1;
  test_assert_tensor_values (t, 0.5, -1, 2.5, 3.5, 4.5, 5.5);
  g_assert_cmpint (cow_tensor_fill_ (t, 9, &err), ==, COW_OK);
  g_assert_cmpfloat (data[5], ==, 9);
  g_assert_cmpint (log.runs, ==, 0);

  cow_tensor_unref (t);
  g_assert_cmpint (log.runs, ==, 1);
}

static void
test_foreign_tensor_deleter_waits_for_last_view (void)
{
  CowError err = { 0 };
  DeleterLog log = { 0 };
  float *data = g_new0 (float, 12);
  log.to_free = data;
  int64_t sizes[] = { 3, 4 };
  CowTensor *t = cow_tensor_from_foreign (2, sizes, COW_DTYPE_F32, data, &log,
                                          logging_deleter, &err);
  CowTensor *v1 = cow_tensor_transpose (t, 0, 1, &err);
  CowTensor *v2 = cow_tensor_select (t, 0, 1, &err);

  test_assert_cow_ok (&err);
  g_assert_true (cow_tensor_is_alias_of (v1, t));
  g_assert_true (cow_tensor_is_alias_of (v2, t));
  cow_tensor_unref (t);
  g_assert_cmpint (log.runs, ==, 0);
  cow_tensor_unref (v1);
  g_assert_cmpint (log.runs, ==, 0);
  /* The bytes are still readable through the last view. */
  data[5] = 3; /* row 1, column 1 */
  test_assert_tensor_values (v2, 0, 3, 0, 0);
  cow_tensor_unref (v2);
  g_assert_cmpint (log.runs, ==, 1);
  g_assert_true (log.last_context == &log);
}

static void
test_foreign_null_deleter_leaves_memory_alone (void)
{
  CowError err = { 0 };
  int32_t data[4] = { 1, 2, 3, 4 };
  int64_t sizes[] = { 4 };
  CowTensor *t = cow_tensor_from_foreign (1, sizes, COW_DTYPE_I32, data, NULL,
                                          NULL, &err);

  test_assert_cow_ok (&err);
  g_assert_nonnull (t);
  g_assert_cmpuint (cow_tensor_data_address (t), ==, (uintptr_t) data);
  test_assert_tensor_values (t, 1, 2, 3, 4);
  CowTensor *v = cow_tensor_slice (t, 0, 1, 4, 2, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (v, 2, 4);
  cow_tensor_unref (t);
  cow_tensor_unref (v);
  /* Borrowed memory outlives the storage untouched. */
  g_assert_cmpint (data[0], ==, 1);
  g_assert_cmpint (data[3], ==, 4);

  /* The storage-level constructor accepts a NULL deleter too. */
  CowStorage *s = cow_storage_new_foreign (data, sizeof data, NULL, NULL, &err);
  test_assert_cow_ok (&err);
  g_assert_nonnull (s);
  cow_storage_unref (s);
  g_assert_cmpint (data[2], ==, 3);
}

static void
test_foreign_lazy_clone_copies_eagerly (void)
{
  CowError err = { 0 };
  DeleterLog log = { 0 };
  float *data = g_new (float, 3);
  data[0] = 1, data[1] = 2, data[2] = 3;
  log.to_free = data;
  int64_t sizes[] = { 3 };
  CowTensor *t = cow_tensor_from_foreign (1, sizes, COW_DTYPE_F32, data, &log,
                                          logging_deleter, &err);

  /* Foreign data pointers cannot be shared lazily at the storage level... */
  CowStorage *lazy = cow_storage_lazy_clone (cow_tensor_storage (t), &err);
  g_assert_null (lazy);
  test_assert_cow_error (&err, COW_ERROR_NOT_SUPPORTED);
  cow_error_clear (&err);

  /* ...so a tensor lazy clone copies eagerly. */
  CowTensor *c = cow_tensor_lazy_clone (t, &err);
  test_assert_cow_ok (&err);
  g_assert_nonnull (c);
  g_assert_false (cow_tensor_is_alias_of (c, t));
  g_assert_cmpuint (cow_tensor_data_address (c), !=, (uintptr_t) data);
  g_assert_false (cow_tensor_is_cow (c));
  g_assert_false (cow_tensor_is_cow (t));
  test_assert_tensor_values (c, 1, 2, 3);

  cow_tensor_unref (t);
  g_assert_cmpint (log.runs, ==, 1);
  test_assert_tensor_values (c, 1, 2, 3);
  cow_tensor_unref (c);
  g_assert_cmpint (log.runs, ==, 1);
}

/* ------------------------------------------------------------------ */
/* Custom allocators                                                   */
/* ------------------------------------------------------------------ */

static void
test_allocator_custom_used_for_empty (void)
{
  CountingAllocator counting;
  CowError err = { 0 };
  int64_t sizes[] = { 4, 5 };

  counting_init (&counting);
  CowTensor *t = cow_tensor_empty_with_allocator (2, sizes, COW_DTYPE_F64,
                                                  &counting.base, &err);
  test_assert_cow_ok (&err);
  g_assert_nonnull (t);
  g_assert_cmpint (counting.n_allocs, ==, 1);
  g_assert_cmpuint (counting.bytes_allocated, ==, 20 * sizeof (double));
  g_assert_cmpint (counting.n_copies, ==, 0);
  g_assert_cmpint (counting.n_frees, ==, 0);

  /* Views and plain writes allocate nothing. */
  CowTensor *v = cow_tensor_transpose (t, 0, 1, &err);
  g_assert_cmpint (cow_tensor_fill_ (v, 2, &err), ==, COW_OK);
  g_assert_cmpint (counting.n_allocs, ==, 1);
  cow_tensor_unref (v);

  cow_tensor_unref (t);
  g_assert_cmpint (counting.n_frees, ==, 1);
  g_assert_cmpint (counting.n_copies, ==, 0);
}

static void
test_allocator_custom_used_for_storage_new (void)
{
  CountingAllocator counting;
  CowError err = { 0 };

  counting_init (&counting);
  CowStorage *s = cow_storage_new (48, &counting.base, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (counting.n_allocs, ==, 1);
  g_assert_cmpuint (counting.bytes_allocated, ==, 48);
  cow_storage_ref (s);
  cow_storage_unref (s);
  g_assert_cmpint (counting.n_frees, ==, 0);
  cow_storage_unref (s);
  g_assert_cmpint (counting.n_frees, ==, 1);
}

static void
test_allocator_materialize_copies_through_allocator (void)
{
  CountingAllocator counting;
  CowError err = { 0 };
  int64_t sizes[] = { 2, 3 };

  counting_init (&counting);
  CowTensor *t = cow_tensor_empty_with_allocator (2, sizes, COW_DTYPE_I32,
                                                  &counting.base, &err);
  test_assert_cow_ok (&err);
  int32_t *data = cow_tensor_mutable_data (t, &err);
  for (int i = 0; i < 6; i++)
    data[i] = i + 1;
  uintptr_t original = cow_tensor_data_address (t);
  guint64 original_allocation = cow_storage_allocation_id (cow_tensor_storage (t));

  CowTensor *c = cow_tensor_lazy_clone (t, &err);
  test_assert_cow_ok (&err);
  /* O(1): no allocation and no copy yet. */
  g_assert_cmpint (counting.n_allocs, ==, 1);
  g_assert_cmpint (counting.n_copies, ==, 0);
  g_assert_cmpuint (cow_tensor_data_address (c), ==, original);
  g_assert_cmpuint (cow_storage_allocation_id (cow_tensor_storage (c)), ==,
                    original_allocation);

  /* Writing the clone while the original still shares: allocate + copy. */
  int32_t *cdata = cow_tensor_mutable_data (c, &err);
  test_assert_cow_ok (&err);
  g_assert_nonnull (cdata);
  g_assert_cmpint (counting.n_allocs, ==, 2);
  g_assert_cmpint (counting.n_copies, ==, 1);
  g_assert_cmpuint (counting.bytes_copied, ==, 6 * sizeof (int32_t));
  g_assert_cmpuint ((uintptr_t) cdata, !=, original);
  g_assert_false (cow_tensor_is_cow (c));
  g_assert_cmpuint (cow_storage_allocation_id (cow_tensor_storage (c)), !=,
                    original_allocation);
  cdata[0] = 100;
  test_assert_tensor_values (c, 100, 2, 3, 4, 5, 6);
  test_assert_tensor_values (t, 1, 2, 3, 4, 5, 6);

  /* The original is the last one sharing: it steals, no allocation. */
  g_assert_true (cow_tensor_is_cow (t));
  g_assert_cmpint (cow_storage_context_refcount (cow_tensor_storage (t)), ==, 1);
  g_assert_nonnull (cow_tensor_mutable_data (t, &err));
  g_assert_cmpint (counting.n_allocs, ==, 2);
  g_assert_cmpint (counting.n_copies, ==, 1);
  g_assert_false (cow_tensor_is_cow (t));
  g_assert_cmpuint (cow_tensor_data_address (t), ==, original);
  g_assert_cmpuint (cow_storage_allocation_id (cow_tensor_storage (t)), ==,
                    original_allocation);
  g_assert_cmpint (counting.n_frees, ==, 0);

  cow_tensor_unref (t);
  cow_tensor_unref (c);
  g_assert_cmpint (counting.n_frees, ==, 2);
}

static void
test_allocator_freed_once_when_all_lazy_clones_go (void)
{
  CountingAllocator counting;
  CowError err = { 0 };
  int64_t sizes[] = { 16 };

  counting_init (&counting);
  CowTensor *t = cow_tensor_empty_with_allocator (1, sizes, COW_DTYPE_U8,
                                                  &counting.base, &err);
  CowTensor *c1 = cow_tensor_lazy_clone (t, &err);
  CowTensor *c2 = cow_tensor_lazy_clone (c1, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (counting.n_allocs, ==, 1);
  cow_tensor_unref (t);
  cow_tensor_unref (c2);
  g_assert_cmpint (counting.n_frees, ==, 0);
  cow_tensor_unref (c1);
  g_assert_cmpint (counting.n_frees, ==, 1);
  g_assert_cmpint (counting.n_copies, ==, 0);
}

/* ------------------------------------------------------------------ */
/* Introspection                                                       */
/* ------------------------------------------------------------------ */

static void
test_introspection_cow_context (void)
{
  CowError err = { 0 };
  int64_t sizes[] = { 8 };
  CowTensor *t = cow_tensor_zeros (1, sizes, COW_DTYPE_F32, &err);
  CowStorage *ts = cow_tensor_storage (t);

  g_assert_false (cow_storage_is_cow (ts));
  g_assert_false (cow_tensor_is_cow (t));
  g_assert_cmpint (cow_storage_context_refcount (ts), ==, 0);
  g_assert_cmpuint (cow_storage_context_id (ts), ==, 0);

  CowTensor *c1 = cow_tensor_lazy_clone (t, &err);
  test_assert_cow_ok (&err);
  CowStorage *s1 = cow_tensor_storage (c1);
  g_assert_true (s1 != ts);
  g_assert_cmpuint (cow_storage_id (s1), !=, cow_storage_id (ts));
  g_assert_true (cow_storage_is_cow (ts));
  g_assert_true (cow_storage_is_cow (s1));
  g_assert_true (cow_tensor_is_cow (t));
  g_assert_true (cow_tensor_is_cow (c1));
  g_assert_cmpint (cow_storage_context_refcount (ts), ==, 2);
  g_assert_cmpint (cow_storage_context_refcount (s1), ==, 2);
  g_assert_cmpuint (cow_storage_context_id (ts), !=, 0);
  g_assert_cmpuint (cow_storage_context_id (ts), ==, cow_storage_context_id (s1));
  g_assert_cmpuint (cow_storage_allocation_id (ts), ==, cow_storage_allocation_id (s1));
  g_assert_cmpuint (cow_tensor_data_address (t), ==, cow_tensor_data_address (c1));

  CowTensor *c2 = cow_tensor_lazy_clone (t, &err);
  g_assert_cmpint (cow_storage_context_refcount (ts), ==, 3);
  /* A view of a lazy clone shares its storage: the context count is per
   * storage, not per tensor. */
  CowTensor *v = cow_tensor_slice (c2, 0, 2, 6, 1, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_storage_context_refcount (ts), ==, 3);
  g_assert_cmpint (cow_storage_refcount (cow_tensor_storage (c2)), ==, 2);
  cow_tensor_unref (v);
  cow_tensor_unref (c2);
  g_assert_cmpint (cow_storage_context_refcount (ts), ==, 2);

  /* Introspection does not materialize. */
  g_assert_true (cow_storage_is_cow (ts));
  g_assert_true (cow_storage_is_cow (s1));

  cow_tensor_unref (c1);
  cow_tensor_unref (t);
}

static void
test_introspection_data_address (void)
{
  CowError err = { 0 };
  int64_t sizes[] = { 4, 6 };
  CowTensor *t = cow_tensor_zeros (2, sizes, COW_DTYPE_F64, &err);
  uintptr_t base = (uintptr_t) cow_storage_const_data (cow_tensor_storage (t));

  g_assert_cmpuint (cow_tensor_data_address (t), ==, base);
  g_assert_true ((uintptr_t) cow_tensor_const_data (t) == base);

  CowTensor *row = cow_tensor_select (t, 0, 2, &err);
  CowTensor *col = cow_tensor_narrow (row, 0, 3, 2, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_storage_offset (col), ==, 15);
  g_assert_cmpuint (cow_tensor_data_address (row), ==, base + 12 * sizeof (double));
  g_assert_cmpuint (cow_tensor_data_address (col), ==, base + 15 * sizeof (double));
  g_assert_true ((uintptr_t) cow_tensor_const_data (col) == cow_tensor_data_address (col));
  void *mutable = cow_tensor_mutable_data (col, &err);
  g_assert_true ((uintptr_t) mutable == cow_tensor_data_address (col));
  cow_tensor_unref (col);
  cow_tensor_unref (row);
  cow_tensor_unref (t);
}

static void
test_introspection_is_alias_of (void)
{
  CowError err = { 0 };
  int64_t sizes[] = { 3, 3 };
  CowTensor *t = cow_tensor_zeros (2, sizes, COW_DTYPE_I64, &err);
  CowTensor *same_shape = cow_tensor_zeros (2, sizes, COW_DTYPE_I64, &err);
  CowTensor *view = cow_tensor_transpose (t, 0, 1, &err);
  CowTensor *view2 = cow_tensor_select (view, 1, 0, &err);
  CowTensor *copy = cow_tensor_clone (t, &err);
  CowTensor *lazy = cow_tensor_lazy_clone (t, &err);

  test_assert_cow_ok (&err);
  g_assert_true (cow_tensor_is_alias_of (t, t));
  g_assert_true (cow_tensor_is_alias_of (t, view));
  g_assert_true (cow_tensor_is_alias_of (view, t));
  g_assert_true (cow_tensor_is_alias_of (view2, t));
  g_assert_false (cow_tensor_is_alias_of (t, same_shape));
  g_assert_false (cow_tensor_is_alias_of (t, copy));
  /* A lazy clone shares bytes but not the storage: not an alias. */
  g_assert_false (cow_tensor_is_alias_of (t, lazy));
  g_assert_cmpuint (cow_tensor_data_address (t), ==, cow_tensor_data_address (lazy));

  cow_tensor_unref (lazy);
  cow_tensor_unref (copy);
  cow_tensor_unref (view2);
  cow_tensor_unref (view);
  cow_tensor_unref (same_shape);
  cow_tensor_unref (t);
}

static void
test_introspection_tensor_ids_unique (void)
{
  CowError err = { 0 };
  int64_t sizes[] = { 2 };
  CowTensor *a = cow_tensor_zeros (1, sizes, COW_DTYPE_F32, &err);
  CowTensor *b = cow_tensor_zeros (1, sizes, COW_DTYPE_F32, &err);
  CowTensor *v = cow_tensor_view (a, 1, sizes, &err);

  test_assert_cow_ok (&err);
  g_assert_cmpuint (cow_tensor_id (a), !=, 0);
  g_assert_cmpuint (cow_tensor_id (a), !=, cow_tensor_id (b));
  g_assert_cmpuint (cow_tensor_id (a), !=, cow_tensor_id (v));
  g_assert_cmpuint (cow_tensor_id (b), !=, cow_tensor_id (v));
  cow_tensor_unref (v);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/storage/cpu-allocator/small-blocks-64-byte-aligned",
                   test_cpu_allocator_small_blocks_are_64_byte_aligned);
  g_test_add_func ("/storage/cpu-allocator/huge-blocks-2mib-aligned",
                   test_cpu_allocator_huge_blocks_are_2mib_aligned);
  g_test_add_func ("/storage/cpu-allocator/storages-and-tensors-aligned",
                   test_cpu_allocator_storages_and_tensors_are_aligned);
  g_test_add_func ("/storage/cpu-allocator/copy-data-copies-bytes",
                   test_cpu_allocator_copy_data_copies_bytes);
  g_test_add_func ("/storage/cpu-allocator/simple-data-ptr",
                   test_cpu_allocator_simple_data_ptr);

  g_test_add_func ("/storage/new/one-reference", test_storage_new_has_one_reference);
  g_test_add_func ("/storage/new/zero-bytes", test_storage_zero_bytes);
  g_test_add_func ("/storage/refcount/ref-unref", test_storage_ref_unref_counts);
  g_test_add_func ("/storage/refcount/tensors-hold-references",
                   test_storage_tensors_hold_references);
  g_test_add_func ("/storage/new-on-storage/shares-bytes",
                   test_storage_new_on_storage_shares_bytes);
  g_test_add_func ("/storage/ids/unique", test_storage_ids_are_unique);

  g_test_add_func ("/storage/foreign/deleter-runs-once-at-last-unref",
                   test_foreign_storage_deleter_runs_once_at_last_unref);
  g_test_add_func ("/storage/foreign/tensor-wraps-without-copy",
                   test_foreign_tensor_wraps_without_copy);
  g_test_add_func ("/storage/foreign/deleter-waits-for-last-view",
                   test_foreign_tensor_deleter_waits_for_last_view);
  g_test_add_func ("/storage/foreign/null-deleter",
                   test_foreign_null_deleter_leaves_memory_alone);
  g_test_add_func ("/storage/foreign/lazy-clone-copies-eagerly",
                   test_foreign_lazy_clone_copies_eagerly);

  g_test_add_func ("/storage/allocator/custom-used-for-empty",
                   test_allocator_custom_used_for_empty);
  g_test_add_func ("/storage/allocator/custom-used-for-storage-new",
                   test_allocator_custom_used_for_storage_new);
  g_test_add_func ("/storage/allocator/materialize-copies-through-allocator",
                   test_allocator_materialize_copies_through_allocator);
  g_test_add_func ("/storage/allocator/freed-once-when-all-lazy-clones-go",
                   test_allocator_freed_once_when_all_lazy_clones_go);

  g_test_add_func ("/storage/introspection/cow-context", test_introspection_cow_context);
  g_test_add_func ("/storage/introspection/data-address", test_introspection_data_address);
  g_test_add_func ("/storage/introspection/is-alias-of", test_introspection_is_alias_of);
  g_test_add_func ("/storage/introspection/tensor-ids-unique",
                   test_introspection_tensor_ids_unique);

  return g_test_run ();
}
