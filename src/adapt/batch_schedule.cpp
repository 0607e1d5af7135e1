#include "adapt/batch_schedule.h"

#include <cmath>
#include <sstream>

#include "core/error.h"

namespace tessera {

namespace {

// Thresholds keep 3 significant digits: mantissas below 1000.
constexpr double kMantissaLimit = 1000.0;
constexpr double kMaxRoundedCount = 1e18;  // fits an int64 after rounding
struct Suffix {
  char letter;
  std::int64_t value;
};
constexpr Suffix kSuffixes[] = {{'T', 1'000'000'000'000}, {'B', 1'000'000'000}, {'M', 1'000'000}, {'K', 1'000}};
constexpr const char* kScheduleFormat = "space-separated THRESHOLD:BATCH pairs, e.g. \"0:768 250B:1536 500B:3072\"";

}  // namespace

std::string format_count(double count) {
  if (!std::isfinite(count) || count < 0.0 || count >= kMaxRoundedCount)
    throw Error("count", "got " + std::to_string(count), "a finite number from 0 to 1e18");
  // Round to kSignificantDigits significant digits: an integer mantissa times 10^shift.
  std::int64_t power_of_ten = 1;
  for (double x = count; x >= kMantissaLimit; x /= 10.0) power_of_ten *= 10;
  const std::int64_t rounded = std::llround(count / static_cast<double>(power_of_ten)) * power_of_ten;
  // The largest suffix that divides the rounded value exactly.
  for (const Suffix& s : kSuffixes)
    if (rounded >= s.value && rounded % s.value == 0) return std::to_string(rounded / s.value) + s.letter;
  return std::to_string(rounded);
}

double parse_count(const std::string& text) {
  if (text.empty()) throw Error("schedule", "empty threshold", kScheduleFormat);
  double scale = 1.0;
  std::string digits = text;
  for (const Suffix& s : kSuffixes)
    if (text.back() == s.letter || text.back() == s.letter - 'A' + 'a') {
      scale = static_cast<double>(s.value);
      digits = text.substr(0, text.size() - 1);
    }
  if (digits.empty() || digits.size() > 15 || digits.find_first_not_of("0123456789") != std::string::npos)
    throw Error("schedule", "threshold '" + text + "' is not an integer with an optional K/M/B/T suffix",
                kScheduleFormat);
  return std::stod(digits) * scale;
}

std::string megatron_batch_schedule(std::span<const BatchScheduleEntry> entries) {
  std::vector<std::pair<std::string, std::int64_t>> pairs;
  for (const BatchScheduleEntry& e : entries) {
    if (!pairs.empty() && pairs.back().second == e.global_batch) continue;
    std::string threshold = pairs.empty() ? "0" : format_count(e.threshold);
    if (!pairs.empty() && pairs.back().first == threshold) pairs.pop_back();
    if (!pairs.empty() && pairs.back().second == e.global_batch) continue;
    pairs.emplace_back(std::move(threshold), e.global_batch);
  }
  std::string text;
  for (const auto& [threshold, batch] : pairs) {
    if (!text.empty()) text += ' ';
    text += threshold + ":" + std::to_string(batch);
  }
  return text;
}

std::vector<BatchScheduleEntry> parse_megatron_batch_schedule(const std::string& text) {
  std::vector<BatchScheduleEntry> entries;
  std::istringstream in(text);
  std::string pair;
  while (in >> pair) {
    const auto colon = pair.find(':');
    if (colon == std::string::npos) throw Error("schedule", "'" + pair + "' has no ':'", kScheduleFormat);
    const std::string batch_text = pair.substr(colon + 1);
    if (batch_text.empty() || batch_text.size() > 18 || batch_text.find_first_not_of("0123456789") != std::string::npos ||
        std::stoll(batch_text) < 1)
      throw Error("schedule", "batch '" + batch_text + "' in '" + pair + "' is not a positive integer", kScheduleFormat);
    BatchScheduleEntry e{parse_count(pair.substr(0, colon)), std::stoll(batch_text)};
    if (!entries.empty() && e.threshold <= entries.back().threshold)
      throw Error("schedule", "threshold of '" + pair + "' does not increase", kScheduleFormat);
    entries.push_back(e);
  }
  if (entries.empty()) throw Error("schedule", "empty", kScheduleFormat);
  return entries;
}

}  // namespace tessera
