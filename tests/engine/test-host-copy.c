/* test-host-copy.c — materialization by copy of large host tensors, which
 * the engine spreads over helper threads in chunks of one huge page
 * (64 MiB and more).  COW_COPY_THREADS=4 is set before the first copy so
 * the helpers run even on a busy or small machine: the tests check that
 * every byte arrives whatever the split, for destinations aligned to a
 * huge page (the CPU allocator) or only to a page (the shareable
 * allocator), and for sizes that end inside a chunk. */
#include "test-support.h"

#include <stdlib.h>
#include <string.h>

#define MiB ((gsize) 1 << 20)

/* Fills @n bytes with a pattern that differs in every 2 MiB chunk and
 * every 4 KiB page, so a misplaced chunk cannot compare equal. */
static void
fill_pattern (guint8 *bytes, gsize n, guint seed)
{
  for (gsize i = 0; i < n; i++)
    bytes[i] = (guint8) (i * 131u + (i >> 12) * 7u + (i >> 21) * 13u + seed);
}

/* A u8 tensor of @n bytes from @allocator holding the pattern @seed. */
static CowTensor *
make_source (CowAllocator *allocator, gsize n, guint seed)
{
  CowError error = { 0 };
  int64_t numel = (int64_t) n;
  CowTensor *t = cow_tensor_empty_with_allocator (1, &numel, COW_DTYPE_U8, allocator, &error);
  test_assert_cow_ok (&error);
  guint8 *bytes = cow_tensor_mutable_data (t, &error);
  test_assert_cow_ok (&error);
  fill_pattern (bytes, n, seed);
  return t;
}

/* Writes a lazy clone of a @n-byte tensor while the source lives: the
 * clone gets its own copy, equal byte for byte, and the source keeps its
 * bytes. */
static void
check_copy (CowAllocator *allocator, gsize n, guint seed)
{
  CowError error = { 0 };
  CowTensor *source = make_source (allocator, n, seed);
  const guint8 *original = cow_tensor_const_data (source);
  CowTensor *clone = cow_tensor_lazy_clone (source, &error);
  test_assert_cow_ok (&error);
  g_assert_true (cow_tensor_is_cow (clone));

  guint8 *copy = cow_tensor_mutable_data (clone, &error);
  test_assert_cow_ok (&error);
  g_assert_true (copy != original);
  g_assert_false (cow_tensor_is_cow (clone));
  g_assert_true (memcmp (copy, original, n) == 0);

  /* The copy is the clone's own: writing it leaves the source alone. */
  copy[0] ^= 0xff;
  copy[n - 1] ^= 0xff;
  g_assert_cmpuint (original[0], !=, copy[0]);
  g_assert_cmpuint (original[n - 1], !=, copy[n - 1]);
  guint8 *expected = g_malloc (n);
  fill_pattern (expected, n, seed);
  g_assert_true (memcmp (original, expected, n) == 0);
  g_free (expected);

  cow_tensor_unref (clone);
  cow_tensor_unref (source);
}

static void
test_cpu_exact_threshold (void)
{
  check_copy (NULL, 64 * MiB, 1);
}

static void
test_cpu_ends_inside_a_chunk (void)
{
  check_copy (NULL, 64 * MiB + 3 * MiB / 2 + 4093, 2);
}

static void
test_shareable_page_aligned_destination (void)
{
  /* memfd mappings are page-aligned, not huge-page-aligned: the first
   * and last chunks are partial. */
  check_copy (cow_ipc_shareable_cpu_allocator (), 65 * MiB + 12345, 3);
  g_assert_cmpuint (cow_ipc_shareable_live_bytes (), ==, 0);
}

static void
test_below_threshold (void)
{
  check_copy (NULL, 64 * MiB - 1, 4);
}

/* A bad COW_COPY_THREADS is reported once on stderr, and large copies
 * still come out exact (the number of threads is then chosen by the free
 * cores). */
static void
test_bad_thread_count (void)
{
  if (g_test_subprocess ())
    {
      g_setenv ("COW_COPY_THREADS", "lots", TRUE);
      check_copy (NULL, 64 * MiB + 1, 5);
      check_copy (NULL, 64 * MiB + 2, 6);
      return;
    }
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*COW_COPY_THREADS=lots is not a number from 1 to 16*");
  /* Once, not per copy. */
  g_test_trap_assert_stderr_unmatched ("*COW_COPY_THREADS=lots*COW_COPY_THREADS=lots*");
}

int
main (int argc, char **argv)
{
  /* Read once, at the first large copy. */
  g_setenv ("COW_COPY_THREADS", "4", TRUE);
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/host-copy/cpu/exactly-64-mib", test_cpu_exact_threshold);
  g_test_add_func ("/host-copy/cpu/ends-inside-a-chunk", test_cpu_ends_inside_a_chunk);
  g_test_add_func ("/host-copy/shareable/page-aligned-destination",
                   test_shareable_page_aligned_destination);
  g_test_add_func ("/host-copy/cpu/just-below-64-mib", test_below_threshold);
  g_test_add_func ("/host-copy/env/bad-thread-count", test_bad_thread_count);

  return g_test_run ();
}
