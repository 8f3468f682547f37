/* cowscope-comparison.c — two sessions compared, for list views (see
 * header). */
#include "cowscope-comparison.h"

#include <glib/gi18n-lib.h>
#include <json-glib/json-glib.h>

#include "cowscope-session-diff.h"
#include "cowscope-session-tables.h"

/* ---- rows --------------------------------------------------------------- */

struct _CowscopeComparisonRow {
  GObject parent_instance;
  char *label;
  const char *status; /* static */
  gint64 before, after;
  gint64 before_count, after_count;
  gboolean bytes;
  gboolean more_is_better;
};

G_DEFINE_FINAL_TYPE (CowscopeComparisonRow, cowscope_comparison_row, G_TYPE_OBJECT)

static void
cowscope_comparison_row_finalize (GObject *object)
{
  g_free (COWSCOPE_COMPARISON_ROW (object)->label);
  G_OBJECT_CLASS (cowscope_comparison_row_parent_class)->finalize (object);
}

static void
cowscope_comparison_row_class_init (CowscopeComparisonRowClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = cowscope_comparison_row_finalize;
}

static void
cowscope_comparison_row_init (CowscopeComparisonRow *self)
{
  (void) self;
}

static CowscopeComparisonRow *
row_new (const char *label, const char *status, gint64 before, gint64 after, gboolean bytes)
{
  CowscopeComparisonRow *row = g_object_new (COWSCOPE_TYPE_COMPARISON_ROW, NULL);
  row->label = g_strdup (label);
  row->status = status;
  row->before = before;
  row->after = after;
  row->bytes = bytes;
  return row;
}

const char *
cowscope_comparison_row_get_label (CowscopeComparisonRow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON_ROW (self), NULL);
  return self->label;
}

const char *
cowscope_comparison_row_get_status (CowscopeComparisonRow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON_ROW (self), NULL);
  return self->status;
}

gint64
cowscope_comparison_row_get_before (CowscopeComparisonRow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON_ROW (self), 0);
  return self->before;
}

gint64
cowscope_comparison_row_get_after (CowscopeComparisonRow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON_ROW (self), 0);
  return self->after;
}

gint64
cowscope_comparison_row_get_change (CowscopeComparisonRow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON_ROW (self), 0);
  return self->after - self->before;
}

gboolean
cowscope_comparison_row_is_bytes (CowscopeComparisonRow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON_ROW (self), FALSE);
  return self->bytes;
}

gboolean
cowscope_comparison_row_more_is_better (CowscopeComparisonRow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON_ROW (self), FALSE);
  return self->more_is_better;
}

gint64
cowscope_comparison_row_get_before_count (CowscopeComparisonRow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON_ROW (self), 0);
  return self->before_count;
}

gint64
cowscope_comparison_row_get_after_count (CowscopeComparisonRow *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON_ROW (self), 0);
  return self->after_count;
}

/* ---- the comparison ----------------------------------------------------- */

struct _CowscopeComparison {
  GObject parent_instance;
  char *before_path, *after_path;
  GListStore *totals, *call_sites;
  gboolean unchanged;
};

G_DEFINE_FINAL_TYPE (CowscopeComparison, cowscope_comparison, G_TYPE_OBJECT)

static void
cowscope_comparison_finalize (GObject *object)
{
  CowscopeComparison *self = COWSCOPE_COMPARISON (object);
  g_free (self->before_path);
  g_free (self->after_path);
  g_clear_object (&self->totals);
  g_clear_object (&self->call_sites);
  G_OBJECT_CLASS (cowscope_comparison_parent_class)->finalize (object);
}

static void
cowscope_comparison_class_init (CowscopeComparisonClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = cowscope_comparison_finalize;
}

static void
cowscope_comparison_init (CowscopeComparison *self)
{
  self->totals = g_list_store_new (COWSCOPE_TYPE_COMPARISON_ROW);
  self->call_sites = g_list_store_new (COWSCOPE_TYPE_COMPARISON_ROW);
}

/* The summary's rows: the report metric and its name on screen. */
static const struct {
  const char *metric;
  const char *label;
  gboolean bytes, more_is_better;
} total_rows[] = {
  { "copies", N_("Copies"), FALSE, FALSE },
  { "copied_bytes", N_("Bytes copied"), TRUE, FALSE },
  { "steals", N_("Steals"), FALSE, FALSE },
  { "stolen_bytes", N_("Bytes stolen"), TRUE, FALSE },
  { "lazy_clones", N_("Lazy clones"), FALSE, FALSE },
  { "shared_bytes", N_("Bytes shared lazily"), TRUE, FALSE },
  { "saved_bytes", N_("Bytes saved"), TRUE, TRUE },
  { "eager_fallbacks", N_("Eager fallbacks"), FALSE, FALSE },
  { "violations", N_("Simulate-mode warnings"), FALSE, FALSE },
};

static gint64
metric_of (JsonObject *report, const char *name)
{
  JsonObject *metrics = json_object_get_object_member (report, "metrics");
  return metrics != NULL && json_object_has_member (metrics, name)
           ? json_object_get_int_member (metrics, name) : 0;
}

static const char *
status_text (CowscopeDiffStatus status)
{
  switch (status)
    {
    case COWSCOPE_DIFF_APPEARED: return "new";
    case COWSCOPE_DIFF_GONE: return "gone";
    default: return "changed";
    }
}

CowscopeComparison *
cowscope_comparison_load (const char *before, const char *after, GCancellable *cancellable,
                          GError **error)
{
  g_autoptr (CowscopeSessionTables) before_tables = NULL;
  g_autoptr (CowscopeSessionTables) after_tables = NULL;
  g_autoptr (CowscopeSessionDiff) diff = NULL;
  g_autoptr (CowscopeComparison) self = NULL;
  GPtrArray *rows;

  g_return_val_if_fail (before != NULL && after != NULL, NULL);

  before_tables = cowscope_session_tables_open (before, error);
  if (before_tables == NULL || g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  after_tables = cowscope_session_tables_open (after, error);
  if (after_tables == NULL || g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  diff = cowscope_session_diff_build (before_tables, after_tables, error);
  if (diff == NULL)
    return NULL;

  self = g_object_new (COWSCOPE_TYPE_COMPARISON, NULL);
  self->before_path = g_strdup (before);
  self->after_path = g_strdup (after);
  self->unchanged = cowscope_session_diff_is_empty (diff);
  for (gsize i = 0; i < G_N_ELEMENTS (total_rows); i++)
    {
      g_autoptr (CowscopeComparisonRow) row =
        row_new (_(total_rows[i].label), NULL,
                 metric_of (cowscope_session_diff_report (diff, FALSE), total_rows[i].metric),
                 metric_of (cowscope_session_diff_report (diff, TRUE), total_rows[i].metric),
                 total_rows[i].bytes);
      row->more_is_better = total_rows[i].more_is_better;
      g_list_store_append (self->totals, row);
    }
  rows = cowscope_session_diff_rows (diff, COWSCOPE_DIFF_CALL_SITE);
  for (guint i = 0; i < rows->len; i++)
    {
      const CowscopeDiffRow *d = rows->pdata[i];
      g_autoptr (CowscopeComparisonRow) row = NULL;
      gint64 before_bytes = d->before[COWSCOPE_DIFF_COPIED_BYTES]
                            + d->before[COWSCOPE_DIFF_STOLEN_BYTES];
      gint64 after_bytes = d->after[COWSCOPE_DIFF_COPIED_BYTES]
                           + d->after[COWSCOPE_DIFF_STOLEN_BYTES];

      /* The copy call sites: a row whose lazy clones alone changed is
       * the diff's, not the copy tree's. */
      if (before_bytes == after_bytes
          && d->before[COWSCOPE_DIFF_COPIES] == d->after[COWSCOPE_DIFF_COPIES]
          && d->before[COWSCOPE_DIFF_STEALS] == d->after[COWSCOPE_DIFF_STEALS])
        continue;
      row = row_new (d->label, status_text (d->status), before_bytes, after_bytes, TRUE);
      row->before_count = d->before[COWSCOPE_DIFF_COPIES] + d->before[COWSCOPE_DIFF_STEALS];
      row->after_count = d->after[COWSCOPE_DIFF_COPIES] + d->after[COWSCOPE_DIFF_STEALS];
      g_list_store_append (self->call_sites, row);
    }
  return g_steal_pointer (&self);
}

typedef struct {
  char *before, *after;
} LoadArgs;

static void
load_args_free (LoadArgs *args)
{
  g_free (args->before);
  g_free (args->after);
  g_free (args);
}

static void
load_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  LoadArgs *args = data;
  GError *error = NULL;

  (void) source;
  CowscopeComparison *comparison =
    cowscope_comparison_load (args->before, args->after, cancellable, &error);

  if (comparison == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, comparison, g_object_unref);
}

void
cowscope_comparison_load_async (const char *before, const char *after, GCancellable *cancellable,
                                GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  LoadArgs *args = g_new0 (LoadArgs, 1);

  args->before = g_strdup (before);
  args->after = g_strdup (after);
  g_task_set_source_tag (task, cowscope_comparison_load_async);
  g_task_set_task_data (task, args, (GDestroyNotify) load_args_free);
  g_task_run_in_thread (task, load_thread);
}

CowscopeComparison *
cowscope_comparison_load_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

const char *
cowscope_comparison_get_before_path (CowscopeComparison *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON (self), NULL);
  return self->before_path;
}

const char *
cowscope_comparison_get_after_path (CowscopeComparison *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON (self), NULL);
  return self->after_path;
}

GListModel *
cowscope_comparison_get_totals (CowscopeComparison *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON (self), NULL);
  return G_LIST_MODEL (self->totals);
}

GListModel *
cowscope_comparison_get_call_sites (CowscopeComparison *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON (self), NULL);
  return G_LIST_MODEL (self->call_sites);
}

gboolean
cowscope_comparison_is_unchanged (CowscopeComparison *self)
{
  g_return_val_if_fail (COWSCOPE_IS_COMPARISON (self), FALSE);
  return self->unchanged;
}
