/* test-format-rules.c — the session format's rules on hand-built event
 * sequences, each expected outcome written out: the graph state, the
 * counters, the timeline items, which events carry a stack, and the
 * vocabulary that SQL names codes by. */
#include <glib.h>
#include <string.h>

#include "cow-dtype.h"
#include "cow-trace.h"
#include "cowscope-format-counters.h"
#include "cowscope-format-timeline.h"
#include "cowscope-format-vocabulary.h"
#include "cowscope-graph-state.h"
#include "cowscope-stack-events.h"

#define PID 100
/* TENSOR_NEW.aux of a one-dimensional float32 tensor: dtype | ndim << 8. */
#define F32_1D (COW_DTYPE_F32 | 1 << 8)

typedef struct {
  gint64 type, aux;
  gint64 v[5];
} Event;

/* A tensor on an allocation, lazily cloned, the clone materialized by a
 * copy, the source's context reference dropped, and the clone freed. */
static const Event lazy_copy[] = {
  /* 0 */ { COW_EVENT_ALLOCATION_NEW, COW_ALLOCATION_CPU, { 1, 4096, 0, 0, 0 } },
  /* 1 */ { COW_EVENT_STORAGE_NEW, 0, { 2, 1, 4096, 0, 0 } },
  /* 2 */ { COW_EVENT_TENSOR_NEW, F32_1D, { 3, 2, 0, 1024, 0 } },
  /* 3 */ { COW_EVENT_TENSOR_NAME, 0, { 3, 77, 0, 0, 0 } },
  /* 4 */ { COW_EVENT_CONTEXT_NEW, 0, { 4, 2, 2, 1, 0 } },
  /* 5 */ { COW_EVENT_STORAGE_NEW, 0, { 5, 1, 4096, 4, 2 } },
  /* 6 */ { COW_EVENT_TENSOR_NEW, F32_1D, { 6, 5, 3, 1024, 0 } },
  /* 7 */ { COW_EVENT_LAZY_CLONE, 0, { 3, 6, 2, 5, 4 } },
  /* 8 */ { COW_EVENT_MATERIALIZE_BEGIN, 0, { 5, 4, 6, 4096, 0 } },
  /* 9 */ { COW_EVENT_ALLOCATION_NEW, COW_ALLOCATION_CPU, { 7, 4096, 0, 0, 0 } },
  /* 10 */ { COW_EVENT_CONTEXT_UNREF, 0, { 4, 5, 1, 1, 0 } },
  /* 11 */ { COW_EVENT_MATERIALIZE_END, COW_MATERIALIZE_COPY, { 5, 4, 7, 4096, 30 } },
  /* 12 */ { COW_EVENT_TENSOR_FREE, 0, { 6, 5, 3, 1024, 0 } },
  /* 13 */ { COW_EVENT_STORAGE_FREE, 0, { 5, 7, 4096, 0, 5 } },
  /* 14 */ { COW_EVENT_ALLOCATION_FREE, COW_ALLOCATION_CPU, { 7, 4096, 0, 0, 0 } },
};

static void
apply_all (CowscopeGraphState *st, const Event *events, gsize n)
{
  for (gsize i = 0; i < n; i++)
    cowscope_graph_state_apply (st, events[i].type, events[i].aux, PID, events[i].v);
}

static CowscopeLiveObject *
object (CowscopeGraphState *st, CowscopeObjectKind kind, guint64 id)
{
  return cowscope_graph_state_lookup (st, kind, PID, id);
}

static void
test_graph_rules (void)
{
  g_autoptr (CowscopeGraphState) st = cowscope_graph_state_new ();

  /* After the lazy clone (events 0-7): six live objects, the clone's
   * storage shares context 4 with its source. */
  apply_all (st, lazy_copy, 8);
  g_assert_cmpuint (cowscope_graph_state_get_n_live (st), ==, 6);
  CowscopeLiveObject *a = object (st, COWSCOPE_OBJECT_ALLOCATION, 1);
  g_assert_cmpuint (a->nbytes, ==, 4096);
  g_assert_cmpuint (a->alloc_kind, ==, COW_ALLOCATION_CPU);
  g_assert_cmpint (a->free_ts, ==, -1);
  CowscopeLiveObject *source = object (st, COWSCOPE_OBJECT_STORAGE, 2);
  g_assert_cmpuint (source->allocation_id, ==, 1);
  g_assert_cmpuint (source->context_id, ==, 4);   /* joined at context_new */
  g_assert_cmpuint (source->left_context_id, ==, 0);
  CowscopeLiveObject *clone = object (st, COWSCOPE_OBJECT_STORAGE, 5);
  g_assert_cmpuint (clone->context_id, ==, 4);
  g_assert_cmpuint (clone->source_id, ==, 2);
  CowscopeLiveObject *ctx = object (st, COWSCOPE_OBJECT_CONTEXT, 4);
  g_assert_cmpuint (ctx->allocation_id, ==, 1);
  g_assert_cmpuint (ctx->storage_id, ==, 2);
  CowscopeLiveObject *t = object (st, COWSCOPE_OBJECT_TENSOR, 6);
  g_assert_cmpuint (t->storage_id, ==, 5);
  g_assert_cmpuint (t->source_id, ==, 3);
  g_assert_cmpint (t->numel, ==, 1024);
  g_assert_cmpuint (t->dtype, ==, COW_DTYPE_F32);
  g_assert_cmpuint (t->ndim, ==, 1);
  /* The named tensor keeps its string id for the graph's label. */
  guint n_slots = cowscope_graph_state_get_n_slots (st);
  gint64 name_id = 0;
  for (guint i = 0; i < n_slots; i++)
    {
      const CowscopeLiveObject *o = cowscope_graph_state_get_slot (st, i);
      if (o != NULL && o->kind == COWSCOPE_OBJECT_TENSOR && o->id == 3)
        g_assert_null (cowscope_graph_state_get_slot_name (st, i, &name_id));
    }
  g_assert_cmpint (name_id, ==, 77);

  /* The clone's unref, then its copy (events 8-11): it owns allocation 7
   * and left context 4; the source still shares context 4. */
  apply_all (st, lazy_copy + 8, 4);
  clone = object (st, COWSCOPE_OBJECT_STORAGE, 5);
  g_assert_cmpuint (clone->context_id, ==, 0);
  g_assert_cmpuint (clone->left_context_id, ==, 4);
  g_assert_cmpuint (clone->allocation_id, ==, 7);
  g_assert_cmpuint (object (st, COWSCOPE_OBJECT_STORAGE, 2)->context_id, ==, 4);
  g_assert_cmpuint (cowscope_graph_state_get_n_live (st), ==, 7);

  /* The frees (12-14): gone. */
  apply_all (st, lazy_copy + 12, 3);
  g_assert_null (object (st, COWSCOPE_OBJECT_TENSOR, 6));
  g_assert_null (object (st, COWSCOPE_OBJECT_STORAGE, 5));
  g_assert_null (object (st, COWSCOPE_OBJECT_ALLOCATION, 7));
  g_assert_cmpuint (cowscope_graph_state_get_n_live (st), ==, 4);

  /* The live objects sorted by (kind, pid, id). */
  g_autofree guint32 *order = cowscope_graph_state_sort (st);
  static const struct { CowscopeObjectKind kind; guint64 id; } sorted[] = {
    { COWSCOPE_OBJECT_ALLOCATION, 1 }, { COWSCOPE_OBJECT_CONTEXT, 4 },
    { COWSCOPE_OBJECT_STORAGE, 2 }, { COWSCOPE_OBJECT_TENSOR, 3 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (sorted); i++)
    {
      const CowscopeLiveObject *o = cowscope_graph_state_get_slot (st, order[i]);
      g_assert_cmpuint (o->kind, ==, sorted[i].kind);
      g_assert_cmpuint (o->id, ==, sorted[i].id);
    }
}

/* A steal takes the original allocation; a failed copy changes nothing;
 * an unref of another context leaves the storage's alone. */
static void
test_graph_rules_steal_and_failure (void)
{
  g_autoptr (CowscopeGraphState) st = cowscope_graph_state_new ();
  static const Event events[] = {
    { COW_EVENT_STORAGE_NEW, 0, { 2, 1, 64, 0, 0 } },
    { COW_EVENT_CONTEXT_NEW, 0, { 4, 2, 1, 1, 0 } },
    { COW_EVENT_CONTEXT_UNREF, 0, { 9, 2, 0, 1, 0 } },
  };
  apply_all (st, events, G_N_ELEMENTS (events));
  g_assert_cmpuint (object (st, COWSCOPE_OBJECT_STORAGE, 2)->context_id, ==, 4);

  const gint64 failed[5] = { 2, 4, 8, 64, 0 };
  cowscope_graph_state_apply (st, COW_EVENT_MATERIALIZE_END, COW_MATERIALIZE_FAILED, PID, failed);
  CowscopeLiveObject *s = object (st, COWSCOPE_OBJECT_STORAGE, 2);
  g_assert_cmpuint (s->context_id, ==, 4);
  g_assert_cmpuint (s->allocation_id, ==, 1);

  const gint64 steal[5] = { 2, 4, 1, 64, 0 };
  cowscope_graph_state_apply (st, COW_EVENT_MATERIALIZE_END,
                              COW_MATERIALIZE_STEAL | COW_MATERIALIZE_FLAG_COPY_DISCARDED, PID,
                              steal);
  s = object (st, COWSCOPE_OBJECT_STORAGE, 2);
  g_assert_cmpuint (s->context_id, ==, 0);
  g_assert_cmpuint (s->left_context_id, ==, 4);
  g_assert_cmpuint (s->allocation_id, ==, 1);

  /* Another process's objects are other objects. */
  g_assert_null (cowscope_graph_state_lookup (st, COWSCOPE_OBJECT_STORAGE, PID + 1, 2));

  /* An id born again is a new object. */
  const gint64 again[5] = { 2, 3, 128, 0, 0 };
  cowscope_graph_state_apply (st, COW_EVENT_STORAGE_NEW, 0, PID, again);
  s = object (st, COWSCOPE_OBJECT_STORAGE, 2);
  g_assert_cmpuint (s->left_context_id, ==, 0);
  g_assert_cmpuint (s->nbytes, ==, 128);
}

static void
test_event_predicates (void)
{
  g_assert_cmpint (cowscope_event_creates (COW_EVENT_ALLOCATION_NEW), ==, COWSCOPE_OBJECT_ALLOCATION);
  g_assert_cmpint (cowscope_event_creates (COW_EVENT_CONTEXT_NEW), ==, COWSCOPE_OBJECT_CONTEXT);
  g_assert_cmpint (cowscope_event_creates (COW_EVENT_STORAGE_NEW), ==, COWSCOPE_OBJECT_STORAGE);
  g_assert_cmpint (cowscope_event_creates (COW_EVENT_TENSOR_NEW), ==, COWSCOPE_OBJECT_TENSOR);
  g_assert_cmpint (cowscope_event_creates (COW_EVENT_CONTEXT_REF), ==, -1);
  /* Replays hold the events that change the graph, and nothing else. */
  static const CowEventType irrelevant[] = {
    COW_EVENT_TENSOR_NAME, COW_EVENT_LAZY_CLONE, COW_EVENT_LAZY_CLONE_EAGER,
    COW_EVENT_MATERIALIZE_BEGIN, COW_EVENT_SIMULATE_VIOLATION, COW_EVENT_RANGE_BEGIN,
    COW_EVENT_RANGE_END, COW_EVENT_MARK,
  };
  guint n_relevant = 0;
  for (int type = 1; type < COW_N_EVENT_TYPES; type++)
    n_relevant += cowscope_event_changes_graph (type);
  g_assert_cmpuint (n_relevant, ==, COW_N_EVENT_TYPES - 1 - G_N_ELEMENTS (irrelevant));
  for (gsize i = 0; i < G_N_ELEMENTS (irrelevant); i++)
    g_assert_false (cowscope_event_changes_graph (irrelevant[i]));
  g_assert_cmpstr (cowscope_object_kind_name (COWSCOPE_OBJECT_STORAGE), ==, "storage");
}

static void
test_counter_rules (void)
{
  CowscopeCounterRules rules;
  cowscope_counter_rules_init (&rules);
  /* After each event of lazy_copy: allocated, shared, storages, and the
   * counters it changed. */
  static const struct { double allocated, shared, storages; guint changed; } expected[] = {
    /* 0 */ { 4096, 0, 0, 1 << COWSCOPE_COUNTER_BYTES_ALLOCATED },
    /* 1 */ { 4096, 0, 1, 1 << COWSCOPE_COUNTER_LIVE_STORAGES },
    /* 2 */ { 4096, 0, 1, 0 },
    /* 3 */ { 4096, 0, 1, 0 },
    /* 4 */ { 4096, 0, 1, 0 },
    /* 5: a storage born on context 4 shares its 4096 bytes */
    { 4096, 4096, 2, 1 << COWSCOPE_COUNTER_LIVE_STORAGES | 1 << COWSCOPE_COUNTER_BYTES_SHARED },
    /* 6 */ { 4096, 4096, 2, 0 },
    /* 7 */ { 4096, 4096, 2, 0 },
    /* 8 */ { 4096, 4096, 2, 0 },
    /* 9 */ { 8192, 4096, 2, 1 << COWSCOPE_COUNTER_BYTES_ALLOCATED },
    /* 10: a sharer leaves while one remains: nothing shared any more */
    { 8192, 0, 2, 1 << COWSCOPE_COUNTER_BYTES_SHARED },
    /* 11 */ { 8192, 0, 2, 0 },
    /* 12 */ { 8192, 0, 2, 0 },
    /* 13 */ { 8192, 0, 1, 1 << COWSCOPE_COUNTER_LIVE_STORAGES },
    /* 14 */ { 4096, 0, 1, 1 << COWSCOPE_COUNTER_BYTES_ALLOCATED },
  };
  G_STATIC_ASSERT (G_N_ELEMENTS (expected) == G_N_ELEMENTS (lazy_copy));
  for (gsize i = 0; i < G_N_ELEMENTS (lazy_copy); i++)
    {
      guint changed = cowscope_counter_rules_apply (&rules, PID, lazy_copy[i].type, lazy_copy[i].v);
      g_assert_cmpuint (changed, ==, expected[i].changed);
      g_assert_cmpfloat (rules.value[COWSCOPE_COUNTER_BYTES_ALLOCATED], ==, expected[i].allocated);
      g_assert_cmpfloat (rules.value[COWSCOPE_COUNTER_BYTES_SHARED], ==, expected[i].shared);
      g_assert_cmpfloat (rules.value[COWSCOPE_COUNTER_LIVE_STORAGES], ==, expected[i].storages);
    }
  /* The last sharer's unref (refcount 0 after) shares nothing less. */
  const gint64 last[5] = { 4, 2, 0, 1, 0 };
  g_assert_cmpuint (cowscope_counter_rules_apply (&rules, PID, COW_EVENT_CONTEXT_UNREF, last), ==, 0);
  g_assert_cmpfloat (rules.value[COWSCOPE_COUNTER_BYTES_SHARED], ==, 0);
  cowscope_counter_rules_clear (&rules);
}

static void
test_timeline_rules (void)
{
  static const struct { gint64 type, aux; guint8 kind; } kinds[] = {
    { COW_EVENT_ALLOCATION_NEW, 0, COWSCOPE_ITEM_ALLOCATION },
    { COW_EVENT_TENSOR_FREE, 0, COWSCOPE_ITEM_FREE },
    { COW_EVENT_TENSOR_NAME, 0, COWSCOPE_ITEM_TENSOR },
    { COW_EVENT_CONTEXT_UNREF, 0, COWSCOPE_ITEM_CONTEXT },
    { COW_EVENT_LAZY_CLONE_EAGER, COW_EAGER_NOT_SIMPLE, COWSCOPE_ITEM_EAGER_COPY },
    { COW_EVENT_MATERIALIZE_END, COW_MATERIALIZE_COPY, COWSCOPE_ITEM_COPY },
    { COW_EVENT_MATERIALIZE_END, COW_MATERIALIZE_STEAL | COW_MATERIALIZE_FLAG_COPY_DISCARDED,
      COWSCOPE_ITEM_STEAL },
    { COW_EVENT_MATERIALIZE_END, COW_MATERIALIZE_FAILED, COWSCOPE_ITEM_MATERIALIZE_FAILED },
    { COW_EVENT_SIMULATE_VIOLATION, COW_ACCESS_READ, COWSCOPE_ITEM_VIOLATION },
    { COW_EVENT_MARK, 0, COWSCOPE_ITEM_MARK },
    { COW_EVENT_IPC_LIMBO_FREE, 1, COWSCOPE_ITEM_IPC },
    { 200, 0, COWSCOPE_ITEM_OTHER },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (kinds); i++)
    g_assert_cmpuint (cowscope_timeline_event_kind (kinds[i].type, kinds[i].aux), ==, kinds[i].kind);
  g_assert_cmpuint (cowscope_timeline_span_kind (COW_MATERIALIZE_STEAL), ==, COWSCOPE_ITEM_STEAL);
  g_assert_cmpuint (cowscope_timeline_span_kind (255), ==, COWSCOPE_ITEM_RANGE);

  const gint64 v[5] = { 10, 20, 30, 40, 50 };
  g_assert_cmpuint (cowscope_timeline_event_bytes (COW_EVENT_ALLOCATION_FREE, v), ==, 20);
  g_assert_cmpuint (cowscope_timeline_event_bytes (COW_EVENT_STORAGE_NEW, v), ==, 30);
  g_assert_cmpuint (cowscope_timeline_event_bytes (COW_EVENT_MATERIALIZE_END, v), ==, 40);
  g_assert_cmpuint (cowscope_timeline_event_bytes (COW_EVENT_TENSOR_NEW, v), ==, 0);

  g_assert_cmpuint (cowscope_timeline_cuda_kind ("memcpy"), ==, COWSCOPE_ITEM_CUDA_MEMCPY);
  g_assert_cmpuint (cowscope_timeline_cuda_kind ("kernel"), ==, COWSCOPE_ITEM_CUDA_KERNEL);
  g_assert_cmpuint (cowscope_timeline_cuda_kind ("runtime_api"), ==, COWSCOPE_ITEM_CUDA_OTHER);
  g_assert_cmpuint (cowscope_timeline_cuda_kind (NULL), ==, COWSCOPE_ITEM_CUDA_OTHER);
}

/* The probe and the collector share this list; MATERIALIZE_END is not on
 * it (its BEGIN's stack is the materialization's). */
static void
test_stack_events (void)
{
  guint n = 0;
  for (guint type = 0; type < 64; type++)
    n += cowscope_event_takes_stack (type);
  g_assert_cmpuint (n, ==, 5);
  g_assert_true (cowscope_event_takes_stack (COW_EVENT_LAZY_CLONE));
  g_assert_true (cowscope_event_takes_stack (COW_EVENT_LAZY_CLONE_EAGER));
  g_assert_true (cowscope_event_takes_stack (COW_EVENT_MATERIALIZE_BEGIN));
  g_assert_true (cowscope_event_takes_stack (COW_EVENT_SIMULATE_VIOLATION));
  g_assert_true (cowscope_event_takes_stack (COW_EVENT_IPC_SEND));
  g_assert_false (cowscope_event_takes_stack (COW_EVENT_MATERIALIZE_END));
}

static void
test_vocabulary (void)
{
  g_autofree char *sql = cowscope_format_expand_sql (
    "SELECT * FROM events WHERE type IN (:ev_lazy_clone, :ev_materialize_end)"
    " AND (aux & :materialize_kind_mask) = :materialize_steal AND pid = :pid"
    " AND name = ':ev_mark' AND kind = :cuda_external_correlation AND x = :ev_lazy_clonex");
  g_assert_cmpstr (sql, ==,
                   "SELECT * FROM events WHERE type IN (12, 15)"
                   " AND (aux & 255) = 2 AND pid = :pid"
                   " AND name = ':ev_mark' AND kind = 6 AND x = :ev_lazy_clonex");
  g_assert_cmpstr (cowscope_format_enum_name ("event_types", COW_EVENT_IPC_SEND), ==, "ipc_send");
  g_assert_cmpstr (cowscope_format_enum_name ("ops", COW_OP_ADD_), ==, "add_");
  g_assert_cmpstr (cowscope_format_enum_name ("materialize_kinds", 2), ==, "steal");
  g_assert_cmpstr (cowscope_format_enum_name ("cuda_kinds", 7), ==, "runtime_api");
  g_assert_cmpstr (cowscope_format_enum_name ("memcpy_kinds", 8), ==, "DtoD");
  g_assert_null (cowscope_format_enum_name ("materialize_kinds", 9));
  g_assert_null (cowscope_format_enum_name ("no_such_table", 1));
  guint n;
  const guint *sizes = cowscope_format_dtype_sizes (&n);
  g_assert_cmpuint (n, ==, COW_N_DTYPES);
  g_assert_cmpuint (sizes[COW_DTYPE_F32], ==, 4);
  g_assert_cmpuint (sizes[COW_DTYPE_I64], ==, 8);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/format/rules/graph", test_graph_rules);
  g_test_add_func ("/format/rules/graph-steal-and-failure", test_graph_rules_steal_and_failure);
  g_test_add_func ("/format/rules/event-predicates", test_event_predicates);
  g_test_add_func ("/format/rules/counters", test_counter_rules);
  g_test_add_func ("/format/rules/timeline", test_timeline_rules);
  g_test_add_func ("/format/rules/stack-events", test_stack_events);
  g_test_add_func ("/format/rules/vocabulary", test_vocabulary);
  return g_test_run ();
}
