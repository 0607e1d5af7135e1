// MultimodalSpec: a multimodal model as a chain of modules -- modality encoders (ViT, audio), their
// projectors into the backbone, the LLM backbone, and optionally an output generator (a diffusion
// transformer) -- each a transformer of its own shape. A plain value type: validate() once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_spec.h"

namespace tessera {

enum class ModuleRole { encoder, projector, backbone, generator };
enum class Modality { image, audio };

const char* to_string(ModuleRole value);
const char* to_string(Modality value);
ModuleRole parse_module_role(const std::string& text);  // throws Error("module.role", ...)
Modality parse_modality(const std::string& text);       // throws Error("module.modality", ...)

struct ModuleSpec {
  std::string name;
  ModuleRole role = ModuleRole::backbone;
  // Encoders and projectors: the input they embed.
  Modality modality = Modality::image;
  // The module's transformer. Encoders and generators have no token vocabulary (vocab is 1 and
  // not counted); a projector uses only `hidden` (its output width) and `layers`.
  ModelSpec transformer;
  // Image encoders: a w x w image is (w / patch_px)^2 patches (ViT, Dosovitskiy et al. 2021).
  std::int64_t patch_px = 0;
  // Audio encoders: encoder frames per second of audio (Whisper: 100 mel frames/s, a stride-2
  // convolution -> 50; Radford et al. 2022 §2.2).
  double frames_per_s = 0;
  // Encoder tokens pooled into one backbone token (Qwen2-VL's 2x2 patch merger: 4; LLaVA: 1).
  std::int64_t merge = 1;
  // Projectors: an MLP of transformer.layers linear layers, input_width -> transformer.ffn_hidden
  // (-> ffn_hidden ...) -> transformer.hidden, each with a bias (LLaVA-1.5's mlp2x_gelu: 1024 ->
  // 4096 -> 4096; Qwen2-VL's patch merger: 5120 -> 5120 -> 3584).
  std::int64_t input_width = 0;
  // Generators: latent tokens per generated image, denoising steps per image per iteration.
  std::int64_t tokens_per_output = 0;
  std::int64_t steps_per_output = 1;
  // Parameters outside the transformer layers (patch / timestep embedders, DiT adaLN modulation,
  // audio convolution stem), from the module's published count.
  double extra_parameters = 0;
  // A frozen module (LLaVA-1.5 keeps its CLIP encoder frozen) runs forward only: no gradients,
  // optimizer state or saved activations.
  bool trainable = true;
};

struct MultimodalSpec {
  std::string name;
  std::string source;
  std::vector<ModuleSpec> modules;

  // The one backbone (validate() guarantees it exists).
  const ModuleSpec& backbone() const;
  std::size_t backbone_index() const;
  bool has(ModuleRole role) const;
  // Throws tessera::Error naming the first invalid field.
  void validate() const;
};

// Tokens an encoder runs for one item: an image of `size` px a side, or `size` seconds of audio.
std::int64_t encoder_tokens(const ModuleSpec& encoder, double size);
// The backbone tokens that item becomes (encoder tokens / merge, rounded up).
std::int64_t backbone_tokens(const ModuleSpec& encoder, double size);

// Parameters of a module (the backbone: count_parameters().total()).
double module_parameters(const ModuleSpec& module);
// Widths of a projector's linear layers: input_width, ffn_hidden (repeated), hidden.
std::vector<std::int64_t> projector_widths(const ModuleSpec& projector);

// Forward FLOPs of a non-backbone module, Megatron-Core convention (2 per GEMM weight per token;
// full-matrix attention): `tokens` in items whose squared lengths sum to `tokens_squared`.
double module_forward_flops(const ModuleSpec& module, double tokens, double tokens_squared);

}  // namespace tessera
