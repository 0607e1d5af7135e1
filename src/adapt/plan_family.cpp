#include "adapt/plan_family.h"

#include "search/plan_space.h"

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

// Every field: a change of any of them (the MoE and FP8 keys included) is a restart.
bool same_plan(const Plan& a, const Plan& b) { return same_configuration(a, b); }

}  // namespace tessera
