// DataMix: what one training sample of a multimodal job holds -- text tokens, images and their
// sizes, audio clips, images to generate -- as distributions or as a list of real samples, and the
// packing of samples into backbone sequences. The multimodal planner draws an iteration's samples
// from it, so a sample's cost follows its images, not its text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/multimodal_spec.h"

namespace tessera {

struct Sample {
  std::int64_t text_tokens = 0;
  std::vector<double> image_px;  // side of each image (square), in pixels
  std::vector<double> audio_s;   // length of each audio clip, in seconds
  std::int64_t generated_images = 0;
};

struct WeightedSize {
  double size = 0;  // image side in px
  double probability = 0;
};

struct DataMix {
  std::string name;
  std::string source;
  // Text per sample: lognormal with this median and sigma, rounded, capped.
  double text_median_tokens = 0;
  double text_sigma = 0;
  std::int64_t text_cap_tokens = 0;
  // Images per sample: uniform integer in [images_min, images_max], each of a size from image_sizes.
  std::int64_t images_min = 0;
  std::int64_t images_max = 0;
  std::vector<WeightedSize> image_sizes;
  // Audio: with audio_probability, one clip of uniform length in [audio_min_s, audio_max_s].
  double audio_probability = 0;
  double audio_min_s = 0;
  double audio_max_s = 0;
  // With generate_probability, the sample also asks for generated_images images.
  double generate_probability = 0;
  std::int64_t generated_images = 1;
  // Backbone sequence the samples are packed into.
  std::int64_t sequence_tokens = 8192;
  // Real samples (a JSONL file): when not empty they are used in order, cycling, instead of the
  // distributions above.
  std::vector<Sample> samples;

  void validate() const;  // throws Error naming the field
};

// `count` samples, deterministic for `seed`.
std::vector<Sample> draw_samples(const DataMix& mix, std::size_t count, std::uint64_t seed);

// One module's share of a packed sequence: its tokens, the sum of each item's squared token count
// (attention is quadratic per item), and the item count.
struct ModuleLoad {
  double tokens = 0;
  double tokens_squared = 0;
  double items = 0;
  double largest_item_tokens = 0;  // an item runs on one GPU: it bounds how evenly a load splits
  ModuleLoad& operator+=(const ModuleLoad& o) {
    tokens += o.tokens;
    tokens_squared += o.tokens_squared;
    items += o.items;
    largest_item_tokens = largest_item_tokens > o.largest_item_tokens ? largest_item_tokens : o.largest_item_tokens;
    return *this;
  }
};

// A backbone sequence: per module of the model (same order as model.modules), its load. The
// backbone's entry counts the sequence's real tokens (text + media); projectors see their
// encoder's output tokens; generators their latent tokens times denoising steps.
struct PackedSequence {
  std::vector<ModuleLoad> modules;
  std::int64_t samples = 0;
};

// Packs samples in arrival order into sequences of mix.sequence_tokens (next fit: a sample that
// does not fit starts a new sequence; a text-only document flows on into the next) until
// `sequences` are full; draws from the mix as needed. Throws Error("data", ...) when a sample with
// media alone exceeds a sequence.
std::vector<PackedSequence> pack_sequences(const MultimodalSpec& model, const DataMix& mix,
                                           std::int64_t sequences, std::uint64_t seed);

// The built-in mixes (caption-like, interleaved-like, video-like, text-only, audio-like) are in
// data/mixes/; see formats/data_mix_json.h.

}  // namespace tessera
