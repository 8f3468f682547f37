/* cowscope-wal-checkpointer.c — WAL checkpoints off the writer's thread. */
#include "cowscope-thread-priority.h"
#include "cowscope-wal-checkpointer.h"

#include <sqlite3.h>

/* Checkpoint once the WAL holds this many pages (SQLite's own default). */
#define CHECKPOINT_PAGES 1000

struct _CowscopeWalCheckpointer {
  sqlite3 *db;        /* our own connection */
  sqlite3 *writer_db; /* the writer's, whose WAL hook we hold */
  GThread *thread;
  GMutex lock;
  GCond cond;
  gboolean stop;    /* protected by lock */
  gboolean pending; /* protected by lock: the WAL is long enough */
};

/* Called by SQLite on the writer's thread after each commit: only flags
 * that the WAL grew (the checkpoint itself runs on our thread). */
static int
wal_hook (void *data, sqlite3 *db, const char *name, int pages)
{
  CowscopeWalCheckpointer *c = data;
  (void) db;
  (void) name;
  if (pages >= CHECKPOINT_PAGES)
    {
      g_mutex_lock (&c->lock);
      c->pending = TRUE;
      g_cond_signal (&c->cond);
      g_mutex_unlock (&c->lock);
    }
  return SQLITE_OK;
}

static gpointer
checkpointer_thread (gpointer data)
{
  CowscopeWalCheckpointer *c = data;
  cowscope_recorder_lower_thread_priority ();
  g_mutex_lock (&c->lock);
  for (;;)
    {
      while (!c->stop && !c->pending)
        g_cond_wait (&c->cond, &c->lock);
      if (c->stop)
        break;
      c->pending = FALSE;
      g_mutex_unlock (&c->lock);
      int log_pages = 0, done = 0;
      /* PASSIVE: copies what it can without waiting for the writer. */
      sqlite3_wal_checkpoint_v2 (c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &log_pages, &done);
      (void) done;
      (void) log_pages;
      g_mutex_lock (&c->lock);
    }
  g_mutex_unlock (&c->lock);
  return NULL;
}

CowscopeWalCheckpointer *
cowscope_wal_checkpointer_start (const char *path, sqlite3 *writer_db)
{
  sqlite3 *db = NULL;
  if (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
    {
      sqlite3_close (db);
      return NULL;
    }
  /* Never checkpoint from this connection's own commits (it makes none). */
  sqlite3_wal_autocheckpoint (db, 0);
  CowscopeWalCheckpointer *c = g_new0 (CowscopeWalCheckpointer, 1);
  c->db = db;
  c->writer_db = writer_db;
  g_mutex_init (&c->lock);
  g_cond_init (&c->cond);
  c->thread = g_thread_new ("cowscope-checkpoint", checkpointer_thread, c);
  /* Replaces the writer's automatic checkpoints. */
  sqlite3_wal_hook (writer_db, wal_hook, c);
  return c;
}

void
cowscope_wal_checkpointer_stop (CowscopeWalCheckpointer *c)
{
  if (!c)
    return;
  sqlite3_wal_hook (c->writer_db, NULL, NULL);
  sqlite3_wal_autocheckpoint (c->writer_db, CHECKPOINT_PAGES);
  g_mutex_lock (&c->lock);
  c->stop = TRUE;
  g_cond_signal (&c->cond);
  g_mutex_unlock (&c->lock);
  g_thread_join (c->thread);
  sqlite3_close (c->db);
  g_mutex_clear (&c->lock);
  g_cond_clear (&c->cond);
  g_free (c);
}
