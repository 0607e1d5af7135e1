#include "core/percentile.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

// numpy.percentile's default ("linear"): position q/100 * (n - 1) in the sorted values.
TEST(Percentile, MatchesNumpyLinear) {
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 50), 2.5);        // np.percentile([1,2,3,4], 50)
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);        // order does not matter
  EXPECT_NEAR(percentile({1, 2, 3, 4, 10}, 90), 7.6, 1e-12);   // pos 3.6: 4 + 0.6 * 6
  EXPECT_DOUBLE_EQ(percentile({10, 20, 30}, 25), 15.0);       // pos 0.5
  EXPECT_NEAR(percentile({3, 1, 2}, 90), 2.8, 1e-12);         // pos 1.8
  EXPECT_DOUBLE_EQ(percentile({5, 1, 9, 7}, 0), 1.0);
  EXPECT_DOUBLE_EQ(percentile({5, 1, 9, 7}, 100), 9.0);
  EXPECT_DOUBLE_EQ(percentile({42}, 90), 42.0);
  EXPECT_DOUBLE_EQ(percentile({2, 2, 2, 8}, 50), 2.0);
  EXPECT_NEAR(percentile({0.5, 12.0, 3.0, 7.25, 1.0, 40.0}, 75), 10.8125, 1e-12);  // pos 3.75
}

// The median is the 50th percentile: the middle value, or the mean of the two middle ones.
TEST(Percentile, MedianIsTheMiddle) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0.0);
  EXPECT_EQ(percentile({}, 50), 0.0);
}

}  // namespace
}  // namespace tessera
