"""One rank of the torch.distributed sampler test (run by test_torch_distributed.py as
`python distributed_worker.py RANK WORLD STORE_FILE RESULT_FILE`): iterate one epoch of a
DataLoader over BalancedDistributedSampler, gather every rank's indices, and on rank 0 write
whether the union is exactly the dataset with no index twice."""

import json
import os
import random
import sys

import torch
import torch.distributed as dist

from process_group_exit import exit_after_barrier
from tessera.torch import BalancedDistributedSampler

N = 2000


def main() -> None:
    rank, world, store, result = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    sizes = [int(random.Random(11).lognormvariate(7.5, 1.0)) + 1 for _ in range(N)]
    report = {}
    for name, kwargs in {
        "batch": dict(batch_size=128, microbatches=2, method="lpt"),
        "token_budget": dict(batch_size=None, microbatches=2, max_tokens=40000, method="wlb"),
    }.items():
        sampler = BalancedDistributedSampler(sizes, seed=5, **kwargs)  # rank and size from the group
        sampler.set_epoch(1)
        loader = torch.utils.data.DataLoader(torch.arange(N), batch_sampler=sampler)
        mine = [i for batch in loader for i in batch.tolist()]
        gathered = [None] * world
        dist.all_gather_object(gathered, {"indices": mine, "microbatches": len(sampler)})
        every = [i for g in gathered for i in g["indices"]]
        report[name] = {
            "union_is_dataset": sorted(every) == list(range(N)),
            "no_duplicates": len(every) == len(set(every)),
            "same_microbatch_count": len({g["microbatches"] for g in gathered}) == 1,
            "per_rank": [len(g["indices"]) for g in gathered],
        }
    if rank == 0:
        with open(result, "w") as f:
            json.dump(report, f)
    exit_after_barrier()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
