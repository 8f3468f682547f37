/* cowscope-packed-lane.c — lazily decoded timeline lanes (see header;
 * the BLOB layout is README.md's, "Session database", timeline_chunks). */
#include "cowscope-packed-lane.h"

#include <glib/gi18n-lib.h>
#include <sqlite3.h>

#include "cowscope-format-open.h"
#include "cowscope-format-timeline.h"
#include "cowscope-lane-pixels.h"
#include "cowscope-packed-records.h"

#define BLOCK_SHIFT 6
#define BLOCK (1u << BLOCK_SHIFT)

/* A decoded chunk used this recently is not evicted for another one: a
 * frame whose chunks outgrow the budget (the whole session of a big
 * recording) keeps the chunks it found cached and decodes the rest
 * without keeping them, instead of evicting its own chunks one after the
 * other (LRU's worst case: every frame would decode everything again). */
#define HOT_US (150 * 1000)

/* 64 instants of a decoded chunk: where they start in the BLOB, their
 * times, and their counts per kind and bytes. */
typedef struct {
  gint64 first_ts, last_ts;
  gint64 last_id;       /* with last_ts, the decoder's state after the block */
  guint64 bytes;
  guint32 offset;       /* of the block's first record in the BLOB */
  guint8 n;
  guint8 counts[COWSCOPE_N_ITEM_KINDS];
} Block;

/* A decoded chunk: immutable once built, shared by reference. */
typedef struct {
  gint refs;            /* atomic */
  gint64 key;           /* lane id << 32 | chunk */
  guint8 *blob;
  gsize len;
  Block *blocks;
  guint n_blocks;
  guint64 kind_bytes[COWSCOPE_N_ITEM_KINDS]; /* of the whole chunk */
  gsize cost;           /* bytes charged to the store */
  gint64 used_us;       /* monotonic time of the last lookup (store->lock) */
  GList link;           /* in the store's LRU while the store holds it */
} Decoded;

enum { CHUNK_UNKNOWN, CHUNK_SUMMED, CHUNK_DAMAGED };

/* What a lane keeps of one chunk for good. */
typedef struct {
  gint64 first_ts, last_ts;
  guint32 n;
  guint32 chunk;
  guint8 state;         /* CHUNK_*; state, counts and bytes: store->lock */
  guint64 bytes;
  guint32 counts[COWSCOPE_N_ITEM_KINDS];
  guint64 kind_bytes[COWSCOPE_N_ITEM_KINDS];
} Chunk;

struct _CowscopePackedLane {
  CowscopeChunkStore *store;
  gint64 lane_id;
  gboolean cuda;
  GArray *chunks;       /* Chunk, in time order */
  guint64 n;
};

struct _CowscopeChunkStore {
  gint refs;            /* atomic */
  char *path;           /* what the store's connection opens */
  char *name;           /* the session as messages name it */
  guint8 cuda_kinds[256];
  guint8 event_kinds[256];       /* thread lanes: by event type */
  guint8 materialize_kinds[256]; /* materialize_end: by the low byte of aux */

  GMutex db_lock;       /* protects db and select: one reader of the file */
  sqlite3 *db;
  sqlite3_stmt *select;

  GMutex lock;          /* protects everything below, and every Chunk's state;
                         * never held while a chunk is read or decoded, so a
                         * query that needs no decoding never waits for one */
  GHashTable *decoded;  /* &key -> Decoded* (the store's reference) */
  GQueue lru;           /* Decoded links, most recently used first */
  gsize used, budget;
  guint64 loads, hits, evictions;
  GError *error;        /* the first load error */
  gboolean error_taken;
};

/* ---- decoded chunks ----------------------------------------------------- */

static void
decoded_unref (Decoded *d)
{
  if (d == NULL || !g_atomic_int_dec_and_test (&d->refs))
    return;
  g_free (d->blob);
  g_free (d->blocks);
  g_free (d);
}

/* Reads one instant's record (cowscope-packed-records.h), updating @ts
 * and @id (deltas), and classifies it. */
static inline void
read_instant (const CowscopeChunkStore *store, gboolean cuda, CowscopePackedReader *r,
              gint64 *ts, gint64 *id, guint8 *kind, guint64 *bytes)
{
  CowscopeInstant in = { .ts = *ts, .id = *id };
  cowscope_instant_read (r, &in, cuda);
  *ts = in.ts;
  *id = in.id;
  if (cuda)
    *kind = store->cuda_kinds[in.code];
  else if (in.code == COW_EVENT_MATERIALIZE_END)
    *kind = store->materialize_kinds[in.aux];
  else
    *kind = store->event_kinds[in.code];
  *bytes = in.bytes;
}

/* Decodes @blob (@n instants from @first_ts to @last_ts, as the row
 * says) into its block directory; NULL when the BLOB disagrees. */
static Decoded *
decoded_new (const CowscopeChunkStore *store, gboolean cuda, const Chunk *c, const void *blob,
             gsize len)
{
  if (len == 0 || len > G_MAXUINT32)
    return NULL;
  Decoded *d = g_new0 (Decoded, 1);
  d->refs = 1;
  d->blob = g_memdup2 (blob, len);
  d->len = len;
  d->n_blocks = (c->n + BLOCK - 1) / BLOCK;
  d->blocks = g_new0 (Block, d->n_blocks);
  d->cost = sizeof *d + len + d->n_blocks * sizeof (Block);

  CowscopePackedReader r;
  cowscope_packed_reader_init (&r, d->blob, len);
  gint64 ts = 0, id = 0;
  Block *b = NULL;
  for (guint32 i = 0; i < c->n; i++)
    {
      if (cowscope_packed_reader_done (&r))
        goto damaged;
      if ((i & (BLOCK - 1)) == 0)
        {
          b = &d->blocks[i >> BLOCK_SHIFT];
          b->offset = (guint32) (r.p - d->blob);
        }
      gint64 prev = ts;
      guint8 kind;
      guint64 bytes;
      read_instant (store, cuda, &r, &ts, &id, &kind, &bytes);
      if (!cowscope_packed_reader_ok (&r) || (i > 0 && ts < prev))
        goto damaged;
      if (b->n == 0)
        b->first_ts = ts;
      b->last_ts = ts;
      b->last_id = id;
      b->n++;
      b->counts[kind < COWSCOPE_N_ITEM_KINDS ? kind : 0]++;
      b->bytes += bytes;
      d->kind_bytes[kind < COWSCOPE_N_ITEM_KINDS ? kind : 0] += bytes;
    }
  if (!cowscope_packed_reader_done (&r) || d->blocks[0].first_ts != c->first_ts
      || d->blocks[d->n_blocks - 1].last_ts != c->last_ts)
    goto damaged;
  return d;

damaged:
  decoded_unref (d);
  return NULL;
}

/* ---- the store ------------------------------------------------------------ */

CowscopeChunkStore *
cowscope_chunk_store_new (const char *path, const char *name, const guint8 cuda_kinds[256])
{
  CowscopeChunkStore *store = g_new0 (CowscopeChunkStore, 1);
  store->refs = 1;
  store->path = g_strdup (path);
  store->name = g_strdup (name);
  memcpy (store->cuda_kinds, cuda_kinds, sizeof store->cuda_kinds);
  for (guint i = 0; i < 256; i++)
    {
      store->event_kinds[i] = cowscope_timeline_event_kind (i, 0);
      store->materialize_kinds[i] = cowscope_timeline_event_kind (COW_EVENT_MATERIALIZE_END, i);
    }
  g_mutex_init (&store->lock);
  g_mutex_init (&store->db_lock);
  store->decoded = g_hash_table_new (g_int64_hash, g_int64_equal);
  g_queue_init (&store->lru);
  store->budget = COWSCOPE_CHUNK_STORE_DEFAULT_BUDGET;
  return store;
}

CowscopeChunkStore *
cowscope_chunk_store_ref (CowscopeChunkStore *store)
{
  g_atomic_int_inc (&store->refs);
  return store;
}

void
cowscope_chunk_store_unref (CowscopeChunkStore *store)
{
  if (store == NULL || !g_atomic_int_dec_and_test (&store->refs))
    return;
  GList *link;
  while ((link = g_queue_pop_head_link (&store->lru)) != NULL)
    decoded_unref (link->data);
  g_hash_table_unref (store->decoded);
  g_clear_pointer (&store->select, sqlite3_finalize);
  g_clear_pointer (&store->db, sqlite3_close);
  g_clear_error (&store->error);
  g_mutex_clear (&store->lock);
  g_mutex_clear (&store->db_lock);
  g_free (store->path);
  g_free (store->name);
  g_free (store);
}

/* Drops least recently used chunks until @room more bytes fit in the
 * budget or only @keep chunks remain, but none used in the last HOT_US
 * unless @all. */
static void
evict_locked (CowscopeChunkStore *store, gsize room, gboolean all, guint keep)
{
  gint64 hot = g_get_monotonic_time () - HOT_US;
  while (store->used + room > store->budget && store->lru.length > keep)
    {
      if (!all && ((Decoded *) store->lru.tail->data)->used_us > hot)
        break;
      GList *link = g_queue_pop_tail_link (&store->lru);
      Decoded *d = link->data;
      g_hash_table_remove (store->decoded, &d->key);
      store->used -= d->cost;
      store->evictions++;
      decoded_unref (d);
    }
}

void
cowscope_chunk_store_set_budget (CowscopeChunkStore *store, gsize bytes)
{
  g_mutex_lock (&store->lock);
  store->budget = bytes;
  evict_locked (store, 0, TRUE, 1);
  g_mutex_unlock (&store->lock);
}

void
cowscope_chunk_store_get_stats (CowscopeChunkStore *store, CowscopeChunkStoreStats *stats)
{
  g_mutex_lock (&store->lock);
  stats->budget = store->budget;
  stats->used = store->used;
  stats->n_chunks = store->lru.length;
  stats->loads = store->loads;
  stats->hits = store->hits;
  stats->evictions = store->evictions;
  g_mutex_unlock (&store->lock);
}

GError *
cowscope_chunk_store_take_error (CowscopeChunkStore *store)
{
  g_mutex_lock (&store->lock);
  GError *error = NULL;
  if (store->error != NULL && !store->error_taken)
    {
      error = g_error_copy (store->error);
      store->error_taken = TRUE;
    }
  g_mutex_unlock (&store->lock);
  return error;
}

/* Reads and decodes chunk @c of @lane (store->db_lock held; @c's row
 * values never change); NULL with @error. */
static Decoded *
load_locked (CowscopeChunkStore *store, const CowscopePackedLane *lane, const Chunk *c,
             GError **error)
{
  if (store->db == NULL)
    {
      store->db = cowscope_format_open (store->path, COWSCOPE_FORMAT_OPEN_FINALIZED, NULL, error);
      if (store->db == NULL)
        return NULL;
    }
  if (store->select == NULL)
    {
      store->select = cowscope_format_statement (
        store->db, store->name, "SELECT instants FROM timeline_chunks WHERE lane = ?1 AND chunk = ?2",
        error);
      if (store->select == NULL)
        return NULL;
    }
  sqlite3_stmt *q = store->select;
  sqlite3_reset (q);
  sqlite3_bind_int64 (q, 1, lane->lane_id);
  sqlite3_bind_int64 (q, 2, c->chunk);
  int rc = sqlite3_step (q);
  Decoded *d = NULL;
  if (rc == SQLITE_ROW)
    d = decoded_new (store, lane->cuda, c, sqlite3_column_blob (q, 0),
                     (gsize) sqlite3_column_bytes (q, 0));
  else if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, store->db, rc, store->name, "timeline_chunks");
      sqlite3_reset (q);
      return NULL;
    }
  sqlite3_reset (q);
  if (d == NULL)
    {
      g_autofree char *what = g_strdup_printf ("timeline lane %" G_GINT64_FORMAT ", chunk %u",
                                               lane->lane_id, c->chunk);
      g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
                   _("The session “%s” is damaged (%s)"), store->name, what);
      return NULL;
    }
  d->key = lane->lane_id << 32 | c->chunk;
  d->link.data = d;
  return d;
}

/* Chunk @c of @lane from the store (a new reference; store->lock held),
 * or NULL when it is not decoded there. */
static Decoded *
store_lookup_locked (CowscopeChunkStore *store, const CowscopePackedLane *lane, const Chunk *c)
{
  gint64 key = lane->lane_id << 32 | c->chunk;
  Decoded *d = g_hash_table_lookup (store->decoded, &key);
  if (d == NULL)
    return NULL;
  store->hits++;
  d->used_us = g_get_monotonic_time ();
  g_queue_unlink (&store->lru, &d->link);
  g_queue_push_head_link (&store->lru, &d->link);
  g_atomic_int_inc (&d->refs);
  return d;
}

/* Chunk @c of @lane decoded (a new reference), or NULL when it is
 * damaged.  The chunk is read and decoded outside store->lock (under
 * store->db_lock): other queries go on meanwhile. */
static Decoded *
store_get (CowscopeChunkStore *store, const CowscopePackedLane *lane, Chunk *c)
{
  g_mutex_lock (&store->lock);
  Decoded *d = c->state == CHUNK_DAMAGED ? NULL : store_lookup_locked (store, lane, c);
  gboolean done = d != NULL || c->state == CHUNK_DAMAGED;
  g_mutex_unlock (&store->lock);
  if (done)
    return d;

  GError *error = NULL;
  g_mutex_lock (&store->db_lock);
  /* Another thread may have decoded it while this one waited. */
  g_mutex_lock (&store->lock);
  d = store_lookup_locked (store, lane, c);
  g_mutex_unlock (&store->lock);
  if (d == NULL)
    d = load_locked (store, lane, c, &error);
  else
    {
      g_mutex_unlock (&store->db_lock);
      return d;
    }
  g_mutex_unlock (&store->db_lock);

  g_mutex_lock (&store->lock);
  store->loads++;
  if (d == NULL)
    {
      g_debug ("%s", error->message);
      c->state = CHUNK_DAMAGED;
      if (store->error == NULL)
        store->error = error;
      else
        g_error_free (error);
      goto out;
    }
  if (c->state == CHUNK_UNKNOWN)
    {
      memset (c->counts, 0, sizeof c->counts);
      c->bytes = 0;
      memcpy (c->kind_bytes, d->kind_bytes, sizeof c->kind_bytes);
      for (guint b = 0; b < d->n_blocks; b++)
        {
          for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
            c->counts[k] += d->blocks[b].counts[k];
          c->bytes += d->blocks[b].bytes;
        }
      c->state = CHUNK_SUMMED;
    }
  d->used_us = g_get_monotonic_time ();
  evict_locked (store, d->cost, FALSE, 0);
  if (store->used + d->cost > store->budget && store->lru.length > 0)
    {
      /* Everything held is in use: decode this one for the caller only. */
      store->evictions++;
      goto out;
    }
  g_hash_table_insert (store->decoded, &d->key, d);
  g_queue_push_head_link (&store->lru, &d->link);
  store->used += d->cost;
  g_atomic_int_inc (&d->refs); /* the caller's */
out:
  g_mutex_unlock (&store->lock);
  return d;
}

/* ---- lanes ------------------------------------------------------------------ */

CowscopePackedLane *
cowscope_packed_lane_new (CowscopeChunkStore *store, gint64 lane_id, gboolean cuda)
{
  CowscopePackedLane *lane = g_new0 (CowscopePackedLane, 1);
  lane->store = cowscope_chunk_store_ref (store);
  lane->lane_id = lane_id;
  lane->cuda = cuda;
  lane->chunks = g_array_new (FALSE, TRUE, sizeof (Chunk));
  return lane;
}

void
cowscope_packed_lane_free (CowscopePackedLane *lane)
{
  if (lane == NULL)
    return;
  g_array_unref (lane->chunks);
  cowscope_chunk_store_unref (lane->store);
  g_free (lane);
}

gboolean
cowscope_packed_lane_add_chunk (CowscopePackedLane *lane, gint64 chunk, gint64 first_ts,
                                gint64 last_ts, gint64 n)
{
  if (n <= 0 || n > 1 << 20 || last_ts < first_ts || chunk != lane->chunks->len
      || lane->lane_id < 0 || lane->lane_id > G_MAXINT32)
    return FALSE;
  if (lane->chunks->len > 0
      && first_ts < g_array_index (lane->chunks, Chunk, lane->chunks->len - 1).last_ts)
    return FALSE;
  Chunk c = { .first_ts = first_ts, .last_ts = last_ts, .n = (guint32) n,
              .chunk = (guint32) chunk };
  g_array_append_val (lane->chunks, c);
  lane->n += (guint64) n;
  return TRUE;
}

guint64
cowscope_packed_lane_get_n (const CowscopePackedLane *lane)
{
  return lane->n;
}

/* The first chunk whose last instant is at or after @t. */
static guint
first_chunk (const CowscopePackedLane *lane, gint64 t)
{
  const Chunk *c = (const Chunk *) (gpointer) lane->chunks->data;
  guint lo = 0, hi = lane->chunks->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (c[mid].last_ts < t)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* The first block of @d whose last instant is at or after @t. */
static guint
first_block (const Decoded *d, gint64 t)
{
  guint lo = 0, hi = d->n_blocks;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      if (d->blocks[mid].last_ts < t)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* Calls @func on every instant of block @b with t0 <= ts < t1. */
#define FOR_EACH_INSTANT(store, lane, d, b, t0, t1, BODY)                           \
  G_STMT_START                                                                      \
  {                                                                                 \
    const Block *bl_ = &(d)->blocks[b];                                             \
    CowscopePackedReader r_;                                                        \
    cowscope_packed_reader_init (&r_, (d)->blob + bl_->offset, (d)->len - bl_->offset); \
    gint64 ts = (b) > 0 ? (d)->blocks[(b) - 1].last_ts : 0;                        \
    gint64 id = (b) > 0 ? (d)->blocks[(b) - 1].last_id : 0;                        \
    for (guint k_ = 0; k_ < bl_->n; k_++)                                           \
      {                                                                             \
        guint8 kind;                                                                \
        guint64 bytes;                                                              \
        read_instant ((store), (lane)->cuda, &r_, &ts, &id, &kind, &bytes);         \
        if (ts < (t0))                                                              \
          continue;                                                                 \
        if (ts >= (t1))                                                             \
          break;                                                                    \
        BODY;                                                                       \
      }                                                                             \
  }                                                                                 \
  G_STMT_END

guint64
cowscope_packed_lane_count (CowscopePackedLane *lane, gint64 t0, gint64 t1)
{
  if (t1 <= t0)
    return 0;
  guint64 total = 0;
  for (guint i = first_chunk (lane, t0); i < lane->chunks->len; i++)
    {
      Chunk *c = &g_array_index (lane->chunks, Chunk, i);
      if (c->first_ts >= t1)
        break;
      if (c->first_ts >= t0 && c->last_ts < t1)
        {
          g_mutex_lock (&lane->store->lock);
          gboolean damaged = c->state == CHUNK_DAMAGED;
          g_mutex_unlock (&lane->store->lock);
          total += damaged ? 0 : c->n;
          continue;
        }
      Decoded *d = store_get (lane->store, lane, c);
      if (d == NULL)
        continue;
      for (guint b = first_block (d, t0); b < d->n_blocks && d->blocks[b].first_ts < t1; b++)
        {
          if (d->blocks[b].first_ts >= t0 && d->blocks[b].last_ts < t1)
            total += d->blocks[b].n;
          else
            FOR_EACH_INSTANT (lane->store, lane, d, b, t0, t1, total++);
        }
      decoded_unref (d);
    }
  return total;
}

/* Adds chunk @c's kept totals to @sums (nothing for a damaged chunk);
 * FALSE when they are not known yet (the chunk was never decoded). */
static gboolean
add_chunk_sums (CowscopePackedLane *lane, const Chunk *c, CowscopeKindSums *sums)
{
  g_mutex_lock (&lane->store->lock);
  gboolean known = c->state != CHUNK_UNKNOWN;
  if (c->state == CHUNK_SUMMED)
    for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
      {
        sums->count[k] += c->counts[k];
        sums->bytes[k] += c->kind_bytes[k];
      }
  g_mutex_unlock (&lane->store->lock);
  return known;
}

/* Adds one instant to @sums. */
static inline void
add_instant_sums (CowscopeKindSums *sums, guint8 kind, guint64 bytes)
{
  guint k = kind < COWSCOPE_N_ITEM_KINDS ? kind : 0;
  sums->count[k]++;
  sums->bytes[k] += bytes;
}

/* Whole chunks from their kept totals (decoding a chunk once to learn
 * them); the chunks that t0 or t1 cut, instant by instant. */
void
cowscope_packed_lane_sum (CowscopePackedLane *lane, gint64 t0, gint64 t1, CowscopeKindSums *sums)
{
  if (t1 <= t0)
    return;
  for (guint i = first_chunk (lane, t0); i < lane->chunks->len; i++)
    {
      Chunk *c = &g_array_index (lane->chunks, Chunk, i);
      if (c->first_ts >= t1)
        break;
      gboolean whole = c->first_ts >= t0 && c->last_ts < t1;
      if (whole && add_chunk_sums (lane, c, sums))
        continue;
      Decoded *d = store_get (lane->store, lane, c);
      if (d == NULL)
        continue;
      if (whole)
        add_chunk_sums (lane, c, sums);
      else
        for (guint b = first_block (d, t0); b < d->n_blocks && d->blocks[b].first_ts < t1; b++)
          FOR_EACH_INSTANT (lane->store, lane, d, b, t0, t1, add_instant_sums (sums, kind, bytes));
      decoded_unref (d);
    }
}

/* The pixel of @t, trying the one being summed first. */
static inline guint
pixel_at (const CowscopePixelSum *sum, gint64 t)
{
  if (t >= sum->left && t < sum->right)
    return (guint) sum->p;
  return cowscope_pixels_of (sum->px, t);
}

/* Chunk @c of @lane if the store holds it decoded (a new reference),
 * else NULL; never reads the file. */
static Decoded *
store_peek (CowscopeChunkStore *store, const CowscopePackedLane *lane, const Chunk *c)
{
  g_mutex_lock (&store->lock);
  Decoded *d = c->state == CHUNK_DAMAGED ? NULL : store_lookup_locked (store, lane, c);
  g_mutex_unlock (&store->lock);
  return d;
}

/* Chunk @c's instants in [@px's t0, t1) as if they were spread evenly
 * over its time span (its row gives only that span and their number), in
 * buckets of kind COWSCOPE_ITEM_OTHER of at least two: what a query that
 * may not read the file draws until the chunk is decoded. */
static void
spread_chunk (CowscopePixelSum *sum, const CowscopePixels *px, const Chunk *c)
{
  gint64 first = MAX (c->first_ts, px->t0), last = MIN (c->last_ts, px->t1 - 1);
  if (last < first)
    return;
  double span = (double) (c->last_ts - c->first_ts + 1);
  guint32 counts[COWSCOPE_N_ITEM_KINDS] = { 0 };
  guint64 before = 0; /* instants put in pixels so far */
  for (guint p = cowscope_pixels_of (px, first); p < px->width; p++)
    {
      gint64 right = MIN (cowscope_pixels_edge (px, p + 1), last + 1);
      guint64 upto = (guint64) ((double) c->n * (double) (right - c->first_ts) / span);
      if (upto >= before + 2)
        {
          counts[COWSCOPE_ITEM_OTHER] = (guint32) (upto - before);
          cowscope_pixel_sum_add_many (sum, p, counts[COWSCOPE_ITEM_OTHER], counts, 0);
          before = upto;
        }
      if (right > last)
        break;
    }
}

/* The query; when @load is FALSE, a chunk that would have to be read is
 * spread instead (spread_chunk()) and the answer is FALSE (incomplete). */
static gboolean
query (CowscopePackedLane *lane, gint64 t0, gint64 t1, guint width, gboolean load, GArray *items)
{
  if (t1 <= t0 || width == 0)
    return TRUE;
  CowscopePixels px;
  cowscope_pixels_init (&px, t0, t1, width);
  CowscopePixelSum sum;
  cowscope_pixel_sum_init (&sum, &px, items);
  gboolean complete = TRUE;
  for (guint i = first_chunk (lane, t0); i < lane->chunks->len; i++)
    {
      Chunk *c = &g_array_index (lane->chunks, Chunk, i);
      if (c->first_ts >= t1)
        break;
      if (c->n >= 2 && c->first_ts >= t0 && c->last_ts < t1)
        {
          guint p = pixel_at (&sum, c->first_ts);
          if (c->last_ts < cowscope_pixels_edge (&px, p + 1))
            {
              /* The whole chunk under one pixel: its totals, once known. */
              guint32 counts[COWSCOPE_N_ITEM_KINDS];
              g_mutex_lock (&lane->store->lock);
              guint8 state = c->state;
              guint64 bytes = c->bytes;
              memcpy (counts, c->counts, sizeof counts);
              g_mutex_unlock (&lane->store->lock);
              if (state == CHUNK_DAMAGED)
                continue;
              if (state == CHUNK_SUMMED)
                {
                  cowscope_pixel_sum_add_many (&sum, p, c->n, counts, bytes);
                  continue;
                }
            }
        }
      Decoded *d = load ? store_get (lane->store, lane, c) : store_peek (lane->store, lane, c);
      if (d == NULL)
        {
          g_mutex_lock (&lane->store->lock);
          gboolean damaged = c->state == CHUNK_DAMAGED;
          g_mutex_unlock (&lane->store->lock);
          if (!damaged)
            {
              spread_chunk (&sum, &px, c);
              complete = FALSE;
            }
          continue;
        }
      for (guint b = first_block (d, t0); b < d->n_blocks && d->blocks[b].first_ts < t1; b++)
        {
          const Block *bl = &d->blocks[b];
          if (bl->n >= 2 && bl->first_ts >= t0 && bl->last_ts < t1)
            {
              guint p = pixel_at (&sum, bl->first_ts);
              if (bl->last_ts < cowscope_pixels_edge (&px, p + 1))
                {
                  cowscope_pixel_sum_add_many8 (&sum, p, bl->n, bl->counts, bl->bytes);
                  continue;
                }
            }
          FOR_EACH_INSTANT (lane->store, lane, d, b, t0, t1,
                            cowscope_pixel_sum_add (&sum, ts, id, kind, bytes));
        }
      decoded_unref (d);
    }
  cowscope_pixel_sum_flush (&sum);
  return complete;
}

void
cowscope_packed_lane_query (CowscopePackedLane *lane, gint64 t0, gint64 t1, guint width,
                            GArray *items)
{
  query (lane, t0, t1, width, TRUE, items);
}

gboolean
cowscope_packed_lane_query_cached (CowscopePackedLane *lane, gint64 t0, gint64 t1, guint width,
                                   GArray *items)
{
  return query (lane, t0, t1, width, FALSE, items);
}
