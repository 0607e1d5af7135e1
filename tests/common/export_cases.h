// The (model, cluster, batch, sequence, pins) cases whose best plan and top 5 every export test
// emits and checks against a framework's rule table (issue 12): dense, GQA, MoE, MLA, GPT-OSS,
// long context (cp), interleaved pipelines with uneven stages, FP8 and every sharding flavour.
// `fix` uses the CLI's --fix syntax ("" = search everything).
#pragma once

#include <array>
#include <ostream>

namespace tessera::testing {

struct ExportCase {
  const char* model;
  const char* cluster;
  long long gbs;
  long long seq;  // 0 = the model's context
  const char* fix;
};

inline constexpr std::array<ExportCase, 32> kExportCases{{
    // Dense, GQA, several sizes and GPUs.
    {"llama3-8b", "h100-sxm-80gb:8", 64, 8192, ""},
    {"llama3-8b", "a100-sxm-80gb:64", 512, 4096, ""},
    {"llama3-70b", "h100-sxm-80gb:64", 512, 8192, ""},
    {"llama3-70b", "h100-sxm-80gb:256", 1024, 8192, "zero=3"},
    {"llama3-70b", "h100-sxm-80gb:128", 256, 8192, "zero=0"},
    {"llama3.1-405b", "h100-sxm-80gb:1024", 2048, 8192, ""},
    {"qwen2.5-7b", "h100-sxm-80gb:16", 128, 4096, ""},
    {"qwen2.5-72b", "h200:64", 512, 8192, ""},
    {"qwen2.5-32b", "a100-sxm-80gb:128", 512, 4096, "zero=1"},
    {"llama2-70b", "a100-sxm-80gb:256", 1024, 4096, ""},
    {"gpt3-175b", "a100-sxm-80gb:1024", 1536, 2048, ""},
    {"gpt3-175b", "a100-sxm-80gb:512", 1536, 2048, "vpp=4"},
    {"nemotron4-340b", "h100-sxm-80gb:1024", 768, 4096, ""},
    {"bloom-176b", "a100-sxm-80gb:384", 2048, 2048, ""},
    // Long context: context parallelism, possibly across nodes.
    {"llama3-8b", "h100-sxm-80gb:64", 64, 131072, ""},
    {"llama3-70b", "h100-sxm-80gb:256", 64, 65536, "cp=4"},
    // Interleaved pipelines whose layers do not divide evenly (uneven first / last stages).
    {"llama3-70b", "h100-sxm-80gb:96", 384, 8192, "pp=3,vpp=3"},
    {"llama3.1-405b", "h100-sxm-80gb:512", 1024, 8192, "pp=8,vpp=2"},
    // FP8.
    {"llama3-70b", "h100-sxm-80gb:128", 512, 8192, "precision=fp8"},
    {"llama3-8b", "b200:16", 256, 8192, "precision=fp8"},
    // MoE.
    {"mixtral-8x7b", "h100-sxm-80gb:64", 256, 4096, ""},
    {"mixtral-8x22b", "h100-sxm-80gb:128", 512, 4096, ""},
    {"qwen3-30b-a3b", "h100-sxm-80gb:32", 256, 4096, ""},
    {"qwen3-235b-a22b", "h100-sxm-80gb:256", 1024, 4096, ""},
    {"llama4-maverick", "h100-sxm-80gb:256", 512, 8192, ""},
    {"grok-1", "h100-sxm-80gb:256", 512, 8192, ""},
    // MLA + MoE + MTP.
    {"deepseek-v3", "h800:1024", 4096, 4096, ""},
    {"deepseek-v3", "h800:2048", 8192, 4096, "precision=fp8"},
    {"kimi-k2", "h800:2048", 4096, 4096, ""},
    // GPT-OSS (attention sinks, sliding window, biased router, clamped SwiGLU).
    {"gpt-oss-120b", "h100-sxm-80gb:64", 256, 8192, ""},
    {"gpt-oss-120b", "h200:32", 128, 4096, "zero=3"},
    // ZeRO-2.
    {"llama3-8b", "h100-sxm-80gb:32", 256, 8192, "zero=2"},
}};

// gtest prints a parameter with this (not as raw bytes).
inline void PrintTo(const ExportCase& c, std::ostream* os) {
  *os << c.model << " on " << c.cluster << ", gbs " << c.gbs << ", seq " << c.seq << (*c.fix ? ", fix " : "") << c.fix;
}

}  // namespace tessera::testing
