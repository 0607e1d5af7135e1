#include "schedule/pipeline_schedule.h"

#include <algorithm>

#include "core/checks.h"
#include "core/error.h"

namespace tessera {

const char* to_string(Schedule schedule) {
  switch (schedule) {
    case Schedule::gpipe: return "gpipe";
    case Schedule::one_f_one_b: return "1f1b";
    case Schedule::interleaved: return "interleaved";
    case Schedule::zb_h1: return "zb-h1";
  }
  return "?";
}

Schedule parse_schedule(const std::string& text) {
  if (text == "gpipe") return Schedule::gpipe;
  if (text == "1f1b") return Schedule::one_f_one_b;
  if (text == "interleaved") return Schedule::interleaved;
  if (text == "zb-h1" || text == "zbh1") return Schedule::zb_h1;
  throw Error("schedule", "unknown schedule '" + text + "'", "gpipe, 1f1b, interleaved, zb-h1");
}

void validate_schedule_shape(Schedule schedule, std::int64_t p, std::int64_t m, std::int64_t v) {
  require_positive("stages", p, 100'000);
  require_positive("microbatches", m, 10'000'000);
  require_positive("vpp", v, 10'000);
  if (schedule != Schedule::interleaved && v != 1)
    throw Error("vpp", "model chunks need the interleaved schedule", "1 for " + std::string(to_string(schedule)));
  if (schedule == Schedule::interleaved && m % p != 0)
    throw Error("microbatches", std::to_string(m) + " is not a multiple of the " + std::to_string(p) +
                                    " stages (Megatron's interleaved schedule needs it)",
                "a multiple of " + std::to_string(p));
  const std::int64_t ops = simulated_ops(schedule, p, m, v);
  if (ops > kMaxSimulatedOps)
    throw Error("microbatches",
                std::to_string(p) + " stages x " + std::to_string(m) + " micro-batches x " + std::to_string(v) +
                    " chunks is " + std::to_string(ops) + " operations, too many to simulate",
                "stages x microbatches x vpp x " + std::string(schedule == Schedule::zb_h1 ? "3" : "2") +
                    " <= " + std::to_string(kMaxSimulatedOps));
}

std::int64_t simulated_ops(Schedule schedule, std::int64_t p, std::int64_t m, std::int64_t v) {
  return saturating_product({p, m, v, schedule == Schedule::zb_h1 ? 3 : 2});
}

void stage_program(Schedule schedule, int p, int m, int v, int s, std::vector<StageOp>& out) {
  out.clear();
  switch (schedule) {
    case Schedule::gpipe:
      for (int mb = 0; mb < m; ++mb) out.push_back({OpKind::forward, 0, mb});
      for (int mb = 0; mb < m; ++mb) out.push_back({OpKind::backward, 0, mb});
      return;
    case Schedule::one_f_one_b:
    case Schedule::zb_h1: {
      // Step x runs F_x, then B_{x-(p-1-s)}, then (ZB-H1) W_{x-(p-1)}, each when in [0, m).
      // Steps where the stage runs nothing are skipped (jumping to the next step that runs
      // something), so a stage's program costs O(its ops), not O(m + p).
      const bool split = schedule == Schedule::zb_h1;
      const int b_shift = p - 1 - s, w_shift = p - 1;
      auto next_step = [&](int x) {  // first step >= x with an op; m + p - 1 when none is left
        int next = m + p - 1;
        auto consider = [&](int begin) {  // the op range [begin, begin + m)
          if (x < begin + m) next = std::min(next, std::max(x, begin));
        };
        consider(0);
        consider(b_shift);
        if (split) consider(w_shift);
        return next;
      };
      for (int x = next_step(0); x < m + p - 1; x = next_step(x + 1)) {
        if (x < m) out.push_back({OpKind::forward, 0, x});
        const int b = x - b_shift;
        if (b >= 0 && b < m) out.push_back({OpKind::backward, 0, b});
        const int w = x - w_shift;
        if (split && w >= 0 && w < m) out.push_back({OpKind::weight, 0, w});
      }
      return;
    }
    case Schedule::interleaved: {
      // Megatron-LM forward_backward_pipelining_with_interleaving: virtual micro-batch k maps to
      // chunk (k mod pv) / p (reversed for backward) and micro-batch (k / pv) p + k mod p.
      const int total = m * v;
      const int group = p * v;
      int warmup = (p - s - 1) * 2 + (v - 1) * p;
      if (m == p) warmup = total;  // Megatron runs all forwards first when m == p
      warmup = std::min(warmup, total);
      auto op = [&](int k, bool forward) {
        const int in_group = k % group;
        int chunk = in_group / p;
        if (!forward) chunk = v - 1 - chunk;
        const int mb = (k / group) * p + in_group % p;
        return StageOp{forward ? OpKind::forward : OpKind::backward, chunk, mb};
      };
      for (int k = 0; k < warmup; ++k) out.push_back(op(k, true));
      const int steady = total - warmup;
      for (int k = 0; k < steady; ++k) {
        out.push_back(op(warmup + k, true));
        out.push_back(op(k, false));
      }
      for (int k = steady; k < total; ++k) out.push_back(op(k, false));
      return;
    }
  }
}

}  // namespace tessera
