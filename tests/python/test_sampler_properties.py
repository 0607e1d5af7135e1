"""Properties of the balancer stream and both samplers at scale: 10^6 samples, every method, several
ranks, several epochs, batch-size changes.

* each sample exactly once per epoch (over all ranks; numpy bincount over the dataset);
* bounded delay: a sample is placed at most a few steps after the step it arrived in;
* deterministic by seed, and every rank computes the same plan (no communication);
* every rank yields the same number of micro-batches, and no step is empty on every rank.

The sizes are a log-normal mix like wlb-like (many short documents, a long tail up to the cap)."""

import numpy as np
import pytest

import tessera
from tessera import ElasticBatchSampler
from tessera.torch import BalancedDistributedSampler

N = 1_000_000
CAP = 32768  # tokens per micro-batch
WORLD, MICROBATCHES = 4, 2
# An outlier that has waited 16 steps (balance/outlier_queues.h, kDefaultMaxWaitSteps) leaves with
# the next group, but at most one group leaves per step, so outliers that expire together queue
# behind each other: twice the wait bounds the delay (18 steps measured on this mix).
MAX_WAIT_STEPS = 16
MAX_DELAY_STEPS = 2 * MAX_WAIT_STEPS


def sizes(n, seed=0):
    rng = np.random.default_rng(seed)
    return np.clip(rng.lognormal(6.0, 1.3, n).astype(np.int64) + 1, 1, CAP)


SIZES = sizes(N)
TEXT = SIZES.tolist()


def assert_each_once(indices, n):
    counts = np.bincount(indices, minlength=n)
    assert counts.shape == (n,) and counts.min() == 1 and counts.max() == 1, (
        f"{int((counts == 0).sum())} samples missing, {int((counts > 1).sum())} repeated"
    )


def placed_steps(stream):
    """Per sample (position in the input), the step it was placed in."""
    step_of = np.full(stream.n_in, -1, dtype=np.int64)
    for k, step in enumerate(stream.steps):
        for slot in step.slots:
            step_of[slot] = k
    return step_of


@pytest.fixture(scope="module")
def costs_and_tokens():
    # The costs depend on the model, the GPU and the cap only: computed once for every method.
    return tessera.Balancer(dp=WORLD, microbatches=MICROBATCHES, max_tokens=CAP).costs_and_tokens(TEXT)


@pytest.mark.parametrize("method", ["none", "fixed-greedy", "lpt", "wlb"])
def test_stream_places_every_sample_once_with_bounded_delay(method, costs_and_tokens):
    costs, tokens = costs_and_tokens
    b = tessera.Balancer(dp=WORLD, microbatches=MICROBATCHES, max_tokens=CAP, method=method)
    budget = WORLD * MICROBATCHES * CAP
    steps = 2 * int(SIZES.sum()) // budget + 64
    stream = b.stream_costs(costs, tokens, steps)
    assert stream.n_in == N and stream.n_carried == 0 and stream.n_assigned == N
    slots = [st.slots for st in stream.steps]
    assert_each_once(np.concatenate([np.asarray(s, dtype=np.int64) for step in slots for s in step]), N)
    assert stream.max_delay_steps <= MAX_DELAY_STEPS
    assert stream.mean_delay_steps < 1
    for step in slots[:: max(1, len(slots) // 50)]:  # the cap holds in every slot
        assert max(int(SIZES[s].sum()) for s in step) <= CAP
    again = b.stream_costs(costs[:50000], tokens[:50000], 200)
    first = b.stream_costs(costs[:50000], tokens[:50000], 200)
    assert [st.slots for st in again.steps] == [st.slots for st in first.steps], "deterministic"


# Batch mode: 2 ranks x 2 micro-batches of 128K tokens hold a 256-sample batch (~240K tokens of
# this mix) with room to spare.
BATCH, BATCH_CAP = 256, 131072
CONFIGS = {
    "lpt-batch": dict(batch_size=BATCH, method="lpt", max_tokens=BATCH_CAP),
    "kk-batch": dict(batch_size=BATCH, method="kk"),
    "wlb-budget": dict(batch_size=None, method="wlb", max_tokens=CAP),
}
_SAMPLERS = {}


def samplers(config, world=2):
    """One sampler per rank, each built on its own (the ranks share nothing), kept for the module."""
    key = (config, world)
    if key not in _SAMPLERS:
        _SAMPLERS[key] = [
            BalancedDistributedSampler(TEXT, num_replicas=world, rank=r, microbatches=MICROBATCHES, seed=11,
                                       **CONFIGS[config])
            for r in range(world)
        ]
    return _SAMPLERS[key]


def epoch_plans(config, epoch):
    plans = []
    for s in samplers(config):
        s.set_epoch(epoch)
        plans.append(s.steps())
    return plans


def check_epoch(plans):
    assert len({len(p) for p in plans}) == 1, "every rank runs the same number of steps"
    every = np.fromiter((i for p in plans for step in p for mb in step for i in mb), dtype=np.int64)
    assert_each_once(every, N)
    for k in range(len(plans[0])):
        if not any(mb for p in plans for mb in p[k]):
            raise AssertionError(f"step {k} is empty on every rank")


@pytest.mark.parametrize("config", list(CONFIGS))
def test_distributed_sampler_over_ranks_and_epochs(config):
    first = epoch_plans(config, 0)
    check_epoch(first)
    if CONFIGS[config]["batch_size"] is not None:  # equal counts: no micro-batch empty, sizes within one
        for k in range(0, len(first[0]), 25):
            counts = [len(mb) for p in first for mb in p[k]]
            assert min(counts) >= 1, (k, counts)
            assert max(counts) - min(counts) <= 1, (k, counts)
    second = epoch_plans(config, 1)
    check_epoch(second)
    assert second[0] != first[0], "a new epoch reshuffles"
    again = samplers(config)[0]
    again.set_epoch(0)
    assert again.steps() == first[0], "deterministic by seed and epoch"


def test_batch_plan_delay_is_at_most_one_step_when_the_batch_fits():
    # Each step takes the next batch of the epoch's order plus what the previous one carried, first.
    order = np.asarray(tessera.permutation(N, 11), dtype=np.int64)
    chunk_of = np.empty(N, dtype=np.int64)
    chunk_of[order] = np.minimum(np.arange(N) // BATCH, N // BATCH - 1)
    step_of = np.full(N, -1, dtype=np.int64)
    for rank_sampler in samplers("lpt-batch"):
        rank_sampler.set_epoch(0)
        for k, step in enumerate(rank_sampler.steps()):
            for mb in step:
                step_of[mb] = k
    delay = step_of - chunk_of
    assert delay.min() >= 0 and delay.max() <= 1


def test_elastic_sampler_over_batch_changes_and_epochs():
    world, mbs = 4, 2
    samplers = [ElasticBatchSampler(N, 64, num_replicas=world, rank=r, microbatches=mbs, seed=7) for r in range(world)]
    rng = np.random.default_rng(3)
    parts = []
    while samplers[0].position < 2 * N + 12345:
        if rng.random() < 0.05:  # a new global batch, the same on every rank, at a step boundary
            batch = world * mbs * int(rng.integers(1, 1024))
            for s in samplers:
                s.set_global_batch(batch)
        step = [s.next_step() for s in samplers]
        assert len({len(mb) for p in step for mb in p}) == 1
        parts.extend(np.asarray(mb, dtype=np.int64) for p in step for mb in p)
    stream = np.concatenate(parts)
    assert len(stream) == samplers[0].position
    for e in range(2):
        assert_each_once(stream[e * N : (e + 1) * N], N)
        assert np.array_equal(stream[e * N : (e + 1) * N], np.asarray(tessera.permutation(N, 7 + e)))
    tail = stream[2 * N :]
    assert len(np.unique(tail)) == len(tail)
