"""The tables `tessera probe` writes (README "tessera probe"): a header row, `#` comment lines
first, numbers with 6 significant digits (integers whole), empty cells for unknown values."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Table:
    header: list
    rows: list = field(default_factory=list)  # dicts keyed by header names
    comments: list = field(default_factory=list)  # lines written as "# ..." above the header


def cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def write_table(path: Path, table: Table) -> None:
    with open(path, "w", newline="") as f:
        for comment in table.comments:
            f.write("# " + " ".join(str(comment).split()) + "\n")
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(table.header)
        for row in table.rows:
            writer.writerow([cell(row.get(name)) for name in table.header])
