// Independent tasks over a few threads, for work whose result must not depend on the thread count
// (the grid searches of adapt's candidate sets, the held-out calibration draws): each task writes
// only its own slot.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace tessera {

// Runs task(i) for every i in [0, count) once, on up to `threads` threads (0 = the hardware's),
// the calling thread included. After a task throws, no task starts; the failure of the lowest
// index that fails is rethrown once all have stopped.
template <typename Task>
void run_parallel_tasks(std::size_t count, int threads, const Task& task) {
  std::vector<std::exception_ptr> failures(count);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  // Indices are claimed in order and a claimed index always runs: when any task fails, every
  // lower index has been claimed and runs, so the lowest failure is the same whatever the timing.
  auto work = [&] {
    while (!failed) {
      const std::size_t i = next++;
      if (i >= count) return;
      try {
        task(i);
      } catch (...) {
        failures[i] = std::current_exception();
        failed = true;
      }
    }
  };
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t used = std::min<std::size_t>(threads > 0 ? static_cast<std::size_t>(threads) : hardware, count);
  {
    std::vector<std::jthread> pool;
    for (std::size_t t = 1; t < used; ++t) pool.emplace_back(work);
    work();
  }  // joins
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
}

}  // namespace tessera
