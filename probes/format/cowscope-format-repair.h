/* cowscope-format-repair.h — what of a damaged session can be rebuilt.
 *
 * A session holds what was recorded (events, strings, stacks and frames,
 * threads, processes and their maps, CUDA activity, meta: every table but
 * cowscope_format_derived_tables()) and what the finalizer derives from it
 * (object tables, indexes, packed summaries, lookup names).  Damage in
 * the derived part — an index page, a derived table, a summary BLOB — loses
 * nothing: a new file with the recorded tables copied into a fresh schema,
 * then finalized, is the session again.  Damage in the recorded part
 * cannot be repaired without losing what was recorded, so it is refused.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* Checks the values of the recorded tables of the session open in @db
 * (named @path in messages) as the format's rules say
 * (cowscope-format-check.h), and with @structure their structure too
 * (quick_check of each with its indexes).  A repair needs sound values;
 * whether the rows can all be read shows when they are copied.  FALSE
 * with @error (DAMAGED) naming the table and row. */
gboolean cowscope_format_check_recorded (sqlite3 *db, const char *path, gboolean structure,
                                         GError **error);

/* Writes a new session at @target (which must not exist) with the schema
 * of this build and every row of @db's recorded tables (the columns both
 * have), not finalized: cowscope_format_finalize() then derives the rest.
 * FALSE with @error (DAMAGED naming the table that cannot be read, or
 * FAILED when @target cannot be written); @target is removed on failure. */
gboolean cowscope_format_copy_recorded (sqlite3 *db, const char *path, const char *target,
                                        GError **error);

G_END_DECLS
