#include "report/estimate_report.h"

#include <fmt/core.h>

#include "core/units.h"
#include "evaluation/accuracy_classes.h"
#include "formats/plan_text.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {
double gib(double bytes) { return bytes / units::kGiB; }

// Where offloaded state lives, per node, against the node's capacity (plan/memory_tiers.h).
std::string offloaded_memory_text(const Estimate& e, const Plan& p) {
  if (!p.offload.any_offload()) return "";
  std::string out = fmt::format("offloaded ({} optimizer, {} parameters, {} activations)\n", to_string(p.offload.optimizer),
                                to_string(p.offload.params), to_string(p.offload.activations));
  const bool host_fits = e.host_memory_bytes_per_node <= e.host_capacity_bytes_per_node;
  out += fmt::format("  {:<24}{:10.1f} GiB of {:.0f} per node: {}\n", "host memory", gib(e.host_memory_bytes_per_node),
                     gib(e.host_capacity_bytes_per_node), host_fits ? "fits" : "DOES NOT FIT");
  if (p.offload.uses(MemoryTier::nvme)) {
    const bool nvme_fits = e.nvme_bytes_per_node <= e.nvme_capacity_bytes_per_node;
    out += fmt::format("  {:<24}{:10.2f} TB of {:.1f} per node: {}\n", "NVMe", e.nvme_bytes_per_node / 1e12,
                       e.nvme_capacity_bytes_per_node / 1e12, nvme_fits ? "fits" : "DOES NOT FIT");
  }
  return out;
}
}  // namespace

nlohmann::json estimate_to_json(const Estimate& e) {
  return {
      {"iteration_time_s", e.iteration_time_s},
      {"tokens_per_s", e.tokens_per_s},
      {"mfu", e.mfu},
      {"hfu", e.hfu},
      {"mfu_fp8_peak", e.mfu_fp8_peak > 0 ? nlohmann::json(e.mfu_fp8_peak) : nlohmann::json(nullptr)},
      {"model_tflops_per_gpu", e.model_tflops_per_gpu},
      {"hardware_tflops_per_gpu", e.hardware_tflops_per_gpu},
      {"model_flops", e.model_flops},
      {"hardware_flops", e.hardware_flops},
      {"peak_memory_gib", gib(e.peak_memory_bytes)},
      {"usable_memory_gib", gib(e.usable_memory_bytes)},
      {"fits", e.fits},
      {"breakdown",
       {{"compute_s", e.time.compute_s},
        {"recompute_s", e.time.recompute_s},
        {"tp_comm_s", e.time.tp_comm_s},
        {"cp_comm_s", e.time.cp_comm_s},
        {"ep_comm_s", e.time.ep_comm_s},
        {"pp_comm_s", e.time.pp_comm_s},
        {"bubble_s", e.time.bubble_s},
        {"dp_comm_s", e.time.dp_comm_s},
        {"optimizer_s", e.time.optimizer_s},
        {"offload_s", e.time.offload_s}}},
      {"memory", memory_to_json(e.memory, e.peak_memory_stage)},
      {"fits_gpu", e.fits_gpu},
      {"offloaded",
       {{"host_gib_per_node", gib(e.host_memory_bytes_per_node)},
        {"host_capacity_gib_per_node", gib(e.host_capacity_bytes_per_node)},
        {"nvme_tb_per_node", e.nvme_bytes_per_node / 1e12},
        {"nvme_capacity_tb_per_node", e.nvme_capacity_bytes_per_node / 1e12}}},
  };
}

nlohmann::json memory_to_json(const MemoryBreakdown& m, int stage) {
  return {{"stage", stage},
          {"weights_gib", gib(m.weights_bytes)},
          {"gradients_gib", gib(m.gradients_bytes)},
          {"optimizer_gib", gib(m.optimizer_bytes)},
          {"activations_gib", gib(m.activations_bytes)},
          {"logits_gib", gib(m.logits_bytes)},
          {"buffers_gib", gib(m.buffers_bytes)},
          {"framework_gib", gib(m.framework_bytes)}};
}

nlohmann::json stage_memories_to_json(const std::vector<MemoryBreakdown>& stages) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t s = 0; s < stages.size(); ++s) {
    nlohmann::json j = memory_to_json(stages[s], static_cast<int>(s));
    j["total_gib"] = gib(stages[s].total());
    out.push_back(std::move(j));
  }
  return out;
}

nlohmann::json estimate_to_json(const Estimate& e, const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                const Workload& workload) {
  nlohmann::json j = estimate_to_json(e);
  j["confidence"] = confidence_to_json(estimate_confidence(model, cluster, plan, workload, &e));
  return j;
}

std::string estimate_to_table(const Estimate& e, const ModelSpec& m, const Cluster& c,
                              const Plan& p, const Workload& w) {
  std::string out;
  const double t = e.iteration_time_s;
  const auto pct = [t](double part) { return t > 0 ? 100.0 * part / t : 0.0; };
  out += fmt::format("model    {} ({:.1f}B params)\n", m.name, count_parameters(m).total() / 1e9);
  out += fmt::format("cluster  {} x {} ({} nodes x {})\n", c.gpus(), c.gpu.key, c.nodes, c.gpus_per_node);
  out += fmt::format("plan     {}\n\n", plan_to_shorthand(p, w));
  out += fmt::format("iteration time   {:10.3f} s\n", t);
  out += fmt::format("tokens/s         {:10.0f}   ({:.0f} per GPU)\n", e.tokens_per_s,
                     e.tokens_per_s / static_cast<double>(c.gpus()));
  out += fmt::format("model TFLOP/s    {:10.1f}   per GPU   MFU {:5.1f}% of the 16-bit peak", e.model_tflops_per_gpu,
                     100 * e.mfu);
  out += e.mfu_fp8_peak > 0 ? fmt::format(" ({:.1f}% of the FP8 peak)\n", 100 * e.mfu_fp8_peak) : std::string("\n");
  out += fmt::format("hardware TFLOP/s {:10.1f}   per GPU   HFU {:5.1f}%\n\n", e.hardware_tflops_per_gpu, 100 * e.hfu);
  out += "time breakdown (critical path)\n";
  const std::pair<const char*, double> rows[] = {
      {"compute", e.time.compute_s},      {"  of which recompute", e.time.recompute_s},
      {"tensor-parallel comm", e.time.tp_comm_s}, {"context-parallel comm", e.time.cp_comm_s},
      {"expert-parallel comm", e.time.ep_comm_s}, {"pipeline p2p", e.time.pp_comm_s},
      {"pipeline bubble", e.time.bubble_s},       {"data-parallel comm", e.time.dp_comm_s},
      {"optimizer step", e.time.optimizer_s}};
  for (const auto& [name, value] : rows)
    out += fmt::format("  {:<24}{:10.3f} s {:6.1f}%\n", name, value, pct(value));
  if (p.offload.any_offload())
    out += fmt::format("  {:<24}{:10.3f} s {:6.1f}%\n", "offload copies", e.time.offload_s, pct(e.time.offload_s));
  out += fmt::format("\nmemory per GPU (peak stage {})   {:.1f} GiB of {:.1f} usable: {}\n",
                     e.peak_memory_stage, gib(e.peak_memory_bytes), gib(e.usable_memory_bytes),
                     e.fits_gpu ? "fits" : "DOES NOT FIT");
  const std::pair<const char*, double> mem[] = {
      {"weights", e.memory.weights_bytes},         {"gradients", e.memory.gradients_bytes},
      {"optimizer state", e.memory.optimizer_bytes}, {"activations", e.memory.activations_bytes},
      {"logits", e.memory.logits_bytes},           {"buffers", e.memory.buffers_bytes},
      {"framework", e.memory.framework_bytes}};
  for (const auto& [name, value] : mem) out += fmt::format("  {:<24}{:10.2f} GiB\n", name, gib(value));
  out += offloaded_memory_text(e, p);
  out += fmt::format("\nconfidence  {}\n", confidence_text(estimate_confidence(m, c, p, w, &e)));
  return out;
}

}  // namespace tessera
