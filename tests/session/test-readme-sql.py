#!/usr/bin/env python3
"""test-readme-sql.py — every SQL example of README.md runs as written (TAP).

Records the demo as the README says (`cowscope-cli record -o FILE --
cowscope-demo all`), then runs each ```sql block of README.md verbatim
in the sqlite3 shell on that session: no error, no warning, at least one
row.  For a few, the rows are checked against the report's figures or
against the session's tables queried directly (the views' rules written
out once more, by hand, on the base tables).

Usage: test-readme-sql.py README.md
Environment: COWSCOPE_CLI, COWSCOPE_DEMO, SQLITE3 (the shell), and
COWSCOPE_TEST_TMPDIR (where the session goes).
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

results = []


def check(name, ok, detail=""):
    results.append((name, bool(ok), detail))
    return ok


def sql_blocks(readme):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"^```sql\n(.*?)^```$", text, re.S | re.M)


def record(session):
    done = subprocess.run(
        [os.environ["COWSCOPE_CLI"], "record", "-o", session, "--",
         os.environ["COWSCOPE_DEMO"], "--quiet", "all"],
        capture_output=True, text=True, timeout=300)
    return check("the demo is recorded", done.returncode == 0 and os.path.exists(session),
                 done.stderr[-2000:])


def shell(session, sql):
    """Rows of @sql run by the sqlite3 shell as JSON objects, or an error."""
    done = subprocess.run([os.environ["SQLITE3"], "-bail", "-batch", "-json", session],
                          input=sql, capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or done.stderr.strip():
        return None, f"exit {done.returncode}: {done.stderr.strip()}"
    return (json.loads(done.stdout) if done.stdout.strip() else []), ""


def report(session):
    done = subprocess.run([os.environ["COWSCOPE_CLI"], "report", "--json", session],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"report failed: {done.stderr}")
    return json.loads(done.stdout)


def first_block(blocks, fragment):
    found = [b for b in blocks if fragment in b]
    if not check(f"the README has an example with {fragment!r}", found):
        return None
    return found[0]


def check_values(session, blocks, rows_of):
    metrics = report(session)
    m = metrics["metrics"]
    db = sqlite3.connect(f"file:{session}?mode=ro", uri=True)
    one = lambda sql, *args: db.execute(sql, args).fetchone()[0]

    block = first_block(blocks, "FROM session_overview")
    if block:
        row = rows_of[block][0]
        check("session_overview: copies, steals, lazy copies, warnings as the report counts them",
              (row["copies"], row["steals"], row["lazy_copies"], row["eager_fallbacks"],
               row["warnings"], row["copied_bytes"])
              == (m["copies"], m["steals"], m["lazy_clones"], m["eager_fallbacks"],
                  m["violations"], m["copied_bytes"]), f"{row} against {m}")

    block = first_block(blocks, "FROM copies ORDER BY bytes DESC")
    if block:
        rows = rows_of[block]
        largest = one("SELECT max(m.nbytes) FROM materializations m JOIN materialize_kinds k"
                      " ON k.id = m.kind WHERE k.name = 'copy'")
        check("the largest copies: the largest first, at most ten, by operation name",
              rows[0]["bytes"] == largest and len(rows) <= 10
              and [r["bytes"] for r in rows] == sorted((r["bytes"] for r in rows), reverse=True)
              and all(re.fullmatch(r"[a-z_]+", r["operation"]) for r in rows),
              f"{rows[:2]}, largest {largest}")

    block = first_block(blocks, "FROM call_sites_by_bytes")
    if block:
        row = rows_of[block][0]
        top = metrics["top_call_sites"][0]
        expected = f"{top['function']} ({os.path.basename(top['file'])}:{top['line']})"
        check("call sites by bytes: the report's top call site, bytes and copies",
              (row["call_site"], row["copied_bytes"], row["copies"])
              == (expected, top["bytes"], top["copies"]), f"{row} against {top}")

    block = first_block(blocks, "FROM warnings")
    if block:
        rows = rows_of[block]
        check("warnings: the demo's simulate-mode warning, as a sentence",
              len(rows) == m["violations"]
              and any(r["message"] == "read through 'sim.base' after a write through"
                      " 'sim.reshaped'" and "demo-simulate.c" in r["call_site"] for r in rows),
              str(rows))

    block = first_block(blocks, "FROM eager_fallbacks")
    if block:
        rows = rows_of[block]
        check("eager fallbacks: the demo's foreign memory, with its reason",
              len(rows) == m["eager_fallbacks"]
              and rows[0]["reason"] == "foreign_data_ptr" and rows[0]["bytes"] == m["eager_bytes"],
              str(rows))

    block = first_block(blocks, "FROM object_lifetimes")
    if block:
        rows = {r["kind"]: r for r in rows_of[block]}
        # The largest copy's begin (the first, should two be as large).
        instant = one("SELECT m.begin_ts FROM materializations m JOIN materialize_kinds k"
                      " ON k.id = m.kind WHERE k.name = 'copy'"
                      " ORDER BY m.nbytes DESC, m.begin_ts LIMIT 1")
        end = one("SELECT value FROM meta WHERE key = 'end_ns'")
        allocated = one("SELECT sum(nbytes) FROM allocations WHERE new_ts <= ?"
                        " AND coalesce(free_ts, ?) > ?", instant, end, instant)
        tensors = one("SELECT count(*) FROM tensors WHERE new_ts <= ?"
                      " AND coalesce(free_ts, ?) > ?", instant, end, instant)
        check("objects alive at the largest copy: the allocations' bytes and the tensors, from the tables",
              "allocation" in rows and rows["allocation"]["bytes"] == allocated
              and rows.get("tensor", {}).get("objects") == tensors,
              f"{rows} against {allocated} bytes allocated, {tensors} tensors")
    db.close()


def main():
    if len(sys.argv) != 2:
        print("Usage: test-readme-sql.py README.md", file=sys.stderr)
        return 2
    if not shutil.which(os.environ.get("SQLITE3", "sqlite3")):
        print("1..0 # SKIP the sqlite3 shell is not installed (Debian package sqlite3)")
        return 0
    blocks = sql_blocks(sys.argv[1])
    check("the README has SQL examples", len(blocks) >= 8, f"{len(blocks)} blocks")
    tmp = tempfile.mkdtemp(prefix="readme-sql-", dir=os.environ.get("COWSCOPE_TEST_TMPDIR"))
    try:
        session = os.path.join(tmp, "demo.cowscope")
        if record(session):
            rows_of = {}
            for block in blocks:
                rows, error = shell(session, block)
                title = " ".join(block.split())[:70]
                check(f"runs with rows: {title}", rows, error or "no rows")
                rows_of[block] = rows or [{}]
            try:
                check_values(session, blocks, rows_of)
            except (RuntimeError, KeyError, IndexError, TypeError, sqlite3.Error) as error:
                check("the expected values can be read", False, repr(error))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"1..{len(results)}")
    for number, (name, ok, detail) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {number} - {name}")
        if not ok and detail:
            for line in str(detail).splitlines():
                print(f"# {line}")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
