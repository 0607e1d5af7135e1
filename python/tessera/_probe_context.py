"""Where a `tessera probe` process runs (device, backend, its rank among the torchrun ranks) and how
it times things: warm-ups, then the mean of a number of calls chosen so that a measurement lasts
about `target_s`, with the device synchronised before and after the timed calls."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class Repeats:
    """How often a measured call runs: `warmups` untimed calls, then between `min_iters` and
    `max_iters` timed calls, as many as fit in `target_s` at the first call's duration, `rounds`
    times: the fastest round's mean is the measurement (a preempted round on a busy CPU is slower,
    never faster, than the call itself)."""

    warmups: int
    min_iters: int
    max_iters: int
    target_s: float
    rounds: int = 1

    def iterations_for(self, one_call_s: float) -> int:
        wanted = int(self.target_s / max(one_call_s, 1e-9))
        return max(self.min_iters, min(self.max_iters, wanted))


# --quick is for tests: one warm-up and a few milliseconds per measurement. A GPU gets 0.1 s per
# measurement, enough for thousands of small kernels and a handful of 1 GiB collectives.
# A CPU shares its cores with whatever else runs (a test suite on 2 cores, 2 ranks): 3 rounds.
QUICK_REPEATS = Repeats(warmups=1, min_iters=2, max_iters=10, target_s=0.003, rounds=3)
CPU_REPEATS = Repeats(warmups=2, min_iters=3, max_iters=50, target_s=0.03, rounds=3)
CUDA_REPEATS = Repeats(warmups=3, min_iters=5, max_iters=2000, target_s=0.1)


@dataclass
class Run:
    """This process: its device and, under torchrun, its place among the ranks. Nodes are filled
    rank-major, as torchrun numbers them: node = rank // local_world_size."""

    device: torch.device
    backend: str
    quick: bool
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    local_world_size: int = 1

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def nodes(self) -> int:
        return self.world_size // self.local_world_size

    @property
    def node(self) -> int:
        return self.rank // self.local_world_size

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def repeats(self) -> Repeats:
        if self.quick:
            return QUICK_REPEATS
        return CUDA_REPEATS if self.is_cuda else CPU_REPEATS

    @property
    def small(self) -> bool:
        """Tiny shapes: on a CPU, and with --quick anywhere."""
        return self.quick or not self.is_cuda

    def synchronize(self) -> None:
        if self.is_cuda:
            torch.cuda.synchronize(self.device)

    def max_over_ranks(self, value: float) -> float:
        if not self.distributed:
            return value
        t = torch.tensor([float(value)], dtype=torch.float64, device=self.device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return float(t.item())

    def min_over_ranks(self, value: float) -> float:
        return -self.max_over_ranks(-value)

    def all_ranks_agree(self, ok: bool) -> bool:
        """True where every rank says True (a feature a rank found missing is skipped by all)."""
        return self.min_over_ranks(1.0 if ok else 0.0) > 0.5


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def start_run(device_kind: str, quick: bool) -> Run:
    """The Run of this process; joins the torchrun process group when WORLD_SIZE > 1 (RANK,
    LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT from torchrun's environment)."""
    world_size = _env_int("WORLD_SIZE", 1)
    rank = _env_int("RANK", 0)
    local_rank = _env_int("LOCAL_RANK", rank if world_size > 1 else 0)
    local_world_size = _env_int("LOCAL_WORLD_SIZE", world_size)
    if world_size % local_world_size != 0:
        raise SystemExit(f"WORLD_SIZE {world_size} is not a multiple of LOCAL_WORLD_SIZE {local_world_size}")
    if device_kind == "cuda":
        torch.cuda.set_device(local_rank)
        device, backend = torch.device("cuda", local_rank), "nccl"
    else:
        device, backend = torch.device("cpu"), "gloo"
    run = Run(device, backend, quick, rank, world_size, local_rank, local_world_size)
    if run.distributed:
        dist.init_process_group(backend, rank=rank, world_size=world_size)
    return run


def finish_run(run: Run) -> None:
    if run.distributed and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def mean_time_s(call, run: Run, agree: bool = False) -> float:
    """Mean seconds per call after warm-ups, the device synchronised around the timed calls. With
    `agree` (collectives) every rank runs the same number of calls: the slowest first call sets it."""
    repeats = run.repeats
    for _ in range(repeats.warmups):
        call()
    run.synchronize()
    start = time.perf_counter()
    call()
    run.synchronize()
    one_call_s = time.perf_counter() - start
    if agree:
        one_call_s = run.max_over_ranks(one_call_s)
    iters = repeats.iterations_for(one_call_s)
    return min(timed_round_s(call, run, iters) for _ in range(repeats.rounds))


def timed_round_s(call, run: Run, iters: int) -> float:
    """Mean seconds per call over `iters` calls, the device synchronised around them."""
    run.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        call()
    run.synchronize()
    return (time.perf_counter() - start) / iters


def host_time_s(call, run: Run) -> float:
    """Mean host seconds per call, not waiting for the device inside the timed loop (the device is
    synchronised before it starts and after it ends, outside the timing)."""
    repeats = run.repeats
    for _ in range(repeats.warmups):
        call()
    run.synchronize()
    iters = max(repeats.min_iters, min(repeats.max_iters, 200))
    start = time.perf_counter()
    for _ in range(iters):
        call()
    elapsed_s = time.perf_counter() - start
    run.synchronize()
    return elapsed_s / iters


def is_out_of_memory(error: BaseException) -> bool:
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    return (oom_type is not None and isinstance(error, oom_type)) or "out of memory" in str(error)


def rows_unless_out_of_memory(measure, run: Run, table, what: str):
    """measure(), or [] and a comment line in the table where the GPU ran out of memory."""
    try:
        return measure()
    except RuntimeError as error:
        if not (run.is_cuda and is_out_of_memory(error)):
            raise
    table.comments.append(f"{what}: skipped, out of memory")
    torch.cuda.empty_cache()
    return []
