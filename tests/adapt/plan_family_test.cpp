#include <gtest/gtest.h>

#include "adapt/plan_family.h"

namespace tessera {
namespace {

TEST(PlanFamily, LayoutAndShardingDefineTheFamilyMicroBatchAndRecomputeDoNot) {
  Plan a;
  a.tp = 2;
  a.pp = 4;
  a.dp = 4;
  a.vpp = 2;
  a.zero = OptimizerSharding::zero1;
  Plan b = a;
  b.micro_batch = 4;
  b.recompute = Recompute::full;
  EXPECT_EQ(family_of(a), family_of(b));
  EXPECT_FALSE(same_plan(a, b));
  for (auto change : {+[](Plan& p) { p.tp = 4; }, +[](Plan& p) { p.pp = 2; }, +[](Plan& p) { p.cp = 2; },
                      +[](Plan& p) { p.vpp = 1; }, +[](Plan& p) { p.zero = OptimizerSharding::zero3; }}) {
    Plan c = a;
    change(c);
    EXPECT_NE(family_of(a), family_of(c));
  }
  EXPECT_EQ(to_string(family_of(a)), "tp=2,pp=4,cp=1,ep=1,vpp=2,zero=zero1");
  EXPECT_TRUE(same_plan(a, a));
}

TEST(PlanFamily, SamePlanComparesTheMoeAndFp8Keys) {
  Plan a;
  a.ep = 8;
  for (auto change : {+[](Plan& p) { p.etp = 1; }, +[](Plan& p) { p.dispatcher = MoeDispatcher::flex; },
                      +[](Plan& p) { p.fp8_recipe = Fp8Recipe::blockwise; }, +[](Plan& p) { p.capacity_factor = 1.0; },
                      +[](Plan& p) { p.recompute_modules = kRecomputeMoeAct; }}) {
    Plan b = a;
    change(b);
    EXPECT_FALSE(same_plan(a, b));
  }
}

}  // namespace
}  // namespace tessera
