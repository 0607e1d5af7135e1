"""A data-parallel batch sampler whose global batch size may change between any two steps.

``ElasticBatchSampler`` reads the dataset as one stream: epoch ``e`` is the permutation of
``0..n-1`` seeded by ``seed + e`` (``tessera.permutation``, the same generator on every rank and
platform, the order BalancedDistributedSampler uses), the epochs one after another. Each step takes
the next ``global_batch`` positions of the stream and splits them over ranks (contiguous,
``global_batch / num_replicas`` each) and each rank's share over its micro-batches. The number of
positions consumed is the whole state, so:

* no sample is lost or repeated when the batch size changes: within every epoch each sample is
  consumed exactly once, on exactly one rank, whatever sizes the steps had;
* a change takes effect at the next step boundary (``set_global_batch``), never inside a step;
* resuming needs only ``state_dict()`` (the position and the seed), even at another batch size.

A step that crosses an epoch boundary takes the end of one epoch and the start of the next.
Iterating yields this rank's micro-batches (lists of dataset indices) step after step, for
``DataLoader(dataset, batch_sampler=sampler)``; with worker processes the loader prefetches, so
a new batch size reaches the loader a few micro-batches late (never a sample lost or repeated).
Pure Python: no torch needed.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Optional

from . import _arguments, _tessera
from ._process_group import world_and_rank

__all__ = ["ElasticBatchSampler"]


class ElasticBatchSampler:
    """This rank's micro-batches of a stream of seeded epoch permutations; see the module docstring.

    Args:
        dataset_size: samples in the dataset (n); 0 yields no step.
        global_batch: samples per step over all ranks; a multiple of num_replicas x microbatches.
        num_replicas, rank: the data-parallel group; default: the initialized torch process group.
        microbatches: micro-batches per rank and step (equal sizes).
        seed: shared by all ranks; epoch e is permutation(n, seed + e).
        shuffle: permute each epoch (else 0..n-1 in order).
        steps: stop iterating after this many steps (None: never stop; break out of the loop).
    """

    def __init__(
        self,
        dataset_size: int,
        global_batch: int,
        *,
        num_replicas: Optional[int] = None,
        rank: Optional[int] = None,
        microbatches: int = 1,
        seed: int = 0,
        shuffle: bool = True,
        steps: Optional[int] = None,
    ) -> None:
        dataset_size = _arguments.integer("dataset_size", dataset_size, 0, _arguments.MAX_COUNT)
        if num_replicas is None or rank is None:
            world, me = world_and_rank()
            num_replicas = world if num_replicas is None else num_replicas
            rank = me if rank is None else rank
        num_replicas = _arguments.integer("num_replicas", num_replicas, 1, _arguments.MAX_SLOTS)
        rank = _arguments.integer("rank", rank, 0, num_replicas - 1)
        microbatches = _arguments.integer("microbatches", microbatches, 1, _arguments.MAX_SLOTS)
        seed = _arguments.integer("seed", seed, 0, _arguments.MAX_SEED)
        shuffle = _arguments.boolean("shuffle", shuffle)
        steps = _arguments.optional_integer("steps", steps, 0)
        self.dataset_size = dataset_size
        self.num_replicas = num_replicas
        self.rank = rank
        self.microbatches = microbatches
        self.seed = seed
        self.shuffle = shuffle
        self.steps = steps
        self.position = 0  # samples consumed over all ranks, all epochs
        self.steps_taken = 0
        self._global_batch = 0
        self.set_global_batch(global_batch)
        self._orders: Dict[int, List[int]] = {}

    # -- batch size and state -------------------------------------------------------------------

    @property
    def global_batch(self) -> int:
        return self._global_batch

    def set_global_batch(self, global_batch: int) -> None:
        """The batch size of every step from the next one on."""
        slots = self.num_replicas * self.microbatches
        global_batch = _arguments.integer("global_batch", global_batch, 1, _arguments.MAX_COUNT)
        if global_batch % slots:
            raise _arguments.TesseraError(
                f"global_batch: got {global_batch} (allowed: a positive multiple of {self.num_replicas} ranks x "
                f"{self.microbatches} micro-batches = {slots})"
            )
        self._global_batch = global_batch

    @property
    def epoch(self) -> int:
        """The epoch the next sample comes from."""
        return self.position // self.dataset_size

    def state_dict(self) -> dict:
        return {"position": self.position, "seed": self.seed, "dataset_size": self.dataset_size}

    def load_state_dict(self, state: dict) -> None:
        if not isinstance(state, dict) or "position" not in state:
            raise _arguments.ArgumentTypeError(
                f"state: got {type(state).__name__} (allowed: a dict from state_dict() with a position)"
            )
        if state.get("seed", self.seed) != self.seed or state.get("dataset_size", self.dataset_size) != self.dataset_size:
            raise _arguments.TesseraError(
                f"state: saved for seed {state.get('seed')} and dataset_size {state.get('dataset_size')} "
                f"(allowed: seed {self.seed} and dataset_size {self.dataset_size})"
            )
        self.position = _arguments.integer("state.position", state["position"], 0)

    # -- steps ----------------------------------------------------------------------------------

    def next_step(self) -> List[List[int]]:
        """Consumes one step at the current global batch; returns this rank's micro-batches."""
        if self.dataset_size == 0:
            raise _arguments.TesseraError("dataset_size: 0 samples, no step to take (allowed: an integer >= 1)")
        b = self._global_batch
        share = b // self.num_replicas
        size = share // self.microbatches
        start = self.position + self.rank * share
        mine = self.stream(start, start + share)
        self.position += b
        self.steps_taken += 1
        return [mine[k * size : (k + 1) * size] for k in range(self.microbatches)]

    def __iter__(self) -> Iterator[List[int]]:
        while self.dataset_size and (self.steps is None or self.steps_taken < self.steps):  # empty: no step
            yield from self.next_step()

    def __len__(self) -> int:
        """Micro-batches left to yield (only with ``steps``)."""
        if self.dataset_size == 0:
            return 0
        if self.steps is None:
            raise TypeError("len: an ElasticBatchSampler without steps never ends")
        return max(0, self.steps - self.steps_taken) * self.microbatches

    def stream(self, begin: int, end: int) -> List[int]:
        """Dataset indices at stream positions [begin, end) (any rank's, any epoch's)."""
        begin = _arguments.integer("begin", begin, 0)
        end = _arguments.integer("end", end, begin)
        if end > begin and self.dataset_size == 0:
            raise _arguments.TesseraError("dataset_size: 0 samples, an empty stream (allowed: begin == end)")
        out: List[int] = []
        n = self.dataset_size
        while begin < end:
            epoch, offset = divmod(begin, n)
            take = min(end - begin, n - offset)
            out.extend(self._order(epoch)[offset : offset + take])
            begin += take
        return out

    def _order(self, epoch: int) -> List[int]:
        order = self._orders.get(epoch)
        if order is None:
            order = _tessera.permutation(self.dataset_size, self.seed + epoch) if self.shuffle else list(range(self.dataset_size))
            self._orders = {e: o for e, o in self._orders.items() if e == epoch - 1}  # a step spans two at most
            self._orders[epoch] = order
        return order
