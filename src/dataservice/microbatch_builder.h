// A worker's job for one task (issue 35): read each sample's raw files, check them against the
// index's token counts (the counts the balancer planned with), and pack the micro-batch:
// - text: the file's UTF-8 text through the service's SentencePiece tokenizer; its token count
//   must equal the index's text_tokens;
// - images: decoded (JPEG or PNG), their patch grid under the resize policy must equal the
//   index's image_tokens; resized to the grid and cut into patches for the encoder.
// A sample that cannot be read or disagrees with the index is an Error naming it, or, when the
// user asked to skip bad samples, left out and reported in skipped / skipped_reasons.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "formats/sample_index.h"
#include "preprocess/patch_grid.h"
#include "preprocess/text_tokenizer.h"

namespace tessera {

struct BuildSettings {
  ResizePolicy resize;
  const TextTokenizer* tokenizer = nullptr;  // needed when a sample has a text file
  bool skip_bad_samples = false;
};

struct BuiltMicroBatch {
  std::vector<std::int64_t> sample_ids;      // the samples built, in the task's order
  std::vector<std::int32_t> token_ids;       // every sample's text tokens, concatenated
  std::vector<std::int32_t> text_lengths;    // per sample
  std::vector<std::int32_t> image_sample;    // per image: index into sample_ids
  std::vector<std::int32_t> image_rows, image_cols;
  std::vector<std::uint8_t> patches;         // every image's patches, in order
  std::vector<std::int64_t> skipped;         // samples left out (skip_bad_samples)
  std::vector<std::string> skipped_reasons;
};

// "fixed:336" (every image resized to 336 x 336) or "native:1344" (aspect kept, longer side at
// most 1344), with the encoder's patch side. Error naming --resize / --patch otherwise.
ResizePolicy parse_resize_policy(const std::string& text, int patch);
std::string resize_policy_text(const ResizePolicy& policy);

// A sample of a task: its id (its line in the index) and its files and counts.
struct TaskSample {
  std::int64_t id = 0;
  IndexedSample sample;
};

// Throws Error("sample ID (PATH)", ...) for a bad sample unless skipping.
BuiltMicroBatch build_microbatch(std::span<const TaskSample> samples, const BuildSettings& settings);

}  // namespace tessera
