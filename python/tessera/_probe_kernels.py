"""The memory-bound operations of an eager PyTorch Llama step, timed forward and forward +
backward, each with the bytes its kernels read and write (kernels.csv; README "tessera probe").

Byte counts. Every kernel is counted as reading each input once and writing each output once, at
the element sizes of its dtypes (bf16 2 bytes, fp32 4, int64 labels 8): the least traffic it can
have. A kernel that re-reads (the softmax over a 128k vocabulary reads each row three times)
shows up as a lower efficiency, not as more bytes. The tables below list every kernel of each
pass with what it reads and writes: the forward ops as written, and for the backward what
autograd runs for each op (torch/csrc/autograd/FunctionsManual.cpp and derivatives.yaml: gradient
kernels, broadcast gradients summed back to an input's shape, dtype casts of a gradient to its
input's dtype, and the sum of two gradients that reach the same tensor). The backward is run with
torch.autograd.grad, so no AccumulateGrad copy is counted or run. A pass's `kernels` is the length
of its list; `bytes` the sum of reads and writes.

Notation in the tables: N = tokens x width elements, T = tokens, h = width of one row.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch
import torch.nn.functional as F

from ._probe_context import Run, host_time_s, mean_time_s, rows_unless_out_of_memory
from ._probe_csv import Table

BF16, FP32 = torch.bfloat16, torch.float32
RMS_EPS = 1e-5  # Llama 3's rms_norm_eps


@dataclass(frozen=True)
class Kernel:
    what: str
    read_bytes: int
    write_bytes: int


def total_bytes(kernels) -> int:
    return sum(k.read_bytes + k.write_bytes for k in kernels)


# ---------------------------------------------------------------------------------------------
# The operations, as the Hugging Face Llama code writes them.


def rmsnorm_eager(x, w, eps=RMS_EPS):
    """transformers' LlamaRMSNorm.forward: fp32 statistics, the weight applied in the input dtype."""
    dtype = x.dtype
    x = x.float()
    variance = x.pow(2).mean(-1, keepdim=True)
    x = x * torch.rsqrt(variance + eps)
    return w * x.to(dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope(q, cos, sin):
    return q * cos + rotate_half(q) * sin


def swiglu(gate, up):
    return F.silu(gate) * up


def cross_entropy(logits, labels):
    return F.cross_entropy(logits.float(), labels)


# ---------------------------------------------------------------------------------------------
# Their kernels: (what, bytes read, bytes written), forward and backward.


def copy_kernels(T, h):
    N = T * h
    return [Kernel("dst.copy_(src): bf16 [T,h]", 2 * N, 2 * N)], []


def rmsnorm_eager_kernels(T, h):
    """x bf16 [T,h], weight bf16 [h] (the model's dtype, as in a bf16 Hugging Face model)."""
    N = T * h
    forward = [
        Kernel("x.float(): read bf16 [T,h], write fp32", 2 * N, 4 * N),
        Kernel("x.pow(2): fp32 [T,h]", 4 * N, 4 * N),
        Kernel(".mean(-1, keepdim=True): fp32 [T,h] -> [T,1]", 4 * N, 4 * T),
        Kernel("variance + eps: fp32 [T,1]", 4 * T, 4 * T),
        Kernel("torch.rsqrt: fp32 [T,1]", 4 * T, 4 * T),
        Kernel("x * rsqrt: fp32 [T,h] x [T,1] -> [T,h]", 4 * N + 4 * T, 4 * N),
        Kernel("x.to(bf16): read fp32 [T,h], write bf16", 4 * N, 2 * N),
        Kernel("w * x: bf16 [h] x [T,h] -> [T,h]", 2 * h + 2 * N, 2 * N),
    ]
    backward = [
        Kernel("d(w*x)/dx: grad * w, bf16 [T,h] x [h]", 2 * N + 2 * h, 2 * N),
        Kernel("d(w*x)/dw: grad * x, bf16 [T,h]", 4 * N, 2 * N),
        Kernel("  summed to w's shape: bf16 [T,h] -> [h]", 2 * N, 2 * h),
        Kernel("to(bf16) backward: grad cast bf16 -> fp32 [T,h]", 2 * N, 4 * N),
        Kernel("d(x*r)/dx: grad * rsqrt, fp32 [T,h] x [T,1]", 4 * N + 4 * T, 4 * N),
        Kernel("d(x*r)/dr: grad * x, fp32 [T,h]", 8 * N, 4 * N),
        Kernel("  summed to r's shape: fp32 [T,h] -> [T,1]", 4 * N, 4 * T),
        Kernel("rsqrt backward: result.pow(3), fp32 [T,1]", 4 * T, 4 * T),
        Kernel("rsqrt backward: -0.5 * grad, fp32 [T,1]", 4 * T, 4 * T),
        Kernel("rsqrt backward: product of the two, fp32 [T,1]", 8 * T, 4 * T),
        # variance + eps: the gradient passes through (no kernel)
        Kernel("mean backward: grad expanded / h, fp32 [T,1] -> [T,h]", 4 * T, 4 * N),
        Kernel("pow backward: x.pow(1) (a copy), fp32 [T,h]", 4 * N, 4 * N),
        Kernel("pow backward: 2 * that, fp32 [T,h]", 4 * N, 4 * N),
        Kernel("pow backward: grad * that, fp32 [T,h]", 8 * N, 4 * N),
        Kernel("the two gradients of the fp32 x summed, fp32 [T,h]", 8 * N, 4 * N),
        Kernel("float() backward: grad cast fp32 -> bf16 [T,h]", 4 * N, 2 * N),
    ]
    return forward, backward


def rmsnorm_fused_kernels(T, h):
    """F.rms_norm(x, (h,), w) where it dispatches to aten._fused_rms_norm: one forward kernel that
    also writes the fp32 rstd, a backward of one kernel for dx and one for dw (the layer-norm
    backward kernels of ATen's CUDA code)."""
    N = T * h
    forward = [Kernel("_fused_rms_norm: read x bf16 [T,h] and w [h], write y bf16 [T,h] and rstd fp32 [T]",
                      2 * N + 2 * h, 2 * N + 4 * T)]
    backward = [
        Kernel("dx: read grad, x bf16 [T,h], rstd fp32 [T], w [h]; write dx bf16 [T,h]",
               4 * N + 4 * T + 2 * h, 2 * N),
        Kernel("dw: read grad, x bf16 [T,h], rstd fp32 [T]; write dw bf16 [h]", 4 * N + 4 * T, 2 * h),
    ]
    return forward, backward


def rope_kernels(T, h, head_dim):
    """q bf16 [T, heads, head_dim] (h = heads x head_dim), cos and sin bf16 [T, 1, head_dim]
    broadcast over the heads: D = T x head_dim elements each."""
    N, D = T * h, T * head_dim
    forward = [
        Kernel("q * cos: bf16 [T,h] x [T,d]", 2 * N + 2 * D, 2 * N),
        Kernel("-q[..., d/2:]: bf16, half of q", N, N),
        Kernel("torch.cat((-x2, x1)): bf16, two halves -> [T,h]", 2 * N, 2 * N),
        Kernel("rotate_half(q) * sin: bf16 [T,h] x [T,d]", 2 * N + 2 * D, 2 * N),
        Kernel("sum of the two products: bf16 [T,h]", 4 * N, 2 * N),
    ]
    backward = [
        # the sum: the gradient passes to both products (no kernel)
        Kernel("d(r*sin)/dr: grad * sin, bf16", 2 * N + 2 * D, 2 * N),
        # cat backward: slices of the gradient (views, no kernel)
        Kernel("neg backward: -grad, bf16, half of q", N, N),
        Kernel("slice backward of q[..., d/2:]: zeros bf16 [T,h]", 0, 2 * N),
        Kernel("  the gradient copied into its half", N, N),
        Kernel("slice backward of q[..., :d/2]: zeros bf16 [T,h]", 0, 2 * N),
        Kernel("  the gradient copied into its half", N, N),
        Kernel("d(q*cos)/dq: grad * cos, bf16", 2 * N + 2 * D, 2 * N),
        Kernel("three gradients of q summed: first add, bf16 [T,h]", 4 * N, 2 * N),
        Kernel("three gradients of q summed: second add, bf16 [T,h]", 4 * N, 2 * N),
    ]
    return forward, backward


def swiglu_kernels(T, h):
    """gate and up bf16 [T,h] (h = the MLP's intermediate width)."""
    N = T * h
    forward = [
        Kernel("F.silu(gate): bf16 [T,h]", 2 * N, 2 * N),
        Kernel("silu * up: bf16 [T,h]", 4 * N, 2 * N),
    ]
    backward = [
        Kernel("d(s*u)/ds: grad * up, bf16", 4 * N, 2 * N),
        Kernel("d(s*u)/du: grad * silu(gate), bf16", 4 * N, 2 * N),
        Kernel("silu_backward: read grad and gate, write bf16", 4 * N, 2 * N),
    ]
    return forward, backward


def residual_add_kernels(T, h):
    """residual fp32 [T,h] + branch output bf16 [T,h] -> fp32 (one kernel casting on the fly)."""
    N = T * h
    forward = [Kernel("residual + x: read fp32 and bf16 [T,h], write fp32", 6 * N, 4 * N)]
    # the fp32 gradient passes to the residual as it is; the bf16 input's copy is cast
    backward = [Kernel("gradient cast fp32 -> bf16 for the bf16 input", 4 * N, 2 * N)]
    return forward, backward


def cross_entropy_kernels(T, V):
    """logits bf16 [T,V] made fp32 (as transformers' loss does), then F.cross_entropy (mean)
    = log_softmax + nll_loss; labels int64 [T]."""
    N = T * V
    forward = [
        Kernel("logits.float(): read bf16 [T,V], write fp32", 2 * N, 4 * N),
        Kernel("log_softmax: fp32 [T,V]", 4 * N, 4 * N),
        Kernel("nll_loss: read labels int64 [T] and T log-probabilities, write the loss and weight",
               8 * T + 4 * T, 8),
    ]
    backward = [
        Kernel("nll_loss backward: zeros fp32 [T,V]", 0, 4 * N),
        Kernel("nll_loss backward: read labels, grad and weight, write -grad/T at the labels", 8 * T + 8, 4 * T),
        Kernel("log_softmax backward: read grad and output fp32 [T,V], write fp32", 8 * N, 4 * N),
        Kernel("float() backward: grad cast fp32 -> bf16 [T,V]", 4 * N, 2 * N),
    ]
    return forward, backward


# ---------------------------------------------------------------------------------------------
# Inputs and calls.


@dataclass
class KernelCase:
    """One op at one shape: its forward call, its backward inputs and its kernel tables."""

    op: str
    impl: str
    tokens: int
    width: int
    forward: object  # () -> output
    grad_inputs: tuple  # tensors the backward differentiates (empty: forward only)
    kernels: tuple  # (forward kernels, backward kernels)

    def passes(self):
        yield "fwd", self.forward, self.kernels[0]
        if self.grad_inputs:
            out = self.forward()
            grad = torch.ones_like(out) if out.dim() == 0 else torch.randn_like(out)

            def forward_backward():
                torch.autograd.grad(self.forward(), self.grad_inputs, grad)

            yield "fwd_bwd", forward_backward, self.kernels[0] + self.kernels[1]


def _randn(shape, device, dtype, grad=True):
    return torch.randn(*shape, device=device, dtype=dtype, requires_grad=grad)


def copy_case(T, h, device):
    src, dst = _randn((T, h), device, BF16, False), torch.empty(T, h, device=device, dtype=BF16)
    return [KernelCase("copy", "eager", T, h, lambda: dst.copy_(src), (), copy_kernels(T, h))]


def rmsnorm_cases(T, h, device):
    x, w = _randn((T, h), device, BF16), _randn((h,), device, BF16)
    cases = [KernelCase("rmsnorm", "eager", T, h, lambda: rmsnorm_eager(x, w), (x, w), rmsnorm_eager_kernels(T, h))]
    if fused_rms_norm_runs(x, w):
        cases.append(KernelCase("rmsnorm", "fused", T, h, lambda: F.rms_norm(x, (h,), w, RMS_EPS), (x, w),
                                rmsnorm_fused_kernels(T, h)))
    return cases


def fused_rms_norm_runs(x, w) -> bool:
    """F.rms_norm exists and reaches the one-kernel aten._fused_rms_norm here (its autograd node
    says so); older torch versions compose it from the same ops as the eager code."""
    if not hasattr(F, "rms_norm"):
        return False
    out = F.rms_norm(x, (x.shape[-1],), w, RMS_EPS)
    return out.grad_fn is not None and "FusedRmsNorm" in type(out.grad_fn).__name__


def rope_case(T, heads, head_dim, device):
    q = _randn((T, heads, head_dim), device, BF16)
    cos = torch.randn(T, 1, head_dim, device=device, dtype=BF16)
    sin = torch.randn(T, 1, head_dim, device=device, dtype=BF16)
    h = heads * head_dim
    return [KernelCase("rope", "eager", T, h, lambda: rope(q, cos, sin), (q,), rope_kernels(T, h, head_dim))]


def swiglu_case(T, h, device):
    gate, up = _randn((T, h), device, BF16), _randn((T, h), device, BF16)
    return [KernelCase("swiglu", "eager", T, h, lambda: swiglu(gate, up), (gate, up), swiglu_kernels(T, h))]


def residual_add_case(T, h, device):
    residual, x = _randn((T, h), device, FP32), _randn((T, h), device, BF16)
    return [KernelCase("residual_add", "eager", T, h, lambda: residual + x, (residual, x),
                       residual_add_kernels(T, h))]


def cross_entropy_case(T, V, device):
    logits = _randn((T, V), device, BF16)
    labels = torch.randint(0, V, (T,), device=device)
    return [KernelCase("cross_entropy", "eager", T, V, lambda: cross_entropy(logits, labels), (logits,),
                       cross_entropy_kernels(T, V))]


# Shapes: Llama 3.2 1B and 3.1 8B (hidden 2048 / 4096, ffn 8192 / 14336, heads of 64 / 128, 32 query
# heads, vocabulary 128256; published config.json) at 4096 and 16384 tokens.
@dataclass(frozen=True)
class KernelShapes:
    tokens: tuple
    hidden: tuple
    ffn: tuple
    heads_x_dim: tuple
    loss: tuple  # (tokens, vocabulary)
    copy: tuple  # (tokens, width)


GPU_SHAPES = KernelShapes((4096, 16384), (2048, 4096), (8192, 14336), ((32, 64), (32, 128)),
                          ((4096, 128256), (16384, 32768)), ((4096, 4096), (16384, 4096), (131072, 4096)))
SMALL_SHAPES = KernelShapes((64,), (64,), (128,), ((4, 16),), ((64, 256),), ((64, 64), (256, 256)))


def kernel_cases(run: Run):
    """Makers of the cases, one shape at a time (its tensors live only while it is measured); each
    returns a list of cases (rmsnorm: eager, and fused where the torch has it)."""
    shapes, device = (SMALL_SHAPES if run.small else GPU_SHAPES), run.device
    for T, h in shapes.copy:
        yield partial(copy_case, T, h, device)
    for T in shapes.tokens:
        for h in shapes.hidden:
            yield partial(rmsnorm_cases, T, h, device)
            yield partial(residual_add_case, T, h, device)
        for f in shapes.ffn:
            yield partial(swiglu_case, T, f, device)
        for heads, head_dim in shapes.heads_x_dim:
            yield partial(rope_case, T, heads, head_dim, device)
    for T, V in shapes.loss:
        yield partial(cross_entropy_case, T, V, device)


def dispatch_row(run: Run) -> dict:
    """Host time per eager operator: an out-of-place add of two one-element tensors."""
    a = torch.ones(1, device=run.device)
    b = torch.ones(1, device=run.device)
    time_s = host_time_s(lambda: torch.add(a, b), run)
    return {"op": "dispatch", "impl": "eager", "tokens": 1, "width": 1, "pass": "fwd", "bytes": 0, "kernels": 1,
            "time_ms": time_s * 1e3}


def case_rows(run: Run, case: KernelCase):
    for pass_name, call, kernels in case.passes():
        yield {"op": case.op, "impl": case.impl, "tokens": case.tokens, "width": case.width, "pass": pass_name,
               "bytes": total_bytes(kernels), "kernels": len(kernels), "time_ms": mean_time_s(call, run) * 1e3}


def measured_rows(make_cases, run: Run) -> list:
    return [row for case in make_cases() for row in case_rows(run, case)]


def kernels_table(run: Run) -> Table:
    table = Table(["op", "impl", "tokens", "width", "pass", "bytes", "kernels", "time_ms"])
    table.comments += [
        "bytes: read + written by the pass's kernels, each counted once per input and output "
        "(tessera/_probe_kernels.py)",
        "rope: width = heads x head_dim, cos/sin [tokens, head_dim] broadcast over heads; swiglu: width = ffn; "
        "cross_entropy: width = vocabulary; rmsnorm weight bf16; residual_add fp32 + bf16",
    ]
    for make_cases in kernel_cases(run):
        what = f"{make_cases.func.__name__}{make_cases.args[:-1]}"
        table.rows += rows_unless_out_of_memory(partial(measured_rows, make_cases, run), run, table, what)
        if run.is_cuda:
            torch.cuda.empty_cache()
    table.rows.append(dispatch_row(run))
    return table
