/* test-ops.c — arithmetic: fill, add, mul, scale, matmul, sum, copy and
 * item, across dtypes, broadcasting and strided inputs. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "cowtensor.h"
#include "test-support.h"


#define SIZES(...) (sizeof ((const int64_t[]) { __VA_ARGS__ }) / sizeof (int64_t)), \
                   ((const int64_t[]) { __VA_ARGS__ })

static CowTensor *
tensor_i64 (int ndim, const int64_t *sizes, const int64_t *values)
{
  CowError err = { 0 };
  int64_t n = 1;
  for (int d = 0; d < ndim; d++)
    n *= sizes[d];
  CowTensor *t = cow_tensor_from_data (ndim, sizes, COW_DTYPE_I64, values,
                                       (size_t) n * sizeof (int64_t), &err);
  test_assert_cow_ok (&err);
  return t;
}

static CowTensor *
tensor_i32 (int ndim, const int64_t *sizes, const int32_t *values)
{
  CowError err = { 0 };
  int64_t n = 1;
  for (int d = 0; d < ndim; d++)
    n *= sizes[d];
  CowTensor *t = cow_tensor_from_data (ndim, sizes, COW_DTYPE_I32, values,
                                       (size_t) n * sizeof (int32_t), &err);
  test_assert_cow_ok (&err);
  return t;
}

/* A 0-dim result's only element through cow_tensor_item(). */
static double
item (CowTensor *t)
{
  CowError err = { 0 };
  double value = NAN;
  g_assert_cmpint (cow_tensor_item (t, &value, &err), ==, COW_OK);
  test_assert_cow_ok (&err);
  return value;
}

static int64_t
item_i64 (CowTensor *t)
{
  CowError err = { 0 };
  int64_t value = 0;
  g_assert_cmpint (cow_tensor_dtype (t), ==, COW_DTYPE_I64);
  g_assert_cmpint (cow_tensor_numel (t), ==, 1);
  g_assert_cmpint (cow_tensor_read_elements (t, &value, sizeof value, &err), ==, COW_OK);
  return value;
}

/* ------------------------------------------------------------------ */
/* fill_                                                               */
/* ------------------------------------------------------------------ */

static void
test_fill_every_dtype (void)
{
  static const struct {
    CowDType dtype;
    double value, expected;
  } cases[] = {
    { COW_DTYPE_F32, 2.5, 2.5 },
    { COW_DTYPE_F64, -1.25, -1.25 },
    { COW_DTYPE_I32, -7, -7 },
    { COW_DTYPE_I64, 123456789, 123456789 },
    { COW_DTYPE_U8, 200, 200 },
    { COW_DTYPE_BOOL, 1, 1 },
    { COW_DTYPE_BOOL, 0, 0 },
    { COW_DTYPE_BOOL, 2.5, 1 }, /* any non-zero value is true */
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      CowError err = { 0 };
      CowTensor *t = cow_tensor_zeros (SIZES (3, 5), cases[i].dtype, &err);
      test_assert_cow_ok (&err);
      g_assert_cmpint (cow_tensor_fill_ (t, cases[i].value, &err), ==, COW_OK);
      test_assert_cow_ok (&err);
      g_assert_cmpint (cow_tensor_numel (t), ==, 15);
      test_assert_tensor_filled (t, cases[i].expected);
      cow_tensor_unref (t);
    }
}

static void
test_fill_strided_view_only (void)
{
  CowError err = { 0 };
  CowTensor *t = cow_tensor_zeros (SIZES (3, 4), COW_DTYPE_F32, &err);
  CowTensor *tt = cow_tensor_transpose (t, 0, 1, &err);
  CowTensor *cols = cow_tensor_slice (tt, 0, 1, 4, 2, &err); /* columns 1 and 3 */

  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_fill_ (cols, 9, &err), ==, COW_OK);
  test_assert_tensor_values (t, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9);
  /* A 0-dim tensor and an empty tensor. */
  CowTensor *s = cow_tensor_zeros (0, NULL, COW_DTYPE_I64, &err);
  g_assert_cmpint (cow_tensor_fill_ (s, 5, &err), ==, COW_OK);
  test_assert_tensor_values (s, 5);
  CowTensor *e = cow_tensor_empty (SIZES (0, 3), COW_DTYPE_F64, &err);
  g_assert_cmpint (cow_tensor_fill_ (e, 1, &err), ==, COW_OK);
  cow_tensor_unref (e);
  cow_tensor_unref (s);
  cow_tensor_unref (cols);
  cow_tensor_unref (tt);
  cow_tensor_unref (t);
}

/* ------------------------------------------------------------------ */
/* add / mul                                                           */
/* ------------------------------------------------------------------ */

static void
test_add_same_shape_with_alpha (void)
{
  CowError err = { 0 };
  CowTensor *a = test_tensor_f32 (SIZES (2, 3), (float[]) { 1, 2, 3, 4, 5, 6 });
  CowTensor *b = test_tensor_f32 (SIZES (2, 3), (float[]) { 10, 20, 30, 40, 50, 60 });

  CowTensor *c = cow_tensor_add (a, b, 1, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_dtype (c), ==, COW_DTYPE_F32);
  test_assert_tensor_sizes (c, 2, ((int64_t[]) { 2, 3 }));
  test_assert_tensor_values (c, 11, 22, 33, 44, 55, 66);
  g_assert_false (cow_tensor_is_alias_of (c, a));
  g_assert_false (cow_tensor_is_alias_of (c, b));

  CowTensor *d = cow_tensor_add (a, b, 0.5, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (d, 6, 12, 18, 24, 30, 36);
  CowTensor *e = cow_tensor_add (a, b, -2, &err);
  test_assert_tensor_values (e, -19, -38, -57, -76, -95, -114);

  /* The inputs are not written. */
  test_assert_tensor_values (a, 1, 2, 3, 4, 5, 6);
  test_assert_tensor_values (b, 10, 20, 30, 40, 50, 60);
  cow_tensor_unref (e);
  cow_tensor_unref (d);
  cow_tensor_unref (c);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
}

static void
test_add_broadcasts_row (void)
{
  CowError err = { 0 };
  CowTensor *a = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (2, 3),
                                           (double[]) { 1, 2, 3, 4, 5, 6 });
  CowTensor *b = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (3),
                                           (double[]) { 100, 200, 300 });
  CowTensor *c = cow_tensor_add (a, b, 1, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_sizes (c, 2, ((int64_t[]) { 2, 3 }));
  test_assert_tensor_values (c, 101, 202, 303, 104, 205, 306);
  /* Either order. */
  CowTensor *d = cow_tensor_add (b, a, 1, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (d, 101, 202, 303, 104, 205, 306);
  cow_tensor_unref (d);
  cow_tensor_unref (c);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
}

static void
test_add_broadcasts_both (void)
{
  CowError err = { 0 };
  CowTensor *col = test_tensor_from_doubles (COW_DTYPE_I32, SIZES (2, 1),
                                             (double[]) { 10, 20 });
  CowTensor *row = test_tensor_from_doubles (COW_DTYPE_I32, SIZES (1, 3),
                                             (double[]) { 1, 2, 3 });
  CowTensor *c = cow_tensor_add (col, row, 1, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_dtype (c), ==, COW_DTYPE_I32);
  test_assert_tensor_sizes (c, 2, ((int64_t[]) { 2, 3 }));
  test_assert_tensor_values (c, 11, 12, 13, 21, 22, 23);
  CowTensor *m = cow_tensor_mul (col, row, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (m, 10, 20, 30, 20, 40, 60);
  /* With a 0-dim operand. */
  CowTensor *s = test_tensor_from_doubles (COW_DTYPE_I32, 0, NULL, (double[]) { -1 });
  CowTensor *cs = cow_tensor_add (row, s, 3, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_sizes (cs, 2, ((int64_t[]) { 1, 3 }));
  test_assert_tensor_values (cs, -2, -1, 0);
  cow_tensor_unref (cs);
  cow_tensor_unref (s);
  cow_tensor_unref (m);
  cow_tensor_unref (c);
  cow_tensor_unref (row);
  cow_tensor_unref (col);
}

static void
test_add_in_place_broadcast (void)
{
  CowError err = { 0 };
  CowTensor *a = test_tensor_f32 (SIZES (2, 3), (float[]) { 1, 2, 3, 4, 5, 6 });
  CowTensor *b = test_tensor_f32 (SIZES (3), (float[]) { 1, 1, 2 });
  uintptr_t where = cow_tensor_data_address (a);

  g_assert_cmpint (cow_tensor_add_ (a, b, -1, &err), ==, COW_OK);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (a, 0, 1, 1, 3, 4, 4);
  g_assert_cmpuint (cow_tensor_data_address (a), ==, where);
  test_assert_tensor_values (b, 1, 1, 2);

  /* Into a strided view: the base sees it. */
  CowTensor *tt = cow_tensor_transpose (a, 0, 1, &err); /* [3,2] */
  CowTensor *col = test_tensor_f32 (SIZES (3, 1), (float[]) { 10, 20, 30 });
  g_assert_cmpint (cow_tensor_add_ (tt, col, 1, &err), ==, COW_OK);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (a, 10, 21, 31, 13, 24, 34);

  /* a.add_(a): same layout, reads and writes the same element. */
  g_assert_cmpint (cow_tensor_add_ (a, a, 1, &err), ==, COW_OK);
  test_assert_tensor_values (a, 20, 42, 62, 26, 48, 68);

  cow_tensor_unref (col);
  cow_tensor_unref (tt);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
}

static void
test_add_in_place_from_overlapping_view (void)
{
  CowError err = { 0 };
  /* m += m^T over one storage: the transposed input must be read before
   * it is overwritten. */
  CowTensor *m = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (3, 3),
                                           (double[]) { 1, 2, 3, 4, 5, 6, 7, 8, 9 });
  CowTensor *mt = cow_tensor_transpose (m, 0, 1, &err);
  g_assert_cmpint (cow_tensor_add_ (m, mt, 1, &err), ==, COW_OK);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (m, 2, 6, 10, 6, 10, 14, 10, 14, 18);
  cow_tensor_unref (mt);
  cow_tensor_unref (m);
}

static void
test_mul_and_mul_in_place (void)
{
  CowError err = { 0 };
  CowTensor *a = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (2, 2),
                                           (double[]) { 1, -2, 3, 0.5 });
  CowTensor *b = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (2, 2),
                                           (double[]) { 4, 5, -6, 8 });
  CowTensor *c = cow_tensor_mul (a, b, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (c, 4, -10, -18, 4);
  test_assert_tensor_values (a, 1, -2, 3, 0.5);

  CowTensor *col = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (2, 1),
                                             (double[]) { 2, -1 });
  g_assert_cmpint (cow_tensor_mul_ (a, col, &err), ==, COW_OK);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (a, 2, -4, -3, -0.5);

  /* u8 and i64 too. */
  CowTensor *u = test_tensor_from_doubles (COW_DTYPE_U8, SIZES (3), (double[]) { 2, 3, 15 });
  CowTensor *uu = cow_tensor_mul (u, u, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_dtype (uu), ==, COW_DTYPE_U8);
  test_assert_tensor_values (uu, 4, 9, 225);
  CowTensor *l = tensor_i64 (SIZES (2), (int64_t[]) { -3, 1000000 });
  g_assert_cmpint (cow_tensor_mul_ (l, l, &err), ==, COW_OK);
  test_assert_tensor_values (l, 9, 1e12);

  cow_tensor_unref (l);
  cow_tensor_unref (uu);
  cow_tensor_unref (u);
  cow_tensor_unref (col);
  cow_tensor_unref (c);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
}

static void
test_add_non_contiguous_inputs (void)
{
  CowError err = { 0 };
  CowTensor *base = test_tensor_arange_f32 (SIZES (3, 4), 0);
  CowTensor *tt = cow_tensor_transpose (base, 0, 1, &err);   /* [4,3] */
  CowTensor *part = cow_tensor_slice (tt, 0, 0, 4, 2, &err); /* rows 0, 2: [2,3] */
  CowTensor *row = test_tensor_f32 (SIZES (1, 3), (float[]) { 1, 2, 3 });
  CowTensor *e = cow_tensor_expand (row, SIZES (2, 3), &err);         /* stride 0 */
  test_assert_cow_ok (&err);
  CowTensor *c = cow_tensor_add (part, e, 10, &err);
  test_assert_cow_ok (&err);
  /* part = [[0, 4, 8], [2, 6, 10]] */
  test_assert_tensor_values (c, 10, 24, 38, 12, 26, 40);
  g_assert_true (cow_tensor_is_contiguous (c));
  cow_tensor_unref (c);
  cow_tensor_unref (e);
  cow_tensor_unref (row);
  cow_tensor_unref (part);
  cow_tensor_unref (tt);
  cow_tensor_unref (base);
}

static void
test_bool_add_and_mul (void)
{
  CowError err = { 0 };
  CowTensor *a = test_tensor_from_doubles (COW_DTYPE_BOOL, SIZES (4), (double[]) { 0, 0, 1, 1 });
  CowTensor *b = test_tensor_from_doubles (COW_DTYPE_BOOL, SIZES (4), (double[]) { 0, 1, 0, 1 });
  CowTensor *sum = cow_tensor_add (a, b, 1, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_dtype (sum), ==, COW_DTYPE_BOOL);
  test_assert_tensor_values (sum, 0, 1, 1, 1); /* or */
  CowTensor *prod = cow_tensor_mul (a, b, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (prod, 0, 0, 0, 1); /* and */
  cow_tensor_unref (prod);
  cow_tensor_unref (sum);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
}

/* ------------------------------------------------------------------ */
/* Integer overflow wraps (the suite runs under UBSan)                 */
/* ------------------------------------------------------------------ */

static void
test_integer_add_wraps (void)
{
  CowError err = { 0 };
  CowTensor *a = tensor_i32 (SIZES (3), (int32_t[]) { INT32_MAX, INT32_MIN, 5 });
  CowTensor *b = tensor_i32 (SIZES (3), (int32_t[]) { 1, -1, 3 });
  CowTensor *c = cow_tensor_add (a, b, 1, &err);
  test_assert_cow_ok (&err);
  int32_t got[3];
  g_assert_cmpint (cow_tensor_read_elements (c, got, sizeof got, &err), ==, COW_OK);
  g_assert_cmpint (got[0], ==, INT32_MIN);
  g_assert_cmpint (got[1], ==, INT32_MAX);
  g_assert_cmpint (got[2], ==, 8);

  /* alpha scales too, modulo 2^32: 5 + 2^31 * 3 wraps to 5 + 2^31. */
  CowTensor *d = cow_tensor_add (a, b, 2147483648.0, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_read_elements (d, got, sizeof got, &err), ==, COW_OK);
  g_assert_cmpint (got[2], ==, (int32_t) (5u + 0x80000000u));

  CowTensor *l = tensor_i64 (SIZES (2), (int64_t[]) { INT64_MAX, INT64_MIN });
  CowTensor *one = tensor_i64 (SIZES (1), (int64_t[]) { 1 });
  g_assert_cmpint (cow_tensor_add_ (l, one, 1, &err), ==, COW_OK);
  int64_t got64[2];
  g_assert_cmpint (cow_tensor_read_elements (l, got64, sizeof got64, &err), ==, COW_OK);
  g_assert_cmpint (got64[0], ==, INT64_MIN);
  g_assert_cmpint (got64[1], ==, INT64_MIN + 1);
  g_assert_cmpint (cow_tensor_add_ (l, one, -1, &err), ==, COW_OK);
  g_assert_cmpint (cow_tensor_read_elements (l, got64, sizeof got64, &err), ==, COW_OK);
  g_assert_cmpint (got64[0], ==, INT64_MAX);
  g_assert_cmpint (got64[1], ==, INT64_MIN);

  CowTensor *u = test_tensor_from_doubles (COW_DTYPE_U8, SIZES (2), (double[]) { 200, 3 });
  CowTensor *v = test_tensor_from_doubles (COW_DTYPE_U8, SIZES (2), (double[]) { 100, 5 });
  CowTensor *w = cow_tensor_add (u, v, 1, &err);
  test_assert_tensor_values (w, 44, 8);
  CowTensor *x = cow_tensor_add (v, u, -1, &err); /* 100 - 200, 5 - 3 */
  test_assert_cow_ok (&err);
  test_assert_tensor_values (x, 156, 2);

  cow_tensor_unref (x);
  cow_tensor_unref (w);
  cow_tensor_unref (v);
  cow_tensor_unref (u);
  cow_tensor_unref (one);
  cow_tensor_unref (l);
  cow_tensor_unref (d);
  cow_tensor_unref (c);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
}

static void
test_integer_mul_wraps (void)
{
  CowError err = { 0 };
  CowTensor *a = tensor_i32 (SIZES (3), (int32_t[]) { 46341, 65536, -2 });
  CowTensor *c = cow_tensor_mul (a, a, &err);
  test_assert_cow_ok (&err);
  int32_t got[3];
  g_assert_cmpint (cow_tensor_read_elements (c, got, sizeof got, &err), ==, COW_OK);
  g_assert_cmpint (got[0], ==, (int32_t) (46341u * 46341u)); /* -2147479015 */
  g_assert_cmpint (got[1], ==, 0);
  g_assert_cmpint (got[2], ==, 4);

  CowTensor *l = tensor_i64 (SIZES (2), (int64_t[]) { INT64_C (1) << 62, INT64_MIN });
  CowTensor *four = tensor_i64 (0, NULL, (int64_t[]) { 4 });
  g_assert_cmpint (cow_tensor_mul_ (l, four, &err), ==, COW_OK);
  int64_t got64[2];
  g_assert_cmpint (cow_tensor_read_elements (l, got64, sizeof got64, &err), ==, COW_OK);
  g_assert_cmpint (got64[0], ==, 0);
  g_assert_cmpint (got64[1], ==, 0);

  CowTensor *u = test_tensor_from_doubles (COW_DTYPE_U8, SIZES (2), (double[]) { 16, 255 });
  CowTensor *uu = cow_tensor_mul (u, u, &err);
  test_assert_tensor_values (uu, 0, 1);

  cow_tensor_unref (uu);
  cow_tensor_unref (u);
  cow_tensor_unref (four);
  cow_tensor_unref (l);
  cow_tensor_unref (c);
  cow_tensor_unref (a);
}

static void
test_i64_arithmetic_is_exact (void)
{
  CowError err = { 0 };
  /* Beyond 2^53 doubles cannot tell these apart; i64 ops must. */
  const int64_t big = (INT64_C (1) << 60) + 1;
  CowTensor *a = tensor_i64 (SIZES (2), (int64_t[]) { big, -big });
  CowTensor *b = tensor_i64 (SIZES (2), (int64_t[]) { 2, 3 });
  CowTensor *c = cow_tensor_add (a, b, 1, &err);
  test_assert_cow_ok (&err);
  int64_t got[2];
  g_assert_cmpint (cow_tensor_read_elements (c, got, sizeof got, &err), ==, COW_OK);
  g_assert_cmpint (got[0], ==, big + 2);
  g_assert_cmpint (got[1], ==, -big + 3);
  CowTensor *s = cow_tensor_sum (a, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (item_i64 (s), ==, 0);
  CowTensor *s2 = cow_tensor_sum (c, &err);
  g_assert_cmpint (item_i64 (s2), ==, 5);
  cow_tensor_unref (s2);
  cow_tensor_unref (s);
  cow_tensor_unref (c);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
}

/* ------------------------------------------------------------------ */
/* scale_                                                              */
/* ------------------------------------------------------------------ */

static void
test_scale_in_place (void)
{
  CowError err = { 0 };
  CowTensor *f = test_tensor_f32 (SIZES (2, 2), (float[]) { 1, -2, 0.5f, 4 });
  g_assert_cmpint (cow_tensor_scale_ (f, -2, &err), ==, COW_OK);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (f, -2, 4, -1, -8);

  CowTensor *i = test_tensor_from_doubles (COW_DTYPE_I32, SIZES (3), (double[]) { 3, -4, 0 });
  g_assert_cmpint (cow_tensor_scale_ (i, 3, &err), ==, COW_OK);
  test_assert_tensor_values (i, 9, -12, 0);

  /* Scaling a strided view changes only its elements. */
  CowTensor *d = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (2, 3),
                                           (double[]) { 1, 2, 3, 4, 5, 6 });
  CowTensor *col = cow_tensor_select (d, 1, 1, &err);
  g_assert_cmpint (cow_tensor_scale_ (col, 10, &err), ==, COW_OK);
  test_assert_tensor_values (d, 1, 20, 3, 4, 50, 6);

  cow_tensor_unref (col);
  cow_tensor_unref (d);
  cow_tensor_unref (i);
  cow_tensor_unref (f);
}

static void
test_scale_integer_factor_wraps_or_fails (void)
{
  CowError err = { 0 };
  /* 2^32 + 1 ≡ 1 (mod 2^32): as with add's alpha, the factor wraps like
   * the arithmetic, or the op refuses it.  Saturating the factor to
   * INT32_MAX would silently give a third answer. */
  CowTensor *i = tensor_i32 (SIZES (2), (int32_t[]) { 3, -2 });
  CowStatus status = cow_tensor_scale_ (i, 4294967297.0, &err);
  if (status == COW_OK)
    test_assert_tensor_values (i, 3, -2);
  else
    test_assert_cow_error (&err, status);
  cow_error_clear (&err);

  /* u8 × 255 wraps like u8 × u8: 3 × 255 = 765 ≡ 253. */
  CowTensor *u = test_tensor_from_doubles (COW_DTYPE_U8, SIZES (1), (double[]) { 3 });
  g_assert_cmpint (cow_tensor_scale_ (u, 255, &err), ==, COW_OK);
  test_assert_tensor_values (u, 253);
  cow_tensor_unref (u);
  cow_tensor_unref (i);
}

/* ------------------------------------------------------------------ */
/* matmul                                                              */
/* ------------------------------------------------------------------ */

/* Reference product of @a (m×k, or k as a row) and @b (k×n, or k as a
 * column), read element by element through get_f64. */
static double *
reference_matmul (const CowTensor *a, const CowTensor *b, int64_t *m_out, int64_t *n_out)
{
  int a2 = cow_tensor_ndim (a) == 2, b2 = cow_tensor_ndim (b) == 2;
  int64_t m = a2 ? cow_tensor_size (a, 0) : 1;
  int64_t k = cow_tensor_size (a, -1);
  int64_t n = b2 ? cow_tensor_size (b, 1) : 1;
  double *out = g_new0 (double, (gsize) (m * n) + 1);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++)
      for (int64_t p = 0; p < k; p++)
        {
          int64_t ia[2] = { a2 ? i : p, p }, ib[2] = { p, j };
          out[i * n + j] += test_tensor_get (a, ia) * test_tensor_get (b, ib);
        }
  *m_out = m;
  *n_out = n;
  return out;
}

static void
check_matmul (CowTensor *a, CowTensor *b, double eps)
{
  CowError err = { 0 };
  int64_t m, n;
  g_autofree double *expected = reference_matmul (a, b, &m, &n);
  CowTensor *c = cow_tensor_matmul (a, b, &err);
  test_assert_cow_ok (&err);
  g_assert_nonnull (c);
  g_assert_cmpint (cow_tensor_dtype (c), ==, cow_tensor_dtype (a));
  int expected_ndim = (cow_tensor_ndim (a) == 2) + (cow_tensor_ndim (b) == 2);
  g_assert_cmpint (cow_tensor_ndim (c), ==, expected_ndim);
  if (cow_tensor_ndim (a) == 2)
    g_assert_cmpint (cow_tensor_size (c, 0), ==, m);
  if (cow_tensor_ndim (b) == 2)
    g_assert_cmpint (cow_tensor_size (c, -1), ==, n);
  test_assert_tensor_close (c, expected, (gsize) (m * n), eps);
  cow_tensor_unref (c);
}

static void
test_matmul_2d_2d (void)
{
  CowTensor *a = test_tensor_f32 (SIZES (2, 3), (float[]) { 1, 2, 3, 4, 5, 6 });
  CowTensor *b = test_tensor_f32 (SIZES (3, 4), (float[]) { 1, 0, -1, 2, 0.5f, 1, 1, 0,
                                                           -2, 3, 0, 1 });
  CowError err = { 0 };
  CowTensor *c = cow_tensor_matmul (a, b, &err);
  test_assert_cow_ok (&err);
  /* Hand-computed, independent of the reference helper. */
  test_assert_tensor_values (c, -4, 11, 1, 5, -5.5, 23, 1, 14);
  check_matmul (a, b, 1e-5);
  cow_tensor_unref (c);
  cow_tensor_unref (b);
  cow_tensor_unref (a);

  CowTensor *x = cow_tensor_empty (SIZES (5, 7), COW_DTYPE_F64, &err);
  CowTensor *y = cow_tensor_empty (SIZES (7, 3), COW_DTYPE_F64, &err);
  double *px = cow_tensor_mutable_data (x, &err), *py = cow_tensor_mutable_data (y, &err);
  for (int i = 0; i < 35; i++)
    px[i] = ((i * 37) % 11) * 0.375 - 1.5;
  for (int i = 0; i < 21; i++)
    py[i] = ((i * 13) % 7) * -0.625 + 2.25;
  check_matmul (x, y, 1e-12);
  cow_tensor_unref (y);
  cow_tensor_unref (x);
}

static void
test_matmul_vector_cases (void)
{
  CowError err = { 0 };
  CowTensor *v3 = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (3), (double[]) { 1, -1, 2 });
  CowTensor *m34 = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (3, 4),
                                             (double[]) { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 });
  CowTensor *m23 = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (2, 3),
                                             (double[]) { 1, 0, 2, -1, 3, 1 });

  /* 1-D × 2-D → [4] */
  CowTensor *r = cow_tensor_matmul (v3, m34, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_sizes (r, 1, ((int64_t[]) { 4 }));
  test_assert_tensor_values (r, 14, 16, 18, 20);
  check_matmul (v3, m34, 0);
  /* 2-D × 1-D → [2] */
  CowTensor *c = cow_tensor_matmul (m23, v3, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_sizes (c, 1, ((int64_t[]) { 2 }));
  test_assert_tensor_values (c, 5, -2);
  check_matmul (m23, v3, 0);
  /* 1-D · 1-D → 0-dim */
  CowTensor *dot = cow_tensor_matmul (v3, v3, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_ndim (dot), ==, 0);
  g_assert_cmpfloat (item (dot), ==, 6);

  cow_tensor_unref (dot);
  cow_tensor_unref (c);
  cow_tensor_unref (r);
  cow_tensor_unref (m23);
  cow_tensor_unref (m34);
  cow_tensor_unref (v3);
}

static void
test_matmul_non_contiguous_inputs (void)
{
  CowError err = { 0 };
  CowTensor *base = test_tensor_arange_f32 (SIZES (4, 3), -5);
  CowTensor *at = cow_tensor_transpose (base, 0, 1, &err);          /* [3,4] */
  CowTensor *b = test_tensor_arange_f32 (SIZES (8, 2), 1);
  CowTensor *bs = cow_tensor_slice (b, 0, 0, 8, 2, &err);           /* [4,2], stride 4 */
  CowTensor *bs_t = cow_tensor_transpose (bs, 0, 1, &err);          /* [2,4] */
  test_assert_cow_ok (&err);

  check_matmul (at, bs, 1e-4);
  check_matmul (bs_t, base, 1e-4);
  /* A broadcast (stride 0) operand. */
  CowTensor *row = test_tensor_f32 (SIZES (1, 4), (float[]) { 1, 2, 3, 4 });
  CowTensor *rows = cow_tensor_expand (row, SIZES (3, 4), &err);
  test_assert_cow_ok (&err);
  check_matmul (rows, bs, 1e-4);
  /* A 1-D strided vector. */
  CowTensor *col = cow_tensor_select (base, 1, 2, &err);            /* [4], stride 3 */
  check_matmul (at, col, 1e-4);
  check_matmul (col, base, 1e-4);

  /* The inputs are unchanged and still alias their bases. */
  g_assert_true (cow_tensor_is_alias_of (at, base));
  test_assert_tensor_values (row, 1, 2, 3, 4);

  cow_tensor_unref (col);
  cow_tensor_unref (rows);
  cow_tensor_unref (row);
  cow_tensor_unref (bs_t);
  cow_tensor_unref (bs);
  cow_tensor_unref (b);
  cow_tensor_unref (at);
  cow_tensor_unref (base);
}

static void
test_matmul_empty_inner_gives_zeros (void)
{
  CowError err = { 0 };
  CowTensor *a = cow_tensor_empty (SIZES (2, 0), COW_DTYPE_F32, &err);
  CowTensor *b = cow_tensor_empty (SIZES (0, 3), COW_DTYPE_F32, &err);
  CowTensor *c = cow_tensor_matmul (a, b, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_sizes (c, 2, ((int64_t[]) { 2, 3 }));
  test_assert_tensor_filled (c, 0);
  g_assert_cmpint (cow_tensor_numel (c), ==, 6);
  cow_tensor_unref (c);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
}

static void
test_matmul_integers (void)
{
  CowError err = { 0 };
  CowTensor *a = tensor_i64 (SIZES (2, 2), (int64_t[]) { 1, 2, 3, 4 });
  CowTensor *b = tensor_i64 (SIZES (2, 2), (int64_t[]) { 5, 6, 7, 8 });
  CowTensor *c = cow_tensor_matmul (a, b, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_dtype (c), ==, COW_DTYPE_I64);
  test_assert_tensor_values (c, 19, 22, 43, 50);
  /* i32 accumulation wraps instead of overflowing. */
  CowTensor *x = tensor_i32 (SIZES (1, 2), (int32_t[]) { INT32_MAX, 1 });
  CowTensor *y = tensor_i32 (SIZES (2, 1), (int32_t[]) { 1, 1 });
  CowTensor *z = cow_tensor_matmul (x, y, &err);
  test_assert_cow_ok (&err);
  int32_t got;
  g_assert_cmpint (cow_tensor_read_elements (z, &got, sizeof got, &err), ==, COW_OK);
  g_assert_cmpint (got, ==, INT32_MIN);
  cow_tensor_unref (z);
  cow_tensor_unref (y);
  cow_tensor_unref (x);
  cow_tensor_unref (c);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
}

/* ------------------------------------------------------------------ */
/* sum                                                                 */
/* ------------------------------------------------------------------ */

static void
test_sum_float_keeps_dtype (void)
{
  CowError err = { 0 };
  CowTensor *f = test_tensor_f32 (SIZES (2, 3), (float[]) { 0.5f, 1, 2, 3, 4, -1.5f });
  CowTensor *s = cow_tensor_sum (f, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_dtype (s), ==, COW_DTYPE_F32);
  g_assert_cmpint (cow_tensor_ndim (s), ==, 0);
  g_assert_cmpfloat (item (s), ==, 9);

  CowTensor *d = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (3), (double[]) { 0.25, 0.5, 1e10 });
  CowTensor *sd = cow_tensor_sum (d, &err);
  g_assert_cmpint (cow_tensor_dtype (sd), ==, COW_DTYPE_F64);
  g_assert_cmpfloat (item (sd), ==, 1e10 + 0.75);

  /* Sum of a strided view counts only its elements. */
  CowTensor *col = cow_tensor_select (f, 1, 2, &err);
  CowTensor *sc = cow_tensor_sum (col, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpfloat (item (sc), ==, 0.5);
  /* An empty tensor sums to 0. */
  CowTensor *e = cow_tensor_empty (SIZES (0), COW_DTYPE_F32, &err);
  CowTensor *se = cow_tensor_sum (e, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpfloat (item (se), ==, 0);

  cow_tensor_unref (se);
  cow_tensor_unref (e);
  cow_tensor_unref (sc);
  cow_tensor_unref (col);
  cow_tensor_unref (sd);
  cow_tensor_unref (d);
  cow_tensor_unref (s);
  cow_tensor_unref (f);
}

static void
test_sum_integers_to_i64 (void)
{
  CowError err = { 0 };
  /* i32: 3 × INT32_MAX does not fit an int32 but fits the i64 result. */
  CowTensor *i = tensor_i32 (SIZES (3), (int32_t[]) { INT32_MAX, INT32_MAX, INT32_MAX });
  CowTensor *si = cow_tensor_sum (i, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_ndim (si), ==, 0);
  g_assert_cmpint (item_i64 (si), ==, 3 * (int64_t) INT32_MAX);

  /* u8: 300 × 255 does not wrap at 256. */
  CowTensor *u = cow_tensor_empty (SIZES (300), COW_DTYPE_U8, &err);
  g_assert_cmpint (cow_tensor_fill_ (u, 255, &err), ==, COW_OK);
  CowTensor *su = cow_tensor_sum (u, &err);
  g_assert_cmpint (item_i64 (su), ==, 300 * 255);

  /* bool counts the trues. */
  CowTensor *b = test_tensor_from_doubles (COW_DTYPE_BOOL, SIZES (2, 3),
                                           (double[]) { 1, 0, 1, 1, 0, 1 });
  CowTensor *sb = cow_tensor_sum (b, &err);
  g_assert_cmpint (item_i64 (sb), ==, 4);

  /* i64 stays exact and wraps on overflow. */
  CowTensor *l = tensor_i64 (SIZES (2), (int64_t[]) { INT64_MAX, 2 });
  CowTensor *sl = cow_tensor_sum (l, &err);
  g_assert_cmpint (item_i64 (sl), ==, INT64_MIN + 1);

  cow_tensor_unref (sl);
  cow_tensor_unref (l);
  cow_tensor_unref (sb);
  cow_tensor_unref (b);
  cow_tensor_unref (su);
  cow_tensor_unref (u);
  cow_tensor_unref (si);
  cow_tensor_unref (i);
}

/* ------------------------------------------------------------------ */
/* copy_                                                               */
/* ------------------------------------------------------------------ */

static void
test_copy_same_shape_and_broadcast (void)
{
  CowError err = { 0 };
  CowTensor *dst = cow_tensor_zeros (SIZES (2, 3), COW_DTYPE_F32, &err);
  CowTensor *src = test_tensor_f32 (SIZES (2, 3), (float[]) { 1, 2, 3, 4, 5, 6 });
  uintptr_t where = cow_tensor_data_address (dst);
  g_assert_cmpint (cow_tensor_copy_ (dst, src, &err), ==, COW_OK);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (dst, 1, 2, 3, 4, 5, 6);
  g_assert_cmpuint (cow_tensor_data_address (dst), ==, where);
  g_assert_false (cow_tensor_is_alias_of (dst, src));

  CowTensor *row = test_tensor_f32 (SIZES (3), (float[]) { 7, 8, 9 });
  g_assert_cmpint (cow_tensor_copy_ (dst, row, &err), ==, COW_OK);
  test_assert_tensor_values (dst, 7, 8, 9, 7, 8, 9);
  CowTensor *scalar = test_tensor_f32 (0, NULL, (float[]) { -1 });
  g_assert_cmpint (cow_tensor_copy_ (dst, scalar, &err), ==, COW_OK);
  test_assert_tensor_filled (dst, -1);

  /* Into a strided destination. */
  CowTensor *dt = cow_tensor_transpose (dst, 0, 1, &err); /* [3,2] */
  CowTensor *col = test_tensor_f32 (SIZES (3, 1), (float[]) { 1, 2, 3 });
  g_assert_cmpint (cow_tensor_copy_ (dt, col, &err), ==, COW_OK);
  test_assert_tensor_values (dst, 1, 2, 3, 1, 2, 3);

  cow_tensor_unref (col);
  cow_tensor_unref (dt);
  cow_tensor_unref (scalar);
  cow_tensor_unref (row);
  cow_tensor_unref (src);
  cow_tensor_unref (dst);
}

static void
test_copy_converts_dtypes (void)
{
  CowError err = { 0 };
  CowTensor *f = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (5),
                                           (double[]) { 3.7, -2.9, 0, 0.5, 100 });

  /* Float to int truncates toward zero. */
  CowTensor *i = cow_tensor_zeros (SIZES (5), COW_DTYPE_I32, &err);
  g_assert_cmpint (cow_tensor_copy_ (i, f, &err), ==, COW_OK);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (i, 3, -2, 0, 0, 100);
  /* Float to bool: non-zero is true. */
  CowTensor *b = cow_tensor_zeros (SIZES (5), COW_DTYPE_BOOL, &err);
  g_assert_cmpint (cow_tensor_copy_ (b, f, &err), ==, COW_OK);
  test_assert_tensor_values (b, 1, 1, 0, 1, 1);
  /* Int to float, f64 to f32. */
  CowTensor *g = cow_tensor_zeros (SIZES (5), COW_DTYPE_F32, &err);
  g_assert_cmpint (cow_tensor_copy_ (g, i, &err), ==, COW_OK);
  test_assert_tensor_values (g, 3, -2, 0, 0, 100);
  g_assert_cmpint (cow_tensor_copy_ (g, f, &err), ==, COW_OK);
  test_assert_tensor_close (g, ((double[]) { 3.7, -2.9, 0, 0.5, 100 }), 5, 1e-6);
  /* Bool and u8 widen. */
  CowTensor *l = cow_tensor_zeros (SIZES (5), COW_DTYPE_I64, &err);
  g_assert_cmpint (cow_tensor_copy_ (l, b, &err), ==, COW_OK);
  test_assert_tensor_values (l, 1, 1, 0, 1, 1);
  CowTensor *u = test_tensor_from_doubles (COW_DTYPE_U8, SIZES (5), (double[]) { 255, 0, 1, 128, 7 });
  g_assert_cmpint (cow_tensor_copy_ (l, u, &err), ==, COW_OK);
  test_assert_tensor_values (l, 255, 0, 1, 128, 7);

  cow_tensor_unref (u);
  cow_tensor_unref (l);
  cow_tensor_unref (g);
  cow_tensor_unref (b);
  cow_tensor_unref (i);
  cow_tensor_unref (f);
}

static void
test_copy_narrowing_has_no_ub (void)
{
  CowError err = { 0 };
  /* Integer narrowing wraps modulo 2^n. */
  CowTensor *l = tensor_i64 (SIZES (4), (int64_t[]) { 300, -1, INT64_C (1) << 40, INT64_MIN });
  CowTensor *u = cow_tensor_zeros (SIZES (4), COW_DTYPE_U8, &err);
  g_assert_cmpint (cow_tensor_copy_ (u, l, &err), ==, COW_OK);
  test_assert_tensor_values (u, 44, 255, 0, 0);
  CowTensor *i = cow_tensor_zeros (SIZES (4), COW_DTYPE_I32, &err);
  g_assert_cmpint (cow_tensor_copy_ (i, l, &err), ==, COW_OK);
  test_assert_tensor_values (i, 300, -1, 0, 0);

  /* Out-of-range floats saturate (NaN gives 0) instead of being UB. */
  CowTensor *f = test_tensor_from_doubles (COW_DTYPE_F64, SIZES (4),
                                           (double[]) { 1e20, -1e20, NAN, 1e300 });
  g_assert_cmpint (cow_tensor_copy_ (i, f, &err), ==, COW_OK);
  test_assert_tensor_values (i, INT32_MAX, INT32_MIN, 0, INT32_MAX);
  g_assert_cmpint (cow_tensor_copy_ (u, f, &err), ==, COW_OK);
  test_assert_tensor_values (u, 255, 0, 0, 255);
  g_assert_cmpint (cow_tensor_copy_ (l, f, &err), ==, COW_OK);
  int64_t got[4];
  g_assert_cmpint (cow_tensor_read_elements (l, got, sizeof got, &err), ==, COW_OK);
  g_assert_cmpint (got[0], ==, INT64_MAX);
  g_assert_cmpint (got[1], ==, INT64_MIN);
  g_assert_cmpint (got[2], ==, 0);

  cow_tensor_unref (f);
  cow_tensor_unref (i);
  cow_tensor_unref (u);
  cow_tensor_unref (l);
}

static void
test_copy_overlapping_transpose_in_place (void)
{
  CowError err = { 0 };
  CowTensor *m = test_tensor_from_doubles (COW_DTYPE_F32, SIZES (3, 3),
                                           (double[]) { 1, 2, 3, 4, 5, 6, 7, 8, 9 });
  CowTensor *mt = cow_tensor_transpose (m, 0, 1, &err);
  uintptr_t where = cow_tensor_data_address (m);
  g_assert_cmpint (cow_tensor_copy_ (m, mt, &err), ==, COW_OK);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (m, 1, 4, 7, 2, 5, 8, 3, 6, 9);
  g_assert_cmpuint (cow_tensor_data_address (m), ==, where);
  g_assert_true (cow_tensor_is_alias_of (m, mt));
  cow_tensor_unref (mt);
  cow_tensor_unref (m);
}

static void
test_copy_overlapping_shifted (void)
{
  CowError err = { 0 };
  CowTensor *t = test_tensor_from_doubles (COW_DTYPE_I32, SIZES (8),
                                           (double[]) { 0, 1, 2, 3, 4, 5, 6, 7 });
  CowTensor *head = cow_tensor_narrow (t, 0, 0, 7, &err);
  CowTensor *tail = cow_tensor_narrow (t, 0, 1, 7, &err);
  /* t[1:] = t[:-1] (memmove forward) ... */
  g_assert_cmpint (cow_tensor_copy_ (tail, head, &err), ==, COW_OK);
  test_assert_tensor_values (t, 0, 0, 1, 2, 3, 4, 5, 6);
  /* ... and t[:-1] = t[1:] (memmove backward). */
  g_assert_cmpint (cow_tensor_copy_ (head, tail, &err), ==, COW_OK);
  test_assert_tensor_values (t, 0, 1, 2, 3, 4, 5, 6, 6);
  /* Reversed pairs through a strided view over the same storage. */
  CowTensor *evens = cow_tensor_slice (t, 0, 0, 8, 2, &err);
  CowTensor *odds = cow_tensor_slice (t, 0, 1, 8, 2, &err);
  g_assert_cmpint (cow_tensor_copy_ (evens, odds, &err), ==, COW_OK);
  test_assert_tensor_values (t, 1, 1, 3, 3, 5, 5, 6, 6);
  cow_tensor_unref (odds);
  cow_tensor_unref (evens);
  cow_tensor_unref (tail);
  cow_tensor_unref (head);
  cow_tensor_unref (t);
}

/* ------------------------------------------------------------------ */
/* item                                                                */
/* ------------------------------------------------------------------ */

static void
test_item_every_dtype (void)
{
  static const struct {
    CowDType dtype;
    double value;
  } cases[] = {
    { COW_DTYPE_F32, -0.75 }, { COW_DTYPE_F64, 1e100 }, { COW_DTYPE_I32, -123 },
    { COW_DTYPE_I64, 1e15 },  { COW_DTYPE_U8, 250 },    { COW_DTYPE_BOOL, 1 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      CowTensor *s = test_tensor_from_doubles (cases[i].dtype, 0, NULL, &cases[i].value);
      g_assert_cmpfloat (item (s), ==, cases[i].value);
      cow_tensor_unref (s);
      /* A one-element tensor of any rank works too. */
      CowTensor *t = test_tensor_from_doubles (cases[i].dtype, SIZES (1, 1, 1), &cases[i].value);
      g_assert_cmpfloat (item (t), ==, cases[i].value);
      cow_tensor_unref (t);
    }
}

static void
test_item_of_view (void)
{
  CowError err = { 0 };
  CowTensor *t = test_tensor_arange_f32 (SIZES (3, 4), 0);
  CowTensor *row = cow_tensor_select (t, 0, 2, &err);
  CowTensor *e = cow_tensor_select (row, 0, 1, &err);
  test_assert_cow_ok (&err);
  g_assert_cmpint (cow_tensor_ndim (e), ==, 0);
  g_assert_cmpfloat (item (e), ==, 9);
  cow_tensor_unref (e);
  cow_tensor_unref (row);
  cow_tensor_unref (t);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/ops/fill/every-dtype", test_fill_every_dtype);
  g_test_add_func ("/ops/fill/strided-view-only", test_fill_strided_view_only);

  g_test_add_func ("/ops/add/same-shape-with-alpha", test_add_same_shape_with_alpha);
  g_test_add_func ("/ops/add/broadcast-row", test_add_broadcasts_row);
  g_test_add_func ("/ops/add/broadcast-both", test_add_broadcasts_both);
  g_test_add_func ("/ops/add/in-place-broadcast", test_add_in_place_broadcast);
  g_test_add_func ("/ops/add/in-place-from-overlapping-view",
                   test_add_in_place_from_overlapping_view);
  g_test_add_func ("/ops/add/non-contiguous-inputs", test_add_non_contiguous_inputs);
  g_test_add_func ("/ops/mul/out-of-place-and-in-place", test_mul_and_mul_in_place);
  g_test_add_func ("/ops/bool/add-is-or-mul-is-and", test_bool_add_and_mul);
  g_test_add_func ("/ops/overflow/integer-add-wraps", test_integer_add_wraps);
  g_test_add_func ("/ops/overflow/integer-mul-wraps", test_integer_mul_wraps);
  g_test_add_func ("/ops/overflow/i64-exact-beyond-2^53", test_i64_arithmetic_is_exact);

  g_test_add_func ("/ops/scale/in-place", test_scale_in_place);
  g_test_add_func ("/ops/scale/integer-factor-wraps-or-fails",
                   test_scale_integer_factor_wraps_or_fails);

  g_test_add_func ("/ops/matmul/2d-2d", test_matmul_2d_2d);
  g_test_add_func ("/ops/matmul/vector-cases", test_matmul_vector_cases);
  g_test_add_func ("/ops/matmul/non-contiguous-inputs", test_matmul_non_contiguous_inputs);
  g_test_add_func ("/ops/matmul/empty-inner-gives-zeros", test_matmul_empty_inner_gives_zeros);
  g_test_add_func ("/ops/matmul/integers", test_matmul_integers);

  g_test_add_func ("/ops/sum/float-keeps-dtype", test_sum_float_keeps_dtype);
  g_test_add_func ("/ops/sum/integers-to-i64", test_sum_integers_to_i64);

  g_test_add_func ("/ops/copy/same-shape-and-broadcast", test_copy_same_shape_and_broadcast);
  g_test_add_func ("/ops/copy/converts-dtypes", test_copy_converts_dtypes);
  g_test_add_func ("/ops/copy/narrowing-has-no-ub", test_copy_narrowing_has_no_ub);
  g_test_add_func ("/ops/copy/overlapping-transpose-in-place",
                   test_copy_overlapping_transpose_in_place);
  g_test_add_func ("/ops/copy/overlapping-shifted", test_copy_overlapping_shifted);

  g_test_add_func ("/ops/item/every-dtype", test_item_every_dtype);
  g_test_add_func ("/ops/item/of-view", test_item_of_view);

  return g_test_run ();
}
