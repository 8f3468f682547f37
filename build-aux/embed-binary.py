#!/usr/bin/env python3
"""Embed a binary file in C: writes OUTPUT.c defining
`const unsigned char SYMBOL[]` (16-byte aligned) and `const size_t SYMBOL_size`.

Usage: embed-binary.py INPUT OUTPUT.c SYMBOL
INPUT `--empty` (or an empty file) gives a one-byte array and SYMBOL_size 0.
"""
import sys


def main() -> int:
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    source, output, symbol = sys.argv[1:]
    if source == "--empty":
        data = b""
    else:
        with open(source, "rb") as f:
            data = f.read()
    with open(output, "w", encoding="ascii") as f:
        f.write("/* Generated from %s by embed-binary.py: do not edit. */\n"
                % source.split("/")[-1])
        f.write("#include <stddef.h>\n")
        f.write("extern const unsigned char %s[];\n" % symbol)
        f.write("extern const size_t %s_size;\n" % symbol)
        f.write("const size_t %s_size = %d;\n" % (symbol, len(data)))
        f.write("__attribute__ ((aligned (16))) const unsigned char %s[] = {\n" % symbol)
        body = data or b"\0"
        for start in range(0, len(body), 16):
            chunk = body[start:start + 16]
            f.write("  " + ", ".join("0x%02x" % b for b in chunk) + ",\n")
        f.write("};\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
