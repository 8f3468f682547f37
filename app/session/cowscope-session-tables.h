/* cowscope-session-tables.h — a session's tables, read with SQL: what
 * reports and exports read (the derived tables, meta, the lookup names).
 *
 * Opened through the session format (cowscope-format-open.h says what is
 * refused).  A session whose recorder died before finalizing it
 * (meta.finalized is not 1) is finalized into a temporary copy
 * (cowscope-format-finalize.h), which is read instead and deleted when the
 * tables are freed; the session file itself is never written, and
 * cowscope_session_tables_is_finalized() says so for the caller to warn.
 * The session views (cowscope-format-views.h: call_sites, copies, ...)
 * are there as TEMP views of this version, whatever the file holds.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

#include "cowscope-format-error.h"

G_BEGIN_DECLS

typedef struct _CowscopeSessionTables CowscopeSessionTables;

/* Opens @path read-only (see above).  NULL with @error
 * (COWSCOPE_SESSION_ERROR) naming the file and the problem. */
CowscopeSessionTables *cowscope_session_tables_open (const char *path, GError **error);

/* Closes the database and deletes a temporary copy.  NULL is ignored. */
void cowscope_session_tables_free (CowscopeSessionTables *tables);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeSessionTables, cowscope_session_tables_free)

/* The open connection (read-only; valid until the tables are freed). */
sqlite3 *cowscope_session_tables_get_db (CowscopeSessionTables *tables);
/* The session file as the caller named it. */
const char *cowscope_session_tables_get_path (CowscopeSessionTables *tables);
/* The schema version of that file. */
int cowscope_session_tables_get_schema_version (CowscopeSessionTables *tables);

/* TRUE when the recorder finished the session (its meta.finalized = 1);
 * FALSE when a finalized copy is read. */
gboolean cowscope_session_tables_is_finalized (CowscopeSessionTables *tables);

/* meta.@key as text, or NULL when absent or NULL. */
const char *cowscope_session_tables_get_meta (CowscopeSessionTables *tables, const char *key);

/* meta.@key as an integer: TRUE and *@value when present and numeric. */
gboolean cowscope_session_tables_get_meta_int (CowscopeSessionTables *tables, const char *key,
                                               gint64 *value);

/* TRUE when the main schema has a table named @name. */
gboolean cowscope_session_tables_has_table (CowscopeSessionTables *tables, const char *name);

/* TRUE when table @table of the main schema has a column @column. */
gboolean cowscope_session_tables_has_column (CowscopeSessionTables *tables, const char *table,
                                             const char *column);

/* The name of @id in the lookup table @table (ops, materialize_kinds,
 * eager_reasons, access_kinds, cuda_kinds, event_types, ...), or the
 * session format's name for it when the table lacks it
 * (cowscope_format_enum_name(): memcpy_kinds has no table), or
 * "TABLE #ID".  Never NULL; valid until the tables are freed. */
const char *cowscope_session_tables_enum_name (CowscopeSessionTables *tables, const char *table,
                                               gint64 id);

/* Prepares @sql, its vocabulary names replaced by their codes
 * (cowscope-format-vocabulary.h); on failure NULL with @error. */
sqlite3_stmt *cowscope_session_tables_prepare (CowscopeSessionTables *tables, const char *sql,
                                               GError **error);

/* Steps @stmt: SQLITE_ROW or SQLITE_DONE, or -1 with @error set. */
int cowscope_session_tables_step (CowscopeSessionTables *tables, sqlite3_stmt *stmt,
                                  GError **error);

/* Runs @sql, which yields one integer (NULL reads as 0), into *@value. */
gboolean cowscope_session_tables_query_int (CowscopeSessionTables *tables, const char *sql,
                                            gint64 *value, GError **error);

/* Checks the structure and values of @names (NULL-terminated tables) as
 * the session format's rules say (cowscope-format-check.h), before a
 * reader aggregates them; NULL @names: every table and the whole file.
 * FALSE with @error (COWSCOPE_SESSION_ERROR_DAMAGED) naming the table
 * and row. */
gboolean cowscope_session_tables_check (CowscopeSessionTables *tables, const char *const *names,
                                        GError **error);

/* Sets @error for SQLite result @rc while doing @what
 * (cowscope_format_set_error(), naming the session file). */
void cowscope_session_tables_set_error (CowscopeSessionTables *tables, GError **error, int rc,
                                        const char *what);

G_END_DECLS
