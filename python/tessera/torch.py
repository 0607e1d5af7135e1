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

from . import _arguments, _tessera
from ._process_group import world_and_rank
from .elastic_sampler import ElasticBatchSampler  # noqa: F401  (re-export)
from .grad_norm_hook import GradNormHook, StepNorms  # noqa: F401  (re-export; torch imported when built)

__all__ = ["BalancedDistributedSampler", "ElasticBatchSampler", "GradNormHook", "StepNorms"]

# A stream run lasts this many steps beyond twice the token-budget estimate: outliers wait up to 16
# steps in their queue (balance/outlier_queues.h), carried samples one step each. What is left
# after it goes through the stream again, and the end of the epoch flushes the rest.
_STREAM_SLACK_STEPS = 64


class BalancedDistributedSampler:
    """Yields this rank's micro-batches (lists of dataset indices), step after step.

    Args:
        text_tokens: per sample, its text token count (or a list of counts, one per packed document).
        batch_size: samples per step over all ranks and micro-batches (the global batch); the last
            step also takes the remainder ``r = len(dataset) % batch_size`` (no step smaller than
            the batch, no empty micro-batch), so its micro-batches hold up to
            ``ceil((batch_size + r) / (num_replicas * microbatches))`` samples where the others hold
            ``ceil(batch_size / (num_replicas * microbatches))``: size padded buffers for the last
            step, or give a dataset length that ``batch_size`` divides. ``None`` with ``max_tokens``: each step instead fills a
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

    Every argument is checked here (and the epoch in ``set_epoch``): a wrong kind raises
    ``tessera.ArgumentTypeError`` (a ``TypeError``; ``bool`` is not an integer, numpy integers
    are), a bad value ``tessera.TesseraError`` (a ``ValueError``), one line naming the argument.
    An empty dataset yields no step.

    The end of an epoch flushes every queue: what is still carried or waiting as an outlier when
    the samples run out is placed in final steps (LPT under the cap), so every sample is yielded
    exactly once per epoch; steps that would be empty on every rank are left out. In token-budget
    mode a step may still leave a micro-batch empty (fewer samples than slots, or long ones held
    back), and so may a final step with batch_size when the cap carried samples past the last
    batch; every rank still yields the same number of micro-batches, so give the DataLoader a
    ``collate_fn`` that accepts an empty list and skip empty batches in the loop.
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
        num_replicas, rank = _group("num_replicas", num_replicas, "rank", rank)
        microbatches = _arguments.integer("microbatches", microbatches, 1, _arguments.MAX_SLOTS)
        if num_replicas * microbatches > _arguments.MAX_SLOTS:
            raise _arguments.TesseraError(
                f"num_replicas: {num_replicas} ranks x {microbatches} micro-batches is too many slots "
                f"(allowed: num_replicas x microbatches <= {_arguments.MAX_SLOTS})"
            )
        batch_size = _arguments.optional_integer("batch_size", batch_size, num_replicas * microbatches)
        max_tokens = _arguments.optional_integer("max_tokens", max_tokens, 1, _arguments.MAX_COUNT)
        seed = _arguments.integer("seed", seed, 0, _arguments.MAX_SEED)
        shuffle = _arguments.boolean("shuffle", shuffle)
        method = _arguments.choice("method", method, _METHODS)
        equal_count = _arguments.optional_boolean("equal_count", equal_count)
        model = _arguments.text("model", model, "a zoo name or a model JSON / config.json path")
        gpu = _arguments.text("gpu", gpu, "a GPU key (tessera gpus)")
        if batch_size is None and max_tokens is None:
            raise _arguments.TesseraError("batch_size: missing (allowed: a sample count, or None with max_tokens)")
        if batch_size is not None and method == "wlb":
            raise _arguments.TesseraError(
                "method: wlb packs token budgets (allowed with batch_size: none, fixed-greedy, lpt, kk)"
            )
        text_tokens = _arguments.sequence("text_tokens", text_tokens, what="per sample a token count or a list of counts")
        n = len(text_tokens)
        image_tokens = _arguments.optional_sequence("image_tokens", image_tokens, n, "per sample a list of image token counts")
        generated_tokens = _arguments.optional_sequence("generated_tokens", generated_tokens, n, "per sample a token count")
        self.num_replicas = num_replicas
        self.rank = rank
        self.microbatches = microbatches
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle = shuffle
        self.epoch = 0
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
        # Every sample is converted and checked here, once (errors name text_tokens[i], ...); the
        # steps are then balanced from these costs by index.
        self._costs, self._tokens = self._balancer.costs_and_tokens(text_tokens, image_tokens, generated_tokens)
        if max_tokens is not None:
            _check_fits("max_tokens", self._tokens, max_tokens)
        self._plan: Optional[List[List[List[int]]]] = None  # [step][microbatch] -> this rank's indices
        self._plan_epoch = -1

    def set_epoch(self, epoch: int) -> None:
        """Like DistributedSampler.set_epoch: a new permutation for every epoch."""
        self.epoch = _arguments.integer("epoch", epoch, 0, _arguments.MAX_EPOCH)

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
        n = len(self._costs)
        if not self.shuffle:
            return list(range(n))
        return _tessera.permutation(n, self.seed + self.epoch)

    def _epoch_plan(self) -> List[List[List[int]]]:
        if self._plan is None or self._plan_epoch != self.epoch:
            order = self._order()
            if not order:  # an empty dataset: no step at all
                plan = []
            elif self.batch_size is None:
                plan = self._budget_plan(order)
            else:
                plan = self._batch_plan(order)
            self._plan, self._plan_epoch = plan, self.epoch
        return self._plan

    def _mine(self, step, positions: Sequence[int]) -> List[List[int]]:
        return [[positions[k] for k in mb] for mb in step.rank_microbatches(self.rank)]

    def _balance(self, balancer, positions: Sequence[int]):
        return balancer.balance_costs([self._costs[i] for i in positions], [self._tokens[i] for i in positions])

    def _batch_plan(self, order: List[int]) -> List[List[List[int]]]:
        """Fixed samples per step; what a token cap leaves out goes first in the next step."""
        size = self.batch_size
        steps = max(1, len(order) // size)
        chunks = [order[k * size : (k + 1) * size] for k in range(steps - 1)] + [order[(steps - 1) * size :]]
        plan, carried = [], []
        for chunk in chunks:
            carried = self._place(self._balancer, carried + chunk, plan)
        return plan + self._flush(carried)

    def _place(self, balancer, positions: List[int], plan: list) -> List[int]:
        """One step over `positions` appended to plan (this rank's part); returns what it carried.

        Only the longest prefix that fits the step's slots x max_tokens tokens is balanced (the
        rest waits, in order): a cap too small for the batch then costs work in proportion to the
        steps it makes, not a re-balancing of an ever longer carry in every step."""
        if balancer.max_tokens:
            fit = _prefix_within(self._tokens, positions, self.num_replicas * self.microbatches * balancer.max_tokens)
            positions, waiting = positions[:fit], positions[fit:]
        else:
            waiting = []
        step = self._balance(balancer, positions)
        if positions and len(step.carried) == len(positions):
            # Cannot happen: every sample fits an empty micro-batch (checked in __init__).
            raise RuntimeError(f"balancer placed none of {len(positions)} samples in a step")
        plan.append(self._mine(step, positions))
        return [positions[i] for i in step.carried] + waiting

    def _flush(self, waiting: List[int]) -> List[List[List[int]]]:
        """The end of the epoch: steps over what still waits (carried or in outlier queues), by LPT
        under the cap with no queue, until every sample is placed; each step places at least one."""
        plan: list = []
        if waiting:
            flusher = _tessera.Balancer(
                dp=self.num_replicas,
                microbatches=self.microbatches,
                max_tokens=self._balancer.max_tokens,
                method="lpt",
                model=self._balancer.model,
                gpu=self._balancer.gpu,
                equal_count=False,
            )
            while waiting:
                waiting = self._place(flusher, waiting, plan)
        return plan

    def _budget_plan(self, order: List[int]) -> List[List[List[int]]]:
        """Token-budget steps over the whole epoch (balance/stream_balancer.h), then the flush.

        Steps empty on every rank (outliers waiting in their queues) are left out: every rank
        computes the same plan, so they all leave out the same steps."""
        budget = self.num_replicas * self.microbatches * self._balancer.max_tokens
        plan: list = []
        waiting = order
        while waiting:
            tokens = [self._tokens[i] for i in waiting]
            steps = min(_arguments.MAX_STREAM_STEPS, 2 * (sum(tokens) // budget + 1) + _STREAM_SLACK_STEPS)
            stream = self._balancer.stream_costs([self._costs[i] for i in waiting], tokens, steps)
            plan += [self._mine(step, waiting) for step in stream.steps if any(step.slots)]
            left = [waiting[i] for i in stream.carried] + waiting[stream.n_in :]
            drew_all = stream.n_in == len(waiting)
            waiting = left
            if drew_all or stream.n_assigned == 0:
                break
        return plan + self._flush(waiting)


_METHODS = ("lpt", "kk", "fixed-greedy", "none", "wlb")


def _group(size_name: str, size, rank_name: str, rank) -> tuple:
    """(num_replicas, rank), checked; what is None comes from the initialized process group."""
    if size is None or rank is None:
        world, me = world_and_rank()
        size = world if size is None else size
        rank = me if rank is None else rank
    size = _arguments.integer(size_name, size, 1, _arguments.MAX_SLOTS)
    rank = _arguments.integer(rank_name, rank, 0, size - 1)
    return size, rank


def _prefix_within(tokens: Sequence[int], positions: Sequence[int], budget: int) -> int:
    """How many of positions, from the first, hold at most budget tokens together (at least one)."""
    used = 0
    for k, i in enumerate(positions):
        used += tokens[i]
        if used > budget:
            return max(1, k)
    return len(positions)


def _check_fits(name: str, tokens: Sequence[int], cap: int) -> None:
    longest = max(tokens, default=0)
    if longest > cap:
        i = tokens.index(longest)
        raise _arguments.TesseraError(
            f"{name}: sample {i} has {longest} tokens, more than the cap of {cap} (allowed: at least {longest})"
        )
