"""BalancedDistributedSampler without a process group: for every rank of a simulated group, over an
epoch, the union of the ranks' indices is exactly the dataset with no index twice; all ranks
yield the same number of micro-batches; epochs differ; a DataLoader runs on it."""

import random

import pytest

torch = pytest.importorskip("torch")

from tessera.torch import BalancedDistributedSampler  # noqa: E402

N = 1000
SIZES = [int(random.Random(7).lognormvariate(7.0, 1.2)) + 1 for _ in range(N)]


def epoch_indices(world, epoch=0, **kwargs):
    per_rank = []
    for rank in range(world):
        sampler = BalancedDistributedSampler(SIZES, num_replicas=world, rank=rank, **kwargs)
        sampler.set_epoch(epoch)
        per_rank.append(list(sampler))
    return per_rank


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(batch_size=64, microbatches=2),
        dict(batch_size=100, microbatches=1, method="kk"),
        dict(batch_size=64, microbatches=2, max_tokens=20000, method="lpt"),
        dict(batch_size=None, microbatches=2, max_tokens=30000, method="wlb"),
        dict(batch_size=50, microbatches=3, shuffle=False, method="none"),
    ],
)
def test_union_over_ranks_is_the_dataset(kwargs):
    per_rank = epoch_indices(4, **kwargs)
    counts = {len(mbs) for mbs in per_rank}
    assert len(counts) == 1, "every rank runs the same number of micro-batches"
    every = [i for mbs in per_rank for mb in mbs for i in mb]
    assert len(every) == N, "no index twice"
    assert sorted(every) == list(range(N))


def test_equal_count_micro_batches_are_never_empty():
    plans = [
        BalancedDistributedSampler(SIZES, batch_size=64, microbatches=2, num_replicas=4, rank=r).steps()
        for r in range(4)
    ]
    for step in range(len(plans[0])):
        sizes = [len(mb) for plan in plans for mb in plan[step]]
        assert min(sizes) > 0
        assert max(sizes) - min(sizes) <= 1, f"step {step}: {sizes}"


def test_epochs_reshuffle_and_seeds_agree():
    a = epoch_indices(2, epoch=0, batch_size=64)
    b = epoch_indices(2, epoch=1, batch_size=64)
    again = epoch_indices(2, epoch=0, batch_size=64)
    assert a == again
    assert a != b


def test_dataloader_yields_the_planned_indices():
    dataset = torch.arange(N)
    sampler = BalancedDistributedSampler(SIZES, batch_size=64, microbatches=2, num_replicas=4, rank=2)
    loader = torch.utils.data.DataLoader(dataset, batch_sampler=sampler)
    got = [batch.tolist() for batch in loader]
    assert got == list(sampler)
    assert len(loader) == len(sampler)


def test_bad_arguments():
    with pytest.raises(ValueError, match="rank"):
        BalancedDistributedSampler(SIZES, batch_size=64, num_replicas=4, rank=4)
    with pytest.raises(ValueError, match="batch_size"):
        BalancedDistributedSampler(SIZES, batch_size=3, num_replicas=4, rank=0)
    with pytest.raises(ValueError, match="batch_size"):
        BalancedDistributedSampler(SIZES, num_replicas=4, rank=0)
    with pytest.raises(ValueError, match="method"):
        BalancedDistributedSampler(SIZES, batch_size=64, num_replicas=4, rank=0, method="wlb")
    with pytest.raises(ValueError, match="num_replicas"):
        BalancedDistributedSampler(SIZES, batch_size=64)  # no process group
