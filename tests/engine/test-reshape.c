/* test-reshape.c — reshape() under its three modes: view (aliasing),
 * lazy (copy-on-write) and simulate (aliasing, with warnings where a lazy
 * copy would change the program's results). */
#include <stdint.h>
#include <string.h>

#include <glib.h>

#include "cowtensor.h"
#include "test-support.h"


/* ------------------------------------------------------------------ */
/* Helpers                                                             */
/* ------------------------------------------------------------------ */

typedef struct {
  CowReshapeMode saved_mode;
  guint calls;
  GPtrArray *messages;
  guint64 violations_at_start;
} SimLog;

static void
record_warning (const char *message, void *user_data)
{
  SimLog *log = user_data;
  log->calls++;
  g_ptr_array_add (log->messages, g_strdup (message));
}

/* Switches to @mode with a recording warning handler; end_mode() undoes
 * both. */
static void
begin_mode (SimLog *log, CowReshapeMode mode)
{
  memset (log, 0, sizeof *log);
  log->saved_mode = cow_get_reshape_mode ();
  log->messages = g_ptr_array_new_with_free_func (g_free);
  cow_set_reshape_mode (mode);
  g_assert_cmpint (cow_get_reshape_mode (), ==, mode);
  cow_set_warning_handler (record_warning, log);
  log->violations_at_start = cow_simulate_violation_count ();
}

static void
end_mode (SimLog *log)
{
  cow_set_warning_handler (NULL, NULL);
  cow_set_reshape_mode (log->saved_mode);
  g_ptr_array_unref (log->messages);
}

static guint64
violations (const SimLog *log)
{
  return cow_simulate_violation_count () - log->violations_at_start;
}

static CowTensor *
arange (int64_t rows, int64_t cols)
{
  return test_tensor_arange_f32 (2, (int64_t[]) { rows, cols }, 0);
}

static CowTensor *
reshape_ok (CowTensor *t, int ndim, const int64_t *sizes)
{
  CowError err = { 0 };
  CowTensor *r = cow_tensor_reshape (t, ndim, sizes, &err);
  test_assert_cow_ok (&err);
  g_assert_nonnull (r);
  return r;
}

/* A tracked write through @t (materializes a lazy copy first). */
static void
write_through (CowTensor *t, float value)
{
  CowError err = { 0 };
  float *p = cow_tensor_mutable_data (t, &err);
  test_assert_cow_ok (&err);
  g_assert_nonnull (p);
  p[0] = value;
}

/* A tracked read through @t. */
static float
read_through (const CowTensor *t)
{
  const float *p = cow_tensor_const_data (t);
  g_assert_nonnull (p);
  return p[0];
}

/* ------------------------------------------------------------------ */
/* The mode setting                                                    */
/* ------------------------------------------------------------------ */

static void
test_mode_set_get (void)
{
  CowReshapeMode saved = cow_get_reshape_mode ();
  const CowReshapeMode modes[] = { COW_RESHAPE_LAZY, COW_RESHAPE_SIMULATE, COW_RESHAPE_VIEW };
  for (gsize i = 0; i < G_N_ELEMENTS (modes); i++)
    {
      cow_set_reshape_mode (modes[i]);
      g_assert_cmpint (cow_get_reshape_mode (), ==, modes[i]);
    }
  cow_set_reshape_mode (saved);
  g_assert_cmpint (cow_get_reshape_mode (), ==, saved);
}

static void
test_mode_from_string (void)
{
  static const struct {
    const char *text;
    CowReshapeMode mode;
  } cases[] = {
    { "view", COW_RESHAPE_VIEW },
    { "lazy", COW_RESHAPE_LAZY },
    { "simulate", COW_RESHAPE_SIMULATE },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      CowError err = { 0 };
      CowReshapeMode mode = (CowReshapeMode) -1;
      g_assert_cmpint (cow_reshape_mode_from_string (cases[i].text, &mode, &err), ==, COW_OK);
      test_assert_cow_ok (&err);
      g_assert_cmpint (mode, ==, cases[i].mode);
      g_assert_cmpstr (cow_reshape_mode_to_string (cases[i].mode), ==, cases[i].text);
    }
}

static void
test_mode_from_string_rejects_bad_text (void)
{
  const char *bad[] = { "bogus", "", "lazy ", "views" };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      CowError err = { 0 };
      CowReshapeMode mode = COW_RESHAPE_LAZY;
      g_assert_cmpint (cow_reshape_mode_from_string (bad[i], &mode, &err), ==,
                       COW_ERROR_INVALID_ARGUMENT);
      test_assert_cow_error (&err, COW_ERROR_INVALID_ARGUMENT);
      /* The message quotes what was wrong and what would be right. */
      if (bad[i][0] != '\0')
        g_assert_nonnull (strstr (err.message, bad[i]));
      g_assert_nonnull (strstr (err.message, "simulate"));
    }
  CowError err = { 0 };
  CowReshapeMode mode;
  g_assert_cmpint (cow_reshape_mode_from_string (NULL, &mode, &err), ==,
                   COW_ERROR_INVALID_ARGUMENT);
  test_assert_cow_error (&err, COW_ERROR_INVALID_ARGUMENT);
  /* NULL error: only the status. */
  g_assert_cmpint (cow_reshape_mode_from_string ("nope", &mode, NULL), ==,
                   COW_ERROR_INVALID_ARGUMENT);
  g_assert_cmpstr (cow_reshape_mode_to_string ((CowReshapeMode) 42), ==, "invalid");
}

/* ------------------------------------------------------------------ */
/* COW_RESHAPE_MODE in the environment (one fresh process each)        */
/* ------------------------------------------------------------------ */

typedef enum { EXPECT_ALIAS, EXPECT_LAZY } Expectation;

/* In the child: the first reshape follows the environment. */
static void
child_check_first_reshape (CowReshapeMode expected_mode, Expectation expect)
{
  CowTensor *t = arange (2, 3);
  CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });
  g_assert_cmpint (cow_get_reshape_mode (), ==, expected_mode);
  if (expect == EXPECT_ALIAS)
    {
      g_assert_true (cow_tensor_is_alias_of (r, t));
      g_assert_false (cow_tensor_is_cow (r));
    }
  else
    {
      g_assert_false (cow_tensor_is_alias_of (r, t));
      g_assert_true (cow_tensor_is_cow (r));
      g_assert_cmpuint (cow_tensor_data_address (r), ==, cow_tensor_data_address (t));
    }
  cow_tensor_unref (r);
  cow_tensor_unref (t);
}

/* Runs this test in a child process with COW_RESHAPE_MODE=@value (unset
 * when NULL); restores the parent's environment afterwards. */
static void
run_child_with_env (const char *value)
{
  g_autofree char *saved = g_strdup (g_getenv (COW_RESHAPE_MODE_ENV));
  if (value != NULL)
    g_setenv (COW_RESHAPE_MODE_ENV, value, TRUE);
  else
    g_unsetenv (COW_RESHAPE_MODE_ENV);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  if (saved != NULL)
    g_setenv (COW_RESHAPE_MODE_ENV, saved, TRUE);
  else
    g_unsetenv (COW_RESHAPE_MODE_ENV);
}

static void
test_env_view (void)
{
  if (g_test_subprocess ())
    {
      child_check_first_reshape (COW_RESHAPE_VIEW, EXPECT_ALIAS);
      return;
    }
  run_child_with_env ("view");
  g_test_trap_assert_passed ();
}

static void
test_env_lazy (void)
{
  if (g_test_subprocess ())
    {
      child_check_first_reshape (COW_RESHAPE_LAZY, EXPECT_LAZY);
      return;
    }
  run_child_with_env ("lazy");
  g_test_trap_assert_passed ();
}

static void
test_env_simulate (void)
{
  if (g_test_subprocess ())
    {
      child_check_first_reshape (COW_RESHAPE_SIMULATE, EXPECT_ALIAS);
      /* Simulate mode is really on: a reshape result's write followed by a
       * read of the original warns. */
      CowTensor *t = arange (2, 2);
      CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 4 });
      guint64 before = cow_simulate_violation_count ();
      write_through (r, 5);
      read_through (t);
      g_assert_cmpuint (cow_simulate_violation_count () - before, ==, 1);
      cow_tensor_unref (r);
      cow_tensor_unref (t);
      return;
    }
  run_child_with_env ("simulate");
  g_test_trap_assert_passed ();
  /* The default handler printed the warning. */
  g_test_trap_assert_stderr ("*reshape*");
}

static void
test_env_unset_defaults_to_view (void)
{
  if (g_test_subprocess ())
    {
      child_check_first_reshape (COW_RESHAPE_VIEW, EXPECT_ALIAS);
      return;
    }
  run_child_with_env (NULL);
  g_test_trap_assert_passed ();
}

static void
test_env_invalid_falls_back_to_view (void)
{
  if (g_test_subprocess ())
    {
      child_check_first_reshape (COW_RESHAPE_VIEW, EXPECT_ALIAS);
      return;
    }
  run_child_with_env ("sometimes");
  /* No abort; the bad value is reported. */
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*sometimes*");
}

static void
test_env_set_mode_wins (void)
{
  if (g_test_subprocess ())
    {
      cow_set_reshape_mode (COW_RESHAPE_VIEW);
      child_check_first_reshape (COW_RESHAPE_VIEW, EXPECT_ALIAS);
      return;
    }
  run_child_with_env ("lazy");
  g_test_trap_assert_passed ();
}

static void
test_env_read_once (void)
{
  if (g_test_subprocess ())
    {
      child_check_first_reshape (COW_RESHAPE_LAZY, EXPECT_LAZY);
      /* Changing the variable later has no effect. */
      g_setenv (COW_RESHAPE_MODE_ENV, "view", TRUE);
      child_check_first_reshape (COW_RESHAPE_LAZY, EXPECT_LAZY);
      return;
    }
  run_child_with_env ("lazy");
  g_test_trap_assert_passed ();
}

/* ------------------------------------------------------------------ */
/* view mode                                                           */
/* ------------------------------------------------------------------ */

static void
test_view_mode_aliases_when_viewable (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_VIEW);
  TestAllocator *alloc = test_allocator_new ();
  CowError err = { 0 };
  CowTensor *t = cow_tensor_empty_with_allocator (2, (int64_t[]) { 2, 6 }, COW_DTYPE_F32,
                                                  test_allocator_get (alloc), &err);
  g_assert_cmpint (cow_tensor_fill_ (t, 1, &err), ==, COW_OK);

  CowTensor *r = reshape_ok (t, 3, (int64_t[]) { 3, -1, 2 });
  test_assert_tensor_sizes (r, 3, ((int64_t[]) { 3, 2, 2 }));
  g_assert_true (cow_tensor_storage (r) == cow_tensor_storage (t));
  g_assert_true (cow_tensor_is_alias_of (r, t));
  g_assert_cmpuint (cow_tensor_data_address (r), ==, cow_tensor_data_address (t));
  g_assert_false (cow_tensor_is_cow (r));
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);

  /* Aliasing: a write through the result shows through the original. */
  write_through (r, 42);
  g_assert_cmpfloat (read_through (t), ==, 42);
  g_assert_cmpuint (violations (&log), ==, 0);
  g_assert_cmpuint (log.calls, ==, 0);

  cow_tensor_unref (r);
  cow_tensor_unref (t);
  test_allocator_free (alloc);
  end_mode (&log);
}

static void
test_view_mode_copies_when_not_viewable (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_VIEW);
  CowError err = { 0 };
  CowTensor *t = arange (2, 3);
  CowTensor *tt = cow_tensor_transpose (t, 0, 1, &err);
  CowTensor *r = reshape_ok (tt, 1, (int64_t[]) { -1 });

  g_assert_false (cow_tensor_is_alias_of (r, t));
  g_assert_false (cow_tensor_is_cow (r));
  g_assert_true (cow_tensor_is_contiguous (r));
  test_assert_tensor_values (r, 0, 3, 1, 4, 2, 5);
  write_through (r, -1);
  test_assert_tensor_values (t, 0, 1, 2, 3, 4, 5);

  cow_tensor_unref (r);
  cow_tensor_unref (tt);
  cow_tensor_unref (t);
  end_mode (&log);
}

/* ------------------------------------------------------------------ */
/* lazy mode                                                           */
/* ------------------------------------------------------------------ */

static void
test_lazy_mode_lazy_copy_when_viewable (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_LAZY);
  TestAllocator *alloc = test_allocator_new ();
  CowError err = { 0 };
  CowTensor *t = cow_tensor_empty_with_allocator (2, (int64_t[]) { 2, 3 }, COW_DTYPE_F32,
                                                  test_allocator_get (alloc), &err);
  float *data = cow_tensor_mutable_data (t, &err);
  for (int i = 0; i < 6; i++)
    data[i] = (float) i;

  CowTensor *r = reshape_ok (t, 2, (int64_t[]) { 3, 2 });
  test_assert_tensor_sizes (r, 2, ((int64_t[]) { 3, 2 }));
  g_assert_true (cow_tensor_storage (r) != cow_tensor_storage (t));
  g_assert_false (cow_tensor_is_alias_of (r, t));
  g_assert_cmpuint (cow_tensor_data_address (r), ==, cow_tensor_data_address (t));
  g_assert_true (cow_tensor_is_cow (r));
  g_assert_true (cow_tensor_is_cow (t));
  g_assert_cmpint (cow_storage_context_refcount (cow_tensor_storage (t)), ==, 2);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 1);
  test_assert_tensor_values (r, 0, 1, 2, 3, 4, 5);

  /* Writing the result copies it; the original keeps its values. */
  write_through (r, 100);
  g_assert_cmpint (test_allocator_n_allocs (alloc), ==, 2);
  g_assert_false (cow_tensor_is_cow (r));
  g_assert_cmpuint (cow_tensor_data_address (r), !=, cow_tensor_data_address (t));
  test_assert_tensor_values (r, 100, 1, 2, 3, 4, 5);
  test_assert_tensor_values (t, 0, 1, 2, 3, 4, 5);
  g_assert_cmpuint (violations (&log), ==, 0);

  cow_tensor_unref (r);
  cow_tensor_unref (t);
  test_allocator_free (alloc);
  end_mode (&log);
}

static void
test_lazy_mode_write_original_leaves_result (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_LAZY);
  CowError err = { 0 };
  CowTensor *t = arange (3, 4);
  CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 12 });

  g_assert_cmpint (cow_tensor_fill_ (t, 7, &err), ==, COW_OK);
  test_assert_tensor_filled (t, 7);
  g_assert_cmpfloat (test_tensor_get (r, (int64_t[]) { 11 }), ==, 11);
  g_assert_cmpfloat (test_tensor_get (r, (int64_t[]) { 0 }), ==, 0);
  /* Now the result is the last sharer: it keeps the original bytes. */
  uintptr_t before = cow_tensor_data_address (r);
  write_through (r, -3);
  g_assert_cmpuint (cow_tensor_data_address (r), ==, before);
  test_assert_tensor_filled (t, 7);
  g_assert_cmpuint (log.calls, ==, 0);

  cow_tensor_unref (r);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_lazy_mode_eager_copy_when_not_viewable (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_LAZY);
  CowError err = { 0 };
  CowTensor *t = arange (2, 3);
  CowTensor *tt = cow_tensor_transpose (t, 0, 1, &err);
  CowTensor *r = reshape_ok (tt, 1, (int64_t[]) { 6 });

  g_assert_false (cow_tensor_is_alias_of (r, t));
  g_assert_cmpuint (cow_tensor_data_address (r), !=, cow_tensor_data_address (t));
  g_assert_false (cow_tensor_is_cow (r));
  g_assert_false (cow_tensor_is_cow (t));
  test_assert_tensor_values (r, 0, 3, 1, 4, 2, 5);

  cow_tensor_unref (r);
  cow_tensor_unref (tt);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_lazy_mode_keeps_view_layout (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_LAZY);
  CowError err = { 0 };
  /* A viewable reshape of a strided tensor keeps its strides and offset
   * over the shared bytes. */
  CowTensor *t = arange (4, 6);
  CowTensor *rows = cow_tensor_slice (t, 0, 1, 4, 2, &err); /* rows 1 and 3 */
  CowTensor *r = reshape_ok (rows, 3, (int64_t[]) { 2, 2, 3 });
  g_assert_cmpint (cow_tensor_storage_offset (r), ==, 6);
  g_assert_cmpint (cow_tensor_strides (r)[0], ==, 12);
  g_assert_cmpuint (cow_tensor_data_address (r), ==, cow_tensor_data_address (rows));
  g_assert_false (cow_tensor_is_alias_of (r, t));
  test_assert_tensor_values (r, 6, 7, 8, 9, 10, 11, 18, 19, 20, 21, 22, 23);
  cow_tensor_unref (r);
  cow_tensor_unref (rows);
  cow_tensor_unref (t);
  end_mode (&log);
}

/* ------------------------------------------------------------------ */
/* simulate mode                                                       */
/* ------------------------------------------------------------------ */

static void
test_simulate_returns_alias (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowTensor *t = arange (2, 3);
  CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });

  g_assert_true (cow_tensor_storage (r) == cow_tensor_storage (t));
  g_assert_true (cow_tensor_is_alias_of (r, t));
  g_assert_false (cow_tensor_is_cow (r));
  g_assert_cmpuint (cow_tensor_data_address (r), ==, cow_tensor_data_address (t));
  test_assert_tensor_values (r, 0, 1, 2, 3, 4, 5);
  g_assert_cmpuint (violations (&log), ==, 0);
  g_assert_cmpuint (log.calls, ==, 0);

  cow_tensor_unref (r);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_write_result_then_read_original_warns (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowTensor *t = arange (2, 3);
  cow_tensor_set_name (t, "weights.fc1");
  CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });

  write_through (r, 9);
  g_assert_cmpuint (violations (&log), ==, 0);
  /* Still aliasing: the original sees the write... */
  g_assert_cmpfloat (read_through (t), ==, 9);
  /* ...which is exactly what lazy mode would change. */
  g_assert_cmpuint (violations (&log), ==, 1);
  g_assert_cmpuint (log.calls, ==, 1);
  const char *message = g_ptr_array_index (log.messages, 0);
  g_assert_cmpstr (message, !=, "");
  g_assert_null (strchr (message, '\n'));
  /* It names the tensor that read. */
  g_assert_nonnull (strstr (message, "weights.fc1"));

  cow_tensor_unref (r);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_write_original_then_read_result_warns (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowTensor *t = arange (2, 3);
  CowTensor *r = reshape_ok (t, 2, (int64_t[]) { 3, 2 });

  write_through (t, -4);
  g_assert_cmpuint (violations (&log), ==, 0);
  g_assert_cmpfloat (test_tensor_get (r, (int64_t[]) { 0, 0 }), ==, -4);
  g_assert_cmpuint (violations (&log), ==, 1);
  g_assert_cmpuint (log.calls, ==, 1);

  cow_tensor_unref (r);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_write_original_then_write_result_warns (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowError err = { 0 };
  CowTensor *t = arange (2, 3);
  CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });

  g_assert_cmpint (cow_tensor_fill_ (t, 1, &err), ==, COW_OK);
  g_assert_cmpint (cow_tensor_fill_ (r, 2, &err), ==, COW_OK);
  g_assert_cmpuint (violations (&log), ==, 1);
  g_assert_cmpuint (log.calls, ==, 1);
  /* Aliasing is preserved: t sees r's write. */
  test_assert_tensor_filled (t, 2);

  cow_tensor_unref (r);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_write_result_then_write_original_warns (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowTensor *t = arange (2, 3);
  CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });

  write_through (r, 1);
  write_through (t, 2);
  g_assert_cmpuint (violations (&log), ==, 1);
  g_assert_cmpuint (log.calls, ==, 1);

  cow_tensor_unref (r);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_result_only_no_warning (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowError err = { 0 };
  CowTensor *t = arange (2, 3);
  CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });

  for (int i = 0; i < 3; i++)
    {
      write_through (r, (float) i);
      read_through (r);
    }
  g_assert_cmpint (cow_tensor_scale_ (r, 2, &err), ==, COW_OK);
  test_assert_tensor_values (r, 4, 2, 4, 6, 8, 10);
  g_assert_cmpuint (violations (&log), ==, 0);
  g_assert_cmpuint (log.calls, ==, 0);

  cow_tensor_unref (r);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_original_only_no_warning (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowError err = { 0 };
  CowTensor *t = arange (2, 3);
  CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });

  for (int i = 0; i < 3; i++)
    {
      write_through (t, (float) i);
      read_through (t);
    }
  g_assert_cmpint (cow_tensor_fill_ (t, 3, &err), ==, COW_OK);
  test_assert_tensor_filled (t, 3);
  g_assert_cmpuint (violations (&log), ==, 0);
  g_assert_cmpuint (log.calls, ==, 0);

  /* Dropping the result without touching it never warns either. */
  cow_tensor_unref (r);
  write_through (t, 1);
  read_through (t);
  g_assert_cmpuint (violations (&log), ==, 0);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_reads_only_no_warning (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowError err = { 0 };
  CowTensor *t = arange (3, 4);
  CowTensor *r = reshape_ok (t, 2, (int64_t[]) { 4, 3 });
  CowTensor *r2 = reshape_ok (t, 1, (int64_t[]) { 12 });

  for (int i = 0; i < 2; i++)
    {
      read_through (t);
      read_through (r);
      read_through (r2);
    }
  CowTensor *s = cow_tensor_sum (r, &err);
  CowTensor *p = cow_tensor_matmul (t, r, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (s, 66);
  g_assert_cmpuint (violations (&log), ==, 0);
  g_assert_cmpuint (log.calls, ==, 0);

  cow_tensor_unref (p);
  cow_tensor_unref (s);
  cow_tensor_unref (r2);
  cow_tensor_unref (r);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_views_before_reshape_belong_to_original (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowError err = { 0 };
  CowTensor *t = arange (2, 3);
  CowTensor *row = cow_tensor_select (t, 0, 1, &err); /* made before the reshape */
  CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });

  /* Same set as t: writing the view and reading t is fine. */
  g_assert_cmpint (cow_tensor_fill_ (row, 8, &err), ==, COW_OK);
  test_assert_tensor_values (t, 0, 1, 2, 8, 8, 8);
  g_assert_cmpuint (violations (&log), ==, 0);

  /* Different set from r: r now reads what t's set wrote. */
  read_through (r);
  g_assert_cmpuint (violations (&log), ==, 1);

  cow_tensor_unref (r);
  cow_tensor_unref (row);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_view_before_reshape_reads_result_write (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowError err = { 0 };
  CowTensor *t = arange (2, 3);
  CowTensor *col = cow_tensor_select (t, 1, 0, &err);
  CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });

  write_through (r, 5);
  /* The old view is in t's set: it would not have seen r's write. */
  g_assert_cmpfloat (test_tensor_get (col, (int64_t[]) { 0 }), ==, 5);
  g_assert_cmpuint (violations (&log), ==, 1);
  g_assert_cmpuint (log.calls, ==, 1);

  cow_tensor_unref (r);
  cow_tensor_unref (col);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_views_of_result_belong_to_result (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowError err = { 0 };
  CowTensor *t = arange (2, 3);
  CowTensor *r = reshape_ok (t, 2, (int64_t[]) { 3, 2 });
  CowTensor *rv = cow_tensor_select (r, 0, 2, &err);
  CowTensor *rvv = cow_tensor_transpose (r, 0, 1, &err);
  /* A view of the original made after the reshape is still the
   * original's. */
  CowTensor *tv = cow_tensor_narrow (t, 1, 0, 2, &err);
  test_assert_cow_ok (&err);

  g_assert_cmpint (cow_tensor_fill_ (rv, 6, &err), ==, COW_OK);
  read_through (r);
  read_through (rvv);
  g_assert_cmpuint (violations (&log), ==, 0);

  test_assert_tensor_values (tv, 0, 1, 3, 6);
  g_assert_cmpuint (violations (&log), ==, 1);

  cow_tensor_unref (tv);
  cow_tensor_unref (rvv);
  cow_tensor_unref (rv);
  cow_tensor_unref (r);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_results_are_separate_sets (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowTensor *t = arange (2, 3);
  CowTensor *a = reshape_ok (t, 1, (int64_t[]) { 6 });
  CowTensor *b = reshape_ok (t, 2, (int64_t[]) { 3, 2 });
  /* A reshape of a reshape is a lazy copy of that result. */
  CowTensor *c = reshape_ok (a, 2, (int64_t[]) { 2, 3 });

  write_through (a, 1);
  read_through (a);
  g_assert_cmpuint (violations (&log), ==, 0);
  read_through (b);
  g_assert_cmpuint (violations (&log), ==, 1);
  read_through (c);
  g_assert_cmpuint (violations (&log), ==, 2);

  cow_tensor_unref (c);
  cow_tensor_unref (b);
  cow_tensor_unref (a);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_handler_once_per_storage (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowTensor *t = arange (2, 3);
  CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });

  write_through (r, 1);
  read_through (t);
  /* The same stale read again is the same violation. */
  read_through (t);
  g_assert_cmpuint (violations (&log), ==, 1);
  /* A new write and a new stale read: counted, not warned again. */
  write_through (r, 2);
  read_through (t);
  g_assert_cmpuint (violations (&log), ==, 2);
  g_assert_cmpuint (log.calls, ==, 1);

  /* Another storage warns on its own. */
  CowTensor *u = arange (2, 2);
  CowTensor *ur = reshape_ok (u, 1, (int64_t[]) { 4 });
  write_through (u, 3);
  read_through (ur);
  g_assert_cmpuint (violations (&log), ==, 3);
  g_assert_cmpuint (log.calls, ==, 2);

  cow_tensor_unref (ur);
  cow_tensor_unref (u);
  cow_tensor_unref (r);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_data_address_is_not_a_read (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowTensor *t = arange (2, 3);
  CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });

  write_through (r, 1);
  g_assert_cmpuint (cow_tensor_data_address (t), !=, 0);
  g_assert_true (cow_tensor_is_alias_of (t, r));
  g_assert_cmpint (cow_tensor_numel (t), ==, 6);
  g_assert_cmpuint (violations (&log), ==, 0);
  read_through (t);
  g_assert_cmpuint (violations (&log), ==, 1);

  cow_tensor_unref (r);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_ops_are_tracked (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowError err = { 0 };
  CowTensor *t = arange (2, 3);
  CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });
  CowTensor *ones = test_tensor_f32 (1, (int64_t[]) { 6 }, (float[]) { 1, 1, 1, 1, 1, 1 });

  /* add_ writes through r; sum reads through t. */
  g_assert_cmpint (cow_tensor_add_ (r, ones, 1, &err), ==, COW_OK);
  g_assert_cmpuint (violations (&log), ==, 0);
  CowTensor *s = cow_tensor_sum (t, &err);
  test_assert_cow_ok (&err);
  test_assert_tensor_values (s, 21);
  g_assert_cmpuint (violations (&log), ==, 1);

  /* read_elements is a read too. */
  write_through (r, 0);
  float out[6];
  g_assert_cmpint (cow_tensor_read_elements (t, out, sizeof out, &err), ==, COW_OK);
  g_assert_cmpuint (violations (&log), ==, 2);

  cow_tensor_unref (s);
  cow_tensor_unref (ones);
  cow_tensor_unref (r);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_not_viewable_copies (void)
{
  SimLog log;
  begin_mode (&log, COW_RESHAPE_SIMULATE);
  CowError err = { 0 };
  CowTensor *t = arange (2, 3);
  CowTensor *tt = cow_tensor_transpose (t, 0, 1, &err);
  CowTensor *r = reshape_ok (tt, 1, (int64_t[]) { 6 });

  g_assert_false (cow_tensor_is_alias_of (r, t));
  write_through (r, 1);
  write_through (t, 2);
  read_through (r);
  read_through (tt);
  test_assert_tensor_values (r, 1, 3, 1, 4, 2, 5);
  g_assert_cmpuint (violations (&log), ==, 0);
  g_assert_cmpuint (log.calls, ==, 0);

  cow_tensor_unref (r);
  cow_tensor_unref (tt);
  cow_tensor_unref (t);
  end_mode (&log);
}

static void
test_simulate_other_modes_never_warn (void)
{
  const CowReshapeMode modes[] = { COW_RESHAPE_VIEW, COW_RESHAPE_LAZY };
  for (gsize i = 0; i < G_N_ELEMENTS (modes); i++)
    {
      SimLog log;
      begin_mode (&log, modes[i]);
      CowTensor *t = arange (2, 3);
      CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });
      write_through (r, 1);
      read_through (t);
      write_through (t, 2);
      read_through (r);
      g_assert_cmpuint (violations (&log), ==, 0);
      g_assert_cmpuint (log.calls, ==, 0);
      cow_tensor_unref (r);
      cow_tensor_unref (t);
      end_mode (&log);
    }
}

static void
test_simulate_default_handler_prints (void)
{
  if (g_test_subprocess ())
    {
      cow_set_reshape_mode (COW_RESHAPE_SIMULATE);
      cow_set_warning_handler (record_warning, NULL); /* replaced below */
      cow_set_warning_handler (NULL, NULL);            /* NULL: the default */
      CowTensor *t = arange (2, 3);
      CowTensor *r = reshape_ok (t, 1, (int64_t[]) { 6 });
      write_through (r, 1);
      read_through (t);
      g_assert_cmpuint (cow_simulate_violation_count (), ==, 1);
      cow_tensor_unref (r);
      cow_tensor_unref (t);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*warning*reshape*");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/reshape/mode/set-get", test_mode_set_get);
  g_test_add_func ("/reshape/mode/from-string", test_mode_from_string);
  g_test_add_func ("/reshape/mode/from-string-rejects-bad-text",
                   test_mode_from_string_rejects_bad_text);

  g_test_add_func ("/reshape/env/view", test_env_view);
  g_test_add_func ("/reshape/env/lazy", test_env_lazy);
  g_test_add_func ("/reshape/env/simulate", test_env_simulate);
  g_test_add_func ("/reshape/env/unset-defaults-to-view", test_env_unset_defaults_to_view);
  g_test_add_func ("/reshape/env/invalid-falls-back-to-view",
                   test_env_invalid_falls_back_to_view);
  g_test_add_func ("/reshape/env/set-mode-wins", test_env_set_mode_wins);
  g_test_add_func ("/reshape/env/read-once", test_env_read_once);

  g_test_add_func ("/reshape/view/alias-when-viewable", test_view_mode_aliases_when_viewable);
  g_test_add_func ("/reshape/view/copy-when-not-viewable",
                   test_view_mode_copies_when_not_viewable);

  g_test_add_func ("/reshape/lazy/lazy-copy-when-viewable",
                   test_lazy_mode_lazy_copy_when_viewable);
  g_test_add_func ("/reshape/lazy/write-original-leaves-result",
                   test_lazy_mode_write_original_leaves_result);
  g_test_add_func ("/reshape/lazy/eager-copy-when-not-viewable",
                   test_lazy_mode_eager_copy_when_not_viewable);
  g_test_add_func ("/reshape/lazy/keeps-view-layout", test_lazy_mode_keeps_view_layout);

  g_test_add_func ("/reshape/simulate/returns-alias", test_simulate_returns_alias);
  g_test_add_func ("/reshape/simulate/write-result-then-read-original-warns",
                   test_simulate_write_result_then_read_original_warns);
  g_test_add_func ("/reshape/simulate/write-original-then-read-result-warns",
                   test_simulate_write_original_then_read_result_warns);
  g_test_add_func ("/reshape/simulate/write-original-then-write-result-warns",
                   test_simulate_write_original_then_write_result_warns);
  g_test_add_func ("/reshape/simulate/write-result-then-write-original-warns",
                   test_simulate_write_result_then_write_original_warns);
  g_test_add_func ("/reshape/simulate/result-only-no-warning",
                   test_simulate_result_only_no_warning);
  g_test_add_func ("/reshape/simulate/original-only-no-warning",
                   test_simulate_original_only_no_warning);
  g_test_add_func ("/reshape/simulate/reads-only-no-warning",
                   test_simulate_reads_only_no_warning);
  g_test_add_func ("/reshape/simulate/views-before-reshape-belong-to-original",
                   test_simulate_views_before_reshape_belong_to_original);
  g_test_add_func ("/reshape/simulate/view-before-reshape-reads-result-write",
                   test_simulate_view_before_reshape_reads_result_write);
  g_test_add_func ("/reshape/simulate/views-of-result-belong-to-result",
                   test_simulate_views_of_result_belong_to_result);
  g_test_add_func ("/reshape/simulate/results-are-separate-sets",
                   test_simulate_results_are_separate_sets);
  g_test_add_func ("/reshape/simulate/handler-once-per-storage",
                   test_simulate_handler_once_per_storage);
  g_test_add_func ("/reshape/simulate/data-address-is-not-a-read",
                   test_simulate_data_address_is_not_a_read);
  g_test_add_func ("/reshape/simulate/ops-are-tracked", test_simulate_ops_are_tracked);
  g_test_add_func ("/reshape/simulate/not-viewable-copies", test_simulate_not_viewable_copies);
  g_test_add_func ("/reshape/simulate/other-modes-never-warn",
                   test_simulate_other_modes_never_warn);
  g_test_add_func ("/reshape/simulate/default-handler-prints",
                   test_simulate_default_handler_prints);

  return g_test_run ();
}
