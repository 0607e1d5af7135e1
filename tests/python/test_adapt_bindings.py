"""The goodput-controller bindings from Python: the noise-scale estimators on synthetic gradients
with a known G and Sigma (so a known B_simple = tr(Sigma) / |G|^2), sharded norms, efficiency and
goodput in closed form, the Megatron schedule text both ways, and tessera.Controller built from a
model and a cluster (or from step times) switching to bigger batches as the measured noise grows.
Errors are TesseraError (a ValueError) naming the field."""

import math

import numpy as np
import pytest

import tessera


def synthetic_step(rng, g, sigma_sqrt, big, small):
    """Squared norms of the mean gradient of `big` samples g + noise (covariance sigma_sqrt^2, diagonal)
    and the mean over its big / small micro-batches of their mean gradients' squared norms."""
    samples = g + rng.standard_normal((big, g.size)) * sigma_sqrt
    micro = samples.reshape(big // small, small, g.size).mean(axis=1)
    return float((micro**2).sum(axis=1).mean()), float((samples.mean(axis=0) ** 2).sum())


@pytest.fixture(scope="module")
def known():
    rng = np.random.default_rng(7)
    d = 200
    g = rng.standard_normal(d) * 0.05  # |G|^2 ~ 0.5
    sigma_sqrt = np.sqrt(rng.uniform(0.5, 1.5, d))  # tr(Sigma) ~ 200
    return g, sigma_sqrt, float((sigma_sqrt**2).sum() / (g**2).sum())


def test_unbiased_estimates_average_to_the_truth(known):
    g, sigma_sqrt, _ = known
    rng = np.random.default_rng(1)
    est = []
    for _ in range(1000):
        small, big = synthetic_step(rng, g, sigma_sqrt, 64, 4)
        est.append(tessera.unbiased_noise_estimate(small, 4, big, 64))
    g2 = np.mean([e.gradient_sq_norm for e in est])
    tr = np.mean([e.trace_covariance for e in est])
    assert g2 == pytest.approx(float((g**2).sum()), rel=0.05)
    assert tr == pytest.approx(float((sigma_sqrt**2).sum()), rel=0.05)


def test_gns_estimator_recovers_b_simple(known):
    g, sigma_sqrt, b_simple = known
    rng = np.random.default_rng(2)
    gns = tessera.GnsEstimator(ema_decay=0.99)
    assert not gns.has_noise_scale and gns.steps == 0
    with pytest.raises(tessera.TesseraError, match="noise_scale"):
        gns.noise_scale
    for _ in range(1500):
        small, big = synthetic_step(rng, g, sigma_sqrt, 128, 8)  # 16 micro-batches of 8
        gns.update(small, 8, big, 128)
    assert gns.steps == 1500 and gns.has_noise_scale
    assert 128 < b_simple < 1000  # above the big batch: |G|^2 is a small difference of noisy norms
    assert gns.noise_scale == pytest.approx(b_simple, rel=0.15)
    assert gns.trace_covariance / gns.gradient_sq_norm == pytest.approx(gns.noise_scale, rel=1e-12)


def test_gns_steps_argument_counts_averaged_steps():
    a, b = tessera.GnsEstimator(0.9), tessera.GnsEstimator(0.9)
    for _ in range(3):
        a.update(3.0, 2, 1.5, 32)
    b.update(3.0, 2, 1.5, 32, steps=3)
    assert b.steps == 3
    assert b.noise_scale == pytest.approx(a.noise_scale, rel=1e-12)
    with pytest.raises(ValueError, match="big_batch"):
        a.update(3.0, 32, 1.5, 32)
    with pytest.raises(ValueError, match="ema_decay"):
        tessera.GnsEstimator(1.0)


def test_sharded_norm_counts_replicated_parameters_once():
    # One gradient [a | b | n] with a split over tp=2 ranks, b on both (replicated), n a norm weight.
    pieces = {"a0": 3.0, "a1": 5.0, "b": 2.0, "n": 0.5}
    whole = sum(pieces.values())
    rank0, rank1 = tessera.SquaredNormShare(), tessera.SquaredNormShare()
    rank0.add(pieces["a0"])
    rank1.add(pieces["a1"])
    for r in (rank0, rank1):
        r.add(pieces["b"], replicas=2)
        r.add(pieces["n"], replicas=2)
    assert tessera.model_squared_norm([rank0.value, rank1.value]) == pytest.approx(whole)
    with pytest.raises(ValueError, match="replicas"):
        rank0.add(1.0, replicas=0)


def test_efficiency_and_goodput_closed_form():
    assert tessera.statistical_efficiency(256, 1000, 256) == pytest.approx(1.0)
    assert tessera.statistical_efficiency(1024, 1000, 256) == pytest.approx(1256 / 2024)
    assert tessera.goodput(5e5, 1024, 1000, 256) == pytest.approx(5e5 * 1256 / 2024)
    with pytest.raises(ValueError, match="batch"):
        tessera.statistical_efficiency(0, 1000, 256)


def test_batch_grid_and_schedule_text():
    assert tessera.batch_grid(32, 256) == [32, 48, 64, 96, 128, 192, 256]
    text = tessera.megatron_batch_schedule([(0, 768), (250e9, 1536), (500e9, 3072)])
    assert text == "0:768 250B:1536 500B:3072"
    assert tessera.parse_megatron_batch_schedule(text) == [(0.0, 768), (250e9, 1536), (500e9, 3072)]
    assert tessera.format_count(1.2345e9) == "1230M" and tessera.parse_count("250B") == 250e9
    with pytest.raises(tessera.TesseraError, match="schedule"):
        tessera.parse_megatron_batch_schedule("0:768 100B:0")


def feed(controller, noise_scale, steps, small_batch=2):
    """Norms whose expected values give this noise scale (|G|^2 = 1): E|G_B|^2 = 1 + B_noise / B."""
    big = controller.global_batch
    for _ in range(steps):
        controller.observe_gradients(1 + noise_scale / small_batch, small_batch, 1 + noise_scale / big, big)
        i = controller.current
        controller.observe_step(controller.candidate(i)["predicted_step_time_s"])
        d = controller.decide()
        if d.switch_now:
            controller.switch_to(d.candidate)
            big = controller.global_batch


def test_controller_from_model_and_cluster_raises_the_batch_with_the_noise():
    # GPT-3 175B on 256 H100: pipeline-parallel plans, whose bubble a bigger batch (more micro-batches
    # per step, same plan: a free switch) amortizes; worth it once the noise scale allows.
    c = tessera.Controller("gpt3-175b", "h100-sxm-80gb:256", 2048, 64, 2048, 1e12, min_noise_scale_steps=5,
                           gns_ema_decay=0.5)
    assert c.batches == tessera.batch_grid(64, 2048) and c.model == "gpt3-175b" and c.gpus == 256
    assert c.candidates and all(d["predicted_step_time_s"] > 0 for d in c.candidates)
    assert "pp=" in c.plan and c.seq_len == 2048
    assert c.global_batch == 64 and c.current == c.start_candidate()
    feed(c, 50.0, 20)
    low, plan = c.global_batch, c.plan.split(",gbs=")[0]
    feed(c, 1e6, 40)
    high = c.global_batch
    assert low == 64 and high > low
    assert c.plan.split(",gbs=")[0] == plan  # a batch-only change: no restart
    assert c.noise_scale == pytest.approx(1e6, rel=1e-6)
    schedule = c.batch_schedule()
    assert [t for t, _ in schedule] == sorted(t for t, _ in schedule) and schedule[0] == (0.0, 64)
    assert schedule[-1][1] == high and schedule[-1][0] >= 20 * 64 * 2048  # after the 20 steps at B_noise 50
    assert tessera.parse_megatron_batch_schedule(c.megatron_schedule())[-1][1] == high
    assert c.batch_schedule("samples")[-1][0] == pytest.approx(schedule[-1][0] / 2048)
    d = c.decide()
    assert d.noise_scale == pytest.approx(1e6, rel=1e-6) and d.current_goodput > 0 and not d.switch_now


def test_controller_from_step_times_follows_the_optimum():
    grid = tessera.batch_grid(32, 512)
    fixed, per_sequence = 0.05, 0.001  # goodput peaks at sqrt(fixed / per_sequence * B_noise)
    c = tessera.Controller.from_step_times(16, grid, [fixed + per_sequence * b for b in grid], 1e9, dp=2,
                                           initial_noise_scale=4, min_noise_scale_steps=3, gns_ema_decay=0.5)
    assert c.global_batch == 32 and c.gpus == 2 and c.model == ""
    feed(c, 2000.0, 30)
    best = max(grid, key=lambda b: tessera.goodput(b / (fixed + per_sequence * b), b, 2000.0, 32))
    assert c.global_batch == best  # the grid's goodput optimum, next to sqrt(50 x 2000) on a log scale
    assert best == min(grid, key=lambda b: abs(math.log(b / math.sqrt(50 * 2000))))


def test_controller_errors_name_the_field():
    with pytest.raises(tessera.TesseraError, match="model"):
        tessera.Controller("no-such-model", "h100-sxm-80gb:8", 4096, 64, 512, 1e9)
    with pytest.raises(tessera.TesseraError, match="gpu"):
        tessera.Controller("llama3-8b", "no-gpu:8", 4096, 64, 512, 1e9)
    with pytest.raises(tessera.TesseraError, match="token_budget"):
        tessera.Controller("llama3-8b", "h100-sxm-80gb:8", 4096, 64, 512, 0)
    with pytest.raises(tessera.TesseraError, match="seq_len"):
        tessera.Controller("llama3-8b", "h100-sxm-80gb:8", 10**7, 64, 512, 1e9)
    with pytest.raises(tessera.TesseraError, match="step_time_s"):
        tessera.Controller.from_step_times(16, [32, 64], [0.1], 1e9)
    with pytest.raises(tessera.TesseraError, match="batches"):
        tessera.Controller.from_step_times(16, [64, 32], [0.1, 0.2], 1e9)
    c = tessera.Controller.from_step_times(16, [32, 64], [0.1, 0.2], 1e9)
    with pytest.raises(tessera.TesseraError, match="candidate"):
        c.switch_to(2)
    with pytest.raises(tessera.TesseraError, match="unit"):
        c.megatron_schedule("bytes")


def test_controller_takes_a_model_dict():
    gpt = {"name": "tiny-gpt", "layers": 2, "hidden": 64, "ffn_hidden": 256, "heads": 8, "kv_heads": 8,
           "head_dim": 8, "vocab": 256, "max_context": 64, "mlp": "gelu", "attention": "mha", "norm": "layernorm",
           "position": "learned", "tied_embeddings": True, "linear_bias": True}
    c = tessera.Controller(gpt, "h100-sxm-80gb:2", 64, 32, 128, 1e7, fix="tp=1,pp=1,mb=2")
    assert c.model == "tiny-gpt" and c.batches == [32, 48, 64, 96, 128]
    assert all(",mb=2," in d["plan"] for d in c.candidates)
