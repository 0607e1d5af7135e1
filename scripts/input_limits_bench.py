#!/usr/bin/python3
"""Every documented input limit at its maximum (README "Limits", issue 30): writes each input at
its limit, runs the command that reads it, and reports wall time and peak RSS against the bound
every accepted input keeps, 10 s and 2 GB on a 2-core machine. Exits 1 when a run is over a bound
or fails. A benchmark, not a test: the times are the machine's.

    scripts/input_limits_bench.py [build/bin/tessera]
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
TESSERA = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "build" / "bin" / "tessera").resolve()
MAX_SECONDS = 10.0
MAX_RSS_BYTES = 2 << 30
# The limits, as the code defines them.
LOG_BYTES = 256 << 20          # src/formats/training_log.h kMaxLogFileBytes
JSON_BYTES = 16 << 20          # src/formats/json_fields.h kMaxJsonFileBytes
TABLE_ROWS = 10_000            # nccl-tests and GEMM sweep rows (src/formats/nccl_tests.cpp, gemm_sweep.cpp)
PROBE_ROWS = 2_000             # per table of a probe folder: 10,000 measurements in all (probe_inputs.h)
GPUS_PER_FILE = 1024           # src/formats/gpu_json.cpp kMaxGpusPerFile
MAX_GBS = 65_536               # src/plan/plan.h kMaxGlobalBatch


def megatron_log(folder):
    """The reliability fixture's dump, then iteration lines up to the log limit."""
    template = (ROOT / "tests/cli/fixtures/reliability/m2_run.log").read_text().splitlines(keepends=True)
    head = [line for line in template if "iteration " not in line or "elapsed time per iteration" not in line]
    row = next(line for line in template if "elapsed time per iteration" in line)
    marker = row[row.index("iteration"):row.index("|")]
    text = "".join(head)
    count = (LOG_BYTES - len(text.encode())) // (len(row) + 8)
    path = folder / "run.log"
    # Written line by line: the parent stays small, so the child's peak RSS is its own (a forked
    # child starts from its parent's resident pages).
    with path.open("w") as out:
        out.write(text)
        for i in range(count):
            out.write(row.replace(marker, f"iteration {i + 1:8d}/{count:8d} "))
    assert path.stat().st_size <= LOG_BYTES
    return [str(TESSERA), "calibrate", "--log", str(path), "--gpu", "a100-sxm-80gb"]


def nccl_rows(folder):
    lines = (ROOT / "tests/fixtures/bench/all_reduce_gb10_2x1.txt").read_text().splitlines(keepends=True)
    head = [line for line in lines if line.startswith("#") and "Out of bounds" not in line and "Avg bus" not in line]
    row = next(line for line in lines if not line.startswith("#"))
    path = folder / "nccl.txt"
    path.write_text("".join(head) + row * TABLE_ROWS)
    return [str(TESSERA), "calibrate", "--nccl", str(path), "--gpu", "h100"]


def gemm_rows(folder):
    path = folder / "gemm.csv"
    rows = [f"{256 + (i % 64) * 128},{256 + (i % 32) * 256},{4096 + (i % 16) * 512},bf16,{300 + i % 400}"
            for i in range(TABLE_ROWS)]
    path.write_text("m,n,k,dtype,tflops\n" + "\n".join(rows) + "\n")
    return [str(TESSERA), "calibrate", "--gemm", str(path), "--gpu", "h100"]


def probe_folder(folder):
    """A `tessera probe` folder at its limit: 10,000 measurements in all (src/evaluation/probe_inputs.h
    kMaxProbeMeasurements), 2,000 rows in each of four tables (an attention row is two)."""
    probe = folder / "probe"
    probe.mkdir()
    files = ["gemm.csv", "attention.csv", "kernels.csv", "collectives.csv"]
    (probe / "environment.json").write_text(json.dumps({
        "probe_format": 1, "device": "cuda", "backend": "nccl", "device_name": "NVIDIA H100 80GB HBM3",
        "world_size": 8, "nodes": 1, "gpus_per_node": 8, "files": files}))
    (probe / "ranks.csv").write_text("rank,world_size\n" + "".join(f"{r},8\n" for r in range(8)))
    gemm = [f"{256 * (1 + i % 64)},{4096},{4096},bf16,{2 * 256 * (1 + i % 64) * 4096 * 4096 / 1e-3 / 1e12:.6g},1"
            for i in range(PROBE_ROWS)]
    (probe / "gemm.csv").write_text("m,n,k,dtype,tflops,time_ms\n" + "\n".join(gemm) + "\n")
    attention = [f"{1 + i % 8},32,8,{1024 * (1 + i % 16)},128,1,{0.1 + i % 50 * 0.01:.4f},{0.5 + i % 50 * 0.04:.4f}"
                 for i in range(PROBE_ROWS)]
    (probe / "attention.csv").write_text("batch,heads,kv_heads,seq,head_dim,causal,fwd_ms,fwd_bwd_ms\n" +
                                        "\n".join(attention) + "\n")
    kernels = [f"swiglu,eager,{4096 * (1 + i % 8)},8192,fwd,{10 * 4096 * (1 + i % 8) * 8192},2,{0.1 * (1 + i % 8):.4f}"
               for i in range(PROBE_ROWS)]
    (probe / "kernels.csv").write_text("op,impl,tokens,width,pass,bytes,kernels,time_ms\n" + "\n".join(kernels) + "\n")
    collectives = []
    for i in range(PROBE_ROWS):
        size, time_us = 1024 << (i % 20), 10.0 * (1 + i % 20)
        algbw = size / (time_us * 1e-6) / 1e9
        collectives.append(f"all_reduce,{size},8,1,8,{time_us:g},{algbw:.6g},{algbw * 1.75:.6g}")
    (probe / "collectives.csv").write_text("kind,bytes,ranks,nodes,gpus_per_node,time_us,algbw_gbps,busbw_gbps\n" +
                                          "\n".join(collectives) + "\n")
    return [str(TESSERA), "calibrate", "--probe", str(probe)]


def profile_json(folder):
    profile = json.loads(subprocess.run([str(TESSERA), "calibrate", "--runs", str(ROOT / "examples/calibration/fit.csv"),
                                         "--json"], check=True, capture_output=True, text=True).stdout)
    one = json.dumps(profile["measurements"][0])
    count = (JSON_BYTES - len(json.dumps(profile)) - 1024) // (len(one) + 2)
    profile["measurements"] = [profile["measurements"][0]] * count
    path = folder / "profile.json"
    path.write_text(json.dumps(profile))
    assert path.stat().st_size <= JSON_BYTES
    return [str(TESSERA), "estimate", "--model", "llama3-8b", "--cluster", "a100-sxm-80gb:8", "--plan",
            "tp=2,gbs=64,seq=4096", "--profile", str(path)]


def gpu_file(folder):
    base = json.loads(subprocess.run([str(TESSERA), "gpus", "--json"], check=True, capture_output=True,
                                     text=True).stdout)["gpus"][0]
    gpus = [dict(base, key=f"limit-gpu-{i}", aliases=[], family="custom") for i in range(GPUS_PER_FILE)]
    path = folder / "gpus.json"
    path.write_text(json.dumps({"gpus": gpus}))
    return [str(TESSERA), "gpus", "--gpu-file", str(path)]


VALIDATION = ROOT / "data" / "validation"
VTRAIN, PUBLIC = VALIDATION / "vtrain_runs.csv", VALIDATION / "public_runs.csv"


def held_out(path, *args):
    """`calibrate --held-out` on a file of ../shared/validation; None (skipped) without it."""
    return [str(TESSERA), "calibrate", "--held-out", str(path), *args] if path.exists() else None


def plain(*args):
    return lambda folder: [str(TESSERA), *args]


CASES = [
    ("Megatron log, 256 MiB", megatron_log),
    ("nccl-tests, 10,000 rows", nccl_rows),
    ("GEMM sweep, 10,000 rows", gemm_rows),
    ("probe folder, 10,000 measurements", probe_folder),
    ("profile JSON, 16 MiB", profile_json),
    ("GPU file, 1,024 GPUs", gpu_file),
    ("3 pools x 4,096 GPUs, llama3-70b", plain("plan", "--quiet", "--top", "1", "--model", "llama3-70b", "--gbs", "2048",
                                              "--seq", "4096", "--cluster", "h100:4096+a100-sxm-80gb:4096+h200:4096")),
    ("3 pools x 4,096 GPUs, llama3.1-405b", plain("plan", "--quiet", "--top", "1", "--model", "llama3.1-405b", "--gbs",
                                                 "2048", "--seq", "4096", "--cluster",
                                                 "h100:4096+a100-sxm-80gb:4096+h200:4096")),
    ("3 pools, gbs 65,536", plain("plan", "--quiet", "--top", "1", "--model", "llama3-70b", "--gbs", str(MAX_GBS), "--seq",
                                  "4096", "--cluster", "h100:4096+a100-sxm-80gb:4096+h200:4096")),
    ("per-batch cp, 64 GPUs x 2^24 tokens x 87 steps", plain("balance", "--per-batch-cp", "--mix", "caption-like",
                                                             "--gpus", "64", "--step-tokens", str(1 << 24), "--steps",
                                                             "87")),
    ("per-batch cp, 4,096 GPUs x 65,536 tokens x 5 steps", plain("balance", "--per-batch-cp", "--mix", "caption-like",
                                                                 "--gpus", "4096", "--step-tokens", "65536", "--steps",
                                                                 "5")),
    ("plan --html, deepseek-v3 on 1,024 H100", lambda folder: [str(TESSERA), "plan", "--quiet", "--top", "1", "--model",
                                                               "deepseek-v3", "--cluster", "h100:1024", "--gbs", "8192",
                                                               "--seq", "4096", "--html", str(folder / "plan.html")]),
    ("adapt map, the built-in 9 cells (4.6M plans)", plain("adapt", "map")),
    ("adapt map, deepseek-v3 on 4,096 (4.6M plans)", plain("adapt", "map", "--models", "deepseek-v3", "--gpus", "4096")),
    ("adapt map, 64 cells to 65,536 GPUs: refused", plain("adapt", "map", "--models", ",".join(["llama3.1-405b,llama3-70b"] * 4),
                                                      "--gpus", "1024,2048,4096,8192,16384,32768,49152,65536"), 2),
    ("held-out, vtrain by model, 180 draws", lambda folder: held_out(VTRAIN, "--draws", "180")),
    ("held-out, vtrain by model, 1,000 draws: refused", lambda folder: held_out(VTRAIN, "--draws", "1000"), 2),
    ("held-out, public by source, 5 rows, 1,000 draws: refused",
     lambda folder: held_out(PUBLIC, "--group", "source", "--fit-rows", "5", "--draws", "1000"), 2),
]


def run(command):
    """Wall seconds, peak RSS bytes and exit status of one run (wait4: this child's own rusage)."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - started
        err.seek(0)
        message = err.read().decode(errors="replace").strip()
    return seconds, usage.ru_maxrss * 1024, child.returncode, message


def main():
    failed = False
    print(f"{'input at its limit':<52} {'time s':>7} {'peak MiB':>9}  verdict")
    with tempfile.TemporaryDirectory(prefix="tessera_limits_") as scratch:
        for name, make, *expected in CASES:
            folder = pathlib.Path(scratch) / str(len(os.listdir(scratch)))
            folder.mkdir()
            command = make(folder)
            if command is None:
                print(f"{name:<52} {'-':>7} {'-':>9}  skipped (no ../shared/validation)")
                continue
            seconds, rss, code, message = run(command)
            # Exit 2: an input past a work bound, refused within the time bound.
            ok = code == (expected[0] if expected else 0) and seconds <= MAX_SECONDS and rss <= MAX_RSS_BYTES
            failed |= not ok
            verdict = ("ok" if code == 0 else "ok, refused") if ok else (message.splitlines() or ["over a bound"])[-1][:80]
            print(f"{name:<52} {seconds:7.2f} {rss / (1 << 20):9.0f}  {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
