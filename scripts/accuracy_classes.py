#!/usr/bin/python3
"""Regenerates data/accuracy_classes.json (the validated classes behind every estimate's
confidence: measured error and the range of runs each class covers) from `tessera validate
--json` on the published runs, joined with the runs' CSV for the GPU and node size.

Usage: scripts/accuracy_classes.py [build/bin/tessera] [../shared/validation]
Class rules mirror src/io/validation.cpp accuracy_class / gemm_family and
src/io/accuracy_classes.cpp accuracy_classes_from; tests/io/accuracy_classes_test.cpp checks the
file equals what validation computes now, so a drift in either fails there."""
import csv
import json
import math
import os
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build/bin/tessera")
shared = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "../shared/validation")
runs_csv = os.path.join(shared, "public_runs.csv")

ORDER = ["dense-a100", "dense-h100", "dense-fp8", "moe", "dense-other"]
# Followed by the GPU families the class's rows ran on.
DESCRIPTIONS = {
    "dense-a100": "dense 16-bit",
    "dense-h100": "dense 16-bit",
    "dense-fp8": "dense FP8",
    "moe": "MoE",
    "dense-other": "dense",
}
DEFAULT_GPUS_PER_NODE = 8


def gemm_family(key):
    if key.startswith("a100"):
        return "ampere"
    if key.startswith("h100") or key in ("h800", "h200"):
        return "hopper"
    return ""


def shorthand(text):
    return dict(item.split("=", 1) for item in text.split(",") if "=" in item)


def nodes(group, per_node):
    return math.ceil(group / per_node)


def percentile(values, q):
    v = sorted(values)
    if not v:
        return 0.0
    pos = q / 100 * (len(v) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


report = json.loads(subprocess.run([binary, "validate", runs_csv, "--json"], check=True,
                                   capture_output=True, text=True).stdout)
with open(runs_csv) as f:
    csv_rows = {r["id"]: r for r in csv.DictReader(f)}

classes = {}
for row in report["rows"]:
    src = csv_rows[row["id"]]
    plan = shorthand(row["plan"])
    moe = int(src["n_experts"] or 1) > 1
    gpu = src["gpu"]
    family = gemm_family(gpu) or gpu
    precision = plan["precision"]
    name = "moe" if moe else "dense-fp8" if precision == "fp8" else \
        {"ampere": "dense-a100", "hopper": "dense-h100"}.get(gemm_family(gpu), "dense-other")
    per_node = int(src["gpus_per_node"] or DEFAULT_GPUS_PER_NODE)
    tp, pp, dp, cp, ep = (int(plan[k]) for k in ("tp", "pp", "dp", "cp", "ep"))
    etp = int(plan.get("etp", tp))
    k = classes.setdefault(name, {"errors": [], "families": set(), "precisions": set(), "frameworks": set(),
                                  "moe": moe, "max_gpus": 0, "max_seq": 0, "max_ep_nodes": 0, "max_cp_nodes": 0,
                                  "tp_comm_overlap": False})
    k["errors"].append(abs(row["error_pct"]))
    k["families"].add(family)
    k["precisions"].add(precision)
    k["frameworks"].add(plan.get("framework", "megatron"))
    k["max_gpus"] = max(k["max_gpus"], tp * pp * dp * cp)
    k["max_seq"] = max(k["max_seq"], int(plan["seq"]))
    if ep > 1:
        k["max_ep_nodes"] = max(k["max_ep_nodes"], nodes(etp * ep, per_node))
    if cp > 1:
        k["max_cp_nodes"] = max(k["max_cp_nodes"], nodes(tp * cp, per_node))
    k["tp_comm_overlap"] = k["tp_comm_overlap"] or str(plan.get("overlap_tp", "0")) in ("1", "true", "True")


def rounded(x):
    return round(x, 2)


out = {"source": "tessera validate ../shared/validation/public_runs.csv (scripts/accuracy_classes.py)",
       "classes": []}
for name in ORDER:
    if name not in classes:
        continue
    k = classes[name]
    out["classes"].append({
        "class": name,
        "description": DESCRIPTIONS[name] + ", " + "/".join(f.capitalize() for f in sorted(k["families"])),
        "moe": k["moe"],
        "gpu_families": sorted(k["families"]),
        "precisions": sorted(k["precisions"], key=["bf16", "fp8"].index),
        "frameworks": sorted(k["frameworks"], key=["megatron", "megatron-deepspeed", "deepspeed", "torchtitan", "nemo-automodel", "pytorch"].index),
        "runs": len(k["errors"]), "median_error_pct": rounded(percentile(k["errors"], 50)),
        "p90_error_pct": rounded(percentile(k["errors"], 90)), "max_error_pct": rounded(max(k["errors"])),
        "max_gpus": k["max_gpus"], "max_seq": k["max_seq"], "max_ep_nodes": k["max_ep_nodes"],
        "max_cp_nodes": k["max_cp_nodes"], "tp_comm_overlap": k["tp_comm_overlap"]})
with open(os.path.join(root, "data/accuracy_classes.json"), "w") as f:
    json.dump(out, f, indent=2)
    f.write("\n")
