"""Issue 31's limits as a ratchet: no function in src/ over 120 lines and no .cpp over 600, but
for the ones listed here, each at most as long as it is now (a data table, or work still to do:
docs/ARCHITECTURE.md "Function and file size"). A new long function, or a listed one that grows,
fails; a listed one that is split must leave the list."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("function_lengths", ROOT / "scripts" / "function_lengths.py")
function_lengths = importlib.util.module_from_spec(spec)
spec.loader.exec_module(function_lengths)

# where -> the most lines it may have
LONG_FUNCTIONS = {
    "export/megatron_rules.cpp:megatron_rules": 309,  # a data table: Megatron-LM's argument rules
}
LONG_FILES = {}


def check(found, allowed, kind):
    problems = []
    for n, where in found:
        if where not in allowed:
            problems.append(f"{kind} {where}: {n} lines (limit {function_lengths.MAX_FUNCTION_LINES if kind == 'function' else function_lengths.MAX_FILE_LINES})")
        elif n > allowed[where]:
            problems.append(f"{kind} {where}: grew to {n} lines (listed at {allowed[where]})")
    over = {where for _, where in found}
    problems += [f"{kind} {where}: now within the limit; take it off the list" for where in allowed if where not in over]
    return problems


def test_no_new_long_function_and_none_grows():
    assert check(function_lengths.long_functions(ROOT / "src"), LONG_FUNCTIONS, "function") == []


def test_no_new_long_file_and_none_grows():
    assert check(function_lengths.long_files(ROOT / "src"), LONG_FILES, "file") == []


def test_the_scanner_measures_a_function(tmp_path):
    body = "\n".join(f"  x += {i};" for i in range(130))
    (tmp_path / "a.cpp").write_text(f"namespace t {{\n\nint long_one(int x,\n             int y) {{\n{body}\n  return x;\n}}\n\n"
                                    "int short_one() { return 1; }\n\n}  // namespace t\n")
    assert function_lengths.long_functions(tmp_path) == [(134, "a.cpp:long_one")]
