-- Cowscope session database, schema version 4 (version 3 kept `events`
-- as a table of rows and `marks` as a derived table; version 2 lacked the
-- thread_events, process_identity and peer_faults tables; version 1 also
-- lacked the timeline_* tables, checkpoint_states and checkpoint_replays).
--
-- One SQLite file per recording (*.cowscope).  Timestamps are integer ns
-- on CLOCK_MONOTONIC, one clock for engine and CUDA events.  Object ids
-- are unique within a process (pid, id), never reused.  While recording,
-- the recorder appends events to `event_chunks` in the order it drains
-- the threads' rings (packed, a few bytes an event; `events` reads them
-- as rows), commits at least every 50 ms, and sets
-- meta.finalized = 1 once finalizing has put the events in time order and
-- derived the other tables.  A session whose recorder died before that
-- still holds every committed event and can be finalized later
-- (cowscope-cli finalize).
--
-- `events` is a virtual table (module cowscope_events): the application
-- and cowscope-cli have the module; the sqlite3 shell gets it from the
-- extension installed with Cowscope (.load PREFIX/lib/<multiarch>/
-- cowscope/libcowscope-sqlite).  Every other table is a plain table.
--
-- Every table and column is documented in README.md ("Session database").
-- Finalizing also creates readable views over the derived tables
-- (session-views.sql, installed beside this file).

PRAGMA user_version = 4;

-- Keys the recorder writes:
--   format ('cowscope-session'), schema_version, recorder_version,
--   created_utc (ISO 8601), clock_realtime_ns and clock_monotonic_ns
--   (CLOCK_REALTIME and CLOCK_MONOTONIC read together when recording
--   began), hostname, boot_id (/proc/sys/kernel/random/boot_id: sessions
--   of one boot share CLOCK_MONOTONIC), rank, local_rank, world_size,
--   local_world_size, master_addr (the launcher's RANK, LOCAL_RANK,
--   WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR in the target's
--   environment, when set; integers when they are numbers),
--   command (the target's argv, space-joined),
--   program, stacks (0/1), ring_policy ('drop'|'block'), ring_capacity,
--   gpu_tracing ('available', 'unavailable: <reason>', 'off' or 'unknown'),
--   target_pid, target_end ('exited', 'signaled', 'crashed', 'killed',
--   'unknown'), exit_status, exit_signal, interrupted (1: Ctrl-C on the
--   recorder), recorder_killed (1: finalized later by `cowscope-cli
--   finalize`), produced, stored, dropped (records: totals of threads.*),
--   events_produced, events_stored, events_dropped (engine events only:
--   totals of thread_events.*), block_stopped_waiting (BLOCK mode, when
--   some thread stopped waiting for room: 'recorder hung up' and/or
--   'recorder detached'), peer_faults (total of peer_faults.count),
--   malformed_records (records the recorder could not use), events,
--   checkpoint_interval, finalized (0 while recording, 1 when done),
--   index_format (layout of the packed BLOBs below; 1), start_ns and
--   end_ns (the session's span: its first and last event or CUDA record,
--   written when finalizing; the views' *_ms columns count from start_ns).
CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value
) WITHOUT ROWID;

-- Lookup tables for the enums stored as integers (filled by the recorder
-- from the engine's own names).
CREATE TABLE event_types       (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE ops               (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE dtypes            (id INTEGER PRIMARY KEY, name TEXT NOT NULL, itemsize INTEGER NOT NULL);
CREATE TABLE materialize_kinds (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE eager_reasons     (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE access_kinds      (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE allocation_kinds  (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE cuda_kinds        (id INTEGER PRIMARY KEY, name TEXT NOT NULL);

CREATE TABLE processes (
  pid          INTEGER PRIMARY KEY,
  ppid         INTEGER,
  exe          TEXT,
  cmdline      TEXT,            -- arguments joined by spaces
  start_ns     INTEGER,
  end_ns       INTEGER,
  end_reason   TEXT,            -- 'exited', 'signaled', 'crashed', 'killed', 'running',
                                -- 'unknown' (a child of the target that hung up
                                -- without saying BYE: crashed, killed or _exit)
  exit_status  INTEGER,         -- when exited
  exit_signal  INTEGER,         -- when signaled
  gpu_status   TEXT             -- 'available' or 'unavailable: <reason>'
);

-- Records are engine events, interned strings, call stacks and CUDA
-- records; tid 0 of a process counts the records of its threads that
-- could not get a ring of their own (all dropped).
CREATE TABLE threads (
  pid           INTEGER NOT NULL,
  tid           INTEGER NOT NULL,
  name          TEXT,
  ring_capacity INTEGER,
  produced      INTEGER NOT NULL DEFAULT 0, -- records the thread wrote (stored + dropped)
  stored        INTEGER NOT NULL DEFAULT 0, -- records that reached this database
  dropped       INTEGER NOT NULL DEFAULT 0, -- records lost (full ring, no ring, damaged ring)
  PRIMARY KEY (pid, tid)
) WITHOUT ROWID;

-- Of each threads row's records, the engine events (produced = stored +
-- dropped), and in BLOCK mode why the thread stopped waiting for room.
CREATE TABLE thread_events (
  pid             INTEGER NOT NULL,
  tid             INTEGER NOT NULL,
  produced        INTEGER NOT NULL DEFAULT 0,
  stored          INTEGER NOT NULL DEFAULT 0,
  dropped         INTEGER NOT NULL DEFAULT 0,
  stopped_waiting TEXT,          -- 'recorder hung up', 'recorder detached', or
                                 -- NULL: it never had to
  PRIMARY KEY (pid, tid)
) WITHOUT ROWID;

-- Where each processes row's identity comes from, and what the process
-- said about itself, kept apart: processes.pid is the kernel's
-- (SO_PEERCRED of its connection); ppid, exe and cmdline come from
-- /proc/PID ('kernel'), from what the recorder started when /proc was
-- already gone ('spawned'), or from the process's own HELLO ('claimed').
CREATE TABLE process_identity (
  pid             INTEGER PRIMARY KEY,
  identity        TEXT NOT NULL,  -- 'kernel', 'spawned', 'claimed'
  claimed_pid     INTEGER,        -- its HELLO, unchecked
  claimed_ppid    INTEGER,
  claimed_exe     TEXT,
  claimed_cmdline TEXT
);

-- Peers the recorder refused, in whole or in part: a connection of
-- another user, malformed messages, descriptors that are not rings,
-- damaged rings, records it could not use.  pid and uid are the
-- kernel's (SO_PEERCRED).
CREATE TABLE peer_faults (
  pid    INTEGER NOT NULL,
  uid    INTEGER,
  fault  TEXT NOT NULL,          -- what was refused
  count  INTEGER NOT NULL,
  detail TEXT,                   -- the first one, in words
  PRIMARY KEY (pid, fault)
) WITHOUT ROWID;

-- The sessions `cowscope-cli merge` put into this one, one row per
-- member (its process group); both tables are empty in a recorded
-- session.  A member's times were moved onto the first member's
-- CLOCK_MONOTONIC by clock_offset_ns, and its pids were remapped to
-- (id << 22) | original pid, so that pids of different machines never
-- collide (merged_processes keeps the originals).
CREATE TABLE merged_sessions (
  id              INTEGER PRIMARY KEY, -- 1, 2, ...: the member, in merge order
  label           TEXT NOT NULL,       -- --label, else "rank N" (and host), else the file's name
  path            TEXT NOT NULL,       -- the member's file, as given
  hostname        TEXT,
  rank            INTEGER,             -- the member's meta.rank, ...
  local_rank      INTEGER,
  world_size      INTEGER,
  created_utc     TEXT,
  command         TEXT,
  clock_offset_ns INTEGER NOT NULL,    -- added to the member's times
  clock_alignment TEXT NOT NULL,       -- 'same boot' (exact), 'wall clock' (NTP-level) or 'none'
  events          INTEGER NOT NULL     -- the member's events, all kept
);
CREATE TABLE merged_processes (
  pid          INTEGER PRIMARY KEY,    -- as in this session
  session_id   INTEGER NOT NULL,       -- merged_sessions.id
  original_pid INTEGER NOT NULL        -- as the member recorded it
);

-- Interned strings: tensor names, user ranges and marks, kernel names.
CREATE TABLE strings (
  pid   INTEGER NOT NULL,
  id    INTEGER NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (pid, id)
) WITHOUT ROWID;

-- Every engine trace event, packed: each row holds up to 4096 events that
-- follow each other in seq, as columns of varint differences compressed
-- with zstd (README.md, "Session database", gives the layout), with what
-- a reader needs to skip a chunk undecoded.  seq is read order while
-- recording, time order (ts, then each thread's own order) once
-- finalized.
CREATE TABLE event_chunks (
  first_seq INTEGER PRIMARY KEY,
  last_seq  INTEGER NOT NULL,
  n         INTEGER NOT NULL,   -- events in the chunk
  min_ts    INTEGER NOT NULL,
  max_ts    INTEGER NOT NULL,
  sorted    INTEGER NOT NULL,   -- 1: ts never decreases within the chunk
  types     INTEGER NOT NULL,   -- bit t: it holds events of type t (bit 63: of a type >= 63)
  data      BLOB NOT NULL
);
-- The chunks' rows without their data, for finding chunks (a reader loads
-- them all: a few bytes per 4096 events).
CREATE INDEX IF NOT EXISTS event_chunks_catalog
  ON event_chunks (first_seq, last_seq, n, min_ts, max_ts, sorted, types);
-- The events as rows (read-only but for appends): seq, ts, pid, tid,
-- type (event_types.id), op (ops.id), aux, v0..v4 (the payload; what
-- engine/cow-trace.h says per type), stack_id (stacks.id, or NULL).
CREATE VIRTUAL TABLE events USING cowscope_events;

-- Call stacks: each distinct frame symbolized once.
CREATE TABLE frames (
  id        INTEGER PRIMARY KEY,
  pid       INTEGER NOT NULL,
  address   INTEGER NOT NULL,
  module    TEXT,                -- mapped file the address falls in
  function  TEXT,                -- NULL when unknown
  file      TEXT,
  line      INTEGER,
  UNIQUE (pid, address)
);
CREATE TABLE stacks (
  id    INTEGER PRIMARY KEY,
  depth INTEGER NOT NULL
);
CREATE TABLE stack_frames (
  stack_id INTEGER NOT NULL,
  position INTEGER NOT NULL,     -- 0 = innermost
  frame_id INTEGER NOT NULL,
  PRIMARY KEY (stack_id, position)
) WITHOUT ROWID;

-- CUDA activity from CUPTI, normalized (probes/cowscope-protocol.h).
CREATE TABLE cuda_activity (
  id             INTEGER PRIMARY KEY,
  pid            INTEGER NOT NULL,
  kind           INTEGER NOT NULL, -- cuda_kinds.id
  subkind        INTEGER,
  start_ns       INTEGER NOT NULL,
  end_ns         INTEGER NOT NULL,
  bytes          INTEGER,
  correlation_id INTEGER,
  device_id      INTEGER,
  context_id     INTEGER,
  stream_id      INTEGER,
  address        INTEGER,
  external_id    INTEGER,          -- the materialization (event seq) that issued it;
                                   -- kind 6 rows: the begin event's ts, as pushed
  name           TEXT,             -- kernels: the kernel's name (filled at finalize)
  name_id        INTEGER           -- kernels: strings.id of the name, as recorded
);

-- Each process's memory map (/proc/PID/maps text), newest complete copy,
-- kept so that frames can be symbolized when the session is finalized
-- (also by `cowscope-cli finalize` after the recorder died).
CREATE TABLE process_maps (
  pid        INTEGER PRIMARY KEY,
  generation INTEGER NOT NULL,
  maps       TEXT NOT NULL
);

-- ---- Derived when recording ends --------------------------------------

CREATE TABLE allocations (
  pid INTEGER NOT NULL, id INTEGER NOT NULL,
  kind INTEGER, device INTEGER, nbytes INTEGER, address INTEGER,
  op INTEGER, new_ts INTEGER, free_ts INTEGER,  -- free_ts NULL: never freed
  PRIMARY KEY (pid, id)
) WITHOUT ROWID;

CREATE TABLE storages (
  pid INTEGER NOT NULL, id INTEGER NOT NULL,
  allocation_id INTEGER, nbytes INTEGER,
  context_id INTEGER,           -- the CoW context it was born sharing, or NULL
  source_storage_id INTEGER,    -- lazy-clone source, or NULL
  op INTEGER, new_ts INTEGER, free_ts INTEGER,
  PRIMARY KEY (pid, id)
) WITHOUT ROWID;

CREATE TABLE tensors (
  pid INTEGER NOT NULL, id INTEGER NOT NULL,
  storage_id INTEGER, base_tensor_id INTEGER,
  dtype INTEGER, ndim INTEGER, numel INTEGER, storage_offset INTEGER,
  op INTEGER, name TEXT, tid INTEGER, new_ts INTEGER, free_ts INTEGER,
  PRIMARY KEY (pid, id)
) WITHOUT ROWID;

CREATE TABLE contexts (
  pid INTEGER NOT NULL, id INTEGER NOT NULL,
  allocation_id INTEGER, first_storage_id INTEGER,
  new_ts INTEGER, free_ts INTEGER,
  max_refcount INTEGER,
  PRIMARY KEY (pid, id)
) WITHOUT ROWID;

CREATE TABLE lazy_clones (
  seq INTEGER PRIMARY KEY,      -- events.seq
  pid INTEGER, tid INTEGER, ts INTEGER, op INTEGER,
  source_tensor_id INTEGER, result_tensor_id INTEGER,
  source_storage_id INTEGER, result_storage_id INTEGER,
  context_id INTEGER,           -- NULL for an eager fallback
  eager_reason INTEGER,         -- eager_reasons.id, NULL when lazy
  nbytes INTEGER,               -- bytes shared (lazy) or copied (eager)
  stack_id INTEGER
);

CREATE TABLE materializations (
  seq INTEGER PRIMARY KEY,      -- events.seq of the begin event
  pid INTEGER, tid INTEGER, begin_ts INTEGER, end_ts INTEGER,
  op INTEGER,                   -- the write that triggered it
  storage_id INTEGER, context_id INTEGER, tensor_id INTEGER,
  nbytes INTEGER,
  kind INTEGER,                 -- materialize_kinds.id: copy, steal, failed
  copy_discarded INTEGER,       -- 1: copied, then found itself last and stole
  lock_wait_ns INTEGER,
  allocation_id INTEGER,        -- allocation the storage owns afterwards
  lazy_clone_seq INTEGER,       -- the lazy clone that created the sharing
  stack_id INTEGER
);

CREATE TABLE violations (
  seq INTEGER PRIMARY KEY,
  pid INTEGER, tid INTEGER, ts INTEGER, op INTEGER,
  access INTEGER,               -- access_kinds.id
  storage_id INTEGER, writer_tensor_id INTEGER, accessor_tensor_id INTEGER,
  writer_generation INTEGER, accessor_generation INTEGER,
  stack_id INTEGER
);

CREATE TABLE ranges (
  pid INTEGER NOT NULL, id INTEGER NOT NULL,
  tid INTEGER, name TEXT, parent_id INTEGER,
  begin_ts INTEGER, end_ts INTEGER,   -- end_ts NULL: never closed
  PRIMARY KEY (pid, id)
) WITHOUT ROWID;

-- User marks: a view of their events (each mark is one event and nothing
-- more, so a table of them would only repeat `events`).  19 is the mark's
-- event type (COW_EVENT_MARK, engine/cow-trace.h: codes are stored in
-- sessions, so they never change; tests/format checks this one).
CREATE VIEW marks (seq, pid, tid, ts, name, range_id) AS
  SELECT e.seq, e.pid, e.tid, e.ts,
         (SELECT s.value FROM strings s WHERE s.pid = e.pid AND s.id = e.v1),
         nullif (e.v2, 0)
  FROM events e WHERE e.type = 19;

-- Live objects every `meta.checkpoint_interval` events, so the sharing
-- graph at any instant is rebuilt from the nearest checkpoint at or
-- before it plus the events after it, not from the start.  When more
-- objects are alive than the interval, checkpoints are taken only every
-- that-many events instead, so they never outweigh the events themselves.
CREATE TABLE checkpoints (
  id INTEGER PRIMARY KEY,
  seq INTEGER NOT NULL,         -- state after events.seq <= this
  ts INTEGER NOT NULL
);
CREATE TABLE checkpoint_objects (
  checkpoint_id INTEGER NOT NULL,
  pid INTEGER NOT NULL,
  kind TEXT NOT NULL,           -- 'allocation', 'context', 'storage', 'tensor'
  id INTEGER NOT NULL,
  PRIMARY KEY (checkpoint_id, pid, kind, id)
) WITHOUT ROWID;

-- ---- Packed summaries, derived when recording ends (schema 2) ----------
--
-- What the application loads instead of scanning `events`.  Every BLOB is
-- a run of records of unsigned LEB128 varints ("u"), zigzag-encoded signed
-- varints ("s") and single bytes ("b"); README.md ("Session database")
-- gives each record's fields.

-- One timeline lane per thread (device NULL) and per CUDA stream.
CREATE TABLE timeline_lanes (
  id INTEGER PRIMARY KEY,
  pid INTEGER NOT NULL,
  tid INTEGER NOT NULL,          -- thread id, or the CUDA stream id
  device INTEGER,                -- NULL: a thread lane; else the CUDA device
  n_instants INTEGER NOT NULL,   -- events (CUDA records) on the lane
  n_spans INTEGER NOT NULL       -- materializations, user ranges, CUDA records
);
-- A lane's instants in time order, COWSCOPE_TIMELINE_CHUNK (65536) a row.
CREATE TABLE timeline_chunks (
  lane INTEGER NOT NULL,         -- timeline_lanes.id
  chunk INTEGER NOT NULL,        -- 0, 1, ... in time order
  first_ts INTEGER NOT NULL,
  last_ts INTEGER NOT NULL,
  n INTEGER NOT NULL,
  instants BLOB NOT NULL,
  PRIMARY KEY (lane, chunk)
);
-- A lane's spans in start order, 65536 a row.
CREATE TABLE timeline_spans (
  lane INTEGER NOT NULL,
  chunk INTEGER NOT NULL,
  first_start INTEGER NOT NULL,
  last_start INTEGER NOT NULL,
  n INTEGER NOT NULL,
  spans BLOB NOT NULL,
  PRIMARY KEY (lane, chunk)
);
-- The counter tracks (0 bytes allocated, 1 bytes shared lazily, 2 live
-- storages), each binned over [start_ns, end_ns] into n_bins equal bins of
-- (min, max, last) float64 little-endian values.
CREATE TABLE timeline_counters (
  counter INTEGER PRIMARY KEY,
  start_ns INTEGER NOT NULL,
  end_ns INTEGER NOT NULL,
  n_bins INTEGER NOT NULL,
  bins BLOB NOT NULL
);
-- The whole sharing-graph state at each checkpoint: every live object
-- with the attributes the graph needs, its free time and name.
CREATE TABLE checkpoint_states (
  checkpoint_id INTEGER PRIMARY KEY, -- checkpoints.id
  n_objects INTEGER NOT NULL,
  objects BLOB NOT NULL
);
-- The events that can change the graph between a checkpoint (0: the start
-- of the session) and the next, with the free time and name of each
-- object they create.
CREATE TABLE checkpoint_replays (
  checkpoint_id INTEGER PRIMARY KEY, -- checkpoints.id, or 0
  first_seq INTEGER NOT NULL,        -- events.seq range covered
  last_seq INTEGER NOT NULL,
  n_events INTEGER NOT NULL,
  events BLOB NOT NULL
);
-- Cross-process sharing (IPC), from the IPC events of every process.
-- One row per send: each send takes one counter slot in the producer.
CREATE TABLE ipc_refs (
  send_seq INTEGER PRIMARY KEY,  -- events.seq of the IPC_SEND
  producer_pid INTEGER NOT NULL,
  allocation_id INTEGER,         -- the producer's allocation (the block)
  storage_id INTEGER,            -- the producer's storage sent, when known
  nbytes INTEGER,
  counter_file_id INTEGER, slot INTEGER,
  send_ts INTEGER,
  consumer_pid INTEGER,          -- NULL: never received
  receive_seq INTEGER, receive_ts INTEGER,
  cached INTEGER,                -- 1: the consumer had the block mapped already
  consumer_allocation_id INTEGER, consumer_storage_id INTEGER, -- over the mapping
  release_seq INTEGER, release_ts INTEGER,         -- the consumer gave the slot back
  limbo_enter_seq INTEGER, limbo_enter_ts INTEGER, -- the producer dropped the block
  limbo_free_seq INTEGER, limbo_free_ts INTEGER,   -- ... and freed it from the limbo
  consumer_died INTEGER          -- 1: freed because the consumer died
);
-- One row per sent block.
CREATE TABLE ipc_blocks (
  producer_pid INTEGER NOT NULL,
  allocation_id INTEGER NOT NULL,
  storage_id INTEGER, nbytes INTEGER,
  sends INTEGER,                 -- slots taken for it
  consumers INTEGER,             -- distinct consumer processes
  first_send_ts INTEGER,
  limbo_enter_ts INTEGER,        -- first slot to enter the limbo, or NULL
  limbo_free_ts INTEGER,         -- last to leave it (NULL: never left)
  free_ts INTEGER,               -- bytes freed (NULL: never)
  PRIMARY KEY (producer_pid, allocation_id)
) WITHOUT ROWID;
