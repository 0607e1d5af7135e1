// run_parallel_tasks: every index runs once on any thread count, a failure stops new tasks, and
// the failure rethrown is the lowest index's whatever the timing.
#include "core/parallel_tasks.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera {
namespace {

TEST(ParallelTasks, EveryIndexRunsOnceOnAnyThreadCount) {
  for (int threads : {0, 1, 2, 7, 64}) {
    std::vector<std::atomic<int>> runs(1000);
    run_parallel_tasks(runs.size(), threads, [&](std::size_t i) { runs[i]++; });
    for (const auto& r : runs) EXPECT_EQ(r.load(), 1) << threads << " threads";
  }
  run_parallel_tasks(0, 4, [](std::size_t) { FAIL() << "no task for an empty range"; });
}

TEST(ParallelTasks, AFailureStopsNewTasksAndTheLowestIsRethrown) {
  // One thread: tasks run in order, so nothing after the first failure starts.
  std::vector<int> ran;
  try {
    run_parallel_tasks(10, 1, [&](std::size_t i) {
      ran.push_back(static_cast<int>(i));
      if (i == 3) throw std::runtime_error("3");
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "3");
  }
  EXPECT_EQ(ran, (std::vector<int>{0, 1, 2, 3}));
  // Several failing: whichever thread failed first, the lowest failing index is rethrown.
  for (int round = 0; round < 20; ++round) {
    try {
      run_parallel_tasks(64, 4, [](std::size_t i) {
        if (i % 5 == 2) throw std::runtime_error(std::to_string(i));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "2");
    }
  }
}

}  // namespace
}  // namespace tessera
