/* cowscope-ipc-graph.c — blocks shared across processes in the sharing
 * graph at one instant.
 *
 * From the session's ipc_refs table (one row per send; README, "Session
 * database"), at the graph's seq S:
 *   - a block is shown in its producer (IPC_BLOCK, id = the producer's
 *     allocation id) from its first send until it is freed: while the
 *     producer's allocation lives, or while one of its slots is in the
 *     limbo (state LIMBO: the producer dropped it, a consumer still
 *     counts it);
 *   - a consumer's received-data record (IPC_RECEIVED, id = the seq of
 *     the receive that mapped the block) lives from that receive until
 *     its release; receives that hit the consumer's cache share it;
 *   - RECEIVED_BY (or KEPT_ALIVE_BY, in the limbo) joins a block to each
 *     record whose slot still counts; OWNS joins a block to the
 *     producer's allocation and a record to each live consumer allocation
 *     over its mapping.
 * The IPC objects are few (one row per send), so they are read at every
 * build instead of being checkpointed.
 */
#include "cowscope-sharing-graph-private.h"
#include "cowscope-ipc-private.h"

#include <stdlib.h>

#include "cowscope-format-open.h"
#include "cowscope-session-document-private.h"

typedef struct {
  guint32 producer, consumer;
  gint64 allocation, storage, nbytes;
  gint64 receive, cached, consumer_allocation, release, limbo_enter, limbo_free;
} Ref;

/* Orders nodes by (pid, id) within one kind. */
static int
compare_pid_id (const void *a, const void *b)
{
  const CowscopeGraphNode *x = a, *y = b;
  if (x->pid != y->pid)
    return x->pid < y->pid ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Index of (@pid, @id) in sorted @nodes, or -1. */
static gint
find (GArray *nodes, guint32 pid, guint64 id)
{
  CowscopeGraphNode key = { .pid = pid, .id = id };
  const CowscopeGraphNode *found =
    bsearch (&key, nodes->data, nodes->len, sizeof (CowscopeGraphNode), compare_pid_id);
  return found ? (gint) (found - (const CowscopeGraphNode *) (gpointer) nodes->data) : -1;
}

/* "cowscope-demo (pid 1234)" for every process of the session. */
static void
label_processes (CowscopeSessionDocument *document, CowscopeSharingGraph *graph)
{
  for (guint i = 0; i < cowscope_session_document_get_n_processes (document); i++)
    {
      const CowscopeProcessInfo *p = cowscope_session_document_get_process (document, i);
      g_autofree char *label = cowscope_ipc_process_label (p);
      cowscope_sharing_graph_set_process_label (graph, p->pid, label);
    }
}

/* Reads the sends up to @seq. */
static gboolean
read_refs (sqlite3 *db, const char *path, gint64 seq, GArray *refs, GError **error)
{
  g_autoptr (sqlite3_stmt) q = cowscope_format_statement (
    db, path,
    "SELECT producer_pid, consumer_pid, allocation_id, storage_id, nbytes, receive_seq, cached,"
    " consumer_allocation_id, release_seq, limbo_enter_seq, limbo_free_seq"
    " FROM ipc_refs WHERE send_seq <= ?1 ORDER BY send_seq",
    error);
  if (q == NULL)
    return FALSE;
  sqlite3_bind_int64 (q, 1, seq);
  int rc;
  while ((rc = sqlite3_step (q)) == SQLITE_ROW)
    {
      Ref r = {
        .producer = (guint32) cowscope_format_column_int (q, 0, 0),
        .consumer = (guint32) cowscope_format_column_int (q, 1, 0),
        .allocation = cowscope_format_column_int (q, 2, 0),
        .storage = cowscope_format_column_int (q, 3, 0),
        .nbytes = cowscope_format_column_int (q, 4, 0),
        .receive = cowscope_format_column_int (q, 5, -1),
        .cached = cowscope_format_column_int (q, 6, 0),
        .consumer_allocation = cowscope_format_column_int (q, 7, 0),
        .release = cowscope_format_column_int (q, 8, -1),
        .limbo_enter = cowscope_format_column_int (q, 9, -1),
        .limbo_free = cowscope_format_column_int (q, 10, -1),
      };
      g_array_append_val (refs, r);
    }
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, db, rc, path, "ipc_refs");
      return FALSE;
    }
  return TRUE;
}

/* A key for a consumer's record of one producer block. */
static gchar *
record_key (const Ref *r)
{
  return g_strdup_printf ("%u/%u/%" G_GINT64_FORMAT, r->consumer, r->producer, r->allocation);
}

gboolean
cowscope_ipc_graph_augment (CowscopeSessionDocument *document, CowscopeSharingGraph *graph,
                            GError **error)
{
  label_processes (document, graph);

  const char *path = cowscope_session_document_get_path (document);
  sqlite3 *db = cowscope_session_document_acquire_db (document, error);
  if (db == NULL)
    return FALSE;
  gint64 seq = cowscope_sharing_graph_get_seq (graph);
  gboolean has = FALSE;
  g_autoptr (GArray) refs = g_array_new (FALSE, FALSE, sizeof (Ref));
  gboolean ok = cowscope_ipc_has_table (db, path, "ipc_refs", &has, error)
                && (!has || read_refs (db, path, seq, refs, error));
  cowscope_session_document_release_db (document, db);
  if (!ok)
    return FALSE;
  if (refs->len == 0)
    return TRUE;

#define SEEN(x) ((x) >= 0 && (x) <= seq)
  g_autoptr (GArray) blocks = g_array_new (FALSE, TRUE, sizeof (CowscopeGraphNode));
  g_autoptr (GArray) records = g_array_new (FALSE, TRUE, sizeof (CowscopeGraphNode));
  g_autoptr (GHashTable) live_record = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr (GHashTable) block_index = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  /* Nodes first: active blocks, live records. */
  for (guint i = 0; i < refs->len; i++)
    {
      const Ref *r = &g_array_index (refs, Ref, i);
      gboolean in_limbo = SEEN (r->limbo_enter) && !SEEN (r->limbo_free);
      gboolean alloc_live = cowscope_sharing_graph_lookup (graph, COWSCOPE_NODE_ALLOCATION,
                                                           r->producer,
                                                           (guint64) r->allocation) >= 0;
      if (!SEEN (r->limbo_free) && (in_limbo || alloc_live))
        {
          g_autofree char *bkey = g_strdup_printf ("%u/%" G_GINT64_FORMAT, r->producer,
                                                   r->allocation);
          gpointer found;
          guint b;
          if (g_hash_table_lookup_extended (block_index, bkey, NULL, &found))
            b = GPOINTER_TO_UINT (found);
          else
            {
              CowscopeGraphNode n = {
                .pid = r->producer, .kind = COWSCOPE_NODE_IPC_BLOCK,
                .state = COWSCOPE_NODE_STATE_SHARED, .id = (guint64) r->allocation,
                .nbytes = (guint64) MAX (r->nbytes, 0), .free_ts = -1,
                .allocation_id = (guint64) r->allocation, .storage_id = (guint64) r->storage,
              };
              b = blocks->len;
              g_array_append_val (blocks, n);
              g_hash_table_insert (block_index, g_steal_pointer (&bkey), GUINT_TO_POINTER (b));
            }
          if (in_limbo)
            g_array_index (blocks, CowscopeGraphNode, b).state = COWSCOPE_NODE_STATE_LIMBO;
        }
      if (SEEN (r->receive) && !r->cached && !SEEN (r->release))
        {
          CowscopeGraphNode n = {
            .pid = r->consumer, .kind = COWSCOPE_NODE_IPC_RECEIVED,
            .state = COWSCOPE_NODE_STATE_SHARED, .id = (guint64) r->receive,
            .nbytes = (guint64) MAX (r->nbytes, 0), .free_ts = -1,
            .allocation_id = (guint64) r->consumer_allocation,
            .source_id = (guint64) r->allocation, .peer_pid = r->producer,
          };
          g_array_append_val (records, n);
          g_hash_table_replace (live_record, record_key (r), GINT_TO_POINTER (r->receive));
        }
    }
  g_array_sort (blocks, compare_pid_id);
  g_array_sort (records, compare_pid_id);

  /* Edges, by index in the whole graph: blocks follow the existing
   * nodes, records follow the blocks. */
  guint base = cowscope_sharing_graph_get_n_nodes (graph);
  guint rbase = base + blocks->len;
  g_autoptr (GArray) edges = g_array_new (FALSE, FALSE, sizeof (CowscopeGraphEdge));
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  for (guint b = 0; b < blocks->len; b++)
    {
      CowscopeGraphNode *n = &g_array_index (blocks, CowscopeGraphNode, b);
      gint a = cowscope_sharing_graph_lookup (graph, COWSCOPE_NODE_ALLOCATION, n->pid, n->id);
      if (a >= 0)
        {
          CowscopeGraphEdge e = { base + b, (guint32) a, COWSCOPE_EDGE_OWNS };
          g_array_append_val (edges, e);
        }
    }
  for (guint i = 0; i < refs->len; i++)
    {
      const Ref *r = &g_array_index (refs, Ref, i);
      if (!SEEN (r->receive))
        continue;
      g_autofree char *key = record_key (r);
      gpointer rec_seq;
      if (!g_hash_table_lookup_extended (live_record, key, NULL, &rec_seq))
        continue;
      gint rec = find (records, r->consumer, (guint64) GPOINTER_TO_INT (rec_seq));
      if (rec < 0)
        continue;
      CowscopeGraphNode *rn = &g_array_index (records, CowscopeGraphNode, rec);
      /* The consumer's allocation over the mapping (one per receive). */
      gint ca = r->consumer_allocation != 0
                  ? cowscope_sharing_graph_lookup (graph, COWSCOPE_NODE_ALLOCATION, r->consumer,
                                                   (guint64) r->consumer_allocation)
                  : -1;
      if (ca >= 0)
        {
          CowscopeGraphEdge e = { rbase + (guint) rec, (guint32) ca, COWSCOPE_EDGE_OWNS };
          g_array_append_val (edges, e);
        }
      /* The slot that counts: the record's own receive. */
      if (r->cached || (gint64) rn->id != r->receive)
        continue;
      gint b = find (blocks, r->producer, (guint64) r->allocation);
      if (b < 0)
        continue;
      CowscopeGraphNode *bn = &g_array_index (blocks, CowscopeGraphNode, b);
      bn->refcount++;
      g_autofree char *edge_key = g_strdup_printf ("%d/%d", b, rec);
      if (!g_hash_table_add (seen, g_steal_pointer (&edge_key)))
        continue;
      CowscopeGraphEdge e = { base + (guint) b, rbase + (guint) rec,
                              bn->state == COWSCOPE_NODE_STATE_LIMBO
                                ? COWSCOPE_EDGE_KEPT_ALIVE_BY
                                : COWSCOPE_EDGE_RECEIVED_BY };
      g_array_append_val (edges, e);
    }
#undef SEEN

  /* A block's edge kind follows its final state (a later slot may have
   * put it in the limbo after an earlier edge was made). */
  for (guint i = 0; i < edges->len; i++)
    {
      CowscopeGraphEdge *e = &g_array_index (edges, CowscopeGraphEdge, i);
      if (COWSCOPE_EDGE_KIND_IS_CROSS_PROCESS (e->kind))
        {
          const CowscopeGraphNode *bn = &g_array_index (blocks, CowscopeGraphNode, e->from - base);
          e->kind = bn->state == COWSCOPE_NODE_STATE_LIMBO ? COWSCOPE_EDGE_KEPT_ALIVE_BY
                                                           : COWSCOPE_EDGE_RECEIVED_BY;
        }
    }
  g_autoptr (GArray) all = g_array_sized_new (FALSE, FALSE, sizeof (CowscopeGraphNode),
                                              blocks->len + records->len);
  g_array_append_vals (all, blocks->data, blocks->len);
  g_array_append_vals (all, records->data, records->len);
  cowscope_sharing_graph_append (graph, (const CowscopeGraphNode *) (gpointer) all->data, all->len,
                                 (const CowscopeGraphEdge *) (gpointer) edges->data, edges->len);
  return TRUE;
}
