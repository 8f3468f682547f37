#!/usr/bin/env python3
"""test-install.py — `meson install` gives a working Cowscope anywhere (TAP).

Installs this build into a temporary DESTDIR, then works only from there,
as a user who followed README.md would: the installed files reference
neither the build tree nor the source tree; the example target
engine/examples/lazy-copies.c compiles with the command line its comment
(and the README) gives, `pkg-config --cflags --libs cowtensor` and
nothing else; the installed cowscope-cli (started through its own rpath,
with no LD_LIBRARY_PATH) records it with the installed probe; the
report's call sites name the example's own lines.  Removing what the
install log lists (what `meson uninstall` does) leaves nothing.

The staging tree is the configured prefix under DESTDIR, so the
installed files run from a prefix other than the one they were built
for.  meson install writes its log (meson-logs/install-log.txt, which
`meson uninstall` reads) into the build directory it runs in: it runs in
a scratch directory that links to this build's outputs, so nothing is
written outside the temporary directory and the user's own install log
is left alone.

Everything comes from the environment meson's test() sets (see
tests/install/meson.build): COWSCOPE_MESON, COWSCOPE_BUILD_ROOT,
COWSCOPE_SOURCE_ROOT, COWSCOPE_PREFIX and COWSCOPE_<DIR> for the
install directories, COWSCOPE_WITH_GUI, COWSCOPE_COMPLETIONS_DIR.
"""
import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile

EXAMPLE = "lazy-copies.c"
results = []


def check(name, ok, detail=""):
    results.append((name, bool(ok), detail))
    return ok


def env(name):
    return os.environ[name]


def staged(destdir, path):
    """@path (absolute, as configured) inside the staging tree."""
    return os.path.join(destdir, path.lstrip("/"))


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, **kwargs)


def install(scratch, destdir):
    """meson install of this build into @destdir, run from @scratch;
    returns the install log's paths."""
    build_root = env("COWSCOPE_BUILD_ROOT")
    os.makedirs(os.path.join(scratch, "meson-private"))
    os.makedirs(os.path.join(scratch, "meson-logs"))
    for entry in os.listdir(build_root):
        if entry not in ("meson-private", "meson-logs"):
            os.symlink(os.path.join(build_root, entry), os.path.join(scratch, entry))
    shutil.copy2(os.path.join(build_root, "meson-private", "install.dat"),
                 os.path.join(scratch, "meson-private"))
    done = run(shlex.split(env("COWSCOPE_MESON"))
               + ["install", "-C", scratch, "--no-rebuild", "--destdir", destdir])
    if not check("meson install into a DESTDIR", done.returncode == 0,
                 done.stdout[-2000:] + done.stderr[-2000:]):
        return None
    with open(os.path.join(scratch, "meson-logs", "install-log.txt"), encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def expected_files():
    """What a user needs, by configured path."""
    prefix = env("COWSCOPE_PREFIX")
    d = {name: os.path.join(prefix, env("COWSCOPE_" + name))
         for name in ("BINDIR", "LIBDIR", "INCLUDEDIR", "DATADIR", "MANDIR", "PKGLIBDIR")}
    files = [
        f"{d['BINDIR']}/cowscope-cli",
        f"{d['BINDIR']}/cowscope-demo",
        f"{d['LIBDIR']}/libcowtensor.so",
        f"{d['LIBDIR']}/libcowtensor.so.0",
        f"{d['LIBDIR']}/pkgconfig/cowtensor.pc",
        f"{d['INCLUDEDIR']}/cowtensor/cowtensor.h",
        f"{d['INCLUDEDIR']}/cowtensor/cow-lazy.h",
        f"{d['PKGLIBDIR']}/libcowscope-probe.so",
        f"{d['MANDIR']}/man1/cowscope-cli.1",
        f"{d['DATADIR']}/cowscope/session-schema.sql",
        f"{d['DATADIR']}/cowscope/session-views.sql",
    ]
    if env("COWSCOPE_COMPLETIONS_DIR"):
        files.append(os.path.join(prefix, env("COWSCOPE_COMPLETIONS_DIR"), "cowscope-cli"))
    if env("COWSCOPE_WITH_GUI") == "true":
        app = "org.cowscope.Cowscope"
        files += [
            f"{d['BINDIR']}/cowscope",
            f"{d['MANDIR']}/man1/cowscope.1",
            f"{d['DATADIR']}/applications/{app}.desktop",
            f"{d['DATADIR']}/metainfo/{app}.metainfo.xml",
            f"{d['DATADIR']}/glib-2.0/schemas/{app}.gschema.xml",
            f"{d['DATADIR']}/icons/hicolor/scalable/apps/{app}.svg",
            f"{d['DATADIR']}/icons/hicolor/symbolic/apps/{app}-symbolic.svg",
            os.path.join(prefix, env("COWSCOPE_LOCALEDIR"), "de/LC_MESSAGES/cowscope.mo"),
        ]
    return files


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def references_to_trees(path, scratch):
    """Which of the build and source trees the file at @path names, its
    debug information aside (DWARF names the sources by design)."""
    data_path = path
    if is_elf(path):
        data_path = os.path.join(scratch, "stripped")
        done = run(["objcopy", "--strip-debug", path, data_path])
        if done.returncode != 0:
            return [f"objcopy failed: {done.stderr.strip()}"]
    with open(data_path, "rb") as f:
        data = f.read()
    return [tree for tree in (env("COWSCOPE_BUILD_ROOT"), env("COWSCOPE_SOURCE_ROOT"))
            if os.path.realpath(tree).encode() in data or tree.encode() in data]


def user_environment(destdir, work):
    """A shell environment that sees only the install: its bindir first
    on PATH, its pkg-config files, nothing of the build tree."""
    prefix = staged(destdir, env("COWSCOPE_PREFIX"))
    pkgconfig_dir = os.path.join(prefix, env("COWSCOPE_LIBDIR"), "pkgconfig")
    user = {k: v for k, v in os.environ.items()
            if not k.startswith(("COWSCOPE_", "LD_", "PKG_CONFIG", "MESON", "GSETTINGS_"))}
    user["PATH"] = os.path.join(prefix, env("COWSCOPE_BINDIR")) + ":/usr/bin:/bin"
    user["PKG_CONFIG_PATH"] = pkgconfig_dir
    user["HOME"] = work
    user["XDG_RUNTIME_DIR"] = work
    user["LC_ALL"] = "C.UTF-8"
    with open(os.path.join(pkgconfig_dir, "cowtensor.pc"), encoding="utf-8") as f:
        if "${pcfiledir}" not in f.read():
            # Built with -Dpkgconfig.relocatable=false: the .pc names the
            # configured prefix, which lies under the staging tree here
            # (even /usr, whose flags pkg-config would otherwise drop).
            user["PKG_CONFIG_SYSROOT_DIR"] = destdir
            user["PKG_CONFIG_ALLOW_SYSTEM_CFLAGS"] = "1"
            user["PKG_CONFIG_ALLOW_SYSTEM_LIBS"] = "1"
    return user


def compile_line(source_root):
    """The compile command of the example, from its own comment; the
    README must show the same one."""
    with open(os.path.join(source_root, "engine", "examples", EXAMPLE), encoding="utf-8") as f:
        example = f.read()
    found = re.search(r"^ \*   (cc .*pkg-config --cflags --libs cowtensor.*)$", example, re.M)
    return found.group(1) if found else None, example


def readme_report_excerpt(source_root):
    """The lines of the README's fenced block that quotes the example's
    report (the one naming its call site)."""
    with open(os.path.join(source_root, "README.md"), encoding="utf-8") as f:
        blocks = re.findall(r"^```\n(.*?)^```$", f.read(), re.M | re.S)
    for block in blocks:
        if f"copied at {EXAMPLE}:" in block:
            return [line.rstrip() for line in block.splitlines() if line.strip()]
    return []


def line_of(example, text):
    for number, line in enumerate(example.splitlines(), 1):
        if text in line:
            return number
    return None


def record_and_report(destdir, work, scratch):
    source_root = env("COWSCOPE_SOURCE_ROOT")
    user = user_environment(destdir, work)
    prefix = staged(destdir, env("COWSCOPE_PREFIX"))
    libdir = os.path.join(prefix, env("COWSCOPE_LIBDIR"))

    command, example = compile_line(source_root)
    if not check("the example's comment gives its compile line", command is not None):
        return
    with open(os.path.join(source_root, "README.md"), encoding="utf-8") as f:
        check("the README shows the same compile line", command in f.read(), command)
    shutil.copy2(os.path.join(source_root, "engine", "examples", EXAMPLE), work)

    done = run(["pkg-config", "--cflags", "--libs", "cowtensor"], env=user, cwd=work)
    check("pkg-config names the installed headers and library",
          done.returncode == 0 and f"-I{prefix}" in done.stdout and f"-L{libdir}" in done.stdout,
          done.stdout + done.stderr)
    # Sanitizer builds: the installed library needs its runtime, and the
    # recorder tests' ASan settings (preloaded probe ahead of libasan).
    cflags = os.environ.get("COWSCOPE_SANITIZE_CFLAGS", "")
    done = run(["sh", "-c", command + (" " + cflags if cflags else "")], env=user, cwd=work)
    if not check("the example compiles with only pkg-config's flags",
                 done.returncode == 0, done.stdout + done.stderr):
        return

    done = run(["cowscope-cli", "--version"], env=user, cwd=work)
    check("the installed cowscope-cli starts with no LD_LIBRARY_PATH",
          done.returncode == 0 and done.stdout.startswith("cowscope-cli "),
          done.stdout + done.stderr)
    if env("COWSCOPE_WITH_GUI") == "true":
        done = run(["cowscope", "--version"], env=user, cwd=work)
        check("the installed cowscope starts with no LD_LIBRARY_PATH",
              done.returncode == 0 and done.stdout.startswith("cowscope "),
              done.stdout + done.stderr)
    done = run(["cowscope-demo", "--list"], env=user, cwd=work)
    check("the installed cowscope-demo starts", done.returncode == 0, done.stdout + done.stderr)

    # The example itself was built against a library outside the loader's
    # path: it gets LD_LIBRARY_PATH (README.md says so); the recorder not.
    session = os.path.join(work, "lazy-copies.cowscope")
    done = run(["cowscope-cli", "record", "--env", f"LD_LIBRARY_PATH={libdir}",
                "-o", session, "--", "./lazy-copies"], env=user, cwd=work)
    if not check("the installed cowscope-cli records the example",
                 done.returncode == 0 and os.path.isfile(session), done.stdout + done.stderr):
        return
    check("the example's own checks pass under the recorder",
          "snapshot[0][0] = 0, backup[0][0] = 2" in done.stdout, done.stdout)

    with sqlite3.connect(f"file:{session}?mode=ro", uri=True) as db:
        maps = "\n".join(row[0] for row in db.execute("SELECT maps FROM process_maps"))
    mapped = set(re.findall(r"(/\S*(?:libcowscope-probe|libcowtensor)\.so\S*)", maps))
    probe = os.path.join(prefix, env("COWSCOPE_PKGLIBDIR"), "libcowscope-probe.so")
    check("the target ran with the installed probe and libcowtensor",
          os.path.realpath(probe) in mapped
          and any(m.startswith(os.path.realpath(libdir) + "/libcowtensor.so") for m in mapped)
          and all(m.startswith(os.path.realpath(destdir)) for m in mapped),
          f"mapped: {sorted(mapped)}")

    done = run(["cowscope-cli", "report", "--json", session], env=user, cwd=work)
    if not check("the installed cowscope-cli reports the session", done.returncode == 0,
                 done.stderr):
        return
    report = json.loads(done.stdout)
    metrics = report["metrics"]
    check("the report counts the example's 2 lazy clones, 1 copy of 256 KiB and 1 steal",
          (metrics["lazy_clones"], metrics["copies"], metrics["copied_bytes"], metrics["steals"])
          == (2, 1, 256 * 1024, 1), json.dumps(metrics))
    fill_line = line_of(example, "cow_tensor_fill_ (weights")
    sites = report["top_call_sites"]
    check(f"the copy's call site is {EXAMPLE}:{fill_line} in main()",
          [(os.path.basename(s["file"] or ""), s["line"], s["function"]) for s in sites]
          == [(EXAMPLE, fill_line, "main")], json.dumps(sites, indent=1))

    done = run(["cowscope-cli", "report", session], env=user, cwd=work)
    check("the text report names the call site",
          f"256.0 KiB copied at {EXAMPLE}:{fill_line} in main()" in done.stdout, done.stdout)
    with open(os.path.join(source_root, "README.md"), encoding="utf-8") as f:
        cited = sorted(set(int(n) for n in re.findall(re.escape(EXAMPLE) + r":(\d+)", f.read())))
    check(f"the README names {EXAMPLE}:{fill_line} wherever it names a line of it",
          cited == [fill_line], f"README names lines {cited}")
    quoted = readme_report_excerpt(source_root)
    lines = {line.rstrip() for line in done.stdout.splitlines()}
    wrong = [line for line in quoted if line not in lines]
    check("every line the README quotes from the example's report is in it",
          quoted and not wrong, "not in the report: " + repr(wrong) + "\n" + done.stdout)


def uninstall(logged, destdir):
    """What `meson uninstall` does: remove every logged path, in order
    (folders after what they hold)."""
    failures = []
    for path in logged:
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                os.rmdir(path)
            else:
                os.unlink(path)
        except OSError as error:
            failures.append(f"{path}: {error.strerror}")
    left = [os.path.join(d, f) for d, dirs, files in os.walk(destdir) for f in dirs + files]
    check("removing what the install log lists leaves nothing",
          not failures and not left and not os.path.exists(destdir),
          "\n".join(failures + sorted(left)[:20]))


def main():
    keep = os.environ.get("COWSCOPE_KEEP_INSTALL_TEST") == "1"
    top = tempfile.mkdtemp(prefix="cowscope-install-test-")
    scratch, destdir, work = (os.path.join(top, d) for d in ("meson", "root", "work"))
    os.makedirs(work)
    try:
        logged = install(scratch, destdir)
        if logged is not None:
            outside = [p for p in logged if p != destdir and not p.startswith(destdir + "/")]
            check("every installed file is inside the DESTDIR", not outside, "\n".join(outside))
            missing = [f for f in expected_files() if not os.path.lexists(staged(destdir, f))]
            check("everything a user needs is installed", not missing, "\n".join(missing))
            files = [p for p in logged if os.path.isfile(p) and not os.path.islink(p)]
            named = {p: refs for p in files
                     if (refs := references_to_trees(p, top))}
            check("no installed file names the build or source tree", not named,
                  "\n".join(f"{p}: {refs}" for p, refs in named.items()))
            record_and_report(destdir, work, top)
            uninstall(logged, destdir)
    except (OSError, subprocess.SubprocessError, ValueError, KeyError) as error:
        check("the install test runs", False, repr(error))
    finally:
        if keep:
            print(f"# kept {top}")
        else:
            shutil.rmtree(top, ignore_errors=True)

    print(f"1..{len(results)}")
    for number, (name, ok, detail) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {number} - {name}")
        if not ok and detail:
            for line in detail.splitlines():
                print(f"# {line}")
    return 0 if results and all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
