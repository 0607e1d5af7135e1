// The plan a training log ran: from Megatron-LM's argument dump (through the Megatron argument
// reader, formats/megatron_args.h) or a torchtitan job (export/torchtitan_rules.h), and the check that
// the log's launch arguments agree with the plan the user gave.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "export/torchtitan_rules.h"
#include "formats/plan_text.h"
#include "formats/training_log.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"

namespace tessera {

// The Megatron command-line flags of the dump's plan fields ({"--tensor-model-parallel-size", "2", ...}):
// the flags plan_from_megatron_args reads, "None" and False values left out. Error when the log has no dump.
std::vector<std::string> megatron_args_from_log(const TrainingLog& log);
PlanRequest plan_from_megatron_log(const TrainingLog& log, const ModelSpec& model, const Cluster& cluster);
// The model shape of the dump (num_layers, hidden_size, ffn_hidden_size, num_attention_heads,
// num_query_groups, kv_channels, seq_length, max_position_embeddings, padded_vocab_size, swiglu,
// normalization, untie_embeddings_and_output_weights, num_experts, moe_router_topk,
// moe_ffn_hidden_size, ...), validated. Error naming the missing dump field.
ModelSpec model_from_megatron_log(const TrainingLog& log, const std::string& name);
// GPUs of the run: Megatron's world_size, torchtitan's mesh product. Error when not logged.
std::int64_t log_world_size(const TrainingLog& log);

// A torchtitan job as a plan: dp = dp_replicate x dp_shard (dp_shard -1 = the GPUs left), FSDP2
// (dp_shard > 1) = zero3, mb = tokens per micro-batch / context, gbs = tokens per step / context,
// activation checkpointing None / SelectiveAC / FullAC = recompute none / selective / full.
PlanRequest plan_from_torchtitan_job(const TorchtitanJob& job, const ModelSpec& model, const Cluster& cluster);

// Throws Error("log:<file>:<line>.num_layers", "log says 24, --model has layers 80") when a model
// given on the command line is not the one the log's argument dump describes.
void check_log_matches_model(const TrainingLog& log, const ModelSpec& model, const std::string& model_name = "--model");

// Throws Error("log:<file>:<line>.<argument>", "log says 4, --plan says tp 2") at the first
// launch argument (or logged global batch size) that contradicts the given plan.
void check_log_matches_plan(const TrainingLog& log, const Plan& plan, const Workload& workload,
                            const std::string& plan_name = "--plan");

}  // namespace tessera
