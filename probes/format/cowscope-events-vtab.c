/* cowscope-events-vtab.c — the `cowscope_events` virtual table module
 * (see header). */
#include "cowscope-events-vtab.h"

#include <glib.h>
#include <math.h>
#include <string.h>

#include "cowscope-event-store.h"

static const char schema_sql[] =
  "CREATE TABLE x (seq INTEGER, ts INTEGER, pid INTEGER, tid INTEGER, type INTEGER,"
  " op INTEGER, aux INTEGER, v0 INTEGER, v1 INTEGER, v2 INTEGER, v3 INTEGER, v4 INTEGER,"
  " stack_id INTEGER)";

typedef struct {
  sqlite3_vtab base;
  sqlite3 *db;
  CowscopeEventCatalog *catalog;
  CowscopeEventStore *store; /* created by the first INSERT */
} EventsTable;

/* One term of a plan: which column, which comparison (idxStr letters). */
enum {
  OP_EQ = 'e', OP_GE = 'g', OP_GT = 'h', OP_LE = 'l', OP_LT = 'm', OP_IN = 'i',
};

/* idxNum bits. */
#define PLAN_DESC 1       /* rows in descending order */
#define PLAN_BY_TS 2      /* the ORDER BY named ts: needs time order */

typedef struct {
  sqlite3_vtab_cursor base;
  EventsTable *table;
  /* What the plan lets through (bounds inclusive). */
  gint64 seq_lo, seq_hi, ts_lo, ts_hi, type_lo, type_hi;
  gboolean empty;           /* a constraint no row can meet */
  GArray *types_in;         /* gint64: type IN (…), or NULL */
  guint64 type_mask;        /* chunk types that may match */
  gboolean desc, use_ts;
  /* Where it is: source @src (a catalog chunk, or n_chunks: this
   * connection's events not yet in a chunk), row @row of @block. */
  guint n_src, src;
  CowscopeEventBlock *block;  /* a reference: other cursors read other chunks */
  gint64 row;
  gboolean eof;
  /* A scan in time order of events that are not in time order: the
   * matching rows, sorted. */
  GArray *sorted_rows;      /* CowscopeEventRow, or NULL */
  guint sorted_at;
  CowscopeEventRow current;
} EventsCursor;

static int
set_error (sqlite3_vtab *vt, int rc, const char *message)
{
  sqlite3_free (vt->zErrMsg);
  vt->zErrMsg = sqlite3_mprintf ("%s", message);
  return rc;
}

/* ---- connecting ------------------------------------------------------------- */

static int
events_connect (sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                char **err)
{
  (void) aux;
  (void) argc;
  (void) argv;
  int rc = sqlite3_declare_vtab (db, schema_sql);
  if (rc != SQLITE_OK)
    return rc;
  /* It reads and appends to its own table only: safe in views and
   * triggers of an untrusted schema. */
  sqlite3_vtab_config (db, SQLITE_VTAB_INNOCUOUS);
  EventsTable *t = sqlite3_malloc (sizeof *t);
  if (t == NULL)
    return SQLITE_NOMEM;
  memset (t, 0, sizeof *t);
  t->db = db;
  t->catalog = cowscope_event_catalog_new (db);
  *out = &t->base;
  (void) err;
  return SQLITE_OK;
}

static int
events_disconnect (sqlite3_vtab *vt)
{
  EventsTable *t = (EventsTable *) vt;
  cowscope_event_catalog_free (t->catalog);
  cowscope_event_store_free (t->store);
  sqlite3_free (t);
  return SQLITE_OK;
}

/* Refreshes the catalog; TRUE when the rows (with this connection's
 * pending ones) are in time order. */
static int
refresh (EventsTable *t, gboolean *sorted)
{
  int rc = cowscope_event_catalog_refresh (t->catalog);
  if (rc != SQLITE_OK)
    return set_error (&t->base, rc, sqlite3_errmsg (t->db));
  *sorted = cowscope_event_catalog_is_sorted (t->catalog);
  const CowscopeEventBlock *pending = t->store ? cowscope_event_store_pending (t->store) : NULL;
  if (*sorted && pending != NULL && pending->n > 0)
    {
      CowscopeEventSummary sum;
      cowscope_event_block_summary (pending, pending->n, &sum);
      guint n = cowscope_event_catalog_get_n_chunks (t->catalog);
      const CowscopeChunkInfo *last = n ? cowscope_event_catalog_get_chunk (t->catalog, n - 1)
                                        : NULL;
      *sorted = sum.sorted && (last == NULL || last->max_ts <= sum.min_ts);
    }
  return SQLITE_OK;
}

/* ---- planning ----------------------------------------------------------------- */

static char
op_letter (unsigned char op)
{
  switch (op)
    {
    case SQLITE_INDEX_CONSTRAINT_EQ: return OP_EQ;
    case SQLITE_INDEX_CONSTRAINT_GE: return OP_GE;
    case SQLITE_INDEX_CONSTRAINT_GT: return OP_GT;
    case SQLITE_INDEX_CONSTRAINT_LE: return OP_LE;
    case SQLITE_INDEX_CONSTRAINT_LT: return OP_LT;
    default: return 0;
    }
}

enum { COL_SEQ = 0, COL_TS = 1, COL_TYPE = 4 };

static int
events_best_index (sqlite3_vtab *vt, sqlite3_index_info *info)
{
  EventsTable *t = (EventsTable *) vt;
  gboolean sorted = FALSE;
  int rc = refresh (t, &sorted);
  if (rc != SQLITE_OK)
    return rc;
  double n = (double) MAX (cowscope_event_catalog_get_n_events (t->catalog), 1);

  char letters[64];
  int n_args = 0;
  gboolean seq_eq = FALSE, seq_lo = FALSE, seq_hi = FALSE, ts_lo = FALSE, ts_hi = FALSE,
           by_type = FALSE;
  for (int i = 0; i < info->nConstraint && n_args < 30; i++)
    {
      const struct sqlite3_index_constraint *c = &info->aConstraint[i];
      if (!c->usable)
        continue;
      int col = c->iColumn < 0 ? COL_SEQ : c->iColumn;
      if (col != COL_SEQ && col != COL_TS && col != COL_TYPE)
        continue;
      char op = op_letter (c->op);
      if (op == 0)
        continue;
      if (op == OP_EQ && col == COL_TYPE && sqlite3_vtab_in (info, i, -1))
        {
          sqlite3_vtab_in (info, i, 1);
          op = OP_IN;
        }
      info->aConstraintUsage[i].argvIndex = ++n_args;
      info->aConstraintUsage[i].omit = 0; /* SQLite checks again: odd values stay exact */
      letters[2 * (n_args - 1)] = (char) ('0' + col);
      letters[2 * (n_args - 1) + 1] = op;
      if (col == COL_SEQ)
        {
          seq_eq |= op == OP_EQ;
          seq_lo |= op == OP_GE || op == OP_GT;
          seq_hi |= op == OP_LE || op == OP_LT;
        }
      else if (col == COL_TS)
        {
          ts_lo |= op == OP_GE || op == OP_GT || op == OP_EQ;
          ts_hi |= op == OP_LE || op == OP_LT || op == OP_EQ;
        }
      else
        by_type = TRUE;
    }
  letters[2 * n_args] = '\0';
  info->idxStr = sqlite3_mprintf ("%s", letters);
  info->needToFreeIdxStr = 1;

  /* ORDER BY seq (rowid), or by ts (then seq) in a session in time order,
   * either way up, is the scan's own order. */
  int plan = 0;
  if (info->nOrderBy >= 1)
    {
      const struct sqlite3_index_orderby *o = info->aOrderBy;
      int first = o[0].iColumn < 0 ? COL_SEQ : o[0].iColumn;
      gboolean desc = o[0].desc != 0;
      gboolean ok = FALSE;
      if (info->nOrderBy == 1 && first == COL_SEQ)
        ok = TRUE;
      else if (first == COL_TS && sorted
               && (info->nOrderBy == 1
                   || (info->nOrderBy == 2 && (o[1].iColumn < 0 || o[1].iColumn == COL_SEQ)
                       && (o[1].desc != 0) == desc)))
        {
          ok = TRUE;
          plan |= PLAN_BY_TS;
        }
      if (ok)
        {
          info->orderByConsumed = 1;
          if (desc)
            plan |= PLAN_DESC;
        }
    }
  info->idxNum = plan;

  double rows = n;
  if (seq_eq)
    rows = 1;
  else if (seq_lo && seq_hi)
    rows = MIN (n, 4096);
  else if (seq_lo || seq_hi)
    rows = n / 2;
  if (sorted && ts_lo && ts_hi)
    rows = MIN (rows, 4096);
  else if (sorted && (ts_lo || ts_hi))
    rows = MIN (rows, n / 2);
  if (by_type)
    rows = MAX (rows / 8, 1);
  info->estimatedRows = (sqlite3_int64) rows;
  info->estimatedCost = rows;
  if (seq_eq)
    info->idxFlags = SQLITE_INDEX_SCAN_UNIQUE;
  return SQLITE_OK;
}

/* ---- scanning ------------------------------------------------------------------ */

static int
events_open (sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
  EventsCursor *c = sqlite3_malloc (sizeof *c);
  if (c == NULL)
    return SQLITE_NOMEM;
  memset (c, 0, sizeof *c);
  c->table = (EventsTable *) vt;
  *out = &c->base;
  return SQLITE_OK;
}

static int
events_close (sqlite3_vtab_cursor *cur)
{
  EventsCursor *c = (EventsCursor *) cur;
  if (c->types_in)
    g_array_unref (c->types_in);
  if (c->sorted_rows)
    g_array_unref (c->sorted_rows);
  cowscope_event_block_unref (c->block);
  sqlite3_free (c);
  return SQLITE_OK;
}

/* Narrows [*lo, *hi] by "column OP value" where the value is a number;
 * other values (text, NULL) leave it to SQLite's own check. */
static void
narrow (gint64 *lo, gint64 *hi, gboolean *empty, char op, sqlite3_value *value)
{
  int type = sqlite3_value_numeric_type (value);
  gint64 floor_v, ceil_v;
  if (type == SQLITE_INTEGER)
    floor_v = ceil_v = sqlite3_value_int64 (value);
  else if (type == SQLITE_FLOAT)
    {
      double d = sqlite3_value_double (value);
      if (isnan (d))
        return;
      if (d >= 9.2e18 || d <= -9.2e18)
        return; /* beyond every integer: leave it to SQLite */
      floor_v = (gint64) floor (d);
      ceil_v = (gint64) ceil (d);
      if (op == OP_EQ && floor_v != ceil_v)
        {
          *empty = TRUE;
          return;
        }
    }
  else
    return;
  switch (op)
    {
    case OP_EQ: *lo = MAX (*lo, ceil_v); *hi = MIN (*hi, floor_v); break;
    case OP_GE: *lo = MAX (*lo, ceil_v); break;
    case OP_GT:
      if (floor_v == G_MAXINT64)
        *empty = TRUE;
      else
        *lo = MAX (*lo, floor_v + 1);
      break;
    case OP_LE: *hi = MIN (*hi, floor_v); break;
    case OP_LT:
      if (ceil_v == G_MININT64)
        *empty = TRUE;
      else
        *hi = MIN (*hi, ceil_v - 1);
      break;
    default: break;
    }
  if (*lo > *hi)
    *empty = TRUE;
}

static gboolean
type_matches (const EventsCursor *c, gint64 type)
{
  if (type < c->type_lo || type > c->type_hi)
    return FALSE;
  if (c->types_in == NULL)
    return TRUE;
  for (guint i = 0; i < c->types_in->len; i++)
    if (g_array_index (c->types_in, gint64, i) == type)
      return TRUE;
  return FALSE;
}

/* The types a chunk may hold that this scan wants (a chunk whose types
 * miss it is skipped). */
static guint64
wanted_types (const EventsCursor *c)
{
  if (c->types_in != NULL)
    {
      guint64 m = 0;
      for (guint i = 0; i < c->types_in->len; i++)
        m |= cowscope_event_type_bit (g_array_index (c->types_in, gint64, i));
      return m;
    }
  if (c->type_lo > 62 || c->type_hi < 0)
    return c->type_hi >= 63 ? G_GUINT64_CONSTANT (1) << 63 : 0;
  guint64 m = 0;
  for (gint64 t = MAX (c->type_lo, 0); t <= MIN (c->type_hi, 62); t++)
    m |= G_GUINT64_CONSTANT (1) << t;
  if (c->type_hi >= 63 || c->type_lo < 0)
    m |= G_GUINT64_CONSTANT (1) << 63;
  return m;
}

static CowscopeEventBlock *
pending_block (const EventsCursor *c)
{
  return c->table->store ? (CowscopeEventBlock *) cowscope_event_store_pending (c->table->store)
                         : NULL;
}

/* Whether source @src can hold a row of this scan, without decoding it;
 * *@past: no later source (in the scan's direction) can either. */
static gboolean
source_may_match (const EventsCursor *c, guint src, gboolean *past)
{
  *past = FALSE;
  guint n_chunks = cowscope_event_catalog_get_n_chunks (c->table->catalog);
  if (src >= n_chunks)
    return pending_block (c) != NULL && pending_block (c)->n > 0;
  const CowscopeChunkInfo *info = cowscope_event_catalog_get_chunk (c->table->catalog, src);
  if (!c->desc ? info->first_seq > c->seq_hi : info->last_seq < c->seq_lo)
    {
      *past = TRUE;
      return FALSE;
    }
  if (c->use_ts && (!c->desc ? info->min_ts > c->ts_hi : info->max_ts < c->ts_lo))
    {
      *past = TRUE;
      return FALSE;
    }
  if (info->last_seq < c->seq_lo || info->first_seq > c->seq_hi)
    return FALSE;
  if (c->use_ts && (info->max_ts < c->ts_lo || info->min_ts > c->ts_hi))
    return FALSE;
  /* A scan that wants every type reads every chunk: a whole scan (the
   * format's check) then decodes, and so checks, each chunk's row. */
  return c->type_mask == G_MAXUINT64 || (info->types & c->type_mask) != 0;
}

static int
load_source (EventsCursor *c, guint src)
{
  guint n_chunks = cowscope_event_catalog_get_n_chunks (c->table->catalog);
  g_clear_pointer (&c->block, cowscope_event_block_unref);
  if (src >= n_chunks)
    {
      c->block = cowscope_event_block_ref (pending_block (c));
      return SQLITE_OK;
    }
  int rc;
  const char *what;
  CowscopeEventBlock *block = cowscope_event_catalog_read (c->table->catalog, src, &rc, &what);
  if (block != NULL)
    {
      c->block = cowscope_event_block_ref (block);
      return SQLITE_OK;
    }
  if (what != NULL)
    {
      /* Named as the format's checks name a damaged row (the format
       * library turns this prefix into "PATH is damaged: ..."). */
      const CowscopeChunkInfo *info = cowscope_event_catalog_get_chunk (c->table->catalog, src);
      char *message = sqlite3_mprintf ("the session is damaged: table 'event_chunks',"
                                       " row first_seq %lld (events %lld to %lld): %s",
                                       (long long) info->first_seq, (long long) info->first_seq,
                                       (long long) info->last_seq, what);
      sqlite3_free (c->table->base.zErrMsg);
      c->table->base.zErrMsg = message;
      return SQLITE_CORRUPT;
    }
  return set_error (&c->table->base, rc, sqlite3_errmsg (c->table->db));
}

/* The first row of @b at or after seq @seq (b->n: none). */
static gint64
row_at_seq (const CowscopeEventBlock *b, gint64 seq)
{
  const gint64 *s = b->col[COWSCOPE_EVENT_COL_SEQ];
  gint64 lo = 0, hi = b->n;
  while (lo < hi)
    {
      gint64 mid = lo + (hi - lo) / 2;
      if (s[mid] < seq)
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

/* Whether row @i of @b matches; *@past: this and every later row in the
 * scan's direction are beyond its bounds. */
static gboolean
row_matches (const EventsCursor *c, const CowscopeEventBlock *b, gint64 i, gboolean *past)
{
  gint64 seq = b->col[COWSCOPE_EVENT_COL_SEQ][i], ts = b->col[COWSCOPE_EVENT_COL_TS][i];
  *past = !c->desc ? (seq > c->seq_hi || (c->use_ts && ts > c->ts_hi))
                   : (seq < c->seq_lo || (c->use_ts && ts < c->ts_lo));
  if (*past)
    return FALSE;
  return seq >= c->seq_lo && seq <= c->seq_hi && ts >= c->ts_lo && ts <= c->ts_hi
         && type_matches (c, b->col[COWSCOPE_EVENT_COL_TYPE][i]);
}

/* Moves to the next matching row from (src, row) inclusive. */
static int
seek (EventsCursor *c)
{
  for (;;)
    {
      if (c->block == NULL)
        {
          gboolean past;
          while (c->src < c->n_src && !source_may_match (c, c->src, &past))
            {
              if (past)
                {
                  c->eof = TRUE;
                  return SQLITE_OK;
                }
              c->src = c->desc ? (c->src == 0 ? c->n_src : c->src - 1) : c->src + 1;
            }
          if (c->src >= c->n_src)
            {
              c->eof = TRUE;
              return SQLITE_OK;
            }
          int rc = load_source (c, c->src);
          if (rc != SQLITE_OK)
            return rc;
          if (!c->desc)
            c->row = c->seq_lo > G_MININT64 ? row_at_seq (c->block, c->seq_lo) : 0;
          else
            c->row = (c->seq_hi < G_MAXINT64 ? row_at_seq (c->block, c->seq_hi + 1)
                                             : (gint64) c->block->n) - 1;
        }
      const CowscopeEventBlock *b = c->block;
      while (c->row >= 0 && c->row < (gint64) b->n)
        {
          gboolean past;
          if (row_matches (c, b, c->row, &past))
            {
              cowscope_event_block_get (b, (guint) c->row, &c->current);
              return SQLITE_OK;
            }
          if (past)
            {
              c->eof = TRUE;
              return SQLITE_OK;
            }
          c->row += c->desc ? -1 : 1;
        }
      g_clear_pointer (&c->block, cowscope_event_block_unref);
      if (c->desc && c->src == 0)
        {
          c->eof = TRUE;
          return SQLITE_OK;
        }
      c->src = c->desc ? c->src - 1 : c->src + 1;
    }
}

static int
compare_by_time (gconstpointer a, gconstpointer b)
{
  const CowscopeEventRow *x = a, *y = b;
  gint64 tx = x->col[COWSCOPE_EVENT_COL_TS], ty = y->col[COWSCOPE_EVENT_COL_TS];
  if (tx != ty)
    return tx < ty ? -1 : 1;
  gint64 sx = x->col[COWSCOPE_EVENT_COL_SEQ], sy = y->col[COWSCOPE_EVENT_COL_SEQ];
  return (sx > sy) - (sx < sy);
}

/* A plan chosen for rows in time order that are not (any more): every
 * matching row, sorted here. */
static int
collect_sorted (EventsCursor *c, gboolean desc)
{
  c->desc = FALSE;
  c->use_ts = FALSE;
  c->sorted_rows = g_array_new (FALSE, FALSE, sizeof (CowscopeEventRow));
  int rc = seek (c);
  while (rc == SQLITE_OK && !c->eof)
    {
      g_array_append_val (c->sorted_rows, c->current);
      c->row++;
      rc = seek (c);
    }
  if (rc != SQLITE_OK)
    return rc;
  g_array_sort (c->sorted_rows, compare_by_time);
  if (desc)
    for (guint i = 0, j = c->sorted_rows->len; i + 1 < j; i++, j--)
      {
        CowscopeEventRow tmp = g_array_index (c->sorted_rows, CowscopeEventRow, i);
        g_array_index (c->sorted_rows, CowscopeEventRow, i)
          = g_array_index (c->sorted_rows, CowscopeEventRow, j - 1);
        g_array_index (c->sorted_rows, CowscopeEventRow, j - 1) = tmp;
      }
  c->sorted_at = 0;
  c->eof = c->sorted_rows->len == 0;
  if (!c->eof)
    c->current = g_array_index (c->sorted_rows, CowscopeEventRow, 0);
  return SQLITE_OK;
}

static int
events_filter (sqlite3_vtab_cursor *cur, int plan, const char *letters, int argc,
               sqlite3_value **argv)
{
  EventsCursor *c = (EventsCursor *) cur;
  EventsTable *t = c->table;
  gboolean sorted = FALSE;
  int rc = refresh (t, &sorted);
  if (rc != SQLITE_OK)
    return rc;
  c->seq_lo = c->ts_lo = c->type_lo = G_MININT64;
  c->seq_hi = c->ts_hi = c->type_hi = G_MAXINT64;
  c->empty = FALSE;
  c->eof = FALSE;
  g_clear_pointer (&c->types_in, g_array_unref);
  g_clear_pointer (&c->sorted_rows, g_array_unref);
  gboolean ts_bounded = FALSE;
  for (int i = 0; i < argc && letters != NULL && letters[2 * i] != '\0'; i++)
    {
      int col = letters[2 * i] - '0';
      char op = letters[2 * i + 1];
      if (op == OP_IN)
        {
          c->types_in = g_array_new (FALSE, FALSE, sizeof (gint64));
          sqlite3_value *v = NULL;
          for (rc = sqlite3_vtab_in_first (argv[i], &v); rc == SQLITE_OK && v != NULL;
               rc = sqlite3_vtab_in_next (argv[i], &v))
            {
              gint64 lo = G_MININT64, hi = G_MAXINT64;
              gboolean none = FALSE;
              narrow (&lo, &hi, &none, OP_EQ, v);
              if (!none && lo == hi)
                g_array_append_val (c->types_in, lo);
              else if (!none)
                {
                  /* Not a number: no narrowing by this IN. */
                  g_clear_pointer (&c->types_in, g_array_unref);
                  break;
                }
            }
          if (rc != SQLITE_OK && rc != SQLITE_DONE)
            return rc;
          continue;
        }
      if (col == COL_SEQ)
        narrow (&c->seq_lo, &c->seq_hi, &c->empty, op, argv[i]);
      else if (col == COL_TS)
        {
          narrow (&c->ts_lo, &c->ts_hi, &c->empty, op, argv[i]);
          ts_bounded = TRUE;
        }
      else if (col == COL_TYPE)
        narrow (&c->type_lo, &c->type_hi, &c->empty, op, argv[i]);
    }
  c->type_mask = wanted_types (c);
  if (c->empty || c->type_mask == 0)
    {
      c->eof = TRUE;
      return SQLITE_OK;
    }
  const CowscopeEventBlock *pending = pending_block (c);
  guint n_chunks = cowscope_event_catalog_get_n_chunks (t->catalog);
  c->n_src = n_chunks + (pending != NULL && pending->n > 0 ? 1 : 0);
  g_clear_pointer (&c->block, cowscope_event_block_unref);
  if ((plan & PLAN_BY_TS) && !sorted)
    return collect_sorted (c, (plan & PLAN_DESC) != 0);
  c->desc = (plan & PLAN_DESC) != 0;
  c->use_ts = sorted && ts_bounded;
  if (c->n_src == 0)
    {
      c->eof = TRUE;
      return SQLITE_OK;
    }
  if (!c->desc)
    {
      /* n_chunks (none left) is the pending events, or the end. */
      c->src = cowscope_event_catalog_find_seq (t->catalog, c->seq_lo);
      if (c->use_ts)
        c->src = MAX (c->src, cowscope_event_catalog_find_ts (t->catalog, c->ts_lo));
    }
  else
    {
      /* The last source whose first seq is at most seq_hi. */
      guint last = c->n_src - 1;
      if (c->seq_hi < G_MAXINT64)
        {
          guint at = cowscope_event_catalog_find_seq (t->catalog, c->seq_hi);
          if (at < n_chunks)
            {
              const CowscopeChunkInfo *info = cowscope_event_catalog_get_chunk (t->catalog, at);
              last = info->first_seq <= c->seq_hi ? at : (at == 0 ? G_MAXUINT : at - 1);
            }
        }
      if (last == G_MAXUINT)
        {
          c->eof = TRUE;
          return SQLITE_OK;
        }
      c->src = last;
    }
  return seek (c);
}

static int
events_next (sqlite3_vtab_cursor *cur)
{
  EventsCursor *c = (EventsCursor *) cur;
  if (c->sorted_rows != NULL)
    {
      if (++c->sorted_at >= c->sorted_rows->len)
        c->eof = TRUE;
      else
        c->current = g_array_index (c->sorted_rows, CowscopeEventRow, c->sorted_at);
      return SQLITE_OK;
    }
  c->row += c->desc ? -1 : 1;
  return seek (c);
}

static int
events_eof (sqlite3_vtab_cursor *cur)
{
  return ((EventsCursor *) cur)->eof;
}

static int
events_column (sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
  EventsCursor *c = (EventsCursor *) cur;
  if (col < 0 || col >= COWSCOPE_EVENT_N_COLS)
    return SQLITE_OK;
  const CowscopeEventRow *r = &c->current;
  gboolean null = FALSE;
  if (col == COWSCOPE_EVENT_COL_STACK)
    null = (r->nulls & COWSCOPE_EVENT_NULL_STACK) != 0;
  else if (col >= COWSCOPE_EVENT_COL_V0)
    null = (r->nulls & (1u << (col - COWSCOPE_EVENT_COL_V0))) != 0;
  if (null)
    sqlite3_result_null (ctx);
  else
    sqlite3_result_int64 (ctx, r->col[col]);
  return SQLITE_OK;
}

static int
events_rowid (sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
  *rowid = ((EventsCursor *) cur)->current.col[COWSCOPE_EVENT_COL_SEQ];
  return SQLITE_OK;
}

/* ---- appending ----------------------------------------------------------------- */

static const char *const column_names[COWSCOPE_EVENT_N_COLS] = {
  "seq", "ts", "pid", "tid", "type", "op", "aux", "v0", "v1", "v2", "v3", "v4", "stack_id",
};

/* The integer in @v: TRUE, or FALSE for NULL (when @nullable) and for
 * anything that is not an integer. */
static gboolean
value_int (sqlite3_value *v, gint64 *out, gboolean *is_null)
{
  *is_null = FALSE;
  switch (sqlite3_value_numeric_type (v))
    {
    case SQLITE_INTEGER:
      *out = sqlite3_value_int64 (v);
      return TRUE;
    case SQLITE_FLOAT:
      {
        double d = sqlite3_value_double (v);
        if (d != floor (d) || d >= 9.2e18 || d <= -9.2e18)
          return FALSE;
        *out = (gint64) d;
        return TRUE;
      }
    case SQLITE_NULL:
      *is_null = TRUE;
      *out = 0;
      return TRUE;
    default:
      return FALSE;
    }
}

static int
events_update (sqlite3_vtab *vt, int argc, sqlite3_value **argv, sqlite3_int64 *rowid)
{
  EventsTable *t = (EventsTable *) vt;
  if (argc == 1 || sqlite3_value_type (argv[0]) != SQLITE_NULL)
    return set_error (vt, SQLITE_READONLY,
                      "events cannot be changed or deleted, only appended");
  if (argc != 2 + COWSCOPE_EVENT_N_COLS)
    return set_error (vt, SQLITE_ERROR, "events: wrong number of columns");
  int rc;
  if (t->store == NULL && (t->store = cowscope_event_store_new (t->db, &rc)) == NULL)
    return set_error (vt, rc, sqlite3_errmsg (t->db));

  CowscopeEventRow row = { 0 };
  for (int col = 0; col < COWSCOPE_EVENT_N_COLS; col++)
    {
      sqlite3_value *v = argv[2 + col];
      if (col == COWSCOPE_EVENT_COL_SEQ && sqlite3_value_type (v) == SQLITE_NULL)
        v = argv[1]; /* the rowid, when the INSERT named it instead */
      gboolean is_null;
      if (!value_int (v, &row.col[col], &is_null))
        {
          char *message = sqlite3_mprintf ("events.%s must be an integer", column_names[col]);
          sqlite3_free (vt->zErrMsg);
          vt->zErrMsg = message;
          return SQLITE_MISMATCH;
        }
      if (!is_null)
        continue;
      if (col == COWSCOPE_EVENT_COL_SEQ)
        row.col[col] = cowscope_event_store_next_seq (t->store);
      else if (col == COWSCOPE_EVENT_COL_STACK)
        row.nulls |= COWSCOPE_EVENT_NULL_STACK;
      else if (col >= COWSCOPE_EVENT_COL_V0)
        row.nulls |= 1u << (col - COWSCOPE_EVENT_COL_V0);
      else
        {
          char *message = sqlite3_mprintf ("NOT NULL constraint failed: events.%s",
                                           column_names[col]);
          sqlite3_free (vt->zErrMsg);
          vt->zErrMsg = message;
          return SQLITE_CONSTRAINT_NOTNULL;
        }
    }
  if (row.col[COWSCOPE_EVENT_COL_SEQ] < cowscope_event_store_next_seq (t->store))
    return set_error (vt, SQLITE_CONSTRAINT_PRIMARYKEY,
                      "events are appended in seq order: this seq is taken or earlier");
  rc = cowscope_event_store_append (t->store, &row);
  if (rc != SQLITE_OK)
    return set_error (vt, rc, sqlite3_errmsg (t->db));
  *rowid = row.col[COWSCOPE_EVENT_COL_SEQ];
  return SQLITE_OK;
}

/* The events of a transaction go into their own chunk when it commits
 * (the next transaction starts a new one). */
static int
events_sync (sqlite3_vtab *vt)
{
  EventsTable *t = (EventsTable *) vt;
  if (t->store == NULL)
    return SQLITE_OK;
  int rc = cowscope_event_store_flush (t->store);
  if (rc != SQLITE_OK)
    return set_error (vt, rc, sqlite3_errmsg (t->db));
  return SQLITE_OK;
}

static int
events_commit (sqlite3_vtab *vt)
{
  EventsTable *t = (EventsTable *) vt;
  if (t->store != NULL)
    g_clear_pointer (&t->store, cowscope_event_store_free);
  return SQLITE_OK;
}

static int
events_rollback (sqlite3_vtab *vt)
{
  EventsTable *t = (EventsTable *) vt;
  if (t->store != NULL)
    g_clear_pointer (&t->store, cowscope_event_store_free);
  return SQLITE_OK;
}

static int
events_begin (sqlite3_vtab *vt)
{
  (void) vt;
  return SQLITE_OK;
}

static const sqlite3_module events_module = {
  .iVersion = 1,
  .xCreate = events_connect,
  .xConnect = events_connect,
  .xBestIndex = events_best_index,
  .xDisconnect = events_disconnect,
  .xDestroy = events_disconnect,
  .xOpen = events_open,
  .xClose = events_close,
  .xFilter = events_filter,
  .xNext = events_next,
  .xEof = events_eof,
  .xColumn = events_column,
  .xRowid = events_rowid,
  .xUpdate = events_update,
  .xBegin = events_begin,
  .xSync = events_sync,
  .xCommit = events_commit,
  .xRollback = events_rollback,
};

int
cowscope_events_vtab_register (sqlite3 *db)
{
  return sqlite3_create_module_v2 (db, COWSCOPE_EVENTS_MODULE, &events_module, NULL, NULL);
}
