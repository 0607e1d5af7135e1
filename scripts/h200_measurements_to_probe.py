"""Writes tests/fixtures/probe/h200/: the H200 measurements taken for this project before
`tessera probe` existed (tests/cost/fixtures/h200/ and ../shared/validation/h200/gemm.csv), in the
probe's folder format, so `tessera calibrate --probe tests/fixtures/probe/h200` reads them whole.

Byte counts of the memory-bound kernels come from the probe's own kernel tables
(python/tessera/_probe_kernels.py); where kernel_probe.py ran a variant of an op (an fp32 RMSNorm
weight, an fp32 + fp32 residual add, the loss on bf16 logits) its kernels are listed here the same
way. Run from the repository root with the built package: PYTHONPATH=build/python python3 scripts/h200_measurements_to_probe.py
"""

import csv
import json
import pathlib
import sys

from tessera._probe_kernels import (Kernel, cross_entropy_kernels, rmsnorm_eager_kernels, rmsnorm_fused_kernels,
                                    rope_kernels, swiglu_kernels, total_bytes)

ROOT = pathlib.Path(__file__).resolve().parents[1]
MEASURED = ROOT / "tests" / "cost" / "fixtures" / "h200"
GEMM_SWEEP = ROOT.parent / "shared" / "validation" / "h200" / "gemm.csv"
OUT = ROOT / "tests" / "fixtures" / "probe" / "h200"

# Llama 3.2 1B, 3.2 3B and 3.1 8B (their published config.json): hidden, MLP width, query heads, head width.
MODELS = {"llama3.2-1b": (2048, 8192, 32, 64), "llama3.2-3b": (3072, 8192, 24, 128), "llama3.1-8b": (4096, 14336, 32, 128)}
VOCAB = 128256


def rmsnorm_fp32_weight_kernels(T, h):
    """kernel_probe.py's RMSNorm: bf16 x, an fp32 weight, so `w * x.to(bf16)` writes fp32 and its
    backward casts the gradient of x.to(bf16) back to bf16."""
    N = T * h
    forward, backward = rmsnorm_eager_kernels(T, h)
    forward = forward[:-1] + [Kernel("w * x: fp32 [h] x bf16 [T,h] -> fp32 [T,h]", 4 * h + 2 * N, 4 * N)]
    backward = [
        Kernel("d(w*x)/dx: grad * w, fp32 [T,h] x [h]", 4 * N + 4 * h, 4 * N),
        Kernel("  cast to x.to(bf16)'s dtype: fp32 -> bf16 [T,h]", 4 * N, 2 * N),
        Kernel("d(w*x)/dw: grad * x, fp32 x bf16 [T,h]", 6 * N, 4 * N),
        Kernel("  summed to w's shape: fp32 [T,h] -> [h]", 4 * N, 4 * h),
    ] + backward[3:]
    return forward, backward


def rmsnorm_fused_cast_weight_kernels(T, h):
    """F.rms_norm(x, (h,), w.to(bf16)): the fused kernels and the weight's cast, forward and back."""
    forward, backward = rmsnorm_fused_kernels(T, h)
    return ([Kernel("w.to(bf16): fp32 [h]", 4 * h, 2 * h)] + forward,
            backward + [Kernel("to(bf16) backward: bf16 [h] -> fp32", 2 * h, 4 * h)])


def residual_fp32_kernels(T, h):
    """xf + xf, fp32 [T,h]: one add forward, backward the two gradients of xf summed; both operands
    are one tensor, so each kernel reads it once."""
    N = T * h
    return [Kernel("xf + xf: fp32 [T,h], read once", 4 * N, 4 * N)], [Kernel("g + g: the two gradients of xf", 4 * N, 4 * N)]


def cross_entropy_bf16_kernels(T, V):
    """F.cross_entropy on bf16 logits: log_softmax and its backward in bf16."""
    N = T * V
    return ([Kernel("log_softmax: bf16 [T,V]", 2 * N, 2 * N), Kernel("nll_loss", 8 * T + 2 * T, 8)],
            [Kernel("nll_loss backward: zeros bf16 [T,V]", 0, 2 * N), Kernel("nll_loss backward: scatter", 8 * T + 8, 2 * T),
             Kernel("log_softmax backward: bf16 [T,V]", 4 * N, 2 * N)])


def kernels_of(op, model, T):
    h, ffn, heads, head_dim = MODELS[model]
    table = {
        "rmsnorm_eager_bf16in": ("rmsnorm", "eager", h, lambda: rmsnorm_fp32_weight_kernels(T, h)),
        "rmsnorm_fused_F.rms_norm": ("rmsnorm", "fused", h, lambda: rmsnorm_fused_cast_weight_kernels(T, h)),
        "residual_add_fp32": ("residual_add", "eager", h, lambda: residual_fp32_kernels(T, h)),
        "swiglu_act_eager": ("swiglu", "eager", ffn, lambda: swiglu_kernels(T, ffn)),
        "rope_q_eager": ("rope", "eager", heads * head_dim, lambda: rope_kernels(T, heads * head_dim, head_dim)),
        "cross_entropy_fp32_upcast": ("cross_entropy", "eager", VOCAB, lambda: cross_entropy_kernels(T, VOCAB)),
        "cross_entropy_bf16": ("cross_entropy", "eager", VOCAB, lambda: cross_entropy_bf16_kernels(T, VOCAB)),
    }
    name, impl, width, kernels = table[op]
    return name, impl, width, kernels()


def write_csv(name, header, rows, note):
    with open(OUT / name, "w", newline="", encoding="utf-8") as f:
        f.write(f"# {note}\n")
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def kernel_rows():
    rows = []
    for r in csv.DictReader(open(MEASURED / "eager_kernels.csv", encoding="utf-8")):
        T = int(r["tokens"])
        op, impl, width, (forward, backward) = kernels_of(r["op"], r["model"], T)
        rows.append([op, impl, T, width, "fwd", total_bytes(forward), len(forward), r["fwd_ms"]])
        rows.append([op, impl, T, width, "fwd_bwd", total_bytes(forward + backward), len(forward + backward), r["fwd_bwd_ms"]])
    return rows


def grouped_rows():
    rows = []
    for r in csv.DictReader(open(MEASURED / "grouped_gemm.csv", encoding="utf-8")):
        rows.append([r["local_experts"], r["tokens_per_expert"], r["n"], r["k"], "bf16", r["grouped_fwd_tflops"],
                     r["grouped_fwd_ms"], "grouped"])
    return rows


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    env = json.loads((MEASURED / "env.json").read_text(encoding="utf-8"))
    files = ["gemm.csv", "grouped_gemm.csv", "attention.csv", "kernels.csv"]
    (OUT / "gemm.csv").write_text(GEMM_SWEEP.read_text(encoding="utf-8"), encoding="utf-8")
    write_csv("grouped_gemm.csv", ["groups", "m", "n", "k", "dtype", "tflops", "time_ms", "impl"], grouped_rows(),
              "tests/cost/fixtures/h200/grouped_gemm.csv: torch._grouped_mm forward, bf16")
    rows = [r for r in csv.DictReader(open(MEASURED / "attention_probe.csv", encoding="utf-8"))]
    write_csv("attention.csv", ["batch", "heads", "kv_heads", "seq", "head_dim", "causal", "impl", "fwd_ms", "fwd_bwd_ms"],
              [[r["batch"], r["heads"], r["kv_heads"], r["seq"], r["head_dim"], 1, "sdpa", r["fwd_ms"], r["fwd_bwd_ms"]]
               for r in rows], "../shared/validation/h200/attention.csv (probe.py): causal SDPA, GQA 32/8 heads")
    write_csv("kernels.csv", ["op", "impl", "tokens", "width", "pass", "bytes", "kernels", "time_ms"], kernel_rows(),
              "tests/cost/fixtures/h200/eager_kernels.csv (kernel_probe.py), bytes and kernels per the probe's tables")
    (OUT / "ranks.csv").write_text("rank,world_size,local_rank,node,hostname,device_name\n0,1,0,0,h200-0,NVIDIA H200\n",
                                   encoding="utf-8")
    environment = {"probe_format": 1, "device": "cuda", "backend": "nccl", "device_name": env["gpu"], "world_size": 1,
                   "nodes": 1, "gpus_per_node": 1, "torch": env["torch"], "cuda": env["cuda"], "nccl": None,
                   "driver": "580.159.04", "sm_clock_mhz": None, "memory_clock_mhz": None, "hostname": None,
                   "started_utc": "2026-12-04T00:00:00Z", "files": files,
                   "converted_from": "tests/cost/fixtures/h200 and ../shared/validation/h200 by scripts/h200_measurements_to_probe.py"}
    (OUT / "environment.json").write_text(json.dumps(environment, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
