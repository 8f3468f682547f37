/* cowscope-format-vocabulary.c — codes and names from the engine's and
 * the probe protocol's headers (see the header). */
#include "cowscope-format-vocabulary.h"

#include <string.h>

#include "cow-dtype.h"
#include "cowscope-protocol.h"

/* One named code of a lookup table.  @prefix names its SQL parameter
 * (":prefix_name"); @in_schema: the session has a table of that name. */
typedef struct {
  const char *table;
  const char *prefix;
  gint64 id;
  const char *name;
  gboolean in_schema;
} Term;

static const Term terms[] = {
  { "materialize_kinds", "materialize", COW_MATERIALIZE_COPY, "copy", TRUE },
  { "materialize_kinds", "materialize", COW_MATERIALIZE_STEAL, "steal", TRUE },
  { "materialize_kinds", "materialize", COW_MATERIALIZE_FAILED, "failed", TRUE },
  { "eager_reasons", "eager", COW_EAGER_FOREIGN_DATA_PTR, "foreign_data_ptr", TRUE },
  { "eager_reasons", "eager", COW_EAGER_NOT_SIMPLE, "not_simple", TRUE },
  { "access_kinds", "access", COW_ACCESS_READ, "read", TRUE },
  { "access_kinds", "access", COW_ACCESS_WRITE, "write", TRUE },
  { "allocation_kinds", "allocation", COW_ALLOCATION_CPU, "cpu", TRUE },
  { "allocation_kinds", "allocation", COW_ALLOCATION_CUDA, "cuda", TRUE },
  { "allocation_kinds", "allocation", COW_ALLOCATION_FOREIGN, "foreign", TRUE },
  { "cuda_kinds", "cuda", COWSCOPE_CUDA_MEMCPY, "memcpy", TRUE },
  { "cuda_kinds", "cuda", COWSCOPE_CUDA_MEMSET, "memset", TRUE },
  { "cuda_kinds", "cuda", COWSCOPE_CUDA_KERNEL, "kernel", TRUE },
  { "cuda_kinds", "cuda", COWSCOPE_CUDA_MEMORY_ALLOC, "memory_alloc", TRUE },
  { "cuda_kinds", "cuda", COWSCOPE_CUDA_MEMORY_FREE, "memory_free", TRUE },
  { "cuda_kinds", "cuda", COWSCOPE_CUDA_EXTERNAL_CORRELATION, "external_correlation", TRUE },
  { "cuda_kinds", "cuda", COWSCOPE_CUDA_RUNTIME_API, "runtime_api", TRUE },
  /* CUpti_ActivityMemcpyKind (CUPTI's numbering, which the probe stores
   * unchanged in cuda_activity.subkind); no lookup table in the file. */
  { "memcpy_kinds", NULL, 0, "unknown", FALSE },
  { "memcpy_kinds", NULL, 1, "HtoD", FALSE },
  { "memcpy_kinds", NULL, 2, "DtoH", FALSE },
  { "memcpy_kinds", NULL, 3, "HtoA", FALSE },
  { "memcpy_kinds", NULL, 4, "AtoH", FALSE },
  { "memcpy_kinds", NULL, 5, "AtoA", FALSE },
  { "memcpy_kinds", NULL, 6, "AtoD", FALSE },
  { "memcpy_kinds", NULL, 7, "DtoA", FALSE },
  { "memcpy_kinds", NULL, 8, "DtoD", FALSE },
  { "memcpy_kinds", NULL, 9, "HtoH", FALSE },
  { "memcpy_kinds", NULL, 10, "PtoP", FALSE },
};

/* ":name" -> code, built once. */
static GHashTable *
parameters (void)
{
  static GHashTable *table;
  if (g_once_init_enter (&table))
    {
      GHashTable *t = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      for (int i = 1; i < COW_N_EVENT_TYPES; i++)
        g_hash_table_insert (t, g_strconcat (":ev_", cow_event_type_name ((CowEventType) i), NULL),
                             GINT_TO_POINTER (i));
      for (gsize i = 0; i < G_N_ELEMENTS (terms); i++)
        if (terms[i].prefix != NULL)
          g_hash_table_insert (t, g_strdup_printf (":%s_%s", terms[i].prefix, terms[i].name),
                               GINT_TO_POINTER ((int) terms[i].id));
      g_hash_table_insert (t, g_strdup (":materialize_kind_mask"),
                           GINT_TO_POINTER (COW_MATERIALIZE_KIND_MASK));
      g_hash_table_insert (t, g_strdup (":materialize_copy_discarded"),
                           GINT_TO_POINTER (COW_MATERIALIZE_FLAG_COPY_DISCARDED));
      g_once_init_leave (&table, t);
    }
  return table;
}

/* Whether @c may continue an SQL identifier. */
static inline gboolean
is_name_char (char c)
{
  return g_ascii_isalnum (c) || c == '_';
}

char *
cowscope_format_expand_sql (const char *sql)
{
  GHashTable *known = parameters ();
  GString *out = g_string_sized_new (strlen (sql) + 16);
  gboolean quoted = FALSE;
  for (const char *p = sql; *p != '\0';)
    {
      if (*p == '\'')
        quoted = !quoted;
      if (!quoted && *p == ':' && is_name_char (p[1]))
        {
          const char *end = p + 1;
          while (is_name_char (*end))
            end++;
          g_autofree char *name = g_strndup (p, (gsize) (end - p));
          gpointer code;
          if (g_hash_table_lookup_extended (known, name, NULL, &code))
            {
              g_string_append_printf (out, "%d", GPOINTER_TO_INT (code));
              p = end;
              continue;
            }
        }
      g_string_append_c (out, *p++);
    }
  return g_string_free (out, FALSE);
}

int
cowscope_format_prepare (sqlite3 *db, const char *sql, sqlite3_stmt **stmt)
{
  g_autofree char *expanded = cowscope_format_expand_sql (sql);
  return sqlite3_prepare_v2 (db, expanded, -1, stmt, NULL);
}

int
cowscope_format_exec (sqlite3 *db, const char *sql)
{
  g_autofree char *expanded = cowscope_format_expand_sql (sql);
  return sqlite3_exec (db, expanded, NULL, NULL, NULL);
}

const char *
cowscope_format_enum_name (const char *table, gint64 id)
{
  if (strcmp (table, "event_types") == 0)
    return id >= 0 && id < COW_N_EVENT_TYPES ? cow_event_type_name ((CowEventType) id) : NULL;
  if (strcmp (table, "ops") == 0)
    return id >= 0 && id < COW_N_OPS ? cow_op_name ((CowOp) id) : NULL;
  if (strcmp (table, "dtypes") == 0)
    return id >= 0 && id < COW_N_DTYPES ? cow_dtype_name ((CowDType) id) : NULL;
  for (gsize i = 0; i < G_N_ELEMENTS (terms); i++)
    if (terms[i].id == id && strcmp (terms[i].table, table) == 0)
      return terms[i].name;
  return NULL;
}

const guint *
cowscope_format_dtype_sizes (guint *n)
{
  static guint sizes[COW_N_DTYPES];
  static gsize filled;
  if (g_once_init_enter (&filled))
    {
      for (int i = 0; i < COW_N_DTYPES; i++)
        sizes[i] = (guint) cow_dtype_size ((CowDType) i);
      g_once_init_leave (&filled, 1);
    }
  *n = COW_N_DTYPES;
  return sizes;
}

/* Inserts (id, name) into @table; FALSE on an SQLite failure. */
static gboolean
insert_name (sqlite3_stmt *stmt, gint64 id, const char *name)
{
  sqlite3_reset (stmt);
  sqlite3_bind_int64 (stmt, 1, id);
  sqlite3_bind_text (stmt, 2, name, -1, SQLITE_STATIC);
  return sqlite3_step (stmt) == SQLITE_DONE;
}

/* Fills @table from the engine's names (ids 0 .. @n - 1) or the terms. */
static gboolean
fill_table (sqlite3 *db, const char *table, gint64 n)
{
  g_autofree char *sql = g_strdup_printf ("INSERT OR REPLACE INTO %s (id, name) VALUES (?, ?)",
                                          table);
  sqlite3_stmt *stmt = NULL;
  if (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL) != SQLITE_OK)
    return FALSE;
  gboolean ok = TRUE;
  for (gint64 id = 0; ok && id < n; id++)
    ok = insert_name (stmt, id, cowscope_format_enum_name (table, id));
  for (gsize i = 0; ok && n == 0 && i < G_N_ELEMENTS (terms); i++)
    if (terms[i].in_schema && strcmp (terms[i].table, table) == 0)
      ok = insert_name (stmt, terms[i].id, terms[i].name);
  sqlite3_finalize (stmt);
  return ok;
}

gboolean
cowscope_format_fill_lookup_tables (sqlite3 *db)
{
  static const char *const from_terms[] = {
    "materialize_kinds", "eager_reasons", "access_kinds", "allocation_kinds", "cuda_kinds",
  };
  if (!fill_table (db, "event_types", COW_N_EVENT_TYPES) || !fill_table (db, "ops", COW_N_OPS))
    return FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (from_terms); i++)
    if (!fill_table (db, from_terms[i], 0))
      return FALSE;

  sqlite3_stmt *stmt = NULL;
  if (sqlite3_prepare_v2 (db, "INSERT OR REPLACE INTO dtypes (id, name, itemsize) VALUES (?, ?, ?)",
                          -1, &stmt, NULL) != SQLITE_OK)
    return FALSE;
  gboolean ok = TRUE;
  for (int i = 0; ok && i < COW_N_DTYPES; i++)
    {
      sqlite3_reset (stmt);
      sqlite3_bind_int (stmt, 1, i);
      sqlite3_bind_text (stmt, 2, cow_dtype_name ((CowDType) i), -1, SQLITE_STATIC);
      sqlite3_bind_int64 (stmt, 3, (sqlite3_int64) cow_dtype_size ((CowDType) i));
      ok = sqlite3_step (stmt) == SQLITE_DONE;
    }
  sqlite3_finalize (stmt);
  return ok;
}
