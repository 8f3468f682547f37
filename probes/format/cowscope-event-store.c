/* cowscope-event-store.c — appending to and reading event_chunks (see
 * header). */
#include "cowscope-event-store.h"

#include <string.h>

/* ---- writing -------------------------------------------------------------- */

struct _CowscopeEventStore {
  sqlite3 *db;
  sqlite3_stmt *put;           /* INSERT OR REPLACE a chunk row */
  CowscopeEventBlock *pending; /* the events of the last, unfinished chunk */
  CowscopeEventEncoder *encoder;
  gint64 last_seq;             /* the greatest seq stored or pending (0: none) */
};

static const char put_sql[] =
  "INSERT OR REPLACE INTO event_chunks (first_seq, last_seq, n, min_ts, max_ts, sorted, types, data)"
  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";

static int
read_last_seq (CowscopeEventStore *s)
{
  sqlite3_stmt *q = NULL;
  int rc = sqlite3_prepare_v2 (s->db, "SELECT max (last_seq) FROM event_chunks", -1, &q, NULL);
  if (rc == SQLITE_OK && (rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      s->last_seq = sqlite3_column_int64 (q, 0);
      rc = SQLITE_OK;
    }
  sqlite3_finalize (q);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

CowscopeEventStore *
cowscope_event_store_new (sqlite3 *db, int *rc)
{
  CowscopeEventStore *s = g_new0 (CowscopeEventStore, 1);
  s->db = db;
  *rc = sqlite3_prepare_v3 (db, put_sql, -1, SQLITE_PREPARE_PERSISTENT, &s->put, NULL);
  if (*rc == SQLITE_OK)
    *rc = read_last_seq (s);
  if (*rc != SQLITE_OK)
    {
      cowscope_event_store_free (s);
      return NULL;
    }
  s->pending = cowscope_event_block_new (COWSCOPE_EVENT_CHUNK_EVENTS);
  s->encoder = cowscope_event_encoder_new ();
  return s;
}

void
cowscope_event_store_free (CowscopeEventStore *s)
{
  if (s == NULL)
    return;
  sqlite3_finalize (s->put);
  cowscope_event_block_unref (s->pending);
  cowscope_event_encoder_free (s->encoder);
  g_free (s);
}

gint64
cowscope_event_store_next_seq (const CowscopeEventStore *s)
{
  return s->last_seq + 1;
}

const CowscopeEventBlock *
cowscope_event_store_pending (const CowscopeEventStore *s)
{
  return s->pending;
}

/* Counts the chunk rows this process wrote.  A chunk rewritten in place
 * (finalize putting a session in time order) can keep its seq range, its
 * count and even its times: a decoded copy is trusted only while no
 * chunk was written since it was decoded. */
static gint chunk_writes;

/* Writes the pending events as the chunk row keyed by their first seq. */
static int
write_pending (CowscopeEventStore *s)
{
  const CowscopeEventBlock *b = s->pending;
  if (b->n == 0)
    return SQLITE_OK;
  g_atomic_int_inc (&chunk_writes);
  CowscopeEventSummary sum;
  cowscope_event_block_summary (b, b->n, &sum);
  gsize len;
  const guint8 *data = cowscope_event_encode (s->encoder, b, b->n, &len);
  sqlite3_stmt *q = s->put;
  sqlite3_bind_int64 (q, 1, b->col[COWSCOPE_EVENT_COL_SEQ][0]);
  sqlite3_bind_int64 (q, 2, b->col[COWSCOPE_EVENT_COL_SEQ][b->n - 1]);
  sqlite3_bind_int64 (q, 3, b->n);
  sqlite3_bind_int64 (q, 4, sum.min_ts);
  sqlite3_bind_int64 (q, 5, sum.max_ts);
  sqlite3_bind_int (q, 6, sum.sorted);
  sqlite3_bind_int64 (q, 7, (sqlite3_int64) sum.types);
  sqlite3_bind_blob (q, 8, data, (int) len, SQLITE_STATIC);
  int rc = sqlite3_step (q);
  sqlite3_reset (q);
  sqlite3_clear_bindings (q);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int
cowscope_event_store_append (CowscopeEventStore *s, const CowscopeEventRow *row)
{
  if (row->col[COWSCOPE_EVENT_COL_SEQ] <= s->last_seq)
    return SQLITE_CONSTRAINT;
  cowscope_event_block_append (s->pending, row);
  s->last_seq = row->col[COWSCOPE_EVENT_COL_SEQ];
  if (s->pending->n < COWSCOPE_EVENT_CHUNK_EVENTS)
    return SQLITE_OK;
  int rc = write_pending (s);
  cowscope_event_block_clear (s->pending);
  return rc;
}

int
cowscope_event_store_flush (CowscopeEventStore *s)
{
  return write_pending (s);
}

int
cowscope_event_store_forget_pending (CowscopeEventStore *s)
{
  cowscope_event_block_clear (s->pending);
  return read_last_seq (s);
}

/* ---- reading -------------------------------------------------------------- */

/* Decoded chunks kept per catalog: a scan back and forth over a chunk
 * edge, or a join reading two places, decodes each once. */
#define CACHED_CHUNKS 4

typedef struct {
  gint64 first_seq, n, last_seq; /* which chunk it holds (n 0: none) */
  gint writes;                    /* chunk_writes when it was decoded */
  CowscopeEventBlock *block;
  guint64 used;
} CachedChunk;

struct _CowscopeEventCatalog {
  sqlite3 *db;
  GArray *chunks; /* CowscopeChunkInfo in seq order */
  gint64 n_events;
  gboolean sorted;
  gboolean loaded;
  int data_version;
  sqlite3_int64 changes;
  CachedChunk cache[CACHED_CHUNKS];
  guint64 clock;
};

CowscopeEventCatalog *
cowscope_event_catalog_new (sqlite3 *db)
{
  CowscopeEventCatalog *c = g_new0 (CowscopeEventCatalog, 1);
  c->db = db;
  c->chunks = g_array_new (FALSE, FALSE, sizeof (CowscopeChunkInfo));
  return c;
}

void
cowscope_event_catalog_free (CowscopeEventCatalog *c)
{
  if (c == NULL)
    return;
  g_array_unref (c->chunks);
  for (guint i = 0; i < CACHED_CHUNKS; i++)
    cowscope_event_block_unref (c->cache[i].block);
  g_free (c);
}

/* The catalog keeps no prepared statement between calls: a caller may
 * finalize every statement of its connection (sqlite3_next_stmt()) when
 * it puts the connection back in a pool. */

/* Changes when another connection commits (PRAGMA data_version, without
 * a statement). */
static int
query_data_version (sqlite3 *db, int *version)
{
  unsigned int v = 0;
  int rc = sqlite3_file_control (db, "main", SQLITE_FCNTL_DATA_VERSION, &v);
  *version = (int) v;
  return rc;
}

/* Forgets a cached chunk whose row changed (the tail chunk grows) or may
 * have: every one when another connection committed (it may have
 * rewritten chunks in place, see chunk_writes). */
static void
drop_stale_cache (CowscopeEventCatalog *c, gboolean other_commit)
{
  for (guint i = 0; i < CACHED_CHUNKS; i++)
    {
      CachedChunk *k = &c->cache[i];
      if (k->n == 0)
        continue;
      if (other_commit)
        {
          k->n = 0;
          continue;
        }
      guint at = cowscope_event_catalog_find_seq (c, k->first_seq);
      const CowscopeChunkInfo *info = at < c->chunks->len
                                        ? &g_array_index (c->chunks, CowscopeChunkInfo, at) : NULL;
      if (info == NULL || info->first_seq != k->first_seq || info->n != k->n
          || info->last_seq != k->last_seq)
        k->n = 0;
    }
}

int
cowscope_event_catalog_refresh (CowscopeEventCatalog *c)
{
  int version = 0;
  int rc = query_data_version (c->db, &version);
  if (rc != SQLITE_OK)
    return rc;
  sqlite3_int64 changes = sqlite3_total_changes64 (c->db);
  if (c->loaded && version == c->data_version && changes == c->changes)
    return SQLITE_OK;
  sqlite3_stmt *q = NULL;
  rc = sqlite3_prepare_v2 (c->db,
                           "SELECT first_seq, last_seq, n, min_ts, max_ts, sorted, types"
                           " FROM event_chunks ORDER BY first_seq", -1, &q, NULL);
  if (rc != SQLITE_OK)
    return rc;
  g_array_set_size (c->chunks, 0);
  c->n_events = 0;
  c->sorted = TRUE;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      CowscopeChunkInfo info = {
        .first_seq = sqlite3_column_int64 (q, 0),
        .last_seq = sqlite3_column_int64 (q, 1),
        .n = sqlite3_column_int64 (q, 2),
        .min_ts = sqlite3_column_int64 (q, 3),
        .max_ts = sqlite3_column_int64 (q, 4),
        .sorted = sqlite3_column_int (q, 5) != 0,
        .types = (guint64) sqlite3_column_int64 (q, 6),
      };
      /* A row that contradicts itself or overlaps the one before is left
       * to the decoder to report; for finding chunks it is unordered. */
      const CowscopeChunkInfo *prev = c->chunks->len > 0
        ? &g_array_index (c->chunks, CowscopeChunkInfo, c->chunks->len - 1) : NULL;
      if (!info.sorted || info.min_ts > info.max_ts || (prev && prev->max_ts > info.min_ts))
        c->sorted = FALSE;
      if (info.n < 1 || info.last_seq < info.first_seq || (prev && prev->last_seq >= info.first_seq))
        c->sorted = FALSE;
      c->n_events += MAX (info.n, 0);
      g_array_append_val (c->chunks, info);
    }
  sqlite3_finalize (q);
  if (rc != SQLITE_DONE)
    return rc;
  gboolean other_commit = c->loaded && version != c->data_version;
  c->loaded = TRUE;
  c->data_version = version;
  c->changes = changes;
  drop_stale_cache (c, other_commit);
  return SQLITE_OK;
}

guint
cowscope_event_catalog_get_n_chunks (const CowscopeEventCatalog *c)
{
  return c->chunks->len;
}

const CowscopeChunkInfo *
cowscope_event_catalog_get_chunk (const CowscopeEventCatalog *c, guint i)
{
  return i < c->chunks->len ? &g_array_index (c->chunks, CowscopeChunkInfo, i) : NULL;
}

gint64
cowscope_event_catalog_get_n_events (const CowscopeEventCatalog *c)
{
  return c->n_events;
}

gboolean
cowscope_event_catalog_is_sorted (const CowscopeEventCatalog *c)
{
  return c->sorted;
}

guint
cowscope_event_catalog_find_seq (const CowscopeEventCatalog *c, gint64 seq)
{
  guint lo = 0, hi = c->chunks->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (c->chunks, CowscopeChunkInfo, mid).last_seq < seq)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

guint
cowscope_event_catalog_find_ts (const CowscopeEventCatalog *c, gint64 ts)
{
  guint lo = 0, hi = c->chunks->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (g_array_index (c->chunks, CowscopeChunkInfo, mid).max_ts < ts)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

CowscopeEventBlock *
cowscope_event_catalog_read (CowscopeEventCatalog *c, guint i, int *rc, const char **what)
{
  *rc = SQLITE_OK;
  *what = NULL;
  const CowscopeChunkInfo *info = cowscope_event_catalog_get_chunk (c, i);
  if (info == NULL)
    {
      *rc = SQLITE_RANGE;
      return NULL;
    }
  /* Rows are in first_seq order: one that starts at or before the end
   * of the one before holds some events twice (each chunk may be sound
   * and true to its own row). */
  const CowscopeChunkInfo *before = i > 0 ? cowscope_event_catalog_get_chunk (c, i - 1) : NULL;
  if (before != NULL && before->last_seq >= info->first_seq)
    {
      *rc = SQLITE_CORRUPT;
      *what = "its events overlap the chunk before";
      return NULL;
    }
  CachedChunk *victim = &c->cache[0];
  for (guint k = 0; k < CACHED_CHUNKS; k++)
    {
      CachedChunk *e = &c->cache[k];
      if (e->n != 0 && e->first_seq == info->first_seq && e->n == info->n
          && e->last_seq == info->last_seq && e->writes == g_atomic_int_get (&chunk_writes))
        {
          e->used = ++c->clock;
          return e->block;
        }
      if (e->used < victim->used)
        victim = e;
    }
  sqlite3_stmt *read = NULL;
  *rc = sqlite3_prepare_v2 (c->db, "SELECT data FROM event_chunks WHERE first_seq = ?1", -1,
                            &read, NULL);
  if (*rc != SQLITE_OK)
    return NULL;
  sqlite3_bind_int64 (read, 1, info->first_seq);
  int step = sqlite3_step (read);
  if (step != SQLITE_ROW)
    {
      sqlite3_finalize (read);
      *rc = step == SQLITE_DONE ? SQLITE_CORRUPT : step;
      *what = step == SQLITE_DONE ? "an event chunk went missing" : NULL;
      return NULL;
    }
  /* A block a reader still holds is left to it. */
  if (victim->block != NULL && victim->block->ref_count > 1)
    g_clear_pointer (&victim->block, cowscope_event_block_unref);
  if (victim->block == NULL)
    victim->block = cowscope_event_block_new (COWSCOPE_EVENT_CHUNK_EVENTS);
  victim->n = 0;
  gint writes = g_atomic_int_get (&chunk_writes);
  CowscopeEventChunkHeader expect = { info->first_seq, info->last_seq, info->n };
  gboolean ok = sqlite3_column_type (read, 0) == SQLITE_BLOB
                && cowscope_event_decode (sqlite3_column_blob (read, 0),
                                          (gsize) sqlite3_column_bytes (read, 0), &expect,
                                          victim->block, what);
  sqlite3_finalize (read);
  if (ok)
    {
      /* Readers skip chunks by these without decoding them: a row that
       * lies about them would hide events from a query by time or type. */
      CowscopeEventSummary sum;
      cowscope_event_block_summary (victim->block, victim->block->n, &sum);
      if (sum.min_ts != info->min_ts || sum.max_ts != info->max_ts || sum.types != info->types
          || sum.sorted != info->sorted)
        {
          *what = "an event chunk's times or types are not what its row says";
          cowscope_event_block_clear (victim->block);
          ok = FALSE;
        }
    }
  if (!ok)
    {
      if (*what == NULL)
        *what = "an event chunk is not a BLOB";
      *rc = SQLITE_CORRUPT;
      return NULL;
    }
  victim->first_seq = info->first_seq;
  victim->n = info->n;
  victim->last_seq = info->last_seq;
  victim->writes = writes;
  victim->used = ++c->clock;
  return victim->block;
}
