// A budget of work shared by tasks that run in parallel (adapt map's searches, the held-out
// calibration's fits): each takes what it spent, and the first to overdraw it stops. The work is
// a count the caller defines (plans costed, simulated pipeline operations), never a clock, so
// whether a job is over its budget is the same on every machine.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/error.h"

namespace tessera {

// Takes `work` from the budget (none: no bound); throws Error(field, "spent") when that leaves it
// below zero, i.e. exactly when the work taken so far exceeds what it held. Callers translate
// that field into an error naming the user's option.
inline void take_work(std::atomic<std::int64_t>* budget, std::int64_t work, const char* field) {
  if (budget != nullptr && budget->fetch_sub(work, std::memory_order_relaxed) - work < 0)
    throw Error(field, "spent", "a budget that covers the work");
}

}  // namespace tessera
