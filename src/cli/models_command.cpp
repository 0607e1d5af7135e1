// tessera models [--json]: the built-in model zoo with parameter counts, then the multimodal models
// with their modules.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "catalog/model_source.h"
#include "catalog/multimodal_models.h"
#include "cli/subcommands.h"
#include "formats/json_fields.h"
#include "formats/model_json.h"
#include "formats/multimodal_json.h"
#include "formats/schema.h"
#include "model/parameter_count.h"

namespace tessera::cli {

void register_models(CLI::App& app, CommandRegistry& commands) {
  auto* sub = app.add_subcommand("models", "List the built-in models");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print one JSON document");
  commands.add(sub, [json, &io = commands.output()]() {
    nlohmann::json out = {{"schema_version", kSchemaVersion}, {"models", nlohmann::json::array()}};
    if (!*json)
      io.print("{:<16} {:>10} {:>10} {:>6} {:>7} {:>6} {:>4} {:>8} {:>7}  {}\n", "name",
                 "params_B", "active_B", "layers", "hidden", "heads", "kv", "vocab", "mlp",
                 "attention");
    for (const auto& name : builtin_model_names()) {
      const ModelSpec m = builtin_model(name);
      const auto params = count_parameters(m);
      if (*json) {
        auto j = model_to_json(m);
        j["params"] = params.total();
        // Model cards count active parameters without the embedding and output head (GPT-OSS-120B's
        // "5.1B active"); the total counts everything.
        j["active_params"] = params.active_without_embedding();
        out["models"].push_back(j);
      } else {
        io.print("{:<16} {:>10.2f} {:>10.2f} {:>6} {:>7} {:>6} {:>4} {:>8} {:>7}  {}{}\n", name,
                   params.total() / 1e9, params.active_without_embedding() / 1e9, m.layers, m.hidden, m.heads,
                   m.kv_heads, m.vocab, to_string(m.mlp), to_string(m.attention),
                   m.is_moe() ? fmt::format(" moe {}x top{}", m.moe.experts, m.moe.top_k) : "");
      }
    }
    out["multimodal"] = nlohmann::json::array();
    if (!*json) io.print("\nmultimodal         params_B  modules\n");
    for (const auto& name : builtin_multimodal_names()) {
      const MultimodalSpec m = load_multimodal_model(name);
      double total = 0;
      std::string modules;
      nlohmann::json list = nlohmann::json::array();
      for (const auto& mod : m.modules) {
        const double p = module_parameters(mod);
        total += p;
        modules += fmt::format("{}{} {} ({:.2f}B{})", modules.empty() ? "" : ", ", to_string(mod.role), mod.name,
                               p / 1e9, mod.trainable ? "" : ", frozen");
        list.push_back({{"name", mod.name}, {"role", to_string(mod.role)}, {"params", p}, {"trainable", mod.trainable}});
      }
      if (*json) out["multimodal"].push_back({{"name", name}, {"params", total}, {"modules", list}});
      else io.print("{:<16} {:>10.2f}  {}\n", name, total / 1e9, modules);
    }
    if (*json) io.print("{}\n", json_fields::to_text(out, 2));
    return 0;
  });
}

}  // namespace tessera::cli
