/* test-cuda.c — device tensors (cow-cuda.h, cow-device.h).
 *
 * Two groups:
 *   /cuda/no-device/… run only where no CUDA device can be used (no
 *     driver, no GPU, or a library built without the toolkit): every
 *     device entry point must fail with COW_ERROR_DEVICE "no CUDA device:
 *     <reason>" and nothing on the CPU may change.  Some of them use a
 *     host-memory allocator that claims to be cuda:0, to reach the device
 *     paths of the ops without a device;
 *   /cuda/gpu/… run only where a device exists (skipped with the reason
 *     otherwise): lazy clone and materialization (copy and steal) checked
 *     against host references, concurrent materialization on two streams,
 *     out of memory while materializing, and fill/add/mul against the CPU.
 * /cuda/any/… run everywhere (bad input that fails before any device
 * call, and trace events).
 *
 * Under AddressSanitizer the CUDA runtime needs
 * ASAN_OPTIONS=protect_shadow_gap=0 on a GPU machine (it maps memory in
 * ASan's shadow gap); build-aux/run-gpu-checks.sh sets it.  Without a
 * driver the runtime maps nothing and the default is fine.
 */
#include "test-support.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define SIZES(...) (int) (sizeof ((const int64_t[]) { __VA_ARGS__ }) / sizeof (int64_t)), \
                   ((const int64_t[]) { __VA_ARGS__ })

/* Runs of count_and_unmap(), the deleter of foreign test memory. */
static int deleted_foreign;

/* Asserts @err holds @code and a message containing @needle. */
static void
assert_error_mentions (const CowError *err, CowStatus code, const char *needle)
{
  test_assert_cow_error (err, code);
  if (strstr (err->message, needle) == NULL)
    g_error ("error message \"%s\" does not mention \"%s\"", err->message, needle);
}

/* Skips the test unless a CUDA device exists (@want_device) or unless
 * none does; returns whether it runs. */
static gboolean
require_device (gboolean want_device)
{
  CowError error = { 0 };
  gboolean have = cow_cuda_available (&error) == COW_OK;
  if (want_device && !have)
    g_test_skip (error.message);
  else if (!want_device && have)
    g_test_skip ("a CUDA device is present: the no-device behaviour cannot be observed");
  return have == want_device;
}

/* ------------------------------------------------------------------ */
/* A host-memory allocator that calls itself cuda:0                    */
/* ------------------------------------------------------------------ */

static CowStatus
fake_allocate (CowAllocator *self, size_t nbytes, CowDataPtr *out, CowError *error)
{
  (void) self;
  CowAllocator *cpu = cow_cpu_allocator ();
  return cpu->allocate (cpu, nbytes, out, error);
}

static CowStatus
fake_copy (CowAllocator *self, void *dst, const void *src, size_t nbytes, CowError *error)
{
  (void) self;
  CowAllocator *cpu = cow_cpu_allocator ();
  return cpu->copy_data (cpu, dst, src, nbytes, error);
}

static bool
fake_is_simple (CowAllocator *self, const CowDataPtr *ptr)
{
  (void) self;
  CowAllocator *cpu = cow_cpu_allocator ();
  return cpu->is_simple_data_ptr (cpu, ptr);
}

static CowAllocator fake_cuda0 = {
  .name = "fake-cuda:0",
  .device_type = COW_DEVICE_CUDA,
  .device_index = 0,
  .allocate = fake_allocate,
  .copy_data = fake_copy,
  .is_simple_data_ptr = fake_is_simple,
};

/* A "device" f32 tensor of @n elements 0, 1, … written through host
 * memory (the fake allocator's bytes are host bytes). */
static CowTensor *
fake_device_arange (int64_t n)
{
  CowError error = { 0 };
  CowTensor *t = cow_tensor_empty_with_allocator (1, &n, COW_DTYPE_F32, &fake_cuda0, &error);
  test_assert_cow_ok (&error);
  float *data = cow_tensor_mutable_data (t, &error);
  test_assert_cow_ok (&error);
  for (int64_t i = 0; i < n; i++)
    data[i] = (float) i;
  return t;
}

static void
assert_fake_arange (const CowTensor *t, int64_t n)
{
  const float *data = cow_tensor_const_data (t);
  for (int64_t i = 0; i < n; i++)
    g_assert_cmpfloat (data[i], ==, (float) i);
}

/* ------------------------------------------------------------------ */
/* No device                                                           */
/* ------------------------------------------------------------------ */

static void
test_no_device_runtime (void)
{
  if (!require_device (FALSE))
    return;
  CowError error = { 0 };
  g_assert_cmpint (cow_cuda_available (&error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  /* The runtime's reason follows the prefix. */
  g_assert_cmpuint (strlen (error.message), >, strlen ("no CUDA device: ") + 3);
  g_assert_cmpint (cow_cuda_device_count (), ==, 0);

  /* Whatever the index, the missing device is the reason. */
  const int indices[] = { 0, 1, -1, COW_CUDA_MAX_DEVICES + 5 };
  for (gsize i = 0; i < G_N_ELEMENTS (indices); i++)
    {
      cow_error_clear (&error);
      g_assert_cmpint (cow_cuda_check_device (indices[i], &error), ==, COW_ERROR_DEVICE);
      assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
      cow_error_clear (&error);
      g_assert_null (cow_cuda_allocator (indices[i], &error));
      assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
      cow_error_clear (&error);
      g_assert_null (cow_ipc_shareable_cuda_allocator (indices[i], &error));
      assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
    }

  cow_error_clear (&error);
  g_assert_null (cow_cuda_stream_new (0, &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_cmpint (cow_cuda_stream_synchronize (NULL, &error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_cmpint (cow_cuda_synchronize (0, &error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  /* A NULL error is allowed everywhere. */
  g_assert_cmpint (cow_cuda_available (NULL), ==, COW_ERROR_DEVICE);
  g_assert_null (cow_cuda_allocator (0, NULL));
}

static void
test_no_device_allocation_and_to (void)
{
  if (!require_device (FALSE))
    return;
  CowError error = { 0 };
  g_assert_null (cow_tensor_empty_on (SIZES (4, 4), COW_DTYPE_F32, cow_device_cuda (0), &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");

  CowTensor *host = test_tensor_arange_f32 (2, (int64_t[]) { 2, 3 }, 1);
  cow_error_clear (&error);
  g_assert_null (cow_tensor_to (host, cow_device_cuda (0), &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_null (cow_tensor_to (host, cow_device_cuda (3), &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  /* The source is untouched: still its own bytes, not copy-on-write. */
  g_assert_false (cow_tensor_is_cow (host));
  g_assert_cmpint (cow_storage_refcount (cow_tensor_storage (host)), ==, 1);
  test_assert_tensor_values (host, 1, 2, 3, 4, 5, 6);

  /* to(cpu) of a CPU tensor is the tensor itself. */
  cow_error_clear (&error);
  CowTensor *same = cow_tensor_to (host, cow_device_cpu (), &error);
  test_assert_cow_ok (&error);
  g_assert_true (same == host);
  cow_tensor_unref (same);
  cow_tensor_unref (host);
}

/* Device tensors of an allocator that claims cuda:0 reach every device
 * path of the ops; each must say there is no device and change nothing. */
static void
test_no_device_ops (void)
{
  if (!require_device (FALSE))
    return;
  enum { N = 6 };
  CowError error = { 0 };
  CowTensor *a = fake_device_arange (N);
  CowTensor *b = fake_device_arange (N);
  g_assert_true (cow_device_equal (cow_tensor_device (a), cow_device_cuda (0)));

  /* Lazy clone: sharing device bytes needs the device's stream order. */
  g_assert_null (cow_tensor_lazy_clone (a, &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  g_assert_false (cow_tensor_is_cow (a));

  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_fill_ (a, 7, &error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_null (cow_tensor_add (a, b, 1, &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_add_ (a, b, 2, &error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_null (cow_tensor_mul (a, b, &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_mul_ (a, b, &error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_scale_ (a, 3, &error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_copy_ (a, b, &error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  CowTensor *transposed = cow_tensor_view (a, SIZES (2, 3), &error);
  test_assert_cow_ok (&error);
  CowTensor *t = cow_tensor_transpose (transposed, 0, 1, &error);
  test_assert_cow_ok (&error);
  g_assert_null (cow_tensor_contiguous (t, &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_null (cow_tensor_clone (a, &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");

  /* Reading back needs the device too. */
  float out[N];
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_read_elements (a, out, sizeof out, &error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  double value;
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_get_f64 (a, (int64_t[]) { 1 }, &value, &error), ==,
                   COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_null (cow_tensor_to (a, cow_device_cpu (), &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");

  /* Copying from the host into it moves the bytes with the device too. */
  CowTensor *host = test_tensor_arange_f32 (1, (int64_t[]) { N }, 100);
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_copy_ (a, host, &error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");

  /* Nothing was written, nothing became copy-on-write. */
  assert_fake_arange (a, N);
  assert_fake_arange (b, N);
  g_assert_false (cow_tensor_is_cow (a));
  g_assert_false (cow_tensor_is_cow (b));
  test_assert_tensor_values (host, 100, 101, 102, 103, 104, 105);
  cow_tensor_unref (host);
  cow_tensor_unref (t);
  cow_tensor_unref (transposed);
  cow_tensor_unref (a);
  cow_tensor_unref (b);
}

/* After every device call has failed, the CPU side works as ever. */
static void
test_no_device_cpu_still_works (void)
{
  CowError error = { 0 };
  g_assert_null (cow_tensor_empty_on (SIZES (8), COW_DTYPE_F32, cow_device_cuda (0), NULL));
  CowTensor *a = test_tensor_arange_f32 (1, (int64_t[]) { 4 }, 0);
  CowTensor *c = cow_tensor_lazy_clone (a, &error);
  test_assert_cow_ok (&error);
  g_assert_true (cow_tensor_is_cow (c));
  g_assert_cmpint (cow_tensor_add_ (c, a, 1, &error), ==, COW_OK);
  test_assert_tensor_values (c, 0, 2, 4, 6);
  test_assert_tensor_values (a, 0, 1, 2, 3);
  CowTensor *m = cow_tensor_mul (a, c, &error);
  test_assert_cow_ok (&error);
  test_assert_tensor_values (m, 0, 2, 8, 18);
  g_assert_cmpint (cow_tensor_fill_ (a, 5, &error), ==, COW_OK);
  test_assert_tensor_filled (a, 5);
  g_assert_true (cow_device_equal (cow_tensor_device (a), cow_device_cpu ()));
  cow_tensor_unref (m);
  cow_tensor_unref (c);
  cow_tensor_unref (a);
}

/* ------------------------------------------------------------------ */
/* Foreign device memory (a received CUDA IPC mapping, say)            */
/* ------------------------------------------------------------------ */

/* Memory that faults on any host access: if an op ever read or wrote a
 * device storage's bytes on the host, the test would crash. */
static void *
inaccessible_page (void)
{
  void *page = mmap (NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_assert_true (page != MAP_FAILED);
  return page;
}

static void
count_and_unmap (void *context)
{
  munmap (context, 4096);
  deleted_foreign++;
}

/* An f32 tensor of @n elements over foreign memory on @device. */
static CowTensor *
foreign_on (CowDevice device, int64_t n)
{
  CowError error = { 0 };
  void *page = inaccessible_page ();
  CowStorage *storage = cow_storage_new_foreign_on (page, (size_t) n * sizeof (float), device,
                                                    page, count_and_unmap, &error);
  test_assert_cow_ok (&error);
  CowTensor *t = cow_tensor_new_on_storage (storage, 1, &n, COW_DTYPE_F32, &error);
  test_assert_cow_ok (&error);
  cow_storage_unref (storage);
  return t;
}

/* Foreign memory named as device memory is a device storage: its device,
 * trace events and the refusal of bad devices; its deleter runs once. */
static void
test_any_foreign_device_storage (void)
{
  CowError error = { 0 };
  TestRecorder *rec = test_recorder_new ();
  deleted_foreign = 0;
  test_recorder_start (rec);
  CowTensor *t = foreign_on (cow_device_cuda (1), 8);
  test_recorder_stop (rec);
  g_assert_true (cow_device_equal (cow_tensor_device (t), cow_device_cuda (1)));
  g_assert_false (cow_tensor_is_cow (t));
  const CowTraceEvent *alloc = test_recorder_find (rec, COW_EVENT_ALLOCATION_NEW, 0);
  g_assert_cmpuint (alloc->aux, ==, COW_ALLOCATION_FOREIGN);
  g_assert_cmpuint (alloc->allocation.device_index, ==, 1);
  g_assert_cmpuint (COW_TRACE_AUX_DEVICE (test_recorder_find (rec, COW_EVENT_STORAGE_NEW, 0)->aux),
                    ==, 2);
  g_assert_cmpuint (COW_TRACE_AUX_DEVICE (test_recorder_find (rec, COW_EVENT_TENSOR_NEW, 0)->aux),
                    ==, 2);
  /* Views stay on the device. */
  CowTensor *v = cow_tensor_slice (t, 0, 2, 6, 1, &error);
  test_assert_cow_ok (&error);
  g_assert_true (cow_device_equal (cow_tensor_device (v), cow_device_cuda (1)));
  cow_tensor_unref (v);
  cow_tensor_unref (t);
  g_assert_cmpint (deleted_foreign, ==, 1);

  /* Plain foreign memory is still host memory. */
  float host[2] = { 1, 2 };
  CowStorage *plain = cow_storage_new_foreign (host, sizeof host, NULL, NULL, &error);
  test_assert_cow_ok (&error);
  CowTensor *p = cow_tensor_new_on_storage (plain, SIZES (2), COW_DTYPE_F32, &error);
  test_assert_cow_ok (&error);
  g_assert_true (cow_device_equal (cow_tensor_device (p), cow_device_cpu ()));
  test_assert_tensor_values (p, 1, 2);
  cow_tensor_unref (p);
  cow_storage_unref (plain);

  const CowDevice bad[] = { { COW_DEVICE_CUDA, -1 }, { COW_DEVICE_CUDA, COW_CUDA_MAX_DEVICES },
                            { COW_DEVICE_CPU, 1 }, { (CowDeviceType) 7, 0 } };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      cow_error_clear (&error);
      g_assert_null (cow_storage_new_foreign_on (host, sizeof host, bad[i], NULL, NULL, &error));
      assert_error_mentions (&error, COW_ERROR_INVALID_ARGUMENT, "no such device");
    }
  test_recorder_free (rec);
}

/* Without a device, every op on foreign device memory takes the device
 * path and says there is no device: none reads the bytes on the host
 * (they fault), none returns a host result computed from them. */
static void
test_no_device_foreign_device_ops (void)
{
  if (!require_device (FALSE))
    return;
  enum { N = 6 };
  CowError error = { 0 };
  deleted_foreign = 0;
  CowTensor *a = foreign_on (cow_device_cuda (0), N);
  CowTensor *host = test_tensor_arange_f32 (1, (int64_t[]) { N }, 100);

  float out[N];
  g_assert_cmpint (cow_tensor_read_elements (a, out, sizeof out, &error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  double value;
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_get_f64 (a, (int64_t[]) { 1 }, &value, &error), ==,
                   COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_null (cow_tensor_to (a, cow_device_cpu (), &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  /* Results of ops on foreign device memory belong on its device. */
  cow_error_clear (&error);
  g_assert_null (cow_tensor_clone (a, &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_null (cow_tensor_lazy_clone (a, &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_null (cow_tensor_add (a, a, 1, &error));
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_fill_ (a, 7, &error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_copy_ (host, a, &error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_copy_ (a, host, &error), ==, COW_ERROR_DEVICE);
  assert_error_mentions (&error, COW_ERROR_DEVICE, "no CUDA device: ");
  /* Mixed with host tensors, and in CPU-only ops: refused by name. */
  cow_error_clear (&error);
  g_assert_null (cow_tensor_add (host, a, 1, &error));
  assert_error_mentions (&error, COW_ERROR_INVALID_ARGUMENT, "(cpu and cuda:0)");
  cow_error_clear (&error);
  g_assert_null (cow_tensor_sum (a, &error));
  assert_error_mentions (&error, COW_ERROR_NOT_SUPPORTED, "device tensors");
  cow_error_clear (&error);
  g_assert_null (cow_tensor_matmul (a, a, &error));
  assert_error_mentions (&error, COW_ERROR_NOT_SUPPORTED, "device tensors");

  test_assert_tensor_values (host, 100, 101, 102, 103, 104, 105);
  cow_tensor_unref (host);
  cow_tensor_unref (a);
  g_assert_cmpint (deleted_foreign, ==, 1);
}

/* ------------------------------------------------------------------ */
/* Anywhere                                                            */
/* ------------------------------------------------------------------ */

static void
test_any_bad_input (void)
{
  CowError error = { 0 };
  g_assert_null (cow_tensor_to (NULL, cow_device_cpu (), &error));
  assert_error_mentions (&error, COW_ERROR_INVALID_ARGUMENT, "NULL");

  CowTensor *host = test_tensor_arange_f32 (1, (int64_t[]) { 3 }, 0);
  cow_error_clear (&error);
  g_assert_null (cow_tensor_to (host, (CowDevice) { (CowDeviceType) 7, 0 }, &error));
  assert_error_mentions (&error, COW_ERROR_INVALID_ARGUMENT, "not a device type");
  cow_error_clear (&error);
  g_assert_null (cow_tensor_to (host, (CowDevice) { COW_DEVICE_CPU, 2 }, &error));
  assert_error_mentions (&error, COW_ERROR_OUT_OF_RANGE, "cpu:2");
  cow_error_clear (&error);
  g_assert_null (cow_tensor_empty_on (SIZES (2), COW_DTYPE_F32,
                                      (CowDevice) { (CowDeviceType) -1, 0 }, &error));
  assert_error_mentions (&error, COW_ERROR_INVALID_ARGUMENT, "not a device type");

  /* An index that no machine has: out of range, or no device at all. */
  cow_error_clear (&error);
  g_assert_null (cow_tensor_to (host, cow_device_cuda (COW_CUDA_MAX_DEVICES), &error));
  g_assert_true (error.code == COW_ERROR_OUT_OF_RANGE || error.code == COW_ERROR_DEVICE);
  cow_error_clear (&error);
  g_assert_null (cow_tensor_to (host, cow_device_cuda (-1), &error));
  g_assert_true (error.code == COW_ERROR_OUT_OF_RANGE || error.code == COW_ERROR_DEVICE);

  /* Operands on different devices: refused before any device call. */
  CowTensor *dev = fake_device_arange (3);
  cow_error_clear (&error);
  g_assert_null (cow_tensor_add (host, dev, 1, &error));
  assert_error_mentions (&error, COW_ERROR_INVALID_ARGUMENT, "different devices (cpu and cuda:0)");
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_mul_ (dev, host, &error), ==, COW_ERROR_INVALID_ARGUMENT);
  assert_error_mentions (&error, COW_ERROR_INVALID_ARGUMENT, "different devices (cuda:0 and cpu)");
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_add_ (host, dev, 1, &error), ==, COW_ERROR_INVALID_ARGUMENT);
  assert_error_mentions (&error, COW_ERROR_INVALID_ARGUMENT, "different devices");
  /* Not (yet) on devices. */
  cow_error_clear (&error);
  g_assert_null (cow_tensor_sum (dev, &error));
  assert_error_mentions (&error, COW_ERROR_NOT_SUPPORTED, "device");
  cow_error_clear (&error);
  g_assert_null (cow_tensor_matmul (dev, host, &error));
  assert_error_mentions (&error, COW_ERROR_NOT_SUPPORTED, "device");
  /* copy_ converts dtypes on the host only. */
  cow_error_clear (&error);
  CowTensor *ints = cow_tensor_empty_with_allocator (SIZES (3), COW_DTYPE_I32, &fake_cuda0, &error);
  test_assert_cow_ok (&error);
  g_assert_cmpint (cow_tensor_copy_ (ints, host, &error), ==, COW_ERROR_NOT_SUPPORTED);
  assert_error_mentions (&error, COW_ERROR_NOT_SUPPORTED, "f32 to i32");

  test_assert_tensor_values (host, 0, 1, 2);
  assert_fake_arange (dev, 3);
  cow_tensor_unref (ints);
  cow_tensor_unref (dev);
  cow_tensor_unref (host);

  char name[COW_DEVICE_NAME_MAX];
  g_assert_cmpstr (cow_device_format (cow_device_cpu (), name, sizeof name), ==, "cpu");
  g_assert_cmpstr (cow_device_format (cow_device_cuda (12), name, sizeof name), ==, "cuda:12");
  g_assert_true (cow_device_equal (cow_tensor_device (NULL), cow_device_cpu ()));
}

/* Events about device bytes carry the device in aux; host ones carry 0. */
static void
test_any_trace_device (void)
{
  TestRecorder *rec = test_recorder_new ();
  test_recorder_start (rec);
  CowTensor *host = test_tensor_arange_f32 (1, (int64_t[]) { 3 }, 0);
  CowTensor *dev = fake_device_arange (3);
  test_recorder_stop (rec);

  const CowTraceEvent *host_new = test_recorder_find_id (rec, COW_EVENT_TENSOR_NEW, cow_tensor_id (host));
  const CowTraceEvent *dev_new = test_recorder_find_id (rec, COW_EVENT_TENSOR_NEW, cow_tensor_id (dev));
  g_assert_nonnull (host_new);
  g_assert_nonnull (dev_new);
  g_assert_cmpuint (COW_TRACE_AUX_DEVICE (host_new->aux), ==, 0);
  g_assert_cmpuint (COW_TRACE_AUX_DEVICE (dev_new->aux), ==, 1); /* cuda:0 */
  /* dtype and ndim keep their bits. */
  g_assert_cmpuint (dev_new->aux & 0xff, ==, COW_DTYPE_F32);
  g_assert_cmpuint ((dev_new->aux >> 8) & 0xff, ==, 1);
  const CowTraceEvent *storage_new = test_recorder_find_id (rec, COW_EVENT_STORAGE_NEW,
                                                            cow_storage_id (cow_tensor_storage (dev)));
  g_assert_nonnull (storage_new);
  g_assert_cmpuint (COW_TRACE_AUX_DEVICE (storage_new->aux), ==, 1);
  const CowTraceEvent *alloc = test_recorder_find_id (rec, COW_EVENT_ALLOCATION_NEW,
                                                      cow_storage_allocation_id (cow_tensor_storage (dev)));
  g_assert_nonnull (alloc);
  g_assert_cmpuint (alloc->aux, ==, COW_ALLOCATION_CUDA);
  g_assert_cmpuint (alloc->allocation.device_index, ==, 0);
  cow_tensor_unref (dev);
  cow_tensor_unref (host);
  test_recorder_free (rec);
}

/* ------------------------------------------------------------------ */
/* With a GPU                                                          */
/* ------------------------------------------------------------------ */

static CowTensor *
to_device (CowTensor *host)
{
  CowError error = { 0 };
  CowTensor *dev = cow_tensor_to (host, cow_device_cuda (0), &error);
  test_assert_cow_ok (&error);
  g_assert_true (cow_device_equal (cow_tensor_device (dev), cow_device_cuda (0)));
  return dev;
}

/* @n f32 elements: pattern @seed, exact in f32. */
static float *
pattern_values (gsize n, guint seed)
{
  float *values = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    values[i] = (float) ((seed * 7919u + i * 31u) % 65536u) - 1000.0f;
  return values;
}

static CowTensor *
device_pattern (gsize n, guint seed)
{
  g_autofree float *values = pattern_values (n, seed);
  CowTensor *host = test_tensor_f32 (1, (int64_t[]) { (int64_t) n }, values);
  CowTensor *dev = to_device (host);
  cow_tensor_unref (host);
  return dev;
}

/* Asserts @dev (any device) holds pattern @seed plus @delta. */
static void
assert_device_pattern (CowTensor *dev, gsize n, guint seed, float delta)
{
  g_autofree float *expected = pattern_values (n, seed);
  g_autofree float *got = g_new (float, n);
  CowError error = { 0 };
  g_assert_cmpint (cow_tensor_read_elements (dev, got, n * sizeof *got, &error), ==, COW_OK);
  for (gsize i = 0; i < n; i++)
    if (got[i] != expected[i] + delta)
      g_error ("element %zu: %g, expected %g", i, got[i], expected[i] + delta);
}

/* cudaIpcGetMemHandle cannot export the stream-ordered pool: a send of
 * pool memory is refused, naming the shareable allocator, which works. */
static void
test_gpu_ipc_send_needs_shareable_memory (void)
{
  if (!require_device (TRUE))
    return;
  enum { N = 1 << 12 };
  CowError error = { 0 };
  CowTensor *pooled = device_pattern (N, 5);
  CowIpcHandle h;
  int fd = 7;
  g_assert_cmpint (cow_ipc_send (pooled, &h, &fd, &error), ==, COW_ERROR_NOT_SUPPORTED);
  assert_error_mentions (&error, COW_ERROR_NOT_SUPPORTED, "cow_ipc_shareable_cuda_allocator (0)");
  g_assert_cmpint (fd, ==, -1);
  g_assert_cmpuint (cow_ipc_counter_files_open (), ==, 0);
  assert_device_pattern (pooled, N, 5, 0); /* untouched */

  /* The shareable allocator's tensors work like any device tensor, and
   * their lazy copies materialize into it. */
  cow_error_clear (&error);
  CowAllocator *shareable = cow_ipc_shareable_cuda_allocator (0, &error);
  test_assert_cow_ok (&error);
  CowTensor *t = cow_tensor_empty_with_allocator (1, (int64_t[]) { N }, COW_DTYPE_F32,
                                                  shareable, &error);
  test_assert_cow_ok (&error);
  g_assert_true (cow_device_equal (cow_tensor_device (t), cow_device_cuda (0)));
  g_assert_cmpint (cow_tensor_copy_ (t, pooled, &error), ==, COW_OK);
  CowTensor *clone = cow_tensor_lazy_clone (t, &error);
  test_assert_cow_ok (&error);
  g_assert_true (cow_tensor_is_cow (clone));
  g_assert_cmpint (cow_tensor_scale_ (clone, 2, &error), ==, COW_OK);
  g_assert_false (cow_tensor_is_cow (clone));
  assert_device_pattern (t, N, 5, 0);
  cow_tensor_unref (clone);
  cow_tensor_unref (t);
  cow_tensor_unref (pooled);
}

static void
test_gpu_to_round_trip (void)
{
  if (!require_device (TRUE))
    return;
  enum { N = 1 << 16 };
  CowTensor *dev = device_pattern (N, 3);
  assert_device_pattern (dev, N, 3, 0);
  CowError error = { 0 };
  /* A non-contiguous host source arrives in logical order. */
  CowTensor *host = test_tensor_arange_f32 (2, (int64_t[]) { 3, 4 }, 0);
  CowTensor *t = cow_tensor_transpose (host, 0, 1, &error);
  CowTensor *dt = to_device (t);
  test_assert_tensor_values (dt, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11);
  double x;
  g_assert_cmpint (cow_tensor_get_f64 (dt, (int64_t[]) { 2, 1 }, &x, &error), ==, COW_OK);
  g_assert_cmpfloat (x, ==, 6);
  if (cow_cuda_device_count () > 1)
    {
      CowTensor *other = cow_tensor_to (dev, cow_device_cuda (1), &error);
      test_assert_cow_ok (&error);
      assert_device_pattern (other, N, 3, 0);
      cow_tensor_unref (other);
    }
  cow_tensor_unref (dt);
  cow_tensor_unref (t);
  cow_tensor_unref (host);
  cow_tensor_unref (dev);
}

static void
test_gpu_lazy_clone_copy_and_steal (void)
{
  if (!require_device (TRUE))
    return;
  enum { N = 1 << 20 };
  TestRecorder *rec = test_recorder_new ();
  test_recorder_start (rec);
  CowError error = { 0 };
  CowTensor *src = device_pattern (N, 5);
  CowTensor *ones = device_pattern (N, 5);
  g_assert_cmpint (cow_tensor_fill_ (ones, 1, &error), ==, COW_OK);

  /* Copy: the source still shares, so the write copies on the device. */
  CowTensor *clone = cow_tensor_lazy_clone (src, &error);
  test_assert_cow_ok (&error);
  g_assert_true (cow_tensor_is_cow (clone));
  g_assert_cmpuint (cow_tensor_data_address (clone), ==, cow_tensor_data_address (src));
  g_assert_cmpint (cow_tensor_add_ (clone, ones, 1, &error), ==, COW_OK);
  g_assert_false (cow_tensor_is_cow (clone));
  g_assert_cmpuint (cow_tensor_data_address (clone), !=, cow_tensor_data_address (src));
  assert_device_pattern (clone, N, 5, 1);
  assert_device_pattern (src, N, 5, 0);
  g_assert_cmpuint (test_recorder_count_materialize (rec, COW_MATERIALIZE_COPY), ==, 1);

  /* Steal: the last sharer takes the bytes without copying. */
  CowTensor *second = cow_tensor_lazy_clone (src, &error);
  test_assert_cow_ok (&error);
  uintptr_t shared = cow_tensor_data_address (src);
  cow_tensor_unref (src);
  g_assert_cmpint (cow_tensor_mul_ (second, ones, &error), ==, COW_OK);
  g_assert_cmpuint (cow_tensor_data_address (second), ==, shared);
  g_assert_false (cow_tensor_is_cow (second));
  assert_device_pattern (second, N, 5, 0);
  g_assert_cmpuint (test_recorder_count_materialize (rec, COW_MATERIALIZE_STEAL), ==, 1);

  /* Both materializations say they were on cuda:0. */
  for (guint i = 0; i < test_recorder_count (rec, COW_EVENT_MATERIALIZE_END); i++)
    g_assert_cmpuint (COW_TRACE_AUX_DEVICE (test_recorder_find (rec, COW_EVENT_MATERIALIZE_END, i)->aux), ==, 1);
  const CowTraceEvent *lc = test_recorder_find (rec, COW_EVENT_LAZY_CLONE, 0);
  g_assert_nonnull (lc);
  g_assert_cmpuint (COW_TRACE_AUX_DEVICE (lc->aux), ==, 1);
  test_recorder_stop (rec);
  cow_tensor_unref (second);
  cow_tensor_unref (clone);
  cow_tensor_unref (ones);
  test_recorder_free (rec);
}

typedef struct {
  CowTensor *clone;
  CowTensor *delta;
  CowCudaStream *stream;
  pthread_barrier_t *barrier;
  CowStatus status;
  char message[COW_ERROR_MESSAGE_MAX];
} Writer;

static void *
write_on_own_stream (void *data)
{
  Writer *w = data;
  CowError error = { 0 };
  cow_cuda_set_current_stream (w->stream);
  pthread_barrier_wait (w->barrier);
  w->status = cow_tensor_add_ (w->clone, w->delta, 1, &error);
  if (w->status == COW_OK)
    w->status = cow_cuda_stream_synchronize (w->stream, &error);
  memcpy (w->message, error.message, sizeof w->message);
  cow_cuda_set_current_stream (NULL);
  return NULL;
}

/* Two sharers, each on its own stream and thread, write at once after
 * the source is gone: exactly one steals, the other copies, and both
 * see their own result over the original bytes. */
static void
test_gpu_concurrent_two_streams (void)
{
  if (!require_device (TRUE))
    return;
  enum { N = 1 << 22, ROUNDS = 20 };
  CowError error = { 0 };
  CowCudaStream *streams[2];
  for (int i = 0; i < 2; i++)
    {
      streams[i] = cow_cuda_stream_new (0, &error);
      test_assert_cow_ok (&error);
    }
  for (guint round = 0; round < ROUNDS; round++)
    {
      TestRecorder *rec = test_recorder_new ();
      CowTensor *src = device_pattern (N, round);
      pthread_barrier_t barrier;
      pthread_barrier_init (&barrier, NULL, 2);
      Writer writers[2];
      for (int i = 0; i < 2; i++)
        {
          /* Made on the writer's stream: the clone and its delta take it. */
          cow_cuda_set_current_stream (streams[i]);
          writers[i] = (Writer) { .stream = streams[i], .barrier = &barrier };
          writers[i].clone = cow_tensor_lazy_clone (src, &error);
          test_assert_cow_ok (&error);
          writers[i].delta = cow_tensor_empty_on (1, (int64_t[]) { N }, COW_DTYPE_F32,
                                                  cow_device_cuda (0), &error);
          test_assert_cow_ok (&error);
          g_assert_cmpint (cow_tensor_fill_ (writers[i].delta, i + 1, &error), ==, COW_OK);
        }
      cow_cuda_set_current_stream (NULL);
      cow_tensor_unref (src);
      test_recorder_start (rec);
      pthread_t threads[2];
      for (int i = 0; i < 2; i++)
        pthread_create (&threads[i], NULL, write_on_own_stream, &writers[i]);
      for (int i = 0; i < 2; i++)
        pthread_join (threads[i], NULL);
      test_recorder_stop (rec);
      pthread_barrier_destroy (&barrier);
      for (int i = 0; i < 2; i++)
        {
          if (writers[i].status != COW_OK)
            g_error ("writer %d: %s", i, writers[i].message);
          assert_device_pattern (writers[i].clone, N, round, (float) (i + 1));
        }
      g_assert_cmpuint (test_recorder_count_materialize (rec, COW_MATERIALIZE_STEAL), ==, 1);
      g_assert_cmpuint (test_recorder_count_materialize (rec, COW_MATERIALIZE_COPY), ==, 1);
      for (int i = 0; i < 2; i++)
        {
          cow_tensor_unref (writers[i].clone);
          cow_tensor_unref (writers[i].delta);
        }
      test_recorder_free (rec);
    }
  for (int i = 0; i < 2; i++)
    cow_cuda_stream_unref (streams[i]);
}

/* A device allocator that delegates to cuda:0's and fails on demand. */
static _Atomic int fail_next;

static CowStatus
failing_allocate (CowAllocator *self, size_t nbytes, CowDataPtr *out, CowError *error)
{
  (void) self;
  if (atomic_fetch_sub (&fail_next, 1) > 0)
    {
      if (error != NULL)
        {
          error->code = COW_ERROR_NO_MEMORY;
          snprintf (error->message, sizeof error->message,
                    "cannot allocate %zu bytes on cuda:0: out of memory (test)", nbytes);
        }
      return COW_ERROR_NO_MEMORY;
    }
  atomic_store (&fail_next, 0);
  CowAllocator *real = cow_cuda_allocator (0, error);
  return real->allocate (real, nbytes, out, error);
}

static CowStatus
failing_copy (CowAllocator *self, void *dst, const void *src, size_t nbytes, CowError *error)
{
  (void) self;
  CowAllocator *real = cow_cuda_allocator (0, error);
  return real->copy_data (real, dst, src, nbytes, error);
}

static bool
failing_is_simple (CowAllocator *self, const CowDataPtr *ptr)
{
  (void) self;
  CowAllocator *real = cow_cuda_allocator (0, NULL);
  return real->is_simple_data_ptr (real, ptr);
}

static CowAllocator failing_cuda0 = {
  .name = "failing-cuda:0",
  .device_type = COW_DEVICE_CUDA,
  .device_index = 0,
  .allocate = failing_allocate,
  .copy_data = failing_copy,
  .is_simple_data_ptr = failing_is_simple,
};

static void
test_gpu_out_of_memory_keeps_lazy_copy (void)
{
  if (!require_device (TRUE))
    return;
  enum { N = 1 << 16 };
  CowError error = { 0 };
  /* A real allocation the device cannot hold. */
  g_assert_null (cow_tensor_empty_on (SIZES ((int64_t) 1 << 50), COW_DTYPE_U8,
                                      cow_device_cuda (0), &error));
  g_assert_cmpint (error.code, ==, COW_ERROR_NO_MEMORY);
  g_assert_nonnull (strstr (error.message, "cuda:0"));

  /* Out of memory while materializing: still a valid lazy copy. */
  CowTensor *pattern = device_pattern (N, 9);
  CowTensor *src = cow_tensor_empty_with_allocator (SIZES (N), COW_DTYPE_F32, &failing_cuda0, &error);
  test_assert_cow_ok (&error);
  g_assert_cmpint (cow_tensor_copy_ (src, pattern, &error), ==, COW_OK);
  CowTensor *clone = cow_tensor_lazy_clone (src, &error);
  test_assert_cow_ok (&error);
  atomic_store (&fail_next, 1);
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_fill_ (clone, 2, &error), ==, COW_ERROR_NO_MEMORY);
  g_assert_true (cow_tensor_is_cow (clone));
  g_assert_cmpint (cow_storage_context_refcount (cow_tensor_storage (clone)), ==, 2);
  assert_device_pattern (clone, N, 9, 0);
  assert_device_pattern (src, N, 9, 0);
  /* The memory is back: the same write now copies. */
  cow_error_clear (&error);
  g_assert_cmpint (cow_tensor_fill_ (clone, 2, &error), ==, COW_OK);
  test_assert_tensor_filled (clone, 2);
  assert_device_pattern (src, N, 9, 0);
  cow_tensor_unref (clone);
  cow_tensor_unref (src);
  cow_tensor_unref (pattern);
}

/* Runs @op on host and device copies of the same operands and compares
 * the results exactly. */
static void
check_ops_for_dtype (CowDType dtype)
{
  CowError error = { 0 };
  double av[12], bv[4];
  for (int i = 0; i < 12; i++)
    av[i] = dtype == COW_DTYPE_BOOL ? i % 3 == 0 : (dtype == COW_DTYPE_U8 ? 240 + i : i * 1.5 - 7);
  for (int i = 0; i < 4; i++)
    bv[i] = dtype == COW_DTYPE_BOOL ? i % 2 : (dtype == COW_DTYPE_U8 ? 3 + i : 0.25 * i - 1);
  if (!cow_dtype_is_floating (dtype) && dtype != COW_DTYPE_BOOL && dtype != COW_DTYPE_U8)
    for (int i = 0; i < 12; i++)
      av[i] = i * 3 - 7;
  CowTensor *ha = test_tensor_from_doubles (dtype, 2, (int64_t[]) { 3, 4 }, av);
  CowTensor *hb = test_tensor_from_doubles (dtype, 1, (int64_t[]) { 4 }, bv);
  CowTensor *da = to_device (ha), *db = to_device (hb);
  double alpha = cow_dtype_is_floating (dtype) ? 0.5 : 3;

  /* Out of place, with broadcasting. */
  CowTensor *h1 = cow_tensor_add (ha, hb, alpha, &error), *d1 = cow_tensor_add (da, db, alpha, &error);
  test_assert_cow_ok (&error);
  g_autofree double *e1 = test_tensor_values (h1, NULL);
  test_assert_tensor_equals (d1, e1, 12);
  CowTensor *h2 = cow_tensor_mul (ha, hb, &error), *d2 = cow_tensor_mul (da, db, &error);
  test_assert_cow_ok (&error);
  g_autofree double *e2 = test_tensor_values (h2, NULL);
  test_assert_tensor_equals (d2, e2, 12);

  /* In place through a transposed view of a lazy clone. */
  CowTensor *hc = cow_tensor_lazy_clone (ha, &error), *dc = cow_tensor_lazy_clone (da, &error);
  test_assert_cow_ok (&error);
  CowTensor *ht = cow_tensor_transpose (hc, 0, 1, &error), *dt = cow_tensor_transpose (dc, 0, 1, &error);
  CowTensor *hcol = cow_tensor_view (hb, 2, (int64_t[]) { 4, 1 }, &error);
  CowTensor *dcol = cow_tensor_view (db, 2, (int64_t[]) { 4, 1 }, &error);
  test_assert_cow_ok (&error);
  g_assert_cmpint (cow_tensor_add_ (ht, hcol, alpha, &error), ==, COW_OK);
  g_assert_cmpint (cow_tensor_add_ (dt, dcol, alpha, &error), ==, COW_OK);
  g_assert_cmpint (cow_tensor_mul_ (ht, ht, &error), ==, COW_OK);
  g_assert_cmpint (cow_tensor_mul_ (dt, dt, &error), ==, COW_OK);
  g_autofree double *e3 = test_tensor_values (hc, NULL);
  test_assert_tensor_equals (dc, e3, 12);
  /* The sources are untouched. */
  g_autofree double *e4 = test_tensor_values (ha, NULL);
  test_assert_tensor_equals (da, e4, 12);

  /* Fill through a strided slice. */
  CowTensor *hs = cow_tensor_slice (ha, 1, 0, 4, 2, &error), *ds = cow_tensor_slice (da, 1, 0, 4, 2, &error);
  test_assert_cow_ok (&error);
  g_assert_cmpint (cow_tensor_fill_ (hs, 1, &error), ==, COW_OK);
  g_assert_cmpint (cow_tensor_fill_ (ds, 1, &error), ==, COW_OK);
  g_autofree double *e5 = test_tensor_values (ha, NULL);
  test_assert_tensor_equals (da, e5, 12);

  CowTensor *all[] = { ha, hb, da, db, h1, d1, h2, d2, hc, dc, ht, dt, hcol, dcol, hs, ds };
  for (gsize i = 0; i < G_N_ELEMENTS (all); i++)
    cow_tensor_unref (all[i]);
}

static void
test_gpu_ops_match_host (void)
{
  if (!require_device (TRUE))
    return;
  for (int dtype = 0; dtype < COW_N_DTYPES; dtype++)
    {
      g_test_message ("%s", cow_dtype_name ((CowDType) dtype));
      check_ops_for_dtype ((CowDType) dtype);
    }
  /* A large contiguous op, on the flattened fast path. */
  enum { N = 3 << 20 };
  CowError error = { 0 };
  CowTensor *a = device_pattern (N, 11), *b = device_pattern (N, 11);
  CowTensor *sum = cow_tensor_add (a, b, -1, &error);
  test_assert_cow_ok (&error);
  test_assert_tensor_filled (sum, 0);
  cow_tensor_unref (sum);
  cow_tensor_unref (a);
  cow_tensor_unref (b);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cuda/no-device/runtime", test_no_device_runtime);
  g_test_add_func ("/cuda/no-device/allocation-and-to", test_no_device_allocation_and_to);
  g_test_add_func ("/cuda/no-device/ops", test_no_device_ops);
  g_test_add_func ("/cuda/no-device/cpu-still-works", test_no_device_cpu_still_works);
  g_test_add_func ("/cuda/no-device/foreign-device-ops", test_no_device_foreign_device_ops);
  g_test_add_func ("/cuda/any/bad-input", test_any_bad_input);
  g_test_add_func ("/cuda/any/trace-device", test_any_trace_device);
  g_test_add_func ("/cuda/any/foreign-device-storage", test_any_foreign_device_storage);
  g_test_add_func ("/cuda/gpu/to-round-trip", test_gpu_to_round_trip);
  g_test_add_func ("/cuda/gpu/lazy-clone-copy-and-steal", test_gpu_lazy_clone_copy_and_steal);
  g_test_add_func ("/cuda/gpu/concurrent-two-streams", test_gpu_concurrent_two_streams);
  g_test_add_func ("/cuda/gpu/out-of-memory-keeps-lazy-copy", test_gpu_out_of_memory_keeps_lazy_copy);
  g_test_add_func ("/cuda/gpu/ops-match-host", test_gpu_ops_match_host);
  g_test_add_func ("/cuda/gpu/ipc-send-needs-shareable-memory",
                   test_gpu_ipc_send_needs_shareable_memory);
  return g_test_run ();
}
