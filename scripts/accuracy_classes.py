#!/usr/bin/python3
"""Regenerates data/accuracy_classes.json (the validated classes behind every estimate's
confidence: each class's leave-one-source-out error, its in-sample error, the range of runs it
covers, the bias of each validated model, and the measured memory error per framework) with
`tessera validate --accuracy-classes` over the published runs shipped in data/validation: the
public runs, the MoE runs, and the plain-PyTorch H200 runs with their measured peaks (and the
configuration of the H200 run that ran out of memory, examples/h200/out_of_memory_run.csv).

Usage: scripts/accuracy_classes.py [build/bin/tessera] [data/validation]
tests/evaluation/accuracy_classes_test.cpp checks the file equals what validation computes now."""
import json
import os
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build/bin/tessera")
shared = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "data/validation")

files = [os.path.join(shared, "public_runs.csv"), os.path.join(shared, "moe_runs.csv"),
         os.path.join(shared, "h200/runs.csv"), os.path.join(root, "examples/h200/out_of_memory_run.csv")]
memory = os.path.join(shared, "h200/memory.csv")
doc = json.loads(subprocess.run([binary, "validate", *files, "--memory", memory, "--accuracy-classes"], check=True,
                                capture_output=True, text=True).stdout)
doc["source"] = ("tessera validate public_runs.csv moe_runs.csv h200/runs.csv (+ the H200 out-of-memory "
                 "configuration) --memory h200/memory.csv --accuracy-classes (scripts/accuracy_classes.py)")
with open(os.path.join(root, "data/accuracy_classes.json"), "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
