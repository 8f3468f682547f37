/* cowscope-timeline-palette.c — the timeline's named colours (see
 * header; the values are in style.css and style-dark.css). */
#include "cowscope-timeline-palette.h"

#include <string.h>

/* The style sheets' name of each item kind's colour. */
static const char *const kind_names[COWSCOPE_N_ITEM_KINDS] = {
  [COWSCOPE_ITEM_OTHER] = "timeline_other_color",
  [COWSCOPE_ITEM_ALLOCATION] = "timeline_allocation_color",
  [COWSCOPE_ITEM_FREE] = "timeline_free_color",
  [COWSCOPE_ITEM_STORAGE] = "timeline_storage_color",
  [COWSCOPE_ITEM_TENSOR] = "timeline_tensor_color",
  [COWSCOPE_ITEM_CONTEXT] = "timeline_context_color",
  [COWSCOPE_ITEM_LAZY_CLONE] = "timeline_lazy_clone_color",
  [COWSCOPE_ITEM_EAGER_COPY] = "timeline_eager_copy_color",
  [COWSCOPE_ITEM_MATERIALIZE_BEGIN] = "timeline_materialize_begin_color",
  [COWSCOPE_ITEM_COPY] = "timeline_copy_color",
  [COWSCOPE_ITEM_STEAL] = "timeline_steal_color",
  [COWSCOPE_ITEM_MATERIALIZE_FAILED] = "timeline_materialize_failed_color",
  [COWSCOPE_ITEM_VIOLATION] = "timeline_violation_color",
  [COWSCOPE_ITEM_RANGE] = "timeline_range_color",
  [COWSCOPE_ITEM_MARK] = "timeline_mark_color",
  [COWSCOPE_ITEM_IPC] = "timeline_ipc_color",
  [COWSCOPE_ITEM_CUDA_MEMCPY] = "timeline_cuda_memcpy_color",
  [COWSCOPE_ITEM_CUDA_MEMSET] = "timeline_cuda_memset_color",
  [COWSCOPE_ITEM_CUDA_KERNEL] = "timeline_cuda_kernel_color",
  [COWSCOPE_ITEM_CUDA_OTHER] = "timeline_cuda_other_color",
  [COWSCOPE_ITEM_IPC_LIMBO] = "timeline_ipc_limbo_color",
  [COWSCOPE_ITEM_IPC_HELD] = "timeline_ipc_held_color",
};

static const char *const counter_names[COWSCOPE_N_COUNTERS] = {
  [COWSCOPE_COUNTER_BYTES_ALLOCATED] = "timeline_bytes_allocated_color",
  [COWSCOPE_COUNTER_BYTES_SHARED] = "timeline_bytes_shared_color",
  [COWSCOPE_COUNTER_LIVE_STORAGES] = "timeline_live_storages_color",
};

/* Looks @name up in @context into @color (grey when undefined). */
static void
lookup (GtkStyleContext *context, const char *name, GdkRGBA *color)
{
  if (!gtk_style_context_lookup_color (context, name, color))
    {
      g_debug ("The style sheets define no colour @%s", name);
      *color = (GdkRGBA) { 0.5f, 0.5f, 0.5f, 1.0f };
    }
}

void
cowscope_timeline_palette_lookup (CowscopeTimelinePalette *palette, GtkWidget *widget)
{
  g_return_if_fail (palette != NULL);
  g_return_if_fail (GTK_IS_WIDGET (widget));
  GtkStyleContext *context = gtk_widget_get_style_context (widget);
  for (guint k = 0; k < COWSCOPE_N_ITEM_KINDS; k++)
    lookup (context, kind_names[k], &palette->kinds[k]);
  for (guint c = 0; c < COWSCOPE_N_COUNTERS; c++)
    lookup (context, counter_names[c], &palette->counters[c]);
  lookup (context, "timeline_fg_color", &palette->foreground);
  lookup (context, "timeline_ruler_bg_color", &palette->ruler);
  lookup (context, "timeline_gutter_bg_color", &palette->gutter);
  lookup (context, "timeline_process_gutter_bg_color", &palette->process_gutter);
  lookup (context, "timeline_overlay_bg_color", &palette->overlay);
  lookup (context, "timeline_label_backdrop_color", &palette->label_backdrop);
  lookup (context, "timeline_accent_color", &palette->accent);
  lookup (context, "timeline_highlight_color", &palette->highlight);
}

gboolean
cowscope_timeline_palette_equal (const CowscopeTimelinePalette *a,
                                 const CowscopeTimelinePalette *b)
{
  /* Plain floats, no padding: comparing the bytes compares the colours. */
  return memcmp (a, b, sizeof *a) == 0;
}

GdkRGBA
cowscope_timeline_palette_fg (const CowscopeTimelinePalette *palette, float alpha)
{
  return cowscope_rgba_with_alpha (&palette->foreground, alpha);
}

GdkRGBA
cowscope_rgba_with_alpha (const GdkRGBA *color, float alpha)
{
  GdkRGBA c = *color;
  c.alpha *= alpha;
  return c;
}
