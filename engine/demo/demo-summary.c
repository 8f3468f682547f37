/* demo-summary.c — the summary cowscope-demo prints after its scenarios:
 * what the engine did in each run, as counted by the demo's trace sink. */
#include "demo-summary.h"

#include <inttypes.h>
#include <stdio.h>

/* @label and the operations with a non-zero count in @by_op, closed by
 * ")": " (made by lazy_clone 6, reshape 2)".  Nothing when all are 0. */
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

/* One run: its outcome and headline, then what the engine did, line by
 * line.  Without the counting sink only the outcome and headline. */
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
  if (!stats_counting ())
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

/* One row per run and a total row: the columns that a test reads back
 * from a recorded session to compare with the demo's own counts. */
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

void
print_summary (const Run *runs, int n_runs)
{
  printf ("\n==== summary%s ====\n", stats_counting () ? "" : " (events counted elsewhere)");
  for (int i = 0; i < n_runs; i++)
    print_run_summary (&runs[i]);
  if (stats_counting ())
    print_table (runs, n_runs);
}
