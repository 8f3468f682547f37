/* test-views.c — view operations share the storage in O(1); contiguous
 * and clone copy. */
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "cowtensor.h"
#include "test-support.h"


/* An f64 tensor 0, 1, 2, … over @allocator's memory (NULL: CPU). */
static CowTensor *
arange_f64 (int ndim, const int64_t *sizes, CowAllocator *allocator)
{
  CowError err = { 0 };
  CowTensor *t = cow_tensor_empty_with_allocator (ndim, sizes, COW_DTYPE_F64,
                                                  allocator, &err);
  test_assert_cow_ok (&err);
  g_assert_nonnull (t);
  double *data = cow_tensor_mutable_data (t, &err);
  for (int64_t i = 0; i < cow_tensor_numel (t); i++)
    data[i] = (double) i;
  return t;
}

static void
assert_strides (const CowTensor *t, int ndim, const int64_t *strides)
{
  g_assert_cmpint (cow_tensor_ndim (t), ==, ndim);
  for (int d = 0; d < ndim; d++)
    g_assert_cmpint (cow_tensor_strides (t)[d], ==, strides[d]);
}

/* Asserts @view shares @base's storage, costs no allocation and starts at
 * its storage offset. */
static void
assert_shares (const CowTensor *view, const CowTensor *base)
{
  g_assert_true (cow_tensor_storage (view) == cow_tensor_storage (base));
  g_assert_true (cow_tensor_is_alias_of (view, base));
  g_assert_cmpint (cow_tensor_dtype (view), ==, cow_tensor_dtype (base));
  uintptr_t start = (uintptr_t) cow_storage_const_data (cow_tensor_storage (base));
  g_assert_cmpuint (cow_tensor_data_address (view), ==,
                    start + (uintptr_t) cow_tensor_storage_offset (view)
                              * cow_dtype_size (cow_tensor_dtype (base)));
}

/* ------------------------------------------------------------------ */
/* view                                                                */
/* ------------------------------------------------------------------ */

static void
test_view_shares_storage (void)
{
  CowError err = { 0 };
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *t = arange_f64 (3, (int64_t[]) { 2, 3, 4 }, test_allocator_get (alloc));
  CowTensor *v = cow_tensor_view (t, 2, (int64_t[]) { 6, 4 }, &err);

  test_assert_cow_ok (&err);
  g_assert_nonnull (v);
  assert_shares (v, t);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);
  g_assert_cmpint (cow_storage_refcount (cow_tensor_storage (t)), ==, 2);
  test_assert_tensor_sizes (v, 2, ((int64_t[]) { 6, 4 }));
  assert_strides (v, 2, (int64_t[]) { 4, 1 });
  g_assert_true (cow_tensor_is_contiguous (v));
  double expected[24];
  for (int i = 0; i < 24; i++)
    expected[i] = i;
  test_assert_tensor_equals (v, expected, 24);
  g_assert_cmpfloat (test_tensor_get (v, (int64_t[]) { 5, 3 }), ==, 23);

  cow_tensor_unref (v);
  cow_tensor_unref (t);
  test_allocator_free (alloc);
}

static void
test_view_infers_minus_one (void)
{
  CowError err = { 0 };
  CowTensor *t = arange_f64 (2, (int64_t[]) { 4, 6 }, NULL);
  CowTensor *a = cow_tensor_view (t, 3, (int64_t[]) { 2, -1, 3 }, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_sizes (a, 3, ((int64_t[]) { 2, 4, 3 }));
  assert_strides (a, 3, (int64_t[]) { 12, 3, 1 });
  assert_shares (a, t);

  CowTensor *flat = cow_tensor_view (t, 1, (int64_t[]) { -1 }, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_sizes (flat, 1, ((int64_t[]) { 24 }));
  assert_shares (flat, t);
  g_assert_cmpfloat (test_tensor_get (flat, (int64_t[]) { 13 }), ==, 13);

  cow_tensor_unref (flat);
  cow_tensor_unref (a);
  cow_tensor_unref (t);
}

static void
test_view_scalar_and_back (void)
{
  CowError err = { 0 };
  CowTensor *t = test_tensor_from_doubles (COW_DTYPE_I32, 1, (int64_t[]) { 1 },
                                           (double[]) { 42 });
  CowTensor *s = cow_tensor_view (t, 0, NULL, &err);
  test_assert_cow_ok (&err);
  g_assert_nonnull (s);
  g_assert_cmpint (cow_tensor_ndim (s), ==, 0);
  g_assert_cmpint (cow_tensor_numel (s), ==, 1);
  assert_shares (s, t);
  test_assert_tensor_values (s, 42);
  CowTensor *back = cow_tensor_view (s, 2, (int64_t[]) { 1, -1 }, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_sizes (back, 2, ((int64_t[]) { 1, 1 }));
  assert_shares (back, t);
  cow_tensor_unref (back);
  cow_tensor_unref (s);
  cow_tensor_unref (t);
}

static void
test_view_of_transposed_fails_when_not_viewable (void)
{
  CowError err = { 0 };
  CowTensor *t = arange_f64 (2, (int64_t[]) { 3, 4 }, NULL);
  CowTensor *tt = cow_tensor_transpose (t, 0, 1, &err);
  test_assert_cow_ok (&err);

  CowTensor *v = cow_tensor_view (tt, 1, (int64_t[]) { 12 }, &err);
  g_assert_null (v);
  g_assert_cmpint (err.code, !=, COW_OK);
  g_assert_cmpstr (err.message, !=, "");
  /* Nothing was created: the storage has its two holders only. */
  g_assert_cmpint (cow_storage_refcount (cow_tensor_storage (t)), ==, 2);

  cow_tensor_unref (tt);
  cow_tensor_unref (t);
}

static void
test_view_of_transposed_splitting_a_dim (void)
{
  CowError err = { 0 };
  /* t is [3, 4]; tt is [4, 3] with strides [1, 4].  Splitting tt's first
   * dimension is expressible as a view: strides [2, 1, 4]. */
  CowTensor *t = arange_f64 (2, (int64_t[]) { 3, 4 }, NULL);
  CowTensor *tt = cow_tensor_transpose (t, 0, 1, &err);
  CowTensor *v = cow_tensor_view (tt, 3, (int64_t[]) { 2, 2, 3 }, &err);

  test_assert_cow_ok (&err);
  g_assert_nonnull (v);
  assert_shares (v, t);
  assert_strides (v, 3, (int64_t[]) { 2, 1, 4 });
  /* tt in logical order: 0 4 8 1 5 9 2 6 10 3 7 11. */
  test_assert_tensor_values (v, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11);
  cow_tensor_unref (v);
  cow_tensor_unref (tt);
  cow_tensor_unref (t);
}

/* ------------------------------------------------------------------ */
/* slice, select, narrow                                               */
/* ------------------------------------------------------------------ */

static void
test_slice_start_end_step (void)
{
  CowError err = { 0 };
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *t = arange_f64 (1, (int64_t[]) { 10 }, test_allocator_get (alloc));
  CowTensor *s = cow_tensor_slice (t, 0, 2, 9, 3, &err);

  test_assert_cow_ok (&err);
  assert_shares (s, t);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);
  test_assert_tensor_sizes (s, 1, ((int64_t[]) { 3 }));
  assert_strides (s, 1, (int64_t[]) { 3 });
  g_assert_cmpint (cow_tensor_storage_offset (s), ==, 2);
  g_assert_false (cow_tensor_is_contiguous (s));
  test_assert_tensor_values (s, 2, 5, 8);

  /* The full range and an empty range. */
  CowTensor *all = cow_tensor_slice (t, 0, 0, 10, 1, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_sizes (all, 1, ((int64_t[]) { 10 }));
  g_assert_true (cow_tensor_is_contiguous (all));
  CowTensor *none = cow_tensor_slice (t, 0, 4, 4, 1, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_sizes (none, 1, ((int64_t[]) { 0 }));
  g_assert_cmpint (cow_tensor_numel (none), ==, 0);
  /* A step that runs past the end stops at the end. */
  CowTensor *big_step = cow_tensor_slice (t, 0, 1, 10, 4, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (big_step, 1, 5, 9);

  cow_tensor_unref (big_step);
  cow_tensor_unref (none);
  cow_tensor_unref (all);
  cow_tensor_unref (s);
  cow_tensor_unref (t);
  test_allocator_free (alloc);
}

static void
test_slice_negative_indices (void)
{
  CowError err = { 0 };
  CowTensor *t = arange_f64 (1, (int64_t[]) { 10 }, NULL);
  CowTensor *s = cow_tensor_slice (t, 0, -3, -1, 1, &err);
  test_assert_cow_ok (&err);
  assert_shares (s, t);
  test_assert_tensor_values (s, 7, 8);
  g_assert_cmpint (cow_tensor_storage_offset (s), ==, 7);

  CowTensor *s2 = cow_tensor_slice (t, -1, -10, 10, 2, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (s2, 0, 2, 4, 6, 8);
  cow_tensor_unref (s2);
  cow_tensor_unref (s);
  cow_tensor_unref (t);
}

static void
test_slice_inner_dim (void)
{
  CowError err = { 0 };
  CowTensor *t = arange_f64 (2, (int64_t[]) { 3, 4 }, NULL);
  CowTensor *s = cow_tensor_slice (t, -1, 1, 3, 1, &err);
  test_assert_cow_ok (&err);
  assert_shares (s, t);
  test_assert_tensor_sizes (s, 2, ((int64_t[]) { 3, 2 }));
  assert_strides (s, 2, (int64_t[]) { 4, 1 });
  test_assert_tensor_values (s, 1, 2, 5, 6, 9, 10);
  /* A slice of a slice composes offsets and strides. */
  CowTensor *ss = cow_tensor_slice (s, 0, 0, 3, 2, &err);
  test_assert_cow_ok (&err);
  assert_shares (ss, t);
  assert_strides (ss, 2, (int64_t[]) { 8, 1 });
  test_assert_tensor_values (ss, 1, 2, 9, 10);
  cow_tensor_unref (ss);
  cow_tensor_unref (s);
  cow_tensor_unref (t);
}

static void
test_slice_step_must_be_positive (void)
{
  CowError err = { 0 };
  CowTensor *t = arange_f64 (1, (int64_t[]) { 10 }, NULL);
  g_assert_null (cow_tensor_slice (t, 0, 8, 2, -1, &err));
  g_assert_cmpint (err.code, !=, COW_OK);
  cow_error_clear (&err);
  g_assert_null (cow_tensor_slice (t, 0, 0, 10, 0, &err));
  g_assert_cmpint (err.code, !=, COW_OK);
  g_assert_cmpint (cow_storage_refcount (cow_tensor_storage (t)), ==, 1);
  cow_tensor_unref (t);
}

static void
test_select_drops_dim (void)
{
  CowError err = { 0 };
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *t = arange_f64 (2, (int64_t[]) { 3, 4 }, test_allocator_get (alloc));

  CowTensor *row = cow_tensor_select (t, 0, 1, &err);
  test_assert_cow_ok (&err);
  assert_shares (row, t);
  test_assert_tensor_sizes (row, 1, ((int64_t[]) { 4 }));
  g_assert_cmpint (cow_tensor_storage_offset (row), ==, 4);
  test_assert_tensor_values (row, 4, 5, 6, 7);

  CowTensor *col = cow_tensor_select (t, 1, -1, &err);
  test_assert_cow_ok (&err);
  assert_shares (col, t);
  assert_strides (col, 1, (int64_t[]) { 4 });
  test_assert_tensor_values (col, 3, 7, 11);

  /* Selecting from a 1-D tensor gives a 0-dim tensor. */
  CowTensor *elem = cow_tensor_select (col, 0, 2, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_ndim (elem), ==, 0);
  assert_shares (elem, t);
  test_assert_tensor_values (elem, 11);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);

  cow_tensor_unref (elem);
  cow_tensor_unref (col);
  cow_tensor_unref (row);
  cow_tensor_unref (t);
  test_allocator_free (alloc);
}

static void
test_narrow (void)
{
  CowError err = { 0 };
  CowTensor *t = arange_f64 (2, (int64_t[]) { 3, 4 }, NULL);
  CowTensor *n = cow_tensor_narrow (t, 1, 1, 2, &err);
  test_assert_cow_ok (&err);
  assert_shares (n, t);
  test_assert_tensor_sizes (n, 2, ((int64_t[]) { 3, 2 }));
  test_assert_tensor_values (n, 1, 2, 5, 6, 9, 10);
  CowTensor *rows = cow_tensor_narrow (t, 0, 1, 2, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_storage_offset (rows), ==, 4);
  g_assert_true (cow_tensor_is_contiguous (rows));
  test_assert_tensor_values (rows, 4, 5, 6, 7, 8, 9, 10, 11);
  CowTensor *empty = cow_tensor_narrow (t, 0, 3, 0, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_numel (empty), ==, 0);
  cow_tensor_unref (empty);
  cow_tensor_unref (rows);
  cow_tensor_unref (n);
  cow_tensor_unref (t);
}

/* ------------------------------------------------------------------ */
/* transpose, permute, expand, as_strided                              */
/* ------------------------------------------------------------------ */

static void
test_transpose (void)
{
  CowError err = { 0 };
  CowTensor *t = arange_f64 (2, (int64_t[]) { 2, 3 }, NULL);
  CowTensor *tt = cow_tensor_transpose (t, 0, 1, &err);
  test_assert_cow_ok (&err);
  assert_shares (tt, t);
  test_assert_tensor_sizes (tt, 2, ((int64_t[]) { 3, 2 }));
  assert_strides (tt, 2, (int64_t[]) { 1, 3 });
  g_assert_false (cow_tensor_is_contiguous (tt));
  test_assert_tensor_values (tt, 0, 3, 1, 4, 2, 5);

  /* Negative dims; transposing back is contiguous again. */
  CowTensor *back = cow_tensor_transpose (tt, -1, -2, &err);
  test_assert_cow_ok (&err);
  assert_shares (back, t);
  g_assert_true (cow_tensor_is_contiguous (back));
  test_assert_tensor_values (back, 0, 1, 2, 3, 4, 5);
  /* Transposing a dim with itself is the same layout. */
  CowTensor *same = cow_tensor_transpose (t, 1, 1, &err);
  test_assert_cow_ok (&err);
  assert_strides (same, 2, (int64_t[]) { 3, 1 });
  cow_tensor_unref (same);
  cow_tensor_unref (back);
  cow_tensor_unref (tt);
  cow_tensor_unref (t);
}

static void
test_permute (void)
{
  CowError err = { 0 };
  CowTensor *t = arange_f64 (3, (int64_t[]) { 2, 3, 4 }, NULL);
  CowTensor *p = cow_tensor_permute (t, 3, (int[]) { 2, 0, 1 }, &err);
  test_assert_cow_ok (&err);
  assert_shares (p, t);
  test_assert_tensor_sizes (p, 3, ((int64_t[]) { 4, 2, 3 }));
  assert_strides (p, 3, (int64_t[]) { 1, 12, 4 });
  /* p[k, i, j] == t[i, j, k] == 12 i + 4 j + k. */
  for (int k = 0; k < 4; k++)
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 3; j++)
        g_assert_cmpfloat (test_tensor_get (p, (int64_t[]) { k, i, j }), ==,
                           12 * i + 4 * j + k);
  gsize n;
  double *values = test_tensor_values (p, &n);
  g_assert_cmpuint (n, ==, 24);
  g_assert_cmpfloat (values[0], ==, 0);
  g_assert_cmpfloat (values[1], ==, 4);
  g_assert_cmpfloat (values[6], ==, 1);
  g_free (values);

  /* The identity permutation keeps the layout. */
  CowTensor *id = cow_tensor_permute (t, 3, (int[]) { 0, 1, 2 }, &err);
  test_assert_cow_ok (&err);
  g_assert_true (cow_tensor_is_contiguous (id));
  assert_shares (id, t);
  cow_tensor_unref (id);
  cow_tensor_unref (p);
  cow_tensor_unref (t);
}

static void
test_expand_uses_stride_zero (void)
{
  CowError err = { 0 };
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *t = arange_f64 (2, (int64_t[]) { 3, 1 }, test_allocator_get (alloc));
  CowTensor *e = cow_tensor_expand (t, 3, (int64_t[]) { 2, 3, 4 }, &err);

  test_assert_cow_ok (&err);
  assert_shares (e, t);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);
  test_assert_tensor_sizes (e, 3, ((int64_t[]) { 2, 3, 4 }));
  assert_strides (e, 3, (int64_t[]) { 0, 1, 0 });
  double expected[24];
  for (int i = 0; i < 24; i++)
    expected[i] = (i / 4) % 3;
  test_assert_tensor_equals (e, expected, 24);

  /* -1 keeps a size. */
  CowTensor *e2 = cow_tensor_expand (t, 2, (int64_t[]) { -1, 5 }, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_sizes (e2, 2, ((int64_t[]) { 3, 5 }));
  assert_strides (e2, 2, (int64_t[]) { 1, 0 });

  /* A write to the base shows in every broadcast position. */
  double *data = cow_tensor_mutable_data (t, &err);
  data[1] = 7;
  test_assert_tensor_values (e2, 0, 0, 0, 0, 0, 7, 7, 7, 7, 7, 2, 2, 2, 2, 2);

  cow_tensor_unref (e2);
  cow_tensor_unref (e);
  cow_tensor_unref (t);
  test_allocator_free (alloc);
}

static void
test_expand_non_singleton_fails (void)
{
  CowError err = { 0 };
  CowTensor *t = arange_f64 (1, (int64_t[]) { 3 }, NULL);
  g_assert_null (cow_tensor_expand (t, 1, (int64_t[]) { 4 }, &err));
  test_assert_cow_error (&err, COW_ERROR_SHAPE);
  cow_error_clear (&err);
  /* Same size is fine: a view of the same layout. */
  CowTensor *same = cow_tensor_expand (t, 2, (int64_t[]) { 2, 3 }, &err);
  test_assert_cow_ok (&err);
  assert_strides (same, 2, (int64_t[]) { 0, 1 });
  test_assert_tensor_values (same, 0, 1, 2, 0, 1, 2);
  cow_tensor_unref (same);
  cow_tensor_unref (t);
}

static void
test_as_strided_sliding_window (void)
{
  CowError err = { 0 };
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *t = arange_f64 (1, (int64_t[]) { 12 }, test_allocator_get (alloc));
  CowTensor *w = cow_tensor_as_strided (t, 2, (int64_t[]) { 4, 3 },
                                        (int64_t[]) { 2, 1 }, 1, &err);
  test_assert_cow_ok (&err);
  assert_shares (w, t);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);
  g_assert_cmpint (cow_tensor_storage_offset (w), ==, 1);
  test_assert_tensor_values (w, 1, 2, 3, 3, 4, 5, 5, 6, 7, 7, 8, 9);

  /* Reaching exactly the last element is inside. */
  CowTensor *last = cow_tensor_as_strided (t, 2, (int64_t[]) { 4, 3 },
                                           (int64_t[]) { 3, 1 }, 0, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (last, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
  cow_tensor_unref (last);
  cow_tensor_unref (w);
  cow_tensor_unref (t);
  test_allocator_free (alloc);
}

static void
test_as_strided_bounds_are_the_storage (void)
{
  CowError err = { 0 };
  CowTensor *t = arange_f64 (1, (int64_t[]) { 12 }, NULL);

  /* One past the end of the storage fails. */
  g_assert_null (cow_tensor_as_strided (t, 2, (int64_t[]) { 4, 3 },
                                        (int64_t[]) { 3, 1 }, 1, &err));
  test_assert_cow_error (&err, COW_ERROR_OUT_OF_RANGE);
  cow_error_clear (&err);

  /* The bound is the storage, not the tensor: a narrow view of the first
   * four elements may still be re-strided over all twelve. */
  CowTensor *head = cow_tensor_narrow (t, 0, 0, 4, &err);
  test_assert_cow_ok (&err);
  CowTensor *whole = cow_tensor_as_strided (head, 1, (int64_t[]) { 12 },
                                            (int64_t[]) { 1 }, 0, &err);
  test_assert_cow_ok (&err);
  g_assert_nonnull (whole);
  assert_shares (whole, t);
  g_assert_cmpfloat (test_tensor_get (whole, (int64_t[]) { 11 }), ==, 11);
  g_assert_null (cow_tensor_as_strided (head, 1, (int64_t[]) { 13 },
                                        (int64_t[]) { 1 }, 0, &err));
  test_assert_cow_error (&err, COW_ERROR_OUT_OF_RANGE);
  cow_error_clear (&err);

  /* An empty layout reaches nothing, wherever it starts inside. */
  CowTensor *empty = cow_tensor_as_strided (t, 1, (int64_t[]) { 0 },
                                            (int64_t[]) { 1 }, 5, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_numel (empty), ==, 0);

  cow_tensor_unref (empty);
  cow_tensor_unref (whole);
  cow_tensor_unref (head);
  cow_tensor_unref (t);
}

/* ------------------------------------------------------------------ */
/* contiguous and clone                                                */
/* ------------------------------------------------------------------ */

static void
test_contiguous_returns_same_tensor (void)
{
  CowError err = { 0 };
  CowTensor *t = arange_f64 (2, (int64_t[]) { 2, 3 }, NULL);
  CowTensor *c = cow_tensor_contiguous (t, &err);
  test_assert_cow_ok (&err);
  g_assert_true (c == t);
  /* It is a new reference: dropping it leaves t usable. */
  cow_tensor_unref (c);
  test_assert_tensor_values (t, 0, 1, 2, 3, 4, 5);

  /* A contiguous view with an offset is returned as is too. */
  CowTensor *row = cow_tensor_select (t, 0, 1, &err);
  CowTensor *rc = cow_tensor_contiguous (row, &err);
  test_assert_cow_ok (&err);
  g_assert_true (rc == row);
  cow_tensor_unref (rc);
  cow_tensor_unref (row);
  cow_tensor_unref (t);
}

static void
test_contiguous_copies_when_not (void)
{
  CowError err = { 0 };
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *t = arange_f64 (2, (int64_t[]) { 2, 3 }, test_allocator_get (alloc));
  CowTensor *tt = cow_tensor_transpose (t, 0, 1, &err);
  CowTensor *c = cow_tensor_contiguous (tt, &err);

  test_assert_cow_ok (&err);
  g_assert_nonnull (c);
  g_assert_true (c != tt);
  g_assert_false (cow_tensor_is_alias_of (c, t));
  g_assert_true (cow_tensor_is_contiguous (c));
  test_assert_tensor_sizes (c, 2, ((int64_t[]) { 3, 2 }));
  assert_strides (c, 2, (int64_t[]) { 2, 1 });
  test_assert_tensor_values (c, 0, 3, 1, 4, 2, 5);
  g_assert_cmpint (cow_tensor_dtype (c), ==, COW_DTYPE_F64);
  /* A real copy: writing it leaves the source alone. */
  g_assert_cmpint (cow_tensor_fill_ (c, -1, &err), ==, COW_OK);
  test_assert_tensor_values (t, 0, 1, 2, 3, 4, 5);

  cow_tensor_unref (c);
  cow_tensor_unref (tt);
  cow_tensor_unref (t);
  test_allocator_free (alloc);
}

static void
test_clone_is_eager_copy (void)
{
  CowError err = { 0 };
  CowTensor *t = test_tensor_from_doubles (COW_DTYPE_I32, 2, (int64_t[]) { 2, 2 },
                                           (double[]) { 1, -2, 3, -4 });
  CowTensor *c = cow_tensor_clone (t, &err);

  test_assert_cow_ok (&err);
  g_assert_nonnull (c);
  g_assert_true (cow_tensor_storage (c) != cow_tensor_storage (t));
  g_assert_false (cow_tensor_is_alias_of (c, t));
  g_assert_cmpuint (cow_tensor_data_address (c), !=, cow_tensor_data_address (t));
  g_assert_false (cow_tensor_is_cow (c));
  g_assert_false (cow_tensor_is_cow (t));
  g_assert_cmpint (cow_tensor_dtype (c), ==, COW_DTYPE_I32);
  test_assert_tensor_sizes (c, 2, ((int64_t[]) { 2, 2 }));
  test_assert_tensor_values (c, 1, -2, 3, -4);

  int32_t *data = cow_tensor_mutable_data (c, &err);
  data[0] = 99;
  test_assert_tensor_values (t, 1, -2, 3, -4);
  test_assert_tensor_values (c, 99, -2, 3, -4);

  /* A clone of a strided view is contiguous, sized to the view only. */
  CowTensor *col = cow_tensor_select (t, 1, 1, &err);
  CowTensor *cc = cow_tensor_clone (col, &err);
  test_assert_cow_ok (&err);
  g_assert_true (cow_tensor_is_contiguous (cc));
  g_assert_cmpint (cow_tensor_storage_offset (cc), ==, 0);
  g_assert_cmpuint (cow_storage_nbytes (cow_tensor_storage (cc)), ==, 2 * sizeof (int32_t));
  test_assert_tensor_values (cc, -2, -4);

  cow_tensor_unref (cc);
  cow_tensor_unref (col);
  cow_tensor_unref (c);
  cow_tensor_unref (t);
}

/* ------------------------------------------------------------------ */
/* Aliasing                                                            */
/* ------------------------------------------------------------------ */

static void
test_write_through_view_visible_in_base (void)
{
  CowError err = { 0 };
  CowTensor *t = arange_f64 (2, (int64_t[]) { 3, 4 }, NULL);
  CowTensor *col = cow_tensor_select (t, 1, 2, &err);
  CowTensor *tt = cow_tensor_transpose (t, 0, 1, &err);

  test_assert_cow_ok (&err);
  /* Writing through a strided view lands in the base... */
  g_assert_cmpint (cow_tensor_fill_ (col, -5, &err), ==, COW_OK);
  test_assert_tensor_values (t, 0, 1, -5, 3, 4, 5, -5, 7, 8, 9, -5, 11);
  /* ...and in every other view of the storage. */
  g_assert_cmpfloat (test_tensor_get (tt, (int64_t[]) { 2, 1 }), ==, -5);

  /* The raw pointer of a view addresses its own element 0. */
  double *p = cow_tensor_mutable_data (col, &err);
  p[4] = 100; /* col[1]: stride 4 */
  g_assert_cmpfloat (test_tensor_get (t, (int64_t[]) { 1, 2 }), ==, 100);

  /* And writes to the base show through the views. */
  double *base = cow_tensor_mutable_data (t, &err);
  base[10] = 42;
  test_assert_tensor_values (col, -5, 100, 42);
  g_assert_false (cow_tensor_is_cow (t));

  cow_tensor_unref (tt);
  cow_tensor_unref (col);
  cow_tensor_unref (t);
}

static void
test_views_of_views_share_storage (void)
{
  CowError err = { 0 };
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *t = arange_f64 (3, (int64_t[]) { 2, 3, 4 }, test_allocator_get (alloc));
  CowTensor *a = cow_tensor_permute (t, 3, (int[]) { 1, 2, 0 }, &err); /* [3,4,2] */
  CowTensor *b = cow_tensor_slice (a, 1, 1, 4, 2, &err);               /* [3,2,2] */
  CowTensor *c = cow_tensor_select (b, 0, 2, &err);                    /* [2,2] */
  CowTensor *d = cow_tensor_transpose (c, 0, 1, &err);                 /* [2,2] */
  CowTensor *n = cow_tensor_narrow (d, 0, 0, 1, &err);                 /* [1,2] */
  CowTensor *e = cow_tensor_expand (n, 2, (int64_t[]) { 3, 2 }, &err);  /* [3,2] */

  test_assert_cow_ok (&err);
  assert_shares (d, t);
  assert_shares (e, t);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);
  /* c[i, j] = a[2, 1 + 2 i, j] = t[j, 2, 1 + 2 i] = 12 j + 8 + 1 + 2 i. */
  test_assert_tensor_values (c, 9, 21, 11, 23);
  test_assert_tensor_values (d, 9, 11, 21, 23);
  test_assert_tensor_values (e, 9, 11, 9, 11, 9, 11);

  /* One storage reference per tensor: t, a, b, c, d, n, e. */
  g_assert_cmpint (cow_storage_refcount (cow_tensor_storage (t)), ==, 7);

  cow_tensor_unref (e);
  cow_tensor_unref (n);
  cow_tensor_unref (d);
  cow_tensor_unref (c);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
  g_assert_cmpint (cow_storage_refcount (cow_tensor_storage (t)), ==, 1);
  g_assert_cmpint (test_allocator_n_live (alloc), ==, 1);
  cow_tensor_unref (t);
  g_assert_cmpint (test_allocator_n_live (alloc), ==, 0);
  test_allocator_free (alloc);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/views/view/shares-storage", test_view_shares_storage);
  g_test_add_func ("/views/view/infers-minus-one", test_view_infers_minus_one);
  g_test_add_func ("/views/view/scalar-and-back", test_view_scalar_and_back);
  g_test_add_func ("/views/view/transposed-not-viewable-fails",
                   test_view_of_transposed_fails_when_not_viewable);
  g_test_add_func ("/views/view/transposed-split-dim-is-viewable",
                   test_view_of_transposed_splitting_a_dim);

  g_test_add_func ("/views/slice/start-end-step", test_slice_start_end_step);
  g_test_add_func ("/views/slice/negative-indices", test_slice_negative_indices);
  g_test_add_func ("/views/slice/inner-dim", test_slice_inner_dim);
  g_test_add_func ("/views/slice/step-must-be-positive", test_slice_step_must_be_positive);
  g_test_add_func ("/views/select/drops-dim", test_select_drops_dim);
  g_test_add_func ("/views/narrow/basic", test_narrow);

  g_test_add_func ("/views/transpose/basic", test_transpose);
  g_test_add_func ("/views/permute/basic", test_permute);
  g_test_add_func ("/views/expand/stride-zero", test_expand_uses_stride_zero);
  g_test_add_func ("/views/expand/non-singleton-fails", test_expand_non_singleton_fails);
  g_test_add_func ("/views/as-strided/sliding-window", test_as_strided_sliding_window);
  g_test_add_func ("/views/as-strided/bounds-are-the-storage",
                   test_as_strided_bounds_are_the_storage);

  g_test_add_func ("/views/contiguous/same-tensor-when-contiguous",
                   test_contiguous_returns_same_tensor);
  g_test_add_func ("/views/contiguous/copy-when-not", test_contiguous_copies_when_not);
  g_test_add_func ("/views/clone/eager-copy", test_clone_is_eager_copy);

  g_test_add_func ("/views/aliasing/write-through-view-visible",
                   test_write_through_view_visible_in_base);
  g_test_add_func ("/views/aliasing/views-of-views-share-storage",
                   test_views_of_views_share_storage);

  return g_test_run ();
}
