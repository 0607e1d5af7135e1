"""Tessera: plan and predict LLM training on GPU clusters.

The compiled core is ``tessera._tessera``; everything it defines is re-exported here:

* ``Balancer(dp, microbatches=1, max_tokens=0, method="lpt", model="llama3-8b",
  gpu="h100-sxm-80gb", equal_count=False)`` places samples on data-parallel ranks x
  micro-batches by their predicted time (``balance``, ``balance_costs``, ``stream``,
  ``sample_costs``); methods ``none``, ``fixed-greedy``, ``lpt``, ``kk``, ``wlb``.
* ``lpt``, ``karmarkar_karp``, ``order_microbatches``, ``cp_sharding``: the algorithms alone.
* ``synthetic_samples(mix, n, seed)``: the pinned ``wlb-like`` and ``mllm-like`` mixes.
* ``TesseraError`` (a ``ValueError``) for invalid input, naming the field and allowed values.

``tessera.torch`` holds ``BalancedDistributedSampler`` for a torch ``DataLoader``; torch is
imported only when that module is.
"""

from ._tessera import *  # noqa: F401,F403  (each binding file adds its names)
from ._tessera import __doc__ as _core_doc  # noqa: F401
