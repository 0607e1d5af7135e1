"""tessera.PerBatchCp: one step's cp groups place every micro-batch exactly once on disjoint GPUs,
never slower than any static cp degree that fits, never faster than its lower bound; a micro-batch
too long for one GPU gets a degree that holds it; bad arguments name themselves."""

import math

import pytest

import tessera


def _check(decision, microbatches, gpus):
    placed = sorted(m for g in decision["groups"] for m in g["microbatches"])
    assert placed == list(range(len(microbatches)))
    owned = [gpu for g in decision["groups"] for gpu in range(g["first_gpu"], g["first_gpu"] + g["cp"])]
    assert len(owned) == len(set(owned)) and all(0 <= gpu < gpus for gpu in owned)
    assert decision["step_time_s"] == pytest.approx(max(g["time_s"] for g in decision["groups"]))
    for t in decision["static_time_s"].values():
        if t is not None:
            assert decision["step_time_s"] <= t * (1 + 1e-9)
    assert decision["lower_bound_s"] <= decision["step_time_s"] * (1 + 1e-9)


def test_long_video_with_captions():
    planner = tessera.PerBatchCp(32)
    assert 6 in planner.degrees and 16 in planner.degrees
    microbatches = [[120_000]] + [[900] * 8 for _ in range(30)]
    decision = planner.decide(microbatches)
    _check(decision, microbatches, 32)
    video_group = next(g for g in decision["groups"] if 0 in g["microbatches"])
    assert video_group["cp"] >= math.ceil(120_000 / planner.max_tokens_per_gpu)  # the memory minimum
    assert decision["static_time_s"][1] is None  # a 120K video does not fit one GPU
    # The captions run on other, smaller groups than the video's (a heterogeneous step).
    assert decision["static_cp"] == 0
    assert any(g["cp"] < video_group["cp"] and g["microbatches"] for g in decision["groups"])


def test_captions_only_match_or_beat_cp1():
    planner = tessera.PerBatchCp(8)
    microbatches = [8000, [4000, 4000], [2000] * 4, 7000, 6500, 8100, 3000, 5000, 7900]
    decision = planner.decide(microbatches)
    _check(decision, microbatches, 8)
    assert decision["step_time_s"] <= decision["static_time_s"][1] * (1 + 1e-9)


def test_bad_arguments_name_themselves():
    with pytest.raises(tessera.TesseraError, match="gpus"):
        tessera.PerBatchCp(12)  # not whole nodes of 8
    with pytest.raises(tessera.ArgumentTypeError, match="gpus"):
        tessera.PerBatchCp(True)
    planner = tessera.PerBatchCp(8)
    with pytest.raises(tessera.TesseraError, match=r"microbatches\[1\]"):
        planner.decide([100, [-5]])
    with pytest.raises(tessera.TesseraError, match="gpus"):
        planner.decide([[10_000_000]])  # more than 8 GPUs' memory
