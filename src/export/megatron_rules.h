// Megatron-LM's argument rules as one table: what `pretrain_gpt.py` refuses (an assert or a
// ValueError in parse_args + validate_args, TransformerConfig.__post_init__, the pipeline layout
// parser, the model builders). Each rule names the source it restates, at Megatron-LM commit
// d98e8a64 (2026-08-22). Every Megatron export is checked against the table before it is returned.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera {

// The Megatron-LM source files (d98e8a64) that most rules come from, named beside each rule.
namespace megatron_source {
inline constexpr const char* kArgs = "megatron/training/arguments.py validate_args";
inline constexpr const char* kConfig = "megatron/core/transformer/transformer_config.py TransformerConfig.__post_init__";
}  // namespace megatron_source

// An argument list as Megatron's argparse sees it: `--flag v1 v2 ...` (a switch has no values),
// plus the environment the launch script exports (CUDA_DEVICE_MAX_CONNECTIONS is read by
// validate_args). Accessors fall back to Megatron's argparse default when a flag is absent.
class MegatronArgs {
 public:
  MegatronArgs(const std::vector<std::string>& args, std::map<std::string, std::string> env);

  bool has(const std::string& flag) const { return values_.count(flag) > 0; }
  std::string text(const std::string& flag, const std::string& fallback) const;
  std::int64_t integer(const std::string& flag, std::int64_t fallback) const;
  double number(const std::string& flag, double fallback) const;
  const std::vector<std::string>& values(const std::string& flag) const;
  std::string env(const std::string& name) const;

  // Derived as validate_args derives them.
  std::int64_t tp() const { return integer("--tensor-model-parallel-size", 1); }
  std::int64_t pp() const { return integer("--pipeline-model-parallel-size", 1); }
  std::int64_t cp() const { return integer("--context-parallel-size", 1); }
  std::int64_t ep() const { return integer("--expert-model-parallel-size", 1); }
  std::int64_t etp() const { return integer("--expert-tensor-parallel-size", tp()); }
  std::int64_t layers() const { return integer("--num-layers", 0); }
  std::int64_t experts() const { return integer("--num-experts", 0); }
  // Virtual stages per pipeline rank (1 = not interleaved), from whichever flag sets it.
  std::int64_t vpp() const;
  bool megatron_fsdp() const { return has("--use-megatron-fsdp"); }
  bool torch_fsdp2() const { return has("--use-torch-fsdp2"); }
  bool distributed_optimizer() const;
  std::vector<std::string> recompute_modules() const;

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::map<std::string, std::string> env_;
};

struct MegatronRule {
  const char* id;
  const char* source;  // file and function at d98e8a64
  bool (*violated)(const MegatronArgs&);
  const char* message;
};

struct RuleViolation {
  std::string id;
  std::string source;
  std::string message;
};

// Every rule, the offload rules included.
const std::vector<MegatronRule>& megatron_rules();
// `rules` with Megatron's offload rules after them (export/megatron_offload_rules.cpp: optimizer
// CPU offload, activation CPU offloading); megatron_rules() builds its table with it.
std::vector<MegatronRule> with_offload_rules(std::vector<MegatronRule> rules);

std::vector<RuleViolation> check_megatron_args(const std::vector<std::string>& args,
                                               const std::map<std::string, std::string>& env = {});

// Megatron's --pipeline-model-parallel-layout grammar (pipeline_parallel_layer_layout.py
// parse_str_to_list): stages split by '|', 'E' embedding, 't' transformer layer, 'm' MTP layer,
// 'L' loss, "(...)*n" and "x*n" repeat, ',' is cosmetic. Returns each virtual stage's letters in
// order (virtual stage k sits on pipeline rank k % pp). Throws Error on letters outside "EtmL".
std::vector<std::string> megatron_layout_stages(const std::string& layout);

}  // namespace tessera
