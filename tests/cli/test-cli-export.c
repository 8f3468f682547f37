/* test-cli-export.c — `cowscope-cli export`: chrome, csv, sqlite, errors. */
#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli-fixture.h"
#include "cowscope-cli-commands.h"
#include "cowscope-export.h"
#include "trace-check.h"

typedef struct {
  char *dir;
  char *path;
  char *out;
} Fixture;

#define FINALIZED GINT_TO_POINTER (1)
#define NOT_FINALIZED GINT_TO_POINTER (2)

static void
fixture_set_up (Fixture *f, gconstpointer data)
{
  f->dir = cli_fixture_tmpdir ();
  f->path = g_build_filename (f->dir, "s.cowscope", NULL);
  f->out = g_build_filename (f->dir, "out", NULL);
  cli_fixture_write_session (f->path, GPOINTER_TO_INT (data) != 2, 0);
}

static void
fixture_tear_down (Fixture *f, gconstpointer data)
{
  (void) data;
  cli_fixture_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->path);
  g_free (f->out);
}

static int
export (const char *path, const char *format, const char *out, gboolean force, char **err)
{
  return cli_fixture_run (cowscope_export_run, NULL, err, "export", path,
                          "--format", format, "-o", out,
                          force ? "--force" : NULL, NULL);
}

/* ---- chrome ---------------------------------------------------------- */

/* Member @name of @object as a string, or NULL when absent. */
static const char *
member_text (JsonObject *object, const char *name)
{
  return json_object_get_string_member_with_default (object, name, NULL);
}

static JsonArray *
load_trace (const char *path, JsonParser *parser, char **text)
{
  g_autoptr (GError) error = NULL;
  JsonObject *root;

  g_assert_true (g_file_get_contents (path, text, NULL, NULL));
  json_parser_load_from_data (parser, *text, -1, &error);
  g_assert_no_error (error);
  root = json_node_get_object (json_parser_get_root (parser));
  g_assert_cmpstr (member_text (root, "displayTimeUnit"), ==, "ns");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (root, "otherData"),
                                               "baseTimeNanoseconds"), ==, CLI_FIXTURE_T0);
  return json_object_get_array_member (root, "traceEvents");
}

/* The first event with phase @ph and name @name (and pid when >= 0). */
static JsonObject *
find_event (JsonArray *events, const char *ph, const char *name, gint64 pid)
{
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      if (g_strcmp0 (member_text (e, "ph"), ph) == 0
          && (name == NULL || g_strcmp0 (member_text (e, "name"), name) == 0)
          && (pid < 0 || json_object_get_int_member (e, "pid") == pid))
        return e;
    }
  return NULL;
}

/* The metadata event @what ("process_name") whose args.name is @name. */
static JsonObject *
find_metadata (JsonArray *events, const char *what, const char *name)
{
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      if (g_strcmp0 (member_text (e, "ph"), "M") == 0
          && g_strcmp0 (member_text (e, "name"), what) == 0
          && g_strcmp0 (member_text (json_object_get_object_member (e, "args"),
                                                       "name"), name) == 0)
        return e;
    }
  return NULL;
}

/* Every "ts" and "dur" in @text is written as µs with exactly 3 decimals. */
static void
assert_time_format (const char *text)
{
  g_autoptr (GRegex) any = g_regex_new ("\"(ts|dur)\":", 0, 0, NULL);
  g_autoptr (GRegex) good = g_regex_new ("\"(ts|dur)\":-?[0-9]+\\.[0-9]{3}[,}]", 0, 0, NULL);
  g_autoptr (GMatchInfo) match = NULL;
  guint n_any = 0, n_good = 0;

  g_regex_match (any, text, 0, &match);
  for (; g_match_info_matches (match); g_match_info_next (match, NULL))
    n_any++;
  g_clear_pointer (&match, g_match_info_free);
  g_regex_match (good, text, 0, &match);
  for (; g_match_info_matches (match); g_match_info_next (match, NULL))
    n_good++;
  g_assert_cmpuint (n_any, >, 10);
  g_assert_cmpuint (n_any, ==, n_good);
}

/* The first "X" slice named @name whose args.op is @op (any when NULL). */
static JsonObject *
find_slice (JsonArray *events, const char *name, const char *op)
{
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      if (g_strcmp0 (member_text (e, "ph"), "X") == 0
          && g_strcmp0 (member_text (e, "name"), name) == 0
          && (op == NULL
              || g_strcmp0 (member_text (json_object_get_object_member (e, "args"), "op"), op) == 0))
        return e;
    }
  return NULL;
}

/* The flow event @ph ("s" or "f") of category @cat and id @id. */
static JsonObject *
find_flow (JsonArray *events, const char *ph, const char *cat, gint64 id)
{
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *e = json_array_get_object_element (events, i);
      if (g_strcmp0 (member_text (e, "ph"), ph) == 0 && g_strcmp0 (member_text (e, "cat"), cat) == 0
          && json_object_get_int_member (e, "id") == id)
        return e;
    }
  return NULL;
}

/* The fixture's range, mark and kernel names, as the JSON carries them. */
static char **
fixture_user_names (void)
{
  char *names[] = { g_strdup ("epoch 1"), g_strdup ("never closed"),
                    g_utf8_make_valid (CLI_FIXTURE_WEIRD_MARK, -1), g_strdup ("my_kernel"),
                    NULL };
  return g_memdup2 (names, sizeof names);
}

static void
check_chrome (const char *out, gboolean finalized)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autofree char *text = NULL;
  JsonArray *events = load_trace (out, parser, &text);
  const gint64 gpu = COWSCOPE_EXPORT_GPU_PID_BASE;
  g_auto (GStrv) user_names = fixture_user_names ();
  JsonObject *e, *s, *fl, *args, *copy;
  JsonArray *stack;
  gint64 stream;

  assert_time_format (text);
  /* Stable names, nested slices, flows strictly inside their slices. */
  TraceCheckCounts counts = trace_check_properties (events, (const char *const *) user_names);
  g_assert_cmpuint (counts.lazy_flows, ==, 3);
  g_assert_cmpuint (counts.cuda_flows, ==, 1);

  /* Tracks: the process, its threads, GPU 0 with stream 7 of train. */
  e = find_metadata (events, "process_name", "train");
  g_assert_nonnull (e);
  g_assert_cmpint (json_object_get_int_member (e, "pid"), ==, 100);
  g_assert_nonnull (find_metadata (events, "thread_name", "main"));
  g_assert_nonnull (find_metadata (events, "thread_name", "worker"));
  e = find_metadata (events, "process_name", "GPU 0");
  g_assert_nonnull (e);
  g_assert_cmpint (json_object_get_int_member (e, "pid"), ==, gpu);
  e = find_metadata (events, "thread_name", "stream 7 (train 100)");
  g_assert_nonnull (e);
  g_assert_cmpint (json_object_get_int_member (e, "pid"), ==, gpu);
  stream = json_object_get_int_member (e, "tid");

  /* The first copy: a slice named "copy" from 5 µs to 7.5 µs after the
   * base; what it was in its args, with its call stack. */
  copy = find_slice (events, "copy", "add_");
  g_assert_nonnull (copy);
  g_assert_cmpint (json_object_get_int_member (copy, "pid"), ==, 100);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (copy, "ts"), 5.0, 1e-9);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (copy, "dur"), 2.5, 1e-9);
  g_assert_cmpint (json_object_get_int_member (copy, "tid"), ==, 100);
  args = json_object_get_object_member (copy, "args");
  g_assert_cmpint (json_object_get_int_member (args, "bytes"), ==, 4 * MiB);
  g_assert_cmpstr (member_text (args, "kind"), ==, "copy");
  g_assert_cmpint (json_object_get_int_member (args, "lock_wait_ns"), ==, 300);
  g_assert_cmpint (json_object_get_int_member (args, "storage_id"), ==, 2);
  /* Event numbers are the recording's, or a finalized copy's. */
  if (finalized)
    g_assert_cmpint (json_object_get_int_member (args, "seq"), ==, 14);
  g_assert_cmpstr (member_text (args, "tensor"), ==, "weights");
  g_assert_cmpstr (member_text (args, "call_site"), ==, "update_weights (train.c:88)");
  stack = json_object_get_array_member (args, "stack");
  g_assert_cmpuint (json_array_get_length (stack), ==, 3);
  g_assert_cmpstr (json_array_get_string_element (stack, 0), ==,
                   "cow_storage_materialize (cow-storage.c:290)");
  g_assert_cmpstr (json_array_get_string_element (stack, 2), ==, "main (train.c:120)");

  /* Ranges, instants, CUDA. */
  e = find_event (events, "X", "epoch 1", 100);
  g_assert_nonnull (e);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (e, "dur"), 5.0, 1e-9);
  e = find_event (events, "X", "never closed", 100);
  g_assert_nonnull (e);
  g_assert_true (json_object_get_boolean_member (json_object_get_object_member (e, "args"), "unclosed"));
  /* The three lazy clones each started a copy or steal: slices for
   * their arrows; the eager one stays an instant. */
  e = find_event (events, "X", "lazy clone", 100);
  g_assert_nonnull (e);
  g_assert_cmpstr (member_text (json_object_get_object_member (e, "args"), "op"), ==, "lazy_clone");
  e = find_event (events, "i", "eager clone", 100);
  g_assert_nonnull (e);
  g_assert_cmpstr (member_text (json_object_get_object_member (e, "args"), "eager_reason"), ==,
                   "foreign_data_ptr");
  e = find_event (events, "i", "simulate-mode warning", 100);
  g_assert_nonnull (e);
  args = json_object_get_object_member (e, "args");
  g_assert_cmpstr (member_text (args, "access"), ==, "read");
  g_assert_cmpstr (member_text (args, "writer"), ==, "weights");
  g_assert_cmpstr (member_text (args, "accessor"), ==, "snapshot");
  g_assert_cmpstr (member_text (args, "call_site"), ==, "0xdeadbeef in train");
  /* The awkward mark survives as valid JSON (the invalid byte replaced). */
  e = NULL;
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonObject *m = json_array_get_object_element (events, i);
      if (g_strcmp0 (member_text (m, "cat"), "mark") == 0)
        e = m;
    }
  g_assert_nonnull (e);
  g_assert_true (g_str_has_prefix (member_text (e, "name"),
                                   "odd \"mark\" \\ with\nnewline\ttab\x01 and "));
  e = find_event (events, "X", "memcpy HtoD", gpu);
  g_assert_nonnull (e);
  g_assert_cmpint (json_object_get_int_member (e, "tid"), ==, stream);
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (e, "args"), "stream"),
                   ==, 7);
  g_assert_cmpfloat_with_epsilon (json_object_get_double_member (e, "ts"), 6.0, 1e-9);
  g_assert_nonnull (find_event (events, "X", "my_kernel", gpu));

  /* The CUDA flow: from inside the copy, to the memcpy (its id). */
  s = find_flow (events, "s", "cuda_flow", 1);
  fl = find_flow (events, "f", "cuda_flow", 1);
  g_assert_nonnull (s);
  g_assert_nonnull (fl);
  g_assert_cmpint (json_object_get_int_member (s, "pid"), ==, 100);
  g_assert_cmpint (json_object_get_int_member (s, "tid"), ==, 100);
  g_assert_cmpint (trace_check_ns (s, "ts"), ==, 6000);
  g_assert_cmpint (json_object_get_int_member (fl, "pid"), ==, gpu);
  g_assert_cmpint (json_object_get_int_member (fl, "tid"), ==, stream);
  g_assert_cmpint (trace_check_ns (fl, "ts"), ==, 6001);

  /* The lazy clone's arrow to the copy it caused (id: the copy's seq):
   * from inside the clone's slice at 1.2 µs, into the copy's slice. */
  gint64 seq = json_object_get_int_member (json_object_get_object_member (copy, "args"), "seq");
  s = find_flow (events, "s", "lazy_copy_flow", seq);
  fl = find_flow (events, "f", "lazy_copy_flow", seq);
  g_assert_nonnull (s);
  g_assert_nonnull (fl);
  g_assert_cmpint (trace_check_ns (s, "ts"), ==, 1201);
  g_assert_cmpint (json_object_get_int_member (s, "tid"), ==, 100);
  g_assert_cmpint (trace_check_ns (fl, "ts"), ==, 5001);
  e = find_slice (events, "copy", "mul_");
  seq = json_object_get_int_member (json_object_get_object_member (e, "args"), "seq");
  g_assert_nonnull (find_flow (events, "f", "lazy_copy_flow", seq));
  g_assert_cmpint (json_object_get_int_member (find_flow (events, "f", "lazy_copy_flow", seq), "tid"),
                   ==, 101);
  e = find_slice (events, "steal", "add_");
  seq = json_object_get_int_member (json_object_get_object_member (e, "args"), "seq");
  g_assert_cmpint (trace_check_ns (find_flow (events, "s", "lazy_copy_flow", seq), "ts"), ==, 1801);

  /* Counters: 4 MiB allocated, up to 12 MiB shared lazily, 4 storages. */
  {
    gint64 max_shared = 0, last_storages = -1, last_allocated = -1;
    for (guint i = 0; i < json_array_get_length (events); i++)
      {
        JsonObject *c = json_array_get_object_element (events, i);
        if (g_strcmp0 (member_text (c, "ph"), "C") != 0)
          continue;
        args = json_object_get_object_member (c, "args");
        if (g_strcmp0 (member_text (c, "name"), "lazily shared bytes") == 0)
          max_shared = MAX (max_shared, json_object_get_int_member (args, "bytes"));
        else if (g_strcmp0 (member_text (c, "name"), "live storages") == 0)
          last_storages = json_object_get_int_member (args, "storages");
        else if (g_strcmp0 (member_text (c, "name"), "allocated bytes") == 0)
          last_allocated = json_object_get_int_member (args, "bytes");
      }
    g_assert_cmpint (max_shared, ==, 12 * MiB);
    g_assert_cmpint (last_storages, ==, 4);
    g_assert_cmpint (last_allocated, ==, 4 * MiB);
  }
  (void) finalized;
}

static void
test_chrome (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;

  g_assert_cmpint (export (f->path, "chrome", f->out, FALSE, &err), ==, 0);
  if (data == FINALIZED)
    g_assert_cmpstr (err, ==, "");
  else
    g_assert_nonnull (strstr (err, "was not finalized"));
  check_chrome (f->out, data == FINALIZED);
  g_assert_cmpuint (cli_fixture_count_partial (f->dir), ==, 0);
}

/* Streams of different processes get their own tracks; each GPU is named
 * once; zero-length slices that carry an arrow get a length, so that the
 * arrow's point lies strictly inside them. */
static void
test_chrome_tracks (Fixture *f, gconstpointer data)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  g_autofree char *text = NULL;
  g_autofree char *err = NULL;
  g_auto (GStrv) user_names = fixture_user_names ();
  const gint64 gpu = COWSCOPE_EXPORT_GPU_PID_BASE;
  JsonObject *e, *train, *infer, *flow;

  (void) data;
  /* Process 200 uses stream 7 of GPU 0 too, and a stream of GPU 1; a
   * zero-length memcpy was issued by a tensor_new (seq 3, 200 ns); the
   * steal (seq 19) took no time. */
  cli_fixture_exec (f->path,
    "INSERT INTO processes (pid, ppid, exe, cmdline) VALUES (200, 1, '/usr/bin/infer', 'infer');"
    "INSERT INTO cuda_activity (id, pid, kind, subkind, start_ns, end_ns, bytes, correlation_id,"
    " device_id, context_id, stream_id, external_id) VALUES"
    " (10, 200, :cuda_memcpy, 1, 1000000006200, 1000000006700, 1024, 70, 0, 2, 7, NULL),"
    " (11, 200, :cuda_kernel, NULL, 1000000006300, 1000000006400, NULL, 71, 1, 3, 7, NULL),"
    " (12, 100, :cuda_memcpy, 8, 1000000000300, 1000000000300, 64, 72, 0, 1, 7, 3);"
    "UPDATE materializations SET end_ts = begin_ts WHERE seq = 19;");
  g_assert_cmpint (export (f->path, "chrome", f->out, FALSE, &err), ==, 0);
  JsonArray *events = load_trace (f->out, parser, &text);
  TraceCheckCounts counts = trace_check_properties (events, (const char *const *) user_names);
  g_assert_cmpuint (counts.cuda_flows, ==, 2);
  g_assert_cmpuint (counts.lazy_flows, ==, 3);

  /* One name per device (trace_check_properties: never twice). */
  g_assert_cmpint (json_object_get_int_member (find_metadata (events, "process_name", "GPU 0"),
                                               "pid"), ==, gpu);
  g_assert_cmpint (json_object_get_int_member (find_metadata (events, "process_name", "GPU 1"),
                                               "pid"), ==, gpu + 1);
  /* Stream 7 of each process: two tracks. */
  train = find_metadata (events, "thread_name", "stream 7 (train 100)");
  infer = find_metadata (events, "thread_name", "stream 7 (infer 200)");
  g_assert_nonnull (train);
  g_assert_nonnull (infer);
  g_assert_cmpint (json_object_get_int_member (train, "tid"), !=,
                   json_object_get_int_member (infer, "tid"));
  g_assert_cmpint (json_object_get_int_member (infer, "pid"), ==, gpu);
  e = NULL;
  for (guint i = 0; i < json_array_get_length (events) && e == NULL; i++)
    {
      JsonObject *x = json_array_get_object_element (events, i);
      if (g_strcmp0 (member_text (x, "name"), "memcpy HtoD") == 0
          && json_object_get_int_member (json_object_get_object_member (x, "args"), "process") == 200)
        e = x;
    }
  g_assert_nonnull (e);
  g_assert_cmpint (json_object_get_int_member (e, "tid"), ==, json_object_get_int_member (infer, "tid"));
  e = find_event (events, "X", "kernel", gpu + 1);
  g_assert_nonnull (e);
  g_assert_nonnull (find_metadata (events, "thread_name", "stream 7 (infer 200)"));

  /* The tensor_new that issued the zero-length memcpy: a 2 ns slice named
   * after its operation, the arrow's ends strictly inside both. */
  e = find_event (events, "X", "empty", 100);
  g_assert_nonnull (e);
  g_assert_cmpint (trace_check_ns (e, "ts"), ==, 200);
  g_assert_cmpint (trace_check_ns (e, "dur"), ==, 2);
  flow = find_flow (events, "s", "cuda_flow", 12);
  g_assert_cmpint (trace_check_ns (flow, "ts"), ==, 201);
  e = find_event (events, "X", "memcpy DtoD", gpu);
  g_assert_cmpint (trace_check_ns (e, "dur"), ==, 2);
  g_assert_cmpint (trace_check_ns (find_flow (events, "f", "cuda_flow", 12), "ts"), ==, 301);

  /* The zero-length steal: 2 ns, its arrow's end at 1 ns into it. */
  e = find_slice (events, "steal", NULL);
  g_assert_cmpint (trace_check_ns (e, "ts"), ==, 8200);
  g_assert_cmpint (trace_check_ns (e, "dur"), ==, 2);
  g_assert_cmpint (trace_check_ns (find_flow (events, "f", "lazy_copy_flow", 19), "ts"), ==, 8201);
}

/* ---- csv ------------------------------------------------------------- */

/* Parses RFC 4180 @text into records of fields. */
static GPtrArray *
parse_csv (const char *text)
{
  GPtrArray *records = g_ptr_array_new_with_free_func ((GDestroyNotify) g_ptr_array_unref);
  GPtrArray *record = NULL;
  GString *field = g_string_new (NULL);
  const char *p = text;

  while (*p != '\0')
    {
      gboolean quoted = *p == '"';
      if (record == NULL)
        record = g_ptr_array_new_with_free_func (g_free);
      g_string_truncate (field, 0);
      if (quoted)
        {
          p++;
          for (;;)
            {
              g_assert_true (*p != '\0');
              if (*p == '"' && p[1] == '"')
                {
                  g_string_append_c (field, '"');
                  p += 2;
                }
              else if (*p == '"')
                {
                  p++;
                  break;
                }
              else
                g_string_append_c (field, *p++);
            }
        }
      else
        while (*p != ',' && *p != '\r' && *p != '\0')
          {
            g_assert_true (*p != '"' && *p != '\n');
            g_string_append_c (field, *p++);
          }
      g_ptr_array_add (record, g_strdup (field->str));
      if (*p == ',')
        p++;
      else
        {
          g_assert_true (p[0] == '\r' && p[1] == '\n');
          p += 2;
          g_ptr_array_add (records, record);
          record = NULL;
        }
    }
  g_assert_null (record);
  g_string_free (field, TRUE);
  return records;
}

static GPtrArray *
load_csv (const char *dir, const char *table)
{
  g_autofree char *name = g_strconcat (table, ".csv", NULL);
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_autofree char *text = NULL;

  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return parse_csv (text);
}

static void
test_csv (Fixture *f, gconstpointer data)
{
  g_autoptr (GPtrArray) tensors = NULL;
  g_autoptr (GPtrArray) materializations = NULL;
  g_autoptr (GPtrArray) events = NULL;
  g_autoptr (GPtrArray) meta = NULL;
  GPtrArray *header, *row;

  (void) data;
  g_assert_cmpint (export (f->path, "csv", f->out, FALSE, NULL), ==, 0);
  g_assert_true (g_file_test (f->out, G_FILE_TEST_IS_DIR));

  materializations = load_csv (f->out, "materializations");
  g_assert_cmpuint (materializations->len, ==, 1 + 3);
  header = materializations->pdata[0];
  g_assert_cmpstr (header->pdata[0], ==, "seq");
  g_assert_cmpstr (header->pdata[9], ==, "nbytes");
  g_assert_cmpuint (header->len, ==, 16);
  row = materializations->pdata[1];
  g_assert_cmpstr (row->pdata[0], ==, "14");
  g_assert_cmpstr (row->pdata[9], ==, "4194304");
  g_assert_cmpstr (row->pdata[15], ==, "1");
  row = materializations->pdata[3];
  g_assert_cmpstr (row->pdata[15], ==, ""); /* NULL stack_id */

  events = load_csv (f->out, "events");
  g_assert_cmpuint (events->len, ==, 1 + 31);

  /* Commas, quotes and newlines survive quoting. */
  tensors = load_csv (f->out, "tensors");
  g_assert_cmpuint (tensors->len, ==, 1 + 4);
  header = tensors->pdata[0];
  g_assert_cmpstr (header->pdata[9], ==, "name");
  row = tensors->pdata[4];
  g_assert_cmpstr (row->pdata[9], ==, "grad, \"x\"\nline 2");

  meta = load_csv (f->out, "meta");
  g_assert_cmpuint (meta->len, ==, 1 + 15);
  g_assert_true (g_file_test (f->out, G_FILE_TEST_IS_DIR));
  {
    g_autofree char *p = g_build_filename (f->out, "process_maps.csv", NULL);
    g_autofree char *text = NULL;
    g_assert_true (g_file_get_contents (p, &text, NULL, NULL));
    g_assert_cmpstr (text, ==, "pid,generation,maps\r\n");
  }
  g_assert_cmpuint (cli_fixture_count_partial (f->dir), ==, 0);

  /* An existing directory is replaced only with --force. */
  g_assert_cmpint (export (f->path, "csv", f->out, FALSE, NULL), ==, 1);
  g_assert_cmpint (export (f->path, "csv", f->out, TRUE, NULL), ==, 0);
  g_assert_cmpuint (cli_fixture_count_partial (f->dir), ==, 0);
}

/* ---- sqlite ---------------------------------------------------------- */

static gint64
count_rows (sqlite3 *db, const char *table)
{
  g_autofree char *sql = g_strdup_printf ("SELECT count(*) FROM main.\"%s\"", table);
  sqlite3_stmt *stmt = NULL;
  gint64 n;

  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_step (stmt), ==, SQLITE_ROW);
  n = sqlite3_column_int64 (stmt, 0);
  sqlite3_finalize (stmt);
  return n;
}

static void
test_sqlite (Fixture *f, gconstpointer data)
{
  sqlite3 *a = NULL, *b = NULL;
  sqlite3_stmt *stmt = NULL;
  guint tables = 0;

  (void) data;
  g_assert_cmpint (export (f->path, "sqlite", f->out, FALSE, NULL), ==, 0);
  g_assert_cmpint (sqlite3_open_v2 (f->path, &a, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_open_v2 (f->out, &b, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (a, "SELECT name FROM sqlite_master WHERE type = 'table'",
                                       -1, &stmt, NULL), ==, SQLITE_OK);
  while (sqlite3_step (stmt) == SQLITE_ROW)
    {
      const char *name = (const char *) sqlite3_column_text (stmt, 0);
      g_assert_cmpint (count_rows (a, name), ==, count_rows (b, name));
      tables++;
    }
  sqlite3_finalize (stmt);
  g_assert_cmpuint (tables, >, 20);
  g_assert_cmpint (count_rows (b, "events"), ==, 31);
  sqlite3_close (a);
  sqlite3_close (b);
  g_assert_cmpuint (cli_fixture_count_partial (f->dir), ==, 0);

  /* And the copy is a session in its own right. */
  g_assert_cmpint (cli_fixture_run (cowscope_export_run, NULL, NULL, "export", f->out,
                                    "-o", f->path, "--force", NULL), ==, 0);
}

/* ---- errors ------------------------------------------------------------ */

/* One line on stderr containing @fragment. */
static void
assert_one_line (const char *err, const char *fragment)
{
  g_assert_nonnull (strstr (err, fragment));
  g_assert_nonnull (strchr (err, '\n'));
  g_assert_cmpstr (strchr (err, '\n') + 1, ==, "");
}

static void
test_existing_output (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;
  g_autofree char *contents = NULL;
  const char *formats[] = { "chrome", "sqlite" };

  (void) data;
  for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      g_assert_true (g_file_set_contents (f->out, "precious", -1, NULL));
      g_clear_pointer (&err, g_free);
      g_assert_cmpint (export (f->path, formats[i], f->out, FALSE, &err), ==, 1);
      assert_one_line (err, "already exists (use --force");
      g_clear_pointer (&contents, g_free);
      g_assert_true (g_file_get_contents (f->out, &contents, NULL, NULL));
      g_assert_cmpstr (contents, ==, "precious");
      g_assert_cmpint (export (f->path, formats[i], f->out, TRUE, NULL), ==, 0);
      g_assert_cmpuint (cli_fixture_count_partial (f->dir), ==, 0);
    }
  /* csv needs a directory. */
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (export (f->path, "csv", f->out, TRUE, &err), ==, 1);
  assert_one_line (err, "is not a directory");
}

static void
test_full_disk (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;

  (void) data;
  if (!g_file_test ("/dev/full", G_FILE_TEST_EXISTS))
    {
      g_test_skip ("no /dev/full");
      return;
    }
  g_assert_cmpint (export (f->path, "chrome", "/dev/full", FALSE, &err), ==, 1);
  assert_one_line (err, "cannot write /dev/full: No space left on device");
  g_assert_true (g_file_test ("/dev/full", G_FILE_TEST_EXISTS));
  g_clear_pointer (&err, g_free);
  /* A database copy is never put over a device. */
  g_assert_cmpint (export (f->path, "sqlite", "/dev/full", TRUE, &err), ==, 1);
  assert_one_line (err, "not a regular file");
  {
    struct stat st;
    g_assert_cmpint (stat ("/dev/full", &st), ==, 0);
    g_assert_true (S_ISCHR (st.st_mode));
  }
}

static void
test_read_only_directory (Fixture *f, gconstpointer data)
{
  const char *formats[] = { "chrome", "csv", "sqlite" };
  g_autofree char *ro_dir = NULL;
  g_autofree char *out = NULL;

  (void) data;
  if (geteuid () == 0)
    {
      /* Root ignores permission bits; /proc refuses new files to anyone. */
      ro_dir = g_strdup ("/proc");
    }
  else
    {
      ro_dir = g_build_filename (f->dir, "ro", NULL);
      g_assert_cmpint (g_mkdir (ro_dir, 0555), ==, 0);
    }
  out = g_build_filename (ro_dir, "cowscope-test-output", NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      g_autofree char *err = NULL;
      g_assert_cmpint (export (f->path, formats[i], out, FALSE, &err), ==, 1);
      assert_one_line (err, "cannot create");
      g_assert_nonnull (strstr (err, out));
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
    }
  if (geteuid () != 0)
    g_assert_cmpuint (cli_fixture_count_partial (ro_dir), ==, 0);
}

static void
test_bad_inputs (Fixture *f, gconstpointer data)
{
  g_autofree char *text = g_build_filename (f->dir, "notes.txt", NULL);
  g_autofree char *missing = g_build_filename (f->dir, "missing.cowscope", NULL);
  g_autofree char *err = NULL;

  (void) data;
  g_assert_true (g_file_set_contents (text, "hello\n", -1, NULL));
  g_assert_cmpint (export (text, "chrome", f->out, FALSE, &err), ==, 1);
  assert_one_line (err, "not an SQLite database");
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (export (missing, "csv", f->out, FALSE, &err), ==, 1);
  assert_one_line (err, "No such file");
  g_clear_pointer (&err, g_free);
  cli_fixture_exec (f->path, "PRAGMA user_version = 99");
  g_assert_cmpint (export (f->path, "sqlite", f->out, FALSE, &err), ==, 1);
  assert_one_line (err, "newer Cowscope");
  g_assert_false (g_file_test (f->out, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (cli_fixture_count_partial (f->dir), ==, 0);
}

/* A stack that has no frames (here: its frames' rows name another stack)
 * crashed the Chrome export, which freed the NULL it remembered for it
 * (found by tests/fuzz); a stack id that is not an integer is damage,
 * named before anything is written. */
static void
test_chrome_stack_without_frames (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;

  (void) data;
  cli_fixture_exec (f->path, "UPDATE stack_frames SET stack_id = -1 WHERE stack_id = 1");
  g_assert_cmpint (export (f->path, "chrome", f->out, FALSE, &err), ==, 0);
  g_assert_cmpstr (err, ==, "");
  {
    g_autoptr (JsonParser) parser = json_parser_new ();
    g_autoptr (GError) error = NULL;
    g_assert_true (json_parser_load_from_file (parser, f->out, &error));
    g_assert_no_error (error);
  }
  g_clear_pointer (&err, g_free);
  g_unlink (f->out);
  cli_fixture_exec (f->path, "UPDATE stack_frames SET stack_id = 'many' WHERE stack_id = 2");
  g_assert_cmpint (export (f->path, "chrome", f->out, FALSE, &err), ==, 1);
  assert_one_line (err, " is damaged: table 'stack_frames'");
  g_assert_false (g_file_test (f->out, G_FILE_TEST_EXISTS));
}

/* PRAGMA @pragma's first value on the database at @path. */
static char *
pragma_text (const char *path, const char *pragma)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  char *text = NULL;
  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  if (sqlite3_prepare_v2 (db, pragma, -1, &stmt, NULL) == SQLITE_OK
      && sqlite3_step (stmt) == SQLITE_ROW)
    text = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  else
    text = g_strdup (sqlite3_errmsg (db));
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return text;
}

/* An index whose pages are sound but whose entries disagree with its
 * table passes quick_check; the database copy gave exit 0 and a file
 * that failed integrity_check (found by tests/fuzz).  The copy's indexes
 * are rebuilt from their tables. */
static void
test_sqlite_index_disagreeing_with_table (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;
  g_autofree char *check = NULL;

  (void) data;
  /* Finalizing creates the indexes. */
  g_unlink (f->path);
  cli_fixture_write_session (f->path, FALSE, 2000);
  g_assert_cmpint (cli_fixture_run (cowscope_finalize_run, NULL, NULL, "finalize", f->path, NULL),
                   ==, 0);
  cli_fixture_exec (f->path, "PRAGMA writable_schema = ON;"
                             "UPDATE sqlite_master SET sql ="
                             " 'CREATE INDEX materializations_time ON materializations (tid)'"
                             " WHERE name = 'materializations_time';");
  check = pragma_text (f->path, "PRAGMA quick_check");
  g_assert_cmpstr (check, ==, "ok");
  g_clear_pointer (&check, g_free);
  check = pragma_text (f->path, "PRAGMA integrity_check");
  g_assert_cmpstr (check, !=, "ok");
  g_assert_cmpint (export (f->path, "sqlite", f->out, FALSE, &err), ==, 0);
  g_clear_pointer (&check, g_free);
  check = pragma_text (f->out, "PRAGMA integrity_check");
  g_assert_cmpstr (check, ==, "ok");
}

/* The session's bytes, to show it was not touched. */
static GBytes *
file_bytes (const char *path)
{
  char *contents = NULL;
  gsize length = 0;

  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  return g_bytes_new_take (contents, length);
}

/* `export` refused to write @out because it is the session @input (by
 * @how): exit 1, one line that says so, the session byte for byte as it
 * was, no partial output left in @dir. */
static void
assert_refused_as_input (const char *input, const char *format, const char *out,
                         const char *how, const char *dir)
{
  g_autoptr (GBytes) before = file_bytes (input);
  g_autoptr (GBytes) after = NULL;
  g_autofree char *err = NULL;

  g_test_message ("export %s --format %s -o %s --force", input, format, out);
  g_assert_cmpint (export (input, format, out, TRUE, &err), ==, 1);
  assert_one_line (err, "would overwrite the session");
  g_assert_nonnull (strstr (err, how));
  g_assert_nonnull (strstr (err, "nothing was written"));
  after = file_bytes (input);
  g_assert_true (g_bytes_equal (before, after));
  g_assert_cmpuint (cli_fixture_count_partial (dir), ==, 0);
}

/* Item 3 of issue 11: `export FILE -o FILE --force` replaced the session
 * with its export.  Every format refuses an output that is its input, by
 * any path. */
static void
test_output_is_input (Fixture *f, gconstpointer data)
{
  const char *formats[] = { "chrome", "csv", "sqlite" };
  g_autofree char *sub = g_build_filename (f->dir, "sub", NULL);
  g_autofree char *dotted = g_build_filename (sub, "..", "s.cowscope", NULL);
  g_autofree char *hard = g_build_filename (f->dir, "hard.cowscope", NULL);
  g_autofree char *soft = g_build_filename (f->dir, "soft.cowscope", NULL);
  g_autofree char *wal = g_strconcat (f->path, "-wal", NULL);
  g_autofree char *journal = g_strconcat (dotted, "-journal", NULL);

  (void) data;
  g_assert_cmpint (g_mkdir (sub, 0755), ==, 0);
  g_assert_cmpint (link (f->path, hard), ==, 0);
  g_assert_cmpint (symlink ("s.cowscope", soft), ==, 0);
  for (gsize i = 0; i < G_N_ELEMENTS (formats); i++)
    {
      assert_refused_as_input (f->path, formats[i], f->path, "(the same file)", f->dir);
      assert_refused_as_input (f->path, formats[i], dotted, "(the same file)", f->dir);
      assert_refused_as_input (f->path, formats[i], hard, "(a hard link to it)", f->dir);
      assert_refused_as_input (f->path, formats[i], soft, "(a symbolic link to it)", f->dir);
      assert_refused_as_input (soft, formats[i], f->path, "(the file it links to)", f->dir);
      assert_refused_as_input (f->path, formats[i], wal, "(its write-ahead log)", f->dir);
      assert_refused_as_input (f->path, formats[i], journal, "(its rollback journal)", f->dir);
      g_assert_false (g_file_test (wal, G_FILE_TEST_EXISTS));
    }
  /* Another file still works, through the same links' directory. */
  g_assert_cmpint (export (soft, "chrome", f->out, TRUE, NULL), ==, 0);
}

/* A CSV export writes TABLE.csv files into its directory: a session kept
 * there under a table's name is an input too. */
static void
test_csv_over_input (Fixture *f, gconstpointer data)
{
  g_autofree char *out_dir = g_build_filename (f->dir, "tables", NULL);
  g_autofree char *inside = g_build_filename (out_dir, "events.csv", NULL);
  g_autofree char *meta = g_build_filename (out_dir, "meta.csv", NULL);
  g_autofree char *contents = NULL;
  gsize length;

  (void) data;
  g_assert_cmpint (g_mkdir (out_dir, 0755), ==, 0);
  g_assert_true (g_file_get_contents (f->path, &contents, &length, NULL));
  g_assert_true (g_file_set_contents (inside, contents, length, NULL));
  assert_refused_as_input (inside, "csv", out_dir, "(the same file)", out_dir);
  g_assert_cmpuint (cli_fixture_count_partial (f->dir), ==, 0);
  g_assert_false (g_file_test (meta, G_FILE_TEST_EXISTS));
}

static void
test_usage_errors (Fixture *f, gconstpointer data)
{
  g_autofree char *err = NULL;

  (void) data;
  g_assert_cmpint (export (f->path, "xml", f->out, FALSE, &err), ==, 2);
  g_assert_nonnull (strstr (err, "unknown format 'xml' (use chrome, csv or sqlite)"));
  g_clear_pointer (&err, g_free);
  g_assert_cmpint (cli_fixture_run (cowscope_export_run, NULL, &err, "export", f->path,
                                    "--format", "csv", NULL), ==, 2);
  g_assert_nonnull (strstr (err, "no output given"));
  g_assert_cmpint (cli_fixture_run (cowscope_export_run, NULL, NULL, "export",
                                    "-o", f->out, NULL), ==, 2);
  g_assert_cmpint (cli_fixture_run (cowscope_export_run, NULL, NULL, "export", f->path,
                                    f->path, "-o", f->out, NULL), ==, 2);
  g_assert_cmpint (cli_fixture_run (cowscope_export_run, NULL, NULL, "export", f->path,
                                    "--bogus", NULL), ==, 2);
  g_assert_false (g_file_test (f->out, G_FILE_TEST_EXISTS));
}

/* ---- progress and cancellation (what the app's export dialog uses) --- */

typedef struct {
  guint calls;
  guint cancel_at;     /* return FALSE on this call; 0: never */
  double last;
  gboolean increasing; /* every known fraction above the one before */
  gboolean in_range;   /* every fraction in (0, 1] or exactly -1 */
  guint unknown;       /* calls with -1 */
} ProgressLog;

static gboolean
log_progress (double fraction, gpointer data)
{
  ProgressLog *log = data;
  log->calls++;
  if (fraction == -1)
    log->unknown++;
  else
    {
      log->in_range = log->in_range && fraction > 0 && fraction <= 1;
      log->increasing = log->increasing && fraction > log->last;
      log->last = fraction;
    }
  return log->cancel_at == 0 || log->calls < log->cancel_at;
}

static void
test_progress_and_cancel (Fixture *f, gconstpointer data)
{
  (void) data;
  /* 20,000 more event rows: enough for several progress reports. */
  g_assert_cmpint (g_unlink (f->path), ==, 0);
  cli_fixture_write_session (f->path, TRUE, 20000);
  g_autoptr (GError) error = NULL;
  g_autoptr (CowscopeSessionTables) session = cowscope_session_tables_open (f->path, &error);
  g_assert_no_error (error);

  /* CSV: fractions rise, within (0, 1], and the output is complete. */
  ProgressLog log = { .increasing = TRUE, .in_range = TRUE };
  CowscopeExportProgress progress = { .func = log_progress, .user_data = &log };
  g_assert_true (cowscope_export_csv (session, f->out, FALSE, &progress, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (log.calls, >=, 4);
  g_assert_true (log.increasing);
  g_assert_true (log.in_range);
  g_autofree char *events_csv = g_build_filename (f->out, "events.csv", NULL);
  g_assert_true (g_file_test (events_csv, G_FILE_TEST_IS_REGULAR));
  cli_fixture_remove_tree (f->out);

  /* Cancelled at the second report: CANCELLED, and nothing left behind. */
  log = (ProgressLog) { .cancel_at = 2, .increasing = TRUE, .in_range = TRUE };
  g_assert_false (cowscope_export_csv (session, f->out, FALSE, &progress, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_assert_cmpuint (log.calls, ==, 2);
  g_assert_false (g_file_test (f->out, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (cli_fixture_count_partial (f->dir), ==, 0);

  /* The database copy reports an unknown total and stops when told. */
  log = (ProgressLog) { .increasing = TRUE, .in_range = TRUE };
  g_assert_true (cowscope_export_sqlite (session, f->out, FALSE, &progress, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (log.unknown, >=, 1);
  g_assert_cmpuint (log.unknown, ==, log.calls);
  g_assert_cmpint (g_unlink (f->out), ==, 0);
  log = (ProgressLog) { .cancel_at = 1, .increasing = TRUE, .in_range = TRUE };
  g_assert_false (cowscope_export_sqlite (session, f->out, FALSE, &progress, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_assert_false (g_file_test (f->out, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (cli_fixture_count_partial (f->dir), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(path, data, func) \
  g_test_add (path, Fixture, data, fixture_set_up, func, fixture_tear_down)
  ADD ("/cli/export/chrome", FINALIZED, test_chrome);
  ADD ("/cli/export/chrome-not-finalized", NOT_FINALIZED, test_chrome);
  ADD ("/cli/export/chrome-tracks", FINALIZED, test_chrome_tracks);
  ADD ("/cli/export/chrome-stack-without-frames", FINALIZED, test_chrome_stack_without_frames);
  ADD ("/cli/export/csv", FINALIZED, test_csv);
  ADD ("/cli/export/sqlite", FINALIZED, test_sqlite);
  ADD ("/cli/export/sqlite-index-disagreeing-with-table", FINALIZED,
       test_sqlite_index_disagreeing_with_table);
  ADD ("/cli/export/existing-output", FINALIZED, test_existing_output);
  ADD ("/cli/export/full-disk", FINALIZED, test_full_disk);
  ADD ("/cli/export/read-only-directory", FINALIZED, test_read_only_directory);
  ADD ("/cli/export/bad-inputs", FINALIZED, test_bad_inputs);
  ADD ("/cli/export/output-is-input", FINALIZED, test_output_is_input);
  ADD ("/cli/export/output-is-input-not-finalized", NOT_FINALIZED, test_output_is_input);
  ADD ("/cli/export/csv-over-input", FINALIZED, test_csv_over_input);
  ADD ("/cli/export/usage-errors", FINALIZED, test_usage_errors);
  ADD ("/cli/export/progress-and-cancel", FINALIZED, test_progress_and_cancel);
#undef ADD

  return g_test_run ();
}
