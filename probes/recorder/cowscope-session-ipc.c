/* cowscope-session-ipc.c — the IPC tables derived at finalize (see
 * cowscope-session-ipc.h and README, "Session database"). */
#include "cowscope-session-ipc.h"

#include "cowscope-session-writer.h"

/* The same DDL as data/session-schema.sql, so that a session recorded
 * before the tables existed gets them when it is finalized again. */
static const char ipc_ddl[] =
  "CREATE TABLE IF NOT EXISTS ipc_refs ("
  " send_seq INTEGER PRIMARY KEY, producer_pid INTEGER NOT NULL,"
  " allocation_id INTEGER, storage_id INTEGER, nbytes INTEGER,"
  " counter_file_id INTEGER, slot INTEGER, send_ts INTEGER,"
  " consumer_pid INTEGER, receive_seq INTEGER, receive_ts INTEGER, cached INTEGER,"
  " consumer_allocation_id INTEGER, consumer_storage_id INTEGER,"
  " release_seq INTEGER, release_ts INTEGER,"
  " limbo_enter_seq INTEGER, limbo_enter_ts INTEGER,"
  " limbo_free_seq INTEGER, limbo_free_ts INTEGER, consumer_died INTEGER);"
  "CREATE TABLE IF NOT EXISTS ipc_blocks ("
  " producer_pid INTEGER NOT NULL, allocation_id INTEGER NOT NULL,"
  " storage_id INTEGER, nbytes INTEGER, sends INTEGER, consumers INTEGER,"
  " first_send_ts INTEGER, limbo_enter_ts INTEGER, limbo_free_ts INTEGER, free_ts INTEGER,"
  " PRIMARY KEY (producer_pid, allocation_id)) WITHOUT ROWID;";

/* Event payloads (engine/cow-ipc.h): v0 allocation id (the producer's),
 * v1 counter file id, v2 slot, v3 count after, v4 peer pid.  A send is
 * keyed by (producer pid, counter file id, slot): the producer's ids are
 * unique within it.  Types: 1 ALLOCATION_NEW, 3 STORAGE_NEW, 20 SEND,
 * 21 RECEIVE (aux 1: cache hit), 22 RELEASE, 23 LIMBO_ENTER,
 * 24 LIMBO_FREE (aux 1: the consumer died). */
static const char ipc_derive_sql[] =
  "DELETE FROM ipc_refs; DELETE FROM ipc_blocks;"
  "CREATE INDEX IF NOT EXISTS events_object ON events (type, pid, v0);"

  "INSERT INTO ipc_refs (send_seq, producer_pid, allocation_id, counter_file_id, slot, send_ts,"
  "  nbytes, storage_id)"
  " SELECT s.seq, s.pid, s.v0, s.v1, s.v2, s.ts,"
  "  (SELECT a.nbytes FROM allocations a WHERE a.pid = s.pid AND a.id = s.v0),"
  "  (SELECT st.id FROM storages st WHERE st.pid = s.pid AND st.allocation_id = s.v0"
  "    AND st.new_ts <= s.ts ORDER BY st.new_ts DESC LIMIT 1)"
  " FROM events s WHERE s.type = 20;"

  /* The receive of each slot (the first, should a handle be replayed). */
  "UPDATE ipc_refs SET (consumer_pid, receive_seq, receive_ts, cached) ="
  " (SELECT r.pid, r.seq, r.ts, r.aux & 1 FROM events r WHERE r.type = 21"
  "   AND r.v0 = ipc_refs.allocation_id AND r.v4 = ipc_refs.producer_pid"
  "   AND r.v1 = ipc_refs.counter_file_id AND r.v2 = ipc_refs.slot ORDER BY r.seq LIMIT 1);"

  /* The consumer's foreign allocation and storage over the mapping: the
   * first ones its receiving thread makes after the receive. */
  "UPDATE ipc_refs SET"
  " consumer_allocation_id = (SELECT a.v0 FROM events r JOIN events a ON a.type = 1"
  "   AND a.pid = r.pid AND a.tid = r.tid AND a.seq > r.seq"
  "   WHERE r.seq = ipc_refs.receive_seq ORDER BY a.seq LIMIT 1),"
  " consumer_storage_id = (SELECT a.v0 FROM events r JOIN events a ON a.type = 3"
  "   AND a.pid = r.pid AND a.tid = r.tid AND a.seq > r.seq"
  "   WHERE r.seq = ipc_refs.receive_seq ORDER BY a.seq LIMIT 1)"
  " WHERE receive_seq IS NOT NULL;"

  /* Release: the consumer's IPC_RELEASE of the slot; a cache hit gave
   * its slot back at the receive itself. */
  "UPDATE ipc_refs SET (release_seq, release_ts) ="
  " (SELECT x.seq, x.ts FROM events x WHERE x.type = 22 AND x.pid = ipc_refs.consumer_pid"
  "   AND x.v0 = ipc_refs.allocation_id AND x.v4 = ipc_refs.producer_pid"
  "   AND x.v1 = ipc_refs.counter_file_id AND x.v2 = ipc_refs.slot"
  "   AND x.seq > ipc_refs.receive_seq ORDER BY x.seq LIMIT 1)"
  " WHERE receive_seq IS NOT NULL AND cached = 0;"
  "UPDATE ipc_refs SET release_seq = receive_seq, release_ts = receive_ts WHERE cached = 1;"

  "UPDATE ipc_refs SET (limbo_enter_seq, limbo_enter_ts) ="
  " (SELECT x.seq, x.ts FROM events x WHERE x.type = 23 AND x.pid = ipc_refs.producer_pid"
  "   AND x.v0 = ipc_refs.allocation_id AND x.v1 = ipc_refs.counter_file_id"
  "   AND x.v2 = ipc_refs.slot ORDER BY x.seq LIMIT 1);"
  "UPDATE ipc_refs SET (limbo_free_seq, limbo_free_ts, consumer_died) ="
  " (SELECT x.seq, x.ts, x.aux & 1 FROM events x WHERE x.type = 24"
  "   AND x.pid = ipc_refs.producer_pid AND x.v0 = ipc_refs.allocation_id"
  "   AND x.v1 = ipc_refs.counter_file_id AND x.v2 = ipc_refs.slot ORDER BY x.seq LIMIT 1)"
  " WHERE limbo_enter_seq IS NOT NULL;"

  "INSERT INTO ipc_blocks"
  " SELECT r.producer_pid, r.allocation_id, min (r.storage_id), max (r.nbytes), count (*),"
  "  count (DISTINCT r.consumer_pid), min (r.send_ts), min (r.limbo_enter_ts),"
  "  CASE WHEN count (r.limbo_enter_ts) > count (r.limbo_free_ts) THEN NULL"
  "   ELSE max (r.limbo_free_ts) END,"
  "  CASE WHEN count (r.limbo_enter_ts) > count (r.limbo_free_ts) THEN NULL"
  "   ELSE nullif (max (coalesce (max (r.limbo_free_ts), 0),"
  "             coalesce ((SELECT a.free_ts FROM allocations a WHERE a.pid = r.producer_pid"
  "                         AND a.id = r.allocation_id), 0)), 0) END"
  " FROM ipc_refs r GROUP BY r.producer_pid, r.allocation_id;"

  "CREATE INDEX IF NOT EXISTS ipc_refs_consumer ON ipc_refs (consumer_pid, receive_seq);";

gboolean
cowscope_session_derive_ipc (sqlite3 *db, const char *path, GError **error)
{
  if (sqlite3_exec (db, ipc_ddl, NULL, NULL, NULL) != SQLITE_OK
      || sqlite3_exec (db, ipc_derive_sql, NULL, NULL, NULL) != SQLITE_OK)
    {
      cowscope_session_set_sqlite_error (error, db, path, "finalize");
      return FALSE;
    }
  return TRUE;
}
