/* cowscope-format-vocabulary.h — the words a session stores as numbers:
 * event types, ops, dtypes and the kinds in `aux` come from the engine's
 * public headers (cow-trace.h, cow-dtype.h), CUDA record kinds from the
 * probe protocol (cowscope-protocol.h).  Nothing here repeats a code.
 *
 * SQL that tests a code names it, never writes the number: these names
 * are replaced by the headers' codes when the SQL is prepared
 * (cowscope_format_prepare(), cowscope_format_exec()):
 *
 *   :ev_<event type>          every CowEventType by its engine name
 *                             (:ev_lazy_clone, :ev_materialize_end, ...)
 *   :materialize_<kind>       :materialize_copy, _steal, _failed;
 *                             :materialize_kind_mask (the kind's bits of
 *                             aux), :materialize_copy_discarded (the flag)
 *   :eager_<reason>           :eager_foreign_data_ptr, :eager_not_simple
 *   :access_<kind>            :access_read, :access_write
 *   :allocation_<kind>        :allocation_cpu, _cuda, _foreign
 *   :cuda_<kind>              :cuda_memcpy, _memset, _kernel,
 *                             _memory_alloc, _memory_free,
 *                             _external_correlation, _runtime_api
 *
 * The lookup tables of a finalized session (event_types, ops, dtypes,
 * materialize_kinds, eager_reasons, access_kinds, allocation_kinds,
 * cuda_kinds) hold the same names; cowscope_format_fill_lookup_tables()
 * writes them.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

#include "cow-trace.h"

G_BEGIN_DECLS

/* @sql with every vocabulary parameter replaced by its code (outside
 * quoted strings); other parameters are left for the caller to bind. */
char *cowscope_format_expand_sql (const char *sql);

/* Prepares the first statement of @sql, expanded; returns SQLite's
 * result code. */
int cowscope_format_prepare (sqlite3 *db, const char *sql, sqlite3_stmt **stmt);

/* Runs every statement of @sql, expanded, like sqlite3_exec() without
 * callbacks; returns SQLite's result code. */
int cowscope_format_exec (sqlite3 *db, const char *sql);

/* The name of @id in lookup table @table (the tables above, and
 * "memcpy_kinds": CUPTI's memcpy kinds, cuda_activity.subkind of a
 * memcpy), or NULL when the vocabulary has none.  Static strings. */
const char *cowscope_format_enum_name (const char *table, gint64 id);

/* The engine's item size of each dtype (the dtypes table's itemsize
 * column, which a session gets when it is finalized): @n entries. */
const guint *cowscope_format_dtype_sizes (guint *n);

/* Fills the lookup tables of @db (INSERT OR REPLACE); FALSE with @db's
 * error on failure. */
gboolean cowscope_format_fill_lookup_tables (sqlite3 *db);

G_END_DECLS
