#include "io/balance_report.h"

#include <fmt/core.h>

#include "io/schema.h"

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

}  // namespace tessera
