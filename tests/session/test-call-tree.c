/* test-call-tree.c — the copy call tree, without a display: built on a
 * hand-built session whose stacks, copies, steals and eager fallbacks are
 * written out below with the weights each node must get, top-down and
 * bottom-up, over the whole session and over a range; the events listed
 * under a node; the bottom-up roots against the report's call sites;
 * the report as the summary page reads it. */
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

#include "cow-trace.h"
#include "cowscope-call-node.h"
#include "cowscope-call-tree.h"
#include "cowscope-call-tree-private.h"
#include "cowscope-format-index.h"
#include "cowscope-format-schema.h"
#include "cowscope-format-vocabulary.h"
#include "cowscope-report.h"
#include "cowscope-report-reader.h"
#include "cowscope-session-document.h"
#include "cowscope-session-tables.h"

static char *
scratch (const char *name)
{
  const char *dir = g_getenv ("COWSCOPE_TEST_TMPDIR");
  g_autofree char *base = g_strdup_printf ("test-call-tree-%d-%s", (int) getpid (), name);
  return g_build_filename (dir ? dir : g_get_tmp_dir (), base, NULL);
}

static void
exec_ok (sqlite3 *db, const char *sql)
{
  char *message = NULL;
  if (sqlite3_exec (db, sql, NULL, NULL, &message) != SQLITE_OK)
    g_error ("%s: %s", sql, message);
}

/* The hand-built session.  Frames (pid 100 unless said):
 *    1 cow_storage_materialize  cow-storage.c:300  libcowtensor.so.0
 *    2 cow_tensor_add_          cow-ops.c:210      libcowtensor.so.0
 *    3 update_weights           train.c:88         /bin/train
 *    4 train_step               train.c:120        /bin/train
 *    5 main                     train.c:200        /bin/train
 *    6 load_batch               data.c:40          /bin/train
 *    7 (unsymbolized 0x4a0)                        /bin/train
 *    8 cow_tensor_lazy_clone    cow-lazy.c:50      libcowtensor.so.0
 *    9 (unsymbolized 0x99)                         libcowscope-probe.so
 *   10 update_weights           train.c:88         /bin/train (pid 200)
 *   11 main                     train.c:200        /bin/train (pid 200)
 *   12 update_weights           train.c:91         /bin/train
 * Stacks, innermost first, and their call sites:
 *   S1 [1 2 3 4 5]  update_weights:88 (main > train_step > update_weights)
 *   S2 [1 2 6 4 5]  load_batch        (main > train_step > load_batch)
 *   S3 [1 12 5]     update_weights:91 (main > update_weights)
 *   S4 [9 1 7 5]    main: the innermost *symbolized* user frame
 *   S5 [8 10 11]    update_weights:88 in pid 200 (main > update_weights)
 *   S6 [1 2]        only Cowscope's frames: the innermost, materialize
 * Events (seq: what, stack, bytes, begin..end):
 *   10 copy S1 1000 1000..1100     15 eager S2 40 at 1500
 *   18 copy S3 1 1900..2100        20 copy S1 3000 2000..2050
 *   25 lazy (not eager) S1 4096    30 steal S1 500 3000..3010
 *   40 copy S2 200 4000..4020      50 copy S3 64 5000..5001
 *   60 copy S4 10 6000..6000       70 copy S5 7 7000..7070 (pid 200)
 *   80 steal S6 4 8000..8008 (its copy discarded)
 *   90 copy, no stack, 5 9000..9005   95 eager, no stack, 2 at 9500
 *  100 failed S1 999 9600..9700 (copies nothing: left out)
 * Tensor 12 (written by the copy at 18) is named "grad", tensor 16 (the
 * copy at 50) has no name. */
static void
write_session (const char *path)
{
  g_unlink (path);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
  g_assert_true (cowscope_format_create_schema (db));
  exec_ok (db, "BEGIN");
  g_assert_true (cowscope_format_fill_lookup_tables (db));
  exec_ok (db,
    "INSERT INTO meta VALUES ('format', 'cowscope-session'), ('schema_version', '2'),"
    " ('recorder_version', 'hand-built'), ('program', 'train'), ('stacks', '1'),"
    " ('finalized', 1);"
    "INSERT INTO processes (pid, start_ns, end_ns) VALUES (100, 1000, 10000), (200, 1000, 10000);"
    "INSERT INTO threads (pid, tid, name) VALUES (100, 101, 'main'), (200, 201, 'main');"
    "INSERT INTO frames (id, pid, address, module, function, file, line) VALUES"
    " (1, 100, 4096, '/usr/lib/libcowtensor.so.0', 'cow_storage_materialize', '/src/engine/cow-storage.c', 300),"
    " (2, 100, 8192, '/usr/lib/libcowtensor.so.0', 'cow_tensor_add_', '/src/engine/cow-ops.c', 210),"
    " (3, 100, 100, '/bin/train', 'update_weights', '/src/train.c', 88),"
    " (4, 100, 200, '/bin/train', 'train_step', '/src/train.c', 120),"
    " (5, 100, 300, '/bin/train', 'main', '/src/train.c', 200),"
    " (6, 100, 400, '/bin/train', 'load_batch', '/src/data.c', 40),"
    " (7, 100, 1184, '/bin/train', NULL, NULL, NULL),"
    " (8, 200, 4000, '/usr/lib/libcowtensor.so.0', 'cow_tensor_lazy_clone', '/src/engine/cow-lazy.c', 50),"
    " (9, 100, 153, '/usr/lib/cowscope/libcowscope-probe.so', NULL, NULL, NULL),"
    " (10, 200, 700, '/bin/train', 'update_weights', '/src/train.c', 88),"
    " (11, 200, 800, '/bin/train', 'main', '/src/train.c', 200),"
    " (12, 100, 104, '/bin/train', 'update_weights', '/src/train.c', 91);"
    "INSERT INTO stacks VALUES (1, 5), (2, 5), (3, 3), (4, 4), (5, 3), (6, 2);"
    "INSERT INTO stack_frames VALUES (1, 0, 1), (1, 1, 2), (1, 2, 3), (1, 3, 4), (1, 4, 5),"
    " (2, 0, 1), (2, 1, 2), (2, 2, 6), (2, 3, 4), (2, 4, 5),"
    " (3, 0, 1), (3, 1, 12), (3, 2, 5),"
    " (4, 0, 9), (4, 1, 1), (4, 2, 7), (4, 3, 5),"
    " (5, 0, 8), (5, 1, 10), (5, 2, 11),"
    " (6, 0, 1), (6, 1, 2);");
  /* materializations: seq, pid, tid, begin, end, op, storage, context,
   * tensor, nbytes, kind, copy_discarded, lock_wait, allocation,
   * lazy_clone_seq, stack */
  g_autofree char *m = g_strdup_printf (
    "INSERT INTO materializations VALUES"
    " (10, 100, 101, 1000, 1100, %d, 1, 1, 11, 1000, 1, 0, 0, 1, NULL, 1),"
    " (18, 100, 101, 1900, 2100, %d, 2, 1, 12, 1, 1, 0, 0, 1, NULL, 3),"
    " (20, 100, 101, 2000, 2050, %d, 3, 1, 13, 3000, 1, 0, 0, 1, NULL, 1),"
    " (30, 100, 101, 3000, 3010, %d, 4, 1, 14, 500, 2, 0, 0, 1, NULL, 1),"
    " (40, 100, 101, 4000, 4020, %d, 5, 1, 15, 200, 1, 0, 0, 1, NULL, 2),"
    " (50, 100, 101, 5000, 5001, %d, 6, 1, 16, 64, 1, 0, 0, 1, NULL, 3),"
    " (60, 100, 101, 6000, 6000, %d, 7, 1, 17, 10, 1, 0, 0, 1, NULL, 4),"
    " (70, 200, 201, 7000, 7070, %d, 8, 1, 18, 7, 1, 0, 0, 1, NULL, 5),"
    " (80, 100, 101, 8000, 8008, %d, 9, 1, 19, 4, %d, 1, 0, 1, NULL, 6),"
    " (90, 100, 101, 9000, 9005, %d, 10, 1, 20, 5, 1, 0, 0, 1, NULL, NULL),"
    " (100, 100, 101, 9600, 9700, %d, 11, 1, 21, 999, 3, 0, 0, 1, NULL, 1);",
    COW_OP_ADD_, COW_OP_ADD_, COW_OP_ADD_, COW_OP_MUL_, COW_OP_ADD_, COW_OP_FILL_, COW_OP_ADD_,
    COW_OP_ADD_, COW_OP_MUL_, COW_MATERIALIZE_STEAL | 0x100, COW_OP_ADD_, COW_OP_ADD_);
  exec_ok (db, m);
  /* lazy_clones: seq, pid, tid, ts, op, source and result tensors and
   * storages, context (NULL: eager), eager_reason, nbytes, stack */
  g_autofree char *l = g_strdup_printf (
    "INSERT INTO lazy_clones VALUES"
    " (15, 100, 101, 1500, %d, 30, 31, 40, 41, NULL, 1, 40, 2),"
    " (25, 100, 101, 2500, %d, 32, 33, 42, 43, 5, NULL, 4096, 1),"
    " (95, 100, 101, 9500, %d, 34, 35, 44, 45, NULL, 2, 2, NULL);",
    COW_OP_LAZY_CLONE, COW_OP_LAZY_CLONE, COW_OP_LAZY_CLONE);
  exec_ok (db, l);
  exec_ok (db, "INSERT INTO tensors (pid, id, storage_id, name) VALUES (100, 12, 2, 'grad'),"
               " (100, 16, 6, NULL)");
  g_autoptr (GError) error = NULL;
  g_assert_true (cowscope_format_index_write (db, path, G_MAXINT64, &error));
  g_assert_no_error (error);
  exec_ok (db, "COMMIT");
  sqlite3_close (db);
}

static char *session_path;

static const char *
session (void)
{
  if (session_path == NULL)
    {
      session_path = scratch ("hand-built.cowscope");
      write_session (session_path);
    }
  return session_path;
}

static CowscopeSessionDocument *
load (void)
{
  g_autoptr (GError) error = NULL;
  CowscopeSessionDocument *doc = cowscope_session_document_load (session (), NULL, &error);
  g_assert_no_error (error);
  return doc;
}

static CowscopeCallTree *
build (CowscopeSessionDocument *doc, gint64 start, gint64 end, CowscopeCallTreeGrouping grouping,
       gboolean internal)
{
  CowscopeCallTreeOptions o;
  cowscope_call_tree_options_init (&o);
  o.range_start = start;
  o.range_end = end;
  o.grouping = grouping;
  o.include_internal = internal;
  g_autoptr (GError) error = NULL;
  CowscopeCallTree *tree = cowscope_call_tree_new (doc, &o, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (tree);
  return tree;
}

/* The tree under @node as text, one line per node, indented two spaces a
 * level: "display bytes=B copies=C steals=S eager=E time=T [self=B/N]". */
static void
dump (CowscopeCallTree *tree, guint node, guint level, GString *out)
{
  const CowscopeCallFrame *f = cowscope_call_tree_get_frame (tree, node);
  const CowscopeCallWeights *w = cowscope_call_tree_get_total (tree, node);
  const CowscopeCallWeights *s = cowscope_call_tree_get_self (tree, node);
  guint64 self_events = cowscope_call_weights_get (s, COWSCOPE_CALL_METRIC_EVENTS);

  g_string_append_printf (out, "%*s%s bytes=%" G_GUINT64_FORMAT " copies=%" G_GUINT64_FORMAT
                          " steals=%" G_GUINT64_FORMAT " eager=%" G_GUINT64_FORMAT
                          " time=%" G_GUINT64_FORMAT, level * 2, "",
                          f != NULL ? f->display : "ROOT",
                          cowscope_call_weights_get (w, COWSCOPE_CALL_METRIC_BYTES), w->copies,
                          w->steals, w->eager, w->time_ns);
  if (self_events > 0 && cowscope_call_tree_get_n_children (tree, node) > 0)
    g_string_append_printf (out, " self=%" G_GUINT64_FORMAT "/%" G_GUINT64_FORMAT,
                            cowscope_call_weights_get (s, COWSCOPE_CALL_METRIC_BYTES), self_events);
  g_string_append_c (out, '\n');
  g_assert_cmpuint (cowscope_call_tree_get_depth (tree, node), ==, level);
  for (guint i = 0; i < cowscope_call_tree_get_n_children (tree, node); i++)
    {
      guint child = cowscope_call_tree_get_child (tree, node, i);
      g_assert_cmpuint (cowscope_call_tree_get_parent (tree, child), ==, node);
      dump (tree, child, level + 1, out);
    }
}

static void
assert_tree (CowscopeCallTree *tree, CowscopeCallTreeDirection direction, const char *expected)
{
  g_autoptr (GString) got = g_string_new (NULL);
  dump (tree, cowscope_call_tree_get_root (tree, direction), 0, got);
  if (g_strcmp0 (got->str, expected) != 0)
    g_test_message ("got:\n%s", got->str);
  g_assert_cmpstr (got->str, ==, expected);
}

/* The whole session, top-down: main() leads to all but the steal whose
 * stack is only Cowscope's frames and the events without a stack; S4's
 * copy is main's own (its call site); pid 200's update_weights:88 is a
 * node of its own under main, beside pid 100's update_weights:91. */
static void
test_top_down (void)
{
  g_autoptr (CowscopeSessionDocument) doc = load ();
  g_autoptr (CowscopeCallTree) tree = build (doc, -1, -1, COWSCOPE_CALL_TREE_BY_LINE, FALSE);
  assert_tree (tree, COWSCOPE_CALL_TREE_TOP_DOWN,
    "ROOT bytes=4329 copies=8 steals=2 eager=2 time=464\n"
    "  main (train.c:200) bytes=4322 copies=7 steals=1 eager=1 time=451 self=10/1\n"
    "    train_step (train.c:120) bytes=4240 copies=3 steals=1 eager=1 time=180\n"
    "      update_weights (train.c:88) bytes=4000 copies=2 steals=1 eager=0 time=160\n"
    "      load_batch (data.c:40) bytes=240 copies=1 steals=0 eager=1 time=20\n"
    "    update_weights (train.c:91) bytes=65 copies=2 steals=0 eager=0 time=201\n"
    "    update_weights (train.c:88) bytes=7 copies=1 steals=0 eager=0 time=70\n"
    "  (no call stack) bytes=7 copies=1 steals=0 eager=1 time=5\n"
    "  cow_tensor_add_ (cow-ops.c:210) bytes=0 copies=0 steals=1 eager=0 time=8\n"
    "    cow_storage_materialize (cow-storage.c:300) bytes=0 copies=0 steals=1 eager=0 time=8\n");
  g_assert_cmpuint (cowscope_call_tree_get_max_depth (tree, COWSCOPE_CALL_TREE_TOP_DOWN), ==, 3);

  /* Frames keep what was recorded; Cowscope's own are marked. */
  guint root = cowscope_call_tree_get_root (tree, COWSCOPE_CALL_TREE_TOP_DOWN);
  g_assert_null (cowscope_call_tree_get_frame (tree, root));
  g_assert_cmpuint (cowscope_call_tree_get_parent (tree, root), ==, COWSCOPE_CALL_TREE_NO_NODE);
  const CowscopeCallFrame *main_frame =
    cowscope_call_tree_get_frame (tree, cowscope_call_tree_get_child (tree, root, 0));
  g_assert_cmpstr (main_frame->ref.file, ==, "/src/train.c");
  g_assert_cmpstr (main_frame->site, ==, "train.c:200 in main()");
  g_assert_false (main_frame->internal);
  g_assert_true (cowscope_call_tree_get_frame (tree, cowscope_call_tree_get_child (tree, root, 1))
                   ->no_stack);
  g_assert_true (cowscope_call_tree_get_frame (tree, cowscope_call_tree_get_child (tree, root, 2))
                   ->internal);
}

/* Bottom-up: the roots are the call sites, their children the callers. */
static void
test_bottom_up (void)
{
  g_autoptr (CowscopeSessionDocument) doc = load ();
  g_autoptr (CowscopeCallTree) tree = build (doc, -1, -1, COWSCOPE_CALL_TREE_BY_LINE, FALSE);
  assert_tree (tree, COWSCOPE_CALL_TREE_BOTTOM_UP,
    "ROOT bytes=4329 copies=8 steals=2 eager=2 time=464\n"
    "  update_weights (train.c:88) bytes=4007 copies=3 steals=1 eager=0 time=230\n"
    "    train_step (train.c:120) bytes=4000 copies=2 steals=1 eager=0 time=160\n"
    "      main (train.c:200) bytes=4000 copies=2 steals=1 eager=0 time=160\n"
    "    main (train.c:200) bytes=7 copies=1 steals=0 eager=0 time=70\n"
    "  load_batch (data.c:40) bytes=240 copies=1 steals=0 eager=1 time=20\n"
    "    train_step (train.c:120) bytes=240 copies=1 steals=0 eager=1 time=20\n"
    "      main (train.c:200) bytes=240 copies=1 steals=0 eager=1 time=20\n"
    "  update_weights (train.c:91) bytes=65 copies=2 steals=0 eager=0 time=201\n"
    "    main (train.c:200) bytes=65 copies=2 steals=0 eager=0 time=201\n"
    "  main (train.c:200) bytes=10 copies=1 steals=0 eager=0 time=0\n"
    "  (no call stack) bytes=7 copies=1 steals=0 eager=1 time=5\n"
    "  cow_storage_materialize (cow-storage.c:300) bytes=0 copies=0 steals=1 eager=0 time=8\n"
    "    cow_tensor_add_ (cow-ops.c:210) bytes=0 copies=0 steals=1 eager=0 time=8\n");
  /* Pid 200's frames are the same places as pid 100's: S5 adds to
   * update_weights:88, and its caller main is that node's second child. */
  guint root = cowscope_call_tree_get_root (tree, COWSCOPE_CALL_TREE_BOTTOM_UP);
  guint uw = cowscope_call_tree_get_child (tree, root, 0);
  g_assert_cmpuint (cowscope_call_tree_get_n_children (tree, uw), ==, 2);
}

/* By function, update_weights at lines 88 and 91 are one node. */
static void
test_by_function (void)
{
  g_autoptr (CowscopeSessionDocument) doc = load ();
  g_autoptr (CowscopeCallTree) tree = build (doc, -1, -1, COWSCOPE_CALL_TREE_BY_FUNCTION, FALSE);
  assert_tree (tree, COWSCOPE_CALL_TREE_BOTTOM_UP,
    "ROOT bytes=4329 copies=8 steals=2 eager=2 time=464\n"
    "  update_weights (train.c) bytes=4072 copies=5 steals=1 eager=0 time=431\n"
    "    train_step (train.c) bytes=4000 copies=2 steals=1 eager=0 time=160\n"
    "      main (train.c) bytes=4000 copies=2 steals=1 eager=0 time=160\n"
    "    main (train.c) bytes=72 copies=3 steals=0 eager=0 time=271\n"
    "  load_batch (data.c) bytes=240 copies=1 steals=0 eager=1 time=20\n"
    "    train_step (train.c) bytes=240 copies=1 steals=0 eager=1 time=20\n"
    "      main (train.c) bytes=240 copies=1 steals=0 eager=1 time=20\n"
    "  main (train.c) bytes=10 copies=1 steals=0 eager=0 time=0\n"
    "  (no call stack) bytes=7 copies=1 steals=0 eager=1 time=5\n"
    "  cow_storage_materialize (cow-storage.c) bytes=0 copies=0 steals=1 eager=0 time=8\n"
    "    cow_tensor_add_ (cow-ops.c) bytes=0 copies=0 steals=1 eager=0 time=8\n");
}

/* With Cowscope's own frames (and those the call site skipped): the
 * engine's frames under update_weights, the probe and the unsymbolized
 * frame under main for S4. */
static void
test_internal_frames (void)
{
  g_autoptr (CowscopeSessionDocument) doc = load ();
  g_autoptr (CowscopeCallTree) tree = build (doc, -1, -1, COWSCOPE_CALL_TREE_BY_LINE, TRUE);
  guint root = cowscope_call_tree_get_root (tree, COWSCOPE_CALL_TREE_TOP_DOWN);
  guint main_node = cowscope_call_tree_get_child (tree, root, 0);
  g_autoptr (GString) got = g_string_new (NULL);
  dump (tree, main_node, 1, got);
  g_assert_cmpstr (got->str, ==,
    "  main (train.c:200) bytes=4322 copies=7 steals=1 eager=1 time=451\n"
    "    train_step (train.c:120) bytes=4240 copies=3 steals=1 eager=1 time=180\n"
    "      update_weights (train.c:88) bytes=4000 copies=2 steals=1 eager=0 time=160\n"
    "        cow_tensor_add_ (cow-ops.c:210) bytes=4000 copies=2 steals=1 eager=0 time=160\n"
    "          cow_storage_materialize (cow-storage.c:300) bytes=4000 copies=2 steals=1 eager=0 time=160\n"
    "      load_batch (data.c:40) bytes=240 copies=1 steals=0 eager=1 time=20\n"
    "        cow_tensor_add_ (cow-ops.c:210) bytes=240 copies=1 steals=0 eager=1 time=20\n"
    "          cow_storage_materialize (cow-storage.c:300) bytes=240 copies=1 steals=0 eager=1 time=20\n"
    "    update_weights (train.c:91) bytes=65 copies=2 steals=0 eager=0 time=201\n"
    "      cow_storage_materialize (cow-storage.c:300) bytes=65 copies=2 steals=0 eager=0 time=201\n"
    "    0x4a0 in train bytes=10 copies=1 steals=0 eager=0 time=0\n"
    "      cow_storage_materialize (cow-storage.c:300) bytes=10 copies=1 steals=0 eager=0 time=0\n"
    "        0x99 in libcowscope-probe.so bytes=10 copies=1 steals=0 eager=0 time=0\n"
    "    update_weights (train.c:88) bytes=7 copies=1 steals=0 eager=0 time=70\n"
    "      cow_tensor_lazy_clone (cow-lazy.c:50) bytes=7 copies=1 steals=0 eager=0 time=70\n");
  g_assert_cmpuint (cowscope_call_tree_get_max_depth (tree, COWSCOPE_CALL_TREE_TOP_DOWN), ==, 5);
}

/* [2000, 7000): the events that end in it (the copy that began at 1900
 * and ended at 2100 too, not the one that began at 7000 and ended at
 * 7070); nothing without a stack, no steal of S6. */
static void
test_range (void)
{
  g_autoptr (CowscopeSessionDocument) doc = load ();
  g_autoptr (CowscopeCallTree) tree = build (doc, 2000, 7000, COWSCOPE_CALL_TREE_BY_LINE, FALSE);
  assert_tree (tree, COWSCOPE_CALL_TREE_TOP_DOWN,
    "ROOT bytes=3275 copies=5 steals=1 eager=0 time=281\n"
    "  main (train.c:200) bytes=3275 copies=5 steals=1 eager=0 time=281 self=10/1\n"
    "    train_step (train.c:120) bytes=3200 copies=2 steals=1 eager=0 time=80\n"
    "      update_weights (train.c:88) bytes=3000 copies=1 steals=1 eager=0 time=60\n"
    "      load_batch (data.c:40) bytes=200 copies=1 steals=0 eager=0 time=20\n"
    "    update_weights (train.c:91) bytes=65 copies=2 steals=0 eager=0 time=201\n");
  /* An empty range builds an empty tree. */
  g_autoptr (CowscopeCallTree) empty = build (doc, 9800, 9900, COWSCOPE_CALL_TREE_BY_LINE, FALSE);
  assert_tree (empty, COWSCOPE_CALL_TREE_BOTTOM_UP,
               "ROOT bytes=0 copies=0 steals=0 eager=0 time=0\n");
  g_assert_cmpuint (cowscope_call_tree_get_n_nodes (empty), ==, 2);
}

/* The seqs of @node's events (at most @limit), with the total. */
static char *
list (CowscopeCallTree *tree, guint node, guint limit)
{
  g_autoptr (GError) error = NULL;
  guint64 total = 0;
  gint64 largest = -2;
  g_autoptr (GArray) events = cowscope_call_tree_list_events (tree, node, limit, &total, &largest,
                                                              NULL, &error);
  g_assert_no_error (error);
  GString *s = g_string_new (NULL);
  static const char *const kinds[] = { "copy", "steal", "eager" };
  for (guint i = 0; i < events->len; i++)
    {
      const CowscopeCallEvent *e = &g_array_index (events, CowscopeCallEvent, i);
      g_string_append_printf (s, "%" G_GINT64_FORMAT ":%s:%" G_GUINT64_FORMAT " ", e->seq,
                              kinds[e->kind], e->nbytes);
    }
  g_string_append_printf (s, "of %" G_GUINT64_FORMAT " largest %" G_GINT64_FORMAT, total, largest);
  return g_string_free (s, FALSE);
}

/* The events under a node, in seq order (copies, steals and eager
 * fallbacks merged), cut at the limit but counted in full. */
static void
test_events (void)
{
  g_autoptr (CowscopeSessionDocument) doc = load ();
  g_autoptr (CowscopeCallTree) tree = build (doc, -1, -1, COWSCOPE_CALL_TREE_BY_LINE, FALSE);
  guint td = cowscope_call_tree_get_root (tree, COWSCOPE_CALL_TREE_TOP_DOWN);
  guint bu = cowscope_call_tree_get_root (tree, COWSCOPE_CALL_TREE_BOTTOM_UP);
  guint main_node = cowscope_call_tree_get_child (tree, td, 0);
  guint train_step = cowscope_call_tree_get_child (tree, main_node, 0);
  guint no_stack = cowscope_call_tree_get_child (tree, bu, 4);
  guint uw91 = cowscope_call_tree_get_child (tree, bu, 2);

  g_autofree char *all = list (tree, td, 100);
  g_assert_cmpstr (all, ==, "10:copy:1000 15:eager:40 18:copy:1 20:copy:3000 30:steal:500 "
                            "40:copy:200 50:copy:64 60:copy:10 70:copy:7 80:steal:4 90:copy:5 "
                            "95:eager:2 of 12 largest 20");
  g_autofree char *steps = list (tree, train_step, 3);
  g_assert_cmpstr (steps, ==, "10:copy:1000 15:eager:40 20:copy:3000 of 5 largest 20");
  g_autofree char *none = list (tree, no_stack, 100);
  g_assert_cmpstr (none, ==, "90:copy:5 95:eager:2 of 2 largest 90");
  g_autofree char *line91 = list (tree, uw91, 100);
  g_assert_cmpstr (line91, ==, "18:copy:1 50:copy:64 of 2 largest 50");

  /* What else an event says: when it ends, how long, what it wrote. */
  g_autoptr (GArray) events = cowscope_call_tree_list_events (tree, uw91, 1, NULL, NULL, NULL, NULL);
  const CowscopeCallEvent *e = &g_array_index (events, CowscopeCallEvent, 0);
  g_assert_cmpint (e->ts_ns, ==, 2100);
  g_assert_cmpint (e->duration_ns, ==, 200);
  g_assert_cmpuint (e->pid, ==, 100);
  g_assert_cmpint (e->tid, ==, 101);
  g_assert_cmpint (e->op, ==, COW_OP_ADD_);
  g_assert_cmpuint (e->storage_id, ==, 2);
  g_assert_cmpuint (e->tensor_id, ==, 12);
  g_assert_cmpstr (e->tensor_name, ==, "grad");
  g_autoptr (GArray) both = cowscope_call_tree_list_events (tree, uw91, 2, NULL, NULL, NULL, NULL);
  g_assert_null (g_array_index (both, CowscopeCallEvent, 1).tensor_name);

  /* In a range, only the range's events. */
  g_autoptr (CowscopeCallTree) ranged = build (doc, 2000, 7000, COWSCOPE_CALL_TREE_BY_LINE, FALSE);
  guint r = cowscope_call_tree_get_root (ranged, COWSCOPE_CALL_TREE_TOP_DOWN);
  g_autofree char *in_range = list (ranged, r, 100);
  g_assert_cmpstr (in_range, ==, "18:copy:1 20:copy:3000 30:steal:500 40:copy:200 50:copy:64 "
                                 "60:copy:10 of 6 largest 20");
}

/* Every call site of the report is a bottom-up root with the report's
 * copies and bytes (the call_sites view, which the report reads, and
 * cowscope-call-site.h choose alike); the report's locations find them. */
static void
test_report_sites (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionTables) tables = cowscope_session_tables_open (session (), &error);
  g_assert_no_error (error);
  g_autoptr (JsonObject) report = cowscope_report_build (tables, 10, &error);
  g_assert_no_error (error);
  JsonArray *sites = json_object_get_array_member (report, "top_call_sites");
  g_assert_cmpuint (json_array_get_length (sites), ==, 5);

  g_autoptr (CowscopeSessionDocument) doc = load ();
  g_autoptr (CowscopeCallTree) tree = build (doc, -1, -1, COWSCOPE_CALL_TREE_BY_LINE, FALSE);
  for (guint i = 0; i < json_array_get_length (sites); i++)
    {
      JsonObject *site = json_array_get_object_element (sites, i);
      CowscopeFrameRef ref = {
        json_object_get_string_member_with_default (site, "function", NULL),
        json_object_get_string_member_with_default (site, "file", NULL),
        json_object_get_string_member_with_default (site, "module", NULL),
        json_object_get_int_member_with_default (site, "line", 0),
        (guint64) json_object_get_int_member_with_default (site, "address", 0),
      };
      const char *location = json_object_get_string_member (site, "location");
      gboolean no_stack = g_str_equal (location, "(no call stack)");
      guint node = cowscope_call_tree_find_site (tree, no_stack ? NULL : &ref);
      g_test_message ("%s", location);
      g_assert_cmpuint (node, !=, COWSCOPE_CALL_TREE_NO_NODE);
      g_assert_cmpuint (cowscope_call_tree_get_parent (tree, node), ==,
                        cowscope_call_tree_get_root (tree, COWSCOPE_CALL_TREE_BOTTOM_UP));
      const CowscopeCallWeights *w = cowscope_call_tree_get_total (tree, node);
      g_assert_cmpint (w->copies, ==, json_object_get_int_member (site, "copies"));
      g_assert_cmpint (w->copy_bytes, ==, json_object_get_int_member (site, "bytes"));
      if (!no_stack)
        g_assert_cmpstr (cowscope_call_tree_get_frame (tree, node)->site, ==, location);
    }
  CowscopeFrameRef nowhere = { "nowhere", "/src/x.c", "/bin/train", 1, 0 };
  g_assert_cmpuint (cowscope_call_tree_find_site (tree, &nowhere), ==, COWSCOPE_CALL_TREE_NO_NODE);
}

/* Two trees of the same session match node for node by key path (what a
 * comparison walks), and a range's tree is a part of the whole's. */
static void
test_keys_match (void)
{
  g_autoptr (CowscopeSessionDocument) doc = load ();
  g_autoptr (CowscopeCallTree) whole = build (doc, -1, -1, COWSCOPE_CALL_TREE_BY_LINE, FALSE);
  g_autoptr (CowscopeCallTree) part = build (doc, 2000, 7000, COWSCOPE_CALL_TREE_BY_LINE, FALSE);
  guint r = cowscope_call_tree_get_root (part, COWSCOPE_CALL_TREE_TOP_DOWN);
  guint w = cowscope_call_tree_get_root (whole, COWSCOPE_CALL_TREE_TOP_DOWN);
  /* main > train_step > update_weights:88 in both. */
  guint a = r, b = w;
  for (guint depth = 0; depth < 3; depth++)
    {
      a = cowscope_call_tree_get_child (part, a, 0);
      b = cowscope_call_tree_find_child (whole, b, cowscope_call_tree_get_frame (part, a)->key);
      g_assert_cmpuint (b, !=, COWSCOPE_CALL_TREE_NO_NODE);
      g_assert_cmpstr (cowscope_call_tree_get_frame (whole, b)->display, ==,
                       cowscope_call_tree_get_frame (part, a)->display);
    }
  g_assert_cmpuint (cowscope_call_tree_get_total (part, a)->copy_bytes, ==, 3000);
  g_assert_cmpuint (cowscope_call_tree_get_total (whole, b)->copy_bytes, ==, 4000);
  g_assert_cmpuint (cowscope_call_tree_find_child (whole, w, "no such key"), ==,
                    COWSCOPE_CALL_TREE_NO_NODE);
}

/* The node objects for list widgets: properties and children. */
static void
test_nodes (void)
{
  g_autoptr (CowscopeSessionDocument) doc = load ();
  g_autoptr (CowscopeCallTree) tree = build (doc, -1, -1, COWSCOPE_CALL_TREE_BY_LINE, FALSE);
  g_autoptr (CowscopeCallNode) root =
    cowscope_call_node_new (tree, cowscope_call_tree_get_root (tree, COWSCOPE_CALL_TREE_BOTTOM_UP));
  g_assert_cmpstr (cowscope_call_node_get_display (root), ==, "All copies");
  g_autoptr (GListModel) children = cowscope_call_node_list_children (root);
  g_assert_cmpuint (g_list_model_get_n_items (children), ==, 6);
  g_autoptr (CowscopeCallNode) first = g_list_model_get_item (children, 0);
  g_autofree char *display = NULL;
  guint64 bytes, events, time, copies, steals, self_bytes;
  g_object_get (first, "display", &display, "bytes", &bytes, "events", &events, "time", &time,
                "copies", &copies, "steals", &steals, "self-bytes", &self_bytes, NULL);
  g_assert_cmpstr (display, ==, "update_weights (train.c:88)");
  g_assert_cmpuint (bytes, ==, 4007);
  g_assert_cmpuint (events, ==, 4);
  g_assert_cmpuint (time, ==, 230);
  g_assert_cmpuint (copies, ==, 3);
  g_assert_cmpuint (steals, ==, 1);
  g_assert_cmpuint (self_bytes, ==, 0);
  /* A leaf: its own copies, no children model. */
  g_autoptr (CowscopeCallNode) main_only = g_list_model_get_item (children, 3);
  g_object_get (main_only, "self-bytes", &self_bytes, NULL);
  g_assert_cmpuint (self_bytes, ==, 10);
  g_assert_null (cowscope_call_node_list_children (main_only));
}

static void
built (GObject *source G_GNUC_UNUSED, GAsyncResult *result, gpointer data)
{
  *(GAsyncResult **) data = g_object_ref (result);
}

/* Off the main thread: the same tree; cancelled: G_IO_ERROR_CANCELLED. */
static void
test_async (void)
{
  g_autoptr (CowscopeSessionDocument) doc = load ();
  CowscopeCallTreeOptions o;
  cowscope_call_tree_options_init (&o);
  g_autoptr (GAsyncResult) result = NULL;
  cowscope_call_tree_new_async (doc, &o, NULL, built, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeCallTree) tree = cowscope_call_tree_new_finish (result, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (cowscope_call_tree_get_total (tree, cowscope_call_tree_get_root (tree, 0))
                      ->copy_bytes, ==, 4287);

  g_autoptr (GAsyncResult) listed = NULL;
  cowscope_call_tree_list_events_async (tree, cowscope_call_tree_get_root (tree, 1), 2, NULL,
                                        built, &listed);
  while (listed == NULL)
    g_main_context_iteration (NULL, TRUE);
  guint64 total = 0;
  gint64 largest = -1;
  g_autoptr (GArray) events = cowscope_call_tree_list_events_finish (tree, listed, &total, &largest,
                                                                     &error);
  g_assert_no_error (error);
  g_assert_cmpuint (events->len, ==, 2);
  g_assert_cmpuint (total, ==, 12);
  g_assert_cmpint (largest, ==, 20);

  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_cancellable_cancel (cancellable);
  g_autoptr (GAsyncResult) cancelled = NULL;
  cowscope_call_tree_new_async (doc, &o, cancellable, built, &cancelled);
  while (cancelled == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_null (cowscope_call_tree_new_finish (cancelled, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

/* Both ways of reading the stacks (a query a stack for a few, one scan
 * of the stack tables for many) build the same trees, whatever the
 * options. */
static void
test_scan_matches_queries (void)
{
  g_autoptr (CowscopeSessionDocument) doc = load ();
  const gint64 ranges[][2] = { { -1, -1 }, { 2000, 7000 }, { 9800, 9900 } };
  for (guint r = 0; r < G_N_ELEMENTS (ranges); r++)
    for (guint grouping = 0; grouping < 2; grouping++)
      for (guint internal = 0; internal < 2; internal++)
        {
          g_autoptr (GString) by_query = g_string_new (NULL);
          g_autoptr (GString) by_scan = g_string_new (NULL);
          cowscope_call_tree_set_scan_threshold (G_MAXUINT);
          g_autoptr (CowscopeCallTree) a = build (doc, ranges[r][0], ranges[r][1], grouping, internal);
          cowscope_call_tree_set_scan_threshold (1);
          g_autoptr (CowscopeCallTree) b = build (doc, ranges[r][0], ranges[r][1], grouping, internal);
          cowscope_call_tree_set_scan_threshold (0);
          for (guint d = 0; d < 2; d++)
            {
              dump (a, cowscope_call_tree_get_root (a, d), 0, by_query);
              dump (b, cowscope_call_tree_get_root (b, d), 0, by_scan);
            }
          g_assert_cmpstr (by_scan->str, ==, by_query->str);
          g_assert_cmpuint (cowscope_call_tree_get_n_nodes (b), ==, cowscope_call_tree_get_n_nodes (a));
        }
  /* And their events. */
  cowscope_call_tree_set_scan_threshold (1);
  g_autoptr (CowscopeCallTree) scanned = build (doc, -1, -1, COWSCOPE_CALL_TREE_BY_LINE, FALSE);
  cowscope_call_tree_set_scan_threshold (0);
  guint bu = cowscope_call_tree_get_root (scanned, COWSCOPE_CALL_TREE_BOTTOM_UP);
  g_autofree char *line91 = list (scanned, cowscope_call_tree_get_child (scanned, bu, 2), 100);
  g_assert_cmpstr (line91, ==, "18:copy:1 50:copy:64 of 2 largest 50");
}

/* The report as the summary page reads it (cowscope-report-reader.h),
 * built off the main thread: the same figures as the report's JSON, and
 * a member that is null or absent reads as absent. */
static void
test_report_reader (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionTables) tables = cowscope_session_tables_open (session (), &error);
  g_assert_no_error (error);
  g_autoptr (JsonObject) report = cowscope_report_build (tables, 10, &error);
  g_assert_no_error (error);
  g_autoptr (GAsyncResult) result = NULL;
  cowscope_report_reader_load_async (session (), 10, NULL, built, &result);
  while (result == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_autoptr (CowscopeReportReader) reader = cowscope_report_reader_load_finish (result, &error);
  g_assert_no_error (error);

  JsonObject *metrics = json_object_get_object_member (report, "metrics");
  g_assert_cmpint (cowscope_report_reader_get_metric (reader, "copied_bytes"), ==,
                   json_object_get_int_member (metrics, "copied_bytes"));
  g_assert_cmpint (cowscope_report_reader_get_metric (reader, "copies"), ==, 8);
  g_assert_cmpint (cowscope_report_reader_get_metric (reader, "no_such_metric"), ==, 0);

  JsonArray *sites = json_object_get_array_member (report, "top_call_sites");
  g_assert_cmpuint (cowscope_report_reader_get_n_items (reader, "top_call_sites"), ==, 5);
  for (guint i = 0; i < 5; i++)
    {
      JsonObject *site = json_array_get_object_element (sites, i);
      const CowscopeReportItem *item = cowscope_report_reader_get_item (reader, "top_call_sites", i);
      g_assert_cmpstr (cowscope_report_item_get_text (item, "location"), ==,
                       json_object_get_string_member (site, "location"));
      g_assert_cmpint (cowscope_report_item_get_int (item, "bytes"), ==,
                       json_object_get_int_member (site, "bytes"));
      g_assert_cmpint (cowscope_report_item_has (item, "line"), ==,
                       !json_object_get_null_member (site, "line"));
      g_assert_cmpint (cowscope_report_item_get_int (item, "line"), ==,
                       json_object_get_int_member_with_default (site, "line", 0));
    }
  g_assert_null (cowscope_report_reader_get_item (reader, "top_call_sites", 5));
  g_assert_null (cowscope_report_reader_get_item (reader, "no_such_list", 0));
  g_assert_cmpuint (cowscope_report_reader_get_n_items (reader, "no_such_list"), ==, 0);
  g_assert_false (cowscope_report_item_has (NULL, "line"));
  g_assert_null (cowscope_report_item_get_text (NULL, "location"));

  JsonArray *warnings = json_object_get_array_member (report, "warnings");
  g_assert_cmpuint (cowscope_report_reader_get_n_items (reader, "warnings"), ==,
                    json_array_get_length (warnings));
  for (guint i = 0; i < json_array_get_length (warnings); i++)
    g_assert_cmpstr (cowscope_report_reader_get_text (reader, "warnings", i), ==,
                     json_array_get_string_element (warnings, i));
  g_assert_null (cowscope_report_reader_get_text (reader, "warnings", 1000));
  g_assert_nonnull (cowscope_report_reader_get_object (reader, "target"));
  g_assert_null (cowscope_report_reader_get_object (reader, "metrics_missing"));
}

/* A session whose tables cannot be read any more gives an error, not a
 * tree. */
static void
test_damaged (void)
{
  g_autofree char *bad = scratch ("damaged.cowscope");
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (session (), &contents, &length, NULL));
  g_assert_true (g_file_set_contents (bad, contents, (gssize) length, NULL));
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionDocument) doc = cowscope_session_document_load (bad, NULL, &error);
  g_assert_no_error (error);
  sqlite3 *db = NULL;
  g_assert_cmpint (sqlite3_open (bad, &db), ==, SQLITE_OK);
  exec_ok (db, "DROP TABLE stack_frames");
  sqlite3_close (db);

  CowscopeCallTreeOptions o;
  cowscope_call_tree_options_init (&o);
  g_autoptr (CowscopeCallTree) tree = cowscope_call_tree_new (doc, &o, NULL, &error);
  g_assert_null (tree);
  g_assert_nonnull (error);
  g_test_message ("%s", error->message);
  g_assert_true (strstr (error->message, bad) != NULL);
  g_unlink (bad);
}

int
main (int argc, char *argv[])
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/call-tree/top-down", test_top_down);
  g_test_add_func ("/call-tree/bottom-up", test_bottom_up);
  g_test_add_func ("/call-tree/by-function", test_by_function);
  g_test_add_func ("/call-tree/internal-frames", test_internal_frames);
  g_test_add_func ("/call-tree/range", test_range);
  g_test_add_func ("/call-tree/events", test_events);
  g_test_add_func ("/call-tree/report-sites", test_report_sites);
  g_test_add_func ("/call-tree/report-reader", test_report_reader);
  g_test_add_func ("/call-tree/keys-match", test_keys_match);
  g_test_add_func ("/call-tree/nodes", test_nodes);
  g_test_add_func ("/call-tree/async", test_async);
  g_test_add_func ("/call-tree/scan-matches-queries", test_scan_matches_queries);
  g_test_add_func ("/call-tree/damaged", test_damaged);
  int status = g_test_run ();
  if (session_path != NULL)
    g_unlink (session_path);
  g_free (session_path);
  return status;
}
