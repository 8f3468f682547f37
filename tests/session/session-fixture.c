/* session-fixture.c — synthetic session databases (see header). */
#include "session-fixture.h"

#include "cow-dtype.h"
#include "cowscope-format-index.h"
#include "cowscope-format-open.h"
#include "cowscope-format-schema.h"
#include "cowscope-format-vocabulary.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>

typedef struct Alloc Alloc;
typedef struct Context Context;
typedef struct Storage Storage;
typedef struct Tensor Tensor;

struct Alloc { guint64 id; guint64 nbytes; gint kind; gint64 new_ts; guint32 pid; gint op; };
struct Context {
  guint64 id; Alloc *alloc; guint64 alloc_id; guint64 first_storage; gint refcount, max_refcount;
  gint64 new_ts; guint32 pid; gint64 first_lc_seq;
};
struct Storage {
  guint64 id; Alloc *alloc; Context *ctx; guint64 birth_ctx; guint64 birth_alloc; guint64 src; guint64 nbytes;
  gint n_tensors; gint64 new_ts; guint32 pid; gint op; gint64 lc_seq;
};
struct Tensor {
  guint64 id; Storage *storage; guint64 base; gint64 numel; gint dtype; gint64 new_ts;
  guint32 pid; gint64 tid; gint op; char *name; guint index; /* in live array */
};

typedef struct {
  sqlite3 *db;
  GRand *rand;
  const SessionFixtureOptions *o;
  SessionFixtureInfo *info;
  gint64 seq;
  gint64 now;
  guint64 next_id[5];
  GPtrArray *live_tensors[5];        /* per process */
  GHashTable *allocs, *contexts, *storages; /* key: pid-folded id */
  guint64 n_live;
  gint64 cuda_id;
  sqlite3_stmt *ins_event, *ins_alloc, *ins_storage, *ins_tensor, *ins_context, *ins_lc,
    *ins_mat, *ins_viol, *ins_cuda, *ins_string;
  guint64 string_id;
  GError **error;
  gboolean failed;
} Gen;

#define PID(p) (1000u + 1000u * (p))

static gpointer
key_of (guint32 pid, guint64 id)
{
  return GSIZE_TO_POINTER (((guint64) pid << 44) ^ id);
}

static void
fail (Gen *g, const char *what)
{
  if (!g->failed)
    g_set_error (g->error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "fixture: %s: %s", what,
                 sqlite3_errmsg (g->db));
  g->failed = TRUE;
}

static void
run (Gen *g, sqlite3_stmt *stmt, const char *what)
{
  if (sqlite3_step (stmt) != SQLITE_DONE)
    fail (g, what);
  sqlite3_reset (stmt);
  sqlite3_clear_bindings (stmt);
}

static void
bind_opt (sqlite3_stmt *stmt, int col, gint64 value, gboolean present)
{
  if (present)
    sqlite3_bind_int64 (stmt, col, value);
  else
    sqlite3_bind_null (stmt, col);
}

/* Emits one event; returns its seq. */
static gint64
emit (Gen *g, guint32 pid, gint64 tid, int type, int op, gint64 aux, gint64 v0, gint64 v1,
      gint64 v2, gint64 v3, gint64 v4, gint64 stack)
{
  g->now += 50 + (gint64) g_rand_int_range (g->rand, 0, 400);
  g->seq++;
  if (g->seq == 1)
    g->info->start_ns = g->now;
  sqlite3_stmt *s = g->ins_event;
  sqlite3_bind_int64 (s, 1, g->seq);
  sqlite3_bind_int64 (s, 2, g->now);
  sqlite3_bind_int64 (s, 3, pid);
  sqlite3_bind_int64 (s, 4, tid);
  sqlite3_bind_int (s, 5, type);
  sqlite3_bind_int (s, 6, op);
  sqlite3_bind_int64 (s, 7, aux);
  sqlite3_bind_int64 (s, 8, v0);
  sqlite3_bind_int64 (s, 9, v1);
  sqlite3_bind_int64 (s, 10, v2);
  sqlite3_bind_int64 (s, 11, v3);
  sqlite3_bind_int64 (s, 12, v4);
  bind_opt (s, 13, stack, stack > 0);
  run (g, s, "event");
  return g->seq;
}

static guint64
next_id (Gen *g, guint p)
{
  return ++g->next_id[p];
}

/* ---- derived rows written when an object dies (or at the end) ---- */

static void
write_alloc (Gen *g, Alloc *a, gint64 free_ts)
{
  sqlite3_stmt *s = g->ins_alloc;
  sqlite3_bind_int64 (s, 1, a->pid);
  sqlite3_bind_int64 (s, 2, (gint64) a->id);
  sqlite3_bind_int (s, 3, a->kind);
  sqlite3_bind_int (s, 4, 0);
  sqlite3_bind_int64 (s, 5, (gint64) a->nbytes);
  sqlite3_bind_int64 (s, 6, (gint64) a->id * 4096);
  sqlite3_bind_int (s, 7, a->op);
  sqlite3_bind_int64 (s, 8, a->new_ts);
  bind_opt (s, 9, free_ts, free_ts >= 0);
  run (g, s, "allocation");
}

static void
write_context (Gen *g, Context *c, gint64 free_ts)
{
  sqlite3_stmt *s = g->ins_context;
  sqlite3_bind_int64 (s, 1, c->pid);
  sqlite3_bind_int64 (s, 2, (gint64) c->id);
  sqlite3_bind_int64 (s, 3, (gint64) c->alloc_id);
  sqlite3_bind_int64 (s, 4, (gint64) c->first_storage);
  sqlite3_bind_int64 (s, 5, c->new_ts);
  bind_opt (s, 6, free_ts, free_ts >= 0);
  sqlite3_bind_int (s, 7, c->max_refcount);
  run (g, s, "context");
}

static void
write_storage (Gen *g, Storage *st, gint64 free_ts)
{
  sqlite3_stmt *s = g->ins_storage;
  sqlite3_bind_int64 (s, 1, st->pid);
  sqlite3_bind_int64 (s, 2, (gint64) st->id);
  sqlite3_bind_int64 (s, 3, (gint64) st->birth_alloc);
  sqlite3_bind_int64 (s, 4, (gint64) st->nbytes);
  bind_opt (s, 5, (gint64) st->birth_ctx, st->birth_ctx != 0);
  bind_opt (s, 6, (gint64) st->src, st->src != 0);
  sqlite3_bind_int (s, 7, st->op);
  sqlite3_bind_int64 (s, 8, st->new_ts);
  bind_opt (s, 9, free_ts, free_ts >= 0);
  run (g, s, "storage");
}

static void
write_tensor (Gen *g, Tensor *t, gint64 free_ts)
{
  sqlite3_stmt *s = g->ins_tensor;
  sqlite3_bind_int64 (s, 1, t->pid);
  sqlite3_bind_int64 (s, 2, (gint64) t->id);
  sqlite3_bind_int64 (s, 3, (gint64) t->storage->id);
  bind_opt (s, 4, (gint64) t->base, t->base != 0);
  sqlite3_bind_int (s, 5, t->dtype);
  sqlite3_bind_int (s, 6, 1);
  sqlite3_bind_int64 (s, 7, t->numel);
  sqlite3_bind_int (s, 8, 0);
  sqlite3_bind_int (s, 9, t->op);
  if (t->name)
    sqlite3_bind_text (s, 10, t->name, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null (s, 10);
  sqlite3_bind_int64 (s, 11, t->tid);
  sqlite3_bind_int64 (s, 12, t->new_ts);
  bind_opt (s, 13, free_ts, free_ts >= 0);
  run (g, s, "tensor");
}

/* ---- the simulated engine ---- */

static gint64
pick_tid (Gen *g, guint p)
{
  return (gint64) PID (p) + 1 + g_rand_int_range (g->rand, 0, (gint32) g->o->n_threads);
}

static Alloc *
new_alloc (Gen *g, guint p, gint64 tid, guint64 nbytes, int op, int kind)
{
  Alloc *a = g_new0 (Alloc, 1);
  a->id = next_id (g, p);
  a->nbytes = nbytes;
  a->kind = kind;
  a->pid = PID (p);
  a->op = op;
  emit (g, a->pid, tid, COW_EVENT_ALLOCATION_NEW, op, kind, (gint64) a->id, (gint64) nbytes,
        (gint64) a->id * 4096, 0, 0, 0);
  a->new_ts = g->now;
  g_hash_table_insert (g->allocs, key_of (a->pid, a->id), a);
  g->n_live++;
  return a;
}

static void
free_alloc (Gen *g, gint64 tid, Alloc *a)
{
  emit (g, a->pid, tid, COW_EVENT_ALLOCATION_FREE, COW_OP_NONE, a->kind, (gint64) a->id, (gint64) a->nbytes,
        (gint64) a->id * 4096, 0, 0, 0);
  write_alloc (g, a, g->now);
  g_hash_table_remove (g->allocs, key_of (a->pid, a->id));
  g->n_live--;
  g_free (a);
}

static Tensor *
new_tensor (Gen *g, guint p, gint64 tid, Storage *s, guint64 base, gint64 numel, int op,
            gboolean named)
{
  Tensor *t = g_new0 (Tensor, 1);
  t->id = next_id (g, p);
  t->storage = s;
  t->base = base;
  t->numel = numel;
  t->dtype = COW_DTYPE_F32;
  t->pid = PID (p);
  t->tid = tid;
  t->op = op;
  emit (g, t->pid, tid, COW_EVENT_TENSOR_NEW, op, t->dtype | (1 << 8), (gint64) t->id, (gint64) s->id,
        (gint64) base, numel, 0, 0);
  t->new_ts = g->now;
  s->n_tensors++;
  if (named)
    {
      t->name = g_strdup_printf ("t%" G_GUINT64_FORMAT, t->id);
      guint64 sid = ++g->string_id;
      sqlite3_bind_int64 (g->ins_string, 1, t->pid);
      sqlite3_bind_int64 (g->ins_string, 2, (gint64) sid);
      sqlite3_bind_text (g->ins_string, 3, t->name, -1, SQLITE_TRANSIENT);
      run (g, g->ins_string, "string");
      emit (g, t->pid, tid, COW_EVENT_TENSOR_NAME, COW_OP_NONE, 0, (gint64) t->id, (gint64) sid, 0, 0, 0, 0);
    }
  t->index = g->live_tensors[p]->len;
  g_ptr_array_add (g->live_tensors[p], t);
  g->n_live++;
  return t;
}

static Storage *
new_storage_plain (Gen *g, guint p, gint64 tid, guint64 nbytes)
{
  gboolean cuda = g_rand_int_range (g->rand, 0, 3) == 0;
  Alloc *a = new_alloc (g, p, tid, nbytes, COW_OP_EMPTY, cuda ? 1 : 0);
  Storage *s = g_new0 (Storage, 1);
  s->id = next_id (g, p);
  s->alloc = a;
  s->birth_alloc = a->id;
  s->nbytes = nbytes;
  s->pid = PID (p);
  s->op = COW_OP_EMPTY;
  emit (g, s->pid, tid, COW_EVENT_STORAGE_NEW, COW_OP_EMPTY, 0, (gint64) s->id, (gint64) a->id,
        (gint64) nbytes, 0, 0, 0);
  s->new_ts = g->now;
  g_hash_table_insert (g->storages, key_of (s->pid, s->id), s);
  g->n_live++;
  return s;
}

/* Lazy clone of @t: returns the new tensor. */
static void
lazy_clone (Gen *g, guint p, Tensor *t)
{
  gint64 tid = pick_tid (g, p);
  Storage *s = t->storage;
  guint32 pid = PID (p);
  if (s->ctx == NULL)
    {
      Context *c = g_new0 (Context, 1);
      c->id = next_id (g, p);
      c->alloc = s->alloc;
      c->alloc_id = s->alloc->id;
      c->first_storage = s->id;
      c->refcount = 1;
      c->max_refcount = 1;
      c->pid = pid;
      c->first_lc_seq = -1;
      emit (g, pid, tid, COW_EVENT_CONTEXT_NEW, COW_OP_LAZY_CLONE, 0, (gint64) c->id, (gint64) s->id, 1,
            (gint64) c->alloc->id, 0, 0);
      c->new_ts = g->now;
      g_hash_table_insert (g->contexts, key_of (pid, c->id), c);
      g->n_live++;
      s->ctx = c;
      s->lc_seq = -1;
    }
  Context *c = s->ctx;
  c->refcount++;
  c->max_refcount = MAX (c->max_refcount, c->refcount);
  Storage *r = g_new0 (Storage, 1);
  r->id = next_id (g, p);
  r->alloc = c->alloc;
  r->birth_alloc = c->alloc->id;
  r->ctx = c;
  r->birth_ctx = c->id;
  r->src = s->id;
  r->nbytes = s->nbytes;
  r->pid = pid;
  r->op = COW_OP_LAZY_CLONE;
  emit (g, pid, tid, COW_EVENT_STORAGE_NEW, COW_OP_LAZY_CLONE, 0, (gint64) r->id, (gint64) c->alloc->id,
        (gint64) r->nbytes, (gint64) c->id, (gint64) s->id, 0);
  r->new_ts = g->now;
  g_hash_table_insert (g->storages, key_of (pid, r->id), r);
  g->n_live++;
  Tensor *t2 = new_tensor (g, p, tid, r, t->id, t->numel, COW_OP_LAZY_CLONE,
                           g_rand_int_range (g->rand, 0, 2) == 0);
  gint64 seq = emit (g, pid, tid, COW_EVENT_LAZY_CLONE, COW_OP_LAZY_CLONE, 0, (gint64) t->id,
                     (gint64) t2->id, (gint64) s->id, (gint64) r->id, (gint64) c->id, 1);
  r->lc_seq = seq;
  if (c->first_lc_seq < 0)
    c->first_lc_seq = seq;
  if (s->lc_seq < 0)
    s->lc_seq = seq;
  sqlite3_stmt *q = g->ins_lc;
  sqlite3_bind_int64 (q, 1, seq);
  sqlite3_bind_int64 (q, 2, pid);
  sqlite3_bind_int64 (q, 3, tid);
  sqlite3_bind_int64 (q, 4, g->now);
  sqlite3_bind_int (q, 5, COW_OP_LAZY_CLONE);
  sqlite3_bind_int64 (q, 6, (gint64) t->id);
  sqlite3_bind_int64 (q, 7, (gint64) t2->id);
  sqlite3_bind_int64 (q, 8, (gint64) s->id);
  sqlite3_bind_int64 (q, 9, (gint64) r->id);
  sqlite3_bind_int64 (q, 10, (gint64) c->id);
  sqlite3_bind_null (q, 11);
  sqlite3_bind_int64 (q, 12, (gint64) r->nbytes);
  sqlite3_bind_int64 (q, 13, 1);
  run (g, q, "lazy clone");
}

static void
free_context (Gen *g, gint64 tid, Context *c, guint64 storage_id)
{
  emit (g, c->pid, tid, COW_EVENT_CONTEXT_FREE, COW_OP_NONE, 0, (gint64) c->id, (gint64) storage_id, 0,
        (gint64) c->alloc_id, 0, 0);
  write_context (g, c, g->now);
  g_hash_table_remove (g->contexts, key_of (c->pid, c->id));
  g->n_live--;
  g_free (c);
}

/* A write through @t: materializes its storage when shared. */
static void
write_tensor_data (Gen *g, guint p, Tensor *t)
{
  Storage *s = t->storage;
  if (s->ctx == NULL)
    return;
  gint64 tid = pick_tid (g, p);
  guint32 pid = PID (p);
  Context *c = s->ctx;
  int op = g_rand_boolean (g->rand) ? COW_OP_ADD_ : COW_OP_MUL_;
  gint64 begin_seq = emit (g, pid, tid, COW_EVENT_MATERIALIZE_BEGIN, op, 0, (gint64) s->id,
                           (gint64) c->id, (gint64) t->id, (gint64) s->nbytes, 0, 2);
  gint64 begin_ts = g->now;
  gint64 wait = g_rand_int_range (g->rand, 0, 4) == 0 ? g_rand_int_range (g->rand, 100, 5000) : 0;
  gint kind;
  Alloc *owned;
  c->refcount--;
  emit (g, pid, tid, COW_EVENT_CONTEXT_UNREF, op, 0, (gint64) c->id, (gint64) s->id, c->refcount,
        (gint64) c->alloc->id, 0, 0);
  guint64 ctx_id = c->id;
  if (c->refcount == 0)
    {
      kind = COW_MATERIALIZE_STEAL;
      owned = c->alloc;
      free_context (g, tid, c, s->id);
    }
  else
    {
      kind = COW_MATERIALIZE_COPY;
      owned = new_alloc (g, p, tid, s->nbytes, op, s->alloc->kind);
    }
  s->ctx = NULL;
  s->alloc = owned;
  emit (g, pid, tid, COW_EVENT_MATERIALIZE_END, op, kind, (gint64) s->id, (gint64) ctx_id,
        (gint64) owned->id, (gint64) s->nbytes, wait, 0);
  gint64 end_ts = g->now;
  gint64 cuda = -1;
  if (kind == COW_MATERIALIZE_COPY && owned->kind == COW_ALLOCATION_CUDA)
    {
      cuda = ++g->cuda_id;
      sqlite3_stmt *q = g->ins_cuda;
      sqlite3_bind_int64 (q, 1, cuda);
      sqlite3_bind_int64 (q, 2, pid);
      sqlite3_bind_int (q, 4, 8); /* CUpti's DtoD */
      sqlite3_bind_int64 (q, 5, begin_ts + 10);
      sqlite3_bind_int64 (q, 6, end_ts + 2000);
      sqlite3_bind_int64 (q, 7, (gint64) s->nbytes);
      sqlite3_bind_int64 (q, 8, cuda);
      sqlite3_bind_int (q, 9, 0);
      sqlite3_bind_int (q, 10, 1);
      sqlite3_bind_int (q, 11, 7);
      sqlite3_bind_int64 (q, 12, (gint64) owned->id * 4096);
      sqlite3_bind_int64 (q, 13, begin_seq);
      run (g, q, "cuda");
    }
  gint64 lc = s->lc_seq > 0 ? s->lc_seq : -1;
  sqlite3_stmt *q = g->ins_mat;
  sqlite3_bind_int64 (q, 1, begin_seq);
  sqlite3_bind_int64 (q, 2, pid);
  sqlite3_bind_int64 (q, 3, tid);
  sqlite3_bind_int64 (q, 4, begin_ts);
  sqlite3_bind_int64 (q, 5, end_ts);
  sqlite3_bind_int (q, 6, op);
  sqlite3_bind_int64 (q, 7, (gint64) s->id);
  sqlite3_bind_int64 (q, 8, (gint64) ctx_id);
  sqlite3_bind_int64 (q, 9, (gint64) t->id);
  sqlite3_bind_int64 (q, 10, (gint64) s->nbytes);
  sqlite3_bind_int (q, 11, kind);
  sqlite3_bind_int (q, 12, 0);
  sqlite3_bind_int64 (q, 13, wait);
  sqlite3_bind_int64 (q, 14, (gint64) owned->id);
  bind_opt (q, 15, lc, lc > 0);
  sqlite3_bind_int64 (q, 16, 2);
  run (g, q, "materialization");
  s->lc_seq = -1;
  if (kind == COW_MATERIALIZE_COPY && cuda > 0 && g->info->copy_seq < 0 && lc > 0)
    {
      g->info->copy_seq = begin_seq;
      g->info->copy_lazy_clone_seq = lc;
      g->info->copy_nbytes = s->nbytes;
      g->info->copy_cuda_id = cuda;
      g->info->copy_storage_id = s->id;
    }
  if (kind == COW_MATERIALIZE_STEAL && g->info->steal_seq < 0)
    g->info->steal_seq = begin_seq;
}

static void
free_storage (Gen *g, gint64 tid, Storage *s)
{
  Context *c = s->ctx;
  guint64 ctx_id = c ? c->id : 0;
  if (c != NULL)
    {
      c->refcount--;
      emit (g, s->pid, tid, COW_EVENT_CONTEXT_UNREF, COW_OP_NONE, 0, (gint64) c->id, (gint64) s->id,
            c->refcount, (gint64) c->alloc->id, 0, 0);
      if (c->refcount == 0)
        {
          free_alloc (g, tid, c->alloc);
          free_context (g, tid, c, s->id);
        }
    }
  else
    free_alloc (g, tid, s->alloc);
  emit (g, s->pid, tid, COW_EVENT_STORAGE_FREE, COW_OP_NONE, 0, (gint64) s->id, 0, (gint64) s->nbytes,
        (gint64) ctx_id, 0, 0);
  write_storage (g, s, g->now);
  g_hash_table_remove (g->storages, key_of (s->pid, s->id));
  g->n_live--;
  g_free (s);
}

static void
free_tensor (Gen *g, guint p, Tensor *t)
{
  gint64 tid = pick_tid (g, p);
  emit (g, t->pid, tid, COW_EVENT_TENSOR_FREE, COW_OP_NONE, 0, (gint64) t->id, (gint64) t->storage->id,
        0, 0, 0, 0);
  write_tensor (g, t, g->now);
  GPtrArray *live = g->live_tensors[p];
  Tensor *last = g_ptr_array_index (live, live->len - 1);
  live->pdata[t->index] = last;
  last->index = t->index;
  g_ptr_array_set_size (live, live->len - 1);
  g->n_live--;
  Storage *s = t->storage;
  g_free (t->name);
  g_free (t);
  if (--s->n_tensors == 0)
    free_storage (g, tid, s);
}

static gboolean
exec (Gen *g, const char *sql)
{
  if (cowscope_format_exec (g->db, sql) != SQLITE_OK)
    {
      g_set_error (g->error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "fixture: %s",
                   sqlite3_errmsg (g->db));
      g->failed = TRUE;
      return FALSE;
    }
  return TRUE;
}

static sqlite3_stmt *
prep (Gen *g, const char *sql)
{
  sqlite3_stmt *stmt = NULL;
  if (cowscope_format_prepare (g->db, sql, &stmt) != SQLITE_OK)
    fail (g, sql);
  return stmt;
}

/* Default small workload. */
void
session_fixture_options_small (SessionFixtureOptions *o)
{
  *o = (SessionFixtureOptions) {
    .n_events = 6000, .n_processes = 2, .n_threads = 3, .target_live = 300,
    .checkpoint_interval = 500, .finalized = TRUE, .seed = 42,
  };
}

/* One step of the workload. */
static void
step (Gen *g)
{
  guint p = (guint) g_rand_int_range (g->rand, 0, (gint32) g->o->n_processes);
  GPtrArray *live = g->live_tensors[p];
  guint r = (guint) g_rand_int_range (g->rand, 0, 100);
  gboolean grow = g->n_live < g->o->target_live;
  if (live->len < 4 || (grow && r < 30))
    {
      gint64 tid = pick_tid (g, p);
      guint64 numel = 16u << g_rand_int_range (g->rand, 0, 12);
      Storage *s = new_storage_plain (g, p, tid, numel * 4);
      new_tensor (g, p, tid, s, 0, (gint64) numel, COW_OP_EMPTY, g_rand_boolean (g->rand));
      return;
    }
  Tensor *t = g_ptr_array_index (live, g_rand_int_range (g->rand, 0, (gint32) live->len));
  /* Above the target, creations give way to frees: the live set stays
   * near target_live. */
  if (r < 45)
    {
      if (grow ? r < 38 : r < 12)
        new_tensor (g, p, pick_tid (g, p), t->storage, t->id, t->numel / 2, COW_OP_VIEW, FALSE);
      else
        free_tensor (g, p, t);
    }
  else if (r < 65)
    {
      if (grow ? r < 58 : r < 53)
        lazy_clone (g, p, t);
      else
        free_tensor (g, p, t);
    }
  else if (r < 80)
    write_tensor_data (g, p, t);
  else if (r < 81)
    {
      Tensor *u = g_ptr_array_index (live, g_rand_int_range (g->rand, 0, (gint32) live->len));
      gint64 tid = pick_tid (g, p);
      gint64 seq = emit (g, PID (p), tid, COW_EVENT_SIMULATE_VIOLATION, COW_OP_ADD_, 1,
                         (gint64) t->storage->id, (gint64) t->id, (gint64) u->id, 3, 2, 3);
      sqlite3_stmt *q = g->ins_viol;
      sqlite3_bind_int64 (q, 1, seq);
      sqlite3_bind_int64 (q, 2, PID (p));
      sqlite3_bind_int64 (q, 3, tid);
      sqlite3_bind_int64 (q, 4, g->now);
      sqlite3_bind_int (q, 5, COW_OP_ADD_);
      sqlite3_bind_int (q, 6, 1);
      sqlite3_bind_int64 (q, 7, (gint64) t->storage->id);
      sqlite3_bind_int64 (q, 8, (gint64) t->id);
      sqlite3_bind_int64 (q, 9, (gint64) u->id);
      sqlite3_bind_int (q, 10, 3);
      sqlite3_bind_int (q, 11, 2);
      sqlite3_bind_int (q, 12, 3);
      run (g, q, "violation");
      if (g->info->violation_seq < 0)
        g->info->violation_seq = seq;
    }
  else
    free_tensor (g, p, t);
}

/* Generates the whole session (see header). */
gboolean
session_fixture_generate (const char *path, const SessionFixtureOptions *o,
                          SessionFixtureInfo *info, GError **error)
{
  g_unlink (path);
  SessionFixtureInfo local;
  Gen gen = { 0 }, *g = &gen;
  g->o = o;
  g->info = info ? info : &local;
  memset (g->info, 0, sizeof *g->info);
  g->info->copy_seq = g->info->steal_seq = g->info->violation_seq = -1;
  g->info->copy_lazy_clone_seq = g->info->copy_cuda_id = -1;
  g->error = error;
  g->rand = g_rand_new_with_seed (o->seed);
  g->now = 1000000000;
  if (sqlite3_open (path, &g->db) != SQLITE_OK)
    {
      fail (g, "open");
      sqlite3_close (g->db);
      g_rand_free (g->rand);
      return FALSE;
    }
  exec (g, "PRAGMA synchronous = OFF; PRAGMA journal_mode = OFF; PRAGMA cache_size = -262144;");
  if (!cowscope_format_create_schema (g->db))
    fail (g, "schema");
  exec (g, "BEGIN");
  if (!g->failed && !cowscope_format_fill_lookup_tables (g->db))
    fail (g, "lookup tables");
  exec (g,
        "INSERT INTO meta VALUES ('format', 'cowscope-session'),"
        " ('recorder_version', 'fixture'), ('program', 'fixture'), ('stacks', '1');"
        "INSERT INTO frames VALUES (1, 1000, 4096, 'libcowtensor.so', 'cow_lazy_clone', 'cow-lazy-clone.c', 40),"
        " (2, 1000, 8192, 'train', 'make_batch', 'train.c', 12),"
        " (3, 1000, 12288, 'libcowtensor.so', 'cow_add_', 'cow-ops.c', 210),"
        " (4, 1000, 16384, 'train', 'step', 'train.c', 30);"
        "INSERT INTO stacks VALUES (1, 2), (2, 2), (3, 1);"
        "INSERT INTO stack_frames VALUES (1, 0, 1), (1, 1, 2), (2, 0, 3), (2, 1, 4), (3, 0, 4);");
  if (!g->failed && !cowscope_format_upgrade_schema (g->db)) /* meta.schema_version */
    fail (g, "schema version");
  g->ins_event = prep (g, "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  g->ins_alloc = prep (g, "INSERT INTO allocations VALUES (?,?,?,?,?,?,?,?,?)");
  g->ins_storage = prep (g, "INSERT INTO storages VALUES (?,?,?,?,?,?,?,?,?)");
  g->ins_tensor = prep (g, "INSERT INTO tensors VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  g->ins_context = prep (g, "INSERT INTO contexts VALUES (?,?,?,?,?,?,?)");
  g->ins_lc = prep (g, "INSERT INTO lazy_clones VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)");
  g->ins_mat = prep (g, "INSERT INTO materializations VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  g->ins_viol = prep (g, "INSERT INTO violations VALUES (?,?,?,?,?,?,?,?,?,?,?,?)");
  g->ins_cuda = prep (g, "INSERT INTO cuda_activity (id, pid, kind, subkind, start_ns, end_ns,"
                         " bytes, correlation_id, device_id, context_id, stream_id, address,"
                         " external_id) VALUES (?1,?2,:cuda_memcpy,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)");
  g->ins_string = prep (g, "INSERT OR REPLACE INTO strings VALUES (?,?,?)");
  g->allocs = g_hash_table_new (g_direct_hash, g_direct_equal);
  g->contexts = g_hash_table_new (g_direct_hash, g_direct_equal);
  g->storages = g_hash_table_new (g_direct_hash, g_direct_equal);
  for (guint p = 0; p < o->n_processes; p++)
    g->live_tensors[p] = g_ptr_array_new ();
  gint64 start_ns = g->now + 1;

  gint64 range_id = 0;
  while (!g->failed && (guint64) g->seq < o->n_events)
    {
      step (g);
      if (g_rand_int_range (g->rand, 0, 300) == 0)
        {
          /* a user range on one thread, and a kernel on stream 13 */
          guint32 pid = PID (0);
          gint64 tid = pid + 1;
          range_id++;
          emit (g, pid, tid, COW_EVENT_RANGE_BEGIN, COW_OP_NONE, 0, range_id, 0, 0, 0, 0, 0);
          gint64 b = g->now;
          emit (g, pid, tid, COW_EVENT_MARK, COW_OP_NONE, 0, 0, 0, range_id, 0, 0, 0);
          emit (g, pid, tid, COW_EVENT_RANGE_END, COW_OP_NONE, 0, range_id, 0, 0, 0, 0, 0);
          g_autofree char *sql = g_strdup_printf (
            "INSERT INTO ranges VALUES (%u, %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", 'step',"
            " NULL, %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")",
            pid, range_id, tid, b, g->now);
          exec (g, sql);
          gint64 k = ++g->cuda_id;
          g_autofree char *sql2 = g_strdup_printf (
            "INSERT INTO cuda_activity (id, pid, kind, start_ns, end_ns, device_id, stream_id,"
            " name) VALUES (%" G_GINT64_FORMAT ", %u, :cuda_kernel, %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
            ", 0, 13, 'gemm')",
            k, pid, b, g->now + 5000);
          exec (g, sql2);
        }
    }

  /* Live objects' derived rows (never freed). */
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, g->allocs);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    write_alloc (g, value, -1);
  g_hash_table_iter_init (&iter, g->contexts);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    write_context (g, value, -1);
  g_hash_table_iter_init (&iter, g->storages);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    write_storage (g, value, -1);
  for (guint p = 0; p < o->n_processes; p++)
    for (guint i = 0; i < g->live_tensors[p]->len; i++)
      write_tensor (g, g_ptr_array_index (g->live_tensors[p], i), -1);

  for (guint p = 0; p < o->n_processes; p++)
    {
      g_autofree char *sql = g_strdup_printf (
        "INSERT INTO processes VALUES (%u, 1, '/usr/bin/train', 'train --steps 10', %"
        G_GINT64_FORMAT ", %" G_GINT64_FORMAT ", 'exited', 0, NULL, 'available')",
        PID (p), start_ns, g->now);
      exec (g, sql);
      for (guint t = 0; t < o->n_threads; t++)
        {
          g_autofree char *tsql = g_strdup_printf (
            "INSERT INTO threads (pid, tid, name) VALUES (%u, %u, 'worker-%u')", PID (p),
            PID (p) + 1 + t, t);
          exec (g, tsql);
        }
    }
  g_autofree char *meta = g_strdup_printf (
    "INSERT INTO meta VALUES ('events', %" G_GINT64_FORMAT "), ('checkpoint_interval', %u),"
    " ('finalized', %d)",
    g->seq, o->checkpoint_interval, o->finalized ? 1 : 0);
  exec (g, meta);
  /* Checkpoints, graph states and timeline summaries, as finalization
   * writes them (the recorder's own code). */
  cowscope_format_index_set_chunk_for_tests (o->timeline_chunk);
  if (!g->failed
      && !cowscope_format_index_write (g->db, path,
                                        o->checkpoint_interval > 0 ? o->checkpoint_interval
                                                                   : G_MAXINT64,
                                        error))
    g->failed = TRUE;
  cowscope_format_index_set_chunk_for_tests (0);
  /* The indexes the session model's queries rely on (events need none:
   * their packed chunks are found by seq, time and type). */
  exec (g,
        "CREATE INDEX materializations_storage ON materializations (pid, storage_id, seq);"
        "CREATE INDEX cuda_activity_external ON cuda_activity (external_id);"
        "CREATE INDEX checkpoints_seq ON checkpoints (seq);");

  g->info->end_ns = MAX (g->now, g->now + 5000);
  g->info->n_events = (guint64) g->seq;
  g->info->n_thread_lanes = o->n_processes * o->n_threads;
  g->info->n_cuda_lanes = 0;

  sqlite3_stmt *all[] = { g->ins_event, g->ins_alloc, g->ins_storage, g->ins_tensor,
                          g->ins_context, g->ins_lc, g->ins_mat, g->ins_viol, g->ins_cuda,
                          g->ins_string };
  for (guint i = 0; i < G_N_ELEMENTS (all); i++)
    sqlite3_finalize (all[i]);
  if (!g->failed)
    exec (g, "COMMIT");
  /* CUDA lanes: (pid, device, stream) pairs actually used. */
  sqlite3_stmt *q = NULL;
  if (!g->failed
      && sqlite3_prepare_v2 (g->db,
                             "SELECT count(*) FROM (SELECT DISTINCT pid, device_id, stream_id"
                             " FROM cuda_activity), (SELECT max(end_ns) FROM cuda_activity)",
                             -1, &q, NULL) == SQLITE_OK
      && sqlite3_step (q) == SQLITE_ROW)
    g->info->n_cuda_lanes = (guint) sqlite3_column_int (q, 0);
  sqlite3_finalize (q);
  q = NULL;
  if (!g->failed
      && sqlite3_prepare_v2 (g->db, "SELECT max(end_ns) FROM cuda_activity", -1, &q, NULL) == SQLITE_OK
      && sqlite3_step (q) == SQLITE_ROW && sqlite3_column_type (q, 0) == SQLITE_INTEGER)
    g->info->end_ns = MAX (g->now, sqlite3_column_int64 (q, 0));
  else
    g->info->end_ns = g->now;
  sqlite3_finalize (q);
  q = NULL;
  if (!g->failed
      && sqlite3_prepare_v2 (g->db, "SELECT count(*) FROM checkpoints", -1, &q, NULL) == SQLITE_OK
      && sqlite3_step (q) == SQLITE_ROW)
    g->info->n_checkpoints = (guint64) sqlite3_column_int64 (q, 0);
  sqlite3_finalize (q);
  sqlite3_close (g->db);

  g_hash_table_iter_init (&iter, g->allocs);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_free (value);
  g_hash_table_iter_init (&iter, g->contexts);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_free (value);
  g_hash_table_iter_init (&iter, g->storages);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_free (value);
  for (guint p = 0; p < o->n_processes; p++)
    {
      for (guint i = 0; i < g->live_tensors[p]->len; i++)
        {
          Tensor *t = g_ptr_array_index (g->live_tensors[p], i);
          g_free (t->name);
          g_free (t);
        }
      g_ptr_array_unref (g->live_tensors[p]);
    }
  g_hash_table_unref (g->allocs);
  g_hash_table_unref (g->contexts);
  g_hash_table_unref (g->storages);
  g_rand_free (g->rand);
  return !g->failed;
}

gboolean
session_fixture_is_current (const char *path)
{
  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    return FALSE;
  CowscopeFormatInfo info = { 0 };
  sqlite3 *db = cowscope_format_open (path, COWSCOPE_FORMAT_OPEN_READ_ONLY, &info, NULL);
  if (db == NULL)
    return FALSE;
  sqlite3_close (db);
  return info.current;
}
