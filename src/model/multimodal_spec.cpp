#include "model/multimodal_spec.h"

#include <cmath>

#include "core/checks.h"
#include "core/error.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {
constexpr std::int64_t kMaxPatchPx = 10'000;
constexpr double kMaxFramesPerS = 10'000;
constexpr std::int64_t kMaxMerge = 1'024;
constexpr std::int64_t kMaxModuleWidth = 1'000'000;
constexpr std::int64_t kMaxTokensPerOutput = 1'000'000;
constexpr std::int64_t kMaxSteps = 10'000;
constexpr double kMaxExtraParameters = 1e13;
// Largest image side / audio clip accepted (a 100k px image or a day of audio is a data error).
constexpr double kMaxImagePx = 100'000;
constexpr double kMaxAudioS = 86'400;
}  // namespace

const char* to_string(ModuleRole value) {
  switch (value) {
    case ModuleRole::encoder: return "encoder";
    case ModuleRole::projector: return "projector";
    case ModuleRole::backbone: return "backbone";
    case ModuleRole::generator: return "generator";
  }
  return "?";
}

const char* to_string(Modality value) { return value == Modality::image ? "image" : "audio"; }

ModuleRole parse_module_role(const std::string& text) {
  if (text == "encoder") return ModuleRole::encoder;
  if (text == "projector") return ModuleRole::projector;
  if (text == "backbone") return ModuleRole::backbone;
  if (text == "generator") return ModuleRole::generator;
  throw Error("module.role", "'" + text + "' is not a module role", "encoder, projector, backbone, generator");
}

Modality parse_modality(const std::string& text) {
  if (text == "image") return Modality::image;
  if (text == "audio") return Modality::audio;
  throw Error("module.modality", "'" + text + "' is not a modality", "image, audio");
}

const ModuleSpec& MultimodalSpec::backbone() const { return modules[backbone_index()]; }

std::size_t MultimodalSpec::backbone_index() const {
  for (std::size_t i = 0; i < modules.size(); ++i)
    if (modules[i].role == ModuleRole::backbone) return i;
  throw Error("model.modules", "no backbone module", "exactly one module with role backbone");
}

bool MultimodalSpec::has(ModuleRole role) const {
  for (const auto& m : modules)
    if (m.role == role) return true;
  return false;
}

void MultimodalSpec::validate() const {
  if (modules.empty()) throw Error("model.modules", "empty", "a list with one backbone and its encoders");
  int backbones = 0;
  for (const auto& m : modules) {
    const std::string field = "model.modules[" + m.name + "]";
    if (m.name.empty()) throw Error("model.modules.name", "empty", "a module name");
    if (m.role == ModuleRole::backbone) ++backbones;
    if (m.role == ModuleRole::projector) {
      require_positive(field + ".layers", m.transformer.layers, kMaxModuleWidth);
      require_positive(field + ".hidden", m.transformer.hidden, kMaxModuleWidth);
      require_positive(field + ".input_width", m.input_width, kMaxModuleWidth);
      continue;
    }
    m.transformer.validate();
    require_non_negative_real(field + ".extra_parameters", m.extra_parameters, kMaxExtraParameters);
    if (m.role == ModuleRole::encoder) {
      require_positive(field + ".merge", m.merge, kMaxMerge);
      if (m.modality == Modality::image) require_positive(field + ".patch_px", m.patch_px, kMaxPatchPx);
      else require_positive_real(field + ".frames_per_s", m.frames_per_s, kMaxFramesPerS);
    }
    if (m.role == ModuleRole::generator) {
      require_positive(field + ".tokens_per_output", m.tokens_per_output, kMaxTokensPerOutput);
      require_positive(field + ".steps_per_output", m.steps_per_output, kMaxSteps);
    }
  }
  if (backbones != 1)
    throw Error("model.modules", std::to_string(backbones) + " backbone modules", "exactly one backbone");
  for (const auto& m : modules) {
    if (m.role != ModuleRole::encoder && m.role != ModuleRole::projector) continue;
    // Every encoder needs a projector of its modality into the backbone's width, and vice versa.
    const ModuleRole other = m.role == ModuleRole::encoder ? ModuleRole::projector : ModuleRole::encoder;
    bool paired = false;
    for (const auto& n : modules) paired = paired || (n.role == other && n.modality == m.modality);
    if (!paired)
      throw Error("model.modules[" + m.name + "]", std::string("no ") + to_string(other) + " for its " +
                                                       to_string(m.modality) + " input",
                  "an encoder and a projector per modality");
    if (m.role == ModuleRole::projector && m.transformer.hidden != backbone().transformer.hidden)
      throw Error("model.modules[" + m.name + "].hidden",
                  "projector output " + std::to_string(m.transformer.hidden) + " is not the backbone's width",
                  std::to_string(backbone().transformer.hidden));
  }
}

std::int64_t encoder_tokens(const ModuleSpec& encoder, double size) {
  if (encoder.modality == Modality::image) {
    require_positive_real("image px", size, kMaxImagePx);
    const auto side = static_cast<std::int64_t>(std::ceil(size / static_cast<double>(encoder.patch_px)));
    return side * side;
  }
  require_positive_real("audio seconds", size, kMaxAudioS);
  return static_cast<std::int64_t>(std::ceil(size * encoder.frames_per_s));
}

std::int64_t backbone_tokens(const ModuleSpec& encoder, double size) {
  return (encoder_tokens(encoder, size) + encoder.merge - 1) / encoder.merge;
}

double module_parameters(const ModuleSpec& module) {
  const ModelSpec& t = module.transformer;
  if (module.role == ModuleRole::projector) {
    const std::vector<std::int64_t> widths = projector_widths(module);
    double params = 0;
    for (std::size_t i = 0; i + 1 < widths.size(); ++i)
      params += static_cast<double>(widths[i]) * static_cast<double>(widths[i + 1]) + static_cast<double>(widths[i + 1]);
    return params;
  }
  const ParameterCount c = count_parameters(t);
  if (module.role == ModuleRole::backbone) return c.total();
  return c.transformer_layers() + c.final_norm + module.extra_parameters;
}

std::vector<std::int64_t> projector_widths(const ModuleSpec& projector) {
  const ModelSpec& t = projector.transformer;
  const std::int64_t inner = t.ffn_hidden > 0 ? t.ffn_hidden : t.hidden;
  std::vector<std::int64_t> widths{projector.input_width};
  for (std::int64_t i = 0; i + 1 < t.layers; ++i) widths.push_back(inner);
  widths.push_back(t.hidden);
  return widths;
}

double module_forward_flops(const ModuleSpec& module, double tokens, double tokens_squared) {
  const ModelSpec& t = module.transformer;
  if (module.role == ModuleRole::projector) {
    const std::vector<std::int64_t> widths = projector_widths(module);
    double weights = 0;
    for (std::size_t i = 0; i + 1 < widths.size(); ++i) weights += static_cast<double>(widths[i]) * static_cast<double>(widths[i + 1]);
    return 2.0 * tokens * weights;
  }
  const LayerGemmWeights g = dense_layer_gemm_weights(t);
  const double layers = static_cast<double>(t.layers);
  // Q.K^T and P.V over each item's full (bidirectional) attention matrix.
  const double attention = 4.0 * tokens_squared * static_cast<double>(t.heads * t.head_dim);
  return layers * (2.0 * tokens * (g.attention + g.mlp) + attention);
}

}  // namespace tessera
