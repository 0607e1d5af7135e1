// core/checks.h: every validator accepts exactly its documented closed range, rejects the rest
// (including NaN and infinities) and names the field in the tessera::Error it throws.
#include "core/checks.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "core/error.h"

namespace tessera {
namespace {

using testing::thrown_field;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Checks, MaxCountKeepsProductsExactInDouble) {
  // The header promises counts up to kMaxCount stay exact in double: below 2^53.
  EXPECT_LT(static_cast<double>(kMaxCount), std::ldexp(1.0, 53));
  EXPECT_EQ(static_cast<std::int64_t>(static_cast<double>(kMaxCount)), kMaxCount);
}

TEST(Checks, RequirePositiveAcceptsOneToMax) {
  EXPECT_NO_THROW(require_positive("layers", 1));
  EXPECT_NO_THROW(require_positive("layers", kMaxCount));
  EXPECT_NO_THROW(require_positive("tp", 64, 64));
  EXPECT_EQ(thrown_field([] { require_positive("layers", 0); }), "layers");
  EXPECT_EQ(thrown_field([] { require_positive("layers", -1); }), "layers");
  EXPECT_EQ(thrown_field([] { require_positive("layers", kMaxCount + 1); }), "layers");
  EXPECT_EQ(thrown_field([] { require_positive("tp", 65, 64); }), "tp");
}

TEST(Checks, RequireNonNegativeAcceptsZeroToMax) {
  EXPECT_NO_THROW(require_non_negative("dense_layers", 0));
  EXPECT_NO_THROW(require_non_negative("dense_layers", 10, 10));
  EXPECT_EQ(thrown_field([] { require_non_negative("dense_layers", -1); }), "dense_layers");
  EXPECT_EQ(thrown_field([] { require_non_negative("dense_layers", 11, 10); }), "dense_layers");
}

TEST(Checks, RequirePositiveRealIsOpenAtZeroClosedAtMax) {
  EXPECT_NO_THROW(require_positive_real("bw", 1e-300, 1.0));
  EXPECT_NO_THROW(require_positive_real("bw", 1.0, 1.0));
  for (double bad : {0.0, -0.0, -1.0, 1.0000001, kInf, -kInf, kNaN})
    EXPECT_EQ(thrown_field([&] { require_positive_real("bw", bad, 1.0); }), "bw") << bad;
}

TEST(Checks, RequireFractionIsTheHalfOpenUnitInterval) {
  EXPECT_NO_THROW(require_fraction("eff", 1.0));
  EXPECT_NO_THROW(require_fraction("eff", 0.5));
  EXPECT_NO_THROW(require_fraction("eff", 1e-9));
  for (double bad : {0.0, -0.1, 1.0 + 1e-12, kInf, kNaN})
    EXPECT_EQ(thrown_field([&] { require_fraction("eff", bad); }), "eff") << bad;
}

TEST(Checks, ErrorCarriesFieldAllowedAndOneLineMessage) {
  try {
    require_positive("cluster.gpus", 0, 100);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "cluster.gpus");
    EXPECT_NE(e.allowed().find("100"), std::string::npos) << e.allowed();
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("cluster.gpus: ", 0), 0u) << what;
    EXPECT_NE(what.find("(allowed: " + e.allowed() + ")"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

TEST(Checks, ErrorWithoutAllowedHasNoAllowedSuffix) {
  const Error e("plan", "no valid value", "");
  EXPECT_STREQ(e.what(), "plan: no valid value");
  EXPECT_TRUE(e.allowed().empty());
}

}  // namespace
}  // namespace tessera
