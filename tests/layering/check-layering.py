#!/usr/bin/env python3
"""check-layering.py — checks every #include in the tree against the
layering table of HACKING.md, so that the layers cannot rot.

Usage: check-layering.py SOURCE-ROOT [HACKING.md]
       check-layering.py --self-test

The table is the first Markdown table under the heading "## Layering":

  | directory | may include headers of | may use libraries |

Column 1 lists directories (comma-separated, in backquotes); a source
file belongs to the longest listed directory that contains it.  Column 2
lists the directories whose headers its quoted includes may name besides
its own ("(public)" after one means its *-private.h headers are out);
"—" means none.  Column 3 lists the libraries its <system> includes may
come from ("libc" is implied).  Exits 1 and names every violation.
"""
import os
import re
import sys

# Which library a <system> header belongs to; anything else is libc/POSIX.
LIBRARIES = [
    ("GLib", re.compile(r"^(glib\.h|glib-object\.h|glib/.*|gobject/.*)$")),
    ("GIO", re.compile(r"^gio/.*$")),
    ("SQLite", re.compile(r"^sqlite3(ext)?\.h$")),
    ("GTK", re.compile(r"^(gtk|gdk|gsk)/.*$")),
    ("libadwaita", re.compile(r"^adwaita\.h$")),
    ("Graphviz", re.compile(r"^(gvc|cgraph|cdt)\.h$")),
    ("cairo", re.compile(r"^cairo.*\.h$")),
    ("Pango", re.compile(r"^pango/.*$")),
    ("json-glib", re.compile(r"^json-glib/.*$")),
    ("libdw", re.compile(r"^elfutils/.*$")),
    ("libunwind", re.compile(r"^libunwind.*\.h$")),
    ("zstd", re.compile(r"^zstd.*\.h$")),
    ("CUDA runtime", re.compile(r"^(cuda|cuda_runtime|cuda_runtime_api|driver_types)\.h$")),
    ("CUPTI", re.compile(r"^cupti.*\.h$")),
    ("libdl", re.compile(r"^dlfcn\.h$")),
    ("pthreads", re.compile(r"^pthread\.h$")),
    ("sanitizers", re.compile(r"^sanitizer/.*$")),
    ("LTTng-UST", re.compile(r"^lttng/.*$")),
    ("libcowtensor", re.compile(r"^cowtensor(/.*)?\.h$|^cow-[a-z-]+\.h$")),
]
SOURCE = re.compile(r"\.(c|h|cu)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]')


def parse_table(hacking):
    rows, in_section, in_table = [], False, False
    for line in open(hacking, encoding="utf-8"):
        if line.startswith("## "):
            if in_table:
                break
            in_section = line.strip() == "## Layering"
            continue
        if not in_section:
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            in_table = True
            if len(cells) < 3 or set(cells[0]) <= set("-: ") or cells[0] == "directory":
                continue
            dirs = re.findall(r"`([^`]+)`", cells[0])
            allowed = []
            for part in cells[1].split(","):
                m = re.search(r"`([^`]+)`", part)
                if m:
                    entry = m.group(1)
                    if not entry.endswith(".h"):
                        entry = entry.rstrip("/") + "/"
                    allowed.append((entry, "(public)" in part))
            libs = {l.strip() for l in re.sub(r"\(.*?\)", "", cells[2]).split(",") if l.strip()}
            libs.discard("—")
            for d in dirs:
                rows.append((d.rstrip("/") + "/", allowed, libs))
        elif in_table:
            break
    if not rows:
        sys.exit(f"check-layering: no table under '## Layering' in {hacking}")
    return rows


def sources(root):
    for top in ("engine", "probes", "app"):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            for f in filenames:
                if SOURCE.search(f):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def generated_headers(root):
    """Headers meson generates (configure_file/custom_target outputs)."""
    names = set()
    for dirpath, _, filenames in os.walk(root):
        if "meson.build" in filenames and "/build" not in dirpath:
            text = open(os.path.join(dirpath, "meson.build"), encoding="utf-8").read()
            names.update(re.findall(r"output\s*:\s*'([^']+\.h)'", text))
    return names


def check(root, hacking):
    """Returns the violations of @root against @hacking's table."""
    rows = parse_table(hacking)
    files = list(sources(root))
    by_name = {}
    for f in files:
        if f.endswith(".h"):
            by_name.setdefault(os.path.basename(f), []).append(f)
    generated = generated_headers(root)
    errors = []

    def layer_of(path):
        best = None
        for d, allowed, libs in rows:
            if path.startswith(d) and (best is None or len(d) > len(best[0])):
                best = (d, allowed, libs)
        return best

    for f in files:
        layer = layer_of(f)
        if layer is None:
            errors.append(f"{f}: its directory is not in HACKING.md's layering table")
            continue
        own, allowed, libs = layer
        for n, line in enumerate(open(os.path.join(root, f), encoding="utf-8", errors="replace"), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            where = f"{f}:{n}: #include {kind}{name}{'>' if kind == '<' else kind}"
            if kind == "<":
                lib = next((l for l, rx in LIBRARIES if rx.match(name)), "libc")
                if lib == "libcowtensor":
                    target = by_name.get(os.path.basename(name), [None])[0]
                    if target is None:
                        continue
                    kind, resolved = '"', target
                elif lib != "libc" and lib not in libs:
                    errors.append(f"{where}: {own} may not use {lib}")
                    continue
                else:
                    continue
            else:
                local = os.path.normpath(os.path.join(os.path.dirname(f), name))
                if os.path.exists(os.path.join(root, local)):
                    resolved = local
                elif len(by_name.get(os.path.basename(name), [])) == 1:
                    resolved = by_name[os.path.basename(name)][0]
                elif os.path.basename(name) in generated:
                    continue
                else:
                    errors.append(f"{where}: no such header in the tree (or ambiguous)")
                    continue
            target_layer = layer_of(resolved)
            if target_layer is not None and target_layer[0] == own:
                continue
            ok = False
            for d, public_only in allowed:
                matches = resolved == d if d.endswith(".h") else resolved.startswith(d)
                if matches and not (public_only and resolved.endswith("-private.h")):
                    ok = True
                    break
            if not ok:
                errors.append(f"{where}: {own} may not include {resolved}")
    return files, errors


SELF_TEST_TABLE = """## Layering

| directory | may include headers of | may use libraries |
|---|---|---|
| `engine/` | — | pthreads |
| `probes/format/` | `engine/` (public), `probes/cowscope-protocol.h` | GLib |
| `probes/` | `engine/` (public) | — |
| `app/gtk/` | `probes/format/` | GLib, GTK |
"""

SELF_TEST_FILES = {
    "engine/cow-a.h": "", "engine/cow-a-private.h": "",
    "engine/cow-a.c": '#include "cow-a-private.h"\n#include <pthread.h>\n',
    "probes/cowscope-protocol.h": "", "probes/cowscope-ring.h": "",
    "probes/format/f.c": '#include "cow-a.h"\n#include "cowscope-protocol.h"\n#include <glib.h>\n',
    "app/gtk/ok.c": '#include "f.h"\n#include <gtk/gtk.h>\n',
    "probes/format/f.h": "",
    # each line below is one violation
    "app/gtk/bad.c": '#include <sqlite3.h>\n#include "cow-a.h"\n#include "missing.h"\n',
    "probes/format/bad.c": '#include "cow-a-private.h"\n#include "cowscope-ring.h"\n',
    "engine/bad.c": "#include <glib.h>\n",
}


def self_test():
    """The checker finds exactly the violations planted in a small tree."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        for path, text in SELF_TEST_FILES.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        with open(os.path.join(root, "HACKING.md"), "w", encoding="utf-8") as f:
            f.write(SELF_TEST_TABLE)
        _, errors = check(root, os.path.join(root, "HACKING.md"))
    found = sorted(e.split(": #include ")[0] for e in errors)
    expected = sorted(["app/gtk/bad.c:1", "app/gtk/bad.c:2", "app/gtk/bad.c:3",
                       "probes/format/bad.c:1", "probes/format/bad.c:2", "engine/bad.c:1"])
    if found != expected:
        print("check-layering self-test: expected", expected, "found", found)
        for e in errors:
            print(" ", e)
        sys.exit(1)
    print(f"check-layering self-test: the {len(expected)} planted violations found, no other")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    root = os.path.abspath(sys.argv[1])
    hacking = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "HACKING.md")
    files, errors = check(root, hacking)
    for e in errors:
        print(e)
    print(f"check-layering: {len(files)} files, {len(errors)} violation(s)")
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
