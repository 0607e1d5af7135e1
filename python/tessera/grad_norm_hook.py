"""Squared gradient norms for the gradient noise scale, from a torch DDP training loop.

``GradNormHook(ddp_model)`` collects, each optimizer step, the squared norms that
``tessera.GnsEstimator`` / ``tessera.Controller.observe_gradients`` take:

* per micro-batch: the squared norm of each micro-batch's own gradient, before it is accumulated
  into ``.grad`` (a hook on every parameter sees that gradient; the end of each backward pass closes
  one micro-batch);
* per rank, before the all-reduce: the squared norm of this rank's accumulated gradient (a DDP
  communication hook reads each bucket before all-reducing it);
* the big batch, after the all-reduce: the squared norm of the averaged gradient (the same hook,
  once the bucket's all-reduce completes).

``step_norms()`` then sums the micro-batch and per-rank norms over the data-parallel group (one
all-reduce of three numbers) and returns their means with the batch sizes they belong to.

Replicated parameters are counted once: every data-parallel rank holds the whole gradient, so the
big-batch norm is read from the all-reduced buffer (identical on every rank) rather than summed over
ranks, and the small-batch norms are averaged over ranks. Under tensor or pipeline parallelism give
``model_parallel_group`` (each rank's share is summed over it, McCandlish et al.'s norms are of the
whole model's gradient) and ``replicas``: for a parameter that several ranks of that group hold whole
(layer norms replicated over tp, tied embeddings on the first and last stage), how many hold it;
each copy adds 1/replicas of its squared norm (tessera.SquaredNormShare's rule).

The loss of each micro-batch is taken to be its mean over its samples divided by the number of
micro-batches of the step (``accumulation="mean"``, so that ``.grad`` ends up the mean over the
rank's samples); with ``accumulation="sum"`` it is not divided. Every micro-batch of a step should
hold the same number of samples, and every rank the same number of micro-batches.

torch is imported when a hook is built, never by ``import tessera``.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from typing import Callable, Dict, Optional

from . import _arguments

__all__ = ["GradNormHook", "StepNorms"]


@dataclass(frozen=True)
class StepNorms:
    """One step's squared gradient norms (gradients of the mean loss over each batch)."""

    microbatch_sq_norm: float  # mean over every micro-batch of every rank
    microbatch_size: float  # samples per micro-batch
    rank_sq_norm: float  # mean over ranks of each rank's accumulated gradient, before the all-reduce
    rank_batch: float  # samples per rank
    global_sq_norm: float  # the averaged gradient, after the all-reduce
    global_batch: float  # samples over all ranks
    microbatches: int  # over all ranks

    def small(self) -> tuple:
        """(small_sq_norm, small_batch) at the micro-batch: the arguments GnsEstimator.update takes first."""
        return self.microbatch_sq_norm, self.microbatch_size

    def big(self) -> tuple:
        """(big_sq_norm, big_batch): the all-reduced gradient."""
        return self.global_sq_norm, self.global_batch


class GradNormHook:
    """Registers on a ``torch.nn.parallel.DistributedDataParallel`` model; see the module docstring.

    Args:
        ddp_model: the DDP-wrapped model (its communication hook is replaced by this one, which
            all-reduces like the default hook: the sum over the group divided by its size).
        process_group: DDP's data-parallel group (default: the world).
        model_parallel_group: the group whose ranks each hold a piece of the model (tp x pp), or None.
        replicas: ``{parameter: ranks of model_parallel_group holding it whole}``, or a function of
            the parameter returning that count; default 1 for every parameter.
        accumulation: ``"mean"`` (each micro-batch's loss divided by the micro-batch count) or ``"sum"``.

    Use:
        hook = GradNormHook(ddp)
        for step ...:
            for k, mb in enumerate(microbatches):
                with (ddp.no_sync() if k < len(microbatches) - 1 else contextlib.nullcontext()):
                    (loss_fn(ddp(mb)) / len(microbatches)).backward()
            norms = hook.step_norms(samples_per_microbatch)
            controller.observe_gradients(*norms.small(), *norms.big())
            optimizer.step(); optimizer.zero_grad()
    """

    def __init__(
        self,
        ddp_model,
        *,
        process_group=None,
        model_parallel_group=None,
        replicas=None,
        accumulation: str = "mean",
    ) -> None:
        import torch
        import torch.distributed as dist

        _arguments.choice("accumulation", accumulation, ("mean", "sum"))
        if replicas is not None and not callable(replicas) and not isinstance(replicas, dict):
            raise _arguments.ArgumentTypeError(
                f"replicas: got {type(replicas).__name__} (allowed: None, a dict parameter -> count, or a function)"
            )
        if not hasattr(ddp_model, "register_comm_hook"):
            raise ValueError("ddp_model: expected a torch.nn.parallel.DistributedDataParallel model")
        self._torch = torch
        self._dist = dist
        self._group = process_group
        self._mp_group = model_parallel_group
        self._accumulation = accumulation
        self._world = dist.get_world_size(process_group)
        self._replicas = _replica_function(replicas)
        self._lock = threading.Lock()  # bucket callbacks may run on several of gloo's / NCCL's threads
        module = ddp_model.module
        self._weights: Dict[int, float] = {}  # id(parameter) -> 1 / replicas, only where != 1
        self._handles = []
        for p in module.parameters():
            if not p.requires_grad:
                continue
            r = _arguments.integer(f"replicas[parameter of shape {tuple(p.shape)}]", self._replicas(p), 1)
            if r != 1:
                self._weights[id(p)] = 1.0 / r
            self._handles.append(p.register_hook(self._parameter_hook(1.0 / r)))
        self._reset()
        ddp_model.register_comm_hook(state=None, hook=self._comm_hook)

    # -- what a step collected ---------------------------------------------------------------

    def step_norms(self, microbatch_size: float) -> StepNorms:
        """This step's norms (call after the last backward of the step, before zeroing the gradients);
        resets for the next step. ``microbatch_size``: samples per micro-batch (the same everywhere)."""
        micro = _arguments.real("microbatch_size", microbatch_size, 0.0, math.inf, low_open=True, high_open=True)
        torch, dist = self._torch, self._dist
        self._close_microbatch()
        if self._pending:
            for fut in self._pending:
                fut.wait()
        if not self._microbatch_norms:
            raise ValueError("step_norms: no backward pass ran since the last step")
        if self._global is None:
            raise ValueError("step_norms: no gradient was all-reduced (did every micro-batch run under no_sync?)")
        n = len(self._microbatch_norms)
        # A micro-batch's gradient is n x what it added to .grad under "mean"; the rank's gradient
        # and the all-reduced one are sums of n micro-batch means under "sum".
        mb_scale = float(n * n) if self._accumulation == "mean" else 1.0
        acc_scale = 1.0 if self._accumulation == "mean" else 1.0 / float(n * n)
        mb_sum = sum(self._microbatch_norms) * mb_scale
        local = self._local * acc_scale
        big = self._global * acc_scale
        if self._mp_group is not None:  # each model-parallel rank holds a share of every norm
            shares = torch.tensor([mb_sum, local, big], dtype=torch.float64)
            dist.all_reduce(shares, group=self._mp_group)
            mb_sum, local, big = shares.tolist()
        totals = torch.tensor([mb_sum, float(n), local], dtype=torch.float64)
        dist.all_reduce(totals, group=self._group)
        mb_sum_all, n_all, local_all = totals.tolist()
        self._reset()
        return StepNorms(
            microbatch_sq_norm=mb_sum_all / n_all,
            microbatch_size=micro,
            rank_sq_norm=local_all / self._world,
            rank_batch=micro * n,
            global_sq_norm=big,
            global_batch=micro * n_all,
            microbatches=int(round(n_all)),
        )

    def remove(self) -> None:
        """Removes the parameter hooks (DDP keeps its communication hook for the model's lifetime)."""
        for h in self._handles:
            h.remove()
        self._handles = []

    # -- hooks ---------------------------------------------------------------------------------

    def _reset(self) -> None:
        self._microbatch_norms = []  # per backward pass on this rank (float)
        self._current = None  # float64 tensor: the running micro-batch's squared norm
        self._callback_queued = False
        self._local = 0.0
        self._global: Optional[float] = None
        self._pending = []

    def _close_microbatch(self) -> None:
        if self._current is not None:
            self._microbatch_norms.append(float(self._current))
            self._current = None
        self._callback_queued = False

    def _parameter_hook(self, weight: float) -> Callable:
        torch = self._torch

        def hook(grad):
            sq = grad.detach().double().pow(2).sum()
            if weight != 1.0:
                sq = sq * weight
            self._current = sq if self._current is None else self._current + sq
            if not self._callback_queued:  # one micro-batch = one backward pass
                self._callback_queued = True
                torch.autograd.Variable._execution_engine.queue_callback(self._close_microbatch)
            return grad

        return hook

    def _bucket_sq_norm(self, bucket, tensor=None) -> float:
        if not self._weights:
            t = bucket.buffer() if tensor is None else tensor
            return float(t.detach().double().pow(2).sum())
        total = 0.0
        grads = bucket.gradients() if tensor is None else _views(tensor, bucket.parameters())
        for p, g in zip(bucket.parameters(), grads):
            total += float(g.detach().double().pow(2).sum()) * self._weights.get(id(p), 1.0)
        return total

    def _comm_hook(self, state, bucket):
        dist = self._dist
        self._local += self._bucket_sq_norm(bucket)
        buffer = bucket.buffer()
        buffer.div_(self._world)
        fut = dist.all_reduce(buffer, group=self._group, async_op=True).get_future()

        def after(f):
            reduced = f.value()[0]
            sq = self._bucket_sq_norm(bucket, reduced)
            with self._lock:
                self._global = (self._global or 0.0) + sq
            return reduced

        out = fut.then(after)
        self._pending.append(out)
        return out


def _replica_function(replicas) -> Callable:
    if replicas is None:
        return lambda p: 1
    if callable(replicas):
        return replicas
    table = {id(p): r for p, r in dict(replicas).items()}
    return lambda p: table.get(id(p), 1)


def _views(flat, parameters):
    """The per-parameter pieces of a flat bucket tensor, in the bucket's order."""
    out, offset = [], 0
    for p in parameters:
        n = p.numel()
        out.append(flat[offset : offset + n])
        offset += n
    return out
