/* cowscope-format-check.h — is what a reader is about to read sound?
 * The session format's rules on the file's structure and on its values,
 * checked before the numbers are used.
 *
 * A session file is untrusted and may be damaged: bytes flipped on disk, a
 * file cut short, a value of the wrong type written by another tool.  The
 * opener (cowscope-format-open.h) checks what every reader needs; a reader
 * that is about to aggregate or copy whole tables asks here first, for the
 * tables it reads:
 *
 *  - structure: `PRAGMA quick_check` of each table with its indexes (O(N)
 *    in the table's pages); the whole file, free pages included, for
 *    readers that read everything;
 *  - values: every column a reader uses holds what the schema promises —
 *    an integer where a number is expected (not a REAL, TEXT or BLOB), no
 *    NULL where the schema says NOT NULL, counts and byte counts from 0 to
 *    2^48, times in ns from 0 to 2^62, flags 0 or 1 — and the non-negative
 *    meta totals; parent links (ranges.parent_id, tensors.base_tensor_id)
 *    never come back to where they started.
 *
 * The first damage found is reported as COWSCOPE_SESSION_ERROR_DAMAGED
 * naming the file, the table and the row: "s.cowscope is damaged: table
 * 'materializations', row seq 42: nbytes is 1.5e+19, a real number, not a
 * byte count".  A rule is here once; readers only list their tables.
 */
#pragma once

#include <glib.h>
#include <sqlite3.h>

G_BEGIN_DECLS

/* The largest count or byte count a session holds in one row (256 TiB):
 * sums over up to 32,768 rows cannot overflow 64 bits; SQLite reports a
 * sum that would as an error. */
#define COWSCOPE_FORMAT_MAX_COUNT (G_GINT64_CONSTANT (1) << 48)
/* The latest time in ns a session holds (146 years of CLOCK_MONOTONIC):
 * a difference of two times cannot overflow. */
#define COWSCOPE_FORMAT_MAX_TIME (G_GINT64_CONSTANT (1) << 62)

typedef enum {
  COWSCOPE_FORMAT_CHECK_STRUCTURE = 1 << 0, /* quick_check of the tables */
  COWSCOPE_FORMAT_CHECK_VALUES = 1 << 1,    /* the column rules */
  COWSCOPE_FORMAT_CHECK_ALL = COWSCOPE_FORMAT_CHECK_STRUCTURE | COWSCOPE_FORMAT_CHECK_VALUES,
} CowscopeFormatCheckFlags;

/* Checks @tables (NULL-terminated names; a table the file lacks is
 * skipped: the opener refuses files that lack a required one) of the
 * session open in @db, named @path in messages.  FALSE with @error
 * (COWSCOPE_SESSION_ERROR_DAMAGED) at the first damage. */
gboolean cowscope_format_check_tables (sqlite3 *db, const char *path,
                                       const char *const *tables,
                                       CowscopeFormatCheckFlags flags, GError **error);

/* Checks every table of the file as above, and with STRUCTURE also the
 * pages no table owns (the free list, pages used twice or never): for
 * readers that read or copy everything, and for `finalize`. */
gboolean cowscope_format_check_file (sqlite3 *db, const char *path,
                                     CowscopeFormatCheckFlags flags, GError **error);

/* `PRAGMA integrity_check` (O(N log N): indexes against their tables
 * too), for what must be proven sound, such as a file `finalize` says it
 * completed.  FALSE with @error naming the first finding. */
gboolean cowscope_format_check_integrity (sqlite3 *db, const char *path, GError **error);

/* What quick_check finds damaged in @db, table by table, for an error
 * message that names where the damage is ("table 'events': Rowid 12 out
 * of order"); NULL when it finds nothing.  Never sets an error itself
 * (cowscope_format_set_error() calls it). */
char *cowscope_format_diagnose (sqlite3 *db);

/* The tables whose values are all derived from `events` and the other
 * recorded tables (by cowscope_format_finalize()), which a damaged copy
 * can lose without losing anything recorded (NULL-terminated). */
const char *const *cowscope_format_derived_tables (void);

G_END_DECLS
