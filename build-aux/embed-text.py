#!/usr/bin/env python3
"""Embed a text file in C: writes OUTPUT.c defining `const char SYMBOL[]`.

Usage: embed-text.py INPUT OUTPUT.c SYMBOL
The text is emitted as a string literal split per line, so any byte
sequence the file holds is escaped and the result compiles with -Werror.
"""
import sys


def escape(line: str) -> str:
    out = []
    for ch in line.encode("utf-8"):
        if ch in (0x22, 0x5C):  # " and backslash
            out.append("\\" + chr(ch))
        elif 0x20 <= ch < 0x7F:
            out.append(chr(ch))
        else:
            out.append("\\%03o" % ch)
    return "".join(out)


def main() -> int:
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    source, output, symbol = sys.argv[1:]
    with open(source, encoding="utf-8") as f:
        text = f.read()
    lines = text.splitlines(keepends=True) or [""]
    with open(output, "w", encoding="utf-8") as f:
        f.write("/* Generated from %s by embed-text.py: do not edit. */\n" % source.split("/")[-1])
        f.write("extern const char %s[];\n" % symbol)
        f.write("const char %s[] =\n" % symbol)
        for line in lines:
            f.write('  "%s"\n' % escape(line))
        f.write("  ;\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
