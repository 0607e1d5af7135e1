#include "search/confidence.h"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "core/units.h"

namespace tessera {

namespace {

template <typename T>
bool holds(const std::vector<T>& values, const T& v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// A class with fewer runs than this has no meaningful p90 (it is the largest of a handful): an
// estimate in it is reported as resting on few runs.
constexpr std::int64_t kMinClassRuns = 5;

const char* framework_name(TrainingFramework f) { return to_string(f); }

// The class of the model's kind, GPU family, precision and framework; else of its kind, family
// and precision; else the same kind and family; else the same kind and precision; else the same
// kind (its error is what the nearest validated runs measured); nullptr if none.
const AccuracyClass* nearest_class(const std::vector<AccuracyClass>& classes, bool moe, const std::string& family,
                                   Precision precision, TrainingFramework framework) {
  for (const AccuracyClass& k : classes)
    if (k.moe == moe && k.runs > 0 && holds(k.gpu_families, family) && holds(k.precisions, precision) &&
        holds(k.frameworks, framework))
      return &k;
  const AccuracyClass* same_family = nullptr;
  const AccuracyClass* same_precision = nullptr;
  const AccuracyClass* same_kind = nullptr;
  for (const AccuracyClass& k : classes) {
    if (k.moe != moe || k.runs == 0) continue;
    const bool family_ok = holds(k.gpu_families, family);
    const bool precision_ok = holds(k.precisions, precision);
    if (family_ok && precision_ok) return &k;
    if (family_ok && same_family == nullptr) same_family = &k;
    if (precision_ok && same_precision == nullptr) same_precision = &k;
    if (same_kind == nullptr) same_kind = &k;
  }
  if (same_family != nullptr) return same_family;
  return same_precision != nullptr ? same_precision : same_kind;
}

bool family_validated(const std::vector<AccuracyClass>& classes, const std::string& family) {
  return std::any_of(classes.begin(), classes.end(),
                     [&](const AccuracyClass& k) { return k.runs > 0 && holds(k.gpu_families, family); });
}

bool precision_validated_on(const std::vector<AccuracyClass>& classes, const std::string& family, Precision p) {
  return std::any_of(classes.begin(), classes.end(), [&](const AccuracyClass& k) {
    return k.runs > 0 && holds(k.gpu_families, family) && holds(k.precisions, p);
  });
}

// One run's error is noise; a model's bias needs at least two of its runs.
constexpr std::int64_t kMinBiasRuns = 2;

// The envelope of the class's validated runs that an estimate can leave (issue 29): MFU above
// every run, EP or ZeRO-3 traffic assumed almost entirely hidden, tensor parallelism across more
// nodes than any run, and a model whose own runs were biased beyond the class's median error.
void check_envelope(const ModelSpec& model, const Cluster& cluster, const Plan& plan, const Estimate& e,
                    const AccuracyClass& k, std::vector<std::string>& x) {
  if (k.max_mfu_pct > 0 && 100.0 * e.mfu > k.max_mfu_pct)
    x.push_back(fmt::format("MFU {:.1f}% above every validated run of class {} (at most {:.1f}%)", 100.0 * e.mfu,
                            k.name, k.max_mfu_pct));
  const auto hidden = [](double total, double exposed) { return total > 0 ? 1.0 - exposed / total : 0.0; };
  const double ep_hidden = hidden(e.overlap.ep_total_s, e.overlap.ep_exposed_s);
  if (ep_hidden > kMaxValidatedHiddenFraction)
    x.push_back(fmt::format("expert-parallel communication {:.0f}% hidden (no validated run hides over {:.0f}%)",
                            100.0 * ep_hidden, 100.0 * kMaxValidatedHiddenFraction));
  const double zero3_hidden = hidden(e.overlap.zero3_total_s, e.overlap.zero3_exposed_s);
  if (zero3_hidden > kMaxValidatedHiddenFraction)
    x.push_back(fmt::format("ZeRO-3 gathers and reduce-scatters {:.0f}% hidden (no validated run hides over {:.0f}%)",
                            100.0 * zero3_hidden, 100.0 * kMaxValidatedHiddenFraction));
  const std::int64_t tp_nodes = nodes_spanned(plan.tp, cluster);
  if (tp_nodes > std::max<std::int64_t>(1, k.max_tp_nodes))
    x.push_back(fmt::format("tensor parallelism across {} nodes (validated within {})", tp_nodes,
                            std::max<std::int64_t>(1, k.max_tp_nodes)));
  const std::string shape = model_shape_key(model);
  for (const ModelBias& b : k.model_biases)
    if (b.shape == shape && b.runs >= kMinBiasRuns && std::fabs(b.mean_time_error_pct) > k.median_error_pct)
      x.push_back(fmt::format("this model's {} validated runs ({}) were predicted {:.1f}% {} than they ran, beyond the "
                              "class median {:.1f}%",
                              b.runs, b.name, std::fabs(b.mean_time_error_pct),
                              b.mean_time_error_pct < 0 ? "faster" : "slower", k.median_error_pct));
}

// The plan's framework's measured peak error, and whether the margin to the usable memory is
// inside it (the fits / does-not-fit verdict could go either way).
void assess_memory(const Plan& plan, const Estimate* e, const std::vector<MemoryAccuracy>& memory, Confidence& out) {
  if (e != nullptr && e->usable_memory_bytes > 0) {
    out.memory_margin_pct = 100.0 * (e->usable_memory_bytes - e->peak_memory_bytes) / e->usable_memory_bytes;
    out.memory_margin_gib = (e->usable_memory_bytes - e->peak_memory_bytes) / units::kGiB;
  }
  for (const MemoryAccuracy& m : memory) {
    if (m.framework != plan.framework || m.runs == 0) continue;
    out.memory_measured = true;
    out.memory_runs = m.runs;
    out.memory_sources = m.sources;
    out.memory_median_error_pct = m.median_error_pct;
    out.memory_max_error_pct = m.max_error_pct;
    out.memory_margin_inside_error = e != nullptr && std::fabs(out.memory_margin_pct) <= m.max_error_pct;
  }
}

}  // namespace

std::string model_shape_key(const ModelSpec& m) {
  return fmt::format("L{}-h{}-a{}-E{}", m.layers, m.hidden, m.heads, m.is_moe() ? m.moe.experts : 0);
}

std::int64_t nodes_spanned(std::int64_t group_gpus, const Cluster& cluster) {
  const std::int64_t per_node = std::max<std::int64_t>(1, cluster.gpus_per_node);
  return (group_gpus + per_node - 1) / per_node;
}

std::int64_t expert_group_nodes(const Plan& p, const Cluster& c) { return nodes_spanned(p.expert_tp() * p.ep, c); }

std::int64_t context_group_nodes(const Plan& p, const Cluster& c) { return nodes_spanned(p.tp * p.cp, c); }

Confidence assess_confidence(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                             const Workload& workload, const std::string& gpu_family,
                             const std::vector<AccuracyClass>& classes, const Estimate* estimate,
                             const std::vector<MemoryAccuracy>& memory) {
  Confidence out;
  assess_memory(plan, estimate, memory, out);
  auto& x = out.extrapolations;
  const bool moe = model.is_moe();
  if (!family_validated(classes, gpu_family))
    x.push_back(fmt::format("{} efficiencies assumed (no validated runs on this GPU family)", cluster.gpu.key));
  const bool precision_on_family = precision_validated_on(classes, gpu_family, plan.precision);
  if (family_validated(classes, gpu_family) && !precision_on_family)
    x.push_back(fmt::format("{} on {} (no validated {} runs on this GPU family)", to_string(plan.precision),
                            cluster.gpu.key, to_string(plan.precision)));
  if (workload.seq_len > model.max_context)
    x.push_back(fmt::format("seq {} beyond the model's context {}", workload.seq_len, model.max_context));
  const AccuracyClass* k = nearest_class(classes, moe, gpu_family, plan.precision, plan.framework);
  if (k == nullptr) {
    x.push_back(moe ? "no validated MoE runs" : "no validated dense runs");
    return out;
  }
  out.class_name = k->name;
  out.class_description = k->description;
  out.runs = k->runs;
  out.sources = k->sources;
  out.median_error_pct = k->median_error_pct;
  out.p90_error_pct = k->p90_error_pct;
  out.median_time_error_pct = k->median_time_error_pct;
  if (precision_on_family && !holds(k->precisions, plan.precision))
    x.push_back(fmt::format("{} (no validated {} runs in class {})", to_string(plan.precision), to_string(plan.precision),
                            k->name));
  // The range checks compare with runs on this GPU family only; on another family the class
  // only lends its measured error (the efficiencies are already reported as assumed).
  if (!holds(k->gpu_families, gpu_family)) {
    out.validated = false;
    return out;
  }
  if (k->runs < kMinClassRuns)
    x.push_back(fmt::format("only {} validated runs in class {}", k->runs, k->name));
  if (k->sources < kMinClassSources)
    x.push_back(fmt::format("class {} rests on {} source: too few to measure its error out of sample", k->name,
                            k->sources));
  if (!holds(k->frameworks, plan.framework))
    x.push_back(fmt::format("framework {} (not among the class's validated runs)", framework_name(plan.framework)));
  if (cluster.gpus() > k->max_gpus)
    x.push_back(fmt::format("{} GPUs (validated up to {})", cluster.gpus(), k->max_gpus));
  if (workload.seq_len > k->max_seq)
    x.push_back(fmt::format("seq {} (validated up to {})", workload.seq_len, k->max_seq));
  if (moe && plan.ep > 1 && expert_group_nodes(plan, cluster) > std::max<std::int64_t>(1, k->max_ep_nodes))
    x.push_back(fmt::format("MoE dispatch across {} nodes (validated up to {})", expert_group_nodes(plan, cluster),
                            k->max_ep_nodes));
  if (plan.cp > 1 && context_group_nodes(plan, cluster) > std::max<std::int64_t>(1, k->max_cp_nodes))
    x.push_back(fmt::format("context parallelism across {} nodes (validated up to {})",
                            context_group_nodes(plan, cluster), std::max<std::int64_t>(1, k->max_cp_nodes)));
  if (plan.overlap_tp_comm && !k->tp_comm_overlap)
    x.push_back("TP-communication overlap (no validated run overlapped TP collectives)");
  if (estimate != nullptr) check_envelope(model, cluster, plan, *estimate, *k, x);
  out.validated = x.empty();
  return out;
}

}  // namespace tessera
