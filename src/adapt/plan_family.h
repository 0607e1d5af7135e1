// Plan family: the layout part of a plan (parallel degrees, interleaving, optimizer sharding) that
// decides how its step time departs from the cost model on a real cluster: the communication
// pattern and the kernels run. Plans of one family differ only in micro-batch and recompute. The
// controller refits one throughput scale per family, as Pollux (Qiao et al., OSDI'21, section 3.2)
// refits its throughput model's parameters from measured step times.
#pragma once

#include <compare>
#include <cstdint>
#include <string>

#include "plan/plan.h"

namespace tessera {

struct PlanFamily {
  std::int64_t tp = 1, pp = 1, cp = 1, ep = 1, vpp = 1;
  OptimizerSharding zero = OptimizerSharding::none;
  auto operator<=>(const PlanFamily&) const = default;
};

PlanFamily family_of(const Plan& plan);
std::string to_string(const PlanFamily& family);  // "tp=2,pp=4,cp=1,ep=1,vpp=8,zero=zero1"

// Every field equal: switching between them needs no restart.
bool same_plan(const Plan& a, const Plan& b);

}  // namespace tessera
