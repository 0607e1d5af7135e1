#!/usr/bin/env python3
"""Every example output in README.md is generated here from the binary.

Each generated block sits between `<!-- tessera:NAME -->` and `<!-- /tessera:NAME -->` and is
what the command of BLOCKS[NAME] prints (a fenced block, or a Markdown table for
`balance-methods`). `scripts/readme_examples.py [build/bin/tessera] [--skip-slow]` rewrites every
block; tests/python/test_readme_examples.py fails while a block differs from what the binary
prints. SLOW_BLOCKS (the PyTorch example's summary: a 200-step training run, minutes on 2 busy
cores) are rewritten too unless --skip-slow; the quick test checks only their form, and
`torch_example_summary(output)` gives the block for the output of the test that runs that example
anyway (tests/python/test_torch_gpt_example.py), so it can compare the values.

Masking rule (MASKS): figures that differ from run to run are compared as placeholders, on both
sides, and the README keeps the figures of the run that generated it:
  * wall-clock times: `searched ... in T s` and its `: R plans/s` (plan), `balancing T ms` (balance), `plans costed, T s
    of simulation` (adapt map), `decision mean T ms, p99 T ms, max T ms` (balance --per-batch-cp),
    `"time_ms"`, `"search_time_s"`, `"plans_per_s"`, `"simulation_s"` (JSON);
  * the PyTorch example's wall time (`validation loss ... tokens, T s`);
  * the planner's counts of plans costed and of those that fit (`searched N plans (M fit`,
    `"evaluated"`, `"feasible"`): its workers share the pruning bound, so how many candidates
    each skips depends on thread timing (the ranked list does not).
Nothing else is masked.
"""
import json
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
TIMEOUT_S = 120

# (pattern, placeholder), applied to the README's block and to the binary's output before comparing.
MASKS = [
    (re.compile(r"(searched\b[^\n]*? in )\d+(?:\.\d+)?( s)"), r"\1<time>\2"),
    (re.compile(r"(balancing\s+)\d+(?:\.\d+)?( ms)"), r"\1<time>\2"),
    (re.compile(r"(plans costed, )\d+(?:\.\d+)?( s of simulation)"), r"\1<time>\2"),
    (re.compile(r"(decision +mean )\d+(?:\.\d+)?( ms, p99 )\d+(?:\.\d+)?( ms, max )\d+(?:\.\d+)?( ms)"),
     r"\1<time>\2<time>\3<time>\4"),
    (re.compile(r"(validation loss [^\n]* tokens, )\d+(?:\.\d+)?( s)"), r"\1<time>\2"),
    (re.compile(r"(searched )\d+( plans \()\d+( fit)"), r"\1<count>\2<count>\3"),
    (re.compile(r"(: )\d+( plans/s)"), r"\1<rate>\2"),
    (re.compile(r'("(?:time_ms|search_time_s|plans_per_s|simulation_s|evaluated|feasible)": )[-+0-9.eE]+'), r"\1<masked>"),
]

WLB_RUN = ["balance", "--synthetic", "wlb-like", "--dp", "1", "--microbatches", "4", "--max-tokens", "131072",
           "--steps", "50"]
BALANCE_METHODS = ["none", "fixed-greedy", "lpt", "wlb"]


def run_tessera(binary, args):
    out = subprocess.run([binary] + args, check=True, capture_output=True, text=True, timeout=TIMEOUT_S,
                         cwd=ROOT).stdout
    return out if out.endswith("\n") else out + "\n"


def command_block(args):
    """A fenced block: the command line, then what it prints."""
    def render(binary):
        return "```\n$ build/bin/tessera %s\n%s```\n" % (" ".join(args), run_tessera(binary, args))
    return render


def script_block(args):
    """A launch script the command prints, with the command as its first comment."""
    def render(binary):
        return "```bash\n# tessera %s\n%s```\n" % (" ".join(args), run_tessera(binary, args))
    return render


def balance_methods_table(binary):
    """The WLB-like run of `balance-wlb` under every method, from `--json`."""
    rows = ["| method | imbalance | lower bound | mean delay (steps) | n_in / n_assigned / n_carried |",
            "|---|---|---|---|---|"]
    for method in BALANCE_METHODS:
        j = json.loads(run_tessera(binary, WLB_RUN + ["--method", method, "--json"]))
        delay = "%.3f" % j["mean_delay_steps"]
        if j["outlier_queues"] > 0:
            delay += " (max %d; %d queues)" % (j["max_delay_steps"], j["outlier_queues"])
        rows.append("| %s | %.3f | %.3f | %s | %d / %d / %d |" % (
            method, j["imbalance"], j["lower_bound"], delay, j["n_in"], j["n_assigned"], j["n_carried"]))
    return "\n".join(rows) + "\n"


BLOCKS = {
    "estimate-default": command_block(["estimate"]),
    "validate-h200-memory": command_block(["validate", "data/validation/h200/runs.csv",
                                           "examples/h200/out_of_memory_run.csv", "--memory",
                                           "data/validation/h200/memory.csv"]),
    "simulate-1f1b": command_block(["simulate", "--schedule", "1f1b", "--stages", "4", "--microbatches", "8",
                                    "--fwd", "1", "--bwd", "2"]),
    "launch-dense": script_block(["plan", "--quiet", "--model", "llama3-70b", "--cluster", "h100-sxm-80gb:64",
                                  "--gbs", "512", "--seq", "8192", "--emit", "megatron"]),
    "launch-moe": script_block(["plan", "--quiet", "--model", "deepseek-v3", "--cluster", "h800:1024",
                                "--gbs", "4096", "--seq", "4096", "--emit", "megatron"]),
    "plan-mixed-cluster": command_block(["plan", "--model", "llama3-8b", "--cluster",
                                         "h100-sxm-80gb:64+a100-sxm-80gb:128", "--gbs", "512", "--seq", "4096",
                                         "--quiet"]),
    "plan-cross-pool": command_block(["plan", "--model", "llama3-70b", "--cluster",
                                      "a100-sxm-40gb:64+h100-sxm-80gb:16", "--gbs", "512", "--seq", "4096"]),
    "plan-compare-profile": command_block(["plan", "--model", "llama3-8b", "--cluster",
                                           "a100-sxm-80gb:64+h100-sxm-80gb:64", "--gbs", "512", "--seq", "4096",
                                           "--profile", "examples/profiles/inter-pool-800g.json",
                                           "--compare-profile", "examples/profiles/inter-pool-3200g.json"]),
    "plan-multimodal": command_block(["plan", "--model", "mllm-72b-gen", "--data", "caption-like", "--cluster",
                                      "h800:1296", "--gbs", "1920", "--top", "1"]),
    "balance-wlb": command_block(WLB_RUN),
    "balance-methods": balance_methods_table,
    "balance-per-batch-cp": command_block(["balance", "--per-batch-cp", "--mix", "long-video:0.25,caption-like:0.75",
                                           "--gpus", "32"]),
    "calibrate-example": command_block(["calibrate", "--runs", "examples/calibration/fit.csv", "--report"]),
    "calibrate-probe": command_block(["calibrate", "--probe", "tests/fixtures/probe/h200"]),
    "adapt-zero3-slower": command_block(["adapt", "simulate", "--model", "llama3-8b", "--cluster",
                                         "h100-sxm-80gb:32", "--scenario", "zero3-slower"]),
    "adapt-large-cluster": command_block(["adapt", "simulate", "--model", "llama3-70b", "--cluster",
                                          "h100-sxm-80gb:4096"]),
    "adapt-map": command_block(["adapt", "map"]),
    "plan-offload": command_block(["plan", "--quiet", "--model", "llama3-8b", "--cluster", "a100-sxm-40gb:1",
                                   "--task", "full-finetune", "--seq", "4096", "--gbs", "8", "--framework",
                                   "deepspeed", "--top", "3"]),
    "plan-megatrain": command_block(["plan", "--quiet", "--model", "gpt-oss-120b", "--cluster",
                                     "examples/clusters/h200-1.5tb-host.json", "--framework", "megatrain", "--task",
                                     "full-finetune", "--seq", "1024", "--gbs", "64", "--top", "3"]),
    "emit-deepspeed": command_block(["plan", "--quiet", "--model", "llama3-8b", "--cluster", "a100-sxm-40gb:1",
                                     "--task", "full-finetune", "--seq", "4096", "--gbs", "8", "--framework",
                                     "deepspeed", "--emit", "deepspeed"]),
    "emit-peft": command_block(["plan", "--quiet", "--model", "llama-65b", "--cluster", "rtx-a6000:1", "--task",
                                "qlora", "--seq", "512", "--gbs", "16", "--framework", "pytorch", "--fix",
                                "lora_rank=64", "--emit", "peft"]),
    "plan-failures": command_block(["plan", "--quiet", "--model", "llama3.1-405b", "--cluster", "h100-sxm-80gb:16384",
                                    "--gbs", "2048", "--seq", "8192", "--failures", "--top", "3"]),
}


TORCH_EXAMPLE = ROOT / "examples" / "torch_gpt_cpu.py"
TORCH_EXAMPLE_ARGS = ["--world", "2", "--check-gns"]  # what tests/python/test_torch_gpt_example.py runs
TORCH_EXAMPLE_TIMEOUT_S = 900


def torch_example_summary(output):
    """The block for the example's output: its summary, from the `validation loss` line on."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("validation loss "))
    return "```\n%s\n```\n" % "\n".join(lines[start:])


def torch_example_block(binary):
    package = pathlib.Path(binary).resolve().parent.parent / "python"  # <build>/bin/tessera -> <build>/python
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(package))
    out = subprocess.run([sys.executable, str(TORCH_EXAMPLE)] + TORCH_EXAMPLE_ARGS, env=env, check=True,
                         capture_output=True, text=True, timeout=TORCH_EXAMPLE_TIMEOUT_S).stdout
    return torch_example_summary(out)


SLOW_BLOCKS = {"torch-gpt-example": torch_example_block}


def masked(text):
    for pattern, placeholder in MASKS:
        text = pattern.sub(placeholder, text)
    return text


def block_pattern(name):
    return re.compile(r"(<!-- tessera:%s -->\n)(.*?)(<!-- /tessera:%s -->)" % (re.escape(name), re.escape(name)),
                      re.DOTALL)


def rendered(binary, name):
    return dict(BLOCKS, **SLOW_BLOCKS)[name](binary)


def current(text, name):
    match = block_pattern(name).search(text)
    if match is None:
        raise SystemExit("README.md has no block tessera:%s" % name)
    return match.group(2)


def marked_names(text):
    """Every NAME with a `<!-- tessera:NAME -->` marker in the README."""
    return re.findall(r"<!-- tessera:([\w.-]+) -->", text)


def default_binary():
    return str(ROOT / "build" / "bin" / "tessera")


def main():
    args = [a for a in sys.argv[1:] if a != "--skip-slow"]
    binary = args[0] if args else default_binary()
    names = list(BLOCKS) + ([] if "--skip-slow" in sys.argv[1:] else list(SLOW_BLOCKS))
    text = README.read_text()
    unknown = sorted(set(marked_names(text)) - set(BLOCKS) - set(SLOW_BLOCKS))
    if unknown:
        raise SystemExit("README.md marks blocks this script does not generate: %s" % ", ".join(unknown))
    for name in names:
        body = rendered(binary, name)
        current(text, name)
        text = block_pattern(name).sub(lambda m: m.group(1) + body + m.group(3), text)
    README.write_text(text)


if __name__ == "__main__":
    main()
