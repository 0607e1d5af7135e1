"""One rank of the GradNormHook test (run by test_grad_norm_hook.py as
`python grad_norm_worker.py RANK WORLD STORE_FILE RESULT_FILE`). Every rank generates every rank's
data from one seed, so each can compute the exact norms the hook should report from a plain copy of
the model (float64, no DDP): per micro-batch, per rank and after the all-reduce. Three cases:
data parallel over the world; the same with one parameter declared replicated on 2 model-parallel
ranks (counted at half weight); model parallel over the world (each rank a different shard, dp=1),
where the shares are summed. Rank 0 writes the largest relative error of each case."""

import copy
import json
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from process_group_exit import exit_after_barrier
from tessera.torch import GradNormHook

MICRO = 4  # micro-batches per rank and step


def net(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 3)).double()


def data(seed, ranks, m):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(ranks, MICRO, m, 5, generator=g, dtype=torch.float64), torch.randn(
        ranks, MICRO, m, 3, generator=g, dtype=torch.float64)


def grad_of(model, x, y, weights):
    """The gradient of the mean loss over (x, y) as one flat vector, each parameter scaled by sqrt(weight)."""
    model.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    return torch.cat([p.grad.flatten() * weights.get(name, 1.0) ** 0.5 for name, p in model.named_parameters()])


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


def data_parallel_case(rank, world, replicated):
    model = net(0)
    ref = copy.deepcopy(model)
    weights = {"0.bias": 0.5} if replicated else {}
    replicas = {model[0].bias: 2} if replicated else None
    ddp = DDP(model)
    hook = GradNormHook(ddp, replicas=replicas)
    err = 0.0
    for step, m in enumerate([3, 5]):  # the micro-batch size changes between steps
        x, y = data(10 + step, world, m)
        norms = hook_step(ddp, hook, x[rank], y[rank])
        flat = {(r, k): grad_of(ref, x[r][k], y[r][k], weights) for r in range(world) for k in range(MICRO)}
        small = sum(float(g.pow(2).sum()) for g in flat.values()) / len(flat)
        per_rank = [sum(flat[(r, k)] for k in range(MICRO)) / MICRO for r in range(world)]
        rank_sq = sum(float(g.pow(2).sum()) for g in per_rank) / world
        big = float((sum(per_rank) / world).pow(2).sum())
        assert norms.microbatches == world * MICRO and norms.global_batch == world * MICRO * m
        assert norms.microbatch_size == m and norms.rank_batch == MICRO * m
        err = max(err, rel(norms.microbatch_sq_norm, small), rel(norms.rank_sq_norm, rank_sq),
                  rel(norms.global_sq_norm, big))
    hook.remove()
    return err


def hook_step(ddp, hook, x, y):
    for k in range(MICRO):
        with ddp.no_sync() if k < MICRO - 1 else _Nothing():
            (torch.nn.functional.mse_loss(ddp(x[k]), y[k]) / MICRO).backward()
    norms = hook.step_norms(x.shape[1])
    ddp.module.zero_grad()
    return norms


def model_parallel_case(rank, world):
    # Each rank holds a different shard (its own network); data parallel over a group of one.
    groups = [dist.new_group([r]) for r in range(world)]
    shards = [net(100 + r) for r in range(world)]
    refs = copy.deepcopy(shards)
    ddp = DDP(shards[rank], process_group=groups[rank])
    hook = GradNormHook(ddp, process_group=groups[rank], model_parallel_group=dist.group.WORLD)
    x, y = data(20, 1, 2)
    norms = hook_step(ddp, hook, x[0], y[0])
    per_mb = [[grad_of(refs[r], x[0][k], y[0][k], {}) for k in range(MICRO)] for r in range(world)]
    small = sum(float(g.pow(2).sum()) for r in range(world) for g in per_mb[r]) / MICRO
    big = sum(float((sum(per_mb[r]) / MICRO).pow(2).sum()) for r in range(world))
    hook.remove()
    return max(rel(norms.microbatch_sq_norm, small), rel(norms.global_sq_norm, big), rel(norms.rank_sq_norm, big))


def main() -> None:
    rank, world, store, result = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    report = {
        "data_parallel": data_parallel_case(rank, world, replicated=False),
        "replicated_parameter": data_parallel_case(rank, world, replicated=True),
        "model_parallel": model_parallel_case(rank, world),
    }
    errors = [None] * world
    dist.all_gather_object(errors, report)
    if rank == 0:
        with open(result, "w") as f:
            json.dump({k: max(e[k] for e in errors) for k in report}, f)
    exit_after_barrier()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
