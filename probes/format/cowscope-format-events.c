/* cowscope-format-events.c — reading a session's engine events back (see
 * header). */
#include "cowscope-format-events.h"

#include <string.h>

#include "cowscope-format-error.h"

struct _CowscopeFormatEventReader {
  sqlite3 *db;
  char *path;
  sqlite3_stmt *stmt;
  gint64 last_seq;
};

/* Keyed on seq, so that each chunk starts where the last ended through
 * the primary key, whatever the session's size. */
#define CHUNK_SQL \
  "SELECT seq, ts, pid, tid, type, op, aux, v0, v1, v2, v3, v4, stack_id FROM events" \
  " WHERE seq > ?1 ORDER BY seq LIMIT ?2"

CowscopeFormatEventReader *
cowscope_format_event_reader_new (sqlite3 *db, const char *path, GError **error)
{
  g_autoptr (CowscopeFormatEventReader) reader = g_new0 (CowscopeFormatEventReader, 1);
  int rc;

  g_return_val_if_fail (db != NULL, NULL);
  reader->db = db;
  reader->path = g_strdup (path);
  reader->last_seq = G_MININT64;
  rc = sqlite3_prepare_v2 (db, CHUNK_SQL, -1, &reader->stmt, NULL);
  if (rc != SQLITE_OK)
    {
      cowscope_format_set_error (error, db, rc, path, "reading events");
      return NULL;
    }
  return g_steal_pointer (&reader);
}

gssize
cowscope_format_event_reader_next (CowscopeFormatEventReader *reader,
                                   CowscopeFormatEventRow *rows, gsize capacity, GError **error)
{
  gsize n = 0;
  int rc = SQLITE_DONE;

  g_return_val_if_fail (reader != NULL && rows != NULL, -1);
  sqlite3_reset (reader->stmt);
  sqlite3_bind_int64 (reader->stmt, 1, reader->last_seq);
  sqlite3_bind_int64 (reader->stmt, 2, (sqlite3_int64) MIN (capacity, (gsize) G_MAXINT64));
  while (n < capacity && (rc = sqlite3_step (reader->stmt)) == SQLITE_ROW)
    {
      sqlite3_stmt *s = reader->stmt;
      CowscopeFormatEventRow *row = &rows[n++];

      memset (row, 0, sizeof *row);
      reader->last_seq = sqlite3_column_int64 (s, 0);
      row->event.time_ns = sqlite3_column_int64 (s, 1);
      row->event.pid = (uint32_t) sqlite3_column_int64 (s, 2);
      row->event.tid = (uint32_t) sqlite3_column_int64 (s, 3);
      row->event.type = (uint16_t) sqlite3_column_int64 (s, 4);
      row->event.op = (uint16_t) sqlite3_column_int64 (s, 5);
      row->event.aux = (uint32_t) sqlite3_column_int64 (s, 6);
      for (int i = 0; i < 5; i++)
        row->event.v[i] = (uint64_t) sqlite3_column_int64 (s, 7 + i);
      row->stack_id = sqlite3_column_type (s, 12) == SQLITE_INTEGER ? sqlite3_column_int64 (s, 12)
                                                                    : 0;
    }
  if (n < capacity && rc != SQLITE_DONE)
    {
      cowscope_format_set_error (error, reader->db, rc, reader->path, "reading events");
      sqlite3_reset (reader->stmt);
      return -1;
    }
  sqlite3_reset (reader->stmt);
  return (gssize) n;
}

void
cowscope_format_event_reader_free (CowscopeFormatEventReader *reader)
{
  if (reader == NULL)
    return;
  sqlite3_finalize (reader->stmt);
  g_free (reader->path);
  g_free (reader);
}
