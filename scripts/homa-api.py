#!/usr/bin/env python3
"""Adds HOMA_API (include/homa/export.h) to every function declared in the
public headers that lacks it, and the #include of export.h to each header
that declares one. Run it after adding a function to include/homa/*.h:
    scripts/homa-api.py [--check | --list]
--check changes nothing and exits 1 (listing them) if any lacks the macro;
--list prints the name of every declared function, one a line.
Function declarations are found by the compiler (gcc -aux-info), so
declarations spread over several lines and macros are handled.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def declarations():
    """Yield (header path, line number, function name) for every function
    declared in include/homa/*.h, as gcc reports it."""
    headers = sorted(glob.glob(os.path.join(ROOT, "include/homa/*.h")))
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "all.c")
        aux = os.path.join(tmp, "aux.txt")
        with open(src, "w") as f:
            for h in headers:
                f.write('#include "homa/%s"\n' % os.path.basename(h))
        subprocess.run(["gcc", "-fsyntax-only", "-I", os.path.join(ROOT, "include"),
                        "-aux-info", aux, src], check=True)
        with open(aux) as f:
            for line in f:
                m = re.match(r"/\* (\S*include/homa/[^:]+):(\d+):\w+ \*/ extern .*?\b(\w+) \(", line)
                if m:
                    path = m.group(1)
                    if not os.path.isabs(path):
                        path = os.path.join(ROOT, path)
                    yield os.path.normpath(path), int(m.group(2)), m.group(3)


def statement_start(lines, i):
    """Index of the first line of the declaration whose name is on line i
    (the return type may sit on a line of its own above it)."""
    while i > 0 and lines[i - 1].strip() and not re.search(r"[;{}/]\s*$|^\s*#|\*/\s*$", lines[i - 1]):
        i -= 1
    return i


def main():
    if "--list" in sys.argv[1:]:
        print("\n".join(sorted({name for _, _, name in declarations()})))
        return 0
    check = "--check" in sys.argv[1:]
    missing = []
    by_file = {}
    for path, line, name in declarations():
        by_file.setdefault(path, []).append((line, name))
    for path, decls in sorted(by_file.items()):
        with open(path) as f:
            lines = f.read().split("\n")
        changed = False
        for line, name in decls:
            i = statement_start(lines, line - 1)
            if lines[i].lstrip().startswith("HOMA_API"):
                continue
            missing.append("%s:%d: %s" % (os.path.relpath(path, ROOT), line, name))
            if not check:
                lines[i] = re.sub(r"^(\s*)", r"\1HOMA_API ", lines[i], count=1)
                changed = True
        if changed and not any('#include "homa/export.h"' in l for l in lines):
            guard = next(k for k, l in enumerate(lines) if l.startswith("#define"))
            lines[guard + 1:guard + 1] = ["", '#include "homa/export.h"']
        if changed:
            with open(path, "w") as f:
                f.write("\n".join(lines))
    if check and missing:
        print("functions declared without HOMA_API (run scripts/homa-api.py):")
        print("\n".join(missing))
        return 1
    if not check and missing:
        print("added HOMA_API to %d declarations" % len(missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
