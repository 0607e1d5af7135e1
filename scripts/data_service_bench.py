#!/usr/bin/python3
"""The data service against torch's in-process DataLoader, on the same epoch plan (issue 35).

Writes a synthetic image + text set (`tessera data-serve synth`), plans one epoch for one trainer
rank, then trains a simulated step (a sleep of --step-ms per micro-batch) from:
  service   a coordinator and W `tessera data-serve worker` processes, read with
            tessera.data.ServiceReader;
  loader    torch.utils.data.DataLoader(num_workers=W) over the plan's micro-batches, each built
            in the loader's worker processes by the same C++ builder (tessera._tessera.MicroBatchBuilder).
For each it prints the epoch's wall time, the trainer's stall (time waiting for data, beyond the
steps), samples per second, and samples per second per worker core (samples / the workers' CPU
seconds, from the kernel's accounting of each worker process).

Usage: scripts/data_service_bench.py [--samples N] [--workers 1,2] [--step-ms MS] [--binary PATH]
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "build" / "python"))

import tessera.data as td  # noqa: E402

PLAN = ["--ranks", "1", "--microbatches", "4", "--max-tokens", "4096", "--seed", "0"]


def tessera(binary, *args):
    r = subprocess.run([binary, *args], capture_output=True, text=True, check=True)
    return r.stdout


def cpu_s(usage):
    return usage.ru_utime + usage.ru_stime


def run_service(binary, folder, workers, step_s):
    coordinator = subprocess.Popen([binary, "data-serve", "coordinator", "--index", str(folder / "index.jsonl"), *PLAN,
                                    "--tokenizer", str(folder / "tokenizer.model"), "--prefetch", "8"],
                                   stdout=subprocess.PIPE, text=True)
    address = re.match(r"listening on (\S+)", coordinator.stdout.readline()).group(1)
    procs = [subprocess.Popen([binary, "data-serve", "worker", "--coordinator", address, "--name", f"w{i}"],
                              stdout=subprocess.DEVNULL) for i in range(workers)]
    reader = td.ServiceReader(address, rank=0)
    started = time.monotonic()
    samples = 0
    for batch in reader:
        samples += len(batch.sample_ids)
        time.sleep(step_s)
    wall = time.monotonic() - started
    worker_cpu = sum(cpu_s(os.wait4(p.pid, 0)[2]) for p in procs)
    coordinator.wait()
    return wall, reader.stall_s, samples, worker_cpu


def run_loader(folder, plan, workers, step_s):
    import torch.utils.data
    import tessera._tessera as native

    class PlannedMicroBatches(torch.utils.data.Dataset):
        def __init__(self):
            self.builder = None

        def __len__(self):
            return len(plan)

        def __getitem__(self, i):
            if self.builder is None:  # one per loader worker process
                self.builder = native.MicroBatchBuilder(str(folder / "index.jsonl"), str(folder / "tokenizer.model"))
            return self.builder.build(plan[i])

    before = cpu_s(resource.getrusage(resource.RUSAGE_CHILDREN))
    loader = torch.utils.data.DataLoader(PlannedMicroBatches(), batch_size=None, num_workers=workers,
                                         prefetch_factor=2, collate_fn=lambda x: x)
    started = time.monotonic()
    stall, samples = 0.0, 0
    it = iter(loader)
    while True:
        waited = time.monotonic()
        batch = next(it, None)
        stall += time.monotonic() - waited
        if batch is None:
            break
        samples += len(batch["sample_ids"])
        time.sleep(step_s)
    wall = time.monotonic() - started
    del it, loader  # the loader's workers exit and are reaped
    worker_cpu = cpu_s(resource.getrusage(resource.RUSAGE_CHILDREN)) - before
    return wall, stall, samples, worker_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--step-ms", type=float, default=20.0)
    parser.add_argument("--binary", default=str(ROOT / "build" / "bin" / "tessera"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "set"
        tessera(args.binary, "data-serve", "synth", "--out", str(folder), "--samples", str(args.samples))
        plan = json.loads(tessera(args.binary, "data-serve", "plan", "--index", str(folder / "index.jsonl"), *PLAN,
                                  "--json"))["samples_per_microbatch"][0]
        print(f"{args.samples} samples (one JPEG/PNG image of 160-960 px and one text each), {len(plan)} micro-batches "
              f"of at most 4096 tokens, images to 336 x 336 in 14 px patches; a {args.step_ms:g} ms step per micro-batch")
        print(f"{'source':<8} {'workers':>7} {'wall s':>7} {'stall s':>8} {'samples/s':>10} {'samples/s/core':>15}")
        for workers in [int(w) for w in args.workers.split(",")]:
            for name, run in (("service", lambda: run_service(args.binary, folder, workers, args.step_ms / 1000)),
                              ("loader", lambda: run_loader(folder, plan, workers, args.step_ms / 1000))):
                wall, stall, samples, cpu = run()
                print(f"{name:<8} {workers:>7} {wall:>7.2f} {stall:>8.2f} {samples / wall:>10.1f} {samples / cpu:>15.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
