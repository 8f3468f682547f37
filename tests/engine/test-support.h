/* test-support.h — shared helpers for the engine's unit tests.
 *
 * Four groups:
 *   - TestRecorder: a trace sink that keeps every event and announced
 *     string in memory, for asserting on what the engine reported;
 *   - TestAllocator: a CowAllocator that counts allocations and frees and
 *     can be told to fail, and TestForeign: foreign memory whose deleter
 *     counts how often it ran;
 *   - tensor helpers: build tensors from C arrays, read them back as
 *     doubles, assert their elements;
 *   - error assertions for CowError.
 *
 * Every helper that can fail asserts (g_assert*), so a test can use the
 * result without checking it.  This API is shared by all test-*.c files:
 * extend it, do not change what exists.
 */
#pragma once

#include <glib.h>

#include "cowtensor.h"

G_BEGIN_DECLS

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

/* Asserts that @error (a CowError *) is COW_OK; otherwise fails the test
 * with the status name and the error's message. */
#define test_assert_cow_ok(error)                                             \
  test_assert_cow_status_impl (__FILE__, __LINE__, G_STRFUNC, #error, (error), \
                               COW_OK)

/* Asserts that @error (a CowError *) holds @code (a CowStatus other than
 * COW_OK) and a non-empty message. */
#define test_assert_cow_error(error, code)                                    \
  test_assert_cow_status_impl (__FILE__, __LINE__, G_STRFUNC, #error, (error), \
                               (code))

void test_assert_cow_status_impl (const char *file, int line, const char *func,
                                  const char *expr, const CowError *error,
                                  CowStatus expected);

/* ------------------------------------------------------------------ */
/* Recording trace sink                                                */
/* ------------------------------------------------------------------ */

typedef struct _TestRecorder TestRecorder;

/* A recorder, not installed yet. */
TestRecorder *test_recorder_new (void);
/* Installs the recorder as the process's trace sink (replacing any other
 * sink).  Events already recorded are kept; see test_recorder_clear(). */
void test_recorder_start (TestRecorder *rec);
/* Removes the sink if this recorder is installed.  Recorded events stay. */
void test_recorder_stop (TestRecorder *rec);
/* Forgets every recorded event and string. */
void test_recorder_clear (TestRecorder *rec);
/* Stops (if needed) and frees the recorder. */
void test_recorder_free (TestRecorder *rec);

/* All recorded events, in the order the sink received them.  Every
 * pointer returned by a recorder into its events is valid only until the
 * next event is recorded or the recorder is cleared: copy the event
 * (`CowTraceEvent ev = *test_recorder_find (…)`) if the engine may run in
 * between, or stop the recorder first. */
guint test_recorder_n_events (TestRecorder *rec);
const CowTraceEvent *test_recorder_event (TestRecorder *rec, guint position);

/* Events of @type. */
guint test_recorder_count (TestRecorder *rec, CowEventType type);
/* Events of @type whose op is @op. */
guint test_recorder_count_op (TestRecorder *rec, CowEventType type, CowOp op);
/* Events of @type whose first payload word (v[0]: the allocation,
 * storage, tensor, context, source tensor or range id, per type) is @id. */
guint test_recorder_count_id (TestRecorder *rec, CowEventType type, guint64 id);

/* The @index-th (from 0) event of @type, or NULL when there are fewer. */
const CowTraceEvent *test_recorder_find (TestRecorder *rec, CowEventType type,
                                         guint index);
/* The first event of @type whose v[0] is @id, or NULL. */
const CowTraceEvent *test_recorder_find_id (TestRecorder *rec, CowEventType type,
                                            guint64 id);
/* Position (in test_recorder_event() order) of the @index-th event of
 * @type, or -1. */
gint test_recorder_position (TestRecorder *rec, CowEventType type, guint index);

/* MATERIALIZE_END events whose kind (aux & COW_MATERIALIZE_KIND_MASK) is
 * @kind (a CowMaterializeKind). */
guint test_recorder_count_materialize (TestRecorder *rec, guint kind);
/* The same, only those for context @context_id. */
guint test_recorder_count_materialize_in (TestRecorder *rec, guint kind,
                                          guint64 context_id);

/* Strings announced through the sink's string callback. */
/* Text announced for @string_id, or NULL if it never was. */
const char *test_recorder_string (TestRecorder *rec, guint64 string_id);
/* How many times @string_id was announced. */
guint test_recorder_string_count (TestRecorder *rec, guint64 string_id);
/* How many events had been recorded when @string_id was first announced
 * (so "announced before the event at position p" is `result <= p`), or
 * -1 if it never was. */
gint test_recorder_string_position (TestRecorder *rec, guint64 string_id);
/* Total string announcements. */
guint test_recorder_n_strings (TestRecorder *rec);

/* ------------------------------------------------------------------ */
/* Counting allocator and foreign memory                               */
/* ------------------------------------------------------------------ */

/* A CPU allocator (64-byte aligned, simple data pointers: context ==
 * data) that counts what it hands out.  Counters are atomic. */
typedef struct _TestAllocator TestAllocator;

TestAllocator *test_allocator_new (void);
/* Frees the allocator; every storage using it must be gone (asserts that
 * every allocation was freed). */
void test_allocator_free (TestAllocator *alloc);
/* The CowAllocator interface, for cow_storage_new() and
 * cow_tensor_empty_with_allocator(). */
CowAllocator *test_allocator_get (TestAllocator *alloc);
/* Successful allocations so far. */
gint test_allocator_n_allocs (TestAllocator *alloc);
/* Blocks released through the deleter so far. */
gint test_allocator_n_frees (TestAllocator *alloc);
/* Allocations minus frees. */
gint test_allocator_n_live (TestAllocator *alloc);
/* The next @n allocations fail with COW_ERROR_NO_MEMORY. */
void test_allocator_fail_next (TestAllocator *alloc, gint n);

/* Foreign memory: @nbytes of zeroed bytes whose deleter counts its runs.
 * Pass `f->data, f, test_foreign_deleter` to cow_tensor_from_foreign()
 * or cow_storage_new_foreign(). */
typedef struct {
  void *data;
  gsize nbytes;
  gint n_deleted; /* atomic: runs of test_foreign_deleter() */
} TestForeign;

TestForeign *test_foreign_new (gsize nbytes);
/* Frees the bytes (first run only) and counts every run.  @context is
 * the TestForeign. */
void test_foreign_deleter (void *context);
/* Frees the record (and the bytes if the deleter never ran). */
void test_foreign_free (TestForeign *foreign);

/* ------------------------------------------------------------------ */
/* Tensors                                                             */
/* ------------------------------------------------------------------ */

/* An f32 tensor of @sizes (@ndim entries) holding @values (numel of them,
 * row-major), e.g.
 *   test_tensor_f32 (2, (int64_t[]) { 2, 3 }, (float[]) { 1, 2, 3, 4, 5, 6 }); */
CowTensor *test_tensor_f32 (int ndim, const int64_t *sizes, const float *values);
/* A tensor of @dtype holding @values converted from double. */
CowTensor *test_tensor_from_doubles (CowDType dtype, int ndim,
                                     const int64_t *sizes, const double *values);
/* An f32 tensor holding start, start + 1, … in row-major order. */
CowTensor *test_tensor_arange_f32 (int ndim, const int64_t *sizes, double start);

/* The elements in logical (row-major) order as doubles, read with
 * cow_tensor_read_elements() (a read: never materializes).  Free with
 * g_free().  *@n_out (may be NULL) receives numel. */
double *test_tensor_values (const CowTensor *tensor, gsize *n_out);

/* Element at @index (ndim entries) via cow_tensor_get_f64(), asserting
 * success. */
double test_tensor_get (const CowTensor *tensor, const int64_t *index);

/* Asserts numel == @n and every element == @expected[i] exactly (small
 * integers and halves are exact in every dtype). */
#define test_assert_tensor_equals(tensor, expected, n)                       \
  test_assert_tensor_impl (__FILE__, __LINE__, G_STRFUNC, #tensor, (tensor), \
                           (expected), (n), 0.0)
/* The same with a tolerance. */
#define test_assert_tensor_close(tensor, expected, n, eps)                   \
  test_assert_tensor_impl (__FILE__, __LINE__, G_STRFUNC, #tensor, (tensor), \
                           (expected), (n), (eps))
/* The expected values as arguments:
 *   test_assert_tensor_values (t, 1, 2, 3, 4); */
#define test_assert_tensor_values(tensor, ...)                               \
  test_assert_tensor_impl (__FILE__, __LINE__, G_STRFUNC, #tensor, (tensor), \
                           (const double[]) { __VA_ARGS__ },                 \
                           sizeof ((const double[]) { __VA_ARGS__ })         \
                             / sizeof (double),                              \
                           0.0)
/* Every element equals @value (any numel, including 0). */
#define test_assert_tensor_filled(tensor, value)                              \
  test_assert_tensor_filled_impl (__FILE__, __LINE__, G_STRFUNC, #tensor,     \
                                  (tensor), (value))
/* ndim == @ndim and sizes equal @sizes:
 *   test_assert_tensor_sizes (t, 2, ((int64_t[]) { 3, 4 })); */
#define test_assert_tensor_sizes(tensor, ndim, sizes)                         \
  test_assert_tensor_sizes_impl (__FILE__, __LINE__, G_STRFUNC, #tensor,      \
                                 (tensor), (ndim), (sizes))

void test_assert_tensor_impl (const char *file, int line, const char *func,
                              const char *expr, const CowTensor *tensor,
                              const double *expected, gsize n, double eps);
void test_assert_tensor_filled_impl (const char *file, int line,
                                     const char *func, const char *expr,
                                     const CowTensor *tensor, double value);
void test_assert_tensor_sizes_impl (const char *file, int line, const char *func,
                                    const char *expr, const CowTensor *tensor,
                                    int ndim, const int64_t *sizes);

G_END_DECLS
