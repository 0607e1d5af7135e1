#!/usr/bin/python3
"""Every prediction Tessera makes on a fixed set of inputs, as JSON documents in one folder, so two
builds can be compared byte for byte (issue 31: a refactor keeps every prediction bit-identical).

    scripts/prediction_fingerprint.py OUT_DIR [build/bin/tessera]   # write the documents
    scripts/prediction_fingerprint.py --compare DIR_A DIR_B        # exit 1 on any difference

Inputs: `validate --json` of every CSV in ../shared/validation/ (and its h200/ runs), the planner's
top plans on dense, MoE and interleaved layouts, `estimate --json` of uneven splits, a small
`adapt map` and a multimodal plan. Fields that measure the machine rather than the model are
dropped: wall times and rates, and the planner's counts of plans costed, which depend on its
workers' timing (the ranked list does not)."""

import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
VALIDATION = ROOT / "data" / "validation"
MACHINE_FIELDS = {"search_time_s", "plans_per_s", "simulation_s", "time_ms", "evaluated", "feasible", "aliases",
                  "elapsed_s", "decision_ms"}

CASES = {
    "plan_llama405b_512": ["plan", "--quiet", "--model", "llama3.1-405b", "--cluster", "h100-sxm-80gb:512", "--gbs",
                           "1024", "--seq", "4096", "--top", "20", "--json"],
    "plan_llama70b_256": ["plan", "--quiet", "--model", "llama3-70b", "--cluster", "h100-sxm-80gb:256", "--gbs", "512",
                          "--seq", "8192", "--top", "20", "--json"],
    "plan_gpt175b_384": ["plan", "--quiet", "--model", "gpt3-175b", "--cluster", "a100-sxm-80gb:384", "--gbs", "1536",
                         "--seq", "2048", "--top", "20", "--json"],
    "plan_mixtral_64": ["plan", "--quiet", "--model", "mixtral-8x7b", "--cluster", "h100-sxm-80gb:64", "--gbs", "256",
                        "--seq", "4096", "--top", "10", "--json"],
    "plan_deepseek_v3_1024": ["plan", "--quiet", "--model", "deepseek-v3", "--cluster", "h100-sxm-80gb:1024", "--gbs",
                              "8192", "--seq", "4096", "--top", "10", "--json"],
    "plan_mixed_pools": ["plan", "--quiet", "--model", "llama3-70b", "--cluster", "h100:64+a100-sxm-80gb:64", "--gbs",
                         "256", "--seq", "4096", "--top", "5", "--json"],
    "plan_multimodal": ["plan", "--quiet", "--model", "qwen2-vl-7b", "--cluster", "h100-sxm-80gb:64", "--gbs", "256",
                        "--json"],
    "estimate_interleaved_uneven": ["estimate", "--model", "llama3.1-405b", "--cluster", "h100-sxm-80gb:512", "--plan",
                                    "tp=8,pp=16,dp=4,vpp=4,mb=1,gbs=1024,seq=4096", "--json"],
    "estimate_pp6": ["estimate", "--model", "llama3-70b", "--cluster", "h100-sxm-80gb:480", "--plan",
                     "tp=8,pp=6,dp=10,mb=1,gbs=960,seq=4096", "--json"],
    "adapt_map": ["adapt", "map", "--models", "llama3-8b,llama3-70b", "--gpus", "32,1024", "--json"],
}


def without_machine_fields(doc):
    if isinstance(doc, dict):
        return {k: without_machine_fields(v) for k, v in doc.items() if k not in MACHINE_FIELDS}
    if isinstance(doc, list):
        return [without_machine_fields(v) for v in doc]
    return doc


def write(out: pathlib.Path, binary: str) -> int:
    out.mkdir(parents=True, exist_ok=True)
    cases = dict(CASES)
    for csv in sorted(VALIDATION.glob("*.csv")) + sorted(VALIDATION.glob("h200/runs.csv")):
        cases["validate_" + csv.relative_to(VALIDATION).as_posix().replace("/", "_")] = ["validate", str(csv), "--json"]
    for name, args in cases.items():
        done = subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            print(f"{name}: exit {done.returncode}: {done.stderr.strip()}", file=sys.stderr)
            return 1
        doc = without_machine_fields(json.loads(done.stdout))
        (out / f"{name}.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"{len(cases)} documents in {out}")
    return 0


def compare(a: pathlib.Path, b: pathlib.Path) -> int:
    names = sorted({p.name for p in a.glob("*.json")} | {p.name for p in b.glob("*.json")})
    differ = [n for n in names if not (a / n).exists() or not (b / n).exists() or (a / n).read_bytes() != (b / n).read_bytes()]
    for n in differ:
        print(f"differs: {n}")
    print(f"{len(names) - len(differ)} of {len(names)} documents identical")
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        sys.exit(compare(pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])))
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    sys.exit(write(pathlib.Path(sys.argv[1]), sys.argv[2] if len(sys.argv) == 3 else str(ROOT / "build" / "bin" / "tessera")))
