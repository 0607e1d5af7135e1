// The data service's sample index (issue 35; `tessera data-serve coordinator --index FILE`): the
// balancer's sample file (formats/sample_file.h) whose lines also name the sample's raw files,
// relative to the index's own folder:
//   "text"   a UTF-8 text file: its tokens under the service's tokenizer are text_tokens
//   "image"  an image file (JPEG or PNG), or an array of them: each one's patch grid under the
//            service's resize policy is its entry of image_tokens
// e.g. {"text": "txt/0001.txt", "image": "img/0001.jpg", "text_tokens": 57, "image_tokens": [576]}.
// A sample is its line's position among the non-blank lines (0-based): its id in the epoch plan.
// The counts are what the balancer plans with; workers check them against the files they decode.
#pragma once

#include <string>
#include <vector>

#include "balance/sample_tokens.h"

namespace tessera {

struct IndexedSample {
  SampleTokens tokens;
  std::string text_path;                 // absolute or relative to the working directory; "" = none
  std::vector<std::string> image_paths;  // one per image_tokens entry
};

// Throws Error("index:LINE.key", ...) for an unknown key, a missing or wrong count, an image list
// whose length differs from image_tokens, or a text path without text_tokens.
std::vector<IndexedSample> read_sample_index(const std::string& path);
// `folder` is prefixed to relative paths; `what` names the source in errors ("index").
std::vector<IndexedSample> parse_sample_index(const std::string& text, const std::string& folder, const std::string& what);

}  // namespace tessera
