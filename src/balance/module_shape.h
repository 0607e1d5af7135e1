// ModuleShape: the shape of a bidirectional transformer module that runs beside the backbone of a
// multimodal model: a vision encoder turning an image into tokens, or a diffusion transformer
// generating an image. The balancer needs only what sets a sample's cost on it: GEMM weights per
// token and attention width.
#pragma once

#include <cstdint>

namespace tessera {

struct ModuleShape {
  const char* name = "";
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t mlp_hidden = 0;     // a two-matrix (GELU) MLP
  std::int64_t extra_gemm_weights_per_layer = 0;  // e.g. DiT's adaLN modulation

  // Q, K, V, O (4 h^2) + MLP up and down (2 h f) + extra: the weights one token passes through.
  double gemm_weights_per_layer() const {
    const double h = static_cast<double>(hidden);
    return 4.0 * h * h + 2.0 * h * static_cast<double>(mlp_hidden) +
           static_cast<double>(extra_gemm_weights_per_layer);
  }
  double gemm_weights() const { return static_cast<double>(layers) * gemm_weights_per_layer(); }
};

// ViT-H/14: 32 layers, hidden 1280, 16 heads, MLP 5120, patch 14, 632M parameters (Dosovitskiy et
// al. 2021, "An Image is Worth 16x16 Words", Table 1); a 336 px image is (336/14)^2 = 576 tokens.
inline constexpr ModuleShape kVitH14Encoder{"vit-h-14", 32, 1280, 16, 80, 5120, 0};

// DiT-XL/2: 28 layers, hidden 1152, 16 heads, MLP 4 x 1152, 675M parameters (Peebles & Xie 2023,
// "Scalable Diffusion Models with Transformers", Table 1); adaLN-Zero regresses 6 modulation
// vectors of width h per block (§3.2), 6 h^2 weights. 256 tokens per 256 px image at patch 2.
inline constexpr ModuleShape kDitXl2Generator{"dit-xl-2", 28, 1152, 16, 72, 4608, 6 * 1152 * 1152};

}  // namespace tessera
