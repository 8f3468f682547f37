#!/usr/bin/env python3
"""make-seeds.py SESSION... — writes small seed inputs for the libFuzzer
targets into tests/fuzz/corpus/ from recorded sessions:

  corpus/session/NAME.cowscope          the session, 512-byte pages, its
                                        counter tracks cut to 16 bins and
                                        its process maps dropped (a few
                                        dozen KB: one page per table and
                                        index is the floor);
  corpus/session/NAME-raw.cowscope      the same as a killed recorder
                                        leaves it (not finalized, no
                                        derived rows), for the finalizer;
  corpus/packed/NAME-KIND-N             the packed BLOBs (event chunks
                                        included, kind 6), each behind the
                                        byte that picks its decoder
                                        (fuzz-packed.c).

Seeds are inputs, not expectations: regenerate them whenever the format
changes (the corpus replay test then runs the new ones)."""
import os
import shutil
import sqlite3
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DERIVED = ["allocations", "storages", "tensors", "contexts", "lazy_clones",
           "materializations", "violations", "ranges", "marks", "checkpoints",
           "checkpoint_objects", "timeline_lanes", "timeline_chunks",
           "timeline_spans", "timeline_counters", "checkpoint_states",
           "checkpoint_replays", "ipc_refs", "ipc_blocks"]


def zigzag(v):
    return (v << 1) ^ (v >> 63)


def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while v >= 0x80:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def shrink(source, target, raw):
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "work.cowscope")
        shutil.copy(source, work)
        db = sqlite3.connect(work)
        db.execute("UPDATE timeline_counters SET n_bins = 16, bins = substr (bins, 1, 16 * 24)")
        db.execute("DELETE FROM process_maps")
        if raw:
            for table in DERIVED:
                db.execute("DELETE FROM %s" % table)
            db.execute("UPDATE meta SET value = 0 WHERE key = 'finalized'")
        db.commit()
        db.execute("PRAGMA page_size = 512")
        if os.path.exists(target):
            os.unlink(target)
        db.execute("VACUUM INTO ?", (target,))
        db.close()


def packed(source, name, out_dir):
    db = sqlite3.connect("file:%s?mode=ro" % source, uri=True)
    queries = [
        (0, "SELECT c.instants FROM timeline_chunks c JOIN timeline_lanes l ON l.id = c.lane"
            " WHERE l.device IS NULL OR l.device < 0 LIMIT 3"),
        (1, "SELECT c.instants FROM timeline_chunks c JOIN timeline_lanes l ON l.id = c.lane"
            " WHERE l.device >= 0 LIMIT 3"),
        (2, "SELECT spans FROM timeline_spans LIMIT 3"),
        (3, "SELECT objects FROM checkpoint_states LIMIT 3"),
        (4, "SELECT events FROM checkpoint_replays LIMIT 3"),
        (6, "SELECT data FROM event_chunks ORDER BY length(data) LIMIT 3"),
    ]
    for kind, sql in queries:
        for n, (blob,) in enumerate(db.execute(sql)):
            # An event chunk cut short no longer decodes: kept whole.
            blob = bytes(blob) if kind == 6 else bytes(blob[:8192])
            with open(os.path.join(out_dir, "%s-%d-%d" % (name, kind, n)), "wb") as f:
                f.write(bytes([kind]) + blob)
    for n, (start, end, bins) in enumerate(
            db.execute("SELECT start_ns, end_ns, bins FROM timeline_counters")):
        head = varint(zigzag(start)) + varint(zigzag(end)) + varint(16)
        with open(os.path.join(out_dir, "%s-5-%d" % (name, n)), "wb") as f:
            f.write(bytes([5]) + head + bytes(bins[:16 * 24]))
    db.close()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    os.makedirs(os.path.join(HERE, "corpus", "session"), exist_ok=True)
    os.makedirs(os.path.join(HERE, "corpus", "packed"), exist_ok=True)
    for source in sys.argv[1:]:
        name = os.path.splitext(os.path.basename(source))[0]
        shrink(source, os.path.join(HERE, "corpus", "session", name + ".cowscope"), False)
        shrink(source, os.path.join(HERE, "corpus", "session", name + "-raw.cowscope"), True)
        packed(source, name, os.path.join(HERE, "corpus", "packed"))


if __name__ == "__main__":
    main()
