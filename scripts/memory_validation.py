#!/usr/bin/python3
"""Predicted peak memory per GPU against torchtitan's published peaks.

Runs `tessera estimate --json` for each published configuration below and prints predicted vs
measured peak memory and the error. Source of every measurement: torchtitan,
benchmarks/llama3_h100_202412_torchtitan.md (commit 9dec370, Dec 2024), Grand Teton H100 96 GB
(500 W) hosts; the memory column is the peak reserved by PyTorch's caching allocator, maximum
over GPUs (footnote 1). Tessera's peak also counts the CUDA context, workspaces and NCCL buffers
outside the allocator (about 0.6-1.6 GiB), so it reads slightly high against these numbers.

The plans say how torchtitan ran (torchtitan 9dec370):
- framework=torchtitan: op-level selective activation checkpointing ("sel-AC":
  selective_ac_option = "op"), FSDP2 (fp32 sharded parameters, no 16-bit copy), PyTorch tensor
  parallelism with sequence-parallel norms and loss parallelism, cross_entropy on `pred.float()`;
- zero=3: FSDP2 over dp x cp; under pipelining torchtitan sets reshard_after_forward = False
  (parallelize_llama.py apply_fsdp), hence reshard=0 with pp > 1;
- Table 5: local batch 32 split into the default number of pipeline micro-batches, the number
  of stages (config_manager.py --experimental.pipeline_parallel_microbatches), so mb = 4;
- torch.compile (Tables 2, 4, 5) is per TransformerBlock; Tessera models the eager saved tensors,
  which compile does not enlarge (Table 1: 82.4 eager vs 77.0 compiled).

Usage: scripts/memory_validation.py [path/to/tessera]
"""
import json
import subprocess
import sys

TESSERA = sys.argv[1] if len(sys.argv) > 1 else "build/bin/tessera"
GPU = "h100-96gb-500w"
TT = "framework=torchtitan"

# (label, model, gpus, plan, published GiB)
CASES = [
    ("T1 8B FSDP8 lbs2 sel-AC (eager)", "llama3-8b", 8,
     f"tp=1,mb=2,gbs=16,seq=8192,recompute=selective,zero=3,{TT}", 82.4),
    ("T3 8B FSDP128 lbs2 sel-AC (eager)", "llama3-8b", 128,
     f"tp=1,mb=2,gbs=256,seq=8192,recompute=selective,zero=3,{TT}", 67.0),
    ("T2 8B FSDP8 CP1 32K full-AC fp8", "llama3-8b", 8,
     f"tp=1,cp=1,mb=1,gbs=8,seq=32768,recompute=full,zero=3,precision=fp8,{TT}", 83.9),
    ("T2 8B FSDP4 CP2 64K full-AC fp8", "llama3-8b", 8,
     f"tp=1,cp=2,mb=1,gbs=4,seq=65536,recompute=full,zero=3,precision=fp8,{TT}", 84.2),
    ("T2 8B FSDP2 CP4 128K full-AC fp8", "llama3-8b", 8,
     f"tp=1,cp=4,mb=1,gbs=2,seq=131072,recompute=full,zero=3,precision=fp8,{TT}", 84.0),
    ("T4 70B FSDP32 TP8 lbs16 full-AC fp8", "llama3-70b", 256,
     f"tp=8,sp=1,mb=16,gbs=512,seq=8192,recompute=full,zero=3,precision=fp8,{TT}", 71.9),
    ("T5 405B FSDP8 TP8 PP8 1F1B full-AC fp8", "llama3.1-405b", 512,
     f"tp=8,sp=1,pp=8,mb=4,gbs=256,seq=8192,recompute=full,zero=3,reshard=0,precision=fp8,{TT}", 82.5),
]


def estimate(model: str, gpus: int, plan: str) -> dict:
    cmd = [TESSERA, "estimate", "--model", model, "--cluster", f"{GPU}:{gpus}", "--plan", plan, "--json"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {run.stderr.strip()}")
    return json.loads(run.stdout)


def main() -> int:
    print(f"{'configuration':<42} {'predicted GiB':>13} {'published GiB':>13} {'error %':>8}")
    errors = []
    for label, model, gpus, plan, published in CASES:
        try:
            predicted = estimate(model, gpus, plan)["peak_memory_gib"]
        except RuntimeError as error:
            if TT not in plan:
                raise
            # A build without the plan's framework field: say so instead of guessing.
            print(f"{label:<42} cannot run: {error}", file=sys.stderr)
            return 2
        error = 100.0 * (predicted - published) / published
        errors.append(abs(error))
        print(f"{label:<42} {predicted:>13.1f} {published:>13.1f} {error:>+8.1f}")
    errors.sort()
    print(f"|error| median {errors[len(errors) // 2]:.1f}%  max {errors[-1]:.1f}%  over {len(errors)} runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
