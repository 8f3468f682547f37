/* test-errors.c — bad input gives an error value with a clear message;
 * nothing aborts and nothing leaks (the suite also runs under ASan, LSan
 * and UBSan). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "cowtensor.h"
#include "test-support.h"



#define SIZES(...) (int) (sizeof ((const int64_t[]) { __VA_ARGS__ }) / sizeof (int64_t)), \
                   ((const int64_t[]) { __VA_ARGS__ })

/* Asserts @err holds @code, a non-empty message, and that the message
 * mentions @needle (case-insensitive; NULL: no check). */
#define assert_error(err, code, needle)                                       \
  assert_error_impl (__FILE__, __LINE__, G_STRFUNC, (err), (code), (needle))

static void
assert_error_impl (const char *file, int line, const char *func,
                   const CowError *err, CowStatus code, const char *needle)
{
  test_assert_cow_status_impl (file, line, func, "error", err, code);
  if (needle != NULL)
    {
      g_autofree char *haystack = g_ascii_strdown (err->message, -1);
      g_autofree char *lower = g_ascii_strdown (needle, -1);
      if (strstr (haystack, lower) == NULL)
        {
          g_autofree char *m = g_strdup_printf ("error message \"%s\" does not mention \"%s\"",
                                                err->message, needle);
          g_assertion_message (G_LOG_DOMAIN, file, line, func, m);
        }
    }
}

/* Returns NULL-or-tensor; asserts NULL and the error, and clears it. */
#define assert_fails(expr, err, code, needle)                                 \
  G_STMT_START {                                                              \
    cow_error_clear (err);                                                    \
    CowTensor *fails_result_ = (expr);                                        \
    g_assert_null (fails_result_);                                            \
    assert_error ((err), (code), (needle));                                   \
    cow_error_clear (err);                                                    \
  } G_STMT_END

#define assert_status(expr, err, code, needle)                                \
  G_STMT_START {                                                              \
    cow_error_clear (err);                                                    \
    g_assert_cmpint ((expr), ==, (code));                                     \
    assert_error ((err), (code), (needle));                                   \
    cow_error_clear (err);                                                    \
  } G_STMT_END

static CowTensor *
arange (int ndim, const int64_t *sizes)
{
  return test_tensor_arange_f32 (ndim, sizes, 0);
}

/* ------------------------------------------------------------------ */
/* Construction                                                        */
/* ------------------------------------------------------------------ */

static void
test_create_negative_size (void)
{
  CowError err = { 0 };
  TestAllocator *alloc = test_allocator_new ();
  float data[6] = { 0 };

  assert_fails (cow_tensor_empty (SIZES (2, -3), COW_DTYPE_F32, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "-3");
  assert_fails (cow_tensor_zeros (SIZES (-1), COW_DTYPE_F64, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "negative");
  assert_fails (cow_tensor_from_data (SIZES (-2, -3), COW_DTYPE_F32, data, sizeof data, &err),
                &err, COW_ERROR_INVALID_ARGUMENT, "negative");
  assert_fails (cow_tensor_empty_with_allocator (SIZES (4, INT64_MIN), COW_DTYPE_U8,
                                                 test_allocator_get (alloc), &err),
                &err, COW_ERROR_INVALID_ARGUMENT, "negative");
  assert_fails (cow_tensor_from_foreign (SIZES (-5), COW_DTYPE_F32, data, NULL, NULL, &err),
                &err, COW_ERROR_INVALID_ARGUMENT, "-5");
  /* Nothing was allocated for the rejected shape. */
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 0);
  test_allocator_free (alloc);
}

static void
test_create_bad_ndim (void)
{
  CowError err = { 0 };
  const int64_t nine[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };

  g_assert_cmpint (COW_MAX_DIMS, ==, 8);
  assert_fails (cow_tensor_empty (9, nine, COW_DTYPE_F32, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "9");
  assert_fails (cow_tensor_zeros (-1, nine, COW_DTYPE_F32, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "-1");
  assert_fails (cow_tensor_empty (2, NULL, COW_DTYPE_F32, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "NULL");
  /* Exactly COW_MAX_DIMS is fine. */
  CowTensor *t = cow_tensor_empty (8, nine, COW_DTYPE_F32, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_ndim (t), ==, 8);
  cow_tensor_unref (t);
}

static void
test_create_element_count_overflow (void)
{
  CowError err = { 0 };
  assert_fails (cow_tensor_empty (SIZES (INT64_C (1) << 40, INT64_C (1) << 40),
                                  COW_DTYPE_U8, &err),
                &err, COW_ERROR_OVERFLOW, "overflow");
  assert_fails (cow_tensor_zeros (SIZES (INT64_MAX, 2), COW_DTYPE_BOOL, &err), &err,
                COW_ERROR_OVERFLOW, "overflow");
  assert_fails (cow_tensor_empty (SIZES (3, 1 << 21, 1 << 21, 1 << 21), COW_DTYPE_U8, &err),
                &err, COW_ERROR_OVERFLOW, "overflow");
  /* A zero size makes it empty, whatever the other sizes. */
  CowTensor *t = cow_tensor_empty (SIZES (0, INT64_C (1) << 40), COW_DTYPE_F64, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_numel (t), ==, 0);
  cow_tensor_unref (t);
}

static void
test_create_byte_count_overflow (void)
{
  CowError err = { 0 };
  /* 2^62 elements fit in int64; 2^65 bytes do not. */
  assert_fails (cow_tensor_empty (SIZES (INT64_C (1) << 62), COW_DTYPE_F64, &err), &err,
                COW_ERROR_OVERFLOW, "overflow");
  assert_fails (cow_tensor_zeros (SIZES (INT64_C (1) << 31, INT64_C (1) << 31),
                                  COW_DTYPE_I64, &err),
                &err, COW_ERROR_OVERFLOW, "overflow");
  assert_fails (cow_tensor_from_data (SIZES (INT64_C (1) << 62), COW_DTYPE_I32, NULL, 0, &err),
                &err, COW_ERROR_OVERFLOW, "overflow");
}

static void
test_create_invalid_dtype (void)
{
  CowError err = { 0 };
  assert_fails (cow_tensor_empty (SIZES (2), (CowDType) 42, &err), &err, COW_ERROR_DTYPE, "42");
  assert_fails (cow_tensor_zeros (SIZES (2), COW_N_DTYPES, &err), &err, COW_ERROR_DTYPE, "dtype");
  assert_fails (cow_tensor_empty (SIZES (2), (CowDType) -1, &err), &err, COW_ERROR_DTYPE, "-1");
  assert_fails (cow_tensor_from_data (SIZES (1), (CowDType) 7, "x", 1, &err), &err,
                COW_ERROR_DTYPE, "7");
  g_assert_cmpuint (cow_dtype_size ((CowDType) 42), ==, 0);
  g_assert_cmpstr (cow_dtype_name ((CowDType) 42), ==, "invalid");
  g_assert_false (cow_dtype_is_floating ((CowDType) 42));
}

static void
test_create_huge_allocation (void)
{
  CowError err = { 0 };
  TestAllocator *alloc = test_allocator_new ();

  /* 2^62 bytes is a valid size that no machine can provide. */
  cow_error_clear (&err);
  CowTensor *t = cow_tensor_empty (SIZES (INT64_C (1) << 62), COW_DTYPE_U8, &err);
  g_assert_null (t);
  g_assert_true (err.code == COW_ERROR_NO_MEMORY || err.code == COW_ERROR_OVERFLOW);
  assert_error (&err, err.code, NULL);

  cow_error_clear (&err);
  CowStorage *s = cow_storage_new ((size_t) 1 << 62, NULL, &err);
  g_assert_null (s);
  g_assert_true (err.code == COW_ERROR_NO_MEMORY || err.code == COW_ERROR_OVERFLOW);
  assert_error (&err, err.code, NULL);

  /* SIZE_MAX cannot even be rounded to the alignment. */
  cow_error_clear (&err);
  s = cow_storage_new (SIZE_MAX, NULL, &err);
  g_assert_null (s);
  g_assert_true (err.code == COW_ERROR_NO_MEMORY || err.code == COW_ERROR_OVERFLOW);
  assert_error (&err, err.code, NULL);

  /* A result shape whose count overflows fails before allocating. */
  cow_error_clear (&err);
  CowTensor *one = cow_tensor_zeros (SIZES (1, 1), COW_DTYPE_F32, &err);
  CowTensor *tall = cow_tensor_expand (one, SIZES (INT64_C (1) << 40, 1), &err);
  CowTensor *wide = cow_tensor_expand (one, SIZES (1, INT64_C (1) << 40), &err);
  test_assert_cow_ok (&err);
  assert_fails (cow_tensor_add (tall, wide, 1, &err), &err, COW_ERROR_OVERFLOW, "overflow");
  assert_fails (cow_tensor_mul (tall, wide, &err), &err, COW_ERROR_OVERFLOW, "overflow");
  CowTensor *a = cow_tensor_empty (SIZES (INT64_C (1) << 40, 0), COW_DTYPE_F32, &err);
  CowTensor *b = cow_tensor_empty (SIZES (0, INT64_C (1) << 40), COW_DTYPE_F32, &err);
  test_assert_cow_ok (&err);
  assert_fails (cow_tensor_matmul (a, b, &err), &err, COW_ERROR_OVERFLOW, "overflow");
  assert_fails (cow_tensor_expand (one, SIZES (INT64_C (1) << 40, INT64_C (1) << 40), &err),
                &err, COW_ERROR_OVERFLOW, "overflow");

  cow_tensor_unref (b);
  cow_tensor_unref (a);
  cow_tensor_unref (wide);
  cow_tensor_unref (tall);
  cow_tensor_unref (one);
  test_allocator_free (alloc);
}

static void
test_from_data_wrong_byte_count (void)
{
  CowError err = { 0 };
  float data[4] = { 1, 2, 3, 4 };
  assert_fails (cow_tensor_from_data (SIZES (2), COW_DTYPE_F32, data, 5, &err), &err,
                COW_ERROR_SHAPE, "5");
  assert_fails (cow_tensor_from_data (SIZES (2, 2), COW_DTYPE_F32, data, 8, &err), &err,
                COW_ERROR_SHAPE, "16");
  assert_fails (cow_tensor_from_data (SIZES (2, 2), COW_DTYPE_F64, data, sizeof data, &err),
                &err, COW_ERROR_SHAPE, "32");
  assert_fails (cow_tensor_from_data (SIZES (2), COW_DTYPE_F32, NULL, 8, &err), &err,
                COW_ERROR_SHAPE, NULL);
  /* Zero elements with zero bytes and no data is fine. */
  CowTensor *t = cow_tensor_from_data (SIZES (0), COW_DTYPE_F32, NULL, 0, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_numel (t), ==, 0);
  cow_tensor_unref (t);
}

static void
test_storage_constructors_reject_bad_input (void)
{
  CowError err = { 0 };
  CowStorage *s = cow_storage_new (8, NULL, &err);

  assert_fails (cow_tensor_new_on_storage (s, SIZES (2), COW_DTYPE_F64, &err), &err,
                COW_ERROR_OUT_OF_RANGE, "16");
  assert_fails (cow_tensor_new_on_storage (NULL, SIZES (2), COW_DTYPE_F64, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_new_on_storage (s, SIZES (-2), COW_DTYPE_U8, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "negative");
  g_assert_cmpint (cow_storage_refcount (s), ==, 1);
  cow_storage_unref (s);

  cow_error_clear (&err);
  g_assert_null (cow_storage_new_foreign (NULL, 16, NULL, NULL, &err));
  assert_error (&err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  cow_error_clear (&err);
  g_assert_null (cow_storage_lazy_clone (NULL, &err));
  assert_error (&err, COW_ERROR_INVALID_ARGUMENT, "NULL");
}

/* ------------------------------------------------------------------ */
/* Views                                                               */
/* ------------------------------------------------------------------ */

static void
test_slice_out_of_range (void)
{
  CowError err = { 0 };
  CowTensor *t = arange (SIZES (10));
  assert_fails (cow_tensor_slice (t, 0, 11, 12, 1, &err), &err, COW_ERROR_OUT_OF_RANGE, "11");
  assert_fails (cow_tensor_slice (t, 0, 0, 11, 1, &err), &err, COW_ERROR_OUT_OF_RANGE, "11");
  assert_fails (cow_tensor_slice (t, 0, -11, 5, 1, &err), &err, COW_ERROR_OUT_OF_RANGE, "-11");
  assert_fails (cow_tensor_slice (t, 0, INT64_MIN, INT64_MAX, 1, &err), &err,
                COW_ERROR_OUT_OF_RANGE, "range");
  CowTensor *s = cow_tensor_zeros (0, NULL, COW_DTYPE_F32, &err);
  assert_fails (cow_tensor_slice (s, 0, 0, 1, 1, &err), &err, COW_ERROR_OUT_OF_RANGE, NULL);
  g_assert_cmpint (cow_storage_refcount (cow_tensor_storage (t)), ==, 1);
  cow_tensor_unref (s);
  cow_tensor_unref (t);
}

static void
test_slice_step_not_positive (void)
{
  CowError err = { 0 };
  CowTensor *t = arange (SIZES (10));
  assert_fails (cow_tensor_slice (t, 0, 0, 10, 0, &err), &err, COW_ERROR_INVALID_ARGUMENT, "step");
  assert_fails (cow_tensor_slice (t, 0, 9, 0, -1, &err), &err, COW_ERROR_INVALID_ARGUMENT, "step");
  assert_fails (cow_tensor_slice (t, 0, 0, 10, INT64_MIN, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "step");
  cow_tensor_unref (t);
}

static void
test_slice_huge_step_does_not_overflow (void)
{
  CowError err = { 0 };
  /* Elements start ≤ i < end stepping by step: with any step ≥ the
   * length that is just the first one.  Computing the size as
   * (end - start + step - 1) / step overflows int64 (UB) for a huge step,
   * and stride × step overflows for a stride > 1. */
  CowTensor *t = arange (SIZES (10, 10));
  CowTensor *s = cow_tensor_slice (t, 0, 0, 10, INT64_MAX, &err);
  test_assert_cow_ok (&err);
  g_assert_nonnull (s);
  test_assert_tensor_sizes (s, 2, ((int64_t[]) { 1, 10 }));
  test_assert_tensor_values (s, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
  CowTensor *s1 = cow_tensor_slice (t, 1, 3, 10, INT64_MAX - 1, &err);
  test_assert_cow_ok (&err);
  g_assert_nonnull (s1);
  test_assert_tensor_sizes (s1, 2, ((int64_t[]) { 10, 1 }));
  g_assert_cmpfloat (test_tensor_get (s1, (int64_t[]) { 2, 0 }), ==, 23);
  cow_tensor_unref (s1);
  cow_tensor_unref (s);
  cow_tensor_unref (t);
}

static void
test_select_narrow_out_of_range (void)
{
  CowError err = { 0 };
  CowTensor *t = arange (SIZES (3, 4));
  assert_fails (cow_tensor_select (t, 0, 3, &err), &err, COW_ERROR_OUT_OF_RANGE, "3");
  assert_fails (cow_tensor_select (t, 1, -5, &err), &err, COW_ERROR_OUT_OF_RANGE, "-5");
  assert_fails (cow_tensor_select (t, 0, INT64_MIN, &err), &err, COW_ERROR_OUT_OF_RANGE, "range");
  assert_fails (cow_tensor_narrow (t, 0, 2, 2, &err), &err, COW_ERROR_OUT_OF_RANGE, "range");
  assert_fails (cow_tensor_narrow (t, 1, 0, -1, &err), &err, COW_ERROR_OUT_OF_RANGE, "-1");
  assert_fails (cow_tensor_narrow (t, 1, 5, 0, &err), &err, COW_ERROR_OUT_OF_RANGE, "5");
  assert_fails (cow_tensor_narrow (t, 1, 1, INT64_MAX, &err), &err, COW_ERROR_OUT_OF_RANGE, NULL);
  CowTensor *s = cow_tensor_zeros (0, NULL, COW_DTYPE_F32, &err);
  assert_fails (cow_tensor_select (s, 0, 0, &err), &err, COW_ERROR_OUT_OF_RANGE, "0-dim");
  assert_fails (cow_tensor_narrow (s, 0, 0, 1, &err), &err, COW_ERROR_OUT_OF_RANGE, "0-dim");
  g_assert_cmpint (cow_storage_refcount (cow_tensor_storage (t)), ==, 1);
  cow_tensor_unref (s);
  cow_tensor_unref (t);
}

static void
test_dim_out_of_range (void)
{
  CowError err = { 0 };
  CowTensor *t = arange (SIZES (3, 4));
  assert_fails (cow_tensor_transpose (t, 0, 2, &err), &err, COW_ERROR_OUT_OF_RANGE, "dimension 2");
  assert_fails (cow_tensor_transpose (t, -3, 0, &err), &err, COW_ERROR_OUT_OF_RANGE, "-3");
  assert_fails (cow_tensor_select (t, 2, 0, &err), &err, COW_ERROR_OUT_OF_RANGE, "dimension");
  assert_fails (cow_tensor_slice (t, 5, 0, 1, 1, &err), &err, COW_ERROR_OUT_OF_RANGE, "5");
  assert_fails (cow_tensor_narrow (t, -3, 0, 1, &err), &err, COW_ERROR_OUT_OF_RANGE, "-3");
  assert_fails (cow_tensor_select (t, INT32_MIN, 0, &err), &err, COW_ERROR_OUT_OF_RANGE, NULL);
  g_assert_cmpint (cow_tensor_size (t, 2), ==, -1);
  g_assert_cmpint (cow_tensor_size (t, -1), ==, 4);
  cow_tensor_unref (t);
}

static void
test_permute_not_a_permutation (void)
{
  CowError err = { 0 };
  CowTensor *t = arange (SIZES (2, 3, 4));
  assert_fails (cow_tensor_permute (t, 3, (int[]) { 0, 0, 1 }, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "twice");
  assert_fails (cow_tensor_permute (t, 2, (int[]) { 0, 1 }, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "2");
  assert_fails (cow_tensor_permute (t, 3, (int[]) { 0, 1, 3 }, &err), &err,
                COW_ERROR_OUT_OF_RANGE, "3");
  assert_fails (cow_tensor_permute (t, 3, NULL, &err), &err, COW_ERROR_INVALID_ARGUMENT, NULL);
  cow_tensor_unref (t);
}

static void
test_as_strided_outside_storage (void)
{
  CowError err = { 0 };
  CowTensor *t = arange (SIZES (12));
  assert_fails (cow_tensor_as_strided (t, SIZES (4, 3), (int64_t[]) { 3, 1 }, 1, &err), &err,
                COW_ERROR_OUT_OF_RANGE, "12");
  assert_fails (cow_tensor_as_strided (t, SIZES (1), (int64_t[]) { 1 }, 12, &err), &err,
                COW_ERROR_OUT_OF_RANGE, "storage");
  assert_fails (cow_tensor_as_strided (t, SIZES (2), (int64_t[]) { 1 }, -1, &err), &err,
                COW_ERROR_OUT_OF_RANGE, "-1");
  assert_fails (cow_tensor_as_strided (t, SIZES (2), (int64_t[]) { -1 }, 5, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "-1");
  assert_fails (cow_tensor_as_strided (t, SIZES (-2), (int64_t[]) { 1 }, 0, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "-2");
  /* An extent that overflows int64 is not wrapped into range. */
  assert_fails (cow_tensor_as_strided (t, SIZES (2, 2), ((int64_t[]) { INT64_MAX, INT64_MAX }),
                                       0, &err),
                &err, COW_ERROR_OVERFLOW, "overflow");
  assert_fails (cow_tensor_as_strided (t, SIZES (3), (int64_t[]) { INT64_C (1) << 62 }, 0, &err),
                &err, COW_ERROR_OVERFLOW, "overflow");
  assert_fails (cow_tensor_as_strided (t, SIZES (2), (int64_t[]) { 1 }, INT64_MAX, &err), &err,
                COW_ERROR_OVERFLOW, NULL);
  const int64_t nine[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
  assert_fails (cow_tensor_as_strided (t, 9, nine, nine, 0, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "9");
  g_assert_cmpint (cow_storage_refcount (cow_tensor_storage (t)), ==, 1);
  cow_tensor_unref (t);
}

static void
test_view_wrong_element_count (void)
{
  CowError err = { 0 };
  CowTensor *t = arange (SIZES (2, 3));
  assert_fails (cow_tensor_view (t, SIZES (5), &err), &err, COW_ERROR_SHAPE, "6");
  assert_fails (cow_tensor_view (t, SIZES (4, -1), &err), &err, COW_ERROR_SHAPE, "6");
  assert_fails (cow_tensor_view (t, SIZES (0, -1), &err), &err, COW_ERROR_SHAPE, NULL);
  assert_fails (cow_tensor_view (t, SIZES (-1, -1), &err), &err, COW_ERROR_INVALID_ARGUMENT, "-1");
  assert_fails (cow_tensor_view (t, SIZES (-2, -3), &err), &err, COW_ERROR_INVALID_ARGUMENT, "-2");
  assert_fails (cow_tensor_view (t, SIZES (INT64_C (1) << 40, INT64_C (1) << 40), &err), &err,
                COW_ERROR_OVERFLOW, "overflow");
  assert_fails (cow_tensor_reshape (t, SIZES (7), &err), &err, COW_ERROR_SHAPE, "7");
  assert_fails (cow_tensor_reshape (t, SIZES (-1, -1), &err), &err,
                COW_ERROR_INVALID_ARGUMENT, NULL);
  g_assert_cmpint (cow_storage_refcount (cow_tensor_storage (t)), ==, 1);
  cow_tensor_unref (t);
}

static void
test_expand_bad_sizes (void)
{
  CowError err = { 0 };
  CowTensor *t = arange (SIZES (3, 1));
  assert_fails (cow_tensor_expand (t, SIZES (4, 2), &err), &err, COW_ERROR_SHAPE, "4");
  assert_fails (cow_tensor_expand (t, SIZES (3), &err), &err, COW_ERROR_INVALID_ARGUMENT, NULL);
  assert_fails (cow_tensor_expand (t, SIZES (-1, 3, 2), &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "-1");
  assert_fails (cow_tensor_expand (t, SIZES (3, -2), &err), &err, COW_ERROR_SHAPE, "-2");
  cow_tensor_unref (t);
}

/* ------------------------------------------------------------------ */
/* Ops                                                                 */
/* ------------------------------------------------------------------ */

static void
test_binary_shape_mismatch (void)
{
  CowError err = { 0 };
  CowTensor *a = arange (SIZES (2, 3));
  CowTensor *b = arange (SIZES (4));
  CowTensor *c = arange (SIZES (3, 3));

  assert_fails (cow_tensor_add (a, b, 1, &err), &err, COW_ERROR_SHAPE, "broadcast");
  assert_fails (cow_tensor_mul (a, c, &err), &err, COW_ERROR_SHAPE, "broadcast");
  assert_status (cow_tensor_add_ (a, b, 1, &err), &err, COW_ERROR_SHAPE, "broadcast");
  assert_status (cow_tensor_mul_ (c, a, &err), &err, COW_ERROR_SHAPE, "broadcast");
  assert_fails (cow_tensor_matmul (a, a, &err), &err, COW_ERROR_SHAPE, "3");
  assert_fails (cow_tensor_matmul (b, c, &err), &err, COW_ERROR_SHAPE, "4");
  assert_status (cow_tensor_copy_ (a, b, &err), &err, COW_ERROR_SHAPE, "broadcast");
  assert_status (cow_tensor_copy_ (b, a, &err), &err, COW_ERROR_SHAPE, "broadcast");
  /* Failed in-place ops wrote nothing. */
  test_assert_tensor_values (a, 0, 1, 2, 3, 4, 5);
  test_assert_tensor_values (b, 0, 1, 2, 3);

  cow_tensor_unref (c);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
}

static void
test_binary_dtype_mismatch (void)
{
  CowError err = { 0 };
  CowTensor *f = arange (SIZES (2, 2));
  CowTensor *d = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (2, 2), (double[]) { 1, 2, 3, 4 });
  CowTensor *i = test_tensor_from_doubles (COW_DTYPE_I32, SIZES (2, 2), (double[]) { 1, 2, 3, 4 });
  CowTensor *b = test_tensor_from_doubles (COW_DTYPE_BOOL, SIZES (2, 2), (double[]) { 1, 0, 1, 0 });

  assert_fails (cow_tensor_add (f, d, 1, &err), &err, COW_ERROR_DTYPE, "f64");
  assert_fails (cow_tensor_mul (i, f, &err), &err, COW_ERROR_DTYPE, "i32");
  assert_fails (cow_tensor_matmul (f, d, &err), &err, COW_ERROR_DTYPE, "f64");
  assert_fails (cow_tensor_matmul (b, b, &err), &err, COW_ERROR_DTYPE, "bool");
  assert_status (cow_tensor_add_ (f, d, 1, &err), &err, COW_ERROR_DTYPE, "f32");
  assert_status (cow_tensor_mul_ (d, i, &err), &err, COW_ERROR_DTYPE, "i32");
  /* Integer tensors need an integral alpha / factor. */
  assert_fails (cow_tensor_add (i, i, 0.5, &err), &err, COW_ERROR_DTYPE, "0.5");
  assert_status (cow_tensor_scale_ (i, 1.5, &err), &err, COW_ERROR_DTYPE, "1.5");
  /* copy_ converts, so differing dtypes are fine there. */
  g_assert_cmpint (cow_tensor_copy_ (d, i, &err), ==, COW_OK);
  test_assert_tensor_values (f, 0, 1, 2, 3);
  test_assert_tensor_values (i, 1, 2, 3, 4);

  cow_tensor_unref (b);
  cow_tensor_unref (i);
  cow_tensor_unref (d);
  cow_tensor_unref (f);
}

static void
test_matmul_unsupported_ranks (void)
{
  CowError err = { 0 };
  CowTensor *t3 = arange (SIZES (2, 2, 2));
  CowTensor *m = arange (SIZES (2, 2));
  CowTensor *s = test_tensor_f32 (0, NULL, (float[]) { 1 });
  assert_fails (cow_tensor_matmul (t3, m, &err), &err, COW_ERROR_NOT_SUPPORTED, "3-D");
  assert_fails (cow_tensor_matmul (m, s, &err), &err, COW_ERROR_NOT_SUPPORTED, "0-D");
  cow_tensor_unref (s);
  cow_tensor_unref (m);
  cow_tensor_unref (t3);
}

static void
test_in_place_broadcast_result_differs (void)
{
  CowError err = { 0 };
  CowTensor *row = arange (SIZES (3));
  CowTensor *mat = arange (SIZES (2, 3));
  CowTensor *col = arange (SIZES (2, 1));
  CowTensor *wide = arange (SIZES (1, 3));

  /* [3] += [2,3] broadcasts to [2,3], which is not [3]. */
  assert_status (cow_tensor_add_ (row, mat, 1, &err), &err, COW_ERROR_SHAPE, NULL);
  /* [2,1] *= [1,3] broadcasts to [2,3]. */
  assert_status (cow_tensor_mul_ (col, wide, &err), &err, COW_ERROR_SHAPE, NULL);
  assert_status (cow_tensor_copy_ (col, wide, &err), &err, COW_ERROR_SHAPE, NULL);
  test_assert_tensor_values (row, 0, 1, 2);
  test_assert_tensor_values (col, 0, 1);

  cow_tensor_unref (wide);
  cow_tensor_unref (col);
  cow_tensor_unref (mat);
  cow_tensor_unref (row);
}

static void
test_fill_value_does_not_fit (void)
{
  CowError err = { 0 };
  CowTensor *u = test_tensor_from_doubles (COW_DTYPE_U8, SIZES (2), (double[]) { 1, 2 });
  CowTensor *i = test_tensor_from_doubles (COW_DTYPE_I32, SIZES (2), (double[]) { 1, 2 });
  CowTensor *l = test_tensor_from_doubles (COW_DTYPE_I64, SIZES (2), (double[]) { 1, 2 });
  assert_status (cow_tensor_fill_ (u, 300, &err), &err, COW_ERROR_OUT_OF_RANGE, "300");
  assert_status (cow_tensor_fill_ (u, -1, &err), &err, COW_ERROR_OUT_OF_RANGE, "u8");
  assert_status (cow_tensor_fill_ (i, 1e10, &err), &err, COW_ERROR_OUT_OF_RANGE, "i32");
  assert_status (cow_tensor_fill_ (l, 1e19, &err), &err, COW_ERROR_OUT_OF_RANGE, "i64");
  assert_status (cow_tensor_fill_ (l, NAN, &err), &err, COW_ERROR_OUT_OF_RANGE, "nan");
  test_assert_tensor_values (u, 1, 2);
  test_assert_tensor_values (i, 1, 2);
  test_assert_tensor_values (l, 1, 2);
  cow_tensor_unref (l);
  cow_tensor_unref (i);
  cow_tensor_unref (u);
}

static void
test_element_access_errors (void)
{
  CowError err = { 0 };
  CowTensor *t = arange (SIZES (2, 3));
  double value = -1;
  float buffer[6];

  assert_status (cow_tensor_item (t, &value, &err), &err, COW_ERROR_SHAPE, "6");
  assert_status (cow_tensor_get_f64 (t, (int64_t[]) { 0, 3 }, &value, &err), &err,
                 COW_ERROR_OUT_OF_RANGE, "3");
  assert_status (cow_tensor_get_f64 (t, (int64_t[]) { -1, 0 }, &value, &err), &err,
                 COW_ERROR_OUT_OF_RANGE, "-1");
  assert_status (cow_tensor_get_f64 (t, NULL, &value, &err), &err, COW_ERROR_OUT_OF_RANGE, NULL);
  g_assert_cmpfloat (value, ==, -1);
  assert_status (cow_tensor_read_elements (t, buffer, sizeof buffer - 1, &err), &err,
                 COW_ERROR_SHAPE, "24");
  assert_status (cow_tensor_read_elements (t, NULL, sizeof buffer, &err), &err,
                 COW_ERROR_SHAPE, NULL);
  CowTensor *e = cow_tensor_empty (SIZES (0), COW_DTYPE_F32, &err);
  assert_status (cow_tensor_item (e, &value, &err), &err, COW_ERROR_SHAPE, "0");
  cow_tensor_unref (e);
  cow_tensor_unref (t);
}

/* ------------------------------------------------------------------ */
/* NULL arguments                                                      */
/* ------------------------------------------------------------------ */

static void
test_null_tensor_arguments (void)
{
  CowError err = { 0 };
  CowTensor *t = arange (SIZES (2, 2));
  double value;
  float buffer[4];

  assert_fails (cow_tensor_view (NULL, SIZES (4), &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_slice (NULL, 0, 0, 1, 1, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_select (NULL, 0, 0, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_narrow (NULL, 0, 0, 1, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_transpose (NULL, 0, 1, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_permute (NULL, 2, (int[]) { 1, 0 }, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_expand (NULL, SIZES (2, 2), &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_as_strided (NULL, SIZES (1), (int64_t[]) { 1 }, 0, &err), &err,
                COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_contiguous (NULL, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_clone (NULL, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_lazy_clone (NULL, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_reshape (NULL, SIZES (4), &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_add (NULL, t, 1, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_add (t, NULL, 1, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_mul (t, NULL, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_matmul (NULL, t, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_fails (cow_tensor_sum (NULL, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_status (cow_tensor_add_ (NULL, t, 1, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_status (cow_tensor_add_ (t, NULL, 1, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_status (cow_tensor_mul_ (NULL, t, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_status (cow_tensor_scale_ (NULL, 2, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_status (cow_tensor_fill_ (NULL, 2, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_status (cow_tensor_copy_ (NULL, t, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_status (cow_tensor_copy_ (t, NULL, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_status (cow_tensor_item (NULL, &value, &err), &err, COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_status (cow_tensor_get_f64 (NULL, (int64_t[]) { 0 }, &value, &err), &err,
                 COW_ERROR_INVALID_ARGUMENT, "NULL");
  assert_status (cow_tensor_read_elements (NULL, buffer, sizeof buffer, &err), &err,
                 COW_ERROR_INVALID_ARGUMENT, "NULL");

  /* Reference counting accepts NULL. */
  g_assert_null (cow_tensor_ref (NULL));
  cow_tensor_unref (NULL);
  cow_error_clear (NULL);
  test_assert_tensor_values (t, 0, 1, 2, 3);
  cow_tensor_unref (t);
}

static void
test_null_error_pointer_keeps_status (void)
{
  /* "NULL is allowed when the caller only wants the status": the status
   * must then be the same one a CowError would have received. */
  CowTensor *f = arange (SIZES (3));
  CowTensor *g = arange (SIZES (4));
  CowTensor *d = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (3), (double[]) { 1, 2, 3 });
  CowTensor *u = test_tensor_from_doubles (COW_DTYPE_U8, SIZES (3), (double[]) { 1, 2, 3 });
  CowTensor *m = arange (SIZES (2, 3));

  g_assert_null (cow_tensor_empty (SIZES (-1), COW_DTYPE_F32, NULL));
  g_assert_null (cow_tensor_view (f, SIZES (5), NULL));
  g_assert_null (cow_tensor_slice (f, 0, 0, 9, 1, NULL));
  g_assert_null (cow_tensor_add (f, d, 1, NULL));
  g_assert_null (cow_tensor_matmul (f, g, NULL));

  g_assert_cmpint (cow_tensor_add_ (f, d, 1, NULL), ==, COW_ERROR_DTYPE);
  g_assert_cmpint (cow_tensor_add_ (f, g, 1, NULL), ==, COW_ERROR_SHAPE);
  g_assert_cmpint (cow_tensor_add_ (f, m, 1, NULL), ==, COW_ERROR_SHAPE);
  g_assert_cmpint (cow_tensor_mul_ (f, g, NULL), ==, COW_ERROR_SHAPE);
  g_assert_cmpint (cow_tensor_copy_ (f, g, NULL), ==, COW_ERROR_SHAPE);
  g_assert_cmpint (cow_tensor_fill_ (u, 256, NULL), ==, COW_ERROR_OUT_OF_RANGE);
  g_assert_cmpint (cow_tensor_scale_ (u, 0.5, NULL), ==, COW_ERROR_DTYPE);
  g_assert_cmpint (cow_tensor_fill_ (NULL, 1, NULL), ==, COW_ERROR_INVALID_ARGUMENT);
  double value;
  g_assert_cmpint (cow_tensor_item (f, &value, NULL), ==, COW_ERROR_SHAPE);
  test_assert_tensor_values (f, 0, 1, 2);

  cow_tensor_unref (m);
  cow_tensor_unref (u);
  cow_tensor_unref (d);
  cow_tensor_unref (g);
  cow_tensor_unref (f);
}

/* ------------------------------------------------------------------ */
/* Allocation failure                                                  */
/* ------------------------------------------------------------------ */

static void
test_allocation_failure_on_creation (void)
{
  CowError err = { 0 };
  TestAllocator *alloc = test_allocator_new ();
  CowAllocator *a = test_allocator_get (alloc);

  test_allocator_fail_next (alloc, 2);
  assert_fails (cow_tensor_empty_with_allocator (SIZES (4, 4), COW_DTYPE_F32, a, &err), &err,
                COW_ERROR_NO_MEMORY, NULL);
  cow_error_clear (&err);
  g_assert_null (cow_storage_new (64, a, &err));
  assert_error (&err, COW_ERROR_NO_MEMORY, NULL);
  g_assert_cmpint (test_allocator_n_live (alloc), ==, 0);

  /* The allocator recovers; so does the engine. */
  cow_error_clear (&err);
  CowTensor *t = cow_tensor_empty_with_allocator (SIZES (4, 4), COW_DTYPE_F32, a, &err);
  test_assert_cow_ok (&err);
  g_assert_nonnull (t);
  cow_tensor_unref (t);
  g_assert_cmpint (test_allocator_n_live (alloc), ==, 0);
  test_allocator_free (alloc);
}

static void
test_allocation_failure_in_copying_ops (void)
{
  CowError err = { 0 };
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *t = cow_tensor_empty_with_allocator (SIZES (3, 3), COW_DTYPE_F64,
                                                  test_allocator_get (alloc), &err);
  double *p = cow_tensor_mutable_data (t, &err);
  for (int i = 0; i < 9; i++)
    p[i] = i;
  CowTensor *tt = cow_tensor_transpose (t, 0, 1, &err);
  test_assert_cow_ok (&err);

  /* Copies of a tensor come from its allocator: they fail cleanly. */
  test_allocator_fail_next (alloc, 1);
  assert_fails (cow_tensor_clone (t, &err), &err, COW_ERROR_NO_MEMORY, NULL);
  test_allocator_fail_next (alloc, 1);
  assert_fails (cow_tensor_contiguous (tt, &err), &err, COW_ERROR_NO_MEMORY, NULL);
  /* An overlapping copy_ needs a temporary: if it cannot be had, nothing
   * is written. */
  test_allocator_fail_next (alloc, 1);
  assert_status (cow_tensor_copy_ (t, tt, &err), &err, COW_ERROR_NO_MEMORY, NULL);
  test_allocator_fail_next (alloc, 1);
  assert_status (cow_tensor_add_ (t, tt, 1, &err), &err, COW_ERROR_NO_MEMORY, NULL);
  test_assert_tensor_values (t, 0, 1, 2, 3, 4, 5, 6, 7, 8);
  g_assert_cmpint (test_allocator_n_live (alloc), ==, 1);

  cow_tensor_unref (tt);
  cow_tensor_unref (t);
  test_allocator_free (alloc);
}

static void
test_allocation_failure_on_materialize (void)
{
  CowError err = { 0 };
  TestAllocator *alloc = test_allocator_new ();
  CowTensor *t = cow_tensor_empty_with_allocator (SIZES (4), COW_DTYPE_F32,
                                                  test_allocator_get (alloc), &err);
  float *p = cow_tensor_mutable_data (t, &err);
  for (int i = 0; i < 4; i++)
    p[i] = (float) (i + 1);
  CowTensor *c = cow_tensor_lazy_clone (t, &err);
  test_assert_cow_ok (&err);
  uintptr_t shared = cow_tensor_data_address (t);
  guint64 context = cow_storage_context_id (cow_tensor_storage (t));
  g_assert_cmpuint (cow_tensor_data_address (c), ==, shared);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);

  /* The second allocation (the clone's own copy) fails. */
  test_allocator_fail_next (alloc, 1);
  cow_error_clear (&err);
  g_assert_null (cow_tensor_mutable_data (c, &err));
  assert_error (&err, COW_ERROR_NO_MEMORY, NULL);
  test_allocator_fail_next (alloc, 1);
  assert_status (cow_tensor_fill_ (c, 9, &err), &err, COW_ERROR_NO_MEMORY, NULL);
  CowTensor *one = test_tensor_f32 (SIZES (1), (float[]) { 1 });
  test_allocator_fail_next (alloc, 1);
  assert_status (cow_tensor_add_ (c, one, 1, &err), &err, COW_ERROR_NO_MEMORY, NULL);
  test_allocator_fail_next (alloc, 1);
  cow_error_clear (&err);
  g_assert_null (cow_storage_mutable_data (cow_tensor_storage (c), &err));
  assert_error (&err, COW_ERROR_NO_MEMORY, NULL);

  /* The clone is still a valid lazy copy with its data... */
  g_assert_true (cow_tensor_is_cow (c));
  g_assert_cmpuint (cow_tensor_data_address (c), ==, shared);
  g_assert_cmpuint (cow_storage_context_id (cow_tensor_storage (c)), ==, context);
  g_assert_cmpint (cow_storage_context_refcount (cow_tensor_storage (c)), ==, 2);
  test_assert_tensor_values (c, 1, 2, 3, 4);
  /* ...and the other side is untouched. */
  g_assert_true (cow_tensor_is_cow (t));
  g_assert_cmpuint (cow_tensor_data_address (t), ==, shared);
  test_assert_tensor_values (t, 1, 2, 3, 4);
  g_assert_cmpint (test_allocator_n_live (alloc), ==, 1);

  /* Once memory is available again, the write goes through. */
  cow_error_clear (&err);
  g_assert_cmpint (cow_tensor_fill_ (c, 9, &err), ==, COW_OK);
  test_assert_cow_ok (&err);
  g_assert_false (cow_tensor_is_cow (c));
  test_assert_tensor_filled (c, 9);
  test_assert_tensor_values (t, 1, 2, 3, 4);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 2);
  /* t is now the last sharer: it takes the bytes without allocating. */
  g_assert_nonnull (cow_tensor_mutable_data (t, &err));
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 2);
  g_assert_cmpuint (cow_tensor_data_address (t), ==, shared);

  cow_tensor_unref (one);
  cow_tensor_unref (c);
  cow_tensor_unref (t);
  g_assert_cmpint (test_allocator_n_live (alloc), ==, 0);
  test_allocator_free (alloc);
}

/* An allocator whose copy_data can be told to fail. */
typedef struct {
  CowAllocator base;
  gboolean fail_copy;
  gint live;
} CopyFailAllocator;

static void
copy_fail_free (void *context)
{
  char *block = (char *) context - 64;
  CopyFailAllocator *self;
  memcpy (&self, block, sizeof self);
  self->live--;
  g_free (block);
}

static CowStatus
copy_fail_allocate (CowAllocator *allocator, size_t nbytes, CowDataPtr *out, CowError *error)
{
  CopyFailAllocator *self = (CopyFailAllocator *) allocator;
  (void) error;
  char *block = g_malloc0 (64 + nbytes);
  memcpy (block, &self, sizeof self);
  self->live++;
  *out = (CowDataPtr) { .data = block + 64, .context = block + 64, .deleter = copy_fail_free };
  return COW_OK;
}

static CowStatus
copy_fail_copy (CowAllocator *allocator, void *dst, const void *src, size_t nbytes,
                CowError *error)
{
  CopyFailAllocator *self = (CopyFailAllocator *) allocator;
  if (self->fail_copy)
    {
      if (error != NULL)
        {
          error->code = COW_ERROR_DEVICE;
          g_strlcpy (error->message, "test: copy engine unavailable", sizeof error->message);
        }
      return COW_ERROR_DEVICE;
    }
  memcpy (dst, src, nbytes);
  return COW_OK;
}

static bool
copy_fail_is_simple (CowAllocator *allocator, const CowDataPtr *ptr)
{
  (void) allocator;
  return ptr->data == ptr->context && ptr->deleter == copy_fail_free;
}

static void
test_copy_failure_on_materialize (void)
{
  CowError err = { 0 };
  CopyFailAllocator alloc = {
    .base = { .name = "copy-fail", .device_type = COW_DEVICE_CPU,
              .allocate = copy_fail_allocate, .copy_data = copy_fail_copy,
              .is_simple_data_ptr = copy_fail_is_simple },
  };
  CowTensor *t = cow_tensor_empty_with_allocator (SIZES (3), COW_DTYPE_I32, &alloc.base, &err);
  int32_t *p = cow_tensor_mutable_data (t, &err);
  p[0] = 5, p[1] = 6, p[2] = 7;
  CowTensor *c = cow_tensor_lazy_clone (t, &err);
  test_assert_cow_ok (&err);

  alloc.fail_copy = TRUE;
  cow_error_clear (&err);
  g_assert_null (cow_tensor_mutable_data (t, &err));
  /* The allocator's own error comes through, and its block is returned. */
  assert_error (&err, COW_ERROR_DEVICE, "copy engine");
  g_assert_cmpint (alloc.live, ==, 1);
  g_assert_true (cow_tensor_is_cow (t));
  g_assert_true (cow_tensor_is_cow (c));
  test_assert_tensor_values (t, 5, 6, 7);
  test_assert_tensor_values (c, 5, 6, 7);

  alloc.fail_copy = FALSE;
  g_assert_cmpint (cow_tensor_fill_ (t, 1, &err), ==, COW_OK);
  test_assert_tensor_values (t, 1, 1, 1);
  test_assert_tensor_values (c, 5, 6, 7);
  g_assert_cmpint (alloc.live, ==, 2);
  cow_tensor_unref (c);
  cow_tensor_unref (t);
  g_assert_cmpint (alloc.live, ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/errors/create/negative-size", test_create_negative_size);
  g_test_add_func ("/errors/create/bad-ndim", test_create_bad_ndim);
  g_test_add_func ("/errors/create/element-count-overflow", test_create_element_count_overflow);
  g_test_add_func ("/errors/create/byte-count-overflow", test_create_byte_count_overflow);
  g_test_add_func ("/errors/create/invalid-dtype", test_create_invalid_dtype);
  g_test_add_func ("/errors/create/huge-allocation", test_create_huge_allocation);
  g_test_add_func ("/errors/create/from-data-wrong-byte-count", test_from_data_wrong_byte_count);
  g_test_add_func ("/errors/create/storage-constructors", test_storage_constructors_reject_bad_input);

  g_test_add_func ("/errors/views/slice-out-of-range", test_slice_out_of_range);
  g_test_add_func ("/errors/views/slice-step-not-positive", test_slice_step_not_positive);
  g_test_add_func ("/errors/views/slice-huge-step-does-not-overflow",
                   test_slice_huge_step_does_not_overflow);
  g_test_add_func ("/errors/views/select-narrow-out-of-range", test_select_narrow_out_of_range);
  g_test_add_func ("/errors/views/dim-out-of-range", test_dim_out_of_range);
  g_test_add_func ("/errors/views/permute-not-a-permutation", test_permute_not_a_permutation);
  g_test_add_func ("/errors/views/as-strided-outside-storage", test_as_strided_outside_storage);
  g_test_add_func ("/errors/views/view-wrong-element-count", test_view_wrong_element_count);
  g_test_add_func ("/errors/views/expand-bad-sizes", test_expand_bad_sizes);

  g_test_add_func ("/errors/ops/shape-mismatch", test_binary_shape_mismatch);
  g_test_add_func ("/errors/ops/dtype-mismatch", test_binary_dtype_mismatch);
  g_test_add_func ("/errors/ops/matmul-unsupported-ranks", test_matmul_unsupported_ranks);
  g_test_add_func ("/errors/ops/in-place-broadcast-result-differs",
                   test_in_place_broadcast_result_differs);
  g_test_add_func ("/errors/ops/fill-value-does-not-fit", test_fill_value_does_not_fit);
  g_test_add_func ("/errors/ops/element-access", test_element_access_errors);

  g_test_add_func ("/errors/null/tensor-arguments", test_null_tensor_arguments);
  g_test_add_func ("/errors/null/error-pointer-keeps-status", test_null_error_pointer_keeps_status);

  g_test_add_func ("/errors/alloc/failure-on-creation", test_allocation_failure_on_creation);
  g_test_add_func ("/errors/alloc/failure-in-copying-ops", test_allocation_failure_in_copying_ops);
  g_test_add_func ("/errors/alloc/failure-on-materialize", test_allocation_failure_on_materialize);
  g_test_add_func ("/errors/alloc/copy-failure-on-materialize", test_copy_failure_on_materialize);

  return g_test_run ();
}
