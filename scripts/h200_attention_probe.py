"""Fused attention on one GPU by head width and backend, and which backend PyTorch's SDPA picks by
default (what a Hugging Face model gets): causal, GQA 4:1, forward and forward + backward.

Run: OUT=dir python3 scripts/h200_attention_probe.py  -> $OUT/attention_head_dim.csv"""
import csv, os, time
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

OUT = os.environ.get("OUT", "probe_out")
os.makedirs(OUT, exist_ok=True)
dev = "cuda"


def timed_ms(fn, iters=10, warm=2):
    for _ in range(warm):
        fn()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    a.record()
    for _ in range(iters):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / iters


BACKENDS = (("default", None), ("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION))
rows = []
# (batch, q heads, kv heads, seq, head dim): Llama 3.2 1B (32/8, d 64), 3B (24/8, d 128), 8B (32/8, d 128)
for b, hq, hkv, s, d in ((1, 32, 8, 4096, 64), (4, 32, 8, 4096, 64), (2, 32, 8, 8192, 64), (1, 32, 8, 16384, 64),
                         (1, 24, 8, 4096, 128), (4, 24, 8, 4096, 128), (1, 32, 8, 4096, 128), (2, 32, 8, 8192, 128)):
    q = torch.randn(b, hq, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, hkv, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(b, hkv, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True)
    fwd_flops = 2.0 * b * hq * s * s * 2 * d / 2.0
    for name, backend in BACKENDS:
        row = dict(batch=b, heads=hq, kv_heads=hkv, seq=s, head_dim=d, backend=name, fwd_gflop=round(fwd_flops / 1e9, 1))
        try:
            def fwd():
                return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            ctx = sdpa_kernel([backend]) if backend is not None else torch.autograd.profiler.record_function("default")
            with ctx:
                ms = timed_ms(fwd)
                g = torch.randn_like(fwd())
                def step():
                    fwd().backward(g)
                    q.grad = k.grad = v.grad = None
                bms = timed_ms(step)
            row.update(fwd_ms=round(ms, 4), fwd_tflops=round(fwd_flops / ms / 1e9, 1), fwd_bwd_ms=round(bms, 4),
                       fwd_bwd_tflops_at_3_5x=round(3.5 * fwd_flops / bms / 1e9, 1))
            if backend is None:
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                    fwd()
                    torch.cuda.synchronize()
                names = [e.key for e in prof.key_averages()]
                row["default_kernel"] = ";".join(n for n in names if "ttn" in n.lower() or "fmha" in n.lower() or "flash" in n.lower())[:150]
        except Exception as e:
            row["error"] = str(e).splitlines()[0][:150]
        rows.append(row)
    del q, k, v
keys = []
for r in rows:
    keys += [x for x in r if x not in keys]
with open(os.path.join(OUT, "attention_head_dim.csv"), "w", newline="") as f:
    w = csv.DictWriter(f, keys)
    w.writeheader()
    w.writerows(rows)
print(len(rows), "rows")
