#include "dataservice/synthetic_dataset.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "core/checks.h"
#include "core/error.h"
#include "core/seeded_random.h"
#include "preprocess/image_encode.h"
#include "preprocess/text_tokenizer.h"

namespace tessera {

namespace {

namespace fs = std::filesystem;

// Image sides drawn uniformly in [160, 960] px: below LLaVA's 336 and up to 2.9x it.
constexpr int kMinSide = 160, kMaxSide = 960;
constexpr double kPngShare = 0.25;
constexpr int kJpegQuality = 90;  // a common camera / web default
// Words per text: lognormal, median 40, sigma 0.6 (captions to short paragraphs).
constexpr double kMedianWords = 40.0, kWordsSigma = 0.6;
constexpr int kMaxWords = 400;
// Per-pixel noise amplitude (+-12 of 255): keeps JPEG and PNG sizes near photographs' rather than
// a flat gradient's.
constexpr int kNoise = 12;
constexpr const char* kWords[] = {
    "the", "a", "image", "shows", "cat", "dog", "red", "blue", "green", "small", "large", "tree", "house", "river",
    "mountain", "sky", "under", "over", "near", "with", "person", "holding", "bright", "dark", "street", "car",
    "window", "light", "water", "field", "flower", "bird", "flying", "sitting", "standing", "two", "three", "old",
    "new", "wooden", "stone", "table", "chair", "book", "open", "closed", "morning", "evening", "city", "road"};

// Marsaglia's xorshift32 (J. Stat. Softw. 8(14), 2003): per-pixel noise at a few cycles a value.
std::uint32_t xorshift32(std::uint32_t& state) {
  state ^= state << 13;
  state ^= state >> 17;
  state ^= state << 5;
  return state;
}

Image gradient_image(SeededRandom& rng) {
  Image image;
  image.width = kMinSide + static_cast<int>(rng.below(kMaxSide - kMinSide + 1));
  image.height = kMinSide + static_cast<int>(rng.below(kMaxSide - kMinSide + 1));
  image.rgb.resize(static_cast<std::size_t>(image.width) * image.height * 3);
  const int base[3] = {static_cast<int>(rng.below(256)), static_cast<int>(rng.below(256)), static_cast<int>(rng.below(256))};
  std::uint32_t noise_state = static_cast<std::uint32_t>(rng.below(1u << 31)) | 1u;
  std::size_t k = 0;
  for (int y = 0; y < image.height; ++y)
    for (int x = 0; x < image.width; ++x)
      for (int c = 0; c < 3; ++c) {
        const int ramp = (c == 0 ? x * 255 / image.width : c == 1 ? y * 255 / image.height : (x + y) * 127 / (image.width + image.height));
        const int noise = static_cast<int>(xorshift32(noise_state) % (2 * kNoise + 1)) - kNoise;
        image.rgb[k++] = static_cast<std::uint8_t>(std::clamp((base[c] + ramp) / 2 + noise, 0, 255));
      }
  return image;
}

std::string words(SeededRandom& rng) {
  const int n = std::clamp(static_cast<int>(rng.lognormal(kMedianWords, kWordsSigma)), 1, kMaxWords);
  std::string text;
  for (int i = 0; i < n; ++i) {
    if (i > 0) text += ' ';
    text += kWords[rng.below(std::size(kWords))];
  }
  return text + ".\n";
}

void write_file(const fs::path& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out.flush()) throw Error("--out", "cannot write " + path.string(), "a writable folder");
}

}  // namespace

void SyntheticDatasetSettings::validate() const {
  if (folder.empty()) throw Error("--out", "is required", "--out FOLDER");
  require_positive("--samples", samples, 1'000'000);
  require_positive("--vocab", vocab_size, 32'000);
  validate_resize_policy(resize);
}

SyntheticDataset make_synthetic_dataset(const SyntheticDatasetSettings& s) {
  s.validate();
  const fs::path root(s.folder);
  fs::create_directories(root / "img");
  fs::create_directories(root / "txt");
  SeededRandom rng(s.seed);
  SyntheticDataset out;
  std::vector<std::string> texts;
  std::vector<std::string> image_names;
  std::vector<GridShape> grids;
  for (std::int64_t i = 0; i < s.samples; ++i) {
    const Image image = gradient_image(rng);
    const bool png = rng.uniform() < kPngShare;
    const std::vector<std::uint8_t> bytes = png ? encode_png(image) : encode_jpeg(image, kJpegQuality);
    image_names.push_back(fmt::format("img/{:06}.{}", i, png ? "png" : "jpg"));
    write_file(root / image_names.back(), bytes.data(), bytes.size());
    grids.push_back(grid_shape(image.width, image.height, s.resize));
    texts.push_back(words(rng));
    write_file(root / fmt::format("txt/{:06}.txt", i), texts.back().data(), texts.back().size());
    out.image_bytes += static_cast<std::int64_t>(bytes.size());
    out.text_bytes += static_cast<std::int64_t>(texts.back().size());
  }
  std::string corpus;
  for (const std::string& t : texts) corpus += t;
  write_file(root / "corpus.txt", corpus.data(), corpus.size());
  out.tokenizer = (root / "tokenizer.model").string();
  train_tokenizer((root / "corpus.txt").string(), (root / "tokenizer").string(), s.vocab_size);
  const TextTokenizer tokenizer = TextTokenizer::load(out.tokenizer);
  out.index = (root / "index.jsonl").string();
  std::ofstream index(out.index, std::ios::trunc);
  for (std::int64_t i = 0; i < s.samples; ++i) {
    const nlohmann::json line = {{"text", fmt::format("txt/{:06}.txt", i)},
                                 {"image", image_names[static_cast<std::size_t>(i)]},
                                 {"text_tokens", tokenizer.encode(texts[static_cast<std::size_t>(i)]).size()},
                                 {"image_tokens", {grids[static_cast<std::size_t>(i)].tokens()}}};
    index << line.dump() << "\n";
  }
  if (!index.flush()) throw Error("--out", "cannot write " + out.index, "a writable folder");
  return out;
}

}  // namespace tessera
