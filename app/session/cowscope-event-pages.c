/* cowscope-event-pages.c — see cowscope-event-pages.h. */
#include "cowscope-event-pages.h"

#include "cowscope-event-item.h"

#define MAX_PAGES 256     /* cached: 32 Ki rows, a few MB */
#define MAX_IN_FLIGHT 2   /* worker tasks reading pages at once */
#define MAX_WAITING 16    /* pages queued; older asks are dropped */

typedef struct {
  guint index;
  GPtrArray *items;       /* CowscopeEventItem, placeholders until read */
  guint64 used;           /* the pages' clock when last asked for */
  gboolean loaded;
  gboolean in_flight;
} Page;

struct _CowscopeEventPages {
  GObject parent_instance;
  CowscopeEventList *list;
  GHashTable *pages;      /* page index -> Page */
  guint64 clock;
  guint generation;       /* bumped when the list changes */
  GQueue waiting;         /* page indexes + 1, most recent first */
  guint in_flight;
  guint n_items;          /* as told in items-changed (may lag the list's) */
  GCancellable *cancellable;
};

enum { PROP_0, PROP_N_PENDING, N_PROPS };
static GParamSpec *properties[N_PROPS];

static void list_model_iface_init (GListModelInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (CowscopeEventPages, cowscope_event_pages, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (G_TYPE_LIST_MODEL, list_model_iface_init))

static void
page_free (gpointer data)
{
  Page *page = data;
  g_ptr_array_unref (page->items);
  g_free (page);
}

/* ---- reading pages in a worker ---- */

typedef struct {
  CowscopeSessionDocument *document;
  GArray *seqs;           /* the page's seqs, or NULL: read by position */
  guint offset, n;
  guint generation, index;
} PageRead;

static void
page_read_free (gpointer data)
{
  PageRead *r = data;
  g_object_unref (r->document);
  g_clear_pointer (&r->seqs, g_array_unref);
  g_free (r);
}

static void
read_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  (void) source;
  PageRead *r = task_data;
  GError *error = NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  GPtrArray *rows = cowscope_event_list_read_rows (
    r->document, r->seqs != NULL ? (const gint64 *) (gpointer) r->seqs->data : NULL, r->n, r->offset,
    &error);
  if (rows == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, rows, (GDestroyNotify) g_ptr_array_unref);
}

static void dispatch (CowscopeEventPages *self);

static void
notify_pending (CowscopeEventPages *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_N_PENDING]);
}

static void
read_done (GObject *source, GAsyncResult *result, gpointer data)
{
  (void) data;
  CowscopeEventPages *self = COWSCOPE_EVENT_PAGES (source);
  PageRead *r = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) rows = g_task_propagate_pointer (G_TASK (result), &error);
  self->in_flight--;
  Page *page = r->generation == self->generation
                 ? g_hash_table_lookup (self->pages, GUINT_TO_POINTER (r->index))
                 : NULL;
  if (page != NULL)
    {
      page->in_flight = FALSE;
      if (rows != NULL)
        {
          /* Rows come in the page's order; a seq the file lacks is
           * skipped, and its placeholder stays one. */
          guint k = 0;
          for (guint i = 0; i < page->items->len && k < rows->len; i++)
            {
              CowscopeEventItem *item = page->items->pdata[i];
              CowscopeEventItem *row = rows->pdata[k];
              if (r->seqs == NULL || cowscope_event_item_get_seq (item) == cowscope_event_item_get_seq (row))
                {
                  cowscope_event_item_fill (item, row);
                  k++;
                }
            }
          page->loaded = TRUE;
        }
      else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_warning ("%s", error->message);
          page->loaded = TRUE; /* no retry loop on a broken file */
        }
    }
  if (!g_cancellable_is_cancelled (self->cancellable))
    dispatch (self);
  notify_pending (self);
}

/* Starts reads for the most recently asked pages, up to MAX_IN_FLIGHT. */
static void
dispatch (CowscopeEventPages *self)
{
  CowscopeSessionDocument *document = cowscope_event_list_get_document (self->list);
  while (self->in_flight < MAX_IN_FLIGHT && !g_queue_is_empty (&self->waiting))
    {
      guint index = GPOINTER_TO_UINT (g_queue_pop_head (&self->waiting)) - 1;
      Page *page = g_hash_table_lookup (self->pages, GUINT_TO_POINTER (index));
      if (page == NULL || page->loaded || page->in_flight)
        continue;
      PageRead *r = g_new0 (PageRead, 1);
      r->document = g_object_ref (document);
      r->offset = index * COWSCOPE_EVENT_PAGE_ROWS;
      r->n = page->items->len;
      r->generation = self->generation;
      r->index = index;
      if (cowscope_event_list_get_seq (self->list, r->offset) >= 0)
        {
          r->seqs = g_array_sized_new (FALSE, FALSE, sizeof (gint64), r->n);
          for (guint i = 0; i < r->n; i++)
            {
              gint64 seq = cowscope_event_item_get_seq (page->items->pdata[i]);
              g_array_append_val (r->seqs, seq);
            }
        }
      page->in_flight = TRUE;
      self->in_flight++;
      GTask *task = g_task_new (self, self->cancellable, read_done, NULL);
      g_task_set_source_tag (task, dispatch);
      g_task_set_task_data (task, r, page_read_free);
      g_task_run_in_thread (task, read_thread);
      g_object_unref (task);
    }
}

/* Drops the least recently asked page that is not being read. */
static void
evict_one (CowscopeEventPages *self)
{
  GHashTableIter iter;
  gpointer key, value;
  Page *oldest = NULL;
  g_hash_table_iter_init (&iter, self->pages);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      Page *page = value;
      if (!page->in_flight && (oldest == NULL || page->used < oldest->used))
        oldest = page;
    }
  if (oldest != NULL)
    {
      g_queue_remove (&self->waiting, GUINT_TO_POINTER (oldest->index + 1));
      g_hash_table_remove (self->pages, GUINT_TO_POINTER (oldest->index));
    }
}

/* The page of row @position, made of placeholders and queued if new. */
static Page *
page_at (CowscopeEventPages *self, guint position)
{
  guint index = position / COWSCOPE_EVENT_PAGE_ROWS;
  Page *page = g_hash_table_lookup (self->pages, GUINT_TO_POINTER (index));
  if (page == NULL)
    {
      if (g_hash_table_size (self->pages) >= MAX_PAGES)
        evict_one (self);
      guint n_items = self->n_items;
      guint start = index * COWSCOPE_EVENT_PAGE_ROWS;
      guint n = MIN (COWSCOPE_EVENT_PAGE_ROWS, n_items - start);
      page = g_new0 (Page, 1);
      page->index = index;
      page->items = g_ptr_array_new_full (n, g_object_unref);
      for (guint i = 0; i < n; i++)
        g_ptr_array_add (page->items,
                         cowscope_event_item_new_placeholder (cowscope_event_list_get_seq (self->list, start + i)));
      g_hash_table_insert (self->pages, GUINT_TO_POINTER (index), page);
      /* A view scrolled far away no longer waits for its oldest asks. */
      g_queue_push_head (&self->waiting, GUINT_TO_POINTER (index + 1));
      while (g_queue_get_length (&self->waiting) > MAX_WAITING)
        {
          guint dropped = GPOINTER_TO_UINT (g_queue_pop_tail (&self->waiting)) - 1;
          Page *old = g_hash_table_lookup (self->pages, GUINT_TO_POINTER (dropped));
          if (old != NULL && !old->loaded && !old->in_flight)
            g_hash_table_remove (self->pages, GUINT_TO_POINTER (dropped));
        }
      /* No notify here: get_item() runs inside a view's layout. */
      dispatch (self);
    }
  page->used = ++self->clock;
  return page;
}

/* ---- GListModel ---- */

static GType
get_item_type (GListModel *model)
{
  (void) model;
  return COWSCOPE_TYPE_EVENT_ITEM;
}

static guint
get_n_items (GListModel *model)
{
  return COWSCOPE_EVENT_PAGES (model)->n_items;
}

static gpointer
get_item (GListModel *model, guint position)
{
  CowscopeEventPages *self = COWSCOPE_EVENT_PAGES (model);
  if (position >= get_n_items (model))
    return NULL;
  Page *page = page_at (self, position);
  return g_object_ref (page->items->pdata[position % COWSCOPE_EVENT_PAGE_ROWS]);
}

static void
list_model_iface_init (GListModelInterface *iface)
{
  iface->get_item_type = get_item_type;
  iface->get_n_items = get_n_items;
  iface->get_item = get_item;
}

static int
page_more_recent (gconstpointer a, gconstpointer b)
{
  const Page *x = *(Page *const *) a, *y = *(Page *const *) b;
  return x->used < y->used ? 1 : x->used > y->used ? -1 : 0;
}

/* The list took a new order of the same rows.  Row i is now another
 * event, but the view needs no items-changed: the cached row objects
 * become placeholders for their new seqs and are read again, the most
 * recently shown first.  (An items-changed over ten million rows costs
 * GTK 4.8's list view a node per row, seconds on the main thread.)
 * Pages beyond those few are dropped. */
static void
reorder_in_place (CowscopeEventPages *self)
{
  self->generation++;
  g_queue_clear (&self->waiting);
  g_autoptr (GPtrArray) pages = g_ptr_array_new ();
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init (&iter, self->pages);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (pages, value);
  g_ptr_array_sort (pages, page_more_recent);
  for (guint p = 0; p < pages->len; p++)
    {
      Page *page = pages->pdata[p];
      if (p >= MAX_WAITING)
        {
          g_hash_table_remove (self->pages, GUINT_TO_POINTER (page->index));
          continue;
        }
      page->loaded = FALSE;
      page->in_flight = FALSE; /* a read under way is for the old order */
      guint start = page->index * COWSCOPE_EVENT_PAGE_ROWS;
      for (guint i = 0; i < page->items->len; i++)
        cowscope_event_item_reset (page->items->pdata[i], cowscope_event_list_get_seq (self->list, start + i));
      g_queue_push_tail (&self->waiting, GUINT_TO_POINTER (page->index + 1));
    }
  dispatch (self);
  notify_pending (self);
}

/* The list took a new order or filter: every cached row is stale. */
static void
list_changed_cb (GListModel *list, guint position, guint removed, guint added,
                 CowscopeEventPages *self)
{
  (void) list;
  if (position == 0 && removed == self->n_items && added == removed)
    {
      reorder_in_place (self);
      return;
    }
  self->generation++;
  g_hash_table_remove_all (self->pages);
  g_queue_clear (&self->waiting);
  /* Told as one change, GTK 4.8's list item manager looks for each row
   * widget's old item among all the added rows (one get_item() each, ten
   * million for a sort); told as a removal and then an addition, it
   * looks at none and makes the few rows in view afresh. */
  if (removed > 0 && added > 0)
    {
      self->n_items -= removed;
      g_list_model_items_changed (G_LIST_MODEL (self), position, removed, 0);
      removed = 0;
    }
  self->n_items = self->n_items - removed + added;
  g_list_model_items_changed (G_LIST_MODEL (self), position, removed, added);
  notify_pending (self);
}

/* ---- GObject ---- */

static void
cowscope_event_pages_dispose (GObject *object)
{
  CowscopeEventPages *self = COWSCOPE_EVENT_PAGES (object);
  g_cancellable_cancel (self->cancellable);
  if (self->list != NULL)
    g_signal_handlers_disconnect_by_func (self->list, list_changed_cb, self);
  g_clear_object (&self->list);
  G_OBJECT_CLASS (cowscope_event_pages_parent_class)->dispose (object);
}

static void
cowscope_event_pages_finalize (GObject *object)
{
  CowscopeEventPages *self = COWSCOPE_EVENT_PAGES (object);
  g_hash_table_unref (self->pages);
  g_queue_clear (&self->waiting);
  g_object_unref (self->cancellable);
  G_OBJECT_CLASS (cowscope_event_pages_parent_class)->finalize (object);
}

static void
cowscope_event_pages_get_property (GObject *object, guint prop_id, GValue *value,
                                   GParamSpec *pspec)
{
  switch (prop_id)
    {
    case PROP_N_PENDING:
      g_value_set_uint (value, cowscope_event_pages_get_n_pending (COWSCOPE_EVENT_PAGES (object)));
      break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
cowscope_event_pages_class_init (CowscopeEventPagesClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  object_class->dispose = cowscope_event_pages_dispose;
  object_class->finalize = cowscope_event_pages_finalize;
  object_class->get_property = cowscope_event_pages_get_property;
  properties[PROP_N_PENDING] = g_param_spec_uint ("n-pending", NULL, NULL, 0, G_MAXUINT, 0,
                                                  G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY |
                                                    G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
cowscope_event_pages_init (CowscopeEventPages *self)
{
  self->pages = g_hash_table_new_full (NULL, NULL, NULL, page_free);
  g_queue_init (&self->waiting);
  self->cancellable = g_cancellable_new ();
}

CowscopeEventPages *
cowscope_event_pages_new (CowscopeEventList *list)
{
  g_return_val_if_fail (COWSCOPE_IS_EVENT_LIST (list), NULL);
  CowscopeEventPages *self = g_object_new (COWSCOPE_TYPE_EVENT_PAGES, NULL);
  self->list = g_object_ref (list);
  self->n_items = g_list_model_get_n_items (G_LIST_MODEL (list));
  g_signal_connect (list, "items-changed", G_CALLBACK (list_changed_cb), self);
  return self;
}

CowscopeEventList *
cowscope_event_pages_get_list (CowscopeEventPages *self)
{
  g_return_val_if_fail (COWSCOPE_IS_EVENT_PAGES (self), NULL);
  return self->list;
}

guint
cowscope_event_pages_get_n_pending (CowscopeEventPages *self)
{
  g_return_val_if_fail (COWSCOPE_IS_EVENT_PAGES (self), 0);
  guint n = self->in_flight;
  for (GList *l = self->waiting.head; l != NULL; l = l->next)
    {
      Page *page = g_hash_table_lookup (self->pages, GUINT_TO_POINTER (GPOINTER_TO_UINT (l->data) - 1));
      n += page != NULL && !page->loaded && !page->in_flight;
    }
  return n;
}
