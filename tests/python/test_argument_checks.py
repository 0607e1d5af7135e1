"""Every public entry point checks its arguments when it receives them (the constructor, set_epoch,
a setter, the binding call), never later at iteration: one error of one line naming the argument
and the allowed values. A value of the wrong kind is an ArgumentTypeError (TesseraError and
TypeError), an out-of-range one a TesseraError (ValueError). bool is not an integer; numpy
integers are."""

import numpy as np
import pytest

import tessera
from tessera import ElasticBatchSampler
from tessera.torch import BalancedDistributedSampler

SIZES = [100 * (i % 7 + 1) for i in range(64)]


def sampler(**changes):
    kwargs = dict(batch_size=8, num_replicas=2, rank=0, microbatches=2)
    kwargs.update(changes)
    return BalancedDistributedSampler(SIZES, **kwargs)


def elastic(**changes):
    kwargs = dict(num_replicas=2, rank=0, microbatches=2)
    kwargs.update(changes)
    return ElasticBatchSampler(100, kwargs.pop("global_batch", 8), **kwargs)


def assert_named(build, name, kind):
    with pytest.raises(kind) as raised:
        build()
    text = str(raised.value)
    assert text.startswith(name + ":"), text
    assert "allowed" in text and "\n" not in text, text
    assert isinstance(raised.value, tessera.TesseraError)
    return text


SAMPLER_CASES = [
    (lambda: sampler(num_replicas=0), "num_replicas", ValueError),
    (lambda: sampler(num_replicas=2.0), "num_replicas", TypeError),
    (lambda: sampler(rank=0.5), "rank", TypeError),
    (lambda: sampler(rank=True), "rank", TypeError),
    (lambda: sampler(rank=2), "rank", ValueError),
    (lambda: sampler(batch_size=4.0), "batch_size", TypeError),
    (lambda: sampler(batch_size=3), "batch_size", ValueError),
    (lambda: sampler(microbatches=0), "microbatches", ValueError),
    (lambda: sampler(microbatches=True), "microbatches", TypeError),
    (lambda: sampler(seed=2**64), "seed", ValueError),
    (lambda: sampler(seed=-1), "seed", ValueError),
    (lambda: sampler(seed="0"), "seed", TypeError),
    (lambda: sampler(shuffle=1), "shuffle", TypeError),
    (lambda: sampler(method="best"), "method", ValueError),
    (lambda: sampler(method="wlb"), "method", ValueError),
    (lambda: sampler(equal_count="yes"), "equal_count", TypeError),
    (lambda: sampler(max_tokens=0), "max_tokens", ValueError),
    (lambda: sampler(max_tokens=500), "max_tokens", ValueError),  # sample 6 has 700 tokens
    (lambda: sampler(image_tokens=[[1]] * 3), "image_tokens", ValueError),
    (lambda: sampler(generated_tokens=[1] * 65), "generated_tokens", ValueError),
    (lambda: sampler(model=3), "model", TypeError),
    (lambda: sampler(model="no-such-model"), "model", ValueError),
    (lambda: sampler(gpu="no-such-gpu"), "gpu", ValueError),
    (lambda: BalancedDistributedSampler("abc", 8, num_replicas=1, rank=0), "text_tokens", TypeError),
    (lambda: BalancedDistributedSampler([1, -5], 2, num_replicas=1, rank=0), "text_tokens[1]", ValueError),
    (lambda: BalancedDistributedSampler([1, "x"], 2, num_replicas=1, rank=0), "text_tokens[1]", ValueError),
    (lambda: sampler().set_epoch(-3), "epoch", ValueError),
    (lambda: sampler().set_epoch(1.5), "epoch", TypeError),
    (lambda: sampler().set_epoch(True), "epoch", TypeError),
]

ELASTIC_CASES = [
    (lambda: elastic(global_batch=4.0), "global_batch", TypeError),
    (lambda: elastic(global_batch=6), "global_batch", ValueError),
    (lambda: elastic(global_batch=True), "global_batch", TypeError),
    (lambda: elastic().set_global_batch(2**70), "global_batch", ValueError),
    (lambda: elastic().set_global_batch("8"), "global_batch", TypeError),
    (lambda: elastic(num_replicas=0), "num_replicas", ValueError),
    (lambda: elastic(rank=0.5), "rank", TypeError),
    (lambda: elastic(microbatches=0), "microbatches", ValueError),
    (lambda: elastic(seed=2**64), "seed", ValueError),
    (lambda: elastic(shuffle=None), "shuffle", TypeError),
    (lambda: elastic(steps=-1), "steps", ValueError),
    (lambda: elastic(steps=2.5), "steps", TypeError),
    (lambda: ElasticBatchSampler(-1, 8, num_replicas=2, rank=0), "dataset_size", ValueError),
    (lambda: ElasticBatchSampler(100.0, 8, num_replicas=2, rank=0), "dataset_size", TypeError),
    (lambda: elastic().load_state_dict({"position": -1}), "state.position", ValueError),
    (lambda: elastic().load_state_dict({"position": 1.5}), "state.position", TypeError),
    (lambda: elastic().load_state_dict([3]), "state", TypeError),
    (lambda: elastic().stream(5, 2), "end", ValueError),
]

BINDING_CASES = [
    (lambda: tessera.Balancer(dp=0), "dp", ValueError),
    (lambda: tessera.Balancer(dp=2.0), "dp", TypeError),
    (lambda: tessera.Balancer(dp=True), "dp", TypeError),
    (lambda: tessera.Balancer(dp=2, microbatches="2"), "microbatches", TypeError),
    (lambda: tessera.Balancer(dp=2, max_tokens=-1), "max_tokens", ValueError),
    (lambda: tessera.Balancer(dp=2, equal_count=1), "equal_count", TypeError),
    (lambda: tessera.Balancer(dp=2, method=None), "method", TypeError),
    (lambda: tessera.Balancer(dp=2, method="best"), "method", ValueError),
    (lambda: tessera.Balancer(dp=1, max_tokens=100).stream(text_tokens=[5], steps=0), "steps", ValueError),
    (lambda: tessera.Balancer(dp=1, max_tokens=100).stream(text_tokens=[5], steps=2.0), "steps", TypeError),
    (lambda: tessera.Balancer(dp=1, max_tokens=100).stream(text_tokens=[500], steps=2), "max_tokens", ValueError),
    (lambda: tessera.Balancer(dp=2).balance_costs([1.0, "x"]), "costs[1]", TypeError),
    (lambda: tessera.Balancer(dp=2).balance_costs([1.0, float("nan")]), "costs[1]", ValueError),
    (lambda: tessera.Balancer(dp=2).balance(text_tokens=[1, 2], image_tokens=[[1]]), "image_tokens", ValueError),
    (lambda: tessera.Balancer(dp=2).balance(text_tokens=[1, 2]).rank_microbatches(0.5), "rank", TypeError),
    (lambda: tessera.lpt([1.0], 0), "slots", ValueError),
    (lambda: tessera.lpt([1.0], 2.0), "slots", TypeError),
    (lambda: tessera.lpt([1.0], 2, equal_count=0), "equal_count", TypeError),
    (lambda: tessera.karmarkar_karp([1.0, None], 2), "costs[1]", TypeError),
    (lambda: tessera.order_microbatches([1.0], True), "stages", TypeError),
    (lambda: tessera.cp_sharding([100, 1.5], 2), "documents[1]", TypeError),
    (lambda: tessera.synthetic_samples("wlb-like", 10.0), "n", TypeError),
    (lambda: tessera.synthetic_samples("wlb-like", 10, seed=-1), "seed", ValueError),
    (lambda: tessera.synthetic_samples("no-such-mix", 10), "mix", ValueError),
    (lambda: tessera.permutation(10, 2**64), "seed", ValueError),
    (lambda: tessera.permutation(-1, 0), "n", ValueError),
    (lambda: tessera.GnsEstimator(ema_decay="0.9"), "ema_decay", TypeError),
    (lambda: tessera.GnsEstimator(ema_decay=1.5), "ema_decay", ValueError),
    (lambda: tessera.GnsEstimator().update(1.0, 1, 1.0, 8, steps=0), "steps", ValueError),
    (lambda: tessera.GnsEstimator().update(1.0, True, 1.0, 8), "small_batch", TypeError),
    (lambda: tessera.GnsEstimator().update(float("inf"), 1, 1.0, 8), "small_sq_norm", ValueError),
    (lambda: tessera.SquaredNormShare().add(1.0, replicas=0.5), "replicas", TypeError),
    (lambda: tessera.statistical_efficiency("1", 2, 3), "batch", TypeError),
    (lambda: tessera.batch_grid(1.0, 8), "min_batch", TypeError),
    (lambda: tessera.parse_count(250), "text", TypeError),
    (lambda: tessera.Controller.from_step_times(1024, [8, 16], [1.0, 2.0], 1e9, dp=0.5), "dp", TypeError),
    (lambda: tessera.Controller.from_step_times(1024, [8, 16.5], [1.0, 2.0], 1e9), "batches[1]", TypeError),
    (lambda: tessera.Controller.from_step_times(1024, [8, 16], [1.0, "2"], 1e9), "step_time_s[1]", TypeError),
    (lambda: tessera.Controller.from_step_times(True, [8, 16], [1.0, 2.0], 1e9), "seq_len", TypeError),
    (lambda: tessera.Controller.from_step_times(1024, [8], [1.0], 1e9).observe_step("1"), "measured_step_time_s",
     TypeError),
    (lambda: tessera.Controller.from_step_times(1024, [8], [1.0], 1e9).switch_to(0.0), "candidate", TypeError),
    (lambda: tessera.Controller.from_step_times(1024, [8], [1.0], 1e9).megatron_schedule(unit=1), "unit", TypeError),
    (lambda: tessera.run_cli("plan --model llama3-8b"), "args", TypeError),
    (lambda: tessera.plan(model="llama3-8b", cluster="h100-sxm-80gb:8", gbs=True), "gbs", TypeError),
]


@pytest.mark.parametrize("build,name,kind", SAMPLER_CASES + ELASTIC_CASES + BINDING_CASES)
def test_each_bad_argument_is_one_line_naming_it(build, name, kind):
    assert_named(build, name, kind)


def test_numpy_integers_are_integers():
    s = BalancedDistributedSampler(
        np.array(SIZES), np.int64(8), num_replicas=np.int32(2), rank=np.int64(1), microbatches=np.int16(2),
        seed=np.uint64(5),
    )
    s.set_epoch(np.int64(3))
    mine = [i for mb in s for i in mb]
    other = BalancedDistributedSampler(SIZES, 8, num_replicas=2, rank=0, microbatches=2, seed=5)
    other.set_epoch(3)
    assert s.epoch == 3 and type(s.epoch) is int
    assert sorted(mine + [i for mb in other for i in mb]) == list(range(len(SIZES)))
    e = ElasticBatchSampler(np.int64(100), np.int64(8), num_replicas=np.int64(2), rank=np.int64(0))
    assert len(e.next_step()[0]) == 4
    assert tessera.Balancer(dp=np.int64(2)).dp == 2
    assert tessera.permutation(np.int64(5), np.uint64(1)) == tessera.permutation(5, 1)


def test_an_empty_dataset_yields_no_step():
    for kwargs in (dict(batch_size=4), dict(batch_size=None, max_tokens=1000, method="wlb")):
        s = BalancedDistributedSampler([], num_replicas=2, rank=1, microbatches=2, **kwargs)
        assert s.steps() == [] and list(s) == [] and len(s) == 0
    e = ElasticBatchSampler(0, 4, num_replicas=2, rank=0)
    assert list(e) == [] and len(e) == 0 and e.stream(0, 0) == []
    with pytest.raises(tessera.TesseraError, match="dataset_size"):
        e.next_step()


def test_checks_run_before_any_work_and_leave_good_calls_alone():
    # The wrapped bindings still take positional and keyword arguments as before.
    b = tessera.Balancer(4, 2, 0, "lpt")
    assert (b.dp, b.microbatches, b.method) == (4, 2, "lpt")
    plan = b.balance([100, 200, 300])
    assert sorted(i for slot in plan.slots for i in slot) == [0, 1, 2]
    g = tessera.GnsEstimator(0.9)
    g.update(2.0, 1, 1.5, 8)
    assert g.steps == 1
