#include "export/deepspeed_rules.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "export/deepspeed_config.h"
#include "formats/plan_text.h"

namespace tessera {
namespace {

using json = nlohmann::json;

std::set<std::string> fired_deepspeed_rules(const json& config, const DeepSpeedTopology& topology) {
  std::set<std::string> ids;
  for (const DeepSpeedRule* r : deepspeed_violations(config, topology)) ids.insert(r->id);
  return ids;
}

struct DeepSpeedRulesExport {
  json config;
  DeepSpeedTopology topology;
};

// A ZeRO-3 plan with the optimizer on the CPU and full recompute, as exported.
DeepSpeedRulesExport zero3_offload() {
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:16");
  const PlanRequest r = load_plan("tp=1,pp=1,mb=1,gbs=64,seq=4096,zero=3,recompute=full,offload_optimizer=cpu,framework=deepspeed",
                                  model, cluster);
  return {deepspeed_config(model, r.plan, r.workload, cluster), {r.plan.dp, r.plan.pp, true}};
}

// One broken config per rule, each caught; every rule of the table has one.
TEST(DeepSpeedRules, EachRuleFiresOnAConfigThatBreaksIt) {
  const DeepSpeedRulesExport e = zero3_offload();
  const json base = e.config;
  const DeepSpeedTopology t = e.topology;
  ASSERT_TRUE(fired_deepspeed_rules(base, t).empty());
  struct Case {
    const char* id;
    json config;
    DeepSpeedTopology topology;
  };
  auto edit = [&](auto change) {
    json c = base;
    change(c);
    return c;
  };
  const json nvme = {{"device", "nvme"}, {"nvme_path", "/local_nvme"}};
  const std::vector<Case> cases = {
      {"ds-batch-given", edit([](json& c) { c.erase("train_batch_size"), c.erase("train_micro_batch_size_per_gpu"); }), t},
      {"ds-batch-positive", edit([](json& c) { c["train_micro_batch_size_per_gpu"] = 0; }), t},
      {"ds-batch-product", edit([](json& c) { c["gradient_accumulation_steps"] = 3; }), t},
      {"ds-bf16-fp16-exclusive", edit([](json& c) { c["fp16"] = {{"enabled", true}}; }), t},
      {"ds-bf16-device", base, {t.dp, t.pp, false}},
      {"ds-zero-stage", edit([](json& c) { c["zero_optimization"]["stage"] = 4; }), t},
      {"ds-pipeline-zero", base, {t.dp, 2, true}},
      {"ds-zero-needs-optimizer", edit([](json& c) { c["zero_optimization"] = {{"stage", 1}}, c.erase("optimizer"); }), t},
      {"ds-offload-device", edit([](json& c) { c["zero_optimization"]["offload_optimizer"]["device"] = "disk"; }), t},
      {"ds-offload-optimizer-needs-zero", edit([](json& c) { c["zero_optimization"] = {{"stage", 0}, {"offload_optimizer", {{"device", "cpu"}}}}; }), t},
      {"ds-offload-param-stage3", edit([](json& c) { c["zero_optimization"] = {{"stage", 2}, {"offload_param", {{"device", "cpu"}}}}; }), t},
      {"ds-nvme-optimizer-stage3", edit([&](json& c) { c["zero_optimization"] = {{"stage", 2}, {"offload_optimizer", nvme}}; }), t},
      {"ds-nvme-optimizer-path", edit([](json& c) { c["zero_optimization"]["offload_optimizer"] = {{"device", "nvme"}}; }), t},
      {"ds-nvme-param-path", edit([](json& c) { c["zero_optimization"]["offload_param"] = {{"device", "nvme"}}; }), t},
      {"ds-partial-offload-stage3",
       edit([](json& c) { c["zero_optimization"] = {{"stage", 2}, {"offload_optimizer", {{"device", "cpu"}, {"ratio", 0.5}}}}; }), t},
      {"ds-contiguous-needs-partition",
       edit([](json& c) { c["activation_checkpointing"]["contiguous_memory_optimization"] = true, c["activation_checkpointing"]["number_checkpoints"] = 32; }), t},
      {"ds-contiguous-needs-count",
       edit([](json& c) { c["activation_checkpointing"]["contiguous_memory_optimization"] = true, c["activation_checkpointing"]["partition_activations"] = true; }), t},
      {"ds-optimizer-supported", edit([](json& c) { c["optimizer"]["type"] = "SuperAdam"; }), t},
      {"ds-no-max-grad-norm", edit([](json& c) { c["optimizer"]["params"]["max_grad_norm"] = 1.0; }), t},
      {"ds-known-keys", edit([](json& c) { c["zero_optimization"]["stage3_prefetch_bucket"] = 1; }), t},
      {"ds-field-types", edit([](json& c) { c["zero_optimization"]["stage"] = "3"; }), t},
      {"ds-field-bounds", edit([](json& c) { c["zero_optimization"]["reduce_bucket_size"] = -1; }), t},
  };
  std::set<std::string> covered;
  for (const Case& k : cases) {
    const auto ids = fired_deepspeed_rules(k.config, k.topology);
    EXPECT_TRUE(ids.count(k.id)) << k.id << " did not fire";
    covered.insert(k.id);
  }
  for (const DeepSpeedRule& r : deepspeed_rules()) EXPECT_TRUE(covered.count(r.id)) << "no firing case for " << r.id;
}

TEST(DeepSpeedRules, EveryRuleNamesItsSourceAndMessage) {
  std::set<std::string> ids;
  for (const DeepSpeedRule& r : deepspeed_rules()) {
    EXPECT_TRUE(ids.insert(r.id).second) << "duplicate id " << r.id;
    EXPECT_EQ(std::string(r.source).rfind("deepspeed/", 0), 0u) << r.id;
    EXPECT_FALSE(std::string(r.message).empty()) << r.id;
  }
}

// The reader never throws: wrong types, a non-object config and unknown keys become findings.
TEST(DeepSpeedRules, ReaderTurnsBadShapesIntoFindings) {
  EXPECT_FALSE(parse_deepspeed_config(json::array()).type_errors.empty());
  const auto v = parse_deepspeed_config(json{{"zero_optimization", 3}, {"bf16", {{"enabled", "yes"}, {"fast", true}}}});
  EXPECT_EQ(v.type_errors, (std::vector<std::string>{"bf16.enabled", "zero_optimization"}));
  EXPECT_EQ(v.unknown_keys, std::vector<std::string>{"bf16.fast"});
  // stage3_* aliases and field names are both accepted (populate_by_name).
  const auto a = parse_deepspeed_config(json{{"zero_optimization", {{"stage", 3}, {"prefetch_bucket_size", 1}, {"stage3_max_live_parameters", 2}}}});
  EXPECT_TRUE(a.unknown_keys.empty());
  EXPECT_EQ(a.stage, 3);
}

}  // namespace
}  // namespace tessera
