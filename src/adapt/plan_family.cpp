#include "adapt/plan_family.h"

#include <tuple>

namespace tessera {

PlanFamily family_of(const Plan& plan) {
  PlanFamily f;
  f.tp = plan.tp;
  f.pp = plan.pp;
  f.cp = plan.cp;
  f.ep = plan.ep;
  f.vpp = plan.vpp;
  f.zero = plan.zero;
  return f;
}

std::string to_string(const PlanFamily& f) {
  return "tp=" + std::to_string(f.tp) + ",pp=" + std::to_string(f.pp) + ",cp=" + std::to_string(f.cp) +
         ",ep=" + std::to_string(f.ep) + ",vpp=" + std::to_string(f.vpp) + ",zero=" + to_string(f.zero);
}

bool same_plan(const Plan& a, const Plan& b) {
  auto fields = [](const Plan& p) {
    return std::tie(p.tp, p.pp, p.dp, p.cp, p.ep, p.vpp, p.micro_batch, p.sequence_parallel, p.recompute,
                    p.recompute_layers, p.zero, p.precision, p.overlap_grad_reduce, p.overlap_param_gather,
                    p.overlap_tp_comm, p.overlap_p2p, p.flash_attention, p.p2p_scatter_gather,
                    p.first_stage_layers, p.last_stage_layers);
  };
  return fields(a) == fields(b);
}

}  // namespace tessera
