"""The data-parallel group a sampler uses when its caller gives neither size nor rank: the
initialized torch.distributed process group. One module that both samplers import, so neither
imports the other (tessera.torch re-exports ElasticBatchSampler)."""

from __future__ import annotations


def world_and_rank() -> tuple[int, int]:
    import torch.distributed as dist  # lazy: only when rank or size is not given

    if not (dist.is_available() and dist.is_initialized()):
        raise ValueError("num_replicas and rank: not given and no torch.distributed process group is initialized")
    return dist.get_world_size(), dist.get_rank()
