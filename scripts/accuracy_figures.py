#!/usr/bin/python3
"""Regenerates tests/fixtures/accuracy_figures.json (the figures the accuracy guard test
pins and the README's accuracy tables quote, in-sample and leave-one-source-out) from
`tessera validate --json` and `tessera validate --leave-one-source-out --json`.

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


def held_out(name):
    """Leave-one-source-out figures per class with two or more publishers (README "Out of sample")."""
    out = subprocess.run([binary, "validate", os.path.join(shared, name), "--leave-one-source-out", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return {k["class"]: {"n": k["n"], "sources": k["sources"], "median": rounded(k["median_abs_error_pct"]),
                         "p90": rounded(k["p90_abs_error_pct"]), "max": rounded(k["max_abs_error_pct"])}
            for k in json.loads(out)["classes"] if k["sources"] >= 2}


public = validate("public_runs.csv")
vtrain = validate("vtrain_runs.csv")
figures = {
    "public_runs": by_class(public),
    "public_runs_held_out": held_out("public_runs.csv"),
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
