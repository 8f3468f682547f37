/* cowscope-session-diff.h — what changed between two sessions (BEFORE and
 * AFTER), as `cowscope-cli diff` prints it and the application's
 * comparison shows it.
 *
 * Every figure is read from the session views (cowscope-format-views.h:
 * call_sites_by_bytes, operations_by_bytes, user_ranges, lazy_copies,
 * eager_fallbacks, warnings) and the totals from the report
 * (cowscope-report.h), so a diff says exactly what the two reports and
 * the views say, side by side.  Rows are matched:
 *
 *   - call sites by function and file name (the directory is ignored, so
 *     two checkouts in different places still match), then by the
 *     nearest line: a copy whose line moved because code above it changed
 *     is the same call site.  Sites without a function and file (an
 *     address in a module, no call stack) match by their text;
 *   - operations by name, ranges (cow_range_push) by name, summed over
 *     every instance of the name;
 *   - eager fallbacks by reason and call site, warnings by what they say
 *     (the access, the operation, both tensors' names) and call site.
 *
 * A row is listed when one of its figures changed; each list is sorted by
 * the absolute change (bytes first, then counts).  A session compared
 * with itself gives no row and no changed total.
 *
 * The JSON form (format "cowscope-diff" version 1) holds the same, and
 * its "metrics" object the numbers `--fail-if` budgets test:
 * METRIC.before, .after, .change (after − before), .increase and
 * .decrease (the change when it goes that way, else 0) for every report
 * metric (cowscope_report_metrics()), and new_warnings, gone_warnings.
 */
#pragma once

#include <json-glib/json-glib.h>

#include "cowscope-session-tables.h"

G_BEGIN_DECLS

/* What a row counts; a dimension fills the figures it has, the others
 * stay 0. */
typedef enum {
  COWSCOPE_DIFF_COPIES,
  COWSCOPE_DIFF_COPIED_BYTES,
  COWSCOPE_DIFF_STEALS,
  COWSCOPE_DIFF_STOLEN_BYTES,
  COWSCOPE_DIFF_LAZY_CLONES,
  COWSCOPE_DIFF_SHARED_BYTES,
  COWSCOPE_DIFF_EAGER_FALLBACKS,
  COWSCOPE_DIFF_EAGER_BYTES,
  COWSCOPE_DIFF_WARNINGS,
  COWSCOPE_DIFF_N_FIGURES
} CowscopeDiffFigure;

/* What rows are matched by. */
typedef enum {
  COWSCOPE_DIFF_CALL_SITE,
  COWSCOPE_DIFF_OPERATION,
  COWSCOPE_DIFF_RANGE,
  COWSCOPE_DIFF_EAGER_FALLBACK,
  COWSCOPE_DIFF_WARNING,
  COWSCOPE_DIFF_N_DIMENSIONS
} CowscopeDiffDimension;

typedef enum {
  COWSCOPE_DIFF_CHANGED,  /* in both sessions */
  COWSCOPE_DIFF_APPEARED, /* only in AFTER */
  COWSCOPE_DIFF_GONE,     /* only in BEFORE */
} CowscopeDiffStatus;

typedef struct {
  CowscopeDiffStatus status;
  char *label;       /* the call site ("update (train.c:91)"), operation, range,
                      * "REASON at CALL SITE" or the warning's message */
  char *call_site;   /* the call site's text as AFTER has it (BEFORE's when gone);
                      * NULL for operations and ranges */
  char *function;    /* NULL when unknown or not a call site */
  char *file;        /* as recorded (AFTER's when both) */
  gint64 before_line, after_line; /* 0 when absent or unknown */
  gint64 before[COWSCOPE_DIFF_N_FIGURES];
  gint64 after[COWSCOPE_DIFF_N_FIGURES];
} CowscopeDiffRow;

typedef struct _CowscopeSessionDiff CowscopeSessionDiff;

/* The name of @figure in JSON and in messages ("copied_bytes", ...). */
const char *cowscope_diff_figure_name (CowscopeDiffFigure figure);

/* TRUE when @figure counts bytes. */
gboolean cowscope_diff_figure_is_bytes (CowscopeDiffFigure figure);

/* The name of @dimension in JSON ("call_sites", "operations", "ranges",
 * "eager_fallbacks", "warnings"). */
const char *cowscope_diff_dimension_name (CowscopeDiffDimension dimension);

/* Compares @before with @after (which may be the same tables).  NULL with
 * @error when either cannot be read. */
CowscopeSessionDiff *cowscope_session_diff_build (CowscopeSessionTables *before,
                                                  CowscopeSessionTables *after,
                                                  GError **error);

void cowscope_session_diff_free (CowscopeSessionDiff *diff);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeSessionDiff, cowscope_session_diff_free)

/* The rows of @dimension that changed, sorted by absolute change (an
 * array of CowscopeDiffRow*, owned by @diff). */
GPtrArray *cowscope_session_diff_rows (CowscopeSessionDiff *diff,
                                       CowscopeDiffDimension dimension);

/* TRUE when nothing the diff compares changed: no row and no total. */
gboolean cowscope_session_diff_is_empty (CowscopeSessionDiff *diff);

/* The report of BEFORE (FALSE) or AFTER (TRUE) (cowscope_report_build(),
 * owned by @diff): the summary's two sides. */
JsonObject *cowscope_session_diff_report (CowscopeSessionDiff *diff, gboolean after);

/* The budget metrics (NULL-terminated, static): "copied_bytes.increase",
 * ..., "new_warnings", "gone_warnings". */
const char *const *cowscope_session_diff_metrics (void);

/* The value of metric @name and the base a percentage is taken of (the
 * metric's BEFORE value; BEFORE's warnings for new_ and gone_warnings).
 * FALSE when @name is not a metric. */
gboolean cowscope_session_diff_metric (CowscopeSessionDiff *diff, const char *name,
                                       gint64 *value, gint64 *base);

/* The diff as JSON, listing at most @top rows of each dimension (the
 * number left out in "more"). */
JsonObject *cowscope_session_diff_to_json (CowscopeSessionDiff *diff, guint top);

/* Renders @json (from cowscope_session_diff_to_json()) as text. */
char *cowscope_session_diff_format_text (JsonObject *json);

G_END_DECLS
