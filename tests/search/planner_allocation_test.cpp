// The planner's hot loop allocates nothing: heap allocations during a search grow with the number
// of outer shapes and ranking entries, not with the candidates costed. Counts every operator new
// of this test binary while `counting` is on.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include <fmt/core.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "search/planner.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<long long> allocations{0};
}  // namespace

// The replaced global operators pair malloc with free; GCC's -Wmismatched-new-delete cannot see
// that the replacement new is malloc and warns at -O1 (the sanitizer build).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t bytes) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
// std::stable_sort's temporary buffer comes from the nothrow form and goes back through the plain
// delete: replacing one form and not the other pairs ASan's new with this free (alloc-dealloc-mismatch).
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(bytes == 0 ? 1 : bytes);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace tessera {
namespace {

// At most one allocation per this many candidates. The loop before issue 11 made at least one per
// candidate (validate_plan's checks build a std::string for the field "recompute_layers", longer
// than the small-string buffer); what remains is per shape (its lists), per ranking entry (each
// plan entering the ranking may replace an alias) and the simulator's re-scoring of the best.
constexpr double kCandidatesPerAllocation = 20.0;
constexpr double kMarginalCandidates = 1000.0;

long long allocations_during(const ModelSpec& model, const Cluster& cluster, const Workload& w,
                             const PlanConstraints& fix, PlannerOptions options, PlanSearch& out) {
  options.threads = 1;
  options.top_k = 5;
  allocations = 0;
  counting = true;
  out = search_plans(model, cluster, w, fix, options);
  counting = false;
  return allocations.load();
}

TEST(PlannerAllocation, HotLoopDoesNotAllocate) {
  for (const char* name : {"llama3-70b", "mixtral-8x7b"}) {
    const ModelSpec model = builtin_model(name);
    const Cluster cluster = load_cluster("h100-sxm-80gb:512");
    PlanConstraints fix;
    fix.precision_choices = {Precision::bf16, Precision::fp8};
    PlanSearch s;
    const long long n = allocations_during(model, cluster, {1024, 4096}, fix, {}, s);
    ASSERT_GT(s.evaluated, 10'000) << name;
    fmt::print("{}: {} allocations for {} candidates\n", name, n, s.evaluated);
    EXPECT_LT(static_cast<double>(n), static_cast<double>(s.evaluated) / kCandidatesPerAllocation) << name;
  }
}

// One shape, every candidate costed: the allocations do not grow with the candidates.
TEST(PlannerAllocation, OneShapeAllocatesAFixedAmount) {
  const ModelSpec model = builtin_model("mixtral-8x7b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:512");
  PlanConstraints fix;
  fix.tp = 2;
  fix.pp = 4;
  fix.cp = 1;
  fix.ep = 8;
  fix.etp = 0;
  fix.precision_choices = {Precision::bf16, Precision::fp8};
  PlannerOptions all;
  all.exhaustive = true;
  PlanSearch small, large;
  const long long a = allocations_during(model, cluster, {256, 4096}, fix, all, small);
  const long long b = allocations_during(model, cluster, {2048, 4096}, fix, all, large);
  fmt::print("one shape: {} allocations for {} candidates, {} for {}\n", a, small.evaluated, b, large.evaluated);
  ASSERT_GT(large.evaluated, 2 * small.evaluated);
  // The extra candidates cost (almost) no allocation: at most one per kMarginalCandidates.
  EXPECT_LT(static_cast<double>(b - a), static_cast<double>(large.evaluated - small.evaluated) / kMarginalCandidates);
}

}  // namespace
}  // namespace tessera
