#!/usr/bin/python3
"""A small GPT trained on CPUs with torch.distributed (gloo), its global batch size chosen online by
tessera's goodput controller from the gradient noise scale measured on its own gradients.

    OMP_NUM_THREADS=1 PYTHONPATH=build/python python3 examples/torch_gpt_cpu.py --world 2

What it shows, in one file:
  * a GPT (byte-level tokens, learned positions, pre-norm blocks, tied embeddings) trained on the
    text of the licences Debian ships in /usr/share/common-licenses (any directory of text files
    with --corpus), data-parallel over --world CPU processes (DistributedDataParallel, gloo);
  * tessera.torch.GradNormHook: each step, the squared norm of every micro-batch's gradient (before
    accumulation) and of the all-reduced gradient, fed to tessera.Controller.observe_gradients; the
    measured step time to observe_step; decide() / switch_to() between steps;
  * tessera.ElasticBatchSampler: the global batch changes between steps with no sample lost or
    repeated; each step has --microbatches micro-batches per rank, so a bigger batch means bigger
    micro-batches (on a CPU small tensors are overhead-bound, so throughput rises with the batch);
  * the schedule the controller chose, printed as Megatron-LM --step-batch-size-schedule text.

The cost model describes GPUs, not this CPU, so the controller is built with
Controller.from_step_times. By default (--step-times model) the candidate batches' step times
follow a fixed curve t(B) = t0 (1 + B / B_half) with B_half = 96 sequences: a cluster whose small
batches are bound by per-step overhead (launches, the gradient all-reduce's latency, the optimizer
step), as GPUs are at a few sequences per GPU. The measured step times refit t0 online; the
decisions then depend only on the curve's shape and the noise scale measured from this run's
gradients, so they do not change with the load on a shared machine. --step-times profile times
this machine instead at start-up (whole steps at three batch sizes, linear in between); on a 2-core
CPU that profile is noisy, and with it the controller may well keep its first batch.

--check-gns also computes every sample's own gradient (functorch.vmap, or a loop without functorch)
for the same steps and forms |G|^2 and tr(Sigma) directly, the brute-force estimate the controller's
micro-batch estimate is compared with (the time it takes is left out of the measured step times).
--record FILE writes a JSON record of the run (per step, the schedule, both noise scales and every
rank's consumed samples).

Launch: with RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT set (torchrun), the process is one rank;
otherwise it starts --world ranks of itself (a file store in a temporary directory) and waits.
"""

from __future__ import annotations

import argparse
import bisect
import contextlib
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_CORPUS = "/usr/share/common-licenses"
# The default candidate step-time curve t(B) = t0 (1 + B / B_half): the batch at which per-step
# overhead and per-sequence work take equal time, and a nominal t0 (refitted from measured steps).
STEP_TIME_HALF_BATCH = 96.0
STEP_TIME_T0_S = 0.05


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--world", type=int, default=2, help="data-parallel CPU processes (2-4)")
    p.add_argument("--steps", type=int, default=200, help="optimizer steps")
    p.add_argument("--seq", type=int, default=16, help="tokens (bytes) per sequence")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--width", type=int, default=16, help="model width (heads of 8)")
    p.add_argument("--min-batch", type=int, default=32, help="smallest global batch (sequences)")
    p.add_argument("--max-batch", type=int, default=256, help="largest global batch (sequences)")
    p.add_argument("--microbatches", type=int, default=8, help="micro-batches per rank and step")
    p.add_argument("--lr", type=float, default=1e-2, help="AdamW learning rate")
    p.add_argument("--gns-decay", type=float, default=0.98, help="noise-scale EMA decay per step")
    p.add_argument("--min-noise-steps", type=int, default=15, help="steps of norms before the estimate is used")
    p.add_argument("--initial-noise-scale", type=float, default=8, help="sequences, assumed until measured (early "
                   "in training the gradient is mostly signal: a small noise scale)")
    p.add_argument("--token-budget", type=float, default=0, help="tokens of progress to the target (0: 4x what "
                   "the steps consume at the smallest batch)")
    p.add_argument("--corpus", default=DEFAULT_CORPUS, help="directory of text files")
    p.add_argument("--step-times", choices=["model", "profile"], default="model",
                   help="candidate step times: the fixed overhead-bound curve, or a profile of this machine")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check-gns", action="store_true", help="also the brute-force noise scale from per-sample gradients")
    p.add_argument("--record", help="write a JSON record of the run here")
    p.add_argument("--timeout", type=float, default=600, help="launcher: kill the ranks after this many seconds")
    p.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    p.add_argument("--store", help=argparse.SUPPRESS)
    return p.parse_args(argv)


# ---------------------------------------------------------------------------------------------
# Launcher: start the ranks as child processes (in the launcher's process group, so that whoever
# kills the group ends them all); one failing, or the timeout, ends the others.


def launch(args) -> int:
    if not 1 <= args.world <= 16:
        print(f"--world: got {args.world} (allowed: 1 to 16)", file=sys.stderr)
        return 2
    env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"))
    with tempfile.TemporaryDirectory(prefix="tessera-gpt-") as tmp:
        store = os.path.join(tmp, "store")
        procs = [
            subprocess.Popen(
                [sys.executable, os.path.abspath(__file__), *sys.argv[1:], "--rank", str(r), "--store", store],
                env=env,
            )
            for r in range(args.world)
        ]
        deadline = time.monotonic() + args.timeout
        status = 0
        try:
            while any(p.poll() is None for p in procs):
                failed = [p for p in procs if p.returncode not in (None, 0)]
                if failed:
                    status = failed[0].returncode or 1
                    print(f"a rank exited {status}; stopping the others", file=sys.stderr)
                    break
                if time.monotonic() > deadline:
                    print(f"ranks still running after {args.timeout:.0f} s; stopping them", file=sys.stderr)
                    status = 124
                    break
                time.sleep(0.05)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        if status == 0:
            status = next((p.returncode for p in procs if p.returncode), 0)
        return status


# ---------------------------------------------------------------------------------------------
# Data: every file of the corpus as bytes, cut into sequences of seq + 1 bytes (input and target).


def load_corpus(directory: str) -> bytes:
    if not Path(directory).is_dir():
        raise SystemExit(f"--corpus: {directory} is not a directory")
    files = sorted({os.path.realpath(f) for f in Path(directory).iterdir() if f.is_file()})
    if not files:
        raise SystemExit(f"--corpus: no files in {directory}")
    return b"\n".join(Path(f).read_bytes() for f in files)


def make_samples(torch, corpus: bytes, seq: int):
    data = torch.tensor(list(corpus), dtype=torch.long)
    n = (len(data) - 1) // seq
    starts = torch.arange(n) * seq
    idx = starts[:, None] + torch.arange(seq + 1)[None, :]
    return data[idx]  # [n, seq + 1]


# ---------------------------------------------------------------------------------------------
# The model: GPT-2-style, small enough to train in a minute on a CPU core.


def build_model(torch, vocab: int, seq: int, width: int, layers: int):
    nn, F = torch.nn, torch.nn.functional
    heads = max(1, width // 8)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
            self.mask = torch.ones(seq, seq, dtype=torch.bool).tril()  # not a buffer: DDP would broadcast it

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (z.reshape(b, t, heads, d // heads).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) / math.sqrt(d // heads)
            att = att.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(dim=-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, width), nn.Embedding(seq, width)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(width)
            for m in self.modules():
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(m.weight, std=0.02)
                if isinstance(m, nn.Linear):
                    nn.init.zeros_(m.bias)

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
            for block in self.blocks:
                x = block(x)
            return F.linear(self.ln(x), self.tok.weight)  # tied output embedding

    return GPT()


# ---------------------------------------------------------------------------------------------
# Per-sample gradients (the brute-force noise scale of --check-gns).


class PerSampleSqNorms:
    """Squared norm of each sample's own gradient of its mean token loss."""

    def __init__(self, torch, model, vocab, loop=False):
        self.torch, self.model, self.vocab = torch, model, vocab
        self.per_sample, self.method = None, "loop"
        if loop:
            return
        try:
            import functorch

            fmodel, _ = functorch.make_functional(model)
            F = torch.nn.functional

            def loss_one(params, x, y):
                logits = fmodel(params, x.unsqueeze(0))
                return F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))

            self.per_sample = functorch.vmap(functorch.grad(loss_one), in_dims=(None, 0, 0))
            self.method = "functorch.vmap"
        except ImportError:  # no functorch: one backward pass per sample
            pass

    def __call__(self, x, y):
        torch = self.torch
        params = [p.detach() for p in self.model.parameters()]
        if self.per_sample is not None:
            grads = self.per_sample(tuple(params), x, y)
            return sum(g.double().pow(2).flatten(1).sum(1) for g in grads)
        from torch.nn.utils.stateless import functional_call

        # Copies of the parameters, so that the training hooks on the real ones see nothing.
        copies = {name: p.detach().clone().requires_grad_() for name, p in self.model.named_parameters()}
        out = []
        for i in range(x.shape[0]):
            logits = functional_call(self.model, copies, (x[i : i + 1],))
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, self.vocab), y[i].reshape(-1))
            gs = torch.autograd.grad(loss, list(copies.values()))
            out.append(sum(float(g.double().pow(2).sum()) for g in gs))
        return torch.tensor(out, dtype=torch.float64)


# ---------------------------------------------------------------------------------------------
# One rank.


def profile_step_times(torch, dist, model, samples, grid, world, microbatches, vocab):
    """Predicted step time of each grid batch on this machine: whole training steps (micro-batches
    under no_sync, the gradient all-reduce, the norm hooks, the optimizer step) of a throwaway copy
    of the model, timed at the smallest, a middle and the largest grid batch, linear in between;
    the slowest rank's times (every rank waits for it at the all-reduce)."""
    import copy

    from torch.nn.parallel import DistributedDataParallel as DDP

    from tessera.torch import GradNormHook

    F = torch.nn.functional
    clone = copy.deepcopy(model)
    ddp = DDP(clone)
    hook = GradNormHook(ddp)
    optimizer = torch.optim.AdamW(clone.parameters(), lr=0.0)
    points = sorted({grid[0], grid[len(grid) // 2], grid[-1]})
    times = []
    for batch in points:
        m = batch // (world * microbatches)
        x = samples[: m * microbatches].reshape(microbatches, m, -1)
        best = float("inf")
        for rep in range(5):  # the fastest of 4 (after a warm-up): other load on the machine only slows steps
            t0 = time.perf_counter()
            for k in range(microbatches):
                with ddp.no_sync() if k < microbatches - 1 else contextlib.nullcontext():
                    (F.cross_entropy(ddp(x[k][:, :-1]).reshape(-1, vocab), x[k][:, 1:].reshape(-1)) / microbatches).backward()
            hook.step_norms(m)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            if rep:  # the first is a warm-up
                best = min(best, time.perf_counter() - t0)
        times.append(best)
    measured = torch.tensor(times, dtype=torch.float64)
    dist.all_reduce(measured, op=dist.ReduceOp.MAX)
    times = measured.tolist()
    hook.remove()
    if len(points) == 1:
        return times, {"batches": points, "step_time_s": times}
    step = []
    for b in grid:
        k = min(bisect.bisect_right(points, b) - 1, len(points) - 2)
        b0, b1, t0, t1 = points[k], points[k + 1], times[k], times[k + 1]
        step.append(t0 + (t1 - t0) * (b - b0) / (b1 - b0))
    return step, {"batches": points, "step_time_s": times}


def run_rank(args) -> None:
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    import tessera
    from tessera.torch import ElasticBatchSampler, GradNormHook

    torch.set_num_threads(1)
    if args.rank is None:  # torchrun
        rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        dist.init_process_group("gloo", rank=rank, world_size=world)
    else:
        rank, world = args.rank, args.world
        dist.init_process_group("gloo", init_method=f"file://{args.store}", rank=rank, world_size=world)
    started = time.perf_counter()
    torch.manual_seed(args.seed)
    vocab, seq, mbs = 256, args.seq, args.microbatches

    corpus = load_corpus(args.corpus)
    held_out = len(corpus) // 20  # the last 5% of the bytes: a validation loss at the start and the end
    samples = make_samples(torch, corpus[:-held_out], seq)
    val = make_samples(torch, corpus[-held_out:], seq)
    n = samples.shape[0]

    grid = [b for b in tessera.batch_grid(args.min_batch, args.max_batch) if b % (world * mbs) == 0]
    if not grid or grid[0] != args.min_batch:
        raise SystemExit(f"--min-batch: {args.min_batch} is not a multiple of {world} ranks x {mbs} micro-batches")

    model = build_model(torch, vocab, seq, args.width, args.layers)
    ddp = DDP(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.0)
    sampler = ElasticBatchSampler(n, grid[0], num_replicas=world, rank=rank, microbatches=mbs, seed=args.seed)
    checker = PerSampleSqNorms(torch, model, vocab) if args.check_gns else None
    F = torch.nn.functional

    if args.step_times == "profile":
        step_time_s, profile = profile_step_times(torch, dist, model, samples, grid, world, mbs, vocab)
    else:
        step_time_s = [STEP_TIME_T0_S * (1.0 + b / STEP_TIME_HALF_BATCH) for b in grid]
        profile = {"batches": grid, "step_time_s": step_time_s, "model": "t0 (1 + B / B_half)"}
    hook = GradNormHook(ddp)  # after the profile: every backward pass from here on is a micro-batch
    budget = args.token_budget or 4.0 * args.steps * grid[0] * seq
    controller = None
    if rank == 0:
        controller = tessera.Controller.from_step_times(
            seq, grid, step_time_s, budget, dp=world, reference_batch=grid[0],
            initial_noise_scale=args.initial_noise_scale, min_noise_scale_steps=args.min_noise_steps,
            gns_ema_decay=args.gns_decay)
    first = torch.tensor([controller.global_batch if controller else 0], dtype=torch.long)
    dist.broadcast(first, src=0)  # the controller's start candidate
    sampler.set_global_batch(int(first))

    def val_loss():
        with torch.no_grad():
            x = val[:256]
            return float(F.cross_entropy(model(x[:, :-1]).reshape(-1, vocab), x[:, 1:].reshape(-1)))

    loss0 = val_loss()
    record_steps, consumed = [], []
    brute_sq = brute_tr = brute_w = 0.0  # the brute-force estimates' EMA (same decay as the controller's)
    for step in range(args.steps):
        batch = sampler.global_batch
        micro = batch // (world * mbs)
        t0 = time.perf_counter()
        parts = sampler.next_step()
        consumed.extend(i for part in parts for i in part)
        train_loss = 0.0
        for k, part in enumerate(parts):
            x = samples[part]
            with ddp.no_sync() if k < mbs - 1 else contextlib.nullcontext():
                loss = F.cross_entropy(ddp(x[:, :-1]).reshape(-1, vocab), x[:, 1:].reshape(-1)) / mbs
                loss.backward()
            train_loss += float(loss)
        norms = hook.step_norms(micro)
        check_s = 0.0
        brute = None
        if checker is not None:  # per-sample gradients at the same parameters, before the update
            c0 = time.perf_counter()
            s = sum(float(checker(samples[part][:, :-1], samples[part][:, 1:]).sum()) for part in parts)
            total = torch.tensor([s], dtype=torch.float64)
            dist.all_reduce(total)
            big, b = norms.global_sq_norm, float(batch)
            trace = (float(total) - b * big) / (b - 1.0)  # unbiased sample variance, summed over coordinates
            brute = {"sum_sample_sq_norm": float(total), "trace_covariance": trace, "gradient_sq_norm": big - trace / b}
            check_s = time.perf_counter() - c0
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        elapsed = time.perf_counter() - t0 - check_s

        new_batch = torch.tensor([batch], dtype=torch.long)
        entry = {"step": step, "global_batch": batch, "microbatch": micro, "step_time_s": elapsed,
                 "train_loss": train_loss, "microbatch_sq_norm": norms.microbatch_sq_norm,
                 "rank_sq_norm": norms.rank_sq_norm, "global_sq_norm": norms.global_sq_norm,
                 "microbatches": norms.microbatches}
        if controller is not None:
            controller.observe_gradients(*norms.small(), *norms.big())
            controller.observe_step(elapsed)
            decision = controller.decide()
            if decision.switch_now:
                controller.switch_to(decision.candidate)
            new_batch[0] = controller.global_batch
            gns = controller.noise_estimator
            entry.update(noise_scale=decision.noise_scale, measured_noise_scale=gns.noise_scale if gns.has_noise_scale else None,
                         switched=decision.switch_now)
            if brute is not None:
                d = args.gns_decay
                brute_sq, brute_tr, brute_w = d * brute_sq + (1 - d) * brute["gradient_sq_norm"], \
                    d * brute_tr + (1 - d) * brute["trace_covariance"], d * brute_w + (1 - d)
                entry["brute_force"] = brute
                entry["brute_force_noise_scale"] = brute_tr / brute_sq if brute_sq > 0 else None
            record_steps.append(entry)
            if step % 10 == 0 or decision.switch_now:
                print(f"step {step:3d}  batch {batch:4d}  loss {train_loss:.3f}  step {elapsed * 1e3:6.1f} ms  "
                      f"B_noise {entry['noise_scale']:7.1f}" + ("" if brute is None else
                      f" (per-sample {entry['brute_force_noise_scale'] or float('nan'):7.1f})")
                      + (f"  -> batch {controller.global_batch}" if decision.switch_now else ""), flush=True)
        dist.broadcast(new_batch, src=0)
        sampler.set_global_batch(int(new_batch))

    loss1 = val_loss()
    gathered = [None] * world
    dist.all_gather_object(gathered, consumed)
    if rank == 0:
        schedule = controller.megatron_schedule()
        gns = controller.noise_estimator
        result = {
            "world": world, "steps": args.steps, "seq": seq, "microbatches_per_rank": mbs, "grid": grid,
            "dataset_size": n, "seed": args.seed, "parameters": sum(p.numel() for p in model.parameters()),
            "profile": profile, "predicted_step_time_s": step_time_s, "token_budget": budget,
            "val_loss_start": loss0, "val_loss_end": loss1,
            "schedule_tokens": schedule, "schedule_samples": controller.megatron_schedule("samples"),
            "batches": [e["global_batch"] for e in record_steps],
            "controller_noise_scale": gns.noise_scale if gns.has_noise_scale else None,
            "controller_gradient_sq_norm": gns.gradient_sq_norm, "controller_trace_covariance": gns.trace_covariance,
            "gns_ema_decay": args.gns_decay, "per_sample_method": None if checker is None else checker.method,
            "consumed": gathered, "steps_record": record_steps,
        }
        if checker is not None:
            result.update(brute_force_noise_scale=brute_tr / brute_sq, brute_force_gradient_sq_norm=brute_sq / brute_w,
                          brute_force_trace_covariance=brute_tr / brute_w)
        result["elapsed_s"] = time.perf_counter() - started
        print(f"validation loss {loss0:.3f} -> {loss1:.3f} over {args.steps} steps, "
              f"{controller.consumed_tokens:.0f} tokens, {result['elapsed_s']:.1f} s")
        line = f"noise scale (EMA over {args.steps} steps): {result['controller_noise_scale']:.1f} sequences"
        if checker is not None:
            ratio = result["controller_noise_scale"] / result["brute_force_noise_scale"]
            line += f"; per-sample brute force {result['brute_force_noise_scale']:.1f} (ratio {ratio:.3f})"
        print(line)
        print(f"--step-batch-size-schedule \"{schedule}\"   (thresholds in consumed tokens)")
        print(f"--step-batch-size-schedule \"{result['schedule_samples']}\"   (thresholds in consumed samples)")
        if args.record:
            Path(args.record).write_text(json.dumps(result))
    # End without destructors once every rank has passed the barrier: Debian's torch 1.13 can
    # deadlock destroying a gloo group (~ProcessGroupGloo joins its worker threads holding the GIL
    # while a worker frees its last collective's tensors and waits for the GIL; ~1 run in 20).
    dist.barrier()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.rank is not None or "RANK" in os.environ:
        run_rank(args)
        return 0
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())
