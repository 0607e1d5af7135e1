#include "balance/per_batch_stream.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/core.h>

#include "core/checks.h"
#include "core/error.h"
#include "core/seeded_random.h"

namespace tessera {

namespace {

// Samples drawn from a mix at a time (each chunk seeded from the stream seed, mix and chunk).
constexpr std::size_t kSamplesPerChunk = 4096;
constexpr std::uint64_t kMixSeedStride = 1'000'003;  // a prime: chunk seeds of different mixes differ
constexpr double kMaxWeight = 1e9;
constexpr double kP99 = 0.99;

std::int64_t image_tokens(double px) {
  const auto side = static_cast<std::int64_t>(std::floor(px / kVitPatchPx));
  return std::max<std::int64_t>(1, side * side);
}

// Next-fit packing of one mix's samples into sequences.
class SequenceSource {
 public:
  SequenceSource(const DataMix& mix, std::uint64_t seed) : mix_(mix), seed_(seed) {}

  void next(std::vector<std::int64_t>& documents, std::vector<std::int64_t>& samples, std::int64_t& next_id) {
    documents.clear();
    samples.clear();
    std::int64_t room = mix_.sequence_tokens;
    if (carry_tokens_ > 0) {  // the rest of a text document
      const std::int64_t take = std::min(carry_tokens_, room);
      documents.push_back(take);
      carry_tokens_ -= take;
      room -= take;
    }
    while (room > 0) {
      if (pending_id_ < 0) draw(next_id);
      if (pending_tokens_ <= room) {
        documents.push_back(pending_tokens_);
        samples.push_back(pending_id_);
        room -= pending_tokens_;
        pending_id_ = -1;
        continue;
      }
      if (pending_text_only_) {  // flows on into the next sequence; counted where it starts
        documents.push_back(room);
        samples.push_back(pending_id_);
        carry_tokens_ = pending_tokens_ - room;
        pending_id_ = -1;
      }
      break;  // a sample with media waits for the next sequence
    }
  }
  std::int64_t pending_id() const { return pending_id_; }

 private:
  void draw(std::int64_t& next_id) {
    if (next_ == chunk_.size()) {
      chunk_ = draw_samples(mix_, kSamplesPerChunk, seed_ + chunks_++);
      next_ = 0;
    }
    const Sample& s = chunk_[next_++];
    if (!s.audio_s.empty())
      throw Error("mix", fmt::format("{} has audio, which per-batch cp does not model", mix_.name),
                  "a mix of text and images");
    std::int64_t tokens = s.text_tokens;
    for (double px : s.image_px) tokens += image_tokens(px);
    pending_text_only_ = s.image_px.empty();
    if (!pending_text_only_ && tokens > mix_.sequence_tokens)
      throw Error("mix",
                  fmt::format("a {} sample of {} tokens with images exceeds its {}-token sequence", mix_.name, tokens,
                              mix_.sequence_tokens),
                  "samples that fit data.sequence_tokens");
    pending_tokens_ = std::max<std::int64_t>(1, tokens);
    pending_id_ = next_id++;
  }

  const DataMix& mix_;
  std::uint64_t seed_;
  std::vector<Sample> chunk_;
  std::size_t next_ = 0;
  std::uint64_t chunks_ = 0;
  std::int64_t carry_tokens_ = 0;
  std::int64_t pending_id_ = -1, pending_tokens_ = 0;
  bool pending_text_only_ = false;
};

std::size_t pick_mix(const std::vector<WeightedMix>& mixes, double total_weight, SeededRandom& rng) {
  double u = rng.uniform() * total_weight;
  for (std::size_t i = 0; i + 1 < mixes.size(); ++i) {
    if (u < mixes[i].weight) return i;
    u -= mixes[i].weight;
  }
  return mixes.size() - 1;
}

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto at = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size()))) - 1;
  return values[std::min(at, values.size() - 1)];
}

}  // namespace

void PerBatchStreamSettings::validate() const {
  if (mixes.empty()) throw Error("mix", "none given", "one or more data mixes");
  for (const WeightedMix& m : mixes) {
    m.mix.validate();
    require_positive_real("mix.weight", m.weight, kMaxWeight);
    if (m.mix.sequence_tokens > step_tokens)
      throw Error("step_tokens",
                  fmt::format("{} is below {}'s sequence of {}", step_tokens, m.mix.name, m.mix.sequence_tokens),
                  "at least every mix's sequence_tokens");
  }
  require_positive("steps", steps, kMaxPerBatchSteps);
  require_positive("step_tokens", step_tokens, kMaxPerBatchStepTokens);
}

DataMix long_video_mix() {
  DataMix mix;
  mix.name = "long-video";
  mix.source =
      "long videos at 1 frame per second, 200-500 frames at 224 px (256 ViT-H/14 tokens each), short "
      "instructions (LLaVA-Video / LongVA style); one video per 131,072-token sequence";
  mix.text_median_tokens = 100;
  mix.text_sigma = 0.5;
  mix.text_cap_tokens = 1024;
  mix.images_min = 200;
  mix.images_max = 500;
  mix.image_sizes = {{224, 1.0}};
  mix.sequence_tokens = 131'072;
  return mix;
}

DrawnStream draw_stream(const PerBatchStreamSettings& settings) {
  settings.validate();
  std::vector<SequenceSource> sources;
  double total_weight = 0;
  for (std::size_t i = 0; i < settings.mixes.size(); ++i) {
    sources.emplace_back(settings.mixes[i].mix, settings.seed * kMixSeedStride + i * kSamplesPerChunk);
    total_weight += settings.mixes[i].weight;
  }
  SeededRandom rng(settings.seed);
  DrawnStream out;
  std::vector<std::int64_t> documents, samples;
  for (std::int64_t s = 0; s < settings.steps; ++s) {
    StreamStep step;
    std::size_t mix = pick_mix(settings.mixes, total_weight, rng);
    for (std::int64_t capacity = 0; capacity < settings.step_tokens;) {
      if (settings.mix_per_sequence) mix = pick_mix(settings.mixes, total_weight, rng);
      sources[mix].next(documents, samples, out.drawn_samples);
      step.batch.add(documents);
      step.samples.push_back(samples);
      capacity += settings.mixes[mix].mix.sequence_tokens;
    }
    out.steps.push_back(std::move(step));
  }
  for (const SequenceSource& source : sources)
    if (source.pending_id() >= 0) out.unplaced.push_back(source.pending_id());
  return out;
}

PerBatchStreamResult run_per_batch_stream(const DrawnStream& stream, PerBatchCpPlanner& planner) {
  PerBatchStreamResult r;
  for (int c : planner.static_degrees()) r.statics.push_back({c, 0.0});
  r.microbatches_at_degree.assign(static_cast<std::size_t>(planner.gpus()) + 1, 0);
  std::vector<int> placed(static_cast<std::size_t>(stream.drawn_samples), 0);
  for (std::int64_t id : stream.unplaced) ++placed[static_cast<std::size_t>(id)];
  std::vector<double> decision_ms;
  int previous_degree = -1;
  for (const StreamStep& step : stream.steps) {
    const auto start = std::chrono::steady_clock::now();
    planner.cost_step(step.batch);
    const StepDecision& d = planner.per_batch_decision();
    decision_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    for (std::string& v : decision_violations(d, planner, step.batch.size()))
      r.violations.push_back(fmt::format("step {}: {}", r.steps, v));
    r.per_batch_time_s += d.step_time_s;
    r.lower_bound_time_s += d.lower_bound_s;
    if (d.static_degree == 0) ++r.heterogeneous_steps;
    if (previous_degree >= 0 && d.static_degree != previous_degree) ++r.static_degree_changes;
    previous_degree = d.static_degree;
    for (const CpGroup& g : d.groups)
      for (std::size_t m : g.microbatches) {
        ++r.microbatches_at_degree[static_cast<std::size_t>(g.degree)];
        for (std::int64_t id : step.samples[m]) ++placed[static_cast<std::size_t>(id)];
      }
    for (StaticDegreeTime& s : r.statics) s.time_s += planner.static_decision(s.degree).step_time_s;
    for (std::size_t m = 0; m < step.batch.size(); ++m) r.tokens += static_cast<double>(step.batch.tokens(m));
    r.microbatches += static_cast<std::int64_t>(step.batch.size());
    ++r.steps;
  }
  for (std::size_t id = 0; id < placed.size(); ++id)
    if (placed[id] != 1) r.violations.push_back(fmt::format("sample {} placed {} times", id, placed[id]));
  r.samples = stream.drawn_samples - static_cast<std::int64_t>(stream.unplaced.size());
  r.static_time_s = StepDecision::kInfeasible;
  for (const StaticDegreeTime& s : r.statics)
    if (s.time_s < r.static_time_s) {
      r.static_time_s = s.time_s;
      r.best_static_degree = s.degree;
    }
  r.gain = r.static_time_s / r.per_batch_time_s - 1.0;
  r.gain_bound = r.static_time_s / r.lower_bound_time_s - 1.0;
  double sum = 0;
  for (double ms : decision_ms) sum += ms;
  r.decision_mean_ms = decision_ms.empty() ? 0 : sum / static_cast<double>(decision_ms.size());
  r.decision_p99_ms = percentile(decision_ms, kP99);
  r.decision_max_ms = decision_ms.empty() ? 0 : *std::max_element(decision_ms.begin(), decision_ms.end());
  return r;
}

}  // namespace tessera
