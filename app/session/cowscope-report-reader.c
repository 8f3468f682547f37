/* cowscope-report-reader.c — a report read member by member (see header). */
#include "cowscope-report-reader.h"

#include <json-glib/json-glib.h>

#include "cowscope-report.h"
#include "cowscope-session-tables.h"

/* Items are the report's own JsonObjects, under another name. */
struct _CowscopeReportReader {
  JsonObject *report;
};

static JsonObject *
object_of (const CowscopeReportItem *item)
{
  return (JsonObject *) item;
}

/* The node of member @member of @object when it holds a value. */
static JsonNode *
value_of (JsonObject *object, const char *member)
{
  JsonNode *node = object != NULL ? json_object_get_member (object, member) : NULL;
  return node != NULL && JSON_NODE_HOLDS_VALUE (node) ? node : NULL;
}

static JsonArray *
list_of (CowscopeReportReader *self, const char *list)
{
  JsonNode *node = json_object_get_member (self->report, list);
  return node != NULL && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;
}

static void
reader_clear (CowscopeReportReader *self)
{
  json_object_unref (self->report);
}

static CowscopeReportReader *
reader_new (JsonObject *report)
{
  CowscopeReportReader *self = g_atomic_rc_box_new0 (CowscopeReportReader);
  self->report = report; /* the reference is taken over */
  return self;
}

CowscopeReportReader *
cowscope_report_reader_ref (CowscopeReportReader *self)
{
  return g_atomic_rc_box_acquire (self);
}

void
cowscope_report_reader_unref (CowscopeReportReader *self)
{
  g_atomic_rc_box_release_full (self, (GDestroyNotify) reader_clear);
}

gint64
cowscope_report_reader_get_metric (CowscopeReportReader *self, const char *name)
{
  JsonNode *metrics = json_object_get_member (self->report, "metrics");

  if (metrics == NULL || !JSON_NODE_HOLDS_OBJECT (metrics))
    return 0;
  return cowscope_report_item_get_int ((const CowscopeReportItem *) json_node_get_object (metrics),
                                       name);
}

guint
cowscope_report_reader_get_n_items (CowscopeReportReader *self, const char *list)
{
  JsonArray *array = list_of (self, list);
  return array != NULL ? json_array_get_length (array) : 0;
}

const CowscopeReportItem *
cowscope_report_reader_get_item (CowscopeReportReader *self, const char *list, guint index)
{
  JsonArray *array = list_of (self, list);
  JsonNode *node = array != NULL && index < json_array_get_length (array)
                     ? json_array_get_element (array, index) : NULL;
  return node != NULL && JSON_NODE_HOLDS_OBJECT (node)
           ? (const CowscopeReportItem *) json_node_get_object (node) : NULL;
}

const char *
cowscope_report_reader_get_text (CowscopeReportReader *self, const char *list, guint index)
{
  JsonArray *array = list_of (self, list);
  JsonNode *node = array != NULL && index < json_array_get_length (array)
                     ? json_array_get_element (array, index) : NULL;
  return node != NULL && JSON_NODE_HOLDS_VALUE (node)
             && json_node_get_value_type (node) == G_TYPE_STRING
           ? json_node_get_string (node) : NULL;
}

const CowscopeReportItem *
cowscope_report_reader_get_object (CowscopeReportReader *self, const char *name)
{
  JsonNode *node = json_object_get_member (self->report, name);
  return node != NULL && JSON_NODE_HOLDS_OBJECT (node)
           ? (const CowscopeReportItem *) json_node_get_object (node) : NULL;
}

gboolean
cowscope_report_item_has (const CowscopeReportItem *item, const char *member)
{
  return value_of (object_of (item), member) != NULL;
}

gint64
cowscope_report_item_get_int (const CowscopeReportItem *item, const char *member)
{
  JsonNode *node = value_of (object_of (item), member);
  return node != NULL && json_node_get_value_type (node) != G_TYPE_STRING ? json_node_get_int (node) : 0;
}

const char *
cowscope_report_item_get_text (const CowscopeReportItem *item, const char *member)
{
  JsonNode *node = value_of (object_of (item), member);
  return node != NULL && json_node_get_value_type (node) == G_TYPE_STRING ? json_node_get_string (node)
                                                                          : NULL;
}

/* ---- building it off the main thread ----------------------------------- */

typedef struct {
  char *path;
  guint top;
} LoadData;

static void
load_data_free (LoadData *data)
{
  g_free (data->path);
  g_free (data);
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LoadData *data = task_data;
  GError *error = NULL;
  JsonObject *report = NULL;
  g_autoptr (CowscopeSessionTables) tables = NULL;

  (void) source;
  (void) cancellable; /* checked once: opening and the queries are not interruptible */
  if (g_task_return_error_if_cancelled (task))
    return;
  tables = cowscope_session_tables_open (data->path, &error);
  if (tables != NULL)
    report = cowscope_report_build (tables, data->top, &error);
  if (report == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, reader_new (report), (GDestroyNotify) cowscope_report_reader_unref);
}

void
cowscope_report_reader_load_async (const char *path, guint top, GCancellable *cancellable,
                                   GAsyncReadyCallback callback, gpointer user_data)
{
  g_autoptr (GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  LoadData *data = g_new0 (LoadData, 1);

  g_return_if_fail (path != NULL);
  data->path = g_strdup (path);
  data->top = top;
  g_task_set_source_tag (task, cowscope_report_reader_load_async);
  g_task_set_name (task, "[cowscope] report");
  g_task_set_task_data (task, data, (GDestroyNotify) load_data_free);
  g_task_run_in_thread (task, load_thread);
}

CowscopeReportReader *
cowscope_report_reader_load_finish (GAsyncResult *result, GError **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);
  return g_task_propagate_pointer (G_TASK (result), error);
}
