/* cowscope-timeline-view.c — see cowscope-timeline-view.h.
 *
 * Drawing follows Sysprof's patterns on GTK 4.8: every lane's data area is
 * rendered once per (window, width, theme) into a GskRenderNode
 * (gtk_snapshot_new … gtk_snapshot_free_to_node) and replayed with
 * gtk_snapshot_append_node; the ruler, the cursor, the selection and the
 * hover are drawn on top every frame.  Lane queries are cheap (in-memory,
 * O(pixels × log events)) and run in the snapshot; counting a range's
 * totals walks every event of the range and runs in a GTask thread.
 */
#include "cowscope-config.h"

#include <adwaita.h>
#include <glib/gi18n.h>
#include <math.h>

#include "cowscope-timeline-view.h"

#include "cowscope-object-events.h"

#define RULER_HEIGHT 26
#define GUTTER_WIDTH 176
#define THREAD_LANE_HEIGHT 46
#define EVENT_ROW_Y 3
#define EVENT_ROW_HEIGHT 20
#define RANGE_ROW_Y 26
#define RANGE_ROW_HEIGHT 5
#define RANGE_ROW_STEP 6
#define N_RANGE_ROWS 3
#define CUDA_LANE_HEIGHT 28
#define COUNTER_LANE_HEIGHT 40
#define PROCESS_LANE_HEIGHT 64
#define PROCESS_TICK_HEIGHT 10
#define PROCESS_SPAN_Y 16
#define PROCESS_SPAN_HEIGHT 5
#define PROCESS_SPAN_STEP 6
#define ZOOM_STEP 1.5
#define PAN_STEP 0.15
#define CLICK_SLOP 3.0
#define HIGHLIGHT_COLOR "#f5c211" /* as the sharing graph outlines them */

typedef struct {
  CowscopeTimelineLane *lane;
  CowscopeLaneKind kind;
  int y;                            /* content y (0 = just below the ruler) */
  int height;
  GskRenderNode *node;              /* data area, lane-local; NULL: stale */
  GskRenderNode *title_node;        /* gutter; NULL: stale */
  CowscopeTimelineWindow *window;   /* what `node` shows (hit testing) */
  double counter_max;
} Lane;

/* What the pointer is over. */
typedef struct {
  int lane;                          /* -1: none */
  const CowscopeTimelineItem *item;  /* item or span of lanes[lane].window */
  gboolean is_span;
  const CowscopeCounterSample *sample;
} Hit;

enum {
  DRAG_NONE,
  DRAG_PENDING,  /* pressed, not moved beyond CLICK_SLOP */
  DRAG_PAN,
  DRAG_RANGE,
};

struct _CowscopeTimelineView {
  GtkWidget parent_instance;

  CowscopeViewState *state;
  GPtrArray *lanes;       /* Lane* */
  int content_height;

  GtkAdjustment *hadjustment;
  GtkAdjustment *vadjustment;
  guint hscroll_policy : 1;
  guint vscroll_policy : 1;

  /* The key the cached lane nodes were drawn for. */
  gint64 cache_t0, cache_t1;
  int cache_width;
  gboolean cache_dark;
  gboolean dark;

  PangoLayout *layout;

  gboolean pointer_inside;
  double pointer_x, pointer_y;

  int drag_mode;
  gboolean drag_range_start;  /* the press asked for a range (ruler, Shift) */
  double drag_x, drag_y;
  gint64 drag_t0, drag_t1;

  gint64 pinch_t0, pinch_t1;
  double pinch_x;

  GCancellable *highlight_cancellable;
  GArray *highlighted;      /* CowscopeObjectEvent of the highlighted objects; NULL: finding */

  GCancellable *totals_cancellable;
  guint totals_source;
  gboolean totals_valid;
  CowscopeRangeTotals totals;

  guint frame_count;

  guint query_error_source;
  char *query_error;        /* the last error reported by ::query-error */
};

enum { QUERY_ERROR, N_SIGNALS };
static guint signals[N_SIGNALS];

static void cowscope_timeline_view_scrollable_init (GtkScrollableInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (CowscopeTimelineView, cowscope_timeline_view, GTK_TYPE_WIDGET,
                               G_IMPLEMENT_INTERFACE (GTK_TYPE_SCROLLABLE,
                                                      cowscope_timeline_view_scrollable_init))

enum {
  PROP_0,
  PROP_VIEW_STATE,
  N_PROPS,
  /* GtkScrollable */
  PROP_HADJUSTMENT = N_PROPS,
  PROP_VADJUSTMENT,
  PROP_HSCROLL_POLICY,
  PROP_VSCROLL_POLICY,
};

static GParamSpec *properties[N_PROPS];

/* ---- colours ---------------------------------------------------------- */

/* GNOME palette (light, dark); copy and steal far apart on purpose. */
static const char *const kind_colors[COWSCOPE_N_ITEM_KINDS][2] = {
  [COWSCOPE_ITEM_OTHER] = { "rgba(0,0,0,0.28)", "rgba(255,255,255,0.30)" },
  [COWSCOPE_ITEM_ALLOCATION] = { "rgba(0,0,0,0.28)", "rgba(255,255,255,0.30)" },
  [COWSCOPE_ITEM_FREE] = { "rgba(0,0,0,0.22)", "rgba(255,255,255,0.24)" },
  [COWSCOPE_ITEM_STORAGE] = { "rgba(0,0,0,0.28)", "rgba(255,255,255,0.30)" },
  [COWSCOPE_ITEM_TENSOR] = { "rgba(0,0,0,0.28)", "rgba(255,255,255,0.30)" },
  [COWSCOPE_ITEM_CONTEXT] = { "rgba(0,0,0,0.28)", "rgba(255,255,255,0.30)" },
  [COWSCOPE_ITEM_LAZY_CLONE] = { "#1c71d8", "#62a0ea" },          /* blue */
  [COWSCOPE_ITEM_EAGER_COPY] = { "#e5a50a", "#f8e45c" },          /* yellow */
  [COWSCOPE_ITEM_MATERIALIZE_BEGIN] = { "rgba(0,0,0,0.28)", "rgba(255,255,255,0.30)" },
  [COWSCOPE_ITEM_COPY] = { "#e66100", "#ffa348" },                /* orange */
  [COWSCOPE_ITEM_STEAL] = { "#26a269", "#57e389" },               /* green */
  [COWSCOPE_ITEM_MATERIALIZE_FAILED] = { "#a51d2d", "#f66151" },  /* red */
  [COWSCOPE_ITEM_VIOLATION] = { "#e01b24", "#ff7b63" },           /* red */
  [COWSCOPE_ITEM_RANGE] = { "#9141ac", "#c061cb" },               /* purple */
  [COWSCOPE_ITEM_MARK] = { "#865e3c", "#cdab8f" },                /* brown */
  [COWSCOPE_ITEM_IPC] = { "#1a5fb4", "#99c1f1" },
  [COWSCOPE_ITEM_CUDA_MEMCPY] = { "#c64600", "#ffbe6f" },
  [COWSCOPE_ITEM_CUDA_MEMSET] = { "#865e3c", "#cdab8f" },
  [COWSCOPE_ITEM_CUDA_KERNEL] = { "#613583", "#dc8add" },
  [COWSCOPE_ITEM_CUDA_OTHER] = { "rgba(0,0,0,0.35)", "rgba(255,255,255,0.35)" },
  [COWSCOPE_ITEM_IPC_LIMBO] = { "#c01c28", "#f66151" },           /* red: only consumers keep it */
  [COWSCOPE_ITEM_IPC_HELD] = { "#3584e4", "#99c1f1" },            /* blue: a consumer holds it */
};

static const char *const counter_colors[COWSCOPE_N_COUNTERS][2] = {
  [COWSCOPE_COUNTER_BYTES_ALLOCATED] = { "#1c71d8", "#62a0ea" },
  [COWSCOPE_COUNTER_BYTES_SHARED] = { "#26a269", "#57e389" },
  [COWSCOPE_COUNTER_LIVE_STORAGES] = { "#9141ac", "#c061cb" },
};

/* Parses @spec (a literal from the tables above) into @color. */
static void
color_from (const char *spec, GdkRGBA *color)
{
  if (!gdk_rgba_parse (color, spec))
    *color = (GdkRGBA) { 0.5f, 0.5f, 0.5f, 1.0f };
}

/* @color with its alpha multiplied by @alpha. */
static GdkRGBA
with_alpha (const GdkRGBA *color, float alpha)
{
  GdkRGBA c = *color;
  c.alpha *= alpha;
  return c;
}

/* The foreground colour of the current theme at @alpha. */
static GdkRGBA
fg (CowscopeTimelineView *self, float alpha)
{
  if (self->dark)
    return (GdkRGBA) { 1, 1, 1, alpha };
  return (GdkRGBA) { 0, 0, 0, 0.8f * alpha };
}

/* The accent colour (the cursor), readable on both themes. */
static GdkRGBA
accent (CowscopeTimelineView *self)
{
  GdkRGBA c;
  color_from (self->dark ? "#78aeed" : "#1c71d8", &c);
  return c;
}

/* ---- formatting --------------------------------------------------------- */

/* A duration for people ("12.5 ms"), with about three significant digits. */
static char *
format_duration (gint64 ns)
{
  double v = (double) ns;
  if (llabs (ns) < 1000)
    return g_strdup_printf (_("%d ns"), (int) ns);
  if (fabs (v) < 1e6)
    return g_strdup_printf (_("%.3g µs"), v / 1e3);
  if (fabs (v) < 1e9)
    return g_strdup_printf (_("%.3g ms"), v / 1e6);
  return g_strdup_printf (_("%.4g s"), v / 1e9);
}

/* A ruler label for @ns after the session start, with as many decimals as
 * the tick spacing @step needs. */
static char *
format_tick (gint64 ns, gint64 step)
{
  if (step < 1000)
    return g_strdup_printf (_("%.0f ns"), (double) ns);
  double unit = step < 1000000 ? 1e3 : step < 1000000000 ? 1e6 : 1e9;
  int decimals = (int) MAX (0, ceil (-log10 ((double) step / unit) - 1e-9));
  if (unit == 1e3)
    return g_strdup_printf (_("%.*f µs"), decimals, (double) ns / unit);
  if (unit == 1e6)
    return g_strdup_printf (_("%.*f ms"), decimals, (double) ns / unit);
  return g_strdup_printf (_("%.*f s"), decimals, (double) ns / unit);
}

/* @n with the locale's digit grouping ("48,211"). */
static char *
format_number (guint64 n)
{
  return g_strdup_printf ("%'" G_GUINT64_FORMAT, n);
}

/* A counter value for people: bytes for byte counters, else a count. */
static char *
format_counter (CowscopeCounterKind counter, double value)
{
  if (counter == COWSCOPE_COUNTER_LIVE_STORAGES)
    return g_strdup_printf ("%'.0f", value);
  return g_format_size ((guint64) MAX (value, 0));
}

/* The translated name of an item kind, for tooltips. */
static const char *
kind_name (guint kind)
{
  switch ((CowscopeItemKind) kind)
    {
    case COWSCOPE_ITEM_ALLOCATION: return _("Allocation");
    case COWSCOPE_ITEM_FREE: return _("Free");
    case COWSCOPE_ITEM_STORAGE: return _("New storage");
    case COWSCOPE_ITEM_TENSOR: return _("Tensor");
    case COWSCOPE_ITEM_CONTEXT: return _("CoW context");
    case COWSCOPE_ITEM_LAZY_CLONE: return _("Lazy clone");
    case COWSCOPE_ITEM_EAGER_COPY: return _("Eager copy");
    case COWSCOPE_ITEM_MATERIALIZE_BEGIN: return _("Materialization begins");
    case COWSCOPE_ITEM_COPY: return _("Copy");
    case COWSCOPE_ITEM_STEAL: return _("Steal");
    case COWSCOPE_ITEM_MATERIALIZE_FAILED: return _("Failed materialization");
    case COWSCOPE_ITEM_VIOLATION: return _("Simulate-mode warning");
    case COWSCOPE_ITEM_RANGE: return _("User range");
    case COWSCOPE_ITEM_MARK: return _("Mark");
    case COWSCOPE_ITEM_IPC: return _("IPC");
    case COWSCOPE_ITEM_CUDA_MEMCPY: return _("CUDA memcpy");
    case COWSCOPE_ITEM_CUDA_MEMSET: return _("CUDA memset");
    case COWSCOPE_ITEM_CUDA_KERNEL: return _("CUDA kernel");
    case COWSCOPE_ITEM_CUDA_OTHER: return _("CUDA activity");
    case COWSCOPE_ITEM_IPC_LIMBO: return _("Sent block in the limbo");
    case COWSCOPE_ITEM_IPC_HELD: return _("Received block held");
    case COWSCOPE_ITEM_OTHER:
    case COWSCOPE_N_ITEM_KINDS:
    default: return _("Event");
    }
}

/* ---- geometry ------------------------------------------------------------ */

/* The data area's width in pixels (what lanes are queried at); >= 1. */
static int
data_width (CowscopeTimelineView *self)
{
  return MAX (gtk_widget_get_width (GTK_WIDGET (self)) - GUTTER_WIDTH, 1);
}

/* The vertical scroll offset of the lanes. */
static int
scroll_y (CowscopeTimelineView *self)
{
  return self->vadjustment ? (int) gtk_adjustment_get_value (self->vadjustment) : 0;
}

/* The visible window; FALSE without a view state. */
static gboolean
visible (CowscopeTimelineView *self, gint64 *t0, gint64 *t1)
{
  if (self->state == NULL)
    return FALSE;
  *t0 = cowscope_view_state_get_visible_start (self->state);
  *t1 = cowscope_view_state_get_visible_end (self->state);
  return *t1 > *t0;
}

/* Widget x of time @t (may fall outside the widget). */
double
cowscope_timeline_view_time_to_x (CowscopeTimelineView *self, gint64 t)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  gint64 t0, t1;
  if (!visible (self, &t0, &t1))
    return GUTTER_WIDTH;
  return GUTTER_WIDTH + (double) (t - t0) * data_width (self) / (double) (t1 - t0);
}

/* The time at widget x @x (extrapolated outside the data area). */
gint64
cowscope_timeline_view_x_to_time (CowscopeTimelineView *self, double x)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  gint64 t0, t1;
  if (!visible (self, &t0, &t1))
    return 0;
  return t0 + (gint64) llround ((x - GUTTER_WIDTH) * (double) (t1 - t0) / data_width (self));
}

/* The lane under widget y @y, or -1 (the ruler, or below the lanes). */
static int
lane_at (CowscopeTimelineView *self, double y)
{
  if (self->lanes == NULL || y < RULER_HEIGHT)
    return -1;
  double cy = y - RULER_HEIGHT + scroll_y (self);
  for (guint i = 0; i < self->lanes->len; i++)
    {
      Lane *lane = self->lanes->pdata[i];
      if (cy >= lane->y && cy < lane->y + lane->height)
        return (int) i;
    }
  return -1;
}

/* ---- lanes ------------------------------------------------------------------ */

/* Frees one Lane. */
static void
lane_free (gpointer data)
{
  Lane *lane = data;
  g_clear_object (&lane->lane);
  g_clear_pointer (&lane->node, gsk_render_node_unref);
  g_clear_pointer (&lane->title_node, gsk_render_node_unref);
  g_clear_object (&lane->window);
  g_free (lane);
}

/* Drops every cached lane node (and titles when @titles); the caller
 * redraws. */
static void
drop_caches (CowscopeTimelineView *self, gboolean titles)
{
  if (self->lanes != NULL)
    for (guint i = 0; i < self->lanes->len; i++)
      {
        Lane *lane = self->lanes->pdata[i];
        g_clear_pointer (&lane->node, gsk_render_node_unref);
        g_clear_object (&lane->window);
        if (titles)
          g_clear_pointer (&lane->title_node, gsk_render_node_unref);
      }
}

/* Drops every cached lane node (and titles when @titles) and redraws. */
static void
invalidate (CowscopeTimelineView *self, gboolean titles)
{
  drop_caches (self, titles);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Sets up the vertical adjustment for the current height and lanes. */
static void
update_adjustment (CowscopeTimelineView *self)
{
  if (self->vadjustment == NULL)
    return;
  double page = MAX (gtk_widget_get_height (GTK_WIDGET (self)) - RULER_HEIGHT, 1);
  double upper = MAX (self->content_height, page);
  double value = CLAMP (gtk_adjustment_get_value (self->vadjustment), 0, upper - page);
  gtk_adjustment_configure (self->vadjustment, value, 0, upper, 24, page * 0.9, page);
}

/* Rebuilds the lane list from the document: counters, threads, CUDA. */
static void
rebuild_lanes (CowscopeTimelineView *self)
{
  g_clear_pointer (&self->lanes, g_ptr_array_unref);
  self->content_height = 0;
  if (self->state != NULL)
    {
      CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
      GListModel *model = cowscope_session_document_get_lanes (doc);
      guint n = g_list_model_get_n_items (model);
      self->lanes = g_ptr_array_new_with_free_func (lane_free);
      /* Counters; then each process lane heading its threads (sessions
       * of several processes); the other threads; CUDA streams. */
      GPtrArray *by_kind[COWSCOPE_LANE_PROCESS + 1] = { NULL };
      for (guint k = 0; k <= COWSCOPE_LANE_PROCESS; k++)
        by_kind[k] = g_ptr_array_new_with_free_func (g_object_unref);
      for (guint i = 0; i < n; i++)
        {
          CowscopeTimelineLane *tl = g_list_model_get_item (model, i);
          g_ptr_array_add (by_kind[MIN (cowscope_timeline_lane_get_kind (tl),
                                        COWSCOPE_LANE_PROCESS)], tl);
        }
      g_autoptr (GPtrArray) ordered = g_ptr_array_new ();
      g_ptr_array_extend (ordered, by_kind[COWSCOPE_LANE_COUNTER], NULL, NULL);
      g_autoptr (GHashTable) headed = g_hash_table_new (g_direct_hash, g_direct_equal);
      for (guint p = 0; p < by_kind[COWSCOPE_LANE_PROCESS]->len; p++)
        {
          CowscopeTimelineLane *pl = by_kind[COWSCOPE_LANE_PROCESS]->pdata[p];
          guint32 pid = cowscope_timeline_lane_get_pid (pl);
          g_ptr_array_add (ordered, pl);
          g_hash_table_add (headed, GUINT_TO_POINTER (pid));
          for (guint t = 0; t < by_kind[COWSCOPE_LANE_THREAD]->len; t++)
            if (cowscope_timeline_lane_get_pid (by_kind[COWSCOPE_LANE_THREAD]->pdata[t]) == pid)
              g_ptr_array_add (ordered, by_kind[COWSCOPE_LANE_THREAD]->pdata[t]);
        }
      for (guint t = 0; t < by_kind[COWSCOPE_LANE_THREAD]->len; t++)
        {
          CowscopeTimelineLane *tl = by_kind[COWSCOPE_LANE_THREAD]->pdata[t];
          if (!g_hash_table_contains (headed, GUINT_TO_POINTER (cowscope_timeline_lane_get_pid (tl))))
            g_ptr_array_add (ordered, tl);
        }
      g_ptr_array_extend (ordered, by_kind[COWSCOPE_LANE_CUDA_STREAM], NULL, NULL);
      for (guint i = 0; i < ordered->len; i++)
        {
          Lane *lane = g_new0 (Lane, 1);
          lane->lane = g_object_ref (ordered->pdata[i]);
          lane->kind = cowscope_timeline_lane_get_kind (lane->lane);
          lane->y = self->content_height;
          lane->height = lane->kind == COWSCOPE_LANE_THREAD ? THREAD_LANE_HEIGHT
                         : lane->kind == COWSCOPE_LANE_CUDA_STREAM ? CUDA_LANE_HEIGHT
                         : lane->kind == COWSCOPE_LANE_PROCESS ? PROCESS_LANE_HEIGHT
                                                               : COUNTER_LANE_HEIGHT;
          self->content_height += lane->height;
          g_ptr_array_add (self->lanes, lane);
        }
      for (guint k = 0; k <= COWSCOPE_LANE_PROCESS; k++)
        g_ptr_array_unref (by_kind[k]);
    }
  update_adjustment (self);
  gtk_widget_queue_resize (GTK_WIDGET (self));
}

/* ---- rendering a lane -------------------------------------------------------- */

/* Appends a rectangle in @color. */
static void
rect (GtkSnapshot *snapshot, const GdkRGBA *color, float x, float y, float w, float h)
{
  gtk_snapshot_append_color (snapshot, color, &GRAPHENE_RECT_INIT (x, y, w, h));
}

/* Appends a 1 px outline of @color around the rectangle. */
static void
outline (GtkSnapshot *snapshot, const GdkRGBA *color, float x, float y, float w, float h,
         float width)
{
  GskRoundedRect r;
  gsk_rounded_rect_init_from_rect (&r, &GRAPHENE_RECT_INIT (x, y, w, h), 0);
  const float widths[4] = { width, width, width, width };
  const GdkRGBA colors[4] = { *color, *color, *color, *color };
  gtk_snapshot_append_border (snapshot, &r, widths, colors);
}

/* Runs of equal marks in neighbouring pixels, merged into one node. */
typedef struct {
  GtkSnapshot *snapshot;
  const GdkRGBA *color;
  int x0, x1;
  float y, h;
} Run;

/* Draws the pending run, if any. */
static void
run_flush (Run *run)
{
  if (run->color != NULL && run->x1 > run->x0)
    rect (run->snapshot, run->color, run->x0, run->y, run->x1 - run->x0, run->h);
  run->color = NULL;
}

/* Adds [x0, x1) × [y, y+h) in @color, extending the pending run when it
 * continues it. */
static void
run_add (Run *run, const GdkRGBA *color, int x0, int x1, float y, float h)
{
  if (run->color == color && run->y == y && run->h == h && x0 <= run->x1)
    {
      run->x1 = MAX (run->x1, x1);
      return;
    }
  run_flush (run);
  run->color = color;
  run->x0 = x0, run->x1 = x1, run->y = y, run->h = h;
}

/* Is @kind a materialization (drawn as a box)? */
static gboolean
is_box_kind (guint kind)
{
  return kind == COWSCOPE_ITEM_COPY || kind == COWSCOPE_ITEM_STEAL
         || kind == COWSCOPE_ITEM_MATERIALIZE_FAILED || kind == COWSCOPE_ITEM_EAGER_COPY;
}

/* The x range of a span in the data area, at least 1 px wide. */
static void
span_px (const CowscopeTimelineItem *s, gint64 t0, double nspp, int width, float *x, float *w)
{
  double a = MAX ((double) (s->start_ns - t0) / nspp, -1.0);
  double b = MIN ((double) (s->end_ns - t0) / nspp, width + 1.0);
  a = floor (a);
  b = MAX (ceil (b), a + 1);
  *x = (float) a;
  *w = (float) (b - a);
}

/* Orders spans by start, longer first (for range nesting). */
static int
compare_spans (gconstpointer a, gconstpointer b)
{
  const CowscopeTimelineItem *x = *(const CowscopeTimelineItem *const *) a;
  const CowscopeTimelineItem *y = *(const CowscopeTimelineItem *const *) b;
  if (x->start_ns != y->start_ns)
    return x->start_ns < y->start_ns ? -1 : 1;
  return (x->end_ns < y->end_ns) - (x->end_ns > y->end_ns);
}

/* The row a range span is drawn in: its nesting depth among the window's
 * ranges (a range shorter than a pixel has no parent shown). */
static guint
range_row (const CowscopeTimelineItem *const *sorted, guint n, guint i)
{
  guint depth = 0;
  for (guint k = 0; k < i; k++)
    if (sorted[k]->end_ns >= sorted[i]->end_ns && sorted[k]->start_ns <= sorted[i]->start_ns)
      depth++;
  return MIN (depth, N_RANGE_ROWS - 1);
}

/* Draws an event lane (thread or CUDA stream) from @win into @snapshot. */
/* Kinds a person looks for: never hidden inside a bucket. */
static gboolean
is_notable_kind (guint kind)
{
  return is_box_kind (kind) || kind == COWSCOPE_ITEM_LAZY_CLONE || kind == COWSCOPE_ITEM_MARK
         || kind == COWSCOPE_ITEM_IPC || kind == COWSCOPE_ITEM_VIOLATION;
}

/* Draws @it as an item of @kind: copies and CUDA work as full-height
 * columns, lazy clones, marks and IPC in the upper half, warnings wider,
 * range ends in the range row, other events as ticks growing with their
 * count. */
static void
draw_item_kind (Run *run, const CowscopeTimelineItem *it, guint kind, gboolean cuda, float row_h,
                GdkRGBA colors[COWSCOPE_N_ITEM_KINDS])
{
  int x = it->pixel;
  if (cuda || is_box_kind (kind))
    run_add (run, &colors[kind], x, x + 1, EVENT_ROW_Y, row_h);
  else if (kind == COWSCOPE_ITEM_LAZY_CLONE || kind == COWSCOPE_ITEM_MARK
           || kind == COWSCOPE_ITEM_IPC)
    {
      int half = it->count == 1 ? 1 : 0;
      run_add (run, &colors[kind], x - half, x + 1 + half, EVENT_ROW_Y, row_h * 0.5f);
    }
  else if (kind == COWSCOPE_ITEM_VIOLATION)
    run_add (run, &colors[kind], x, x + 2, EVENT_ROW_Y, row_h);
  else if (kind == COWSCOPE_ITEM_RANGE)
    run_add (run, &colors[kind], x, x + 1, RANGE_ROW_Y, RANGE_ROW_HEIGHT);
  else
    {
      float h = MIN (4.0f + 2.0f * (float) log2 ((double) it->count), row_h * 0.6f);
      run_add (run, &colors[kind], x, x + 1, EVENT_ROW_Y + row_h - h, h);
    }
}

static void
draw_event_lane (CowscopeTimelineView *self, Lane *lane, CowscopeTimelineWindow *win,
                 GtkSnapshot *snapshot, GdkRGBA colors[COWSCOPE_N_ITEM_KINDS])
{
  gint64 t0 = cowscope_timeline_window_get_start (win);
  gint64 t1 = cowscope_timeline_window_get_end (win);
  int width = (int) cowscope_timeline_window_get_width (win);
  double nspp = (double) (t1 - t0) / width;
  gboolean cuda = lane->kind == COWSCOPE_LANE_CUDA_STREAM;
  float row_h = cuda ? lane->height - 2 * EVENT_ROW_Y : EVENT_ROW_HEIGHT;
  guint n_items, n_spans;
  const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (win, &n_items);
  const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (win, &n_spans);
  Run run = { .snapshot = snapshot };

  /* Ordinary events: ticks at the bottom of the row, taller for buckets
   * holding more events; marks of interest at the top. */
  for (guint i = 0; i < n_items; i++)
    {
      const CowscopeTimelineItem *it = &items[i];
      guint kind = it->kind < COWSCOPE_N_ITEM_KINDS ? it->kind : COWSCOPE_ITEM_OTHER;
      draw_item_kind (&run, it, kind, cuda, row_h, colors);
    }
  /* A bucket is drawn as its most frequent kind; the notable kinds it
   * also holds (a copy among a thousand tensor events) go on top, in a
   * second pass (runs merge only left to right). */
  run_flush (&run);
  for (guint i = 0; i < n_items && !cuda; i++)
    {
      const CowscopeTimelineItem *it = &items[i];
      if (it->count == 1)
        continue;
      for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
        if (k != it->kind && (it->kinds & (1u << k)) != 0 && is_notable_kind (k))
          draw_item_kind (&run, it, k, cuda, row_h, colors);
    }
  run_flush (&run);

  /* Spans: materializations and CUDA activity as boxes, user ranges in
   * nested rows below. */
  g_autoptr (GPtrArray) ranges = g_ptr_array_new ();
  for (guint i = 0; i < n_spans; i++)
    {
      const CowscopeTimelineItem *s = &spans[i];
      guint kind = s->kind < COWSCOPE_N_ITEM_KINDS ? s->kind : COWSCOPE_ITEM_OTHER;
      if (kind == COWSCOPE_ITEM_RANGE)
        {
          g_ptr_array_add (ranges, (gpointer) s);
          continue;
        }
      float x, w;
      span_px (s, t0, nspp, width, &x, &w);
      rect (snapshot, &colors[kind], x, EVENT_ROW_Y, w, row_h);
      if (w >= 5)
        {
          GdkRGBA edge = fg (self, 0.45f);
          outline (snapshot, &edge, x, EVENT_ROW_Y, w, row_h, 1);
        }
    }
  if (ranges->len > 0)
    {
      g_ptr_array_sort (ranges, compare_spans);
      GdkRGBA c = with_alpha (&colors[COWSCOPE_ITEM_RANGE], 0.8f);
      for (guint i = 0; i < ranges->len; i++)
        {
          const CowscopeTimelineItem *s = ranges->pdata[i];
          float x, w;
          span_px (s, t0, nspp, width, &x, &w);
          guint row = range_row ((const CowscopeTimelineItem *const *) ranges->pdata, ranges->len, i);
          rect (snapshot, &c, x, RANGE_ROW_Y + row * RANGE_ROW_STEP, w, RANGE_ROW_HEIGHT);
        }
    }
}

/* Draws a process lane from @win: its IPC events as ticks on top, limbo
 * spans (red) and held-block spans (blue) packed into thin rows below,
 * so overlapping blocks stay visible. */
static void
draw_process_lane (CowscopeTimelineView *self, Lane *lane, CowscopeTimelineWindow *win,
                   GtkSnapshot *snapshot, GdkRGBA colors[COWSCOPE_N_ITEM_KINDS])
{
  gint64 t0 = cowscope_timeline_window_get_start (win);
  gint64 t1 = cowscope_timeline_window_get_end (win);
  int width = (int) cowscope_timeline_window_get_width (win);
  double nspp = (double) (t1 - t0) / width;
  guint n_items, n_spans;
  const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (win, &n_items);
  const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (win, &n_spans);
  GdkRGBA tint = fg (self, 0.04f);
  rect (snapshot, &tint, 0, 0, width, lane->height - 1);
  Run run = { .snapshot = snapshot };
  for (guint i = 0; i < n_items; i++)
    {
      guint kind = items[i].kind < COWSCOPE_N_ITEM_KINDS ? items[i].kind : COWSCOPE_ITEM_OTHER;
      int half = items[i].count == 1 ? 1 : 0;
      run_add (&run, &colors[kind], items[i].pixel - half, items[i].pixel + 1 + half,
               EVENT_ROW_Y, PROCESS_TICK_HEIGHT);
    }
  run_flush (&run);

  guint n_rows = MAX ((lane->height - PROCESS_SPAN_Y - 2) / PROCESS_SPAN_STEP, 1);
  g_autofree float *row_end = g_new (float, n_rows);
  for (guint r = 0; r < n_rows; r++)
    row_end[r] = -G_MAXFLOAT;
  g_autoptr (GPtrArray) sorted = g_ptr_array_sized_new (n_spans);
  for (guint i = 0; i < n_spans; i++)
    g_ptr_array_add (sorted, (gpointer) &spans[i]);
  g_ptr_array_sort (sorted, compare_spans);
  for (guint i = 0; i < sorted->len; i++)
    {
      const CowscopeTimelineItem *s = sorted->pdata[i];
      guint kind = s->kind < COWSCOPE_N_ITEM_KINDS ? s->kind : COWSCOPE_ITEM_OTHER;
      float x, w;
      span_px (s, t0, nspp, width, &x, &w);
      guint row = n_rows - 1;
      for (guint r = 0; r < n_rows; r++)
        if (row_end[r] <= x)
          {
            row = r;
            break;
          }
      row_end[row] = MAX (row_end[row], x + w + 1);
      GdkRGBA c = with_alpha (&colors[kind], 0.85f);
      rect (snapshot, &c, x, PROCESS_SPAN_Y + row * PROCESS_SPAN_STEP, w, PROCESS_SPAN_HEIGHT);
    }
}

/* Draws a counter lane from @win: the per-pixel maximum as a step area,
 * the value at each pixel's end as a line, the scale in a corner. */
static void
draw_counter_lane (CowscopeTimelineView *self, Lane *lane, CowscopeTimelineWindow *win,
                   GtkSnapshot *snapshot)
{
  guint n;
  const CowscopeCounterSample *samples = cowscope_timeline_window_get_samples (win, &n);
  int width = (int) cowscope_timeline_window_get_width (win);
  CowscopeCounterKind counter = cowscope_timeline_lane_get_counter (lane->lane);
  GdkRGBA color;
  color_from (counter_colors[CLAMP (counter, 0, COWSCOPE_N_COUNTERS - 1)][self->dark], &color);

  double vmax = 0;
  for (guint i = 0; i < n; i++)
    vmax = MAX (vmax, samples[i].max);
  lane->counter_max = vmax;
  if (n == 0)
    return;
  if (vmax <= 0)
    vmax = 1;

  float top = 4, bottom = lane->height - 2;
  double scale = (bottom - top) / vmax;
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width,
                                                                           lane->height));
  cairo_move_to (cr, samples[0].pixel, bottom);
  for (guint i = 0; i < n; i++)
    {
      double y = bottom - samples[i].max * scale;
      cairo_line_to (cr, samples[i].pixel, y);
      cairo_line_to (cr, samples[i].pixel + 1, y);
    }
  cairo_line_to (cr, samples[n - 1].pixel + 1, bottom);
  cairo_close_path (cr);
  GdkRGBA fill = with_alpha (&color, 0.35f);
  gdk_cairo_set_source_rgba (cr, &fill);
  cairo_fill (cr);
  for (guint i = 0; i < n; i++)
    {
      double y = floor (bottom - samples[i].last * scale) + 0.5;
      if (i == 0)
        cairo_move_to (cr, samples[i].pixel, y);
      else
        cairo_line_to (cr, samples[i].pixel, y);
      cairo_line_to (cr, samples[i].pixel + 1, y);
    }
  gdk_cairo_set_source_rgba (cr, &color);
  cairo_set_line_width (cr, 1.0);
  cairo_stroke (cr);
  cairo_destroy (cr);

  g_autofree char *label = format_counter (counter, lane->counter_max);
  pango_layout_set_text (self->layout, label, -1);
  int lw, lh;
  pango_layout_get_pixel_size (self->layout, &lw, &lh);
  GdkRGBA text = fg (self, 0.7f);
  GdkRGBA backdrop = self->dark ? (GdkRGBA) { 0.14f, 0.14f, 0.16f, 0.75f }
                                : (GdkRGBA) { 1, 1, 1, 0.75f };
  rect (snapshot, &backdrop, width - lw - 9, 1, lw + 6, lh);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (width - lw - 6, 1));
  gtk_snapshot_append_layout (snapshot, self->layout, &text);
  gtk_snapshot_restore (snapshot);
}

/* Drops the lane caches when the window, the width or the theme changed
 * since they were drawn; FALSE without a window to show. */
static gboolean
validate_cache (CowscopeTimelineView *self)
{
  gint64 t0, t1;
  if (!visible (self, &t0, &t1) || self->lanes == NULL)
    return FALSE;
  int dw = data_width (self);
  if (self->cache_t0 != t0 || self->cache_t1 != t1 || self->cache_width != dw
      || self->cache_dark != self->dark)
    {
      drop_caches (self, self->cache_dark != self->dark);
      self->cache_t0 = t0, self->cache_t1 = t1, self->cache_width = dw;
      self->cache_dark = self->dark;
    }
  return TRUE;
}

/* Makes sure @lane's query result for the cached key exists (the lane
 * may not have been drawn: scrolled out of view). */
static void
ensure_lane_window (CowscopeTimelineView *self, Lane *lane)
{
  if (lane->window == NULL)
    lane->window = cowscope_timeline_lane_query (lane->lane, self->cache_t0, self->cache_t1,
                                                 (guint) self->cache_width);
}

/* Makes sure @lane's data node shows the cached key's window. */
static void
ensure_lane_node (CowscopeTimelineView *self, Lane *lane, GdkRGBA colors[COWSCOPE_N_ITEM_KINDS])
{
  if (lane->node != NULL)
    return;
  ensure_lane_window (self, lane);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  if (lane->kind == COWSCOPE_LANE_COUNTER)
    draw_counter_lane (self, lane, lane->window, snapshot);
  else if (lane->kind == COWSCOPE_LANE_PROCESS)
    draw_process_lane (self, lane, lane->window, snapshot, colors);
  else
    draw_event_lane (self, lane, lane->window, snapshot, colors);
  lane->node = gtk_snapshot_free_to_node (snapshot);
  if (lane->node == NULL) /* nothing drawn: an empty container */
    lane->node = gsk_container_node_new (NULL, 0);
}

/* Makes sure @lane's gutter node (its title) exists. */
static void
ensure_title_node (CowscopeTimelineView *self, Lane *lane)
{
  if (lane->title_node != NULL)
    return;
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  GdkRGBA text = fg (self, 0.85f), dim = fg (self, 0.5f);
  pango_layout_set_width (self->layout, (GUTTER_WIDTH - 16) * PANGO_SCALE);
  pango_layout_set_ellipsize (self->layout, PANGO_ELLIPSIZE_END);
  pango_layout_set_text (self->layout, cowscope_timeline_lane_get_title (lane->lane), -1);
  if (lane->kind == COWSCOPE_LANE_PROCESS)
    {
      /* A process heads the thread lanes below it: bold. */
      PangoAttrList *attrs = pango_attr_list_new ();
      pango_attr_list_insert (attrs, pango_attr_weight_new (PANGO_WEIGHT_BOLD));
      pango_layout_set_attributes (self->layout, attrs);
      pango_attr_list_unref (attrs);
    }
  int lh;
  pango_layout_get_pixel_size (self->layout, NULL, &lh);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (10, 3));
  gtk_snapshot_append_layout (snapshot, self->layout, &text);
  gtk_snapshot_restore (snapshot);
  pango_layout_set_attributes (self->layout, NULL);
  g_autofree char *sub = NULL;
  if (lane->kind == COWSCOPE_LANE_THREAD)
    {
      guint64 n = cowscope_timeline_lane_get_n_events (lane->lane);
      g_autofree char *count = format_number (n);
      sub = g_strdup_printf (ngettext ("Process %u · %s event", "Process %u · %s events",
                                       (unsigned long) MIN (n, 1000000)),
                             cowscope_timeline_lane_get_pid (lane->lane), count);
    }
  else if (lane->kind == COWSCOPE_LANE_CUDA_STREAM)
    sub = NULL; /* the title says stream and device; the lane is short */
  else if (lane->kind == COWSCOPE_LANE_PROCESS)
    {
      guint64 n = cowscope_timeline_lane_get_n_events (lane->lane);
      g_autofree char *count = format_number (n);
      sub = g_strdup_printf (ngettext ("Process %u · %s IPC event",
                                       "Process %u · %s IPC events",
                                       (unsigned long) MIN (n, 1000000)),
                             cowscope_timeline_lane_get_pid (lane->lane), count);
    }
  else
    sub = g_strdup (_("Counter"));
  if (sub != NULL && lane->height >= 2 * lh + 4)
    {
      pango_layout_set_text (self->layout, sub, -1);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (10, 3 + lh));
      gtk_snapshot_append_layout (snapshot, self->layout, &dim);
      gtk_snapshot_restore (snapshot);
    }
  pango_layout_set_width (self->layout, -1);
  pango_layout_set_ellipsize (self->layout, PANGO_ELLIPSIZE_NONE);
  lane->title_node = gtk_snapshot_free_to_node (snapshot);
}

/* ---- hit testing --------------------------------------------------------------- */

/* What is under widget (x, y) in the cached lane windows. */
static Hit
hit_test (CowscopeTimelineView *self, double x, double y)
{
  Hit hit = { .lane = -1 };
  int li = lane_at (self, y);
  if (li < 0 || x < GUTTER_WIDTH || !validate_cache (self))
    return hit;
  Lane *lane = self->lanes->pdata[li];
  hit.lane = li;
  ensure_lane_window (self, lane);
  double px = x - GUTTER_WIDTH;
  double ly = y - RULER_HEIGHT + scroll_y (self) - lane->y;
  gint64 t0 = cowscope_timeline_window_get_start (lane->window);
  gint64 t1 = cowscope_timeline_window_get_end (lane->window);
  int width = (int) cowscope_timeline_window_get_width (lane->window);
  double nspp = (double) (t1 - t0) / width;
  guint n;

  if (lane->kind == COWSCOPE_LANE_COUNTER)
    {
      const CowscopeCounterSample *samples = cowscope_timeline_window_get_samples (lane->window, &n);
      for (guint i = 0; i < n; i++)
        if (samples[i].pixel == (guint16) px)
          hit.sample = &samples[i];
      return hit;
    }

  gboolean in_ranges = lane->kind == COWSCOPE_LANE_THREAD && ly >= RANGE_ROW_Y - 1;
  /* Spans first: the innermost (shortest) one under the pointer. */
  const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (lane->window, &n);
  for (guint i = 0; i < n; i++)
    {
      const CowscopeTimelineItem *s = &spans[i];
      if ((s->kind == COWSCOPE_ITEM_RANGE) != in_ranges)
        continue;
      float sx, sw;
      span_px (s, t0, nspp, width, &sx, &sw);
      if (px >= sx - 1 && px < sx + sw + 1
          && (hit.item == NULL || s->end_ns - s->start_ns < hit.item->end_ns - hit.item->start_ns))
        hit.item = s, hit.is_span = TRUE;
    }
  if (hit.item != NULL || in_ranges)
    return hit;
  /* Then the nearest item within two pixels, single events preferred. */
  const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (lane->window, &n);
  double best = 3;
  for (guint i = 0; i < n; i++)
    {
      double d = fabs (items[i].pixel + 0.5 - px) + (items[i].count > 1 ? 0.5 : 0)
                 - (is_box_kind (items[i].kind) ? 0.75 : 0);
      if (d < best)
        best = d, hit.item = &items[i];
    }
  return hit;
}

/* ---- snapshot --------------------------------------------------------------------- */

/* Draws the time ruler (ticks every 1, 2 or 5 × 10^k ns, at least ~100 px
 * apart, labelled relative to the session start). */
static void
draw_ruler (CowscopeTimelineView *self, GtkSnapshot *snapshot, gint64 t0, gint64 t1, int w)
{
  CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
  gint64 origin = cowscope_session_document_get_start_ns (doc);
  GdkRGBA bg = self->dark ? (GdkRGBA) { 0.19f, 0.19f, 0.21f, 1 } : (GdkRGBA) { 0.96f, 0.96f, 0.97f, 1 };
  GdkRGBA line = fg (self, 0.15f), tick = fg (self, 0.35f), text = fg (self, 0.7f);
  rect (snapshot, &bg, 0, 0, w, RULER_HEIGHT);
  rect (snapshot, &line, 0, RULER_HEIGHT - 1, w, 1);

  int dw = data_width (self);
  double min_step = (double) (t1 - t0) / dw * 100.0;
  gint64 step = 1;
  for (gint64 p = 1; p < G_MAXINT64 / 10; p *= 10)
    {
      if ((double) p >= min_step) { step = p; break; }
      if ((double) (2 * p) >= min_step) { step = 2 * p; break; }
      if ((double) (5 * p) >= min_step) { step = 5 * p; break; }
    }
  gint64 rel0 = t0 - origin;
  gint64 first = rel0 >= 0 ? (rel0 + step - 1) / step * step : -((-rel0) / step * step);
  for (gint64 rel = first; origin + rel < t1; rel += step)
    {
      double x = cowscope_timeline_view_time_to_x (self, origin + rel);
      rect (snapshot, &tick, (float) floor (x), RULER_HEIGHT - 8, 1, 7);
      g_autofree char *label = format_tick (rel, step);
      pango_layout_set_text (self->layout, label, -1);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT ((float) floor (x) + 4, 4));
      gtk_snapshot_append_layout (snapshot, self->layout, &text);
      gtk_snapshot_restore (snapshot);
    }
  /* The gutter corner: how much is shown. */
  g_autofree char *span = format_duration (t1 - t0);
  g_autofree char *shown = g_strdup_printf (_("%s shown"), span);
  rect (snapshot, &bg, 0, 0, GUTTER_WIDTH, RULER_HEIGHT - 1);
  pango_layout_set_text (self->layout, shown, -1);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (10, 4));
  gtk_snapshot_append_layout (snapshot, self->layout, &text);
  gtk_snapshot_restore (snapshot);
}

/* Outlines the selected event @seq where thread lane @lane shows it on
 * its own (not merged into a pixel with others). */
static void
draw_selected (CowscopeTimelineView *self, GtkSnapshot *snapshot, Lane *lane, gint64 seq,
               const GdkRGBA *color)
{
  if (lane->window == NULL || lane->kind != COWSCOPE_LANE_THREAD)
    return;
  gint64 t0 = cowscope_timeline_window_get_start (lane->window);
  gint64 t1 = cowscope_timeline_window_get_end (lane->window);
  int width = (int) cowscope_timeline_window_get_width (lane->window);
  double nspp = (double) (t1 - t0) / width;
  guint n;
  const CowscopeTimelineItem *spans = cowscope_timeline_window_get_spans (lane->window, &n);
  for (guint i = 0; i < n; i++)
    if (spans[i].id == seq && spans[i].kind != COWSCOPE_ITEM_RANGE)
      {
        float x, w;
        span_px (&spans[i], t0, nspp, width, &x, &w);
        outline (snapshot, color, GUTTER_WIDTH + x - 2, lane->y + EVENT_ROW_Y - 2, w + 4,
                 EVENT_ROW_HEIGHT + 4, 2);
        return;
      }
  const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (lane->window, &n);
  for (guint i = 0; i < n; i++)
    if (items[i].count == 1 && items[i].id == seq)
      {
        outline (snapshot, color, GUTTER_WIDTH + items[i].pixel - 3, lane->y + EVENT_ROW_Y - 2,
                 7, EVENT_ROW_HEIGHT + 4, 2);
        return;
      }
}

/* Outlines, in thread lane @lane, the events of the highlighted objects:
 * by time, so one is seen even where it shares a pixel with others. */
static void
draw_highlighted (CowscopeTimelineView *self, GtkSnapshot *snapshot, Lane *lane,
                  const GdkRGBA *color)
{
  if (lane->kind != COWSCOPE_LANE_THREAD || self->highlighted == NULL)
    return;
  guint32 pid = cowscope_timeline_lane_get_pid (lane->lane);
  gint64 tid = cowscope_timeline_lane_get_tid (lane->lane);
  int w = gtk_widget_get_width (GTK_WIDGET (self));
  for (guint i = 0; i < self->highlighted->len; i++)
    {
      const CowscopeObjectEvent *ev = &g_array_index (self->highlighted, CowscopeObjectEvent, i);
      if (ev->pid != pid || ev->tid != tid)
        continue;
      double x0 = cowscope_timeline_view_time_to_x (self, ev->start_ns);
      double x1 = cowscope_timeline_view_time_to_x (self, ev->end_ns);
      if (x1 < GUTTER_WIDTH || x0 > w)
        continue;
      x0 = MAX (x0, GUTTER_WIDTH + 3);
      x1 = MIN (x1, w - 3);
      float x = (float) floor (x0) - 3, width = (float) MAX (ceil (x1) - floor (x0), 1) + 6;
      outline (snapshot, color, x, lane->y + EVENT_ROW_Y - 2, width, EVENT_ROW_HEIGHT + 4, 2);
    }
}

/* Draws the totals box of the selected range at the top of the lanes. */
static void
draw_totals (CowscopeTimelineView *self, GtkSnapshot *snapshot, double x0, double x1, int w,
             int h, gint64 r0, gint64 r1)
{
  g_autofree char *dur = format_duration (r1 - r0);
  g_autofree char *text = NULL;
  if (self->totals_valid)
    {
      g_autofree char *bytes = g_format_size (self->totals.bytes_copied);
      g_autofree char *events = format_number (self->totals.events);
      g_autofree char *copies = format_number (self->totals.copies);
      g_autofree char *steals = format_number (self->totals.steals);
      g_autofree char *clones = format_number (self->totals.lazy_clones);
      /* Translators: the totals of a selected time range */
      text = g_strdup_printf (_("Selection: %s · Events: %s\n"
                                "Copies: %s (%s) · Steals: %s · Lazy clones: %s"),
                              dur, events, copies, bytes, steals, clones);
    }
  else
    text = g_strdup_printf (_("Selection: %s\nCounting…"), dur);
  pango_layout_set_text (self->layout, text, -1);
  int lw, lh;
  pango_layout_get_pixel_size (self->layout, &lw, &lh);
  float bw = lw + 16, bh = lh + 10;
  float bx = (float) CLAMP ((x0 + x1) / 2 - bw / 2, GUTTER_WIDTH + 2, MAX (w - bw - 2, GUTTER_WIDTH + 2));
  float by = RULER_HEIGHT + 6;
  if (by + bh > h)
    return;
  GskRoundedRect box;
  gsk_rounded_rect_init_from_rect (&box, &GRAPHENE_RECT_INIT (bx, by, bw, bh), 6);
  GdkRGBA bg = self->dark ? (GdkRGBA) { 0.12f, 0.12f, 0.14f, 0.92f }
                          : (GdkRGBA) { 1, 1, 1, 0.94f };
  GdkRGBA border = fg (self, 0.2f), color = fg (self, 0.9f);
  gtk_snapshot_push_rounded_clip (snapshot, &box);
  rect (snapshot, &bg, bx, by, bw, bh);
  gtk_snapshot_pop (snapshot);
  const float widths[4] = { 1, 1, 1, 1 };
  const GdkRGBA colors[4] = { border, border, border, border };
  gtk_snapshot_append_border (snapshot, &box, widths, colors);
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (bx + 8, by + 5));
  gtk_snapshot_append_layout (snapshot, self->layout, &color);
  gtk_snapshot_restore (snapshot);
}

/* Main loop, after the frame: emits ::query-error. */
static gboolean
report_query_error (gpointer data)
{
  CowscopeTimelineView *self = data;
  self->query_error_source = 0;
  g_signal_emit (self, signals[QUERY_ERROR], 0, self->query_error);
  return G_SOURCE_REMOVE;
}

/* Takes the document's query error, if a query just met one (a damaged
 * chunk: the lanes drew without it), and reports it once the frame is
 * done (not while snapshotting). */
static void
check_query_error (CowscopeTimelineView *self)
{
  if (self->state == NULL)
    return;
  g_autoptr (GError) error =
    cowscope_session_document_take_query_error (cowscope_view_state_get_document (self->state));
  if (error == NULL)
    return;
  g_free (self->query_error);
  self->query_error = g_strdup (error->message);
  if (self->query_error_source == 0)
    self->query_error_source = g_idle_add_full (G_PRIORITY_DEFAULT, report_query_error, self,
                                                NULL);
}

/* Draws the lanes (cached nodes), then the selection, cursor, hover and
 * ruler on top. */
static void
cowscope_timeline_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  int w = gtk_widget_get_width (widget), h = gtk_widget_get_height (widget);
  gint64 t0, t1;
  if (!visible (self, &t0, &t1) || self->lanes == NULL || w <= GUTTER_WIDTH)
    return;
  self->frame_count++;

  int dw = data_width (self);
  validate_cache (self);
  GdkRGBA colors[COWSCOPE_N_ITEM_KINDS];
  for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
    color_from (kind_colors[k][self->dark], &colors[k]);

  int sy = scroll_y (self);
  GdkRGBA stripe = fg (self, 0.03f), sep = fg (self, 0.08f);
  GdkRGBA gutter = self->dark ? (GdkRGBA) { 0.16f, 0.16f, 0.18f, 1 }
                              : (GdkRGBA) { 0.98f, 0.98f, 0.98f, 1 };
  GdkRGBA header = self->dark ? (GdkRGBA) { 0.22f, 0.22f, 0.25f, 1 }
                              : (GdkRGBA) { 0.92f, 0.92f, 0.93f, 1 };
  gint64 selected = cowscope_view_state_get_selected_seq (self->state);
  GdkRGBA sel_color = fg (self, 0.95f);
  GdkRGBA hl_color;
  color_from (HIGHLIGHT_COLOR, &hl_color);


  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, RULER_HEIGHT, w, h - RULER_HEIGHT));
  gtk_snapshot_save (snapshot);
  gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (0, RULER_HEIGHT - sy));
  for (guint i = 0; i < self->lanes->len; i++)
    {
      Lane *lane = self->lanes->pdata[i];
      if (lane->y + lane->height <= sy || lane->y >= sy + h - RULER_HEIGHT)
        continue;
      if (i % 2 == 1)
        rect (snapshot, &stripe, 0, lane->y, w, lane->height);
      rect (snapshot, lane->kind == COWSCOPE_LANE_PROCESS ? &header : &gutter, 0, lane->y,
            GUTTER_WIDTH, lane->height);
      rect (snapshot, &sep, 0, lane->y + lane->height - 1, w, 1);
      ensure_lane_node (self, lane, colors);
      ensure_title_node (self, lane);
      gtk_snapshot_save (snapshot);
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (0, lane->y));
      gtk_snapshot_append_node (snapshot, lane->title_node);
      gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (GUTTER_WIDTH, 0, dw, lane->height));
      gtk_snapshot_translate (snapshot, &GRAPHENE_POINT_INIT (GUTTER_WIDTH, 0));
      gtk_snapshot_append_node (snapshot, lane->node);
      gtk_snapshot_pop (snapshot);
      gtk_snapshot_restore (snapshot);
      draw_highlighted (self, snapshot, lane, &hl_color);
      if (selected >= 0)
        draw_selected (self, snapshot, lane, selected, &sel_color);
    }
  rect (snapshot, &sep, GUTTER_WIDTH - 1, sy, 1, h);
  gtk_snapshot_restore (snapshot);
  gtk_snapshot_pop (snapshot);
  check_query_error (self);

  /* Selected range. */
  gint64 r0 = cowscope_view_state_get_range_start (self->state);
  gint64 r1 = cowscope_view_state_get_range_end (self->state);
  GdkRGBA acc = accent (self);
  if (r0 >= 0 && r1 > r0 && r1 > t0 && r0 < t1)
    {
      double x0 = MAX (cowscope_timeline_view_time_to_x (self, r0), GUTTER_WIDTH);
      double x1 = MIN (cowscope_timeline_view_time_to_x (self, r1), w);
      GdkRGBA fill = with_alpha (&acc, 0.15f), edge = with_alpha (&acc, 0.8f);
      rect (snapshot, &fill, (float) x0, 0, (float) MAX (x1 - x0, 1), h);
      rect (snapshot, &edge, (float) x0, 0, 1, h);
      rect (snapshot, &edge, (float) x1 - 1, 0, 1, h);
    }

  /* Hover: a faint line and the item's outline. */
  if (self->pointer_inside && self->pointer_x >= GUTTER_WIDTH && self->drag_mode != DRAG_PAN)
    {
      GdkRGBA hover = fg (self, 0.25f);
      rect (snapshot, &hover, (float) floor (self->pointer_x), 0, 1, h);
      Hit hit = hit_test (self, self->pointer_x, self->pointer_y);
      if (hit.item != NULL)
        {
          Lane *lane = self->lanes->pdata[hit.lane];
          float ly = RULER_HEIGHT - sy + lane->y;
          GdkRGBA hc = fg (self, 0.8f);
          if (hit.is_span)
            {
              double nspp = (double) (t1 - t0) / dw;
              float x, sw;
              span_px (hit.item, t0, nspp, dw, &x, &sw);
              gboolean range = hit.item->kind == COWSCOPE_ITEM_RANGE;
              float y = range ? RANGE_ROW_Y - 1 : EVENT_ROW_Y - 1;
              outline (snapshot, &hc, GUTTER_WIDTH + x - 1, ly + y,
                       sw + 2, range ? lane->height - RANGE_ROW_Y : EVENT_ROW_HEIGHT + 2, 1);
            }
          else
            outline (snapshot, &hc, GUTTER_WIDTH + hit.item->pixel - 2, ly + EVENT_ROW_Y - 1, 5,
                     (lane->kind == COWSCOPE_LANE_CUDA_STREAM ? lane->height - 2 * EVENT_ROW_Y
                                                             : EVENT_ROW_HEIGHT) + 2, 1);
        }
    }

  /* The cursor: the instant the sharing graph shows. */
  gint64 cursor = cowscope_view_state_get_cursor (self->state);
  if (cursor >= t0 && cursor <= t1)
    {
      double x = cowscope_timeline_view_time_to_x (self, cursor);
      rect (snapshot, &acc, (float) floor (x) - 1, 0, 2, h);
    }

  gtk_snapshot_push_clip (snapshot, &GRAPHENE_RECT_INIT (0, 0, w, RULER_HEIGHT));
  draw_ruler (self, snapshot, t0, t1, w);
  if (cursor >= t0 && cursor <= t1)
    {
      double x = cowscope_timeline_view_time_to_x (self, cursor);
      rect (snapshot, &acc, (float) floor (x) - 4, RULER_HEIGHT - 5, 8, 5);
    }
  gtk_snapshot_pop (snapshot);

  if (r0 >= 0 && r1 > r0 && r1 > t0 && r0 < t1)
    draw_totals (self, snapshot, cowscope_timeline_view_time_to_x (self, r0),
                 cowscope_timeline_view_time_to_x (self, r1), w, h, r0, r1);
}

/* ---- range totals (GTask thread) ----------------------------------------------------- */

typedef struct {
  GPtrArray *lanes;   /* CowscopeTimelineLane, thread lanes */
  gint64 t0, t1;
} TotalsJob;

/* Frees a TotalsJob. */
static void
totals_job_free (gpointer data)
{
  TotalsJob *job = data;
  g_ptr_array_unref (job->lanes);
  g_free (job);
}

/* Adds the items of [t0, t1) in @lane to @totals, refining every bucket
 * (several events in one pixel) with a finer query until single events
 * remain; a bucket of events sharing one nanosecond counts as its
 * dominant kind.  FALSE when cancelled. */
static gboolean
count_window (CowscopeTimelineLane *lane, gint64 t0, gint64 t1, guint width,
              CowscopeRangeTotals *totals, GCancellable *cancellable, guint depth)
{
  if (g_cancellable_is_cancelled (cancellable))
    return FALSE;
  g_autoptr (CowscopeTimelineWindow) win = cowscope_timeline_lane_query (lane, t0, t1, width);
  guint n;
  const CowscopeTimelineItem *items = cowscope_timeline_window_get_items (win, &n);
  for (guint i = 0; i < n; i++)
    {
      const CowscopeTimelineItem *it = &items[i];
      if (it->count > 1 && it->end_ns - it->start_ns > 1 && depth < 32)
        {
          guint sub = (guint) MIN ((guint64) it->count * 4, 65535);
          sub = (guint) MIN ((gint64) sub, it->end_ns - it->start_ns);
          if (!count_window (lane, it->start_ns, it->end_ns, MAX (sub, 2), totals, cancellable,
                             depth + 1))
            return FALSE;
          continue;
        }
      totals->events += it->count;
      switch (it->kind)
        {
        case COWSCOPE_ITEM_COPY:
          totals->copies += it->count;
          totals->bytes_copied += it->bytes;
          break;
        case COWSCOPE_ITEM_STEAL: totals->steals += it->count; break;
        case COWSCOPE_ITEM_LAZY_CLONE: totals->lazy_clones += it->count; break;
        default: break;
        }
    }
  return TRUE;
}

/* The GTask thread: counts the range over every thread lane. */
static void
totals_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  TotalsJob *job = task_data;
  CowscopeRangeTotals *totals = g_new0 (CowscopeRangeTotals, 1);
  for (guint i = 0; i < job->lanes->len; i++)
    if (!count_window (job->lanes->pdata[i], job->t0, job->t1, 4096, totals, cancellable, 0))
      {
        g_free (totals);
        g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED, "cancelled");
        return;
      }
  g_task_return_pointer (task, totals, g_free);
}

/* Back in the main thread: shows the totals (unless cancelled). */
static void
totals_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (source);
  g_autofree CowscopeRangeTotals *totals = g_task_propagate_pointer (G_TASK (result), NULL);
  if (totals == NULL)
    return;
  self->totals = *totals;
  self->totals_valid = TRUE;
  check_query_error (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Starts counting the view state's range in a thread (cancelling any
 * count still running). */
static gboolean
start_totals (gpointer user_data)
{
  CowscopeTimelineView *self = user_data;
  self->totals_source = 0;
  g_cancellable_cancel (self->totals_cancellable);
  g_clear_object (&self->totals_cancellable);
  self->totals_valid = FALSE;
  if (self->state == NULL || self->lanes == NULL)
    return G_SOURCE_REMOVE;
  gint64 r0 = cowscope_view_state_get_range_start (self->state);
  gint64 r1 = cowscope_view_state_get_range_end (self->state);
  if (r0 < 0 || r1 <= r0)
    return G_SOURCE_REMOVE;
  TotalsJob *job = g_new0 (TotalsJob, 1);
  job->lanes = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint i = 0; i < self->lanes->len; i++)
    {
      Lane *lane = self->lanes->pdata[i];
      if (lane->kind == COWSCOPE_LANE_THREAD)
        g_ptr_array_add (job->lanes, g_object_ref (lane->lane));
    }
  job->t0 = r0, job->t1 = r1;
  self->totals_cancellable = g_cancellable_new ();
  g_autoptr (GTask) task = g_task_new (self, self->totals_cancellable, totals_done, NULL);
  g_task_set_source_tag (task, start_totals);
  g_task_set_task_data (task, job, totals_job_free);
  g_task_run_in_thread (task, totals_thread);
  return G_SOURCE_REMOVE;
}

/* The range changed: recount soon (coalescing a drag's many changes). */
static void
range_changed (CowscopeTimelineView *self)
{
  self->totals_valid = FALSE;
  g_cancellable_cancel (self->totals_cancellable);
  if (self->totals_source == 0)
    self->totals_source = g_timeout_add (60, start_totals, self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* ---- navigation ------------------------------------------------------------------- */

/* Sets the visible window to [@t0, @t1) (the view state clamps it). */
static void
set_window (CowscopeTimelineView *self, gint64 t0, gint64 t1)
{
  if (self->state != NULL)
    cowscope_view_state_set_visible (self->state, t0, t1);
}

/* Zooms by @factor keeping the time at @anchor_x fixed. */
void
cowscope_timeline_view_zoom (CowscopeTimelineView *self, double factor, double anchor_x)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  gint64 t0, t1;
  if (!visible (self, &t0, &t1) || factor <= 0)
    return;
  double frac = CLAMP ((anchor_x - GUTTER_WIDTH) / data_width (self), 0.0, 1.0);
  double anchor = (double) t0 + frac * (double) (t1 - t0);
  double width = (double) (t1 - t0) / factor;
  gint64 n0 = (gint64) llround (anchor - frac * width);
  set_window (self, n0, n0 + MAX ((gint64) llround (width), 1));
}

/* The x to zoom around: the pointer when it is over the data, else the
 * centre of the data area. */
static double
zoom_anchor (CowscopeTimelineView *self)
{
  if (self->pointer_inside && self->pointer_x >= GUTTER_WIDTH)
    return self->pointer_x;
  return GUTTER_WIDTH + data_width (self) / 2.0;
}

/* Pans by @fraction of the visible width (negative: to the left). */
static void
pan (CowscopeTimelineView *self, double fraction)
{
  gint64 t0, t1;
  if (!visible (self, &t0, &t1))
    return;
  gint64 d = (gint64) llround (fraction * (double) (t1 - t0));
  set_window (self, t0 + d, t1 + d);
}

/* timeline.zoom-in / zoom-out / zoom-reset / pan-left / pan-right /
 * zoom-to-range / clear-range. */
static void
action_cb (GtkWidget *widget, const char *name, GVariant *param)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  if (self->state == NULL)
    return;
  if (g_str_equal (name, "timeline.zoom-in"))
    cowscope_timeline_view_zoom (self, ZOOM_STEP, zoom_anchor (self));
  else if (g_str_equal (name, "timeline.zoom-out"))
    cowscope_timeline_view_zoom (self, 1.0 / ZOOM_STEP, zoom_anchor (self));
  else if (g_str_equal (name, "timeline.zoom-reset"))
    {
      CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
      set_window (self, cowscope_session_document_get_start_ns (doc),
                  cowscope_session_document_get_end_ns (doc) + 1);
    }
  else if (g_str_equal (name, "timeline.pan-left"))
    pan (self, -PAN_STEP);
  else if (g_str_equal (name, "timeline.pan-right"))
    pan (self, PAN_STEP);
  else if (g_str_equal (name, "timeline.zoom-to-range"))
    {
      gint64 r0 = cowscope_view_state_get_range_start (self->state);
      gint64 r1 = cowscope_view_state_get_range_end (self->state);
      if (r0 >= 0 && r1 > r0)
        set_window (self, r0, r1);
    }
  else if (g_str_equal (name, "timeline.clear-range"))
    cowscope_view_state_set_range (self->state, -1, -1);
}

/* Selects what is at (x, y) and moves the cursor: a materialization or
 * event selects its seq and puts the cursor at its end; a user range
 * selects its time range; empty space moves only the cursor. */
void
cowscope_timeline_view_click (CowscopeTimelineView *self, double x, double y)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  if (self->state == NULL || x < GUTTER_WIDTH)
    return;
  Hit hit = hit_test (self, x, y);
  gint64 t = cowscope_timeline_view_x_to_time (self, x);
  if (hit.item != NULL)
    {
      Lane *lane = self->lanes->pdata[hit.lane];
      const CowscopeTimelineItem *it = hit.item;
      if (it->kind == COWSCOPE_ITEM_RANGE && hit.is_span)
        {
          cowscope_view_state_set_range (self->state, it->start_ns, it->end_ns);
          cowscope_view_state_set_cursor (self->state, t);
          return;
        }
      if (lane->kind == COWSCOPE_LANE_PROCESS && hit.is_span)
        {
          /* A limbo or held span: show the graph inside it. */
          cowscope_view_state_set_cursor (self->state, CLAMP (t, it->start_ns, it->end_ns));
          return;
        }
      if (it->count == 1
          && (lane->kind == COWSCOPE_LANE_THREAD || lane->kind == COWSCOPE_LANE_PROCESS))
        {
          cowscope_view_state_set_selected_seq (self->state, it->id);
          cowscope_view_state_set_cursor (self->state, it->end_ns);
          return;
        }
      if (it->count == 1)
        t = it->start_ns;
    }
  cowscope_view_state_set_cursor (self->state, t);
}

/* ---- input --------------------------------------------------------------------------- */

/* Scroll: Ctrl zooms around the pointer, Shift scrolls the lanes, plain
 * scrolling pans. */
static gboolean
scroll_cb (GtkEventControllerScroll *controller, double dx, double dy,
           CowscopeTimelineView *self)
{
  if (self->state == NULL)
    return FALSE;
  GdkModifierType mods =
    gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (controller));
  if (mods & GDK_CONTROL_MASK)
    {
      cowscope_timeline_view_zoom (self, pow (1.2, -dy), zoom_anchor (self));
      return TRUE;
    }
  if (mods & GDK_SHIFT_MASK)
    {
      if (self->vadjustment != NULL)
        gtk_adjustment_set_value (self->vadjustment,
                                  gtk_adjustment_get_value (self->vadjustment)
                                    + (dy != 0 ? dy : dx) * 40);
      return TRUE;
    }
  pan (self, (dx + dy) * 0.08);
  return TRUE;
}

/* Pointer motion: remembers it and redraws the hover. */
static void
motion_cb (GtkEventControllerMotion *controller, double x, double y,
           CowscopeTimelineView *self)
{
  self->pointer_inside = TRUE;
  self->pointer_x = x, self->pointer_y = y;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Pointer left: no hover. */
static void
leave_cb (GtkEventControllerMotion *controller, CowscopeTimelineView *self)
{
  self->pointer_inside = FALSE;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Press: a click, a pan or (on the ruler, or with Shift) a range. */
static void
drag_begin_cb (GtkGestureDrag *gesture, double x, double y, CowscopeTimelineView *self)
{
  gint64 t0, t1;
  if (!visible (self, &t0, &t1))
    {
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_DENIED);
      return;
    }
  gtk_widget_grab_focus (GTK_WIDGET (self));
  GdkModifierType mods =
    gtk_event_controller_get_current_event_state (GTK_EVENT_CONTROLLER (gesture));
  self->drag_mode = DRAG_PENDING;
  self->drag_range_start = y < RULER_HEIGHT || (mods & GDK_SHIFT_MASK) != 0;
  self->drag_x = x, self->drag_y = y;
  self->drag_t0 = t0, self->drag_t1 = t1;
}

/* Drag: pans the window or stretches the range. */
static void
drag_update_cb (GtkGestureDrag *gesture, double dx, double dy, CowscopeTimelineView *self)
{
  if (self->drag_mode == DRAG_NONE || self->state == NULL)
    return;
  if (self->drag_mode == DRAG_PENDING)
    {
      if (fabs (dx) + fabs (dy) < CLICK_SLOP)
        return;
      self->drag_mode = self->drag_range_start ? DRAG_RANGE : DRAG_PAN;
      gtk_gesture_set_state (GTK_GESTURE (gesture), GTK_EVENT_SEQUENCE_CLAIMED);
    }
  if (self->drag_mode == DRAG_PAN)
    {
      gint64 d = (gint64) llround (-dx * (double) (self->drag_t1 - self->drag_t0)
                                   / data_width (self));
      set_window (self, self->drag_t0 + d, self->drag_t1 + d);
    }
  else
    {
      gint64 a = cowscope_timeline_view_x_to_time (self, MAX (self->drag_x, GUTTER_WIDTH));
      gint64 b = cowscope_timeline_view_x_to_time (self, MAX (self->drag_x + dx, GUTTER_WIDTH));
      cowscope_view_state_set_range (self->state, MIN (a, b), MAX (a, b));
    }
}

/* Release: a press that did not move is a click. */
static void
drag_end_cb (GtkGestureDrag *gesture, double dx, double dy, CowscopeTimelineView *self)
{
  int mode = self->drag_mode;
  self->drag_mode = DRAG_NONE;
  if (mode == DRAG_PENDING)
    {
      if (self->drag_y < RULER_HEIGHT && self->state != NULL)
        cowscope_view_state_set_cursor (self->state,
                                        cowscope_timeline_view_x_to_time (self, self->drag_x));
      else
        cowscope_timeline_view_click (self, self->drag_x, self->drag_y);
    }
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Pinch begins: remember the window and the centre. */
static void
pinch_begin_cb (GtkGesture *gesture, GdkEventSequence *sequence, CowscopeTimelineView *self)
{
  double x, y;
  if (!visible (self, &self->pinch_t0, &self->pinch_t1)
      || !gtk_gesture_get_bounding_box_center (gesture, &x, &y))
    {
      gtk_gesture_set_state (gesture, GTK_EVENT_SEQUENCE_DENIED);
      return;
    }
  self->pinch_x = x;
}

/* Pinch: scale the window from where it began, around the centre. */
static void
pinch_scale_cb (GtkGestureZoom *gesture, double scale, CowscopeTimelineView *self)
{
  if (self->state == NULL || scale <= 0)
    return;
  double frac = CLAMP ((self->pinch_x - GUTTER_WIDTH) / data_width (self), 0.0, 1.0);
  double width = (double) (self->pinch_t1 - self->pinch_t0);
  double anchor = (double) self->pinch_t0 + frac * width;
  double nw = width / scale;
  gint64 n0 = (gint64) llround (anchor - frac * nw);
  set_window (self, n0, n0 + MAX ((gint64) llround (nw), 1));
}

/* Tooltip: what the pointer is over. */
static gboolean
query_tooltip_cb (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                  gpointer user_data)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  if (self->state == NULL || keyboard)
    return FALSE;
  Hit hit = hit_test (self, x, y);
  if (hit.lane < 0)
    return FALSE;
  Lane *lane = self->lanes->pdata[hit.lane];
  CowscopeSessionDocument *doc = cowscope_view_state_get_document (self->state);
  gint64 origin = cowscope_session_document_get_start_ns (doc);
  g_autofree char *text = NULL;
  if (hit.sample != NULL)
    {
      CowscopeCounterKind counter = cowscope_timeline_lane_get_counter (lane->lane);
      g_autofree char *at = format_duration (hit.sample->end_ns - origin);
      g_autofree char *last = format_counter (counter, hit.sample->last);
      g_autofree char *lo = format_counter (counter, hit.sample->min);
      g_autofree char *hi = format_counter (counter, hit.sample->max);
      text = g_strdup_printf (_("%s: %s at %s\n(%s to %s within this pixel)"),
                              cowscope_timeline_lane_get_title (lane->lane), last, at, lo, hi);
    }
  else if (hit.item != NULL)
    {
      const CowscopeTimelineItem *it = hit.item;
      g_autofree char *at = format_duration (it->start_ns - origin);
      if (it->count > 1)
        {
          g_autofree char *span = format_duration (it->end_ns - it->start_ns);
          g_autofree char *count = format_number (it->count);
          text = g_strdup_printf (ngettext ("%s event in %s at %s, mostly “%s”\nZoom in to see them",
                                            "%s events in %s at %s, mostly “%s”\nZoom in to see them",
                                            it->count),
                                  count, span, at, kind_name (it->kind));
        }
      else
        {
          GString *s = g_string_new (kind_name (it->kind));
          if (it->end_ns > it->start_ns)
            {
              g_autofree char *dur = format_duration (it->end_ns - it->start_ns);
              g_string_append_printf (s, _(", %s"), dur);
            }
          if (it->bytes > 0)
            {
              g_autofree char *bytes = g_format_size (it->bytes);
              g_string_append_printf (s, _(", %s"), bytes);
            }
          g_string_append_c (s, '\n');
          g_string_append_printf (s, _("At %s"), at);
          if (lane->kind == COWSCOPE_LANE_THREAD && it->kind != COWSCOPE_ITEM_RANGE)
            {
              g_autofree char *seq = format_number ((guint64) it->id);
              g_string_append_printf (s, _(" · event %s"), seq);
            }
          g_string_append_c (s, '\n');
          g_string_append (s, it->kind == COWSCOPE_ITEM_RANGE ? _("Click to select this range")
                                                              : _("Click to select"));
          text = g_string_free (s, FALSE);
        }
    }
  else
    return FALSE;
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

/* ---- GObject / GtkWidget ------------------------------------------------------------ */

/* The view state changed its window, cursor or selection: redraw (the
 * lane caches check their key themselves). */
static void
state_notify_cb (CowscopeViewState *state, GParamSpec *pspec, CowscopeTimelineView *self)
{
  if (g_str_has_prefix (pspec->name, "range-"))
    range_changed (self);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

static void
highlighted_found_cb (GObject *source, GAsyncResult *result, gpointer data)
{
  g_autoptr (GError) error = NULL;
  GArray *events = cowscope_object_events_find_finish (result, &error);
  if (events == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return; /* newer highlights, or the view went away */
  CowscopeTimelineView *self = data;
  if (events == NULL) /* outlines are a nicety: the graph still shows the objects */
    {
      g_warning ("Could not find the events of the highlighted objects: %s", error->message);
      events = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectEvent));
    }
  g_clear_object (&self->highlight_cancellable);
  g_clear_pointer (&self->highlighted, g_array_unref);
  self->highlighted = events;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Highlights changed: find the events they took part in, then outline them. */
static void
highlights_cb (CowscopeViewState *state, CowscopeTimelineView *self)
{
  g_cancellable_cancel (self->highlight_cancellable);
  g_clear_object (&self->highlight_cancellable);
  g_clear_pointer (&self->highlighted, g_array_unref);
  guint n = 0;
  const CowscopeObjectRef *refs = state != NULL ? cowscope_view_state_get_highlights (state, &n) : NULL;
  if (n > 0)
    {
      self->highlight_cancellable = g_cancellable_new ();
      cowscope_object_events_find_async (cowscope_view_state_get_document (state), refs, n,
                                         self->highlight_cancellable, highlighted_found_cb, self);
    }
  else
    self->highlighted = g_array_new (FALSE, FALSE, sizeof (CowscopeObjectEvent));
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* The theme switched between light and dark: redraw every lane. */
static void
dark_cb (AdwStyleManager *manager, GParamSpec *pspec, CowscopeTimelineView *self)
{
  self->dark = adw_style_manager_get_dark (manager);
  invalidate (self, TRUE);
}

/* The vertical scroll moved. */
static void
vadjustment_changed_cb (GtkAdjustment *adjustment, CowscopeTimelineView *self)
{
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

/* Replaces the vertical adjustment. */
static void
set_vadjustment (CowscopeTimelineView *self, GtkAdjustment *adjustment)
{
  if (self->vadjustment == adjustment)
    return;
  if (self->vadjustment != NULL)
    {
      g_signal_handlers_disconnect_by_func (self->vadjustment, vadjustment_changed_cb, self);
      g_clear_object (&self->vadjustment);
    }
  if (adjustment != NULL)
    {
      self->vadjustment = g_object_ref_sink (adjustment);
      g_signal_connect (adjustment, "value-changed", G_CALLBACK (vadjustment_changed_cb), self);
      update_adjustment (self);
    }
}

/* Replaces the (unused) horizontal adjustment. */
static void
set_hadjustment (CowscopeTimelineView *self, GtkAdjustment *adjustment)
{
  if (adjustment != NULL)
    {
      g_object_ref_sink (adjustment);
      gtk_adjustment_configure (adjustment, 0, 0, 0, 0, 0, 0);
    }
  g_clear_object (&self->hadjustment);
  self->hadjustment = adjustment;
}

/* Size request: as wide as the gutter plus a little, as tall as the lanes. */
static void
cowscope_timeline_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                                int *minimum, int *natural, int *min_baseline,
                                int *nat_baseline)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (widget);
  if (orientation == GTK_ORIENTATION_HORIZONTAL)
    *minimum = *natural = GUTTER_WIDTH + 120;
  else
    {
      *minimum = RULER_HEIGHT + 40;
      *natural = RULER_HEIGHT + MAX (self->content_height, 40);
    }
}

/* New size: the adjustment's page follows. */
static void
cowscope_timeline_view_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  update_adjustment (COWSCOPE_TIMELINE_VIEW (widget));
}

static void
cowscope_timeline_view_dispose (GObject *object)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (object);
  cowscope_timeline_view_set_view_state (self, NULL);
  g_clear_handle_id (&self->totals_source, g_source_remove);
  g_clear_handle_id (&self->query_error_source, g_source_remove);
  g_clear_pointer (&self->query_error, g_free);
  g_cancellable_cancel (self->totals_cancellable);
  g_clear_object (&self->totals_cancellable);
  g_cancellable_cancel (self->highlight_cancellable);
  g_clear_object (&self->highlight_cancellable);
  g_clear_pointer (&self->highlighted, g_array_unref);
  set_vadjustment (self, NULL);
  g_clear_object (&self->hadjustment);
  g_clear_object (&self->layout);
  g_signal_handlers_disconnect_by_func (adw_style_manager_get_default (), dark_cb, self);
  G_OBJECT_CLASS (cowscope_timeline_view_parent_class)->dispose (object);
}

static void
cowscope_timeline_view_get_property (GObject *object, guint prop_id, GValue *value,
                                     GParamSpec *pspec)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE: g_value_set_object (value, self->state); break;
    case PROP_HADJUSTMENT: g_value_set_object (value, self->hadjustment); break;
    case PROP_VADJUSTMENT: g_value_set_object (value, self->vadjustment); break;
    case PROP_HSCROLL_POLICY: g_value_set_enum (value, self->hscroll_policy); break;
    case PROP_VSCROLL_POLICY: g_value_set_enum (value, self->vscroll_policy); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_timeline_view_set_property (GObject *object, guint prop_id, const GValue *value,
                                     GParamSpec *pspec)
{
  CowscopeTimelineView *self = COWSCOPE_TIMELINE_VIEW (object);
  switch (prop_id)
    {
    case PROP_VIEW_STATE: cowscope_timeline_view_set_view_state (self, g_value_get_object (value)); break;
    case PROP_HADJUSTMENT: set_hadjustment (self, g_value_get_object (value)); break;
    case PROP_VADJUSTMENT: set_vadjustment (self, g_value_get_object (value)); break;
    case PROP_HSCROLL_POLICY: self->hscroll_policy = g_value_get_enum (value); break;
    case PROP_VSCROLL_POLICY: self->vscroll_policy = g_value_get_enum (value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

/* GtkScrollable: the default border is none. */
static gboolean
get_border (GtkScrollable *scrollable, GtkBorder *border)
{
  return FALSE;
}

static void
cowscope_timeline_view_scrollable_init (GtkScrollableInterface *iface)
{
  iface->get_border = get_border;
}

static void
cowscope_timeline_view_class_init (CowscopeTimelineViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = cowscope_timeline_view_dispose;
  object_class->get_property = cowscope_timeline_view_get_property;
  object_class->set_property = cowscope_timeline_view_set_property;
  widget_class->snapshot = cowscope_timeline_view_snapshot;
  widget_class->measure = cowscope_timeline_view_measure;
  widget_class->size_allocate = cowscope_timeline_view_size_allocate;

  /**
   * CowscopeTimelineView:view-state:
   *
   * The view state the timeline shows and changes, or %NULL (empty).
   */
  properties[PROP_VIEW_STATE] =
    g_param_spec_object ("view-state", NULL, NULL, COWSCOPE_TYPE_VIEW_STATE,
                         G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  /**
   * CowscopeTimelineView::query-error:
   * @message: why, for people
   *
   * Drawing (or counting a range) met a part of the session that cannot
   * be read, a damaged chunk of a lane: the timeline shows the rest.
   * Emitted once per document, from the main loop.
   */
  signals[QUERY_ERROR] = g_signal_new ("query-error", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                       0, NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_STRING);

  g_object_class_override_property (object_class, PROP_HADJUSTMENT, "hadjustment");
  g_object_class_override_property (object_class, PROP_VADJUSTMENT, "vadjustment");
  g_object_class_override_property (object_class, PROP_HSCROLL_POLICY, "hscroll-policy");
  g_object_class_override_property (object_class, PROP_VSCROLL_POLICY, "vscroll-policy");

  static const char *const actions[] = {
    "timeline.zoom-in", "timeline.zoom-out", "timeline.zoom-reset", "timeline.pan-left",
    "timeline.pan-right", "timeline.zoom-to-range", "timeline.clear-range",
  };
  for (guint i = 0; i < G_N_ELEMENTS (actions); i++)
    gtk_widget_class_install_action (widget_class, actions[i], NULL, action_cb);

  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_plus, 0, "timeline.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_equal, 0, "timeline.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Add, 0, "timeline.zoom-in", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_minus, 0, "timeline.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_Subtract, 0, "timeline.zoom-out", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_0, 0, "timeline.zoom-reset", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_KP_0, 0, "timeline.zoom-reset", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Left, 0, "timeline.pan-left", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Right, 0, "timeline.pan-right", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Return, 0, "timeline.zoom-to-range", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "timeline.clear-range", NULL);

  gtk_widget_class_set_css_name (widget_class, "cowscope-timeline");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_IMG);
}

static void
cowscope_timeline_view_init (CowscopeTimelineView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  gtk_widget_set_focusable (widget, TRUE);
  gtk_widget_set_focus_on_click (widget, TRUE);
  gtk_widget_set_overflow (widget, GTK_OVERFLOW_HIDDEN);
  gtk_widget_set_has_tooltip (widget, TRUE);
  gtk_widget_set_hexpand (widget, TRUE);
  gtk_widget_set_vexpand (widget, TRUE);
  self->cache_t0 = self->cache_t1 = -1;
  self->layout = gtk_widget_create_pango_layout (widget, NULL);
  {
    PangoAttrList *attrs = pango_attr_list_new ();
    pango_attr_list_insert (attrs, pango_attr_scale_new (0.85));
    pango_attr_list_insert (attrs, pango_attr_font_features_new ("tnum=1"));
    pango_layout_set_attributes (self->layout, attrs);
    pango_attr_list_unref (attrs);
  }

  AdwStyleManager *manager = adw_style_manager_get_default ();
  self->dark = adw_style_manager_get_dark (manager);
  self->cache_dark = self->dark;
  g_signal_connect (manager, "notify::dark", G_CALLBACK (dark_cb), self);

  g_signal_connect (widget, "query-tooltip", G_CALLBACK (query_tooltip_cb), NULL);

  GtkEventController *scroll =
    gtk_event_controller_scroll_new (GTK_EVENT_CONTROLLER_SCROLL_BOTH_AXES);
  g_signal_connect (scroll, "scroll", G_CALLBACK (scroll_cb), self);
  gtk_widget_add_controller (widget, scroll);

  GtkEventController *motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "enter", G_CALLBACK (motion_cb), self);
  g_signal_connect (motion, "motion", G_CALLBACK (motion_cb), self);
  g_signal_connect (motion, "leave", G_CALLBACK (leave_cb), self);
  gtk_widget_add_controller (widget, motion);

  GtkGesture *drag = gtk_gesture_drag_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), GDK_BUTTON_PRIMARY);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (drag_begin_cb), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (drag_update_cb), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (drag_end_cb), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));

  GtkGesture *pinch = gtk_gesture_zoom_new ();
  g_signal_connect (pinch, "begin", G_CALLBACK (pinch_begin_cb), self);
  g_signal_connect (pinch, "scale-changed", G_CALLBACK (pinch_scale_cb), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (pinch));
}

/* A new, empty timeline. */
GtkWidget *
cowscope_timeline_view_new (void)
{
  return g_object_new (COWSCOPE_TYPE_TIMELINE_VIEW, NULL);
}

/* The view state shown, or NULL. */
CowscopeViewState *
cowscope_timeline_view_get_view_state (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), NULL);
  return self->state;
}

/* Shows @state (NULL: nothing) and follows its changes. */
void
cowscope_timeline_view_set_view_state (CowscopeTimelineView *self, CowscopeViewState *state)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  g_return_if_fail (state == NULL || COWSCOPE_IS_VIEW_STATE (state));
  if (self->state == state)
    return;
  if (self->state != NULL)
    {
      g_signal_handlers_disconnect_by_data (self->state, self);
      g_clear_object (&self->state);
    }
  if (state != NULL)
    {
      self->state = g_object_ref (state);
      g_signal_connect (state, "notify", G_CALLBACK (state_notify_cb), self);
      g_signal_connect (state, "highlights-changed", G_CALLBACK (highlights_cb), self);
    }
  highlights_cb (state, self);
  self->cache_t0 = self->cache_t1 = -1;
  rebuild_lanes (self);
  range_changed (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_VIEW_STATE]);
}

/* The message of the last ::query-error, or NULL. */
const char *
cowscope_timeline_view_get_query_error (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), NULL);
  return self->query_error_source == 0 ? self->query_error : NULL;
}

/* Number of lanes shown. */
guint
cowscope_timeline_view_get_n_lanes (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  return self->lanes ? self->lanes->len : 0;
}

/* Lane @i (transfer none), or NULL. */
CowscopeTimelineLane *
cowscope_timeline_view_get_lane (CowscopeTimelineView *self, guint i)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), NULL);
  if (self->lanes == NULL || i >= self->lanes->len)
    return NULL;
  return ((Lane *) self->lanes->pdata[i])->lane;
}

/* Widget y and height of lane @i (0, 0 when there is none). */
void
cowscope_timeline_view_get_lane_area (CowscopeTimelineView *self, guint i, int *y, int *height)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  int ly = 0, lh = 0;
  if (self->lanes != NULL && i < self->lanes->len)
    {
      Lane *lane = self->lanes->pdata[i];
      ly = RULER_HEIGHT + lane->y - scroll_y (self);
      lh = lane->height;
    }
  if (y != NULL)
    *y = ly;
  if (height != NULL)
    *height = lh;
}

/* The range totals, when counted. */
gboolean
cowscope_timeline_view_get_range_totals (CowscopeTimelineView *self, CowscopeRangeTotals *totals)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), FALSE);
  if (!self->totals_valid)
    return FALSE;
  if (totals != NULL)
    *totals = self->totals;
  return TRUE;
}

/* The colour of @kind in the current theme. */
void
cowscope_timeline_view_get_kind_color (CowscopeTimelineView *self, CowscopeItemKind kind,
                                       GdkRGBA *color)
{
  g_return_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self));
  g_return_if_fail (kind < COWSCOPE_N_ITEM_KINDS);
  color_from (kind_colors[kind][self->dark], color);
}

/* The events outlined for the highlighted objects; FALSE while finding. */
gboolean
cowscope_timeline_view_get_n_highlighted (CowscopeTimelineView *self, guint *n_events)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), FALSE);
  if (self->highlighted == NULL)
    return FALSE;
  *n_events = self->highlighted->len;
  return TRUE;
}

/* How many snapshots drew a session. */
guint
cowscope_timeline_view_get_frame_count (CowscopeTimelineView *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_VIEW (self), 0);
  return self->frame_count;
}
