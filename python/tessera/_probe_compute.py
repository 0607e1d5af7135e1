"""The compute-bound sweeps of `tessera probe`: GEMMs (bf16, and fp8 through torch._scaled_mm on
GPUs of compute capability 8.9 or newer), grouped GEMMs at MoE expert shapes, and causal GQA
attention forward and forward + backward."""

from __future__ import annotations

import functools
import math
import time
from functools import partial

import torch
import torch.nn.functional as F

from ._probe_context import Run, mean_time_s, rows_unless_out_of_memory
from ._probe_csv import Table

BF16 = torch.bfloat16

# (m, n, k) = (tokens, out features, in features) of Llama 3.1 8B's GEMMs (hidden 4096, ffn 14336,
# 32 query / 8 key-value heads of 128, vocabulary 128256; its published config.json) at 4096 and
# 16384 tokens: fused q/k/v, attention output, gate + up, down, logits.
LLAMA_8B_GEMMS = ((6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336), (128256, 4096))
# The small (CPU, test) run's shapes: large enough that a loaded CPU's per-call overhead (~30 us)
# keeps the rate far above the reader's floor of 1 GFLOP/s (a 32^3 product ran at 0.9-1.7 GFLOP/s).
SMALL_SIDES = (64, 128, 256)


def gemm_shapes(run: Run) -> list:
    if run.small:
        return [(s, s, s) for s in SMALL_SIDES]
    squares = [(s, s, s) for s in (1024, 2048, 4096, 8192)]
    return squares + [(m, n, k) for m in (4096, 16384) for (n, k) in LLAMA_8B_GEMMS]


def fp8_unavailable_reason(run: Run):
    """None where fp8 GEMMs can run here, else why not (a comment line of gemm.csv)."""
    if not run.is_cuda:
        return "fp8: not measured on a CPU"
    if not (hasattr(torch, "_scaled_mm") and hasattr(torch, "float8_e4m3fn")):
        return f"fp8: torch {torch.__version__} has no torch._scaled_mm"
    if torch.cuda.get_device_capability(run.device) < (8, 9):
        return "fp8: the GPU's compute capability is below 8.9"
    return None


def fp8_product(a, b):
    """A call computing a @ b in fp8 (e4m3, unit scales, bf16 out); b column-major as cuBLASLt wants.
    torch 2.1-2.3 return (out, amax), later versions the product alone."""
    a8 = a.to(torch.float8_e4m3fn)
    b8 = b.t().contiguous().to(torch.float8_e4m3fn).t()
    one = torch.ones((), device=a.device, dtype=torch.float32)

    def call():
        out = torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=BF16)
        return out[0] if isinstance(out, tuple) else out

    return call


def gemm_row(m, n, k, dtype, time_s) -> dict:
    return {"m": m, "n": n, "k": k, "dtype": dtype, "tflops": 2.0 * m * n * k / time_s / 1e12,
            "time_ms": time_s * 1e3}


def shape_rows(m, n, k, run: Run, fp8_reason):
    """(rows, fp8_reason) of one shape: bf16, and fp8 while it runs (its first failure says why not)."""
    a = torch.randn(m, k, device=run.device, dtype=BF16)
    b = torch.randn(k, n, device=run.device, dtype=BF16)
    rows = [gemm_row(m, n, k, "bf16", mean_time_s(lambda: torch.mm(a, b), run))]
    if fp8_reason is None:
        try:
            call = fp8_product(a, b)
            call()
            rows.append(gemm_row(m, n, k, "fp8", mean_time_s(call, run)))
        except (RuntimeError, TypeError) as error:
            fp8_reason = "fp8: torch._scaled_mm failed: " + str(error).splitlines()[0][:200]
    return rows, fp8_reason


# A training step keeps the GPU busy without pause, so its GEMMs run at the clock the power and
# thermal limits allow under sustained load, not at the boost clock of a GPU that was idle. Measured
# on the H200 of ../shared/validation/h200/gemm.csv: 4096^3 ran at 748 TFLOP/s as the sweep's
# third shape and at 649 TFLOP/s 30 shapes later. So the sweep starts after this long at full load
# (GPU boost reacts to power within about a second: NVIDIA GPU Boost, "Tesla GPU Boost" whitepaper).
SUSTAINED_LOAD_S = 5.0
SUSTAINED_LOAD_DIM = 8192


def warm_to_sustained_clock(run: Run) -> None:
    """Back-to-back large bf16 GEMMs for SUSTAINED_LOAD_S before the first timed GEMM (CUDA only)."""
    if not run.is_cuda or run.small:
        return
    a = torch.randn(SUSTAINED_LOAD_DIM, SUSTAINED_LOAD_DIM, device=run.device, dtype=torch.bfloat16)
    start = time.perf_counter()
    while time.perf_counter() - start < SUSTAINED_LOAD_S:
        for _ in range(8):
            torch.mm(a, a)
        run.synchronize()


def gemm_table(run: Run) -> Table:
    table = Table(["m", "n", "k", "dtype", "tflops", "time_ms"])
    warm_to_sustained_clock(run)
    table.comments.append(f"mean time per product after warm-ups; random normal inputs; torch {torch.__version__}")
    if run.is_cuda and not run.small:
        table.comments.append(f"timed after {SUSTAINED_LOAD_S:g} s of back-to-back GEMMs (the sustained clock of a training step)")
    fp8_reason = fp8_unavailable_reason(run)
    for m, n, k in gemm_shapes(run):
        measure = partial(shape_rows, m, n, k, run, fp8_reason)
        measured = rows_unless_out_of_memory(measure, run, table, f"gemm {m}x{n}x{k}")
        if measured:
            rows, fp8_reason = measured
            table.rows += rows
    if fp8_reason is not None:
        table.comments.append(fp8_reason)
    return table


# (groups = local experts, m = tokens per expert, n, k): gate + up and down projections of
# DeepSeek-V3 (hidden 7168, expert width 2048, 256 experts: 8 local at ep 32), Mixtral 8x7B
# (hidden 4096, expert width 14336, 8 experts: 2 local at ep 4) and Qwen3-30B-A3B (hidden 2048,
# expert width 768, 128 experts: 16 local at ep 8); from their published config.json files.
MOE_GEMMS = ((8, 4096, 7168), (8, 7168, 2048), (2, 28672, 4096), (2, 4096, 14336), (16, 1536, 2048), (16, 2048, 768))
SMALL_MOE_GEMMS = ((4, 128, 64), (4, 64, 128))


def grouped_shapes(run: Run) -> list:
    if run.small:
        return [(g, 64, n, k) for (g, n, k) in SMALL_MOE_GEMMS]
    return [(g, m, n, k) for (g, n, k) in MOE_GEMMS for m in (512, 2048)]


def grouped_product(groups, m, n, k, device):
    """(impl, call): one torch._grouped_mm over `groups` row blocks of m tokens (the 2-D x 3-D
    MoE form: offsets end each group's rows, the weights column-major), where this torch and
    device run it; otherwise a loop of `groups` products."""
    if hasattr(torch, "_grouped_mm"):
        a = torch.randn(groups * m, k, device=device, dtype=BF16)
        b = torch.randn(groups, n, k, device=device, dtype=BF16).transpose(-2, -1)
        offsets = torch.arange(m, groups * m + 1, m, device=device, dtype=torch.int32)
        try:
            torch._grouped_mm(a, b, offs=offsets)
            return "grouped", lambda: torch._grouped_mm(a, b, offs=offsets)
        except (RuntimeError, TypeError, NotImplementedError):
            pass
    a = torch.randn(groups, m, k, device=device, dtype=BF16)
    b = torch.randn(groups, k, n, device=device, dtype=BF16)
    return "loop", lambda: [torch.mm(a[g], b[g]) for g in range(groups)]


def grouped_gemm_table(run: Run) -> Table:
    table = Table(["groups", "m", "n", "k", "dtype", "impl", "tflops", "time_ms"])
    table.comments.append("m = tokens per local expert; impl grouped = one torch._grouped_mm, "
                          "loop = one torch.mm per group")
    for shape in grouped_shapes(run):
        what = f"groups, m, n, k {shape}"
        table.rows += rows_unless_out_of_memory(partial(grouped_rows, shape, run), run, table, what)
    return table


def grouped_rows(shape, run: Run) -> list:
    groups, m, n, k = shape
    impl, call = grouped_product(groups, m, n, k, run.device)
    time_s = mean_time_s(call, run)
    return [{"groups": groups, "m": m, "n": n, "k": k, "dtype": "bf16", "impl": impl,
             "tflops": 2.0 * groups * m * n * k / time_s / 1e12, "time_ms": time_s * 1e3}]


def repeat_kv(x, heads: int):
    """Key/value heads repeated to the query heads (GQA as Hugging Face's repeat_kv does it)."""
    return x if x.shape[1] == heads else x.repeat_interleave(heads // x.shape[1], dim=1)


@functools.lru_cache(maxsize=2)
def causal_mask(seq: int, device, dtype):
    """The additive mask (-inf above the diagonal), made once per shape as a model makes it once
    per forward."""
    return torch.full((seq, seq), float("-inf"), device=device, dtype=dtype).triu(1)


def math_attention(q, k, v, causal: bool):
    """Attention as matmul + softmax, for a torch without scaled_dot_product_attention (the
    Hugging Face eager path: fp32 softmax, an additive causal mask)."""
    k, v = repeat_kv(k, q.shape[1]), repeat_kv(v, q.shape[1])
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    if causal:
        scores = scores + causal_mask(q.shape[-2], scores.device, scores.dtype)
    return torch.matmul(torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype), v)


@functools.lru_cache(maxsize=1)
def sdpa_has_gqa() -> bool:
    """scaled_dot_product_attention takes enable_gqa (torch >= 2.5)."""
    q, kv = torch.zeros(1, 2, 1, 8), torch.zeros(1, 1, 1, 8)
    try:
        F.scaled_dot_product_attention(q, kv, kv, enable_gqa=True)
        return True
    except (TypeError, RuntimeError):
        return False


def sdpa_attention(q, k, v, causal: bool):
    """scaled_dot_product_attention with GQA: enable_gqa where the torch has it, else repeated heads."""
    if sdpa_has_gqa():
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    h = q.shape[1]
    return F.scaled_dot_product_attention(q, repeat_kv(k, h), repeat_kv(v, h), is_causal=causal)


def attention_impl():
    return ("sdpa", sdpa_attention) if hasattr(F, "scaled_dot_product_attention") else ("math", math_attention)


# (batch, heads, kv_heads, seq, head_dim, causal): Llama 3 GQA (32 / 8 heads of 128 and of 64, as
# in 8B and 3.2-1B) at 16384 tokens per batch, and one non-causal row.
ATTENTION_SHAPES = [(16384 // s, 32, 8, s, 128, 1) for s in (1024, 2048, 4096, 8192, 16384)] + [
    (4, 32, 8, 4096, 64, 1), (4, 32, 8, 4096, 128, 0)]
ATTENTION_HEADER = ("batch", "heads", "kv_heads", "seq", "head_dim", "causal", "impl", "fwd_ms", "fwd_bwd_ms")
SMALL_ATTENTION_SHAPES = [(1, 4, 2, 32, 16, 1), (1, 4, 2, 64, 16, 1), (1, 4, 4, 64, 16, 0)]


def attention_times_s(run: Run, shape, attend):
    batch, heads, kv_heads, seq, head_dim, causal = shape
    q = torch.randn(batch, heads, seq, head_dim, device=run.device, dtype=BF16, requires_grad=True)
    k = torch.randn(batch, kv_heads, seq, head_dim, device=run.device, dtype=BF16, requires_grad=True)
    v = torch.randn(batch, kv_heads, seq, head_dim, device=run.device, dtype=BF16, requires_grad=True)
    grad = torch.randn(batch, heads, seq, head_dim, device=run.device, dtype=BF16)

    def forward_backward():
        torch.autograd.grad(attend(q, k, v, bool(causal)), (q, k, v), grad)

    return mean_time_s(lambda: attend(q, k, v, bool(causal)), run), mean_time_s(forward_backward, run)


def attention_table(run: Run) -> Table:
    table = Table(list(ATTENTION_HEADER))
    impl, attend = attention_impl()
    table.comments.append(f"bf16; impl {impl}; forward time and forward + backward time (torch.autograd.grad) "
                          "per call")
    for shape in SMALL_ATTENTION_SHAPES if run.small else ATTENTION_SHAPES:
        measure = partial(attention_rows, run, shape, impl, attend)
        what = f"batch, heads, kv_heads, seq, head_dim {shape[:5]}"
        table.rows += rows_unless_out_of_memory(measure, run, table, what)
    return table


def attention_rows(run: Run, shape, impl: str, attend) -> list:
    fwd_s, fwd_bwd_s = attention_times_s(run, shape, attend)
    return [dict(zip(ATTENTION_HEADER, shape + (impl, fwd_s * 1e3, fwd_bwd_s * 1e3)))]
