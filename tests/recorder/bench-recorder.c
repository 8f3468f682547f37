/* bench-recorder.c — the recorder's write rate into SQLite, and its
 * cost beside LTTng-UST's consumer daemon.
 *
 * 1. Fills rings with N engine events (as a target would, before the
 *    recorder looks), then times the collector draining and writing them
 *    (WAL, batched commits, prepared inserts), beside bare SQLite inserts
 *    of the same rows in one transaction, and the finalization that
 *    follows, and prints bytes per event of the finished session.
 * 2. Records a burst of 2 M events at full speed end to end, in
 *    interleaved pairs beside LTTng-UST recording the same loop with the
 *    same payload (tests/bench/lttng/): the recorder's CPU per stored
 *    event against LTTng's consumer daemon's CPU per kept event, the
 *    events each kept with default settings, and the time from the
 *    target's loop's end to a session ready (LTTng: data on disk).
 *    LTTng is skipped with its reason where it cannot run.
 *
 *   bench-recorder [EVENTS [THREADS]]     (section 1: default 2000000 events, 2 rings)
 * Section 2 takes COWSCOPE_BENCH_BURST_EVENTS (2000000) and
 * COWSCOPE_BENCH_PAIRS (5), and the paths meson sets: COWSCOPE_PROBE_PATH,
 * COWSCOPE_BURST_TARGET, COWSCOPE_LTTNG_TARGET (empty: not built).
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench-burst.h"
#include "cowscope-collector.h"
#include "cowscope-ring.h"
#include "cowscope-session-finalize.h"
#include "cowscope-session-writer.h"

static void
fill_event (CowTraceEvent *e, uint64_t i, uint32_t tid)
{
  memset (e, 0, sizeof *e);
  /* A mix like a training loop's: tensors, storages, contexts, clones. */
  static const uint16_t types[] = {
    COW_EVENT_TENSOR_NEW, COW_EVENT_STORAGE_NEW,  COW_EVENT_CONTEXT_REF,
    COW_EVENT_LAZY_CLONE, COW_EVENT_TENSOR_FREE,  COW_EVENT_STORAGE_FREE,
    COW_EVENT_MARK,       COW_EVENT_CONTEXT_UNREF
  };
  e->type = types[i % G_N_ELEMENTS (types)];
  e->op = (uint16_t) (i % COW_N_OPS);
  e->pid = (uint32_t) getpid ();
  e->tid = tid;
  e->time_ns = (int64_t) i * 100;
  for (int k = 0; k < 5; k++)
    e->v[k] = i * 5 + (uint64_t) k;
}

/* 1. The collector and writer on rings filled in advance. */
static int
bench_synthetic (uint64_t n, int threads)
{
  uint64_t per = n / (uint64_t) threads;
  uint64_t cap = 1;
  while (cap < per * 72 + 4096)
    cap <<= 1;
  if (cap > COWSCOPE_RING_MAX_CAPACITY)
    {
      fprintf (stderr,
               "bench-recorder: too many events for one ring per thread\n");
      return 2;
    }

  g_autofree char *dir = g_dir_make_tmp ("cowscope-bench-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "bench.cowscope", NULL);
  g_autofree char *bare = g_build_filename (dir, "bare.sqlite", NULL);

  CowscopeRing *rings[16];
  for (int t = 0; t < threads; t++)
    {
      CowError err = { 0 };
      rings[t] = cowscope_ring_new (cap, COWSCOPE_RING_DROP, &err);
      if (!rings[t])
        {
          fprintf (stderr, "bench-recorder: %s\n", err.message);
          return 1;
        }
      for (uint64_t i = 0; i < per; i++)
        {
          CowTraceEvent e;
          fill_event (&e, i * (uint64_t) threads + (uint64_t) t,
                      1000u + (uint32_t) t);
          cowscope_ring_write_event (rings[t], &e);
        }
    }

  /* The recorder's path: collector thread, writer, batched commits. */
  GError *error = NULL;
  CowscopeSessionWriter *w = cowscope_session_writer_create (path, TRUE, &error);
  if (!w)
    {
      fprintf (stderr, "bench-recorder: %s\n", error->message);
      return 1;
    }
  gint64 t0 = g_get_monotonic_time ();
  CowscopeCollector *c = cowscope_collector_new (w, FALSE);
  CowscopeProcessIdentity id = { .pid = (uint32_t) getpid (), .exe = "bench", .cmdline = "bench",
                                 .identity = "kernel" };
  cowscope_collector_add_process (c, &id, 0);
  for (int t = 0; t < threads; t++)
    {
      CowError err = { 0 };
      cowscope_collector_add_ring (
        c, (uint32_t) getpid (), 1000u + (uint32_t) t, "bench",
        cowscope_ring_map_fd (cowscope_ring_get_fd (rings[t]), &err));
    }
  CowscopeCollectorTotals totals;
  if (!cowscope_collector_finish (c, &totals, &error))
    {
      fprintf (stderr, "bench-recorder: %s\n", error->message);
      return 1;
    }
  gint64 t1 = g_get_monotonic_time ();
  w = cowscope_collector_get_writer (c);
  if (!cowscope_session_finalize (cowscope_session_writer_get_db (w), path,
                                  &error))
    {
      fprintf (stderr, "bench-recorder: %s\n", error->message);
      return 1;
    }
  gint64 t2 = g_get_monotonic_time ();
  cowscope_collector_free (c);
  struct stat st;
  stat (path, &st);

  /* Bare SQLite: the same rows, one prepared INSERT, one transaction. */
  sqlite3 *db;
  sqlite3_open (bare, &db);
  sqlite3_exec (
    db,
    "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
    "CREATE TABLE events (seq INTEGER PRIMARY KEY, ts INTEGER NOT NULL,"
    " pid INTEGER NOT NULL, tid INTEGER NOT NULL, type INTEGER NOT NULL,"
    " op INTEGER NOT NULL, aux INTEGER NOT NULL, v0 INTEGER, v1 INTEGER,"
    " v2 INTEGER, v3 INTEGER, v4 INTEGER, stack_id INTEGER);",
    NULL, NULL, NULL);
  sqlite3_stmt *s;
  sqlite3_prepare_v2 (
    db,
    "INSERT INTO events (ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4,"
    " stack_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
    -1, &s, NULL);
  gint64 b0 = g_get_monotonic_time ();
  sqlite3_exec (db, "BEGIN", NULL, NULL, NULL);
  for (uint64_t i = 0; i < per * (uint64_t) threads; i++)
    {
      CowTraceEvent e;
      fill_event (&e, i, 1000u + (uint32_t) (i % (uint64_t) threads));
      sqlite3_bind_int64 (s, 1, e.time_ns);
      sqlite3_bind_int64 (s, 2, e.pid);
      sqlite3_bind_int64 (s, 3, e.tid);
      sqlite3_bind_int64 (s, 4, e.type);
      sqlite3_bind_int64 (s, 5, e.op);
      sqlite3_bind_int64 (s, 6, e.aux);
      for (int k = 0; k < 5; k++)
        sqlite3_bind_int64 (s, 7 + k, (sqlite3_int64) e.v[k]);
      sqlite3_step (s);
      sqlite3_reset (s);
    }
  sqlite3_exec (db, "COMMIT", NULL, NULL, NULL);
  gint64 b1 = g_get_monotonic_time ();
  sqlite3_finalize (s);
  sqlite3_close (db);

  double rec_s = (double) (t1 - t0) / 1e6, bare_s = (double) (b1 - b0) / 1e6;
  printf ("1. Drain and write of rings filled in advance\n");
  printf ("events                      %" G_GUINT64_FORMAT
          " in %d rings (%" G_GUINT64_FORMAT " stored, %" G_GUINT64_FORMAT
          " dropped)\n",
          totals.produced, threads, totals.stored, totals.dropped);
  printf ("recorder drain+write        %.3f s  %.0f events/s\n", rec_s,
          (double) totals.stored / rec_s);
  printf ("bare SQLite, one txn        %.3f s  %.0f rows/s\n", bare_s,
          (double) (per * (uint64_t) threads) / bare_s);
  printf ("finalize (tables, indexes)  %.3f s\n", (double) (t2 - t1) / 1e6);
  printf ("session size                %.1f bytes/event\n",
          (double) st.st_size / (double) totals.stored);

  for (int t = 0; t < threads; t++)
    cowscope_ring_free (rings[t]);
  g_remove (path);
  g_remove (bare);
  g_autofree char *wal = g_strconcat (bare, "-wal", NULL);
  g_autofree char *shm = g_strconcat (bare, "-shm", NULL);
  g_remove (wal);
  g_remove (shm);
  g_rmdir (dir);
  return 0;
}

#define MAX_PAIRS 1000

/* 2. A burst recorded end to end, beside LTTng-UST. */
static int
bench_burst_peer (void)
{
  guint64 events =
    bench_env_count ("COWSCOPE_BENCH_BURST_EVENTS", 2000000, 1000, 100000000);
  guint n = (guint) bench_env_count ("COWSCOPE_BENCH_PAIRS", 5, 1, MAX_PAIRS);
  g_autofree char *dir = g_dir_make_tmp ("cowscope-bench-XXXXXX", NULL);
  BenchBurstPairs pairs;
  g_autoptr (GError) error = NULL;
  if (dir == NULL || !bench_burst_pairs_run (&pairs, events, n, dir, &error))
    {
      fprintf (stderr, "bench-recorder: the Cowscope burst failed: %s\n",
               error ? error->message : "no temporary directory");
      return 1;
    }
  g_rmdir (dir);

  printf ("\n2. A burst of %" G_GUINT64_FORMAT
          " events at full speed, recorded end to end beside"
          " LTTng-UST\n   (medians of %u interleaved pairs; ratio: median of "
          "the per-pair"
          " Cowscope/LTTng)\n",
          events, n);
  bench_print_burst_setup (&pairs);

  static double c_cpu[MAX_PAIRS], c_cpu_rec[MAX_PAIRS], c_kept[MAX_PAIRS],
    c_kept_n[MAX_PAIRS], c_ready[MAX_PAIRS], c_drained[MAX_PAIRS];
  static double l_cpu[MAX_PAIRS], l_cpu_rec[MAX_PAIRS], l_kept[MAX_PAIRS],
    l_kept_n[MAX_PAIRS], l_ready[MAX_PAIRS], l_drained[MAX_PAIRS],
    l_sessiond[MAX_PAIRS];
  for (guint i = 0; i < n; i++)
    {
      const BenchBurstRun *c = &pairs.cowscope[i];
      double stored = (double) MAX (c->totals.stored, 1);
      c_cpu[i] = (double) c->recorder_cpu_ns / stored;
      c_cpu_rec[i] = (double) (c->recorder_cpu_ns - c->finalize_cpu_ns) / stored;
      c_kept[i] =
        100.0 * (double) c->totals.stored / (double) MAX (c->totals.produced, 1);
      c_kept_n[i] = (double) c->totals.stored;
      c_drained[i] = (double) c->drained_ns / 1e9;
      c_ready[i] = (double) c->ready_ns / 1e9;
      if (pairs.lttng == NULL)
        continue;
      const LttngPeerRun *l = &pairs.lttng[i];
      double kept = (double) MAX (l->kept, 1);
      /* LTTng's consumer has no finalize step: its data is complete once
       * `lttng stop` returns, so both its figures are the same. */
      l_cpu[i] = l_cpu_rec[i] = (double) l->consumer_cpu_ns / kept;
      l_sessiond[i] = (double) l->sessiond_cpu_ns / kept;
      l_kept[i] = 100.0 * (double) l->kept / (double) MAX (l->target.events, 1);
      l_kept_n[i] = (double) l->kept;
      l_drained[i] = l_ready[i] = (double) l->complete_ns / 1e9;
    }
  gboolean with = pairs.lttng != NULL;
  bench_print_peer_header ();
  bench_print_peer_row ("events kept", 0, c_kept_n, with ? l_kept_n : NULL, n);
  bench_print_peer_row ("events kept, % of produced", 1, c_kept,
                        with ? l_kept : NULL, n);
  bench_print_peer_row ("CPU per kept event, ns, while recording", 0, c_cpu_rec,
                        with ? l_cpu_rec : NULL, n);
  double cpu_ratio = bench_print_peer_row (
    "CPU per kept event, ns, until ready", 0, c_cpu, with ? l_cpu : NULL, n);
  bench_print_peer_row ("loop end to all events committed, s", 3, c_drained,
                        with ? l_drained : NULL, n);
  bench_print_peer_row ("loop end to a session ready, s", 3, c_ready,
                        with ? l_ready : NULL, n);
  printf (
    "   (Cowscope's CPU: every thread of the recorder embedded in this "
    "process, finalize\n"
    "    included in \"until ready\"; LTTng's: lttng-consumerd and its helper, "
    "from start\n"
    "    to destroy.  LTTng's data is ready when `lttng stop` returns.)\n");
  if (with)
    printf ("   (LTTng's session daemon spent a further %.1f ns of CPU per "
            "kept event, median.)\n",
            bench_median (l_sessiond, n));
  guint lossless = 0;
  for (guint i = 0; i < n; i++)
    lossless += pairs.cowscope[i].totals.dropped == 0;
  printf (
    "   Cowscope loses nothing with its defaults: in %u of %u bursts: %s\n",
    lossless, n, lossless == n ? "PASS" : "MISS");
  if (with)
    printf ("   Recorder CPU per stored event within 2\xc3\x97 LTTng's "
            "consumer: %.1f\xc3\x97: %s\n",
            cpu_ratio, cpu_ratio <= 2 ? "PASS" : "MISS");
  bench_burst_pairs_clear (&pairs);
  return 0;
}

int
main (int argc, char **argv)
{
  uint64_t n = argc > 1 ? g_ascii_strtoull (argv[1], NULL, 10) : 2000000;
  int threads = argc > 2 ? atoi (argv[2]) : 2;
  if (n == 0 || threads < 1 || threads > 16)
    {
      fprintf (stderr, "usage: bench-recorder [EVENTS [THREADS]]\n");
      return 2;
    }
  g_autofree char *load = bench_machine_load ();
  printf ("cowscope recorder (one run; at the start: %s)\n\n", load);
  int status = bench_synthetic (n, threads);
  if (status == 0)
    status = bench_burst_peer ();
  g_autofree char *load_end = bench_machine_load ();
  printf ("\n(at the end: %s)\n", load_end);
  return status;
}
