#!/usr/bin/python3
"""Regenerates tests/fixtures/accuracy_figures.json (the figures the accuracy guard test
pins and the README's accuracy table quotes) from `tessera validate --json`.

Usage: scripts/accuracy_figures.py [build/bin/tessera] [../shared/validation]
Run it after a change that moves the validation figures on purpose, and update the README."""
import json
import os
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build/bin/tessera")
shared = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "data/validation")


def validate(name):
    out = subprocess.run([binary, "validate", os.path.join(shared, name), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["summary"]


def rounded(x):
    return round(x, 2)


def by_class(summary):
    return {k["class"]: {"n": k["n"], "median": rounded(k["median_abs_error_pct"]),
                         "p90": rounded(k["p90_abs_error_pct"]), "max": rounded(k["max_abs_error_pct"])}
            for k in summary["classes"]}


public = validate("public_runs.csv")
vtrain = validate("vtrain_runs.csv")
figures = {
    "public_runs": by_class(public),
    "moe_runs": by_class(validate("moe_runs.csv")),
    "h200_runs": by_class(validate("h200/runs.csv")),
    "vtrain_runs": {"n": vtrain["n"], "median": rounded(vtrain["median_abs_error_pct"]),
                    "p90": rounded(vtrain["p90_abs_error_pct"]),
                    "mean_group_spearman": round(vtrain["mean_group_spearman"], 3)},
}
path = os.path.join(root, "tests/fixtures/accuracy_figures.json")
with open(path, "w") as f:
    json.dump(figures, f, indent=2)
    f.write("\n")
print(json.dumps(figures, indent=2))
