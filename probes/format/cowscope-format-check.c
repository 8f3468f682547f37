/* cowscope-format-check.c — the session format's rules on structure and
 * values (see header). */
#include "cowscope-format-check.h"

#include <glib/gi18n-lib.h>
#include <inttypes.h>
#include <string.h>

#include "cowscope-format-error.h"
#include "cowscope-format-open.h"

/* ---- the rules -------------------------------------------------------------- */

typedef enum {
  RULE_INT,   /* an integer (ids, addresses, statuses) */
  RULE_COUNT, /* an integer from 0 to COWSCOPE_FORMAT_MAX_COUNT */
  RULE_TIME,  /* ns, from 0 to COWSCOPE_FORMAT_MAX_TIME */
  RULE_CODE,  /* a vocabulary code or bit set, from 0 to 2^32 - 1 */
  RULE_FLAG,  /* 0 or 1 */
  RULE_TEXT,  /* text (only NOT NULL is checked: any bytes are a name) */
  RULE_BLOB,  /* a packed BLOB */
} RuleKind;

typedef struct {
  const char *column;
  RuleKind kind;
  gboolean null_ok;
} ColumnRule;

typedef struct {
  const char *table;
  const char *key;           /* the columns that name a row */
  const ColumnRule *columns; /* up to { NULL } */
} TableRules;

#define NOT_NULL FALSE
#define NULL_OK TRUE
#define END { NULL, 0, FALSE }

/* The columns readers use, with what the schema (session-schema.sql)
 * promises of each. */
static const ColumnRule processes_rules[] = {
  { "ppid", RULE_INT, NULL_OK }, { "start_ns", RULE_TIME, NULL_OK },
  { "end_ns", RULE_TIME, NULL_OK }, { "exit_status", RULE_INT, NULL_OK },
  { "exit_signal", RULE_INT, NULL_OK }, END,
};
static const ColumnRule threads_rules[] = {
  { "ring_capacity", RULE_COUNT, NULL_OK }, { "produced", RULE_COUNT, NOT_NULL },
  { "stored", RULE_COUNT, NOT_NULL }, { "dropped", RULE_COUNT, NOT_NULL }, END,
};
static const ColumnRule thread_events_rules[] = {
  { "produced", RULE_COUNT, NOT_NULL }, { "stored", RULE_COUNT, NOT_NULL },
  { "dropped", RULE_COUNT, NOT_NULL }, END,
};
static const ColumnRule peer_faults_rules[] = {
  { "pid", RULE_INT, NOT_NULL }, { "uid", RULE_INT, NULL_OK }, { "count", RULE_COUNT, NOT_NULL },
  END,
};
static const ColumnRule strings_rules[] = { { "value", RULE_TEXT, NOT_NULL }, END };
static const ColumnRule events_rules[] = {
  { "ts", RULE_TIME, NOT_NULL }, { "pid", RULE_INT, NOT_NULL }, { "tid", RULE_INT, NOT_NULL },
  { "type", RULE_CODE, NOT_NULL }, { "op", RULE_CODE, NOT_NULL }, { "aux", RULE_INT, NOT_NULL },
  { "v0", RULE_INT, NULL_OK }, { "v1", RULE_INT, NULL_OK }, { "v2", RULE_INT, NULL_OK },
  { "v3", RULE_INT, NULL_OK }, { "v4", RULE_INT, NULL_OK }, { "stack_id", RULE_INT, NULL_OK },
  END,
};
/* What readers find and skip chunks by, and the packed events. */
static const ColumnRule event_chunks_rules[] = {
  { "last_seq", RULE_INT, NOT_NULL }, { "n", RULE_COUNT, NOT_NULL },
  { "min_ts", RULE_TIME, NOT_NULL }, { "max_ts", RULE_TIME, NOT_NULL },
  { "sorted", RULE_FLAG, NOT_NULL }, { "types", RULE_INT, NOT_NULL },
  { "data", RULE_BLOB, NOT_NULL }, END,
};
static const ColumnRule frames_rules[] = {
  { "pid", RULE_INT, NOT_NULL }, { "address", RULE_INT, NOT_NULL },
  { "line", RULE_INT, NULL_OK }, END,
};
static const ColumnRule stacks_rules[] = { { "depth", RULE_COUNT, NOT_NULL }, END };
static const ColumnRule stack_frames_rules[] = {
  { "stack_id", RULE_INT, NOT_NULL }, { "frame_id", RULE_INT, NOT_NULL }, END,
};
static const ColumnRule cuda_activity_rules[] = {
  { "pid", RULE_INT, NOT_NULL }, { "kind", RULE_CODE, NOT_NULL },
  { "subkind", RULE_CODE, NULL_OK }, { "start_ns", RULE_TIME, NOT_NULL },
  { "end_ns", RULE_TIME, NOT_NULL }, { "bytes", RULE_COUNT, NULL_OK },
  { "correlation_id", RULE_INT, NULL_OK }, { "device_id", RULE_INT, NULL_OK },
  { "stream_id", RULE_INT, NULL_OK }, { "external_id", RULE_INT, NULL_OK }, END,
};
static const ColumnRule process_maps_rules[] = { { "maps", RULE_TEXT, NOT_NULL }, END };
static const ColumnRule allocations_rules[] = {
  { "kind", RULE_CODE, NULL_OK }, { "device", RULE_INT, NULL_OK },
  { "nbytes", RULE_COUNT, NULL_OK }, { "op", RULE_CODE, NULL_OK },
  { "new_ts", RULE_TIME, NULL_OK }, { "free_ts", RULE_TIME, NULL_OK }, END,
};
static const ColumnRule storages_rules[] = {
  { "allocation_id", RULE_INT, NULL_OK }, { "nbytes", RULE_COUNT, NULL_OK },
  { "context_id", RULE_INT, NULL_OK }, { "source_storage_id", RULE_INT, NULL_OK },
  { "op", RULE_CODE, NULL_OK }, { "new_ts", RULE_TIME, NULL_OK },
  { "free_ts", RULE_TIME, NULL_OK }, END,
};
static const ColumnRule tensors_rules[] = {
  { "storage_id", RULE_INT, NULL_OK }, { "base_tensor_id", RULE_INT, NULL_OK },
  { "dtype", RULE_CODE, NULL_OK }, { "ndim", RULE_CODE, NULL_OK },
  { "numel", RULE_COUNT, NULL_OK }, { "storage_offset", RULE_INT, NULL_OK },
  { "op", RULE_CODE, NULL_OK }, { "tid", RULE_INT, NULL_OK },
  { "new_ts", RULE_TIME, NULL_OK }, { "free_ts", RULE_TIME, NULL_OK }, END,
};
static const ColumnRule contexts_rules[] = {
  { "allocation_id", RULE_INT, NULL_OK }, { "first_storage_id", RULE_INT, NULL_OK },
  { "new_ts", RULE_TIME, NULL_OK }, { "free_ts", RULE_TIME, NULL_OK },
  { "max_refcount", RULE_COUNT, NULL_OK }, END,
};
static const ColumnRule lazy_clones_rules[] = {
  { "pid", RULE_INT, NULL_OK }, { "tid", RULE_INT, NULL_OK }, { "ts", RULE_TIME, NULL_OK },
  { "op", RULE_CODE, NULL_OK }, { "source_tensor_id", RULE_INT, NULL_OK },
  { "result_tensor_id", RULE_INT, NULL_OK }, { "source_storage_id", RULE_INT, NULL_OK },
  { "result_storage_id", RULE_INT, NULL_OK }, { "context_id", RULE_INT, NULL_OK },
  { "eager_reason", RULE_CODE, NULL_OK }, { "nbytes", RULE_COUNT, NULL_OK },
  { "stack_id", RULE_INT, NULL_OK }, END,
};
static const ColumnRule materializations_rules[] = {
  { "pid", RULE_INT, NULL_OK }, { "tid", RULE_INT, NULL_OK },
  { "begin_ts", RULE_TIME, NULL_OK }, { "end_ts", RULE_TIME, NULL_OK },
  { "op", RULE_CODE, NULL_OK }, { "storage_id", RULE_INT, NULL_OK },
  { "context_id", RULE_INT, NULL_OK }, { "tensor_id", RULE_INT, NULL_OK },
  { "nbytes", RULE_COUNT, NULL_OK }, { "kind", RULE_CODE, NULL_OK },
  { "copy_discarded", RULE_FLAG, NULL_OK }, { "lock_wait_ns", RULE_TIME, NULL_OK },
  { "allocation_id", RULE_INT, NULL_OK }, { "lazy_clone_seq", RULE_INT, NULL_OK },
  { "stack_id", RULE_INT, NULL_OK }, END,
};
static const ColumnRule violations_rules[] = {
  { "pid", RULE_INT, NULL_OK }, { "tid", RULE_INT, NULL_OK }, { "ts", RULE_TIME, NULL_OK },
  { "op", RULE_CODE, NULL_OK }, { "access", RULE_CODE, NULL_OK },
  { "storage_id", RULE_INT, NULL_OK }, { "writer_tensor_id", RULE_INT, NULL_OK },
  { "accessor_tensor_id", RULE_INT, NULL_OK }, { "writer_generation", RULE_INT, NULL_OK },
  { "accessor_generation", RULE_INT, NULL_OK }, { "stack_id", RULE_INT, NULL_OK }, END,
};
static const ColumnRule ranges_rules[] = {
  { "tid", RULE_INT, NULL_OK }, { "parent_id", RULE_INT, NULL_OK },
  { "begin_ts", RULE_TIME, NULL_OK }, { "end_ts", RULE_TIME, NULL_OK }, END,
};
static const ColumnRule marks_rules[] = {
  { "pid", RULE_INT, NULL_OK }, { "tid", RULE_INT, NULL_OK }, { "ts", RULE_TIME, NULL_OK },
  { "range_id", RULE_INT, NULL_OK }, END,
};
static const ColumnRule checkpoints_rules[] = {
  { "seq", RULE_INT, NOT_NULL }, { "ts", RULE_TIME, NOT_NULL }, END,
};
static const ColumnRule timeline_lanes_rules[] = {
  { "pid", RULE_INT, NOT_NULL }, { "tid", RULE_INT, NOT_NULL }, { "device", RULE_INT, NULL_OK },
  { "n_instants", RULE_COUNT, NOT_NULL }, { "n_spans", RULE_COUNT, NOT_NULL }, END,
};
static const ColumnRule timeline_chunks_rules[] = {
  { "first_ts", RULE_TIME, NOT_NULL }, { "last_ts", RULE_TIME, NOT_NULL },
  { "n", RULE_COUNT, NOT_NULL }, { "instants", RULE_BLOB, NOT_NULL }, END,
};
static const ColumnRule timeline_spans_rules[] = {
  { "first_start", RULE_TIME, NOT_NULL }, { "last_start", RULE_TIME, NOT_NULL },
  { "n", RULE_COUNT, NOT_NULL }, { "spans", RULE_BLOB, NOT_NULL }, END,
};
static const ColumnRule timeline_counters_rules[] = {
  { "start_ns", RULE_TIME, NOT_NULL }, { "end_ns", RULE_TIME, NOT_NULL },
  { "n_bins", RULE_COUNT, NOT_NULL }, { "bins", RULE_BLOB, NOT_NULL }, END,
};
static const ColumnRule checkpoint_states_rules[] = {
  { "n_objects", RULE_COUNT, NOT_NULL }, { "objects", RULE_BLOB, NOT_NULL }, END,
};
static const ColumnRule checkpoint_replays_rules[] = {
  { "first_seq", RULE_INT, NOT_NULL }, { "last_seq", RULE_INT, NOT_NULL },
  { "n_events", RULE_COUNT, NOT_NULL }, { "events", RULE_BLOB, NOT_NULL }, END,
};
static const ColumnRule ipc_refs_rules[] = {
  { "producer_pid", RULE_INT, NOT_NULL }, { "allocation_id", RULE_INT, NULL_OK },
  { "storage_id", RULE_INT, NULL_OK }, { "nbytes", RULE_COUNT, NULL_OK },
  { "send_ts", RULE_TIME, NULL_OK }, { "consumer_pid", RULE_INT, NULL_OK },
  { "receive_seq", RULE_INT, NULL_OK }, { "receive_ts", RULE_TIME, NULL_OK },
  { "cached", RULE_FLAG, NULL_OK }, { "release_ts", RULE_TIME, NULL_OK },
  { "limbo_enter_ts", RULE_TIME, NULL_OK }, { "limbo_free_ts", RULE_TIME, NULL_OK },
  { "consumer_died", RULE_FLAG, NULL_OK }, END,
};
static const ColumnRule ipc_blocks_rules[] = {
  { "storage_id", RULE_INT, NULL_OK }, { "nbytes", RULE_COUNT, NULL_OK },
  { "sends", RULE_COUNT, NULL_OK }, { "consumers", RULE_COUNT, NULL_OK },
  { "first_send_ts", RULE_TIME, NULL_OK }, { "limbo_enter_ts", RULE_TIME, NULL_OK },
  { "limbo_free_ts", RULE_TIME, NULL_OK }, { "free_ts", RULE_TIME, NULL_OK }, END,
};

static const TableRules table_rules[] = {
  { "processes", "pid", processes_rules },
  { "threads", "pid, tid", threads_rules },
  { "thread_events", "pid, tid", thread_events_rules },
  { "peer_faults", "pid, fault", peer_faults_rules },
  { "strings", "pid, id", strings_rules },
  { "event_chunks", "first_seq", event_chunks_rules },
  { "events", "seq", events_rules },
  { "frames", "id", frames_rules },
  { "stacks", "id", stacks_rules },
  { "stack_frames", "stack_id, position", stack_frames_rules },
  { "cuda_activity", "id", cuda_activity_rules },
  { "process_maps", "pid", process_maps_rules },
  { "allocations", "pid, id", allocations_rules },
  { "storages", "pid, id", storages_rules },
  { "tensors", "pid, id", tensors_rules },
  { "contexts", "pid, id", contexts_rules },
  { "lazy_clones", "seq", lazy_clones_rules },
  { "materializations", "seq", materializations_rules },
  { "violations", "seq", violations_rules },
  { "ranges", "pid, id", ranges_rules },
  { "marks", "seq", marks_rules },
  { "checkpoints", "id", checkpoints_rules },
  { "timeline_lanes", "id", timeline_lanes_rules },
  { "timeline_chunks", "lane, chunk", timeline_chunks_rules },
  { "timeline_spans", "lane, chunk", timeline_spans_rules },
  { "timeline_counters", "counter", timeline_counters_rules },
  { "checkpoint_states", "checkpoint_id", checkpoint_states_rules },
  { "checkpoint_replays", "checkpoint_id", checkpoint_replays_rules },
  { "ipc_refs", "send_seq", ipc_refs_rules },
  { "ipc_blocks", "producer_pid, allocation_id", ipc_blocks_rules },
};

/* meta keys that hold a count, a non-negative integer when present. */
static const char *const meta_counts[] = {
  "produced", "stored", "dropped", "events", "malformed_records", "checkpoint_interval",
  "events_produced", "events_stored", "events_dropped", "peer_faults", "finalized",
  "schema_version", "index_format", NULL,
};

/* Links to a row of the same table and process, which must never lead
 * back to the row they start from. */
static const struct {
  const char *table;
  const char *link;
} parent_links[] = {
  { "ranges", "parent_id" },
  { "tensors", "base_tensor_id" },
};

/* A chain of parents longer than this is not followed further (no
 * reader follows one at all; this bounds the check on a hostile file). */
#define MAX_PARENT_DEPTH 64

static const char *const derived_tables[] = {
  "event_types", "ops", "dtypes", "materialize_kinds", "eager_reasons", "access_kinds",
  "allocation_kinds", "cuda_kinds", "allocations", "storages", "tensors", "contexts",
  "lazy_clones", "materializations", "violations", "ranges", "marks", "checkpoints",
  "checkpoint_objects", "timeline_lanes", "timeline_chunks", "timeline_spans",
  "timeline_counters", "checkpoint_states", "checkpoint_replays", "ipc_refs", "ipc_blocks",
  NULL,
};

const char *const *
cowscope_format_derived_tables (void)
{
  return derived_tables;
}

/* ---- messages --------------------------------------------------------------- */

static void
set_damaged (GError **error, const char *path, const char *format, ...) G_GNUC_PRINTF (3, 4);

/* "PATH is damaged: <what>". */
static void
set_damaged (GError **error, const char *path, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *what = g_strdup_vprintf (format, args);
  va_end (args);
  g_set_error (error, COWSCOPE_SESSION_ERROR, COWSCOPE_SESSION_ERROR_DAMAGED,
               _("%s is damaged: %s"), path, what);
}

/* The first line of a quick_check or integrity_check finding, without
 * SQLite's "*** in database main ***" header. */
static char *
first_finding (const char *text)
{
  const char *header = "*** in database main ***\n";
  if (g_str_has_prefix (text, header))
    text += strlen (header);
  const char *end = strchr (text, '\n');
  return end != NULL ? g_strndup (text, end - text) : g_strdup (text);
}

/* Runs @pragma (quick_check or integrity_check, with its argument) and
 * reports its first finding; @where names what it checked in the
 * message ("table 'events'", "the file"). */
static gboolean
run_check_pragma (sqlite3 *db, const char *path, const char *pragma, const char *where,
                  GError **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (db, pragma, -1, &stmt, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_step (stmt);
  if (rc != SQLITE_ROW)
    {
      cowscope_format_set_error (error, db, rc, path, where);
      sqlite3_finalize (stmt);
      return FALSE;
    }
  const char *text = (const char *) sqlite3_column_text (stmt, 0);
  if (text != NULL && strcmp (text, "ok") == 0)
    {
      sqlite3_finalize (stmt);
      return TRUE;
    }
  g_autofree char *finding = first_finding (text != NULL ? text : "?");
  sqlite3_finalize (stmt);
  set_damaged (error, path, "%s: %s", where, finding);
  return FALSE;
}

/* "row seq 42", "row pid 100, id 7": the key columns of @stmt (the first
 * @n_keys) as they are. */
static char *
describe_row (sqlite3_stmt *stmt, int n_keys)
{
  GString *row = g_string_new (_("row"));
  for (int i = 0; i < n_keys; i++)
    {
      g_string_append_printf (row, "%s %s ", i == 0 ? "" : ",", sqlite3_column_name (stmt, i));
      if (sqlite3_column_type (stmt, i) == SQLITE_BLOB)
        {
          /* A damaged key may be bytes: x'00ff', as SQL writes them. */
          const guint8 *bytes = sqlite3_column_blob (stmt, i);
          int n = sqlite3_column_bytes (stmt, i);
          g_string_append (row, "x'");
          for (int b = 0; b < MIN (n, 16); b++)
            g_string_append_printf (row, "%02x", bytes[b]);
          g_string_append (row, n > 16 ? "…'" : "'");
          continue;
        }
      const char *text = (const char *) sqlite3_column_text (stmt, i);
      g_autofree char *valid = text != NULL ? g_utf8_make_valid (text, -1) : NULL;
      g_string_append (row, valid != NULL ? valid : "NULL");
    }
  return g_string_free (row, FALSE);
}

static const char *
kind_noun (RuleKind kind)
{
  switch (kind)
    {
    case RULE_COUNT: return _("a count or byte count");
    case RULE_TIME: return _("a time in ns");
    case RULE_CODE: return _("a code");
    case RULE_FLAG: return _("a flag (0 or 1)");
    case RULE_TEXT: return _("text");
    case RULE_BLOB: return _("packed data");
    case RULE_INT:
    default: return _("an integer");
    }
}

/* Why column @col of @stmt breaks @rule, or NULL when it does not. */
static char *
rule_broken (sqlite3_stmt *stmt, int col, const ColumnRule *rule)
{
  int type = sqlite3_column_type (stmt, col);
  const char *noun = kind_noun (rule->kind);
  if (type == SQLITE_NULL)
    return rule->null_ok ? NULL : g_strdup_printf (_("%s is NULL, not %s"), rule->column, noun);
  if (rule->kind == RULE_TEXT)
    return NULL;
  if (rule->kind == RULE_BLOB)
    return type == SQLITE_BLOB ? NULL
                               : g_strdup_printf (_("%s is not %s"), rule->column, noun);
  if (type != SQLITE_INTEGER)
    {
      const char *what = type == SQLITE_FLOAT ? _("a real number")
                         : type == SQLITE_TEXT ? _("text")
                                               : _("a BLOB");
      const char *text = (const char *) sqlite3_column_text (stmt, col);
      g_autofree char *shown = NULL;
      if (type == SQLITE_BLOB || text == NULL)
        shown = g_strdup_printf (_("%d bytes"), sqlite3_column_bytes (stmt, col));
      else if (type == SQLITE_FLOAT)
        shown = g_strdup (text);
      else
        {
          g_autofree char *valid = g_utf8_make_valid (text, MIN (sqlite3_column_bytes (stmt, col),
                                                                 40));
          shown = g_strdup_printf ("'%s'", valid);
        }
      return g_strdup_printf (_("%s is %s, %s, not %s"), rule->column, shown, what, noun);
    }
  gint64 v = sqlite3_column_int64 (stmt, col);
  gint64 max = rule->kind == RULE_COUNT ? COWSCOPE_FORMAT_MAX_COUNT
               : rule->kind == RULE_TIME ? COWSCOPE_FORMAT_MAX_TIME
               : rule->kind == RULE_CODE ? G_MAXUINT32
               : rule->kind == RULE_FLAG ? 1
                                         : G_MAXINT64;
  gint64 min = rule->kind == RULE_INT ? G_MININT64 : 0;
  if (v < min || v > max)
    return rule->kind == RULE_FLAG
             ? g_strdup_printf (_("%s is %" PRId64 ", not %s"), rule->column, v, noun)
             : g_strdup_printf (_("%s is %" PRId64 ", not %s (0 to %" PRId64 ")"), rule->column,
                                v, noun, max);
  return NULL;
}

/* Appends the SQL condition that a value of @rule holds (the WHERE
 * clause finds the first row breaking a rule). */
static void
append_condition (GString *sql, const ColumnRule *rule)
{
  const char *c = rule->column;
  g_string_append_printf (sql, rule->null_ok ? "(\"%s\" IS NULL OR " : "(\"%s\" IS NOT NULL AND ",
                          c);
  switch (rule->kind)
    {
    case RULE_TEXT:
      g_string_append (sql, "1");
      break;
    case RULE_BLOB:
      g_string_append_printf (sql, "typeof (\"%s\") = 'blob'", c);
      break;
    case RULE_INT:
      g_string_append_printf (sql, "typeof (\"%s\") = 'integer'", c);
      break;
    case RULE_COUNT:
    case RULE_TIME:
    case RULE_CODE:
    case RULE_FLAG:
    default:
      g_string_append_printf (sql, "typeof (\"%s\") = 'integer' AND \"%s\" BETWEEN 0 AND %" PRId64,
                              c, c,
                              rule->kind == RULE_COUNT ? COWSCOPE_FORMAT_MAX_COUNT
                              : rule->kind == RULE_TIME ? COWSCOPE_FORMAT_MAX_TIME
                              : rule->kind == RULE_CODE ? (gint64) G_MAXUINT32
                                                        : 1);
      break;
    }
  g_string_append (sql, ")");
}

/* @name as an SQL identifier in double quotes. */
static char *
quote_identifier (const char *name)
{
  GString *quoted = g_string_new ("\"");
  for (const char *p = name; *p != '\0'; p++)
    {
      if (*p == '"')
        g_string_append_c (quoted, '"');
      g_string_append_c (quoted, *p);
    }
  g_string_append_c (quoted, '"');
  return g_string_free (quoted, FALSE);
}

/* TRUE when @table of the main schema has column @column. */
static gboolean
has_column (sqlite3 *db, const char *table, const char *column)
{
  sqlite3_stmt *stmt = NULL;
  gboolean found = FALSE;
  if (sqlite3_prepare_v2 (db, "SELECT 1 FROM pragma_table_info (?1, 'main') WHERE name = ?2", -1,
                          &stmt, NULL) == SQLITE_OK)
    {
      sqlite3_bind_text (stmt, 1, table, -1, SQLITE_STATIC);
      sqlite3_bind_text (stmt, 2, column, -1, SQLITE_STATIC);
      found = sqlite3_step (stmt) == SQLITE_ROW;
    }
  sqlite3_finalize (stmt);
  return found;
}

/* The value rules of @rules: the first row that breaks one, named. */
static gboolean
check_values (sqlite3 *db, const char *path, const TableRules *rules, GError **error)
{
  g_auto (GStrv) keys = g_strsplit (rules->key, ", ", -1);
  int n_keys = (int) g_strv_length (keys);
  GString *sql = g_string_new ("SELECT ");
  g_string_append (sql, rules->key);
  for (const ColumnRule *r = rules->columns; r->column != NULL; r++)
    {
      if (!has_column (db, rules->table, r->column))
        {
          g_string_free (sql, TRUE);
          set_damaged (error, path, _("table '%s' has no column '%s'"), rules->table, r->column);
          return FALSE;
        }
      g_string_append_printf (sql, ", \"%s\"", r->column);
    }
  g_string_append_printf (sql, " FROM main.\"%s\" WHERE NOT (1", rules->table);
  for (const ColumnRule *r = rules->columns; r->column != NULL; r++)
    {
      g_string_append (sql, " AND ");
      append_condition (sql, r);
    }
  g_string_append (sql, ") LIMIT 1");

  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (db, sql->str, -1, &stmt, NULL);
  g_string_free (sql, TRUE);
  if (rc == SQLITE_OK)
    rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      g_autofree char *row = describe_row (stmt, n_keys);
      g_autofree char *why = NULL;
      int col = n_keys;
      for (const ColumnRule *r = rules->columns; why == NULL && r->column != NULL; r++, col++)
        why = rule_broken (stmt, col, r);
      set_damaged (error, path, _("table '%s', %s: %s"), rules->table, row,
                   why != NULL ? why : _("a value breaks the schema"));
      sqlite3_finalize (stmt);
      return FALSE;
    }
  if (rc != SQLITE_DONE)
    {
      g_autofree char *where = g_strdup_printf ("table '%s'", rules->table);
      cowscope_format_set_error (error, db, rc, path, where);
      sqlite3_finalize (stmt);
      return FALSE;
    }
  sqlite3_finalize (stmt);
  return TRUE;
}

/* meta's counts: non-negative integers where present.  meta is read
 * whole, so that a meta that cannot be read is an error, not a pass. */
static gboolean
check_meta (sqlite3 *db, const char *path, GError **error)
{
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (db, "SELECT key, value FROM main.meta", -1, &stmt, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      rc = SQLITE_OK;
      const char *key = (const char *) sqlite3_column_text (stmt, 0);
      if (key == NULL || !g_strv_contains (meta_counts, key)
          || sqlite3_column_type (stmt, 1) == SQLITE_NULL)
        continue;
      g_autofree char *text = cowscope_format_column_text (stmt, 1);
      gint64 value;
      if (text == NULL
          || !g_ascii_string_to_signed (text, 10, 0, COWSCOPE_FORMAT_MAX_COUNT, &value, NULL))
        {
          g_autofree char *shown = g_strndup (text != NULL ? text : "", 40);
          set_damaged (error, path, _("table 'meta', key %s: '%s' is not a count"), key, shown);
          sqlite3_finalize (stmt);
          return FALSE;
        }
    }
  sqlite3_finalize (stmt);
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, db, rc, path, _("table 'meta'"));
      return FALSE;
    }
  return TRUE;
}

/* A row of @table whose @link chain leads back to it (within
 * MAX_PARENT_DEPTH steps). */
static gboolean
check_parent_cycles (sqlite3 *db, const char *path, const char *table, const char *link,
                     GError **error)
{
  g_autofree char *sql = g_strdup_printf (
    "WITH RECURSIVE walk (pid, start, at, depth) AS ("
    " SELECT pid, id, \"%2$s\", 1 FROM main.\"%1$s\" WHERE \"%2$s\" IS NOT NULL"
    " UNION ALL SELECT w.pid, w.start, t.\"%2$s\", w.depth + 1 FROM walk w"
    "  JOIN main.\"%1$s\" t ON t.pid = w.pid AND t.id = w.at"
    "  WHERE w.at IS NOT w.start AND t.\"%2$s\" IS NOT NULL AND w.depth < %3$d)"
    " SELECT pid, start FROM walk WHERE at IS start LIMIT 1",
    table, link, MAX_PARENT_DEPTH);
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      g_autofree char *row = g_strdup_printf ("pid %" PRId64 ", id %" PRId64,
                                              (gint64) sqlite3_column_int64 (stmt, 0),
                                              (gint64) sqlite3_column_int64 (stmt, 1));
      set_damaged (error, path, _("table '%s', row %s: its %s chain leads back to itself"), table,
                   row, link);
      sqlite3_finalize (stmt);
      return FALSE;
    }
  sqlite3_finalize (stmt);
  if (rc != SQLITE_DONE)
    {
      g_autofree char *where = g_strdup_printf ("table '%s'", table);
      cowscope_format_set_error (error, db, rc, path, where);
      return FALSE;
    }
  return TRUE;
}

/* Structure and values of one table. */
static gboolean
check_table (sqlite3 *db, const char *path, const char *table, CowscopeFormatCheckFlags flags,
             GError **error)
{
  if (!cowscope_format_has_table (db, table))
    return TRUE;
  if (flags & COWSCOPE_FORMAT_CHECK_STRUCTURE)
    {
      /* The name comes from the session's own schema: quoted as an
       * identifier, never spliced in raw. */
      g_autofree char *quoted = quote_identifier (table);
      g_autofree char *pragma = g_strdup_printf ("PRAGMA main.quick_check (%s)", quoted);
      g_autofree char *where = g_strdup_printf (_("table '%s'"), table);
      if (!run_check_pragma (db, path, pragma, where, error))
        return FALSE;
    }
  if (!(flags & COWSCOPE_FORMAT_CHECK_VALUES))
    return TRUE;
  if (strcmp (table, "meta") == 0)
    return check_meta (db, path, error);
  for (gsize i = 0; i < G_N_ELEMENTS (table_rules); i++)
    if (strcmp (table_rules[i].table, table) == 0
        && !check_values (db, path, &table_rules[i], error))
      return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (parent_links); i++)
    if (strcmp (parent_links[i].table, table) == 0
        && !check_parent_cycles (db, path, table, parent_links[i].link, error))
      return FALSE;
  return TRUE;
}

gboolean
cowscope_format_check_tables (sqlite3 *db, const char *path, const char *const *tables,
                              CowscopeFormatCheckFlags flags, GError **error)
{
  g_return_val_if_fail (db != NULL && path != NULL && tables != NULL, FALSE);
  for (gsize i = 0; tables[i] != NULL; i++)
    if (!check_table (db, path, tables[i], flags, error))
      return FALSE;
  return TRUE;
}

/* Appends the names of @db's tables to @tables in page order, virtual
 * tables (rootpage 0: `events`) last, after the tables they read, whose
 * own findings are then named first.  SQLITE_DONE, or the error. */
static int
table_names (sqlite3 *db, GPtrArray *tables)
{
  sqlite3_stmt *stmt = NULL;
  int rc = sqlite3_prepare_v2 (db, "SELECT name FROM main.sqlite_master WHERE type = 'table'"
                               " ORDER BY rootpage = 0, rootpage", -1, &stmt, NULL);
  while (rc == SQLITE_OK && (rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      rc = SQLITE_OK;
      const char *name = (const char *) sqlite3_column_text (stmt, 0);
      if (name != NULL)
        g_ptr_array_add (tables, g_strdup (name));
    }
  sqlite3_finalize (stmt);
  return rc;
}

gboolean
cowscope_format_check_file (sqlite3 *db, const char *path, CowscopeFormatCheckFlags flags,
                            GError **error)
{
  g_return_val_if_fail (db != NULL && path != NULL, FALSE);
  g_autoptr (GPtrArray) tables = g_ptr_array_new_with_free_func (g_free);
  int rc = table_names (db, tables);
  if (rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, db, rc, path, _("its schema"));
      return FALSE;
    }
  /* Table by table first, so that a finding names its table. */
  g_ptr_array_add (tables, NULL);
  if (!cowscope_format_check_tables (db, path, (const char *const *) tables->pdata, flags, error))
    return FALSE;
  return !(flags & COWSCOPE_FORMAT_CHECK_STRUCTURE)
         || run_check_pragma (db, path, "PRAGMA main.quick_check", _("the file"), error);
}

/* The first finding of @pragma on @db, or NULL when it says "ok"; a
 * pragma that fails gives SQLite's message. */
static char *
pragma_finding (sqlite3 *db, const char *pragma)
{
  sqlite3_stmt *stmt = NULL;
  char *finding = NULL;
  int rc = sqlite3_prepare_v2 (db, pragma, -1, &stmt, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_step (stmt);
  if (rc == SQLITE_ROW)
    {
      const char *text = (const char *) sqlite3_column_text (stmt, 0);
      if (text == NULL || strcmp (text, "ok") != 0)
        finding = first_finding (text != NULL ? text : "?");
    }
  else
    finding = g_strdup (sqlite3_errmsg (db));
  sqlite3_finalize (stmt);
  return finding;
}

char *
cowscope_format_diagnose (sqlite3 *db)
{
  g_autoptr (GPtrArray) tables = g_ptr_array_new_with_free_func (g_free);
  /* The schema's own pages (sqlite_master, from page 1) are damaged. */
  if (table_names (db, tables) != SQLITE_DONE)
    return g_strdup (_("its schema cannot be read"));
  for (guint i = 0; i < tables->len; i++)
    {
      g_autofree char *quoted = quote_identifier (tables->pdata[i]);
      g_autofree char *pragma = g_strdup_printf ("PRAGMA main.quick_check (%s)", quoted);
      g_autofree char *finding = pragma_finding (db, pragma);
      if (finding != NULL)
        return g_strdup_printf (_("table '%s': %s"), (char *) tables->pdata[i], finding);
    }
  g_autofree char *finding = pragma_finding (db, "PRAGMA main.quick_check");
  return finding != NULL ? g_strdup_printf (_("the file: %s"), finding) : NULL;
}

gboolean
cowscope_format_check_integrity (sqlite3 *db, const char *path, GError **error)
{
  g_return_val_if_fail (db != NULL && path != NULL, FALSE);
  return run_check_pragma (db, path, "PRAGMA main.integrity_check", _("the file"), error);
}
