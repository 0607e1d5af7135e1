// LoRA adapters' sizes (plan/fine_tuning.h): r (d_in + d_out) trainable parameters per targeted
// linear layer (Hu et al. 2021, arXiv 2106.09685 §4.1: W0 + BA with B d x r, A r x k). Targets
// are Llama-style module names: q, k, v, o in attention, gate, up, down in a dense MLP (a 2-matrix
// MLP has up and down only). MoE layers take their attention targets only: adapters on routed
// experts are not modelled. MLA attention is refused (plan.cpp check_fine_tuning).
#pragma once

#include "model/model_spec.h"
#include "plan/fine_tuning.h"

namespace tessera {

// Adapter parameters of one transformer layer (all tp ranks together).
double adapter_params_per_layer(const ModelSpec& model, const FineTuning& tuning, bool moe_layer);
// Of the whole model.
double adapter_params(const ModelSpec& model, const FineTuning& tuning);

// Bytes per parameter of a 4-bit NormalFloat weight with double quantization: 4 bits, plus one
// 8-bit constant per 64 weights and one fp32 constant per 256 of those (Dettmers et al. 2023,
// arXiv 2305.14314 §3 "Double Quantization": 8/64 + 32/(64 x 256) = 0.127 bits per parameter).
inline constexpr double kNf4BitsPerParam = 4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0);
inline constexpr double kNf4BytesPerParam = kNf4BitsPerParam / 8.0;

}  // namespace tessera
