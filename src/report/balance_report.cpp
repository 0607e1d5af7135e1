#include "report/balance_report.h"

#include <cmath>

#include <fmt/core.h>

#include "formats/schema.h"

namespace tessera {

nlohmann::json balance_report_to_json(const BalanceReport& r) {
  nlohmann::json modules = nlohmann::json::object();
  for (const ModuleBalance& m : r.modules)
    modules[m.name] = {{"imbalance", m.balanced.imbalance},
                       {"lower_bound", m.balanced.lower_bound},
                       {"random_imbalance", m.random.imbalance}};
  return {{"schema_version", kSchemaVersion},
          {"source", r.source},
          {"method", r.method},
          {"dp", r.dp},
          {"microbatches", r.microbatches},
          {"max_tokens", r.max_tokens},
          {"steps", r.steps},
          {"seed", r.seed},
          {"model", r.model},
          {"gpu", r.gpu},
          {"imbalance", r.balanced.imbalance},
          {"lower_bound", r.balanced.lower_bound},
          {"random_imbalance", r.random.imbalance},
          {"n_in", r.n_in},
          {"n_assigned", r.n_assigned},
          {"n_carried", r.n_carried},
          {"mean_delay_steps", r.mean_delay_steps},
          {"max_delay_steps", r.max_delay_steps},
          {"outlier_queues", r.outlier_queues},
          {"step_time_s", r.step_time_s},
          {"time_ms", r.time_ms},
          {"modules", modules}};
}

std::string balance_report_to_table(const BalanceReport& r) {
  std::string out;
  out += fmt::format("samples      {} (seed {}): {} drawn over {} step{}\n", r.source, r.seed, r.n_in, r.steps,
                     r.steps == 1 ? "" : "s");
  out += fmt::format("balancer     {} on {} rank{} x {} micro-batch{}", r.method, r.dp, r.dp == 1 ? "" : "s",
                     r.microbatches, r.microbatches == 1 ? "" : "es");
  out += r.max_tokens > 0 ? fmt::format(", at most {} tokens per micro-batch\n", r.max_tokens) : ", no token cap\n";
  out += fmt::format("cost model   {} on {}\n\n", r.model, r.gpu);
  out += fmt::format("imbalance    {:.3f}   (lower bound {:.3f}; random assignment {:.3f})\n", r.balanced.imbalance,
                     r.balanced.lower_bound, r.random.imbalance);
  out += fmt::format("step time    {:.4g} s  (slowest micro-batch, mean over steps)\n", r.step_time_s);
  out += fmt::format("placed       {} of {}; {} carried over\n", r.n_assigned, r.n_in, r.n_carried);
  out += fmt::format("delay        mean {:.3f} steps, max {}; {} outlier queue{} used\n", r.mean_delay_steps,
                     r.max_delay_steps, r.outlier_queues, r.outlier_queues == 1 ? "" : "s");
  out += fmt::format("balancing    {:.3f} ms\n", r.time_ms);
  if (!r.modules.empty()) {
    out += fmt::format("\n{:<10} {:>10} {:>12} {:>10}\n", "module", "imbalance", "lower bound", "random");
    for (const ModuleBalance& m : r.modules)
      out += fmt::format("{:<10} {:>10.3f} {:>12.3f} {:>10.3f}\n", m.name, m.balanced.imbalance, m.balanced.lower_bound,
                         m.random.imbalance);
  }
  return out;
}

namespace {
nlohmann::json finite_or_null(double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); }
}  // namespace

nlohmann::json per_batch_cp_report_to_json(const PerBatchCpReport& r) {
  const PerBatchStreamResult& x = r.result;
  nlohmann::json mixes = nlohmann::json::array(), statics = nlohmann::json::array();
  for (const WeightedMix& m : r.mixes) mixes.push_back({{"name", m.mix.name}, {"weight", m.weight}});
  for (const StaticDegreeTime& s : x.statics) statics.push_back({{"cp", s.degree}, {"time_s", finite_or_null(s.time_s)}});
  nlohmann::json at_cp = nlohmann::json::object();
  for (std::size_t c = 0; c < x.microbatches_at_degree.size(); ++c)
    if (x.microbatches_at_degree[c] > 0) at_cp[std::to_string(c)] = x.microbatches_at_degree[c];
  return {{"schema_version", kSchemaVersion},
          {"kind", "per_batch_cp"},
          {"mixes", mixes},
          {"mix_per_sequence", r.mix_per_sequence},
          {"gpus", r.gpus},
          {"gpus_per_node", r.gpus_per_node},
          {"steps", r.steps},
          {"step_tokens", r.step_tokens},
          {"seed", r.seed},
          {"model", r.model},
          {"gpu", r.gpu},
          {"recompute", r.recompute},
          {"max_tokens_per_gpu", r.max_tokens_per_gpu},
          {"microbatches", x.microbatches},
          {"samples", x.samples},
          {"tokens", x.tokens},
          {"static", statics},
          {"best_static_cp", x.best_static_degree},
          {"static_time_s", x.static_time_s},
          {"per_batch_time_s", x.per_batch_time_s},
          {"lower_bound_time_s", x.lower_bound_time_s},
          {"static_tokens_per_s", x.static_tokens_per_s()},
          {"per_batch_tokens_per_s", x.per_batch_tokens_per_s()},
          {"gain", x.gain},
          {"gain_bound", x.gain_bound},
          {"heterogeneous_steps", x.heterogeneous_steps},
          {"microbatches_at_cp", at_cp},
          {"decision_ms", {{"mean", x.decision_mean_ms}, {"p99", x.decision_p99_ms}, {"max", x.decision_max_ms}}}};
}

std::string per_batch_cp_report_to_table(const PerBatchCpReport& r) {
  const PerBatchStreamResult& x = r.result;
  std::string mixes;
  for (const WeightedMix& m : r.mixes) mixes += fmt::format("{}{} (weight {:g})", mixes.empty() ? "" : ", ", m.mix.name, m.weight);
  std::string out;
  out += fmt::format("stream       {} steps of {} tokens from {}, one mix per {} (seed {})\n", r.steps, r.step_tokens,
                     mixes, r.mix_per_sequence ? "sequence" : "step", r.seed);
  out += fmt::format("plan         {} GPUs ({} per node), {} on {}, recompute {}: at most {} tokens per GPU\n", r.gpus,
                     r.gpus_per_node, r.model, r.gpu, r.recompute, r.max_tokens_per_gpu);
  out += fmt::format("placed       {} samples in {} micro-batches, {:.4g} tokens\n\n", x.samples, x.microbatches, x.tokens);
  out += fmt::format("{:<8} {:>14}\n", "static", "stream time s");
  for (const StaticDegreeTime& s : x.statics)
    out += std::isfinite(s.time_s) ? fmt::format("cp {:<5} {:>14.2f}\n", s.degree, s.time_s)
                                   : fmt::format("cp {:<5} {:>14}\n", s.degree, "does not fit");
  out += fmt::format("\nbest static  cp {}: {:.2f} s, {:.4g} tokens/s\n", x.best_static_degree, x.static_time_s,
                     x.static_tokens_per_s());
  out += fmt::format("per batch    {:.2f} s, {:.4g} tokens/s: gain {:+.1f}% ({} of {} steps heterogeneous)\n",
                     x.per_batch_time_s, x.per_batch_tokens_per_s(), 100.0 * x.gain, x.heterogeneous_steps, x.steps);
  out += fmt::format("bound        {:.2f} s: no grouping gains more than {:+.1f}%\n", x.lower_bound_time_s,
                     100.0 * x.gain_bound);
  std::string at_cp;
  for (std::size_t c = 0; c < x.microbatches_at_degree.size(); ++c)
    if (x.microbatches_at_degree[c] > 0) at_cp += fmt::format("{}cp {}: {}", at_cp.empty() ? "" : ", ", c, x.microbatches_at_degree[c]);
  out += fmt::format("micro-batches {}\n", at_cp);
  out += fmt::format("decision     mean {:.3f} ms, p99 {:.3f} ms, max {:.3f} ms per step\n", x.decision_mean_ms,
                     x.decision_p99_ms, x.decision_max_ms);
  return out;
}

}  // namespace tessera
