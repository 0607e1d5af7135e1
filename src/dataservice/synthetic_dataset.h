// A synthetic image + text set for the data service's tests, benchmark and example (issue 35):
// generated, never shipped. Each sample has one image (a smooth gradient with per-pixel noise, so
// JPEG and PNG work as on photographs; sizes 160 to 960 px a side; a quarter of them PNG) and one
// text file of English-like words (lognormal length, median 40 words). A SentencePiece tokenizer
// is trained on the texts, and the index is written with the counts that tokenizer and the resize
// policy give, so a coordinator can balance the set and workers can check it.
#pragma once

#include <cstdint>
#include <string>

#include "preprocess/patch_grid.h"

namespace tessera {

struct SyntheticDatasetSettings {
  std::string folder;            // created; holds img/, txt/, tokenizer.model, index.jsonl
  std::int64_t samples = 100;
  std::uint64_t seed = 0;
  ResizePolicy resize;           // the policy the index's image_tokens are counted under
  int vocab_size = 500;          // of the trained tokenizer
  void validate() const;         // Error naming --out, --samples or --vocab
};

struct SyntheticDataset {
  std::string index;      // path of index.jsonl
  std::string tokenizer;  // path of tokenizer.model
  std::int64_t image_bytes = 0, text_bytes = 0;
};

SyntheticDataset make_synthetic_dataset(const SyntheticDatasetSettings& settings);

}  // namespace tessera
