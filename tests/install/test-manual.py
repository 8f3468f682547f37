#!/usr/bin/env python3
"""test-manual.py — the manual pages agree with the commands' --help (TAP).

For cowscope-cli(1): every command `cowscope-cli --help` lists has its
own subsection, every option `cowscope-cli COMMAND --help` lists is an
item of that subsection and the reverse, likewise the top-level options,
every export format, --fail-if metric and exit status; both send trace
users to the Perfetto UI.  For cowscope(1): the options of
`cowscope --help-all`.  Both commands print their version with
--version, and the pages name the same version.  The pages render
without warnings when man-db is installed.

Usage: test-manual.py VERSION CLI CLI_PAGE [GUI GUI_PAGE]
"""
import os
import re
import shutil
import subprocess
import sys

OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")

results = []


def check(name, ok, detail=""):
    results.append((name, ok, detail))


def run(argv):
    env = dict(os.environ, LC_ALL="C.UTF-8")
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr}")
    return done.stdout


def help_options(text):
    """The options a --help text lists: the option part (before the
    description) of each line that starts with a dash."""
    options = set()
    for line in text.splitlines():
        if line.lstrip().startswith("-"):
            spec = re.split(r"\s{2,}", line.strip())[0]
            options.update(OPTION.findall(spec))
    return options


def help_section_words(text, heading):
    """First words of the indented lines under @heading, up to a blank line."""
    words, on = [], False
    for line in text.splitlines():
        if line.startswith(heading):
            on = True
        elif on and not line.strip():
            break
        elif on:
            words.append(line.split()[0])
    return words


def unescape(line):
    line = re.sub(r"\\f[BIRP]|\\f\(..|\\&|\\~", "", line)
    return line.replace("\\-", "-").replace("\\e", "\\").replace('"', "")


def man_sections(path):
    """{section name: [item tag lines]}: .SH sections as "NAME", .SS
    subsections as "NAME/SUB"; an item's tag is the line after .TP."""
    sections, current, after_tp = {}, None, False
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if line.startswith('.\\"'):
                continue
            if line.startswith(".SH "):
                top = unescape(line[4:]).strip()
                current = top
                sections.setdefault(current, [])
            elif line.startswith(".SS "):
                current = top + "/" + unescape(line[4:]).strip()
                sections.setdefault(current, [])
            elif line.startswith(".TP"):
                after_tp = True
            elif after_tp:
                after_tp = False
                if current is not None:
                    tag = re.sub(r"^\.\w+\s*", "", unescape(line))
                    sections[current].append(tag)
    return sections


def tag_options(tags):
    return {o for tag in tags for o in OPTION.findall(tag)}


def compare(name, listed, documented):
    missing = sorted(listed - documented)
    extra = sorted(documented - listed)
    check(name, not missing and not extra,
          (f"not in the man page: {missing}" if missing else "")
          + (f" documented but not in --help: {extra}" if extra else ""))


def man_version(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith(".TH "):
                found = re.search(r'"cowscope ([^"]+)"', line)
                return found.group(1) if found else None
    return None


def lint(path):
    """man-db's own check, as lintian runs it: no warnings."""
    if shutil.which("man") is None:
        return
    done = subprocess.run(
        ["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", path],
        capture_output=True, text=True, timeout=60,
        env=dict(os.environ, LC_ALL="C.UTF-8", MANROFFSEQ=""))
    check(f"{os.path.basename(path)} renders without warnings",
          done.returncode == 0 and not done.stderr.strip(), done.stderr.strip())


def check_cli(version, cli, page):
    sections = man_sections(page)
    top = run([cli, "--help"])
    check("cowscope-cli --version prints its version",
          run([cli, "--version"]).strip() == f"cowscope-cli {version}",
          run([cli, "--version"]).strip())
    check("cowscope-cli(1) names the version", man_version(page) == version,
          str(man_version(page)))
    compare("cowscope-cli --help options are in OPTIONS",
            help_options(top), tag_options(sections.get("OPTIONS", [])))

    commands = help_section_words(top, "Commands:")
    documented = {name.split("/", 1)[1] for name in sections if name.startswith("COMMANDS/")}
    check("every command has a subsection of COMMANDS", set(commands) == documented,
          f"--help: {commands}, man page: {sorted(documented)}")
    for command in commands:
        text = run([cli, command, "--help"])
        compare(f"cowscope-cli {command} --help options are in its subsection",
                help_options(text), tag_options(sections.get("COMMANDS/" + command, [])))

    export = run([cli, "export", "--help"])
    formats = set(help_section_words(export, "Formats:"))
    documented = {tag.strip() for tag in sections.get("COMMANDS/export", [])} & formats
    check("every export format is documented", len(formats) == 3 and formats == documented,
          f"--help: {sorted(formats)}, man page: {sorted(documented)}")
    with open(page, encoding="utf-8") as f:
        page_text = f.read()
    check("the export recommends the Perfetto UI, not chrome://tracing",
          "ui.perfetto.dev" in export and "ui.perfetto.dev" in page_text
          and "chrome://tracing" not in export + page_text)

    report = run([cli, "report", "--help"])
    metrics_line = report.split("Metrics for --fail-if", 1)[1].splitlines()[1]
    metrics = {m.strip() for m in metrics_line.split(",") if m.strip()}
    documented = {tag.strip() for tag in sections.get("FAIL-IF EXPRESSIONS", [])}
    check("every --fail-if metric is documented", len(metrics) > 0 and metrics == documented,
          f"--help: {sorted(metrics)}, man page: {sorted(documented)}")

    statuses = set(re.findall(r"\b(\d) ", top.split("Exit status:", 1)[1]))
    documented = {tag.strip() for tag in sections.get("EXIT STATUS", [])}
    check("every exit status is documented", statuses == documented,
          f"--help: {sorted(statuses)}, man page: {sorted(documented)}")
    lint(page)


def check_gui(version, gui, page):
    sections = man_sections(page)
    check("cowscope --version prints its version",
          run([gui, "--version"]).strip() == f"cowscope {version}",
          run([gui, "--version"]).strip())
    check("cowscope(1) names the version", man_version(page) == version,
          str(man_version(page)))
    compare("cowscope --help-all options are in OPTIONS",
            help_options(run([gui, "--help-all"])), tag_options(sections.get("OPTIONS", [])))
    lint(page)


def main():
    if len(sys.argv) not in (4, 6):
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    version = sys.argv[1]
    try:
        check_cli(version, sys.argv[2], sys.argv[3])
        if len(sys.argv) == 6:
            check_gui(version, sys.argv[4], sys.argv[5])
    except (RuntimeError, OSError, IndexError, subprocess.TimeoutExpired) as error:
        check("the commands run", False, str(error))
    print(f"1..{len(results)}")
    for number, (name, ok, detail) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {number} - {name}")
        if not ok and detail:
            for line in detail.splitlines():
                print(f"# {line}")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
