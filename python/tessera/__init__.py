"""Tessera: plan and predict LLM training on GPU clusters.

The compiled core is ``tessera._tessera``; everything it defines is re-exported here:

* ``plan(model, cluster, gbs, seq=None, top=None, fix=None, max_memory_gib=None, **more)``,
  ``estimate(model, cluster, plan, **more)``, ``validate(file, pipeline=None, **more)``: the
  commands of the ``tessera`` CLI, run in-process, returning the document ``--json`` prints as a
  dict; a Hugging Face config may be passed as a dict (``cli_api``). ``run_cli(args)`` runs any
  command and returns its text. ``__version__`` is the project version.
* ``calibrate(runs=..., logs=..., nccl=..., gemm=..., gpu=..., model=..., cluster=..., plan=...,
  output=None, report=False)``: ``tessera calibrate --json``, the profile fitted to your own
  cluster's measurements as a dict; ``profile=`` (a path or that dict) applies it in plan /
  estimate / validate. The Controller refits its cost model online with the same fit.

* ``Balancer(dp, microbatches=1, max_tokens=0, method="lpt", model="llama3-8b",
  gpu="h100-sxm-80gb", equal_count=False)`` places samples on data-parallel ranks x
  micro-batches by their predicted time (``balance``, ``balance_costs``, ``stream``,
  ``stream_costs``, ``sample_costs``, ``costs_and_tokens``); methods ``none``, ``fixed-greedy``,
  ``lpt``, ``kk``, ``wlb``.
* ``PerBatchCp(gpus, model="llama3-8b", gpu="h100-sxm-80gb", recompute="full")``: per-step
  context parallelism; ``decide(microbatches)`` gives one step's cp groups (degrees not only powers
  of two, GPUs, micro-batches) and its time against every static cp degree.
* ``lpt``, ``karmarkar_karp``, ``order_microbatches``, ``cp_sharding``: the algorithms alone.
* ``synthetic_samples(mix, n, seed)``: the pinned ``wlb-like`` and ``mllm-like`` mixes.
* ``GnsEstimator(ema_decay=0.999)``: the gradient noise scale B_simple from squared gradient
  norms at a small and the big batch (``update``, ``noise_scale``, ``gradient_sq_norm``,
  ``trace_covariance``); ``unbiased_noise_estimate`` for one step; ``SquaredNormShare`` and
  ``model_squared_norm`` for norms of tp / pp-sharded gradients.
* ``Controller(model, cluster, seq_len, min_batch, max_batch, token_budget, ...)``: the goodput
  controller (batch size x plan) for a training loop: ``observe_gradients``, ``observe_step``,
  ``decide``, ``switch_to``, ``megatron_schedule``; ``Controller.from_step_times`` for hardware
  the cost model does not describe (batch sizes only, step times from the caller).
* ``statistical_efficiency``, ``goodput``, ``batch_grid``; ``megatron_batch_schedule`` /
  ``parse_megatron_batch_schedule`` (``--step-batch-size-schedule`` text), ``format_count``.
* ``ElasticBatchSampler``: a data-parallel batch sampler whose global batch may change at any
  step with no sample lost or repeated (pure Python).
* ``TesseraError`` (a ``ValueError``) for invalid input, naming the field and allowed values;
  ``ArgumentTypeError`` (a ``TesseraError`` and a ``TypeError``) for an argument of the wrong
  kind (``bool`` is not an integer, ``4.0`` is not one either; numpy integers are). Every public
  entry point checks its arguments when called (``_arguments``, ``_checked_bindings``).

``tessera.torch`` holds ``BalancedDistributedSampler`` for a torch ``DataLoader`` and
``GradNormHook`` for a DDP model; torch is imported only when one of them is built.
"""

from . import _checked_bindings  # noqa: F401  (checks every binding's arguments; before the names are copied)
from ._arguments import ArgumentTypeError  # noqa: F401
from ._tessera import *  # noqa: F401,F403  (each binding file adds its names)
from ._tessera import __doc__ as _core_doc  # noqa: F401
from ._tessera import __version__  # noqa: F401
from .cli_api import calibrate, estimate, plan, run_cli, validate  # noqa: F401
from .elastic_sampler import ElasticBatchSampler  # noqa: F401
