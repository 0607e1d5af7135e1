// Multimodal modules against their papers' published shapes, parameter counts and FLOPs.
#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "common/builtin_modules.h"

#include <cmath>

#include "catalog/model_source.h"
#include "catalog/multimodal_models.h"
#include "core/error.h"
#include "formats/multimodal_json.h"
#include "model/multimodal_spec.h"

namespace tessera {
namespace {

using testing::builtin_module;

// ViT patches: a w px image at patch p is (w / p)^2 tokens (the issue's pinned 256/576/1024/2304).
TEST(MultimodalSpec, VitTokensPerImageFollowThePatchGrid) {
  const ModuleSpec& vit = builtin_module("mllm-72b-gen", "vit-h-14");
  EXPECT_EQ(encoder_tokens(vit, 224), 256);
  EXPECT_EQ(encoder_tokens(vit, 336), 576);
  EXPECT_EQ(encoder_tokens(vit, 448), 1024);
  EXPECT_EQ(encoder_tokens(vit, 672), 2304);
  EXPECT_EQ(backbone_tokens(vit, 672), 2304);
  // Qwen2-VL merges 2 x 2 patches into one backbone token.
  const ModuleSpec& qvit = builtin_module("qwen2-vl-7b", "qwen2-vl-vit");
  EXPECT_EQ(encoder_tokens(qvit, 672), 2304);
  EXPECT_EQ(backbone_tokens(qvit, 672), 576);
  // Whisper: 50 encoder frames per second, pooled by 2 into the backbone.
  const ModuleSpec& whisper = builtin_module("qwen2.5-omni-7b", "whisper-encoder");
  EXPECT_EQ(encoder_tokens(whisper, 30.0), 1500);
  EXPECT_EQ(backbone_tokens(whisper, 30.0), 750);
}

// Published parameter counts: ViT-H/14 632M (Dosovitskiy et al. 2021, Table 1), CLIP ViT-L/14 304M
// (Radford et al. 2021), DiT-XL/2 675M (Peebles and Xie 2023, Table 1), Qwen2-VL's ViT 675M with
// its merger (Wang et al. 2024, Table 1).
TEST(MultimodalSpec, ModuleParametersMatchThePapers) {
  EXPECT_NEAR(module_parameters(builtin_module("mllm-72b-gen", "vit-h-14")) / 632e6, 1.0, 0.01);
  EXPECT_NEAR(module_parameters(builtin_module("mllm-72b-gen", "dit-xl-2")) / 675e6, 1.0, 0.02);
  EXPECT_NEAR(module_parameters(builtin_module("llava-1.5-7b", "clip-vit-l-14-336")) / 304e6, 1.0, 0.01);
  // LLaVA-1.5's mlp2x_gelu: 1024 x 4096 + 4096 x 4096 weights and two biases.
  EXPECT_DOUBLE_EQ(module_parameters(builtin_module("llava-1.5-7b", "projector")), 1024.0 * 4096 + 4096 + 4096.0 * 4096 + 4096);
  EXPECT_NEAR((module_parameters(builtin_module("qwen2-vl-7b", "qwen2-vl-vit")) + module_parameters(builtin_module("qwen2-vl-7b", "patch-merger"))) / 675e6,
              1.0, 0.02);
}

// DiT-XL/2 at 256 px: 118.6 GFLOPs per forward in the paper's count, which (fvcore) counts a
// multiply-add as one; the Megatron convention counts two.
TEST(MultimodalSpec, DitForwardFlopsMatchThePaper) {
  const ModuleSpec& dit = builtin_module("mllm-72b-gen", "dit-xl-2");
  const double tokens = 256;
  EXPECT_NEAR(module_forward_flops(dit, tokens, tokens * tokens) / (2.0 * 118.6e9), 1.0, 0.02);
}

// Attention is quadratic per item: the same tokens in one long item cost more than in many short ones.
TEST(MultimodalSpec, ForwardFlopsGrowWithItemLength) {
  const ModuleSpec& vit = builtin_module("mllm-72b-gen", "vit-h-14");
  const double one_big = module_forward_flops(vit, 2304, 2304.0 * 2304);
  const double nine_small = module_forward_flops(vit, 2304, 9 * 256.0 * 256);
  EXPECT_GT(one_big, nine_small);
  // The difference is exactly the attention term: 4 (L^2 - sum l^2) heads head_dim layers.
  EXPECT_NEAR(one_big - nine_small, 4.0 * (2304.0 * 2304 - 9 * 256.0 * 256) * 16 * 80 * 32, 1.0);
}

TEST(MultimodalSpec, InvalidModelsNameTheField) {
  auto field_of = [](const char* text) {
    return testing::thrown_field([&] { multimodal_from_json(nlohmann::json::parse(text), load_model); });
  };
  // No backbone.
  EXPECT_EQ(field_of(R"({"modules": [{"name": "p", "role": "projector", "input_width": 8, "hidden": 8}]})"),
            "model.modules");
  // An encoder without its projector.
  EXPECT_EQ(field_of(R"({"modules": [{"name": "b", "role": "backbone", "model": "llama2-7b"},
      {"name": "v", "role": "encoder", "patch_px": 14, "layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256}]})"),
            "model.modules[v]");
  // A projector that does not reach the backbone's width.
  EXPECT_EQ(field_of(R"({"modules": [{"name": "b", "role": "backbone", "model": "llama2-7b"},
      {"name": "v", "role": "encoder", "patch_px": 14, "layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256},
      {"name": "p", "role": "projector", "input_width": 64, "hidden": 1024}]})"),
            "model.modules[p].hidden");
  // An unknown role.
  EXPECT_EQ(field_of(R"({"modules": [{"name": "b", "role": "decoder"}]})"), "module.role");
  // An image encoder without a patch size.
  EXPECT_EQ(field_of(R"({"modules": [{"name": "b", "role": "backbone", "model": "llama2-7b"},
      {"name": "v", "role": "encoder", "layers": 2, "hidden": 64, "heads": 4, "ffn_hidden": 256},
      {"name": "p", "role": "projector", "input_width": 64, "hidden": 4096}]})"),
            "model.modules[v].patch_px");
}

TEST(MultimodalSpec, EveryBuiltinLoads) {
  const auto names = builtin_multimodal_names();
  EXPECT_GE(names.size(), 6u);
  for (const auto& n : names) EXPECT_NO_THROW(load_multimodal_model(n)) << n;
}

}  // namespace
}  // namespace tessera
