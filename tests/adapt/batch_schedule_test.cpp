// Megatron-LM --step-batch-size-schedule text: formatting, parsing, and the round trip.
#include <gtest/gtest.h>

#include "adapt/batch_schedule.h"
#include "core/error.h"

namespace tessera {
namespace {

TEST(BatchSchedule, CountsUseTheLargestExactSuffix) {
  EXPECT_EQ(format_count(0), "0");
  EXPECT_EQ(format_count(768), "768");
  EXPECT_EQ(format_count(250e9), "250B");
  EXPECT_EQ(format_count(1.5e12), "1500B");
  EXPECT_EQ(format_count(2e12), "2T");
  EXPECT_EQ(format_count(1234567890), "1230M");  // 3 significant digits
  EXPECT_EQ(format_count(999999), "1M");
  EXPECT_EQ(format_count(4500), "4500");
  EXPECT_EQ(parse_count("250B"), 250e9);
  EXPECT_EQ(parse_count("1230m"), 1230e6);
  EXPECT_EQ(parse_count("42"), 42.0);
  EXPECT_THROW(format_count(-1), Error);
  EXPECT_THROW(parse_count("1.5B"), Error);
  EXPECT_THROW(parse_count("B"), Error);
}

TEST(BatchSchedule, TheIssueExampleRoundTrips) {
  const std::vector<BatchScheduleEntry> entries = {{0, 768}, {250e9, 1536}, {500e9, 3072}};
  const std::string text = megatron_batch_schedule(entries);
  EXPECT_EQ(text, "0:768 250B:1536 500B:3072");
  const auto back = parse_megatron_batch_schedule(text);
  ASSERT_EQ(back.size(), entries.size());
  for (std::size_t i = 0; i < back.size(); ++i) {
    EXPECT_EQ(back[i].threshold, entries[i].threshold);
    EXPECT_EQ(back[i].global_batch, entries[i].global_batch);
  }
}

// Repeated batches (a plan-only change) are dropped; thresholds that round together keep the later
// batch; the first threshold is 0 whatever it was.
TEST(BatchSchedule, RepeatedAndCollidingEntriesAreMerged) {
  const std::vector<BatchScheduleEntry> entries = {
      {3.0, 64}, {1.0e9, 64}, {2.0001e9, 96}, {2.0004e9, 128}, {5e9, 128}, {7.77e9, 64}};
  EXPECT_EQ(megatron_batch_schedule(entries), "0:64 2B:128 7770M:64");
  // Every threshold that survives increases, so the text parses back.
  EXPECT_NO_THROW(parse_megatron_batch_schedule(megatron_batch_schedule(entries)));
}

TEST(BatchSchedule, MalformedTextNamesTheScheduleField) {
  for (const char* bad : {"", "0:768 250B", "0:768 250B:0", "0:768 250B:x", "10:768 5:1536", "0:768 250X:10"}) {
    try {
      parse_megatron_batch_schedule(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), "schedule") << bad;
    }
  }
}

}  // namespace
}  // namespace tessera
