/* cowscope-graph-legend.c — see cowscope-graph-legend.h. */
#include "cowscope-config.h"

#include <adwaita.h>
#include <glib/gi18n.h>

#include "cowscope-graph-legend.h"
#include "cowscope-graph-render.h"

#define SWATCH_WIDTH 28
#define SWATCH_HEIGHT 14

struct _CowscopeGraphLegend {
  GtkWidget parent_instance;
  GtkWidget *scroller;
};

G_DEFINE_FINAL_TYPE (CowscopeGraphLegend, cowscope_graph_legend, GTK_TYPE_WIDGET)

/* Draws one entry's sample; the entry index is the area's data. */
static void
draw_swatch (GtkDrawingArea *area, cairo_t *cr, int width, int height, gpointer data)
{
  gboolean dark = adw_style_manager_get_dark (adw_style_manager_get_default ());
  cowscope_graph_render_legend_swatch (cr, GPOINTER_TO_UINT (data), 1, 1, width - 2, height - 2,
                                       dark);
}

static void
dark_changed_cb (AdwStyleManager *manager, GParamSpec *pspec, CowscopeGraphLegend *self)
{
  GtkWidget *box = gtk_scrolled_window_get_child (GTK_SCROLLED_WINDOW (self->scroller));
  for (GtkWidget *row = gtk_widget_get_first_child (box); row != NULL;
       row = gtk_widget_get_next_sibling (row))
    for (GtkWidget *child = gtk_widget_get_first_child (row); child != NULL;
         child = gtk_widget_get_next_sibling (child))
      if (GTK_IS_DRAWING_AREA (child))
        gtk_widget_queue_draw (child);
}

/* A dim caption over a group of rows. */
static GtkWidget *
heading (const char *text)
{
  GtkWidget *label = gtk_label_new (text);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_add_css_class (label, "caption-heading");
  gtk_widget_add_css_class (label, "dim-label");
  gtk_widget_set_margin_top (label, 6);
  return label;
}

static void
cowscope_graph_legend_dispose (GObject *object)
{
  CowscopeGraphLegend *self = COWSCOPE_GRAPH_LEGEND (object);
  g_signal_handlers_disconnect_by_func (adw_style_manager_get_default (), dark_changed_cb, self);
  g_clear_pointer (&self->scroller, gtk_widget_unparent);
  G_OBJECT_CLASS (cowscope_graph_legend_parent_class)->dispose (object);
}

static void
cowscope_graph_legend_class_init (CowscopeGraphLegendClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = cowscope_graph_legend_dispose;
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (widget_class, "cowscope-graph-legend");
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void
cowscope_graph_legend_init (CowscopeGraphLegend *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 4);

  gtk_widget_set_margin_start (box, 10);
  gtk_widget_set_margin_end (box, 10);
  gtk_widget_set_margin_bottom (box, 8);
  for (guint i = 0; i < cowscope_graph_legend_get_n_entries (); i++)
    {
      GtkWidget *row = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
      GtkWidget *swatch = gtk_drawing_area_new ();
      GtkWidget *label = gtk_label_new (cowscope_graph_legend_get_entry_name (i));

      if (i == 0)
        gtk_box_append (GTK_BOX (box), heading (_("Objects")));
      else if (cowscope_graph_legend_entry_is_edge (i) && !cowscope_graph_legend_entry_is_edge (i - 1))
        gtk_box_append (GTK_BOX (box), heading (_("Links")));
      gtk_drawing_area_set_content_width (GTK_DRAWING_AREA (swatch), SWATCH_WIDTH);
      gtk_drawing_area_set_content_height (GTK_DRAWING_AREA (swatch), SWATCH_HEIGHT);
      gtk_drawing_area_set_draw_func (GTK_DRAWING_AREA (swatch), draw_swatch,
                                      GUINT_TO_POINTER (i), NULL);
      gtk_widget_set_valign (swatch, GTK_ALIGN_CENTER);
      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_widget_add_css_class (label, "caption");
      gtk_box_append (GTK_BOX (row), swatch);
      gtk_box_append (GTK_BOX (row), label);
      gtk_box_append (GTK_BOX (box), row);
    }

  self->scroller = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (self->scroller), GTK_POLICY_NEVER,
                                  GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_propagate_natural_height (GTK_SCROLLED_WINDOW (self->scroller), TRUE);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->scroller), box);
  gtk_widget_set_parent (self->scroller, GTK_WIDGET (self));
  gtk_accessible_update_property (GTK_ACCESSIBLE (self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Graph legend"), -1);
  g_signal_connect (adw_style_manager_get_default (), "notify::dark",
                    G_CALLBACK (dark_changed_cb), self);
}

GtkWidget *
cowscope_graph_legend_new (void)
{
  return g_object_new (COWSCOPE_TYPE_GRAPH_LEGEND, NULL);
}
