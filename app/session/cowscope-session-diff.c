/* cowscope-session-diff.c — what changed between two sessions (see
 * header). */
#include "cowscope-session-diff.h"

#include <math.h>
#include <string.h>

#include "cowscope-report.h"

/* User-visible strings (untranslated for now), in one place. */
#define MSG_NO_STACK        "(no call stack)"
#define MSG_NO_OPERATION    "(unknown operation)"
#define MSG_NO_RANGE        "(unnamed range)"
#define MSG_SCHEMAS         "BEFORE is schema %d and AFTER schema %d: both are read with this version's views, but figures an older version did not derive (such as lock waits) may differ for that reason alone"
#define MSG_NO_CHANGE       "No change: both sessions made the same copies, steals, lazy clones, eager fallbacks and warnings.\n"

static const char *const figure_names[COWSCOPE_DIFF_N_FIGURES] = {
  "copies", "copied_bytes", "steals", "stolen_bytes", "lazy_clones", "shared_bytes",
  "eager_fallbacks", "eager_bytes", "warnings",
};

static const char *const dimension_names[COWSCOPE_DIFF_N_DIMENSIONS] = {
  "call_sites", "operations", "ranges", "eager_fallbacks", "warnings",
};

/* The figures each dimension has, as bits of (1 << figure). */
#define FIG(f) (1u << COWSCOPE_DIFF_##f)
#define MATERIALIZATION_FIGURES \
  (FIG (COPIES) | FIG (COPIED_BYTES) | FIG (STEALS) | FIG (STOLEN_BYTES))
static const guint dimension_figures[COWSCOPE_DIFF_N_DIMENSIONS] = {
  MATERIALIZATION_FIGURES | FIG (LAZY_CLONES) | FIG (SHARED_BYTES) | FIG (EAGER_FALLBACKS)
    | FIG (EAGER_BYTES),
  MATERIALIZATION_FIGURES | FIG (LAZY_CLONES) | FIG (SHARED_BYTES) | FIG (EAGER_FALLBACKS)
    | FIG (EAGER_BYTES),
  MATERIALIZATION_FIGURES | FIG (LAZY_CLONES) | FIG (SHARED_BYTES),
  FIG (EAGER_FALLBACKS) | FIG (EAGER_BYTES),
  FIG (WARNINGS),
};

/* The report metrics a diff compares (the others, such as the duration
 * or the event counts, differ between any two recordings and are only
 * there for budgets). */
static const char *const compared_metrics[] = {
  "copies", "copied_bytes", "steals", "stolen_bytes", "lazy_clones", "shared_bytes",
  "saved_bytes", "eager_fallbacks", "eager_bytes", "violations", "failed_materializations",
  "discarded_copies", "cuda_copies", "cuda_copy_bytes", NULL,
};

static const char *const metric_fields[] = { "before", "after", "change", "increase", "decrease",
                                             NULL };

struct _CowscopeSessionDiff {
  JsonObject *reports[2];             /* BEFORE, AFTER */
  char *paths[2];
  int schema_versions[2];
  gboolean finalized[2];
  GPtrArray *rows[COWSCOPE_DIFF_N_DIMENSIONS];
  gint64 new_warnings, gone_warnings;
};

const char *
cowscope_diff_figure_name (CowscopeDiffFigure figure)
{
  g_return_val_if_fail (figure < COWSCOPE_DIFF_N_FIGURES, NULL);
  return figure_names[figure];
}

gboolean
cowscope_diff_figure_is_bytes (CowscopeDiffFigure figure)
{
  return figure == COWSCOPE_DIFF_COPIED_BYTES || figure == COWSCOPE_DIFF_STOLEN_BYTES
         || figure == COWSCOPE_DIFF_SHARED_BYTES || figure == COWSCOPE_DIFF_EAGER_BYTES;
}

const char *
cowscope_diff_dimension_name (CowscopeDiffDimension dimension)
{
  g_return_val_if_fail (dimension < COWSCOPE_DIFF_N_DIMENSIONS, NULL);
  return dimension_names[dimension];
}

/* ---- one side's rows ---------------------------------------------------- */

/* A row of one session, before matching. */
typedef struct {
  char *group;     /* rows of the two sessions match only within a group */
  gint64 line;     /* matched to the nearest line within the group; 0: exactly */
  char *label, *call_site, *function, *file;
  gint64 figures[COWSCOPE_DIFF_N_FIGURES];
  gboolean matched;
} SideRow;

static void
side_row_free (SideRow *row)
{
  g_free (row->group);
  g_free (row->label);
  g_free (row->call_site);
  g_free (row->function);
  g_free (row->file);
  g_free (row);
}

static void
diff_row_free (CowscopeDiffRow *row)
{
  g_free (row->label);
  g_free (row->call_site);
  g_free (row->function);
  g_free (row->file);
  g_free (row);
}

/* A call site as the call_sites view gives it (text, function, file,
 * line; any may be NULL). */
typedef struct {
  const char *text, *function, *file;
  gint64 line;
} Site;

static Site
site_from_columns (sqlite3_stmt *stmt, int first)
{
  Site site = {
    (const char *) sqlite3_column_text (stmt, first),
    (const char *) sqlite3_column_text (stmt, first + 1),
    (const char *) sqlite3_column_text (stmt, first + 2),
    sqlite3_column_type (stmt, first + 3) == SQLITE_INTEGER ? sqlite3_column_int64 (stmt, first + 3)
                                                             : 0,
  };
  if (site.text == NULL)
    site.text = MSG_NO_STACK;
  if (site.line < 0)
    site.line = 0;
  return site;
}

/* What two call sites must share to match: the function and the file's
 * name (not its directory), or the whole text when there is neither. */
static char *
site_group (const Site *site)
{
  g_autofree char *base = site->file != NULL ? g_path_get_basename (site->file) : NULL;

  if (site->function != NULL || base != NULL)
    return g_strdup_printf ("%s\x1f%s", site->function != NULL ? site->function : "",
                            base != NULL ? base : "");
  return g_strdup_printf ("\x1e%s", site->text);
}

/* The rows of one session and one dimension, merged by identity (rows of
 * the same identity from several queries add up). */
typedef struct {
  GHashTable *by_identity; /* identity → SideRow* (owned) */
} Side;

static void
side_init (Side *side)
{
  side->by_identity = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                             (GDestroyNotify) side_row_free);
}

static void
side_clear (Side *side)
{
  g_clear_pointer (&side->by_identity, g_hash_table_unref);
}

/* The row of @side for @prefix (what besides the call site identifies it:
 * a reason, a warning; "" for none) at @site (NULL: not a call site),
 * labelled @label (NULL: the call site's text). */
static SideRow *
side_row (Side *side, const char *prefix, const char *label, const Site *site)
{
  g_autofree char *identity = NULL;
  SideRow *row;

  if (site != NULL)
    identity = g_strdup_printf ("%s\x1d%s\x1f%s\x1f%s\x1f%" G_GINT64_FORMAT, prefix, site->text,
                                site->function != NULL ? site->function : "",
                                site->file != NULL ? site->file : "", site->line);
  else
    identity = g_strdup (prefix);
  row = g_hash_table_lookup (side->by_identity, identity);
  if (row != NULL)
    return row;

  row = g_new0 (SideRow, 1);
  if (site != NULL)
    {
      g_autofree char *group = site_group (site);
      row->group = g_strdup_printf ("%s\x1d%s", prefix, group);
      row->line = site->file != NULL ? site->line : 0;
      row->call_site = g_strdup (site->text);
      row->function = g_strdup (site->function);
      row->file = g_strdup (site->file);
    }
  else
    row->group = g_strdup (prefix);
  row->label = g_strdup (label != NULL ? label : site != NULL ? site->text : prefix);
  g_hash_table_insert (side->by_identity, g_steal_pointer (&identity), row);
  return row;
}

/* Runs @sql over @tables; each row's columns from @first_figure on add to
 * @figures (in order) of the row that @identify gives. */
typedef SideRow *(*IdentifyFunc) (Side *side, sqlite3_stmt *stmt);

static gboolean
collect (CowscopeSessionTables *tables, Side *side, const char *sql, IdentifyFunc identify,
         int first_figure, const CowscopeDiffFigure *figures, guint n_figures, GError **error)
{
  sqlite3_stmt *stmt = cowscope_session_tables_prepare (tables, sql, error);
  int rc;

  if (stmt == NULL)
    return FALSE;
  while ((rc = cowscope_session_tables_step (tables, stmt, error)) == SQLITE_ROW)
    {
      SideRow *row = identify (side, stmt);
      for (guint i = 0; i < n_figures; i++)
        row->figures[figures[i]] += sqlite3_column_int64 (stmt, first_figure + (int) i);
    }
  sqlite3_finalize (stmt);
  return rc == SQLITE_DONE;
}

/* Columns: call site (4), figures. */
static SideRow *
identify_call_site (Side *side, sqlite3_stmt *stmt)
{
  Site site = site_from_columns (stmt, 0);
  return side_row (side, "", NULL, &site);
}

/* Columns: name, figures. */
static SideRow *
identify_operation (Side *side, sqlite3_stmt *stmt)
{
  const char *name = (const char *) sqlite3_column_text (stmt, 0);
  return side_row (side, name != NULL ? name : MSG_NO_OPERATION, NULL, NULL);
}

static SideRow *
identify_range (Side *side, sqlite3_stmt *stmt)
{
  const char *name = (const char *) sqlite3_column_text (stmt, 0);
  return side_row (side, name != NULL ? name : MSG_NO_RANGE, NULL, NULL);
}

/* Columns: reason, call site (4), figures. */
static SideRow *
identify_eager (Side *side, sqlite3_stmt *stmt)
{
  const char *reason = (const char *) sqlite3_column_text (stmt, 0);
  Site site = site_from_columns (stmt, 1);
  g_autofree char *label = g_strdup_printf ("%s at %s", reason != NULL ? reason : "?", site.text);
  return side_row (side, reason != NULL ? reason : "?", label, &site);
}

/* Columns: message, access, operation, written, accessed, call site (4),
 * count. */
static SideRow *
identify_warning (Side *side, sqlite3_stmt *stmt)
{
  const char *message = (const char *) sqlite3_column_text (stmt, 0);
  g_autofree char *what = NULL;
  Site site = site_from_columns (stmt, 5);

  what = g_strdup_printf ("%s\x1f%s\x1f%s\x1f%s", (const char *) sqlite3_column_text (stmt, 1),
                          (const char *) sqlite3_column_text (stmt, 2),
                          (const char *) sqlite3_column_text (stmt, 3),
                          (const char *) sqlite3_column_text (stmt, 4));
  return side_row (side, what, message != NULL ? message : "?", &site);
}

/* The views' rows grouped by stack first, then joined to their call
 * site: the call_sites view is evaluated once a stack, not once a row. */
#define SITE_COLUMNS "coalesce (c.call_site, '" MSG_NO_STACK "'), c.function, c.file, c.line"

static const CowscopeDiffFigure materialization_figures[] = {
  COWSCOPE_DIFF_COPIES, COWSCOPE_DIFF_COPIED_BYTES, COWSCOPE_DIFF_STEALS,
  COWSCOPE_DIFF_STOLEN_BYTES,
};
static const CowscopeDiffFigure lazy_figures[] = { COWSCOPE_DIFF_LAZY_CLONES,
                                                   COWSCOPE_DIFF_SHARED_BYTES };
static const CowscopeDiffFigure eager_figures[] = { COWSCOPE_DIFF_EAGER_FALLBACKS,
                                                    COWSCOPE_DIFF_EAGER_BYTES };
static const CowscopeDiffFigure range_figures[] = {
  COWSCOPE_DIFF_COPIES, COWSCOPE_DIFF_COPIED_BYTES, COWSCOPE_DIFF_STEALS,
  COWSCOPE_DIFF_STOLEN_BYTES, COWSCOPE_DIFF_LAZY_CLONES, COWSCOPE_DIFF_SHARED_BYTES,
};
static const CowscopeDiffFigure warning_figures[] = { COWSCOPE_DIFF_WARNINGS };

/* Reads the rows of @dimension of @tables into @side. */
static gboolean
collect_dimension (CowscopeSessionTables *tables, CowscopeDiffDimension dimension, Side *side,
                   GError **error)
{
#define COLLECT(sql, identify, first, figures) \
  collect (tables, side, sql, identify, first, figures, G_N_ELEMENTS (figures), error)
  switch (dimension)
    {
    case COWSCOPE_DIFF_CALL_SITE:
      return COLLECT ("SELECT call_site, function, file, line, copies, copied_bytes, steals,"
                      " stolen_bytes FROM call_sites_by_bytes",
                      identify_call_site, 4, materialization_figures)
             && COLLECT ("SELECT " SITE_COLUMNS ", g.n, g.bytes FROM"
                         " (SELECT stack_id, count (*) AS n, coalesce (sum (bytes), 0) AS bytes"
                         "  FROM lazy_copies GROUP BY stack_id) g"
                         " LEFT JOIN call_sites c ON c.stack_id = g.stack_id",
                         identify_call_site, 4, lazy_figures)
             && COLLECT ("SELECT " SITE_COLUMNS ", g.n, g.bytes FROM"
                         " (SELECT stack_id, count (*) AS n, coalesce (sum (bytes), 0) AS bytes"
                         "  FROM eager_fallbacks GROUP BY stack_id) g"
                         " LEFT JOIN call_sites c ON c.stack_id = g.stack_id",
                         identify_call_site, 4, eager_figures);
    case COWSCOPE_DIFF_OPERATION:
      return COLLECT ("SELECT operation, copies, copied_bytes, steals, stolen_bytes"
                      " FROM operations_by_bytes",
                      identify_operation, 1, materialization_figures)
             && COLLECT ("SELECT operation, count (*), coalesce (sum (bytes), 0)"
                         " FROM lazy_copies GROUP BY operation",
                         identify_operation, 1, lazy_figures)
             && COLLECT ("SELECT operation, count (*), coalesce (sum (bytes), 0)"
                         " FROM eager_fallbacks GROUP BY operation",
                         identify_operation, 1, eager_figures);
    case COWSCOPE_DIFF_RANGE:
      return COLLECT ("SELECT name, copies, copied_bytes, steals, stolen_bytes, lazy_copies,"
                      " shared_bytes FROM user_ranges",
                      identify_range, 1, range_figures);
    case COWSCOPE_DIFF_EAGER_FALLBACK:
      return COLLECT ("SELECT g.reason, " SITE_COLUMNS ", g.n, g.bytes FROM"
                      " (SELECT reason, stack_id, count (*) AS n,"
                      "  coalesce (sum (bytes), 0) AS bytes"
                      "  FROM eager_fallbacks GROUP BY reason, stack_id) g"
                      " LEFT JOIN call_sites c ON c.stack_id = g.stack_id",
                      identify_eager, 5, eager_figures);
    case COWSCOPE_DIFF_WARNING:
      return COLLECT ("SELECT g.message, g.access, g.operation, g.written_through,"
                      " g.accessed_through, " SITE_COLUMNS ", g.n FROM"
                      " (SELECT message, access, operation, written_through, accessed_through,"
                      "  stack_id, count (*) AS n FROM warnings"
                      "  GROUP BY message, access, operation, written_through,"
                      "  accessed_through, stack_id) g"
                      " LEFT JOIN call_sites c ON c.stack_id = g.stack_id",
                      identify_warning, 9, warning_figures);
    default:
      g_assert_not_reached ();
    }
#undef COLLECT
}

/* ---- matching ----------------------------------------------------------- */

/* Rows of one group, per side. */
typedef struct {
  GPtrArray *before, *after; /* SideRow*, not owned */
} Group;

static void
group_free (Group *group)
{
  g_ptr_array_unref (group->before);
  g_ptr_array_unref (group->after);
  g_free (group);
}

typedef struct {
  SideRow *before, *after;
  gint64 distance;
} Pair;

static gint
compare_pairs (gconstpointer a, gconstpointer b)
{
  const Pair *x = a, *y = b;

  if (x->distance != y->distance)
    return x->distance < y->distance ? -1 : 1;
  if (x->before->line != y->before->line)
    return x->before->line < y->before->line ? -1 : 1;
  return x->after->line < y->after->line ? -1 : x->after->line > y->after->line;
}

static gboolean
row_changed (const CowscopeDiffRow *row)
{
  for (int f = 0; f < COWSCOPE_DIFF_N_FIGURES; f++)
    if (row->before[f] != row->after[f])
      return TRUE;
  return FALSE;
}

/* Adds the row of @before and @after (either may be NULL) to @rows when
 * a figure changed. */
static void
add_row (GPtrArray *rows, const SideRow *before, const SideRow *after)
{
  const SideRow *shown = after != NULL ? after : before;
  CowscopeDiffRow *row = g_new0 (CowscopeDiffRow, 1);

  row->status = before == NULL ? COWSCOPE_DIFF_APPEARED
                : after == NULL ? COWSCOPE_DIFF_GONE : COWSCOPE_DIFF_CHANGED;
  row->label = g_strdup (shown->label);
  row->call_site = g_strdup (shown->call_site);
  row->function = g_strdup (shown->function);
  row->file = g_strdup (shown->file);
  if (before != NULL)
    {
      row->before_line = before->line;
      memcpy (row->before, before->figures, sizeof row->before);
    }
  if (after != NULL)
    {
      row->after_line = after->line;
      memcpy (row->after, after->figures, sizeof row->after);
    }
  if (row_changed (row))
    g_ptr_array_add (rows, row);
  else
    diff_row_free (row);
}

/* Pairs the rows of one group: the same line first, then the nearest
 * lines; rows that find no partner appeared or are gone. */
static void
match_group (GPtrArray *rows, Group *group)
{
  g_autoptr (GArray) pairs = g_array_new (FALSE, FALSE, sizeof (Pair));

  for (guint i = 0; i < group->before->len; i++)
    for (guint j = 0; j < group->after->len; j++)
      {
        Pair pair = { group->before->pdata[i], group->after->pdata[j], 0 };
        pair.distance = ABS (pair.before->line - pair.after->line);
        g_array_append_val (pairs, pair);
      }
  g_array_sort (pairs, compare_pairs);
  for (guint i = 0; i < pairs->len; i++)
    {
      Pair *pair = &g_array_index (pairs, Pair, i);
      if (pair->before->matched || pair->after->matched)
        continue;
      pair->before->matched = pair->after->matched = TRUE;
      add_row (rows, pair->before, pair->after);
    }
  for (guint i = 0; i < group->before->len; i++)
    if (!((SideRow *) group->before->pdata[i])->matched)
      add_row (rows, group->before->pdata[i], NULL);
  for (guint i = 0; i < group->after->len; i++)
    if (!((SideRow *) group->after->pdata[i])->matched)
      add_row (rows, NULL, group->after->pdata[i]);
}

/* The largest absolute change among @row's byte figures (@bytes TRUE) or
 * its counts. */
static gint64
largest_change (const CowscopeDiffRow *row, gboolean bytes)
{
  gint64 largest = 0;

  for (int f = 0; f < COWSCOPE_DIFF_N_FIGURES; f++)
    if (cowscope_diff_figure_is_bytes (f) == bytes)
      largest = MAX (largest, ABS (row->after[f] - row->before[f]));
  return largest;
}

static gint
compare_rows (gconstpointer a, gconstpointer b)
{
  const CowscopeDiffRow *x = *(CowscopeDiffRow *const *) a, *y = *(CowscopeDiffRow *const *) b;
  gint64 xb = largest_change (x, TRUE), yb = largest_change (y, TRUE);
  gint64 xc = largest_change (x, FALSE), yc = largest_change (y, FALSE);
  int order;

  if (xb != yb)
    return xb > yb ? -1 : 1;
  if (xc != yc)
    return xc > yc ? -1 : 1;
  if ((order = g_strcmp0 (x->label, y->label)) != 0)
    return order;
  return x->after_line < y->after_line ? -1 : x->after_line > y->after_line;
}

/* Matches the rows of @before and @after into the changed rows. */
static GPtrArray *
match_sides (Side *before, Side *after)
{
  g_autoptr (GHashTable) groups = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                                         (GDestroyNotify) group_free);
  g_autoptr (GPtrArray) order = g_ptr_array_new ();
  GPtrArray *rows = g_ptr_array_new_with_free_func ((GDestroyNotify) diff_row_free);
  Side *sides[2] = { before, after };

  for (int s = 0; s < 2; s++)
    {
      GHashTableIter iter;
      gpointer value;
      g_hash_table_iter_init (&iter, sides[s]->by_identity);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        {
          SideRow *row = value;
          Group *group = g_hash_table_lookup (groups, row->group);
          if (group == NULL)
            {
              group = g_new0 (Group, 1);
              group->before = g_ptr_array_new ();
              group->after = g_ptr_array_new ();
              g_hash_table_insert (groups, row->group, group);
              g_ptr_array_add (order, group);
            }
          g_ptr_array_add (s == 0 ? group->before : group->after, row);
        }
    }
  for (guint i = 0; i < order->len; i++)
    match_group (rows, order->pdata[i]);
  g_ptr_array_sort (rows, compare_rows);
  return rows;
}

/* ---- building ----------------------------------------------------------- */

CowscopeSessionDiff *
cowscope_session_diff_build (CowscopeSessionTables *before, CowscopeSessionTables *after,
                             GError **error)
{
  g_autoptr (CowscopeSessionDiff) diff = g_new0 (CowscopeSessionDiff, 1);
  CowscopeSessionTables *tables[2] = { before, after };

  g_return_val_if_fail (before != NULL && after != NULL, NULL);

  for (int s = 0; s < 2; s++)
    {
      diff->reports[s] = cowscope_report_build (tables[s], 0, error);
      if (diff->reports[s] == NULL)
        return NULL;
      diff->paths[s] = g_strdup (cowscope_session_tables_get_path (tables[s]));
      diff->schema_versions[s] = cowscope_session_tables_get_schema_version (tables[s]);
      diff->finalized[s] = cowscope_session_tables_is_finalized (tables[s]);
    }
  for (int d = 0; d < COWSCOPE_DIFF_N_DIMENSIONS; d++)
    {
      Side sides[2];
      gboolean ok = TRUE;

      side_init (&sides[0]);
      side_init (&sides[1]);
      for (int s = 0; s < 2 && ok; s++)
        ok = collect_dimension (tables[s], d, &sides[s], error);
      if (ok)
        diff->rows[d] = match_sides (&sides[0], &sides[1]);
      side_clear (&sides[0]);
      side_clear (&sides[1]);
      if (!ok)
        return NULL;
    }
  for (guint i = 0; i < diff->rows[COWSCOPE_DIFF_WARNING]->len; i++)
    {
      const CowscopeDiffRow *row = diff->rows[COWSCOPE_DIFF_WARNING]->pdata[i];
      gint64 change = row->after[COWSCOPE_DIFF_WARNINGS] - row->before[COWSCOPE_DIFF_WARNINGS];
      if (change > 0)
        diff->new_warnings += change;
      else
        diff->gone_warnings -= change;
    }
  return g_steal_pointer (&diff);
}

void
cowscope_session_diff_free (CowscopeSessionDiff *diff)
{
  if (diff == NULL)
    return;
  for (int s = 0; s < 2; s++)
    {
      g_clear_pointer (&diff->reports[s], json_object_unref);
      g_free (diff->paths[s]);
    }
  for (int d = 0; d < COWSCOPE_DIFF_N_DIMENSIONS; d++)
    g_clear_pointer (&diff->rows[d], g_ptr_array_unref);
  g_free (diff);
}

GPtrArray *
cowscope_session_diff_rows (CowscopeSessionDiff *diff, CowscopeDiffDimension dimension)
{
  g_return_val_if_fail (diff != NULL && dimension < COWSCOPE_DIFF_N_DIMENSIONS, NULL);
  return diff->rows[dimension];
}

JsonObject *
cowscope_session_diff_report (CowscopeSessionDiff *diff, gboolean after)
{
  g_return_val_if_fail (diff != NULL, NULL);
  return diff->reports[after ? 1 : 0];
}

/* ---- metrics ------------------------------------------------------------ */

static gint64
report_metric (CowscopeSessionDiff *diff, int side, const char *name)
{
  JsonObject *metrics = json_object_get_object_member (diff->reports[side], "metrics");
  return json_object_has_member (metrics, name) ? json_object_get_int_member (metrics, name) : 0;
}

static gboolean
total_changed (CowscopeSessionDiff *diff, const char *name)
{
  return report_metric (diff, 0, name) != report_metric (diff, 1, name);
}

gboolean
cowscope_session_diff_is_empty (CowscopeSessionDiff *diff)
{
  g_return_val_if_fail (diff != NULL, FALSE);
  for (int d = 0; d < COWSCOPE_DIFF_N_DIMENSIONS; d++)
    if (diff->rows[d]->len > 0)
      return FALSE;
  for (gsize i = 0; compared_metrics[i] != NULL; i++)
    if (total_changed (diff, compared_metrics[i]))
      return FALSE;
  return TRUE;
}

const char *const *
cowscope_session_diff_metrics (void)
{
  static const char *const *names;

  if (g_once_init_enter (&names))
    {
      const char *const *report = cowscope_report_metrics ();
      GPtrArray *all = g_ptr_array_new ();
      for (gsize i = 0; report[i] != NULL; i++)
        for (gsize j = 0; metric_fields[j] != NULL; j++)
          g_ptr_array_add (all, g_strconcat (report[i], ".", metric_fields[j], NULL));
      g_ptr_array_add (all, (gpointer) "new_warnings");
      g_ptr_array_add (all, (gpointer) "gone_warnings");
      g_ptr_array_add (all, NULL);
      /* Static for the life of the process, as the report's list is. */
      g_once_init_leave (&names, (const char *const *) g_ptr_array_free (all, FALSE));
    }
  return names;
}

gboolean
cowscope_session_diff_metric (CowscopeSessionDiff *diff, const char *name, gint64 *value,
                              gint64 *base)
{
  const char *dot;
  g_autofree char *metric = NULL;
  gboolean known = FALSE;
  gint64 before, after;

  g_return_val_if_fail (diff != NULL && name != NULL, FALSE);
  if (strcmp (name, "new_warnings") == 0 || strcmp (name, "gone_warnings") == 0)
    {
      *value = name[0] == 'n' ? diff->new_warnings : diff->gone_warnings;
      *base = report_metric (diff, 0, "violations");
      return TRUE;
    }
  dot = strrchr (name, '.');
  if (dot == NULL)
    return FALSE;
  metric = g_strndup (name, dot - name);
  for (const char *const *m = cowscope_report_metrics (); *m != NULL && !known; m++)
    known = strcmp (*m, metric) == 0;
  if (!known)
    return FALSE;
  before = report_metric (diff, 0, metric);
  after = report_metric (diff, 1, metric);
  *base = before;
  if (strcmp (dot + 1, "before") == 0)
    *value = before;
  else if (strcmp (dot + 1, "after") == 0)
    *value = after;
  else if (strcmp (dot + 1, "change") == 0)
    *value = after - before;
  else if (strcmp (dot + 1, "increase") == 0)
    *value = MAX (after - before, 0);
  else if (strcmp (dot + 1, "decrease") == 0)
    *value = MAX (before - after, 0);
  else
    return FALSE;
  return TRUE;
}

/* ---- JSON --------------------------------------------------------------- */

/* Member @name of @object as text; NULL when absent, null or not text. */
static const char *
text_member (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;
  return node != NULL && JSON_NODE_HOLDS_VALUE (node)
             && json_node_get_value_type (node) == G_TYPE_STRING
           ? json_node_get_string (node) : NULL;
}

/* Member @name of @object as an integer; 0 when absent or null. */
static gint64
int_member (JsonObject *object, const char *name)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, name) : NULL;
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) ? json_node_get_int (node) : 0;
}

static void
add_text (JsonBuilder *b, const char *member, const char *value)
{
  json_builder_set_member_name (b, member);
  if (value == NULL)
    json_builder_add_null_value (b);
  else
    {
      g_autofree char *valid = g_utf8_make_valid (value, -1);
      json_builder_add_string_value (b, valid);
    }
}

static void
add_int (JsonBuilder *b, const char *member, gint64 value)
{
  json_builder_set_member_name (b, member);
  json_builder_add_int_value (b, value);
}

/* @value, or null when 0 (an unknown line). */
static void
add_line (JsonBuilder *b, const char *member, gint64 value)
{
  json_builder_set_member_name (b, member);
  if (value > 0)
    json_builder_add_int_value (b, value);
  else
    json_builder_add_null_value (b);
}

/* @change as a percentage of @before, or null when @before is 0. */
static void
add_percent (JsonBuilder *b, gint64 before, gint64 change)
{
  json_builder_set_member_name (b, "percent");
  if (before != 0)
    json_builder_add_double_value (b, round (change * 1000.0 / (double) before) / 10.0);
  else
    json_builder_add_null_value (b);
}

static void
add_side (JsonBuilder *b, const char *member, CowscopeSessionDiff *diff, int s)
{
  JsonObject *session = json_object_get_object_member (diff->reports[s], "session");
  JsonObject *target = json_object_get_object_member (diff->reports[s], "target");

  json_builder_set_member_name (b, member);
  json_builder_begin_object (b);
  add_text (b, "path", diff->paths[s]);
  add_int (b, "schema_version", diff->schema_versions[s]);
  json_builder_set_member_name (b, "finalized");
  json_builder_add_boolean_value (b, diff->finalized[s]);
  add_text (b, "created_utc", text_member (session, "created_utc"));
  add_text (b, "command", text_member (target, "command"));
  json_builder_end_object (b);
}

static void
add_figures (JsonBuilder *b, const char *member, CowscopeDiffDimension d, const gint64 *values)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_object (b);
  for (int f = 0; f < COWSCOPE_DIFF_N_FIGURES; f++)
    if (dimension_figures[d] & (1u << f))
      add_int (b, figure_names[f], values[f]);
  json_builder_end_object (b);
}

static const char *
status_name (CowscopeDiffStatus status)
{
  switch (status)
    {
    case COWSCOPE_DIFF_APPEARED: return "new";
    case COWSCOPE_DIFF_GONE: return "gone";
    default: return "changed";
    }
}

static void
add_rows (JsonBuilder *b, CowscopeSessionDiff *diff, CowscopeDiffDimension d, guint top)
{
  GPtrArray *rows = diff->rows[d];
  gboolean sites = d != COWSCOPE_DIFF_OPERATION && d != COWSCOPE_DIFF_RANGE;

  json_builder_set_member_name (b, dimension_names[d]);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "rows");
  json_builder_begin_array (b);
  for (guint i = 0; i < rows->len && i < top; i++)
    {
      const CowscopeDiffRow *row = rows->pdata[i];
      gint64 change[COWSCOPE_DIFF_N_FIGURES];

      for (int f = 0; f < COWSCOPE_DIFF_N_FIGURES; f++)
        change[f] = row->after[f] - row->before[f];
      json_builder_begin_object (b);
      add_text (b, "status", status_name (row->status));
      add_text (b, d == COWSCOPE_DIFF_WARNING ? "message"
                   : d == COWSCOPE_DIFF_OPERATION ? "operation"
                   : d == COWSCOPE_DIFF_RANGE ? "range"
                   : d == COWSCOPE_DIFF_EAGER_FALLBACK ? "label" : "call_site",
                row->label);
      if (sites)
        {
          if (d != COWSCOPE_DIFF_CALL_SITE)
            add_text (b, "call_site", row->call_site);
          add_text (b, "function", row->function);
          add_text (b, "file", row->file);
          add_line (b, "before_line", row->before_line);
          add_line (b, "after_line", row->after_line);
        }
      add_figures (b, "before", d, row->before);
      add_figures (b, "after", d, row->after);
      add_figures (b, "change", d, change);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  add_int (b, "more", rows->len > top ? rows->len - top : 0);
  json_builder_end_object (b);
}

JsonObject *
cowscope_session_diff_to_json (CowscopeSessionDiff *diff, guint top)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonNode) root = NULL;
  const char *const *report_metrics = cowscope_report_metrics ();
  const char *sides[2] = { "BEFORE", "AFTER" };

  g_return_val_if_fail (diff != NULL, NULL);

  json_builder_begin_object (b);
  add_text (b, "format", "cowscope-diff");
  add_int (b, "version", 1);
  add_side (b, "before", diff, 0);
  add_side (b, "after", diff, 1);

  json_builder_set_member_name (b, "notes");
  json_builder_begin_array (b);
  for (int s = 0; s < 2; s++)
    {
      JsonArray *warnings = json_object_get_array_member (diff->reports[s], "warnings");
      for (guint i = 0; i < json_array_get_length (warnings); i++)
        {
          g_autofree char *note = g_strdup_printf ("%s: %s", sides[s],
                                                   json_array_get_string_element (warnings, i));
          json_builder_add_string_value (b, note);
        }
    }
  if (diff->schema_versions[0] != diff->schema_versions[1])
    {
      g_autofree char *note = g_strdup_printf (MSG_SCHEMAS, diff->schema_versions[0],
                                               diff->schema_versions[1]);
      json_builder_add_string_value (b, note);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "unchanged");
  json_builder_add_boolean_value (b, cowscope_session_diff_is_empty (diff));

  json_builder_set_member_name (b, "totals");
  json_builder_begin_array (b);
  for (gsize i = 0; compared_metrics[i] != NULL; i++)
    {
      gint64 before = report_metric (diff, 0, compared_metrics[i]);
      gint64 after = report_metric (diff, 1, compared_metrics[i]);
      if (before == after)
        continue;
      json_builder_begin_object (b);
      add_text (b, "metric", compared_metrics[i]);
      add_int (b, "before", before);
      add_int (b, "after", after);
      add_int (b, "change", after - before);
      add_percent (b, before, after - before);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "metrics");
  json_builder_begin_object (b);
  for (gsize i = 0; report_metrics[i] != NULL; i++)
    {
      json_builder_set_member_name (b, report_metrics[i]);
      json_builder_begin_object (b);
      for (gsize j = 0; metric_fields[j] != NULL; j++)
        {
          g_autofree char *name = g_strconcat (report_metrics[i], ".", metric_fields[j], NULL);
          gint64 value = 0, base = 0;
          cowscope_session_diff_metric (diff, name, &value, &base);
          add_int (b, metric_fields[j], value);
        }
      json_builder_end_object (b);
    }
  add_int (b, "new_warnings", diff->new_warnings);
  add_int (b, "gone_warnings", diff->gone_warnings);
  json_builder_end_object (b);

  for (int d = 0; d < COWSCOPE_DIFF_N_DIMENSIONS; d++)
    add_rows (b, diff, d, top);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  return json_object_ref (json_node_get_object (root));
}

/* ---- text --------------------------------------------------------------- */

/* "+4.0 MiB", "-1", "0". */
static char *
signed_value (gint64 value, gboolean bytes)
{
  g_autofree char *text = NULL;

  if (!bytes)
    return g_strdup_printf ("%+" G_GINT64_FORMAT, value);
  text = cowscope_report_format_bytes (value);
  return value > 0 ? g_strconcat ("+", text, NULL) : g_steal_pointer (&text);
}

static char *
plain_value (gint64 value, gboolean bytes)
{
  return bytes ? cowscope_report_format_bytes (value)
               : g_strdup_printf ("%" G_GINT64_FORMAT, value);
}

/* The totals a reader sees first, and how each is named in text. */
static const struct {
  const char *metric, *text;
  gboolean bytes;
} total_texts[] = {
  { "copies", "copies", FALSE },
  { "copied_bytes", "bytes copied", TRUE },
  { "steals", "steals", FALSE },
  { "stolen_bytes", "bytes stolen", TRUE },
  { "lazy_clones", "lazy clones", FALSE },
  { "shared_bytes", "bytes shared lazily", TRUE },
  { "saved_bytes", "bytes saved", TRUE },
  { "eager_fallbacks", "eager fallbacks", FALSE },
  { "eager_bytes", "bytes copied eagerly", TRUE },
  { "violations", "warnings", FALSE },
  { "failed_materializations", "failed materializations", FALSE },
  { "discarded_copies", "copies thrown away", FALSE },
  { "cuda_copies", "CUDA copies", FALSE },
  { "cuda_copy_bytes", "CUDA bytes copied", TRUE },
};

static const struct {
  const char *count, *bytes, *text;
} figure_pairs[] = {
  { "copies", "copied_bytes", "copies" },
  { "steals", "stolen_bytes", "steals" },
  { "lazy_clones", "shared_bytes", "lazy clones" },
  { "eager_fallbacks", "eager_bytes", "eager fallbacks" },
  { "warnings", NULL, "warnings" },
};

static void
append_totals (GString *out, JsonObject *json)
{
  JsonArray *totals = json_object_get_array_member (json, "totals");

  if (json_array_get_length (totals) == 0)
    return;
  g_string_append_printf (out, "\n%-26s %14s %14s %14s\n", "Totals", "before", "after", "change");
  for (guint i = 0; i < json_array_get_length (totals); i++)
    {
      JsonObject *t = json_array_get_object_element (totals, i);
      const char *metric = text_member (t, "metric");
      const char *name = metric;
      gboolean bytes = FALSE;
      g_autofree char *before = NULL, *after = NULL, *change = NULL, *percent = NULL;

      for (gsize k = 0; k < G_N_ELEMENTS (total_texts); k++)
        if (g_strcmp0 (total_texts[k].metric, metric) == 0)
          {
            name = total_texts[k].text;
            bytes = total_texts[k].bytes;
          }
      before = plain_value (int_member (t, "before"), bytes);
      after = plain_value (int_member (t, "after"), bytes);
      change = signed_value (int_member (t, "change"), bytes);
      if (json_object_get_member (t, "percent") != NULL
          && !json_object_get_null_member (t, "percent"))
        percent = g_strdup_printf (" (%+.1f%%)", json_object_get_double_member (t, "percent"));
      g_string_append_printf (out, "  %-24s %14s %14s %14s%s\n", name, before, after, change,
                              percent != NULL ? percent : "");
    }
}

/* "copies 2 → 1 (−4.0 MiB: 8.0 MiB → 4.0 MiB), steals 0 → 1 (...)". */
static char *
describe_figures (JsonObject *row)
{
  JsonObject *before = json_object_get_object_member (row, "before");
  JsonObject *after = json_object_get_object_member (row, "after");
  GString *text = g_string_new (NULL);

  for (gsize k = 0; k < G_N_ELEMENTS (figure_pairs); k++)
    {
      gint64 b, a, bb = 0, ab = 0;
      if (!json_object_has_member (before, figure_pairs[k].count))
        continue;
      b = int_member (before, figure_pairs[k].count);
      a = int_member (after, figure_pairs[k].count);
      if (figure_pairs[k].bytes != NULL)
        {
          bb = int_member (before, figure_pairs[k].bytes);
          ab = int_member (after, figure_pairs[k].bytes);
        }
      if (a == b && ab == bb)
        continue;
      g_string_append_printf (text, "%s%s %" G_GINT64_FORMAT " → %" G_GINT64_FORMAT,
                              text->len > 0 ? ", " : "", figure_pairs[k].text, b, a);
      if (figure_pairs[k].bytes != NULL && (ab != 0 || bb != 0))
        {
          g_autofree char *change = signed_value (ab - bb, TRUE);
          g_autofree char *from = cowscope_report_format_bytes (bb);
          g_autofree char *to = cowscope_report_format_bytes (ab);
          g_string_append_printf (text, " (%s: %s → %s)", change, from, to);
        }
    }
  return g_string_free (text, FALSE);
}

static void
append_rows (GString *out, JsonObject *json, CowscopeDiffDimension d, const char *title)
{
  JsonObject *section = json_object_get_object_member (json, dimension_names[d]);
  JsonArray *rows = json_object_get_array_member (section, "rows");
  const char *key = d == COWSCOPE_DIFF_WARNING ? "message"
                    : d == COWSCOPE_DIFF_OPERATION ? "operation"
                    : d == COWSCOPE_DIFF_RANGE ? "range"
                    : d == COWSCOPE_DIFF_EAGER_FALLBACK ? "label" : "call_site";

  if (json_array_get_length (rows) == 0)
    return;
  g_string_append_printf (out, "\n%s\n", title);
  for (guint i = 0; i < json_array_get_length (rows); i++)
    {
      JsonObject *row = json_array_get_object_element (rows, i);
      g_autofree char *figures = describe_figures (row);
      gint64 before_line = int_member (row, "before_line");
      gint64 after_line = int_member (row, "after_line");

      g_string_append_printf (out, "  %-7s %s", text_member (row, "status"),
                              text_member (row, key) != NULL ? text_member (row, key) : "?");
      if (d == COWSCOPE_DIFF_WARNING && text_member (row, "call_site") != NULL)
        g_string_append_printf (out, " at %s", text_member (row, "call_site"));
      if (before_line > 0 && after_line > 0 && before_line != after_line)
        g_string_append_printf (out, " (was line %" G_GINT64_FORMAT ")", before_line);
      g_string_append_printf (out, ": %s\n", figures);
    }
  if (int_member (section, "more") > 0)
    g_string_append_printf (out, "  … and %" G_GINT64_FORMAT " more (--top)\n",
                            int_member (section, "more"));
}

static void
append_side (GString *out, const char *name, JsonObject *side)
{
  const char *created = text_member (side, "created_utc");
  const char *command = text_member (side, "command");

  g_string_append_printf (out, "%-7s %s (schema %" G_GINT64_FORMAT, name,
                          text_member (side, "path"), int_member (side, "schema_version"));
  if (created != NULL)
    g_string_append_printf (out, ", recorded %s", created);
  if (command != NULL)
    g_string_append_printf (out, ": %s", command);
  g_string_append (out, ")\n");
}

char *
cowscope_session_diff_format_text (JsonObject *json)
{
  GString *out = g_string_new (NULL);
  JsonArray *notes = json_object_get_array_member (json, "notes");
  JsonObject *metrics = json_object_get_object_member (json, "metrics");

  g_return_val_if_fail (json != NULL, NULL);

  for (guint i = 0; i < json_array_get_length (notes); i++)
    g_string_append_printf (out, "!! %s\n", json_array_get_string_element (notes, i));
  if (json_array_get_length (notes) > 0)
    g_string_append_c (out, '\n');
  append_side (out, "BEFORE", json_object_get_object_member (json, "before"));
  append_side (out, "AFTER", json_object_get_object_member (json, "after"));
  if (json_object_get_boolean_member (json, "unchanged"))
    {
      g_string_append_c (out, '\n');
      g_string_append (out, MSG_NO_CHANGE);
      return g_string_free (out, FALSE);
    }
  append_totals (out, json);
  append_rows (out, json, COWSCOPE_DIFF_CALL_SITE, "Call sites, largest change first");
  append_rows (out, json, COWSCOPE_DIFF_OPERATION, "Operations");
  append_rows (out, json, COWSCOPE_DIFF_RANGE, "Ranges");
  append_rows (out, json, COWSCOPE_DIFF_EAGER_FALLBACK, "Eager fallbacks");
  append_rows (out, json, COWSCOPE_DIFF_WARNING, "Warnings");
  if (int_member (metrics, "new_warnings") > 0 || int_member (metrics, "gone_warnings") > 0)
    g_string_append_printf (out, "  %" G_GINT64_FORMAT " new, %" G_GINT64_FORMAT " gone\n",
                            int_member (metrics, "new_warnings"),
                            int_member (metrics, "gone_warnings"));
  return g_string_free (out, FALSE);
}
