"""Every `--json` document's keys are exactly the ones README.md documents for it (the schemas below
transcribe the README's key lists, section by section; a key the binary adds or drops fails until
both agree); the text tables print the JSON's figures; the figures obey their closed forms
(validate's summary is the statistics of its rows, a 1F1B makespan is (m + p - 1)(f + b), a
policy's "vs optimum" is its time over the optimum's)."""
import functools
import json
import os
import pathlib
import re
import statistics
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
BINARY = os.environ.get("TESSERA_BINARY", str(ROOT / "build" / "bin" / "tessera"))
TIMEOUT_S = 120


class Optional:
    """A key present only in some documents (README says when)."""
    def __init__(self, schema=None):
        self.schema = schema


def keys(*names):
    return {name: None for name in names}


# README "Plan": the plan JSON keys (every estimate and plan document prints all of them).
PLAN = keys("tp", "pp", "dp", "cp", "ep", "vpp", "mb", "gbs", "seq", "recompute", "recompute_layers", "sp", "zero",
            "precision", "overlap_grad", "overlap_param", "overlap_tp", "overlap_p2p", "p2p_sg", "flash",
            "first_stage_layers", "last_stage_layers", "account_embedding", "account_loss", "etp", "dispatcher", "capacity_factor", "force_balance",
            "overlap_ep", "delay_wgrad", "fp8_recipe", "fp8_param_gather", "recompute_modules", "reshard",
            "framework", "offload_optimizer", "offload_params", "offload_activations", "task", "lora_rank",
            "lora_targets")
# README "tessera estimate" --json.
BREAKDOWN = keys("compute_s", "recompute_s", "tp_comm_s", "cp_comm_s", "ep_comm_s", "pp_comm_s", "bubble_s",
                 "dp_comm_s", "optimizer_s", "offload_s")
MEMORY = keys("stage", "weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "logits_gib",
              "buffers_gib", "framework_gib")
CONFIDENCE = dict(keys("validated", "class", "description", "runs", "sources", "median_error_pct", "p90_error_pct",
                       "median_time_error_pct", "out_of_sample", "extrapolations"),
                  memory=dict(keys("measured", "margin_pct", "margin_gib", "margin_inside_error"), runs=Optional(),
                              sources=Optional(), median_error_pct=Optional(), max_error_pct=Optional()))
ESTIMATE_FIGURES = dict(keys("iteration_time_s", "tokens_per_s", "mfu", "hfu", "mfu_fp8_peak", "model_tflops_per_gpu",
                             "hardware_tflops_per_gpu", "model_flops", "hardware_flops", "peak_memory_gib",
                             "usable_memory_gib", "fits", "fits_gpu"), breakdown=BREAKDOWN, memory=MEMORY,
                        offloaded=keys("host_gib_per_node", "host_capacity_gib_per_node", "nvme_tb_per_node",
                                       "nvme_capacity_tb_per_node"))
# stage_memory: every stage's memory (issue 16: the report's per-stage bars).
ESTIMATE = dict(ESTIMATE_FIGURES, schema_version=None, model=None, cluster=keys("gpu", "gpus", "gpus_per_node"),
                plan=PLAN, confidence=CONFIDENCE, stage_memory=[dict(MEMORY, total_gib=None)])
# README "tessera plan" --json; min_peak_memory_gib only when no plan fits, megatron_error only
# with megatron_args null.
PLAN_ENTRY = dict(keys("iteration_time_s", "mfu", "tokens_per_s", "peak_memory_gib", "fits", "megatron_args",
                       "cross_node_groups"), plan=PLAN, estimate=ESTIMATE_FIGURES, confidence=CONFIDENCE,
                  megatron_error=Optional())
PLAN_SEARCH = dict(keys("schema_version", "evaluated", "feasible", "search_time_s", "plans_per_s",
                        "memory_limit_gib", "headroom_gib", "aliases", "why"),
                   offload_steps=[keys("optimizer", "params", "activations", "min_peak_gib", "fits", "pinned")],
                   plans=[PLAN_ENTRY], min_peak_memory_gib=Optional())
# README "tessera validate" --json.
VALIDATE = dict(schema_version=None,
                rows=[dict(keys("id", "metric", "measured", "predicted", "error_pct", "measured_time_s",
                                "predicted_time_s", "class", "fits", "assumed", "plan"), estimate=ESTIMATE_FIGURES)],
                skipped=[keys("id", "reason")],
                # mean_model_gpus_spearman, model_gpus_groups: printed but not yet in the README's list.
                summary=dict(keys("n", "median_abs_error_pct", "p90_abs_error_pct", "max_abs_error_pct",
                                  "mean_group_spearman", "spearman_groups", "mean_model_gpus_spearman",
                                  "model_gpus_groups"),
                             classes=[keys("class", "n", "median_abs_error_pct", "p90_abs_error_pct",
                                           "max_abs_error_pct")]))
# README "tessera simulate" --json (ops only with --ops).
SIMULATE = dict(keys("schema_version", "schedule", "num_stages", "microbatches", "vpp", "makespan",
                     "pipeline_makespan", "bubble_fraction", "critical_path_ops"),
                stages=[keys("stage", "busy", "idle", "bubble_fraction", "peak_inflight")],
                ops=Optional([keys("stage", "chunk", "microbatch", "kind", "start", "end")]))
# README "tessera balance" --json.
BALANCE = dict(keys("schema_version", "source", "method", "dp", "microbatches", "max_tokens", "steps", "seed",
                    "model", "gpu", "imbalance", "lower_bound", "random_imbalance", "n_in", "n_assigned",
                    "n_carried", "mean_delay_steps", "max_delay_steps", "outlier_queues", "step_time_s", "time_ms"),
               modules={"backbone": keys("imbalance", "lower_bound", "random_imbalance")})
# README "GPU file": `tessera gpus --json` prints the GPU-file format.
GPU = keys("key", "name", "family", "source", "aliases", "bf16_tflops", "fp8_tflops", "mxfp8", "hbm_gib",
           "usable_memory_gib", "hbm_tbps", "nvlink_gbps", "gpus_per_node", "network_gbps_per_gpu", "gemm_efficiency",
           "fp8_gemm_efficiency", "gemm_half_dim", "attention_efficiency", "attention_half_seq", "attention_half_tiles",
           "attention_half_head_dim",
           "hbm_efficiency", "nvlink_efficiency",
           "network_efficiency", "kernel_overhead_s", "host_op_dispatch_s", "nvlink_latency_s", "network_latency_s",
           "all_to_all_efficiency", "moe_dispatch_efficiency", "host_overlap_exponent", "memory_reserve_gib")
GPU["host"] = keys("memory_gib", "link_gbps", "nvme_tb", "nvme_gbps", "cpu_adam_gparams_per_s", "source")
GPUS = dict(schema_version=None, gpus=[GPU])
# README "Model JSON": `tessera models --json` prints each zoo model in that format (every key, with
# its default), plus its exact parameter counts; README "tessera models" lists the multimodal ones.
MOE = keys("experts", "top_k", "expert_ffn_hidden", "shared_experts", "dense_layers", "router_bias", "layer_freq",
           "scoring", "groups", "topk_groups", "aux_loss_coeff", "sequence_aux_loss", "topk_scaling")
MLA = keys("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
ROPE_SCALING = {key: Optional() for key in ("type", "factor", "original_max_positions", "low_freq_factor",
                                            "high_freq_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim")}
MODEL = dict(keys("name", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "head_dim", "vocab", "max_context",
                  "mlp", "attention", "norm", "position", "tied_embeddings", "linear_bias", "qkv_bias",
                  "embedding_norm", "attention_sinks", "dropout", "sliding_window", "qk_norm", "mtp_layers",
                  "rope_base", "norm_eps", "swa_global_every", "glu_quick_gelu", "glu_linear_offset", "glu_clamp",
                  "attention_logit_softcap", "final_logit_softcap", "query_pre_attn_scalar", "params",
                  "active_params"),
             moe=Optional(MOE), mla=Optional(MLA), rope_scaling=Optional(ROPE_SCALING), source=Optional(),
             notes=Optional())
MODELS = dict(schema_version=None, models=[MODEL],
              multimodal=[dict(keys("name", "params"), modules=[keys("name", "role", "params", "trainable")])])
# README "tessera adapt simulate" --json; the scenario in the scenario-file format plus its description.
# windows, long_windows: added with issue 13 (bounded work per decision), not yet in the README's list.
POLICY = keys("time_to_target_s", "vs_offline_optimum_pct", "schedule", "consumed_tokens", "steps", "batch_changes",
              "plan_changes", "reconfiguration_s", "windows", "long_windows", "segments")
SCENARIO = keys("name", "description", "seq_len", "token_budget", "reference_batch", "min_batch", "max_batch",
                "noise_scale", "network_bandwidth_scale", "step_time_scale", "step_time_jitter",
                "gradient_noise_dimension", "seed")
# gain_over_fixed, conclusion: added with issue 15 (the gain split into batch and plan, in words).
GAIN = keys("total_s", "total_pct", "from_batch_s", "from_batch_pct", "from_plan_s", "from_plan_pct",
            "offline_optimum_s", "offline_optimum_pct", "worthwhile")
ADAPT = dict(keys("schema_version", "model", "cluster", "candidates", "best_static_in_hindsight", "conclusion"),
             gain_over_fixed=GAIN,
             scenario=SCENARIO, reconfiguration=keys("batch_change_s", "plan_change_s", "checkpoint_bytes"),
             policies={name: POLICY for name in ("fixed", "batch-only", "plan-only", "coadaptive")},
             offline_optimum=POLICY)
# README "Multimodal models" --json.
STRATEGY = dict(keys("strategy", "plan", "iteration_time_s", "mfu", "tokens_per_s", "samples_per_s",
                     "peak_memory_gib", "fits", "gpus_used", "gpus_idle", "megatron_args"),
                modules=[keys("name", "role", "gpus", "plan", "busy_s")])
# colocated, runner_up, margin_over_runner_up: added with issue 17 (the colocated strategy).
COLOCATED = dict(keys("strategy", "plan", "iteration_time_s", "mfu", "tokens_per_s", "samples_per_s",
                      "peak_memory_gib", "fits", "gpus_used", "gpus_idle", "megatron_args", "module_phases_s",
                      "boundary_s"),
                 modules=[keys("name", "role", "gpus", "plan", "busy_s", "own_layout")])
MULTIMODAL = dict(keys("schema_version", "model", "data", "cluster", "global_batch", "sequence_tokens",
                       "samples_per_step", "media_token_fraction", "evaluated", "feasible", "simulated",
                       "search_time_s", "backbone_only_mfu", "speedup_over_monolithic", "recommended", "runner_up",
                       "margin_over_runner_up"),
                  plans=[STRATEGY], baseline_monolithic=STRATEGY, recommended_plan=STRATEGY, colocated=COLOCATED,
                  on_fewer_gpus=Optional(dict(keys("gpus", "backbone_only_mfu", "speedup_over_monolithic"),
                                              baseline_monolithic=STRATEGY)))

# README "Pipelines across pools": a plan on a cluster of several pools (issue 17).
CROSS_POOL = dict(keys("iteration_time_s", "tokens_per_s", "mfu", "dp", "micro_batch", "recompute", "zero",
                       "pipeline_s", "bubble_s", "dp_sync_s", "tail_s", "boundary_p2p_s", "evaluated", "simulated"),
                  segments=[keys("pool", "gpu", "tp", "stages", "layers", "precision")],
                  stages=[keys("pool", "gpu", "tp", "first_layer", "layers", "forward_s", "backward_s", "dp_sync_s",
                               "peak_memory_gib", "usable_memory_gib", "fits")],
                  rank_layout=dict(keys("kind", "schema_version", "world_size", "rank_order", "dp", "micro_batch"),
                                   stages=[keys("stage", "pool", "gpu", "tp", "first_layer", "layers", "embedding",
                                                "output_head", "first_rank", "replicas", "precision", "recompute",
                                                "recompute_layers", "zero", "sequence_parallel")]),
                  confidence=CONFIDENCE)
MIXED = dict(keys("schema_version", "strategy", "iteration_time_s", "tokens_per_s", "replica_time_s",
                  "cross_pool_sync_s", "cross_pool_must_beat_s", "left_out", "speedup_over_best_single_pool",
                  "speedup_over_whole_replicas", "search_time_s"),
             pools=[dict(keys("pool", "gpu", "gpus", "global_batch", "plan", "iteration_time_s", "peak_memory_gib",
                              "megatron_args"), confidence=CONFIDENCE)],
             cross_pool=CROSS_POOL, best_single_pool=keys("pool", "gpu", "iteration_time_s"))
# README "Per-batch context parallelism" (issue 17).
PER_BATCH_CP = dict(keys("schema_version", "kind", "mixes", "mix_per_sequence", "gpus", "gpus_per_node", "steps",
                         "step_tokens", "seed", "model", "gpu", "recompute", "max_tokens_per_gpu", "microbatches",
                         "samples", "tokens", "best_static_cp", "static_time_s", "per_batch_time_s",
                         "lower_bound_time_s", "static_tokens_per_s", "per_batch_tokens_per_s", "gain", "gain_bound",
                         "heterogeneous_steps", "microbatches_at_cp"),
                    static=[keys("cp", "time_s")], decision_ms=keys("mean", "p99", "max"))
# README "Measured links and plan --compare-profile" (issue 17), on a mixed cluster.
LINKS = dict(keys("inter_pool_gbps", "inter_pool_latency_us"),
             pools=[keys("pool", "gpu", "gpus", "intra_node_gbps", "intra_node_latency_us", "inter_node_gbps",
                         "inter_node_latency_us")])
COMPARED_MIXED = keys("strategy", "iteration_time_s", "pools", "cross_pool", "left_out")
COMPARE_PROFILE = dict(keys("schema_version", "model", "cluster_kind", "recommendation_changed"),
                       workload=keys("global_batch", "seq_len"), old_conditions=dict(keys("profile"), links=LINKS),
                       current_conditions=dict(keys("profile", "link_flags"), links=LINKS),
                       old_best=COMPARED_MIXED, new_best=COMPARED_MIXED, old_plan_now=keys("iteration_time_s", "fits"),
                       cost_of_keeping_old_plan=keys("per_step_s", "percent", "per_1000_steps_s"))


def expect_schema(doc, schema, path="$"):
    """`doc` has exactly the keys of `schema`, recursively (a list schema checks every element)."""
    if schema is None:
        return
    if isinstance(schema, list):
        assert isinstance(doc, list), path
        for i, item in enumerate(doc):
            expect_schema(item, schema[0], "%s[%d]" % (path, i))
        return
    assert isinstance(doc, dict), "%s is not an object" % path
    required = {k for k, v in schema.items() if not isinstance(v, Optional)}
    missing = sorted(required - doc.keys())
    undocumented = sorted(doc.keys() - schema.keys())
    assert not missing and not undocumented, "%s: missing %s, undocumented %s" % (path, missing, undocumented)
    for key, value in doc.items():
        sub = schema[key]
        expect_schema(value, sub.schema if isinstance(sub, Optional) else sub, "%s.%s" % (path, key))


@functools.lru_cache(maxsize=None)
def run_text(*args):
    out = subprocess.run([BINARY, *args], check=True, capture_output=True, text=True, timeout=TIMEOUT_S)
    # Nothing on stderr but the defaults a command states (cli/subcommands.h DefaultNote).
    assert all(line.startswith("note: ") and " not given: " in line for line in out.stderr.splitlines()), out.stderr
    return out.stdout


def run_json(*args):
    return json.loads(run_text(*args, "--json"))  # callers must not modify the document (cached text, fresh parse)


# The first rows of ../shared/validation/public_runs.csv (SC'21 Table 1), so the test needs no ../shared.
VALIDATION_CSV = """\
id,source,model_name,n_layers,hidden,ffn_hidden,n_heads,n_kv_heads,head_dim,vocab,seq_len,mlp,n_experts,top_k,\
moe_ffn_hidden,n_shared_experts,n_dense_layers,attention,gpu,n_gpus,gpus_per_node,inter_node_gbps,tp,pp,dp,cp,ep,vpp,\
micro_batch,global_batch,sequence_parallel,recompute,dist_optimizer,precision,measured_metric,measured_value,\
mfu_convention,confidence,notes
sc21-t1-1.7b,https://arxiv.org/abs/2104.04473,GPT-1.7B,24,2304,9216,24,24,,51200,2048,gelu,,,,,,mha,a100-sxm-80gb,\
32,8,200,1,1,32,1,1,,16,512,no,full,none,bf16,tflops_per_gpu_megatron,137,,paper,Table 1
sc21-t1-3.6b,https://arxiv.org/abs/2104.04473,GPT-3.6B,30,3072,12288,32,32,,51200,2048,gelu,,,,,,mha,a100-sxm-80gb,\
64,8,200,2,1,32,1,1,,16,512,no,full,none,bf16,tflops_per_gpu_megatron,138,,paper,Table 1
sc21-t1-7.5b,https://arxiv.org/abs/2104.04473,GPT-7.5B,36,4096,16384,32,32,,51200,2048,gelu,,,,,,mha,a100-sxm-80gb,\
128,8,200,4,1,32,1,1,,16,512,no,full,none,bf16,tflops_per_gpu_megatron,142,,paper,Table 1
"""


@pytest.fixture(scope="module")
def validation(tmp_path_factory):
    path = tmp_path_factory.mktemp("validate") / "runs.csv"
    path.write_text(VALIDATION_CSV)
    return run_json("validate", str(path))


CASES = {
    "estimate": (ESTIMATE, ["estimate"]),
    "plan": (PLAN_SEARCH, ["plan", "--model", "llama3-8b", "--cluster", "h100-sxm-80gb:16", "--gbs", "64", "--seq",
                           "4096", "--quiet", "--top", "3"]),
    "plan-nothing-fits": (PLAN_SEARCH, ["plan", "--model", "llama3.1-405b", "--cluster", "h100-sxm-80gb:8", "--gbs",
                                        "8", "--seq", "8192", "--quiet"]),
    "plan-without-megatron": (PLAN_SEARCH, ["plan", "--model", "bloom-176b", "--cluster", "a100-sxm-80gb:64", "--gbs",
                                            "64", "--seq", "2048", "--quiet", "--top", "1"]),
    "simulate": (SIMULATE, ["simulate", "--schedule", "interleaved", "--stages", "2", "--microbatches", "4", "--vpp",
                            "2", "--fwd", "1", "--bwd", "2", "--ops"]),
    "balance": (BALANCE, ["balance", "--synthetic", "wlb-like", "--dp", "2", "--microbatches", "2", "--max-tokens",
                          "131072", "--steps", "3"]),
    "gpus": (GPUS, ["gpus"]),
    "models": (MODELS, ["models"]),
    "adapt": (ADAPT, ["adapt", "simulate", "--model", "llama3-8b", "--cluster", "h100-sxm-80gb:8", "--scenario",
                      "warmup"]),
    "multimodal": (MULTIMODAL, ["plan", "--model", "llava-1.5-7b", "--data", "caption-like", "--cluster",
                                "h100-sxm-80gb:64", "--gbs", "128", "--top", "1"]),
    "plan-mixed": (MIXED, ["plan", "--model", "llama3-8b", "--cluster", "a100-sxm-40gb:8+h100-sxm-80gb:8", "--gbs",
                           "32", "--seq", "4096"]),
    "balance-per-batch-cp": (PER_BATCH_CP, ["balance", "--per-batch-cp", "--mix", "video-like", "--gpus", "8",
                                            "--steps", "20"]),
    "compare-profile": (COMPARE_PROFILE, ["plan", "--model", "llama3-8b", "--cluster",
                                          "a100-sxm-40gb:8+h100-sxm-80gb:8", "--gbs", "32", "--seq", "4096",
                                          "--compare-profile", str(ROOT / "examples/profiles/inter-pool-3200g.json")]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_json_keys_are_the_documented_ones(name):
    schema, args = CASES[name]
    expect_schema(run_json(*args), schema)


def test_the_optional_keys_appear_when_the_readme_says():
    assert "min_peak_memory_gib" in run_json(*CASES["plan-nothing-fits"][1])
    bloom = run_json(*CASES["plan-without-megatron"][1])["plans"][0]  # ALiBi: Megatron-LM cannot express it
    assert bloom["megatron_args"] is None and bloom["megatron_error"]
    assert "ops" not in run_json("simulate", "--schedule", "1f1b", "--stages", "2", "--microbatches", "2",
                                 "--fwd", "1", "--bwd", "1")


def test_validate_json_keys_are_the_documented_ones(validation):
    expect_schema(validation, VALIDATE)


def test_validate_rows_errors_are_predicted_against_measured(validation):
    for row in validation["rows"]:
        assert row["error_pct"] == pytest.approx(100 * (row["predicted"] - row["measured"]) / row["measured"])
        # A throughput metric: the time ratio is the inverse of the metric's.
        assert row["predicted_time_s"] / row["measured_time_s"] == pytest.approx(row["measured"] / row["predicted"])
        assert row["estimate"]["iteration_time_s"] == pytest.approx(row["predicted_time_s"])


def test_validate_summary_is_the_statistics_of_its_rows(validation):
    errors = [abs(row["error_pct"]) for row in validation["rows"]]
    summary = validation["summary"]
    assert summary["n"] == len(errors) == 3
    assert summary["median_abs_error_pct"] == pytest.approx(statistics.median(errors))
    assert summary["max_abs_error_pct"] == pytest.approx(max(errors))
    assert summary["median_abs_error_pct"] <= summary["p90_abs_error_pct"] <= summary["max_abs_error_pct"]
    (only_class,) = summary["classes"]
    assert (only_class["class"], only_class["n"]) == ("dense-a100", 3)
    for key in ("median_abs_error_pct", "p90_abs_error_pct", "max_abs_error_pct"):
        assert only_class[key] == pytest.approx(summary[key])


def test_plans_are_listed_best_first():
    TIME_TIE_FRACTION = 1e-3  # kTimeTieFraction, search/planner.h: ties are ordered by memory
    plans = run_json(*CASES["plan"][1])["plans"]
    assert len(plans) == 3
    for better, worse in zip(plans, plans[1:]):
        assert better["iteration_time_s"] <= worse["iteration_time_s"] * (1 + TIME_TIE_FRACTION)


SIMULATE_1F1B = ["simulate", "--schedule", "1f1b", "--stages", "4", "--microbatches", "8", "--fwd", "1", "--bwd", "2"]


def test_simulate_table_prints_the_json_and_the_1f1b_closed_form():
    stages, microbatches, fwd, bwd = 4, 8, 1, 2
    j = run_json(*SIMULATE_1F1B)
    assert j["makespan"] == (microbatches + stages - 1) * (fwd + bwd)
    table = run_text(*SIMULATE_1F1B)
    assert re.search(r"^makespan\s+%g$" % j["makespan"], table, re.M), table
    assert re.search(r"^bubble\s+%.1f%%" % (100 * j["bubble_fraction"]), table, re.M), table
    assert re.search(r"^critical path\s+%d operations$" % j["critical_path_ops"], table, re.M), table
    rows = re.findall(r"^\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)%\s+(\d+)$", table, re.M)
    assert len(rows) == stages == len(j["stages"])
    for row, stage in zip(rows, j["stages"]):
        assert int(row[0]) == stage["stage"]
        assert float(row[1]) == stage["busy"] == microbatches * (fwd + bwd)
        assert float(row[2]) == stage["idle"] == j["makespan"] - stage["busy"]
        assert row[3] == "%.1f" % (100 * stage["bubble_fraction"])
        assert int(row[4]) == stage["peak_inflight"] == stages - stage["stage"]  # 1F1B warm-up depth


BALANCE_MLLM = ["balance", "--synthetic", "mllm-like", "--dp", "8", "--microbatches", "2", "--n", "1000"]


def test_balance_table_prints_the_json():
    j = run_json(*BALANCE_MLLM)
    table = run_text(*BALANCE_MLLM)
    assert "imbalance    %.3f   (lower bound %.3f; random assignment %.3f)" % (
        j["imbalance"], j["lower_bound"], j["random_imbalance"]) in table, table
    assert "placed       %d of %d; %d carried over" % (j["n_assigned"], j["n_in"], j["n_carried"]) in table
    assert j["n_assigned"] + j["n_carried"] == j["n_in"] == 1000
    assert "delay        mean %.3f steps, max %d; %d outlier queue" % (
        j["mean_delay_steps"], j["max_delay_steps"], j["outlier_queues"]) in table
    assert set(j["modules"]) == {"backbone", "encoder", "generator"}
    for name, m in j["modules"].items():
        assert re.search(r"^%s\s+%.3f\s+%.3f\s+%.3f$" % (name, m["imbalance"], m["lower_bound"],
                                                         m["random_imbalance"]), table, re.M), name
        assert m["lower_bound"] <= m["imbalance"]


ADAPT_RUN = CASES["adapt"][1]


def test_adapt_figures_are_relative_to_the_optimum_and_the_table_prints_them():
    j = run_json(*ADAPT_RUN)
    table = run_text(*ADAPT_RUN)
    optimum = j["offline_optimum"]["time_to_target_s"]
    fixed = j["policies"]["fixed"]["time_to_target_s"]
    policies = dict(j["policies"], **{"offline optimum": j["offline_optimum"]})
    for name, p in policies.items():
        t = p["time_to_target_s"]
        assert t >= optimum * (1 - 1e-12), name  # the optimum bounds every policy
        assert p["vs_offline_optimum_pct"] == pytest.approx(100 * (t / optimum - 1), abs=1e-9)
        row = re.search(r"^%s\s+(\d+) s \(.*?\)\s+(\S+)%%\s+(\S+)%%\s+(\d+)/(\d+)\s+(\d+) x " % re.escape(name),
                        table, re.M)
        assert row, name + "\n" + table
        assert int(row.group(1)) == round(t)
        assert row.group(2) == "%+.2f" % p["vs_offline_optimum_pct"]
        assert row.group(3) == "%+.2f" % (100 * (t / fixed - 1))
        assert (int(row.group(4)), int(row.group(5))) == (p["batch_changes"], p["plan_changes"])
        assert int(row.group(6)) == p["segments"][-1]["global_batch"]
        assert re.search(r"^  %s\s+%s$" % (re.escape(name), re.escape(p["schedule"])), table, re.M), name


def test_models_table_prints_the_json_parameter_counts():
    table = run_text("models")
    for model in run_json("models")["models"]:
        row = re.search(r"^%s\s+(\S+)\s+(\S+)\s" % re.escape(model["name"]), table, re.M)
        assert row, model["name"]
        assert row.group(1) == "%.2f" % (model["params"] / 1e9)
        assert row.group(2) == "%.2f" % (model["active_params"] / 1e9)
        assert model["active_params"] <= model["params"]
