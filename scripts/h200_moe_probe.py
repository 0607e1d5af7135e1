"""Component measurements for the MoE cost model on one GPU (issue 29, item 2).

Run on any CUDA GPU with PyTorch >= 2.8:  OUT=dir python3 scripts/h200_moe_probe.py
Writes under $OUT:
  grouped_gemm.csv  the routed experts' GEMMs at real tokens per local expert: one grouped GEMM
                    (torch._grouped_mm, the kernel torchtitan's MoE uses), a loop of per-expert
                    GEMMs (Megatron's SequentialMLP), and one dense GEMM of the same total work;
                    forward, and forward + backward where autograd supports it
  attention.csv     causal SDPA at MLA's head widths (q/k 192, v 128) and at long contexts with
                    GQA, per backend, forward and forward + backward
  env.json          torch version, GPU name
Every time is the mean of `iters` calls after warm-ups, between CUDA events.
"""
import csv, json, os, time, traceback
import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", "probe_out")
os.makedirs(OUT, exist_ok=True)
dev = torch.device("cuda")
T0 = time.time()
BUDGET_S = float(os.environ.get("PROBE_BUDGET_S", "150"))


def left():
    return BUDGET_S - (time.time() - T0)


def timed_ms(fn, iters=10, warm=2):
    for _ in range(warm):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / iters


# (model, hidden h, expert width f): the routed experts of the validation files' MoE models.
EXPERT_SHAPES = (("qwen3-235b-a22b", 4096, 1536), ("deepseek-v3", 7168, 2048), ("qwen3-30b-a3b", 2048, 768))
TOKENS_PER_EXPERT = (128, 256, 512, 1024, 2048, 4096, 8192)
LOCAL_EXPERTS = (4, 16)


def grouped(a, w, offs):
    return torch._grouped_mm(a, w.transpose(-2, -1), offs=offs)


def looped(a, w, m):
    return torch.cat([a[i * m:(i + 1) * m] @ w[i].t() for i in range(w.shape[0])])


def expert_gemm_rows():
    rows = []
    for model, h, f in EXPERT_SHAPES:
        for experts in LOCAL_EXPERTS:
            for m in TOKENS_PER_EXPERT:
                if left() < 0:
                    return rows
                total = m * experts
                offs = torch.arange(m, total + 1, m, device=dev, dtype=torch.int32)
                # fc1: (m x h) * (h x 2f) per expert (gate and up fused); fc2: (m x f) * (f x h).
                for gemm, k, n in (("fc1", h, 2 * f), ("fc2", f, h)):
                    a = torch.randn(total, k, device=dev, dtype=torch.bfloat16, requires_grad=True)
                    w = torch.randn(experts, n, k, device=dev, dtype=torch.bfloat16, requires_grad=True)
                    flops = 2.0 * total * n * k
                    row = dict(model=model, gemm=gemm, local_experts=experts, tokens_per_expert=m, n=n, k=k)
                    for name, fn in (("grouped", lambda: grouped(a, w, offs)), ("loop", lambda: looped(a, w, m))):
                        try:
                            ms = timed_ms(fn)
                            row[f"{name}_fwd_ms"] = round(ms, 4)
                            row[f"{name}_fwd_tflops"] = round(flops / ms / 1e9, 1)
                            out = fn()
                            g = torch.randn_like(out)
                            def step(fn=fn, g=g):
                                fn().backward(g)
                                a.grad = None
                                w.grad = None
                            ms = timed_ms(step)
                            row[f"{name}_fwd_bwd_ms"] = round(ms, 4)
                            row[f"{name}_fwd_bwd_tflops"] = round(3.0 * flops / ms / 1e9, 1)
                        except Exception as e:
                            row[f"{name}_error"] = str(e).splitlines()[0][:160]
                    with torch.no_grad():
                        dense_w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
                        ms = timed_ms(lambda: a.detach() @ dense_w.t())
                    row["dense_fwd_ms"] = round(ms, 4)
                    row["dense_fwd_tflops"] = round(flops / ms / 1e9, 1)
                    rows.append(row)
                    del a, w, dense_w
                torch.cuda.empty_cache()
    return rows


# (label, batch, q heads, kv heads, seq, q/k head width, v head width)
ATTENTION_SHAPES = (
    ("deepseek-v3 mla tp1", 1, 128, 128, 4096, 192, 128),
    ("deepseek-v3 mla tp8", 1, 16, 16, 4096, 192, 128),
    ("deepseek-v3 mla tp8 mb2", 2, 16, 16, 4096, 192, 128),
    ("mha 128 heads d128 (same tokens as mla tp1)", 1, 128, 128, 4096, 128, 128),
    ("qwen3-235b tp4 s16k", 1, 16, 1, 16384, 128, 128),
    ("qwen3-235b tp4 s32k cp2 shard", 1, 16, 1, 32768, 128, 128),
    ("qwen3-235b tp4 s4k", 1, 16, 1, 4096, 128, 128),
)


def attention_rows():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION),
                ("efficient", SDPBackend.EFFICIENT_ATTENTION))
    rows = []
    for label, b, hq, hkv, s, dqk, dv in ATTENTION_SHAPES:
        q = torch.randn(b, hq, s, dqk, device=dev, dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn(b, hkv, s, dqk, device=dev, dtype=torch.bfloat16, requires_grad=True)
        v = torch.randn(b, hkv, s, dv, device=dev, dtype=torch.bfloat16, requires_grad=True)
        # Causal forward FLOPs: QK^T and PV over the lower triangle.
        fwd_flops = 2.0 * b * hq * s * s * (dqk + dv) / 2.0
        for name, backend in backends:
            if left() < 0:
                return rows
            row = dict(shape=label, batch=b, heads=hq, kv_heads=hkv, seq=s, qk_head_dim=dqk, v_head_dim=dv,
                       backend=name, fwd_gflop=round(fwd_flops / 1e9, 1))
            try:
                with sdpa_kernel([backend]):
                    def fwd():
                        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=hkv != hq)
                    ms = timed_ms(fwd)
                    row["fwd_ms"] = round(ms, 4)
                    row["fwd_tflops"] = round(fwd_flops / ms / 1e9, 1)
                    g = torch.randn_like(fwd())
                    def step():
                        fwd().backward(g)
                        q.grad = k.grad = v.grad = None
                    ms = timed_ms(step)
                    row["fwd_bwd_ms"] = round(ms, 4)
                    row["fwd_bwd_tflops_at_3.5x"] = round(3.5 * fwd_flops / ms / 1e9, 1)
            except Exception as e:
                row["error"] = str(e).splitlines()[0][:160]
            rows.append(row)
        del q, k, v
        torch.cuda.empty_cache()
    return rows


def write_csv(name, rows):
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with open(os.path.join(OUT, name), "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    p = torch.cuda.get_device_properties(0)
    json.dump({"torch": torch.__version__, "gpu": p.name, "sms": p.multi_processor_count, "cuda": torch.version.cuda},
              open(os.path.join(OUT, "env.json"), "w"))
    for name, fn in (("grouped_gemm.csv", expert_gemm_rows), ("attention.csv", attention_rows)):
        try:
            rows = fn()
        except Exception:
            rows = [dict(error=traceback.format_exc()[-400:])]
        write_csv(name, rows)
        print(name, len(rows), f"{time.time() - T0:.0f}s", flush=True)
