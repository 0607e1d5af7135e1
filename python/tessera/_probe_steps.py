"""Training steps of a plain-PyTorch Llama-style model written here (`tessera probe --steps`):
embedding, RMSNorm, RoPE, GQA attention, SwiGLU MLP, tied or untied head; fp32 parameters, bf16
autocast, AdamW (fused where the torch has it on a GPU), optional full recompute (a checkpoint
around every layer), gradient accumulation, DDP over the ranks. The step time is the median of
the timed steps after 2 warm-ups; the rows are in the validation schema (data/validation/README.md)."""

from __future__ import annotations

import contextlib
import gc
import inspect
import json
import math
import re
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from ._probe_compute import attention_impl
from ._probe_context import Run, is_out_of_memory
from ._probe_csv import Table
from ._probe_kernels import cross_entropy, rmsnorm_eager, rope

# The columns of data/validation/h200/runs.csv, in its order (the validation schema).
RUNS_HEADER = [
    "id", "source", "model_name", "n_layers", "hidden", "ffn_hidden", "n_heads", "n_kv_heads", "head_dim", "vocab",
    "seq_len", "mlp", "n_experts", "top_k", "moe_ffn_hidden", "n_shared_experts", "n_dense_layers", "moe_layer_freq",
    "attention", "gpu", "n_gpus", "gpus_per_node", "inter_node_gbps", "tp", "pp", "dp", "cp", "ep", "etp", "vpp",
    "micro_batch", "global_batch", "sequence_parallel", "recompute", "dist_optimizer", "precision", "framework",
    "measured_metric", "measured_value", "mfu_convention", "confidence", "notes",
]
MEMORY_HEADER = ["id", "ran", "peak_allocated_gib", "peak_reserved_gib", "params"]
WARMUP_STEPS = 2


@dataclass(frozen=True)
class LlamaShape:
    name: str
    hidden: int
    ffn: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    tied: bool
    rope_theta: float = 10000.0
    rms_eps: float = 1e-6


# A model small enough for a 2-core CPU, and Llama 3.2 1B's published config.json (the GPU default).
TINY = LlamaShape("tiny-llama (probe default)", 64, 128, 2, 4, 2, 16, 256, True)
LLAMA_3_2_1B = LlamaShape("llama3.2-1b", 2048, 8192, 16, 32, 8, 64, 128256, True, 500000.0, 1e-5)

REQUIRED_KEYS = ("hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "vocab_size")


def read_model_config(path: str) -> LlamaShape:
    """A Hugging Face Llama config.json; ValueError (one line) when it is not one."""
    try:
        config = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot read {path}: {error}") from None
    if not isinstance(config, dict):
        raise ValueError(f"{path}: not a JSON object")
    missing = [key for key in REQUIRED_KEYS if not isinstance(config.get(key), int)]
    if missing:
        raise ValueError(f"{path}: no integer {', '.join(missing)} (a Hugging Face Llama config.json has them)")
    heads = config["num_attention_heads"]
    file = Path(path)
    return LlamaShape(
        name=file.parent.name if file.name == "config.json" and file.parent.name else file.stem,
        hidden=config["hidden_size"], ffn=config["intermediate_size"], layers=config["num_hidden_layers"],
        heads=heads, kv_heads=config.get("num_key_value_heads") or heads,
        head_dim=config.get("head_dim") or config["hidden_size"] // heads, vocab=config["vocab_size"],
        tied=bool(config.get("tie_word_embeddings", False)), rope_theta=float(config.get("rope_theta", 10000.0)),
        rms_eps=float(config.get("rms_norm_eps", 1e-6)))


@dataclass(frozen=True)
class StepOptions:
    seq: int
    micro_batch: int
    grad_accum: int
    recompute: str  # none | full


# ---------------------------------------------------------------------------------------------
# The model.


class RMSNorm(nn.Module):
    def __init__(self, width: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.eps = eps

    def forward(self, x):
        return rmsnorm_eager(x, self.weight, self.eps)


class Attention(nn.Module):
    def __init__(self, shape: LlamaShape):
        super().__init__()
        self.shape = shape
        q_width, kv_width = shape.heads * shape.head_dim, shape.kv_heads * shape.head_dim
        self.q = nn.Linear(shape.hidden, q_width, bias=False)
        self.k = nn.Linear(shape.hidden, kv_width, bias=False)
        self.v = nn.Linear(shape.hidden, kv_width, bias=False)
        self.o = nn.Linear(q_width, shape.hidden, bias=False)
        self.attend = attention_impl()[1]

    def forward(self, x, cos, sin):
        batch, seq, _ = x.shape
        s = self.shape
        q = self.q(x).view(batch, seq, s.heads, s.head_dim).transpose(1, 2)
        k = self.k(x).view(batch, seq, s.kv_heads, s.head_dim).transpose(1, 2)
        v = self.v(x).view(batch, seq, s.kv_heads, s.head_dim).transpose(1, 2)
        out = self.attend(rope(q, cos, sin), rope(k, cos, sin), v, True)
        return self.o(out.transpose(1, 2).reshape(batch, seq, s.heads * s.head_dim))


class SwiGLU(nn.Module):
    def __init__(self, shape: LlamaShape):
        super().__init__()
        self.gate = nn.Linear(shape.hidden, shape.ffn, bias=False)
        self.up = nn.Linear(shape.hidden, shape.ffn, bias=False)
        self.down = nn.Linear(shape.ffn, shape.hidden, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, shape: LlamaShape):
        super().__init__()
        self.attention_norm = RMSNorm(shape.hidden, shape.rms_eps)
        self.attention = Attention(shape)
        self.mlp_norm = RMSNorm(shape.hidden, shape.rms_eps)
        self.mlp = SwiGLU(shape)

    def forward(self, x, cos, sin):
        x = x + self.attention(self.attention_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class Llama(nn.Module):
    def __init__(self, shape: LlamaShape, recompute: bool):
        super().__init__()
        self.shape, self.recompute = shape, recompute
        self.embed = nn.Embedding(shape.vocab, shape.hidden)
        self.blocks = nn.ModuleList(Block(shape) for _ in range(shape.layers))
        self.norm = RMSNorm(shape.hidden, shape.rms_eps)
        self.head = None if shape.tied else nn.Linear(shape.hidden, shape.vocab, bias=False)
        exponents = torch.arange(0, shape.head_dim, 2, dtype=torch.float32) / shape.head_dim
        self.register_buffer("inv_freq", 1.0 / shape.rope_theta ** exponents, persistent=False)

    def rope_tables(self, seq: int):
        """cos and sin [seq, head_dim] in bf16 (the attention's dtype under autocast)."""
        angles = torch.outer(torch.arange(seq, device=self.inv_freq.device, dtype=torch.float32), self.inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        return angles.cos().to(torch.bfloat16), angles.sin().to(torch.bfloat16)

    def forward(self, ids):
        x = self.embed(ids)
        cos, sin = self.rope_tables(ids.shape[1])
        for block in self.blocks:
            x = checkpoint(block, x, cos, sin, use_reentrant=False) if self.recompute else block(x, cos, sin)
        head = self.embed.weight if self.head is None else self.head.weight
        logits = F.linear(self.norm(x), head)
        return cross_entropy(logits.reshape(-1, self.shape.vocab), ids.reshape(-1))


# ---------------------------------------------------------------------------------------------
# Training.


def build_model(shape: LlamaShape, options: StepOptions, run: Run) -> nn.Module:
    if hasattr(torch.device, "__enter__"):  # torch >= 2.0: parameters made on the device
        with run.device:
            model = Llama(shape, options.recompute == "full")
    else:
        model = Llama(shape, options.recompute == "full").to(run.device)
    if run.distributed:
        device_ids = [run.device.index] if run.is_cuda else None
        model = nn.parallel.DistributedDataParallel(model, device_ids=device_ids)
    return model


def build_optimizer(model: nn.Module, run: Run):
    """(AdamW, how): fused on a GPU where this torch has it (one kernel for all parameters)."""
    if run.is_cuda and "fused" in inspect.signature(torch.optim.AdamW).parameters:
        try:
            return torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True), "fused AdamW"
        except (RuntimeError, ValueError):
            pass
    return torch.optim.AdamW(model.parameters(), lr=1e-4), "AdamW (torch's default implementation)"


def train_step(model, optimizer, ids, options: StepOptions, run: Run) -> None:
    """One optimizer step over grad_accum micro-batches; DDP all-reduces on the last one only."""
    for micro in range(options.grad_accum):
        last = micro == options.grad_accum - 1
        no_sync = model.no_sync() if run.distributed and not last else contextlib.nullcontext()
        with no_sync:
            with torch.autocast(device_type=run.device.type, dtype=torch.bfloat16):
                loss = model(ids)
            (loss / options.grad_accum).backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def timed_steps_s(model, optimizer, options: StepOptions, run: Run, vocab: int) -> list:
    timed = 2 if run.quick else (6 if run.is_cuda else 3)
    ids = torch.randint(0, vocab, (options.micro_batch, options.seq), device=run.device)
    times = []
    for _ in range(WARMUP_STEPS + timed):
        run.synchronize()
        start = time.perf_counter()
        train_step(model, optimizer, ids, options, run)
        run.synchronize()
        times.append(time.perf_counter() - start)
    return times[WARMUP_STEPS:]


@dataclass
class StepResult:
    time_s: float  # nan when out of memory
    out_of_memory: bool
    params: int
    peak_allocated_gib: float
    peak_reserved_gib: float
    optimizer: str


def run_steps(shape: LlamaShape, options: StepOptions, run: Run) -> StepResult:
    if run.is_cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(run.device)
    model = optimizer = None
    params, how, time_s, oom = 0, "", math.nan, False
    try:
        model = build_model(shape, options, run)
        params = sum(p.numel() for p in model.parameters())
        optimizer, how = build_optimizer(model, run)
        time_s = statistics.median(timed_steps_s(model, optimizer, options, run, shape.vocab))
    except RuntimeError as error:
        if not (run.is_cuda and is_out_of_memory(error)):
            raise
        oom = True
    del model, optimizer
    gc.collect()
    oom = not run.all_ranks_agree(not oom)
    peaks = peak_memory_gib(run)
    if run.is_cuda:
        torch.cuda.empty_cache()
    return StepResult(run.max_over_ranks(time_s) if not oom else math.nan, oom, params, *peaks, how)


def peak_memory_gib(run: Run):
    """(allocated, reserved) peaks in GiB, the largest over the ranks; (nan, nan) on a CPU."""
    if not run.is_cuda:
        return math.nan, math.nan
    allocated = torch.cuda.max_memory_allocated(run.device) / 2**30
    reserved = torch.cuda.max_memory_reserved(run.device) / 2**30
    return run.max_over_ranks(allocated), run.max_over_ranks(reserved)


# ---------------------------------------------------------------------------------------------
# Rows.


def run_id(shape: LlamaShape, options: StepOptions, run: Run) -> str:
    model = re.sub(r"[^a-z0-9.]+", "-", shape.name.lower()).strip("-")
    return (f"probe-{model}-s{options.seq}-mb{options.micro_batch}-ga{options.grad_accum}-{options.recompute}"
            f"-n{run.world_size}")


def step_notes(result: StepResult, run: Run) -> str:
    timed = 2 if run.quick else (6 if run.is_cuda else 3)
    data_parallel = f"DDP over {run.world_size} ranks ({run.backend})" if run.distributed else "one process"
    return ("tessera probe: plain PyTorch training step of a Llama-style model written in the probe (eager, "
            f"attention {attention_impl()[0]}, RMSNorm / RoPE / SwiGLU as Hugging Face Llama writes them): fp32 "
            f"parameters, bf16 autocast, {result.optimizer}, full recompute = torch.utils.checkpoint around every "
            f"layer (use_reentrant=False); {data_parallel}; median of {timed} steps after {WARMUP_STEPS} warm-up "
            f"(the slowest rank's); random weights and tokens")


def step_row(shape: LlamaShape, options: StepOptions, run: Run, result: StepResult, device_name: str) -> dict:
    cuda = f" + CUDA {torch.version.cuda}" if run.is_cuda else ""
    return {
        "id": run_id(shape, options, run),
        "source": f"measured: tessera probe on {run.world_size} x {device_name}, PyTorch {torch.__version__}{cuda}",
        "model_name": shape.name + (" (tied embeddings)" if shape.tied else ""),
        "n_layers": shape.layers, "hidden": shape.hidden, "ffn_hidden": shape.ffn, "n_heads": shape.heads,
        "n_kv_heads": shape.kv_heads,
        "head_dim": None if shape.head_dim * shape.heads == shape.hidden else shape.head_dim,
        "vocab": shape.vocab, "seq_len": options.seq, "mlp": "swiglu",
        "attention": "mha" if shape.kv_heads == shape.heads else "gqa",
        "gpu": device_name, "n_gpus": run.world_size, "gpus_per_node": run.local_world_size,
        "tp": 1, "pp": 1, "dp": run.world_size, "cp": 1, "ep": 1, "vpp": 1,
        "micro_batch": options.micro_batch, "global_batch": options.micro_batch * options.grad_accum * run.world_size,
        "sequence_parallel": "no", "recompute": options.recompute, "dist_optimizer": "none", "precision": "bf16",
        "framework": "pytorch", "measured_metric": "iter_time_s", "measured_value": result.time_s,
        "confidence": "paper", "notes": step_notes(result, run),
    }


def memory_row(shape: LlamaShape, options: StepOptions, run: Run, result: StepResult) -> dict:
    return {"id": run_id(shape, options, run), "ran": "out_of_memory" if result.out_of_memory else "yes",
            "peak_allocated_gib": None if result.out_of_memory else result.peak_allocated_gib,
            "peak_reserved_gib": result.peak_reserved_gib, "params": result.params}


def steps_tables(shape: LlamaShape, options: StepOptions, run: Run, device_name: str) -> dict:
    """{file name: Table}: steps.csv (no row when out of memory) and, on a GPU, steps_memory.csv."""
    result = run_steps(shape, options, run)
    steps = Table(list(RUNS_HEADER))
    if not result.out_of_memory:
        steps.rows.append(step_row(shape, options, run, result, device_name))
    tables = {"steps.csv": steps}
    if run.is_cuda:
        tables["steps_memory.csv"] = Table(list(MEMORY_HEADER), [memory_row(shape, options, run, result)])
    return tables
