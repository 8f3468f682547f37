-- Cowscope session views: the questions people ask of a session, with
-- readable columns, for the sqlite3 shell and your own SQL.
--
-- Finalizing a session creates these views in it (`cowscope-cli finalize`
-- adds them to a session finalized by an older version); the session model
-- creates them as TEMP views on its own read-only connections, so that
-- reports and exports read this version's rules whatever the file holds.
-- They read only the tables finalizing derives (materializations,
-- lazy_clones, violations, tensors, storages, allocations, contexts,
-- ranges, the call stacks, the lookup tables and meta), never `events`,
-- and use only SQLite's built-in functions, so they work in a stock
-- `sqlite3` shell.
--
-- Conventions, the same in every view:
--   *_ms      milliseconds since the session started (meta.start_ns: the
--             first event or CUDA record), rounded to the nanosecond;
--             durations in milliseconds
--   *_ns      the raw CLOCK_MONOTONIC nanoseconds of the tables
--   bytes     a byte count
--   operation the engine operation (ops.name: add_, fill_, lazy_clone, ...)
--   tensor    a tensor's name, or "tensor N" when it has none
--   call_site where the program made it happen: the innermost frame of its
--             call stack outside Cowscope's own libraries, as
--             "function (file:line)"; "(no call stack)" when none was
--             recorded
--   thread    "name (tid)"
--   pid, tid, seq and *_id  keys into the tables (README, "Session
--             database")
--
-- Each view's documentation is part of its definition, so that the
-- sqlite3 shell shows it: `.schema copies`.  README.md ("Asking a session
-- questions in SQL") has example queries.

CREATE VIEW call_stacks AS
-- Every frame of every call stack, innermost first.
--   stack_id, position (0 = innermost), frame ("function (file:line)",
--   "function", "file:line", or "0x7f12... in libfoo.so"), function, file,
--   line, module, address, in_cowscope (1: a frame of Cowscope's own
--   libraries or functions, which a call site skips)
SELECT sf.stack_id AS stack_id,
       sf.position AS position,
       CASE
         WHEN f.function IS NOT NULL AND f.file IS NOT NULL AND f.line > 0
           THEN f.function || ' ('
                || substr (f.file, length (rtrim (f.file, replace (f.file, '/', ''))) + 1)
                || ':' || f.line || ')'
         WHEN f.function IS NOT NULL THEN f.function
         WHEN f.file IS NOT NULL
           THEN substr (f.file, length (rtrim (f.file, replace (f.file, '/', ''))) + 1)
                || CASE WHEN f.line > 0 THEN ':' || f.line ELSE '' END
         ELSE printf ('0x%x in %s', f.address,
                      coalesce (substr (f.module,
                                        length (rtrim (f.module, replace (f.module, '/', ''))) + 1),
                                'an unknown module'))
       END AS frame,
       f.function AS function,
       f.file AS file,
       f.line AS line,
       f.module AS module,
       f.address AS address,
       (substr (f.function, 1, 4) = 'cow_' OR substr (f.function, 1, 9) = 'cowscope_'
        OR substr (f.module, length (rtrim (f.module, replace (f.module, '/', ''))) + 1, 12)
           = 'libcowtensor'
        OR substr (f.module, length (rtrim (f.module, replace (f.module, '/', ''))) + 1, 11)
           = 'libcowscope') IS 1 AS in_cowscope
FROM stack_frames sf
JOIN frames f ON f.id = sf.frame_id;

CREATE VIEW call_sites AS
-- The call site of each call stack: its innermost symbolized frame
-- outside Cowscope, else its innermost frame outside Cowscope (an
-- address in a module), else its innermost frame.  The report's "Top
-- call sites" and every call_site column below read it.
--   stack_id, call_site, function, file, line, module, address
SELECT s.id AS stack_id,
       c.frame AS call_site,
       c.function AS function,
       c.file AS file,
       c.line AS line,
       c.module AS module,
       c.address AS address
FROM stacks s
JOIN call_stacks c ON c.stack_id = s.id
 AND c.position = (SELECT x.position FROM call_stacks x WHERE x.stack_id = s.id
                   ORDER BY x.in_cowscope,
                            CASE WHEN x.in_cowscope THEN 0
                                 ELSE x.function IS NULL AND x.file IS NULL END,
                            x.position
                   LIMIT 1);

CREATE VIEW copies_and_steals AS
-- Every materialization: the first write to a lazy copy, which either
-- copied the shared bytes or, as the last sharer, stole them.
--   at_ms, kind ('copy', 'steal', 'failed'; 'unfinished' when its end was
--   not recorded), operation (the write), bytes, tensor (written
--   through), call_site, in_range (the innermost user range of the thread
--   around it), duration_ms, lock_wait_ms, thread, copy_thrown_away (1: a
--   steal that had copied first, then found itself the last sharer),
--   pid, tid, tensor_id, storage_id, context_id, lazy_copy_seq (the lazy
--   copy that created the sharing: lazy_copies.seq), start_ns, end_ns,
--   lock_wait_ns, stack_id (call_stacks.stack_id), seq
SELECT round ((m.begin_ts - (SELECT value FROM meta WHERE key = 'start_ns')) / 1e6, 6) AS at_ms,
       coalesce (k.name, 'unfinished') AS kind,
       o.name AS operation,
       m.nbytes AS bytes,
       coalesce ((SELECT t.name FROM tensors t WHERE t.pid = m.pid AND t.id = m.tensor_id),
                 'tensor ' || m.tensor_id) AS tensor,
       coalesce ((SELECT c.call_site FROM call_sites c WHERE c.stack_id = m.stack_id),
                 '(no call stack)') AS call_site,
       (SELECT r.name FROM ranges r
         WHERE r.pid = m.pid AND r.tid = m.tid AND r.begin_ts <= m.begin_ts
           AND (r.end_ts IS NULL OR r.end_ts >= m.begin_ts)
         ORDER BY r.begin_ts DESC LIMIT 1) AS in_range,
       round ((m.end_ts - m.begin_ts) / 1e6, 6) AS duration_ms,
       round (m.lock_wait_ns / 1e6, 6) AS lock_wait_ms,
       coalesce ((SELECT th.name FROM threads th WHERE th.pid = m.pid AND th.tid = m.tid),
                 'thread') || ' (' || m.tid || ')' AS thread,
       m.copy_discarded AS copy_thrown_away,
       m.pid AS pid,
       m.tid AS tid,
       m.tensor_id AS tensor_id,
       m.storage_id AS storage_id,
       m.context_id AS context_id,
       m.lazy_clone_seq AS lazy_copy_seq,
       m.begin_ts AS start_ns,
       m.end_ts AS end_ns,
       m.lock_wait_ns AS lock_wait_ns,
       m.stack_id AS stack_id,
       m.seq AS seq
FROM materializations m
LEFT JOIN materialize_kinds k ON k.id = m.kind
LEFT JOIN ops o ON o.id = m.op;

CREATE VIEW copies AS
-- The materializations that copied bytes: what lazy copies cost.
--   at_ms, operation (the write), bytes, tensor (written through),
--   call_site, in_range, duration_ms, lock_wait_ms, thread, pid, tid,
--   tensor_id, storage_id, context_id, lazy_copy_seq (lazy_copies.seq),
--   start_ns, end_ns, lock_wait_ns, stack_id, seq: as in
--   copies_and_steals
SELECT at_ms, operation, bytes, tensor, call_site, in_range, duration_ms, lock_wait_ms, thread,
       pid, tid, tensor_id, storage_id, context_id, lazy_copy_seq, start_ns, end_ns,
       lock_wait_ns, stack_id, seq
FROM copies_and_steals WHERE kind = 'copy';

CREATE VIEW steals AS
-- The materializations that took the bytes over without copying them:
-- the last sharer's write.
--   at_ms, operation, bytes, tensor, call_site, in_range, duration_ms,
--   lock_wait_ms, thread, copy_thrown_away (1: it had copied first), pid,
--   tid, tensor_id, storage_id, context_id, lazy_copy_seq, start_ns,
--   end_ns, lock_wait_ns, stack_id, seq: as in copies_and_steals
SELECT at_ms, operation, bytes, tensor, call_site, in_range, duration_ms, lock_wait_ms, thread,
       copy_thrown_away, pid, tid, tensor_id, storage_id, context_id, lazy_copy_seq, start_ns,
       end_ns, lock_wait_ns, stack_id, seq
FROM copies_and_steals WHERE kind = 'steal';

CREATE VIEW lazy_copies AS
-- Every lazy copy (lazy clone) that shared bytes instead of copying them,
-- and what the sharing ended in.
--   at_ms, operation (lazy_clone, reshape, ...), bytes (shared), source,
--   result (tensors), call_site, copies_caused, steals_caused (the
--   materializations whose sharing it created: copies_and_steals rows
--   with this lazy_copy_seq), thread, pid, tid, source_tensor_id,
--   result_tensor_id, source_storage_id, result_storage_id, context_id,
--   ts_ns, stack_id, seq
SELECT round ((l.ts - (SELECT value FROM meta WHERE key = 'start_ns')) / 1e6, 6) AS at_ms,
       o.name AS operation,
       l.nbytes AS bytes,
       coalesce ((SELECT t.name FROM tensors t WHERE t.pid = l.pid AND t.id = l.source_tensor_id),
                 'tensor ' || l.source_tensor_id) AS source,
       coalesce ((SELECT t.name FROM tensors t WHERE t.pid = l.pid AND t.id = l.result_tensor_id),
                 'tensor ' || l.result_tensor_id) AS result,
       coalesce ((SELECT c.call_site FROM call_sites c WHERE c.stack_id = l.stack_id),
                 '(no call stack)') AS call_site,
       (SELECT count (*) FROM materializations m JOIN materialize_kinds k ON k.id = m.kind
         WHERE m.lazy_clone_seq = l.seq AND k.name = 'copy') AS copies_caused,
       (SELECT count (*) FROM materializations m JOIN materialize_kinds k ON k.id = m.kind
         WHERE m.lazy_clone_seq = l.seq AND k.name = 'steal') AS steals_caused,
       coalesce ((SELECT th.name FROM threads th WHERE th.pid = l.pid AND th.tid = l.tid),
                 'thread') || ' (' || l.tid || ')' AS thread,
       l.pid AS pid,
       l.tid AS tid,
       l.source_tensor_id AS source_tensor_id,
       l.result_tensor_id AS result_tensor_id,
       l.source_storage_id AS source_storage_id,
       l.result_storage_id AS result_storage_id,
       l.context_id AS context_id,
       l.ts AS ts_ns,
       l.stack_id AS stack_id,
       l.seq AS seq
FROM lazy_clones l
LEFT JOIN ops o ON o.id = l.op
WHERE l.context_id IS NOT NULL;

CREATE VIEW eager_fallbacks AS
-- Lazy clones that could not share and copied at once, and why.
--   at_ms, operation, bytes (copied), reason (eager_reasons.name:
--   foreign_data_ptr for memory the engine did not allocate, not_simple),
--   source, result, call_site, thread, pid, tid, source_tensor_id,
--   result_tensor_id, source_storage_id, result_storage_id, ts_ns,
--   stack_id, seq
SELECT round ((l.ts - (SELECT value FROM meta WHERE key = 'start_ns')) / 1e6, 6) AS at_ms,
       o.name AS operation,
       l.nbytes AS bytes,
       coalesce (r.name, 'reason ' || l.eager_reason) AS reason,
       coalesce ((SELECT t.name FROM tensors t WHERE t.pid = l.pid AND t.id = l.source_tensor_id),
                 'tensor ' || l.source_tensor_id) AS source,
       coalesce ((SELECT t.name FROM tensors t WHERE t.pid = l.pid AND t.id = l.result_tensor_id),
                 'tensor ' || l.result_tensor_id) AS result,
       coalesce ((SELECT c.call_site FROM call_sites c WHERE c.stack_id = l.stack_id),
                 '(no call stack)') AS call_site,
       coalesce ((SELECT th.name FROM threads th WHERE th.pid = l.pid AND th.tid = l.tid),
                 'thread') || ' (' || l.tid || ')' AS thread,
       l.pid AS pid,
       l.tid AS tid,
       l.source_tensor_id AS source_tensor_id,
       l.result_tensor_id AS result_tensor_id,
       l.source_storage_id AS source_storage_id,
       l.result_storage_id AS result_storage_id,
       l.ts AS ts_ns,
       l.stack_id AS stack_id,
       l.seq AS seq
FROM lazy_clones l
LEFT JOIN ops o ON o.id = l.op
LEFT JOIN eager_reasons r ON r.id = l.eager_reason
WHERE l.context_id IS NULL;

CREATE VIEW warnings AS
-- Simulate-mode warnings: the program relied on two reshape results
-- aliasing, which a lazy reshape would break.
--   at_ms, message ("read through 'snapshot' after a write through
--   'weights'"), access ('read', 'write'), operation, written_through,
--   accessed_through (tensors), call_site (of the access), thread,
--   storage_id, pid, tid, writer_tensor_id, accessor_tensor_id,
--   writer_generation, accessor_generation, ts_ns, stack_id, seq
SELECT at_ms,
       access || ' through ''' || accessed_through || ''' after a write through '''
       || written_through || '''' AS message,
       access, operation, written_through, accessed_through, call_site, thread, storage_id, pid,
       tid, writer_tensor_id, accessor_tensor_id, writer_generation, accessor_generation, ts_ns,
       stack_id, seq
FROM (
  SELECT round ((v.ts - (SELECT value FROM meta WHERE key = 'start_ns')) / 1e6, 6) AS at_ms,
         coalesce (a.name, 'access ' || v.access) AS access,
         o.name AS operation,
         coalesce ((SELECT t.name FROM tensors t WHERE t.pid = v.pid AND t.id = v.writer_tensor_id),
                 'tensor ' || v.writer_tensor_id) AS written_through,
         coalesce ((SELECT t.name FROM tensors t WHERE t.pid = v.pid AND t.id = v.accessor_tensor_id),
                 'tensor ' || v.accessor_tensor_id) AS accessed_through,
         coalesce ((SELECT c.call_site FROM call_sites c WHERE c.stack_id = v.stack_id),
                   '(no call stack)') AS call_site,
         coalesce ((SELECT th.name FROM threads th WHERE th.pid = v.pid AND th.tid = v.tid),
                 'thread') || ' (' || v.tid || ')' AS thread,
         v.storage_id AS storage_id,
         v.pid AS pid,
         v.tid AS tid,
         v.writer_tensor_id AS writer_tensor_id,
         v.accessor_tensor_id AS accessor_tensor_id,
         v.writer_generation AS writer_generation,
         v.accessor_generation AS accessor_generation,
         v.ts AS ts_ns,
         v.stack_id AS stack_id,
         v.seq AS seq
  FROM violations v
  LEFT JOIN access_kinds a ON a.id = v.access
  LEFT JOIN ops o ON o.id = v.op);

CREATE VIEW call_sites_by_bytes AS
-- Copies and steals grouped by where the program wrote, most bytes
-- copied first (the report's "Top call sites").
--   call_site, copied_bytes, copies, steals, stolen_bytes, lock_wait_ms,
--   function, file, line, module
SELECT coalesce (c.call_site, '(no call stack)') AS call_site,
       sum (g.copied_bytes) AS copied_bytes,
       sum (g.copies) AS copies,
       sum (g.steals) AS steals,
       sum (g.stolen_bytes) AS stolen_bytes,
       round (sum (g.lock_wait_ns) / 1e6, 6) AS lock_wait_ms,
       c.function AS function,
       c.file AS file,
       c.line AS line,
       c.module AS module
FROM (SELECT m.stack_id AS stack_id,
             sum (CASE WHEN k.name = 'copy' THEN m.nbytes ELSE 0 END) AS copied_bytes,
             sum (k.name = 'copy') AS copies,
             sum (k.name = 'steal') AS steals,
             sum (CASE WHEN k.name = 'steal' THEN m.nbytes ELSE 0 END) AS stolen_bytes,
             coalesce (sum (m.lock_wait_ns), 0) AS lock_wait_ns
      FROM materializations m JOIN materialize_kinds k ON k.id = m.kind
      WHERE k.name IN ('copy', 'steal')
      GROUP BY m.stack_id) g
LEFT JOIN call_sites c ON c.stack_id = g.stack_id
GROUP BY 1, c.function, c.file, c.line, c.module
ORDER BY copied_bytes DESC, copies DESC, call_site;

CREATE VIEW operations_by_bytes AS
-- Copies and steals grouped by the operation that wrote, most bytes
-- copied first (the report's "Top operations").
--   operation, copied_bytes, copies, steals, stolen_bytes, lock_wait_ms
SELECT operation,
       sum (CASE WHEN kind = 'copy' THEN bytes ELSE 0 END) AS copied_bytes,
       sum (kind = 'copy') AS copies,
       sum (kind = 'steal') AS steals,
       sum (CASE WHEN kind = 'steal' THEN bytes ELSE 0 END) AS stolen_bytes,
       round (coalesce (sum (lock_wait_ns), 0) / 1e6, 6) AS lock_wait_ms
FROM copies_and_steals WHERE kind IN ('copy', 'steal')
GROUP BY operation
ORDER BY copied_bytes DESC, copies DESC, operation;

CREATE VIEW object_lifetimes AS
-- Every allocation, CoW context, storage and tensor with its lifetime.
-- What was alive at 12.5 ms: WHERE born_ms <= 12.5 AND alive_until_ms > 12.5.
--   kind ('allocation', 'context', 'storage', 'tensor'), object ("tensor
--   5 'weights'", "allocation 2", "allocation 7 (cuda:0)", "allocation 9
--   (foreign)", "storage 3", "context 4"),
--   bytes (a tensor's elements times their size), born_ms, freed_ms
--   (NULL: never freed), alive_until_ms (freed_ms, or the session's end),
--   name (tensors), pid, id, born_ns, freed_ns
SELECT kind, object, bytes,
       round ((born_ns - (SELECT value FROM meta WHERE key = 'start_ns')) / 1e6, 6) AS born_ms,
       round ((freed_ns - (SELECT value FROM meta WHERE key = 'start_ns')) / 1e6, 6) AS freed_ms,
       round ((coalesce (freed_ns, (SELECT value FROM meta WHERE key = 'end_ns'))
               - (SELECT value FROM meta WHERE key = 'start_ns')) / 1e6, 6) AS alive_until_ms,
       name, pid, id, born_ns, freed_ns
FROM (
  SELECT 'allocation' AS kind,
         'allocation ' || a.id
         || CASE k.name WHEN 'cuda' THEN ' (cuda:' || a.device || ')'
                        WHEN 'foreign' THEN ' (foreign)' ELSE '' END AS object,
         a.nbytes AS bytes, NULL AS name, a.pid AS pid, a.id AS id,
         a.new_ts AS born_ns, a.free_ts AS freed_ns
  FROM allocations a LEFT JOIN allocation_kinds k ON k.id = a.kind
  UNION ALL
  SELECT 'context', 'context ' || c.id,
         (SELECT a.nbytes FROM allocations a WHERE a.pid = c.pid AND a.id = c.allocation_id),
         NULL, c.pid, c.id, c.new_ts, c.free_ts
  FROM contexts c
  UNION ALL
  SELECT 'storage', 'storage ' || s.id, s.nbytes, NULL, s.pid, s.id, s.new_ts, s.free_ts
  FROM storages s
  UNION ALL
  SELECT 'tensor',
         'tensor ' || t.id || CASE WHEN t.name IS NOT NULL THEN ' ''' || t.name || '''' ELSE '' END,
         t.numel * (SELECT d.itemsize FROM dtypes d WHERE d.id = t.dtype),
         t.name, t.pid, t.id, t.new_ts, t.free_ts
  FROM tensors t);

CREATE VIEW user_ranges AS
-- The program's own ranges (cow_range_push ... cow_range_pop) with their
-- times and the copies, steals and lazy copies made while they were open.
--   name, at_ms, duration_ms (NULL: never closed), inside (the enclosing
--   range's name), copies, copied_bytes (the copies on its thread while
--   it was open, nested ranges' included), steals, stolen_bytes,
--   lazy_copies, shared_bytes (the same for steals and for lazy copies
--   that shared bytes), thread, pid, tid, id, parent_id, begin_ns, end_ns
--   (NULL: never closed)
SELECT r.name AS name,
       round ((r.begin_ts - (SELECT value FROM meta WHERE key = 'start_ns')) / 1e6, 6) AS at_ms,
       round ((r.end_ts - r.begin_ts) / 1e6, 6) AS duration_ms,
       (SELECT p.name FROM ranges p WHERE p.pid = r.pid AND p.id = r.parent_id) AS inside,
       (SELECT count (*) FROM materializations m JOIN materialize_kinds k ON k.id = m.kind
         WHERE k.name = 'copy' AND +m.pid = r.pid AND +m.tid = r.tid
           AND m.begin_ts BETWEEN r.begin_ts AND coalesce (r.end_ts, 9223372036854775807))
         AS copies,
       (SELECT coalesce (sum (m.nbytes), 0) FROM materializations m
         JOIN materialize_kinds k ON k.id = m.kind
         WHERE k.name = 'copy' AND +m.pid = r.pid AND +m.tid = r.tid
           AND m.begin_ts BETWEEN r.begin_ts AND coalesce (r.end_ts, 9223372036854775807))
         AS copied_bytes,
       (SELECT count (*) FROM materializations m JOIN materialize_kinds k ON k.id = m.kind
         WHERE k.name = 'steal' AND +m.pid = r.pid AND +m.tid = r.tid
           AND m.begin_ts BETWEEN r.begin_ts AND coalesce (r.end_ts, 9223372036854775807))
         AS steals,
       (SELECT coalesce (sum (m.nbytes), 0) FROM materializations m
         JOIN materialize_kinds k ON k.id = m.kind
         WHERE k.name = 'steal' AND +m.pid = r.pid AND +m.tid = r.tid
           AND m.begin_ts BETWEEN r.begin_ts AND coalesce (r.end_ts, 9223372036854775807))
         AS stolen_bytes,
       (SELECT count (*) FROM lazy_clones l
         WHERE l.context_id IS NOT NULL AND +l.pid = r.pid AND +l.tid = r.tid
           AND l.ts BETWEEN r.begin_ts AND coalesce (r.end_ts, 9223372036854775807))
         AS lazy_copies,
       (SELECT coalesce (sum (l.nbytes), 0) FROM lazy_clones l
         WHERE l.context_id IS NOT NULL AND +l.pid = r.pid AND +l.tid = r.tid
           AND l.ts BETWEEN r.begin_ts AND coalesce (r.end_ts, 9223372036854775807))
         AS shared_bytes,
       coalesce ((SELECT th.name FROM threads th WHERE th.pid = r.pid AND th.tid = r.tid),
                 'thread') || ' (' || r.tid || ')' AS thread,
       r.pid AS pid,
       r.tid AS tid,
       r.id AS id,
       r.parent_id AS parent_id,
       r.begin_ts AS begin_ns,
       r.end_ts AS end_ns
FROM ranges r;

CREATE VIEW session_overview AS
-- One row: what happened in the session, at a glance.
--   program, command, recorded (UTC), duration_ms, processes, threads,
--   copies, copied_bytes, steals, stolen_bytes, lazy_copies,
--   shared_bytes, eager_fallbacks, eager_bytes, warnings, events,
--   dropped_events (lost to a full ring: when not 0, every count here may
--   be short)
SELECT (SELECT value FROM meta WHERE key = 'program') AS program,
       (SELECT value FROM meta WHERE key = 'command') AS command,
       (SELECT value FROM meta WHERE key = 'created_utc') AS recorded,
       round (((SELECT value FROM meta WHERE key = 'end_ns')
               - (SELECT value FROM meta WHERE key = 'start_ns')) / 1e6, 6) AS duration_ms,
       (SELECT count (*) FROM processes) AS processes,
       (SELECT count (*) FROM threads) AS threads,
       (SELECT count (*) FROM materializations m JOIN materialize_kinds k ON k.id = m.kind
         WHERE k.name = 'copy') AS copies,
       (SELECT coalesce (sum (m.nbytes), 0) FROM materializations m
         JOIN materialize_kinds k ON k.id = m.kind WHERE k.name = 'copy') AS copied_bytes,
       (SELECT count (*) FROM materializations m JOIN materialize_kinds k ON k.id = m.kind
         WHERE k.name = 'steal') AS steals,
       (SELECT coalesce (sum (m.nbytes), 0) FROM materializations m
         JOIN materialize_kinds k ON k.id = m.kind WHERE k.name = 'steal') AS stolen_bytes,
       (SELECT count (*) FROM lazy_clones WHERE context_id IS NOT NULL) AS lazy_copies,
       (SELECT coalesce (sum (nbytes), 0) FROM lazy_clones WHERE context_id IS NOT NULL)
         AS shared_bytes,
       (SELECT count (*) FROM lazy_clones WHERE context_id IS NULL) AS eager_fallbacks,
       (SELECT coalesce (sum (nbytes), 0) FROM lazy_clones WHERE context_id IS NULL)
         AS eager_bytes,
       (SELECT count (*) FROM violations) AS warnings,
       (SELECT value FROM meta WHERE key = 'events') AS events,
       (SELECT value FROM meta WHERE key = 'dropped') AS dropped_events;
