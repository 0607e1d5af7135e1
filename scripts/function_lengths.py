#!/usr/bin/python3
"""Functions in src/ longer than a screen, and .cpp files longer than a sitting (issue 31: no
function over 120 lines but the data tables, no .cpp over 600 lines).

    scripts/function_lengths.py            # lists what is over the limits

A function is a definition that starts at column 0 (the project does not indent namespace
bodies) and ends at its matching brace; its length counts its signature. Lambdas count toward the
function that holds them."""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 120
MAX_FILE_LINES = 600
NOT_A_FUNCTION = ("namespace", "struct", "class", "enum", "}", "//", "#", "union", "template <")


def functions(path: pathlib.Path):
    """(lines, name) of every function defined at column 0 in a .cpp file."""
    lines = path.read_text().split("\n")
    found, i = [], 0
    while i < len(lines):
        line = lines[i].rstrip()
        if line.endswith("{") and ("(" in line or ")" in line):
            start = i  # back to the first line of the statement
            while start > 0 and lines[start - 1].strip() and not lines[start - 1].rstrip().endswith((";", "}", "{", ":")) \
                    and not lines[start - 1].lstrip().startswith(("//", "#")):
                start -= 1
            head = lines[start]
            if head and not head[0].isspace() and not head.startswith(NOT_A_FUNCTION):
                depth, end = 0, i
                while end < len(lines):
                    depth += lines[end].count("{") - lines[end].count("}")
                    if depth <= 0:
                        break
                    end += 1
                name = re.search(r"([\w:~]+)\s*\(", " ".join(x.strip() for x in lines[start:i + 1]))
                found.append((end - start + 1, name.group(1) if name else head.strip()[:60]))
                i = end + 1
                continue
        i += 1
    return found


def long_functions(src: pathlib.Path):
    return sorted(((n, f"{p.relative_to(src).as_posix()}:{name}") for p in src.rglob("*.cpp") for n, name in functions(p)
                   if n > MAX_FUNCTION_LINES), reverse=True)


def long_files(src: pathlib.Path):
    return sorted(((len(p.read_text().split("\n")) - 1, p.relative_to(src).as_posix()) for p in src.rglob("*.cpp")
                   if len(p.read_text().split("\n")) - 1 > MAX_FILE_LINES), reverse=True)


if __name__ == "__main__":
    for n, where in long_functions(ROOT / "src"):
        print(f"function {n:5d} lines  {where}")
    for n, where in long_files(ROOT / "src"):
        print(f"file     {n:5d} lines  {where}")
    sys.exit(0)
