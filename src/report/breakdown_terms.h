// The estimate document's breakdown keys with the names the pages show, in the order `tessera
// estimate` prints them: the critical-path time terms (compute includes recompute, which the
// document also gives alone as "recompute_s") and the memory terms of one stage.
#pragma once

#include <array>
#include <utility>

namespace tessera::report {

struct BreakdownTerm {
  const char* key;   // the JSON field
  const char* name;  // what a page calls it
};

inline constexpr std::array<BreakdownTerm, 8> kTimeTerms = {{{"compute_s", "compute"},
                                                             {"tp_comm_s", "tensor-parallel comm"},
                                                             {"cp_comm_s", "context-parallel comm"},
                                                             {"ep_comm_s", "expert-parallel comm"},
                                                             {"pp_comm_s", "pipeline p2p"},
                                                             {"bubble_s", "pipeline bubble"},
                                                             {"dp_comm_s", "data-parallel comm"},
                                                             {"optimizer_s", "optimizer step"}}};

inline constexpr std::array<BreakdownTerm, 7> kMemoryTerms = {{{"weights_gib", "weights"},
                                                               {"gradients_gib", "gradients"},
                                                               {"optimizer_gib", "optimizer state"},
                                                               {"activations_gib", "activations"},
                                                               {"logits_gib", "logits"},
                                                               {"buffers_gib", "buffers"},
                                                               {"framework_gib", "framework"}}};

}  // namespace tessera::report
