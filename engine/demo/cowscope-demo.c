/* cowscope-demo.c — a target program for cowscope.
 *
 * Runs small workloads over libcowtensor's public API that make every
 * kind of copy-on-write event happen (lazy clones, materialization by
 * copy and by steal, eager fallbacks, simulate-mode warnings, concurrent
 * materialization), checks its own results, and ends with a summary of
 * what the engine did in each scenario.
 *
 * The summary comes from a counting trace sink that the demo installs
 * only when no other sink is present: under the profiler its probes own
 * the sink and record the same events.  Everything a scenario checks is
 * checked without the sink too.
 *
 * Exit status: 0 when every scenario passed its checks, 1 when a check
 * failed or the engine reported an error, 2 for bad arguments.
 */
#include "cowtensor.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define PROGRAM "cowscope-demo"

#define DEMO_PRINTF(f, a) __attribute__ ((format (printf, f, a)))

/* ------------------------------------------------------------------ */
/* Options                                                              */

#define DEFAULT_TRAINING_STEPS 8
#define DEFAULT_CONCURRENT_ROUNDS 4
#define DEFAULT_THREADS 4
#define MAX_STEPS 100000
#define MAX_THREADS 64

typedef struct {
  int steps;      /* 0: each scenario's default */
  int threads;
  bool quiet;
} Options;

/* ------------------------------------------------------------------ */
/* The counting trace sink                                              */

enum {
  K_EVENTS,
  K_TENSOR_NEW,
  K_TENSOR_FREE,
  K_STORAGE_NEW,
  K_STORAGE_FREE,
  K_ALLOCATION_NEW,
  K_ALLOCATION_BYTES,
  K_ALLOCATION_FREE,
  K_CONTEXT_NEW,
  K_CONTEXT_FREE,
  K_LAZY_CLONE,          /* LAZY_CLONE events */
  K_SHARED_STORAGES,     /* storages made sharing another's bytes */
  K_SHARED_BYTES,        /* their bytes: what eager copies would have copied */
  K_EAGER,
  K_EAGER_BYTES,
  K_EAGER_FOREIGN,
  K_EAGER_NOT_SIMPLE,
  K_EAGER_OTHER,
  K_COPY,
  K_COPY_BYTES,
  K_STEAL,
  K_STEAL_BYTES,
  K_DISCARDED,           /* steals whose copy was made and thrown away */
  K_DISCARDED_BYTES,
  K_FAILED,
  K_LOCK_WAIT_NS,
  K_VIOLATION,
  K_VIOLATION_READ,
  K_VIOLATION_WRITE,
  K_RANGE,
  K_MARK,
  K_NAME,
  K_STRING,
  N_COUNTERS
};

typedef struct {
  uint64_t k[N_COUNTERS];
  uint64_t lazy_by_op[COW_N_OPS];
  uint64_t copy_by_op[COW_N_OPS];
  uint64_t steal_by_op[COW_N_OPS];
} Stats;

/* Bumped from whichever thread the engine reports on; relaxed, since
 * they are only read after the threads that bump them were joined. */
static struct {
  _Atomic uint64_t k[N_COUNTERS];
  _Atomic uint64_t lazy_by_op[COW_N_OPS];
  _Atomic uint64_t copy_by_op[COW_N_OPS];
  _Atomic uint64_t steal_by_op[COW_N_OPS];
} live;

/* True when the installed sink is count_sink below. */
static bool counting;

static void
bump (_Atomic uint64_t *counter, uint64_t amount)
{
  atomic_fetch_add_explicit (counter, amount, memory_order_relaxed);
}

/* The sink's event callback: counts, never calls into the engine. */
static void
count_event (const CowTraceEvent *event, void *user_data)
{
  (void) user_data;
  unsigned op = event->op < COW_N_OPS ? event->op : COW_OP_NONE;

  bump (&live.k[K_EVENTS], 1);
  switch (event->type)
    {
    case COW_EVENT_TENSOR_NEW:
      bump (&live.k[K_TENSOR_NEW], 1);
      break;
    case COW_EVENT_TENSOR_FREE:
      bump (&live.k[K_TENSOR_FREE], 1);
      break;
    case COW_EVENT_STORAGE_NEW:
      bump (&live.k[K_STORAGE_NEW], 1);
      if (event->storage.source_storage_id != 0)
        {
          bump (&live.k[K_SHARED_STORAGES], 1);
          bump (&live.k[K_SHARED_BYTES], event->storage.nbytes);
        }
      break;
    case COW_EVENT_STORAGE_FREE:
      bump (&live.k[K_STORAGE_FREE], 1);
      break;
    case COW_EVENT_ALLOCATION_NEW:
      bump (&live.k[K_ALLOCATION_NEW], 1);
      bump (&live.k[K_ALLOCATION_BYTES], event->allocation.nbytes);
      break;
    case COW_EVENT_ALLOCATION_FREE:
      bump (&live.k[K_ALLOCATION_FREE], 1);
      break;
    case COW_EVENT_CONTEXT_NEW:
      bump (&live.k[K_CONTEXT_NEW], 1);
      break;
    case COW_EVENT_CONTEXT_FREE:
      bump (&live.k[K_CONTEXT_FREE], 1);
      break;
    case COW_EVENT_LAZY_CLONE:
      bump (&live.k[K_LAZY_CLONE], 1);
      bump (&live.lazy_by_op[op], 1);
      break;
    case COW_EVENT_LAZY_CLONE_EAGER:
      bump (&live.k[K_EAGER], 1);
      bump (&live.k[K_EAGER_BYTES], event->lazy_clone.context_id_or_nbytes);
      if (event->aux == COW_EAGER_FOREIGN_DATA_PTR)
        bump (&live.k[K_EAGER_FOREIGN], 1);
      else if (event->aux == COW_EAGER_NOT_SIMPLE)
        bump (&live.k[K_EAGER_NOT_SIMPLE], 1);
      else
        bump (&live.k[K_EAGER_OTHER], 1);
      break;
    case COW_EVENT_MATERIALIZE_END:
      {
        uint32_t kind = event->aux & COW_MATERIALIZE_KIND_MASK;
        uint64_t nbytes = event->materialize_end.nbytes;
        bump (&live.k[K_LOCK_WAIT_NS], event->materialize_end.lock_wait_ns);
        if (kind == COW_MATERIALIZE_COPY)
          {
            bump (&live.k[K_COPY], 1);
            bump (&live.k[K_COPY_BYTES], nbytes);
            bump (&live.copy_by_op[op], 1);
          }
        else if (kind == COW_MATERIALIZE_STEAL)
          {
            bump (&live.k[K_STEAL], 1);
            bump (&live.k[K_STEAL_BYTES], nbytes);
            bump (&live.steal_by_op[op], 1);
            if (event->aux & COW_MATERIALIZE_FLAG_COPY_DISCARDED)
              {
                bump (&live.k[K_DISCARDED], 1);
                bump (&live.k[K_DISCARDED_BYTES], nbytes);
              }
          }
        else
          bump (&live.k[K_FAILED], 1);
      }
      break;
    case COW_EVENT_SIMULATE_VIOLATION:
      bump (&live.k[K_VIOLATION], 1);
      bump (&live.k[event->aux == COW_ACCESS_WRITE ? K_VIOLATION_WRITE
                                                   : K_VIOLATION_READ], 1);
      break;
    case COW_EVENT_RANGE_BEGIN:
      bump (&live.k[K_RANGE], 1);
      break;
    case COW_EVENT_MARK:
      bump (&live.k[K_MARK], 1);
      break;
    case COW_EVENT_TENSOR_NAME:
      bump (&live.k[K_NAME], 1);
      break;
    default:
      break;
    }
}

static void
count_string (uint64_t string_id, const char *text, size_t length,
              void *user_data)
{
  (void) string_id;
  (void) text;
  (void) length;
  (void) user_data;
  bump (&live.k[K_STRING], 1);
}

static const CowTraceSink count_sink = {
  .event = count_event,
  .string = count_string,
  .user_data = NULL,
};

static void
stats_snapshot (Stats *out)
{
  for (int i = 0; i < N_COUNTERS; i++)
    out->k[i] = atomic_load_explicit (&live.k[i], memory_order_relaxed);
  for (int i = 0; i < COW_N_OPS; i++)
    {
      out->lazy_by_op[i] = atomic_load_explicit (&live.lazy_by_op[i], memory_order_relaxed);
      out->copy_by_op[i] = atomic_load_explicit (&live.copy_by_op[i], memory_order_relaxed);
      out->steal_by_op[i] = atomic_load_explicit (&live.steal_by_op[i], memory_order_relaxed);
    }
}

/* @after − @before into @after. */
static void
stats_subtract (Stats *after, const Stats *before)
{
  for (int i = 0; i < N_COUNTERS; i++)
    after->k[i] -= before->k[i];
  for (int i = 0; i < COW_N_OPS; i++)
    {
      after->lazy_by_op[i] -= before->lazy_by_op[i];
      after->copy_by_op[i] -= before->copy_by_op[i];
      after->steal_by_op[i] -= before->steal_by_op[i];
    }
}

static void
stats_add (Stats *total, const Stats *part)
{
  for (int i = 0; i < N_COUNTERS; i++)
    total->k[i] += part->k[i];
  for (int i = 0; i < COW_N_OPS; i++)
    {
      total->lazy_by_op[i] += part->lazy_by_op[i];
      total->copy_by_op[i] += part->copy_by_op[i];
      total->steal_by_op[i] += part->steal_by_op[i];
    }
}

/* ------------------------------------------------------------------ */
/* Scenario runs, errors and checks                                     */

typedef struct {
  const char *name;
  const Options *options;
  bool engine_error;   /* an engine call failed */
  bool check_failed;   /* the scenario's own data check failed */
  int open_ranges;     /* cow_range_push() without pop, closed on errors */
  char headline[256];  /* one line for the summary */
  Stats stats;         /* what the counting sink saw during the run */
  uint64_t violations; /* cow_simulate_violation_count() delta */
  double seconds;
} Run;

static void
say (const Run *run, const char *format, ...) DEMO_PRINTF (2, 3);

/* Progress output, silenced by --quiet. */
static void
say (const Run *run, const char *format, ...)
{
  if (run->options->quiet)
    return;
  va_list args;
  va_start (args, format);
  vprintf (format, args);
  va_end (args);
}

static void
report_error (Run *run, const char *what, const CowError *error)
{
  run->engine_error = true;
  fflush (stdout);
  if (error->code == COW_OK)
    fprintf (stderr, PROGRAM ": %s: %s failed, but the engine gave no error"
             " (engine bug)\n", run->name, what);
  else
    fprintf (stderr, PROGRAM ": %s: %s failed: %s: %s\n", run->name, what,
             cow_status_to_string (error->code), error->message);
}

static void
check_failed (Run *run, const char *format, ...) DEMO_PRINTF (2, 3);

static void
check_failed (Run *run, const char *format, ...)
{
  run->check_failed = true;
  fflush (stdout);
  fprintf (stderr, PROGRAM ": %s: check failed: ", run->name);
  va_list args;
  va_start (args, format);
  vfprintf (stderr, format, args);
  va_end (args);
  fputc ('\n', stderr);
}

/* Calls an engine function that returns a tensor (or a status) with the
 * local `CowError err`; on failure reports it and jumps to `out`, where
 * the scenario releases what it holds. */
#define TRY_TENSOR(var, call, what)                                            \
  do {                                                                         \
    cow_error_clear (&err);                                                    \
    (var) = (call);                                                            \
    if ((var) == NULL)                                                         \
      {                                                                        \
        report_error (run, (what), &err);                                      \
        goto out;                                                              \
      }                                                                        \
  } while (0)

#define TRY_STATUS(call, what)                                                 \
  do {                                                                         \
    cow_error_clear (&err);                                                    \
    if ((call) != COW_OK)                                                      \
      {                                                                        \
        report_error (run, (what), &err);                                      \
        goto out;                                                              \
      }                                                                        \
  } while (0)

static void
drop (CowTensor **tensor)
{
  cow_tensor_unref (*tensor);
  *tensor = NULL;
}

static void
range_push (Run *run, const char *name)
{
  cow_range_push (name);
  run->open_ranges++;
}

static void
range_pop (Run *run)
{
  cow_range_pop ();
  run->open_ranges--;
}

/* Closes the ranges an error path left open. */
static void
range_close_all (Run *run)
{
  while (run->open_ranges > 0)
    range_pop (run);
}

/* "" for one, "s" otherwise. */
static const char *
plural (uint64_t n)
{
  return n == 1 ? "" : "s";
}

static const char *
format_bytes (uint64_t bytes, char *buffer, size_t size)
{
  static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  double value = (double) bytes;
  unsigned unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof units / sizeof units[0])
    {
      value /= 1024.0;
      unit++;
    }
  if (unit == 0)
    snprintf (buffer, size, "%" PRIu64 " B", bytes);
  else
    snprintf (buffer, size, "%.1f %s", value, units[unit]);
  return buffer;
}

/* A deterministic uniform value in [-1, 1). */
static float
next_uniform (uint64_t *state)
{
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (float) ((double) (*state >> 40) / (double) (1ull << 24) * 2.0 - 1.0);
}

static float *
host_alloc (Run *run, size_t count)
{
  float *data = malloc (count * sizeof *data);
  if (data == NULL)
    check_failed (run, "cannot allocate %zu bytes of host memory",
                  count * sizeof *data);
  return data;
}

/* ------------------------------------------------------------------ */
/* training                                                             */

enum { BATCH = 32, IN = 64, HIDDEN = 128, OUT = 16, GROUPS = 8 };
#define LEARNING_RATE 0.5
#define EMA_DECAY 0.9
#define CHECKPOINT_EVERY 3

static CowTensor *
random_tensor (int64_t rows, int64_t cols, float scale, uint64_t *state,
               CowError *error)
{
  int64_t sizes[2] = { rows, cols };
  size_t count = (size_t) (rows * cols);
  float *data = malloc (count * sizeof *data);
  if (data == NULL)
    {
      error->code = COW_ERROR_NO_MEMORY;
      snprintf (error->message, sizeof error->message,
                "cannot allocate %zu bytes of host memory", count * sizeof *data);
      return NULL;
    }
  for (size_t i = 0; i < count; i++)
    data[i] = next_uniform (state) * scale;
  CowTensor *tensor = cow_tensor_from_data (2, sizes, COW_DTYPE_F32, data,
                                            count * sizeof *data, error);
  free (data);
  return tensor;
}

/* A two-layer linear network learning a random linear teacher with SGD.
 * Along the way it does what real training code does to storages:
 *   - lazy reshapes of activations that are then written (→ copy: the
 *     original activations are still needed by the backward pass);
 *   - lazy reshapes of gradients whose source is dropped first (→ steal);
 *   - lazy reshapes of weights that are only read (→ never copied);
 *   - an EMA of fc1 started as a lazy clone (fc1's first update copies,
 *     the EMA's first write steals);
 *   - a checkpoint of fc2 every few steps, as a lazy clone that keeps the
 *     old weights while SGD updates fc2 (→ copy) and is later dropped. */
static void
scenario_training (Run *run)
{
  const int steps = run->options->steps > 0 ? run->options->steps : DEFAULT_TRAINING_STEPS;
  CowError err;
  uint64_t rng = 0x5eed;
  const CowReshapeMode previous_mode = cow_get_reshape_mode ();
  double first_loss = NAN, last_loss = NAN;
  int checkpoints = 0;

  CowTensor *x = NULL, *teacher = NULL, *y = NULL, *w1 = NULL, *w2 = NULL;
  CowTensor *ema = NULL, *checkpoint = NULL;
  CowTensor *h = NULL, *logits = NULL, *diff = NULL, *sq = NULL, *loss = NULL;
  CowTensor *grouped = NULL, *grouped_sum = NULL, *dflat = NULL, *dout = NULL;
  CowTensor *h_t = NULL, *g2 = NULL, *w2_t = NULL, *dh = NULL, *x_t = NULL, *g1 = NULL;
  CowTensor *w1_flat = NULL, *w1_sq = NULL, *w1_norm = NULL, *ema_sum = NULL;
  float *h_before = host_alloc (run, BATCH * HIDDEN);
  float *h_after = host_alloc (run, BATCH * HIDDEN);
  float *checkpoint_host = host_alloc (run, HIDDEN * OUT);
  float *checkpoint_now = host_alloc (run, HIDDEN * OUT);
  if (h_before == NULL || h_after == NULL || checkpoint_host == NULL
      || checkpoint_now == NULL)
    goto out;

  cow_set_reshape_mode (COW_RESHAPE_LAZY);
  say (run, "training: %d step%s of SGD on a %dx%dx%d linear network, batch %d,"
       " reshape mode \"lazy\"\n", steps, plural ((uint64_t) steps), IN, HIDDEN, OUT, BATCH);

  range_push (run, "setup");
  TRY_TENSOR (x, random_tensor (BATCH, IN, 1.0f, &rng, &err), "creating the input");
  cow_tensor_set_name (x, "input");
  TRY_TENSOR (teacher, random_tensor (IN, OUT, 0.3f, &rng, &err), "creating the teacher");
  TRY_TENSOR (y, cow_tensor_matmul (x, teacher, &err), "matmul target = input·teacher");
  cow_tensor_set_name (y, "target");
  drop (&teacher);
  TRY_TENSOR (w1, random_tensor (IN, HIDDEN, 0.125f, &rng, &err), "creating weights.fc1");
  cow_tensor_set_name (w1, "weights.fc1");
  TRY_TENSOR (w2, random_tensor (HIDDEN, OUT, 0.09f, &rng, &err), "creating weights.fc2");
  cow_tensor_set_name (w2, "weights.fc2");
  /* The EMA starts as a lazy copy of fc1: no bytes move yet. */
  TRY_TENSOR (ema, cow_tensor_lazy_clone (w1, &err), "lazy_clone weights.fc1 → ema.fc1");
  cow_tensor_set_name (ema, "ema.fc1");
  range_pop (run);

  for (int step = 0; step < steps; step++)
    {
      char label[32];
      snprintf (label, sizeof label, "step %d", step);
      range_push (run, label);

      /* ---- forward ---- */
      range_push (run, "forward");
      TRY_TENSOR (h, cow_tensor_matmul (x, w1, &err), "matmul activations = input·weights.fc1");
      cow_tensor_set_name (h, "activations");
      TRY_TENSOR (logits, cow_tensor_matmul (h, w2, &err), "matmul output = activations·weights.fc2");
      cow_tensor_set_name (logits, "output");
      TRY_TENSOR (diff, cow_tensor_add (logits, y, -1.0, &err), "add residual = output − target");
      cow_tensor_set_name (diff, "residual");
      drop (&logits);
      TRY_TENSOR (sq, cow_tensor_mul (diff, diff, &err), "mul residual²");
      TRY_TENSOR (loss, cow_tensor_sum (sq, &err), "sum loss");
      cow_tensor_set_name (loss, "loss");
      drop (&sq);
      double loss_value;
      TRY_STATUS (cow_tensor_item (loss, &loss_value, &err), "item loss");
      drop (&loss);
      loss_value /= (double) (BATCH * OUT);
      if (!isfinite (loss_value))
        {
          check_failed (run, "step %d: the loss is %g, not finite", step, loss_value);
          goto out;
        }
      if (step == 0)
        first_loss = loss_value;
      last_loss = loss_value;

      /* Activation statistics on a grouped lazy reshape, scaled in place:
       * the write copies, since the backward pass still holds the
       * activations, and must leave them untouched. */
      TRY_STATUS (cow_tensor_read_elements (h, h_before, BATCH * HIDDEN * sizeof (float), &err),
                  "read activations");
      TRY_TENSOR (grouped,
                  cow_tensor_reshape (h, 3, (const int64_t[]) { BATCH, GROUPS, HIDDEN / GROUPS }, &err),
                  "reshape activations → activations.grouped");
      cow_tensor_set_name (grouped, "activations.grouped");
      TRY_STATUS (cow_tensor_scale_ (grouped, 1.0 / (HIDDEN / GROUPS), &err),
                  "scale_ activations.grouped");
      TRY_TENSOR (grouped_sum, cow_tensor_sum (grouped, &err), "sum activations.grouped");
      double activation_mean;
      TRY_STATUS (cow_tensor_item (grouped_sum, &activation_mean, &err), "item activation mean");
      activation_mean /= (double) (BATCH * GROUPS);
      drop (&grouped_sum);
      drop (&grouped);
      TRY_STATUS (cow_tensor_read_elements (h, h_after, BATCH * HIDDEN * sizeof (float), &err),
                  "read activations");
      if (memcmp (h_before, h_after, BATCH * HIDDEN * sizeof (float)) != 0)
        {
          check_failed (run, "step %d: writing activations.grouped (a lazy reshape)"
                        " changed the activations it was reshaped from", step);
          goto out;
        }
      range_pop (run);

      /* ---- backward ---- */
      range_push (run, "backward");
      /* d loss / d output = 2·residual / n, computed on a flat lazy
       * reshape after dropping the residual: the write steals. */
      TRY_TENSOR (dflat, cow_tensor_reshape (diff, 1, (const int64_t[]) { -1 }, &err),
                  "reshape residual → grad.output.flat");
      cow_tensor_set_name (dflat, "grad.output.flat");
      drop (&diff);
      TRY_STATUS (cow_tensor_scale_ (dflat, 2.0 / (BATCH * OUT), &err),
                  "scale_ grad.output.flat");
      TRY_TENSOR (dout, cow_tensor_reshape (dflat, 2, (const int64_t[]) { BATCH, OUT }, &err),
                  "reshape grad.output.flat → grad.output");
      cow_tensor_set_name (dout, "grad.output");
      drop (&dflat);
      TRY_TENSOR (h_t, cow_tensor_transpose (h, 0, 1, &err), "transpose activations");
      TRY_TENSOR (g2, cow_tensor_matmul (h_t, dout, &err), "matmul grad.fc2 = activationsᵀ·grad.output");
      cow_tensor_set_name (g2, "grad.fc2");
      drop (&h_t);
      TRY_TENSOR (w2_t, cow_tensor_transpose (w2, 0, 1, &err), "transpose weights.fc2");
      TRY_TENSOR (dh, cow_tensor_matmul (dout, w2_t, &err), "matmul grad.activations = grad.output·weights.fc2ᵀ");
      cow_tensor_set_name (dh, "grad.activations");
      drop (&w2_t);
      drop (&dout);
      drop (&h);
      TRY_TENSOR (x_t, cow_tensor_transpose (x, 0, 1, &err), "transpose input");
      TRY_TENSOR (g1, cow_tensor_matmul (x_t, dh, &err), "matmul grad.fc1 = inputᵀ·grad.activations");
      cow_tensor_set_name (g1, "grad.fc1");
      drop (&x_t);
      drop (&dh);
      range_pop (run);

      /* ---- optimizer ---- */
      range_push (run, "optimizer");
      /* ‖fc1‖² through a flat lazy reshape that is only read, then
       * dropped: fc1's update below steals its bytes back. */
      TRY_TENSOR (w1_flat, cow_tensor_reshape (w1, 1, (const int64_t[]) { -1 }, &err),
                  "reshape weights.fc1 → weights.fc1.flat");
      cow_tensor_set_name (w1_flat, "weights.fc1.flat");
      TRY_TENSOR (w1_sq, cow_tensor_mul (w1_flat, w1_flat, &err), "mul weights.fc1.flat²");
      TRY_TENSOR (w1_norm, cow_tensor_sum (w1_sq, &err), "sum ‖weights.fc1‖²");
      double norm;
      TRY_STATUS (cow_tensor_item (w1_norm, &norm, &err), "item ‖weights.fc1‖²");
      drop (&w1_norm);
      drop (&w1_sq);
      drop (&w1_flat);

      if (step % CHECKPOINT_EVERY == 0)
        {
          /* The previous checkpoint goes without ever being written. */
          drop (&checkpoint);
          TRY_TENSOR (checkpoint, cow_tensor_lazy_clone (w2, &err),
                      "lazy_clone weights.fc2 → checkpoint.fc2");
          cow_tensor_set_name (checkpoint, "checkpoint.fc2");
          cow_mark ("checkpoint weights.fc2");
          TRY_STATUS (cow_tensor_read_elements (checkpoint, checkpoint_host,
                                                HIDDEN * OUT * sizeof (float), &err),
                      "read checkpoint.fc2");
          checkpoints++;
        }

      TRY_STATUS (cow_tensor_add_ (w1, g1, -LEARNING_RATE, &err), "add_ SGD update of weights.fc1");
      TRY_STATUS (cow_tensor_add_ (w2, g2, -LEARNING_RATE, &err), "add_ SGD update of weights.fc2");
      drop (&g1);
      drop (&g2);

      /* ema = decay·ema + (1 − decay)·fc1 */
      TRY_STATUS (cow_tensor_scale_ (ema, EMA_DECAY, &err), "scale_ ema.fc1");
      TRY_STATUS (cow_tensor_add_ (ema, w1, 1.0 - EMA_DECAY, &err), "add_ ema.fc1 += fc1");
      TRY_TENSOR (ema_sum, cow_tensor_sum (ema, &err), "sum ema.fc1");
      double ema_total;
      TRY_STATUS (cow_tensor_item (ema_sum, &ema_total, &err), "item ema.fc1");
      drop (&ema_sum);
      if (!isfinite (ema_total) || !isfinite (norm))
        {
          check_failed (run, "step %d: ‖fc1‖² = %g, Σ ema.fc1 = %g: not finite",
                        step, norm, ema_total);
          goto out;
        }

      /* SGD wrote fc2; the checkpoint must still hold the old weights. */
      TRY_STATUS (cow_tensor_read_elements (checkpoint, checkpoint_now,
                                            HIDDEN * OUT * sizeof (float), &err),
                  "read checkpoint.fc2");
      if (memcmp (checkpoint_host, checkpoint_now, HIDDEN * OUT * sizeof (float)) != 0)
        {
          check_failed (run, "step %d: updating weights.fc2 changed checkpoint.fc2,"
                        " a lazy clone taken before the update", step);
          goto out;
        }
      range_pop (run);
      range_pop (run); /* step */

      say (run, "  step %3d  loss %.6g  ‖fc1‖² %8.4f  activation mean %+.5f\n",
           step, loss_value, norm, activation_mean);
    }

  if (steps >= 2 && !(last_loss < first_loss))
    check_failed (run, "the loss did not go down: %.6f at step 0, %.6f at step %d",
                  first_loss, last_loss, steps - 1);

  snprintf (run->headline, sizeof run->headline,
            "%d step%s, loss %.6g → %.6g, %d checkpoint%s of weights.fc2", steps,
            plural ((uint64_t) steps),
            first_loss, last_loss, checkpoints, checkpoints == 1 ? "" : "s");

out:
  range_close_all (run);
  CowTensor **all[] = { &x, &teacher, &y, &w1, &w2, &ema, &checkpoint, &h,
                        &logits, &diff, &sq, &loss, &grouped, &grouped_sum,
                        &dflat, &dout, &h_t, &g2, &w2_t, &dh, &x_t, &g1,
                        &w1_flat, &w1_sq, &w1_norm, &ema_sum };
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    drop (all[i]);
  free (h_before);
  free (h_after);
  free (checkpoint_host);
  free (checkpoint_now);
  cow_set_reshape_mode (previous_mode);
}

/* ------------------------------------------------------------------ */
/* concurrent                                                           */

#define CONCURRENT_BYTES ((int64_t) 16 << 20)

static float
pattern_at (int64_t i, int round)
{
  return (float) ((i * 7 + round) & 0xffff);
}

/* Opens when the main thread has started every worker (or gave up). */
typedef struct {
  pthread_mutex_t lock; /* protects state */
  pthread_cond_t cond;
  int state;            /* 0 waiting, 1 go, -1 abort */
} Gate;

typedef struct {
  Gate *gate;
  pthread_barrier_t *barrier;
  CowTensor *clone;
  int64_t numel;
  int round;
  float value;
  uintptr_t shared_address;
  /* Results, read after join. */
  bool ok;
  bool stole;
  int64_t write_ns;
  char message[COW_ERROR_MESSAGE_MAX + 160];
} Worker;

static void *
worker_main (void *data)
{
  Worker *w = data;
  CowError err;

  pthread_mutex_lock (&w->gate->lock);
  while (w->gate->state == 0)
    pthread_cond_wait (&w->gate->cond, &w->gate->lock);
  int state = w->gate->state;
  pthread_mutex_unlock (&w->gate->lock);
  if (state < 0)
    return NULL;

  /* Every worker writes its own lazy clone at the same moment. */
  pthread_barrier_wait (w->barrier);
  int64_t start = cow_trace_now_ns ();
  cow_error_clear (&err);
  float *bytes = cow_tensor_mutable_data (w->clone, &err);
  w->write_ns = cow_trace_now_ns () - start;
  if (bytes == NULL)
    {
      snprintf (w->message, sizeof w->message, "mutable_data of a lazy clone failed: %s: %s",
                cow_status_to_string (err.code), err.message);
      return NULL;
    }
  w->stole = (uintptr_t) bytes == w->shared_address;
  for (int64_t i = 0; i < w->numel; i++)
    if (bytes[i] != pattern_at (i, w->round))
      {
        snprintf (w->message, sizeof w->message,
                  "after materializing (%s), element %" PRId64 " is %g, expected %g",
                  w->stole ? "steal" : "copy", i, bytes[i], pattern_at (i, w->round));
        return NULL;
      }
  cow_error_clear (&err);
  if (cow_tensor_fill_ (w->clone, w->value, &err) != COW_OK)
    {
      snprintf (w->message, sizeof w->message, "fill_ of a materialized clone failed: %s: %s",
                cow_status_to_string (err.code), err.message);
      return NULL;
    }
  const float *after = cow_tensor_const_data (w->clone);
  for (int64_t i = 0; i < w->numel; i++)
    if (after[i] != w->value)
      {
        snprintf (w->message, sizeof w->message,
                  "after fill_(%g), element %" PRId64 " is %g", w->value, i, after[i]);
        return NULL;
      }
  w->ok = true;
  return NULL;
}

static void
gate_open (Gate *gate, int state)
{
  pthread_mutex_lock (&gate->lock);
  gate->state = state;
  pthread_cond_broadcast (&gate->cond);
  pthread_mutex_unlock (&gate->lock);
}

/* N threads each get a lazy clone of one 16 MiB tensor and write it at
 * once.  In even rounds the source stays alive: every writer copies.  In
 * odd rounds the source is dropped first: the writers race, and exactly
 * one of them (the last sharer) must steal the bytes instead of copying. */
static void
scenario_concurrent (Run *run)
{
  const int rounds = run->options->steps > 0 ? run->options->steps : DEFAULT_CONCURRENT_ROUNDS;
  const int n = run->options->threads;
  const int64_t numel = CONCURRENT_BYTES / (int64_t) sizeof (float);
  CowError err;
  uint64_t total_copies = 0, total_steals = 0;
  int64_t slowest_ns = 0;
  char text[32];

  CowTensor *source = NULL;
  Worker *workers = calloc ((size_t) n, sizeof *workers);
  pthread_t *threads = calloc ((size_t) n, sizeof *threads);
  if (workers == NULL || threads == NULL)
    {
      check_failed (run, "cannot allocate %d workers", n);
      goto out;
    }

  say (run, "concurrent: %d thread%s write%s lazy clones of one %s tensor, %d round%s\n",
       n, plural ((uint64_t) n), n == 1 ? "s" : "",
       format_bytes ((uint64_t) CONCURRENT_BYTES, text, sizeof text), rounds,
       plural ((uint64_t) rounds));

  for (int round = 0; round < rounds; round++)
    {
      const bool drop_source = round % 2 == 1;
      char label[32];
      snprintf (label, sizeof label, "round %d", round);
      range_push (run, label);

      TRY_TENSOR (source, cow_tensor_empty (1, &numel, COW_DTYPE_F32, &err), "empty source");
      cow_tensor_set_name (source, "shared.weights");
      float *bytes;
      TRY_TENSOR (bytes, cow_tensor_mutable_data (source, &err), "mutable_data of the source");
      for (int64_t i = 0; i < numel; i++)
        bytes[i] = pattern_at (i, round);
      const uintptr_t shared_address = cow_tensor_data_address (source);

      for (int i = 0; i < n; i++)
        {
          workers[i] = (Worker) {
            .numel = numel, .round = round, .value = (float) (1000 + 10 * round + i),
            .shared_address = shared_address,
          };
          TRY_TENSOR (workers[i].clone, cow_tensor_lazy_clone (source, &err),
                      "lazy_clone shared.weights → replica");
          cow_tensor_set_name (workers[i].clone, "replica");
        }
      if (drop_source)
        drop (&source);

      Gate gate = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
      pthread_barrier_t barrier;
      int rc = pthread_barrier_init (&barrier, NULL, (unsigned) n);
      if (rc != 0)
        {
          check_failed (run, "pthread_barrier_init: %s", strerror (rc));
          goto out;
        }
      int started = 0;
      int64_t round_start = cow_trace_now_ns ();
      for (; started < n; started++)
        {
          workers[started].gate = &gate;
          workers[started].barrier = &barrier;
          rc = pthread_create (&threads[started], NULL, worker_main, &workers[started]);
          if (rc != 0)
            {
              check_failed (run, "pthread_create: %s", strerror (rc));
              break;
            }
        }
      gate_open (&gate, started == n ? 1 : -1);
      for (int i = 0; i < started; i++)
        pthread_join (threads[i], NULL);
      int64_t round_ns = cow_trace_now_ns () - round_start;
      pthread_barrier_destroy (&barrier);
      if (started < n)
        goto out;

      int copies = 0, steals = 0;
      for (int i = 0; i < n; i++)
        {
          if (!workers[i].ok)
            {
              check_failed (run, "round %d, thread %d: %s", round, i, workers[i].message);
              continue;
            }
          if (workers[i].stole)
            steals++;
          else
            copies++;
          if (workers[i].write_ns > slowest_ns)
            slowest_ns = workers[i].write_ns;
          /* Each thread's bytes are its own: nobody else's fill_ shows. */
          const float *mine = cow_tensor_const_data (workers[i].clone);
          if (mine[0] != workers[i].value || mine[numel - 1] != workers[i].value)
            check_failed (run, "round %d: thread %d's clone holds %g, expected %g",
                          round, i, mine[0], workers[i].value);
        }
      if (run->check_failed)
        goto out;
      int expected_steals = drop_source ? 1 : 0;
      if (steals != expected_steals)
        check_failed (run, "round %d: %d of %d writers stole the shared bytes,"
                      " expected %d (source %s)", round, steals, n, expected_steals,
                      drop_source ? "dropped first" : "alive");
      if (source != NULL)
        {
          const float *original = cow_tensor_const_data (source);
          for (int64_t i = 0; i < numel; i++)
            if (original[i] != pattern_at (i, round))
              {
                check_failed (run, "round %d: the source changed at element %" PRId64
                              " (%g) after its lazy clones were written",
                              round, i, original[i]);
                break;
              }
        }
      total_copies += (uint64_t) copies;
      total_steals += (uint64_t) steals;

      say (run, "  round %d: source %-14s %d cop%s + %d steal%s, %s copied, %.1f ms\n",
           round, drop_source ? "dropped first," : "alive,", copies,
           copies == 1 ? "y  " : "ies", steals, steals == 1 ? " " : "s",
           format_bytes ((uint64_t) copies * (uint64_t) CONCURRENT_BYTES, text, sizeof text),
           (double) round_ns / 1e6);

      for (int i = 0; i < n; i++)
        drop (&workers[i].clone);
      drop (&source);
      range_pop (run);
      if (run->check_failed)
        goto out;
    }

  snprintf (run->headline, sizeof run->headline,
            "%d round%s × %d thread%s: %" PRIu64 " cop%s, %" PRIu64
            " steal%s (seen by data address), slowest write %.1f ms",
            rounds, plural ((uint64_t) rounds), n, plural ((uint64_t) n), total_copies,
            total_copies == 1 ? "y" : "ies", total_steals, plural (total_steals),
            (double) slowest_ns / 1e6);

out:
  range_close_all (run);
  if (workers != NULL)
    for (int i = 0; i < n; i++)
      drop (&workers[i].clone);
  drop (&source);
  free (workers);
  free (threads);
}

/* ------------------------------------------------------------------ */
/* simulate                                                             */

typedef struct {
  const Run *run;
  int calls;
} WarningLog;

static void
on_warning (const char *message, void *user_data)
{
  WarningLog *log = user_data;
  log->calls++;
  /* The warning is the point of the scenario: shown even with --quiet. */
  printf ("  simulate-mode warning: %s\n", message);
}

/* Under COW_RESHAPE_SIMULATE reshape() still aliases, but the engine
 * notices when the program relies on it: writing through the reshape
 * result and then reading the original is a violation.  The same program
 * under COW_RESHAPE_LAZY shows what would change. */
static void
scenario_simulate (Run *run)
{
  const CowReshapeMode previous_mode = cow_get_reshape_mode ();
  const int64_t sizes[2] = { 4, 6 }, reshaped_sizes[2] = { 6, 4 };
  float initial[24], seen[24];
  CowError err;
  WarningLog log = { .run = run };
  CowTensor *base = NULL, *reshaped = NULL, *lazy_base = NULL, *lazy_reshaped = NULL;

  for (int i = 0; i < 24; i++)
    initial[i] = (float) i;
  cow_set_warning_handler (on_warning, &log);

  /* Simulate mode: the reshape aliases, the engine warns. */
  cow_set_reshape_mode (COW_RESHAPE_SIMULATE);
  say (run, "simulate: reshape mode \"%s\"\n", cow_reshape_mode_to_string (cow_get_reshape_mode ()));
  uint64_t violations_before = cow_simulate_violation_count ();
  TRY_TENSOR (base, cow_tensor_from_data (2, sizes, COW_DTYPE_F32, initial, sizeof initial, &err),
              "from_data sim.base");
  cow_tensor_set_name (base, "sim.base");
  TRY_TENSOR (reshaped, cow_tensor_reshape (base, 2, reshaped_sizes, &err),
              "reshape sim.base → sim.reshaped");
  cow_tensor_set_name (reshaped, "sim.reshaped");
  if (!cow_tensor_is_alias_of (base, reshaped))
    check_failed (run, "in simulate mode, reshape() of a contiguous tensor must alias");
  say (run, "  wrote 7 through sim.reshaped, then read sim.base:\n");
  TRY_STATUS (cow_tensor_fill_ (reshaped, 7.0, &err), "fill_ sim.reshaped");
  TRY_STATUS (cow_tensor_read_elements (base, seen, sizeof seen, &err), "read sim.base");
  uint64_t simulated = cow_simulate_violation_count () - violations_before;
  say (run, "  sim.base[0] = %g (aliasing kept), %" PRIu64 " violation%s counted\n",
       seen[0], simulated, simulated == 1 ? "" : "s");
  if (seen[0] != 7.0f || seen[23] != 7.0f)
    check_failed (run, "simulate mode must keep view semantics: sim.base reads %g, expected 7",
                  seen[0]);
  if (simulated < 1)
    check_failed (run, "reading sim.base after a write through sim.reshaped was not"
                  " counted as a simulate-mode violation");
  if (log.calls != 1)
    check_failed (run, "the warning handler ran %d times for one storage, expected once",
                  log.calls);

  /* Lazy mode: the same program, and the write copies instead. */
  cow_set_reshape_mode (COW_RESHAPE_LAZY);
  uint64_t violations_mid = cow_simulate_violation_count ();
  TRY_TENSOR (lazy_base, cow_tensor_from_data (2, sizes, COW_DTYPE_F32, initial, sizeof initial, &err),
              "from_data lazy.base");
  cow_tensor_set_name (lazy_base, "lazy.base");
  TRY_TENSOR (lazy_reshaped, cow_tensor_reshape (lazy_base, 2, reshaped_sizes, &err),
              "reshape lazy.base → lazy.reshaped");
  cow_tensor_set_name (lazy_reshaped, "lazy.reshaped");
  TRY_STATUS (cow_tensor_fill_ (lazy_reshaped, 7.0, &err), "fill_ lazy.reshaped");
  TRY_STATUS (cow_tensor_read_elements (lazy_base, seen, sizeof seen, &err), "read lazy.base");
  say (run, "  same program with reshape mode \"lazy\": lazy.base[0] = %g (the write copied)\n",
       seen[0]);
  if (cow_tensor_is_alias_of (lazy_base, lazy_reshaped))
    check_failed (run, "in lazy mode, reshape() must not alias");
  if (memcmp (seen, initial, sizeof seen) != 0)
    check_failed (run, "in lazy mode, writing the reshape result changed its source");
  if (cow_simulate_violation_count () != violations_mid)
    check_failed (run, "lazy mode counted a simulate-mode violation");

  run->violations = cow_simulate_violation_count () - violations_before;
  snprintf (run->headline, sizeof run->headline,
            "%" PRIu64 " violation%s in simulate mode (warning shown %d time%s);"
            " none in lazy mode", run->violations, run->violations == 1 ? "" : "s",
            log.calls, log.calls == 1 ? "" : "s");

out:
  drop (&base);
  drop (&reshaped);
  drop (&lazy_base);
  drop (&lazy_reshaped);
  cow_set_warning_handler (NULL, NULL);
  cow_set_reshape_mode (previous_mode);
}

/* ------------------------------------------------------------------ */
/* gpu                                                                  */

#define GPU_ELEMENTS ((int64_t) 1 << 20) /* 4 MiB of f32 per tensor */
#define GPU_DEFAULT_STEPS 8
#define GPU_LEARNING_RATE 0.125
#define GPU_CHECKPOINT_EVERY 3

/* The loop the gpu scenario runs, on @device: SGD-like updates of a
 * weight vector with lazy clones that are materialized by copy (a
 * snapshot and checkpoints that keep the old weights while the weights
 * change) and by steal (a scratch lazy clone of the gradient whose
 * source is dropped first), using fill_, add_ and mul.  Returns the final
 * weights on the CPU, or NULL after reporting an error. */
static CowTensor *
gpu_loop (Run *run, CowDevice device, int steps)
{
  CowError err = { 0 };
  const int64_t n = GPU_ELEMENTS;
  CowTensor *host = NULL, *weights = NULL, *grad = NULL, *square = NULL, *scratch = NULL,
            *snapshot = NULL, *checkpoint = NULL, *result = NULL;
  float *init = host_alloc (run, (size_t) n);
  if (init == NULL)
    return NULL;
  uint64_t state = 42;
  for (int64_t i = 0; i < n; i++)
    init[i] = next_uniform (&state);
  TRY_TENSOR (host, cow_tensor_from_data (1, &n, COW_DTYPE_F32, init,
                                          (size_t) n * sizeof *init, &err), "from_data");
  TRY_TENSOR (weights, cow_tensor_to (host, device, &err), "to(device)");
  cow_tensor_set_name (weights, "gpu.weights");
  TRY_TENSOR (grad, cow_tensor_empty_on (1, &n, COW_DTYPE_F32, device, &err), "empty_on");
  cow_tensor_set_name (grad, "gpu.grad");

  for (int step = 0; step < steps; step++)
    {
      range_push (run, "gpu step");
      /* Kept until the update has happened: the update copies. */
      TRY_TENSOR (snapshot, cow_tensor_lazy_clone (weights, &err), "lazy_clone (snapshot)");
      if (step % GPU_CHECKPOINT_EVERY == 0)
        {
          drop (&checkpoint);
          TRY_TENSOR (checkpoint, cow_tensor_lazy_clone (weights, &err), "lazy_clone (checkpoint)");
          cow_tensor_set_name (checkpoint, "gpu.checkpoint");
        }
      /* A "gradient" that depends on the weights: w × w + step / 16. */
      TRY_STATUS (cow_tensor_fill_ (grad, (double) step / 16.0, &err), "fill_ (grad)");
      TRY_TENSOR (square, cow_tensor_mul (snapshot, snapshot, &err), "mul");
      TRY_STATUS (cow_tensor_add_ (grad, square, 1.0, &err), "add_ (grad)");
      drop (&square);
      /* Scratch: a lazy clone of the gradient, written after the gradient
       * itself is dropped, steals its bytes. */
      TRY_TENSOR (scratch, cow_tensor_lazy_clone (grad, &err), "lazy_clone (scratch)");
      drop (&grad);
      TRY_STATUS (cow_tensor_scale_ (scratch, GPU_LEARNING_RATE, &err), "scale_ (steal)");
      grad = scratch;
      scratch = NULL;
      /* The update: the weights still share with the snapshot, so this copies. */
      TRY_STATUS (cow_tensor_add_ (weights, grad, -1.0, &err), "add_ (update)");
      drop (&snapshot);
      range_pop (run);
    }
  TRY_TENSOR (result, cow_tensor_to (weights, cow_device_cpu (), &err), "to(cpu)");

out:
  range_close_all (run);
  free (init);
  drop (&host);
  drop (&weights);
  drop (&grad);
  drop (&square);
  drop (&scratch);
  drop (&snapshot);
  drop (&checkpoint);
  return result;
}

/* The same loop on the GPU and on the CPU; the results must agree bit
 * for bit (the kernels are built without fused multiply-add).  Without a
 * CUDA device it says why and passes: the scenario is optional. */
static void
scenario_gpu (Run *run)
{
  CowError err = { 0 };
  if (cow_cuda_available (&err) != COW_OK)
    {
      /* Shown even with --quiet: the reason is the scenario's result. */
      printf ("gpu: skipped: %s\n", err.message);
      snprintf (run->headline, sizeof run->headline, "skipped: %.200s", err.message);
      return;
    }
  int steps = run->options->steps > 0 ? run->options->steps : GPU_DEFAULT_STEPS;
  say (run, "gpu: %d steps on cuda:0 and on the CPU, %" PRId64 " f32 weights\n", steps,
       GPU_ELEMENTS);
  CowTensor *on_gpu = gpu_loop (run, cow_device_cuda (0), steps);
  CowTensor *on_cpu = on_gpu != NULL ? gpu_loop (run, cow_device_cpu (), steps) : NULL;
  if (on_gpu != NULL && on_cpu != NULL)
    {
      const float *g = cow_tensor_const_data (on_gpu), *c = cow_tensor_const_data (on_cpu);
      int64_t differ = 0;
      for (int64_t i = 0; i < GPU_ELEMENTS; i++)
        differ += g[i] != c[i];
      if (differ != 0)
        check_failed (run, "%" PRId64 " of %" PRId64 " weights differ between cuda:0 and the CPU",
                      differ, GPU_ELEMENTS);
      snprintf (run->headline, sizeof run->headline,
                "%d steps on cuda:0 match the CPU bit for bit (%" PRId64 " weights)", steps,
                GPU_ELEMENTS);
    }
  drop (&on_gpu);
  drop (&on_cpu);
}

/* ------------------------------------------------------------------ */
/* foreign                                                              */

typedef struct {
  float *data;
  int released;
} ForeignBlock;

/* The foreign owner's deleter: frees its bytes and counts the call. */
static void
foreign_release (void *context)
{
  ForeignBlock *block = context;
  free (block->data);
  block->data = NULL;
  block->released++;
}

static const char *
eager_reason_text (CowEagerReason reason)
{
  switch (reason)
    {
    case COW_EAGER_FOREIGN_DATA_PTR:
      return "foreign data pointer (memory with its own owner and deleter)";
    case COW_EAGER_NOT_SIMPLE:
      return "data pointer its allocator cannot share (not simple)";
    default:
      return "unknown reason";
    }
}

/* Memory the engine did not allocate cannot be wrapped in a
 * copy-on-write context: a lazy clone of it copies eagerly and says why,
 * and the storage-level lazy clone refuses. */
static void
scenario_foreign (Run *run)
{
  enum { N = 256 * 1024 };
  const int64_t numel = N;
  CowError err;
  char text[32];
  ForeignBlock block = { 0 };
  CowTensor *foreign = NULL, *clone = NULL, *owned = NULL, *owned_clone = NULL;
  float *check = host_alloc (run, N);
  block.data = malloc (N * sizeof (float));
  if (check == NULL || block.data == NULL)
    {
      if (block.data == NULL)
        check_failed (run, "cannot allocate the foreign block");
      goto out;
    }
  for (int i = 0; i < N; i++)
    block.data[i] = (float) (i % 1000);

  say (run, "foreign: lazy clone of %s the engine did not allocate\n",
       format_bytes (N * sizeof (float), text, sizeof text));
  TRY_TENSOR (foreign, cow_tensor_from_foreign (1, &numel, COW_DTYPE_F32, block.data, &block,
                                                foreign_release, &err),
              "from_foreign");
  cow_tensor_set_name (foreign, "foreign.buffer");

  Stats before;
  stats_snapshot (&before);
  TRY_TENSOR (clone, cow_tensor_lazy_clone (foreign, &err), "lazy_clone foreign.buffer");
  cow_tensor_set_name (clone, "foreign.clone");
  Stats during;
  stats_snapshot (&during);
  stats_subtract (&during, &before);

  bool eager = !cow_tensor_is_cow (clone) && !cow_tensor_is_cow (foreign)
               && cow_tensor_data_address (clone) != cow_tensor_data_address (foreign);
  if (!eager)
    check_failed (run, "a lazy clone of foreign memory must copy eagerly");
  if (counting)
    {
      const char *reason = during.k[K_EAGER_FOREIGN] ? eager_reason_text (COW_EAGER_FOREIGN_DATA_PTR)
                           : during.k[K_EAGER_NOT_SIMPLE] ? eager_reason_text (COW_EAGER_NOT_SIMPLE)
                           : NULL;
      if (reason != NULL)
        say (run, "  lazy_clone fell back to an eager copy of %s: %s\n",
             format_bytes (during.k[K_EAGER_BYTES], text, sizeof text), reason);
      else
        check_failed (run, "the eager fallback emitted no lazy_clone_eager event with a reason");
      if (during.k[K_EAGER_FOREIGN] != 1)
        check_failed (run, "expected one eager fallback for a foreign data pointer, saw %" PRIu64,
                      during.k[K_EAGER_FOREIGN]);
    }
  else
    say (run, "  lazy_clone fell back to an eager copy (the result has its own bytes)\n");

  TRY_STATUS (cow_tensor_read_elements (clone, check, N * sizeof (float), &err), "read foreign.clone");
  if (block.data != NULL && memcmp (check, block.data, N * sizeof (float)) != 0)
    check_failed (run, "the eager copy differs from the foreign bytes");

  /* The storage-level lazy clone has no fallback: it refuses. */
  cow_error_clear (&err);
  CowStorage *refused = cow_storage_lazy_clone (cow_tensor_storage (foreign), &err);
  if (refused != NULL)
    {
      check_failed (run, "cow_storage_lazy_clone of foreign memory succeeded; it must refuse");
      cow_storage_unref (refused);
    }
  else if (err.code != COW_ERROR_NOT_SUPPORTED)
    check_failed (run, "cow_storage_lazy_clone of foreign memory failed with \"%s\","
                  " expected \"%s\"", cow_status_to_string (err.code),
                  cow_status_to_string (COW_ERROR_NOT_SUPPORTED));
  else
    say (run, "  cow_storage_lazy_clone refuses, as documented: %s\n", err.message);

  /* Writing the clone touches only its own bytes. */
  TRY_STATUS (cow_tensor_fill_ (clone, -1.0, &err), "fill_ foreign.clone");
  if (block.data != NULL && block.data[0] != 0.0f)
    check_failed (run, "writing the eager copy changed the foreign memory");

  /* For contrast: memory the engine allocated is shared lazily. */
  TRY_TENSOR (owned, cow_tensor_from_data (1, &numel, COW_DTYPE_F32, check, N * sizeof (float), &err),
              "from_data owned.buffer");
  cow_tensor_set_name (owned, "owned.buffer");
  TRY_TENSOR (owned_clone, cow_tensor_lazy_clone (owned, &err), "lazy_clone owned.buffer");
  if (!cow_tensor_is_cow (owned_clone)
      || cow_tensor_data_address (owned_clone) != cow_tensor_data_address (owned))
    check_failed (run, "a lazy clone of engine-allocated memory must share its bytes");
  else
    say (run, "  for contrast, a lazy clone of engine-allocated memory shares its bytes\n");

  /* The clone owns its bytes: dropping the foreign tensor runs the
   * owner's deleter right away, once. */
  drop (&foreign);
  if (block.released != 1)
    check_failed (run, "dropping the foreign tensor ran its deleter %d times, expected 1",
                  block.released);

  snprintf (run->headline, sizeof run->headline,
            "lazy clone of foreign memory copied eagerly; storage-level clone refused;"
            " foreign deleter ran %d time%s", block.released, block.released == 1 ? "" : "s");

out:
  drop (&foreign);
  drop (&clone);
  drop (&owned);
  drop (&owned_clone);
  free (check);
  if (block.released == 0)
    free (block.data); /* never handed over, or the engine kept it */
}

/* ------------------------------------------------------------------ */
/* ipc: one producer, several consumer processes                        */

#define IPC_CONSUMERS 3
#define IPC_TENSORS 4
#define IPC_ELEMS 4096

/* The consumer's side, run as `cowscope-demo --ipc-consumer FD` (fork +
 * exec of the demo itself): receives tensors and answers each with its
 * sum; on an empty handle releases them all, answers, and exits. */
static int
ipc_consumer_main (int sock)
{
  CowTensor *held[IPC_TENSORS] = { 0 };
  int n_held = 0;
  for (;;)
    {
      CowIpcHandle handle;
      CowError err;
      int fd = -1, n_fds = 0;
      if (cow_ipc_recv_fds (sock, &handle, sizeof handle, &fd, 1, &n_fds, &err) != COW_OK)
        {
          fprintf (stderr, PROGRAM " (ipc consumer): %s\n", err.message);
          return 1;
        }
      double answer = 0;
      if (handle.magic == 0)
        {
          for (int i = 0; i < n_held; i++)
            cow_tensor_unref (held[i]);
          n_held = 0;
          answer = -1;
        }
      else
        {
          CowTensor *t = cow_ipc_receive (&handle, n_fds > 0 ? fd : -1, &err);
          if (t == NULL || n_held == IPC_TENSORS)
            {
              fprintf (stderr, PROGRAM " (ipc consumer): %s\n",
                       t == NULL ? err.message : "too many tensors");
              cow_tensor_unref (t);
              return 1;
            }
          const float *data = cow_tensor_const_data (t);
          for (int64_t i = 0; i < cow_tensor_numel (t); i++)
            answer += data[i];
          held[n_held++] = t;
        }
      if (send (sock, &answer, sizeof answer, MSG_NOSIGNAL) != (ssize_t) sizeof answer)
        return 1;
      if (answer < 0)
        return 0;
    }
}

static void
scenario_ipc (Run *run)
{
  CowError err;
  const int64_t numel = IPC_ELEMS;
  CowTensor *tensors[IPC_CONSUMERS][IPC_TENSORS] = { { 0 } };
  pid_t pids[IPC_CONSUMERS];
  int socks[IPC_CONSUMERS];
  int n_started = 0;

  say (run, "ipc: %d consumer processes, %d tensors each; the producer drops its"
       " tensors before the consumers release them\n", IPC_CONSUMERS, IPC_TENSORS);
  for (int c = 0; c < IPC_CONSUMERS; c++)
    {
      int sv[2];
      if (socketpair (AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
        {
          check_failed (run, "socketpair: %s", strerror (errno));
          goto out;
        }
      fflush (stdout);
      pid_t pid = fork ();
      if (pid < 0)
        {
          close (sv[0]);
          close (sv[1]);
          check_failed (run, "fork: %s", strerror (errno));
          goto out;
        }
      if (pid == 0)
        {
          close (sv[0]);
          for (int j = 0; j < c; j++)
            close (socks[j]);
          char fd_text[16];
          snprintf (fd_text, sizeof fd_text, "%d", sv[1]);
          execl ("/proc/self/exe", PROGRAM, "--ipc-consumer", fd_text, (char *) NULL);
          _exit (127);
        }
      close (sv[1]);
      fcntl (sv[0], F_SETFD, FD_CLOEXEC);
      pids[n_started] = pid;
      socks[n_started++] = sv[0];
    }

  for (int c = 0; c < IPC_CONSUMERS; c++)
    for (int k = 0; k < IPC_TENSORS; k++)
      {
        TRY_TENSOR (tensors[c][k],
                    cow_tensor_empty_with_allocator (1, &numel, COW_DTYPE_F32,
                                                     cow_ipc_shareable_cpu_allocator (), &err),
                    "empty (shareable)");
        TRY_STATUS (cow_tensor_fill_ (tensors[c][k], (double) (c * IPC_TENSORS + k + 1), &err),
                    "fill_");
        CowIpcHandle handle;
        int fd = -1;
        TRY_STATUS (cow_ipc_send (tensors[c][k], &handle, &fd, &err), "ipc_send");
        TRY_STATUS (cow_ipc_send_fds (socks[c], &handle, sizeof handle, &fd, 1, &err),
                    "ipc_send_fds");
        double sum = 0;
        if (recv (socks[c], &sum, sizeof sum, 0) != (ssize_t) sizeof sum)
          {
            check_failed (run, "consumer %d did not answer", c);
            goto out;
          }
        double expected = (double) (c * IPC_TENSORS + k + 1) * IPC_ELEMS;
        if (sum != expected)
          check_failed (run, "consumer %d summed %g, expected %g", c, sum, expected);
      }

  /* The producer lets go first: every block moves to the limbo. */
  for (int c = 0; c < IPC_CONSUMERS; c++)
    for (int k = 0; k < IPC_TENSORS; k++)
      {
        cow_tensor_unref (tensors[c][k]);
        tensors[c][k] = NULL;
      }
  size_t in_limbo = cow_ipc_limbo_size ();
  say (run, "ipc: producer dropped its tensors: %zu blocks in the limbo\n", in_limbo);
  if (in_limbo != IPC_CONSUMERS * IPC_TENSORS)
    check_failed (run, "%zu blocks in the limbo, expected %d", in_limbo,
                  IPC_CONSUMERS * IPC_TENSORS);

  /* The consumers release; the next collect frees the blocks. */
  for (int c = 0; c < IPC_CONSUMERS; c++)
    {
      CowIpcHandle done = { 0 };
      double answer = 0;
      TRY_STATUS (cow_ipc_send_fds (socks[c], &done, sizeof done, NULL, 0, &err), "ipc_send_fds");
      if (recv (socks[c], &answer, sizeof answer, 0) != (ssize_t) sizeof answer || answer >= 0)
        check_failed (run, "consumer %d did not confirm its release", c);
    }
  size_t freed = cow_ipc_collect ();
  say (run, "ipc: consumers released; collect freed %zu blocks, %zu left\n", freed,
       cow_ipc_limbo_size ());
  if (cow_ipc_limbo_size () != 0)
    check_failed (run, "%zu blocks still in the limbo", cow_ipc_limbo_size ());
  snprintf (run->headline, sizeof run->headline,
            "%d consumers x %d tensors: %zu blocks through the limbo, %zu freed by collect",
            IPC_CONSUMERS, IPC_TENSORS, in_limbo, freed);

out:
  for (int c = 0; c < IPC_CONSUMERS; c++)
    for (int k = 0; k < IPC_TENSORS; k++)
      cow_tensor_unref (tensors[c][k]);
  for (int c = 0; c < n_started; c++)
    {
      close (socks[c]);
      int status = 0;
      if (waitpid (pids[c], &status, 0) != pids[c] || !WIFEXITED (status)
          || WEXITSTATUS (status) != 0)
        check_failed (run, "consumer process %d did not exit cleanly", c);
    }
  cow_ipc_collect ();
}

/* ------------------------------------------------------------------ */
/* Summary                                                              */

typedef struct {
  const char *name;
  const char *description;
  void (*run) (Run *run);
} Scenario;

static const Scenario scenarios[] = {
  { "training", "SGD on a small MLP: named weights, step ranges, lazy reshapes"
    " (copy and steal), an EMA and checkpoints as lazy clones", scenario_training },
  { "concurrent", "threads write lazy clones of one 16 MiB tensor at once;"
    " copies vs steals", scenario_concurrent },
  { "simulate", "simulate mode: a write through a reshape result, then a read"
    " of the original, warns", scenario_simulate },
  { "foreign", "lazy clone of foreign memory: eager fallback with its reason",
    scenario_foreign },
  { "ipc", "one producer, three consumer processes; the producer drops its"
    " tensors early, the blocks wait in the limbo until consumers release", scenario_ipc },
  { "gpu", "the training-like loop on a CUDA device (lazy clones, copy and steal,"
    " fill/add/mul kernels), checked against the CPU; skipped without a device",
    scenario_gpu },
};
#define N_SCENARIOS ((int) (sizeof scenarios / sizeof scenarios[0]))

static void
print_by_op (const char *label, const uint64_t *by_op)
{
  bool any = false;
  for (int op = 0; op < COW_N_OPS; op++)
    if (by_op[op] != 0)
      {
        printf ("%s%s %" PRIu64, any ? ", " : label, cow_op_name ((CowOp) op), by_op[op]);
        any = true;
      }
  if (any)
    printf (")");
}

static void
print_run_summary (const Run *run)
{
  const Stats *s = &run->stats;
  char a[32], b[32], c[32];

  printf ("\n%s — %s (%.3f s)\n", run->name,
          run->engine_error ? "ENGINE ERROR" : run->check_failed ? "CHECK FAILED" : "ok",
          run->seconds);
  if (run->headline[0] != '\0')
    printf ("  %s\n", run->headline);
  if (!counting)
    {
      printf ("  (another trace sink is installed, so the demo counted no events;"
              " that tool has them)\n");
      if (run->violations)
        printf ("  simulate-mode violations   %" PRIu64 "\n", run->violations);
      return;
    }

  printf ("  objects created            %" PRIu64 " tensor%s (%" PRIu64 " freed), %"
          PRIu64 " storage%s (%" PRIu64 " freed), %" PRIu64 " allocation%s (%s)\n",
          s->k[K_TENSOR_NEW], plural (s->k[K_TENSOR_NEW]), s->k[K_TENSOR_FREE],
          s->k[K_STORAGE_NEW], plural (s->k[K_STORAGE_NEW]), s->k[K_STORAGE_FREE],
          s->k[K_ALLOCATION_NEW], plural (s->k[K_ALLOCATION_NEW]),
          format_bytes (s->k[K_ALLOCATION_BYTES], a, sizeof a));
  printf ("  lazy clones                %" PRIu64 " new storage%s sharing %s lazily",
          s->k[K_SHARED_STORAGES], plural (s->k[K_SHARED_STORAGES]),
          format_bytes (s->k[K_SHARED_BYTES], a, sizeof a));
  print_by_op (" (made by ", s->lazy_by_op);
  printf (", %" PRIu64 " copy-on-write context%s\n", s->k[K_CONTEXT_NEW],
          plural (s->k[K_CONTEXT_NEW]));
  printf ("  eager fallbacks            %" PRIu64, s->k[K_EAGER]);
  if (s->k[K_EAGER])
    {
      printf (" (%s copied):", format_bytes (s->k[K_EAGER_BYTES], a, sizeof a));
      if (s->k[K_EAGER_FOREIGN])
        printf (" %" PRIu64 "× %s", s->k[K_EAGER_FOREIGN],
                eager_reason_text (COW_EAGER_FOREIGN_DATA_PTR));
      if (s->k[K_EAGER_NOT_SIMPLE])
        printf (" %" PRIu64 "× %s", s->k[K_EAGER_NOT_SIMPLE],
                eager_reason_text (COW_EAGER_NOT_SIMPLE));
      if (s->k[K_EAGER_OTHER])
        printf (" %" PRIu64 "× unknown reason", s->k[K_EAGER_OTHER]);
    }
  printf ("\n");
  printf ("  materialized by copy       %" PRIu64 " (%s copied)", s->k[K_COPY],
          format_bytes (s->k[K_COPY_BYTES], a, sizeof a));
  print_by_op (" (triggered by ", s->copy_by_op);
  printf ("\n");
  printf ("  materialized by steal      %" PRIu64 " (%s of shared bytes taken over)",
          s->k[K_STEAL], format_bytes (s->k[K_STEAL_BYTES], a, sizeof a));
  print_by_op (" (triggered by ", s->steal_by_op);
  printf ("\n");
  if (s->k[K_DISCARDED])
    printf ("    of which %" PRIu64 " had copied first, found every other sharer gone"
            " and stole,\n    discarding the copy (%s copied for nothing)\n", s->k[K_DISCARDED],
            format_bytes (s->k[K_DISCARDED_BYTES], a, sizeof a));
  if (s->k[K_FAILED])
    printf ("  failed materializations    %" PRIu64 "\n", s->k[K_FAILED]);
  if (s->k[K_LOCK_WAIT_NS])
    printf ("  waiting for context locks  %.3f ms in total\n",
            (double) s->k[K_LOCK_WAIT_NS] / 1e6);
  /* What eager clones would have copied, minus what the lazy ones did
   * copy (wasted copies included). */
  uint64_t copied = s->k[K_COPY_BYTES] + s->k[K_DISCARDED_BYTES];
  uint64_t saved = s->k[K_SHARED_BYTES] > copied ? s->k[K_SHARED_BYTES] - copied : 0;
  printf ("  bytes lazy copies saved    %s (shared %s lazily, copied %s)\n",
          format_bytes (saved, a, sizeof a), format_bytes (s->k[K_SHARED_BYTES], b, sizeof b),
          format_bytes (copied, c, sizeof c));
  printf ("  simulate-mode violations   %" PRIu64, s->k[K_VIOLATION]);
  if (s->k[K_VIOLATION])
    printf (" (%" PRIu64 " on a read, %" PRIu64 " on a write)", s->k[K_VIOLATION_READ],
            s->k[K_VIOLATION_WRITE]);
  printf ("\n");
  printf ("  ranges %" PRIu64 ", marks %" PRIu64 ", tensor names %" PRIu64
          ", strings announced %" PRIu64 ", trace events %" PRIu64 "\n",
          s->k[K_RANGE], s->k[K_MARK], s->k[K_NAME], s->k[K_STRING], s->k[K_EVENTS]);
  if (s->k[K_TENSOR_NEW] != s->k[K_TENSOR_FREE] || s->k[K_STORAGE_NEW] != s->k[K_STORAGE_FREE])
    printf ("  note: %" PRId64 " tensors and %" PRId64 " storages still alive at the end\n",
            (int64_t) (s->k[K_TENSOR_NEW] - s->k[K_TENSOR_FREE]),
            (int64_t) (s->k[K_STORAGE_NEW] - s->k[K_STORAGE_FREE]));
}

static void
print_table (const Run *runs, int n_runs)
{
  char a[32], b[32], c[32];
  Stats total = { 0 };

  printf ("\n%-11s %6s %6s %7s %11s %7s %11s %11s %5s %8s %8s  %s\n", "scenario", "lazy",
          "eager", "copies", "copied", "steals", "stolen", "saved", "viol", "tensors",
          "storages", "result");
  for (int i = 0; i <= n_runs; i++)
    {
      const Stats *s = i < n_runs ? &runs[i].stats : &total;
      const char *result = "";
      if (i < n_runs)
        {
          stats_add (&total, s);
          result = runs[i].engine_error ? "ENGINE ERROR"
                   : runs[i].check_failed ? "CHECK FAILED" : "ok";
        }
      uint64_t copied = s->k[K_COPY_BYTES] + s->k[K_DISCARDED_BYTES];
      uint64_t saved = s->k[K_SHARED_BYTES] > copied ? s->k[K_SHARED_BYTES] - copied : 0;
      printf ("%-11s %6" PRIu64 " %6" PRIu64 " %7" PRIu64 " %11s %7" PRIu64 " %11s %11s %5"
              PRIu64 " %8" PRIu64 " %8" PRIu64 "  %s\n",
              i < n_runs ? runs[i].name : "total", s->k[K_SHARED_STORAGES], s->k[K_EAGER],
              s->k[K_COPY], format_bytes (s->k[K_COPY_BYTES], a, sizeof a), s->k[K_STEAL],
              format_bytes (s->k[K_STEAL_BYTES], b, sizeof b), format_bytes (saved, c, sizeof c),
              s->k[K_VIOLATION], s->k[K_TENSOR_NEW], s->k[K_STORAGE_NEW], result);
    }
}

/* ------------------------------------------------------------------ */
/* Command line                                                         */

static void
print_usage (FILE *out)
{
  fprintf (out,
           "Usage: " PROGRAM " [--list] [--steps N] [--threads N] [--quiet] SCENARIO...\n"
           "       " PROGRAM " [OPTION...] all\n"
           "\n"
           "Runs workloads over libcowtensor that exercise its copy-on-write storage,\n"
           "checks their results and prints what the engine did.\n"
           "\n"
           "Options:\n"
           "  --list        list the scenarios and exit\n"
           "  --steps N     training steps (default %d) and concurrent rounds (default %d)\n"
           "  --threads N   threads in the concurrent scenario (default %d, at most %d)\n"
           "  --quiet       print only warnings, errors and the summary\n"
           "  -h, --help    show this help and exit\n"
           "\n"
           "Exit status: 0 on success, 1 if a scenario's check or an engine call failed,\n"
           "2 for bad arguments.\n",
           DEFAULT_TRAINING_STEPS, DEFAULT_CONCURRENT_ROUNDS, DEFAULT_THREADS, MAX_THREADS);
}

static int
usage_error (const char *format, ...) DEMO_PRINTF (1, 2);

/* Says what is wrong with the command line; returns the exit status 2. */
static int
usage_error (const char *format, ...)
{
  va_list args;
  fprintf (stderr, PROGRAM ": ");
  va_start (args, format);
  vfprintf (stderr, format, args);
  va_end (args);
  fprintf (stderr, "\nTry '" PROGRAM " --help' for more information.\n");
  return 2;
}

/* Parses a decimal integer in [1, max]. */
static bool
parse_count (const char *text, int max, int *out)
{
  if (text == NULL || *text == '\0')
    return false;
  char *end;
  errno = 0;
  long value = strtol (text, &end, 10);
  if (errno != 0 || *end != '\0' || value < 1 || value > max)
    return false;
  *out = (int) value;
  return true;
}

static const Scenario *
find_scenario (const char *name)
{
  for (int i = 0; i < N_SCENARIOS; i++)
    if (strcmp (scenarios[i].name, name) == 0)
      return &scenarios[i];
  return NULL;
}

int
main (int argc, char **argv)
{
  Options options = { .steps = 0, .threads = DEFAULT_THREADS, .quiet = false };
  const Scenario **chosen = calloc ((size_t) argc * N_SCENARIOS + 1, sizeof *chosen);
  int n_chosen = 0;
  bool list = false;

  if (chosen == NULL)
    {
      fprintf (stderr, PROGRAM ": out of memory\n");
      return 1;
    }
  /* Hidden: the consumer process of the ipc scenario. */
  if (argc == 3 && strcmp (argv[1], "--ipc-consumer") == 0)
    {
      free (chosen);
      return ipc_consumer_main (atoi (argv[2]));
    }

  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      const char *value = NULL;
      bool is_steps = strncmp (arg, "--steps", 7) == 0 && (arg[7] == '\0' || arg[7] == '=');
      bool is_threads = strncmp (arg, "--threads", 9) == 0 && (arg[9] == '\0' || arg[9] == '=');

      if (is_steps || is_threads)
        {
          const char *eq = strchr (arg, '=');
          if (eq != NULL)
            value = eq + 1;
          else if (i + 1 < argc)
            value = argv[++i];
          else
            {
              free (chosen);
              return usage_error ("option '%s' needs a number", arg);
            }
          if (!parse_count (value, is_steps ? MAX_STEPS : MAX_THREADS,
                            is_steps ? &options.steps : &options.threads))
            {
              free (chosen);
              if (is_steps)
                return usage_error ("--steps wants a whole number from 1 to 100000, not '%s'", value);
              return usage_error ("--threads wants a whole number from 1 to 64, not '%s'", value);
            }
        }
      else if (strcmp (arg, "--quiet") == 0 || strcmp (arg, "-q") == 0)
        options.quiet = true;
      else if (strcmp (arg, "--list") == 0)
        list = true;
      else if (strcmp (arg, "--help") == 0 || strcmp (arg, "-h") == 0)
        {
          print_usage (stdout);
          free (chosen);
          return 0;
        }
      else if (arg[0] == '-' && arg[1] != '\0')
        {
          free (chosen);
          return usage_error ("unknown option '%s'", arg);
        }
      else if (strcmp (arg, "all") == 0)
        for (int s = 0; s < N_SCENARIOS; s++)
          chosen[n_chosen++] = &scenarios[s];
      else
        {
          const Scenario *scenario = find_scenario (arg);
          if (scenario == NULL)
            {
              free (chosen);
              return usage_error ("unknown scenario '%s' (try --list)", arg);
            }
          chosen[n_chosen++] = scenario;
        }
    }

  if (list)
    {
      for (int s = 0; s < N_SCENARIOS; s++)
        printf ("%-11s %s\n", scenarios[s].name, scenarios[s].description);
      printf ("%-11s every scenario above, in this order\n", "all");
      free (chosen);
      return 0;
    }
  if (n_chosen == 0)
    {
      free (chosen);
      fprintf (stderr, PROGRAM ": no scenario given\n");
      print_usage (stderr);
      return 2;
    }

  /* Count events only if nobody else (the profiler's probes) listens. */
  if (cow_trace_get_sink () == NULL)
    {
      cow_trace_set_sink (&count_sink);
      counting = true;
    }

  Run *runs = calloc ((size_t) n_chosen, sizeof *runs);
  if (runs == NULL)
    {
      fprintf (stderr, PROGRAM ": out of memory\n");
      free (chosen);
      return 1;
    }
  bool failed = false;
  for (int i = 0; i < n_chosen; i++)
    {
      Run *run = &runs[i];
      run->name = chosen[i]->name;
      run->options = &options;
      if (i > 0)
        say (run, "\n");
      Stats before;
      stats_snapshot (&before);
      uint64_t violations = cow_simulate_violation_count ();
      int64_t start = cow_trace_now_ns ();
      cow_range_push (run->name);
      chosen[i]->run (run);
      cow_range_pop ();
      run->seconds = (double) (cow_trace_now_ns () - start) / 1e9;
      run->violations = cow_simulate_violation_count () - violations;
      stats_snapshot (&run->stats);
      stats_subtract (&run->stats, &before);
      fflush (stdout);
      failed |= run->engine_error || run->check_failed;
    }

  printf ("\n==== summary%s ====\n", counting ? "" : " (events counted elsewhere)");
  for (int i = 0; i < n_chosen; i++)
    print_run_summary (&runs[i]);
  if (counting)
    print_table (runs, n_chosen);

  if (counting && cow_trace_get_sink () == &count_sink)
    cow_trace_set_sink (NULL);
  free (runs);
  free (chosen);
  return failed ? 1 : 0;
}
