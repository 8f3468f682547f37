/* cowscope-lane-filter.c — see cowscope-lane-filter.h. */
#include "cowscope-lane-filter.h"

#include <string.h>

struct _CowscopeLaneFilter {
  GObject parent_instance;
  GHashTable *pinned;     /* lane keys */
  GHashTable *hidden;     /* lane keys */
  GHashTable *collapsed;  /* pids */
  char *text;             /* casefolded; NULL: none */
  gboolean show_counters;
};

enum { CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE (CowscopeLaneFilter, cowscope_lane_filter, G_TYPE_OBJECT)

static void
cowscope_lane_filter_finalize (GObject *object)
{
  CowscopeLaneFilter *self = COWSCOPE_LANE_FILTER (object);
  g_hash_table_unref (self->pinned);
  g_hash_table_unref (self->hidden);
  g_hash_table_unref (self->collapsed);
  g_free (self->text);
  G_OBJECT_CLASS (cowscope_lane_filter_parent_class)->finalize (object);
}

static void
cowscope_lane_filter_class_init (CowscopeLaneFilterClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = cowscope_lane_filter_finalize;
  /**
   * CowscopeLaneFilter::changed:
   *
   * A choice changed: the lanes to show may differ.
   */
  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                   NULL, NULL, NULL, G_TYPE_NONE, 0);
}

static void
cowscope_lane_filter_init (CowscopeLaneFilter *self)
{
  self->pinned = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->hidden = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  self->collapsed = g_hash_table_new (g_direct_hash, g_direct_equal);
  self->show_counters = TRUE;
}

CowscopeLaneFilter *
cowscope_lane_filter_new (void)
{
  return g_object_new (COWSCOPE_TYPE_LANE_FILTER, NULL);
}

char *
cowscope_lane_key (CowscopeTimelineLane *lane)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LANE (lane), NULL);
  guint32 pid = cowscope_timeline_lane_get_pid (lane);
  gint64 tid = cowscope_timeline_lane_get_tid (lane);
  switch (cowscope_timeline_lane_get_kind (lane))
    {
    case COWSCOPE_LANE_THREAD:
      return g_strdup_printf ("thread/%u/%" G_GINT64_FORMAT, pid, tid);
    case COWSCOPE_LANE_CUDA_STREAM:
      return g_strdup_printf ("cuda/%u/%" G_GINT64_FORMAT "/%" G_GINT64_FORMAT, pid,
                              cowscope_timeline_lane_get_device (lane), tid);
    case COWSCOPE_LANE_PROCESS:
      return g_strdup_printf ("process/%u", pid);
    case COWSCOPE_LANE_COUNTER:
    default:
      return g_strdup_printf ("counter/%d", (int) cowscope_timeline_lane_get_counter (lane));
    }
}

/* Adds or removes @lane's key in @set; TRUE when that changed it. */
static gboolean
set_member (GHashTable *set, CowscopeTimelineLane *lane, gboolean member)
{
  char *key = cowscope_lane_key (lane);
  if (member)
    return g_hash_table_add (set, key);
  gboolean removed = g_hash_table_remove (set, key);
  g_free (key);
  return removed;
}

static gboolean
is_member (GHashTable *set, CowscopeTimelineLane *lane)
{
  g_autofree char *key = cowscope_lane_key (lane);
  return g_hash_table_contains (set, key);
}

static void
changed (CowscopeLaneFilter *self)
{
  g_signal_emit (self, signals[CHANGED], 0);
}

gboolean
cowscope_lane_filter_get_pinned (CowscopeLaneFilter *self, CowscopeTimelineLane *lane)
{
  g_return_val_if_fail (COWSCOPE_IS_LANE_FILTER (self), FALSE);
  return is_member (self->pinned, lane);
}

void
cowscope_lane_filter_set_pinned (CowscopeLaneFilter *self, CowscopeTimelineLane *lane,
                                 gboolean pinned)
{
  g_return_if_fail (COWSCOPE_IS_LANE_FILTER (self));
  if (set_member (self->pinned, lane, pinned))
    changed (self);
}

gboolean
cowscope_lane_filter_get_hidden (CowscopeLaneFilter *self, CowscopeTimelineLane *lane)
{
  g_return_val_if_fail (COWSCOPE_IS_LANE_FILTER (self), FALSE);
  return is_member (self->hidden, lane);
}

void
cowscope_lane_filter_set_hidden (CowscopeLaneFilter *self, CowscopeTimelineLane *lane,
                                 gboolean hidden)
{
  g_return_if_fail (COWSCOPE_IS_LANE_FILTER (self));
  if (set_member (self->hidden, lane, hidden))
    changed (self);
}

gboolean
cowscope_lane_filter_get_collapsed (CowscopeLaneFilter *self, guint32 pid)
{
  g_return_val_if_fail (COWSCOPE_IS_LANE_FILTER (self), FALSE);
  return g_hash_table_contains (self->collapsed, GUINT_TO_POINTER (pid));
}

void
cowscope_lane_filter_set_collapsed (CowscopeLaneFilter *self, guint32 pid, gboolean collapsed)
{
  g_return_if_fail (COWSCOPE_IS_LANE_FILTER (self));
  gboolean did = collapsed ? g_hash_table_add (self->collapsed, GUINT_TO_POINTER (pid))
                           : g_hash_table_remove (self->collapsed, GUINT_TO_POINTER (pid));
  if (did)
    changed (self);
}

const char *
cowscope_lane_filter_get_text (CowscopeLaneFilter *self)
{
  g_return_val_if_fail (COWSCOPE_IS_LANE_FILTER (self), NULL);
  return self->text != NULL ? self->text : "";
}

void
cowscope_lane_filter_set_text (CowscopeLaneFilter *self, const char *text)
{
  g_return_if_fail (COWSCOPE_IS_LANE_FILTER (self));
  g_autofree char *stripped = g_strstrip (g_strdup (text != NULL ? text : ""));
  char *folded = stripped[0] != '\0' ? g_utf8_casefold (stripped, -1) : NULL;
  if (g_strcmp0 (folded, self->text) == 0)
    {
      g_free (folded);
      return;
    }
  g_free (self->text);
  self->text = folded;
  changed (self);
}

gboolean
cowscope_lane_filter_get_show_counters (CowscopeLaneFilter *self)
{
  g_return_val_if_fail (COWSCOPE_IS_LANE_FILTER (self), TRUE);
  return self->show_counters;
}

void
cowscope_lane_filter_set_show_counters (CowscopeLaneFilter *self, gboolean show)
{
  g_return_if_fail (COWSCOPE_IS_LANE_FILTER (self));
  if (self->show_counters == !!show)
    return;
  self->show_counters = !!show;
  changed (self);
}

void
cowscope_lane_filter_reset (CowscopeLaneFilter *self)
{
  g_return_if_fail (COWSCOPE_IS_LANE_FILTER (self));
  if (g_hash_table_size (self->hidden) == 0 && g_hash_table_size (self->collapsed) == 0
      && self->text == NULL)
    return;
  g_hash_table_remove_all (self->hidden);
  g_hash_table_remove_all (self->collapsed);
  g_clear_pointer (&self->text, g_free);
  changed (self);
}

void
cowscope_lane_filter_show_only_process (CowscopeLaneFilter *self, GListModel *lanes, guint32 pid)
{
  g_return_if_fail (COWSCOPE_IS_LANE_FILTER (self));
  g_return_if_fail (G_IS_LIST_MODEL (lanes));
  g_hash_table_remove_all (self->hidden);
  g_hash_table_remove_all (self->collapsed);
  g_clear_pointer (&self->text, g_free);
  for (guint i = 0; i < g_list_model_get_n_items (lanes); i++)
    {
      g_autoptr (CowscopeTimelineLane) lane = g_list_model_get_item (lanes, i);
      if (cowscope_timeline_lane_get_kind (lane) != COWSCOPE_LANE_COUNTER
          && cowscope_timeline_lane_get_pid (lane) != pid)
        set_member (self->hidden, lane, TRUE);
    }
  changed (self);
}

/* The program of process @pid of @document (its exe's base name), or
 * NULL. */
static char *
program_of (CowscopeSessionDocument *document, guint32 pid)
{
  guint n = cowscope_session_document_get_n_processes (document);
  for (guint i = 0; i < n; i++)
    {
      const CowscopeProcessInfo *p = cowscope_session_document_get_process (document, i);
      if (p->pid == pid && p->exe != NULL)
        return g_path_get_basename (p->exe);
    }
  return NULL;
}

gboolean
cowscope_lane_filter_matches_text (CowscopeLaneFilter *self, CowscopeSessionDocument *document,
                                   CowscopeTimelineLane *lane)
{
  g_return_val_if_fail (COWSCOPE_IS_LANE_FILTER (self), FALSE);
  g_return_val_if_fail (COWSCOPE_IS_SESSION_DOCUMENT (document), FALSE);
  if (self->text == NULL)
    return TRUE;
  guint32 pid = cowscope_timeline_lane_get_pid (lane);
  g_autofree char *program = program_of (document, pid);
  g_autofree char *haystack = g_strdup_printf (
    "%s\n%u\n%" G_GINT64_FORMAT "\n%s", cowscope_timeline_lane_get_title (lane), pid,
    cowscope_timeline_lane_get_tid (lane), program != NULL ? program : "");
  g_autofree char *folded = g_utf8_casefold (haystack, -1);
  return strstr (folded, self->text) != NULL;
}

GPtrArray *
cowscope_lane_filter_arrange (CowscopeLaneFilter *self, CowscopeSessionDocument *document,
                              GPtrArray *ordered, guint *n_pinned)
{
  g_return_val_if_fail (COWSCOPE_IS_LANE_FILTER (self), NULL);
  g_return_val_if_fail (ordered != NULL, NULL);
  guint n = ordered->len;
  g_autofree gboolean *shown = g_new0 (gboolean, n);
  g_autoptr (GHashTable) headed = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr (GHashTable) matched = g_hash_table_new (g_direct_hash, g_direct_equal);
  for (guint i = 0; i < n; i++)
    if (cowscope_timeline_lane_get_kind (ordered->pdata[i]) == COWSCOPE_LANE_PROCESS)
      g_hash_table_add (headed, GUINT_TO_POINTER (cowscope_timeline_lane_get_pid (ordered->pdata[i])));

  /* Threads and streams first: a process lane shows when one of its
   * lanes matches the text. */
  for (guint i = 0; i < n; i++)
    {
      CowscopeTimelineLane *lane = ordered->pdata[i];
      CowscopeLaneKind kind = cowscope_timeline_lane_get_kind (lane);
      guint32 pid = cowscope_timeline_lane_get_pid (lane);
      if (kind != COWSCOPE_LANE_THREAD && kind != COWSCOPE_LANE_CUDA_STREAM)
        continue;
      if (is_member (self->hidden, lane)
          || !cowscope_lane_filter_matches_text (self, document, lane))
        continue;
      g_hash_table_add (matched, GUINT_TO_POINTER (pid));
      /* CUDA streams are listed apart from their process: never folded. */
      gboolean folded = kind == COWSCOPE_LANE_THREAD
                        && g_hash_table_contains (self->collapsed, GUINT_TO_POINTER (pid))
                        && g_hash_table_contains (headed, GUINT_TO_POINTER (pid));
      shown[i] = !folded || is_member (self->pinned, lane);
    }
  for (guint i = 0; i < n; i++)
    {
      CowscopeTimelineLane *lane = ordered->pdata[i];
      CowscopeLaneKind kind = cowscope_timeline_lane_get_kind (lane);
      if (is_member (self->hidden, lane))
        continue;
      if (kind == COWSCOPE_LANE_COUNTER)
        shown[i] = self->show_counters;
      else if (kind == COWSCOPE_LANE_PROCESS)
        shown[i] = cowscope_lane_filter_matches_text (self, document, lane)
                   || g_hash_table_contains (matched,
                                             GUINT_TO_POINTER (cowscope_timeline_lane_get_pid (lane)));
    }

  GPtrArray *out = g_ptr_array_new_full (n, g_object_unref);
  for (int pass = 0; pass < 2; pass++)
    for (guint i = 0; i < n; i++)
      if (shown[i] && is_member (self->pinned, ordered->pdata[i]) == (pass == 0))
        g_ptr_array_add (out, g_object_ref (ordered->pdata[i]));
  if (n_pinned != NULL)
    {
      *n_pinned = 0;
      for (guint i = 0; i < out->len && is_member (self->pinned, out->pdata[i]); i++)
        (*n_pinned)++;
    }
  return out;
}
