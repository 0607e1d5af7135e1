"""ElasticBatchSampler: whatever the global batch does between steps, every epoch hands out each
sample exactly once over all ranks (none lost, none repeated), a step's ranks get disjoint equal
shares, a change waits for the step boundary, and the position alone resumes the stream."""

import random

import pytest

import tessera
from tessera import ElasticBatchSampler


def ranks(n, world, batch, microbatches=2, seed=3):
    return [ElasticBatchSampler(n, batch, num_replicas=world, rank=r, microbatches=microbatches, seed=seed)
            for r in range(world)]


def test_every_epoch_is_each_sample_once_across_batch_changes():
    n, world, mbs = 1000, 3, 2
    samplers = ranks(n, world, 48, mbs)
    rng = random.Random(5)
    stream = []  # the samples consumed, step after step, rank after rank
    for step in range(150):
        if step % 7 == 0:  # a new batch size, the same on every rank, at a step boundary
            batch = world * mbs * rng.randint(1, 20)
            for s in samplers:
                s.set_global_batch(batch)
        parts = [s.next_step() for s in samplers]
        sizes = {len(mb) for p in parts for mb in p}
        assert len(sizes) == 1 and all(len(p) == mbs for p in parts)  # equal micro-batches everywhere
        step_samples = [i for p in parts for mb in p for i in mb]
        assert len(step_samples) == samplers[0].global_batch
        stream.extend(step_samples)
    assert len({s.position for s in samplers}) == 1 and samplers[0].position == len(stream)
    epochs = len(stream) // n
    assert epochs >= 3
    for e in range(epochs):
        assert sorted(stream[e * n : (e + 1) * n]) == list(range(n)), f"epoch {e}"
    tail = stream[epochs * n :]
    assert len(set(tail)) == len(tail)
    # The stream is the documented one: epoch e is tessera.permutation(n, seed + e).
    assert stream[:n] == tessera.permutation(n, 3) and stream[n : 2 * n] == tessera.permutation(n, 4)


def test_a_change_takes_effect_at_the_next_step_of_the_iterator():
    s = ElasticBatchSampler(100, 8, num_replicas=2, rank=0, microbatches=2, seed=0, steps=3)
    it = iter(s)
    first = next(it)
    s.set_global_batch(16)  # mid-step: this step's second micro-batch keeps the old size
    second = next(it)
    assert len(first) == len(second) == 2
    assert [len(mb) for mb in (next(it), next(it))] == [4, 4]
    assert s.position == 8 + 16
    assert len(list(it)) == 2 and s.steps_taken == 3


def test_resume_from_the_position_alone():
    a = ElasticBatchSampler(500, 32, num_replicas=2, rank=1, microbatches=1, seed=9)
    for _ in range(5):
        a.next_step()
    state = a.state_dict()
    b = ElasticBatchSampler(500, 64, num_replicas=2, rank=1, microbatches=1, seed=9)
    b.load_state_dict(state)
    a.set_global_batch(64)
    assert [a.next_step() for _ in range(10)] == [b.next_step() for _ in range(10)]
    with pytest.raises(ValueError, match="seed"):
        ElasticBatchSampler(500, 32, num_replicas=2, rank=0, seed=1).load_state_dict(state)


def test_unshuffled_stream_is_arrival_order():
    s = ElasticBatchSampler(10, 4, num_replicas=2, rank=1, shuffle=False)
    assert s.next_step() == [[2, 3]]
    assert s.next_step() == [[6, 7]]
    assert s.next_step() == [[0, 1]]  # positions 8..11: 8, 9 on rank 0; 0, 1 of the next epoch on rank 1


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="global_batch"):
        ElasticBatchSampler(100, 10, num_replicas=4, rank=0)
    with pytest.raises(ValueError, match="rank"):
        ElasticBatchSampler(100, 8, num_replicas=4, rank=4)
    with pytest.raises(ValueError, match="dataset_size"):
        ElasticBatchSampler(-1, 8, num_replicas=4, rank=0)
    with pytest.raises(TypeError):
        len(ElasticBatchSampler(100, 8, num_replicas=4, rank=0))
