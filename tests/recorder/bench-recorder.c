/* bench-recorder.c — the recorder's write rate into SQLite.
 *
 * Fills rings with N engine events (as a target would, before the
 * recorder looks), then times the collector draining and writing them
 * (WAL, batched commits, prepared inserts), beside bare SQLite inserts of
 * the same rows in one transaction, and the finalization that follows,
 * and prints bytes per event of the finished session.
 *
 *   bench-recorder [EVENTS [THREADS]]     (default 2000000 events, 2 rings)
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cowscope-collector.h"
#include "cowscope-ring.h"
#include "cowscope-session-finalize.h"
#include "cowscope-session-writer.h"

static void
fill_event (CowTraceEvent *e, uint64_t i, uint32_t tid)
{
  memset (e, 0, sizeof *e);
  /* A mix like a training loop's: tensors, storages, contexts, clones. */
  static const uint16_t types[] = { COW_EVENT_TENSOR_NEW, COW_EVENT_STORAGE_NEW,
                                    COW_EVENT_CONTEXT_REF, COW_EVENT_LAZY_CLONE,
                                    COW_EVENT_TENSOR_FREE, COW_EVENT_STORAGE_FREE,
                                    COW_EVENT_MARK, COW_EVENT_CONTEXT_UNREF };
  e->type = types[i % G_N_ELEMENTS (types)];
  e->op = (uint16_t) (i % COW_N_OPS);
  e->pid = (uint32_t) getpid ();
  e->tid = tid;
  e->time_ns = (int64_t) i * 100;
  for (int k = 0; k < 5; k++)
    e->v[k] = i * 5 + (uint64_t) k;
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
  uint64_t per = n / (uint64_t) threads;
  uint64_t cap = 1;
  while (cap < per * 72 + 4096)
    cap <<= 1;
  if (cap > COWSCOPE_RING_MAX_CAPACITY)
    {
      fprintf (stderr, "bench-recorder: too many events for one ring per thread\n");
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
          fill_event (&e, i * (uint64_t) threads + (uint64_t) t, 1000u + (uint32_t) t);
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
      cowscope_collector_add_ring (c, (uint32_t) getpid (), 1000u + (uint32_t) t, "bench",
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
  if (!cowscope_session_finalize (cowscope_session_writer_get_db (w), path, &error))
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
  sqlite3_exec (db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;"
                    "CREATE TABLE events (seq INTEGER PRIMARY KEY, ts INTEGER NOT NULL,"
                    " pid INTEGER NOT NULL, tid INTEGER NOT NULL, type INTEGER NOT NULL,"
                    " op INTEGER NOT NULL, aux INTEGER NOT NULL, v0 INTEGER, v1 INTEGER,"
                    " v2 INTEGER, v3 INTEGER, v4 INTEGER, stack_id INTEGER);",
                NULL, NULL, NULL);
  sqlite3_stmt *s;
  sqlite3_prepare_v2 (db, "INSERT INTO events (ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4,"
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
  printf ("events                      %" G_GUINT64_FORMAT " in %d rings (%" G_GUINT64_FORMAT
          " stored, %" G_GUINT64_FORMAT " dropped)\n",
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
