/* cowscope-timeline-lane.c — one timeline row over an in-memory index, or
 * over a schema-2 session's packed chunks read lazily. */
#include "cowscope-timeline-lane-private.h"

struct _CowscopeTimelineLane {
  GObject parent_instance;
  CowscopeLaneKind kind;
  CowscopeCounterKind counter;
  char *title;
  guint32 pid;
  gint64 tid;
  gint64 device;
  CowscopeLaneIndex *index;       /* thread and CUDA lanes (packed: spans only) */
  CowscopePackedLane *packed;     /* packed lanes: the instants */
  CowscopeCounterBins *series;  /* counter lanes */
};

enum {
  PROP_0,
  PROP_KIND,
  PROP_TITLE,
  PROP_PID,
  PROP_TID,
  PROP_N_EVENTS,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE (CowscopeTimelineLane, cowscope_timeline_lane, G_TYPE_OBJECT)

static void
cowscope_timeline_lane_finalize (GObject *object)
{
  CowscopeTimelineLane *self = COWSCOPE_TIMELINE_LANE (object);
  g_free (self->title);
  cowscope_lane_index_free (self->index);
  cowscope_packed_lane_free (self->packed);
  cowscope_counter_bins_free (self->series);
  G_OBJECT_CLASS (cowscope_timeline_lane_parent_class)->finalize (object);
}

static void
cowscope_timeline_lane_get_property (GObject *object, guint prop_id, GValue *value,
                                     GParamSpec *pspec)
{
  CowscopeTimelineLane *self = COWSCOPE_TIMELINE_LANE (object);
  switch (prop_id)
    {
    case PROP_KIND:
      g_value_set_int (value, self->kind);
      break;
    case PROP_TITLE:
      g_value_set_string (value, self->title);
      break;
    case PROP_PID:
      g_value_set_uint (value, self->pid);
      break;
    case PROP_TID:
      g_value_set_int64 (value, self->tid);
      break;
    case PROP_N_EVENTS:
      g_value_set_uint64 (value, cowscope_timeline_lane_get_n_events (self));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_timeline_lane_class_init (CowscopeTimelineLaneClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->finalize = cowscope_timeline_lane_finalize;
  object_class->get_property = cowscope_timeline_lane_get_property;

  properties[PROP_KIND] = g_param_spec_int ("kind", NULL, NULL, 0, COWSCOPE_LANE_PROCESS, 0,
                                            G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_TITLE] = g_param_spec_string ("title", NULL, NULL, NULL,
                                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_PID] = g_param_spec_uint ("pid", NULL, NULL, 0, G_MAXUINT32, 0,
                                            G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_TID] = g_param_spec_int64 ("tid", NULL, NULL, G_MININT64, G_MAXINT64, 0,
                                             G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_N_EVENTS] = g_param_spec_uint64 ("n-events", NULL, NULL, 0, G_MAXUINT64, 0,
                                                   G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
cowscope_timeline_lane_init (CowscopeTimelineLane *self)
{
  self->device = -1;
  self->counter = COWSCOPE_COUNTER_NONE;
}

/* A thread or CUDA-stream lane owning @index. */
CowscopeTimelineLane *
cowscope_timeline_lane_new_events (CowscopeLaneKind kind, const char *title, guint32 pid,
                                   gint64 tid, gint64 device, CowscopeLaneIndex *index)
{
  CowscopeTimelineLane *self = g_object_new (COWSCOPE_TYPE_TIMELINE_LANE, NULL);
  self->kind = kind;
  self->title = g_strdup (title);
  self->pid = pid;
  self->tid = tid;
  self->device = device;
  self->index = index;
  return self;
}

/* A lane whose instants are @packed and spans @index (both taken). */
CowscopeTimelineLane *
cowscope_timeline_lane_new_packed (CowscopeLaneKind kind, const char *title, guint32 pid,
                                   gint64 tid, gint64 device, CowscopeLaneIndex *index,
                                   CowscopePackedLane *packed)
{
  CowscopeTimelineLane *self = cowscope_timeline_lane_new_events (kind, title, pid, tid, device,
                                                                  index);
  self->packed = packed;
  return self;
}

/* A counter lane owning @series. */
CowscopeTimelineLane *
cowscope_timeline_lane_new_counter (CowscopeCounterKind counter, const char *title,
                                    CowscopeCounterBins *series)
{
  CowscopeTimelineLane *self = g_object_new (COWSCOPE_TYPE_TIMELINE_LANE, NULL);
  self->kind = COWSCOPE_LANE_COUNTER;
  self->counter = counter;
  self->title = g_strdup (title);
  self->series = series;
  return self;
}

/* The lane's kind. */
CowscopeLaneKind
cowscope_timeline_lane_get_kind (CowscopeTimelineLane *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LANE (self), 0);
  return self->kind;
}

/* The lane's title, valid as long as @self. */
const char *
cowscope_timeline_lane_get_title (CowscopeTimelineLane *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LANE (self), NULL);
  return self->title;
}

/* The process of a thread or CUDA lane (0 for counters). */
guint32
cowscope_timeline_lane_get_pid (CowscopeTimelineLane *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LANE (self), 0);
  return self->pid;
}

/* Thread id, or CUDA stream id. */
gint64
cowscope_timeline_lane_get_tid (CowscopeTimelineLane *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LANE (self), 0);
  return self->tid;
}

/* CUDA device of a stream lane, else -1. */
gint64
cowscope_timeline_lane_get_device (CowscopeTimelineLane *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LANE (self), -1);
  return self->device;
}

/* Which counter a counter lane draws (COWSCOPE_COUNTER_NONE otherwise). */
CowscopeCounterKind
cowscope_timeline_lane_get_counter (CowscopeTimelineLane *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LANE (self), COWSCOPE_COUNTER_NONE);
  return self->counter;
}

/* Events (CUDA records) in the lane. */
guint64
cowscope_timeline_lane_get_n_events (CowscopeTimelineLane *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LANE (self), 0);
  if (self->packed != NULL)
    return cowscope_packed_lane_get_n (self->packed);
  return self->index ? cowscope_lane_index_get_n (self->index) : 0;
}

/* Items for the window; never NULL (empty for an empty window). */
CowscopeTimelineWindow *
cowscope_timeline_lane_query (CowscopeTimelineLane *self, gint64 t0, gint64 t1, guint width)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LANE (self), NULL);
  GArray *items = g_array_new (FALSE, FALSE, sizeof (CowscopeTimelineItem));
  GArray *spans = g_array_new (FALSE, FALSE, sizeof (CowscopeTimelineItem));
  GArray *samples = g_array_new (FALSE, FALSE, sizeof (CowscopeCounterSample));
  if (self->packed != NULL)
    cowscope_packed_lane_query (self->packed, t0, t1, width, items);
  if (self->index != NULL)
    cowscope_lane_index_query (self->index, t0, t1, width, items, spans);
  if (self->series != NULL)
    cowscope_counter_bins_query (self->series, t0, t1, width, samples);
  return cowscope_timeline_window_new (t0, t1, width, items, spans, samples);
}

/* The query without reading the file (see the header). */
CowscopeTimelineWindow *
cowscope_timeline_lane_query_cached (CowscopeTimelineLane *self, gint64 t0, gint64 t1,
                                     guint width, gboolean *complete)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LANE (self), NULL);
  g_return_val_if_fail (complete != NULL, NULL);
  if (self->packed == NULL)
    {
      *complete = TRUE;
      return cowscope_timeline_lane_query (self, t0, t1, width);
    }
  GArray *items = g_array_new (FALSE, FALSE, sizeof (CowscopeTimelineItem));
  GArray *spans = g_array_new (FALSE, FALSE, sizeof (CowscopeTimelineItem));
  GArray *samples = g_array_new (FALSE, FALSE, sizeof (CowscopeCounterSample));
  *complete = cowscope_packed_lane_query_cached (self->packed, t0, t1, width, items);
  if (self->index != NULL)
    cowscope_lane_index_query (self->index, t0, t1, width, items, spans);
  return cowscope_timeline_window_new (t0, t1, width, items, spans, samples);
}

typedef struct {
  gint64 t0, t1;
  guint width;
} QueryRequest;

static void
query_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  const QueryRequest *r = task_data;
  (void) cancellable;
  g_task_return_pointer (task,
                         cowscope_timeline_lane_query (COWSCOPE_TIMELINE_LANE (source), r->t0,
                                                       r->t1, r->width),
                         g_object_unref);
}

/* The query in a GTask thread. */
void
cowscope_timeline_lane_query_async (CowscopeTimelineLane *self, gint64 t0, gint64 t1,
                                    guint width, GCancellable *cancellable,
                                    GAsyncReadyCallback callback, gpointer user_data)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_LANE (self));
  g_autoptr (GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, cowscope_timeline_lane_query_async);
  g_task_set_name (task, "[cowscope] lane query");
  QueryRequest *r = g_new (QueryRequest, 1);
  *r = (QueryRequest) { t0, t1, width };
  g_task_set_task_data (task, r, g_free);
  g_task_set_return_on_cancel (task, TRUE);
  g_task_run_in_thread (task, query_thread);
}

/* The window, or NULL with @error (cancelled). */
CowscopeTimelineWindow *
cowscope_timeline_lane_query_finish (CowscopeTimelineLane *self, GAsyncResult *result,
                                     GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}

/* Events starting in [t0, t1). */
guint64
cowscope_timeline_lane_count (CowscopeTimelineLane *self, gint64 t0, gint64 t1)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LANE (self), 0);
  if (self->packed != NULL)
    return cowscope_packed_lane_count (self->packed, t0, t1);
  return self->index ? cowscope_lane_index_count (self->index, t0, t1) : 0;
}

/* Adds what the lane's instants in [t0, t1) hold to @sums. */
void
cowscope_timeline_lane_sum (CowscopeTimelineLane *self, gint64 t0, gint64 t1,
                            CowscopeKindSums *sums)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_LANE (self));
  g_return_if_fail (sums != NULL);
  if (self->packed != NULL)
    cowscope_packed_lane_sum (self->packed, t0, t1, sums);
  else if (self->index != NULL)
    cowscope_lane_index_sum (self->index, t0, t1, sums);
}
