"""Balanced sampling for PyTorch data-parallel training.

``BalancedDistributedSampler`` is a batch sampler: ``DataLoader(dataset, batch_sampler=sampler)``
yields, on each data-parallel rank, that rank's micro-batches in order, the samples of each step
placed on ranks x micro-batches by ``tessera.Balancer`` so that the slowest micro-batch is as
fast as it can be. Every rank computes the same plan from the shared seed, the epoch and the
sample sizes, so the ranks agree without communicating. Over an epoch every sample is yielded
exactly once on exactly one rank.

torch itself is imported lazily (only to read the process group's rank and size).

Also here: ``GradNormHook`` (squared gradient norms per micro-batch, before and after DDP's
all-reduce, for ``tessera.Controller``; tessera/grad_norm_hook.py) and ``ElasticBatchSampler``
(a global batch size that may change at any step, no sample lost or repeated;
tessera/elastic_sampler.py).
"""

from __future__ import annotations

from typing import Iterator, List, Optional, Sequence

from . import _tessera
from .elastic_sampler import ElasticBatchSampler  # noqa: F401  (re-export)
from .grad_norm_hook import GradNormHook, StepNorms  # noqa: F401  (re-export; torch imported when built)

__all__ = ["BalancedDistributedSampler", "ElasticBatchSampler", "GradNormHook", "StepNorms"]

# A stream run draws at most this many steps beyond the token-budget estimate: outliers wait up to
# 16 steps in their queue (balance/outlier_queues.h), carried samples one step each.
_STREAM_SLACK_STEPS = 64


def _process_group() -> tuple[int, int]:
    import torch.distributed as dist  # lazy: only when rank or size is not given

    if not (dist.is_available() and dist.is_initialized()):
        raise ValueError("num_replicas and rank: not given and no torch.distributed process group is initialized")
    return dist.get_world_size(), dist.get_rank()


class BalancedDistributedSampler:
    """Yields this rank's micro-batches (lists of dataset indices), step after step.

    Args:
        text_tokens: per sample, its text token count (or a list of counts, one per packed document).
        batch_size: samples per step over all ranks and micro-batches (the global batch); the last
            step also takes the remainder. ``None`` with ``max_tokens``: each step instead fills a
            budget of ``num_replicas * microbatches * max_tokens`` tokens (token-budget packing,
            where ``method="wlb"`` holds very long documents back in outlier queues).
        microbatches: micro-batches per rank and step.
        num_replicas, rank: the data-parallel group; default: the initialized process group.
        seed: shared by all ranks; the order of epoch ``e`` is a permutation seeded by ``seed + e``.
        shuffle: permute the dataset every epoch (else arrival order).
        method: ``lpt`` (default), ``kk``, ``fixed-greedy``, ``none`` or ``wlb``.
        equal_count: every micro-batch of a step gets the same number of samples (within one), so
            no rank ever gets an empty micro-batch when a step has at least ranks x micro-batches
            samples. Default: True with ``batch_size``.
        max_tokens: token cap of one micro-batch; samples that do not fit go to the next step.
        image_tokens, generated_tokens: per sample, for multimodal data (see ``tessera.Balancer``).
        model, gpu: what the costs are predicted for.

    In token-budget mode a step may leave a micro-batch empty (fewer samples than slots, or long
    ones held back); every rank still yields the same number of micro-batches, so give the
    DataLoader a ``collate_fn`` that accepts an empty list and skip empty batches in the loop.
    """

    def __init__(
        self,
        text_tokens: Sequence,
        batch_size: Optional[int] = None,
        *,
        microbatches: int = 1,
        num_replicas: Optional[int] = None,
        rank: Optional[int] = None,
        seed: int = 0,
        shuffle: bool = True,
        method: str = "lpt",
        equal_count: Optional[bool] = None,
        max_tokens: Optional[int] = None,
        image_tokens: Optional[Sequence] = None,
        generated_tokens: Optional[Sequence] = None,
        model: str = "llama3-8b",
        gpu: str = "h100-sxm-80gb",
    ) -> None:
        if num_replicas is None or rank is None:
            world, me = _process_group()
            num_replicas = world if num_replicas is None else num_replicas
            rank = me if rank is None else rank
        if not 0 <= rank < num_replicas:
            raise ValueError(f"rank: got {rank} (allowed: 0 to {num_replicas - 1})")
        if batch_size is None and not max_tokens:
            raise ValueError("batch_size: missing (allowed: a sample count, or None with max_tokens)")
        if batch_size is not None and method == "wlb":
            raise ValueError("method: wlb packs token budgets (allowed with batch_size: none, fixed-greedy, lpt, kk)")
        if batch_size is not None and batch_size < num_replicas * microbatches:
            raise ValueError(
                f"batch_size: {batch_size} samples cannot fill {num_replicas} ranks x {microbatches} micro-batches "
                f"(allowed: at least {num_replicas * microbatches})"
            )
        if seed < 0:
            raise ValueError(f"seed: got {seed} (allowed: an integer >= 0)")
        self.num_replicas = num_replicas
        self.rank = rank
        self.microbatches = microbatches
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.epoch = 0
        self._text = list(text_tokens)
        self._images = None if image_tokens is None else list(image_tokens)
        self._generated = None if generated_tokens is None else list(generated_tokens)
        if equal_count is None:
            equal_count = batch_size is not None
        self._balancer = _tessera.Balancer(
            dp=num_replicas,
            microbatches=microbatches,
            max_tokens=max_tokens or 0,
            method=method,
            model=model,
            gpu=gpu,
            equal_count=equal_count,
        )
        self._plan: Optional[List[List[List[int]]]] = None  # [step][microbatch] -> this rank's indices
        self._plan_epoch = -1

    def set_epoch(self, epoch: int) -> None:
        """Like DistributedSampler.set_epoch: a new permutation for every epoch."""
        self.epoch = epoch

    def __len__(self) -> int:
        return sum(len(step) for step in self._epoch_plan())

    def __iter__(self) -> Iterator[List[int]]:
        for step in self._epoch_plan():
            yield from step

    def steps(self) -> List[List[List[int]]]:
        """This rank's plan for the current epoch: [step][micro-batch] -> dataset indices."""
        return self._epoch_plan()

    # -- the plan, identical on every rank ------------------------------------------------------

    def _order(self) -> List[int]:
        n = len(self._text)
        if not self.shuffle:
            return list(range(n))
        return _tessera.permutation(n, self.seed + self.epoch)

    def _subset(self, indices: Sequence[int]) -> dict:
        args = {"text_tokens": [self._text[i] for i in indices]}
        if self._images is not None:
            args["image_tokens"] = [self._images[i] for i in indices]
        if self._generated is not None:
            args["generated_tokens"] = [self._generated[i] for i in indices]
        return args

    def _epoch_plan(self) -> List[List[List[int]]]:
        if self._plan is None or self._plan_epoch != self.epoch:
            order = self._order()
            plan = self._budget_plan(order) if self.batch_size is None else self._batch_plan(order)
            self._plan, self._plan_epoch = plan, self.epoch
        return self._plan

    def _mine(self, step, positions: Sequence[int]) -> List[List[int]]:
        return [[positions[k] for k in mb] for mb in step.rank_microbatches(self.rank)]

    def _batch_plan(self, order: List[int]) -> List[List[List[int]]]:
        """Fixed samples per step; what a token cap leaves out goes first in the next step."""
        size = self.batch_size
        steps = max(1, len(order) // size)
        chunks = [order[k * size : (k + 1) * size] for k in range(steps - 1)] + [order[(steps - 1) * size :]]
        plan, carried = [], []
        for k in range(steps + len(order)):  # each step places at least one sample, or raises
            if k >= steps and not carried:
                break
            positions = carried + (chunks[k] if k < steps else [])
            step = self._balancer.balance(**self._subset(positions))
            if positions and len(step.carried) == len(positions):
                raise ValueError("max_tokens: no sample of a step fits in a micro-batch")
            carried = [positions[i] for i in step.carried]
            plan.append(self._mine(step, positions))
        return plan

    def _budget_plan(self, order: List[int]) -> List[List[List[int]]]:
        """Token-budget steps over the whole epoch (balance/stream_balancer.h), until all are placed."""
        tokens = sum(_tokens(self._text[i]) for i in order) + sum(
            sum(self._images[i]) for i in order if self._images is not None
        )
        budget = self.num_replicas * self.microbatches * self._balancer.max_tokens
        steps = 2 * (tokens // budget + 1) + _STREAM_SLACK_STEPS
        stream = self._balancer.stream(**self._subset(order), steps=steps)
        if stream.n_carried or stream.n_in != len(order):
            raise ValueError(f"max_tokens: {stream.n_carried} samples still waiting after {steps} steps")
        plan = [self._mine(step, order) for step in stream.steps]
        while plan and not any(stream.steps[len(plan) - 1].slots):  # trailing steps empty on every rank
            plan.pop()
        return plan


def _tokens(text) -> int:
    return sum(text) if isinstance(text, (list, tuple)) else int(text)
