// The planner's pins as `tessera plan --fix` writes them ("tp=8, recompute=full, ..."): the text
// read into PlanConstraints, each error naming "fix.<key>".
#pragma once

#include <string>

#include "plan/plan_constraints.h"

namespace tessera {

// --fix "tp=8,recompute=full,...": the searched keys tp, pp, cp, ep, etp, vpp, mb, recompute,
// recompute_layers, recompute_modules (pins recompute=selective), sp, zero, precision, fp8_recipe and
// fp8_param_gather=1 (pin precision=fp8), dispatcher, overlap_ep, delay_wgrad (=1 pins overlap_ep);
// overlap_tp (TP-communication overlap, searched where legal when unset); and the switches every
// candidate runs with: capacity_factor, force_balance, reshard, flash, overlap_grad,
// overlap_param, overlap_p2p, p2p_sg.
PlanConstraints parse_constraints(const std::string& text);

}  // namespace tessera
