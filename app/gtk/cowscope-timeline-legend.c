/* cowscope-timeline-legend.c — see cowscope-timeline-legend.h. */
#include "cowscope-config.h"

#include <glib/gi18n.h>

#include "cowscope-timeline-legend.h"

#include "cowscope-timeline-format.h"

/* Where an entry's colour comes from in the palette. */
typedef enum {
  FROM_KIND,
  FROM_COUNTER,
  FROM_ACCENT,
  FROM_HIGHLIGHT,
} Source;

typedef struct {
  const char *group;   /* starts a group: its heading */
  gboolean new_column; /* the group starts the second column */
  Source source;
  int index;           /* kind or counter */
  const char *name;    /* NULL: the kind's own name */
} Entry;

static const Entry entries[] = {
  { N_("Copies and Sharing"), FALSE, FROM_KIND, COWSCOPE_ITEM_COPY, NULL },
  { NULL, FALSE, FROM_KIND, COWSCOPE_ITEM_STEAL, NULL },
  { NULL, FALSE, FROM_KIND, COWSCOPE_ITEM_EAGER_COPY, NULL },
  { NULL, FALSE, FROM_KIND, COWSCOPE_ITEM_MATERIALIZE_FAILED, NULL },
  { NULL, FALSE, FROM_KIND, COWSCOPE_ITEM_LAZY_CLONE, NULL },
  { NULL, FALSE, FROM_KIND, COWSCOPE_ITEM_VIOLATION, NULL },
  { N_("Program"), FALSE, FROM_KIND, COWSCOPE_ITEM_RANGE, NULL },
  { NULL, FALSE, FROM_KIND, COWSCOPE_ITEM_MARK, NULL },
  { NULL, FALSE, FROM_KIND, COWSCOPE_ITEM_OTHER, N_("Other events (allocations, tensors…)") },
  { N_("Processes"), TRUE, FROM_KIND, COWSCOPE_ITEM_IPC, NULL },
  { NULL, FALSE, FROM_KIND, COWSCOPE_ITEM_IPC_LIMBO, NULL },
  { NULL, FALSE, FROM_KIND, COWSCOPE_ITEM_IPC_HELD, NULL },
  { N_("CUDA"), FALSE, FROM_KIND, COWSCOPE_ITEM_CUDA_MEMCPY, NULL },
  { NULL, FALSE, FROM_KIND, COWSCOPE_ITEM_CUDA_MEMSET, NULL },
  { NULL, FALSE, FROM_KIND, COWSCOPE_ITEM_CUDA_KERNEL, NULL },
  { NULL, FALSE, FROM_KIND, COWSCOPE_ITEM_CUDA_OTHER, NULL },
  { N_("Counters"), FALSE, FROM_COUNTER, COWSCOPE_COUNTER_BYTES_ALLOCATED, N_("Bytes allocated") },
  { NULL, FALSE, FROM_COUNTER, COWSCOPE_COUNTER_BYTES_SHARED, N_("Bytes shared lazily") },
  { NULL, FALSE, FROM_COUNTER, COWSCOPE_COUNTER_LIVE_STORAGES, N_("Live storages") },
  { N_("Marks"), FALSE, FROM_ACCENT, 0, N_("Cursor (the graph’s instant), selected range") },
  { NULL, FALSE, FROM_HIGHLIGHT, 0, N_("Events of the highlighted objects") },
};

struct _CowscopeTimelineLegend {
  GtkWidget parent_instance;
  GtkWidget *grid;   /* a box of the two columns' grids */
  CowscopeTimelinePalette palette;
};

G_DEFINE_FINAL_TYPE (CowscopeTimelineLegend, cowscope_timeline_legend, GTK_TYPE_WIDGET)

static GdkRGBA
entry_color (CowscopeTimelineLegend *self, const Entry *e)
{
  switch (e->source)
    {
    case FROM_KIND: return self->palette.kinds[e->index];
    case FROM_COUNTER: return self->palette.counters[e->index];
    case FROM_ACCENT: return self->palette.accent;
    case FROM_HIGHLIGHT:
    default: return self->palette.highlight;
    }
}

static const char *
entry_name (const Entry *e)
{
  return e->name != NULL ? _(e->name)
                         : cowscope_timeline_format_kind_name ((CowscopeItemKind) e->index);
}

/* A swatch: the entry's colour in a small rounded square. */
static void
draw_swatch (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  CowscopeTimelineLegend *self =
    COWSCOPE_TIMELINE_LEGEND (gtk_widget_get_ancestor (GTK_WIDGET (area),
                                                       COWSCOPE_TYPE_TIMELINE_LEGEND));
  GdkRGBA color = entry_color (self, &entries[GPOINTER_TO_UINT (data)]);
  GdkRGBA edge = cowscope_timeline_palette_fg (&self->palette, 0.3f);
  cairo_rectangle (cr, 1.5, 1.5, width - 3, height - 3);
  gdk_cairo_set_source_rgba (cr, &color);
  cairo_fill_preserve (cr);
  gdk_cairo_set_source_rgba (cr, &edge);
  cairo_set_line_width (cr, 1);
  cairo_stroke (cr);
}

static void
cowscope_timeline_legend_css_changed (GtkWidget *widget, GtkCssStyleChange *change)
{
  CowscopeTimelineLegend *self = COWSCOPE_TIMELINE_LEGEND (widget);
  GTK_WIDGET_CLASS (cowscope_timeline_legend_parent_class)->css_changed (widget, change);
  cowscope_timeline_palette_lookup (&self->palette, widget);
  for (GtkWidget *column = gtk_widget_get_first_child (self->grid); column != NULL;
       column = gtk_widget_get_next_sibling (column))
    for (GtkWidget *child = gtk_widget_get_first_child (column); child != NULL;
         child = gtk_widget_get_next_sibling (child))
      if (GTK_IS_DRAWING_AREA (child))
        gtk_widget_queue_draw (child);
}

static void
cowscope_timeline_legend_dispose (GObject *object)
{
  CowscopeTimelineLegend *self = COWSCOPE_TIMELINE_LEGEND (object);
  g_clear_pointer (&self->grid, gtk_widget_unparent);
  G_OBJECT_CLASS (cowscope_timeline_legend_parent_class)->dispose (object);
}

static void
cowscope_timeline_legend_class_init (CowscopeTimelineLegendClass *klass)
{
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  G_OBJECT_CLASS (klass)->dispose = cowscope_timeline_legend_dispose;
  widget_class->css_changed = cowscope_timeline_legend_css_changed;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "cowscope-timeline-legend");
}

/* Two columns of groups (each its own grid, so that one's headings do not
 * space the other's rows), each group a heading and its swatches. */
static void
cowscope_timeline_legend_init (CowscopeTimelineLegend *self)
{
  cowscope_timeline_palette_lookup (&self->palette, GTK_WIDGET (self));
  self->grid = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 24);
  gtk_widget_set_parent (self->grid, GTK_WIDGET (self));
  GtkWidget *column = NULL;
  int row = 0;
  for (guint i = 0; i < G_N_ELEMENTS (entries); i++)
    {
      const Entry *e = &entries[i];
      if (column == NULL || e->new_column)
        {
          column = gtk_grid_new ();
          gtk_grid_set_column_spacing (GTK_GRID (column), 6);
          gtk_grid_set_row_spacing (GTK_GRID (column), 3);
          gtk_widget_set_valign (column, GTK_ALIGN_START);
          gtk_box_append (GTK_BOX (self->grid), column);
          row = 0;
        }
      if (e->group != NULL)
        {
          GtkWidget *heading = gtk_label_new (_(e->group));
          gtk_label_set_xalign (GTK_LABEL (heading), 0);
          gtk_widget_add_css_class (heading, "heading");
          gtk_widget_set_margin_top (heading, row > 0 ? 6 : 0);
          gtk_grid_attach (GTK_GRID (column), heading, 0, row++, 2, 1);
        }
      GtkWidget *swatch = gtk_drawing_area_new ();
      gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (swatch), 14);
      gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (swatch), 14);
      gtk_widget_set_valign (swatch, GTK_ALIGN_CENTER);
      gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (swatch), draw_swatch,
                                      GUINT_TO_POINTER (i), NULL);
      GtkWidget *label = gtk_label_new (entry_name (e));
      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_grid_attach (GTK_GRID (column), swatch, 0, row, 1, 1);
      gtk_grid_attach (GTK_GRID (column), label, 1, row++, 1, 1);
    }
}

GtkWidget *
cowscope_timeline_legend_new (void)
{
  return g_object_new (COWSCOPE_TYPE_TIMELINE_LEGEND, NULL);
}

guint
cowscope_timeline_legend_get_n_entries (CowscopeTimelineLegend *self)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LEGEND (self), 0);
  return G_N_ELEMENTS (entries);
}

const char *
cowscope_timeline_legend_get_entry (CowscopeTimelineLegend *self, guint i, GdkRGBA *color)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LEGEND (self), NULL);
  g_return_val_if_fail (i < G_N_ELEMENTS (entries), NULL);
  if (color != NULL)
    *color = entry_color (self, &entries[i]);
  return entry_name (&entries[i]);
}

int
cowscope_timeline_legend_get_entry_kind (CowscopeTimelineLegend *self, guint i)
{
  g_return_val_if_fail (COWSCOPE_IS_TIMELINE_LEGEND (self), -1);
  g_return_val_if_fail (i < G_N_ELEMENTS (entries), -1);
  return entries[i].source == FROM_KIND ? entries[i].index : -1;
}
