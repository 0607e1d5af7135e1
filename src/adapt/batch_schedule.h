// A global-batch schedule as Megatron-LM `--step-batch-size-schedule` text: space-separated
// THRESHOLD:BATCH pairs, the batch taking effect once THRESHOLD tokens (or samples) have been
// consumed, thresholds with K / M / B / T suffixes (10^3, 10^6, 10^9, 10^12), e.g.
// "0:768 250B:1536 500B:3072".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tessera {

struct BatchScheduleEntry {
  double threshold = 0;  // consumed tokens (or samples) at which the batch takes effect
  std::int64_t global_batch = 0;
};

// A count to 3 significant digits as an integer with the largest suffix that keeps it exact:
// 250e9 -> "250B", 1.2345e9 -> "1230M", 768 -> "768". Throws Error on a negative or non-finite count.
std::string format_count(double count);
// Parses format_count's output (and any integer with an optional K/M/B/T suffix).
double parse_count(const std::string& text);  // throws Error("schedule", ...)

// The schedule text: the first threshold printed as 0, entries whose batch equals the previous one
// dropped, and of entries whose thresholds round to the same text the last kept.
std::string megatron_batch_schedule(std::span<const BatchScheduleEntry> entries);
// Inverse of megatron_batch_schedule (thresholds as rounded there). Throws Error("schedule", ...)
// on a malformed pair, a non-positive batch or thresholds that do not increase.
std::vector<BatchScheduleEntry> parse_megatron_batch_schedule(const std::string& text);

}  // namespace tessera
