#include "plan/data_mix.h"

#include <cmath>

#include "core/checks.h"
#include "core/error.h"
#include "core/seeded_random.h"

namespace tessera {

namespace {

constexpr std::int64_t kMaxTokens = 100'000'000;
constexpr std::int64_t kMaxItems = 100'000;
constexpr double kMaxSigma = 10.0;
constexpr double kMaxImagePx = 100'000;
constexpr double kMaxAudioS = 86'400;
constexpr double kProbabilitySumTolerance = 1e-6;
constexpr std::int64_t kMaxEmptySamplesInARow = 10'000;


Sample draw_one(const DataMix& mix, SeededRandom& rng) {
  Sample s;
  if (mix.text_median_tokens > 0) {
    const double text = rng.lognormal(mix.text_median_tokens, mix.text_sigma);
    s.text_tokens = std::min<std::int64_t>(mix.text_cap_tokens, std::max<std::int64_t>(1, std::llround(text)));
  }
  if (mix.images_max > 0) {
    const std::int64_t images =
        mix.images_min + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(mix.images_max - mix.images_min + 1)));
    for (std::int64_t i = 0; i < images; ++i) {
      double u = rng.uniform();
      double size = mix.image_sizes.back().size;
      for (const auto& w : mix.image_sizes) {
        if (u < w.probability) {
          size = w.size;
          break;
        }
        u -= w.probability;
      }
      s.image_px.push_back(size);
    }
  }
  if (mix.audio_probability > 0 && rng.uniform() < mix.audio_probability)
    s.audio_s.push_back(mix.audio_min_s + (mix.audio_max_s - mix.audio_min_s) * rng.uniform());
  if (mix.generate_probability > 0 && rng.uniform() < mix.generate_probability) s.generated_images = mix.generated_images;
  return s;
}

}  // namespace

void DataMix::validate() const {
  require_positive("data.sequence_tokens", sequence_tokens, kMaxTokens);
  if (!samples.empty()) {
    for (std::size_t i = 0; i < samples.size(); ++i) {
      const Sample& s = samples[i];
      const std::string at = "data.samples[" + std::to_string(i) + "]";
      require_non_negative(at + ".text_tokens", s.text_tokens, kMaxTokens);
      for (double px : s.image_px) require_positive_real(at + ".images", px, kMaxImagePx);
      for (double a : s.audio_s) require_positive_real(at + ".audio_s", a, kMaxAudioS);
      require_non_negative(at + ".generated_images", s.generated_images, kMaxItems);
    }
    return;
  }
  if (text_median_tokens != 0) {
    require_positive_real("data.text.median_tokens", text_median_tokens, static_cast<double>(kMaxTokens));
    require_non_negative_real("data.text.sigma", text_sigma, kMaxSigma);
    require_positive("data.text.cap_tokens", text_cap_tokens, kMaxTokens);
  }
  require_non_negative("data.images.max", images_max, kMaxItems);
  require_non_negative("data.images.min", images_min, images_max);
  if (images_max > 0) {
    if (image_sizes.empty()) throw Error("data.images.sizes", "empty", "a list of {px, probability}");
    double total = 0;
    for (const auto& w : image_sizes) {
      require_positive_real("data.images.sizes.px", w.size, kMaxImagePx);
      require_fraction("data.images.sizes.probability", w.probability);
      total += w.probability;
    }
    if (std::fabs(total - 1.0) > kProbabilitySumTolerance)
      throw Error("data.images.sizes.probability", "sums to " + std::to_string(total), "probabilities summing to 1");
  }
  if (audio_probability != 0) {
    require_fraction("data.audio.probability", audio_probability);
    require_positive_real("data.audio.min_s", audio_min_s, kMaxAudioS);
    require_positive_real("data.audio.max_s", audio_max_s, kMaxAudioS);
    if (audio_max_s < audio_min_s) throw Error("data.audio.max_s", "below min_s", "a length >= min_s");
  }
  if (generate_probability != 0) {
    require_fraction("data.generate.probability", generate_probability);
    require_positive("data.generate.images", generated_images, kMaxItems);
  }
  if (text_median_tokens == 0 && images_max == 0 && audio_probability == 0)
    throw Error("data", "a mix with no text, images or audio", "at least one of text, images, audio");
}

std::vector<Sample> draw_samples(const DataMix& mix, std::size_t count, std::uint64_t seed) {
  std::vector<Sample> out;
  out.reserve(count);
  if (!mix.samples.empty()) {
    for (std::size_t i = 0; i < count; ++i) out.push_back(mix.samples[i % mix.samples.size()]);
    return out;
  }
  SeededRandom rng(seed);
  for (std::size_t i = 0; i < count; ++i) out.push_back(draw_one(mix, rng));
  return out;
}

std::vector<PackedSequence> pack_sequences(const MultimodalSpec& model, const DataMix& mix,
                                           std::int64_t sequences, std::uint64_t seed) {
  const std::size_t n_modules = model.modules.size();
  const std::size_t backbone = model.backbone_index();
  std::vector<PackedSequence> out;
  out.reserve(static_cast<std::size_t>(sequences));
  PackedSequence current;
  current.modules.assign(n_modules, ModuleLoad{});
  double used = 0;
  SeededRandom rng(seed);
  std::size_t next_real = 0;
  const double capacity = static_cast<double>(mix.sequence_tokens);
  std::vector<ModuleLoad> load(n_modules);
  std::int64_t empty_in_a_row = 0;
  while (static_cast<std::int64_t>(out.size()) < sequences) {
    const Sample s = mix.samples.empty() ? draw_one(mix, rng) : mix.samples[next_real++ % mix.samples.size()];
    // The sample's load on every module.
    std::fill(load.begin(), load.end(), ModuleLoad{});
    double tokens = static_cast<double>(s.text_tokens);
    auto add_media = [&](Modality modality, double size) {
      for (std::size_t i = 0; i < n_modules; ++i) {
        const ModuleSpec& m = model.modules[i];
        if (m.modality != modality) continue;
        if (m.role == ModuleRole::encoder) {
          const double t = static_cast<double>(encoder_tokens(m, size));
          load[i] += {t, t * t, 1.0, t};
          tokens += static_cast<double>(backbone_tokens(m, size));
        }
      }
      // Projectors embed what their encoder emits (after merging).
      for (std::size_t i = 0; i < n_modules; ++i) {
        const ModuleSpec& m = model.modules[i];
        if (m.role != ModuleRole::projector || m.modality != modality) continue;
        for (const auto& e : model.modules)
          if (e.role == ModuleRole::encoder && e.modality == modality) {
            const double t = static_cast<double>(backbone_tokens(e, size));
            load[i] += {t, t * t, 1.0, t};
            break;
          }
      }
    };
    bool has_encoder[2] = {false, false};
    for (const auto& m : model.modules)
      if (m.role == ModuleRole::encoder) has_encoder[m.modality == Modality::image ? 0 : 1] = true;
    if (has_encoder[0])
      for (double px : s.image_px) add_media(Modality::image, px);
    if (has_encoder[1])
      for (double a : s.audio_s) add_media(Modality::audio, a);
    for (std::size_t i = 0; i < n_modules; ++i) {
      const ModuleSpec& m = model.modules[i];
      if (m.role != ModuleRole::generator || s.generated_images == 0) continue;
      const double t = static_cast<double>(m.tokens_per_output);
      const double steps = static_cast<double>(m.steps_per_output * s.generated_images);
      load[i] += {steps * t, steps * t * t, steps, t};
    }
    const bool text_only = tokens == static_cast<double>(s.text_tokens);
    if (tokens > capacity && !text_only)
      throw Error("data", "a sample of " + std::to_string(static_cast<std::int64_t>(tokens)) +
                              " backbone tokens with media exceeds the sequence of " + std::to_string(mix.sequence_tokens),
                  "samples that fit in data.sequence_tokens (raise it or cap the sample)");
    if (tokens == 0) {
      // Media this model has no encoder for, and no text: nothing reaches the backbone.
      if (++empty_in_a_row > kMaxEmptySamplesInARow)
        throw Error("data", "samples carry no tokens this model reads", "samples with text or the model's media");
      continue;
    }
    empty_in_a_row = 0;
    auto close_sequence = [&]() {
      current.modules[backbone].tokens = used;
      current.modules[backbone].items = 1;
      out.push_back(current);
      current.modules.assign(n_modules, ModuleLoad{});
      current.samples = 0;
      used = 0;
    };
    if (text_only) {
      // A text document flows across sequence boundaries (standard pre-training packing); it
      // counts as a sample of the sequence it starts in.
      double left = tokens;
      ++current.samples;
      while (left > 0 && static_cast<std::int64_t>(out.size()) < sequences) {
        const double take = std::min(left, capacity - used);
        used += take;
        left -= take;
        if (used >= capacity) close_sequence();
      }
      if (static_cast<std::int64_t>(out.size()) == sequences) break;
      continue;
    }
    if (used + tokens > capacity) {
      close_sequence();
      if (static_cast<std::int64_t>(out.size()) == sequences) break;
    }
    for (std::size_t i = 0; i < n_modules; ++i) current.modules[i] += load[i];
    ++current.samples;
    used += tokens;
  }
  return out;
}

}  // namespace tessera
