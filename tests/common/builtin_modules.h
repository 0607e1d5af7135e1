// A module of a built-in multimodal model, for tests: the models stay loaded for the whole run, so
// the reference stays valid.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

#include "catalog/multimodal_models.h"
#include "formats/multimodal_json.h"

namespace tessera::testing {

inline const ModuleSpec& builtin_module(const std::string& model, const std::string& name) {
  static std::map<std::string, MultimodalSpec> loaded;
  auto it = loaded.find(model);
  if (it == loaded.end()) it = loaded.emplace(model, load_multimodal_model(model)).first;
  for (const auto& mod : it->second.modules)
    if (mod.name == name) return mod;
  throw std::runtime_error("no module " + name + " in " + model);
}

}  // namespace tessera::testing
