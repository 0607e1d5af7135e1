"""One trainer rank of the data-service loopback test (test_data_service.py), kept alive across
trials: `python data_service_rank.py RANK WORLD STORE_FILE`, a torch.distributed (gloo) rank. For
each line `{"coordinator": ADDR, "out": FILE}` on stdin it trains one epoch from the coordinator
with tessera.data.ServiceDataset in a DataLoader, gathers every rank's micro-batches over gloo,
and rank 0 writes them to FILE ({"ranks": [[sample ids of each micro-batch], ...]}); then it
prints "trial done". A line "quit" ends it after a barrier."""

import json
import os
import sys

import torch
import torch.distributed as dist

import tessera.data as td
from process_group_exit import exit_after_barrier


def one_epoch(coordinator: str, rank: int, world: int) -> list:
    dataset = td.ServiceDataset(coordinator, rank=rank, wait_s=0.5, timeout_s=60.0)
    loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=0)
    mine = [batch["sample_ids"].tolist() for batch in loader]
    gathered = [None] * world
    dist.all_gather_object(gathered, mine)
    return gathered


def main() -> None:
    rank, world, store = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world)
    for line in sys.stdin:
        if line.strip() == "quit":
            break
        trial = json.loads(line)
        gathered = one_epoch(trial["coordinator"], rank, world)
        if rank == 0:
            with open(trial["out"], "w") as f:
                json.dump({"ranks": gathered}, f)
        print("trial done", flush=True)
    exit_after_barrier()


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
