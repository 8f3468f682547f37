/* test-support.c — shared helpers for the engine's unit tests
 * (see test-support.h). */
#include "test-support.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Errors                                                              */
/* ------------------------------------------------------------------ */

void
test_assert_cow_status_impl (const char *file, int line, const char *func,
                             const char *expr, const CowError *error,
                             CowStatus expected)
{
  g_autofree char *message = NULL;

  if (error == NULL)
    message = g_strdup_printf ("%s is NULL", expr);
  else if (expected == COW_OK && error->code != COW_OK)
    message = g_strdup_printf ("%s: expected no error, got %s (%d): %s", expr,
                               cow_status_to_string (error->code),
                               (int) error->code, error->message);
  else if (expected != COW_OK && error->code != expected)
    message = g_strdup_printf ("%s: expected %s (%d), got %s (%d): %s", expr,
                               cow_status_to_string (expected), (int) expected,
                               cow_status_to_string (error->code),
                               (int) error->code, error->message);
  else if (expected != COW_OK && error->message[0] == '\0')
    message = g_strdup_printf ("%s: %s without a message", expr,
                               cow_status_to_string (expected));
  if (message != NULL)
    g_assertion_message (G_LOG_DOMAIN, file, line, func, message);
}

/* ------------------------------------------------------------------ */
/* Recording trace sink                                                */
/* ------------------------------------------------------------------ */

typedef struct {
  char *text;
  guint count;
  gint position; /* events recorded at the first announcement */
} RecordedString;

struct _TestRecorder {
  /* Protects every field below: the sink is called from any thread.  A
   * pthread mutex, not a GMutex: ThreadSanitizer understands it (GLib's
   * futex-based GMutex is invisible to it). */
  pthread_mutex_t lock;
  GArray *events;      /* CowTraceEvent */
  GHashTable *strings; /* guint64 id (boxed) → RecordedString */
  guint n_strings;
  CowTraceSink sink;
};

static void
recorded_string_free (gpointer data)
{
  RecordedString *s = data;
  g_free (s->text);
  g_free (s);
}

static void
recorder_event (const CowTraceEvent *event, void *user_data)
{
  TestRecorder *rec = user_data;
  pthread_mutex_lock (&rec->lock);
  g_array_append_vals (rec->events, event, 1);
  pthread_mutex_unlock (&rec->lock);
}

static void
recorder_string (uint64_t string_id, const char *text, size_t length,
                 void *user_data)
{
  TestRecorder *rec = user_data;
  pthread_mutex_lock (&rec->lock);
  RecordedString *s = g_hash_table_lookup (rec->strings, &string_id);
  if (s == NULL)
    {
      s = g_new0 (RecordedString, 1);
      s->text = g_strndup (text, length);
      s->position = (gint) rec->events->len;
      g_hash_table_insert (rec->strings, g_memdup2 (&string_id, sizeof string_id), s);
    }
  s->count++;
  rec->n_strings++;
  pthread_mutex_unlock (&rec->lock);
}

TestRecorder *
test_recorder_new (void)
{
  TestRecorder *rec = g_new0 (TestRecorder, 1);
  pthread_mutex_init (&rec->lock, NULL);
  rec->events = g_array_new (FALSE, TRUE, sizeof (CowTraceEvent));
  rec->strings = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free,
                                        recorded_string_free);
  rec->sink.event = recorder_event;
  rec->sink.string = recorder_string;
  rec->sink.user_data = rec;
  return rec;
}

void
test_recorder_start (TestRecorder *rec)
{
  cow_trace_set_sink (&rec->sink);
  g_assert_true (cow_trace_get_sink () == &rec->sink);
}

void
test_recorder_stop (TestRecorder *rec)
{
  if (cow_trace_get_sink () == &rec->sink)
    cow_trace_set_sink (NULL);
}

void
test_recorder_clear (TestRecorder *rec)
{
  pthread_mutex_lock (&rec->lock);
  g_array_set_size (rec->events, 0);
  g_hash_table_remove_all (rec->strings);
  rec->n_strings = 0;
  pthread_mutex_unlock (&rec->lock);
}

void
test_recorder_free (TestRecorder *rec)
{
  if (rec == NULL)
    return;
  test_recorder_stop (rec);
  g_array_unref (rec->events);
  g_hash_table_unref (rec->strings);
  pthread_mutex_destroy (&rec->lock);
  g_free (rec);
}

guint
test_recorder_n_events (TestRecorder *rec)
{
  pthread_mutex_lock (&rec->lock);
  guint n = rec->events->len;
  pthread_mutex_unlock (&rec->lock);
  return n;
}

const CowTraceEvent *
test_recorder_event (TestRecorder *rec, guint position)
{
  const CowTraceEvent *event = NULL;
  pthread_mutex_lock (&rec->lock);
  if (position < rec->events->len)
    event = &g_array_index (rec->events, CowTraceEvent, position);
  pthread_mutex_unlock (&rec->lock);
  return event;
}

/* Counts or finds events matching a filter; -1 fields match anything. */
typedef struct {
  gint type;
  gint op;
  gboolean match_id;
  guint64 id;
  gint kind; /* MATERIALIZE_END kind */
  gboolean match_context;
  guint64 context_id;
} Filter;

static gboolean
filter_matches (const Filter *f, const CowTraceEvent *e)
{
  if (f->type >= 0 && e->type != (guint) f->type)
    return FALSE;
  if (f->op >= 0 && e->op != (guint) f->op)
    return FALSE;
  if (f->match_id && e->v[0] != f->id)
    return FALSE;
  if (f->kind >= 0 && (e->aux & COW_MATERIALIZE_KIND_MASK) != (guint) f->kind)
    return FALSE;
  if (f->match_context && e->materialize_end.context_id != f->context_id)
    return FALSE;
  return TRUE;
}

/* With @nth < 0 counts the matches; else returns the position of the
 * @nth match (or -1) through the same integer. */
static gint
scan (TestRecorder *rec, const Filter *f, gint nth)
{
  gint count = 0;
  gint found = -1;
  pthread_mutex_lock (&rec->lock);
  for (guint i = 0; i < rec->events->len; i++)
    {
      const CowTraceEvent *e = &g_array_index (rec->events, CowTraceEvent, i);
      if (!filter_matches (f, e))
        continue;
      if (nth >= 0 && count == nth)
        {
          found = (gint) i;
          break;
        }
      count++;
    }
  pthread_mutex_unlock (&rec->lock);
  return nth >= 0 ? found : count;
}

#define FILTER_ANY { .type = -1, .op = -1, .kind = -1 }

guint
test_recorder_count (TestRecorder *rec, CowEventType type)
{
  Filter f = FILTER_ANY;
  f.type = (gint) type;
  return (guint) scan (rec, &f, -1);
}

guint
test_recorder_count_op (TestRecorder *rec, CowEventType type, CowOp op)
{
  Filter f = FILTER_ANY;
  f.type = (gint) type;
  f.op = (gint) op;
  return (guint) scan (rec, &f, -1);
}

guint
test_recorder_count_id (TestRecorder *rec, CowEventType type, guint64 id)
{
  Filter f = FILTER_ANY;
  f.type = (gint) type;
  f.match_id = TRUE;
  f.id = id;
  return (guint) scan (rec, &f, -1);
}

gint
test_recorder_position (TestRecorder *rec, CowEventType type, guint index)
{
  Filter f = FILTER_ANY;
  f.type = (gint) type;
  return scan (rec, &f, (gint) index);
}

const CowTraceEvent *
test_recorder_find (TestRecorder *rec, CowEventType type, guint index)
{
  gint position = test_recorder_position (rec, type, index);
  return position < 0 ? NULL : test_recorder_event (rec, (guint) position);
}

const CowTraceEvent *
test_recorder_find_id (TestRecorder *rec, CowEventType type, guint64 id)
{
  Filter f = FILTER_ANY;
  f.type = (gint) type;
  f.match_id = TRUE;
  f.id = id;
  gint position = scan (rec, &f, 0);
  return position < 0 ? NULL : test_recorder_event (rec, (guint) position);
}

guint
test_recorder_count_materialize (TestRecorder *rec, guint kind)
{
  Filter f = FILTER_ANY;
  f.type = COW_EVENT_MATERIALIZE_END;
  f.kind = (gint) kind;
  return (guint) scan (rec, &f, -1);
}

guint
test_recorder_count_materialize_in (TestRecorder *rec, guint kind,
                                    guint64 context_id)
{
  Filter f = FILTER_ANY;
  f.type = COW_EVENT_MATERIALIZE_END;
  f.kind = (gint) kind;
  f.match_context = TRUE;
  f.context_id = context_id;
  return (guint) scan (rec, &f, -1);
}

const char *
test_recorder_string (TestRecorder *rec, guint64 string_id)
{
  pthread_mutex_lock (&rec->lock);
  RecordedString *s = g_hash_table_lookup (rec->strings, &string_id);
  pthread_mutex_unlock (&rec->lock);
  return s ? s->text : NULL;
}

guint
test_recorder_string_count (TestRecorder *rec, guint64 string_id)
{
  pthread_mutex_lock (&rec->lock);
  RecordedString *s = g_hash_table_lookup (rec->strings, &string_id);
  guint count = s ? s->count : 0;
  pthread_mutex_unlock (&rec->lock);
  return count;
}

gint
test_recorder_string_position (TestRecorder *rec, guint64 string_id)
{
  pthread_mutex_lock (&rec->lock);
  RecordedString *s = g_hash_table_lookup (rec->strings, &string_id);
  gint position = s ? s->position : -1;
  pthread_mutex_unlock (&rec->lock);
  return position;
}

guint
test_recorder_n_strings (TestRecorder *rec)
{
  pthread_mutex_lock (&rec->lock);
  guint n = rec->n_strings;
  pthread_mutex_unlock (&rec->lock);
  return n;
}

/* ------------------------------------------------------------------ */
/* Counting allocator and foreign memory                               */
/* ------------------------------------------------------------------ */

/* Each block starts with a header that names its allocator; the data
 * follows it, and is the deleter's context (a simple data pointer). */
#define BLOCK_HEADER 64

struct _TestAllocator {
  CowAllocator parent; /* first: the engine hands us &parent */
  gint n_allocs;       /* atomic */
  gint n_frees;        /* atomic */
  gint fail_next;      /* atomic */
};

typedef struct {
  TestAllocator *owner;
} BlockHeader;

static void
test_allocator_deleter (void *context)
{
  BlockHeader *header = (BlockHeader *) ((char *) context - BLOCK_HEADER);
  g_atomic_int_inc (&header->owner->n_frees);
  free (header);
}

static CowStatus
test_allocator_allocate (CowAllocator *self, size_t nbytes, CowDataPtr *out,
                         CowError *error)
{
  TestAllocator *alloc = (TestAllocator *) self;
  gint fail = g_atomic_int_get (&alloc->fail_next);
  while (fail > 0)
    {
      if (g_atomic_int_compare_and_exchange (&alloc->fail_next, fail, fail - 1))
        {
          if (error != NULL)
            {
              error->code = COW_ERROR_NO_MEMORY;
              g_snprintf (error->message, sizeof error->message,
                          "test allocator: refusing %zu bytes as told", nbytes);
            }
          return COW_ERROR_NO_MEMORY;
        }
      fail = g_atomic_int_get (&alloc->fail_next);
    }
  size_t rounded = (nbytes + BLOCK_HEADER + 63) & ~(size_t) 63;
  BlockHeader *header = aligned_alloc (64, rounded);
  g_assert_nonnull (header);
  header->owner = alloc;
  void *data = (char *) header + BLOCK_HEADER;
  *out = (CowDataPtr) { .data = data, .context = data, .deleter = test_allocator_deleter };
  g_atomic_int_inc (&alloc->n_allocs);
  return COW_OK;
}

static CowStatus
test_allocator_copy_data (CowAllocator *self, void *dst, const void *src,
                          size_t nbytes, CowError *error)
{
  (void) self;
  (void) error;
  if (nbytes > 0)
    memcpy (dst, src, nbytes);
  return COW_OK;
}

static bool
test_allocator_is_simple (CowAllocator *self, const CowDataPtr *ptr)
{
  (void) self;
  return ptr->context == ptr->data && ptr->deleter == test_allocator_deleter;
}

TestAllocator *
test_allocator_new (void)
{
  TestAllocator *alloc = g_new0 (TestAllocator, 1);
  alloc->parent.name = "test";
  alloc->parent.device_type = COW_DEVICE_CPU;
  alloc->parent.device_index = 0;
  alloc->parent.allocate = test_allocator_allocate;
  alloc->parent.copy_data = test_allocator_copy_data;
  alloc->parent.is_simple_data_ptr = test_allocator_is_simple;
  return alloc;
}

void
test_allocator_free (TestAllocator *alloc)
{
  if (alloc == NULL)
    return;
  g_assert_cmpint (test_allocator_n_live (alloc), ==, 0);
  g_free (alloc);
}

CowAllocator *
test_allocator_get (TestAllocator *alloc)
{
  return &alloc->parent;
}

gint
test_allocator_n_allocs (TestAllocator *alloc)
{
  return g_atomic_int_get (&alloc->n_allocs);
}

gint
test_allocator_n_frees (TestAllocator *alloc)
{
  return g_atomic_int_get (&alloc->n_frees);
}

gint
test_allocator_n_live (TestAllocator *alloc)
{
  return test_allocator_n_allocs (alloc) - test_allocator_n_frees (alloc);
}

void
test_allocator_fail_next (TestAllocator *alloc, gint n)
{
  g_atomic_int_set (&alloc->fail_next, n);
}

TestForeign *
test_foreign_new (gsize nbytes)
{
  TestForeign *foreign = g_new0 (TestForeign, 1);
  foreign->nbytes = nbytes;
  foreign->data = g_malloc0 (nbytes > 0 ? nbytes : 1);
  return foreign;
}

void
test_foreign_deleter (void *context)
{
  TestForeign *foreign = context;
  if (g_atomic_int_add (&foreign->n_deleted, 1) == 0)
    g_free (foreign->data);
}

void
test_foreign_free (TestForeign *foreign)
{
  if (foreign == NULL)
    return;
  if (g_atomic_int_get (&foreign->n_deleted) == 0)
    g_free (foreign->data);
  g_free (foreign);
}

/* ------------------------------------------------------------------ */
/* Tensors                                                             */
/* ------------------------------------------------------------------ */

static gsize
numel_of (int ndim, const int64_t *sizes)
{
  gsize n = 1;
  for (int d = 0; d < ndim; d++)
    n *= (gsize) sizes[d];
  return n;
}

CowTensor *
test_tensor_f32 (int ndim, const int64_t *sizes, const float *values)
{
  CowError error = { 0 };
  gsize n = numel_of (ndim, sizes);
  CowTensor *t = cow_tensor_from_data (ndim, sizes, COW_DTYPE_F32, values,
                                       n * sizeof (float), &error);
  test_assert_cow_ok (&error);
  g_assert_nonnull (t);
  return t;
}

static void
store_double (CowDType dtype, void *out, gsize i, double v)
{
  switch (dtype)
    {
    case COW_DTYPE_F32: ((float *) out)[i] = (float) v; break;
    case COW_DTYPE_F64: ((double *) out)[i] = v; break;
    case COW_DTYPE_I32: ((int32_t *) out)[i] = (int32_t) v; break;
    case COW_DTYPE_I64: ((int64_t *) out)[i] = (int64_t) v; break;
    case COW_DTYPE_U8: ((uint8_t *) out)[i] = (uint8_t) v; break;
    case COW_DTYPE_BOOL: ((bool *) out)[i] = v != 0.0; break;
    default: g_assert_not_reached ();
    }
}

static double
load_double (CowDType dtype, const void *in, gsize i)
{
  switch (dtype)
    {
    case COW_DTYPE_F32: return ((const float *) in)[i];
    case COW_DTYPE_F64: return ((const double *) in)[i];
    case COW_DTYPE_I32: return ((const int32_t *) in)[i];
    case COW_DTYPE_I64: return (double) ((const int64_t *) in)[i];
    case COW_DTYPE_U8: return ((const uint8_t *) in)[i];
    case COW_DTYPE_BOOL: return ((const bool *) in)[i] ? 1.0 : 0.0;
    default: g_assert_not_reached ();
    }
  return 0.0;
}

CowTensor *
test_tensor_from_doubles (CowDType dtype, int ndim, const int64_t *sizes,
                          const double *values)
{
  CowError error = { 0 };
  gsize n = numel_of (ndim, sizes);
  gsize itemsize = cow_dtype_size (dtype);
  g_assert_cmpuint (itemsize, >, 0);
  g_autofree void *buffer = g_malloc0 (n * itemsize + 1);
  for (gsize i = 0; i < n; i++)
    store_double (dtype, buffer, i, values[i]);
  CowTensor *t = cow_tensor_from_data (ndim, sizes, dtype, buffer, n * itemsize,
                                       &error);
  test_assert_cow_ok (&error);
  g_assert_nonnull (t);
  return t;
}

CowTensor *
test_tensor_arange_f32 (int ndim, const int64_t *sizes, double start)
{
  gsize n = numel_of (ndim, sizes);
  g_autofree float *values = g_new (float, n + 1);
  for (gsize i = 0; i < n; i++)
    values[i] = (float) (start + (double) i);
  return test_tensor_f32 (ndim, sizes, values);
}

double *
test_tensor_values (const CowTensor *tensor, gsize *n_out)
{
  CowError error = { 0 };
  CowDType dtype = cow_tensor_dtype (tensor);
  gsize n = (gsize) cow_tensor_numel (tensor);
  gsize nbytes = n * cow_dtype_size (dtype);
  g_autofree void *buffer = g_malloc0 (nbytes + 1);
  CowStatus status = cow_tensor_read_elements (tensor, buffer, nbytes, &error);
  test_assert_cow_ok (&error);
  g_assert_cmpint (status, ==, COW_OK);
  double *values = g_new (double, n + 1);
  for (gsize i = 0; i < n; i++)
    values[i] = load_double (dtype, buffer, i);
  if (n_out != NULL)
    *n_out = n;
  return values;
}

double
test_tensor_get (const CowTensor *tensor, const int64_t *index)
{
  CowError error = { 0 };
  double value = NAN;
  CowStatus status = cow_tensor_get_f64 (tensor, index, &value, &error);
  test_assert_cow_ok (&error);
  g_assert_cmpint (status, ==, COW_OK);
  return value;
}

void
test_assert_tensor_impl (const char *file, int line, const char *func,
                         const char *expr, const CowTensor *tensor,
                         const double *expected, gsize n, double eps)
{
  if (tensor == NULL)
    {
      g_autofree char *m = g_strdup_printf ("%s is NULL", expr);
      g_assertion_message (G_LOG_DOMAIN, file, line, func, m);
      return;
    }
  gsize numel;
  g_autofree double *values = test_tensor_values (tensor, &numel);
  if (numel != n)
    {
      g_autofree char *m = g_strdup_printf ("%s has %" G_GSIZE_FORMAT
                                            " elements, expected %" G_GSIZE_FORMAT,
                                            expr, numel, n);
      g_assertion_message (G_LOG_DOMAIN, file, line, func, m);
      return;
    }
  for (gsize i = 0; i < n; i++)
    {
      double diff = fabs (values[i] - expected[i]);
      if (!(diff <= eps) && !(isnan (values[i]) && isnan (expected[i])))
        {
          g_autofree char *m = g_strdup_printf ("%s: element %" G_GSIZE_FORMAT
                                                " is %.9g, expected %.9g",
                                                expr, i, values[i], expected[i]);
          g_assertion_message (G_LOG_DOMAIN, file, line, func, m);
          return;
        }
    }
}

void
test_assert_tensor_filled_impl (const char *file, int line, const char *func,
                                const char *expr, const CowTensor *tensor,
                                double value)
{
  gsize n;
  g_autofree double *values = test_tensor_values (tensor, &n);
  for (gsize i = 0; i < n; i++)
    if (values[i] != value)
      {
        g_autofree char *m = g_strdup_printf ("%s: element %" G_GSIZE_FORMAT
                                              " is %.9g, expected %.9g",
                                              expr, i, values[i], value);
        g_assertion_message (G_LOG_DOMAIN, file, line, func, m);
        return;
      }
}

void
test_assert_tensor_sizes_impl (const char *file, int line, const char *func,
                               const char *expr, const CowTensor *tensor,
                               int ndim, const int64_t *sizes)
{
  g_autofree char *m = NULL;
  if (cow_tensor_ndim (tensor) != ndim)
    m = g_strdup_printf ("%s has %d dimensions, expected %d", expr,
                         cow_tensor_ndim (tensor), ndim);
  else
    for (int d = 0; d < ndim && m == NULL; d++)
      if (cow_tensor_sizes (tensor)[d] != sizes[d])
        m = g_strdup_printf ("%s: size %" G_GINT64_FORMAT " of dimension %d, expected %"
                             G_GINT64_FORMAT, expr,
                             (gint64) cow_tensor_sizes (tensor)[d], d,
                             (gint64) sizes[d]);
  if (m != NULL)
    g_assertion_message (G_LOG_DOMAIN, file, line, func, m);
}
