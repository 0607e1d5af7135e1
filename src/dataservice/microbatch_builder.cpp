#include "dataservice/microbatch_builder.h"

#include <fstream>
#include <sstream>

#include "core/error.h"
#include "preprocess/image.h"

namespace tessera {

namespace {

// The largest text file a sample may name: 64 MiB, far beyond any training context in bytes.
constexpr std::uintmax_t kMaxTextBytes = 64ull << 20;

std::string sample_name(std::int64_t id, const std::string& path) {
  return "sample " + std::to_string(id) + " (" + path + ")";
}

std::string read_text(const std::string& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(name, "cannot open the text file", "a readable UTF-8 text file");
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > kMaxTextBytes) throw Error(name, "text file over 64 MiB", "a smaller text file");
  return text.str();
}

// One sample's tensors, appended to `out` only when the whole sample is good.
struct SampleTensors {
  std::vector<std::int32_t> tokens;
  std::vector<Patches> images;
};

SampleTensors build_sample(std::int64_t id, const IndexedSample& s, const BuildSettings& settings) {
  SampleTensors t;
  if (!s.text_path.empty()) {
    const std::string name = sample_name(id, s.text_path);
    if (settings.tokenizer == nullptr) throw Error("tokenizer", "the sample has text and no tokenizer was given", "--tokenizer MODEL");
    t.tokens = settings.tokenizer->encode(read_text(s.text_path, name));
    if (static_cast<std::int64_t>(t.tokens.size()) != s.tokens.text_tokens.front())
      throw Error(name, "the index says " + std::to_string(s.tokens.text_tokens.front()) + " text tokens, the file has " +
                            std::to_string(t.tokens.size()) + " under the tokenizer",
                  "an index whose text_tokens were counted with this tokenizer");
  }
  for (std::size_t i = 0; i < s.image_paths.size(); ++i) {
    const std::string name = sample_name(id, s.image_paths[i]);
    const Image image = read_image_file(s.image_paths[i], name);
    const GridShape grid = grid_shape(image.width, image.height, settings.resize);
    if (grid.tokens() != s.tokens.image_tokens[i])
      throw Error(name, "the index says " + std::to_string(s.tokens.image_tokens[i]) + " image tokens, the file's " +
                            std::to_string(image.width) + " x " + std::to_string(image.height) + " image has " +
                            std::to_string(grid.tokens()) + " under --resize " + resize_policy_text(settings.resize),
                  "an index whose image_tokens were counted with this resize policy");
    const int p = settings.resize.patch;
    t.images.push_back(patchify(resize_bilinear(image, grid.cols * p, grid.rows * p), p));
  }
  return t;
}

void append(BuiltMicroBatch& out, std::int64_t id, SampleTensors&& t) {
  const auto sample = static_cast<std::int32_t>(out.sample_ids.size());
  out.sample_ids.push_back(id);
  out.text_lengths.push_back(static_cast<std::int32_t>(t.tokens.size()));
  out.token_ids.insert(out.token_ids.end(), t.tokens.begin(), t.tokens.end());
  for (Patches& p : t.images) {
    out.image_sample.push_back(sample);
    out.image_rows.push_back(p.grid.rows);
    out.image_cols.push_back(p.grid.cols);
    out.patches.insert(out.patches.end(), p.values.begin(), p.values.end());
  }
}

}  // namespace

ResizePolicy parse_resize_policy(const std::string& text, int patch) {
  const std::size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  ResizePolicy policy;
  policy.patch = patch;
  int side = 0;
  try {
    side = colon == std::string::npos ? 0 : std::stoi(text.substr(colon + 1));
  } catch (const std::exception&) {
    side = 0;
  }
  if (kind == "fixed" && side > 0) {
    policy.kind = ResizePolicy::Kind::fixed;
    policy.size = side;
  } else if (kind == "native" && side > 0) {
    policy.kind = ResizePolicy::Kind::native;
    policy.max_side = side;
  } else {
    throw Error("--resize", "got '" + text + "'", "fixed:SIDE (e.g. fixed:336) or native:MAX_SIDE (e.g. native:1344)");
  }
  validate_resize_policy(policy);
  return policy;
}

std::string resize_policy_text(const ResizePolicy& policy) {
  return policy.kind == ResizePolicy::Kind::fixed ? "fixed:" + std::to_string(policy.size)
                                                   : "native:" + std::to_string(policy.max_side);
}

BuiltMicroBatch build_microbatch(std::span<const TaskSample> samples, const BuildSettings& settings) {
  BuiltMicroBatch out;
  for (const TaskSample& s : samples) {
    try {
      append(out, s.id, build_sample(s.id, s.sample, settings));
    } catch (const Error& e) {
      if (!settings.skip_bad_samples || e.field() == "tokenizer") throw;
      out.skipped.push_back(s.id);
      out.skipped_reasons.push_back(e.what());
    }
  }
  return out;
}

}  // namespace tessera
