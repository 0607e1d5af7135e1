// What torchtitan can run: which models it ships (as a module + flavor of its model registry) and
// which Tessera plans it can express. Allocation-free: the planner calls it in its hot loop.
//
// Facts from pytorch/torchtitan main @ b5bcd76c66d0acb1a08b176d9639425bc55e0b2a (2026-08-21),
// cited per rule in framework_support.cpp.
#pragma once

#include <cstdint>
#include <span>

#include "model/model_spec.h"
#include "plan/plan.h"
#include "search/planner.h"

namespace tessera {

// One model flavor torchtitan ships (torchtitan/models/<module>/__init__.py, `<module>_configs`
// and `model_registry(flavor, ...)`), with the shape that identifies it.
struct TorchtitanFlavor {
  const char* module;  // python package under torchtitan.models
  const char* flavor;  // key of the module's model_registry
  std::int64_t layers, hidden, heads, kv_heads, vocab, experts;
  AttentionKind attention;
  // The attention backend model_registry defaults to ("flex", "varlen"); CP needs "flex".
  const char* default_attn_backend;
  // model_registry takes num_mtp_layers (deepseek_v3 only).
  bool has_mtp;
  // Shipped only inside a vision-language model (no text-only flavor): not runnable as an LLM.
  bool vision_language_only;
};

// Every flavor Tessera can match (the LLM flavors of the registries above).
std::span<const TorchtitanFlavor> torchtitan_flavors();

// The flavor whose shape (layers, hidden, heads, kv heads, vocab, experts, attention) is the
// model's; nullptr when torchtitan ships none.
const TorchtitanFlavor* torchtitan_flavor(const ModelSpec& model);

// nullptr when torchtitan can run the plan as Tessera costs it; otherwise why not (a static
// string, for error messages).
const char* torchtitan_unsupported_reason(const ModelSpec& model, const Plan& plan);
bool torchtitan_can_run(const ModelSpec& model, const Plan& plan);

// The search space of the framework a caller plans for (fix.defaults.framework): `fix` with the
// pins and choices the framework imposes (torchtitan: FSDP2 or DDP, the all-to-all dispatcher
// without EP overlap, ...; plain PyTorch: data parallelism only). Throws Error("--framework")
// for a model torchtitan does not ship.
PlanConstraints framework_constraints(const ModelSpec& model, PlanConstraints fix);

}  // namespace tessera
