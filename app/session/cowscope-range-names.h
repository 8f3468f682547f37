/* cowscope-range-names.h — the names and nesting of a session's user
 * ranges (the program's cow_range_push() calls: "step 3", "forward").
 *
 * The timeline's lanes carry each range as a span whose id is the range's
 * (ranges.id, unique per process), not its name: names are text the
 * in-memory lane index has no room for.  This table is read once per
 * document, in a worker thread, and answers, from any thread:
 *
 *   the name of range (pid, id), and its depth (0 for a range with no
 *   parent, 1 for its children, ...: the row the timeline draws it in);
 *   how many rows of ranges a thread needs (its deepest range's depth + 1).
 *
 * Immutable once loaded; reference counted. */
#pragma once

#include <gio/gio.h>

#include "cowscope-session-document.h"

G_BEGIN_DECLS

typedef struct _CowscopeRangeNames CowscopeRangeNames;

#define COWSCOPE_TYPE_RANGE_NAMES (cowscope_range_names_get_type ())
GType cowscope_range_names_get_type (void) G_GNUC_CONST;

CowscopeRangeNames *cowscope_range_names_ref (CowscopeRangeNames *self);
void cowscope_range_names_unref (CowscopeRangeNames *self);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeRangeNames, cowscope_range_names_unref)

/* One row of the ranges table. */
typedef struct {
  guint32 pid;
  gint64 id;
  gint64 tid;
  gint64 parent;      /* -1: none */
  const char *name;   /* NULL or "": unnamed */
} CowscopeNamedRange;

/* The table of @n_rows @rows (copied), for a session's ranges or a
 * test's. */
CowscopeRangeNames *cowscope_range_names_new (const CowscopeNamedRange *rows, guint n_rows);

/* Reads the ranges of @document in the calling thread: a table with no
 * ranges (or a session without the table) is an empty one; NULL with
 * @error when the file cannot be read. */
CowscopeRangeNames *cowscope_range_names_load (CowscopeSessionDocument *document,
                                               GCancellable *cancellable, GError **error);

/* The same in a worker thread. */
void cowscope_range_names_load_async (CowscopeSessionDocument *document,
                                      GCancellable *cancellable, GAsyncReadyCallback callback,
                                      gpointer user_data);
CowscopeRangeNames *cowscope_range_names_load_finish (GAsyncResult *result, GError **error);

/* The name of range @id of process @pid, or NULL when the range is not
 * known or has no name.  Valid as long as @self. */
const char *cowscope_range_names_lookup (const CowscopeRangeNames *self, guint32 pid, gint64 id);

/* The nesting depth of range @id of @pid (0: outermost, or unknown; at
 * most 16, however deep a chain of parents the file claims). */
guint cowscope_range_names_get_depth (const CowscopeRangeNames *self, guint32 pid, gint64 id);

/* Rows of ranges thread @tid of @pid needs: its deepest range's depth + 1,
 * 0 when it has none. */
guint cowscope_range_names_get_thread_rows (const CowscopeRangeNames *self, guint32 pid,
                                            gint64 tid);

/* Number of ranges read. */
guint cowscope_range_names_get_n_ranges (const CowscopeRangeNames *self);

G_END_DECLS
